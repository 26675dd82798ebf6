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
 * GPL: bpf_perf_event_read_value() is a GPL-only helper.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "cgtma.h"
#include "walk.h"

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
	__u32 pad;
	/*
	 * The perf-event hook's program runs here, and at the last flush, with its event's count
	 * then: the kernel counts every switch it emits the event at, and skips the program at
	 * some (check_hook()).
	 */
	__u64 hook_runs;
	__u64 hook_runs_base;
	__u64 hook_count_base;
	__u64 test_seq;		/* runs, for test_drop_every */
	/*
	 * Last, CGTMA_SNAPSHOT_COUNTS runs of nr_events counts, which user space sizes the
	 * map's value to: the readings (ev[0, nr_events)), then those where the CPU's epoch
	 * began (snap_base()), then --irq's task part (snap_task_part()).
	 */
	struct cgtma_count ev[CGTMA_SNAPSHOT_COUNTS * CGTMA_MAX_EVENTS];
};

char LICENSE[] SEC("license") = "GPL";

#define ENOENT 2
#define EEXIST 17
#define E2BIG 7

#define barrier() asm volatile("" ::: "memory")
#define WRITE_ONCE(x, v) (*(volatile typeof(x) *)&(x) = (v))
#define READ_ONCE(x) (*(volatile typeof(x) *)&(x))

/* Set by user space between open and load; the verifier prunes what they disable. */
const volatile __u32 nr_events = 0;
/*
 * Per event, the event whose enabled and running times it shares (its own index: none):
 * the members of a perf group are scheduled with their leader, and software and tracepoint
 * events are never multiplexed, so each of those reads its counter alone
 * (bpf_perf_event_read()), a helper that takes no clock, and the times come from an event
 * read before it at the same moment. Set by user space.
 */
const volatile __u8 times_of[CGTMA_MAX_EVENTS] = {};
/* Deepest level with a tracked cgroup; levels below it are never looked up. */
const volatile __u32 max_level = 0;
/* Bit L set: cgroups at level L may be tracked (explicit paths, globs, --all-cgroups). */
const volatile __u64 tracked_levels = 0;
/* Bit L set: a cgroup created at level L is counted from its birth, pending user space. */
const volatile __u64 new_cgroup_levels = 0;
/* -T: every switch ends the slice, and each slice is also charged to its thread. */
const volatile bool per_task = false;
/*
 * The perf-event hook is loaded. The sched_switch program, where it is attached beside it,
 * acts only once switch_tp_on is set, and with -T at switches inside a cgroup (which the
 * event never sees). False with the tracepoint alone: the verifier then drops every test
 * of switch_tp_on.
 */
const volatile bool pe_hook = false;
/* The perf-event hook falls back to sched_switch at its first miss (auto picked it). */
const volatile bool pe_falls_back = false;
/*
 * The first slice found to have begun with a switch the perf-event hook did not see (a
 * kernel that drops the event's samples) sets switch_miss_cpu to the CPU it was found on,
 * for user space to say, and with pe_falls_back switch_tp_on, in the BPF program that
 * finds it: sched_switch takes over at once, without waiting for user space. Each CPU
 * hands over at its next switch that the tracepoint acts on (snapshot's tp_took_over).
 */
__u32 switch_tp_on = 0;
__s32 switch_miss_cpu = -1;
/*
 * Tests only (CGTMA_TEST_DROP_SWITCH): the perf-event hook's program leaves every
 * test_drop_every'th run on a CPU at once, as if the kernel had not run it (its run not
 * counted) or, with test_drop_counted, as if it had run but not seen the switch. 0: never.
 */
const volatile __u32 test_drop_every = 0;
const volatile bool test_drop_counted = false;
/* --irq: bit i carves interrupt scope i out (cgtma.h); 0: interrupts stay with the task. */
const volatile __u32 irq_mask = 0;
/* An interrupt entry this soon after an interrupt's exit reads nothing: the gap is its own. */
const volatile __u64 irq_coalesce_ns = 0;
/* -A with cgroups: cgroup_counts is a per-CPU hash (user space sets its type), see there. */
const volatile bool cgroup_per_cpu = false;

