// SPDX-License-Identifier: GPL-2.0
/*
 * A cgroup's noise from its files (noise.h): the parsers of cpu.stat, cpu.pressure and
 * schedstat, with and without the fields; and noise_read() on a fake cgroup tree and /proc
 * under a temporary directory: waits summed over the subtree's threads seen twice, absent
 * fields absent, the run's totals over the time read.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "noise.h"
#include "test.h"

static const char cpu_stat_controller[] =
	"usage_usec 1000\nuser_usec 600\nsystem_usec 400\nnr_periods 50\n"
	"nr_throttled 12\nthrottled_usec 345678\nnr_bursts 0\nburst_usec 0\n";
static const char cpu_stat_plain[] = "usage_usec 1000\nuser_usec 600\nsystem_usec 400\n"
				     "core_sched.force_idle_usec 0\n";

static void test_parse_cpu_stat(void)
{
	__u64 t = 7, n = 7;

	CHECK_INT(noise_parse_cpu_stat(cpu_stat_controller, &t, &n), 0);
	CHECK_INT(t, 345678);
	CHECK_INT(n, 12);
	t = n = 7;
	CHECK_INT(noise_parse_cpu_stat(cpu_stat_plain, &t, &n), -ENOENT);
	CHECK_INT(t, 7);
	/* A field whose name ends like another's is not it. */
	CHECK_INT(noise_parse_cpu_stat("xthrottled_usec 5\nnr_throttled 1\n", &t, &n), -ENOENT);
	CHECK_INT(noise_parse_cpu_stat("", &t, &n), -ENOENT);
}

static void test_parse_pressure(void)
{
	__u64 some = 0, full = 0;
	unsigned has = 99;

	CHECK_INT(noise_parse_pressure("some avg10=1.50 avg60=0.20 avg300=0.00 total=123456\n"
				       "full avg10=0.00 avg60=0.00 avg300=0.00 total=789\n",
				       &some, &full, &has), 0);
	CHECK_INT(has, NOISE_PRESSURE_SOME | NOISE_PRESSURE_FULL);
	CHECK_INT(some, 123456);
	CHECK_INT(full, 789);
	/* Before Linux 5.13 cpu.pressure has no "full" line. */
	full = 5;
	CHECK_INT(noise_parse_pressure("some avg10=0.00 avg60=0.00 avg300=0.00 total=42\n",
				       &some, &full, &has), 0);
	CHECK_INT(has, NOISE_PRESSURE_SOME);
	CHECK_INT(some, 42);
	CHECK_INT(full, 5);
	/* A line without its total does not borrow the next line's. */
	CHECK_INT(noise_parse_pressure("some avg10=0.00\nfull avg10=0.00 total=3\n", &some,
				       &full, &has), 0);
	CHECK_INT(has, NOISE_PRESSURE_FULL);
	CHECK_INT(full, 3);
	CHECK_INT(noise_parse_pressure("", &some, &full, &has), -ENOENT);
	CHECK_INT(has, 0);
}

static void test_parse_schedstat(void)
{
	__u64 d = 0;

	CHECK_INT(noise_parse_schedstat("2391063508 1875232144 14066\n", &d), 0);
	CHECK_INT(d, 1875232144ULL);
	CHECK_INT(noise_parse_schedstat("0 0 0\n", &d), 0);
	CHECK_INT(d, 0);
	CHECK_INT(noise_parse_schedstat("12\n", &d), -ENOENT);
	CHECK_INT(noise_parse_schedstat("", &d), -ENOENT);
}

static void test_parse_status(void)
{
	__u64 n = 0;

	CHECK_INT(noise_parse_status("Name:\tsh\nvoluntary_ctxt_switches:\t7\n"
				     "nonvoluntary_ctxt_switches:\t292\n", &n), 0);
	CHECK_INT(n, 292);
	/* The voluntary count alone is not it. */
	CHECK_INT(noise_parse_status("Name:\tsh\nvoluntary_ctxt_switches:\t7\n", &n), -ENOENT);
	CHECK_INT(noise_parse_status("", &n), -ENOENT);
}

static char tmp[] = "/tmp/cgtma-test-noise-XXXXXX";

static void put(const char *rel, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tmp, rel);
	f = fopen(path, "w");
	CHECK(f != NULL, "cannot write %s", path);
	if (!f)
		return;
	fputs(text, f);
	fclose(f);
}

static void dir(const char *rel)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", tmp, rel);
	CHECK(mkdir(path, 0755) == 0, "mkdir %s", path);
}

/* Thread tid's schedstat: run_delay ns. */
static void thread(int tid, unsigned long long delay)
{
	char rel[64], text[512];

	/* Made at the thread's first reading; there already at the next. */
	snprintf(text, sizeof(text), "%s/proc/%d", tmp, tid);
	mkdir(text, 0755);
	snprintf(rel, sizeof(rel), "proc/%d/schedstat", tid);
	snprintf(text, sizeof(text), "100 %llu 3\n", delay);
	put(rel, text);
}

