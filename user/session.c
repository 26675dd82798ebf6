// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <malloc.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "alloc.h"
#include "child.h"
#include "collector.h"
#include "collector_read.h"
#include "containers.h"
#include "counts.h"
#include "cpu.h"
#include "env.h"
#include "interval.h"
#include "log.h"
#include "marks.h"
#include "measurement.h"
#include "model.h"
#include "neighbours.h"
#include "noise.h"
#include "output.h"
#include "perfev.h"
#include "probe.h"
#include "profile.h"
#include "sampling.h"
#include "scale.h"
#include "selection.h"
#include "session.h"
#include "session_internal.h"
#include "signals.h"
#include "stackfiles.h"
#include "strbuf.h"


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

/* --- reading ------------------------------------------------------------------------- */

static int read_cgroup_cb(__u64 id, const struct cgtma_count *rows, void *ctx)
{
	struct session *s = ctx;
	int i = tracker_find(&s->tk, id);
	struct tracked *tr;

	/* Unknown: the mkdir hook added it after we emptied new_cgroups; next time. */
	if (i < 0 || s->tk.tracked[i].refused)
		return 0;
	tr = &s->tk.tracked[i];
	/* Per CPU with --per-cpu (its rows are then the CPUs); otherwise summed. */
	tr->ran = scope_counts_take(&tr->counts, rows, collector__cgroup_rows(s->col),
				    collector__closed_epoch(s->col));
	return 0;
}

static int read_task_cb(const struct cgtma_task_key *key, __u32 pid, const char *comm,
			const struct cgtma_count *counts, void *ctx)
{
	struct session *s = ctx;

	return tasks_read(&s->tasks, key, pid, comm, counts, collector__closed_epoch(s->col));
}

/* The path of a tracked cgroup, NULL when it is not (or no longer) counted. */
static const char *tracked_path(__u64 id, void *ctx)
{
	const struct tracked *tr = tracked_of(ctx, id);

	return tr ? tr->path : NULL;
}

/* A tracked cgroup's scope in a profile, named as the terminal names it. */
static int sample_scope(__u64 id, struct profile *p, void *ctx)
{
	const struct tracked *tr = tracked_of(ctx, id);
	struct scope sc = { .kind = SCOPE_CGROUP, .cpu = -1 };
	char name[1024];

	if (!tr)
		return -1;
	sc.cgroup = tr->path;
	sc.names = tr->names;
	scope_label(&sc, false, name, sizeof(name));
	return profile_scope(p, name, tr->path, tr->names.container, tr->names.pod);
}

/* The collector follows CPU hotplug (collector_setup.events.cpu_changed): so does the sampler. */
static void cpu_changed(int cpu, bool online, void *ctx)
{
	struct session *s = ctx;

	sampling_cpu_changed(&s->sp, cpu, online);
}

static int forget_task(const struct cgtma_task_key *key, void *ctx)
{
	struct session *s = ctx;

	return collector__forget_task(s->col, key);
}

/*
 * -T: the noise of each thread whose row the interval shows (it ran, or it is gone: its last
 * row), from its cgroup's reading.
 */
static void read_tasks_noise(struct session *s)
{
	if (!env.per_task)
		return;
	for (int i = 0; i < s->tasks.nr; i++) {
		struct task *t = &s->tasks.t[i];
		const struct tracked *tr;

		if (!task_row_due(t))
			continue;
		tr = tracked_of(s, t->key.cgroup);
		noise_task_read(&t->noise, tr ? &tr->noise : NULL, t->key.tid);
	}
}

/*
 * Each tracked cgroup's noise (noise.h), from its files: not a count of the BPF side, so read
 * beside the counters, at the same end of the interval, its rates over the interval's span
 * (the counts'). A cgroup gone has none: its directory is. A quiet cgroup (tracked_quiet():
 * no row either) is not read: its files cost some 50 us a cgroup, and the cost follows the
 * cgroups that ran. all: read every cgroup (the run's start: span 0, zero points). Only
 * allocation failures are errors.
 */
static int read_noise(struct session *s, double span, bool all)
{
	char dir[8192];

	if (env.no_noise)
		return 0;
	for (int t = 0; t < s->tk.nr; t++) {
		struct tracked *tr = &s->tk.tracked[t];
		int err;

		if (tr->refused || !tr->present) {
			noise_skip(&tr->noise);
			continue;
		}
		if (!all && tracked_quiet(tr)) {
			noise_forget(&tr->noise);
			continue;
		}
		snprintf(dir, sizeof(dir), "%s%s", s->sel.view.root,
			 strcmp(tr->path, "/") ? tr->path : "");
		tr->noise.per_thread = env.per_task;
		err = noise_read(&tr->noise, "/proc", dir, span);
		if (err == -ENOMEM)
			return err;
	}
	read_tasks_noise(s);
	return 0;
}

