/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The counting program's configuration (cgtma.bpf.c): read-only data that user space writes
 * between open and load, so that the verifier prunes what a run does not use, and the
 * globals of the perf-event hook's fallback that user space reads.
 */
#ifndef CGTMA_CONFIG_BPF_H
#define CGTMA_CONFIG_BPF_H

#include "cgtma.h"

/* The run's events (CGTMA_MAX_EVENTS at most), each read on every CPU. */
const volatile __u32 nr_events = 0;
/*
 * Per event, the event whose enabled and running times it shares (its own index: none):
 * the members of a perf group are scheduled with their leader, and software and tracepoint
 * events are never multiplexed, so each of those reads its counter alone
 * (bpf_perf_event_read()), a helper that takes no clock, and the times come from an event
 * read before it at the same moment. Set by user space.
 */
const volatile __u8 times_of[CGTMA_MAX_EVENTS] = {};
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
 * test_drop_every'th run on a CPU and the next at once, as if the kernel had not run them
 * (their runs not counted: a slice there and back, which no switch shows), or, with
 * test_drop_counted, every test_drop_every'th alone as if it had run but not seen the
 * switch. 0: never.
 */
const volatile __u32 test_drop_every = 0;
const volatile bool test_drop_counted = false;
/* --irq: bit i carves interrupt scope i out (cgtma.h); 0: interrupts stay with the task. */
const volatile __u32 irq_mask = 0;
/* An interrupt entry this soon after an interrupt's exit reads nothing: the gap is its own. */
const volatile __u64 irq_coalesce_ns = 0;
/*
 * Tests only (CGTMA_TEST_IRQ_IN_UPDATE): every test_irq_busy_every'th interrupt entry on a
 * CPU is taken as if it had come during an update of the CPU's slice. 0: never.
 */
const volatile __u32 test_irq_busy_every = 0;
/* Noise at switches between cgroups: preemptions, their antagonists, SMT sharing. */
const volatile bool noise_on = false;
/* -A with cgroups: cgroup_counts is a per-CPU hash (user space sets its type): charge.bpf.h. */
const volatile bool cgroup_per_cpu = false;

#endif
