/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A cgroup's noise from the kernel's own accounting (report.h's struct noise), read at each
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
 *   noise_read(&r, "/proc", "/sys/fs/cgroup/a", mono);   // the zero point
 *   ...
 *   noise_read(&r, "/proc", "/sys/fs/cgroup/a", mono);   // r.now: since the one before
 *   noise_total(&r, &whole_run);
 *   noise_release(&r);
 */
#ifndef CGTMA_NOISE_H
#define CGTMA_NOISE_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "hashmap.h"
#include "neighbours.h"
#include "report.h"

/* A thread's run_delay at the last reading. */
struct noise_thread {
	int tid;
	__u64 run_delay;
};

/* One cgroup's readings: the last one, the interval's noise, and the run's sums. */
struct noise_reader {
	double time;			/* when last read (seconds, any monotonic clock); 0:
					 * never */
	unsigned has;			/* which cumulative values the last reading had */
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
 * Reads the cgroup whose directory is dir, with threads' files under proc, at time now:
 * r->now gets what changed since the last reading (has 0 at the first, and for what the
 * kernel does not give), and the run's sums grow by it. 0; -ENOENT when dir is gone (r->now
 * empty, the last reading kept); -ENOMEM.
 */
int noise_read(struct noise_reader *r, const char *proc, const char *dir, double now);

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
 * Parsers of the files' text, for noise_read() and tests. Each returns 0, or -ENOENT when
 * text lacks the fields.
 */
/* cpu.stat: throttled_usec and nr_throttled (both, or -ENOENT). */
int noise_parse_cpu_stat(const char *text, __u64 *throttled_usec, __u64 *nr_throttled);
/* cpu.pressure: has gets NOISE_PRESSURE_SOME and _FULL for the lines with a total. */
int noise_parse_pressure(const char *text, __u64 *some_usec, __u64 *full_usec, unsigned *has);
/* /proc/TID/schedstat: "run_time run_delay timeslices", run_delay in ns. */
int noise_parse_schedstat(const char *text, __u64 *run_delay);

#endif
