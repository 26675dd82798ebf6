// SPDX-License-Identifier: GPL-2.0
#include <stdio.h>
#include <stdlib.h>

#include "cgview.h"
#include "collector_read.h"
#include "interval.h"
#include "log.h"
#include "marks.h"
#include "tracker.h"

/* A mark's cgroup as the outputs name it: tracked, by file handle, or by its id. */
static void mark_cgroup(const struct marks *mk, __u64 id, char *out, size_t len)
{
	int i = id ? tracker_find(mk->tk, id) : -1;

	if (!id)
		snprintf(out, len, "%s", "");
	else if (i >= 0)
		snprintf(out, len, "%s", mk->tk->tracked[i].path);
	else if (cgview__path_of(mk->view, id, out, len))
		snprintf(out, len, "cgroup id %llu", (unsigned long long)id);
}

struct marks_ctx {
	const struct marks *mk;
	struct interval *iv;
	int nomem;		/* marks left out of the list for want of memory */
};

static void add_mark(int cpu, const struct cgtma_miss *m, void *ctx)
{
	struct marks_ctx *mc = ctx;
	struct interval *iv = mc->iv;
	struct mark *k;
	struct mark *grown = realloc(iv->marks, (iv->nr_marks + 1) * sizeof(*iv->marks));

	if (!grown) {
		mc->nomem++;	/* listed without it; the totals still count it */
		return;
	}
	iv->marks = grown;
	k = &iv->marks[iv->nr_marks++];
	k->cpu = cpu;
	k->m = *m;
	k->m.comm[sizeof(k->m.comm) - 1] = '\0';
	mark_cgroup(mc->mk, m->ran_cgroup, k->ran, sizeof(k->ran));
	mark_cgroup(mc->mk, m->charged_cgroup, k->charged, sizeof(k->charged));
}

/*
 * A mark's cgroup as -v names it: a tracked container or pod by its name (as the terminal's
 * rows), else its path.
 */
static const char *mark_label(const struct marks *mk, __u64 id, const char *path, char *buf,
			      size_t len)
{
	int i = id ? tracker_find(mk->tk, id) : -1;
	struct scope sc = { .kind = SCOPE_CGROUP, .cpu = -1, .cgroup = path };

	if (i < 0)
		return path;
	sc.names = mk->tk->tracked[i].names;
	return scope_label(&sc, false, buf, len);
}

/* -v: one line a mark, on stderr, as it is read. */
static void say_mark(const struct marks *mk, const struct mark *k)
{
	const struct cgtma_miss *m = &k->m;
	char ran[64] = "", ran_cg[1100], charged_cg[1100];

	if (m->kind == CGTMA_MISS_SKIPPED) {
		pr_notice("mark: CPU %d: the kernel did not run the perf-event hook's program at "
			  "%u switch%s between cgroups that it counted", k->cpu, m->count,
			  m->count == 1 ? "" : "es");
		return;
	}
	if (m->kind == CGTMA_MISS_READ) {
		pr_notice("mark: CPU %d: a reading of the counters failed: an event's counts of "
			  "that slice went to the next one's cgroup", k->cpu);
		return;
	}
	if (m->kind == CGTMA_MISS_IRQ) {
		pr_notice("mark: CPU %d: %u interrupt%s came while a program updated the CPU's "
			  "slice: %s work went to the slice's cgroup or scope, not %s own", k->cpu,
			  m->count, m->count == 1 ? "" : "s", m->count == 1 ? "its" : "their",
			  m->count == 1 ? "its" : "their");
		return;
	}
	if (m->unseen_ns != ~0ULL)
		snprintf(ran, sizeof(ran), ", which ran %.3f ms since", m->unseen_ns / 1e6);
	pr_notice("mark: CPU %d: %s: a slice of %.3f ms charged to %s (pid %u) began in %s with "
		  "%s (pid %u%s); at most %.3f ms of it was another task's",
		  k->cpu, mark_kind_name(m->kind), m->slice_ns / 1e6,
		  mark_label(mk, m->charged_cgroup, k->charged, charged_cg, sizeof(charged_cg)),
		  m->charged_pid, *k->ran ? mark_label(mk, m->ran_cgroup, k->ran, ran_cg,
						       sizeof(ran_cg)) : "a cgroup not known",
		  m->pid ? *m->comm ? m->comm : "a task gone since" : "the idle task", m->pid, ran,
		  m->max_ns / 1e6);
}

void marks_read(struct marks *mk, struct interval *iv)
{
	struct marks_ctx mc = { .mk = mk, .iv = iv };
	struct collector_marks sum;

	collector__read_marks(mk->col, add_mark, &mc, &sum);
	iv->missed_slices = sum.slices;
	iv->missed_max_ns = sum.max_ns;
	iv->missed_unbounded = sum.unbounded;
	mk->run.slices += sum.slices;
	mk->run.max_ns += sum.max_ns;
	mk->run.unbounded += sum.unbounded;
	for (int i = 0; log_verbose() && i < iv->nr_marks; i++)
		say_mark(mk, &iv->marks[i]);
	if (log_verbose() && sum.marks > (__u64)iv->nr_marks)
		pr_notice("mark: %llu more not listed (a CPU lists %d an interval%s)",
			  (unsigned long long)(sum.marks - iv->nr_marks), CGTMA_MISSES_MAX,
			  mc.nomem ? "; some for want of memory" : "");
}

void marks_skip(struct marks *mk)
{
	collector__read_marks(mk->col, NULL, NULL, &(struct collector_marks){ 0 });
}

void marks_summary(const struct marks *mk, struct interval *iv)
{
	iv->missed_slices = mk->run.slices;
	iv->missed_max_ns = mk->run.max_ns;
	iv->missed_unbounded = mk->run.unbounded;
}
