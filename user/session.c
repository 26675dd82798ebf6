// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cgroups.h"
#include "collector.h"
#include "cpu.h"
#include "events.h"
#include "log.h"
#include "model.h"
#include "output.h"
#include "report.h"
#include "scale.h"
#include "session.h"

#define EXIT_USAGE 2

/* What is counted: the model's plan, or the -e list. */
struct measurement {
	struct model *model;
	struct plan *plan;
	int nr_events;
	char **names;
	struct perf_event_attr *attrs;
	int *group;
	bool perf_metrics;
	bool smt;
	int level;
};

/* A cgroup being counted, or one that was and is kept for the summary. */
struct tracked {
	__u64 id;
	char *path;
	bool present;			/* found by this interval's rescan */
	bool gone;			/* removed: reported once, kept for the summary */
	bool read;			/* its counts were read this interval */
	struct cgtma_count *prev;	/* cumulative at the last read: per event, or per CPU */
	struct cgtma_count *delta;	/* this interval, same shape */
	struct cgtma_count *total;	/* the run, same shape */
};

struct session {
	const struct session_opts *o;
	struct measurement m;
	struct run run;
	struct collector *col;
	char root[4096];		/* cgroup v2 mount */
	char **patterns;		/* canonical -G paths and globs */
	int nr_patterns;
	int nr_cpus;
	int stride;			/* per_cpu ? nr_cpus : 1 */

	struct tracked *tracked;
	int nr_tracked, cap_tracked;
	int *slots;			/* open addressing: id -> index + 1 */
	int nr_slots;

	struct cgtma_count *cpu_now, *cpu_prev, *cpu_delta, *cpu_total;	/* per CPU */
	struct output *outputs[4];
	int nr_outputs;
	double run_start_mono;
	double last_mono;
	pid_t child;
	int child_status;
	bool child_done;
};

static double mono_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double real_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* --- what to count ------------------------------------------------------------------- */

static int load_model(const struct session_opts *o, struct model **mp)
{
	const char *name = o->model, *notice = NULL, *why = NULL;
	struct cpu_id id;
	int err;

	if (o->model_file)
		return model__load_file(o->model_file, mp) ? EXIT_USAGE : 0;
	if (!name) {
		if (!cpu_has_pmu(&why)) {
			pr_notice("no hardware PMU: %s; using the software model 'sw'", why);
			name = "sw";
		} else if (cpu_identify(NULL, &id) == 0 &&
			   model__match_cpu(id.vendor, id.family, id.model, &name, &notice) == 0) {
			if (notice)
				pr_notice("%s", notice);
		} else {
			pr_notice("no Top-Down model for this CPU (%s family %d model %d): using "
				  "the generic model", id.vendor, id.family, id.model);
			name = "generic";
		}
	}
	err = model__load_builtin(name, mp);
	if (err == -ENOENT) {
		const char *const *names = model__builtin_names();
		char list[512] = "";

		for (int i = 0; names[i]; i++)
			snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s",
				 i ? ", " : "", names[i]);
		pr_err("unknown model '%s' (built-in models: %s)", name, list);
		return EXIT_USAGE;
	}
	return err ? EXIT_FAILURE : 0;
}

