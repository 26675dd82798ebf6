// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for the model engine: arbitrary bytes as a model file, then, when one
 * loads, a plan at every level and option and a computation from arbitrary counts.
 *
 * The input is the model text up to the first NUL byte; the bytes after it, when there are
 * any, give the counts (8 bytes per double, so NaN, infinities and zeros come up), which
 * events were counted and the retire latencies. Nothing may crash, leak or loop; the loader's
 * bounds keep every accepted model cheap to compute. The memoized evaluation must give bit
 * for bit what recomputing every reference (toplev's way) gives.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct tail {
	const uint8_t *p;
	size_t len, at;
};

static double next_double(struct tail *t, int i)
{
	double v;

	if (t->len < sizeof(v))
		return i % 5 == 0 ? 0 : (i + 1) * 1e6 / 3;
	if (t->at + sizeof(v) > t->len)
		t->at = 0;
	memcpy(&v, t->p + t->at, sizeof(v));
	t->at += sizeof(v);
	return v;
}

static bool next_bit(struct tail *t, int i)
{
	if (!t->len)
		return i % 7 != 3;
	return t->p[(t->at + i) % t->len] & 1;
}

static bool same(const struct plan *p, const struct tma_result *a, const struct tma_result *b)
{
	return !memcmp(a->value, b->value, p->nr_nodes * sizeof(*a->value)) &&
	       !memcmp(a->above, b->above, p->nr_nodes * sizeof(*a->above)) &&
	       !memcmp(a->counted, b->counted, p->nr_nodes * sizeof(*a->counted)) &&
	       !memcmp(a->metric, b->metric, p->nr_metrics * sizeof(*a->metric)) &&
	       a->bottleneck == b->bottleneck;
}

static void compute(struct plan *p, struct tail *t)
{
	struct tma_input in = { .interval_s = 1 };
	struct tma_result r, ref;
	double *counts, *latency;
	bool *counted;
	int i;

	counts = calloc(p->nr_events + 1, sizeof(*counts));
	latency = calloc(p->nr_events + 1, sizeof(*latency));
	counted = calloc(p->nr_events + 1, sizeof(*counted));
	if (!counts || !latency || !counted || tma_result_init(&r, p))
		goto out;
	if (tma_result_init(&ref, p)) {
		tma_result_release(&r);
		goto out;
	}
	for (i = 0; i < p->nr_events; i++) {
		counts[i] = next_double(t, i);
		latency[i] = next_double(t, i + 1);
		counted[i] = next_bit(t, i);
	}
	in.counts = counts;
	in.counted = counted;
	in.retire_latency = t->len & 1 ? latency : NULL;
	in.interval_s = t->len ? next_double(t, 0) : 1;
	plan_set_memo(p, true);
	if (tma_compute(p, &in, &r) == 0) {
		/* the result's own invariants */
		if (r.bottleneck >= p->nr_nodes || (r.bottleneck >= 0 && !r.above[r.bottleneck]))
			__builtin_trap();
		for (i = 0; i < p->nr_nodes; i++) {
			if (r.above[i] && !r.counted[i])
				__builtin_trap();
		}
		plan_set_memo(p, false);
		if (tma_compute(p, &in, &ref) || !same(p, &r, &ref))
			__builtin_trap();
	}
	tma_result_release(&r);
	tma_result_release(&ref);
out:
	free(counts);
	free(latency);
	free(counted);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nul = memchr(data, 0, size);
	size_t len = nul ? (size_t)(nul - data) : size;
	struct tail t = { .p = nul ? nul + 1 : NULL, .len = nul ? size - len - 1 : 0 };
	struct model *m;
	int level, pm, smt;

	if (model_load_string("fuzz", (const char *)data, len, &m))
		return 0;
	for (level = 0; level <= model_max_level(m) && level <= 8; level++) {
		for (pm = 0; pm <= model_has_perf_metrics(m); pm++) {
			for (smt = 0; smt <= 1; smt++) {
				struct model_options o = {
					.level = level,
					.perf_metrics = pm,
					.smt = smt,
					.reserved_counters = t.len ? t.p[0] % 3 : smt,
				};
				struct plan *p;

				if (plan_new(m, &o, &p))
					continue;
				compute(p, &t);
				plan_free(p);
			}
		}
	}
	model_free(m);
	return 0;
}
