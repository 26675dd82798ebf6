// SPDX-License-Identifier: GPL-2.0
/*
 * --prometheus [ADDR:]PORT: serves /metrics in the Prometheus text format (version 0.0.4)
 * from libmicrohttpd's own thread. The page is built at the end of every interval and swapped
 * in under a mutex, so a scrape always sees one whole interval and a slow client never holds
 * up the interval loop. The families:
 *
 *   cgtma_run_info{model,cpu_model,kernel[,level]}                    gauge, always 1
 *   cgtma_interval_seconds                                            gauge
 *   cgtma_events_total{scope,[cgroup,[container,][pod,namespace,]][cpu,]event}  counter
 *   cgtma_multiplex_ratio{scope,[cgroup,][cpu,]event}                 gauge 0..1
 *   cgtma_topdown_ratio{scope,[cgroup,][cpu,]node,level}              gauge 0..1
 *   cgtma_metric{scope,[cgroup,][cpu,]metric[,unit]}                 gauge
 *   cgtma_bpf_run_seconds_total, cgtma_bpf_runs_total                 counters
 *   cgtma_noise_wait_seconds_per_second{scope,cgroup[,container,...]}  gauge, and alike
 *     cgtma_noise_throttled_seconds_per_second, cgtma_noise_throttled_periods,
 *     cgtma_noise_pressure_some_ratio, cgtma_noise_pressure_full_ratio,
 *     cgtma_noise_preempted_per_second, cgtma_noise_smt_shared_seconds_per_second
 *   cgtma_noise_antagonist_preempt_per_second{scope,cgroup,...,antagonist
 *     [,antagonist_container]}                                        gauge, and alike
 *     cgtma_noise_antagonist_took_seconds_per_second,
 *     cgtma_noise_antagonist_smt_seconds_per_second
 *
 * The noise families (report.h's struct noise) are a cgroup's over all CPUs, a gauge per
 * field its last interval has (none where the kernel or the switch hook gave none); the
 * antagonist pairs are its busiest antagonists of the last interval, NOISE_ANTAGONISTS_MAX
 * at most, so a pair that is no longer among them (or whose cgroup is gone) leaves with the
 * next page, as every gauge of a scope that has none does.
 *
 * scope is "system", "cpu" or "cgroup", as in --json; with --per-cpu a cgroup's series on one
 * CPU carry a cpu label too, so {scope="cgroup",cpu=""} selects the whole-cgroup ones.
 *
 * Counters are the sums of the intervals' scaled counts since the start, kept per series here:
 * they never go back while the series exists. A value that was not counted (an event that never
 * got a counter, a node computed from one) is left out of the page, not written as NaN. A
 * removed cgroup's series are on the page of the interval that saw it go and on no later one,
 * so Prometheus marks them stale at its next scrape and the page does not grow with churn.
 * A cgroup found by a glob or --all-* has a row only in intervals where it ran (and in its
 * first and its last: session.c), and a thread (--prometheus-tasks) only where it ran and
 * its last when it is gone (tasks.h); in between their series stay on the page, counters as
 * they were and no gauges (an idle scope has none), and leave after the page of the last row
 * (a thread's also with its cgroup's): a counter that left the page would start again from
 * zero.
 *
 * The model's flat metrics (IPC, CPI, GHz, CPU_Utilization, ...) are one family with the
 * metric's name as a label, as toplev and perf name them, and its unit as another where it has
 * one: a query picks a metric by name ({metric="IPC"}), and aggregates over the scope labels,
 * never over metric, whose samples differ in unit. A metric's series count is a node's: one per
 * scope, as cgtma_topdown_ratio.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <netdb.h>
#include <stddef.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <microhttpd.h>

#include "log.h"
#include "output.h"
#include "strbuf.h"

#define PROM_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"
#define PROM_DEFAULT_ADDR "127.0.0.1"

/*
 * The exposition format's escapes: in a label value backslash, double quote and newline; in
 * HELP text backslash and newline.
 */
static void sb_escaped(struct strbuf *sb, const char *s, bool quote)
{
	for (; *s; s++) {
		if (*s == '\\')
			strbuf_addstr(sb, "\\\\");
		else if (*s == '\n')
			strbuf_addstr(sb, "\\n");
		else if (*s == '"' && quote)
			strbuf_addstr(sb, "\\\"");
		else
			strbuf_add(sb, s, 1);
	}
}

/* --- series kept across intervals --------------------------------------------------- */

/* One scope as Prometheus sees it: its label set, and its counters' totals. */
struct series {
	char *key;			/* its scopes' scope_key() */
	enum scope_kind kind;
	int cpu;
	char *cgroup;
	int pid, tid;			/* SCOPE_TASK (--prometheus-tasks) */
	char comm[16];
	struct cgroup_names names;	/* its container or pod: labels */
	const char *irq;		/* SCOPE_IRQ: its name (static, irqscope.h) */
	double *total;			/* per event: scaled counts summed since the start */
	bool *counted;			/* per event: counted at least once */
	const struct scope *now;	/* this interval's scope: gauges come from it; NULL for a
					 * thread kept without one */
	bool removed;			/* its cgroup is gone: on this page, then dropped */
};

