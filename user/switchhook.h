/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Whether the perf-event switch hook (a BPF program on a per-CPU cgroup-switches event) sees
 * every switch between v2 cgroups on this kernel and machine: the kernel's configuration,
 * the perf_event controller's hierarchy, and a probe of the event's samples on every CPU.
 */
#ifndef CGTMA_SWITCHHOOK_H
#define CGTMA_SWITCHHOOK_H

#include <stdbool.h>

/*
 * Why the perf-event hook would miss switches or not find the next task by the kernel's
 * configuration; NULL when nothing there stands in its way. The cgroup-switches event
 * itself is the caller's to open first (that says when there is none).
 */
const char *switch_hook_unfit(void);

/*
 * Why the perf-event hook would miss switches on this machine by the probe of its samples
 * (a few milliseconds: a thread sleeps on every CPU); NULL when every sample arrived.
 * online: per possible CPU (nr_cpus of them), the CPUs to probe.
 */
const char *switch_samples_dropped(const bool *online, int nr_cpus);

#endif
