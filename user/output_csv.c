// SPDX-License-Identifier: GPL-2.0
/*
 * -x SEP / --csv SEP: toplev's CSV (toplev -x SEP -I MS -l N), so that scripts written for
 * toplev read cgtma's output unchanged. The format, as pmu-tools' tl_output.py (OutputCSV)
 * and tl_uval.py print it:
 *
 *   [Timestamp,][CPUs,]Area,Value,Unit,Description,Sample,Stddev,Multiplex,Bottleneck,Idle
 *
 * - the header once, on the first line; "# cgtma ..." as the last line (toplev's version
 *   footer), lines a CSV reader of toplev's output already skips;
 * - Timestamp: seconds since the run started, as toplev prints perf's interval time (the
 *   shortest form of the number: "1.5", "2.0"); cgtma always runs in intervals, so it is
 *   always there, and the summary at the end is printed with SUMMARY in it, as
 *   toplev -I --summary prints its final output;
 * - CPUs: when the run can report more than the system scope (-A, -G or --all-cgroups),
 *   decided at the start, so that every row has the same columns even while -G matches
 *   nothing yet. "CPU3" for a CPU (-A), as toplev's per-CPU label; the cgroup path for a
 *   cgroup ("/a/b", "/a/b@CPU3" with -A), or its container's or pod's name ("web",
 *   "NS/POD/web", "NS/POD"); "system" for the whole machine next to them. Two rows of
 *   one cgroup path in an interval or the summary (a cgroup removed and made again, a
 *   restarted container) each say which they are: "web (removed id 7)", "web (id 9)";
 *   System-wide only, the column is absent: toplev's columns exactly;
 * - Area: the node's full name (Backend_Bound.Memory_Bound.L1_Bound);
 * - Value: percent with one decimal (nodes), the count with one decimal (-e), a metric's
 *   value with three decimals, more below 0.1 (metric_value());
 * - Unit: "% " + the node's domain, toplev's way ("Slots_Estimated" is "Slots_est"), then
 *   " <" when the node is below its threshold (printed only with -v, as toplev does);
 * - Description: toplev's default: only on the bottleneck's row when none of its children
 *   is printed, the first sentence, and only the first time in the run;
 * - Sample: a node's own sample events, as toplev names them (lowercase, a space between:
 *   "frontend_retired.latency_ge_16:pp frontend_retired.latency_ge_8:pp"), whether sampled or
 *   not, empty for a node with none; the rows of metrics and events, with --sample, the
 *   events sampled ("cpu-clock", ';' between); Stddev: "0.0" (one measurement, toplev's value
 *   without -r);
 * - Multiplex: the percentage of time the node's least-counted input event ran, rounded to
 *   two decimals as perf reports it to toplev, printed as Python prints that float ("100.0",
 *   "33.33");
 * - Bottleneck: "<==" on the bottleneck's row;
 * - Idle: "Y" on a scope whose cycles are below 5% of the busiest scope of its kind (CPUs,
 *   cgroups, cgroups per CPU), toplev's idle marker; never on the system row.
 *
 * Nodes computed from events of several groups, multiplexed apart (split nodes, [split] in
 * the terminal), are named after the interval's rows on one comment line, those that have a
 * row in the interval, so that the rows stay toplev's:
 *   # split: 1.5: NODE, NODE: computed from events in several groups, counted at different times
 *
 * Rows of a scope follow the model's tree order (toplev --no-sort: cgtma's models carry no
 * metric groups to sort by). A node not counted in an interval has no row.
 *
 * After a scope's nodes, one row per flat metric the run computes (the default ones, IPC,
 * CPI and GHz, and with -m the rest), as toplev -m writes its metrics: Area the metric's name,
 * Unit its unit, "Metric" where it has none (toplev's metric_unit()), Multiplex that of its
 * least-counted event. Models without nodes have these rows alone (sw: CPU_Utilization,
 * Context_Switches, ... with the units "CPUs", "/s"), and with -e one row per event, Unit "Count",
 * Value the count in the interval, Multiplex that event's own. A metric's and an event's
 * row is there every interval, 0 or not: a scope's rows are the same set each time, for
 * the programs that read them.
 *
 * After a cgroup's rows (over all CPUs; not per CPU, not a thread's), its noise (report.h's
 * struct noise, docs/noise.md), a row per field the kernel or the switch hook gave in the
 * interval (none where it gave none; never a 0 in its place), Area "Noise." and the field:
 *   Noise.wait s/s, Noise.throttled s/s, Noise.nr_throttled times (the count, "12.0"),
 *   Noise.pressure_some and Noise.pressure_full % (percent with one decimal, as nodes),
 *   Noise.preempted /s, Noise.smt_shared s/s,
 *   Noise.antagonistN.preempt /s, Noise.antagonistN.took s/s, Noise.antagonistN.smt s/s
 * for the N-th busiest antagonist (1 to 5), its Description the antagonist's path, and
 * " (container NAME)" where it is a container's. Values as a metric's; Sample and Multiplex
 * empty (no counter reads them).
 *
 * Fields are quoted as Python's csv module does: when they hold the separator, a quote or
 * a line break, with quotes doubled.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "log.h"
#include "nodesample.h"
#include "output.h"

/* toplev's IDLE_MARKER_THRESHOLD: less than 5% of the busiest's cycles. */
#define IDLE_FRACTION 0.05