struct prom {
	pthread_mutex_t lock;
	struct MHD_Response *page;	/* what /metrics answers; replaced under lock */
	const char *page_text;		/* its body, owned by the response */
	size_t page_len;
	struct MHD_Daemon *daemon;
	char where[300];		/* "ADDR:PORT", for messages */
	char name[320];			/* the output's name: "prometheus ADDR:PORT" */

	int nr_events;
	struct series *series;		/* in interval_sort()'s order: by key */
	int nr_series;
	/* The marks since the start (a scrape every 15 s sees those of every interval). */
	unsigned long long missed_slices, inexact_intervals, missed_max_ns, missed_unbounded;
};

static void series_release(struct series *s)
{
	free(s->key);
	free(s->cgroup);
	cgroup_names_release(&s->names);
	free(s->total);
	free(s->counted);
}

static int series_init(struct series *s, const struct scope *sc, int nr_events)
{
	memset(s, 0, sizeof(*s));
	s->key = strdup(scope_key(sc));
	s->kind = sc->kind;
	s->cpu = sc->cpu;
	s->pid = sc->pid;
	s->tid = sc->tid;
	memcpy(s->comm, sc->comm, sizeof(s->comm));
	s->cgroup = sc->cgroup ? strdup(sc->cgroup) : NULL;
	s->irq = sc->irq;
	s->total = calloc(nr_events + 1, sizeof(*s->total));
	s->counted = calloc(nr_events + 1, sizeof(*s->counted));
	if (!s->key || (sc->cgroup && !s->cgroup) || !s->total || !s->counted) {
		series_release(s);
		return -ENOMEM;
	}
	return 0;
}

static void series_add(struct series *s, const struct scope *sc, int nr_events)
{
	for (int i = 0; i < nr_events; i++) {
		if (sc->state[i] == COUNT_NOT_COUNTED)
			continue;
		/* Whole events, as the other outputs print them; 0 when the scope was idle. */
		s->total[i] += round(sc->count[i]);
		s->counted[i] = true;
	}
}

/*
 * Whether a cgroup's or a thread's series with no scope this interval stays (see the top):
 * until a row of its cgroup says the cgroup is gone (an idle cgroup found by a glob has no
 * row at all). -1: no; 0: yes; 1: yes, for this page only. iv's scopes are sorted: a binary
 * search finds the cgroup's first.
 */
static int kept_without_scope(const struct series *s, const struct interval *iv)
{
	int lo = 0, hi = iv->nr_scopes, kept = 0;

	/* An interrupt scope is there for the whole run; an idle one has no row (session.c). */
	if (s->kind == SCOPE_IRQ)
		return 0;
	if (s->kind != SCOPE_TASK && s->kind != SCOPE_CGROUP)
		return -1;
	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;
		const struct scope *sc = &iv->scopes[mid];
		int c = sc->kind != SCOPE_CGROUP ? (sc->kind < SCOPE_CGROUP ? -1 : 1) :
			strcmp(sc->cgroup, s->cgroup);

		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < iv->nr_scopes && iv->scopes[lo].kind == SCOPE_CGROUP &&
	       !strcmp(iv->scopes[lo].cgroup, s->cgroup); lo++)
		kept |= iv->scopes[lo].removed;
	return kept;
}

/*
 * Matches this interval's scopes with the series kept so far, both in interval_sort()'s
 * order (a run's intervals come sorted): a series whose scope is back carries its totals on,
 * one with no scope now is dropped (a cgroup's or a thread's may be kept:
 * kept_without_scope()), and a new scope
 * starts a series at zero. Scopes that share
 * a label set (a cgroup removed and made again under the same path) share a series, whose
 * gauges come from the live one. -EINVAL when the scopes are not in order; on failure nothing
 * kept has changed.
 */
