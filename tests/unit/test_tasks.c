// SPDX-License-Identifier: GPL-2.0
/*
 * The -T thread set: deltas per epoch half, a thread found gone reported once more (marked
 * final) and then dropped with its kernel row forgotten, a last slice that makes the kernel
 * row again after that joining the thread's totals, a thread that comes back after being
 * dropped starting again from zero, the cgroup check against a fake /proc (also as a
 * private cgroup namespace shows it), and --comm patterns.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tasks.h"
#include "test.h"

#define EVENTS 2

static char proc[64];
static int forgotten;
static int forget_err;		/* what forget() returns */
static const char *ns_path;	/* cgroup 9's path */

static const char *path_of(__u64 cgroup, void *ctx)
{
	(void)ctx;
	return cgroup == 7 ? "/bench" : cgroup == 9 ? ns_path : NULL;
}

static int forget(const struct cgtma_task_key *key, void *ctx)
{
	(void)key;
	(void)ctx;
	forgotten++;
	return forget_err;
}

/* Writes proc/PID/task/TID/cgroup with a v1 line and the v2 line "0::PATH". */
static void fake_thread(int pid, int tid, const char *path)
{
	char dir[160], file[200];
	FILE *f;

	snprintf(dir, sizeof(dir), "%s/%d", proc, pid);
	mkdir(dir, 0755);
	snprintf(dir, sizeof(dir), "%s/%d/task", proc, pid);
	mkdir(dir, 0755);
	snprintf(dir, sizeof(dir), "%s/%d/task/%d", proc, pid, tid);
	mkdir(dir, 0755);
	snprintf(file, sizeof(file), "%s/cgroup", dir);
	f = fopen(file, "w");
	fprintf(f, "12:cpu,cpuacct:/x\n0::%s\n", path);
	fclose(f);
}

static void gone_thread(int pid, int tid)
{
	char file[200];

	snprintf(file, sizeof(file), "%s/%d/task/%d/cgroup", proc, pid, tid);
	unlink(file);
}

static void counts(struct cgtma_count *c, __u64 v)
{
	for (int e = 0; e < EVENTS; e++)
		c[e] = (struct cgtma_count){ .counter = v + e, .enabled = v, .running = v };
}