static int plan_from_model(const struct session_opts *o, struct measurement *m)
{
	struct model_options mo = {};
	const char *sysfs;
	int err, max_level;

	err = load_model(o, &m->model);
	if (err)
		return err;
	max_level = model__max_level(m->model);
	m->level = o->level ? o->level : 1;
	if (max_level && m->level > max_level) {
		pr_err("level %d: model '%s' has levels 1 to %d", m->level,
		       model__name(m->model), max_level);
		return EXIT_USAGE;
	}

	if (o->perf_metrics == 1 && !model__has_perf_metrics(m->model)) {
		pr_err("--perf-metrics: model '%s' has no perf-metrics path",
		       model__name(m->model));
		return EXIT_USAGE;
	}
	sysfs = model__perf_metrics_sysfs(m->model);
	m->perf_metrics = o->perf_metrics >= 0 ? o->perf_metrics :
			  model__has_perf_metrics(m->model) && sysfs && cpu_pmu_has_event(sysfs);
	m->smt = o->smt >= 0 ? o->smt : cpu_smt_active();

	mo.level = max_level ? m->level : 1;
	mo.perf_metrics = m->perf_metrics;
	mo.smt = m->smt;
	/* As toplev: the hard-lockup detector keeps one counter on every CPU. */
	if (strcmp(model__vendor(m->model), "generic") != 0 && cpu_nmi_watchdog()) {
		pr_warn("the NMI watchdog holds a counter: one fewer for cgtma "
			"(echo 0 > /proc/sys/kernel/nmi_watchdog frees it)");
		mo.reserved_counters = 1;
	}
	err = plan__new(m->model, &mo, &m->plan);
	if (err)
		return err == -E2BIG ? EXIT_USAGE : EXIT_FAILURE;
	if (m->plan->nr_events > CGTMA_MAX_EVENTS) {
		pr_err("model '%s' at level %d needs %d events; cgtma counts at most %d per run "
		       "(use a lower level)", model__name(m->model), m->level, m->plan->nr_events,
		       CGTMA_MAX_EVENTS);
		return EXIT_USAGE;
	}
	m->nr_events = m->plan->nr_events;
	m->names = calloc(m->nr_events, sizeof(*m->names));
	m->group = calloc(m->nr_events, sizeof(*m->group));
	if (!m->names || !m->group)
		return EXIT_FAILURE;
	for (int i = 0; i < m->nr_events; i++) {
		m->names[i] = strdup(m->plan->events[i].name);
		if (!m->names[i])
			return EXIT_FAILURE;
		m->group[i] = m->plan->events[i].group;
	}
	return 0;
}

static int measurement_setup(const struct session_opts *o, struct measurement *m)
{
	char err[EVENT_ERR_LEN];
	int n, ret;

	if (o->events) {
		n = event_list_split(o->events, &m->names);
		if (n == -EINVAL) {
			pr_err("-e '%s': empty event in the list", o->events);
			return EXIT_USAGE;
		}
		if (n < 0)
			return EXIT_FAILURE;
		m->nr_events = n;
		if (n > CGTMA_MAX_EVENTS) {
			pr_err("-e: %d events; cgtma counts at most %d per run", n,
			       CGTMA_MAX_EVENTS);
			return EXIT_USAGE;
		}
		/* Like perf stat: each event on its own, multiplexed by the kernel as needed. */
		m->group = calloc(n, sizeof(*m->group));
		if (!m->group)
			return EXIT_FAILURE;
		for (int i = 0; i < n; i++)
			m->group[i] = i;
	} else {
		ret = plan_from_model(o, m);
		if (ret)
			return ret;
	}

	m->attrs = calloc(m->nr_events, sizeof(*m->attrs));
	if (!m->attrs)
		return EXIT_FAILURE;
	for (int i = 0; i < m->nr_events; i++) {
		const char *spec = m->plan ? m->plan->events[i].encoding : m->names[i];

		if (event_parse(spec, &m->attrs[i], err, sizeof(err))) {
			if (m->plan)
				pr_err("event '%s' of model '%s' (%s): %s", m->names[i],
				       model__name(m->model), spec, err);
			else
				pr_err("event '%s': %s", spec, err);
			return EXIT_USAGE;
		}
	}
	return 0;
}

static void measurement_release(struct measurement *m)
{
	plan__free(m->plan);
	model__free(m->model);
	if (m->names)
		for (int i = 0; i < m->nr_events; i++)
			free(m->names[i]);
	free(m->names);
	free(m->attrs);
	free(m->group);
}

/* --- which cgroups ------------------------------------------------------------------- */