/* possible_cpus * nr_events entries: index cpu * nr_events + event. Sized by user space. */
struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
} events SEC(".maps");

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

/* Value size set by user space: the snapshot's counts for nr_events (cgtma.h). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(struct cgtma_snapshot));
} snapshots SEC(".maps");

/*
 * The counts maps hold nr_events entries of struct cgtma_count per value and epoch: user
 * space sets value_size at load time, so they are declared by size, not by BTF type.
 *
 * Epochs make each interval one cut: every CPU writes the half of its current epoch (the
 * snapshot's), and the flush that ends an interval on a CPU switches that CPU to the other
 * half once its last slice is in. After flushing every CPU, user space reads the half just
 * closed, which nothing writes until the next flush switches back to it: the CPU totals,
 * the cgroups' counts and the reading times of an interval are all of the same slices. A
 * CPU's totals are entry cpu * 2 + half; a cgroup's value holds both halves, epoch 0's first.
 * Not a per-CPU map, for the reason of charged_ids: user space reads in place the CPUs that
 * were online, where a lookup would copy every possible CPU's (357 kB at 240 possible CPUs
 * and 62 events). Each CPU writes its own entries, at its flushes (and reset_cpu).
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 2);		/* 2 per possible CPU: set by user space */
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(struct cgtma_counts));
} cpu_counts SEC(".maps");

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
	__uint(value_size, 2 * sizeof(struct cgtma_counts) + 16);	/* CGTMA_CGROUP_VALUE_SIZE */
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

/* Cgroups created since user space last looked: it matches their paths and keeps or drops. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 1024);
	__type(key, __u64);
	__type(value, struct cgtma_new_cgroup);
} new_cgroups SEC(".maps");

/*
 * CLOCK_MONOTONIC of the reading with which the flush closed each CPU's epoch: where the
 * interval ends on that CPU (its last reading in that epoch; the switches before it take no
 * time). Apart from the snapshot, so user space reads 8 bytes per CPU, not 3 KB.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u64);
} read_times SEC(".maps");

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

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, CGTMA_STAT_MAX);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

/* Zeroes to create a cgroup's value from (both epochs and listed): a map value, as the update
 * helper wants. */
static __u64 zero_counts[CGTMA_CGROUP_VALUE_SIZE(CGTMA_MAX_EVENTS) / 8];
static struct cgtma_task zero_task;
/* -T: the error of the last insert into task_counts that failed, not for want of room. */
__s64 task_insert_error = 0;

static __always_inline struct cgtma_snapshot *this_cpu_snapshot(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&snapshots, &zero);
}

static __always_inline void stat_add(__u32 which, __u64 n)
{
	__u64 *v = bpf_map_lookup_elem(&stats, &which);

	if (v)
		*v += n;
}

static __always_inline void stat_inc(__u32 which)
{
	stat_add(which, 1);
}

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

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1024);
	__type(key, __u64);	/* a v2 cgroup's id */
	__type(value, __u64);	/* move_seq before the last move into it */
} moved_to SEC(".maps");

/* Before 5.19 (and its stable backports), one node served both of the mover's lists. */
struct css_set___old {
	struct list_head mg_preload_node;
} __attribute__((preserve_access_index));

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

/* Sched policies of the fair class, whose prev_sum_exec_runtime is set when they come on. */
#define SCHED_NORMAL 0
#define SCHED_BATCH 3
#define SCHED_IDLE 5

/*
 * How long task t (the current one) has run since it last came on this CPU: its own part of
 * the slice that ends now, at least. The kernel's sched_info clock says when it came on, its
 * run queue's clock is now (as of this switch; a tick behind at most elsewhere, which only
 * makes it less). Without sched_info (CONFIG_SCHED_INFO), a task of the fair class has run
 * its run time since it was last picked, which a pick of the same task again can reset.
 */
