// SPDX-License-Identifier: GPL-2.0
/*
 * cgtma's kernel side: attribute PMU (or software) counter deltas to the cgroup that ran.
 *
 * Every CPU keeps a snapshot of its events and the cgroup that owns the slice in progress.
 * When the next task is in another cgroup than the previous one, the events are read, the
 * deltas since the snapshot are added to the previous task's cgroup and each of its tracked
 * ancestors, and the next task's cgroup owns the new slice. The CPU's total, the sum of all
 * deltas, is the difference of its readings at two flushes.
 * Switches inside one cgroup read nothing: the slice simply continues. The slice also ends
 * when the running task moves to another cgroup (cgroup_attach_task), so the time before
 * the move stays with the old one, and at each interval's end, when user space runs
 * flush_slice on every CPU with BPF_PROG_TEST_RUN. A switch and a flush charge the cgroup
 * of the task running when the slice ends; only a self-move charges the owner, the cgroup
 * the task has just left, and so does a switch or flush that lands inside one (between the
 * move and its tracepoint). The owner also tells when a switch went unreported.
 *
 * This file holds the programs; what they share is in headers by concern, each including
 * those it uses (docs/how-it-works.md lists them).
 *
 * GPL: bpf_perf_event_read_value() is a GPL-only helper.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "cgtma.h"
#define STATS_MAX CGTMA_STAT_MAX
#include "kernel_defs.bpf.h"
#include "core_fixes.bpf.h"
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
#include "attribution.bpf.h"
#include "switch.bpf.h"
#include "noise.bpf.h"

char LICENSE[] SEC("license") = "GPL";

IRQ_HOOKS(tp_btf, on)
IRQ_HOOKS(raw_tp, raw)

SEC("tp_btf/sched_switch")
int BPF_PROG(on_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	bool in_charge = !pe_hook || READ_ONCE(switch_tp_on);
	enum switch_by by = in_charge ? BY_TP : BY_TP_INSIDE;
	struct cgtma_snapshot *snap;
	struct cgroup *prev_cg, *next_cg;

	/*
	 * The perf-event hook takes the switches between cgroups. This program runs beside it
	 * for -T (--switch-hook perf-event -T: the switches inside a cgroup, which the event
	 * never sees, without taking the CPU over), and is attached under auto once the event
	 * missed a switch: it is then in charge (switch_tp_on).
	 */
	/* BTF pointers: plain loads, no bpf_probe_read_kernel() calls on the hot path. */
	prev_cg = prev->cgroups->dfl_cgrp;
	next_cg = next->cgroups->dfl_cgrp;
	/*
	 * Between cgroups the slice ends, unless the perf-event hook in charge takes these.
	 * Both tasks in one cgroup: the slice goes on, but with -T (each thread its own
	 * slices), where an interrupt owns it (a softirq preempted on PREEMPT_RT), and where
	 * another cgroup owns it. One call: each call site is a copy of the whole charge path
	 * for the verifier (two took 16-largest past its 1,000,000 instructions).
	 */
	if (next_cg != prev_cg ? by != BY_TP_INSIDE :
	    per_task || irq_switch_pending() || slice_owned_elsewhere(prev_cg)) {
		snap = this_cpu_snapshot();
		if (snap)
			end_slice_at_switch(snap, prev, prev_cg, next, next_cg, by);
	}
	/* Beside the perf-event hook, the stacks follow the tasks with -T only. */
	if (irq_mask && (by != BY_TP_INSIDE || per_task))
		irq_follow_task(prev, next);
	return 0;
}

