/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The switch hook: where slices end at a switch between cgroups. Whether the perf-event hook
 * (a BPF program on a per-CPU cgroup-switches event) sees every switch between v2 cgroups on
 * this kernel and machine (the kernel's configuration, the perf_event controller's
 * hierarchy, a probe of the event's samples on every CPU); which hook a run takes; and the
 * perf-event hook's check of itself, which hands the switches to the tracepoint at its first
 * miss (docs/how-it-works.md, "The switch hook").
 */
#ifndef CGTMA_SWITCHHOOK_H
#define CGTMA_SWITCHHOOK_H

#include <stdbool.h>

struct cgtma;
struct perfev;

/* Where slices end at a switch between cgroups. */
enum switch_hook {
	SWITCH_HOOK_AUTO,		/* perf-event where it is exact, else tracepoint */
	SWITCH_HOOK_TRACEPOINT,		/* tp_btf/sched_switch: runs at every switch */
	SWITCH_HOOK_PERF_EVENT,		/* cgroup-switches (5.13+): runs at cgroup switches */
};

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

/* The switch hook of a run: which one ends slices, and the perf-event hook's fallback. */
struct switch_hooks {
	struct cgtma *skel;		/* the collector's skeleton */
	struct perfev *pe;		/* its events; the cgroup-switches ones are opened here */
	enum switch_hook in_use;	/* SWITCH_HOOK_TRACEPOINT or SWITCH_HOOK_PERF_EVENT */
	bool falls_back;		/* perf-event, with the tracepoint loaded as its fallback */
	bool miss_said;			/* the perf-event hook's first miss was said */
	bool fallback_failed;		/* the tracepoint could not be attached: said once */
};

/*
 * Between the skeleton's open and load: takes the hook env.switch_hook asks for (auto: the
 * perf-event hook wherever the kernel has it and it can be exact, with the tracepoint as its
 * fallback; -T needs BPF at every switch), opens the cgroup-switches events where it is
 * taken, and writes the BPF side's settings and which programs load; -v says which, and why.
 * 0; or -EOPNOTSUPP (the perf-event hook asked for by name where it cannot run) or -errno,
 * said.
 */
int switch_hooks_choose(struct switch_hooks *sw, struct cgtma *skel, struct perfev *pe);

/* After the load: attaches the hook's programs: 0 or -errno, said. */
int switch_hooks_attach(struct switch_hooks *sw);

/*
 * After each flush: the perf-event hook's first miss. Under auto the tracepoint is attached
 * and takes over (said once), and the events close at a later flush, once the tracepoint
 * was attached before that flush began (tp_attached_before); asked for by name, the hook
 * stays, and the miss is said once.
 */
void switch_hooks_flushed(struct switch_hooks *sw, bool tp_attached_before);

#endif
