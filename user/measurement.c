// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/cgtma.h"
#include "cpu.h"
#include "events.h"
#include "log.h"
#include "jsonfile.h"
#include "measurement.h"
#include "scale.h"
#include "strbuf.h"
#include "suggest.h"

static int out_of_memory(void)
{
	pr_err("out of memory");
	return -ENOMEM;
}

/* A notice (or, with "warning: " first, a warning) for measurement_notices(). */
static void keep_notice(struct measurement *m, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void keep_notice(struct measurement *m, const char *fmt, ...)
{
	char line[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	strbuf_addf(&m->notices, "%s\n", line);
}

void measurement_notices(struct measurement *m)
{
	char *line = m->notices.buf;

	for (char *nl; line && (nl = strchr(line, '\n')); line = nl + 1) {
		*nl = '\0';
		pr_notice("%s", line);
	}
	strbuf_release(&m->notices);
}

/* id: this CPU, as far as cpuinfo or the MIDR tell (zeroed when neither does). */
static int load_model(const struct measure_opts *o, const struct cpu_id *id,
		      struct measurement *m)
{
	struct model **mp = &m->model;
	const char *name = o->model, *notice = NULL, *why = NULL;
	int err;

	if (o->model_file) {
		err = model_load_file(o->model_file, mp);
		return err ? json_input_error(err) : 0;
	}
	if (!name) {
		if (!cpu_has_pmu(&why)) {
			keep_notice(m, "no hardware PMU: %s; using the software model 'sw'", why);
			name = "sw";
		} else if (model_match_cpu(id->vendor, id->family, id->model, &name,
					    &notice) == 0) {
			if (notice)
				keep_notice(m, "%s", notice);
		} else {
			char cpu[160];

			cpu_describe(id, cpu, sizeof(cpu));
			keep_notice(m, "no Top-Down model for this CPU (%s): using the generic "
				    "model", cpu);
			name = "generic";
		}
	}
	/* model_load_builtin() has printed what is wrong: one line, not two. */
	err = model_load_builtin(name, mp);
	if (err == -ENOENT)
		return -EINVAL;		/* no such model */
	/* A built-in model that does not parse is cgtma's fault, not the user's. */
	return not_usage(err);
}

/*
 * perf's #slots: --slots, else the PMU's caps/slots, else the width the model documents
 * (caps/slots reads 0 before PMUv3.4 and in most VMs, where perf's Top-Down is NaN).
 */
static int choose_slots(const struct measure_opts *o, struct measurement *m)
{
	int width = model_slots(m->model), slots;

	if (!width && !o->slots)
		return 0;
	if (o->slots) {
		if (log_verbose())
			keep_notice(m, "slots per cycle: %d (--slots)", o->slots);
		return o->slots;
	}
	slots = cpu_pmu_slots();
	if (slots) {
		if (log_verbose())
			keep_notice(m, "slots per cycle: %d (the PMU's caps/slots)", slots);
		return slots;
	}
	if (log_verbose())
		keep_notice(m, "slots per cycle: %d, model %s's documented width (the PMU's "
			    "caps/slots reads 0 or is absent; --slots N sets it)", width,
			    model_name(m->model));
	return width;
}

/* "IPC, CPI, GHz": the plan's default metrics (in a static buffer). */
static const char *default_metric_names(const struct plan *p)
{
	static char names[256];
	size_t at = 0;

	names[0] = '\0';
	for (int i = 0; i < p->nr_metrics && at < sizeof(names); i++)
		if (p->metrics[i].is_default)
			at += snprintf(names + at, sizeof(names) - at, "%s%s", at ? ", " : "",
				       p->metrics[i].name);
	return names;
}

/*
 * Where the metrics' events do not fit the counters beside the tree's, the PMU time-shares
 * the groups: each is counted part of the time and scaled, which the user must know. The
 * default metrics may (Arm's and AMD's level 1 take every counter), and -m's.
 */
static void notice_metrics_groups(struct measurement *m)
{
	const struct plan *p = m->plan;
	int added = p->all.nr_groups - p->base.nr_groups;

	if (p->base.multiplexed && !p->tree.multiplexed)
		keep_notice(m, "the default metrics' events (%s) do not fit the counters beside "
			    "the tree's: the PMU multiplexes %d groups, each counted part of the "
			    "time and scaled (cgtma list-events shows them)",
			    default_metric_names(p), p->base.nr_groups);
	if (!p->all.multiplexed || (p->base.multiplexed && added <= 0))
		return;
	if (!p->base.multiplexed)
		keep_notice(m, "-m: the metrics' events do not fit the counters beside the "
			    "tree's: the PMU multiplexes %d groups, each counted part of the time "
			    "and scaled (cgtma list-events -m shows them)", p->all.nr_groups);
	else
		keep_notice(m, "-m: the metrics add %d event group%s to the %d the PMU already "
			    "multiplexes: each is counted a smaller part of the time (cgtma "
			    "list-events -m shows them)", added, added == 1 ? "" : "s",
			    p->base.nr_groups);
}

/* "a, b, c" from "a,b,c" (in a static buffer). */
static const char *spaced(const char *list)
{
	static char out[512];
	size_t at = 0;

	for (const char *c = list; *c && at + 3 < sizeof(out); c++)
		at += snprintf(out + at, sizeof(out) - at, *c == ',' ? ", " : "%c", *c);
	return out;
}

/* Whether the plan under o with these metrics counts one run's events at most. */
static bool fits_a_run(const struct model *model, const struct model_options *o,
		       const char *metrics)
{
	struct model_options lo = *o;
	struct plan *p;
	bool fits;

	lo.metrics = metrics;
	lo.max_events = 0;
	if (plan_new(model, &lo, &p))
		return false;
	fits = p->nr_events <= o->max_events;
	plan_free(p);
	return fits;
}

/* ", or -l N counts ..." where a lower level makes room, else "" (in a static buffer). */
static const char *lower_level(const struct model *model, const struct model_options *o,
			       const char *what)
{
	static char out[96];
	int level = plan_fitting_level(model, o);

	out[0] = '\0';
	if (level > 0)
		snprintf(out, sizeof(out), "; -l %d counts %s", level, what);
	return out;
}

/*
 * What the plan left out for want of room, said once at start: default metrics that would
 * make the PMU multiplex the tree, and with -m the metric groups beyond one run's events.
 */
static void notice_left_out(struct measurement *m, const struct model_options *o)
{
	const struct plan *p = m->plan;
	const char *left = p->groups_left_out;

	if (p->defaults_left_out)
		keep_notice(m, "%s not counted: %s events would make the PMU multiplex the tree; "
			    "-m counts %s", spaced(p->defaults_left_out),
			    strchr(p->defaults_left_out, ',') ? "their" : "its",
			    strchr(p->defaults_left_out, ',') ? "them" : "it");
	if (!left)
		return;
	keep_notice(m, "warning: -m: every metric needs %d events at level %d, one run counts "
		    "%d: left out the metric groups %s; --metrics=%s counts %s%s",
		    p->nr_events_all, o->level, o->max_events, spaced(left),
		    fits_a_run(m->model, o, left) ? left : "GROUP,...",
		    fits_a_run(m->model, o, left) ? "them" : "some of them at a time",
		    lower_level(m->model, o, "every metric"));
}

/* A plan over one run's events: the user's to change, with the numbers and the way out. */
static int too_many_events(struct measurement *m, const struct model_options *o)
{
	const struct plan *p = m->plan;

	if (o->metrics && *o->metrics && fits_a_run(m->model, o, NULL)) {
		pr_err("--metrics %s: model '%s' at level %d needs %d events with these metrics, "
		       "one run counts at most %d: name fewer metrics or groups (-m alone counts "
		       "the groups that fit)%s", o->metrics, model_name(m->model), o->level,
		       p->nr_events, o->max_events, lower_level(m->model, o, "them"));
		return -EINVAL;
	}
	pr_err("model '%s' at level %d needs %d events, one run counts at most %d%s",
	       model_name(m->model), o->level, p->nr_events, o->max_events,
	       lower_level(m->model, o, "the tree"));
	return -EINVAL;
}

static int plan_from_model(const struct measure_opts *o, struct measurement *m)
{
	struct model_options mo = {};
	struct cpu_id id;
	const char *sysfs;
	char notice[128];
	int err;

	if (cpu_identify(NULL, &id))
		memset(&id, 0, sizeof(id));
	err = load_model(o, &id, m);
	if (err)
		return err;
	m->level = model_level(m->model, o->level, notice, sizeof(notice));
	if (*notice)
		keep_notice(m, "%s", notice);

	if (o->perf_metrics == 1 && !model_has_perf_metrics(m->model)) {
		pr_err("--perf-metrics: model '%s' has no perf-metrics path",
		       model_name(m->model));
		return -EINVAL;
	}
	sysfs = model_perf_metrics_sysfs(m->model);
	m->perf_metrics = o->perf_metrics >= 0 ? o->perf_metrics :
			  model_has_perf_metrics(m->model) && sysfs && cpu_pmu_has_event(sysfs);
	m->smt = o->smt >= 0 ? o->smt : cpu_smt_active();

	if (o->metrics && model_metrics_check(m->model, o->metrics))
		return -EINVAL;
	if (o->metrics && !model_extra_metrics(m->model))
		keep_notice(m, "-m: model '%s' has no metrics beyond those it shows by default",
			    model_name(m->model));
	mo.metrics = o->metrics;
	mo.max_events = CGTMA_MAX_EVENTS;
	mo.spare_tree = true;
	mo.level = model_max_level(m->model) ? m->level : 1;
	mo.perf_metrics = m->perf_metrics;
	mo.smt = m->smt;
	mo.cpu_part = cpu_arm_part(&id);
	mo.cpu_revision = cpu_arm_revision(&id);
	mo.slots = choose_slots(o, m);
	/*
	 * As toplev: the hard-lockup detector keeps a cycles counter on every CPU, pinned (on
	 * Intel the fixed one, so cgtma's own cycles event takes a generic counter).
	 */
	if (o->nmi_watchdog >= 0) {
		mo.nmi_watchdog = o->nmi_watchdog;
	} else if (strcmp(model_vendor(m->model), "generic") != 0 && cpu_nmi_watchdog()) {
		keep_notice(m, "warning: the NMI watchdog holds a counter: one fewer for cgtma "
			    "(echo 0 > /proc/sys/kernel/nmi_watchdog frees it)");
		mo.nmi_watchdog = true;
	}
	err = plan_new(m->model, &mo, &m->plan);
	/*
	 * E2BIG: the level needs more counters than there are, the user's to lower. A model
	 * that plans wrong otherwise (EINVAL) is a failure, as it always was.
	 */
	if (err)
		return err == -E2BIG ? -EINVAL : not_usage(err);
	for (int i = 0; i < m->plan->nr_nodes; i++)
		if (m->plan->nodes[i].split)
			keep_notice(m, "%s is split over groups (%s): its value mixes counts "
				    "multiplexed at different times, marked [split]",
				    m->plan->nodes[i].full_name, m->plan->nodes[i].split_reason);
	for (int i = 0; i < m->plan->nr_metrics; i++)
		if (m->plan->metrics[i].split)
			keep_notice(m, "metric %s is split over groups (%s): its value mixes counts "
				    "multiplexed at different times, marked [split]",
				    m->plan->metrics[i].name, m->plan->metrics[i].split_reason);
	if (m->plan->nr_events > CGTMA_MAX_EVENTS)
		return too_many_events(m, &mo);
	notice_left_out(m, &mo);
	notice_metrics_groups(m);
	m->nr_events = m->plan->nr_events;
	m->names = calloc(m->nr_events, sizeof(*m->names));
	m->group = calloc(m->nr_events, sizeof(*m->group));
	if (!m->names || !m->group)
		return out_of_memory();
	for (int i = 0; i < m->nr_events; i++) {
		m->names[i] = strdup(m->plan->events[i].name);
		if (!m->names[i])
			return out_of_memory();
		m->group[i] = m->plan->events[i].group;
	}
	return 0;
}

/* Each event's perf_event_attr; errors name the event (and the model). */
static int encode_events(struct measurement *m)
{
	char err[EVENT_ERR_LEN];

	m->attrs = calloc(m->nr_events, sizeof(*m->attrs));
	if (!m->attrs)
		return out_of_memory();
	for (int i = 0; i < m->nr_events; i++) {
		const char *spec = m->plan ? m->plan->events[i].encoding : m->names[i];

		int ret = event_parse(spec, &m->attrs[i], err, sizeof(err));

		if (ret && m->plan) {
			pr_err("event '%s' of model '%s' (%s): %s", m->names[i],
			       model_name(m->model), spec, err);
			return -EINVAL;
		}
		if (ret) {
			char close[SUGGEST_LEN] = "";
			struct suggest sg;

			/* A name it does not know: the user's typo, more often than not. */
			if (ret == -ENOENT) {
				suggest_init(&sg, spec);
				if (event_suggest(spec, &sg) == 0 && suggest_found(&sg))
					suggest_format(&sg, close, sizeof(close));
				suggest_release(&sg);
			}
			pr_err("event '%s': %s%s%s", spec, err, *close ? "; " : "", close);
			return -EINVAL;
		}
	}
	return 0;
}

/* On a core PMU (not perf's software, tracepoint or generic hardware types). */
static bool core_pmu_event(const struct perf_event_attr *a)
{
	return a->type != PERF_TYPE_SOFTWARE && a->type != PERF_TYPE_TRACEPOINT &&
	       a->type != PERF_TYPE_HARDWARE && a->type != PERF_TYPE_HW_CACHE;
}

/* Intel's perf-metrics events (topdown-retiring ... topdown-mem-bound): event 0, umask 0x8N. */
static bool topdown_metric(const struct perf_event_attr *a)
{
	return core_pmu_event(a) && (a->config & 0xff) == 0 &&
	       (a->config >> 8 & 0xff) >= 0x80 && (a->config >> 8 & 0xff) <= 0x87;
}

static bool topdown_slots(const struct perf_event_attr *a)
{
	return core_pmu_event(a) && (a->config & 0xffff) == 0x0400;
}

/*
 * The kernel opens perf-metrics events only in a group led by the slots event (EINVAL
 * otherwise). As perf does, -e's metrics events go into one group led by slots: the one
 * the list names, or one added ("cpu/slots/", with the first metric's exclusions). The group
 * takes the place of its first member; the other events stay as they were, each alone.
 */
static int group_topdown(struct measurement *m)
{
	int n = m->nr_events, leader = -1, first = -1, nr_metrics = 0, k = 0, g = 0;
	struct perf_event_attr *attrs;
	char **names;
	int *group;
	bool done = false;

	for (int i = 0; i < n; i++) {
		if (topdown_metric(&m->attrs[i])) {
			nr_metrics++;
			if (first < 0)
				first = i;
		}
	}
	if (!nr_metrics)
		return 0;
	for (int i = 0; i < n && leader < 0; i++)
		if (topdown_slots(&m->attrs[i]) && m->attrs[i].type == m->attrs[first].type)
			leader = i;
	if (leader < 0 && n + 1 > CGTMA_MAX_EVENTS) {
		pr_err("-e: %d events and the slots leader they need; cgtma counts at most %d "
		       "per run", n, CGTMA_MAX_EVENTS);
		return -EINVAL;
	}
	attrs = calloc(n + 1, sizeof(*attrs));
	names = calloc(n + 1, sizeof(*names));
	group = calloc(n + 1, sizeof(*group));
	if (!attrs || !names || !group) {
		free(attrs);
		free(names);
		free(group);
		return out_of_memory();
	}
	for (int i = 0; i < n; i++) {
		if (i == leader || topdown_metric(&m->attrs[i])) {
			if (done)
				continue;
			done = true;
			/* the leader, then every metrics event in the list's order */
			if (leader >= 0) {
				attrs[k] = m->attrs[leader];
				names[k] = m->names[leader];
			} else {
				attrs[k] = m->attrs[first];
				attrs[k].config = 0x0400;
				names[k] = strdup("cpu/slots/");
				if (!names[k]) {
					free(attrs);
					free(names);
					free(group);
					return out_of_memory();
				}
			}
			group[k++] = g;
			for (int j = 0; j < n; j++) {
				if (topdown_metric(&m->attrs[j])) {
					attrs[k] = m->attrs[j];
					names[k] = m->names[j];
					group[k++] = g;
				}
			}
			g++;
			continue;
		}
		attrs[k] = m->attrs[i];
		names[k] = m->names[i];
		group[k++] = g++;
	}
	free(m->attrs);
	free(m->names);
	free(m->group);
	m->attrs = attrs;
	m->names = names;
	m->group = group;
	m->nr_events = k;
	return 0;
}

int measurement_setup(const struct measure_opts *o, struct measurement *m)
{
	bool forced;
	int n, ret;

	if (o->events) {
		n = event_list_split(o->events, &m->names);
		if (n == -EINVAL) {
			pr_err("-e '%s': empty event in the list", o->events);
			return -EINVAL;
		}
		if (n < 0)
			return out_of_memory();
		m->nr_events = n;
		/* Each event names a JSON key and a Prometheus series: twice would clash. */
		for (int i = 0; i < n; i++)
			for (int j = 0; j < i; j++)
				if (!strcmp(m->names[i], m->names[j])) {
					pr_err("-e: '%s' is given twice", m->names[i]);
					return -EINVAL;
				}
		if (n > CGTMA_MAX_EVENTS) {
			pr_err("-e: %d events; cgtma counts at most %d per run", n,
			       CGTMA_MAX_EVENTS);
			return -EINVAL;
		}
		/* Like perf stat: each event on its own, multiplexed by the kernel as needed. */
		m->group = calloc(n, sizeof(*m->group));
		if (!m->group)
			return out_of_memory();
		for (int i = 0; i < n; i++)
			m->group[i] = i;
	} else {
		ret = plan_from_model(o, m);
		if (ret)
			return ret;
	}

	/*
	 * A model's libpfm4 names are those of one PMU table: encode with that table whatever
	 * libpfm4 would detect here (it misses Emerald Rapids and most Zen 4, and knows nothing
	 * of a model picked for another machine). A user's own LIBPFM_FORCE_PMU wins.
	 */
	forced = m->model && model_libpfm4_pmu(m->model) && !getenv("LIBPFM_FORCE_PMU");
	if (forced)
		setenv("LIBPFM_FORCE_PMU", model_libpfm4_pmu(m->model), 0);
	ret = encode_events(m);
	/* Only for the encoding: -- COMMAND must not inherit it. */
	if (forced)
		unsetenv("LIBPFM_FORCE_PMU");
	if (!ret && !m->plan)
		ret = group_topdown(m);
	return ret;
}

void measurement_release(struct measurement *m)
{
	plan_free(m->plan);
	model_free(m->model);
	if (m->names)
		for (int i = 0; i < m->nr_events; i++)
			free(m->names[i]);
	free(m->names);
	free(m->attrs);
	free(m->group);
	strbuf_release(&m->notices);
}

void measurement_say_never_ran(const struct measurement *m, const struct cgtma_count *totals,
			       int nr_cpus)
{
	int n = m->nr_events;
	bool *never = calloc(n + 1, sizeof(*never));
	struct strbuf sb = STRBUF_INIT;

	if (!never || !count_never_ran(totals, nr_cpus, n, never)) {
		free(never);
		return;
	}
	for (int i = 0; i < n; i++) {
		bool seen = false;

		for (int j = 0; j < i && !seen; j++)
			seen = never[j] && !strcmp(m->names[j], m->names[i]);
		if (never[i] && !seen)
			strbuf_addf(&sb, "%s%s", sb.len ? ", " : "", m->names[i]);
	}
	pr_warn("never counted in this run (enabled, never on a counter: other perf users' "
		"pinned events hold them, or the group cannot be scheduled beside those): %s",
		sb.len ? sb.buf : "?");
	strbuf_release(&sb);
	free(never);
}
