/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the BPF program and user space share: limits, map keys and values. Only #defines and
 * __u32/__u64 structs belong here: clang -target bpf and the host compiler both read it.
 */
#ifndef CGTMA_H
#define CGTMA_H

/* The BPF side gets the kernel's types from vmlinux.h; user space from the uapi header. */
#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/*
 * Events per run: Intel's level 3 takes up to 64. The perf event array holds possible_cpus *
 * nr_events entries.
 */
#define CGTMA_MAX_EVENTS 128

/*
 * A CPU's snapshot (bpf/snapshot.bpf.h) ends with this many runs of nr_events counts. Like the
 * deltas and the charge cache's entries, it is declared for CGTMA_MAX_EVENTS and user space
 * trims its value to the run's events: every possible CPU pays for it.
 */
#define CGTMA_SNAPSHOT_COUNTS 3

/* cgroup v2 levels below the root that can be tracked (the root is level 0). */
#define CGTMA_MAX_LEVEL 15

/* Longest cgroup path the mkdir hook records, relative to the v2 root. */
#define CGTMA_PATH_MAX 256

/*
 * Interrupt scopes (--irq): the softirq vectors in the kernel's order (HI_SOFTIRQ = 0 ..
 * RCU_SOFTIRQ = 9), then every hardirq handler as one. Bit i of the BPF side's irq_mask
 * selects scope i.
 */
#define CGTMA_IRQ_HARDIRQ 10
#define CGTMA_NR_IRQ 11

/* One event over one slice or a sum of slices: the counter and its two clocks (ns). */
struct cgtma_count {
	__u64 counter;
	__u64 enabled;
	__u64 running;
};

/*
 * A tracked cgroup's value in cgroup_counts (one for all CPUs, or per CPU with -A) is epoch
 * 0's nr_events counts, epoch 1's, and per epoch half one __u64: the flush round (+ 1) in
 * which some CPU last listed the cgroup in charged_ids (CGTMA_CGROUP_VALUE_SIZE bytes).
 */
#define CGTMA_CGROUP_VALUE_SIZE(nr_events) (2 * (nr_events) * sizeof(struct cgtma_count) + 16)

/*
 * The cgroups one CPU charged in one epoch half (charged_ids[cpu * 2 + half]), each once, so
 * that user space reads those instead of every tracked one. nr beyond CGTMA_CHARGED_MAX: more
 * were charged than the list holds, and user space reads every tracked cgroup.
 */
#define CGTMA_CHARGED_MAX 511

struct cgtma_charged {
	__u32 nr;
	__u32 pad;
	__u64 ids[CGTMA_CHARGED_MAX];
};

/* A cgroup created while cgtma runs, as its mkdir hook saw it. */
struct cgtma_new_cgroup {
	__u64 id;
	char path[CGTMA_PATH_MAX];	/* relative to the v2 root, starts with '/' */
};

/* -T: a thread's counts inside the deepest tracked cgroup that holds it (map key). */
struct cgtma_task_key {
	__u64 cgroup;	/* v2 id */
	__u32 tid;
	__u32 pad;
};

/*
 * -T: the map value. Created with value size offsetof(ev) + 2 * nr_events counts: both epoch
 * halves, epoch 0's first, as a cgroup's value.
 */
struct cgtma_task {
	__u32 pid;	/* the thread group (process) */
	__u32 pad;
	char comm[16];	/* at its last slice */
	struct cgtma_count ev[2 * CGTMA_MAX_EVENTS];
};

/*
 * A slice charged though the hook did not see where it began (a mark in the outputs): what
 * ran unseen, where it was charged, and how much of it may be another cgroup's. Each CPU
 * lists its marks per epoch half (misses[cpu * 2 + half]), as it lists charged cgroups.
 */
enum cgtma_miss_kind {
	CGTMA_MISS_SWITCH = 1,	/* the slice began with a switch the hook did not see */
	CGTMA_MISS_SKIPPED,	/* the kernel did not run the perf-event hook's program at
				 * switches it counted (count: how many) */
	CGTMA_MISS_MOVED,	/* a running task was moved to another cgroup by another one:
				 * the moment is not known, its new cgroup took the slice */
	CGTMA_MISS_MOVE,	/* a task's move of itself to another cgroup, with other tasks
				 * run on its CPU in the move's slice (the perf-event hook sees
				 * no switch inside a cgroup, and the old cgroup took them) */
	CGTMA_MISS_READ,	/* a reading of an event failed: its counts of the slice went
				 * to the next slice's cgroup */
	CGTMA_MISS_IRQ,		/* --irq: interrupts came while a program updated the CPU's
				 * slice (a flush run in the task that asked for it, a hook that
				 * can be interrupted): their work went to the slice's owner
				 * (count: how many) */
};

#define CGTMA_MISSES_MAX 8	/* a power of two */

struct cgtma_miss {
	__u32 kind;
	__u32 count;		/* CGTMA_MISS_SKIPPED: the runs skipped; _IRQ: the
				 * interrupts; else 1 */
	/* CGTMA_MISS_SKIPPED, _READ and _IRQ have no slice: the fields below are 0, max_ns ~0 */
	__u64 ran_cgroup;	/* v2 id of the cgroup the slice began in (0: not known) */
	__u64 charged_cgroup;	/* v2 id of the cgroup the slice was charged to */
	__u64 slice_ns;		/* the slice's length */
	/* Of slice_ns, the most that ran in other tasks than charged_pid: the kernel's run
	 * time of charged_pid since it was last switched in is its own. */
	__u64 max_ns;
	/* The run time of pid (the task the slice began with) since then: the most of the
	 * slice it can have run; ~0 where that task is gone. */
	__u64 unseen_ns;
	__u32 pid;		/* the task the slice began with (thread id; 0: idle) */
	__u32 charged_pid;	/* the task running where the slice ended */
	char comm[16];		/* pid's */
};