static int series_update(struct prom *p, const struct interval *iv)
{
	int n = iv->nr_scopes, nr_next = 0, old = 0, err = -ENOMEM, max = n + p->nr_series;
	struct series *next;
	int *slot, *from;
	signed char *kept;

	for (int i = 1; i < n; i++)
		if (strcmp(scope_key(&iv->scopes[i - 1]), scope_key(&iv->scopes[i])) > 0)
			return -EINVAL;
	slot = malloc((n + 1) * sizeof(*slot));	/* per scope: its series in next */
	from = malloc((max + 1) * sizeof(*from));	/* per series in next: the old one, or -1 */
	next = calloc(max + 1, sizeof(*next));
	kept = calloc(max + 1, sizeof(*kept));	/* per series in next: kept_without_scope() if kept
						 * without a scope */
	if (!slot || !from || !next || !kept)
		goto out;

	/* First the new series, so that a failed allocation leaves p as it was. */
	for (int i = 0; i < n; i++) {
		const struct scope *sc = &iv->scopes[i];
		int c = 1;

		if (i && !strcmp(scope_key(&iv->scopes[i - 1]), scope_key(sc))) {
			slot[i] = nr_next - 1;
			continue;
		}
		while (old < p->nr_series) {
			const struct series *o = &p->series[old];
			int k;

			c = strcmp(o->key, scope_key(sc));
			if (c >= 0)
				break;
			k = kept_without_scope(o, iv);
			if (k >= 0) {
				kept[nr_next] = (signed char)(k + 1);
				from[nr_next++] = old;
			}
			old++;
		}
		if (c == 0) {
			from[nr_next] = old++;
		} else {
			from[nr_next] = -1;
			if (series_init(&next[nr_next], sc, p->nr_events)) {
				for (int k = 0; k < nr_next; k++)
					if (from[k] < 0)
						series_release(&next[k]);
				goto out;
			}
		}
		slot[i] = nr_next++;
	}
	/* Series sorted after the last scope. */
	for (; old < p->nr_series; old++) {
		int k = kept_without_scope(&p->series[old], iv);

		if (k >= 0) {
			kept[nr_next] = (signed char)(k + 1);
			from[nr_next++] = old;
		}
	}

	/* Then the kept ones move over, and those not reported any more go. */
	old = 0;
	for (int k = 0; k < nr_next; k++) {
		if (from[k] < 0)
			continue;
		for (; old < from[k]; old++)
			series_release(&p->series[old]);
		next[k] = p->series[old++];
		/* Kept without a scope now: no gauges; it leaves with its cgroup. */
		if (kept[k]) {
			next[k].now = NULL;
			next[k].removed = kept[k] == 2;
		}
	}
	for (; old < p->nr_series; old++)
		series_release(&p->series[old]);
	free(p->series);
	p->series = next;
	p->nr_series = nr_next;
	next = NULL;

	for (int i = 0; i < n; i++) {
		const struct scope *sc = &iv->scopes[i];
		struct series *s = &p->series[slot[i]];
		bool first = !i || slot[i - 1] != slot[i];

		series_add(s, sc, p->nr_events);
		/* Of a label set's scopes, the live one gives the gauges. */
		if (first || (s->removed && !sc->removed)) {
			s->now = sc;
			s->removed = sc->removed;
		}
		/* A container's name can come after its first interval. */
		if (first && !cgroup_names_equal(&s->names, sc->names.container, sc->names.pod,
						 sc->names.namespace) &&
		    cgroup_names_set(&s->names, sc->names.container, sc->names.pod,
				     sc->names.namespace)) {
			err = -ENOMEM;
			goto out;
		}
	}
	err = 0;
out:
	free(slot);
	free(from);
	free(next);
	free(kept);
	return err;
}

/* After the page is built: removed cgroups leave, and no series points into iv any more. */
static void series_drop_removed(struct prom *p)
{
	int n = 0;

	for (int i = 0; i < p->nr_series; i++) {
		if (p->series[i].removed) {
			series_release(&p->series[i]);
			continue;
		}
		p->series[i].now = NULL;
		p->series[n++] = p->series[i];
	}
	p->nr_series = n;
}

/* --- the page ------------------------------------------------------------------------ */

static void family_header(struct strbuf *sb, const char *name, const char *type, const char *help)
{
	strbuf_addf(sb, "# HELP %s ", name);
	sb_escaped(sb, help, false);
	strbuf_addf(sb, "\n# TYPE %s %s\n", name, type);
}

/* ,NAME="VALUE" where there is a value. */
static void label(struct strbuf *sb, const char *name, const char *value)
{
	if (!value)
		return;
	strbuf_addf(sb, ",%s=\"", name);
	sb_escaped(sb, value, true);
	strbuf_addstr(sb, "\"");
}

/* Opens a sample's label set with the scope labels; the caller closes it. */
static void scope_labels(struct strbuf *sb, const struct series *s)
{
	strbuf_addf(sb, "{scope=\"%s\"", scope_kind_name(s->kind));
	if (s->kind == SCOPE_CGROUP || s->kind == SCOPE_TASK) {
		strbuf_addstr(sb, ",cgroup=\"");
		sb_escaped(sb, s->cgroup, true);
		strbuf_addstr(sb, "\"");
		label(sb, "container", s->names.container);
		label(sb, "pod", s->names.pod);
		label(sb, "namespace", s->names.namespace);
	}
	if (s->kind == SCOPE_TASK) {
		strbuf_addf(sb, ",pid=\"%d\",tid=\"%d\",comm=\"", s->pid, s->tid);
		sb_escaped(sb, s->comm, true);
		strbuf_addstr(sb, "\"");
	}
	if (s->kind == SCOPE_IRQ)
		strbuf_addf(sb, ",irq=\"%s\"", s->irq);
	if (s->cpu >= 0)
		strbuf_addf(sb, ",cpu=\"%d\"", s->cpu);
}

static void sample_value(struct strbuf *sb, double v)
{
	strbuf_addf(sb, "} %.10g\n", v);
}

