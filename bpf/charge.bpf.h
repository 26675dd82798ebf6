/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Charging a slice's deltas to cgroups and threads: the tracked cgroups' counts, each CPU's
 * charge cache in front of them and its lists of the cgroups charged, the walk up to the
 * tracked ancestors, and -T's thread rows.
 */
#ifndef CGTMA_CHARGE_BPF_H
#define CGTMA_CHARGE_BPF_H

#include <bpf/bpf_helpers.h>
#include "cgtma.h"
#include "kernel_defs.bpf.h"
#include "maps.bpf.h"
#include "cgroup.bpf.h"
#include "config.bpf.h"
#include "counts.bpf.h"
#include "snapshot.bpf.h"
#include "slice.bpf.h"

/*
 * Tracked cgroups (v2 id) -> counts. Presence of a key is what "tracked" means. Not
 * preallocated: memory follows the cgroups tracked, not max_entries; only user space and the
 * mkdir hook insert, never the sched_switch hook.
 *
 * One value per cgroup, which every CPU adds to with atomic adds: a per-CPU value would cost
 * a cgroup its counts times the possible CPUs (650 kB with 62 events and 240 possible CPUs),
 * and a read would copy them all. The adds are rare: a CPU's charges collect in its charge
 * cache and reach this map at the flush (one CPU at a time, as user space runs it), or when
 * another cgroup's counts hold the cgroup's slot. Only -A with cgroups, whose rows are per
 * CPU, makes it a per-CPU hash (cgroup_per_cpu), at that memory.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 1024);
	__uint(key_size, sizeof(__u64));
	/* CGTMA_CGROUP_VALUE_SIZE */
	__uint(value_size, 2 * sizeof(struct cgtma_counts) + 16);
} cgroup_counts SEC(".maps");

/*
 * Per epoch half, the tracked cgroups each CPU charged in its current epoch of that half
 * (cgtma.h): user space reads only those of the half just closed, so an interval's reads
 * follow the cgroups that ran, not those tracked. A cgroup goes in when its counts are
 * added to cgroup_counts (the cache's write-back, or a charge past the cache), once per
 * epoch: its value remembers the epoch that listed it last. The flush empties the list of
 * the half a CPU moves into, which user space read when that half last closed.
 * Entry cpu * 2 + half, not a per-CPU map: user space reads the lists in place (mmap),
 * each CPU's count and then only the ids it lists, where a lookup of a per-CPU map would
 * copy every possible CPU's 4 kB (1 MB per interval at 240 possible CPUs).
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 2);		/* 2 per possible CPU: set by user space */
	__type(key, __u32);
	__type(value, struct cgtma_charged);
} charged_ids SEC(".maps");

/*
 * Each CPU's charge cache (charge_cache below says why): entries per CPU, direct-mapped by
 * the low bits of the cgroup id, so a power of two.
 */
#define CGTMA_CHARGE_CACHE 32

/*
 * One entry: a cgroup id, whether it is tracked (as cgroup_counts said under generation
 * gen), and the counts charged to it on this CPU in the current epoch that cgroup_counts
 * does not hold yet. Created with value size offsetof(acc) + nr_events counts: user space
 * trims the counts past the run's events.
 */
struct cgtma_charge_entry {
	__u64 id;	/* 0: empty */
	__u64 gen;	/* tracked_gen when tracked was looked up */
	__u32 tracked;
	__u32 dirty;	/* acc holds counts */
	struct cgtma_count acc[CGTMA_MAX_EVENTS];
};

