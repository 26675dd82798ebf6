// SPDX-License-Identifier: GPL-2.0
/*
 * Writes a synthetic --record file, through cgtma's own record writer, from real counts
 * that vary over time: test data for `cgtma report` where no PMU can produce it.
 *
 *   mkrecord OUT MODEL MODEL_FILE LEVEL COUNTS INTERVALS CGROUP...
 *
 * COUNTS has one line per event: "NAME V1 V2 ...", the event's count in each of a few
 * measured vectors (tests/vectors/, via jq). Every interval of every cgroup mixes the vectors
 * with weights that drift over time (each cgroup at its own phase), scaled by how busy the
 * cgroup was, so its Top-Down tree and bottleneck change along the run. The model's JSON text
 * is MODEL_FILE's, recorded at LEVEL (the counts must hold that level's events) without
 * perf-metrics or SMT. Besides, with at least 2 cgroups the second is multiplexed (counted
 * 55-85 % of the time); with 3, the third is idle for 3 intervals midway; with 4, the last one
 * appears a quarter into the run and is removed at three quarters. The system scope sums the
 * cgroups; the summary sums the intervals. Every cgroup row has noise (report.h's struct noise:
 * every field), drifting too, its antagonists the other cgroups (at most two); the summary's
 * is the intervals' mean, its nr_throttled their sum.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output.h"
#include "record.h"
#include "report.h"

#define START_TIME 1767225600.0		/* 2026-01-01 00:00:00 UTC */
#define MAX_VECTORS 8

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t len = 0, cap = 0, n;

	if (!f)
		return NULL;
	do {
		if (len + 4096 + 1 > cap) {
			cap = cap ? 2 * cap : 65536;
			buf = realloc(buf, cap);
			if (!buf)
				break;
		}
		n = fread(buf + len, 1, cap - len - 1, f);
		len += n;
	} while (n);
	fclose(f);
	if (buf)
		buf[len] = '\0';
	return buf;
}

struct events {
	int n, nr_vectors;
	char **names;
	double (*v)[MAX_VECTORS];
};

static int read_counts(const char *path, struct events *ev)
{
	char *text = slurp(path), *save = NULL, *line;

	if (!text)
		return -1;
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *tok_save = NULL, *name = strtok_r(line, " ", &tok_save), *tok;
		int k = 0;

		if (!name)
			continue;
		ev->names = realloc(ev->names, (ev->n + 1) * sizeof(*ev->names));
		ev->v = realloc(ev->v, (ev->n + 1) * sizeof(*ev->v));
		if (!ev->names || !ev->v)
			return -1;
		ev->names[ev->n] = strdup(name);
		while ((tok = strtok_r(NULL, " ", &tok_save)) && k < MAX_VECTORS)
			ev->v[ev->n][k++] = strtod(tok, NULL);
		if (!k || (ev->nr_vectors && k != ev->nr_vectors)) {
			fprintf(stderr, "mkrecord: %s: event %s has %d counts\n", path, name, k);
			return -1;
		}
		ev->nr_vectors = k;
		ev->n++;
	}
	free(text);
	return ev->n ? 0 : -1;
}

/* A smooth periodic bump, 0 at whole x, 1 halfway (no libm in a helper). */
static double wave(double x)
{
	double u = x - (long)x, tri = 1 - (2 * u > 1 ? 2 * u - 1 : 1 - 2 * u);

	return tri * tri * (3 - 2 * tri);
}

static void add(struct cgtma_count *sum, const struct cgtma_count *d)
{
	sum->counter += d->counter;
	sum->enabled += d->enabled;
	sum->running += d->running;
}

static void set_count(struct cgtma_count *c, double count, double enabled, double frac)
{
	c->enabled = (__u64)enabled;
	c->running = (__u64)(enabled * frac);
	c->counter = c->running ? (__u64)(count * frac + 0.5) : 0;
}

/*
 * Cgroup c's noise in an interval at x (0..1 through the run), busy its share of a CPU; the
 * other cgroups, named in paths, are its antagonists.
 */
