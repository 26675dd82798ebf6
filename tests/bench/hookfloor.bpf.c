// SPDX-License-Identifier: GPL-2.0
/*
 * The floors under cgtma's hooks (make bench only; tests/bench/hookfloor.c loads them):
 * programs that do what cgtma's cannot avoid and nothing more. Two on sched_switch:
 *
 *   floor_empty  compares prev's and next's v2 cgroups, as on_switch does first, and returns
 *   floor_reads  the same, then at a switch between cgroups reads this CPU's nr_events events
 *                (bpf_perf_event_read_value() on the array cgtma's layout uses: index
 *                cpu * nr_events + event) and drops the values
 *
 * Their run time per switch (bpf_stats) against on_switch's says how much of the hook is its
 * own work: snapshots, deltas, totals, the cgroup's counts, the owner. And for --irq, which
 * must read the events where a softirq begins and where it ends, two that only read:
 *
 *   floor_softirq_entry, floor_softirq_exit  read this CPU's events, on softirq_entry and
 *                                            softirq_exit
 *
 * GPL: bpf_perf_event_read_value() is a GPL-only helper.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "cgtma.h"

char LICENSE[] SEC("license") = "GPL";

/* Set by the loader between open and load. */
const volatile __u32 nr_events = 0;

/* possible_cpus * nr_events entries, sized by the loader. */
struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
} events SEC(".maps");

SEC("tp_btf/sched_switch")
int BPF_PROG(floor_empty, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	struct cgroup *prev_cg = prev->cgroups->dfl_cgrp, *next_cg = next->cgroups->dfl_cgrp;

	/* An empty asm the compiler must keep, and only where the cgroups differ: the
	 * comparison (and its four loads) stays in the program. */
	if (next_cg != prev_cg)
		asm volatile("" ::: "memory");
	return 0;
}

static __always_inline void read_events(void)
{
	struct bpf_perf_event_value v;
	__u32 cpu = bpf_get_smp_processor_id();

	for (__u32 i = 0; i < CGTMA_MAX_EVENTS; i++) {
		if (i >= nr_events)
			break;
		bpf_perf_event_read_value(&events, cpu * nr_events + i, &v, sizeof(v));
	}
}

SEC("tp_btf/sched_switch")
int BPF_PROG(floor_reads, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	struct cgroup *prev_cg = prev->cgroups->dfl_cgrp, *next_cg = next->cgroups->dfl_cgrp;

	if (next_cg != prev_cg)
		read_events();
	return 0;
}

SEC("tp_btf/softirq_entry")
int BPF_PROG(floor_softirq_entry, unsigned int vec)
{
	read_events();
	return 0;
}

SEC("tp_btf/softirq_exit")
int BPF_PROG(floor_softirq_exit, unsigned int vec)
{
	read_events();
	return 0;
}
