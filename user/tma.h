/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Computing a plan's tree and flat metrics from one scope's counts, with toplev's semantics
 * (user/tma.c).
 */
#ifndef CGTMA_TMA_H
#define CGTMA_TMA_H

#include <stdbool.h>

#include "plan.h"

struct tma_input {
	const double *counts;	/* per plan event: the scaled count */
	const bool *counted;	/* per plan event: false when it never ran in the interval */
	double interval_s;
	double cpu_s;		/* the scope's busy CPU time in the interval (scope_cpu_s()) */
	const double *retire_latency;	/* per plan event, or NULL: the model's defaults */
};

struct tma_result {
	double *value;		/* per plan node: reported value (clamped to maxval), NAN when
				 * not counted */
	bool *counted;		/* per plan node: false when it read an event not counted */
	bool *above;		/* per plan node: above threshold (printed without -v) */
	int bottleneck;		/* plan node index, or -1 */
	double *metric;		/* per plan metric; NAN when not counted */
	bool *metric_counted;
	/*
	 * The model's uncounted_if_zero events (Arm's STALL_SLOT*) all read 0 here: the PMU
	 * does not count them, and the nodes and metrics reading them are not counted.
	 */
	bool uncounted;
	void *scratch;		/* private: tma_compute's work space, sized for the plan */
};

/* Allocates a result for plan p (p must outlive it); tma_result_release frees it. */
int tma_result_init(struct tma_result *r, const struct plan *p);
void tma_result_release(struct tma_result *r);
/*
 * One computation of the tree and the metrics (one scope, one interval) with toplev's
 * semantics (user/models/README.md, "Evaluation"). r must have been initialized for p. A
 * plan can be shared by threads; a result cannot. No allocation: fit for every scope of every
 * interval (~10 us for a level-3 Intel tree).
 */
int tma_compute(const struct plan *p, const struct tma_input *in, struct tma_result *r);

#endif