/*
 * cg holds threads 1 and 2, cg/child 3 (and cg/child/leaf none); 4 is in cg/child at the
 * second reading only (moved in), 2 is gone then (exited): only 1 and 3 count, with their
 * growth; 4's waits from where it was before are not cg's.
 */
static void test_read_tree(void)
{
	struct noise_reader r = {};
	struct noise total;
	char proc[512], cg[512];

	snprintf(proc, sizeof(proc), "%s/proc", tmp);
	snprintf(cg, sizeof(cg), "%s/cg", tmp);
	dir("proc");
	dir("cg");
	dir("cg/child");
	dir("cg/child/leaf");
	put("cg/cgroup.threads", "1\n2\n");
	put("cg/child/cgroup.threads", "3\n");
	put("cg/child/leaf/cgroup.threads", "");
	put("cg/cpu.stat", cpu_stat_plain);
	put("cg/cpu.pressure", "some avg10=0.00 avg60=0.00 avg300=0.00 total=1000000\n"
			       "full avg10=0.00 avg60=0.00 avg300=0.00 total=200000\n");
	thread(1, 1000000000ULL);
	thread(2, 5000000000ULL);
	thread(3, 0);
	thread(4, 9000000000ULL);

	CHECK_INT(noise_read(&r, proc, cg, 0), 0);
	CHECK_INT(r.now.has, 0);	/* a first reading: nothing to compare with */
	CHECK_INT(r.nr_threads, 3);

	put("cg/cgroup.threads", "1\n");
	put("cg/child/cgroup.threads", "3\n4\n");
	put("cg/cpu.pressure", "some avg10=0.00 avg60=0.00 avg300=0.00 total=1500000\n"
			       "full avg10=0.00 avg60=0.00 avg300=0.00 total=200000\n");
	thread(1, 1400000000ULL);		/* waited 0.4 s */
	thread(3, 200000000ULL);		/* 0.2 s */
	thread(4, 9900000000ULL);		/* moved in: not counted */
	CHECK_INT(noise_read(&r, proc, cg, 2.0), 0);
	CHECK_INT(r.now.has, NOISE_WAIT | NOISE_PRESSURE_SOME | NOISE_PRESSURE_FULL);
	CHECK_NEAR(r.now.wait, 0.6 / 2, 1e-12);
	CHECK_NEAR(r.now.pressure_some, 0.5 / 2, 1e-12);
	CHECK_NEAR(r.now.pressure_full, 0.0, 1e-12);

	/* The cpu controller enabled: throttled from the reading after. */
	put("cg/cpu.stat", cpu_stat_controller);
	CHECK_INT(noise_read(&r, proc, cg, 1.0), 0);
	CHECK(!(r.now.has & NOISE_THROTTLED), "throttled with one reading of it");
	CHECK_NEAR(r.now.wait, 0.0, 1e-12);	/* 4 counts now: no growth */
	put("cg/cpu.stat", "nr_periods 60\nnr_throttled 20\nthrottled_usec 845678\n");
	thread(4, 10400000000ULL);		/* 0.5 s */
	CHECK_INT(noise_read(&r, proc, cg, 1.0), 0);
	CHECK(r.now.has & NOISE_THROTTLED, "throttled missing");
	CHECK_NEAR(r.now.throttled, 0.5, 1e-12);
	CHECK_INT(r.now.nr_throttled, 8);
	CHECK_NEAR(r.now.wait, 0.5, 1e-12);

	/* Over the run: wait 0.6 + 0 + 0.5 s in 4 s; throttled 0.5 s in the 1 s read. */
	noise_total(&r, &total);
	CHECK_INT(total.has, NOISE_WAIT | NOISE_THROTTLED | NOISE_PRESSURE_SOME |
		  NOISE_PRESSURE_FULL);
	CHECK_NEAR(total.wait, 1.1 / 4.0, 1e-12);
	CHECK_NEAR(total.throttled, 0.5, 1e-12);
	CHECK_INT(total.nr_throttled, 8);
	CHECK_NEAR(total.pressure_some, 0.5 / 4.0, 1e-12);

	/* Forgotten: the next reading is a zero point; the run's sums stay. */
	noise_forget(&r);
	CHECK_INT(r.now.has, 0);
	CHECK_INT(noise_read(&r, proc, cg, 6.0), 0);
	CHECK_INT(r.now.has, 0);
	CHECK_INT(r.nr_threads, 3);
	noise_total(&r, &total);
	CHECK_NEAR(total.wait, 1.1 / 4.0, 1e-12);

	/* Gone: an error, nothing this time, and the last reading kept. */
	snprintf(cg, sizeof(cg), "%s/gone", tmp);
	CHECK_INT(noise_read(&r, proc, cg, 1.0), -ENOENT);
	CHECK_INT(r.now.has, 0);
	CHECK_INT(r.nr_threads, 3);
	noise_release(&r);
}