enum { F_TS, F_CPUS, F_AREA, F_VALUE, F_UNIT, F_DESC, F_SAMPLE, F_STDDEV, F_MUX, F_BN, F_IDLE,
       NR_FIELDS };

struct csv {
	char *sep;
	bool header_done;
	bool cpus_column;
	int cycles;			/* event index for the idle marker, or -1 */
	char **descs_shown;		/* toplev prints each description once per run */
	bool *split_shown;		/* per plan node: a split node with a row this interval */
	int nr_descs_shown, cap_descs_shown;
	char *line;			/* one interval's text */
	size_t line_len;
	FILE *buf;
};

/* --- formatting ---------------------------------------------------------------------- */

/*
 * A number as Python prints a float parsed from "%.{decimals}f": trailing zeros dropped,
 * one kept after the point. For such numbers that is Python's shortest repr.
 */
static const char *py_float(double v, int decimals, char *buf, size_t len)
{
	char *dot, *end;

	snprintf(buf, len, "%.*f", decimals, v);
	dot = strchr(buf, '.');
	if (!dot)
		return buf;
	end = buf + strlen(buf) - 1;
	while (end > dot + 1 && *end == '0')
		*end-- = '\0';
	return buf;
}

/*
 * A metric's value (sw's CPUs and rates, IPC). A CSV is read by programs, which want what the
 * value says: three decimals, as the terminal shows them, and more below 0.1 so that three
 * significant digits remain (0.0004 page faults per second is not 0); never an exponent,
 * which spreadsheets may take for text; trailing zeros dropped, as Python prints floats.
 */
static const char *metric_value(double v, char *buf, size_t len)
{
	int decimals = 3;

	for (double a = fabs(v); a > 0 && a < 0.1 && decimals < 12; a *= 10)
		decimals++;
	return py_float(v, decimals, buf, len);
}

static void put_field(FILE *f, const char *s, const char *sep)
{
	bool quote = false;

	for (const char *p = s; *p && !quote; p++)
		quote = strchr(sep, *p) || *p == '"' || *p == '\n' || *p == '\r';
	if (!quote) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (const char *p = s; *p; p++) {
		if (*p == '"')
			fputc('"', f);
		fputc(*p, f);
	}
	fputc('"', f);
}

static void put_row(struct csv *c, const char *const *fields)
{
	bool first = true;

	for (int i = 0; i < NR_FIELDS; i++) {
		if (i == F_CPUS && !c->cpus_column)
			continue;
		if (!first)
			fputs(c->sep, c->buf);
		put_field(c->buf, fields[i], c->sep);
		first = false;
	}
	fputc('\n', c->buf);
}

static void put_header(struct csv *c)
{
	static const char *const header[NR_FIELDS] = {
		"Timestamp", "CPUs", "Area", "Value", "Unit", "Description", "Sample", "Stddev",
		"Multiplex", "Bottleneck", "Idle",
	};

	put_row(c, header);
	c->header_done = true;
}

