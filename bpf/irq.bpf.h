/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interrupts as their own scopes (--irq): their counts, each CPU's context stack (kept per
 * thread where a softirq is preempted), the entry and exit that cut slices, and the
 * programs' bodies for tp_btf and raw tracepoints (IRQ_HOOKS, instantiated in cgtma.bpf.c).
 */
#ifndef CGTMA_IRQ_BPF_H
#define CGTMA_IRQ_BPF_H

#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "cgtma.h"
#include "maps.bpf.h"
#include "config.bpf.h"
#include "counts.bpf.h"
#include "snapshot.bpf.h"
#include "slice.bpf.h"

/*
 * Entry cpu * CGTMA_NR_IRQ + scope: an interrupt scope's counts on a CPU, both epochs like
 * cgroup_counts, read in place like cpu_counts. Each CPU writes its own entries, at every
 * slice an interrupt owns: user space pads the value to a cache line, so that no two CPUs
 * write one. (Value size and entries set by user space; one entry, never used, without
 * --irq.)
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, CGTMA_NR_IRQ);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, 2 * sizeof(struct cgtma_counts));
} irq_counts SEC(".maps");

/* A context stack that left its CPU with its task (PREEMPT_RT: a softirq was preempted). */
struct irq_saved_stack {
	__u32 stack[CGTMA_IRQ_DEPTH];
	__u32 depth;
	__u32 pad;
};

/* Thread id -> its saved context stack. Preallocated: PREEMPT_RT wants that in tracing.
 * Sized by user space: one entry without --irq. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct irq_saved_stack);
} irq_saved SEC(".maps");

/* How many stacks irq_saved holds: while 0, a switch does not look for one. */
__u64 irq_saved_nr = 0;

/*
 * Index i of the context stack, masked where the verifier sees it: clang drops a mask that
 * the bounds checked before make redundant, and 5.10's verifier does not follow those.
 */
static __always_inline __u32 irq_slot(__u32 i)
{
	asm volatile("" : "+r"(i));
	return i & (CGTMA_IRQ_DEPTH - 1);
}

/* The scope owning the slice: the innermost interrupt that read at its entry, or -1. */
static __always_inline int irq_owner(const struct cgtma_snapshot *snap)
{
	__u32 depth = snap->irq_depth;

	for (int i = CGTMA_IRQ_DEPTH - 1; i >= 0; i--) {
		if ((__u32)i >= depth)
			continue;
		if (!(snap->irq_stack[i] & CGTMA_IRQ_SKIPPED))
			return snap->irq_stack[i] & 0xff;
	}
	return -1;
}

/* Adds delta to epoch half of interrupt scope irq. */
static __always_inline void charge_irq_scope(__u32 irq, const struct cgtma_counts *delta,
					     __u32 half)
{
	__u32 key = bpf_get_smp_processor_id() * CGTMA_NR_IRQ + irq;
	struct cgtma_counts *counts;

	if (irq >= CGTMA_NR_IRQ)	/* not another CPU's entry */
		return;
	counts = bpf_map_lookup_elem(&irq_counts, &key);
	if (counts)
		add_counts(half_of(counts, half), delta);
}

/* Charges the slice to the interrupt that owns it; false when the task's cgroup does. */
static __always_inline bool charge_owning_irq(const struct cgtma_snapshot *snap,
					     const struct cgtma_counts *delta, __u32 half)
{
	int irq;

	if (!irq_mask)
		return false;
	irq = irq_owner(snap);
	if (irq < 0)
		return false;
	charge_irq_scope(irq, delta, half);
	return true;
}

/*
 * An interrupt's entry cut the running task's slice: the task's part (delta) waits in the
 * snapshot until the slice ends, so that an entry only reads and adds, walking no cgroups
 * (that walk cost about as much as the reading, 4 events, measured on a 2-CPU guest). The CPU's
 * total needs nothing: the flush takes it from the readings.
 */
static __always_inline void keep_task_part(struct cgtma_snapshot *snap,
					   const struct cgtma_counts *delta)
{
	add_counts(snap_task_part(snap), delta);
	snap->task_part_set = 1;
}