static int patterns_setup(struct session *s, __u64 *levels, __u32 *max_level)
{
	const struct session_opts *o = s->o;
	char path[4096], err[256];
	int ret;

	*levels = 0;
	*max_level = 0;
	if (!o->nr_cgroups && !o->all_cgroups)
		return 0;
	ret = cgroup_v2_root(s->root, sizeof(s->root));
	if (ret) {
		pr_err("cgroup v2 is not mounted (no cgroup2 entry in /proc/self/mountinfo)");
		return EXIT_FAILURE;
	}
	s->patterns = calloc(o->nr_cgroups + 1, sizeof(*s->patterns));
	if (!s->patterns)
		return EXIT_FAILURE;
	for (int i = 0; i < o->nr_cgroups; i++) {
		__u64 id;
		int level;

		ret = cgroup_normalize(s->root, o->cgroups[i], path, sizeof(path), err, sizeof(err));
		if (ret) {
			pr_err("cgroup '%s': %s", o->cgroups[i],
			       ret == -EINVAL ? err : strerror(-ret));
			return EXIT_USAGE;
		}
		level = cgroup_level(path);
		if (level > CGTMA_MAX_LEVEL) {
			pr_err("cgroup '%s' is %d levels deep; cgtma tracks up to %d", path, level,
			       CGTMA_MAX_LEVEL);
			return EXIT_USAGE;
		}
		if (!cgroup_is_pattern(path)) {
			ret = cgroup_id(s->root, path, &id);
			if (ret) {
				pr_err("cannot open cgroup '%s%s': %s", s->root,
				       strcmp(path, "/") ? path : "", strerror(-ret));
				return EXIT_USAGE;
			}
		}
		s->patterns[s->nr_patterns] = strdup(path);
		if (!s->patterns[s->nr_patterns])
			return EXIT_FAILURE;
		s->nr_patterns++;
		*levels |= 1ULL << level;
		if ((__u32)level > *max_level)
			*max_level = level;
	}
	if (o->all_cgroups) {
		for (int l = 1; l <= o->depth; l++)
			*levels |= 1ULL << l;
		if ((__u32)o->depth > *max_level)
			*max_level = o->depth;
	}
	return 0;
}

static bool wanted(const struct session *s, const char *path)
{
	if (s->o->all_cgroups && cgroup_level(path) <= s->o->depth && strcmp(path, "/") != 0)
		return true;
	for (int i = 0; i < s->nr_patterns; i++)
		if (cgroup_match(s->patterns[i], path))
			return true;
	return false;
}

static unsigned int slot_of(const struct session *s, __u64 id)
{
	return (unsigned int)((id * 0x9E3779B97F4A7C15ULL) >> 32) & (s->nr_slots - 1);
}

static int find_tracked(const struct session *s, __u64 id)
{
	if (!s->nr_slots)
		return -1;
	for (unsigned int h = slot_of(s, id);; h = (h + 1) & (s->nr_slots - 1)) {
		if (!s->slots[h])
			return -1;
		if (s->tracked[s->slots[h] - 1].id == id)
			return s->slots[h] - 1;
	}
}

static void slot_insert(struct session *s, int idx)
{
	unsigned int h = slot_of(s, s->tracked[idx].id);

	while (s->slots[h])
		h = (h + 1) & (s->nr_slots - 1);
	s->slots[h] = idx + 1;
}

/* Keeps the table at most half full. */
static int grow_slots(struct session *s)
{
	int n = 64;

	while (n < 4 * s->nr_tracked)
		n *= 2;
	free(s->slots);
	s->slots = calloc(n, sizeof(*s->slots));
	if (!s->slots)
		return -ENOMEM;
	s->nr_slots = n;
	for (int i = 0; i < s->nr_tracked; i++)
		slot_insert(s, i);
	return 0;
}