/* "Slots_Estimated" -> "Slots_est", as toplev's obj_domain(). */
static void node_unit(const struct plan_node *n, bool below, char *buf, size_t len)
{
	static const char *const abbrev[][2] = { { "Estimated", "est" }, { "Calculated", "calc" } };
	char dom[128] = "";

	if (n->domain) {
		snprintf(dom, sizeof(dom), "%s", n->domain);
		for (size_t k = 0; k < sizeof(abbrev) / sizeof(abbrev[0]); k++) {
			const char *p = strstr(n->domain, abbrev[k][0]);
			size_t off = p ? (size_t)(p - n->domain) : sizeof(dom);

			if (off < sizeof(dom)) {
				snprintf(dom + off, sizeof(dom) - off, "%s%s", abbrev[k][1],
					 p + strlen(abbrev[k][0]));
				break;
			}
		}
	}
	snprintf(buf, len, "%%%s%s%s", *dom ? " " : "", dom, below ? " <" : "");
}

/* toplev's obj_desc(): the first sentence and "..", whitespace runs made one space. */
static void short_desc(const char *desc, char *buf, size_t len)
{
	const char *dot = strchr(desc, '.');
	size_t n = dot ? (size_t)(dot - desc) + 1 : strlen(desc), o = 0;
	bool space = false;

	for (size_t i = 0; i < n && o + 3 < len; i++) {
		if (isspace((unsigned char)desc[i])) {
			space = true;
			continue;
		}
		if (space && o < len - 4)
			buf[o++] = ' ';
		space = false;
		buf[o++] = desc[i];
	}
	if (space && o < len - 4)
		buf[o++] = ' ';
	if (dot && o + 2 < len) {
		buf[o++] = '.';
		buf[o++] = '.';
	}
	buf[o] = '\0';
}

/* Whether the text was printed before in this run; remembers it when not. */
static bool desc_seen(struct csv *c, const char *text)
{
	for (int i = 0; i < c->nr_descs_shown; i++)
		if (!strcmp(c->descs_shown[i], text))
			return true;
	if (ALLOC_GROW(c->descs_shown, c->nr_descs_shown + 1, c->cap_descs_shown))
		return false;
	c->descs_shown[c->nr_descs_shown] = strdup(text);
	if (c->descs_shown[c->nr_descs_shown])
		c->nr_descs_shown++;
	return false;
}

/* The "# split:" line of the split nodes the interval's rows showed; forgets them. */
static void put_split_line(struct csv *c, const struct run *run, const char *ts)
{
	bool first = true;

	for (int i = 0; c->split_shown && i < run->plan->nr_nodes; i++) {
		if (!c->split_shown[i])
			continue;
		if (first)
			fprintf(c->buf, "# split: %s: ", ts);
		fprintf(c->buf, "%s%s", first ? "" : ", ", run->plan->nodes[i].full_name);
		first = false;
		c->split_shown[i] = false;
	}
	if (!first)
		fputs(": computed from events in several groups, counted at different times\n",
		      c->buf);
}

/* --- what a row says --------------------------------------------------------------- */

/*
 * toplev's Multiplex for a node or metric: the minimum over the events its formula read,
 * as perf's percentage with two decimals. A node clamped to its maxval is toplev's maxval
 * constant, fully counted.
 */
static const char *multiplex_field(const struct run *run, const struct scope *s, bool metric,
				   int i, char *buf, size_t len)
{
	const int *events;
	double m;
	int nr;

	if (metric) {
		nr = plan_metric_events(run->plan, i, &events);
		m = scope_multiplex(s, run, events, nr);
	} else if (s->tma.value[i] == run->plan->nodes[i].maxval) {
		m = 1;
	} else {
		nr = plan_node_events(run->plan, i, &events);
		m = scope_multiplex(s, run, events, nr);
	}
	if (isnan(m))
		m = 1;	/* a formula of constants: toplev's plain float, 100.0 */
	return py_float(round(m * 10000) / 100, 2, buf, len);
}

/*
 * The event toplev's idle detection would use (its is_cycles(): cycles or slots), or, for
 * the software model, the CPU time.
 */
static int cycles_event(const struct run *run)
{
	static const char *const names[] = {
		"CPU_CLK_UNHALTED.THREAD", "CPU_CLK_UNHALTED.THREAD_P", "CPU_CLK_UNHALTED.CORE",
		"ls_not_halted_cyc", "cycles", "cpu-cycles", "TOPDOWN.SLOTS", "slots",
		"cpu-clock", "task-clock",
	};

	for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++)
		for (int i = 0; i < run->nr_events; i++)
			if (!strcasecmp(run->event_names[i], names[k]))
				return i;
	return -1;
}