/*
 * The running task's slice ends: its parts kept at interrupts' entries join its delta, the
 * slice's last part. Every slice end on the CPU passes here or through charge_kept_task_part(), so
 * the parts are charged in the epoch that read them, and to the cgroup that ran them: every
 * switch between cgroups ends the slice, and with -T every switch does.
 */
static __always_inline void add_task_part(struct cgtma_snapshot *snap, struct cgtma_counts *delta)
{
	if (!irq_mask || !snap->task_part_set)
		return;
	add_counts(delta->ev, (const struct cgtma_counts *)snap_task_part(snap));
	clear_counts(snap_task_part(snap));
	snap->task_part_set = 0;
}

/*
 * Whether a switch must end the slice though both tasks share a cgroup: an interrupt owns
 * it (PREEMPT_RT runs softirqs in tasks, and preempts them), or some task's stack is saved.
 */
static __always_inline bool irq_switch_pending(void)
{
	struct cgtma_snapshot *snap;

	if (!irq_mask)
		return false;
	if (irq_saved_nr)
		return true;
	snap = this_cpu_snapshot();
	return snap && snap->irq_depth;
}

/*
 * After a switch, the context stack follows the tasks: prev's (a preempted softirq) is kept
 * for it, next's comes back, on whatever CPU it runs now.
 */
static __always_inline void irq_follow_task(struct task_struct *prev, struct task_struct *next)
{
	struct cgtma_snapshot *snap = this_cpu_snapshot();
	struct irq_saved_stack saved = {}, *back;
	__u32 tid;

	if (!snap)
		return;
	snap->irq_coalesce = 0;
	if (snap->irq_depth) {
		tid = prev->pid;
		for (int i = 0; i < CGTMA_IRQ_DEPTH; i++)
			saved.stack[i] = snap->irq_stack[i];
		saved.depth = snap->irq_depth;
		if (bpf_map_update_elem(&irq_saved, &tid, &saved, BPF_NOEXIST) == 0)
			__sync_fetch_and_add(&irq_saved_nr, 1);
		else
			stat_inc(CGTMA_STAT_IRQ_UNMATCHED);
		snap->irq_depth = 0;
	}
	if (!irq_saved_nr)
		return;
	tid = next->pid;
	back = bpf_map_lookup_elem(&irq_saved, &tid);
	if (!back)
		return;
	for (int i = 0; i < CGTMA_IRQ_DEPTH; i++)
		snap->irq_stack[i] = back->stack[i];
	snap->irq_depth = back->depth;
	if (bpf_map_delete_elem(&irq_saved, &tid) == 0)
		__sync_fetch_and_add(&irq_saved_nr, -1);
}

/* This CPU's snapshot for an interrupt of scope irq; NULL where the scope is not selected. */
static __always_inline struct cgtma_snapshot *irq_snapshot(__u32 irq)
{
	if (!(irq_mask & (1U << (irq & 31))))
		return NULL;
	return this_cpu_snapshot();
}

/*
 * An interrupt begins: the slice so far goes to its owner (the enclosing interrupt's scope,
 * or the interrupted task's parts, keep_task_part()), and the interrupt owns the next one.
 * An unselected scope costs the one test of the mask. Inside an update (a flush in task
 * context, a cgroup hook on PREEMPT_RT) the snapshot is not touched: the entry is marked
 * skipped, and the interrupt's work stays in the slice being updated's successor, charged
 * to whatever owns it then: all of it is still counted once, and the readings of the
 * slices that hold it mark them (CGTMA_MISS_IRQ). Right after another
 * interrupt's exit nothing ran in between: no reading, the gap goes to this interrupt.
 */
