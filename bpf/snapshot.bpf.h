/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Each CPU's snapshot: the slice in progress on it (its readings, owner, epoch and interrupt
 * context), the deltas of the slice being accounted, and the flag that keeps a nested update
 * off both.
 */
#ifndef CGTMA_SNAPSHOT_BPF_H
#define CGTMA_SNAPSHOT_BPF_H

#include <bpf/bpf_helpers.h>
#include "cgtma.h"
#include "kernel_defs.bpf.h"
#include "config.bpf.h"
#include "counts.bpf.h"

/* Interrupts nested on one CPU that the context stack holds (deeper ones are not carved out). */
#define CGTMA_IRQ_DEPTH 8

/* In a context stack entry: the interrupt came while a slice was being updated, and did not
 * read; its work stays with the scope below it. */
#define CGTMA_IRQ_SKIPPED 0x100

/*
 * One CPU's slice in progress: the readings where it started (bit i of valid: event i has
 * been read) and the cgroup it belongs to, as the kernel's struct cgroup pointer and the
 * cgroup's id (a pointer whose id changed was freed and reused: it is not charged).
 */
struct cgtma_snapshot {
	__u64 valid[CGTMA_MAX_EVENTS / 64];
	__u64 owner;
	__u64 owner_id;
	__u64 busy;	/* being updated: a nested call leaves it alone */
	__u64 epoch;	/* the half of the counts this CPU writes now (0 or 1) */
	__u64 round;	/* flush_round when this CPU's epoch began (a flush, coming online) */
	/*
	 * --irq: the interrupts in progress, innermost last (scope number, maybe with
	 * CGTMA_IRQ_SKIPPED). The topmost one that read at its entry owns the slice; with none,
	 * the running task's cgroup does.
	 */
	__u32 irq_stack[CGTMA_IRQ_DEPTH];
	__u32 irq_depth;	/* may exceed CGTMA_IRQ_DEPTH: those are not carved out */
	__u32 irq_coalesce;	/* the last reading ended an interrupt */
	__u64 read_ns;		/* when the last interrupt exit read (with irq_coalesce) */
	__u64 task_part_set;	/* --irq: the task's part (snap_task_part()) holds counts */
	/* The perf-event hook's fallback: sched_switch took this CPU over (switch_tp_on). */
	__u32 tp_took_over;
	/* The perf-event hook: the counts of the last flush's check are set (check_hook()). */
	__u32 hook_base_valid;
	/* With the perf-event hook: move_seq where the slice began (moved_in_slice()). */
	__u64 move_seq;
	/*
	 * The task the slice began with (its address, thread id, and run time then), for the
	 * marks of a slice whose start the hook did not see (note_miss()); with the perf-event
	 * hook also when it last came on the CPU (sched_info's clock), for those of moves.
	 */
	__u64 start_task;
	__u64 start_runtime;
	__u64 start_arrival;
	__u32 start_pid;
	/*
	 * A reading of the slice being read failed (read_event()): marked once a slice. Kept
	 * here, not in a local, because the verifier tracks a local's value, and a flag that
	 * is true on some paths and false on others splits every later state in two: with 128
	 * events the counting loop then passes 6.1's limit of a million instructions.
	 */
	__u32 read_failed;
	/*
	 * --irq: the interrupts that came while a program updated this snapshot (irq_enter()
	 * leaves it alone then, and their work goes to the slice's owner), and their number
	 * where the readings last marked them (note_irqs_in_update()). Only interrupts add to
	 * the first; only the readings, inside an update, write the second.
	 */
	__u64 irqs_in_update;
	__u64 irqs_in_update_marked;
	/*
	 * The perf-event hook's program runs here, and at the last flush, with its event's count
	 * then: the kernel counts every switch it emits the event at, and skips the program at
	 * some (check_hook()).
	 */
	__u64 hook_runs;
	__u64 hook_runs_base;
	__u64 hook_count_base;
	/* Switches the hook found it missed (unseen_switch()), and their number at the last
	 * flush: those runs are marked already, not again as skipped. */
	__u64 hook_found;
	__u64 hook_found_base;
	__u64 test_seq;		/* runs, for test_drop_every */
	__u64 test_irq_seq;	/* interrupt entries, for test_irq_busy_every */
	/*
	 * Last, CGTMA_SNAPSHOT_COUNTS runs of nr_events counts, which user space sizes the
	 * map's value to: the readings (ev[0, nr_events)), then those where the CPU's epoch
	 * began (snap_base()), then --irq's task part (snap_task_part()).
	 */
	struct cgtma_count ev[CGTMA_SNAPSHOT_COUNTS * CGTMA_MAX_EVENTS];
};

/* Value size set by user space: the snapshot's counts for nr_events (cgtma.h). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(struct cgtma_snapshot));
} snapshots SEC(".maps");

/*
 * The deltas of the slice being accounted; per CPU, too big for the stack. Value size set by
 * user space: nr_events counts.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(struct cgtma_counts));
} deltas SEC(".maps");

static __always_inline struct cgtma_snapshot *this_cpu_snapshot(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&snapshots, &zero);
}

/*
 * The readings where the CPU's epoch began (an event's first reading, if later), after the
 * snapshot's readings: the flush adds ev - base to the CPU's total, which is the sum of the
 * epoch's deltas.
 */
static __always_inline struct cgtma_count *snap_base(struct cgtma_snapshot *snap)
{
	return &snap->ev[nr_events];
}

/*
 * --irq: the running task's part of its slice so far, before the interrupts that cut it
 * (task_part_set: it holds counts), after the base. Charged with the rest where the slice
 * ends.
 */
static __always_inline struct cgtma_count *snap_task_part(struct cgtma_snapshot *snap)
{
	return &snap->ev[2 * nr_events];
}

/*
 * Marks the snapshot busy until slice_done() and gives the CPU's epoch (*half); false if it
 * is busy already.
 *
 * sched_switch runs with interrupts off, and the cgroup hooks under a spinlock taken with
 * interrupts off; but on PREEMPT_RT the cgroup hooks can be interrupted by the flush IPI.
 * Nesting is last-in first-out, so a flag set before any change keeps the two apart (the
 * nested call leaves its slice to the next one). The epoch is read after it: a flush that
 * finds the flag clear has no update of the old epoch under it.
 */
static __always_inline bool begin_update(struct cgtma_snapshot *snap, __u32 *half)
{
	if (snap->busy)
		return false;
	WRITE_ONCE(snap->busy, 1);
	barrier();
	*half = snap->epoch & 1;
	return true;
}

static __always_inline void slice_done(struct cgtma_snapshot *snap)
{
	barrier();
	WRITE_ONCE(snap->busy, 0);
}

#endif