static int scope_class(const struct scope *s)
{
	if (s->kind == SCOPE_SYSTEM)
		return 0;
	if (s->kind == SCOPE_CPU)
		return 1;
	if (s->kind == SCOPE_TASK)
		return 4;
	return s->cpu < 0 ? 2 : 3;
}

/* Idle markers for every scope of the interval (toplev's find_idle_keys per kind). */
static void mark_idle(const struct csv *c, const struct interval *iv, bool *idle)
{
	double max[5] = { 0 };
	int nr[5] = { 0 };

	memset(idle, 0, iv->nr_scopes * sizeof(*idle));
	if (c->cycles < 0)
		return;
	for (int i = 0; i < iv->nr_scopes; i++) {
		const struct scope *s = &iv->scopes[i];
		double v = s->state[c->cycles] == COUNT_OK ? s->count[c->cycles] : 0;
		int k = scope_class(s);

		nr[k]++;
		if (v > max[k])
			max[k] = v;
	}
	for (int i = 0; i < iv->nr_scopes; i++) {
		const struct scope *s = &iv->scopes[i];
		double v = s->state[c->cycles] == COUNT_OK ? s->count[c->cycles] : 0;
		int k = scope_class(s);

		/* One scope of a kind, or none busy: toplev marks nothing. */
		idle[i] = k != 0 && nr[k] > 1 && max[k] > 0 && v < max[k] * IDLE_FRACTION;
	}
}

static const char *cpus_field(const struct interval *iv, int k, char *buf, size_t len)
{
	const struct scope *s = &iv->scopes[k];
	char mark[64];

	switch (s->kind) {
	case SCOPE_SYSTEM:
		return "system";
	case SCOPE_CPU:
		snprintf(buf, len, "CPU%d", s->cpu);
		return buf;
	case SCOPE_CGROUP:
		/* A container's or pod's name, as the terminal shows it; the path otherwise. */
		scope_label(s, false, buf, len);
		if (s->cpu >= 0) {
			char *at = strrchr(buf, '@');

			if (at)
				snprintf(at, len - (at - buf), "@CPU%d", s->cpu);
		}
		/* Two rows of one cgroup path: which incarnation each is ("web (removed)"). */
		if (interval_key_shared(iv, k) && *scope_incarnation(iv, k, mark, sizeof(mark)))
			snprintf(buf + strlen(buf), len - strlen(buf), " (%s)", mark);
		return buf;
	case SCOPE_TASK:
		/* A thread in its cgroup, named as the cgroup's row is: "/a/b:TID(comm)". */
		scope_label(s, false, buf, len);
		snprintf(buf + strlen(buf), len - strlen(buf), "(%s)", s->comm);
		return buf;
	case SCOPE_IRQ:
		if (s->cpu < 0)
			snprintf(buf, len, "irq:%s", s->irq);
		else
			snprintf(buf, len, "irq:%s@CPU%d", s->irq, s->cpu);
		return buf;
	}
	return "";
}

/* Whether a direct child of node i is printed above its threshold (toplev children_over). */
static bool child_printed(const struct plan *p, const struct scope *s, int i)
{
	for (int k = i + 1; k < p->nr_nodes; k++)
		if (p->nodes[k].parent == i && s->tma.counted[k] && s->tma.above[k])
			return true;
	return false;
}