static __always_inline void irq_enter(__u32 irq)
{
	struct cgtma_snapshot *snap;
	struct cgtma_counts *delta;
	__u32 depth, half;

	snap = irq_snapshot(irq);
	if (!snap)
		return;
	depth = snap->irq_depth;
	if (depth >= CGTMA_IRQ_DEPTH) {
		snap->irq_depth = depth + 1;
		stat_inc(CGTMA_STAT_IRQ_UNMATCHED);
		return;
	}
	if (snap->irq_coalesce && !snap->busy &&
	    bpf_ktime_get_ns() - snap->read_ns < irq_coalesce_ns) {
		snap->irq_coalesce = 0;
		snap->irq_stack[irq_slot(depth)] = irq;
		snap->irq_depth = depth + 1;
		stat_inc(CGTMA_STAT_IRQ_COALESCED);
		return;
	}
	if (test_irq_busy_every && ++snap->test_irq_seq % test_irq_busy_every == 0)
		delta = NULL;
	else
		delta = read_slice(snap, &half);
	if (!delta) {
		snap->irq_stack[irq_slot(depth)] = irq | CGTMA_IRQ_SKIPPED;
		snap->irq_depth = depth + 1;
		/* For the next reading to mark (note_irqs_in_update()). */
		__sync_fetch_and_add(&snap->irqs_in_update, 1);
		stat_inc(CGTMA_STAT_IRQ_SKIPPED);
		return;
	}
	if (!charge_owning_irq(snap, delta, half))
		keep_task_part(snap, delta);
	snap->irq_stack[irq_slot(depth)] = irq;
	snap->irq_depth = depth + 1;
	slice_done(snap);
}

/* An interrupt ends: its slice is its scope's, and the scope below owns the next one. */
static __always_inline void irq_leave(__u32 irq)
{
	struct cgtma_snapshot *snap;
	struct cgtma_counts *delta;
	__u32 depth, top, half;

	snap = irq_snapshot(irq);
	if (!snap)
		return;
	depth = snap->irq_depth;
	if (!depth) {
		stat_inc(CGTMA_STAT_IRQ_UNMATCHED);	/* entered before attach */
		return;
	}
	if (depth > CGTMA_IRQ_DEPTH) {
		snap->irq_depth = depth - 1;
		return;
	}
	top = snap->irq_stack[irq_slot(depth - 1)];
	if ((top & 0xff) != irq) {
		stat_inc(CGTMA_STAT_IRQ_UNMATCHED);	/* its entry was before attach */
		return;
	}
	if (top & CGTMA_IRQ_SKIPPED) {
		snap->irq_depth = depth - 1;
		return;
	}
	delta = read_slice(snap, &half);
	if (!delta) {
		/* Cannot happen (nesting is LIFO, so the entry would be skipped): still safe. */
		snap->irq_depth = depth - 1;
		stat_inc(CGTMA_STAT_IRQ_SKIPPED);
		return;
	}
	charge_irq_scope(irq, delta, half);
	snap->irq_depth = depth - 1;
	snap->read_ns = bpf_ktime_get_ns();
	snap->irq_coalesce = 1;
	slice_done(snap);
}

/*
 * The interrupt hooks, on tp_btf tracepoints (on_*), and the same on raw tracepoints (raw_*)
 * for a kernel whose BTF lacks those targets: one source for both. IRQ_HOOK is one of
 * them: tracepoint tp as a kind ("tp_btf", "raw_tp") of program name, running call (vec: the
 * softirq's vector; a hardirq's number, unused).
 */
#define IRQ_HOOK(kind, tp, name, call)						\
	SEC(#kind "/" #tp)							\
	int BPF_PROG(name, unsigned int vec)					\
	{									\
		call;								\
		return 0;							\
	}

#define IRQ_HOOKS(kind, prefix)							\
	IRQ_HOOK(kind, softirq_entry, prefix##_softirq_entry, irq_enter(vec))	\
	IRQ_HOOK(kind, softirq_exit, prefix##_softirq_exit, irq_leave(vec))	\
	IRQ_HOOK(kind, irq_handler_entry, prefix##_hardirq_entry,		\
		 irq_enter(CGTMA_IRQ_HARDIRQ))					\
	IRQ_HOOK(kind, irq_handler_exit, prefix##_hardirq_exit,			\
		 irq_leave(CGTMA_IRQ_HARDIRQ))

#endif
