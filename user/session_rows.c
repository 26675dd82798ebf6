// SPDX-License-Identifier: GPL-2.0
/* An interval's rows (scopes), built from what the run's loop read (session.c). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgroups.h"
#include "collector.h"
#include "counts.h"
#include "env.h"
#include "interval.h"
#include "irqscope.h"
#include "log.h"
#include "session_internal.h"

/* Whether any of n counts was enabled or counted: the scope ran at all. */
static bool counts_ran(const struct cgtma_count *v, int n)
{
	for (int k = 0; k < n; k++)
		if (v[k].enabled || v[k].counter)
			return true;
	return false;
}

/*
 * -T: a row per thread that ran in the interval, and the last one of a thread gone; the
 * summary has every thread's totals.
 */
static int add_tasks(struct session *s, struct interval *iv, bool totals)
{
	int n = s->m.nr_events;

	for (int i = 0; i < s->tasks.nr; i++) {
		struct task *t = &s->tasks.t[i];
		const struct tracked *tr = tracked_of(s, t->key.cgroup);
		const char *path = tr ? tr->path : NULL;
		struct scope *sc;
		char removed[64];

		bool show = false;

		if (!t->counts.prev)
			continue;	/* dropped past the bound */
		if (!totals)
			show = path && task_row_due(t);
		for (int e = 0; totals && e < n; e++)
			show |= t->counts.total[e].counter || t->counts.total[e].enabled;
		if (!show)
			continue;
		if (!tasks_comm_match(env.comm, t->comm))
			continue;
		if (!path) {
			/* The summary's thread of a cgroup gone since. */
			snprintf(removed, sizeof(removed), "(removed cgroup %llu)",
				 (unsigned long long)t->key.cgroup);
			path = removed;
		}
		sc = interval_add_task(iv, &s->run, path, t->pid, t->key.tid);
		/* Its cgroup's container and pod, as the cgroup's own row has them. */
		if (!sc || (tr && scope_set_names(sc, &tr->names)))
			return -ENOMEM;
		memcpy(sc->comm, t->comm, sizeof(sc->comm));
		sc->cgroup_id = t->key.cgroup;
		sc->removed = !totals && t->state == TASK_FINAL;
		memcpy(sc->sum, totals ? t->counts.total : t->counts.delta, n * sizeof(*sc->sum));
		if (totals)
			noise_task_total(&t->noise, &sc->noise);
		else
			sc->noise = t->noise.now;
	}
	return 0;
}

/*
 * The summary's rows of removed cgroups: their totals, and one row for those beyond the
 * tracker's bound, named for how many it holds.
 */
static int add_removed(struct session *s, struct interval *iv)
{
	int n = s->m.nr_events;
	struct scope *sc;
	char name[64];

	for (int r = 0; r < s->tk.nr_removed; r++) {
		sc = interval_add_scope(iv, &s->run, SCOPE_CGROUP, s->tk.removed[r].path, -1);
		if (!sc || scope_set_names(sc, &s->tk.removed[r].names))
			return -ENOMEM;
		/* Told from a cgroup made again under its path, live or removed too. */
		sc->cgroup_id = s->tk.removed[r].id;
		sc->removed = true;
		sc->noise = s->tk.removed[r].noise;
		memcpy(sc->sum, s->tk.removed[r].total, n * sizeof(*sc->sum));
	}
	if (!s->tk.nr_folded)
		return 0;
	snprintf(name, sizeof(name), "(removed: %ld more cgroups)", s->tk.nr_folded);
	sc = interval_add_scope(iv, &s->run, SCOPE_CGROUP, name, -1);
	if (!sc)
		return -ENOMEM;
	memcpy(sc->sum, s->tk.folded, n * sizeof(*sc->sum));
	return 0;
}

/*
 * One cgroup's or interrupt scope's rows from its counts v (per CPU with --per-cpu): the
 * scope, with its noise (NULL: none), and with --per-cpu one more per online CPU. 0 or
 * -ENOMEM.
 */
