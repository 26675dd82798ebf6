// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "cgroups.h"
#include "log.h"
#include "tasks.h"

int tasks_init(struct tasks *ts, int nr_events)
{
	memset(ts, 0, sizeof(*ts));
	ts->nr_events = nr_events;
	return 0;
}

void tasks_release(struct tasks *ts)
{
	for (int i = 0; i < ts->nr; i++)
		scope_counts_release(&ts->t[i].counts);
	free(ts->t);
	hashmap_clear(&ts->keys);
	memset(ts, 0, sizeof(*ts));
}

static void key_str(const struct cgtma_task_key *key, char *buf, size_t len)
{
	snprintf(buf, len, "%llu:%u", (unsigned long long)key->cgroup, key->tid);
}

void tasks_begin_read(struct tasks *ts)
{
	for (int i = 0; i < ts->nr; i++)
		ts->t[i].read = ts->t[i].ran = false;
}

static struct task *task_add(struct tasks *ts, const struct cgtma_task_key *key, const char *k)
{
	struct task *t;

	if (ALLOC_GROW(ts->t, ts->nr + 1, ts->cap))
		return NULL;
	t = &ts->t[ts->nr];
	memset(t, 0, sizeof(*t));
	t->key = *key;
	if (scope_counts_init(&t->counts, 1, ts->nr_events))
		return NULL;
	if (hashmap_put_str(&ts->keys, k, ts->nr)) {
		scope_counts_release(&t->counts);
		return NULL;
	}
	ts->nr++;
	return t;
}

int tasks_read(struct tasks *ts, const struct cgtma_task_key *key, int pid, const char *comm,
	       const struct cgtma_count *now, int half)
{
	struct task *t;
	int i;
	char k[48];

	key_str(key, k, sizeof(k));
	i = hashmap_get_str(&ts->keys, k);
	t = i >= 0 ? &ts->t[i] : task_add(ts, key, k);
	if (!t)
		return -ENOMEM;
	t->read = true;
	if (!t->counts.prev)
		return 0;	/* deleted past TASKS_GONE_KEPT: nothing to add to */
	t->pid = pid;
	snprintf(t->comm, sizeof(t->comm), "%s", comm);
	t->ran = scope_counts_take(&t->counts, now, 1, half);
	return 0;
}

bool tasks_in_cgroup(const char *proc, const char *ns_root, int pid, int tid, const char *path)
{
	char file[128], cg[4096], at[4096];
	size_t plen = strlen(path);
	const char *p = cg;

	snprintf(file, sizeof(file), "%s/%d/task/%d/cgroup", proc, pid, tid);
	if (cgroup_read_proc(file, cg, sizeof(cg)))
		return false;	/* exited (and reaped), or no v2 line */
	if (strcmp(path, "/") == 0)
		return true;
	/* In a private cgroup namespace: "/../../x/y" climbs from its root. */
	if (ns_root && ns_root[0] && strcmp(ns_root, "/") != 0) {
		if (cgroup_resolve(ns_root, cg, at, sizeof(at)))
			return false;
		p = at;
	}
	return strncmp(p, path, plen) == 0 && (p[plen] == '\0' || p[plen] == '/');
}

/*
 * Deletes t's kernel row: the one that comes back (a late slice) starts from zero. One the
 * kernel did not delete keeps its counts, and so do the readings taken from it.
 */
static void forget_row(struct task *t, tasks_forget_fn forget, void *ctx)
{
	if (forget(&t->key, ctx) == 0)
		scope_counts_reset_readings(&t->counts);
}

void tasks_after_interval(struct tasks *ts, const char *proc, const char *ns_root,
			  tasks_path_fn cgroup_path, tasks_forget_fn forget, void *ctx)
{
	for (int i = 0; i < ts->nr; i++) {
		struct task *t = &ts->t[i];
		const char *path;
		char k[48];

		switch (t->state) {
		case TASK_FINAL:
			forget_row(t, forget, ctx);
			t->state = TASK_DELETED;
			t->quiet = 0;
			/* Past the bound only a count is left; freed, not compacted (indexes). */
			if (ts->nr_gone_kept < TASKS_GONE_KEPT) {
				ts->nr_gone_kept++;
			} else {
				scope_counts_release(&t->counts);
				ts->nr_gone_forgotten++;
			}
			break;
		case TASK_DELETED:
			if (t->read) {
				forget_row(t, forget, ctx);
				t->quiet = 0;
			} else if (++t->quiet == TASKS_LATE_INTERVALS) {
				key_str(&t->key, k, sizeof(k));
				hashmap_del_str(&ts->keys, k);
				t->state = TASK_DROPPED;
			}
			break;
		case TASK_GONE:
			t->state = TASK_FINAL;
			break;
		case TASK_ALIVE:
			path = cgroup_path(t->key.cgroup, ctx);
			if (!path || !tasks_in_cgroup(proc, ns_root, t->pid, t->key.tid, path))
				t->state = TASK_GONE;
			break;
		case TASK_DROPPED:
			break;
		}
	}
}

int tasks_comm_pattern_check(const char *pattern)
{
	bool glob = strpbrk(pattern, "*?[") != NULL;

	if (!*pattern) {
		pr_err("--comm '': expected a thread name or a shell glob");
		return -EINVAL;
	}
	for (const char *p = pattern; (p = strchr(p, '[')); p++) {
		/* fnmatch takes a ']' right after '[' or "[!" as a member. */
		const char *q = p + 1;

		if (*q == '!' || *q == '^')
			q++;
		if (*q == ']')
			q++;
		if (!strchr(q, ']')) {
			pr_err("--comm '%s': '[' without its ']'", pattern);
			return -EINVAL;
		}
	}
	if (!glob && strlen(pattern) > 15) {
		pr_err("--comm '%s': the kernel keeps 15 characters of a thread's name; no thread "
		       "can match", pattern);
		return -EINVAL;
	}
	return 0;
}

bool tasks_comm_match(const char *pattern, const char *comm)
{
	return !pattern || fnmatch(pattern, comm, 0) == 0;
}

void tasks_say_forgotten(const struct tasks *ts)
{
	if (ts->nr_gone_forgotten)
		pr_notice("-T: %ld threads gone during the run are not in the summary (it keeps "
			  "%d)", ts->nr_gone_forgotten, TASKS_GONE_KEPT);
}
