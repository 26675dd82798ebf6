/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --top N: the terminal's rows of an interval cut to the N busiest tracked cgroups, as
 * systemd-cgtop and top cut theirs, with one row summing the rest. Only the view changes:
 * every other output keeps every row.
 */
#ifndef CGTMA_TOP_H
#define CGTMA_TOP_H

#include "interval.h"

/*
 * What the terminal shows of an interval under --top: shown's scopes are copies of the
 * interval's (sharing their allocations: never interval_free() it) and, where rows were
 * left out, the row in others that sums them.
 */
struct top_view {
	struct interval shown;
	struct interval others;
};

/*
 * The view of iv with the n busiest of its tracked cgroups, by CPU time (the time their
 * tasks ran: the counters' enabled time), in iv's order; their per-CPU and thread rows
 * follow them, those of the others go. The cgroups ranked are the rows the terminal shows:
 * those scope_idle() does not hide (they ran, were removed or were kept off the CPU), and
 * with -v (run->verbose) every one. The others sum into one cgroup row labelled
 * "+ K others" ("+ 1 other"; scope.others set) after the cgroups and threads, derived as any
 * row is: their sums added up (counter, enabled and running, as perf stat
 * aggregates), each cgroup once (one inside another of them is in its ancestor's sums).
 * Returns 1 with v made, 0 when iv has n such cgroups or fewer (v zeroed: show iv), or
 * -ENOMEM (v released). iv must be sorted (interval_sort()) and outlive v.
 */
int top_view_make(const struct run *run, const struct interval *iv, int n, struct top_view *v);
void top_view_release(struct top_view *v);

#endif
