/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Moves between cgroups: the self-move under cgroup_mutex, a running task moved by another
 * CPU (moved_in_slice()), and another task run inside a move (moved_beside()).
 */
#ifndef CGTMA_MOVES_BPF_H
#define CGTMA_MOVES_BPF_H

#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "core_fixes.bpf.h"
#include "kernel_defs.bpf.h"
#include "config.bpf.h"
#include "snapshot.bpf.h"

/*
 * With the perf-event hook: a running task moved to another cgroup by another task, which
 * the hook cannot tell from a switch it missed (where the slice ends, the task's cgroup is
 * not the one that owned the slice's start), is no miss. The move is known in two parts:
 * - inside it (the mover holds cgroup_mutex from before the task's css_set changes until
 *   after the cgroup_attach_task tracepoint): the task's new css_set is a destination of a
 *   migration, linked in the mover's list of them until cgroup_migrate_finish();
 * - once done: the tracepoint records in moved_to the destination cgroup and move_seq, which
 *   every move advances; a slice begun before a move into the cgroup that has it now
 *   (the snapshot's move_seq) was cut by that move.
 * Only the instant between cgroup_migrate_finish() and the tracepoint is neither (a slice
 * ending there is taken for a miss). Such a slice is counted as unseen all the same (its
 * new cgroup takes it: the move's moment is unknown), and its interval is marked.
 */
__u64 move_seq = 0;

/*
 * The kernel's cgroup_mutex, set between the load and the attach: by find_cgroup_mutex
 * (Linux 5.16+) or from user space's scan of /proc/kallsyms. 0 where the kernel names no
 * data symbols (no CONFIG_KALLSYMS_ALL) or hides addresses from cgtma. Not read-only data:
 * the kernel's own lookup can only run once the programs are loaded.
 */
__u64 cgroup_mutex_addr = 0;

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1024);
	__type(key, __u64);	/* a v2 cgroup's id */
	__type(value, __u64);	/* move_seq before the last move into it */
} moved_to SEC(".maps");

static __always_inline bool moved_in_slice(const struct cgtma_snapshot *snap,
					   struct task_struct *task, struct cgroup *cur)
{
	struct css_set *cset = BPF_CORE_READ(task, cgroups);
	__u64 id = BPF_CORE_READ(cur, kn, id), *seq;
	struct list_head *node;

	if (!cset)
		return false;
	if (bpf_core_field_exists(struct css_set, mg_dst_preload_node))
		node = &cset->mg_dst_preload_node;
	else
		node = &((struct css_set___old *)cset)->mg_preload_node;
	if (BPF_CORE_READ(node, next) != node)
		return true;
	seq = bpf_map_lookup_elem(&moved_to, &id);
	return seq && *seq >= snap->move_seq;
}

/*
 * Whether task holds cgroup_mutex (at cgroup_mutex_addr), which every task that moves tasks
 * between cgroups holds from before the move until after the cgroup_attach_task tracepoint. A
 * task switched away or flushed while it holds it and its cgroup differs from the slice's owner
 * is inside a self-move: past the change of its css_set, not yet at the tracepoint, which fires
 * only after the migration has dropped css_set_lock, run the controllers' attach callbacks and
 * dropped the lock once more. On kernels with full preemption (preempt=full, PREEMPT_RT) a
 * switch at one of those unlocks is common, and the flush's IPI can land there on any kernel.
 * The owner, the cgroup the task has just left, takes the slice then: it ran there but for
 * microseconds. (A task that holds the mutex for another reason, switched away after a switch
 * the hook did not see, gives its slice to that stale owner: both are rare.)
 */
static __always_inline bool holds_cgroup_mutex(struct task_struct *task)
{
	unsigned long owner = 0, off, addr = cgroup_mutex_addr;

	if (!addr)
		return false;
	if (bpf_core_field_exists(struct mutex, owner))
		off = bpf_core_field_offset(struct mutex, owner);
	else if (bpf_core_field_exists(struct mutex___rt, rtmutex))
		off = bpf_core_field_offset(struct mutex___rt, rtmutex.owner);
	else if (bpf_core_field_exists(struct mutex___rt_old, lock))
		off = bpf_core_field_offset(struct mutex___rt_old, lock.owner);
	else
		return false;
	bpf_probe_read_kernel(&owner, sizeof(owner), (const void *)(addr + off));
	/* The low bits are flags (waiters, handoff) on both kinds of mutex. */
	return (owner & ~7UL) == (unsigned long)task;
}

/*
 * A task's move of itself to another cgroup ends its slice at the move's tracepoint, and the
 * cgroup it left takes the slice. Another task of the new cgroup that ran on the CPU in the
 * move (the mover slept in a controller's attach callback) ran in that slice too: the
 * tracepoint ends the slice at such a switch inside a cgroup, which the perf-event hook alone
 * never sees. Where the slice began with the mover, it can tell that some task ran there:
 * the mover came on the CPU again (the kernel's sched_info clock) since. Not which (tasks of
 * the old cgroup are no error), so such a move's slice is marked. A slice begun by another
 * task of the old cgroup, which ran before the mover came, is not: that run is the old
 * cgroup's, and what ran in the move cannot be told from it.
 */
static __always_inline bool moved_beside(const struct cgtma_snapshot *snap,
					 struct task_struct *task, struct cgroup *cur)
{
	if (!pe_hook || per_task || READ_ONCE(switch_tp_on) || !snap->start_arrival ||
	    !bpf_core_field_exists(struct task_struct, sched_info))
		return false;
	/* A move into the cgroup the slice is charged to already (a no-op move) moves nothing. */
	if (snap->owner_id == BPF_CORE_READ(cur, kn, id) || snap->start_task != (__u64)task)
		return false;
	return BPF_CORE_READ(task, sched_info.last_arrival) > snap->start_arrival;
}

#endif
