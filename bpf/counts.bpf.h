/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Arithmetic on runs of nr_events counts (struct cgtma_count), and the epoch halves of a
 * value that holds two such runs.
 */
#ifndef CGTMA_COUNTS_BPF_H
#define CGTMA_COUNTS_BPF_H

#include "cgtma.h"
#include "config.bpf.h"

/*
 * A value of nr_events counts (the count maps', the deltas'): created with value size
 * nr_events * sizeof(struct cgtma_count), so only ev[0..nr_events-1] exist; the array bound
 * is the limit.
 */
struct cgtma_counts {
	struct cgtma_count ev[CGTMA_MAX_EVENTS];
};

static __always_inline void add_count(struct cgtma_count *dst, const struct cgtma_count *d)
{
	dst->counter += d->counter;
	dst->enabled += d->enabled;
	dst->running += d->running;
}

static __always_inline void add_counts(struct cgtma_count *dst, const struct cgtma_counts *d)
{
	for (__u32 i = 0; i < CGTMA_MAX_EVENTS; i++) {
		if (i >= nr_events)
			break;
		add_count(&dst[i], &d->ev[i]);
	}
}

/* Zeroes nr_events counts. */
static __always_inline void clear_counts(struct cgtma_count *c)
{
	for (__u32 i = 0; i < CGTMA_MAX_EVENTS; i++) {
		if (i >= nr_events)
			break;
		c[i].counter = c[i].enabled = c[i].running = 0;
	}
}

/*
 * The counts of epoch half in a cgroup's value (both epochs, nr_events each). A mask, not a
 * product: 5.10's verifier loses the bounds of (half & 1) * nr_events ("unbounded memory
 * access"), and keeps those of an AND with a constant.
 */
static __always_inline struct cgtma_count *half_of(struct cgtma_counts *counts, __u32 half)
{
	__u32 off = nr_events & -(half & 1);

	return &counts->ev[off];
}

#endif