/* Starts tracking id; in the BPF map too, unless the mkdir hook put it there. */
static int track(struct session *s, __u64 id, const char *path, bool in_map)
{
	size_t shape = (size_t)s->stride * s->m.nr_events;
	struct tracked *t;
	int err;

	if (!in_map) {
		err = collector__track(s->col, id);
		if (err == -E2BIG) {
			pr_warn("cannot track cgroup '%s': --max-cgroups %d reached", path,
				s->o->max_cgroups);
			return 0;
		}
		if (err) {
			pr_err("cannot track cgroup '%s': %s", path, strerror(-err));
			return err;
		}
	}
	if (s->nr_tracked == s->cap_tracked) {
		int cap = s->cap_tracked ? 2 * s->cap_tracked : 64;
		struct tracked *nt = realloc(s->tracked, cap * sizeof(*nt));

		if (!nt)
			return -ENOMEM;
		s->tracked = nt;
		s->cap_tracked = cap;
	}
	t = &s->tracked[s->nr_tracked];
	memset(t, 0, sizeof(*t));
	t->id = id;
	t->path = strdup(path);
	t->prev = calloc(shape, sizeof(*t->prev));
	t->delta = calloc(shape, sizeof(*t->delta));
	t->total = calloc(shape, sizeof(*t->total));
	if (!t->path || !t->prev || !t->delta || !t->total) {
		free(t->path);
		free(t->prev);
		free(t->delta);
		free(t->total);
		return -ENOMEM;
	}
	t->present = true;
	s->nr_tracked++;
	if (2 * s->nr_tracked > s->nr_slots)
		return grow_slots(s);
	slot_insert(s, s->nr_tracked - 1);
	return 0;
}

static int rescan_cb(const char *path, __u64 id, void *ctx)
{
	struct session *s = ctx;
	int i = find_tracked(s, id);

	if (i < 0)
		return track(s, id, path, false);
	if (!s->tracked[i].gone) {
		s->tracked[i].present = true;
		/* v2 cgroups can be renamed in place. */
		if (strcmp(s->tracked[i].path, path) != 0) {
			char *p = strdup(path);

			if (!p)
				return -ENOMEM;
			free(s->tracked[i].path);
			s->tracked[i].path = p;
		}
	}
	return 0;
}

/*
 * Finds what the patterns match now. A tracked cgroup that no longer matches is gone. The
 * root ("-G /") is never gone.
 */
static int rescan(struct session *s)
{
	int err = 0;

	for (int i = 0; i < s->nr_tracked; i++)
		s->tracked[i].present = false;
	for (int i = 0; i < s->nr_patterns && !err; i++)
		err = cgroup_expand(s->root, s->patterns[i], rescan_cb, s);
	if (!err && s->o->all_cgroups)
		err = cgroup_walk(s->root, s->o->depth, rescan_cb, s);
	if (err) {
		/* Do not mistake a failed scan for removals. */
		for (int i = 0; i < s->nr_tracked; i++)
			s->tracked[i].present = true;
		pr_warn("cannot rescan cgroups under %s: %s", s->root, strerror(-err));
	}
	return 0;
}

/* Cgroups born since the last interval, counted by the BPF side since their mkdir. */
static int adopt_new_cgroups(struct session *s)
{
	struct cgtma_new_cgroup n;
	int err;

	while (collector__pop_new_cgroup(s->col, &n) == 0) {
		n.path[sizeof(n.path) - 1] = '\0';
		if (find_tracked(s, n.id) >= 0)
			continue;
		if (!wanted(s, n.path)) {
			err = collector__untrack(s->col, n.id);
			if (err)
				return err;
			continue;
		}
		err = track(s, n.id, n.path, true);
		if (err)
			return err;
	}
	return 0;
}

/* --- reading ------------------------------------------------------------------------- */

static void take_deltas(struct session *s, struct cgtma_count *prev, struct cgtma_count *delta,
			struct cgtma_count *total, const struct cgtma_count *per_cpu)
{
	int n = s->m.nr_events;