static void scope_rows(struct csv *c, const struct run *run, const struct scope *s,
		       const char **f)
{
	const struct plan *p = run->plan;
	char value[64], unit[160], desc[1024], mux[32], sample[512];
	const char *sampled = run->sample_events ? run->sample_events : "";

	f[F_SAMPLE] = sampled;
	f[F_STDDEV] = "0.0";
	if (!p) {
		for (int i = 0; i < run->nr_events; i++) {
			if (s->state[i] == COUNT_NOT_COUNTED || !isfinite(s->count[i]))
				continue;
			f[F_AREA] = run->event_names[i];
			snprintf(value, sizeof(value), "%.1f", s->count[i]);
			f[F_VALUE] = value;
			f[F_UNIT] = "Count";
			f[F_DESC] = "";
			f[F_MUX] = isnan(s->multiplex[i]) ? "" :
				   py_float(round(s->multiplex[i] * 10000) / 100, 2, mux,
					    sizeof(mux));
			f[F_BN] = "";
			put_row(c, f);
		}
		return;
	}
	for (int i = 0; i < p->nr_nodes; i++) {
		const struct plan_node *n = &p->nodes[i];
		bool bn = s->tma.bottleneck == i;

		if (!s->tma.counted[i] || !isfinite(s->tma.value[i]))
			continue;
		if (!s->tma.above[i] && !run->verbose)
			continue;
		snprintf(value, sizeof(value), "%.1f", s->tma.value[i] * 100);
		node_unit(n, !s->tma.above[i], unit, sizeof(unit));
		desc[0] = '\0';
		if (bn && n->desc && !child_printed(p, s, i)) {
			short_desc(n->desc, desc, sizeof(desc));
			if (desc_seen(c, desc))
				desc[0] = '\0';
		}
		node_sample_column(p, i, sample, sizeof(sample));
		f[F_AREA] = n->full_name;
		f[F_VALUE] = value;
		f[F_UNIT] = unit;
		f[F_DESC] = desc;
		f[F_SAMPLE] = sample;
		f[F_MUX] = multiplex_field(run, s, false, i, mux, sizeof(mux));
		f[F_BN] = bn ? "<==" : "";
		put_row(c, f);
		if (n->split && c->split_shown)
			c->split_shown[i] = true;
	}
	for (int i = 0; i < p->nr_metrics; i++) {
		const struct plan_metric *m = &p->metrics[i];

		if (!s->tma.metric_counted[i] || !isfinite(s->tma.metric[i]))
			continue;
		f[F_AREA] = m->name;
		f[F_VALUE] = metric_value(s->tma.metric[i], value, sizeof(value));
		/* toplev's metric_unit(): a metric without a unit is a "Metric" */
		f[F_UNIT] = m->unit && *m->unit ? m->unit : "Metric";
		f[F_DESC] = "";
		f[F_SAMPLE] = sampled;
		f[F_MUX] = multiplex_field(run, s, true, i, mux, sizeof(mux));
		f[F_BN] = "";
		put_row(c, f);
	}
}

/* One noise row: Area name, the value (pct: a fraction as a percent, else a metric's). */
static void noise_row(struct csv *c, const char **f, const char *name, double v, bool pct,
		      const char *unit, const char *desc)
{
	char value[64];

	f[F_AREA] = name;
	if (pct)
		snprintf(value, sizeof(value), "%.1f", v * 100);
	f[F_VALUE] = pct ? value : metric_value(v, value, sizeof(value));
	f[F_UNIT] = unit;
	f[F_DESC] = desc;
	put_row(c, f);
}

/* A cgroup's noise rows, the fields it has (see the top). */
static void noise_rows(struct csv *c, const struct scope *s, const char **f)
{
	const struct noise *n = &s->noise;
	char area[64], desc[400];

	if (s->kind != SCOPE_CGROUP || s->cpu >= 0 || !n->has)
		return;
	f[F_SAMPLE] = "";
	f[F_STDDEV] = "0.0";
	f[F_MUX] = "";
	f[F_BN] = "";
	if (n->has & NOISE_WAIT)
		noise_row(c, f, "Noise.wait", n->wait, false, "s/s", "");
	if (n->has & NOISE_THROTTLED) {
		noise_row(c, f, "Noise.throttled", n->throttled, false, "s/s", "");
		noise_row(c, f, "Noise.nr_throttled", (double)n->nr_throttled, false, "times", "");
	}
	if (n->has & NOISE_PRESSURE_SOME)
		noise_row(c, f, "Noise.pressure_some", n->pressure_some, true, "%", "");
	if (n->has & NOISE_PRESSURE_FULL)
		noise_row(c, f, "Noise.pressure_full", n->pressure_full, true, "%", "");
	if (n->has & NOISE_PREEMPTED)
		noise_row(c, f, "Noise.preempted", n->preempted, false, "/s", "");
	if (n->has & NOISE_SMT)
		noise_row(c, f, "Noise.smt_shared", n->smt_shared, false, "s/s", "");
	for (int i = 0; i < n->nr_antagonists; i++) {
		const struct antagonist *a = &n->antagonists[i];

		snprintf(desc, sizeof(desc), *a->container ? "%s (container %s)" : "%s",
			 a->cgroup, a->container);
		if (n->has & NOISE_PREEMPTED) {
			snprintf(area, sizeof(area), "Noise.antagonist%d.preempt", i + 1);
			noise_row(c, f, area, a->preempt, false, "/s", desc);
			snprintf(area, sizeof(area), "Noise.antagonist%d.took", i + 1);
			noise_row(c, f, area, a->took, false, "s/s", desc);
		}
		if (n->has & NOISE_SMT) {
			snprintf(area, sizeof(area), "Noise.antagonist%d.smt", i + 1);
			noise_row(c, f, area, a->smt, false, "s/s", desc);
		}
	}
}