/* A family with no sample is left out, header and all. */
static void family_end(struct strbuf *sb, size_t start, int samples)
{
	if (!samples && !sb->failed)
		strbuf_setlen(sb, start);
}

static void render_events(struct strbuf *sb, const struct prom *p, const struct run *run)
{
	size_t start = sb->len;
	int samples = 0;

	family_header(sb, "cgtma_events_total", "counter",
		      "Events counted since cgtma started, each interval's count scaled for "
		      "multiplexing (cpu-clock and task-clock count nanoseconds).");
	for (int i = 0; i < p->nr_series; i++) {
		const struct series *s = &p->series[i];

		for (int e = 0; e < p->nr_events; e++) {
			if (!s->counted[e] || !run_lists_event(run, e))
				continue;
			strbuf_addstr(sb, "cgtma_events_total");
			scope_labels(sb, s);
			strbuf_addstr(sb, ",event=\"");
			sb_escaped(sb, run->event_names[e], true);
			strbuf_addf(sb, "\"} %.0f\n", s->total[e]);
			samples++;
		}
	}
	family_end(sb, start, samples);

	start = sb->len;
	samples = 0;
	family_header(sb, "cgtma_multiplex_ratio", "gauge",
		      "Fraction of the last interval's enabled time the event was counted "
		      "(running / enabled; 1: no multiplexing). Absent when the scope was idle.");
	for (int i = 0; i < p->nr_series; i++) {
		const struct series *s = &p->series[i];

		for (int e = 0; s->now && e < p->nr_events; e++) {
			if (!isfinite(s->now->multiplex[e]) || !run_lists_event(run, e))
				continue;
			strbuf_addstr(sb, "cgtma_multiplex_ratio");
			scope_labels(sb, s);
			strbuf_addstr(sb, ",event=\"");
			sb_escaped(sb, run->event_names[e], true);
			strbuf_addstr(sb, "\"");
			sample_value(sb, s->now->multiplex[e]);
			samples++;
		}
	}
	family_end(sb, start, samples);
}

/* A series' tree and metrics of the last interval, or NULL when it has none. */
static const struct tma_result *series_tma(const struct series *s)
{
	return s->now && s->now->has_tma ? &s->now->tma : NULL;
}

/*
 * cgtma_topdown_ratio (metrics false: the tree's nodes) or cgtma_metric (the flat metrics): a
 * sample per series and node or metric counted in the last interval.
 */
static void render_tma_family(struct strbuf *sb, const struct prom *p, const struct plan *plan,
			      bool metrics)
{
	const char *family = metrics ? "cgtma_metric" : "cgtma_topdown_ratio";
	int n = metrics ? plan->nr_metrics : plan->nr_nodes, samples = 0;
	size_t start = sb->len;

	family_header(sb, family, "gauge", metrics ?
		      "Flat metric of the model in the last interval: metric is its name as the "
		      "model spells it (toplev's or perf's: IPC, CPI, GHz, CPU_Utilization, ...), "
		      "unit its unit where it has one. Absent when an event it reads was not "
		      "counted." :
		      "Top-Down fraction of the node in the last interval (node is the full path "
		      "in the tree). Absent when an event it needs was not counted.");
	for (int i = 0; i < p->nr_series; i++) {
		const struct series *s = &p->series[i];
		const struct tma_result *t = series_tma(s);

		for (int k = 0; t && k < n; k++) {
			double v = metrics ? t->metric[k] : t->value[k];

			if (!(metrics ? t->metric_counted[k] : t->counted[k]) || !isfinite(v))
				continue;
			strbuf_addstr(sb, family);
			scope_labels(sb, s);
			if (metrics) {
				const struct plan_metric *m = &plan->metrics[k];

				label(sb, "metric", m->name);
				label(sb, "unit", m->unit && m->unit[0] ? m->unit : NULL);
			} else {
				label(sb, "node", plan->nodes[k].full_name);
				strbuf_addf(sb, ",level=\"%d\"", plan->nodes[k].level);
			}
			sample_value(sb, v);
			samples++;
		}
	}
	family_end(sb, start, samples);
}

/* A noise field (report.h's struct noise) as a gauge family of its own. */
struct noise_family {
	const char *name;
	unsigned bit;			/* NOISE_*: the field is there */
	size_t off;			/* in struct noise or struct antagonist */
	bool count;			/* a __u64 there, else a double */
	const char *help;
};

