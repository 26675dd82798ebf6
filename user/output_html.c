// SPDX-License-Identifier: GPL-2.0
/*
 * report --html FILE: one self-contained page (inline CSS and SVG, no script, nothing
 * fetched) with the run's metadata and, per scope (the system, every cgroup, each with its
 * threads after it under -T, and the interrupt scopes of --irq), one chart:
 *
 *   - level 1 of the Top-Down tree as a stacked area over time, 0-100 % of the slots;
 *   - level 2 under it: each level-1 band split among its children, each child in a shade
 *     of its parent's color, so the two charts line up (legends give the whole run's values);
 *   - the bottleneck over time as a strip in the color of the bottleneck (or of its level-2
 *     ancestor), named where the name fits;
 *   - the fraction of the time the counters ran, where it was below 100 %.
 *
 * A cgroup whose rows have noise (report.h's struct noise) gets two more panels: its threads'
 * run-queue wait over time (s/s), and its busiest antagonists over time, each a line of the
 * CPU time it took from the cgroup (took + SMT, s/s; NOISE_LINES of them, the busiest over
 * the run), and under its title a line of the whole run's noise and antagonists.
 *
 * Under the tree, the model's IPC and GHz over time, each a line (TREE_METRICS: the default
 * metrics on every model that counts instructions and cycles; CPI is IPC's inverse), where
 * the run computed them. A model without nodes (the software model: CPU_Utilization first)
 * or an -e run gets one line chart per metric (or event rate) instead. Intervals where a
 * scope existed but ran nothing (a row of zeros, or no row between its first and last:
 * fill_idle()), or its events were not counted, are hatched; before a cgroup appeared or
 * after it went, the chart is blank (an interrupt scope is there from the start: an idle
 * one has no rows). Per-CPU scopes are not charted.
 * Long runs are averaged into at most MAX_POINTS points per chart, weighted by interval
 * length. A container's or pod's cgroup is titled by its name, as the terminal shows it.
 *
 * Every chart is <svg class="cgtma-chart" data-kind="system|cgroup|task|irq"
 * data-scope="SCOPE">, SCOPE being "system", the cgroup's path, "PATH:TID" or "irq:NAME".
 *
 * A record with samples (outputs_profile()) adds a flame graph per sampled cgroup under
 * its chart, <svg class="cgtma-flame" data-scope="PATH" data-event="EVENT"
 * data-samples="N">, inline like the charts (hover titles, no script).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "irqscope.h"
#include "alloc.h"
#include "hashmap.h"
#include "log.h"
#include "profile.h"
#include "record.h"

#define MAX_POINTS 600
#define MAX_FLAT 16		/* metrics or events charted in the flat view */
#define MAX_TREE_COLS 64	/* level-1 and level-2 nodes charted */
#define NOISE_LINES 5		/* antagonists charted per cgroup */

/* Geometry of a chart, in SVG pixels. */
#define CHART_W 1100
#define PLOT_X 64
#define PLOT_W 740
#define LEGEND_X (PLOT_X + PLOT_W + 22)
#define TREE_H 190
#define STRIP_H 22
#define MUX_H 50
#define FLAT_H 90
#define TITLE_H 22
#define GAP 16
#define AXIS_H 30

enum { ST_ABSENT, ST_IDLE, ST_RAN };

struct html_col {
	char *name;
	char *unit;
	int level;		/* 1 or 2 in the tree view; 0 in the flat view */
	int parent;		/* level 2: the column of its level-1 parent, or -1 */
	int index;		/* plan node, metric or event */
	char color[8];
};

/* An antagonist in one interval: its number in the series' ants, and what it took. */
struct html_pair {
	int ant;		/* -1: none */
	double v;		/* took + smt, s/s */
};

struct html_series {
	char *label;		/* the chart's title */
	char *scope;		/* data-scope: the path, not the container's name */
	char *path;		/* a cgroup's, or a thread's cgroup's; NULL for others */
	enum scope_kind kind;
	int tid;		/* SCOPE_TASK */
	__u64 cgroup_id;	/* SCOPE_CGROUP: its id, where the record has it (else 0) */
	bool system;
	bool removed;
	unsigned char *state;	/* per interval: ST_* */
	double *val;		/* per interval and column; NAN when not counted */
	int *bn;		/* per interval: plan node, or -1 */
	double *mux;		/* per interval: the least multiplex fraction, NAN when idle */
	bool has_summary;
	bool sum_ran;
	double *sum_val;
	int sum_bn;
	double sum_mux;
	/* A cgroup's noise; wait, has and pairs are NULL for other scopes. */
	double *wait;		/* per interval: s/s, NAN where absent */
	unsigned *has;		/* per interval: its NOISE_* bits */
	struct html_pair *pairs;	/* per interval: NOISE_ANTAGONISTS_MAX */
	char **ants;		/* the antagonists met: "NAME" or the path, as the terminal */
	char **ant_paths;
	int nr_ants, cap_ants;
	bool any_noise;
	struct noise sum_noise;	/* the summary's */
};

struct html_sink {
	FILE *f;
	char *path;
	bool written;
	char *name;		/* "html PATH" */

	/* The run. */
	char *model, *host, *kernel, *cpu;
	double start_time;
	int interval_ms, level;
	bool perf_metrics, smt, per_cpu;
	bool tree;		/* Top-Down nodes, else flat series */
	bool events;		/* flat series of event rates (-e) */
	int nr_cols;
	struct html_col *cols;
	int nr_nodes;
	char **node_name;	/* every plan node, for the bottleneck */
	int *node_col;		/* its column, or its level-2/level-1 ancestor's */

	int nr_iv, cap_iv;
	double *t0, *t1;	/* seconds since the start */
	/* Per interval, its marks (report.h): not 0, its counts are not exact. */
	__u64 *missed, *missed_ns, *unbounded;
	int nr_inexact;		/* intervals with marks */
	__u64 run_missed, run_missed_ns, run_unbounded;
	bool has_summary;
	double summary_s;

	int nr_series, cap_series;
	struct html_series *series;
	struct hashmap index;	/* scope_key() -> series */
	const struct profile *profile;	/* the sampled stacks, or NULL */
};

/* --- colors ------------------------------------------------------------------------- */

struct named_color {
	const char *name;	/* a node's or a metric's */
	const char *color;
};

/* The metrics charted under a tree, by name, and their lines' colors. */
static const struct named_color tree_metrics[] = {
	{ "IPC", "#76b7b2" },
	{ "GHz", "#9c755f" },
};

#define TREE_METRICS (sizeof(tree_metrics) / sizeof(tree_metrics[0]))

static const struct named_color known_colors[] = {
	{ "Frontend_Bound", "#4e79a7" },
	{ "Bad_Speculation", "#e15759" },
	{ "Backend_Bound", "#f28e2b" },
	{ "Retiring", "#59a14f" },
};

static const char *const palette[] = {
	"#b07aa1", "#76b7b2", "#edc948", "#9c755f", "#ff9da7", "#bab0ac",
	"#4e79a7", "#e15759", "#f28e2b", "#59a14f",
};

static void parse_rgb(const char *hex, int rgb[3])
{
	unsigned int v = strtoul(hex + 1, NULL, 16);

	rgb[0] = v >> 16 & 0xff;
	rgb[1] = v >> 8 & 0xff;
	rgb[2] = v & 0xff;
}

/* The parent's color, darker (t < 0) or lighter (t > 0). */
static void shade(const char *parent, double t, char out[8])
{
	int rgb[3];

	parse_rgb(parent, rgb);
	for (int i = 0; i < 3; i++)
		rgb[i] = t < 0 ? rgb[i] * (1 + t) + 0.5 : rgb[i] + (255 - rgb[i]) * t + 0.5;
	snprintf(out, 8, "#%02x%02x%02x", rgb[0], rgb[1], rgb[2]);
}

/* Dark text on light fills, white on dark ones. */
static const char *text_on(const char *fill)
{
	int rgb[3];

	parse_rgb(fill, rgb);
	return 0.299 * rgb[0] + 0.587 * rgb[1] + 0.114 * rgb[2] > 150 ? "#222" : "#fff";
}

/* --- collecting --------------------------------------------------------------------- */

static char *dup_or_empty(const char *s)
{
	return strdup(s ? s : "");
}

static int add_col(struct html_sink *h, const char *name, const char *unit, int level,
		   int parent, int index)
{
	struct html_col *c = &h->cols[h->nr_cols];

	c->name = strdup(name);
	c->unit = unit ? strdup(unit) : NULL;
	if (!c->name || (unit && !c->unit)) {
		free(c->name);
		free(c->unit);
		return -ENOMEM;
	}
	c->level = level;
	c->parent = parent;
	c->index = index;
	h->nr_cols++;
	return 0;
}

static void color_tree(struct html_sink *h)
{
	int next = 0;

	for (int i = 0; i < h->nr_cols; i++) {
		struct html_col *c = &h->cols[i];
		const char *color = NULL;

		if (c->level != 1)
			continue;
		for (size_t k = 0; k < sizeof(known_colors) / sizeof(known_colors[0]); k++)
			if (strcmp(c->name, known_colors[k].name) == 0)
				color = known_colors[k].color;
		if (!color)
			color = palette[next++ % (sizeof(palette) / sizeof(palette[0]))];
		snprintf(c->color, sizeof(c->color), "%s", color);
	}
	for (int i = 0; i < h->nr_cols; i++) {
		struct html_col *c = &h->cols[i];
		int n = 0, k = 0;

		if (c->level != 2)
			continue;
		for (int j = 0; j < h->nr_cols; j++) {
			if (h->cols[j].level == 2 && h->cols[j].parent == c->parent) {
				if (j < i)
					k++;
				n++;
			}
		}
		shade(h->cols[c->parent].color, n == 1 ? 0 : -0.3 + 0.65 * k / (n - 1), c->color);
	}
}

/* The columns of the metrics charted under the tree that the plan computes (level 0). */
static int add_tree_metrics(struct html_sink *h, const struct plan *p)
{
	for (size_t k = 0; k < TREE_METRICS; k++)
		for (int i = 0; i < p->nr_metrics; i++) {
			if (strcmp(p->metrics[i].name, tree_metrics[k].name))
				continue;
			if (add_col(h, p->metrics[i].name, p->metrics[i].unit, 0, -1, i))
				return -ENOMEM;
			snprintf(h->cols[h->nr_cols - 1].color, sizeof(h->cols[0].color), "%s",
				 tree_metrics[k].color);
		}
	return 0;
}

