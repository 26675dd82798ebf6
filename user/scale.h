/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Counter arithmetic: deltas of cumulative readings and scaling for multiplexing. A counter
 * that ran for part of the time it was enabled is extrapolated to the whole: counter *
 * enabled / running, computed per scope from that scope's own enabled and running sums.
 */
#ifndef CGTMA_SCALE_H
#define CGTMA_SCALE_H

#include <stdbool.h>

#include "bpf/cgtma.h"

/*
 * d = now - before, field by field, modulo 2^64: each per-CPU value only grows, and a sum of
 * them over CPUs may wrap; the modular difference is right in both cases.
 */
void count_delta(struct cgtma_count *d, const struct cgtma_count *now,
		 const struct cgtma_count *before);

void count_add(struct cgtma_count *sum, const struct cgtma_count *d);

enum count_state {
	COUNT_IDLE,		/* never enabled: the scope did not run; the count is 0 */
	COUNT_OK,		/* counted (maybe part of the time): *scaled is meaningful */
	COUNT_NOT_COUNTED,	/* enabled but never running: no value */
};

/*
 * The scaled count and the fraction of the enabled time the counter ran (NAN when idle).
 * *scaled is 0 when idle and NAN when not counted.
 */
enum count_state count_scale(const struct cgtma_count *c, double *scaled, double *multiplex);

/*
 * The events that never ran in a whole run: enabled on some CPU but never on a counter on
 * any (another perf user's pinned events held them, or their group can never be scheduled
 * beside those). totals is per CPU then event ([cpu * nr_events + e]); never[e] is set for
 * each. Returns how many.
 */
int count_never_ran(const struct cgtma_count *totals, int nr_cpus, int nr_events, bool *never);

/*
 * Whether a scope's shares of its time on a counter show the kernel's rotation of the event
 * groups in phase with its switches: the rotation runs on a timer of its own on the tick's
 * grid, and CPU-bound cgroups switched at the tick can each see one group nearly all their
 * time and another hardly at all (docs/groups.md). Of two events the CPUs multiplexed (on a
 * counter 5 % to 95 % of their time), over ROTATION_MIN_NS of the scope's time at least (a
 * dozen periods of one tick), the scope had one, *on, off the counters less than a tenth of
 * the CPUs' share of off time, and the other, *off, on them less than a tenth of the CPUs'
 * share. A rotation that moves through the slices never comes near; and counters busier on
 * the scope's CPUs than on others (another perf user's pinned events) lower every share
 * alike, as idle ones raise them, without one group on and another off. totals, cpus: n
 * events each.
 */
#define ROTATION_MIN_NS 50000000ULL
bool count_rotation_in_phase(const struct cgtma_count *scope, const struct cgtma_count *cpus,
			     int n, int *on, int *off);

#endif