static const struct noise_family noise_families[] = {
	{ "cgtma_noise_wait_seconds_per_second", NOISE_WAIT, offsetof(struct noise, wait), false,
	  "Time the cgroup's threads were runnable but not running (on a run queue), summed "
	  "over its threads, per second of the last interval (schedstats' run_delay)." },
	{ "cgtma_noise_throttled_seconds_per_second", NOISE_THROTTLED,
	  offsetof(struct noise, throttled), false,
	  "Time its cpu.max throttled the cgroup, per second of the last interval (cpu.stat "
	  "throttled_usec)." },
	{ "cgtma_noise_throttled_periods", NOISE_THROTTLED, offsetof(struct noise, nr_throttled),
	  true,
	  "cpu.max periods in which the cgroup was throttled, in the last interval (the growth "
	  "of cpu.stat nr_throttled)." },
	{ "cgtma_noise_pressure_some_ratio", NOISE_PRESSURE_SOME,
	  offsetof(struct noise, pressure_some), false,
	  "Share of the last interval in which some of the cgroup's runnable tasks waited for a "
	  "CPU (cpu.pressure some)." },
	{ "cgtma_noise_pressure_full_ratio", NOISE_PRESSURE_FULL,
	  offsetof(struct noise, pressure_full), false,
	  "Share of the last interval in which all of the cgroup's non-idle tasks waited for a "
	  "CPU at once (cpu.pressure full)." },
	{ "cgtma_noise_preempted_per_second", NOISE_PREEMPTED,
	  offsetof(struct noise, preempted), false,
	  "Times per second the cgroup's tasks left a CPU still runnable for another cgroup's, "
	  "in the last interval." },
	{ "cgtma_noise_smt_shared_seconds_per_second", NOISE_SMT,
	  offsetof(struct noise, smt_shared), false,
	  "Time the cgroup ran while its core's other hardware thread ran another cgroup, per "
	  "second of the last interval." },
};

/* The antagonists' pair families: labelled by the other cgroup's path (antagonist). */
static const struct noise_family antagonist_families[] = {
	{ "cgtma_noise_antagonist_preempt_per_second", NOISE_PREEMPTED,
	  offsetof(struct antagonist, preempt), false,
	  "Times per second the antagonist's tasks preempted the cgroup's in the last interval "
	  "(the cgroup's busiest antagonists, 5 at most)." },
	{ "cgtma_noise_antagonist_took_seconds_per_second", NOISE_PREEMPTED,
	  offsetof(struct antagonist, took), false,
	  "CPU time per second of the antagonist's slices that preempted the cgroup's tasks, in "
	  "the last interval." },
	{ "cgtma_noise_antagonist_smt_seconds_per_second", NOISE_SMT,
	  offsetof(struct antagonist, smt), false,
	  "Time per second the antagonist ran on the sibling hardware thread while the cgroup "
	  "ran, in the last interval." },
};

/* A series' noise of the last interval: a cgroup's over all CPUs, or NULL. */
static const struct noise *series_noise(const struct series *s)
{
	const struct scope *sc = s->now;

	return sc && sc->kind == SCOPE_CGROUP && sc->cpu < 0 && sc->noise.has ? &sc->noise :
										NULL;
}

/* A family's sample value from its struct: " 0.25" and the line's end. */
static void noise_value(struct strbuf *sb, const struct noise_family *nf, const void *base)
{
	const char *at = (const char *)base + nf->off;
	double v;
	__u64 n;

	if (nf->count) {
		memcpy(&n, at, sizeof(n));
		strbuf_addf(sb, "} %llu\n", (unsigned long long)n);
		return;
	}
	memcpy(&v, at, sizeof(v));
	sample_value(sb, v);
}

/*
 * The noise families (docs/noise.md): a gauge per field a cgroup has, and the antagonist
 * pairs. Gauges of the last interval only: a pair no longer among a cgroup's busiest (or a
 * cgroup gone) is off the next page, so the page holds 5 pairs per cgroup at most.
 */
static void render_noise(struct strbuf *sb, const struct prom *p)
{
	size_t nr_noise = sizeof(noise_families) / sizeof(noise_families[0]);
	size_t nr = nr_noise + sizeof(antagonist_families) / sizeof(antagonist_families[0]);

	for (size_t k = 0; k < nr; k++) {
		bool pair = k >= nr_noise;
		const struct noise_family *nf = pair ? &antagonist_families[k - nr_noise] :
						       &noise_families[k];
		size_t start = sb->len;
		int samples = 0;

		family_header(sb, nf->name, "gauge", nf->help);
		for (int i = 0; i < p->nr_series; i++) {
			const struct noise *n = series_noise(&p->series[i]);

			if (!n || !(n->has & nf->bit))
				continue;
			for (int a = 0; a < (pair ? n->nr_antagonists : 1); a++) {
				const struct antagonist *an = &n->antagonists[a];

				strbuf_addstr(sb, nf->name);
				scope_labels(sb, &p->series[i]);
				if (pair) {
					label(sb, "antagonist", an->cgroup);
					label(sb, "antagonist_container",
					      *an->container ? an->container : NULL);
				}
				noise_value(sb, nf, pair ? (const void *)an : (const void *)n);
				samples++;
			}
		}
		family_end(sb, start, samples);
	}
}

