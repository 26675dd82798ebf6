// SPDX-License-Identifier: GPL-2.0
/*
 * cgtma's sampler: at each sample of a sample event (one perf event per CPU and event), finds
 * the running task's tracked cgroups (its deepest and their tracked ancestors), drops the
 * sample in the kernel when there is none, and counts it under (cgroup, process, thread name,
 * event, user stack, kernel stack) for each.
 *
 * Counting in the kernel, not a ring buffer record per sample: a sample costs two stack
 * inserts that mostly hit (a spinning function repeats its stacks) and a hash add, and user
 * space reads one entry per distinct stack per interval, not one per sample. The maps come in
 * two halves, as the counts' epochs: user space flips `half`, waits for the samples still
 * counting in the other one (flip_wait), reads it, which nothing writes then, and empties it
 * for its next turn.
 *
 * The tracked set is the counting program's own (cgroup_counts in charge.bpf.h, of which only
 * the presence of a key is read here), and so are the tracked levels (cgroup.bpf.h): user
 * space shares both maps with bpf_map__reuse_fd(). Where the kernel's fields are comes from
 * the counting object too (layout, below).
 *
 * A process's first sample puts its pid in the new_pids ring buffer, so that user space
 * reads its memory map while it lives (it may exit before the interval is read).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "cgtma.h"
#include "sample.h"
#define STATS_MAX SAMPLE_STAT_MAX
#include "kernel_defs.bpf.h"
#include "maps.bpf.h"
#include "cgroup.bpf.h"

char LICENSE[] SEC("license") = "GPL";

/*
 * Where the kernel's fields are (cgtma.h's struct cgtma_layout says why): set by user space
 * before the load. What this object reads of the kernel's structures it reads at these
 * offsets (kernel_read() below); it dereferences none of vmlinux.h's types, as each such
 * access would be a CO-RE relocation (tests/unit/test_bpfobj.c checks there is none).
 */
const volatile struct cgtma_layout layout = {};

/* The value of type at base + off in kernel memory, or 0 where it cannot be read. */
#define kernel_read(type, base, off) ({						\
	type __v = 0;								\
										\
	bpf_probe_read_kernel(&__v, sizeof(__v), (const void *)(base) + (off));	\
	__v;									\
})

/* The current task's cgroup v2 (task->cgroups->dfl_cgrp), or NULL. */
static __always_inline void *current_cgroup(void)
{
	void *cset = kernel_read(void *, bpf_get_current_task(), layout.task_cgroups);

	return cset ? kernel_read(void *, cset, layout.css_set_dfl_cgrp) : NULL;
}

/* A cgroup's parent (its css's parent, at the same offset in the parent), or NULL. */
static __always_inline void *parent_cgroup(const void *cg)
{
	void *css = kernel_read(void *, cg, layout.cgroup_parent);

	return css ? css - layout.cgroup_self : NULL;
}

/* The half being written; user space flips it before reading the other. */
__u32 half = 0;

/*
 * Read by no program. After flipping `half`, user space sets flip_wait's one slot (to
 * flip_inner, each time): the kernel waits for an RCU grace period at each update of a
 * map-in-map from user space (kernel/bpf/syscall.c, maybe_wait_bpf_programs()), and so for
 * every sample program running then, which may have read the old half. Without it, a sample
 * counted in its deepest cgroup before the read and in an ancestor after it left the
 * ancestor's count in the map, read a turn later with the stack ids of a refilled half.
 */
struct flip_inner {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} flip_inner SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1);
	__type(key, __u32);
	__array(values, struct flip_inner);
} flip_wait SEC(".maps");

/* The counting program's tracked cgroups; declared small, replaced by its map before load. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__uint(key_size, sizeof(__u64));
	__uint(value_size, sizeof(__u64));
} tracked SEC(".maps");

/*
 * Distinct stacks per half and interval, fixed here (user space does not size them): a stack
 * that finds no room keeps its samples, counted without frames.
 */
struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, SAMPLE_MAX_DEPTH * sizeof(__u64));
	__uint(max_entries, 4096);
} stacks0 SEC(".maps"), stacks1 SEC(".maps");

