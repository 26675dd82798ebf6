// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "counts.h"
#include "scale.h"

static size_t size_of(const struct scope_counts *c)
{
	return (size_t)c->rows * c->nr_events;
}

int scope_counts_init(struct scope_counts *c, int rows, int nr_events)
{
	size_t size = (size_t)rows * nr_events;

	memset(c, 0, sizeof(*c));
	c->prev = calloc(4 * size, sizeof(*c->prev));
	if (!c->prev)
		return -ENOMEM;
	c->rows = rows;
	c->nr_events = nr_events;
	c->delta = c->prev + 2 * size;
	c->total = c->delta + size;
	return 0;
}

void scope_counts_release(struct scope_counts *c)
{
	free(c->prev);	/* delta and total live in the same block */
	memset(c, 0, sizeof(*c));
}

/* Count k's delta from prev[k] to v, added to the total; prev[k] becomes v. Whether it ran. */
static bool take_count(struct scope_counts *c, size_t k, const struct cgtma_count *v,
		       struct cgtma_count *prev)
{
	count_delta(&c->delta[k], v, &prev[k]);
	count_add(&c->total[k], &c->delta[k]);
	prev[k] = *v;
	return c->delta[k].counter || c->delta[k].enabled;
}

bool scope_counts_take(struct scope_counts *c, const struct cgtma_count *now, int now_rows,
		       int half)
{
	struct cgtma_count *prev = c->prev + (half & 1) * size_of(c);
	int n = c->nr_events, size = now_rows == c->rows ? c->rows * n : n;
	bool ran = false;

	for (int k = 0; k < size; k++) {
		struct cgtma_count sum = {};
		const struct cgtma_count *v = &now[k];

		if (now_rows != c->rows) {
			for (int r = 0; r < now_rows; r++)
				count_add(&sum, &now[r * n + k]);
			v = &sum;
		}
		ran |= take_count(c, k, v, prev);
	}
	return ran;
}

bool scope_counts_take_rows(struct scope_counts *c, const struct cgtma_count *now, int half,
			    const bool *rows)
{
	struct cgtma_count *prev = c->prev + (half & 1) * size_of(c);
	int n = c->nr_events;
	bool ran = false;

	for (int r = 0; r < c->rows; r++) {
		size_t at = (size_t)r * n;

		if (!rows[r]) {
			memset(&c->delta[at], 0, n * sizeof(*c->delta));
			continue;
		}
		for (size_t k = at; k < at + n; k++)
			ran |= take_count(c, k, &now[k], prev);
	}
	return ran;
}

void scope_counts_reset(struct scope_counts *c)
{
	if (!c->prev)
		return;
	memset(c->delta, 0, sizeof(*c->delta) * size_of(c));
}

void scope_counts_reset_total(struct scope_counts *c)
{
	if (!c->prev)
		return;
	memset(c->total, 0, sizeof(*c->total) * size_of(c));
}

void scope_counts_reset_readings(struct scope_counts *c)
{
	if (!c->prev)
		return;
	memset(c->prev, 0, sizeof(*c->prev) * 2 * size_of(c));
}