/* The interval's exactness, and the marks since the start as counters. */
static void render_exactness(struct strbuf *sb, const struct prom *p, const struct interval *iv)
{
	family_header(sb, "cgtma_interval_exact", "gauge",
		      "1 when the last interval's counts are exact; 0 when a slice in it began "
		      "with a switch or move the hook did not see (its start may be another "
		      "cgroup's).");
	strbuf_addf(sb, "cgtma_interval_exact %d\n", !iv->missed_slices);
	family_header(sb, "cgtma_inexact_intervals_total", "counter",
		      "Intervals whose counts are not exact (cgtma_interval_exact 0), since the "
		      "start.");
	strbuf_addf(sb, "cgtma_inexact_intervals_total %llu\n", p->inexact_intervals);
	family_header(sb, "cgtma_missed_slices_total", "counter",
		      "Slices charged though the switch hook did not see where they began, since "
		      "the start: their start may be another cgroup's.");
	strbuf_addf(sb, "cgtma_missed_slices_total %llu\n", p->missed_slices);
	family_header(sb, "cgtma_missed_bound_seconds_total", "counter",
		      "Of those slices' time, the most that may be another cgroup's (the kernel's "
		      "own run time of their tasks bounds it), since the start.");
	strbuf_addf(sb, "cgtma_missed_bound_seconds_total %.9f\n", p->missed_max_ns / 1e9);
	family_header(sb, "cgtma_missed_unbounded_total", "counter",
		      "Switches between cgroups at which the kernel did not run the perf-event "
		      "hook's program, and slices whose counters could not be read (no bound on "
		      "their error), since the start.");
	strbuf_addf(sb, "cgtma_missed_unbounded_total %llu\n", p->missed_unbounded);
}

static void render(struct strbuf *sb, const struct prom *p, const struct run *run,
		   const struct interval *iv)
{
	family_header(sb, "cgtma_run_info", "gauge",
		      "What cgtma measures: the model (\"events\" with -e), the CPU, the kernel "
		      "and, with a Top-Down tree, the deepest level reported; the value is "
		      "always 1.");
	strbuf_addstr(sb, "cgtma_run_info{model=\"");
	sb_escaped(sb, run->model ? run->model : "", true);
	strbuf_addstr(sb, "\",cpu_model=\"");
	sb_escaped(sb, run->cpu ? run->cpu : "", true);
	strbuf_addstr(sb, "\",kernel=\"");
	sb_escaped(sb, run->kernel ? run->kernel : "", true);
	strbuf_addstr(sb, "\"");
	/* The level means something only with a Top-Down tree: not with -e or flat metrics. */
	if (run->plan && run->plan->nr_nodes)
		strbuf_addf(sb, ",level=\"%d\"", run->level);
	strbuf_addstr(sb, "} 1\n");
	if (!iv)
		return;

	family_header(sb, "cgtma_interval_seconds", "gauge",
		      "Length of the last interval, the one the gauges describe.");
	strbuf_addf(sb, "cgtma_interval_seconds %.6f\n", iv->interval_s);
	render_exactness(sb, p, iv);
	render_events(sb, p, run);
	if (run->plan) {
		render_tma_family(sb, p, run->plan, false);
		render_tma_family(sb, p, run->plan, true);
	}
	render_noise(sb, p);
	if (iv->has_bpf_stats) {
		family_header(sb, "cgtma_bpf_run_seconds_total", "counter",
			      "Time cgtma's sched_switch BPF program ran in the kernel, since it "
			      "was loaded (kernel BPF statistics): cgtma's own overhead.");
		strbuf_addf(sb, "cgtma_bpf_run_seconds_total %.9f\n", iv->bpf_run_time_ns / 1e9);
		family_header(sb, "cgtma_bpf_runs_total", "counter",
			      "Runs of cgtma's sched_switch BPF program since it was loaded.");
		strbuf_addf(sb, "cgtma_bpf_runs_total %llu\n", (unsigned long long)iv->bpf_run_cnt);
	}
}

/* Makes sb's text the page scrapes get from now on; the buffer is taken, even on failure. */
static int publish(struct prom *p, struct strbuf *sb)
{
	struct MHD_Response *r, *old;
	size_t len;
	char *text = strbuf_detach(sb, &len);

	if (!text)
		return -ENOMEM;
	r = MHD_create_response_from_buffer_with_free_callback(len, text, free);
	if (!r) {
		free(text);
		return -ENOMEM;
	}
	if (MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, PROM_CONTENT_TYPE) !=
	    MHD_YES) {
		MHD_destroy_response(r);
		return -ENOMEM;
	}
	pthread_mutex_lock(&p->lock);
	old = p->page;
	p->page = r;
	p->page_text = text;
	p->page_len = len;
	pthread_mutex_unlock(&p->lock);
	/* Responses are reference counted: one being sent lives until it is sent. */
	if (old)
		MHD_destroy_response(old);
	return 0;
}

/* --- HTTP ---------------------------------------------------------------------------- */

static enum MHD_Result answer_static(struct MHD_Connection *conn, unsigned int status,
				     const char *text, const char *allow)
{
	struct MHD_Response *r;
	enum MHD_Result ret;

	r = MHD_create_response_from_buffer(strlen(text), (void *)text, MHD_RESPMEM_PERSISTENT);
	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain; charset=utf-8");
	if (allow)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, allow);
	ret = MHD_queue_response(conn, status, r);
	MHD_destroy_response(r);
	return ret;
}