/*
 * The stacks kept under the program's own hash (sample.h's SAMPLE_STACK_SPILL): the user
 * stacks on x86 (walk_user()'s, or the kernel's where it cannot walk them), and the stacks
 * refused by the half's stack map.
 * Without the second, a process whose hot stack collides with any stack stored before it in
 * the interval (under an emulator, where a sample lands at the same few addresses, nearly
 * all of its samples) loses its user stack for the whole interval. As many as the stack map,
 * since on x86 it holds most user stacks. Preallocated, as a hash map in a perf-event
 * program must be; spill_buf is where a stack is put together before it is stored.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct sample_stack);
} spill0 SEC(".maps"), spill1 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sample_stack);
} spill_buf SEC(".maps");

/* Sized by user space with --sample-max; a sample that finds no room is lost (a stat). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SAMPLE_MAX_STACKS);
	__type(key, struct sample_key);
	__type(value, __u64);
} counts0 SEC(".maps"), counts1 SEC(".maps");

/*
 * Address spaces already announced, by process, mm and number of mappings: an exec keeps the
 * pid and changes the map (a test's cgexec, a shell's exec), and is announced again; so is a
 * map that has changed since, as when the dynamic loader maps the libraries after the exec's
 * first sample (a process that exits before its samples are read resolves from the maps read
 * at its last announcement). An LRU forgets the old ones, which are then announced again.
 */
struct seen_key {
	__u64 mm;
	__u32 pid;
	__u32 map_count;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 8192);
	__type(key, struct seen_key);
	__type(value, __u8);
} seen_pids SEC(".maps");

/*
 * The address space each CPU announced or found announced last: a process that keeps the CPU
 * (the usual case at 99 Hz) is told from it without a lookup in seen_pids, which is the
 * larger part of announce()'s cost where that map's memory has gone cold between samples.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct seen_key);
} last_seen SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 64 * 1024);
} new_pids SEC(".maps");

#if defined(__TARGET_ARCH_x86)
/*
 * A user stack is walked here on x86 (walk_user()), elsewhere by the kernel as it is (arm64's
 * walk ends at a zero frame pointer).
 */
#define WALKS_USER_STACKS 1

/*
 * The registers as words, in x86-64's struct pt_regs: the UAPI's, which a perf-event
 * program's context holds, and the kernel's, the same. (vmlinux.h's pt_regs would be
 * relocated to the running kernel's, where cs is a u16 since FRED and a word before, while a
 * context is read a word at a time.)
 */
enum { REG_BP = 4, REG_IP = 16, REG_CS = 17, REG_SP = 19, NR_REGS };

#define USER_CS 0x33		/* __USER_CS: a 64-bit task in user mode */

/* Where a user stack starts: its leaf's address, and its stack and frame pointers. */
struct user_regs {
	__u64 ip, sp, bp;
};

/*
 * The sampled task's user registers into *r: the context's where the sample interrupted
 * user mode; else, in the kernel, those its entry saved (bpf_task_pt_regs(), Linux 5.15+),
 * as the kernel's walk takes them. False for a kernel thread, a 32-bit task, or a sample in
 * the kernel before 5.15: the kernel walks those.
 */
static __always_inline bool sampled_user_regs(struct bpf_perf_event_data *ctx,
					      struct user_regs *r)
{
	/*
	 * Volatile: else the compiler merges these loads with those from w below into loads
	 * through a pointer to either, and the verifier refuses a context read through a
	 * pointer moved from it.
	 */
	volatile __u64 *ctx_regs = (volatile __u64 *)ctx;
	__u64 w[NR_REGS];

	if ((ctx_regs[REG_CS] & 0xffff) == USER_CS) {
		r->ip = ctx_regs[REG_IP];
		r->sp = ctx_regs[REG_SP];
		r->bp = ctx_regs[REG_BP];
		return true;
	}
	if (!layout.task_pt_regs ||
	    bpf_probe_read_kernel(w, sizeof(w), (void *)bpf_task_pt_regs(
					  bpf_get_current_task_btf())) ||
	    (w[REG_CS] & 0xffff) != USER_CS)
		return false;
	r->ip = w[REG_IP];
	r->sp = w[REG_SP];
	r->bp = w[REG_BP];
	return true;
}