static int html_begin(struct output *o, const struct run *run)
{
	struct html_sink *h = o->priv;
	const struct plan *p = run->plan;
	int *node_to_col = NULL, err = -ENOMEM;

	h->model = dup_or_empty(run->model);
	h->host = dup_or_empty(run->hostname);
	h->kernel = dup_or_empty(run->kernel);
	h->cpu = dup_or_empty(run->cpu);
	if (!h->model || !h->host || !h->kernel || !h->cpu)
		return -ENOMEM;
	h->start_time = run->start_time;
	h->interval_ms = run->interval_ms;
	h->level = run->level;
	h->perf_metrics = run->perf_metrics;
	h->smt = run->smt;
	h->per_cpu = run->per_cpu;
	h->tree = p && p->nr_nodes;
	h->events = !p || (!p->nr_nodes && !p->nr_metrics);

	if (h->tree) {
		h->cols = calloc(p->nr_nodes + TREE_METRICS, sizeof(*h->cols));
		h->node_name = calloc(p->nr_nodes, sizeof(*h->node_name));
		h->node_col = calloc(p->nr_nodes, sizeof(*h->node_col));
		node_to_col = calloc(p->nr_nodes, sizeof(*node_to_col));
		if (!h->cols || !h->node_name || !h->node_col || !node_to_col)
			goto out;
		h->nr_nodes = p->nr_nodes;
		/* Plan nodes are in tree order: a parent comes before its children. */
		for (int i = 0; i < p->nr_nodes; i++) {
			const struct plan_node *n = &p->nodes[i];

			h->node_name[i] = strdup(n->name);
			if (!h->node_name[i])
				goto out;
			node_to_col[i] = -1;
			if (n->level <= 2 && h->nr_cols < MAX_TREE_COLS) {
				int parent = -1;

				if (n->level == 2 && n->parent >= 0)
					parent = node_to_col[n->parent];

				if (add_col(h, n->name, NULL, n->level, parent, i))
					goto out;
				node_to_col[i] = h->nr_cols - 1;
			}
			h->node_col[i] = node_to_col[i] >= 0 ? node_to_col[i] :
					 n->parent >= 0 ? h->node_col[n->parent] : -1;
		}
		color_tree(h);
		if (add_tree_metrics(h, p))
			goto out;
	} else {
		int n = h->events ? run->nr_events : p->nr_metrics;

		if (n > MAX_FLAT)
			n = MAX_FLAT;
		h->cols = calloc(n, sizeof(*h->cols));
		if (!h->cols)
			goto out;
		for (int i = 0; i < n; i++) {
			if (h->events)
				err = add_col(h, run->event_names[i], "/s", 0, -1, i);
			else
				err = add_col(h, p->metrics[i].name, p->metrics[i].unit, 0, -1, i);
			if (err)
				goto out;
			snprintf(h->cols[i].color, sizeof(h->cols[i].color), "%s",
				 palette[(i + 6) % (sizeof(palette) / sizeof(palette[0]))]);
		}
	}
	err = 0;
out:
	free(node_to_col);
	return err;
}

/* What a series owns. */
static void series_free(struct html_series *s)
{
	free(s->label);
	free(s->scope);
	free(s->path);
	free(s->state);
	free(s->val);
	free(s->bn);
	free(s->mux);
	free(s->sum_val);
	free(s->wait);
	free(s->has);
	free(s->pairs);
	for (int i = 0; i < s->nr_ants; i++) {
		free(s->ants[i]);
		free(s->ant_paths[i]);
	}
	free(s->ants);
	free(s->ant_paths);
}

/* A cgroup's noise arrays grown from old to cap intervals, the new ones empty. */
static int grow_noise(struct html_series *s, int old, int cap)
{
	double *wait = realloc(s->wait, cap * sizeof(*wait));
	unsigned *has;
	struct html_pair *pairs;

	if (!wait)
		return -ENOMEM;
	s->wait = wait;
	has = realloc(s->has, cap * sizeof(*has));
	if (!has)
		return -ENOMEM;
	s->has = has;
	pairs = realloc(s->pairs, (size_t)cap * NOISE_ANTAGONISTS_MAX * sizeof(*pairs));
	if (!pairs)
		return -ENOMEM;
	s->pairs = pairs;
	for (int i = old; i < cap; i++) {
		wait[i] = NAN;
		has[i] = 0;
		for (int k = 0; k < NOISE_ANTAGONISTS_MAX; k++)
			pairs[(size_t)i * NOISE_ANTAGONISTS_MAX + k] = (struct html_pair){ -1, 0 };
	}
	return 0;
}

/* The series of a scope, created (empty so far) on first sight. */
/*
 * The series' key: the scope's, and a cgroup's id, so that a cgroup made again under its path
 * (a restarted container) is a chart of its own.
 */
static const char *series_key(const struct scope *sc, char *buf, size_t len)
{
	if (sc->kind != SCOPE_CGROUP || !sc->cgroup_id)
		return scope_key(sc);
	snprintf(buf, len, "%s#%llu", scope_key(sc), (unsigned long long)sc->cgroup_id);
	return buf;
}

static struct html_series *find_series(struct html_sink *h, const struct scope *sc)
{
	bool system = sc->kind == SCOPE_SYSTEM;
	char keybuf[4200];
	const char *key = series_key(sc, keybuf, sizeof(keybuf));
	int i = hashmap_get_str(&h->index, key);
	struct html_series *s;
	char label[1100], scope[1100];
	size_t n;

	if (i >= 0)
		return &h->series[i];
	if (system) {
		snprintf(label, sizeof(label), "System (every CPU, all tasks)");
		snprintf(scope, sizeof(scope), "system");
	} else if (sc->kind == SCOPE_IRQ) {
		snprintf(label, sizeof(label), "%s", irq_scope_label(sc->irq));
		snprintf(scope, sizeof(scope), "%s", label);
	} else if (sc->kind == SCOPE_TASK) {
		/* "comm:tid in web": a thread, under its cgroup's chart. */
		char cg[1024];
		struct scope c = { .kind = SCOPE_CGROUP, .cgroup = sc->cgroup, .names = sc->names,
				   .cpu = -1 };

		snprintf(label, sizeof(label), "%s:%d in %s", sc->comm, sc->tid,
			 scope_label(&c, false, cg, sizeof(cg)));
		scope_label(sc, true, scope, sizeof(scope));
	} else {
		scope_label(sc, false, label, sizeof(label));
		snprintf(scope, sizeof(scope), "%s", sc->cgroup);
	}
	if (ALLOC_GROW(h->series, h->nr_series + 1, h->cap_series))
		return NULL;
	s = &h->series[h->nr_series];
	memset(s, 0, sizeof(*s));
	n = h->cap_iv ? h->cap_iv : 1;
	s->label = strdup(label);
	s->scope = strdup(scope);
	s->path = sc->cgroup ? strdup(sc->cgroup) : NULL;
	s->kind = sc->kind;
	s->tid = sc->tid;
	s->cgroup_id = sc->kind == SCOPE_CGROUP ? sc->cgroup_id : 0;
	s->system = system;
	s->state = calloc(n, sizeof(*s->state));
	s->val = malloc(n * (h->nr_cols ? h->nr_cols : 1) * sizeof(*s->val));
	s->bn = malloc(n * sizeof(*s->bn));
	s->mux = malloc(n * sizeof(*s->mux));
	s->sum_val = calloc(h->nr_cols ? h->nr_cols : 1, sizeof(*s->sum_val));
	if (!s->label || !s->scope || (sc->cgroup && !s->path) || !s->state || !s->val ||
	    !s->bn || !s->mux || !s->sum_val ||
	    (sc->kind == SCOPE_CGROUP && grow_noise(s, 0, n)) ||
	    hashmap_put_str(&h->index, key, h->nr_series)) {
		series_free(s);
		return NULL;
	}
	h->nr_series++;
	return s;
}

/* Room for one more interval in the time line and in every series. */
static int grow_u64(__u64 **p, int cap)
{
	__u64 *n = realloc(*p, cap * sizeof(**p));

	if (!n)
		return -ENOMEM;
	*p = n;
	return 0;
}

static int grow_intervals(struct html_sink *h)
{
	int cap = h->cap_iv ? 2 * h->cap_iv : 64, cols = h->nr_cols ? h->nr_cols : 1;
	double *t0 = realloc(h->t0, cap * sizeof(*t0)), *t1;

	if (!t0)
		return -ENOMEM;
	h->t0 = t0;
	t1 = realloc(h->t1, cap * sizeof(*t1));
	if (!t1)
		return -ENOMEM;
	h->t1 = t1;
	if (grow_u64(&h->missed, cap) || grow_u64(&h->missed_ns, cap) ||
	    grow_u64(&h->unbounded, cap))
		return -ENOMEM;
	for (int i = 0; i < h->nr_series; i++) {
		struct html_series *s = &h->series[i];
		unsigned char *st = realloc(s->state, cap);
		double *val, *mux;
		int *bn;

		if (!st)
			return -ENOMEM;
		s->state = st;
		memset(st + h->cap_iv, 0, cap - h->cap_iv);
		val = realloc(s->val, (size_t)cap * cols * sizeof(*val));
		if (!val)
			return -ENOMEM;
		s->val = val;
		bn = realloc(s->bn, cap * sizeof(*bn));
		if (!bn)
			return -ENOMEM;
		s->bn = bn;
		mux = realloc(s->mux, cap * sizeof(*mux));
		if (!mux)
			return -ENOMEM;
		s->mux = mux;
		if (s->wait && grow_noise(s, h->cap_iv, cap))
			return -ENOMEM;
	}
	h->cap_iv = cap;
	return 0;
}

/* The columns' values for one scope: NAN where not counted. */
static void scope_values(const struct html_sink *h, const struct run *run,
			 const struct scope *sc, double interval_s, double *val, int *bn)
{
	*bn = -1;
	for (int c = 0; c < h->nr_cols; c++) {
		int k = h->cols[c].index;

		val[c] = NAN;
		if (!sc->ran)
			continue;
		/* In the tree view the metrics' columns are those of level 0. */
		if (h->tree && h->cols[c].level && sc->has_tma && sc->tma.counted[k])
			val[c] = sc->tma.value[k];
		else if (!h->events && !h->cols[c].level && sc->has_tma &&
			 sc->tma.metric_counted[k])
			val[c] = sc->tma.metric[k];
		else if (h->events && sc->state[k] == COUNT_OK && interval_s > 0)
			val[c] = sc->count[k] / interval_s;
	}
	if (h->tree && sc->ran && sc->has_tma)
		*bn = sc->tma.bottleneck;
}