static __always_inline __u64 own_run(struct task_struct *t)
{
	struct rq *rq = BPF_CORE_READ(t, se.cfs_rq, rq);
	__u64 now, came;
	int policy;

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
	if (n <= CGTMA_MISSES_MAX)
		l->nr = n + 1;
	l->slices += count;
	if (kind == CGTMA_MISS_SKIPPED || kind == CGTMA_MISS_READ) {
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
	/* The first task, if its address still holds it (a task that exited may be gone). */
	first = (void *)snap->start_task;
	if (first && BPF_CORE_READ(first, pid) == snap->start_pid) {
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
static __always_inline void unseen_switch(const struct cgtma_snapshot *snap, __u32 half,
					  struct task_struct *task, struct cgroup *cur)
{
	bool moved = pe_hook && !snap->tp_took_over && moved_in_slice(snap, task, cur);

	stat_inc(CGTMA_STAT_UNSEEN);
	note_miss(half, BPF_CORE_READ(cur, kn, id),
		  moved ? CGTMA_MISS_MOVED : CGTMA_MISS_SWITCH, 1);
	if (pe_hook && !snap->tp_took_over && !moved)
		hook_missed(1);
}

/*
 * cgroup_mutex, held by every task that moves tasks between cgroups from before the move
 * until after the cgroup_attach_task tracepoint. Weak: kernels without CONFIG_KALLSYMS_ALL
 * do not name data symbols, and it is then 0.
 */
extern const void cgroup_mutex __ksym __weak;

/* PREEMPT_RT kernels build struct mutex on an rt_mutex: from 5.15 on its base... */
struct mutex___rt {
	struct rt_mutex_base rtmutex;
} __attribute__((preserve_access_index));

/* ... and in the RT patches of older kernels (Debian's 5.10-rt) on a whole rt_mutex. */
struct rt_mutex___old {
	struct task_struct *owner;
} __attribute__((preserve_access_index));

struct mutex___rt_old {
	struct rt_mutex___old lock;
} __attribute__((preserve_access_index));

/*
 * Whether task holds cgroup_mutex. A task switched away or flushed while it holds it and its
 * cgroup differs from the slice's owner is inside a self-move: past the change of its
 * css_set, not yet at the tracepoint, which fires only after the migration has dropped
 * css_set_lock, run the controllers' attach callbacks and dropped the lock once more. On
 * kernels with full preemption (preempt=full, PREEMPT_RT) a switch at one of those unlocks
 * is common, and the flush's IPI can land there on any kernel. The owner, the cgroup the
 * task has just left, takes the slice then: it ran there but for microseconds. (A task
 * that holds the mutex for another reason, switched away after a switch the hook did not
 * see, gives its slice to that stale owner: both are rare.)
 */
static __always_inline bool holds_cgroup_mutex(struct task_struct *task)
{
	unsigned long owner = 0, off;

	if (!&cgroup_mutex)
		return false;
	if (bpf_core_field_exists(struct mutex, owner))
		off = bpf_core_field_offset(struct mutex, owner);
	else if (bpf_core_field_exists(struct mutex___rt, rtmutex))
		off = bpf_core_field_offset(struct mutex___rt, rtmutex.owner);
	else if (bpf_core_field_exists(struct mutex___rt_old, lock))
		off = bpf_core_field_offset(struct mutex___rt_old, lock.owner);
	else
		return false;
	bpf_probe_read_kernel(&owner, sizeof(owner), (const char *)&cgroup_mutex + off);
	/* The low bits are flags (waiters, handoff) on both kinds of mutex. */
	return (owner & ~7UL) == (unsigned long)task;
}

/* Whether owner (a struct cgroup pointer in the snapshot) is still the cgroup of owner_id. */
static __always_inline bool owner_alive(__u64 owner, __u64 owner_id)
{
	return owner && BPF_CORE_READ((struct cgroup *)owner, kn, id) == owner_id;
}

/* struct cgroup embeds its css first, but let CO-RE say where. */
static __always_inline struct cgroup *cgroup_parent(struct cgroup *cg)
{
	struct cgroup_subsys_state *css = BPF_CORE_READ(cg, self.parent);

	return css ? (void *)css - bpf_core_field_offset(struct cgroup, self) : NULL;
}

static __always_inline void add_count(struct cgtma_count *dst, const struct cgtma_count *d)
{
	dst->counter += d->counter;
	dst->enabled += d->enabled;
	dst->running += d->running;
}

static __always_inline void add_counts(struct cgtma_count *dst, const struct cgtma_counts *d)
{
	for (__u32 i = 0; i < CGTMA_MAX_EVENTS; i++) {
		if (i >= nr_events)
			break;
		add_count(&dst[i], &d->ev[i]);
	}
}

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

/* Zeroes nr_events counts. */
static __always_inline void clear_counts(struct cgtma_count *c)
{
	for (__u32 i = 0; i < CGTMA_MAX_EVENTS; i++) {
		if (i >= nr_events)
			break;
		c[i].counter = c[i].enabled = c[i].running = 0;
	}
}

/*
 * The counts of epoch half in a cgroup's value (both epochs, nr_events each). A mask, not a
 * product: 5.10's verifier loses the bounds of (half & 1) * nr_events ("unbounded memory
 * access"), and keeps those of an AND with a constant.
 */
static __always_inline struct cgtma_count *half_of(struct cgtma_counts *counts, __u32 half)
{
	__u32 off = nr_events & -(half & 1);

	return &counts->ev[off];
}

static __always_inline struct cgroup *task_cgroup(struct task_struct *task)
{
	return BPF_CORE_READ(task, cgroups, dfl_cgrp);
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
__noinline int charge_cache_write_back(__u32 slot, __u32 half)
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
__noinline int charge_id(__u64 id, __u32 half)
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
			/* Another cgroup's counts hold the entry: this one is charged in the map. */
			counts = bpf_map_lookup_elem(&cgroup_counts, &id);
			if (!counts)
				return 0;
			add_counts_to_cgroup(half_of(counts, half), delta);
			list_charged(counts, id, half);
			stat_inc(CGTMA_STAT_CACHE_PASSED);
			return 1;
		}
		charge_cache_write_back(id & (CGTMA_CHARGE_CACHE - 1), half);
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
 * A cgroup's level, id and parent, through either kind of pointer: a BTF one (a tp_btf
 * argument's cgroup; btf set, a constant at every call) by plain loads, with parents through
 * css->cgroup so that each keeps its BTF type; any other through bpf_probe_read_kernel().
 */
static __always_inline int cgroup_level(struct cgroup *cg, bool btf)
{
	return btf ? cg->level : BPF_CORE_READ(cg, level);
}

static __always_inline __u64 cgroup_id(struct cgroup *cg, bool btf)
{
	return btf ? cg->kn->id : BPF_CORE_READ(cg, kn, id);
}

static __always_inline struct cgroup *cgroup_up(struct cgroup *cg, bool btf)
{
	struct cgroup_subsys_state *parent;

	if (!btf)
		return cgroup_parent(cg);
	parent = cg->self.parent;
	return parent ? parent->cgroup : NULL;
}

/*
 * Adds the slice's deltas (read_slice()'s) to epoch half of cg and of each of its tracked
 * ancestors (cg a BTF pointer where btf). Returns the id of the deepest one (0: none), which
 * holds the thread's row with -T.
 */
static __always_inline __u64 charge_cgroup(struct cgroup *cg, __u32 half, bool btf)
{
	int level = cgroup_level(cg, btf);
	__u64 deepest = 0;

	/*
	 * Walk up, looking up only levels that can hold tracked cgroups, and stop when none is
	 * left above. Parent pointers exist on every kernel (ancestor arrays changed type in
	 * 6.2).
	 */
	for (int step = 0; step < CGTMA_WALK_MAX && cg; step++) {
		if (level < 0 || !(tracked_levels & ((2ULL << (level & 63)) - 1)))
			break;
		if (level <= (int)max_level && (tracked_levels & (1ULL << level))) {
			__u64 id = cgroup_id(cg, btf);

			if (charge_id(id, half) && !deepest)
				deepest = id;
		}
		/* None above: the parent is not loaded. */
		if (!(tracked_levels & ((1ULL << (level & 63)) - 1)))
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
static __always_inline void charge_task(__u64 id, const struct cgtma_counts *delta, __u32 half)
{
	struct cgtma_task_key key = { .cgroup = id };
	struct cgtma_task *t;
	__u64 pid_tgid;

	/* Before the helper call, which the verifier's pruning would otherwise leave in. */
	if (!per_task || !id)
		return;
	pid_tgid = bpf_get_current_pid_tgid();
	key.tid = (__u32)pid_tgid;
	if (!key.tid)
		return;
	t = bpf_map_lookup_elem(&task_counts, &key);
	if (!t) {
		/* int: 5.10 calls the map's update directly, whose int return is not sign-extended. */
		int err = bpf_map_update_elem(&task_counts, &key, &zero_task, BPF_NOEXIST);

		t = err && err != -EEXIST ? NULL : bpf_map_lookup_elem(&task_counts, &key);
		/*
		 * Full is -E2BIG only. The kernel fails an insert for other reasons too, with
		 * room to spare: no memory at hand in this context (-ENOMEM: maps allocated as
		 * entries come take it from a per-CPU cache refilled later), the bucket's lock
		 * held on this CPU or its deadlock check (-EBUSY, -EDEADLK, -ETIMEDOUT), and a
		 * row that user space deleted between the insert and the lookup: each its own
		 * count, with the last error, so that a full map is said only where it is one.
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
	}
	bpf_get_current_comm(t->comm, sizeof(t->comm));
	add_counts(half_of((struct cgtma_counts *)t->ev, half), delta);
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

/*
 * Reads event i of this CPU (cpu) into the snapshot, and its delta since the last reading
 * into *d. False where there is no delta: a failed read leaves the snapshot, and the next
 * delta covers the gap (an empty slot is a CPU whose events user space has not opened yet,
 * as it came online: no error); an event's first reading only starts its slice, and its
 * total. No CPU total here: it is the sum of the deltas, which the flush takes from the
 * readings (close_cpu_total()).
 */
static __always_inline bool read_event(struct cgtma_snapshot *snap, __u32 cpu, __u32 i,
				       struct cgtma_count *d, __u32 half)
{
	struct cgtma_count *s = &snap->ev[i];
	__u64 bit = 1ULL << (i % 64);
	struct bpf_perf_event_value v;
	__u32 j = times_of[i & (CGTMA_MAX_EVENTS - 1)];
	bool have = true;
	long err = 0;

	if (j == i || j >= CGTMA_MAX_EVENTS) {
		err = bpf_perf_event_read_value(&events, cpu * nr_events + i, &v, sizeof(v));
	} else {
		/* A counter, or a negative errno (counters stay far below 2^63). */
		__u64 c = bpf_perf_event_read(&events, cpu * nr_events + i);

		if ((__s64)c < 0 && (__s64)c >= -4095) {
			err = (__s64)c;
		} else {
			v.counter = c;
			v.enabled = snap->ev[j].enabled;
			v.running = snap->ev[j].running;
		}
	}
	if (err) {
		/* The slice's counts of the event go to the next one: marked. */
		if (err != -ENOENT) {
			stat_inc(CGTMA_STAT_READ_ERRORS);
			note_miss(half, 0, CGTMA_MISS_READ, 1);
		}
		return false;
	}
	if (snap->valid[i / 64] & bit) {
		d->counter = v.counter - s->counter;
		d->enabled = v.enabled - s->enabled;
		d->running = v.running - s->running;
	} else {
		struct cgtma_count *b = &snap_base(snap)[i];

		b->counter = v.counter;
		b->enabled = v.enabled;
		b->running = v.running;
		snap->valid[i / 64] |= bit;
		have = false;
	}
	s->counter = v.counter;
	s->enabled = v.enabled;
	s->running = v.running;
	return have;
}

/*
 * Reads the events: returns the deltas of the slice that ends now, to charge in the CPU's
 * epoch (*half), with the snapshot marked busy until slice_done(); NULL if busy or the maps
 * are missing. It reads no clock: only the callers whose reading's time is used take it (the
 * flush, which ends the epoch, for read_times; an interrupt's exit, for coalescing), not the
 * switch on every change of cgroup.
 */
static __always_inline struct cgtma_counts *read_slice(struct cgtma_snapshot *snap,
							__u32 *half)
{
	__u32 zero = 0, cpu = bpf_get_smp_processor_id();
	struct cgtma_counts *delta;

	if (!begin_update(snap, half))
		return NULL;
	delta = bpf_map_lookup_elem(&deltas, &zero);
	if (!delta) {
		barrier();
		WRITE_ONCE(snap->busy, 0);
		return NULL;
	}
	for (__u32 i = 0; i < CGTMA_MAX_EVENTS; i++) {
		struct cgtma_count *d = &delta->ev[i];

		if (i >= nr_events)
			break;
		if (!read_event(snap, cpu, i, d, *half))
			d->counter = d->enabled = d->running = 0;
	}
	snap->irq_coalesce = 0;
	return delta;
}

/*
 * The slice that a switch ends, when it is the common one: prev's cgroup owns it, that
 * cgroup is at the one level that can hold tracked cgroups, and its charge cache entry is
 * warm (this cgroup, this generation, tracked). Then that entry is the only place the deltas
 * go (charge_cgroup() would charge it and stop), and read_slice_to_entry() adds them there
 * as it reads: no deltas to store and load again, no walk, no call. Returns the entry, or
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
		if (read_event(snap, cpu, i, &d, half))
			add_count(&e->acc[i], &d);
	}
	e->dirty = 1;
	snap->irq_coalesce = 0;
	return true;
}

/*
 * Adds to the CPU's total in epoch half the sum of the deltas read since the epoch began:
 * the difference of its readings, which a failed read leaves for the next epoch as it
 * leaves its delta for the next slice. Inside an update (busy): the snapshot holds still.
 */
static __always_inline void close_cpu_total(struct cgtma_snapshot *snap, __u32 half)
{
	__u32 key = bpf_get_smp_processor_id() * 2 + (half & 1);
	struct cgtma_counts *total = bpf_map_lookup_elem(&cpu_counts, &key);
	struct cgtma_count *base = snap_base(snap);

	if (!total)
		return;
	for (__u32 i = 0; i < CGTMA_MAX_EVENTS; i++) {
		struct cgtma_count *t = &total->ev[i], *s = &snap->ev[i], *b = &base[i];

		if (i >= nr_events)
			break;
		if (!(snap->valid[i / 64] & (1ULL << (i % 64))))
			continue;
		t->counter += s->counter - b->counter;
		t->enabled += s->enabled - b->enabled;
		t->running += s->running - b->running;
		*b = *s;
	}
}

static __always_inline void slice_done(struct cgtma_snapshot *snap)
{
	barrier();
	WRITE_ONCE(snap->busy, 0);
}

/*
 * The CPU's next slice is cg's (id: its id, read by the caller where it is at hand), begun
 * by task (a BTF pointer where btf, a constant at every call: plain loads at a switch). Its
 * run time (up to date at a switch to it, a tick at most behind otherwise) bounds what a
 * mark says of it (note_miss()); with the perf-event hook, when it came on the CPU tells a
 * move's slice that other tasks ran in (moved_beside()).
 */
static __always_inline void own_slice(struct cgtma_snapshot *snap, struct cgroup *cg, __u64 id,
				      struct task_struct *task, bool btf)
{
	snap->owner = (__u64)cg;
	snap->owner_id = id;
	snap->start_task = (__u64)task;
	if (btf) {
		snap->start_pid = task->pid;
		snap->start_runtime = task->se.sum_exec_runtime;
	} else {
		snap->start_pid = BPF_CORE_READ(task, pid);
		snap->start_runtime = BPF_CORE_READ(task, se.sum_exec_runtime);
	}
	if (!pe_hook)
		return;
	snap->move_seq = READ_ONCE(move_seq);
	if (!bpf_core_field_exists(struct task_struct, sched_info))
		snap->start_arrival = 0;
	else if (btf)
		snap->start_arrival = task->sched_info.last_arrival;
	else
		snap->start_arrival = BPF_CORE_READ(task, sched_info.last_arrival);
}

/* The next slice is cg's, begun by the running task. */
static __always_inline void set_owner(struct cgtma_snapshot *snap, struct cgroup *cg,
				      struct task_struct *task)
{
	own_slice(snap, cg, cg ? BPF_CORE_READ(cg, kn, id) : 0, task, false);
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

/* --- interrupts as their own scopes (--irq) --------------------------------------------- */

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
static __always_inline void charge_irq(__u32 irq, const struct cgtma_counts *delta, __u32 half)
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
static __always_inline bool charge_irq_owner(const struct cgtma_snapshot *snap,
					     const struct cgtma_counts *delta, __u32 half)
{
	int irq;

	if (!irq_mask)
		return false;
	irq = irq_owner(snap);
	if (irq < 0)
		return false;
	charge_irq(irq, delta, half);
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
 * slice's last part. Every slice end on the CPU passes here or through charge_task_part(), so
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

/* How a slice ends, for the rule (charge_task_slice()). */
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
static __always_inline void charge_task_slice(struct cgtma_snapshot *snap,
					      struct cgtma_counts *delta, __u32 half,
					      struct task_struct *task, struct cgroup *cur,
					      enum slice_end end)
{
	bool other = snap->owner && snap->owner != (__u64)cur;

	add_task_part(snap, delta);
	if (end == END_MOVE || (other && holds_cgroup_mutex(task))) {
		if (end == END_MOVE && moved_beside(snap, task, cur)) {
			stat_inc(CGTMA_STAT_UNSEEN);
			note_miss(half, snap->owner_id, CGTMA_MISS_MOVE, 1);
		}
		if (owner_alive(snap->owner, snap->owner_id))
			charge_task(charge_cgroup((struct cgroup *)snap->owner, half, false),
				    delta, half);
		if (end == END_MOVE)
			set_owner(snap, cur, task);
		return;
	}
	if (other)
		unseen_switch(snap, half, task, cur);
	if (end != END_SWITCH)
		set_owner(snap, cur, task);
	charge_task(charge_cgroup(cur, half, end == END_SWITCH), delta, half);
}

/* The running task's slice ends where no BTF pointer to it is at hand. */
static __always_inline void charge_running(struct cgtma_snapshot *snap,
					   struct cgtma_counts *delta, __u32 half)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct cgroup *cur = task_cgroup(task);

	if (cur)
		charge_task_slice(snap, delta, half, task, cur, END_RUNNING);
}

/*
 * An interrupt owned the slice that ended (a flush inside it, or on PREEMPT_RT a switch away
 * from a task preempted in a softirq): the interrupted task's parts are charged now, in
 * delta's place (its counts are charged already), so that they stay in their epoch.
 */
static __always_inline void charge_task_part(struct cgtma_snapshot *snap,
					     struct cgtma_counts *delta, __u32 half)
{
	if (!irq_mask || !snap->task_part_set)
		return;
	clear_counts(delta->ev);
	charge_running(snap, delta, half);
}

/*
 * Charges the slice that ends now (read_slice()'s deltas): to the interrupt that owns it, and
 * the interrupted task's parts to its cgroup; else by the rule (charge_task_slice()). Every
 * end of a slice but an interrupt's comes here.
 */
static __always_inline void charge_slice(struct cgtma_snapshot *snap, struct cgtma_counts *delta,
					 __u32 half, struct task_struct *task,
					 struct cgroup *cur, enum slice_end end)
{
	if (charge_irq_owner(snap, delta, half))
		charge_task_part(snap, delta, half);
	else
		charge_task_slice(snap, delta, half, task, cur, end);
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
 * to whatever owns it then: all of it is still counted once. Right after another
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
	delta = read_slice(snap, &half);
	if (!delta) {
		snap->irq_stack[irq_slot(depth)] = irq | CGTMA_IRQ_SKIPPED;
		snap->irq_depth = depth + 1;
		stat_inc(CGTMA_STAT_IRQ_SKIPPED);
		return;
	}
	if (!charge_irq_owner(snap, delta, half))
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
	charge_irq(irq, delta, half);
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

IRQ_HOOKS(tp_btf, on)
IRQ_HOOKS(raw_tp, raw)

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
	if (e ? !read_slice_to_entry(snap, e) : !charge_switch_slice(snap, prev, prev_cg))
		return;
	own_slice(snap, next_cg, next_cg->kn->id, next, true);
	/* Only the tracepoint in charge takes the CPU over: its switches inside a cgroup
	 * (-T), which the event never sees, leave it the event's. */
	if (pe_falls_back && by == BY_TP)
		snap->tp_took_over = 1;
	slice_done(snap);
	stat_inc(CGTMA_STAT_SLICES);
}

/*
 * A switch inside cgroup cg while this CPU's slice is another cgroup's: a task of cg inside
 * its move from that cgroup (its css_set moved, the move's tracepoint still to come, so the
 * slice stays the old cgroup's: charge_task_slice()) gives the CPU to another task of cg, or
 * gets it back from one. The slice ends here: else the other task's run, a whole burst of a
 * workload while the mover slept in the move's attach callbacks, went to the old cgroup with
 * the move's slice at its tracepoint, and nothing said so (seen on 5.10 under load).
 */
static __always_inline bool slice_owned_elsewhere(struct cgroup *cg)
{
	struct cgtma_snapshot *snap = this_cpu_snapshot();

	return snap && snap->owner && snap->owner != (__u64)cg;
}

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
	if (test_drop_every && ++snap->test_seq % test_drop_every == 0) {
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
 * The perf-event hook's check of itself, at each flush on its CPU: the kernel counts the
 * cgroup-switches event at every switch between cgroups, but may not run its program there
 * (a perf event's program is skipped while the CPU's bpf_prog_active is held, as by a task
 * preempted in a BPF map operation; a 6.18 build in a VM dropped the samples of switches out
 * of idle on one CPU). A slice whose start the program missed is found where it ends, when
 * the cgroup there is not the one it began in; one that ends in that cgroup again (two
 * switches missed, there and back) is not. So the count is compared with the program's runs
 * since the last flush: runs missing are marked in the closing half and are a miss of the
 * hook (hook_missed()). Until the event has been read once there is nothing to compare,
 * and once the fallback's tracepoint took the CPU over its runs matter no more.
 */
static __always_inline void check_hook(struct cgtma_snapshot *snap, __u32 half)
{
	struct bpf_perf_event_value v;
	__u64 counted, ran;

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
	if (snap->hook_base_valid && counted > ran) {
		stat_add(CGTMA_STAT_UNSEEN, counted - ran);
		stat_add(CGTMA_STAT_HOOK_SKIPPED, counted - ran);
		note_miss(half, 0, CGTMA_MISS_SKIPPED, counted - ran);
		hook_missed(counted - ran);
	}
	snap->hook_count_base = v.counter;
	snap->hook_runs_base = snap->hook_runs;
	snap->hook_base_valid = 1;
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
	check_hook(snap, half);
	close_cpu_total(snap, half);
	for (__u32 slot = 0; slot < CGTMA_CHARGE_CACHE; slot++)
		charge_cache_write_back(slot, half);
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

/* Only the v2 hierarchy: in hybrid mode v1 hierarchies fire the cgroup tracepoints too. */
static __always_inline bool on_v2(struct cgroup *cgrp)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();

	return BPF_CORE_READ(cgrp, root) == BPF_CORE_READ(task, cgroups, dfl_cgrp, root);
}

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