/*
 * The sampled task's user stack into spill_buf, by frame pointers, as the kernel's
 * perf_callchain_user() walks it: its size in bytes, as bpf_get_stack() returns it, or -1
 * where the kernel must walk it (sampled_user_regs()). The kernel reads whatever frame its
 * last frame pointer names: 0 at the outermost frame (_start and clone zero the register),
 * garbage where code built without frame pointers used it. That read faults, at every
 * sample, and a fault taken in a guest is slow: two thirds of a sample's BPF time on the
 * 2-CPU VM (docs/performance.md). Here each frame must lie above the last (the stack grows
 * down: a caller's frame is above its callee's) and be 8-byte aligned, so the walk ends at
 * a zero or at garbage below without reading it. The frames after the last are not
 * cleared: the one after it is zeroed, where there is room.
 *
 * A global function: its size comes back unknown to the verifier, which otherwise verified
 * spill_stack()'s hash loop once for each frame the walk can end at (400,000 instructions).
 */
__noinline int walk_user(struct bpf_perf_event_data *ctx)
{
	struct {
		__u64 next, ret;
	} frame;
	struct sample_stack *st;
	struct user_regs r;
	__u32 zero = 0;
	__u64 fp, low;
	int i;

	st = bpf_map_lookup_elem(&spill_buf, &zero);
	if (!st || !sampled_user_regs(ctx, &r))
		return -1;
	st->ips[0] = r.ip;
	fp = r.bp;
	low = r.sp;
	for (i = 1; i < SAMPLE_MAX_DEPTH; i++) {
		if (fp < low || fp & 7 ||
		    bpf_probe_read_user(&frame, sizeof(frame), (void *)fp) || !frame.ret)
			break;
		st->ips[i] = frame.ret;
		low = fp + sizeof(frame);
		fp = frame.next;
	}
	if (i < SAMPLE_MAX_DEPTH)
		st->ips[i] = 0;
	return i * sizeof(__u64);
}
#else
#define WALKS_USER_STACKS 0

static __always_inline int walk_user(struct bpf_perf_event_data *ctx)
{
	return -1;
}
#endif

/* Whether the stack (flags: user or kernel) goes to walk_user() first. */
static __always_inline bool walked_here(__u64 flags)
{
	return WALKS_USER_STACKS && flags & BPF_F_USER_STACK;
}

/*
 * The current stack (flags: user or kernel) into half h's spill map: its id there with
 * SAMPLE_STACK_SPILL; -ENOSPC when the map is full or holds another stack under its key;
 * -EFAULT when there is no such stack (a kernel thread's user stack), as bpf_get_stackid()
 * would say, so that the kernel is not asked twice.
 *
 * A global function, verified once by itself: inlined at each of its four call sites (user
 * and kernel stack, either half), its loop over the frames made most of the verifier's work,
 * some 200,000 of 235,000 instructions and a tenth of a second of cgtma's start-up.
 */