/* The number of antagonist a in the series' ants, added on first sight; -ENOMEM. */
static int find_ant(struct html_series *s, const struct antagonist *a)
{
	int i;

	for (i = 0; i < s->nr_ants; i++)
		if (!strcmp(s->ant_paths[i], a->cgroup))
			return i;
	if (ALLOC_GROW(s->ants, s->nr_ants + 1, s->cap_ants))
		return -ENOMEM;
	/* ants and ant_paths grow together: the second to the first's capacity. */
	{
		char **paths = realloc(s->ant_paths, s->cap_ants * sizeof(*paths));

		if (!paths)
			return -ENOMEM;
		s->ant_paths = paths;
	}
	s->ants[i] = strdup(*a->container ? a->container : a->cgroup);
	s->ant_paths[i] = strdup(a->cgroup);
	if (!s->ants[i] || !s->ant_paths[i]) {
		free(s->ants[i]);
		free(s->ant_paths[i]);
		return -ENOMEM;
	}
	return s->nr_ants++;
}

/* A cgroup's noise in interval k: its wait, and what each antagonist took. */
static int add_noise(struct html_series *s, int k, const struct noise *n)
{
	struct html_pair *pairs = &s->pairs[(size_t)k * NOISE_ANTAGONISTS_MAX];

	s->has[k] = n->has;
	s->wait[k] = n->has & NOISE_WAIT ? n->wait : NAN;
	s->any_noise |= n->has != 0;
	for (int i = 0; i < n->nr_antagonists && (n->has & (NOISE_PREEMPTED | NOISE_SMT)); i++) {
		const struct antagonist *a = &n->antagonists[i];
		int ant = find_ant(s, a);

		if (ant < 0)
			return ant;
		pairs[i].ant = ant;
		pairs[i].v = (n->has & NOISE_PREEMPTED ? a->took : 0) +
			     (n->has & NOISE_SMT ? a->smt : 0);
	}
	return 0;
}

static bool charted(const struct scope *sc)
{
	return sc->kind == SCOPE_SYSTEM || sc->kind == SCOPE_TASK ||
	       ((sc->kind == SCOPE_CGROUP || sc->kind == SCOPE_IRQ) && sc->cpu < 0);
}

static int html_interval(struct output *o, const struct run *run, const struct interval *iv)
{
	struct html_sink *h = o->priv;
	int k = h->nr_iv, cols = h->nr_cols ? h->nr_cols : 1;

	if (h->nr_iv == h->cap_iv && grow_intervals(h))
		return -ENOMEM;
	h->t1[k] = iv->time - h->start_time;
	h->t0[k] = h->t1[k] - iv->interval_s;
	if (h->t0[k] < 0)
		h->t0[k] = 0;
	h->missed[k] = iv->missed_slices;
	h->missed_ns[k] = iv->missed_max_ns;
	h->unbounded[k] = iv->missed_unbounded;
	h->nr_inexact += iv->missed_slices != 0;
	h->run_missed += iv->missed_slices;
	h->run_missed_ns += iv->missed_max_ns;
	h->run_unbounded += iv->missed_unbounded;
	h->nr_iv++;
	for (int i = 0; i < iv->nr_scopes; i++) {
		const struct scope *sc = &iv->scopes[i];
		struct html_series *s;

		if (!charted(sc))
			continue;
		s = find_series(h, sc);
		if (!s)
			return -ENOMEM;
		s->state[k] = sc->ran ? ST_RAN : ST_IDLE;
		s->removed |= sc->removed;
		scope_values(h, run, sc, iv->interval_s, &s->val[(size_t)k * cols], &s->bn[k]);
		s->mux[k] = scope_multiplex(sc, run, NULL, 0);
		if (s->wait && add_noise(s, k, &sc->noise))
			return -ENOMEM;
	}
	return 0;
}

/* --- drawing ------------------------------------------------------------------------ */

/* What is drawn: intervals, or averages over buckets of them in a long run. */
struct point {
	int a, b;		/* its intervals: a to b - 1 */
	double t0, t1;
	unsigned char state;
	int bn;
	double mux;
	double *val;
};

struct view {
	const struct html_sink *h;
	const struct html_series *s;
	int n;
	struct point *pts;
	double *vals;
	double tmax;
	int id;			/* the chart's number, for unique pattern ids */
};

static double xpos(const struct view *v, double t)
{
	return PLOT_X + (v->tmax > 0 ? t / v->tmax : 0) * PLOT_W;
}

static int build_view(struct view *v, const struct html_sink *h, const struct html_series *s)
{
	int per = (h->nr_iv + MAX_POINTS - 1) / MAX_POINTS, cols = h->nr_cols ? h->nr_cols : 1;

	if (per < 1)
		per = 1;
	v->h = h;
	v->s = s;
	v->n = (h->nr_iv + per - 1) / per;
	v->pts = calloc(v->n ? v->n : 1, sizeof(*v->pts));
	v->vals = calloc((size_t)(v->n ? v->n : 1) * cols, sizeof(*v->vals));
	if (!v->pts || !v->vals)
		return -ENOMEM;
	v->tmax = h->nr_iv ? h->t1[h->nr_iv - 1] : 0;
	for (int p = 0; p < v->n; p++) {
		struct point *pt = &v->pts[p];
		int a = p * per, b = a + per < h->nr_iv ? a + per : h->nr_iv;
		int best = 0;

		pt->a = a;
		pt->b = b;
		pt->t0 = h->t0[a];
		pt->t1 = h->t1[b - 1];
		pt->val = &v->vals[(size_t)p * cols];
		pt->bn = -1;
		pt->mux = NAN;
		for (int i = a; i < b; i++) {
			if (s->state[i] > pt->state)
				pt->state = s->state[i];
			if (s->state[i] == ST_RAN && !isnan(s->mux[i]) &&
			    (isnan(pt->mux) || s->mux[i] < pt->mux))
				pt->mux = s->mux[i];
		}
		for (int c = 0; c < h->nr_cols; c++) {
			double sum = 0, w = 0;

			for (int i = a; i < b; i++) {
				double x = s->val[(size_t)i * cols + c], len = h->t1[i] - h->t0[i];

				if (s->state[i] == ST_RAN && isfinite(x)) {
					sum += x * (len > 0 ? len : 1);
					w += len > 0 ? len : 1;
				}
			}
			pt->val[c] = w > 0 ? sum / w : NAN;
		}
		/* The bucket's bottleneck: the one most often named in it. */
		for (int i = a; i < b; i++) {
			int cnt = 0;

			if (s->state[i] != ST_RAN || s->bn[i] < 0)
				continue;
			for (int j = a; j < b; j++)
				cnt += s->state[j] == ST_RAN && s->bn[j] == s->bn[i];
			if (cnt > best) {
				best = cnt;
				pt->bn = s->bn[i];
			}
		}
	}
	return 0;
}

static void view_release(struct view *v)
{
	free(v->pts);
	free(v->vals);
}

static void html_escape(FILE *f, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&#39;", f); break;
		default: fputc(*s, f);
		}
	}
}

static void fmt_time(double t, double span, char *buf, size_t len)
{
	long s = lround(t);

	if (span < 120)
		snprintf(buf, len, "%g s", round(t * 100) / 100);
	else if (span < 3600)
		snprintf(buf, len, "%ld:%02ld", s / 60, s % 60);
	else
		snprintf(buf, len, "%ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
}

static double time_step(double span)
{
	static const double steps[] = { 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30,
					60, 120, 300, 600, 900, 1800, 3600, 7200, 14400, 21600,
					43200, 86400 };

	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++)
		if (span / steps[i] <= 10)
			return steps[i];
	return span / 10;
}

/* Vertical grid lines over [y, y + hgt], labelled under it when labels. */
static void time_grid(FILE *f, const struct view *v, double y, double hgt, bool labels)
{
	double step = time_step(v->tmax);
	char buf[32];

	if (!(v->tmax > 0))
		return;
	for (double t = 0; t <= v->tmax + step * 1e-6; t += step) {
		double x = xpos(v, t);

		fprintf(f, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
			"y2=\"%.1f\"/>\n", x, y, x, y + hgt);
		if (!labels)
			continue;
		fmt_time(t, v->tmax, buf, sizeof(buf));
		fprintf(f, "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s"
			"</text>\n", x, y + hgt + 14, buf);
	}
}

static void panel_title(FILE *f, double y, const char *title, const char *unit)
{
	fprintf(f, "<text class=\"ptitle\" x=\"%d\" y=\"%.1f\">", PLOT_X, y - 6);
	html_escape(f, title);
	if (unit && *unit) {
		fputs(" <tspan class=\"unit\">(", f);
		html_escape(f, unit);
		fputs(")</tspan>", f);
	}
	fputs("</text>\n", f);
}

/* The hatch over points where the scope existed but nothing was counted. */
static void idle_hatch(FILE *f, const struct view *v, double y, double hgt,
		       bool (*valid)(const struct view *, const struct point *, const void *),
		       const void *arg)
{
	for (int p = 0; p < v->n; p++) {
		const struct point *pt = &v->pts[p];

		if (pt->state == ST_ABSENT || valid(v, pt, arg))
			continue;
		fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
			"fill=\"url(#idle%d)\"/>\n", xpos(v, pt->t0), y,
			xpos(v, pt->t1) - xpos(v, pt->t0), hgt, v->id);
	}
}

static double clamp01(double x)
{
	return x < 0 ? 0 : x > 1 ? 1 : x;
}

/*
 * A band of a stacked panel. Level 1: a node. Level 2: each level-1 node's band split among
 * its children in proportion to their values (a childless node keeps its whole band; one
 * whose children are all 0 too, as "rest"). Measured level-2 values need not add up to their
 * parent's (toplev's formulas clamp, and differ per path); split this way, level 2 lines up
 * with level 1 and the legend gives the values themselves.
 */
struct band {
	int col;
	bool rest;		/* the parent's band when its children add up to nothing */
};

static int panel_bands(const struct html_sink *h, int level, struct band *out)
{
	int n = 0;

	for (int c = 0; c < h->nr_cols; c++) {
		bool has_child = false;

		if (h->cols[c].level != 1)
			continue;
		for (int k = 0; level == 2 && k < h->nr_cols; k++)
			has_child |= h->cols[k].level == 2 && h->cols[k].parent == c;
		out[n++] = (struct band){ .col = c, .rest = has_child };
		for (int k = 0; has_child && k < h->nr_cols; k++)
			if (h->cols[k].level == 2 && h->cols[k].parent == c)
				out[n++] = (struct band){ .col = k };
	}
	return n;
}

static double children_sum(const struct html_sink *h, const struct point *pt, int parent)
{
	double sum = 0;

	for (int k = 0; k < h->nr_cols; k++)
		if (h->cols[k].level == 2 && h->cols[k].parent == parent)
			sum += clamp01(pt->val[k]);
	return sum;
}

