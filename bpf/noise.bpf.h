/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Noise at switches between cgroups (noise_on; docs/noise.md), per pair of cgroups in
 * noise_pairs, in the epoch half of the CPU:
 *
 *   preempt  a task left the CPU still runnable (TASK_RUNNING) for a task of another cgroup;
 *   took     the time from that switch to the end of the other cgroup's slice (or the flush):
 *            the CPU time the preempting cgroup ran while the preempted one's task waited
 *            for that CPU;
 *   smt      the time two cgroups ran on the two hardware threads of one core at once.
 *
 * Only switches between cgroups do anything here: a switch inside one changes none of it.
 * Each CPU writes its own noise_cpus entry; SMT time is charged by whichever thread of a
 * core switches, for the stretch since either last did, both ways. A thread writes its new
 * state before it reads its sibling's, so that two switching at the same moment each see
 * the other's new one and charge nothing of their common stretch: such a stretch is lost,
 * never counted twice. The kernel gives tracing programs no lock to do better.
 */
#ifndef CGTMA_NOISE_BPF_H
#define CGTMA_NOISE_BPF_H

#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "cgtma.h"
#include "kernel_defs.bpf.h"
#include "maps.bpf.h"
#include "config.bpf.h"

/* Per possible CPU (user space sets the size, and each entry's sibling). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cgtma_noise_cpu);
} noise_cpus SEC(".maps");

/* User space reads the half the flush closed, and deletes what it read. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 2 * CGTMA_NOISE_PAIRS);
	__type(key, struct cgtma_noise_key);
	__type(value, struct cgtma_noise_pair);
} noise_pairs SEC(".maps");

/*
 * Each CPU sums its last pairs here before they go to noise_pairs, at a miss or the flush: a
 * hash map update costs some 100 ns, and a ping-pong across two cgroups (a request and its
 * answer: wakeup preemptions each way) meets two pairs over and over.
 */
#define NOISE_SLOTS 4

struct noise_slot {
	struct cgtma_noise_key key;	/* cgroup 0: free */
	struct cgtma_noise_pair v;
};

struct noise_cache {
	struct noise_slot slot[NOISE_SLOTS];
	__u32 next;			/* the slot to reuse at a miss */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct noise_cache);
} noise_cache SEC(".maps");

/* Before 5.14 a task's state was a long named state. */
struct task_struct___state_long {
	long state;
} __attribute__((preserve_access_index));

/*
 * Whether task (a BTF pointer: plain loads) is still runnable as it leaves the CPU:
 * preempted, or yielding.
 */
static __always_inline bool task_runnable(struct task_struct *task)
{
	if (bpf_core_field_exists(task->__state))
		return task->__state == 0;
	return ((struct task_struct___state_long *)task)->state == 0;
}

/* Adds a slot's sums to noise_pairs, and frees it. */
static __always_inline void slot_write_back(struct noise_slot *s)
{
	struct cgtma_noise_pair zero = {}, *p;
	int err;

	if (!s->key.cgroup)
		return;
	p = map_lookup_or_insert(&noise_pairs, &s->key, &zero, &err);
	if (!p) {
		stat_inc(CGTMA_STAT_NOISE_DROPPED);
	} else {
		/* Both threads of a core add to the same pairs. */
		__sync_fetch_and_add(&p->preempt, s->v.preempt);
		__sync_fetch_and_add(&p->took_ns, s->v.took_ns);
		__sync_fetch_and_add(&p->smt_ns, s->v.smt_ns);
	}
	s->key.cgroup = 0;
}

static __always_inline void pair_add(struct noise_cache *c, __u64 cgroup, __u64 other,
				     __u32 half, __u64 preempt, __u64 took_ns, __u64 smt_ns)
{
	struct noise_slot *s = NULL;

	for (int i = 0; i < NOISE_SLOTS; i++)
		if (c->slot[i].key.cgroup == cgroup && c->slot[i].key.other == other &&
		    c->slot[i].key.half == half) {
			s = &c->slot[i];
			break;
		}
	if (!s) {
		s = &c->slot[c->next++ % NOISE_SLOTS];
		slot_write_back(s);
		s->key.cgroup = cgroup;
		s->key.other = other;
		s->key.half = half;
		s->v.preempt = s->v.took_ns = s->v.smt_ns = 0;
	}
	s->v.preempt += preempt;
	s->v.took_ns += took_ns;
	s->v.smt_ns += smt_ns;
}

