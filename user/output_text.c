// SPDX-License-Identifier: GPL-2.0
/*
 * The terminal view. With a Top-Down model, one block per scope: the tree indented by level,
 * percentages with one decimal, `<==` on the bottleneck, nodes below threshold hidden unless
 * -v (then marked `<`), then the default metrics on one line (IPC, CPI, GHz), or with -m
 * a block of every metric the run computes. With a metrics-only model or -e events, one
 * table row per scope.
 * The multiplex fraction is shown wherever counters ran less than the whole time. With -T,
 * each cgroup's threads follow it, busiest first by cpu-clock (or task-clock, else the first
 * event): TEXT_TOP_TASKS of them, all with -v.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "containers.h"
#include "output.h"
#include "profile.h"
#include "top.h"

#define LABEL_MAX 40
#define TEXT_TOP_TASKS 5

static void print_header(FILE *f, const struct run *run, const struct interval *iv)
{
	char when[64];
	time_t t = (time_t)iv->time;
	struct tm tm;

	localtime_r(&t, &tm);
	strftime(when, sizeof(when), "%H:%M:%S", &tm);
	if (iv->summary)
		fprintf(f, "# summary over %.2f s, model %s", iv->interval_s, run->model);
	else
		fprintf(f, "# %s  interval %.3f s  model %s", when, iv->interval_s, run->model);
	if (run->plan && run->plan->nr_nodes)
		fprintf(f, "  level %d%s", run->level, run->perf_metrics ? "  perf-metrics" : "");
	fputc('\n', f);
	if (iv->missed_slices) {
		char marks[400];

		fprintf(f, "# NOT EXACT: %s%s\n", interval_marks_text(iv, marks, sizeof(marks)),
			iv->nr_marks ? " (-v lists them)" : "");
	}
	if (iv->profile && profile_lost_any(&iv->profile->lost)) {
		char lost[256];

		fprintf(f, "# --sample: %s\n", profile_lost_text(&iv->profile->lost, lost,
								  sizeof(lost)));
	}
}

/*
 * A row's label: a thread's under its cgroup, "  comm:tid"; with -v (verbose), a container's
 * name and short id, "web (7c289fc6a1b2)", as `podman ps` and `docker ps` show them (its
 * path, cut to the column, would match nothing they show), and other cgroups' paths.
 */
static const char *row_label(const struct scope *s, bool verbose, char *buf, size_t len)
{
	struct container_ref ref;
	size_t n;

	if (s->kind == SCOPE_TASK) {
		snprintf(buf, len, "  %s:%d", s->comm, s->tid);
		return buf;
	}
	if (s->kind != SCOPE_CGROUP || !verbose || (!s->names.container && !s->names.pod))
		return scope_label(s, verbose, buf, len);
	n = strlen(scope_label(s, false, buf, len));
	if (!container_parse_path(s->cgroup, &ref) && ref.id[0] && n + 1 < len)
		snprintf(buf + n, len - n, " (%.12s)", ref.id);
	return buf;
}

/* Idle cgroups would bury the busy ones (a starved one is not idle: its noise says why). */
static bool hidden(const struct run *run, const struct scope *s)
{
	return !run->verbose && scope_idle(s);
}

/* Long cgroup paths keep their end, where the container's name is. */
static const char *fit_label(const char *label, char *buf, size_t width)
{
	size_t n = strlen(label);

	if (n <= width)
		return label;
	snprintf(buf, width + 1, "..%s", label + n - (width - 2));
	return buf;
}

/* The smallest multiplex fraction among the events a node reads (NAN when none ran). */
static double node_multiplex(const struct run *run, const struct scope *s, int node)
{
	const int *events;
	int nr = plan_node_events(run->plan, node, &events);

	return scope_multiplex(s, run, events, nr);
}

/* Spaces that bring a string of the domain column to width (at least one). */
static int pad_to(const char *text, int width)
{
	int n = width - (int)strlen(text ? text : "");

	return n > 1 ? n : 1;
}

/* The name column: as wide as the plan's longest indented node name, plus a gap. */
static int name_width(const struct plan *p)
{
	int w = 0;

	for (int i = 0; i < p->nr_nodes; i++) {
		int n = 2 * p->nodes[i].level + (int)strlen(p->nodes[i].name);

		if (n > w)
			w = n;
	}
	return w + 2;
}