/* neighbour_name_fn: an untracked antagonist's container or pod, as podman ps names it. */
static const char *container_name(__u64 id, const char *path, void *ctx)
{
	struct session *s = ctx;
	const struct container_info *info = containers_lookup(s->sel.containers, id, path);

	return !info ? NULL : info->name ? info->name : info->pod;
}

/*
 * Each tracked cgroup's neighbours in the interval of seconds (neighbours.h), from the BPF
 * side's pairs of cgroups: into its noise of the interval and of the run. zero: the pairs
 * are what ran before the start, dropped. Only allocation failures are errors: a failed
 * read of the map leaves the interval without them.
 */
static int read_neighbours(struct session *s, double seconds, bool zero)
{
	bool smt = collector__smt(s->col);
	int err = 0, n = 0, old_cap;

	if (!collector__noise(s->col))
		return 0;
	if (collector__read_noise(s->col, neighbours_add, &s->nb) || zero)
		goto out;
	old_cap = s->cap_tallies;
	if (ALLOC_GROW(s->rows, s->tk.nr, s->cap_rows) ||
	    ALLOC_GROW(s->tallies, s->tk.nr, s->cap_tallies)) {
		err = -ENOMEM;
		goto out;
	}
	/* New tallies empty: each keeps its allocation from one interval to the next. */
	memset(s->tallies + old_cap, 0, (s->cap_tallies - old_cap) * sizeof(*s->tallies));
	for (int t = 0; t < s->tk.nr; t++) {
		struct tracked *tr = &s->tk.tracked[t];

		if (!tr->refused)
			s->rows[n++] = (struct neighbour_row){
				.path = tr->path, .id = tr->id,
				.container = tr->names.container ? tr->names.container :
					     tr->names.pod,
			};
	}
	for (int r = 0; r < n; r++)
		neighbour_tally_reset(&s->tallies[r]);
	err = neighbours_resolve(&s->nb, &s->sel.view, s->rows, n, container_name, s) ?:
	      neighbours_tally_rows(&s->nb, s->tallies);
	/* The rows in the tracked cgroups' order, the refused left out, as built above. */
	for (int t = 0, r = 0; t < s->tk.nr && !err; t++) {
		struct tracked *tr = &s->tk.tracked[t];
		const struct neighbour_tally *tally = &s->tallies[r];

		if (tr->refused)
			continue;
		r++;
		if (!tr->present || tracked_quiet(tr))
			continue;
		neighbour_tally_noise(tally, seconds, smt, &tr->noise.now);
		tr->noise.others_smt = smt;
		err = neighbour_tally_merge(&tr->noise.others, tally, seconds);
	}
out:
	neighbours_clear(&s->nb);
	return err;
}

/* The interrupt scopes' counts, taken like a cgroup's. */
static void read_irqs(struct session *s)
{
	bool summed = s->stride == 1;	/* without -A */

	for (int q = 0; q < CGTMA_NR_IRQ; q++) {
		if (!irq_selected(s, q))
			continue;
		collector__read_irq(s->col, q, s->irq_now, summed);
		if (summed)
			scope_counts_take(&s->irq[q], s->irq_now, 1, collector__closed_epoch(s->col));
		else
			scope_counts_take_rows(&s->irq[q], s->irq_now,
					       collector__closed_epoch(s->col),
					       collector__cpus_read(s->col));
	}
}

static int irq_alloc(struct session *s)
{
	s->irq_now = calloc((size_t)s->nr_cpus * s->m.nr_events, sizeof(*s->irq_now));
	if (!s->irq_now)
		return -ENOMEM;
	for (int q = 0; q < CGTMA_NR_IRQ; q++)
		if (irq_selected(s, q) && scope_counts_init(&s->irq[q], s->stride, s->m.nr_events))
			return -ENOMEM;
	return 0;
}

static void irq_release(struct session *s)
{
	for (int q = 0; q < CGTMA_NR_IRQ; q++)
		scope_counts_release(&s->irq[q]);
	free(s->irq_now);
}