/*
 * A hash lookup in cgroup_counts costs more than the rest of a switch's own work (about 90 ns
 * of the hook's 200 over its reads, 4 events, measured on a 2-CPU guest), and the switches of a
 * CPU mostly charge the same few cgroups again. So each CPU keeps, per cgroup it charged
 * lately, whether it is tracked and the counts charged to it in the current epoch, and adds
 * them to cgroup_counts when the flush closes the epoch: the reads still see every count of
 * the interval, in the same half. An entry whose slot another cgroup holds with counts
 * (dirty) is not evicted: that cgroup is charged in cgroup_counts directly, as without the
 * cache, so the worst case costs what every switch cost before. Where the slice's cgroup is
 * at the only tracked level and its entry is warm, a switch adds the deltas to the entry as
 * it reads them (warm_entry()). (A CPU taken offline keeps its entries' counts until it
 * comes back online and is flushed: they are counted then.)
 * Value size set by user space: offsetof(acc) + nr_events counts.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, CGTMA_CHARGE_CACHE);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(struct cgtma_charge_entry));
} charge_cache SEC(".maps");

/*
 * Moved by user space after each insert into or delete from cgroup_counts: an entry looked
 * up under another generation is looked up again. So a cgroup user space starts tracking is
 * counted from the move, microseconds after its insert, and one it stops tracking is
 * charged in the cache until then and dropped at the write-back. (The mkdir hook's inserts
 * need not move it: no task can run in a cgroup before its mkdir tracepoint, which fires
 * under cgroup_mutex, so no entry holds the new id yet.)
 */
__u64 tracked_gen = 0;

/*
 * Moved by user space before each flush of every CPU: the round in which an epoch half
 * opens, the same on every CPU, so that a cgroup's value says whether any CPU listed it in
 * charged_ids in this round of that half.
 */
__u64 flush_round = 0;

/*
 * -T: (cgroup, thread) -> counts. Shared, not per CPU: a thread's slices end one at a time,
 * on the CPU it ran on (sched_switch, flush and attach all charge the current task), so no
 * two CPUs write one value at once. Inserted by the hooks: preallocated where the kernel
 * cannot allocate there (before 6.1, as cgroup_counts); sized by user space (1 without -T).
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 1);
	__uint(key_size, sizeof(struct cgtma_task_key));
	__uint(value_size, sizeof(struct cgtma_task));
} task_counts SEC(".maps");

/* Zeroes to create a cgroup's value from (both epochs and listed): a map value, as the update
 * helper wants. */
static __u64 zero_counts[CGTMA_CGROUP_VALUE_SIZE(CGTMA_MAX_EVENTS) / 8];
static struct cgtma_task zero_task;
/* -T: the error of the last insert into task_counts that failed, not for want of room. */
__s64 task_insert_error = 0;

/*
 * add_counts() into a cgroup's value in cgroup_counts, which other CPUs may be adding to:
 * atomic adds unless the map is per CPU. (Without a fetch: 5.10 has those for 64 bits.)
 */
static __always_inline void add_counts_to_cgroup(struct cgtma_count *dst,
						 const struct cgtma_counts *d)
{
	if (cgroup_per_cpu) {
		add_counts(dst, d);
		return;
	}
	for (__u32 i = 0; i < CGTMA_MAX_EVENTS; i++) {
		if (i >= nr_events)
			break;
		__sync_fetch_and_add(&dst[i].counter, d->ev[i].counter);
		__sync_fetch_and_add(&dst[i].enabled, d->ev[i].enabled);
		__sync_fetch_and_add(&dst[i].running, d->ev[i].running);
	}
}

/* This CPU's list of epoch half in charged_ids. */
static __always_inline struct cgtma_charged *charged_list(__u32 half)
{
	__u32 key = bpf_get_smp_processor_id() * 2 + (half & 1);

	return bpf_map_lookup_elem(&charged_ids, &key);
}

/*
 * Puts cgroup id, whose value in cgroup_counts is counts, on this CPU's list of the cgroups
 * charged in its epoch (charged_ids), unless a CPU listed it in this round of epoch half.
 * Inside an update: the epoch does not move under it. Two CPUs may both list it: user space
 * reads each cgroup once.
 */
static __always_inline void list_charged(struct cgtma_counts *counts, __u64 id, __u32 half)
{
	/* After both epochs' counts: an offset the verifier knows (nr_events is constant). */
	__u64 *listed = (__u64 *)&counts->ev[2 * nr_events];
	struct cgtma_snapshot *snap = this_cpu_snapshot();
	struct cgtma_charged *l;
	__u32 n;

	if (half & 1)
		listed++;
	if (!snap || *listed == snap->round + 1)
		return;
	l = charged_list(half);
	if (!l)
		return;
	*listed = snap->round + 1;
	n = l->nr;
	if (n < CGTMA_CHARGED_MAX)
		l->ids[n] = id;
	/* Past the end it only counts: user space then reads every cgroup. */
	if (n <= CGTMA_CHARGED_MAX)
		l->nr = n + 1;
}

