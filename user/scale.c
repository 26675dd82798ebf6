// SPDX-License-Identifier: GPL-2.0
#include <math.h>

#include "scale.h"

static __u64 sub_or_zero(__u64 a, __u64 b)
{
	return a >= b ? a - b : 0;
}

void count_delta(struct cgtma_count *d, const struct cgtma_count *now,
		 const struct cgtma_count *before)
{
	d->counter = sub_or_zero(now->counter, before->counter);
	d->enabled = sub_or_zero(now->enabled, before->enabled);
	d->running = sub_or_zero(now->running, before->running);
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