static int read_counts(struct session *s)
{
	int err;

	collector__read_cpus(s->col, s->cpu_now);
	scope_counts_take_rows(&s->cpu, s->cpu_now, collector__closed_epoch(s->col),
			       collector__cpus_read(s->col));

	/*
	 * A cgroup the read skips had nothing charged in the closed half (collector.h): its
	 * interval is zeros.
	 */
	for (int i = 0; i < s->tk.nr; i++) {
		struct tracked *tr = &s->tk.tracked[i];

		tr->ran = false;
		scope_counts_reset(&tr->counts);
	}
	err = collector__read_cgroups(s->col, read_cgroup_cb, s);
	if (err) {
		pr_err("cannot read the cgroup counts: %s", strerror(-err));
		return err;
	}
	read_irqs(s);
	if (!env.per_task)
		return 0;
	tasks_begin_read(&s->tasks);
	err = collector__read_tasks(s->col, read_task_cb, s);
	if (err)
		pr_err("cannot read the thread counts: %s", strerror(-err));
	return err;
}

/*
 * Standard output's reader went away (`cgtma --json | head -n 1`). As the only output, the run
 * ends now and quietly, as Unix filters do; beside others, it is said once, they go on, and
 * the run fails at its end.
 */
static void stdout_gone(struct session *s)
{
	s->stdout_closed = true;
	if (s->nr_outputs == 1) {
		s->stop = true;
		return;
	}
	pr_err("standard output is closed: nothing more is written there; profiling goes on "
	       "for the other outputs");
	s->output_failed = true;
}

static void emit(struct session *s, const struct interval *iv)
{
	/* --record keeps each interval's samples, ahead of it: a killed run keeps them too. */
	if (!iv->summary && iv->profile && iv->profile->nr_samples &&
	    outputs_profile(s->outputs, s->nr_outputs, iv->profile))
		s->output_failed = true;
	if (outputs_emit(s->outputs, s->nr_outputs, &s->run, iv))
		s->output_failed = true;
	if (!s->stdout_closed && outputs_stdout_closed(s->outputs, s->nr_outputs))
		stdout_gone(s);
}

/*
 * The mean over CPUs of the time between two readings of their counters: what the counts of
 * an interval really span. A timestamp taken in user space after the flush can be late by
 * however long this process waited for a CPU; the kernel's own reading times cannot.
 */
static double counted_span(const struct session *s, const __u64 *from, const __u64 *to,
			   double fallback)
{
	double sum = 0;
	int n = 0;

	for (int c = 0; c < s->nr_cpus; c++) {
		if (!collector__cpu_online(s->col, c) || !from[c] || to[c] <= from[c])
			continue;
		sum += (double)(to[c] - from[c]) / 1e9;
		n++;
	}
	return n ? sum / n : fallback;
}

/* Ends an interval: flush the running slices, read, report. */
static int do_interval(struct session *s)
{
	struct interval iv = {};
	double now;
	int err;

	/*
	 * Which cgroups first (a walk of the hierarchy can take milliseconds); then flush and
	 * read back to back, so the counts cover what the reading times say.
	 */
	err = selection_update(&s->sel);
	if (err)
		return err;
	err = collector__flush(s->col);
	if (err)
		return err;
	now = mono_now();
	iv.time = real_now();
	iv.interval_s = now - s->last_mono;
	s->last_mono = now;
	if (collector__read_times(s->col, s->read_now) == 0) {
		iv.interval_s = counted_span(s, s->read_prev, s->read_now, iv.interval_s);
		memcpy(s->read_prev, s->read_now, sizeof(*s->read_now) * s->nr_cpus);
		/* A CPU offline now spans nothing from here: when it is back, its first
		 * reading starts again. */
		for (int c = 0; c < s->nr_cpus; c++)
			if (!collector__cpu_online(s->col, c))
				s->read_prev[c] = 0;
	}
	err = read_counts(s);
	if (!err)
		err = read_noise(s, iv.interval_s, false);
	if (!err)
		err = read_neighbours(s, iv.interval_s, false);
	if (!err)
		err = sampling_read(&s->sp, &iv, sample_scope, s);
	if (err)
		return err;
	marks_read(&s->marks, &iv);
	iv.has_bpf_stats = collector__hook_runtime(s->col, &iv.bpf_run_time_ns,
						   &iv.bpf_run_cnt) == 0 && iv.bpf_run_cnt;
	err = session_build_interval(s, &iv, false);
	if (err) {
		pr_err("cannot compute the interval: %s", strerror(-err));
		interval_free(&iv);
		return err;
	}
	emit(s, &iv);
	session_warn_in_phase(s, &iv);
	if (sampling_add_nodes(&s->sp, &iv))
		s->run.sample_events = s->sp.names.buf;
	interval_free(&iv);

	if (env.per_task)
		tasks_after_interval(&s->tasks, "/proc", s->sel.view.ns_root, tracked_path,
				     forget_task, s);
	selection_retire(&s->sel);
	/*
	 * Each interval frees its rows and the cgroups it retired: hand the heap's free top back
	 * now, or a daemon watching cgroups come and go keeps the high-water mark of every
	 * batch as resident memory (tests/live/20-churn.sh).
	 */
	malloc_trim(0);
	return 0;
}

