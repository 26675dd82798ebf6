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
 * (a few milliseconds: a thread sleeps on every CPU, in up to 4 rounds); NULL when none went
 * missing. online: per possible CPU (nr_cpus of them), the CPUs to probe. *unchecked: the
 * first CPU where no switch away from idle happened in any round (kept busy throughout),
 * so the probe could not tell; -1 when there is none, or when samples went missing.
 */
const char *switch_samples_dropped(const bool *online, int nr_cpus, int *unchecked);

#endif