	if (s->o->per_cpu) {
		for (int c = 0; c < s->nr_cpus; c++)
			for (int i = 0; i < n; i++) {
				const struct cgtma_count *now = &per_cpu[c * n + i];

				count_delta(&delta[c * n + i], now, &prev[c * n + i]);
				count_add(&total[c * n + i], &delta[c * n + i]);
				prev[c * n + i] = *now;
			}
		return;
	}
	for (int i = 0; i < n; i++) {
		struct cgtma_count now = {};

		for (int c = 0; c < s->nr_cpus; c++)
			count_add(&now, &per_cpu[c * n + i]);
		count_delta(&delta[i], &now, &prev[i]);
		count_add(&total[i], &delta[i]);
		prev[i] = now;
	}
}

static int read_cgroup_cb(__u64 id, const struct cgtma_count *per_cpu, void *ctx)
{
	struct session *s = ctx;
	int i = find_tracked(s, id);

	/* Unknown: the mkdir hook added it after we emptied new_cgroups; next time. */
	if (i < 0 || s->tracked[i].gone)
		return 0;
	take_deltas(s, s->tracked[i].prev, s->tracked[i].delta, s->tracked[i].total, per_cpu);
	s->tracked[i].read = true;
	return 0;
}

static int read_counts(struct session *s)
{
	int n = s->m.nr_events, err;

	err = collector__read_cpus(s->col, s->cpu_now);
	if (err) {
		pr_err("cannot read the per-CPU counts: %s", strerror(-err));
		return err;
	}
	for (int c = 0; c < s->nr_cpus; c++)
		for (int i = 0; i < n; i++) {
			count_delta(&s->cpu_delta[c * n + i], &s->cpu_now[c * n + i],
				    &s->cpu_prev[c * n + i]);
			count_add(&s->cpu_total[c * n + i], &s->cpu_delta[c * n + i]);
		}
	memcpy(s->cpu_prev, s->cpu_now, sizeof(*s->cpu_now) * s->nr_cpus * n);

	for (int i = 0; i < s->nr_tracked; i++)
		s->tracked[i].read = false;
	err = collector__read_cgroups(s->col, read_cgroup_cb, s);
	if (err)
		pr_err("cannot read the cgroup counts: %s", strerror(-err));
	return err;
}

/* --- building intervals ------------------------------------------------------------- */

/* System, CPU and cgroup scopes from per-CPU arrays (cpu) and per-cgroup arrays. */
static int build_interval(struct session *s, struct interval *iv, bool totals)
{
	const struct cgtma_count *cpu = totals ? s->cpu_total : s->cpu_delta;
	int n = s->m.nr_events;
	struct scope *sc;

	sc = interval_add_scope(iv, &s->run, SCOPE_SYSTEM, NULL, -1);
	if (!sc)
		return -ENOMEM;
	for (int c = 0; c < s->nr_cpus; c++)
		for (int i = 0; i < n; i++)
			count_add(&sc->sum[i], &cpu[c * n + i]);
	if (s->o->per_cpu) {
		for (int c = 0; c < s->nr_cpus; c++) {
			if (!collector__cpu_online(s->col, c))
				continue;
			sc = interval_add_scope(iv, &s->run, SCOPE_CPU, NULL, c);
			if (!sc)
				return -ENOMEM;
			memcpy(sc->sum, &cpu[c * n], n * sizeof(*sc->sum));
		}
	}

	for (int t = 0; t < s->nr_tracked; t++) {
		struct tracked *tr = &s->tracked[t];
		const struct cgtma_count *v = totals ? tr->total : tr->delta;

		/* An interval reports live cgroups and those gone in it, once. */
		if (!totals && (tr->gone || !tr->read))
			continue;
		sc = interval_add_scope(iv, &s->run, SCOPE_CGROUP, tr->path, -1);
		if (!sc)
			return -ENOMEM;
		sc->removed = !totals && !tr->present;
		if (!s->o->per_cpu) {
			memcpy(sc->sum, v, n * sizeof(*sc->sum));
			continue;
		}
		for (int c = 0; c < s->nr_cpus; c++)
			for (int i = 0; i < n; i++)
				count_add(&sc->sum[i], &v[c * n + i]);
		for (int c = 0; c < s->nr_cpus; c++) {
			struct scope *pc;

			if (!collector__cpu_online(s->col, c))
				continue;
			pc = interval_add_scope(iv, &s->run, SCOPE_CGROUP, tr->path, c);
			if (!pc)
				return -ENOMEM;
			pc->removed = sc->removed;
			memcpy(pc->sum, &v[c * n], n * sizeof(*pc->sum));
		}
	}
	interval_sort(iv);
	return report_derive(&s->run, iv);
}

