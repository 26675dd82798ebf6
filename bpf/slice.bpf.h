/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Reading a slice: each CPU's events into its snapshot and the deltas since the last reading,
 * the CPU's total at the flush, and the slice's next owner.
 */
#ifndef CGTMA_SLICE_BPF_H
#define CGTMA_SLICE_BPF_H

#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "cgtma.h"
#include "kernel_defs.bpf.h"
#include "maps.bpf.h"
#include "config.bpf.h"
#include "snapshot.bpf.h"
#include "moves.bpf.h"
#include "marks.bpf.h"

/* possible_cpus * nr_events entries: index cpu * nr_events + event. Sized by user space. */
struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
} events SEC(".maps");

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

/* Whether owner (a struct cgroup pointer in the snapshot) is still the cgroup of owner_id. */
static __always_inline bool owner_alive(__u64 owner, __u64 owner_id)
{
	return owner && BPF_CORE_READ((struct cgroup *)owner, kn, id) == owner_id;
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
				       struct cgtma_count *d)
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
		/* The slice's counts of the event go to the next one: marked, once a slice. */
		if (err != -ENOENT) {
			stat_inc(CGTMA_STAT_READ_ERRORS);
			snap->read_failed = 1;
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

/* Marks a slice some of whose readings failed (read_event()), once. */
static __always_inline void note_read_failed(struct cgtma_snapshot *snap, __u32 half)
{
	if (!snap->read_failed)
		return;
	snap->read_failed = 0;
	note_miss(half, 0, CGTMA_MISS_READ, 1);
}

/*
 * --irq: marks the interrupts that came during updates since the last reading (irq_enter()),
 * whose work this slice holds, charged to its owner. One that came during this reading
 * (irqs: their number when it began) is in this slice for the events read after it, and in
 * the next one for the others: the next reading marks it as well.
 */
static __always_inline void note_irqs_in_update(struct cgtma_snapshot *snap, __u32 half,
						__u64 irqs)
{
	__u64 now = READ_ONCE(snap->irqs_in_update);

	if (now != snap->irqs_in_update_marked)
		note_miss(half, 0, CGTMA_MISS_IRQ, (__u32)(now - snap->irqs_in_update_marked));
	snap->irqs_in_update_marked = irqs;
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
	__u64 irqs;

	if (!begin_update(snap, half))
		return NULL;
	irqs = irq_mask ? READ_ONCE(snap->irqs_in_update) : 0;
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
		if (!read_event(snap, cpu, i, d))
			d->counter = d->enabled = d->running = 0;
	}
	note_read_failed(snap, *half);
	if (irq_mask)
		note_irqs_in_update(snap, *half, irqs);
	snap->irq_coalesce = 0;
	return delta;
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

#endif