static double band_height(const struct html_sink *h, const struct point *pt,
			  const struct band *b)
{
	const struct html_col *c = &h->cols[b->col];
	double sum;

	if (c->level == 1 && !b->rest)
		return clamp01(pt->val[b->col]);
	sum = children_sum(h, pt, c->level == 1 ? b->col : c->parent);
	if (b->rest)
		return sum > 0 ? 0 : clamp01(pt->val[b->col]);
	return sum > 0 ? clamp01(pt->val[c->parent]) * clamp01(pt->val[b->col]) / sum : 0;
}

struct stack_arg {
	const struct band *bands;
	int n;
};

static bool stack_valid(const struct view *v, const struct point *pt, const void *arg)
{
	const struct stack_arg *sa = arg;

	if (pt->state != ST_RAN)
		return false;
	for (int i = 0; i < sa->n; i++)
		if (!isfinite(pt->val[sa->bands[i].col]))
			return false;
	return true;
}

static void y_axis_pct(FILE *f, double y, double hgt, int step)
{
	for (int pct = 0; pct <= 100; pct += step) {
		double yy = y + hgt - hgt * pct / 100.0;

		fprintf(f, "<line class=\"%s\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"/>\n",
			pct ? "grid" : "axis", PLOT_X, yy, PLOT_X + PLOT_W, yy);
		fprintf(f, "<text class=\"tick\" x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%d %%"
			"</text>\n", PLOT_X - 6, yy + 4, pct);
	}
}

/* A swatch, a name and (when finite) a value in percent, right-aligned. */
static void legend_item(FILE *f, double y, const char *color, const char *pattern_id,
			const char *name, int indent, double value)
{
	fprintf(f, "<rect x=\"%d\" y=\"%.1f\" width=\"11\" height=\"11\" fill=\"%s%s%s\" "
		"stroke=\"#666\" stroke-width=\"0.5\"/>\n", LEGEND_X + indent, y - 9,
		pattern_id ? "url(#" : "", pattern_id ? pattern_id : color, pattern_id ? ")" : "");
	fprintf(f, "<text class=\"legend\" x=\"%d\" y=\"%.1f\">", LEGEND_X + indent + 16, y);
	html_escape(f, name);
	fputs("</text>\n", f);
	if (isfinite(value))
		fprintf(f, "<text class=\"legend num\" x=\"%d\" y=\"%.1f\" text-anchor=\"end\">"
			"%.1f %%</text>\n", CHART_W - 8, y, value * 100);
}

/* A stacked area panel, 0 to 100 % of the slots, with its legend on the right. */
static void stacked_panel(FILE *f, const struct view *v, double y, int level, const char *title)
{
	const struct html_sink *h = v->h;
	const struct html_series *s = v->s;
	struct band bands[2 * MAX_TREE_COLS];
	struct stack_arg sa = { bands, 0 };
	char pid[32];
	double ly, step;
	int entries = 0;

	sa.n = panel_bands(h, level, bands);
	panel_title(f, y, title, "% of pipeline slots");
	fprintf(f, "<rect class=\"plot\" x=\"%d\" y=\"%.1f\" width=\"%d\" height=\"%d\"/>\n",
		PLOT_X, y, PLOT_W, TREE_H);
	for (int p = 0; p < v->n;) {
		int q = p;

		if (!stack_valid(v, &v->pts[p], &sa)) {
			p++;
			continue;
		}
		while (q < v->n && stack_valid(v, &v->pts[q], &sa))
			q++;
		/* Points p..q-1: one polygon per band, the upper edge forward, the lower back. */
		for (int b = 0; b < sa.n; b++) {
			fprintf(f, "<path fill=\"%s\" d=\"", h->cols[bands[b].col].color);
			for (int pass = 0; pass < 2; pass++) {
				for (int i = 0; i <= q - p + 1; i++) {
					int k = pass ? q - p + 1 - i : i;
					int idx = k == 0 ? p : k == q - p + 1 ? q - 1 : p + k - 1;
					const struct point *pt = &v->pts[idx];
					double t = k == 0 ? pt->t0 : k == q - p + 1 ? pt->t1 :
							    (pt->t0 + pt->t1) / 2;
					double top = 0;

					for (int j = 0; j < b + !pass; j++)
						top += band_height(h, pt, &bands[j]);
					fprintf(f, "%s%.1f,%.1f", i == 0 && pass == 0 ? "M" : "L",
						xpos(v, t), y + TREE_H - TREE_H * clamp01(top));
				}
			}
			fputs("Z\"/>\n", f);
		}
		p = q;
	}
	snprintf(pid, sizeof(pid), "idle%d", v->id);
	idle_hatch(f, v, y, TREE_H, stack_valid, &sa);
	y_axis_pct(f, y, TREE_H, 25);
	time_grid(f, v, y, TREE_H, true);

	/* The legend, top band first as the stack reads, with the whole run's values. */
	for (int b = 0; b < sa.n; b++)
		entries += !bands[b].rest;
	step = entries + (level == 1) > 12 ? (double)TREE_H / (entries + (level == 1)) : 16;
	fprintf(f, "<text class=\"legend head\" x=\"%d\" y=\"%.1f\" text-anchor=\"end\">"
		"whole run</text>\n", CHART_W - 8, y - 6);
	ly = y + 10;
	for (int b = sa.n - 1; b >= 0; b--) {
		const struct html_col *c = &h->cols[bands[b].col];

		if (bands[b].rest)
			continue;
		legend_item(f, ly, c->color, NULL, c->name, c->level == 2 ? 12 : 0,
			    s->has_summary && s->sum_ran ? s->sum_val[bands[b].col] : NAN);
		ly += step;
	}
	if (level == 1)
		legend_item(f, ly, NULL, pid, "idle or not counted", 0, NAN);
}

static void bottleneck_strip(FILE *f, const struct view *v, double y)
{
	const struct html_sink *h = v->h;

	panel_title(f, y, "Bottleneck", NULL);
	fprintf(f, "<rect class=\"plot\" x=\"%d\" y=\"%.1f\" width=\"%d\" height=\"%d\"/>\n",
		PLOT_X, y, PLOT_W, STRIP_H);
	for (int p = 0; p < v->n;) {
		const struct point *pt = &v->pts[p];
		int q = p + 1, bn = pt->bn;
		const char *fill;
		double x0, x1;

		if (pt->state == ST_ABSENT) {
			p++;
			continue;
		}
		while (q < v->n && v->pts[q].state == pt->state && v->pts[q].bn == bn)
			q++;
		x0 = xpos(v, pt->t0);
		x1 = xpos(v, v->pts[q - 1].t1);
		if (pt->state != ST_RAN) {
			fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%d\" "
				"fill=\"url(#idle%d)\"/>\n", x0, y, x1 - x0, STRIP_H, v->id);
			p = q;
			continue;
		}
		fill = bn >= 0 && h->node_col[bn] >= 0 ? h->cols[h->node_col[bn]].color : "#e6e6e6";
		fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%d\" fill=\"%s\">"
			"<title>", x0, y, x1 - x0, STRIP_H, fill);
		html_escape(f, bn >= 0 ? h->node_name[bn] : "no node above its threshold");
		fputs("</title></rect>\n", f);
		/* Named as far as the name fits (about 6.3 px a character at 11 px). */
		if (bn >= 0 && x1 - x0 >= 40) {
			int fit = (x1 - x0 - 8) / 6.3, len = strlen(h->node_name[bn]);
			char name[64];

			if (fit > 60)
				fit = 60;
			if (len <= fit)
				snprintf(name, sizeof(name), "%s", h->node_name[bn]);
			else
				snprintf(name, sizeof(name), "%.*s\u2026", fit - 1,
					 h->node_name[bn]);
			fprintf(f, "<text class=\"strip\" x=\"%.1f\" y=\"%.1f\" "
				"text-anchor=\"middle\" fill=\"%s\">", (x0 + x1) / 2,
				y + STRIP_H / 2 + 4, text_on(fill));
			html_escape(f, name);
			fputs("</text>\n", f);
		}
		p = q;
	}
	time_grid(f, v, y, STRIP_H, false);
}

static bool any_multiplexed(const struct view *v)
{
	for (int p = 0; p < v->n; p++)
		if (v->pts[p].state == ST_RAN && v->pts[p].mux < 0.995)
			return true;
	return false;
}

static bool mux_valid(const struct view *v, const struct point *pt, const void *arg)
{
	return pt->state == ST_RAN && !isnan(pt->mux);
}

/* A line (and a light area under it) through the finite values, broken at gaps. */
static void line_series(FILE *f, const struct view *v, double y, double hgt, double ymax,
			const char *color, double (*get)(const struct point *, const void *),
			const void *arg)
{
	for (int pass = 0; pass < 2; pass++) {
		for (int p = 0; p < v->n;) {
			int q = p;

			if (!isfinite(get(&v->pts[p], arg))) {
				p++;
				continue;
			}
			while (q < v->n && isfinite(get(&v->pts[q], arg)))
				q++;
			if (pass == 0)
				fprintf(f, "<path fill=\"%s\" fill-opacity=\"0.18\" d=\"M%.1f,%.1f",
					color, xpos(v, v->pts[p].t0), y + hgt);
			else
				fprintf(f, "<path fill=\"none\" stroke=\"%s\" stroke-width=\"1.6\" "
					"stroke-linejoin=\"round\" d=\"", color);
			for (int i = p; i <= q; i++) {
				const struct point *pt = &v->pts[i < q ? i : q - 1];
				double t = i < q ? (pt->t0 + pt->t1) / 2 : pt->t1;
				double yv = y + hgt - hgt * clamp01(get(pt, arg) / ymax);

				if (i == p)
					fprintf(f, "%s%.1f,%.1f", pass ? "M" : "L",
						xpos(v, pt->t0), yv);
				fprintf(f, "L%.1f,%.1f", xpos(v, t), yv);
			}
			if (pass == 0)
				fprintf(f, "L%.1f,%.1fZ", xpos(v, v->pts[q - 1].t1), y + hgt);
			fputs("\"/>\n", f);
			p = q;
		}
	}
}

static double get_mux(const struct point *pt, const void *arg)
{
	return pt->state == ST_RAN ? pt->mux : NAN;
}

static void mux_panel(FILE *f, const struct view *v, double y)
{
	panel_title(f, y, "Counted", "% of the time the counters ran");
	fprintf(f, "<rect class=\"plot\" x=\"%d\" y=\"%.1f\" width=\"%d\" height=\"%d\"/>\n",
		PLOT_X, y, PLOT_W, MUX_H);
	line_series(f, v, y, MUX_H, 1, "#555", get_mux, NULL);
	idle_hatch(f, v, y, MUX_H, mux_valid, NULL);
	y_axis_pct(f, y, MUX_H, 50);
	time_grid(f, v, y, MUX_H, true);
}

