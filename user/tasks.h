/* SPDX-License-Identifier: GPL-2.0 */
/*
 * -T: the threads seen inside tracked cgroups, each with its counts (counts.h, as the
 * cgroups'); and whether it is still there. A thread that exited or left its cgroup is
 * reported once more, in the interval after the one where it was found gone (the slice it
 * ended after that flush is in by then), and dropped: its kernel row is deleted, and only
 * its totals stay, for the summary, up to TASKS_GONE_KEPT of them. A thread leaves /proc
 * (release_task()) before its last switch, and under load it can wait on a run queue past
 * that deletion: its last slice then makes the kernel row again. Its key is kept for
 * TASKS_LATE_INTERVALS intervals after the deletion, and such a slice goes to its totals,
 * never to a second thread (a tid comes back as another thread only once the kernel has
 * handed out every other pid). No kernel here: the session keeps the BPF map in step.
 */
#ifndef CGTMA_TASKS_H
#define CGTMA_TASKS_H

#include <stdbool.h>

#include "bpf/cgtma.h"
#include "counts.h"
#include "hashmap.h"
#include "noise.h"

#define TASKS_GONE_KEPT 4096
#define TASKS_LATE_INTERVALS 5

/* A thread's states, in the order it goes through them. */
enum task_state {
	TASK_ALIVE,
	TASK_GONE,		/* found gone: reported once more at the next interval */
	TASK_FINAL,		/* that report is this interval's: then deleted */
	TASK_DELETED,		/* kernel row deleted, key kept: a late slice joins the totals
				 * and the row is deleted again */
	TASK_DROPPED,		/* totals only, for the summary; key released */
};

struct task {
	struct cgtma_task_key key;
	int pid;
	char comm[16];
	enum task_state state;
	bool read;			/* its row was read this interval */
	bool ran;			/* and changed since the last */
	int quiet;			/* TASK_DELETED: intervals since its last late slice */
	struct scope_counts counts;	/* per event; none (prev NULL) once dropped past
					 * TASKS_GONE_KEPT */
	struct noise_task noise;	/* its wait and preemptions (session.c reads them) */
};

struct tasks {
	int nr_events;
	struct task *t;
	int nr, cap;
	struct hashmap keys;		/* "cgroup:tid" -> index, but of the TASK_DROPPED */
	int nr_gone_kept;
	long nr_gone_forgotten;		/* dropped beyond TASKS_GONE_KEPT: not in the summary */
};

/*
 * Whether thread t has a row in this interval (its cgroup tracked aside): read in it, and it
 * ran, or its last row is due (it is gone).
 */
static inline bool task_row_due(const struct task *t)
{
	return t->read && t->state <= TASK_FINAL && (t->ran || t->state == TASK_FINAL);
}

int tasks_init(struct tasks *ts, int nr_events);
void tasks_release(struct tasks *ts);

/* At the end of a run, with -v: how many threads gone are not in the summary, if any. */
void tasks_say_forgotten(const struct tasks *ts);

/* Starts an interval's read: nothing read yet. */
void tasks_begin_read(struct tasks *ts);

/*
 * One thread's row from the kernel (collector__read_tasks()): cumulative counts of the
 * closed half, taken (scope_counts_take()); 0 or -ENOMEM.
 */
int tasks_read(struct tasks *ts, const struct cgtma_task_key *key, int pid, const char *comm,
	       const struct cgtma_count *now, int half);

/*
 * After the interval is reported: TASK_FINAL ones become TASK_DELETED (forget is called
 * with each, to delete its kernel row, and again with a TASK_DELETED one read since), those
 * TASK_DELETED for TASKS_LATE_INTERVALS quiet intervals become TASK_DROPPED, and alive ones
 * whose thread is no longer in the cgroup at cgroup_path(cgroup id, ctx) (a path relative
 * to the v2 root, NULL: untracked now) become TASK_GONE. proc is "/proc" (tests give
 * another root). ns_root is the cgroup namespace's root in cgroup_path's terms, which
 * /proc's paths are relative to ("/", or NULL, outside a private one; cgview.h).
 */
typedef const char *(*tasks_path_fn)(__u64 cgroup, void *ctx);
typedef int (*tasks_forget_fn)(const struct cgtma_task_key *key, void *ctx);
void tasks_after_interval(struct tasks *ts, const char *proc, const char *ns_root,
			  tasks_path_fn cgroup_path, tasks_forget_fn forget, void *ctx);

/*
 * --comm: a shell glob matched against the whole comm (fnmatch, no flags). 0, or -EINVAL
 * printed naming the pattern: empty, an unclosed '[', or a plain name longer than the
 * kernel's 15 characters, which no thread can have.
 */
int tasks_comm_pattern_check(const char *pattern);
bool tasks_comm_match(const char *pattern, const char *comm);

/*
 * Whether the thread tid of process pid is in cgroup path (or below it), as /proc says, its
 * path there taken relative to ns_root (as tasks_after_interval()).
 */
bool tasks_in_cgroup(const char *proc, const char *ns_root, int pid, int tid, const char *path);

#endif