/* Thread tid's status: its nonvoluntary switches. */
static void status(int tid, unsigned long long nvcsw)
{
	char rel[64], text[512];

	snprintf(rel, sizeof(rel), "proc/%d/status", tid);
	snprintf(text, sizeof(text), "Name:\tspin\nvoluntary_ctxt_switches:\t3\n"
		 "nonvoluntary_ctxt_switches:\t%llu\n", nvcsw);
	put(rel, text);
}

/*
 * -T's rows: thread 21's wait and preemptions from its cgroup's reading (per_thread);
 * thread 22 first seen at the second reading (nothing yet), then gone (nothing); the
 * cgroup read without per_thread has waits alone.
 */
static void test_task(void)
{
	struct noise_reader cg = { .per_thread = true };
	struct noise_task a = {}, b = {};
	struct noise total;
	char proc[512], dir_cg[512];

	snprintf(proc, sizeof(proc), "%s/proc", tmp);
	snprintf(dir_cg, sizeof(dir_cg), "%s/tcg", tmp);
	dir("tcg");
	put("tcg/cgroup.threads", "21\n");
	thread(21, 1000000000ULL);
	status(21, 100);
	CHECK_INT(noise_read(&cg, proc, dir_cg, 0), 0);
	noise_task_read(&a, &cg, 21);
	CHECK_INT(a.now.has, 0);		/* zero points */

	put("tcg/cgroup.threads", "21\n22\n");
	thread(21, 1500000000ULL);		/* waited 0.5 s in 2 s */
	thread(22, 400000000ULL);
	status(21, 130);			/* preempted 30 times */
	status(22, 5);
	CHECK_INT(noise_read(&cg, proc, dir_cg, 2.0), 0);
	noise_task_read(&a, &cg, 21);
	noise_task_read(&b, &cg, 22);
	CHECK_INT(a.now.has, NOISE_WAIT | NOISE_PREEMPTED);
	CHECK_NEAR(a.now.wait, 0.25, 1e-12);
	CHECK_NEAR(a.now.preempted, 15.0, 1e-12);
	CHECK_INT(b.now.has, 0);

	/* 4 s on: 22 gone, 21 waited 0.8 s and was preempted 10 times. */
	put("tcg/cgroup.threads", "21\n");
	thread(21, 2300000000ULL);
	status(21, 140);
	CHECK_INT(noise_read(&cg, proc, dir_cg, 4.0), 0);
	noise_task_read(&a, &cg, 21);
	noise_task_read(&b, &cg, 22);
	CHECK_NEAR(a.now.wait, 0.2, 1e-12);
	CHECK_NEAR(a.now.preempted, 2.5, 1e-12);
	CHECK_INT(b.now.has, 0);
	/* A reused id, its count smaller: no preemptions; no cgroup: nothing. */
	status(21, 2);
	CHECK_INT(noise_read(&cg, proc, dir_cg, 1.0), 0);
	noise_task_read(&a, &cg, 21);
	CHECK_INT(a.now.has, NOISE_WAIT);
	noise_task_read(&b, NULL, 21);
	CHECK_INT(b.now.has, 0);

	/* Over the run: 1.3 s waited in 7 s; 40 preemptions in the 6 s they were counted. */
	noise_task_total(&a, &total);
	CHECK_INT(total.has, NOISE_WAIT | NOISE_PREEMPTED);
	CHECK_NEAR(total.wait, 1.3 / 7, 1e-12);
	CHECK_NEAR(total.preempted, 40.0 / 6, 1e-12);
	noise_task_total(&b, &total);
	CHECK_INT(total.has, 0);

	/* Without per_thread: no status read, no preemptions. */
	cg.per_thread = false;
	status(21, 50);
	thread(21, 2400000000ULL);
	CHECK_INT(noise_read(&cg, proc, dir_cg, 1.0), 0);
	noise_task_read(&a, &cg, 21);
	CHECK_INT(a.now.has, NOISE_WAIT);
	noise_release(&cg);
}

/* A kernel without schedstats (no CONFIG_SCHED_INFO): threads alive, no file: no wait. */
static void test_no_schedstat(void)
{
	struct noise_reader r = {};
	char proc[512], cg[512];

	snprintf(proc, sizeof(proc), "%s/proc", tmp);
	snprintf(cg, sizeof(cg), "%s/bare", tmp);
	dir("bare");
	dir("proc/77");
	put("bare/cgroup.threads", "77\n");
	CHECK_INT(noise_read(&r, proc, cg, 0), 0);
	CHECK_INT(noise_read(&r, proc, cg, 1.0), 0);
	CHECK_INT(r.now.has, 0);	/* no cpu.stat fields, no cpu.pressure either */
	noise_release(&r);
}

int main(void)
{
	char cmd[600];

	test_parse_cpu_stat();
	test_parse_pressure();
	test_parse_schedstat();
	test_parse_status();
	if (!mkdtemp(tmp)) {
		printf("not ok - mkdtemp: %s\n", strerror(errno));
		return 1;
	}
	test_read_tree();
	test_no_schedstat();
	test_task();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	if (system(cmd))
		printf("note: could not remove %s\n", tmp);
	return test_done("noise");
}
