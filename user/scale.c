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

bool count_rotation_in_phase(const struct cgtma_count *scope, const struct cgtma_count *cpus,
			     int n, int *on, int *off)
{
	*on = *off = -1;
	for (int i = 0; i < n; i++) {
		double own, all;

		if (scope[i].enabled < ROTATION_MIN_NS || !cpus[i].enabled)
			continue;
		own = (double)scope[i].running / scope[i].enabled;
		all = (double)cpus[i].running / cpus[i].enabled;
		if (all < 0.05 || all > 0.95)
			continue;
		if (1 - own < (1 - all) / 10 && *on < 0)
			*on = i;
		if (own < all / 10 && *off < 0)
			*off = i;
	}
	return *on >= 0 && *off >= 0;
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