/*
 * The other switch hook: a per-CPU cgroup-switches software event (Linux 5.13+) with this
 * program on every overflow of a sample period of 1. The kernel emits it from
 * perf_event_task_sched_out() only when prev's and next's perf_event cgroups differ, so
 * switches inside a cgroup run no BPF at all. Where the event is emitted, `current` is still
 * prev, and __schedule() has already made next the run queue's curr; prev's run queue is
 * reached through its sched entity's cfs_rq, which every task has with
 * CONFIG_FAIR_GROUP_SCHED (user space checks the fields in the kernel's BTF; the per-CPU
 * runqueues variable itself is not a symbol on kernels without CONFIG_KALLSYMS_ALL).
 *
 * The kernel compares the perf_event controller's cgroups. On the v2 hierarchy that
 * controller is implicit in every cgroup, so the event fires exactly at v2 cgroup changes;
 * bound to a v1 hierarchy it would miss v2 switches inside one v1 perf_event cgroup, and
 * user space then uses the tracepoint. The comparison below still skips a switch whose v2
 * cgroups are equal, which nothing in that setup produces.
 */
SEC("perf_event")
int on_cgroup_switch(struct bpf_perf_event_data *ctx)
{
	/* BTF pointers all the way: plain loads, no bpf_probe_read_kernel() calls. */
	struct task_struct *prev = bpf_get_current_task_btf();
	struct task_struct *next = prev->se.cfs_rq->rq->curr;
	struct cgroup *prev_cg = prev->cgroups->dfl_cgrp;
	struct cgroup *next_cg = next->cgroups->dfl_cgrp;
	struct cgtma_snapshot *snap = this_cpu_snapshot();

	if (!snap)
		return 0;
	if (test_drop_every &&
	    ++snap->test_seq % test_drop_every < (test_drop_counted ? 1 : 2)) {
		snap->hook_runs += test_drop_counted;
		return 0;
	}
	/* Every run, for the flush to compare with the event's count (check_hook()). */
	snap->hook_runs++;
	if (next_cg && next_cg != prev_cg)
		end_slice_at_switch(snap, prev, prev_cg, next, next_cg, BY_EVENT);
	return 0;
}

/*
 * Run on each CPU by user space: charges the slice running there up to now to the running
 * task's cgroup, by the same rule as on_switch (charge_slice()), and closes the CPU's epoch.
 */
SEC("raw_tp")
int flush_slice(void *ctx)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct cgroup *cur = task_cgroup(task);
	struct cgtma_snapshot *snap = this_cpu_snapshot();
	struct cgtma_charged *charged;
	struct cgtma_misses *marks;
	struct cgtma_counts *delta;
	__u64 *read_ns;
	__u32 half;

	if (!snap)
		return 0;
	/* A hook in the middle of an update here: user space runs the flush again. */
	if (snap->busy)
		return 1;
	delta = cur ? read_slice(snap, &half) : NULL;
	if (delta) {
		/* Where the epoch's counts end on this CPU: its last reading, as user space
		 * reads it. */
		read_ns = bpf_map_lookup_elem(&read_times, &half);
		if (read_ns)
			*read_ns = bpf_ktime_get_ns();
		/* Inside an interrupt (the flush's IPI in a softirq): that interrupt's scope's. */
		charge_slice(snap, delta, half, task, cur, END_RUNNING);
	} else {
		WRITE_ONCE(snap->busy, 1);
		barrier();
	}
	/* The epoch's total and its counts still in the charge cache: where user space reads. */
	half = snap->epoch & 1;
	if (noise_on) {
		__u64 id = cur && BPF_CORE_READ(task, pid) ? BPF_CORE_READ(cur, kn, id) : 0;

		/* As noise_id() and noise_smt_id() give them at a switch. */
		noise_at_flush(id, id && BPF_CORE_READ(cur, level) ? id : 0, half);
	}
	check_hook(snap, half);
	close_cpu_total(snap, half);
	for (__u32 slot = 0; slot < CGTMA_CHARGE_CACHE; slot++)
		cache_write_back(slot, half);
	/*
	 * The interval ends here on this CPU: what follows goes to the other half, whose list
	 * user space read when that half last closed.
	 */
	half ^= 1;
	charged = charged_list(half);
	if (charged)
		charged->nr = 0;
	marks = miss_list(half);
	if (marks) {
		marks->nr = marks->slices = marks->unbounded = 0;
		marks->max_ns = 0;
	}
	snap->round = *(volatile __u64 *)&flush_round;
	WRITE_ONCE(snap->epoch, half);
	slice_done(snap);
	return 0;
}