static int add_rows(struct session *s, struct interval *iv, enum scope_kind kind,
		    const char *name, __u64 cgroup_id, const struct cgroup_names *names,
		    const struct cgtma_count *v, const struct noise *noise, bool removed)
{
	int n = s->m.nr_events;
	struct scope *sc;

	sc = interval_add_scope(iv, &s->run, kind, name, -1);
	if (!sc || (names && scope_set_names(sc, names)))
		return -ENOMEM;
	sc->cgroup_id = cgroup_id;
	sc->removed = removed;
	if (noise)
		sc->noise = *noise;
	if (!env.per_cpu) {
		memcpy(sc->sum, v, n * sizeof(*sc->sum));
		return 0;
	}
	for (int c = 0; c < s->nr_cpus; c++)
		for (int i = 0; i < n; i++)
			count_add(&sc->sum[i], &v[c * n + i]);
	for (int c = 0; c < s->nr_cpus; c++) {
		struct scope *pc;

		if (!collector__cpu_online(s->col, c))
			continue;
		pc = interval_add_scope(iv, &s->run, kind, name, c);
		if (!pc || (names && scope_set_names(pc, names)))
			return -ENOMEM;
		pc->cgroup_id = cgroup_id;
		pc->removed = removed;
		memcpy(pc->sum, &v[c * n], n * sizeof(*pc->sum));
	}
	return 0;
}

/* A scope's share of its time event i was on a counter, in percent. */
static double on_counter_pct(const struct scope *sc, int i)
{
	return 100.0 * sc->sum[i].running / sc->sum[i].enabled;
}

/*
 * Once per run: a tracked cgroup whose shares of its time on a counter only a rotation in
 * phase with its switches explains (count_rotation_in_phase). Its scaled counts of that
 * interval are off, and nothing in the counts shows it.
 */
void session_warn_in_phase(struct session *s, const struct interval *iv)
{
	const struct scope *cpus = &iv->scopes[0];	/* the system's, added first */
	int on, off;

	for (int k = 1; k < iv->nr_scopes && !s->warned_in_phase; k++) {
		const struct scope *sc = &iv->scopes[k];

		if (sc->kind != SCOPE_CGROUP || sc->cpu >= 0 ||
		    !count_rotation_in_phase(sc->sum, cpus->sum, s->m.nr_events, &on, &off))
			continue;
		pr_warn("cgroup %s: %s was on a counter %.1f%% of its time and %s %.1f%%, the "
			"CPUs' %.1f%% and %.1f%%: the kernel's rotation of the event groups falls "
			"on its switches (CPU-bound cgroups switched at the tick), and its scaled "
			"counts are off; a perf_event_mux_interval_ms that is no multiple of the "
			"tick moves the rotation (echo 5 > /sys/bus/event_source/devices/PMU/"
			"perf_event_mux_interval_ms; docs/groups.md)", sc->cgroup, s->m.names[on],
			on_counter_pct(sc, on), s->m.names[off], on_counter_pct(sc, off),
			on_counter_pct(cpus, on), on_counter_pct(cpus, off));
		s->warned_in_phase = true;
	}
}

/* a less b, each field, 0 where b is more: the difference of counts read at other times. */
static void count_less(struct cgtma_count *a, const struct cgtma_count *b)
{
	a->counter = a->counter > b->counter ? a->counter - b->counter : 0;
	a->enabled = a->enabled > b->enabled ? a->enabled - b->enabled : 0;
	a->running = a->running > b->running ? a->running - b->running : 0;
}

/*
 * The root's own tasks: those in no child of it, which no cgroup row shows, and where the
 * busiest neighbour may be. With every level-1 cgroup tracked (--all-cgroups), they are the
 * system's counts less those cgroups', per CPU with -A; the root's idle time too. A slice
 * that ends between the reads of the CPUs and of the cgroups is in the cgroups' interval and
 * the system's next: an interval's row may be off by that, and not below 0; the summary's
 * is the run's system less the run's cgroups. A level-1 cgroup that was not counted (the
 * maps were full) would be charged to the root: no row from then on.
 */
