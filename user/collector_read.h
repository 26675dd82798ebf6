/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The collector's reads (collector.h opens it and flushes): the counts of the half the last
 * flush closed, which nothing adds to while they are read, per CPU, per interrupt scope, per
 * tracked cgroup and per thread, cumulative within their half since tracking began (callers
 * take differences half by half); the marks of that half, and the BPF side's own figures.
 */
#ifndef CGTMA_COLLECTOR_READ_H
#define CGTMA_COLLECTOR_READ_H

#include <stdbool.h>
#include <linux/types.h>

#include "bpf/cgtma.h"
#include "switchhook.h"

struct collector;


/*
 * When each CPU's counters were last read in the closed half (CLOCK_MONOTONIC ns, 0 if
 * never): after a flush, the exact end of the interval on that CPU. out has one entry per
 * possible CPU.
 */
int collector__read_times(struct collector *c, __u64 *out);

/* The half (0 or 1) the last flush closed, which the reads return. */
int collector__closed_epoch(const struct collector *c);

/*
 * Per possible CPU, whether its counts in the closed half may have changed since that half
 * was last read (it was online at a flush that opened or closed the half since): the rows
 * the two reads below write. The others' counts stand as they were read.
 */
const bool *collector__cpus_read(const struct collector *c);

/*
 * Cumulative counts of the closed half, per CPU: out[cpu * nr_events + event], for the CPUs
 * collector__cpus_read() names. Read in place: nothing fails.
 */
void collector__read_cpus(struct collector *c, struct cgtma_count *out);

/*
 * The same of interrupt scope irq (< CGTMA_NR_IRQ) counted by --irq; summed: into out's
 * first row, the sum over every possible CPU (those that stood still included, kept aside),
 * whose differences from one read of a half to the next are the scope's deltas.
 */
void collector__read_irq(struct collector *c, int irq, struct cgtma_count *out, bool summed);

/*
 * The tracked cgroups whose counts may have changed in the closed half: those the CPUs
 * charged in it, from the BPF side's lists, one lookup each. Every tracked cgroup instead
 * (batch lookups where the kernel has them, 5.6+) when that is cheaper, when a list
 * overflowed, and for two reads after a cgroup the mkdir hook counted from its birth is
 * tracked (its counts may be listed in a half read before). A cgroup not read has the counts
 * of its last read of that half. cb is called per cgroup with its counts,
 * collector__cgroup_rows() rows of nr_events; returns 0 or the first error.
 */
typedef int (*collector_cgroup_cb)(__u64 id, const struct cgtma_count *rows, void *ctx);
int collector__read_cgroups(struct collector *c, collector_cgroup_cb cb, void *ctx);

/*
 * -T: every thread's row, cb called with its key, pid, comm (NUL-terminated) and the closed
 * half's cumulative counts (nr_events). Returns 0 or the first error.
 */
typedef int (*collector_task_cb)(const struct cgtma_task_key *key, __u32 pid, const char *comm,
				 const struct cgtma_count *counts, void *ctx);
int collector__read_tasks(struct collector *c, collector_task_cb cb, void *ctx);
/* -T: drops a thread's row (it exited or left the cgroup, and was reported). */
int collector__forget_task(struct collector *c, const struct cgtma_task_key *key);

/*
 * The marks of the closed half (struct cgtma_miss): slices charged though the hook did not
 * see where they began, on any hook (the perf-event hook's missed switches and skipped runs,
 * a task moved while it ran, a move's slice other tasks ran in): their counts may hold
 * another cgroup's. cb is called for each one listed, on the CPUs collector__cpus_read()
 * names (each CPU lists CGTMA_MISSES_MAX at most); sum gets the totals of all of them.
 */
struct collector_marks {
	__u64 marks;		/* marks, listed or not */
	__u64 slices;		/* the slices they mark (a skipped run is one) */
	__u64 max_ns;		/* the most time that may be another cgroup's (those bounded) */
	__u64 unbounded;	/* of slices, those with no bound (skipped runs, failed reads) */
};
typedef void (*collector_mark_cb)(int cpu, const struct cgtma_miss *m, void *ctx);
void collector__read_marks(struct collector *c, collector_mark_cb cb, void *ctx,
			   struct collector_marks *sum);

/*
 * collector_setup.noise: per pair of cgroups (v2 ids of the tasks' own cgroups, not the
 * tracked ones), the closed half's preemptions, the time the preempting slices took and the
 * time the two shared a core (bpf/noise.bpf.h); cb is called once per pair, whose counts are
 * then forgotten: each read gives what came since the half was last read. 0 or -errno.
 */
typedef void (*collector_noise_cb)(const struct cgtma_noise_key *key,
				   const struct cgtma_noise_pair *pair, void *ctx);
int collector__read_noise(struct collector *c, collector_noise_cb cb, void *ctx);

/* Whether the run counts noise between cgroups, and whether some CPU has an SMT sibling. */
bool collector__noise(const struct collector *c);
bool collector__smt(const struct collector *c);

/*
 * Time spent in the switch hook: counted while opts.bpf_stats holds the kernel's statistics
 * on, or while kernel.bpf_stats_enabled is 1.
 */
int collector__hook_runtime(struct collector *c, __u64 *run_time_ns, __u64 *run_cnt);

/*
 * At the end of a run: what the BPF side saw that the counts do not show, as warnings (event
 * reads that failed, slices no thread row took, new cgroups not counted from birth), and
 * with -v its figures (slices, the hook's misses, the charge cache; with cgroups, how the
 * reads of the tracked cgroups went).
 */
void collector__say_stats(struct collector *c, bool cgroups);

#endif
