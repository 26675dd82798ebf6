// SPDX-License-Identifier: GPL-2.0
#include <math.h>

#include "scale.h"

void count_delta(struct cgtma_count *d, const struct cgtma_count *now,
		 const struct cgtma_count *before)
{
	/* Unsigned: a value that wrapped past 2^64 still gives the right difference. */
	d->counter = now->counter - before->counter;
	d->enabled = now->enabled - before->enabled;
	d->running = now->running - before->running;
}

void count_add(struct cgtma_count *sum, const struct cgtma_count *d)
{
	sum->counter += d->counter;
	sum->enabled += d->enabled;
	sum->running += d->running;
}

enum count_state count_scale(const struct cgtma_count *c, double *scaled, double *multiplex)
{
	if (c->enabled == 0) {
		*scaled = 0;
		*multiplex = NAN;
		return COUNT_IDLE;
	}
	*multiplex = (double)c->running / (double)c->enabled;
	if (c->running == 0) {
		*scaled = NAN;
		return COUNT_NOT_COUNTED;
	}
	/* running can exceed enabled by rounding between the two clocks: never scale down. */
	if (c->running >= c->enabled) {
		*multiplex = 1.0;
		*scaled = (double)c->counter;
	} else {
		*scaled = (double)c->counter * ((double)c->enabled / (double)c->running);
	}
	return COUNT_OK;
}

bool count_rotation_in_phase(const struct cgtma_count *scope, const struct cgtma_count *cpus)
{
	double own, all;

	if (scope->enabled < ROTATION_MIN_NS || !cpus->enabled)
		return false;
	own = (double)scope->running / scope->enabled;
	all = (double)cpus->running / cpus->enabled;
	if (all < 0.05 || all > 0.95)
		return false;
	return own < all / 10 || 1 - own < (1 - all) / 10;
}

int count_never_ran(const struct cgtma_count *totals, int nr_cpus, int nr_events, bool *never)
{
	int nr = 0;

	for (int e = 0; e < nr_events; e++) {
		struct cgtma_count sum = { 0 };

		for (int c = 0; c < nr_cpus; c++)
			count_add(&sum, &totals[c * nr_events + e]);
		never[e] = sum.enabled > 0 && sum.running == 0;
		nr += never[e];
	}
	return nr;
}