static void emit(struct session *s, const struct interval *iv)
{
	for (int i = 0; i < s->nr_outputs; i++) {
		struct output *o = s->outputs[i];
		int (*fn)(struct output *, const struct run *, const struct interval *) =
			iv->summary ? o->ops->summary : o->ops->interval;
		int err = fn ? fn(o, &s->run, iv) : 0;

		if (err)
			pr_err("output %s: %s", o->name, strerror(-err));
	}
}

/* Ends an interval: flush the running slices, read, report. */
static int do_interval(struct session *s)
{
	struct interval iv = {};
	double now;
	int err;

	err = collector__flush(s->col);
	if (err)
		return err;
	now = mono_now();
	iv.time = real_now();
	iv.interval_s = now - s->last_mono;
	s->last_mono = now;

	if (s->nr_patterns || s->o->all_cgroups) {
		err = adopt_new_cgroups(s);
		if (!err)
			err = rescan(s);
		if (err)
			return err;
	}
	err = read_counts(s);
	if (err)
		return err;
	err = build_interval(s, &iv, false);
	if (err) {
		pr_err("cannot compute the interval: %s", strerror(-err));
		interval_free(&iv);
		return err;
	}
	emit(s, &iv);
	interval_free(&iv);

	/* Gone cgroups were reported once; stop counting them. */
	for (int t = 0; t < s->nr_tracked; t++) {
		struct tracked *tr = &s->tracked[t];

		if (!tr->gone && !tr->present) {
			tr->gone = true;
			collector__untrack(s->col, tr->id);
		}
	}
	return 0;
}

static void emit_summary(struct session *s)
{
	struct interval iv = { .summary = true };

	iv.time = real_now();
	iv.interval_s = s->last_mono - s->run_start_mono;
	if (build_interval(s, &iv, true) == 0)
		emit(s, &iv);
	interval_free(&iv);
}

/* --- start, loop, stop -------------------------------------------------------------- */

static int initial_scan_cb(const char *path, __u64 id, void *ctx)
{
	struct session *s = ctx;

	return find_tracked(s, id) >= 0 ? 0 : track(s, id, path, false);
}

static bool pattern_matches_tracked(const struct session *s, const char *pattern)
{
	for (int t = 0; t < s->nr_tracked; t++)
		if (cgroup_match(pattern, s->tracked[t].path))
			return true;
	return false;
}

static int start_tracking(struct session *s)
{
	int err = 0;

	for (int i = 0; i < s->nr_patterns && !err; i++) {
		err = cgroup_expand(s->root, s->patterns[i], initial_scan_cb, s);
		/* A glob matching nothing yet is fine: containers come and go. */
		if (!err && cgroup_is_pattern(s->patterns[i]) &&
		    !pattern_matches_tracked(s, s->patterns[i]))
			pr_warn("'%s' matches no cgroup yet; watching for it", s->patterns[i]);
	}
	if (!err && s->o->all_cgroups)
		err = cgroup_walk(s->root, s->o->depth, initial_scan_cb, s);
	if (err)
		pr_err("cannot list cgroups under %s: %s", s->root, strerror(-err));
	return err;
}