static void test_lifecycle(void)
{
	struct cgtma_task_key key = { .cgroup = 7, .tid = 101 };
	struct cgtma_count now[EVENTS];
	struct tasks ts;

	CHECK_INT(tasks_init(&ts, EVENTS), 0);
	fake_thread(100, 101, "/bench/inner");

	/* Half 0, then half 1, then half 0 again: deltas per half. */
	tasks_begin_read(&ts);
	counts(now, 10);
	CHECK_INT(tasks_read(&ts, &key, 100, "uperf", now, 0), 0);
	CHECK_INT(ts.nr, 1);
	CHECK_INT((int)ts.t[0].counts.delta[1].counter, 11);
	CHECK(ts.t[0].ran, "a first read with counts ran");
	tasks_after_interval(&ts, proc, NULL, path_of, forget, NULL);
	CHECK_INT(ts.t[0].state, TASK_ALIVE);

	tasks_begin_read(&ts);
	counts(now, 5);
	CHECK_INT(tasks_read(&ts, &key, 100, "uperf", now, 1), 0);
	CHECK_INT((int)ts.t[0].counts.delta[0].counter, 5);
	counts(now, 10);
	tasks_begin_read(&ts);
	CHECK_INT(tasks_read(&ts, &key, 100, "uperf", now, 0), 0);
	CHECK(!ts.t[0].ran, "no change in half 0: did not run");
	CHECK_INT((int)ts.t[0].counts.total[0].counter, 15);

	/* Gone: one more interval (final), then dropped and forgotten. */
	gone_thread(100, 101);
	tasks_after_interval(&ts, proc, NULL, path_of, forget, NULL);
	CHECK_INT(ts.t[0].state, TASK_GONE);
	tasks_after_interval(&ts, proc, NULL, path_of, forget, NULL);
	CHECK_INT(ts.t[0].state, TASK_FINAL);
	CHECK_INT(forgotten, 0);
	tasks_after_interval(&ts, proc, NULL, path_of, forget, NULL);
	CHECK_INT(ts.t[0].state, TASK_DELETED);
	CHECK_INT(forgotten, 1);
	CHECK_INT((int)ts.t[0].counts.total[0].counter, 15);

	/*
	 * Its last switch came after the deletion (it waited on a run queue after leaving
	 * /proc): the kernel row is back, from zero. The slice joins the thread's totals, no
	 * second thread is made (it would be reported exited twice), and the row is deleted
	 * again.
	 */
	tasks_begin_read(&ts);
	counts(now, 2);
	CHECK_INT(tasks_read(&ts, &key, 100, "uperf", now, 1), 0);
	CHECK_INT(ts.nr, 1);
	CHECK_INT((int)ts.t[0].counts.total[0].counter, 17);
	CHECK_INT((int)ts.t[0].counts.total[1].counter, 20);
	tasks_after_interval(&ts, proc, NULL, path_of, forget, NULL);
	CHECK_INT(ts.t[0].state, TASK_DELETED);
	CHECK_INT(forgotten, 2);
	/* And again, in the other half. */
	tasks_begin_read(&ts);
	counts(now, 1);
	CHECK_INT(tasks_read(&ts, &key, 100, "uperf", now, 0), 0);
	CHECK_INT(ts.nr, 1);
	CHECK_INT((int)ts.t[0].counts.total[0].counter, 18);
	tasks_after_interval(&ts, proc, NULL, path_of, forget, NULL);
	CHECK_INT(forgotten, 3);
	/* A deletion that failed: the row keeps its counts, and a read of them adds nothing. */
	tasks_begin_read(&ts);
	counts(now, 4);
	CHECK_INT(tasks_read(&ts, &key, 100, "uperf", now, 1), 0);
	CHECK_INT((int)ts.t[0].counts.total[0].counter, 22);
	forget_err = -EBUSY;
	tasks_after_interval(&ts, proc, NULL, path_of, forget, NULL);
	forget_err = 0;
	tasks_begin_read(&ts);
	CHECK_INT(tasks_read(&ts, &key, 100, "uperf", now, 1), 0);
	CHECK_INT((int)ts.t[0].counts.total[0].counter, 22);
	tasks_after_interval(&ts, proc, NULL, path_of, forget, NULL);
	CHECK_INT(forgotten, 5);
	/* Quiet intervals: the key is released after TASKS_LATE_INTERVALS of them. */
	for (int i = 0; i < TASKS_LATE_INTERVALS; i++) {
		CHECK_INT(ts.t[0].state, TASK_DELETED);
		tasks_begin_read(&ts);
		tasks_after_interval(&ts, proc, NULL, path_of, forget, NULL);
	}
	CHECK_INT(ts.t[0].state, TASK_DROPPED);
	CHECK_INT(forgotten, 5);
	CHECK_INT((int)ts.t[0].counts.total[0].counter, 22);

	/* The kernel row comes back later (a tid reused): a new thread, from zero. */
	tasks_begin_read(&ts);
	counts(now, 3);
	CHECK_INT(tasks_read(&ts, &key, 100, "other", now, 1), 0);
	CHECK_INT(ts.nr, 2);
	CHECK_INT((int)ts.t[1].counts.delta[0].counter, 3);
	CHECK_STR(ts.t[1].comm, "other");
	tasks_release(&ts);
}

static void test_in_cgroup(void)
{
	fake_thread(200, 201, "/bench");
	fake_thread(200, 202, "/benchmark");
	fake_thread(200, 203, "/bench/a/b");
	CHECK(tasks_in_cgroup(proc, NULL, 200, 201, "/bench"), "the cgroup itself");
	CHECK(!tasks_in_cgroup(proc, "/", 200, 202, "/bench"), "a sibling sharing a prefix");
	CHECK(tasks_in_cgroup(proc, NULL, 200, 203, "/bench"), "below it");
	CHECK(tasks_in_cgroup(proc, NULL, 200, 203, "/"), "the root holds every thread");
	CHECK(!tasks_in_cgroup(proc, NULL, 200, 299, "/"), "no such thread");
}