/*
 * Run by user space on a CPU that came online, before its new events go into the map: the
 * readings of the events it had before are forgotten, so that the first reading of the new
 * ones only starts a slice.
 */
SEC("raw_tp")
int reset_cpu(void *ctx)
{
	struct cgtma_snapshot *snap = this_cpu_snapshot();

	if (!snap || snap->busy)
		return 1;
	/* The old events' readings since the CPU's last flush: to its total, in its epoch. */
	close_cpu_total(snap, snap->epoch & 1);
	for (__u32 i = 0; i < CGTMA_MAX_EVENTS / 64; i++)
		snap->valid[i] = 0;
	snap->owner = 0;
	snap->owner_id = 0;
	snap->start_task = 0;
	snap->hook_base_valid = 0;
	snap->irq_depth = 0;
	snap->irq_coalesce = 0;
	if (noise_on)
		noise_reset_cpu();
	/*
	 * The epoch the other CPUs are in: ctx is the test run's one argument, and the round
	 * they began it in. The list of that half keeps what it holds (user space may not have
	 * read it); a cgroup another CPU listed in this round is read from that CPU's list.
	 */
	snap->epoch = ((__u64 *)ctx)[0] & 1;
	snap->round = *(volatile __u64 *)&flush_round;
	return 0;
}

/*
 * Run once by user space between the load and the attach (Linux 5.16+): cgroup_mutex's
 * address from the kernel's own lookup, where /proc/kallsyms formats every symbol before
 * the data symbols come (40 ms of a start, 0.2 s under an emulator). 0, or the lookup's
 * -errno: -ENOENT without CONFIG_KALLSYMS_ALL, -EPERM where addresses are hidden from cgtma.
 */
SEC("syscall")
int find_cgroup_mutex(void *ctx)
{
	static const char name[] = "cgroup_mutex";
	__u64 addr = 0;
	long err;

	err = bpf_kallsyms_lookup_name(name, sizeof(name), 0, &addr);
	if (!err)
		cgroup_mutex_addr = addr;
	return err;
}

/* The kernel's layout for the sampler (cgtma.h), filled by find_layout. */
struct cgtma_layout layout = {};

/*
 * Loaded with --sample only, and run once by user space after the load: the offsets the
 * sampling program reads at, as this object's CO-RE relocations give them for the running
 * kernel. 1 where a field's size is not the one the sampler reads.
 */
SEC("raw_tp")
int find_layout(void *ctx)
{
	if (bpf_core_field_size(struct cgroup, level) != sizeof(int) ||
	    bpf_core_field_size(struct kernfs_node, id) != sizeof(__u64) ||
	    bpf_core_field_size(struct mm_struct, map_count) != sizeof(int))
		return 1;
	layout.task_cgroups = bpf_core_field_offset(struct task_struct, cgroups);
	layout.task_mm = bpf_core_field_offset(struct task_struct, mm);
	layout.css_set_dfl_cgrp = bpf_core_field_offset(struct css_set, dfl_cgrp);
	layout.cgroup_self = bpf_core_field_offset(struct cgroup, self);
	layout.cgroup_parent = bpf_core_field_offset(struct cgroup, self.parent);
	layout.cgroup_level = bpf_core_field_offset(struct cgroup, level);
	layout.cgroup_kn = bpf_core_field_offset(struct cgroup, kn);
	layout.kn_id = bpf_core_field_offset(struct kernfs_node, id);
	layout.mm_map_count = bpf_core_field_offset(struct mm_struct, map_count);
	layout.task_pt_regs = bpf_core_enum_value_exists(enum bpf_func_id, BPF_FUNC_task_pt_regs);
	return 0;
}