static void emit_summary(struct session *s)
{
	struct interval iv = { .summary = true };

	iv.time = real_now();
	iv.interval_s = counted_span(s, s->read_first, s->read_prev,
				     s->last_mono - s->run_start_mono);
	marks_summary(&s->marks, &iv);
	sampling_summary(&s->sp, &iv, s->run.start_time, s->last_mono - s->run_start_mono);
	if (session_build_interval(s, &iv, true) == 0)
		emit(s, &iv);
	interval_free(&iv);
}

/* --- start, loop, stop -------------------------------------------------------------- */

/* Counting starts now: take every cumulative value as the zero point. */
static int baseline(struct session *s)
{
	int err;

	if (env.test_start_delay_ms) {
		pr_notice("CGTMA_TEST_START_DELAY: %u ms before the run's start",
			  env.test_start_delay_ms);
		usleep(env.test_start_delay_ms * 1000);
	}
	/*
	 * Both halves get their zero point: the half the first interval reads was last closed
	 * before the cgroups were tracked, and what the BPF side charged then (at interrupts,
	 * with --irq, all the time) is in the CPU totals but not in the cgroups.
	 */
	err = collector__flush(s->col);
	if (!err)
		err = read_counts(s);
	/*
	 * The noise pairs of each half are dropped as it closes: the BPF side counted them
	 * before the start (since the attach, seconds on a loaded machine), and nothing else
	 * empties that half before the first interval's flush closes it again.
	 */
	if (!err)
		err = read_neighbours(s, 0, true);
	if (!err)
		err = collector__flush(s->col);

	/* The first interval starts at the flush, as do_interval() times the others. */
	s->run_start_mono = s->last_mono = mono_now();
	s->run.start_time = real_now();
	if (!err)
		err = read_counts(s);
	if (!err)
		err = read_noise(s, 0, true);
	if (!err)
		err = read_neighbours(s, 0, true);
	if (err)
		return err;
	if (collector__read_times(s->col, s->read_first) == 0)
		memcpy(s->read_prev, s->read_first, sizeof(*s->read_first) * s->nr_cpus);
	/* Marks of what ran before the start are not the run's. */
	marks_skip(&s->marks);
	scope_counts_reset_total(&s->cpu);
	for (int t = 0; t < s->tk.nr; t++)
		scope_counts_reset_total(&s->tk.tracked[t].counts);
	for (int t = 0; t < s->tasks.nr; t++)
		scope_counts_reset_total(&s->tasks.t[t].counts);
	for (int q = 0; q < CGTMA_NR_IRQ; q++)
		scope_counts_reset_total(&s->irq[q]);
	return 0;
}

static int loop(struct session *s, const sigset_t *waitset)
{
	double interval = env.interval_ms / 1000.0;
	double end = env.duration_s > 0 ? s->run_start_mono + env.duration_s : INFINITY;
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
				if (!child_reap(&s->child))
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
		if (stop || s->stop)
			return 0;
		next += interval;
		/* Late by more than an interval (a stopped process): do not catch up in bursts. */
		if (next < mono_now())
			next = mono_now() + interval;
	}
}

static void session_release(struct session *s)
{
	for (int i = 0; i < s->nr_outputs; i++)
		output_close(s->outputs[i]);
	sampling_release(&s->sp);
	collector__destroy(s->col);
	free(s->cpus);
	tracker_release(&s->tk);
	tasks_release(&s->tasks);
	selection_release(&s->sel);
	free(s->cpu_now);
	scope_counts_release(&s->cpu);
	free(s->own);
	free(s->own_system);
	free(s->own_children);
	free(s->read_first);
	free(s->read_prev);
	free(s->read_now);
	neighbours_release(&s->nb);
	for (int r = 0; r < s->cap_tallies; r++)
		neighbour_tally_release(&s->tallies[r]);
	free(s->tallies);
	free(s->rows);
	irq_release(s);
	measurement_release(&s->m);
}

