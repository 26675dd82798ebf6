/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Marks: slices charged though the switch hook did not see where they began, each listed
 * per CPU and epoch half with what bounds its error; and the perf-event hook's checks of
 * itself (check_hook()), which make them.
 */
#ifndef CGTMA_MARKS_BPF_H
#define CGTMA_MARKS_BPF_H

#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "cgtma.h"
#include "kernel_defs.bpf.h"
#include "maps.bpf.h"
#include "config.bpf.h"
#include "snapshot.bpf.h"
#include "moves.bpf.h"

/*
 * With the perf-event hook: each CPU's cgroup-switches event (index: the CPU), whose count the
 * flush compares with its program's runs. Sized by user space.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(max_entries, 1);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
} switch_events SEC(".maps");

/*
 * Per epoch half, the slices each CPU charged in it though its hook did not see where they
 * began (cgtma.h): read in place by user space, like charged_ids, and emptied by the flush
 * for the half a CPU moves into. Entry cpu * 2 + half; sized by user space.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, struct cgtma_misses);
} misses SEC(".maps");

/* This CPU's list of the marks of epoch half (misses). */
static __always_inline struct cgtma_misses *miss_list(__u32 half)
{
	__u32 key = bpf_get_smp_processor_id() * 2 + (half & 1);

	return bpf_map_lookup_elem(&misses, &key);
}

/*
 * Place i of a list of marks, masked where the verifier sees it (as irq_slot()): clang drops
 * a mask that a bound checked before makes redundant, and 6.1's verifier then loses the
 * bounds of the index.
 */
static __always_inline __u32 mark_slot(__u32 i)
{
	asm volatile("" : "+r"(i));
	return i & (CGTMA_MISSES_MAX - 1);
}

/*
 * How long task t (the current one) has run since it last came on this CPU: its own part of
 * the slice that ends now, at least. The kernel's sched_info clock says when it came on, its
 * run queue's clock is now (as of this switch; a tick behind at most elsewhere, which only
 * makes it less). Without sched_info (CONFIG_SCHED_INFO), a task of the fair class has run
 * its run time since it was last picked, which a pick of the same task again can reset.
 */
static __always_inline __u64 own_run(struct task_struct *t)
{
	struct rq *rq = NULL;
	__u64 now, came;
	int policy;

	/* se.cfs_rq and cfs_rq->rq exist with CONFIG_FAIR_GROUP_SCHED only. */
	if (bpf_core_field_exists(struct sched_entity, cfs_rq) &&
	    bpf_core_field_exists(struct cfs_rq, rq))
		rq = BPF_CORE_READ(t, se.cfs_rq, rq);
	if (bpf_core_field_exists(struct task_struct, sched_info) && rq &&
	    BPF_CORE_READ(rq, cpu) == (int)bpf_get_smp_processor_id()) {
		now = BPF_CORE_READ(rq, clock);
		came = BPF_CORE_READ(t, sched_info.last_arrival);
		if (came && now > came)
			return now - came;
	}
	policy = BPF_CORE_READ(t, policy);
	if (policy == SCHED_NORMAL || policy == SCHED_BATCH || policy == SCHED_IDLE)
		return BPF_CORE_READ(t, se.sum_exec_runtime) -
		       BPF_CORE_READ(t, se.prev_sum_exec_runtime);
	return 0;
}

/*
 * Lists a mark of kind in this CPU's list of epoch half (cgtma.h), for the slice whose
 * deltas read_slice() left (none for CGTMA_MISS_SKIPPED: count runs skipped), charged to
 * cgroup charged_id where the running task ends it (every slice ends in the task that ran
 * it last, prev at a switch: the current task there). What bounds the error is the
 * kernel's own accounting: the running task's run since it last came on the CPU (own_run())
 * is its own part; the rest of the slice may be another task's, among them the task the
 * slice began with, which ran at most its run time since then. Global, and reading through
 * bpf_probe_read_kernel(): the verifier checks it once, and marks are rare.
 */