/* Runs on libmicrohttpd's thread. */
static enum MHD_Result answer(void *cls, struct MHD_Connection *conn, const char *url,
			      const char *method, const char *version, const char *upload_data,
			      size_t *upload_data_size, void **con_cls)
{
	static int first_call;
	struct prom *p = cls;
	enum MHD_Result ret;

	/* Answered once the request is read whole: an early answer closes the connection. */
	if (!*con_cls) {
		*con_cls = &first_call;
		return MHD_YES;
	}
	if (*upload_data_size) {
		*upload_data_size = 0;	/* a body is not for us: ignore it */
		return MHD_YES;
	}
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return answer_static(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "GET or HEAD only\n",
				     "GET, HEAD");
	if (!strcmp(url, "/"))
		return answer_static(conn, MHD_HTTP_OK, "cgtma: metrics are at /metrics\n", NULL);
	if (strcmp(url, "/metrics"))
		return answer_static(conn, MHD_HTTP_NOT_FOUND, "not found; try /metrics\n", NULL);
	/* Queuing takes a reference: the response outlives a swap that follows. */
	pthread_mutex_lock(&p->lock);
	ret = MHD_queue_response(conn, MHD_HTTP_OK, p->page);
	pthread_mutex_unlock(&p->lock);
	return ret;
}

/* --- [ADDR:]PORT --------------------------------------------------------------------- */

/*
 * PORT, ADDR:PORT or [IPv6]:PORT into host and port; -EINVAL, with the reason printed,
 * when it is none of them.
 */
static int parse_listen(const char *listen, char *host, size_t hostlen, char *port,
			size_t portlen)
{
	const char *colon, *ps;
	size_t hl = 0;
	char *end;
	long v;

	if (listen[0] == '[') {
		const char *close = strchr(listen, ']');

		if (!close || close[1] != ':' || close == listen + 1)
			goto bad;
		hl = close - listen - 1;
		if (hl >= hostlen)
			goto bad;
		memcpy(host, listen + 1, hl);
		ps = close + 2;
	} else {
		colon = strrchr(listen, ':');
		if (colon) {
			hl = colon - listen;
			/* An IPv6 address needs brackets; no address at all is no ADDR. */
			if (!hl || hl >= hostlen || memchr(listen, ':', hl))
				goto bad;
			memcpy(host, listen, hl);
			ps = colon + 1;
		} else {
			hl = strlen(PROM_DEFAULT_ADDR);
			memcpy(host, PROM_DEFAULT_ADDR, hl);
			ps = listen;
		}
	}
	host[hl] = '\0';
	errno = 0;
	v = strtol(ps, &end, 10);
	if (!isdigit((unsigned char)ps[0]) || *end || errno || v < 1 || v > 65535)
		goto bad;
	snprintf(port, portlen, "%ld", v);
	return 0;
bad:
	pr_err("--prometheus '%s': expected [ADDR:]PORT (PORT from 1 to 65535, an IPv6 ADDR in "
	       "brackets)", listen);
	return -EINVAL;
}

/*
 * The static binary takes numeric addresses only: a host name would be looked up through
 * glibc's NSS modules, shared libraries a static binary cannot safely load (getaddrinfo
 * parses a numeric address itself).
 */
#ifdef CGTMA_STATIC
#define PROM_AI_FLAGS (AI_NUMERICSERV | AI_NUMERICHOST)
#define PROM_NAME_HINT " (this static build takes a numeric address)"
#else
#define PROM_AI_FLAGS AI_NUMERICSERV
#define PROM_NAME_HINT ""
#endif

/* A socket listening on host:port, or -errno with the reason printed. */
static int listen_on(struct prom *p, const char *host, const char *port, int *family)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = PROM_AI_FLAGS };
	struct addrinfo *ai = NULL;
	int fd = -1, one = 1, err, gai;

	gai = getaddrinfo(host, port, &hints, &ai);
	if (gai) {
		pr_err("cannot serve Prometheus on %s: %s%s", p->where,
		       gai == EAI_SYSTEM ? strerror(errno) : gai_strerror(gai),
		       gai == EAI_NONAME ? PROM_NAME_HINT : "");
		return -EADDRNOTAVAIL;
	}
	fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		err = -errno;
		goto fail;
	}
	/* A restart finds the port free though the last run's connections linger. */
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, ai->ai_addr, ai->ai_addrlen) || listen(fd, 64)) {
		err = -errno;
		goto fail;
	}
	*family = ai->ai_family;
	freeaddrinfo(ai);
	return fd;
fail:
	pr_err("cannot serve Prometheus on %s: %s", p->where, strerror(-err));
	if (fd >= 0)
		close(fd);
	freeaddrinfo(ai);
	return err;
}

/* --- the sink ------------------------------------------------------------------------ */