struct cgtma_misses {
	__u32 nr;		/* marks; may pass CGTMA_MISSES_MAX: those are not listed, but
				 * skipped runs and failed reads, which take the last place */
	__u32 slices;		/* the slices they mark (a mark of skipped runs: each run) */
	__u64 max_ns;		/* the sum of the marks' max_ns, those not listed too */
	__u32 unbounded;	/* of slices, those with no bound (CGTMA_MISS_SKIPPED, _READ,
				 * _IRQ) */
	__u32 pad;
	struct cgtma_miss m[CGTMA_MISSES_MAX];
};

/*
 * Noise seen at switches between cgroups (bpf/noise.bpf.h). Per CPU (an array its SMT
 * sibling reads too): the cgroup running there since when, and the one whose task the
 * running slice preempted.
 */
struct cgtma_noise_cpu {
	__u64 seq;		/* odd while cgroup and since change */
	__u64 cgroup;		/* v2 id of the cgroup running (0: the idle task, or not known) */
	__u64 since;		/* bpf_ktime_get_ns() of its switch in, or of the last SMT charge */
	__u64 victim;		/* v2 id of the cgroup whose task the slice in progress preempted
				 * (0: none) */
	__u64 victim_since;	/* when, or the last flush since */
	__u32 sibling;		/* the other hardware thread of this CPU's core, set by user
				 * space (CGTMA_NO_SIBLING: none) */
	__u32 pad;
};

#define CGTMA_NO_SIBLING 0xffffffffU

/*
 * Per pair of cgroups (v2 ids of the tasks' own cgroups) and epoch half: how often a task of
 * cgroup left a CPU still runnable for a task of other, the time of the slices of other that
 * did, and the time the two ran on the two hardware threads of one core.
 */
struct cgtma_noise_key {
	__u64 cgroup;
	__u64 other;
	__u32 half;
	__u32 pad;
};

struct cgtma_noise_pair {
	__u64 preempt;
	__u64 took_ns;
	__u64 smt_ns;
};

/* Pairs per epoch half the map holds: beyond, CGTMA_STAT_NOISE_DROPPED counts the updates. */
#define CGTMA_NOISE_PAIRS 4096

/* Per-CPU statistics of the BPF side itself (index into the stats array). */
enum cgtma_stat {
	CGTMA_STAT_SLICES,		/* slices charged at a switch between cgroups */
	CGTMA_STAT_UNSEEN,		/* slices (ended at a switch or flush) begun by a
					 * switch or move the hook never saw: their intervals
					 * are not exact */
	CGTMA_STAT_READ_ERRORS,		/* bpf_perf_event_read_value() failures */
	CGTMA_STAT_NEW_DROPPED,		/* new cgroups not recorded: pending maps full */
	CGTMA_STAT_TASKS_DROPPED,	/* -T: task slices not counted per task (map full) */
	CGTMA_STAT_IRQ_SKIPPED,		/* interrupts that came during an update: their work
					 * stayed with the scope they interrupted */
	CGTMA_STAT_IRQ_COALESCED,	/* interrupt entries that followed an exit so closely
					 * that they did not read */
	CGTMA_STAT_IRQ_UNMATCHED,	/* interrupt exits without their entry (begun before
					 * attach), or nested too deep */
	CGTMA_STAT_CACHE_PASSED,	/* charges made past the charge cache: their entry held
					 * another cgroup's counts */
	CGTMA_STAT_HOOK_MISSED,		/* of the UNSEEN ones, those the perf-event hook began
					 * (in charge of the CPU) */
	CGTMA_STAT_TASKS_FAILED,	/* -T: task slices not counted per task: the kernel
					 * failed the row's insert with room to spare */
	CGTMA_STAT_HOOK_SKIPPED,	/* switches the cgroup-switches event counted whose
					 * program the kernel did not run */
	CGTMA_STAT_NOISE_DROPPED,	/* noise of a pair of cgroups not counted: the pairs
					 * map was full */
	CGTMA_STAT_MAX,
};

/*
 * Where the sampling program (sample.bpf.c) finds what it reads of the kernel's structures:
 * their offsets in the running kernel, which this object's CO-RE relocations give
 * (find_layout) and user space copies into the sampler's read-only data before its load. With
 * no CO-RE relocation of its own, the sampler's load does not make libbpf read and parse the
 * kernel's BTF a second time (5 MB: 60 ms of CPU and 10 MB of fresh memory touched on a 2-vCPU
 * VM).
 */
struct cgtma_layout {
	__u32 task_cgroups;		/* task_struct.cgroups */
	__u32 task_mm;			/* task_struct.mm */
	__u32 css_set_dfl_cgrp;		/* css_set.dfl_cgrp */
	__u32 cgroup_self;		/* cgroup.self, the cgroup's css */
	__u32 cgroup_parent;		/* cgroup.self.parent: the parent's css */
	__u32 cgroup_level;		/* cgroup.level (int) */
	__u32 cgroup_kn;		/* cgroup.kn */
	__u32 kn_id;			/* kernfs_node.id (u64) */
	__u32 mm_map_count;		/* mm_struct.map_count (int) */
	__u32 task_pt_regs;		/* 1: the kernel has bpf_task_pt_regs() (5.15+) */
};

#endif
