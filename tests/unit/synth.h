/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Synthetic runs and intervals for the output tests: a model's plan at some level, and
 * scopes whose event sums come from a vector's counts (tests/vectors) or from the test.
 * A scope's sums say counter, enabled and running per event, as the BPF side would; the
 * interval then goes through report_derive(), as a live one does.
 */
#ifndef CGTMA_TEST_SYNTH_H
#define CGTMA_TEST_SYNTH_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>

#include "model.h"
#include "report.h"
#include "tma.h"

#define SYNTH_ENABLED 1000000000ULL	/* every event enabled 1 s */

struct synth {
	struct model *model;
	struct plan *plan;
	const char **names;
	struct run run;
};

/* The run's fields every synthetic run has. */
static inline void synth_init(struct synth *sy, int level, bool perf_metrics)
{
	memset(sy, 0, sizeof(*sy));
	sy->run.start_time = 1700000000.25;
	sy->run.interval_ms = 1000;
	sy->run.level = level;
	sy->run.perf_metrics = perf_metrics;
	sy->run.cpu = "Test CPU";
	sy->run.kernel = "6.1.0-test";
	sy->run.hostname = "testhost";
}

/*
 * A plan of model m (which the synth then owns and frees), with -m's metrics (as
 * model_options.metrics: NULL the default ones, "" all). 0 or -1.
 */
static inline int synth_open_model(struct synth *sy, struct model *m, int level,
				   bool perf_metrics, const char *metrics)
{
	struct model_options mo = { .level = level, .perf_metrics = perf_metrics,
				    .metrics = metrics };

	synth_init(sy, level, perf_metrics);
	sy->model = m;
	if (!m || plan_new(m, &mo, &sy->plan))
		return -1;
	sy->names = calloc(sy->plan->nr_events + 1, sizeof(*sy->names));
	if (!sy->names)
		return -1;
	for (int i = 0; i < sy->plan->nr_events; i++)
		sy->names[i] = sy->plan->events[i].name;
	sy->run.model = model_name(m);
	sy->run.plan = sy->plan;
	sy->run.nr_events = sy->plan->nr_events;
	sy->run.event_names = sy->names;
	return 0;
}

/* A plan of a built-in model (or, with model NULL, plain -e events). 0 or -1. */
static inline int synth_open(struct synth *sy, const char *model, int level, bool perf_metrics,
			     const char *const *events, int nr_events)
{
	struct model *m = NULL;

	if (model) {
		if (model_load_builtin(model, &m)) {
			synth_init(sy, level, perf_metrics);
			return -1;
		}
		return synth_open_model(sy, m, level, perf_metrics, NULL);
	}
	synth_init(sy, level, perf_metrics);
	sy->run.model = "events";
	sy->run.nr_events = nr_events;
	sy->run.event_names = events;
	return 0;
}

static inline void synth_close(struct synth *sy)
{
	free(sy->names);
	plan_free(sy->plan);
	model_free(sy->model);
}

static inline int synth_event(const struct synth *sy, const char *name)
{
	for (int i = 0; i < sy->run.nr_events; i++)
		if (!strcmp(sy->run.event_names[i], name))
			return i;
	return -1;
}

/*
 * A scope whose events counted counts[name] over the whole second (multiplex 1). Returns
 * it, or NULL when the vector lacks one of the plan's events or a count is not whole.
 */
static inline struct scope *synth_scope(struct synth *sy, struct interval *iv,
					enum scope_kind kind, const char *cgroup, int cpu,
					json_object *counts, double factor)
{
	struct scope *s = interval_add_scope(iv, &sy->run, kind, cgroup, cpu);

	if (!s)
		return NULL;
	for (int i = 0; i < sy->run.nr_events; i++) {
		json_object *v;
		double c;

		if (!json_object_object_get_ex(counts, sy->run.event_names[i], &v))
			return NULL;
		c = json_object_get_double(v) * factor;
		if (c != floor(c) || c < 0)
			return NULL;
		s->sum[i].counter = (__u64)c;
		s->sum[i].enabled = SYNTH_ENABLED;
		s->sum[i].running = SYNTH_ENABLED;
	}
	return s;
}

/*
 * A result for a plan made by the test (no model behind it, so no tma_result_init()): its
 * arrays zeroed, as the scope's release frees them; the test fills in what tma_compute()
 * would. 0 or -1.
 */
static inline int synth_result(struct tma_result *t, const struct plan *p)
{
	memset(t, 0, sizeof(*t));
	t->bottleneck = -1;
	t->value = calloc(p->nr_nodes + 1, sizeof(*t->value));
	t->counted = calloc(p->nr_nodes + 1, sizeof(*t->counted));
	t->above = calloc(p->nr_nodes + 1, sizeof(*t->above));
	t->metric = calloc(p->nr_metrics + 1, sizeof(*t->metric));
	t->metric_counted = calloc(p->nr_metrics + 1, sizeof(*t->metric_counted));
	return t->value && t->counted && t->above && t->metric && t->metric_counted ? 0 : -1;
}

/* Events counted part of the time: counter scaled back, running = enabled * fraction. */
static inline void synth_multiplex(struct scope *s, int event, double fraction)
{
	s->sum[event].counter = (__u64)llround(s->sum[event].counter * fraction);
	s->sum[event].running = (__u64)llround(s->sum[event].enabled * fraction);
}

/*
 * A cgroup's noise with every field (report.h's struct noise) and two antagonists, one a
 * container's and one a plain cgroup: values a double holds exactly, so that every output's
 * text is known to the digit.
 */
static inline void synth_noise(struct noise *n)
{
	memset(n, 0, sizeof(*n));
	n->has = NOISE_WAIT | NOISE_THROTTLED | NOISE_PRESSURE_SOME | NOISE_PRESSURE_FULL |
		 NOISE_PREEMPTED | NOISE_SMT;
	n->wait = 0.5;
	n->throttled = 0.25;
	n->nr_throttled = 12;
	n->pressure_some = 0.5625;
	n->pressure_full = 0.125;
	n->preempted = 35.5;
	n->smt_shared = 0.0625;
	n->nr_antagonists = 2;
	n->antagonists[0] = (struct antagonist){ .cgroup = "/kubepods/pod1/abc",
						 .container = "web", .preempt = 20.25,
						 .took = 0.375, .smt = 0.03125 };
	n->antagonists[1] = (struct antagonist){ .cgroup = "/batch", .preempt = 3.5,
						 .took = 0.046875, .smt = 0.015625 };
}

/* Reads a whole stream back (the caller frees it). */
static inline char *synth_slurp(FILE *f)
{
	long n;
	char *buf;

	fflush(f);
	n = ftell(f);
	buf = malloc(n > 0 ? n + 1 : 1);
	if (!buf)
		return NULL;
	rewind(f);
	n = n > 0 ? (long)fread(buf, 1, n, f) : 0;
	buf[n] = '\0';
	return buf;
}

static inline char *synth_read_file(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	buf = synth_slurp(f);
	fclose(f);
	return buf;
}

#endif