/* A removed cgroup's or an exited thread's mark, and what tells a cgroup's incarnations apart. */
static void print_mark(FILE *f, const struct interval *iv, int k)
{
	const struct scope *s = &iv->scopes[k];
	char mark[64];

	if (s->kind == SCOPE_TASK && s->removed)
		fprintf(f, "  (exited)");
	else if (*scope_incarnation(iv, k, mark, sizeof(mark)))
		fprintf(f, "  (%s)", mark);
}

/* Whether the plan's metrics are the model's default ones alone (no -m): one line. */
static bool default_metrics_only(const struct plan *p)
{
	for (int i = 0; i < p->nr_metrics; i++)
		if (!p->metrics[i].is_default)
			return false;
	return true;
}

static double metric_multiplex(const struct run *run, const struct scope *s, int i)
{
	const int *events;
	int nr = plan_metric_events(run->plan, i, &events);

	return scope_multiplex(s, run, events, nr);
}

/*
 * Under a scope's tree, its flat metrics: the default ones on one line ("IPC 0.652  CPI
 * 1.534  GHz 2.812"; "-" where one was not counted), or with -m a block, one a line, with
 * its unit and, where its events ran part of the time, how much.
 */
static void print_metrics(FILE *f, const struct run *run, const struct scope *s, int width)
{
	const struct plan *p = run->plan;

	if (!p->nr_metrics)
		return;
	if (default_metrics_only(p)) {
		fputc(' ', f);
		for (int i = 0; i < p->nr_metrics; i++) {
			const struct plan_metric *m = &p->metrics[i];
			bool unit = m->unit && *m->unit && strcmp(m->unit, m->name);

			if (!s->tma.metric_counted[i])
				fprintf(f, " %s -", m->name);
			else
				fprintf(f, " %s %.3f%s%s", m->name, s->tma.metric[i],
					unit ? " " : "", unit ? m->unit : "");
			if (i + 1 < p->nr_metrics)
				fputc(' ', f);
		}
		fputc('\n', f);
		return;
	}
	fprintf(f, "  metrics\n");
	for (int i = 0; i < p->nr_metrics; i++) {
		const struct plan_metric *m = &p->metrics[i];
		double mux = metric_multiplex(run, s, i);

		if (!s->tma.metric_counted[i]) {
			fprintf(f, "    %-*s %9s\n", width - 4, m->name, "not counted");
			continue;
		}
		fprintf(f, "    %-*s %9.3f", width - 4, m->name, s->tma.metric[i]);
		if (m->unit && *m->unit)
			fprintf(f, " %s", m->unit);
		if (mux < 0.995)
			fprintf(f, " (counted %.0f%%)", mux * 100);
		if (m->split)
			fprintf(f, " [split]");
		fputc('\n', f);
	}
}

/* The metrics block's name column: the tree's, or wider for a long metric name. */
static int metrics_width(const struct plan *p, int width)
{
	for (int i = 0; i < p->nr_metrics; i++) {
		int n = 4 + (int)strlen(p->metrics[i].name) + 1;

		if (n > width)
			width = n;
	}
	return width;
}

static void print_tree(FILE *f, const struct run *run, const struct interval *iv, int k)
{
	const struct scope *s = &iv->scopes[k];
	const struct plan *p = run->plan;
	char label[512], fitted[LABEL_MAX + 1];
	double mux = scope_multiplex(s, run, NULL, 0);
	bool *shown = calloc(p->nr_nodes + 1, sizeof(*shown));
	int printed = 0, width = name_width(p);

	row_label(s, run->verbose, label, sizeof(label));
	fprintf(f, "%s", fit_label(label, fitted, LABEL_MAX));
	print_mark(f, iv, k);
	if (!s->ran || !shown) {
		fprintf(f, "  %s\n", shown ? "did not run" : "(out of memory)");
		free(shown);
		return;
	}
	if (!isnan(mux) && mux < 0.995)
		fprintf(f, "  [counted %.0f%% of the time]", mux * 100);
	fputc('\n', f);

	for (int i = 0; i < p->nr_nodes; i++) {
		const struct plan_node *n = &p->nodes[i];
		int indent = 2 * n->level;
		/* Under a parent that is not shown, the full name says where the node belongs. */
		const char *name = n->parent >= 0 && !shown[n->parent] ? n->full_name : n->name;

		shown[i] = false;
		if (!s->tma.counted[i]) {
			if (run->verbose)
				fprintf(f, "%*s%-*s %9s\n", indent, "", width - indent, name,
					"not counted");
			continue;
		}
		if (!s->tma.above[i] && !run->verbose)
			continue;
		mux = node_multiplex(run, s, i);
		shown[i] = true;
		fprintf(f, "%*s%-*s %7.1f %% %s", indent, "", width - indent, name,
			s->tma.value[i] * 100, n->domain ? n->domain : "");
		if (!s->tma.above[i] || s->tma.bottleneck == i || mux < 0.995)
			fprintf(f, "%*s%-3s", pad_to(n->domain, 17), "",
				!s->tma.above[i] ? "<" : s->tma.bottleneck == i ? "<==" : "");
		if (mux < 0.995)
			fprintf(f, " (counted %.0f%%)", mux * 100);
		/* its events are in several groups: its ratios mix times multiplexed apart */
		if (n->split)
			fprintf(f, " [split]");
		fputc('\n', f);
		printed++;
	}
	if (!printed)
		fprintf(f, "  (no node crossed its threshold)\n");
	print_metrics(f, run, s, metrics_width(p, width));
	free(shown);
}