static int prom_begin(struct output *o, const struct run *run)
{
	struct prom *p = o->priv;
	struct strbuf sb = STRBUF_INIT;

	p->nr_events = run->nr_events;
	render(&sb, p, run, NULL);
	return publish(p, &sb);
}

static int prom_interval(struct output *o, const struct run *run, const struct interval *iv)
{
	struct prom *p = o->priv;
	struct strbuf sb = STRBUF_INIT;
	struct interval shown = *iv;
	struct scope *kept = NULL;
	int err;

	p->nr_events = run->nr_events;
	/*
	 * Thread rows only with --prometheus-tasks: a series per thread is a cardinality that
	 * few servers want. Left out of a shallow copy (irq scopes sort after them), in order.
	 */
	if (!run->prometheus_tasks) {
		kept = malloc((iv->nr_scopes + 1) * sizeof(*kept));
		if (!kept)
			return -ENOMEM;
		shown.nr_scopes = 0;
		for (int i = 0; i < iv->nr_scopes; i++)
			if (iv->scopes[i].kind != SCOPE_TASK)
				kept[shown.nr_scopes++] = iv->scopes[i];
		shown.scopes = kept;
	}
	p->missed_slices += iv->missed_slices;
	p->inexact_intervals += iv->missed_slices != 0;
	p->missed_max_ns += iv->missed_max_ns;
	p->missed_unbounded += iv->missed_unbounded;
	err = series_update(p, &shown);
	if (!err) {
		render(&sb, p, run, &shown);
		err = publish(p, &sb);
		/* After it no series points into shown. */
		series_drop_removed(p);
	}
	free(kept);
	return err;
}

static void prom_close(struct output *o)
{
	struct prom *p = o->priv;

	if (!p)
		return;
	/* Joins the server thread: no scrape runs after this. */
	if (p->daemon)
		MHD_stop_daemon(p->daemon);
	if (p->page)
		MHD_destroy_response(p->page);
	for (int i = 0; i < p->nr_series; i++)
		series_release(&p->series[i]);
	free(p->series);
	pthread_mutex_destroy(&p->lock);
	free(p);
}

static const struct output_ops prom_ops = {
	.begin = prom_begin,
	.interval = prom_interval,
	/* The summary has no place on the page: counters already hold the run's totals. */
	.close = prom_close,
};

int output_prometheus_open(const char *listen, struct output **op)
{
	char host[256], port[8];
	struct output *o;
	struct prom *p;
	struct strbuf sb = STRBUF_INIT;
	int fd, family = AF_INET, err;

	err = parse_listen(listen, host, sizeof(host), port, sizeof(port));
	if (err)
		return err;
	o = calloc(1, sizeof(*o));
	p = calloc(1, sizeof(*p));
	if (!o || !p) {
		free(o);
		free(p);
		return -ENOMEM;
	}
	pthread_mutex_init(&p->lock, NULL);
	snprintf(p->where, sizeof(p->where), strchr(host, ':') ? "[%s]:%s" : "%s:%s", host, port);
	snprintf(p->name, sizeof(p->name), "prometheus %s", p->where);
	o->ops = &prom_ops;
	o->name = p->name;
	o->priv = p;

	/* Until the first interval ends, a scrape gets an empty page, not an error. */
	err = publish(p, &sb);
	if (err)
		goto fail;

	/*
	 * The socket is ours so that a failure says why (MHD_start_daemon only says that it
	 * failed); MHD closes it when stopped. The server thread inherits the signal mask of
	 * the caller, which keeps SIGINT and friends for the interval loop.
	 */
	fd = listen_on(p, host, port, &family);
	if (fd < 0) {
		err = fd;
		goto fail;
	}
	p->daemon = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO |
					     (family == AF_INET6 ? MHD_USE_IPv6 : 0),
				     0, NULL, NULL, answer, p,
				     MHD_OPTION_LISTEN_SOCKET, (MHD_socket)fd,
				     /* Idle keep-alive and stuck clients go after 10 s. */
				     MHD_OPTION_CONNECTION_TIMEOUT, 10u,
				     MHD_OPTION_CONNECTION_LIMIT, 64u,
				     MHD_OPTION_END);
	if (!p->daemon) {
		err = -EIO;
		close(fd);	/* MHD leaves a socket it was given open when it fails */
		pr_err("cannot serve Prometheus on %s: libmicrohttpd failed to start", p->where);
		goto fail;
	}
	*op = o;
	return 0;
fail:
	/* Freed here, not by output_close(): a sink does not call back into output.c. */
	prom_close(o);
	free(o);
	return err;
}

char *output_prometheus_page(struct output *o)
{
	struct prom *p = o->priv;
	char *copy;

	pthread_mutex_lock(&p->lock);
	copy = malloc(p->page_len + 1);
	if (copy) {
		memcpy(copy, p->page_text, p->page_len);
		copy[p->page_len] = '\0';
	}
	pthread_mutex_unlock(&p->lock);
	return copy;
}