/* Counting starts now: take every cumulative value as the zero point. */
static int baseline(struct session *s)
{
	int err = collector__flush(s->col);

	if (!err)
		err = read_counts(s);
	if (err)
		return err;
	memset(s->cpu_total, 0, sizeof(*s->cpu_total) * s->nr_cpus * s->m.nr_events);
	for (int t = 0; t < s->nr_tracked; t++)
		memset(s->tracked[t].total, 0,
		       sizeof(*s->tracked[t].total) * s->stride * s->m.nr_events);
	s->run_start_mono = s->last_mono = mono_now();
	s->run.start_time = real_now();
	return 0;
}

/* Runs the command once counting has started, as perf stat does. */
static int start_command(struct session *s, const sigset_t *old_mask)
{
	int pipefd[2], child_err = 0;
	ssize_t n;

	if (pipe2(pipefd, O_CLOEXEC)) {
		pr_err("cannot create a pipe: %s", strerror(errno));
		return -errno;
	}
	s->child = fork();
	if (s->child < 0) {
		pr_err("cannot fork: %s", strerror(errno));
		return -errno;
	}
	if (s->child == 0) {
		int e;

		close(pipefd[0]);
		sigprocmask(SIG_SETMASK, old_mask, NULL);
		execvp(s->o->command[0], s->o->command);
		e = errno;
		if (write(pipefd[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(pipefd[1]);
	/* The pipe closes on a successful exec; an errno arrives when it failed. */
	n = read(pipefd[0], &child_err, sizeof(child_err));
	close(pipefd[0]);
	if (n == sizeof(child_err)) {
		waitpid(s->child, NULL, 0);
		s->child = 0;
		pr_err("cannot run '%s': %s", s->o->command[0], strerror(child_err));
		return -child_err;
	}
	return 0;
}

static bool reap_child(struct session *s)
{
	int status;

	if (s->child > 0 && waitpid(s->child, &status, WNOHANG) == s->child) {
		s->child_status = status;
		s->child_done = true;
		return true;
	}
	return false;
}

static int loop(struct session *s, const sigset_t *waitset)
{
	double interval = s->o->interval_ms / 1000.0;
	double end = s->o->duration_s > 0 ? s->run_start_mono + s->o->duration_s : INFINITY;
	double next = s->run_start_mono + interval;

	for (;;) {
		double deadline = next < end ? next : end, now = mono_now();
		bool stop = false;
		struct timespec ts;
		int sig;

		if (deadline > now) {
			double left = deadline - now;

			ts.tv_sec = (time_t)left;
			ts.tv_nsec = (long)((left - ts.tv_sec) * 1e9);
			sig = sigtimedwait(waitset, NULL, &ts);
			if (sig < 0 && errno == EINTR)
				continue;
			if (sig == SIGCHLD) {
				if (!reap_child(s))
					continue;	/* stopped or continued, not gone */
				stop = true;
			} else if (sig > 0) {
				stop = true;	/* SIGINT, SIGTERM, SIGHUP */
			}
		}
		if (mono_now() >= end)
			stop = true;
		if (do_interval(s))
			return EXIT_FAILURE;
		if (stop)
			return 0;
		next += interval;
		/* Late by more than an interval (a stopped process): do not catch up in bursts. */
		if (next < mono_now())
			next = mono_now() + interval;
	}
}

static int outputs_open(struct session *s)
{
	int err = s->o->json ? output_json_open(stdout, &s->outputs[0]) :
			       output_text_open(stdout, &s->outputs[0]);

	if (err)
		return err;
	s->nr_outputs = 1;
	return 0;
}

static void session_release(struct session *s)
{
	for (int i = 0; i < s->nr_outputs; i++)
		output_close(s->outputs[i]);
	collector__destroy(s->col);
	for (int t = 0; t < s->nr_tracked; t++) {
		free(s->tracked[t].path);
		free(s->tracked[t].prev);
		free(s->tracked[t].delta);
		free(s->tracked[t].total);
	}
	free(s->tracked);
	free(s->slots);
	for (int i = 0; i < s->nr_patterns; i++)
		free(s->patterns[i]);
	free(s->patterns);
	free(s->cpu_now);
	free(s->cpu_prev);
	free(s->cpu_delta);
	free(s->cpu_total);
	measurement_release(&s->m);
}

int session_run(const struct session_opts *o)
{
	struct session s = { .o = o };
	struct collector_opts co = {};
	sigset_t block, old;
	struct utsname uts;
	struct cpu_id id = {};
	char host[256] = "";
	int ret, err;

	/* Signals are taken synchronously between intervals: nothing is cut halfway. */
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGHUP);
	sigaddset(&block, SIGCHLD);
	sigprocmask(SIG_BLOCK, &block, &old);

	ret = measurement_setup(o, &s.m);
	if (ret)
		goto cleanup;
	ret = patterns_setup(&s, &co.new_cgroup_levels, &co.max_level);
	if (ret)
		goto cleanup;
	co.tracked_levels = co.new_cgroup_levels;
	co.new_cgroup_levels &= ~1ULL;	/* the root is never new */
	co.nr_events = s.m.nr_events;
	co.attrs = s.m.attrs;
	co.group = s.m.group;
	co.names = (const char *const *)s.m.names;
	co.max_cgroups = o->max_cgroups;
	co.verbose = o->verbose;

	ret = EXIT_FAILURE;
	if (collector__open(&co, &s.col))
		goto cleanup;
	s.nr_cpus = collector__nr_cpus(s.col);
	s.stride = o->per_cpu ? s.nr_cpus : 1;
	s.cpu_now = calloc((size_t)s.nr_cpus * s.m.nr_events, sizeof(*s.cpu_now));
	s.cpu_prev = calloc((size_t)s.nr_cpus * s.m.nr_events, sizeof(*s.cpu_prev));
	s.cpu_delta = calloc((size_t)s.nr_cpus * s.m.nr_events, sizeof(*s.cpu_delta));
	s.cpu_total = calloc((size_t)s.nr_cpus * s.m.nr_events, sizeof(*s.cpu_total));
	if (!s.cpu_now || !s.cpu_prev || !s.cpu_delta || !s.cpu_total)
		goto cleanup;

	s.run.model = s.m.model ? model__name(s.m.model) : "events";
	s.run.plan = s.m.plan;
	s.run.nr_events = s.m.nr_events;
	s.run.event_names = (const char *const *)s.m.names;
	s.run.level = s.m.level;
	s.run.perf_metrics = s.m.perf_metrics;
	s.run.smt = s.m.smt;
	s.run.verbose = o->verbose;
	s.run.per_cpu = o->per_cpu;
	s.run.interval_ms = o->interval_ms;
	gethostname(host, sizeof(host) - 1);
	s.run.hostname = host;
	s.run.kernel = uname(&uts) == 0 ? uts.release : "";
	cpu_identify(NULL, &id);
	s.run.cpu = id.name;

	if (start_tracking(&s) || baseline(&s))
		goto cleanup;
	err = outputs_open(&s);
	if (err) {
		pr_err("cannot open the output: %s", strerror(-err));
		goto cleanup;
	}
	for (int i = 0; i < s.nr_outputs; i++)
		if (s.outputs[i]->ops->begin && s.outputs[i]->ops->begin(s.outputs[i], &s.run))
			goto cleanup;
	if (o->command && start_command(&s, &old))
		goto cleanup;

	ret = loop(&s, &block);
	emit_summary(&s);

	if (s.child > 0) {
		if (!s.child_done) {
			/* We were told to stop; so is the command. */
			kill(s.child, SIGTERM);
			waitpid(s.child, &s.child_status, 0);
		}
		if (ret == 0)
			ret = WIFEXITED(s.child_status) ? WEXITSTATUS(s.child_status) :
							  128 + WTERMSIG(s.child_status);
	}
cleanup:
	session_release(&s);
	sigprocmask(SIG_SETMASK, &old, NULL);
	return ret;
}