/*
 * In a private cgroup namespace rooted at the host's /cg/ns, /proc shows paths relative to
 * that root: "/in" is /cg/ns/in, "/../out" climbs to /cg/out. Tracked paths are the host's.
 */
static void test_in_cgroup_ns(void)
{
	struct cgtma_task_key key = { .cgroup = 9, .tid = 301 };
	struct cgtma_count now[EVENTS];
	struct tasks ts;

	fake_thread(300, 301, "/in");
	fake_thread(300, 302, "/../out/w");
	fake_thread(300, 303, "/../../..");
	fake_thread(300, 304, "/");
	CHECK(tasks_in_cgroup(proc, "/cg/ns", 300, 301, "/cg/ns/in"), "inside the namespace");
	CHECK(!tasks_in_cgroup(proc, "/cg/ns", 300, 301, "/in"), "/in is the namespace's");
	CHECK(tasks_in_cgroup(proc, "/cg/ns", 300, 302, "/cg/out"), "outside it, climbing");
	CHECK(!tasks_in_cgroup(proc, "/cg/ns", 300, 302, "/cg/ns"), "not in the namespace's root");
	CHECK(!tasks_in_cgroup(proc, "/cg/ns", 300, 303, "/cg"), "above the hierarchy's root");
	CHECK(tasks_in_cgroup(proc, "/cg/ns", 300, 303, "/"), "the root holds every thread");
	CHECK(tasks_in_cgroup(proc, "/cg/ns", 300, 304, "/cg/ns"), "the namespace's root");
	/* Without the namespace's root, the thread in /cg/ns/in reads as gone. */
	CHECK(!tasks_in_cgroup(proc, NULL, 300, 301, "/cg/ns/in"), "unresolved: not found");

	/* A thread there stays alive across intervals. */
	CHECK_INT(tasks_init(&ts, EVENTS), 0);
	tasks_begin_read(&ts);
	counts(now, 10);
	CHECK_INT(tasks_read(&ts, &key, 300, "getppid-1", now, 0), 0);
	ns_path = "/cg/ns/in";
	for (int i = 0; i < 3; i++)
		tasks_after_interval(&ts, proc, "/cg/ns", path_of, forget, NULL);
	CHECK_INT(ts.t[0].state, TASK_ALIVE);
	tasks_after_interval(&ts, proc, "/", path_of, forget, NULL);
	CHECK_INT(ts.t[0].state, TASK_GONE);
	ns_path = NULL;
	tasks_release(&ts);
}

static void test_comm(void)
{
	CHECK_INT(tasks_comm_pattern_check("uperf"), 0);
	CHECK_INT(tasks_comm_pattern_check("up*"), 0);
	CHECK_INT(tasks_comm_pattern_check("getppid-[12]"), 0);
	CHECK_INT(tasks_comm_pattern_check("a[]]"), 0);
	CHECK_INT(tasks_comm_pattern_check(""), -EINVAL);
	CHECK_INT(tasks_comm_pattern_check("uperf["), -EINVAL);
	CHECK_INT(tasks_comm_pattern_check("sixteen-chars-xx"), -EINVAL);
	CHECK(tasks_comm_match("up*", "uperf"), "glob");
	CHECK(!tasks_comm_match("up", "uperf"), "whole name");
	CHECK(tasks_comm_match(NULL, "anything"), "no pattern matches all");
}

int main(void)
{
	char cmd[128];

	snprintf(proc, sizeof(proc), "/tmp/cgtma-test-tasks.XXXXXX");
	if (!mkdtemp(proc))
		return 1;
	test_lifecycle();
	test_in_cgroup();
	test_in_cgroup_ns();
	test_comm();
	snprintf(cmd, sizeof(cmd), "rm -rf %s", proc);
	if (system(cmd))
		fprintf(stderr, "cannot remove %s\n", proc);
	return test_done("tasks");
}