static void set_noise(struct noise *n, double x, int c, double busy, char **paths, int nr_cg)
{
	double wait = 0.05 + 0.6 * wave(2 * x + 0.3 * c);

	memset(n, 0, sizeof(*n));
	n->has = NOISE_WAIT | NOISE_THROTTLED | NOISE_PRESSURE_SOME | NOISE_PRESSURE_FULL |
		 NOISE_PREEMPTED | NOISE_SMT;
	n->wait = wait;
	n->throttled = c == 0 ? 0.2 * wave(x) : 0;
	n->nr_throttled = (__u64)(n->throttled * 50);
	n->pressure_some = wait / (wait + busy + 0.01);
	n->pressure_full = n->pressure_some / 3;
	n->preempted = 40 * wait;
	n->smt_shared = 0.05 + 0.1 * wave(x + 0.5);
	for (int k = 0; k < nr_cg && n->nr_antagonists < 2; k++) {
		struct antagonist *a = &n->antagonists[n->nr_antagonists];
		double share = n->nr_antagonists ? 0.3 : 0.7;

		if (k == c)
			continue;
		snprintf(a->cgroup, sizeof(a->cgroup), "%s", paths[k]);
		a->preempt = n->preempted * share;
		a->took = wait * share;
		a->smt = n->smt_shared * share;
		n->nr_antagonists++;
	}
}

/* Adds an interval's noise to the summary's (its means once divided: mean_noise()). */
static void add_noise(struct noise *sum, const struct noise *n)
{
	sum->has = n->has;
	sum->wait += n->wait;
	sum->throttled += n->throttled;
	sum->nr_throttled += n->nr_throttled;
	sum->pressure_some += n->pressure_some;
	sum->pressure_full += n->pressure_full;
	sum->preempted += n->preempted;
	sum->smt_shared += n->smt_shared;
	sum->nr_antagonists = n->nr_antagonists;
	for (int i = 0; i < n->nr_antagonists; i++) {
		memcpy(sum->antagonists[i].cgroup, n->antagonists[i].cgroup,
		       sizeof(sum->antagonists[i].cgroup));
		sum->antagonists[i].preempt += n->antagonists[i].preempt;
		sum->antagonists[i].took += n->antagonists[i].took;
		sum->antagonists[i].smt += n->antagonists[i].smt;
	}
}

static void mean_noise(struct noise *n, int intervals)
{
	n->wait /= intervals;
	n->throttled /= intervals;
	n->pressure_some /= intervals;
	n->pressure_full /= intervals;
	n->preempted /= intervals;
	n->smt_shared /= intervals;
	for (int i = 0; i < n->nr_antagonists; i++) {
		n->antagonists[i].preempt /= intervals;
		n->antagonists[i].took /= intervals;
		n->antagonists[i].smt /= intervals;
	}
}

