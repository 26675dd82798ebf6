/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A cgroup's noise from the kernel's own accounting (interval.h's struct noise), read at each
 * interval's end from files, with no cost at context switches:
 *
 *   wait       the threads of the cgroup and its descendants (cgroup.threads of each
 *              directory): the growth of /proc/TID/schedstat's run_delay, the time the
 *              scheduler had the thread runnable and not running. A thread counts from its
 *              second reading in the subtree: one seen for the first time (new, or moved
 *              in, with waits from its old cgroup in its run_delay) gives no delta yet, and
 *              one that exits or leaves between two readings loses its last part.
 *   throttled  cpu.stat's throttled_usec and nr_throttled (there with the cpu controller).
 *   pressure   cpu.pressure's "some" and "full" totals (PSI; "full" from Linux 5.13).
 *
 *   struct noise_reader r = {};
 *
 *   noise_read(&r, "/proc", "/sys/fs/cgroup/a", 0);          // the zero point
 *   ...
 *   noise_read(&r, "/proc", "/sys/fs/cgroup/a", interval);   // r.now: since the one before
 *   noise_total(&r, &whole_run);
 *   noise_release(&r);
 *
 * The rates are over the interval the caller names, the one its counts cover, not over the
 * time between the readings themselves: a rate times its interval is then exactly what the
 * file's value grew by between the two readings, and over a run the products add up to the
 * growth since the first, however late a loaded machine makes one reading or the next.
 */
#ifndef CGTMA_NOISE_H
#define CGTMA_NOISE_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "hashmap.h"
#include "interval.h"
#include "neighbours.h"

/*
 * A thread's run_delay at the last reading, and its growth since the reading before; with
 * noise_reader.per_thread its nonvoluntary switches too.
 */
struct noise_thread {
	int tid;
	bool has_waited;		/* it was in the reading before too */
	bool has_nvcsw, has_preempted;	/* nvcsw read; and in the reading before too */
	__u64 run_delay;
	__u64 waited;			/* ns */
	__u64 nvcsw;
	__u64 preempted;		/* nvcsw's growth */
};

/* One cgroup's readings: the last one, the interval's noise, and the run's sums. */
struct noise_reader {
	bool read;			/* there is a last reading to compare with */
	double last_span;		/* the interval up to it (with now.has) */
	unsigned has;			/* which cumulative values the last reading had */
	bool per_thread;		/* -T: each thread's preemptions too (its status) */
	struct noise_thread *threads;	/* its subtree's threads at the last reading */
	int nr_threads, cap_threads;
	struct hashmap tids;		/* tid -> index into threads */
	__u64 throttled_usec, nr_throttled, some_usec, full_usec;
	struct noise now;		/* between the last two readings */
	/* The run: per field (NOISE_* bit order) the time summed and the span it covers. */
	double sum[4], span[4];
	__u64 nr_throttled_sum;
	/*
	 * The run's neighbours, where the switch hook counts them (neighbours.h: the caller
	 * adds each interval's), and whether with SMT sharing.
	 */
	struct neighbour_tally others;
	bool others_smt;
};

/*
 * Reads the cgroup whose directory is dir, with threads' files under proc, at the end of an
 * interval of span seconds: r->now gets what changed since the last reading, per second of
 * span (has 0 at the first, and for what the kernel does not give), and the run's sums grow
 * by it. 0; -ENOENT when dir is gone (r->now empty, the last reading kept); -ENOMEM.
 */
int noise_read(struct noise_reader *r, const char *proc, const char *dir, double span);

/* An interval with no reading (the cgroup not there): r->now empty, the last reading kept. */
void noise_skip(struct noise_reader *r);

/*
 * Drops the last reading, for a cgroup not read for a while: the next reading is a zero
 * point again (r->now empty), so that no interval gets a rate over a longer time than its
 * own. The run's sums stay.
 */
void noise_forget(struct noise_reader *r);

/* The run's noise: each field over the time it was read for (the neighbours' too). */
void noise_total(const struct noise_reader *r, struct noise *out);

void noise_release(struct noise_reader *r);

/*
 * -T: a thread's noise, on its row, from the last reading of the tracked cgroup its row is
 * in (noise_read() with per_thread): its wait (run_delay's growth), and its preemptions,
 * the growth of /proc/TID/status's nonvoluntary_ctxt_switches: each time it left a CPU still
 * runnable, for any task (its own cgroup's too, where the cgroup's preempted counts other
 * cgroups' alone). As the cgroup's wait, a thread counts from its second reading there.
 */
struct noise_task {
	struct noise now;		/* the interval's: NOISE_WAIT, NOISE_PREEMPTED */
	double sum[2], span[2];		/* the run's: wait, preempted */
};

/* Thread tid's noise in cg's last reading (NULL: none) into r->now and the run's sums. */
void noise_task_read(struct noise_task *r, const struct noise_reader *cg, int tid);
/* The run's noise of the thread: each field over the intervals it was read in. */
void noise_task_total(const struct noise_task *r, struct noise *out);

/*
 * Parsers of the files' text, for noise_read() and tests. Each returns 0, or -ENOENT when
 * text lacks the fields.
 */
/* cpu.stat: throttled_usec and nr_throttled (both, or -ENOENT). */
int noise_parse_cpu_stat(const char *text, __u64 *throttled_usec, __u64 *nr_throttled);
/* cpu.pressure: has gets NOISE_PRESSURE_SOME and _FULL for the lines with a total. */
int noise_parse_pressure(const char *text, __u64 *some_usec, __u64 *full_usec, unsigned *has);
/* /proc/TID/schedstat: "run_time run_delay timeslices", run_delay in ns. */
int noise_parse_schedstat(const char *text, __u64 *run_delay);
/* /proc/TID/status: nonvoluntary_ctxt_switches. */
int noise_parse_status(const char *text, __u64 *nvcsw);

#endif