__noinline int note_miss(__u32 half, __u64 charged_id, __u32 kind, __u32 count)
{
	struct task_struct *t = (struct task_struct *)bpf_get_current_task(), *first;
	struct cgtma_snapshot *snap = this_cpu_snapshot();
	struct cgtma_misses *l = miss_list(half);
	struct cgtma_counts *delta;
	struct cgtma_miss *m;
	__u64 slice, own = 0;
	__u32 zero = 0, n;

	delta = bpf_map_lookup_elem(&deltas, &zero);
	if (!snap || !l || !delta)
		return 0;
	n = l->nr;
	if (n < ~0U)
		l->nr = n + 1;
	l->slices += count;
	if (kind == CGTMA_MISS_SKIPPED || kind == CGTMA_MISS_READ || kind == CGTMA_MISS_IRQ) {
		/*
		 * No slice to bound: any of the CPU's since the last flush may hold it. Listed
		 * whatever the marks before it: in the last place where the list is full.
		 */
		l->unbounded += count;
		m = &l->m[mark_slot(n < CGTMA_MISSES_MAX ? n : CGTMA_MISSES_MAX - 1)];
		__builtin_memset(m, 0, sizeof(*m));
		m->kind = kind;
		m->count = count;
		m->max_ns = m->unseen_ns = ~0ULL;
		return 0;
	}
	/* A CPU-wide event is enabled all along: its enabled time is the slice's length. */
	slice = nr_events ? delta->ev[0].enabled : 0;
	/* The idle task's part is its own too, but the kernel keeps no clock of it. */
	if (t && BPF_CORE_READ(t, pid))
		own = own_run(t);
	if (own > slice)
		own = slice;
	l->max_ns += slice - own;
	if (n >= CGTMA_MISSES_MAX)
		return 0;
	m = &l->m[mark_slot(n)];
	m->kind = kind;
	m->count = count;
	m->ran_cgroup = snap->owner_id;
	m->charged_cgroup = charged_id;
	m->slice_ns = slice;
	m->max_ns = slice - own;
	m->charged_pid = t ? BPF_CORE_READ(t, pid) : 0;
	m->pid = snap->start_pid;
	m->unseen_ns = ~0ULL;
	__builtin_memset(m->comm, 0, sizeof(m->comm));
	/*
	 * The first task, if its address still holds it (a task that exited may be gone); not
	 * the idle task, whose run time the kernel does not keep.
	 */
	first = (void *)snap->start_task;
	if (first && snap->start_pid && BPF_CORE_READ(first, pid) == snap->start_pid) {
		m->unseen_ns = BPF_CORE_READ(first, se.sum_exec_runtime) - snap->start_runtime;
		bpf_core_read(m->comm, sizeof(m->comm), &first->comm);
	}
	return 0;
}

/*
 * The perf-event hook missed a switch on this CPU: the interval is not exact
 * (CGTMA_STAT_HOOK_MISSED), and under auto the first miss moves the switches to the
 * tracepoint, which user space attaches when it sees switch_miss_cpu.
 */
static __always_inline void hook_missed(__u64 n)
{
	stat_add(CGTMA_STAT_HOOK_MISSED, n);
	if (switch_miss_cpu < 0) {
		switch_miss_cpu = bpf_get_smp_processor_id();
		if (pe_falls_back)
			WRITE_ONCE(switch_tp_on, 1);
	}
}

/*
 * A slice that began with a switch the hook did not see (the callers say how they know),
 * in epoch half, ended by task in cur: marked (note_miss()). Where the perf-event hook was
 * in charge of the CPU, it missed the switch, unless a move by another task cut the slice.
 */
static __always_inline void unseen_switch(struct cgtma_snapshot *snap, __u32 half,
					  struct task_struct *task, struct cgroup *cur)
{
	bool moved = pe_hook && !snap->tp_took_over && moved_in_slice(snap, task, cur);

	stat_inc(CGTMA_STAT_UNSEEN);
	note_miss(half, BPF_CORE_READ(cur, kn, id),
		  moved ? CGTMA_MISS_MOVED : CGTMA_MISS_SWITCH, 1);
	if (pe_hook && !snap->tp_took_over && !moved) {
		snap->hook_found++;
		hook_missed(1);
	}
}

/*
 * The perf-event hook's check of itself, at each flush on its CPU: the kernel counts the
 * cgroup-switches event at every switch between cgroups, but may not run its program there
 * (a perf event's program is skipped while the CPU's bpf_prog_active is held, as by a task
 * preempted in a BPF map operation; a 6.18 build in a VM dropped the samples of switches out
 * of idle on one CPU). A slice whose start the program missed is found where it ends, when
 * the cgroup there is not the one it began in; one that ends in that cgroup again (two
 * switches missed, there and back) is not. So the count is compared with the program's runs
 * since the last flush: runs missing are marked in the closing half and are a miss of the
 * hook (hook_missed()), less those its switches found and marked already (a run skipped
 * where the slice ended in another cgroup). A switch found missed that the kernel never
 * emitted the event for (this VM's kernel leaves some unreported) is subtracted too: where
 * both happen in one flush's span the skipped runs marked are a lower bound, and the
 * interval is marked all the same. Until the event has been read once there is nothing to
 * compare, and once the fallback's tracepoint took the CPU over its runs matter no more.
 */
static __always_inline void check_hook(struct cgtma_snapshot *snap, __u32 half)
{
	struct bpf_perf_event_value v;
	__u64 counted, ran, found, skipped;

	if (!pe_hook)
		return;
	if (snap->tp_took_over ||
	    bpf_perf_event_read_value(&switch_events, bpf_get_smp_processor_id(), &v,
				      sizeof(v))) {
		snap->hook_base_valid = 0;
		return;
	}
	counted = v.counter - snap->hook_count_base;
	ran = snap->hook_runs - snap->hook_runs_base;
	found = snap->hook_found - snap->hook_found_base;
	skipped = counted > ran + found ? counted - ran - found : 0;
	if (snap->hook_base_valid && skipped) {
		stat_add(CGTMA_STAT_UNSEEN, skipped);
		stat_add(CGTMA_STAT_HOOK_SKIPPED, skipped);
		note_miss(half, 0, CGTMA_MISS_SKIPPED, skipped < ~0U ? skipped : ~0U);
		hook_missed(skipped);
	}
	snap->hook_count_base = v.counter;
	snap->hook_runs_base = snap->hook_runs;
	snap->hook_found_base = snap->hook_found;
	snap->hook_base_valid = 1;
}

#endif