static int add_root_own(struct session *s, struct interval *iv, bool totals)
{
	int n = s->m.nr_events, size = s->stride * n;
	struct cgtma_count *own = s->own, *children;

	if (!own || s->own_inexact)
		return 0;
	if (totals) {
		memcpy(own, s->own_system, size * sizeof(*own));
		for (int k = 0; k < size; k++)
			count_less(&own[k], &s->own_children[k]);
		return add_rows(s, iv, SCOPE_CGROUP, CGROUP_ROOT_OWN, 0, NULL, own, NULL, false);
	}
	children = calloc(size, sizeof(*children));
	if (!children)
		return -ENOMEM;
	memset(own, 0, size * sizeof(*own));
	for (int c = 0; c < s->nr_cpus; c++)
		for (int i = 0; i < n; i++)
			count_add(&own[(s->stride > 1 ? c : 0) * n + i], &s->cpu.delta[c * n + i]);
	for (int t = 0; t < s->tk.nr; t++) {
		const struct tracked *tr = &s->tk.tracked[t];

		if (cgroup_level(tr->path) != 1)
			continue;
		s->own_inexact |= tr->refused;
		for (int k = 0; k < size; k++)
			count_add(&children[k], &tr->counts.delta[k]);
	}
	for (int k = 0; k < size; k++) {
		count_add(&s->own_system[k], &own[k]);
		count_add(&s->own_children[k], &children[k]);
		count_less(&own[k], &children[k]);
	}
	free(children);
	if (s->own_inexact)
		return 0;
	return add_rows(s, iv, SCOPE_CGROUP, CGROUP_ROOT_OWN, 0, NULL, own, NULL, false);
}

/* System, CPU, cgroup and interrupt scopes from per-CPU arrays (cpu) and per-scope arrays. */
int session_build_interval(struct session *s, struct interval *iv, bool totals)
{
	const struct cgtma_count *cpu = totals ? s->cpu.total : s->cpu.delta;
	int n = s->m.nr_events;
	struct scope *sc;

	sc = interval_add_scope(iv, &s->run, SCOPE_SYSTEM, NULL, -1);
	if (!sc)
		return -ENOMEM;
	for (int c = 0; c < s->nr_cpus; c++)
		for (int i = 0; i < n; i++)
			count_add(&sc->sum[i], &cpu[c * n + i]);
	if (env.per_cpu) {
		for (int c = 0; c < s->nr_cpus; c++) {
			if (!collector__cpu_online(s->col, c))
				continue;
			sc = interval_add_scope(iv, &s->run, SCOPE_CPU, NULL, c);
			if (!sc)
				return -ENOMEM;
			memcpy(sc->sum, &cpu[c * n], n * sizeof(*sc->sum));
		}
	}

	for (int t = 0; t < s->tk.nr; t++) {
		struct tracked *tr = &s->tk.tracked[t];
		struct noise total;

		/* An interval reports live cgroups and those gone in it, once. */
		if (!totals && tr->refused)
			continue;
		if (!totals && tracked_quiet(tr))
			continue;
		if (totals)
			noise_total(&tr->noise, &total);
		if (add_rows(s, iv, SCOPE_CGROUP, tr->path, tr->id, &tr->names,
			     totals ? tr->counts.total : tr->counts.delta,
			     totals ? &total : &tr->noise.now, !totals && !tr->present))
			return -ENOMEM;
		tr->reported |= !totals;
	}
	if (add_root_own(s, iv, totals))
		return -ENOMEM;
	for (int q = 0; q < CGTMA_NR_IRQ; q++) {
		const struct cgtma_count *v = totals ? s->irq[q].total : s->irq[q].delta;

		if (!irq_selected(s, q))
			continue;
		/*
		 * As the terminal hides idle cgroups: of eleven scopes, a few take interrupts
		 * at a time; one with no time in the interval (or the run) has no row, but
		 * with -v.
		 */
		if (!log_verbose() && !counts_ran(v, s->stride * n))
			continue;
		if (add_rows(s, iv, SCOPE_IRQ, irq_scope_name(q), 0, NULL, v, NULL, false))
			return -ENOMEM;
	}
	if (totals && add_removed(s, iv))
		return -ENOMEM;
	if (env.per_task && add_tasks(s, iv, totals))
		return -ENOMEM;
	interval_sort(iv);
	return interval_derive(&s->run, iv);
}