static int label_width(const struct run *run, const struct interval *iv)
{
	char label[512];
	int w = 6;

	for (int i = 0; i < iv->nr_scopes; i++) {
		int n = strlen(row_label(&iv->scopes[i], run->verbose, label, sizeof(label)));

		if (n > w)
			w = n;
	}
	return w > LABEL_MAX ? LABEL_MAX : w;
}

/* Counts with thousands separators keep big numbers readable. */
static const char *group_digits(double v, char *buf, size_t len)
{
	char raw[64];
	int n, o = 0, lead;

	snprintf(raw, sizeof(raw), "%.0f", v);
	n = strlen(raw);
	lead = n % 3 ? n % 3 : 3;
	for (int i = 0; i < n && o < (int)len - 2; i++) {
		if (i && (i - lead) % 3 == 0 && i >= lead)
			buf[o++] = ',';
		buf[o++] = raw[i];
	}
	buf[o] = '\0';
	return buf;
}

static int column_width(const struct run *run, bool metrics)
{
	const struct plan *p = run->plan;
	int n = metrics ? p->nr_metrics : run->nr_events, w = 14;

	for (int c = 0; c < n; c++) {
		int len = strlen(metrics ? p->metrics[c].name : run->event_names[c]);

		if (len > w)
			w = len;
	}
	return w > 40 ? 40 : w;
}

static void print_table(FILE *f, const struct run *run, const struct interval *iv,
			const int *order, int nr)
{
	const struct plan *p = run->plan;
	bool metrics = p && p->nr_metrics;
	int ncol = metrics ? p->nr_metrics : run->nr_events;
	int w = label_width(run, iv), cw = column_width(run, metrics);
	char label[512], fitted[LABEL_MAX + 1], num[64], cell[80];

	fprintf(f, "%-*s", w, "scope");
	for (int c = 0; c < ncol; c++)
		fprintf(f, "  %*.*s", cw, cw, metrics ? p->metrics[c].name : run->event_names[c]);
	fputc('\n', f);
	if (metrics) {
		fprintf(f, "%-*s", w, "");
		for (int c = 0; c < ncol; c++)
			fprintf(f, "  %*s", cw, p->metrics[c].unit ? p->metrics[c].unit : "");
		fputc('\n', f);
	}

	for (int k = 0; k < nr; k++) {
		const struct scope *s;

		if (order[k] < 0) {
			fprintf(f, "  (%d more threads; -v shows them)\n", -order[k]);
			continue;
		}
		s = &iv->scopes[order[k]];
		if (hidden(run, s))
			continue;
		row_label(s, run->verbose, label, sizeof(label));
		fprintf(f, "%-*s", w, fit_label(label, fitted, w));
		for (int c = 0; c < ncol; c++) {
			if (metrics && !s->tma.metric_counted[c])
				snprintf(cell, sizeof(cell), "-");
			else if (metrics)
				snprintf(cell, sizeof(cell), "%.3f", s->tma.metric[c]);
			else if (s->state[c] == COUNT_NOT_COUNTED)
				snprintf(cell, sizeof(cell), "not counted");
			else if (s->multiplex[c] < 0.995)
				snprintf(cell, sizeof(cell), "%s (%2.0f%%)",
					 group_digits(s->count[c], num, sizeof(num)),
					 s->multiplex[c] * 100);
			else
				snprintf(cell, sizeof(cell), "%s",
					 group_digits(s->count[c], num, sizeof(num)));
			fprintf(f, "  %*s", cw, cell);
		}
		print_mark(f, iv, order[k]);
		fputc('\n', f);
	}
}