/*
 * This CPU (me) runs cgroup next from now on (the same one at a flush): charges the stretch
 * since this CPU or its sibling last changed, where the two ran different cgroups.
 */
static __always_inline void smt_step(struct cgtma_noise_cpu *me, struct noise_cache *c,
				     __u64 now, __u64 next, __u32 half)
{
	__u64 mine = me->cgroup, since = me->since, seq, other, other_since, start;
	__u32 s = me->sibling;
	struct cgtma_noise_cpu *sib;

	/* Siblings are mutual: a CPU with none is nobody's, and nobody reads its state. */
	if (s == CGTMA_NO_SIBLING)
		return;
	WRITE_ONCE(me->seq, me->seq + 1);
	barrier();
	WRITE_ONCE(me->cgroup, next);
	WRITE_ONCE(me->since, now);
	barrier();
	WRITE_ONCE(me->seq, me->seq + 1);
	if (!mine)
		return;
	sib = bpf_map_lookup_elem(&noise_cpus, &s);
	if (!sib)
		return;
	seq = READ_ONCE(sib->seq);
	barrier();
	other = READ_ONCE(sib->cgroup);
	other_since = READ_ONCE(sib->since);
	barrier();
	/* Caught in the middle of the sibling's change: its stretch is its own to charge. */
	if ((seq & 1) || seq != READ_ONCE(sib->seq))
		return;
	if (!other || other == mine)
		return;
	start = since > other_since ? since : other_since;
	if (now <= start)
		return;
	pair_add(c, mine, other, half, 0, 0, now - start);
	pair_add(c, other, mine, half, 0, 0, now - start);
}

/* This CPU's entry and cache; NULL where either is missing. */
static __always_inline struct cgtma_noise_cpu *this_noise_cpu(struct noise_cache **c)
{
	__u32 cpu = bpf_get_smp_processor_id(), zero = 0;

	*c = bpf_map_lookup_elem(&noise_cache, &zero);
	return *c ? bpf_map_lookup_elem(&noise_cpus, &cpu) : NULL;
}

/*
 * A switch between cgroups on this CPU, in epoch half: from prev (v2 id; 0: the idle task) to
 * next (0: idle); preempted: prev's task is still runnable. A global function, verified once
 * on its own, not as a part of each path through the charging before it.
 */
__noinline int noise_at_switch(__u64 prev, __u64 next, __u32 preempted, __u32 half)
{
	struct noise_cache *c;
	struct cgtma_noise_cpu *me = this_noise_cpu(&c);
	__u64 now;

	if (!me)
		return 0;
	preempted = preempted && prev && next;
	/* Nothing to time: no clock read (a switch between cgroups without SMT, as a
	 * ping-pong's that blocks). */
	if (!me->victim && !preempted && me->sibling == CGTMA_NO_SIBLING)
		return 0;
	now = bpf_ktime_get_ns();
	half &= 1;
	/* The slice that preempted me->victim ends here. */
	if (me->victim) {
		if (prev && prev != me->victim && now > me->victim_since)
			pair_add(c, me->victim, prev, half, 0, now - me->victim_since, 0);
		me->victim = 0;
	}
	if (preempted) {
		pair_add(c, prev, next, half, 1, 0, 0);
		me->victim = prev;
		me->victim_since = now;
	}
	smt_step(me, c, now, next, half);
	return 0;
}

/*
 * The flush on this CPU, running cgroup cur (0: idle), before it closes epoch half: what the
 * running slice took and shared so far goes into the closing half.
 */
__noinline int noise_at_flush(__u64 cur, __u32 half)
{
	struct noise_cache *c;
	struct cgtma_noise_cpu *me = this_noise_cpu(&c);
	__u64 now = bpf_ktime_get_ns();

	if (!me)
		return 0;
	half &= 1;
	if (me->victim && cur && cur != me->victim && now > me->victim_since) {
		pair_add(c, me->victim, cur, half, 0, now - me->victim_since, 0);
		me->victim_since = now;
	}
	smt_step(me, c, now, cur, half);
	/* The closing half's sums, where user space reads them. */
	for (int i = 0; i < NOISE_SLOTS; i++)
		slot_write_back(&c->slot[i]);
	return 0;
}

/* The v2 id of task's cgroup, 0 for the idle task: what noise_at_switch() takes. */
static __always_inline __u64 noise_id(struct task_struct *task, struct cgroup *cg)
{
	return task->pid ? cg->kn->id : 0;
}

#endif