static double nice_ceil(double x)
{
	double e, m;

	if (!(x > 0))
		return 1;
	e = pow(10, floor(log10(x)));
	m = x / e;
	return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 2.5 ? 2.5 : m <= 5 ? 5 : 10) * e;
}

/*
 * One number format on the whole page, axes, legends and summaries alike: three significant
 * digits and an SI prefix ("5 k", "3.78 M", "0.5", "12 m"); only a value past every prefix
 * (1e21 and up: a damaged record's) takes an exponent. unit (NULL: none shown) follows,
 * joined to the prefix when it is a rate ("3.78 k/s"), else spaced ("1.5 CPUs"). A metric
 * without a unit ("": IPC, CPI) below 1 is a plain decimal, as toplev and perf print it
 * ("0.27", "0.0125"), not "270 m".
 */
static void fmt_value(double v, const char *unit, char *buf, size_t len)
{
	static const char *const prefix[] = { "n", "\u00b5", "m", "", "k", "M", "G", "T", "P", "E" };
	const int last = sizeof(prefix) / sizeof(prefix[0]) - 1;
	double m = fabs(v), r;
	int p = 3, decimals, n;

	if (unit && !*unit && m >= 0.001 && m < 1) {
		snprintf(buf, len, "%.3g", v);
		return;
	}
	if (!unit)
		unit = "";
	if (m == 0 || !isfinite(m)) {
		snprintf(buf, len, "%g%s%s", v, *unit ? " " : "", unit);
		return;
	}
	while (m >= 1000 && p < last)
		m /= 1000, p++;
	while (m < 1 && p > 0)
		m *= 1000, p--;
	/* Past every prefix (a damaged record's value): no prefix can hold it in 3 digits. */
	if (m >= 1000) {
		snprintf(buf, len, "%.3g%s%s", v, *unit ? " " : "", unit);
		return;
	}
	decimals = m >= 100 ? 0 : m >= 10 ? 1 : 2;
	/* Rounded, 9.996 is 10.0 (one decimal fewer) and 999.6 is 1.00 of the next prefix. */
	r = round(m * pow(10, decimals)) / pow(10, decimals);
	if (r >= 1000 && p < last)
		m = r / 1000, p++, decimals = 2;
	else if (decimals && r >= (decimals == 2 ? 10 : 100))
		decimals--;
	n = snprintf(buf, len, "%s%.*f", v < 0 ? "-" : "", decimals, m);
	if (n <= 0 || (size_t)n >= len)
		return;		/* cut to the buffer: nothing to append after */
	/* "5 k", not "5.00 k". */
	if (decimals) {
		while (buf[n - 1] == '0')
			buf[--n] = 0;
		if (buf[n - 1] == '.')
			buf[--n] = 0;
	}
	if (*prefix[p] || *unit)
		snprintf(buf + n, len - n, " %s%s%s", prefix[p],
			 *prefix[p] && *unit && *unit != '/' ? " " : "", unit);
}

struct col_arg {
	int col;
};

static double get_col(const struct point *pt, const void *arg)
{
	const struct col_arg *ca = arg;

	return pt->state == ST_RAN ? pt->val[ca->col] : NAN;
}

static bool col_valid(const struct view *v, const struct point *pt, const void *arg)
{
	return isfinite(get_col(pt, arg));
}

/* Beside a flat panel: the whole run's value, and the highest interval. */
static void flat_stats(FILE *f, const struct view *v, double y, int c)
{
	const struct html_sink *h = v->h;
	const struct html_series *s = v->s;
	const char *unit = h->cols[c].unit ? h->cols[c].unit : "";
	double max = NAN;
	char buf[128];
	int cols = h->nr_cols ? h->nr_cols : 1;
	bool whole;

	for (int i = 0; i < h->nr_iv; i++) {
		double x = s->state[i] == ST_RAN ? s->val[(size_t)i * cols + c] : NAN;

		if (isfinite(x) && (isnan(max) || x > max))
			max = x;
	}
	fprintf(f, "<text class=\"legend head\" x=\"%d\" y=\"%.1f\">whole run</text>\n",
		LEGEND_X, y + 12);
	whole = s->has_summary && s->sum_ran && isfinite(s->sum_val[c]);
	if (whole)
		fmt_value(s->sum_val[c], unit, buf, sizeof(buf));
	else
		snprintf(buf, sizeof(buf), "not counted");
	fprintf(f, "<text class=\"legend num\" x=\"%d\" y=\"%.1f\">", LEGEND_X, y + 28);
	html_escape(f, buf);
	fputs("</text>\n", f);
	fprintf(f, "<text class=\"legend head\" x=\"%d\" y=\"%.1f\">highest interval</text>\n",
		LEGEND_X, y + 50);
	if (isfinite(max))
		fmt_value(max, unit, buf, sizeof(buf));
	else
		snprintf(buf, sizeof(buf), "not counted");
	fprintf(f, "<text class=\"legend num\" x=\"%d\" y=\"%.1f\">", LEGEND_X, y + 66);
	html_escape(f, buf);
	fputs("</text>\n", f);
}

/* A flat panel's value axis, 0 to ymax (unit as fmt_value() takes it), and its time grid. */
static void value_axis(FILE *f, const struct view *v, double y, double ymax, const char *unit)
{
	char buf[32];

	for (int i = 0; i <= 2; i++) {
		double yy = y + FLAT_H - FLAT_H * i / 2.0;

		fprintf(f, "<line class=\"%s\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"/>\n",
			i ? "grid" : "axis", PLOT_X, yy, PLOT_X + PLOT_W, yy);
		fmt_value(ymax * i / 2, unit, buf, sizeof(buf));
		fprintf(f, "<text class=\"tick\" x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s"
			"</text>\n", PLOT_X - 6, yy + 4, buf);
	}
	time_grid(f, v, y, FLAT_H, true);
}

static void flat_panel(FILE *f, const struct view *v, double y, int c)
{
	const struct html_col *col = &v->h->cols[c];
	struct col_arg ca = { c };
	double vmax = 0, ymax;

	for (int p = 0; p < v->n; p++) {
		double x = get_col(&v->pts[p], &ca);

		if (isfinite(x) && x > vmax)
			vmax = x;
	}
	ymax = nice_ceil(vmax);
	/* "GHz", not "GHz (GHz)". */
	panel_title(f, y, col->name, col->unit && strcmp(col->unit, col->name) ? col->unit : NULL);
	fprintf(f, "<rect class=\"plot\" x=\"%d\" y=\"%.1f\" width=\"%d\" height=\"%d\"/>\n",
		PLOT_X, y, PLOT_W, FLAT_H);
	line_series(f, v, y, FLAT_H, ymax, col->color, get_col, &ca);
	idle_hatch(f, v, y, FLAT_H, col_valid, &ca);
	/* The axis as the values: plain decimals for a metric without a unit. */
	value_axis(f, v, y, ymax, col->unit && !*col->unit ? "" : NULL);
	flat_stats(f, v, y, c);
}

/* --- noise ------------------------------------------------------------------------- */

/* A noise line of a cgroup's chart: its wait (ant -1), or what antagonist ant took. */
struct noise_arg {
	const struct html_sink *h;
	const struct html_series *s;
	int ant;
};

/*
 * The line's value over a point's intervals, weighted by their lengths: the wait, or what the
 * antagonist took (0 in an interval with the switch hook's figures that did not list it);
 * NAN where none of them has it.
 */
static double get_noise(const struct point *pt, const void *arg)
{
	const struct noise_arg *na = arg;
	const struct html_series *s = na->s;
	double sum = 0, w = 0;

	for (int i = pt->a; i < pt->b; i++) {
		const struct html_pair *pairs = &s->pairs[(size_t)i * NOISE_ANTAGONISTS_MAX];
		double x = NAN, len = na->h->t1[i] - na->h->t0[i];

		if (na->ant < 0)
			x = s->wait[i];
		else if (s->has[i] & (NOISE_PREEMPTED | NOISE_SMT))
			for (int k = 0, found = 0; k < NOISE_ANTAGONISTS_MAX && !found; k++) {
				found = pairs[k].ant == na->ant;
				x = found ? pairs[k].v : 0;
			}
		if (isfinite(x)) {
			sum += x * (len > 0 ? len : 1);
			w += len > 0 ? len : 1;
		}
	}
	return w > 0 ? sum / w : NAN;
}

/* What antagonist ant took of the series over the run: its lines are the busiest. */
static double ant_total(const struct html_sink *h, const struct html_series *s, int ant)
{
	struct point all = { .a = 0, .b = h->nr_iv };
	struct noise_arg na = { h, s, ant };
	double v = h->nr_iv ? get_noise(&all, &na) : NAN;

	return isfinite(v) ? v : 0;
}

/* The series' charted antagonists, the busiest first, into ants: how many (NOISE_LINES). */
static int noise_lines(const struct html_sink *h, const struct html_series *s, int *ants)
{
	int n = 0;

	for (int i = 0; i < s->nr_ants; i++) {
		double t = ant_total(h, s, i);
		int k = n < NOISE_LINES ? n++ : NOISE_LINES;

		/* Insertion into the top list; the last place drops off. */
		while (k > 0 && ant_total(h, s, ants[k - 1]) < t) {
			if (k < NOISE_LINES)
				ants[k] = ants[k - 1];
			k--;
		}
		if (k < NOISE_LINES)
			ants[k] = i;
	}
	return n;
}

/* The whole run's value of a line: the summary's wait, or what the antagonist took there. */
static double noise_whole(const struct html_series *s, int ant)
{
	const struct noise *n = &s->sum_noise;

	if (!s->has_summary)
		return NAN;
	if (ant < 0)
		return n->has & NOISE_WAIT ? n->wait : NAN;
	for (int i = 0; i < n->nr_antagonists; i++)
		if (!strcmp(n->antagonists[i].cgroup, s->ant_paths[ant]))
			return (n->has & NOISE_PREEMPTED ? n->antagonists[i].took : 0) +
			       (n->has & NOISE_SMT ? n->antagonists[i].smt : 0);
	return NAN;
}

/* A name cut to the legend's room before the value, keeping its end (a path's last part). */
static const char *legend_name(const char *name, char *buf, size_t len)
{
	const size_t room = 26;
	size_t n = strlen(name);

	if (n <= room)
		return name;
	snprintf(buf, len, "\u2026%s", name + n - (room - 1));
	return buf;
}

/*
 * A panel of noise lines (lines[i]: -1 the wait, else an antagonist), in s/s, each named in
 * the legend with the whole run's value.
 */