static int csv_write(struct output *o, const struct run *run, const struct interval *iv)
{
	struct csv *c = o->priv;
	const char *f[NR_FIELDS];
	char ts[64], cpus[4200];
	bool *idle = NULL;
	int err = 0;

	if (iv->nr_scopes) {
		idle = calloc(iv->nr_scopes, sizeof(*idle));
		if (!idle)
			return -ENOMEM;
		mark_idle(c, iv, idle);
	}

	c->buf = open_memstream(&c->line, &c->line_len);
	if (!c->buf) {
		free(idle);
		return -errno;
	}
	if (!c->header_done)
		put_header(c);
	f[F_TS] = iv->summary ? "SUMMARY" :
				py_float(iv->time - run->start_time, 9, ts, sizeof(ts));
	for (int i = 0; i < iv->nr_scopes; i++) {
		f[F_CPUS] = cpus_field(iv, i, cpus, sizeof(cpus));
		f[F_IDLE] = idle[i] ? "Y" : "";
		scope_rows(c, run, &iv->scopes[i], f);
		noise_rows(c, &iv->scopes[i], f);
	}
	/* Comment lines, which readers of toplev's CSV skip, after the interval's rows. */
	put_split_line(c, run, f[F_TS]);
	if (iv->missed_slices) {
		char marks[400];

		fprintf(c->buf, "# not exact: %s: %s\n", f[F_TS],
			interval_marks_text(iv, marks, sizeof(marks)));
	}
	if (iv->summary)
		fprintf(c->buf, "# cgtma model %s on %s [%s]\n", run->model,
			run->cpu && *run->cpu ? run->cpu : "unknown CPU",
			run->kernel && *run->kernel ? run->kernel : "unknown kernel");
	free(idle);
	if (fclose(c->buf)) {
		c->buf = NULL;
		free(c->line);
		c->line = NULL;
		return -ENOMEM;
	}
	c->buf = NULL;
	/* One interval, one write: a reader never sees half of it. */
	errno = 0;
	if (fwrite(c->line, 1, c->line_len, o->f) != c->line_len || fflush(o->f))
		err = errno ? -errno : -EIO;
	free(c->line);
	c->line = NULL;
	return err;
}

static int csv_begin(struct output *o, const struct run *run)
{
	struct csv *c = o->priv;

	c->cycles = cycles_event(run);
	c->cpus_column = run->per_cpu || run->cgroups;
	if (run->plan && run->plan->nr_nodes) {
		c->split_shown = calloc(run->plan->nr_nodes, sizeof(*c->split_shown));
		if (!c->split_shown)
			return -ENOMEM;
	}
	return 0;
}

static void csv_close(struct output *o)
{
	struct csv *c = o->priv;

	if (!c)
		return;
	for (int i = 0; i < c->nr_descs_shown; i++)
		free(c->descs_shown[i]);
	free(c->descs_shown);
	free(c->split_shown);
	free(c->sep);
	free(c);
	o->priv = NULL;
}

static const struct output_ops csv_ops = {
	.begin = csv_begin,
	.interval = csv_write,
	.summary = csv_write,
	.close = csv_close,
};

int output_csv_open(FILE *f, const char *sep, struct output **op)
{
	struct output *o;
	struct csv *c;

	if (!sep || !*sep) {
		pr_err("-x: the separator is empty");
		return -EINVAL;
	}
	o = calloc(1, sizeof(*o));
	c = calloc(1, sizeof(*c));
	if (!o || !c || !(c->sep = strdup(sep))) {
		free(o);
		free(c);
		return -ENOMEM;
	}
	c->cycles = -1;
	o->ops = &csv_ops;
	o->name = "csv";
	o->f = f;
	o->priv = c;
	*op = o;
	return 0;
}