__noinline int spill_stack(struct bpf_perf_event_data *ctx, __u32 h, __u64 flags)
{
	void *spill = h ? (void *)&spill1 : (void *)&spill0;
	struct sample_stack *st, *old;
	__u32 zero = 0, key;
	__u64 hash;
	long len;
	int i;

	st = bpf_map_lookup_elem(&spill_buf, &zero);
	if (!st)
		return -ENOSPC;
	len = walked_here(flags) ? walk_user(ctx) : -1;
	/* bpf_get_stack() zeroes the frames after the last: a stack needs no length of its own. */
	if (len < 0)
		len = bpf_get_stack(ctx, st->ips, sizeof(st->ips), flags);
	if (len <= 0)
		return -EFAULT;
	/*
	 * FNV-1a over the frames, a word at a time, then MurmurHash3's finalizer, so that the
	 * key's bits depend on every bit of every frame: 64 bits, unrelated to the stack map's
	 * jhash.
	 */
	hash = 0xcbf29ce484222325ULL;
	for (i = 0; i < SAMPLE_MAX_DEPTH; i++) {
		if (i * sizeof(__u64) >= len)
			break;
		hash = (hash ^ st->ips[i]) * 0x100000001b3ULL;
	}
	hash = (hash ^ hash >> 33) * 0xff51afd7ed558ccdULL;
	hash = (hash ^ hash >> 33) * 0xc4ceb9fe1a85ec53ULL;
	st->hash = hash ^ hash >> 33;
	key = st->hash >> 34;
	/* Looked up first: a hot stack is there already, and an update would copy it again. */
	old = bpf_map_lookup_elem(spill, &key);
	if (!old) {
		if (bpf_map_update_elem(spill, &key, st, BPF_NOEXIST) == 0)
			return key | SAMPLE_STACK_SPILL;
		/* Stored meanwhile by another CPU, or the map is full. */
		old = bpf_map_lookup_elem(spill, &key);
	}
	return old && old->hash == st->hash ? key | SAMPLE_STACK_SPILL : -ENOSPC;
}

/*
 * The id of the current stack (flags: user or kernel): a user stack on x86 goes to half h's
 * spill map (walked here where it can be), any other to its stack map; either goes to the
 * other when the first has no room for it. < 0 when there is none (a kernel thread's user
 * stack) or when neither map had room. (A stack map has a bucket per entry and an entry per
 * stack, so it refuses a stack for its bucket before it can be full.)
 */
static __always_inline __s32 stack_id(struct bpf_perf_event_data *ctx, void *stacks, __u32 h,
				      __u64 flags, __u32 lost)
{
	bool here = walked_here(flags);
	long id = here ? spill_stack(ctx, h, flags) : -ENOSPC;

	/* Stored, or no such stack: the kernel's walk would find none either. */
	if (id != -ENOSPC)
		return id;
	/* The kernel's walk, into the stack map. */
	id = bpf_get_stackid(ctx, stacks, flags);
	if (id != -EEXIST)
		return id;
	if (!here)
		id = spill_stack(ctx, h, flags);
	if (id < 0)
		stat_inc(lost);
	return id;
}

/* The sample's stacks, stored in half h's stack maps, into key. */
static __always_inline void store_stacks(struct bpf_perf_event_data *ctx, void *stacks,
					 __u32 h, struct sample_key *key)
{
	key->ustack = stack_id(ctx, stacks, h, BPF_F_USER_STACK, SAMPLE_STAT_USTACK_LOST);
	key->kstack = stack_id(ctx, stacks, h, 0, SAMPLE_STAT_KSTACK_LOST);
}

static __always_inline void count(void *counts, struct sample_key *key)
{
	__u64 zero = 0, *v;
	int err;

	v = map_lookup_or_insert(counts, key, &zero, &err);
	if (v)
		__sync_fetch_and_add(v, 1);
	else
		stat_inc(SAMPLE_STAT_MAP_FULL);
}

/* A process's address space is announced at its first sample (seen_pids says why). */
static __always_inline void announce(__u32 pid)
{
	void *mm = kernel_read(void *, bpf_get_current_task(), layout.task_mm);
	struct seen_key seen = { .pid = pid, .mm = (__u64)mm }, *last;
	__u32 zero = 0;
	__u8 yes = 1;

	seen.map_count = mm ? kernel_read(int, mm, layout.mm_map_count) : 0;
	if (!pid || !seen.mm)
		return;
	last = bpf_map_lookup_elem(&last_seen, &zero);
	if (last && last->pid == seen.pid && last->mm == seen.mm &&
	    last->map_count == seen.map_count)
		return;
	if (!bpf_map_lookup_elem(&seen_pids, &seen)) {
		bpf_map_update_elem(&seen_pids, &seen, &yes, BPF_ANY);
		/* A full ring (its reader starved): the next sample announces it again. */
		if (bpf_ringbuf_output(&new_pids, &pid, sizeof(pid), 0)) {
			bpf_map_delete_elem(&seen_pids, &seen);
			return;
		}
	}
	if (last)
		*last = seen;
}

