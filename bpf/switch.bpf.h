/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What both switch hooks (sched_switch and the cgroup-switches perf event) do at a switch
 * that ends a slice.
 */
#ifndef CGTMA_SWITCH_BPF_H
#define CGTMA_SWITCH_BPF_H

#include "maps.bpf.h"
#include "config.bpf.h"
#include "snapshot.bpf.h"
#include "slice.bpf.h"
#include "charge.bpf.h"
#include "attribution.bpf.h"
#include "noise.bpf.h"

/*
 * Reads and charges the slice that a switch away from prev ends, by the general rule (any
 * owner, any tracked levels, -T, --irq); false if the snapshot is busy. (On PREEMPT_RT an
 * interrupt may own it: a softirq preempted, its scope's; irq_follow_task keeps it.)
 */
static __always_inline bool charge_switch_slice(struct cgtma_snapshot *snap,
						struct task_struct *prev, struct cgroup *prev_cg)
{
	struct cgtma_counts *delta;
	__u32 half;

	delta = read_slice(snap, &half);
	if (!delta)
		return false;
	charge_slice(snap, delta, half, prev, prev_cg, END_SWITCH);
	return true;
}

/* Which program ends a slice at a switch (end_slice_at_switch()). */
enum switch_by {
	BY_EVENT,		/* the perf-event hook */
	BY_TP,			/* sched_switch, in charge */
	BY_TP_INSIDE,		/* sched_switch beside the perf-event hook (-T): in a cgroup */
};

/*
 * A switch from prev (the task running here until now) to next that ends the slice: one
 * between cgroups, or one inside a cgroup where on_switch() says so. The slice is charged
 * to prev's cgroup, and next's cgroup owns the new one. Both switch hooks, the sched_switch
 * tracepoint and the cgroup-switches perf event, end here.
 */
static __always_inline void end_slice_at_switch(struct cgtma_snapshot *snap,
						struct task_struct *prev, struct cgroup *prev_cg,
						struct task_struct *next, struct cgroup *next_cg,
						enum switch_by by)
{
	struct cgtma_charge_entry *e;

	/*
	 * Once the fallback's tracepoint, which runs first at a switch, took the CPU over
	 * (after its first slice there, which the perf-event hook began), the event's program
	 * leaves every switch to it.
	 */
	if (pe_falls_back && by == BY_EVENT && snap->tp_took_over)
		return;
	e = warm_entry(snap, prev_cg);
	if (e ? read_slice_to_entry(snap, e) : charge_switch_slice(snap, prev, prev_cg)) {
		own_slice(snap, next_cg, next_cg->kn->id, next, true);
		/* Only the tracepoint in charge takes the CPU over: its switches inside a
		 * cgroup (-T), which the event never sees, leave it the event's. */
		if (pe_falls_back && by == BY_TP)
			snap->tp_took_over = 1;
		slice_done(snap);
		stat_inc(CGTMA_STAT_SLICES);
	}
	/* After the reading, which should be as near the switch as it can. */
	if (noise_on && next_cg != prev_cg)
		noise_at_switch(noise_id(prev, prev_cg), noise_id(next, next_cg),
				prev->pid && task_runnable(prev), snap->epoch & 1);
}

/*
 * A switch inside cgroup cg while this CPU's slice is another cgroup's: a task of cg inside
 * its move from that cgroup (its css_set moved, the move's tracepoint still to come, so the
 * slice stays the old cgroup's: charge_cgroup_slice()) gives the CPU to another task of cg, or
 * gets it back from one. The slice ends here: else the other task's run, a whole burst of a
 * workload while the mover slept in the move's attach callbacks, went to the old cgroup with
 * the move's slice at its tracepoint, and nothing said so (seen on 5.10 under load).
 */
static __always_inline bool slice_owned_elsewhere(struct cgroup *cg)
{
	struct cgtma_snapshot *snap = this_cpu_snapshot();

	return snap && snap->owner && snap->owner != (__u64)cg;
}

#endif