/*
 * A task moved itself to another cgroup (`echo $$ > cgroup.procs`, as shells, cgexec and
 * container runtimes do before exec): what ran before the move belongs to the old cgroup,
 * and a long pending slice (switches inside one cgroup do not end it) must not follow the
 * task. Moves of other tasks, and on v1 hierarchies, end nothing here; a running task moved
 * by another CPU is settled where its slice ends (on_switch, flush_slice).
 *
 * The tracepoint fires after the move; a flush or a switch in between charges the owner
 * (holds_cgroup_mutex), and a switch makes the new cgroup the owner: nothing is left here.
 */
SEC("tp_btf/cgroup_attach_task")
int BPF_PROG(on_cgroup_attach, struct cgroup *dst, const char *path, struct task_struct *task)
{
	struct task_struct *self = (struct task_struct *)bpf_get_current_task();
	struct cgtma_snapshot *snap = this_cpu_snapshot();
	struct cgroup *cur = task_cgroup(self);
	struct cgtma_counts *delta;
	__u64 id, seq;
	__u32 half;

	/* Any move on v2, for moved_in_slice(). */
	if (pe_hook && dst->root == BPF_CORE_READ(cur, root)) {
		id = dst->kn->id;
		/*
		 * Read, then added to, not one atomic add that returns the old value
		 * (BPF_FETCH needs Linux 5.12): moves are serialised by cgroup_mutex.
		 */
		seq = READ_ONCE(move_seq);
		__sync_fetch_and_add(&move_seq, 1);
		bpf_map_update_elem(&moved_to, &id, &seq, BPF_ANY);
	}
	if (!snap || (__u64)cur == snap->owner || dst->root != BPF_CORE_READ(cur, root) ||
	    task->tgid != (pid_t)(bpf_get_current_pid_tgid() >> 32))
		return 0;
	delta = read_slice(snap, &half);
	if (!delta)
		return 0;
	/* The task's old cgroup is gone from the task: the owner is the only record of it. */
	charge_slice(snap, delta, half, self, cur, END_MOVE);
	slice_done(snap);
	return 0;
}

/*
 * Changes to the v2 hierarchy (mkdir, rmdir; v2 cgroups cannot be renamed) so far: user
 * space walks the hierarchy again for its paths and globs only when this has moved.
 */
__u64 cgroup_changes = 0;

/* Cgroups created since user space last looked: it matches their paths and keeps or drops. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 1024);
	__type(key, __u64);
	__type(value, struct cgtma_new_cgroup);
} new_cgroups SEC(".maps");

SEC("tp_btf/cgroup_mkdir")
int BPF_PROG(on_cgroup_mkdir, struct cgroup *cgrp, const char *path)
{
	struct cgtma_new_cgroup n = {};
	int level, err;

	if (!on_v2(cgrp))
		return 0;
	__sync_fetch_and_add(&cgroup_changes, 1);
	level = BPF_CORE_READ(cgrp, level);
	if (level < 1 || level > CGTMA_MAX_LEVEL || !(new_cgroup_levels & (1ULL << level)))
		return 0;

	n.id = BPF_CORE_READ(cgrp, kn, id);
	bpf_probe_read_kernel_str(n.path, sizeof(n.path), path);
	if (bpf_map_update_elem(&new_cgroups, &n.id, &n, BPF_ANY)) {
		stat_inc(CGTMA_STAT_NEW_DROPPED);
		return 0;
	}
	err = bpf_map_update_elem(&cgroup_counts, &n.id, zero_counts, BPF_NOEXIST);
	if (err && err != -EEXIST)
		stat_inc(CGTMA_STAT_NEW_DROPPED);
	return 0;
}

SEC("tp_btf/cgroup_rmdir")
int BPF_PROG(on_cgroup_rmdir, struct cgroup *cgrp, const char *path)
{
	if (on_v2(cgrp))
		__sync_fetch_and_add(&cgroup_changes, 1);
	return 0;
}
