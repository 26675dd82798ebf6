/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One scope's counts as user space keeps them (a tracked cgroup, a thread, an interrupt
 * scope, the CPUs): rows (per CPU, or one) of nr_events counts, as the kernel's cumulative
 * reading of each epoch half was at its last take (collector.h), this interval's delta and
 * the run's total.
 *
 *   struct scope_counts c;
 *
 *   scope_counts_init(&c, rows, nr_events);   // 0 or -ENOMEM
 *   ran = scope_counts_take(&c, now, now_rows, half);   // or _take_rows(), some rows
 *   ... c.delta, c.total ...
 *   scope_counts_reset(&c);                   // an interval it was not read in: zeros
 *   scope_counts_release(&c);
 */
#ifndef CGTMA_COUNTS_H
#define CGTMA_COUNTS_H

#include <stdbool.h>

#include "bpf/cgtma.h"

struct scope_counts {
	int rows, nr_events;		/* size: rows * nr_events counts, row by row */
	struct cgtma_count *prev;	/* cumulative at the last take of each half: 2 * size */
	struct cgtma_count *delta;	/* this interval: size */
	struct cgtma_count *total;	/* the run: size */
};

/* Zeros, in one block; 0 or -ENOMEM. */
int scope_counts_init(struct scope_counts *c, int rows, int nr_events);
void scope_counts_release(struct scope_counts *c);

/*
 * A reading of epoch half half: now_rows rows of nr_events cumulative counts. Taken row by
 * row when now_rows is c->rows; otherwise (c->rows is 1) summed over the rows first, which
 * keeps one value per event instead of one per row: the sums wrap like the counters do, and
 * the difference of two wrapped sums is still the sum of the rows' deltas (modulo 2^64).
 * delta = now - prev of that half, total += delta, and that half's prev becomes now.
 * Returns whether any event of the delta counted or was enabled: the scope ran.
 */
bool scope_counts_take(struct scope_counts *c, const struct cgtma_count *now, int now_rows,
		       int half);

/*
 * The same, of c->rows rows, for the rows that rows[] names: a row not named did not change
 * in this half since it was last taken (its CPU was offline meanwhile, or never counted),
 * and its delta is zeros.
 */
bool scope_counts_take_rows(struct scope_counts *c, const struct cgtma_count *now, int half,
			    const bool *rows);

/* The resets do nothing to one released (or zeroed and never initialised). */

/* The interval's delta to zeros: a scope not read in it counted nothing. */
void scope_counts_reset(struct scope_counts *c);

/* The run's total to zeros: counting starts now. */
void scope_counts_reset_total(struct scope_counts *c);

/* Both halves' readings to zeros: the kernel's cumulative counts start again (a new row). */
void scope_counts_reset_readings(struct scope_counts *c);

#endif
