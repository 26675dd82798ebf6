/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the sampling program (sample.bpf.c) and user space (sampler.c) share. Only #defines
 * and __u32/__u64 structs: clang -target bpf and the host compiler both read it.
 */
#ifndef CGTMA_SAMPLE_H
#define CGTMA_SAMPLE_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* Sample events per run: one program each, since 5.10 has no attach cookie to tell them. */
#define SAMPLE_MAX_EVENTS 8

/* Distinct (cgroup, process, event, stacks) counted per half and interval, by default. */
#define SAMPLE_MAX_STACKS 16384

/* A thread's name, with its NUL: the kernel's TASK_COMM_LEN. */
#define SAMPLE_COMM_LEN 16

/* Frames a stack keeps: the kernel's own default limit (sysctl kernel.perf_event_max_stack). */
#define SAMPLE_MAX_DEPTH 127

/*
 * Kernel addresses that name_ksyms names at once (user space's ksyms.h batch), and the room
 * for each text as the kernel's `%ps` prints it: a symbol (KSYM_NAME_LEN, 512 bytes since
 * Linux 6.1) and " [module]".
 */
#define SAMPLE_KSYM_BATCH 32
#define SAMPLE_KSYM_LEN 576

/*
 * A stack id's bit saying the stack is in the half's spill map, not its stack map: a hash map
 * keyed by a hash of the program's own. It holds the user stacks on x86, which the program
 * walks itself where it can (a stack map takes only the kernel's walks), and the stacks a
 * stack map refused: it keeps one stack per hash bucket, and refuses a stack whose bucket is
 * taken (bpf_get_stackid's -EEXIST). (A second stack map, keyed by the same kernel hash, put
 * the third stack of a bucket in the bucket its second had taken there, and lost it.)
 */
#define SAMPLE_STACK_SPILL (1 << 30)

/* A spill map's value: the stack, zero after its last frame, and its whole hash. */
struct sample_stack {
	__u64 hash;			/* the key is its top 30 bits: the rest tells two
					 * stacks with one key apart */
	__u64 ips[SAMPLE_MAX_DEPTH];
};

/* Statistics (a per-CPU array): why samples of tracked cgroups were not counted whole. */
enum {
	SAMPLE_STAT_MAP_FULL,		/* the counts map of the half was full: a count lost
					 * (one per tracked cgroup the sample was in) */
	SAMPLE_STAT_USTACK_LOST,	/* a user stack fit neither the stack map nor the
					 * spill map (counted bare) */
	SAMPLE_STAT_KSTACK_LOST,	/* the same for a kernel stack */
	SAMPLE_STAT_MAX,
};

/*
 * A counts map's key: the samples of one event in one thread name of one process of one
 * tracked cgroup with one pair of stacks, counted in the kernel. A stack id < 0 means that
 * stack is not known (no user stack in a kernel thread, a stack that did not fit).
 */
struct sample_key {
	__u64 cgroup;			/* a tracked cgroup (v2 id): a sample is counted in
					 * each tracked cgroup its task is in, nested ones too */
	__u32 pid;			/* the process (tgid), for its address space */
	__u32 event;			/* index of the sample event */
	__s32 ustack;			/* id in the half's stack map */
	__s32 kstack;
	char comm[SAMPLE_COMM_LEN];	/* the sampled thread's name (comm), NUL-padded */
};

#endif