static void noise_panel(FILE *f, const struct view *v, double y, const char *title,
			const int *lines, int n)
{
	double vmax = 0;
	char buf[64];

	panel_title(f, y, title, "s/s");
	fprintf(f, "<rect class=\"plot\" x=\"%d\" y=\"%.1f\" width=\"%d\" height=\"%d\"/>\n",
		PLOT_X, y, PLOT_W, FLAT_H);
	for (int i = 0; i < n; i++)
		for (int p = 0; p < v->n; p++) {
			struct noise_arg na = { v->h, v->s, lines[i] };
			double x = get_noise(&v->pts[p], &na);

			if (isfinite(x) && x > vmax)
				vmax = x;
		}
	fprintf(f, "<text class=\"legend head\" x=\"%d\" y=\"%.1f\" text-anchor=\"end\">"
		"whole run</text>\n", CHART_W - 8, y - 6);
	for (int i = 0; i < n; i++) {
		struct noise_arg na = { v->h, v->s, lines[i] };
		const char *color = lines[i] < 0 ? "#555" :
				    palette[i % (sizeof(palette) / sizeof(palette[0]))];
		double whole = noise_whole(v->s, lines[i]), ly = y + 10 + 16 * i;

		line_series(f, v, y, FLAT_H, nice_ceil(vmax), color, get_noise, &na);
		fprintf(f, "<rect x=\"%d\" y=\"%.1f\" width=\"11\" height=\"3\" fill=\"%s\"/>\n",
			LEGEND_X, ly - 5, color);
		fprintf(f, "<text class=\"legend\" x=\"%d\" y=\"%.1f\">", LEGEND_X + 16, ly);
		html_escape(f, lines[i] < 0 ? "wait" : legend_name(v->s->ants[lines[i]], buf,
								     sizeof(buf)));
		if (lines[i] >= 0 && strcmp(v->s->ants[lines[i]], v->s->ant_paths[lines[i]])) {
			fputs("<title>", f);
			html_escape(f, v->s->ant_paths[lines[i]]);
			fputs("</title>", f);
		}
		fputs("</text>\n", f);
		if (!isfinite(whole))
			continue;
		snprintf(buf, sizeof(buf), "%.2f s/s", whole);
		fprintf(f, "<text class=\"legend num\" x=\"%d\" y=\"%.1f\" text-anchor=\"end\">",
			CHART_W - 8, ly);
		html_escape(f, buf);
		fputs("</text>\n", f);
	}
	value_axis(f, v, y, nice_ceil(vmax), "");
}

/* The noise panels' height: the wait's, and the antagonists' where there are some. */
static int noise_height(const struct html_series *s)
{
	if (!s->any_noise)
		return 0;
	return (TITLE_H + FLAT_H + AXIS_H) * (s->nr_ants ? 2 : 1);
}

static void noise_panels(FILE *f, const struct view *v, double y)
{
	const int wait = -1;
	int ants[NOISE_LINES], n;

	if (!v->s->any_noise)
		return;
	noise_panel(f, v, y, "Run-queue wait", &wait, 1);
	n = noise_lines(v->h, v->s, ants);
	if (n)
		noise_panel(f, v, y + TITLE_H + FLAT_H + AXIS_H,
			    "Antagonists: CPU time they took from it (preempting it, or beside it "
			    "on its core)", ants, n);
}

/*
 * The whole run's noise under a cgroup's title, as the terminal says it: "noise: wait
 * 0.48 s/s, pressure some 52 % full 0 %, throttled 0.20 s/s (12 times), preempted
 * 35.5/s, SMT shared 0.06 s/s; antagonists: web took 0.38 s/s, SMT 0.03 s/s
 * (preempted it 20.2/s) &middot; ...".
 */
static void noise_line(FILE *f, const struct html_series *s)
{
	static const char *const em[2] = { "<b>", "</b>" };
	const struct noise *n = &s->sum_noise;
	char text[1024];

	if (!s->has_summary || !n->has)
		return;
	/* Numbers and words: nothing in it to escape. */
	fprintf(f, "<p class=\"summary noise\">noise: %s", noise_text(n, em, text, sizeof(text)));
	for (int i = 0; i < n->nr_antagonists && (n->has & (NOISE_PREEMPTED | NOISE_SMT)); i++) {
		const struct antagonist *a = &n->antagonists[i];

		fputs(i ? " &middot; " : "; antagonists: ", f);
		html_escape(f, *a->container ? a->container : a->cgroup);
		fprintf(f, " %s", antagonist_text(n, a, em, text, sizeof(text)));
		if (n->has & NOISE_PREEMPTED)
			fprintf(f, " (preempted it %.1f/s)", a->preempt);
	}
	fputs(" <span class=\"over\">(over the whole run)</span></p>\n", f);
}

static void summary_line(FILE *f, const struct html_sink *h, const struct html_series *s)
{
	char buf[128];
	int shown = 0;

	fputs("<p class=\"summary\">", f);
	if (!s->has_summary) {
		fputs("no summary: the record ends before the run did", f);
	} else if (!s->sum_ran) {
		fputs("did not run", f);
	} else {
		for (int c = 0; c < h->nr_cols; c++) {
			const struct html_col *col = &h->cols[c];

			bool node = h->tree && col->level;

			if (col->level == 2)
				continue;
			fputs(shown++ ? " &middot; " : "", f);
			if (node)
				fprintf(f, "<span class=\"sw\" style=\"background:%s\"></span>",
					col->color);
			html_escape(f, col->name);
			if (!isfinite(s->sum_val[c]))
				fputs(" <b>not counted</b>", f);
			else if (node)
				fprintf(f, " <b>%.1f %%</b>", s->sum_val[c] * 100);
			else {
				fmt_value(s->sum_val[c], col->unit, buf, sizeof(buf));
				fputs(" <b>", f);
				html_escape(f, buf);
				fputs("</b>", f);
			}
		}
		if (h->tree) {
			fputs(" &mdash; bottleneck <b>", f);
			html_escape(f, s->sum_bn >= 0 ? h->node_name[s->sum_bn] : "none");
			fputs("</b>", f);
		}
		if (!isnan(s->sum_mux) && s->sum_mux < 0.995)
			fprintf(f, " &mdash; counted %.0f %% of the time", s->sum_mux * 100);
	}
	if (s->removed)
		fputs(" &mdash; removed during the run", f);
	fputs(" <span class=\"over\">(over the whole run)</span></p>\n", f);
}

static bool has_level2(const struct html_sink *h)
{
	for (int c = 0; c < h->nr_cols; c++)
		if (h->cols[c].level == 2)
			return true;
	return false;
}

/* --- flame graphs ------------------------------------------------------------------------ */

/*
 * A flame graph per sampled scope, from the first sampled event's stacks (the sampler puts
 * cycles, or cpu-clock, first): the scope at the bottom, each frame over its caller, as wide
 * as its share of the scope's samples; frames with the same name under the same caller are
 * one, ordered by name (as flamegraph.pl draws them). Hovering a frame shows its title: the
 * function, its samples and its share. Frames narrower than FLAME_MIN_W are left out.
 */
#define FLAME_W 1100
#define FLAME_FRAME_H 16
#define FLAME_MIN_W 0.1
#define FLAME_CHAR_W 6.6	/* of the 11-pixel font, for cutting names to fit */

struct flame_node {
	char *name;
	uint64_t count;
	int first_child, next;	/* -1 for none */
};

struct flame {
	struct flame_node *nodes;
	int nr, cap;
	struct hashmap index;	/* "PARENT\x1fNAME" -> node */
	int depth;		/* of the deepest frame, the scope's being 0 */
	bool failed;
};

static int flame_child(struct flame *fl, int parent, const char *name)
{
	char key[600];
	int i;

	snprintf(key, sizeof(key), "%d\x1f%s", parent, name);
	i = hashmap_get_str(&fl->index, key);
	if (i >= 0)
		return i;
	if (ALLOC_GROW(fl->nodes, fl->nr + 1, fl->cap) || hashmap_put_str(&fl->index, key, fl->nr))
		return -ENOMEM;
	fl->nodes[fl->nr] = (struct flame_node){ .name = strdup(name), .first_child = -1,
						 .next = fl->nodes[parent].first_child };
	if (!fl->nodes[fl->nr].name)
		return -ENOMEM;
	fl->nodes[parent].first_child = fl->nr;
	return fl->nr++;
}

/* The tree of scope's stacks of type; 0 or -ENOMEM. */
static int flame_build(struct flame *fl, const struct profile *p, int scope, int type)
{
	char name[512];

	fl->nodes = calloc(1, sizeof(*fl->nodes));
	if (!fl->nodes)
		return -ENOMEM;
	fl->nodes[0] = (struct flame_node){ .name = strdup(p->scopes[scope].name),
					    .first_child = -1, .next = -1 };
	fl->nr = fl->cap = 1;
	if (!fl->nodes[0].name)
		return -ENOMEM;
	for (int s = 0; s < p->nr_samples; s++) {
		const struct profile_sample *smp = &p->samples[s];
		uint64_t v = smp->values[type];
		int node = 0;

		if (smp->scope != scope || !v)
			continue;
		fl->nodes[0].count += v;
		for (int k = smp->nr_locs - 1; k >= 0; k--) {
			node = flame_child(fl, node, profile_frame_name(p, smp->locs[k], name,
									  sizeof(name)));
			if (node < 0)
				return node;
			fl->nodes[node].count += v;
		}
		if (smp->nr_locs > fl->depth)
			fl->depth = smp->nr_locs;
	}
	return 0;
}

static void flame_release(struct flame *fl)
{
	for (int i = 0; i < fl->nr; i++)
		free(fl->nodes[i].name);
	free(fl->nodes);
	hashmap_clear(&fl->index);
}

/* A warm color from the name, the same for the same function in every graph. */
static void flame_color(const char *name, char out[8])
{
	uint32_t h = 2166136261u;

	for (const char *c = name; *c; c++)
		h = (h ^ (unsigned char)*c) * 16777619u;
	snprintf(out, 8, "#%02x%02x%02x", 205 + h % 50, (h >> 8) % 200 + 30, (h >> 16) % 55);
}

static int cmp_flame_name(const void *a, const void *b)
{
	const struct flame_node *x = *(const struct flame_node *const *)a;
	const struct flame_node *y = *(const struct flame_node *const *)b;

	return strcmp(x->name, y->name);
}