/* The event threads are ranked by: cpu-clock, task-clock, or the first. */
static int rank_event(const struct run *run)
{
	for (int i = 0; i < run->nr_events; i++)
		if (!strcmp(run->event_names[i], "cpu-clock"))
			return i;
	for (int i = 0; i < run->nr_events; i++)
		if (!strcmp(run->event_names[i], "task-clock"))
			return i;
	return 0;
}

static const struct interval *sort_iv;
static int sort_event;

static int busier(const void *a, const void *b)
{
	double x = sort_iv->scopes[*(const int *)a].count[sort_event];
	double y = sort_iv->scopes[*(const int *)b].count[sort_event];

	return (y > x) - (y < x);
}

/*
 * The order rows are printed in: each cgroup's total row followed by its threads, busiest
 * first (the top TEXT_TOP_TASKS without -v, then -N: N more not shown); order holds
 * nr_scopes + one entry per cgroup. Returns the entries used, or -ENOMEM.
 */
static int row_order(const struct run *run, const struct interval *iv, int *order)
{
	int nr = 0, first_task = iv->nr_scopes, end_task;

	/* interval_sort() put the threads together, by cgroup, between the cgroups and the
	 * interrupt scopes. */
	for (int i = 0; i < iv->nr_scopes; i++)
		if (iv->scopes[i].kind == SCOPE_TASK) {
			first_task = i;
			break;
		}
	for (end_task = first_task; end_task < iv->nr_scopes; end_task++)
		if (iv->scopes[end_task].kind != SCOPE_TASK)
			break;
	sort_iv = iv;
	sort_event = rank_event(run);
	for (int i = 0; i < iv->nr_scopes; i++) {
		const struct scope *s = &iv->scopes[i];
		int from = nr, k;

		if (s->kind == SCOPE_TASK)
			continue;	/* under its cgroup's row */
		order[nr++] = i;
		if (s->kind != SCOPE_CGROUP || s->cpu >= 0 || hidden(run, s))
			continue;
		for (k = first_task; k < end_task; k++)
			if (!strcmp(iv->scopes[k].cgroup, s->cgroup) && !hidden(run, &iv->scopes[k]))
				order[nr++] = k;
		qsort(order + from + 1, nr - from - 1, sizeof(*order), busier);
		if (!run->verbose && nr - from - 1 > TEXT_TOP_TASKS) {
			int more = nr - from - 1 - TEXT_TOP_TASKS;

			nr = from + 1 + TEXT_TOP_TASKS;
			order[nr++] = -more;
		}
	}
	return nr;
}

/* Functions shown per cgroup under its tree with --sample. */
#define TOP_FUNCTIONS 5

/*
 * --sample: a tracked cgroup's busiest functions (leaf frames) with their share of its
 * samples, per sampled event.
 */
static void print_top_functions(FILE *f, const struct interval *iv, const struct scope *s)
{
	const struct profile *p = iv->profile;
	char label[1024];
	int sc;

	if (!p || s->kind != SCOPE_CGROUP || s->cpu >= 0 ||
	    (sc = profile_scope_find(p, scope_label(s, false, label, sizeof(label)))) < 0)
		return;
	for (int t = 0; t < p->nr_types; t++) {
		struct profile_top *top;
		uint64_t total;
		int n = profile_top_functions(p, sc, t, &top, &total);

		if (n <= 0)
			continue;
		fprintf(f, "  %s: top functions of %" PRIu64 " %s samples\n", label, total,
			p->types[t].event);
		for (int i = 0; i < n && i < TOP_FUNCTIONS; i++)
			fprintf(f, "    %5.1f %%  %s\n", 100.0 * top[i].count / total, top[i].name);
		profile_top_free(top, n);
	}
}

/*
 * A cgroup's noise (noise.h) in one line, the fields the kernel and the switch hook gave:
 * "  noise: wait 0.48 s/s, pressure some 52 % full 0 %, throttled 0.20 s/s (12 times),
 * preempted 35.5/s, SMT shared 0.06 s/s, top antagonist web (took 0.38 s/s, SMT 0.03 s/s)",
 * an antagonist by its container's name where it has one, else its path. With -v a line
 * per antagonist follows, the busiest first: "    antagonist web (/kubepods/pod1/abc):
 * preempted 20.2/s, took 0.38 s/s, SMT 0.03 s/s". label: the row's name, for lines under a
 * table rather than under the row's tree; or NULL.
 */