/* Whether cg, at level, is tracked; its id into *id. */
static __always_inline bool is_tracked(const void *cg, int level, __u64 *id)
{
	void *kn;

	if (!tracked_level(level))
		return false;
	kn = kernel_read(void *, cg, layout.cgroup_kn);
	*id = kn ? kernel_read(__u64, kn, layout.kn_id) : 0;
	return bpf_map_lookup_elem(&tracked, id) != NULL;
}

/*
 * Counts the sample in every tracked cgroup the current task is in, its deepest and each
 * tracked ancestor, as the counting program charges a slice (charge.bpf.h). The first walk
 * finds the deepest, the stacks are stored once (stored inside a walk, the spill's hash loop
 * would be verified once per step), the deepest is counted, and the second walk counts its
 * tracked ancestors. Each walk looks up only levels that can hold tracked cgroups and stops
 * when none is left above.
 */
static __always_inline int on_sample(struct bpf_perf_event_data *ctx, __u32 event)
{
	void *cg = current_cgroup();
	int level = cg ? kernel_read(int, cg, layout.cgroup_level) : -1;
	struct sample_key key = { .event = event };
	__u32 h = *(volatile __u32 *)&half & 1;
	void *counts = h ? (void *)&counts1 : (void *)&counts0;
	int step;

	for (step = 0;; step++) {
		if (step >= CGTMA_WALK_MAX || !cg || !tracked_up_to(level))
			return 0;
		if (is_tracked(cg, level, &key.cgroup))
			break;
		cg = parent_cgroup(cg);
		level--;
	}
	key.pid = bpf_get_current_pid_tgid() >> 32;
	/* The whole buffer is written (NUL-padded): the key hashes every byte of it. */
	bpf_get_current_comm(key.comm, sizeof(key.comm));
	announce(key.pid);
	if (h)
		store_stacks(ctx, &stacks1, h, &key);
	else
		store_stacks(ctx, &stacks0, h, &key);
	count(counts, &key);
	while (++step < CGTMA_WALK_MAX && tracked_above(level)) {
		cg = parent_cgroup(cg);
		level--;
		if (!cg)
			break;
		if (is_tracked(cg, level, &key.cgroup))
			count(counts, &key);
	}
	return 0;
}

/* One program per sample event: the program attached to an event's fds says which it is. */
#define SAMPLE_PROG(n)						\
	SEC("perf_event")					\
	int sample##n(struct bpf_perf_event_data *ctx)		\
	{							\
		return on_sample(ctx, n);			\
	}

SAMPLE_PROG(0)
SAMPLE_PROG(1)
SAMPLE_PROG(2)
SAMPLE_PROG(3)
SAMPLE_PROG(4)
SAMPLE_PROG(5)
SAMPLE_PROG(6)
SAMPLE_PROG(7)

/* name_ksyms's batch: user space writes the addresses and their count, and reads the texts. */
__u64 ksym_addrs[SAMPLE_KSYM_BATCH];
__u32 ksym_nr;
__s32 ksym_lens[SAMPLE_KSYM_BATCH];
char ksym_texts[SAMPLE_KSYM_BATCH][SAMPLE_KSYM_LEN];

/*
 * Names kernel addresses for user space, run by it (bpf_prog_test_run), never attached:
 * kallsyms' own lookup of each address, as `%ps` prints it, so that user space need not read
 * /proc/kallsyms whole for the few addresses its samples hold. Each length is
 * bpf_snprintf()'s: the text's with its NUL (more than SAMPLE_KSYM_LEN: cut short), or an
 * error. Loaded where the kernel has bpf_snprintf() (Linux 5.13+).
 */
SEC("raw_tp")
int name_ksyms(void *ctx)
{
	static const char fmt[] = "%ps";

	for (__u32 i = 0; i < SAMPLE_KSYM_BATCH && i < ksym_nr; i++)
		ksym_lens[i] = bpf_snprintf(ksym_texts[i], sizeof(ksym_texts[i]), fmt,
					    &ksym_addrs[i], sizeof(ksym_addrs[i]));
	return 0;
}