int main(int argc, char **argv)
{
	struct events ev = {};
	struct plan plan = {};
	struct run run = {};
	struct interval iv = {}, total = {};
	struct output *o;
	int intervals, nr_cg, level, err;

	if (argc < 8) {
		fprintf(stderr, "usage: mkrecord OUT MODEL MODEL_FILE LEVEL COUNTS INTERVALS "
				"CGROUP...\n");
		return 2;
	}
	level = atoi(argv[4]);
	intervals = atoi(argv[6]);
	nr_cg = argc - 7;
	run.model_source = slurp(argv[3]);
	if (!run.model_source || read_counts(argv[5], &ev) || intervals < 1 || level < 1) {
		fprintf(stderr, "mkrecord: cannot read %s or %s\n", argv[3], argv[5]);
		return 1;
	}

	plan.nr_events = ev.n;
	plan.events = calloc(ev.n, sizeof(*plan.events));
	for (int e = 0; e < ev.n; e++) {
		plan.events[e].name = ev.names[e];
		plan.events[e].encoding = ev.names[e];
		plan.events[e].group = e;
	}
	plan.opts.level = level;
	run.model = argv[2];
	run.plan = &plan;
	run.nr_events = ev.n;
	run.event_names = (const char *const *)ev.names;
	run.level = level;
	run.start_time = START_TIME;
	run.interval_ms = 1000;
	run.cgroups = true;
	run.hostname = "synthetic";
	run.kernel = "6.1.0-synthetic";
	run.cpu = "Intel(R) Xeon(R) Platinum 8480+ (synthetic counts)";

	for (int s = 0; s <= nr_cg; s++)
		if (!interval_add_scope(&total, &run, s ? SCOPE_CGROUP : SCOPE_SYSTEM,
					s ? argv[6 + s] : NULL, -1)) {
			fprintf(stderr, "mkrecord: out of memory\n");
			return 1;
		}

	err = output_record_open(argv[1], &o);
	if (err)
		return 1;
	err = o->ops->begin(o, &run);
	for (int i = 0; i < intervals && !err; i++) {
		double x = (double)i / intervals;

		iv.time = START_TIME + i + 1;
		iv.interval_s = 1.0;
		interval_clear(&iv);
		if (!interval_add_scope(&iv, &run, SCOPE_SYSTEM, NULL, -1)) {
			err = -ENOMEM;
			break;
		}
		for (int c = 0; c < nr_cg; c++) {
			struct scope *sc;
			double busy = 0.15 + 0.8 * wave(1.3 * x + 0.37 * c);
			double frac = c == 1 ? 0.55 + 0.3 * wave(3 * x) : 1.0;
			double w[MAX_VECTORS], wsum = 0;

			if (nr_cg >= 4 && c == nr_cg - 1 &&
			    (i < intervals / 4 || i >= 3 * intervals / 4))
				continue;
			sc = interval_add_scope(&iv, &run, SCOPE_CGROUP, argv[7 + c], -1);
			if (!sc) {
				err = -ENOMEM;
				break;
			}
			sc->removed = nr_cg >= 4 && c == nr_cg - 1 && i == 3 * intervals / 4 - 1;
			if (nr_cg >= 3 && c == 2 && i >= intervals / 2 && i < intervals / 2 + 3)
				busy = 0;
			set_noise(&sc->noise, x, c, busy, argv + 7, nr_cg);
			for (int k = 0; k < ev.nr_vectors; k++) {
				double phase = 1.5 * x + (double)c / nr_cg;

				w[k] = 0.1 + wave(phase + (double)k / ev.nr_vectors);
				wsum += w[k];
			}
			for (int e = 0; e < ev.n; e++) {
				double count = 0;

				for (int k = 0; k < ev.nr_vectors; k++)
					count += w[k] / wsum * ev.v[e][k];
				set_count(&sc->sum[e], count * busy, 1e9 * busy, frac);
				add(&iv.scopes[0].sum[e], &sc->sum[e]);
			}
		}
		if (!err)
			err = o->ops->interval(o, &run, &iv);
		for (int s = 0; s < iv.nr_scopes; s++) {
			int t = 0;

			while (s && (!total.scopes[t].cgroup ||
				     strcmp(total.scopes[t].cgroup, iv.scopes[s].cgroup)))
				t++;
			for (int e = 0; e < ev.n; e++)
				add(&total.scopes[t].sum[e], &iv.scopes[s].sum[e]);
			if (s)
				add_noise(&total.scopes[t].noise, &iv.scopes[s].noise);
		}
	}
	for (int t = 1; t < total.nr_scopes; t++)
		mean_noise(&total.scopes[t].noise, intervals);
	total.summary = true;
	total.time = START_TIME + intervals;
	total.interval_s = intervals;
	if (!err)
		err = o->ops->interval(o, &run, &total);
	o->ops->close(o);
	free(o);
	interval_free(&iv);
	interval_free(&total);
	if (err) {
		fprintf(stderr, "mkrecord: cannot write %s: %s\n", argv[1], strerror(-err));
		return 1;
	}
	return 0;
}