static void print_noise(FILE *f, const struct run *run, const struct scope *s,
			const char *label)
{
	const struct noise *n = &s->noise;
	bool hook = n->has & (NOISE_PREEMPTED | NOISE_SMT);
	char text[512], took[128];

	if (!n->has || !scope_has_noise(s))
		return;
	fprintf(f, "  %s%snoise: %s", label ? label : "", label ? ": " : "",
		noise_text(n, NULL, text, sizeof(text)));
	if (n->nr_antagonists && hook) {
		const struct antagonist *a = &n->antagonists[0];

		fprintf(f, "%stop antagonist %s (%s)", *text ? ", " : "",
			*a->container ? a->container : a->cgroup,
			antagonist_text(n, a, NULL, took, sizeof(took)));
	}
	fputc('\n', f);
	for (int i = 0; run->verbose && hook && i < n->nr_antagonists; i++) {
		const struct antagonist *a = &n->antagonists[i];

		if (*a->container)
			fprintf(f, "    antagonist %s (%s): ", a->container, a->cgroup);
		else
			fprintf(f, "    antagonist %s: ", a->cgroup);
		if (n->has & NOISE_PREEMPTED)
			fprintf(f, "preempted %.1f/s, ", a->preempt);
		fprintf(f, "%s\n", antagonist_text(n, a, NULL, took, sizeof(took)));
	}
}

int output_text_scopes(FILE *f, const struct run *run, const struct interval *iv)
{
	int *order = calloc(2 * iv->nr_scopes + 1, sizeof(*order));
	int idle = 0, nr;

	if (!order)
		return -ENOMEM;
	nr = row_order(run, iv, order);
	if (run->plan && run->plan->nr_nodes) {
		for (int k = 0; k < nr; k++)
			if (order[k] < 0)
				fprintf(f, "  (%d more threads; -v shows them)\n", -order[k]);
			else if (!hidden(run, &iv->scopes[order[k]])) {
				print_tree(f, run, iv, order[k]);
				print_noise(f, run, &iv->scopes[order[k]], NULL);
				print_top_functions(f, iv, &iv->scopes[order[k]]);
			}
	} else {
		print_table(f, run, iv, order, nr);
		for (int k = 0; k < nr; k++) {
			char label[512];
			const struct scope *sc = &iv->scopes[order[k]];

			if (order[k] < 0 || hidden(run, sc))
				continue;
			print_noise(f, run, sc, row_label(sc, run->verbose, label, sizeof(label)));
			print_top_functions(f, iv, sc);
		}
	}
	free(order);
	for (int i = 0; i < iv->nr_scopes; i++)
		idle += hidden(run, &iv->scopes[i]) && iv->scopes[i].kind == SCOPE_CGROUP &&
			iv->scopes[i].cpu < 0;
	if (idle)
		fprintf(f, "(%d tracked cgroup%s did not run; -v shows %s)\n", idle,
			idle > 1 ? "s" : "", idle > 1 ? "them" : "it");
	return 0;
}

static int text_interval(struct output *o, const struct run *run, const struct interval *iv)
{
	const int *top = o->priv;
	struct top_view v;
	int made = 0, err;

	print_header(o->f, run, iv);
	/* --top N: the N busiest cgroups and a row for the rest. */
	if (*top && (made = top_view_make(run, iv, *top, &v)) < 0)
		return made;
	err = output_text_scopes(o->f, run, made ? &v.shown : iv);
	if (made)
		top_view_release(&v);
	if (err)
		return err;
	fputc('\n', o->f);
	return fflush(o->f) ? -errno : 0;
}

static void text_close(struct output *o)
{
	free(o->priv);
}

static const struct output_ops text_ops = {
	.interval = text_interval,
	.summary = text_interval,
	.close = text_close,
};

int output_text_open(FILE *f, int top, struct output **op)
{
	struct output *o = calloc(1, sizeof(*o));
	int *priv = malloc(sizeof(*priv));

	if (!o || !priv) {
		free(o);
		free(priv);
		return -ENOMEM;
	}
	*priv = top;
	o->ops = &text_ops;
	o->name = "terminal";
	o->f = f;
	o->priv = priv;
	*op = o;
	return 0;
}