int session_run(void)
{
	struct session s = { .sel = SELECTION_INIT, .sp = SAMPLING_INIT, .nb = NEIGHBOURS_INIT };
	struct collector_setup cs = {};
	struct strbuf lost = STRBUF_INIT;
	sigset_t block, old;
	struct utsname uts;
	struct cpu_id id = {};
	char host[256] = "";
	int ret, unmatched;

	/* Blocked since main()'s first line; the command gets the mask cgtma started with. */
	signals_stop_set(&block);
	sigprocmask(SIG_BLOCK, &block, NULL);
	old = env.start_mask;
	/* A closed pipe is an error a write returns: outputs.h and stdout_gone() handle it. */
	signal(SIGPIPE, SIG_IGN);
	/*
	 * Large blocks (an interval's rows for thousands of cgroups) always from mmap, so that
	 * freeing one returns it: glibc's default threshold rises to the largest block freed,
	 * and later ones of that size then stay in the heap wherever it fragments.
	 */
	mallopt(M_MMAP_THRESHOLD, 128 * 1024);

	/*
	 * Privileges first: without them the PMU's probe (the model's choice) fails for that
	 * reason and would say something else. Then input: -EINVAL from these and the sinks is
	 * bad usage.
	 */
	if (probe_privileges()) {
		ret = EXIT_FAILURE;
		goto cleanup;
	}
	ret = measurement_setup(&env.measure, &s.m);
	if (!ret && env.cpus)
		ret = perfev_parse_cpus(env.cpus, &s.cpus);
	if (!ret && env.sample)
		ret = sampling_setup(&s.sp, &s.m);
	if (!ret)
		ret = selection_setup(&s.sel, &env.select, env.per_task,
				      &cs.new_cgroup_levels, &cs.max_level);
	if (ret) {
		ret = exit_status(ret);
		goto cleanup;
	}
	cs.tracked_levels = cs.new_cgroup_levels;
	cs.new_cgroup_levels &= ~1ULL;	/* the root is never new */
	cs.noise = cs.tracked_levels != 0 && !env.no_noise;
	cs.events = (struct perfev_opts){
		.nr_events = s.m.nr_events,
		.attrs = s.m.attrs,
		.group = s.m.group,
		.names = (const char *const *)s.m.names,
		.cpus = s.cpus,
		.cpu_changed = cpu_changed,
		.cpu_changed_ctx = &s,
	};

	/* Sinks first: a bad path or a busy port fails before any BPF is loaded. */
	ret = outputs_open(&env.out, s.outputs, &s.nr_outputs);
	if (!ret && stackfiles_check(env.folded, env.pprof)) {
		ret = EXIT_FAILURE;
		goto cleanup;
	}
	if (ret) {
		/* -EINVAL: an output's argument is malformed, e.g. --prometheus [ADDR:]PORT. */
		ret = exit_status(ret);
		goto cleanup;
	}
	/* The input is good: what the model's choice has to say comes now, once. */
	measurement_notices(&s.m);
	/* From here on everything concerns the kernel and the outputs: failures, whatever errno. */
	ret = EXIT_FAILURE;
	if (collector__open(&cs, &s.col))
		goto cleanup;
	if (env.sample && sampling_open(&s.sp, s.col, s.cpus))
		goto cleanup;
	s.nr_cpus = collector__nr_cpus(s.col);
	s.stride = env.per_cpu ? s.nr_cpus : 1;
	s.cpu_now = calloc((size_t)s.nr_cpus * s.m.nr_events, sizeof(*s.cpu_now));
	s.read_first = calloc(s.nr_cpus, sizeof(*s.read_first));
	s.read_prev = calloc(s.nr_cpus, sizeof(*s.read_prev));
	s.read_now = calloc(s.nr_cpus, sizeof(*s.read_now));
	if (!s.cpu_now || scope_counts_init(&s.cpu, s.nr_cpus, s.m.nr_events) || !s.read_first ||
	    !s.read_prev || !s.read_now || tracker_init(&s.tk, s.m.nr_events, s.stride) ||
	    tasks_init(&s.tasks, s.m.nr_events) || irq_alloc(&s)) {
		pr_err("out of memory");
		goto cleanup;
	}
	/* In a cgroup namespace's subtree the system is more than the root's children. */
	if (env.select.all_cgroups && s.sel.view.kind != CGVIEW_SUBTREE) {
		size_t size = (size_t)s.stride * s.m.nr_events;

		s.own = calloc(size, sizeof(*s.own));
		s.own_system = calloc(size, sizeof(*s.own_system));
		s.own_children = calloc(size, sizeof(*s.own_children));
		if (!s.own || !s.own_system || !s.own_children) {
			pr_err("out of memory");
			goto cleanup;
		}
	}

	s.run.model = s.m.model ? model_name(s.m.model) : "events";
	s.run.model_source = s.m.model ? model_source(s.m.model) : NULL;
	s.run.plan = s.m.plan;
	s.run.nr_events = s.m.nr_events;
	s.run.event_names = (const char *const *)s.m.names;
	s.run.level = s.m.level;
	s.run.perf_metrics = s.m.perf_metrics;
	s.run.smt = s.m.smt;
	s.run.verbose = log_verbose();
	s.run.per_cpu = env.per_cpu;
	/* Interrupt scopes are rows beside the system too: -x then has its CPUs column. */
	s.run.cgroups = selection_opts_any(&env.select) || env.irq_mask;
	s.run.prometheus_tasks = env.prometheus_tasks;
	s.run.interval_ms = env.interval_ms;
	gethostname(host, sizeof(host) - 1);
	s.run.hostname = host;
	s.run.kernel = uname(&uts) == 0 ? uts.release : "";
	cpu_identify(NULL, &id);
	s.run.cpu = id.name;
	if (env.sample)
		s.run.sample_events = s.sp.names.buf;

	s.marks = (struct marks){ .col = s.col, .tk = &s.tk, .view = &s.sel.view };
	if (selection_start(&s.sel, s.col, &s.tk) || baseline(&s))
		goto cleanup;
	if (outputs_begin(s.outputs, s.nr_outputs, &s.run))
		goto cleanup;
	if (env.command && child_start(&s.child, env.command, &old)) {
		/* As shells and perf stat: 127 for a command not found, 126 for one not run. */
		if (s.child.exec_errno)
			ret = child_exit_status(&s.child);
		goto cleanup;
	}

	ret = loop(&s, &block);
	emit_summary(&s);
	if ((env.folded || env.pprof) &&
	    stackfiles_write(&s.sp.run, env.folded, env.folded_pid, env.pprof))
		s.output_failed = true;
	measurement_say_never_ran(&s.m, s.cpu.total, s.nr_cpus);
	unmatched = selection_unmatched(&s.sel);
	sampling_say_stats(&s.sp);
	collector__say_stats(s.col, selection_active(&s.sel));
	if (log_verbose())
		tasks_say_forgotten(&s.tasks);

	if (s.child.pid > 0) {
		child_stop(&s.child);
		if (ret == 0 && s.child.done)
			ret = child_exit_status(&s.child);
	}
	/*
	 * A run asked to break out a cgroup or container that never came (a typo, a container
	 * that did not start) measured less than it was asked to: scripts must see it. Failures
	 * and the command's own status say more, and come first.
	 */
	if (ret == 0 && unmatched)
		ret = env.no_match_status;
	/* What the sinks could not write, as they close, is the run's verdict: one line. */
	for (int i = 0; i < s.nr_outputs; i++) {
		s.output_failed |= s.outputs[i]->lost;
		output_close_lost(s.outputs[i], &lost);
	}
	s.nr_outputs = 0;
	/* A sink may find a loss as it closes (-o's file on NFS): said in lost. */
	s.output_failed |= lost.len > 0;
	if (s.output_failed) {
		if (lost.len)
			pr_err("some output could not be written: %s", lost.buf);
		else
			pr_err("some output could not be written (see above)");
		ret = EXIT_FAILURE;
	}
cleanup:
	strbuf_release(&lost);
	session_release(&s);
	/* A signal that came while stopping was taken as the stop: do not die of it now. */
	signals_drain(&block);
	sigprocmask(SIG_SETMASK, &old, NULL);
	/* Standard output was all there was, and it closed: end as a filter does, of SIGPIPE. */
	if (s.stdout_closed && !s.output_failed) {
		signal(SIGPIPE, SIG_DFL);
		raise(SIGPIPE);
	}
	return ret;
}
