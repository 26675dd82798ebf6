/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The BPF side's owner: opens its skeleton, configures, loads and attaches it over the
 * per-CPU events (perfev.h: per online CPU, never per cgroup), flushes running slices, and
 * reads the accumulated counts.
 *
 * Counts come in two halves, epochs, that the CPUs write by turns: each flush closes the half
 * being written and opens the other, so the reads after it return counts that nothing is
 * adding to, one cut for every CPU and cgroup. The counts read back are cumulative within
 * their half since tracking began: callers take differences half by half
 * (collector__closed_epoch() says which half a read returned).
 */
#ifndef CGTMA_COLLECTOR_H
#define CGTMA_COLLECTOR_H

#include <stdbool.h>
#include <linux/perf_event.h>
#include <linux/types.h>

#include "bpf/cgtma.h"

struct collector;

/* Where slices end at a switch between cgroups. */
enum switch_hook {
	SWITCH_HOOK_AUTO,		/* perf-event where it is exact, else tracepoint */
	SWITCH_HOOK_TRACEPOINT,		/* tp_btf/sched_switch: runs at every switch */
	SWITCH_HOOK_PERF_EVENT,		/* cgroup-switches (5.13+): runs at cgroup switches */
};

/*
 * How the per-cgroup maps get their memory. Preallocated is the rule before Linux 6.1 (the
 * verifier refuses run-time allocation in perf-event programs, and on PREEMPT_RT in raw
 * tracepoint programs, and warns elsewhere); from 6.1 entries are allocated as cgroups come.
 * The environment's CGTMA_MAP_ALLOC overrides it, so tests can run either layout anywhere.
 */
enum map_alloc {
	MAP_ALLOC_AUTO,			/* by the kernel's version */
	MAP_ALLOC_PREALLOC,
	MAP_ALLOC_RUNTIME,
};

/* The collector's options, as the command line and environment give them (options.c). */
struct collector_opts {
	int max_cgroups;			/* --max-cgroups: tracked cgroups the maps hold;
						 * 0: 16384, or 1024 where they are preallocated */
	enum switch_hook switch_hook;		/* --switch-hook, CGTMA_SWITCH_HOOK */
	enum map_alloc map_alloc;		/* CGTMA_MAP_ALLOC */
	bool per_task;				/* -T: every switch ends a slice; thread rows */
	int max_tasks;				/* --max-tasks: threads the task map holds;
						 * 0: 4096 */
	__u32 irq_mask;				/* --irq: bit i carves out interrupt scope i */
	bool per_cpu;				/* -A: with tracked cgroups, their counts per
						 * CPU, at possible CPUs times the memory */
	bool bpf_stats;				/* have the kernel time the hook (5.8+) */
	bool verbose;				/* libbpf's warnings and the verifier log */
};

/* What the run has settled by the time the collector opens: the events, CPUs and levels. */
struct collector_setup {
	int nr_events;				/* 1..CGTMA_MAX_EVENTS */
	const struct perf_event_attr *attrs;	/* per event */
	const int *group;			/* per event; a group's events are consecutive */
	const char *const *names;		/* per event, for messages */
	const bool *cpus;			/* -C: per possible CPU, whether to count it
						 * (NULL: all); kept until collector__destroy() */
	__u32 max_level;			/* deepest level a tracked cgroup can have */
	__u64 tracked_levels;			/* bit L: level L can hold tracked cgroups */
	__u64 new_cgroup_levels;		/* bit L: new cgroups at L count from birth */
	/*
	 * Told when a counted CPU comes online (its events opened) or goes offline (closed),
	 * from collector__flush(), so that others with per-CPU events follow the same CPUs
	 * (the sampler); NULL: nobody. Its errors are its own to say.
	 */
	void (*cpu_changed)(int cpu, bool online, void *ctx);
	void *cpu_changed_ctx;
};

/*
 * Checks BTF (probe_privileges() has passed), opens every event on every online CPU (of
 * those su->cpus selects), loads and attaches. A CPU left out has no events: the tracepoint
 * hooks read nothing there, and the perf-event hook has no cgroup-switches event there to
 * run on.
 * Prints what failed, naming the event and CPU or the step, and returns -errno.
 */