static void flame_frame(FILE *f, const struct flame *fl, int node, double x, int depth,
			double height)
{
	const struct flame_node *n = &fl->nodes[node];
	double w = (double)n->count / fl->nodes[0].count * FLAME_W;
	double y = height - (depth + 1) * FLAME_FRAME_H;
	const struct flame_node **kids;
	int nr = 0, fit;
	char color[8];

	if (w < FLAME_MIN_W)
		return;
	flame_color(n->name, color);
	fputs("<g><title>", f);
	html_escape(f, n->name);
	fprintf(f, " (%" PRIu64 " sample%s, %.2f %%)</title>", n->count, n->count == 1 ? "" : "s",
		100.0 * n->count / fl->nodes[0].count);
	fprintf(f, "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%d\" fill=\"%s\" "
		"rx=\"2\"/>", x, y, w, FLAME_FRAME_H - 1, depth ? color : "#c8c8c8");
	fit = (int)((w - 6) / FLAME_CHAR_W);
	if (fit >= 3) {
		size_t len = strlen(n->name);
		char *label = strndup(n->name, len > (size_t)fit ? (size_t)fit - 2 : len);

		fprintf(f, "<text x=\"%.2f\" y=\"%.1f\">", x + 3, y + FLAME_FRAME_H - 4.5);
		if (label)
			html_escape(f, label);
		fputs(len > (size_t)fit ? "..</text>" : "</text>", f);
		free(label);
	}
	fputs("</g>\n", f);
	for (int c = n->first_child; c >= 0; c = fl->nodes[c].next)
		nr++;
	kids = malloc((nr ? nr : 1) * sizeof(*kids));
	/* Without memory, the frames above this one are left out; the page stays whole. */
	if (!kids)
		return;
	nr = 0;
	for (int c = n->first_child; c >= 0; c = fl->nodes[c].next)
		kids[nr++] = &fl->nodes[c];
	qsort(kids, nr, sizeof(*kids), cmp_flame_name);
	for (int i = 0; i < nr; i++) {
		flame_frame(f, fl, kids[i] - fl->nodes, x, depth + 1, height);
		x += (double)kids[i]->count / fl->nodes[0].count * FLAME_W;
	}
	free(kids);
}

/* One scope's flame graph, with its heading; nothing for a scope without samples. */
static int flame_graph(FILE *f, const struct profile *p, int scope)
{
	struct flame fl = {};
	int err = flame_build(&fl, p, scope, 0);
	double height;

	if (err || !fl.nodes[0].count) {
		flame_release(&fl);
		return err;
	}
	height = (fl.depth + 1) * FLAME_FRAME_H;
	fputs("<p class=\"summary\">Sampled stacks: ", f);
	html_escape(f, p->types[0].event);
	fprintf(f, ", %" PRIu64 " sample%s (hover a frame for its share)</p>\n", fl.nodes[0].count,
		fl.nodes[0].count == 1 ? "" : "s");
	fputs("<svg class=\"cgtma-flame\" data-scope=\"", f);
	html_escape(f, p->scopes[scope].cgroup ? p->scopes[scope].cgroup : p->scopes[scope].name);
	fputs("\" data-event=\"", f);
	html_escape(f, p->types[0].event);
	fprintf(f, "\" data-samples=\"%" PRIu64 "\" width=\"%d\" height=\"%.0f\" "
		"viewBox=\"0 0 %d %.0f\" role=\"img\">\n", fl.nodes[0].count, FLAME_W, height,
		FLAME_W, height);
	flame_frame(f, &fl, 0, 0, 0, height);
	fputs("</svg>\n", f);
	flame_release(&fl);
	return 0;
}

/* The flame graphs of the sampled scopes of a cgroup's chart, each marked drawn. */
static int series_flames(FILE *f, const struct html_sink *h, const struct html_series *s,
			 bool *drawn)
{
	const struct profile *p = h->profile;
	int err = 0;

	if (!p || !p->nr_types || s->kind != SCOPE_CGROUP || !s->path)
		return 0;
	for (int i = 0; i < p->nr_scopes && !err; i++) {
		if (drawn[i] || !p->scopes[i].cgroup || strcmp(p->scopes[i].cgroup, s->path))
			continue;
		drawn[i] = true;
		err = flame_graph(f, p, i);
	}
	return err;
}

/* Sampled scopes with no chart of their own (no interval named them): a section each. */
static int other_flames(FILE *f, const struct html_sink *h, bool *drawn)
{
	const struct profile *p = h->profile;
	int err = 0;

	for (int i = 0; p && p->nr_types && i < p->nr_scopes && !err; i++) {
		bool sampled = false;

		for (int k = 0; k < p->nr_samples && !sampled; k++)
			sampled = p->samples[k].scope == i && p->samples[k].values[0];
		if (drawn[i] || !sampled)
			continue;
		fputs("<section class=\"scope\">\n<h2>", f);
		html_escape(f, p->scopes[i].name);
		fputs("</h2>\n", f);
		err = flame_graph(f, p, i);
		fputs("</section>\n", f);
	}
	return err;
}

/* Kept to draw from when the page is written (the summary's). */
static int html_profile(struct output *o, const struct profile *p)
{
	((struct html_sink *)o->priv)->profile = p;
	return 0;
}

/* What an interval's marks say, for a tick's tooltip and the page's table. */
static void marks_text(FILE *f, __u64 slices, __u64 max_ns, __u64 unbounded)
{
	struct interval iv = { .missed_slices = slices, .missed_max_ns = max_ns,
			       .missed_unbounded = unbounded };
	char text[400];

	html_escape(f, interval_marks_text(&iv, text, sizeof(text)));
}

/* A red tick above the chart over each interval whose counts are not exact. */
static void inexact_ticks(FILE *f, const struct view *v)
{
	const struct html_sink *h = v->h;

	for (int i = 0; i < h->nr_iv; i++) {
		double x0 = xpos(v, h->t0[i]), x1 = xpos(v, h->t1[i]);

		if (!h->missed[i])
			continue;
		fprintf(f, "<rect class=\"inexact\" x=\"%.1f\" y=\"2\" width=\"%.1f\" "
			"height=\"5\" fill=\"#d62728\"><title>not exact: ", x0,
			x1 - x0 > 1 ? x1 - x0 : 1);
		marks_text(f, h->missed[i], h->missed_ns[i], h->unbounded[i]);
		fputs("</title></rect>\n", f);
	}
}

static int write_chart(FILE *f, const struct html_sink *h, const struct html_series *s, int id,
		       bool *drawn)
{
	struct view v = { .id = id };
	bool mux, level2 = h->tree && h->level >= 2 && has_level2(h);
	double y = TITLE_H;
	int height;

	if (build_view(&v, h, s)) {
		view_release(&v);
		return -ENOMEM;
	}
	mux = any_multiplexed(&v);
	if (h->tree) {
		height = TITLE_H + TREE_H + AXIS_H + (level2 ? TITLE_H + TREE_H + AXIS_H : 0) +
			 TITLE_H + STRIP_H + GAP;
		for (int c = 0; c < h->nr_cols; c++)
			height += h->cols[c].level ? 0 : TITLE_H + FLAT_H + AXIS_H;
	} else {
		height = h->nr_cols * (TITLE_H + FLAT_H + AXIS_H);
	}
	if (mux)
		height += TITLE_H + MUX_H + AXIS_H;
	height += noise_height(s);

	fputs("<section class=\"scope\">\n<h2>", f);
	html_escape(f, s->label);
	fputs("</h2>\n", f);
	summary_line(f, h, s);
	noise_line(f, s);
	fprintf(f, "<svg class=\"cgtma-chart\" data-kind=\"%s\" data-scope=\"",
		scope_kind_name(s->kind));
	html_escape(f, s->scope);
	fprintf(f, "\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\">\n", CHART_W,
		height, CHART_W, height);
	fprintf(f, "<defs><pattern id=\"idle%d\" width=\"6\" height=\"6\" "
		"patternUnits=\"userSpaceOnUse\" patternTransform=\"rotate(45)\">"
		"<rect width=\"6\" height=\"6\" fill=\"#f4f4f4\"/>"
		"<line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"#c8c8c8\" stroke-width=\"2\"/>"
		"</pattern></defs>\n", id);
	inexact_ticks(f, &v);
	if (h->tree) {
		stacked_panel(f, &v, y, 1, "Level 1");
		y += TREE_H + AXIS_H + TITLE_H;
		if (level2) {
			stacked_panel(f, &v, y, 2,
				      "Level 2, each level-1 band split among its children");
			y += TREE_H + AXIS_H + TITLE_H;
		}
		bottleneck_strip(f, &v, y);
		y += STRIP_H + GAP + TITLE_H;
	}
	/* The flat view's metrics, or those under the tree (IPC, GHz). */
	for (int c = 0; c < h->nr_cols; c++) {
		if (h->cols[c].level)
			continue;
		flat_panel(f, &v, y, c);
		y += FLAT_H + AXIS_H + TITLE_H;
	}
	noise_panels(f, &v, y);
	y += noise_height(s);
	if (mux)
		mux_panel(f, &v, y);
	fputs("</svg>\n", f);
	view_release(&v);
	if (series_flames(f, h, s, drawn))
		return -ENOMEM;
	fputs("</section>\n", f);
	return 0;
}

static int series_cmp(const void *a, const void *b)
{
	const struct html_series *x = *(const struct html_series *const *)a;
	const struct html_series *y = *(const struct html_series *const *)b;

	/* The system, the cgroups by path each with its threads by tid, the irq scopes. */
	int rx = x->system ? 0 : x->kind == SCOPE_IRQ ? 2 : 1;
	int ry = y->system ? 0 : y->kind == SCOPE_IRQ ? 2 : 1, c;
	const char *px = x->path ? x->path : x->scope, *py = y->path ? y->path : y->scope;

	if (rx != ry)
		return rx - ry;
	c = strcmp(px, py);
	if (c || x->kind == y->kind)
		return c ? c : x->tid != y->tid ? x->tid - y->tid :
		       (x->cgroup_id > y->cgroup_id) - (x->cgroup_id < y->cgroup_id);
	return x->kind == SCOPE_TASK ? 1 : -1;
}

static const char page_style[] =
	"body{font-family:'DejaVu Sans',Verdana,sans-serif;color:#222;background:#fafafa;"
	"margin:20px;max-width:1140px}\n"
	"h1{font-size:22px;margin:0 0 10px}\n"
	"h2{font-size:16px;margin:0 0 4px;font-family:'DejaVu Sans Mono',monospace}\n"
	"table.meta{border-collapse:collapse;font-size:13px;margin-bottom:14px}\n"
	"table.meta th{text-align:left;color:#666;font-weight:normal;padding:2px 14px 2px 0}\n"
	"table.meta td{padding:2px 0}\n"
	"section.scope{background:#fff;border:1px solid #ddd;border-radius:6px;padding:12px 16px;"
	"margin:0 0 16px}\n"
	"p.summary{font-size:13px;margin:0 0 6px}\n"
	"p.note{font-size:12px;color:#666}\n"
	".over{color:#888}\n"
	"span.sw{display:inline-block;width:10px;height:10px;margin-right:4px;"
	"border:1px solid #666}\n"
	"svg.cgtma-chart{display:block}\n"
	"svg .plot{fill:#fff;stroke:#bbb}\n"
	"svg .grid{stroke:#000;stroke-opacity:0.12}\n"
	"svg .axis{stroke:#888}\n"
	"svg text{font-family:'DejaVu Sans',Verdana,sans-serif}\n"
	"svg .tick{font-size:11px;fill:#555}\n"
	"svg .ptitle{font-size:13px;font-weight:bold;fill:#333}\n"
	"svg .unit{font-weight:normal;fill:#777}\n"
	"svg .legend{font-size:12px;fill:#333}\n"
	"svg .num{font-variant-numeric:tabular-nums}\n"
	"svg .head{font-size:11px;fill:#888}\n"
	"svg .strip{font-size:11px}\n"
	"svg.cgtma-flame{display:block;margin-top:4px}\n"
	"svg.cgtma-flame text{font-size:11px;fill:#000;pointer-events:none}\n"
	"svg.cgtma-flame g:hover rect{stroke:#000;stroke-width:0.6}\n";