/*
 * This CPU's charge cache entry for cgroup id (whatever it holds now), and in *gen the
 * generation to check it against, read before the entry: a change after it makes the
 * entry stale.
 */
static __always_inline struct cgtma_charge_entry *cache_entry(__u64 id, __u64 *gen)
{
	__u32 slot = id & (CGTMA_CHARGE_CACHE - 1);

	*gen = *(volatile __u64 *)&tracked_gen;
	barrier();
	return bpf_map_lookup_elem(&charge_cache, &slot);
}

/*
 * Adds the counts of charge cache entry slot to epoch half of its cgroup in cgroup_counts
 * (dropped if it is no longer tracked) and empties it. A global function: the verifier
 * checks it once, not at each of its callers' steps.
 */
__noinline int cache_write_back(__u32 slot, __u32 half)
{
	struct cgtma_charge_entry *e = bpf_map_lookup_elem(&charge_cache, &slot);
	struct cgtma_counts *counts;

	if (!e || !e->dirty)
		return 0;
	counts = bpf_map_lookup_elem(&cgroup_counts, &e->id);
	if (counts) {
		add_counts_to_cgroup(half_of(counts, half), (const struct cgtma_counts *)e->acc);
		list_charged(counts, e->id, half);
	}
	clear_counts(e->acc);
	e->dirty = 0;
	return 0;
}

/*
 * Adds the slice's deltas (this CPU's deltas value, as read_slice() left them) to epoch half
 * of cgroup id if it is tracked, through this CPU's charge cache; returns whether it is.
 * Called only inside an update (the snapshot busy), so nothing on this CPU changes the cache
 * under it. Global, so that the verifier checks it once rather than at every step of every
 * caller's walk up the hierarchy.
 */
__noinline int charge_cgroup_id(__u64 id, __u32 half)
{
	struct cgtma_counts *delta, *counts;
	struct cgtma_charge_entry *e;
	__u32 zero = 0;
	__u64 gen;

	e = cache_entry(id, &gen);
	delta = bpf_map_lookup_elem(&deltas, &zero);
	if (!delta || !e)
		return 0;
	if (e->id != id || e->gen != gen) {
		if (e->dirty && e->id != id) {
			/* Another cgroup's counts hold the entry: this one is charged in the
			 * map. */
			counts = bpf_map_lookup_elem(&cgroup_counts, &id);
			if (!counts)
				return 0;
			add_counts_to_cgroup(half_of(counts, half), delta);
			list_charged(counts, id, half);
			stat_inc(CGTMA_STAT_CACHE_PASSED);
			return 1;
		}
		cache_write_back(id & (CGTMA_CHARGE_CACHE - 1), half);
		e->id = id;
		e->gen = gen;
		e->tracked = bpf_map_lookup_elem(&cgroup_counts, &id) != NULL;
	}
	if (!e->tracked)
		return 0;
	add_counts(e->acc, delta);
	e->dirty = 1;
	return 1;
}

/*
 * Adds the slice's deltas (read_slice()'s) to epoch half of cg and of each of its tracked
 * ancestors (cg a BTF pointer where btf). Returns the id of the deepest one (0: none), which
 * holds the thread's row with -T.
 */
static __always_inline __u64 charge_with_ancestors(struct cgroup *cg, __u32 half, bool btf)
{
	int level = cgroup_level(cg, btf);
	__u64 deepest = 0;

	/*
	 * Walk up, looking up only levels that can hold tracked cgroups, and stop when none is
	 * left above. Parent pointers exist on every kernel (ancestor arrays changed type in
	 * 6.2).
	 */
	for (int step = 0; step < CGTMA_WALK_MAX && cg && tracked_up_to(level); step++) {
		if (tracked_level(level)) {
			__u64 id = cgroup_id(cg, btf);

			if (charge_cgroup_id(id, half) && !deepest)
				deepest = id;
		}
		/* None above: the parent is not loaded. */
		if (!tracked_above(level))
			break;
		cg = cgroup_up(cg, btf);
		level--;
	}
	return deepest;
}

