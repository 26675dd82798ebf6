/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The attribution rule, written once: which cgroup (or interrupt scope) the slice that ends
 * now belongs to, for a switch, a flush, an interrupt's entry and a self-move.
 */
#ifndef CGTMA_ATTRIBUTION_BPF_H
#define CGTMA_ATTRIBUTION_BPF_H

#include "maps.bpf.h"
#include "cgroup.bpf.h"
#include "config.bpf.h"
#include "counts.bpf.h"
#include "snapshot.bpf.h"
#include "moves.bpf.h"
#include "marks.bpf.h"
#include "slice.bpf.h"
#include "charge.bpf.h"
#include "irq.bpf.h"

/* How a slice ends, for the rule (charge_cgroup_slice()). */
enum slice_end {
	END_RUNNING,	/* a flush, or an interrupt's entry: the running task's slice so far */
	END_SWITCH,	/* a switch away from the running task (the caller sets the next owner) */
	END_MOVE,	/* the running task moved itself to another cgroup (its tracepoint) */
};

/*
 * The attribution rule, the one place it is written: which cgroup the running task's slice
 * that ends now belongs to, and its charge there (and with -T to the task's row). task is the
 * task that ran it, the current one; cur its cgroup now, a BTF pointer at a switch.
 *
 * The slice is cur's. Every switch-in, flush and self-move makes the running task's cgroup
 * the owner, so the two differ:
 * - inside a self-move (task holds cgroup_mutex, holds_cgroup_mutex()), and at its
 *   tracepoint: the owner's, the cgroup the task has just left. Inside the move it stays the
 *   owner, so that the tracepoint still ends the move's slice there; at the tracepoint cur
 *   owns the next slice. (The owner outlives its slice, except when its running task was
 *   moved away by another CPU and the cgroup removed: then its memory may be another
 *   cgroup's now, and the slice is not charged.)
 * - when the slice began with a switch the hook never saw: some kernels do not report every
 *   switch (seen on 6.18 in a VM, for switches away from the init process's threads; the
 *   kernel's own trace event misses them too), and the owner is then the cgroup of the task
 *   switched away from. The task ran for all of such a slice but the unseen task's short
 *   run before it: cur takes it, and the count says how often attribution was this
 *   approximate. Charging the owner at a flush would hand the task's whole run since then,
 *   up to an interval, to whatever ran before it. (A running task moved by another CPU also
 *   lands here; the move's time is unknown, its new cgroup takes it.)
 */
static __always_inline void charge_cgroup_slice(struct cgtma_snapshot *snap,
						struct cgtma_counts *delta, __u32 half,
						struct task_struct *task, struct cgroup *cur,
						enum slice_end end)
{
	bool other = snap->owner && snap->owner != (__u64)cur;
	struct cgroup *owner;

	add_task_part(snap, delta);
	if (end == END_MOVE || (other && holds_cgroup_mutex(task))) {
		if (end == END_MOVE && moved_beside(snap, task, cur)) {
			stat_inc(CGTMA_STAT_UNSEEN);
			note_miss(half, snap->owner_id, CGTMA_MISS_MOVE, 1);
		}
		if (owner_alive(snap->owner, snap->owner_id)) {
			owner = (struct cgroup *)snap->owner;
			charge_thread_row(charge_with_ancestors(owner, half, false), delta, half);
		}
		if (end == END_MOVE)
			set_owner(snap, cur, task);
		return;
	}
	if (other)
		unseen_switch(snap, half, task, cur);
	if (end != END_SWITCH)
		set_owner(snap, cur, task);
	charge_thread_row(charge_with_ancestors(cur, half, end == END_SWITCH), delta, half);
}

/* The running task's slice ends where no BTF pointer to it is at hand. */
static __always_inline void charge_running_slice(struct cgtma_snapshot *snap,
						 struct cgtma_counts *delta, __u32 half)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct cgroup *cur = task_cgroup(task);

	if (cur)
		charge_cgroup_slice(snap, delta, half, task, cur, END_RUNNING);
}

/*
 * An interrupt owned the slice that ended (a flush inside it, or on PREEMPT_RT a switch away
 * from a task preempted in a softirq): the interrupted task's parts are charged now, in
 * delta's place (its counts are charged already), so that they stay in their epoch.
 */
static __always_inline void charge_kept_task_part(struct cgtma_snapshot *snap,
						  struct cgtma_counts *delta, __u32 half)
{
	if (!irq_mask || !snap->task_part_set)
		return;
	clear_counts(delta->ev);
	charge_running_slice(snap, delta, half);
}

/*
 * Charges the slice that ends now (read_slice()'s deltas): to the interrupt that owns it, and
 * the interrupted task's parts to its cgroup; else by the rule (charge_cgroup_slice()). Every
 * end of a slice but an interrupt's comes here.
 */
static __always_inline void charge_slice(struct cgtma_snapshot *snap, struct cgtma_counts *delta,
					 __u32 half, struct task_struct *task,
					 struct cgroup *cur, enum slice_end end)
{
	if (charge_owning_irq(snap, delta, half))
		charge_kept_task_part(snap, delta, half);
	else
		charge_cgroup_slice(snap, delta, half, task, cur, end);
}

#endif