static void meta_row(FILE *f, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void meta_row(FILE *f, const char *name, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fprintf(f, "<tr><th>%s</th><td>", name);
	html_escape(f, buf);
	fputs("</td></tr>\n", f);
}

/*
 * A cgroup found by a glob has rows only in intervals where it ran (and its first and last):
 * between its first row and its last (or the run's end, while it is not gone) it existed,
 * so the intervals without a row are idle ones, hatched, not blank. So are a thread's, and
 * an interrupt scope's from the run's start.
 */
/*
 * Charts of one path with different cgroup ids (a cgroup made again under it, a restarted
 * container) say which is which: "(id N)" after the title, as the terminal marks the rows.
 */
static int label_incarnations(struct html_sink *h)
{
	for (int i = 0; i < h->nr_series; i++) {
		struct html_series *s = &h->series[i];
		bool twin = false;
		char *l;

		for (int j = 0; j < h->nr_series && s->cgroup_id && !twin; j++)
			twin = j != i && h->series[j].kind == SCOPE_CGROUP &&
			       h->series[j].cgroup_id && h->series[j].cgroup_id != s->cgroup_id &&
			       s->path && h->series[j].path && !strcmp(s->path, h->series[j].path);
		if (!twin)
			continue;
		if (asprintf(&l, "%s (id %llu)", s->label, (unsigned long long)s->cgroup_id) < 0)
			return -ENOMEM;
		free(s->label);
		s->label = l;
	}
	return 0;
}

static void fill_idle(struct html_sink *h)
{
	int cols = h->nr_cols ? h->nr_cols : 1;

	for (int i = 0; i < h->nr_series; i++) {
		struct html_series *s = &h->series[i];
		int first = 0, last = h->nr_iv - 1;

		while (s->kind != SCOPE_IRQ && first < h->nr_iv && s->state[first] == ST_ABSENT)
			first++;
		while (s->removed && last > first && s->state[last] == ST_ABSENT)
			last--;
		for (int k = first; k <= last; k++) {
			if (s->state[k] != ST_ABSENT)
				continue;
			s->state[k] = ST_IDLE;
			for (int c = 0; c < cols; c++)
				s->val[(size_t)k * cols + c] = NAN;
			s->bn[k] = -1;
			s->mux[k] = NAN;
		}
	}
}

/* "the system and 3 cgroups", "the system, 3 cgroups, 4 threads and 2 interrupt scopes". */
static const char *scope_counts(int cgroups, int threads, int irqs, char *buf, size_t len)
{
	char part[3][48];
	int n = 0, at;

	snprintf(part[n++], sizeof(part[0]), "%d cgroup%s", cgroups, cgroups == 1 ? "" : "s");
	if (threads)
		snprintf(part[n++], sizeof(part[0]), "%d thread%s", threads, threads == 1 ? "" : "s");
	if (irqs)
		snprintf(part[n++], sizeof(part[0]), "%d interrupt scope%s", irqs,
			 irqs == 1 ? "" : "s");
	at = snprintf(buf, len, "the system");
	for (int i = 0; i < n && at < (int)len; i++)
		at += snprintf(buf + at, len - at, "%s%s", i == n - 1 ? " and " : ", ", part[i]);
	return buf;
}

static int write_page(struct html_sink *h)
{
	FILE *f = h->f;
	char when[64] = "", counts[160];
	time_t t = (time_t)h->start_time;
	struct tm tm;
	int err = 0, nr[SCOPE_IRQ + 1] = {};
	/* The system first, then the cgroups by path; the series stay where the index says. */
	const struct html_series **order = malloc((h->nr_series + 1) * sizeof(*order));
	/* Per profile scope: its flame graph is on the page. */
	bool *drawn = calloc(h->profile ? h->profile->nr_scopes + 1 : 1, sizeof(*drawn));

	h->written = true;
	if (!order || !drawn) {
		free(order);
		free(drawn);
		return -ENOMEM;
	}
	fill_idle(h);
	if (label_incarnations(h)) {
		free(order);
		free(drawn);
		return -ENOMEM;
	}
	for (int i = 0; i < h->nr_series; i++) {
		order[i] = &h->series[i];
		nr[h->series[i].kind]++;
	}
	qsort(order, h->nr_series, sizeof(*order), series_cmp);
	if (gmtime_r(&t, &tm))
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S UTC", &tm);

	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n", f);
	fputs("<title>cgtma report: ", f);
	html_escape(f, h->host);
	fprintf(f, "</title>\n<style>\n%s</style>\n</head>\n<body>\n", page_style);
	fputs("<h1>cgtma report</h1>\n<table class=\"meta\">\n", f);
	meta_row(f, "Host", "%s", h->host);
	meta_row(f, "Kernel", "%s", h->kernel);
	meta_row(f, "CPU", "%s", h->cpu);
	if (h->tree)
		meta_row(f, "Model", "%s, level %d%s, SMT %s", h->model, h->level,
			 h->perf_metrics ? ", perf-metrics" : "", h->smt ? "on" : "off");
	else
		meta_row(f, "Model", "%s%s", h->model,
			 h->events ? " (event counts per second)" : " (metrics only)");
	meta_row(f, "Started", "%s", when);
	meta_row(f, "Intervals", "%d of %d ms", h->nr_iv, h->interval_ms);
	meta_row(f, "Duration", "%.1f s", h->has_summary ? h->summary_s :
					   h->nr_iv ? h->t1[h->nr_iv - 1] : 0.0);
	meta_row(f, "Scopes", "%s", scope_counts(nr[SCOPE_CGROUP], nr[SCOPE_TASK], nr[SCOPE_IRQ],
						 counts, sizeof(counts)));
	if (!h->nr_inexact) {
		meta_row(f, "Exact", "every interval");
	} else {
		fprintf(f, "<tr class=\"inexact\"><th>Exact</th><td>%d of %d intervals are not "
			"(red ticks above the charts): ", h->nr_inexact, h->nr_iv);
		marks_text(f, h->run_missed, h->run_missed_ns, h->run_unbounded);
		fputs("</td></tr>\n", f);
	}
	fputs("</table>\n", f);
	if (h->per_cpu)
		fputs("<p class=\"note\">Per-CPU scopes were recorded but are not charted.</p>\n",
		      f);
	if (h->nr_iv > MAX_POINTS)
		fprintf(f, "<p class=\"note\">%d intervals: each chart shows averages over about "
			"%d intervals.</p>\n", h->nr_iv, (h->nr_iv + MAX_POINTS - 1) / MAX_POINTS);
	if (!h->nr_iv)
		fputs("<p class=\"note\">The record holds no interval.</p>\n", f);
	for (int i = 0; i < h->nr_series && !err; i++)
		err = write_chart(f, h, order[i], i, drawn);
	if (!err)
		err = other_flames(f, h, drawn);
	free(order);
	free(drawn);
	fputs("</body>\n</html>\n", f);
	errno = 0;
	if (!err && (ferror(f) || fflush(f)))
		err = errno ? -errno : -EIO;
	return err;
}

static int html_summary(struct output *o, const struct run *run, const struct interval *iv)
{
	struct html_sink *h = o->priv;

	h->has_summary = true;
	h->summary_s = iv->interval_s;
	for (int i = 0; i < iv->nr_scopes; i++) {
		const struct scope *sc = &iv->scopes[i];
		struct html_series *s;

		if (!charted(sc))
			continue;
		s = find_series(h, sc);
		if (!s)
			return -ENOMEM;
		s->has_summary = true;
		s->sum_ran = sc->ran;
		scope_values(h, run, sc, iv->interval_s, s->sum_val, &s->sum_bn);
		s->sum_mux = scope_multiplex(sc, run, NULL, 0);
		if (sc->kind == SCOPE_CGROUP) {
			s->sum_noise = sc->noise;
			s->any_noise |= sc->noise.has != 0;
		}
	}
	return write_page(h);
}

static void html_close(struct output *o)
{
	struct html_sink *h = o->priv;
	int err = 0;

	/* No summary (a cut record): the page shows what there was. */
	if (!h->written && h->model)
		err = write_page(h);
	if (fclose(h->f) && !err)
		err = -errno;
	if (err)
		pr_err("cannot write '%s': %s", h->path, strerror(-err));
	for (int i = 0; i < h->nr_series; i++)
		series_free(&h->series[i]);
	for (int c = 0; c < h->nr_cols; c++) {
		free(h->cols[c].name);
		free(h->cols[c].unit);
	}
	for (int i = 0; i < h->nr_nodes; i++)
		free(h->node_name[i]);
	free(h->node_name);
	free(h->node_col);
	free(h->cols);
	free(h->series);
	hashmap_clear(&h->index);
	free(h->t0);
	free(h->t1);
	free(h->missed);
	free(h->missed_ns);
	free(h->unbounded);
	free(h->model);
	free(h->host);
	free(h->kernel);
	free(h->cpu);
	free(h->path);
	free(h->name);
	free(h);
}

static const struct output_ops html_ops = {
	.begin = html_begin,
	.interval = html_interval,
	.summary = html_summary,
	.profile = html_profile,
	.close = html_close,
};

int output_html_open(const char *path, struct output **op)
{
	struct html_sink *h = calloc(1, sizeof(*h));
	struct output *o = calloc(1, sizeof(*o));
	int err = -ENOMEM;

	if (!h || !o)
		goto fail;
	h->path = strdup(path);
	if (!h->path || asprintf(&h->name, "html %s", path) < 0) {
		h->name = NULL;
		goto fail;
	}
	h->f = fopen(path, "w");
	if (!h->f) {
		err = -errno;
		pr_err("cannot create '%s': %s", path, strerror(-err));
		goto fail;
	}
	o->ops = &html_ops;
	o->name = h->name;
	o->priv = h;
	*op = o;
	return 0;
fail:
	if (h) {
		free(h->path);
		free(h->name);
	}
	free(h);
	free(o);
	return err;
}