int collector__open(const struct collector_opts *o, const struct collector_setup *su,
		    struct collector **cp);
void collector__destroy(struct collector *c);

/* Possible CPUs: the per-CPU arrays below have this many entries of nr_events counts. */
int collector__nr_cpus(const struct collector *c);

/*
 * The map whose keys are the tracked cgroups (v2 ids), for another BPF object to share
 * (bpf_map__reuse_fd()): the sampler reads whether a key is there, nothing else.
 */
int collector__tracked_fd(const struct collector *c);

/*
 * The read-only map of the tracked levels (bpf/cgroup.bpf.h), frozen at the load, for another
 * BPF object to share as its own before its load (bpf_map__reuse_fd()).
 */
int collector__levels_fd(const struct collector *c);

/* Rows of counts a cgroup's read gives: nr_cpus with per_cpu_cgroups, else 1 (the sum). */
int collector__cgroup_rows(const struct collector *c);
/* Whether cpu is counted: online, and selected by -C. */
bool collector__cpu_online(const struct collector *c, int cpu);

/*
 * Accounts the slice running on every online CPU up to now. First follows CPU hotplug: a CPU
 * that came online since the last call gets its events and is counted from now on; one that
 * went offline has its events closed and keeps its counts (collector__cpu_online() says
 * which are online). -v says when either happens.
 */
int collector__flush(struct collector *c);

/*
 * When each CPU's counters were last read in the closed half (CLOCK_MONOTONIC ns, 0 if
 * never): after a flush, the exact end of the interval on that CPU. out has one entry per
 * possible CPU.
 */
int collector__read_times(struct collector *c, __u64 *out);

/* The half (0 or 1) the last flush closed, which the reads return. */
int collector__closed_epoch(const struct collector *c);

/* Starts counting a cgroup (no-op if tracked); -E2BIG when the map is full. */
int collector__track(struct collector *c, __u64 id);
int collector__untrack(struct collector *c, __u64 id);

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

/* How many reads of the cgroups so far took the lists, and how many read every one. */
void collector__cgroup_reads(const struct collector *c, long *listed, long *all);

/*
 * Whether the v2 hierarchy may have changed (a cgroup made or removed) since the
 * count *seen, which it then updates; call it before walking the hierarchy, so that a change
 * during the walk is seen next time. Always true where the hooks are not attached (no
 * new_cgroup_levels).
 */
bool collector__cgroups_changed(struct collector *c, __u64 *seen);

/*
 * -T: every thread's row, cb called with its key, pid, comm (NUL-terminated) and the closed
 * half's cumulative counts (nr_events). Returns 0 or the first error.
 */
typedef int (*collector_task_cb)(const struct cgtma_task_key *key, __u32 pid, const char *comm,
				 const struct cgtma_count *counts, void *ctx);
int collector__read_tasks(struct collector *c, collector_task_cb cb, void *ctx);
/* -T: drops a thread's row (it exited or left the cgroup, and was reported). */
int collector__forget_task(struct collector *c, const struct cgtma_task_key *key);

/* Takes one cgroup the mkdir hook recorded; -ENOENT when there is none left. */
int collector__pop_new_cgroup(struct collector *c, struct cgtma_new_cgroup *out);

/* -T: the error (-errno) of the BPF side's last failed insert of a thread's row, not for
 * want of room (CGTMA_STAT_TASKS_FAILED); 0 if none. */
long collector__task_insert_error(const struct collector *c);

/* The BPF side's own counters, summed over CPUs. */
int collector__read_stats(struct collector *c, __u64 out[CGTMA_STAT_MAX]);

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
 * The switch hook in use: SWITCH_HOOK_TRACEPOINT or SWITCH_HOOK_PERF_EVENT; the tracepoint
 * once it took over from the perf-event hook (said at the flush after).
 */
enum switch_hook collector__switch_hook(const struct collector *c);

/*
 * Time spent in the switch hook: counted while opts.bpf_stats holds the kernel's statistics
 * on, or while kernel.bpf_stats_enabled is 1.
 */
int collector__hook_runtime(struct collector *c, __u64 *run_time_ns, __u64 *run_cnt);

#endif