/*
 * -T: adds delta to epoch half of the current thread's row in cgroup id (the deepest tracked
 * one charged). The slice that ends is always the current task's: prev at a switch (both
 * hooks run before the switch), the running task at a flush or a self-move. The idle tasks
 * (tid 0, one per CPU) get no row. A full map drops the thread's share (a stat), not the
 * cgroup's.
 */
static __always_inline void charge_thread_row(__u64 id, const struct cgtma_counts *delta,
					      __u32 half)
{
	struct cgtma_task_key key = { .cgroup = id };
	struct cgtma_task *t;
	__u64 pid_tgid;
	int err;

	/* Before the helper call, which the verifier's pruning would otherwise leave in. */
	if (!per_task || !id)
		return;
	pid_tgid = bpf_get_current_pid_tgid();
	key.tid = (__u32)pid_tgid;
	if (!key.tid)
		return;
	t = map_lookup_or_insert(&task_counts, &key, &zero_task, &err);
	/*
	 * Full is -E2BIG only. The kernel fails an insert for other reasons too, with room to
	 * spare: no memory at hand in this context (-ENOMEM: maps allocated as entries come take
	 * it from a per-CPU cache refilled later), the bucket's lock held on this CPU or its
	 * deadlock check (-EBUSY, -EDEADLK, -ETIMEDOUT), and a row that user space deleted
	 * between the insert and the lookup: each its own count, with the last error, so that a
	 * full map is said only where it is one.
	 */
	if (!t) {
		if (err == -E2BIG) {
			stat_inc(CGTMA_STAT_TASKS_DROPPED);
		} else {
			stat_inc(CGTMA_STAT_TASKS_FAILED);
			task_insert_error = err;
		}
		return;
	}
	t->pid = pid_tgid >> 32;
	bpf_get_current_comm(t->comm, sizeof(t->comm));
	add_counts(half_of((struct cgtma_counts *)t->ev, half), delta);
}

/*
 * The slice that a switch ends, when it is the common one: prev's cgroup owns it, that
 * cgroup is at the one level that can hold tracked cgroups, and its charge cache entry is
 * warm (this cgroup, this generation, tracked). Then that entry is the only place the deltas
 * go (charge_with_ancestors() would charge it and stop), and read_slice_to_entry() adds them
 * there as it reads: no deltas to store and load again, no walk, no call. Returns the entry, or
 * NULL where the general path charges the slice: other owners, several tracked levels, -T
 * and --irq (which need the deltas for more than one place).
 *
 * Checked before the update begins: the cache changes only inside updates on its own CPU,
 * and the switch hooks run with interrupts off, so none can begin before this one does; one
 * in progress (preempted on PREEMPT_RT) leaves the snapshot busy, and the entry unused.
 */
static __always_inline struct cgtma_charge_entry *warm_entry(const struct cgtma_snapshot *snap,
							     struct cgroup *cg)
{
	struct cgtma_charge_entry *e;
	__u64 id, gen;

	/* Constants: the verifier drops the rest where they fail. */
	if (per_task || irq_mask || !tracked_levels || (tracked_levels & (tracked_levels - 1)))
		return NULL;
	if (!cg || snap->owner != (__u64)cg || !(tracked_levels & (1ULL << (cg->level & 63))))
		return NULL;
	id = cg->kn->id;
	e = cache_entry(id, &gen);
	if (!e || e->id != id || e->gen != gen || !e->tracked)
		return NULL;
	return e;
}

/*
 * read_slice() for the common slice (warm_entry()): its deltas are added to charge cache
 * entry e, which the flush writes back into the epoch it read them in. False if busy.
 */
static __always_inline bool read_slice_to_entry(struct cgtma_snapshot *snap,
						struct cgtma_charge_entry *e)
{
	__u32 half, cpu = bpf_get_smp_processor_id();

	if (!begin_update(snap, &half))
		return false;
	for (__u32 i = 0; i < CGTMA_MAX_EVENTS; i++) {
		struct cgtma_count d;

		if (i >= nr_events)
			break;
		if (read_event(snap, cpu, i, &d))
			add_count(&e->acc[i], &d);
	}
	note_read_failed(snap, half);
	e->dirty = 1;
	snap->irq_coalesce = 0;
	return true;
}

#endif
