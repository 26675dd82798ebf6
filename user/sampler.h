/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --sample: call stacks sampled per tracked cgroup (bpf/sample.bpf.c), counted in the kernel
 * per (cgroup, process, thread name, event, stacks), read at each interval into profiles
 * (profile.h) with their frames named (symbolize.h).
 *
 * One perf event per online CPU and sample event, each running the BPF program of its event,
 * following CPU hotplug as the collector does.
 * The tracked set is the collector's own map, shared: samples of untracked cgroups end in
 * the kernel.
 */
#ifndef CGTMA_SAMPLER_H
#define CGTMA_SAMPLER_H

#include <stdbool.h>
#include <stdint.h>
#include <linux/perf_event.h>
#include <linux/types.h>

#include "bpf/cgtma.h"
#include "bpf/sample.h"

struct profile;
struct sampler;

/* perf's default frequency for record, per CPU. */
#define SAMPLE_DEFAULT_HZ 99

/* The sample events of a run: what --sample and -F say. */
struct sample_events {
	int nr;
	char *names[SAMPLE_MAX_EVENTS];		/* as given, without /period=N/ */
	uint64_t periods[SAMPLE_MAX_EVENTS];	/* 0: sampled at hz */
	struct perf_event_attr attrs[SAMPLE_MAX_EVENTS];
	int hz;
};

/*
 * --sample's list ("cycles,instructions/period=100000/"; NULL: dflt, a comma-separated list)
 * at hz samples per second and CPU, checked against the kernel's perf_event_max_sample_rate:
 * 0; -EINVAL after saying what is wrong (an unknown event, a frequency too high, too many
 * events); -ENOMEM.
 */
int sample_events_parse(const char *list, const char *dflt, int hz, struct sample_events *ev);
void sample_events_release(struct sample_events *ev);

/*
 * Appends an event sampled at ev->hz, name as outputs show it, encoding as `cgtma -e` takes
 * it, precise perf's precise_ip: 0; -E2BIG when ev is full; -ENOENT or -EINVAL after saying
 * why it cannot be encoded; -ENOMEM. sample_events_pop() takes the last one off again.
 */
int sample_events_add(struct sample_events *ev, const char *name, const char *encoding,
		      int precise);
void sample_events_pop(struct sample_events *ev);

struct sampler_opts {
	const struct sample_events *events;
	/* The events the run may grow to (sampler__add_event()); at most SAMPLE_MAX_EVENTS. */
	int max_events;
	int tracked_fd;			/* collector__tracked_fd() */
	int levels_fd;			/* collector__levels_fd() */
	struct cgtma_layout layout;	/* collector__sample_layout() */
	const bool *cpus;		/* per possible CPU: sample it (NULL: all online) */
	bool lines;			/* frames' source files and lines (symbolizer_new()) */
};

/*
 * Opens the events on every CPU o->cpus selects, loads and attaches the program, and starts
 * reading new processes' maps as they come. Prints what failed, naming the event and CPU or
 * the step, and returns -errno.
 */
int sampler__open(const struct sampler_opts *o, struct sampler **sp);
void sampler__destroy(struct sampler *s);

/*
 * CPU hotplug, as the collector follows it (collector_setup.events.cpu_changed): a CPU that came
 * online gets its sample events (0, or -errno after saying what failed: sampler__read() then
 * tries it again each interval and says when it is sampled), one that went offline has them
 * closed (the kernel stops them: they would not sample again).
 */
int sampler__open_cpu(struct sampler *s, int cpu);
void sampler__close_cpu(struct sampler *s, int cpu);

/*
 * Starts sampling events->names[e], just appended to the events sampler__open() was given
 * (each takes one of max_events programs, a refused one too): 0, or -errno after saying what
 * failed, with nothing of it left open. Samples of it are read from the next sampler__read()
 * on.
 */
int sampler__add_event(struct sampler *s, int e);

/*
 * The profile scope (an index into p->scopes, made with profile_scope()) of tracked cgroup
 * id, or -1 to leave its samples out (it is no longer tracked); -ENOMEM.
 */
typedef int (*sampler_scope_cb)(__u64 id, struct profile *p, void *ctx);

/*
 * Ends the samples' interval (the kernel writes the other half from now), and adds the
 * closed half's samples, their frames named, to profile p (the interval's: the run's is the
 * sum of those, profile_merge(), which costs less than naming every frame twice), and to
 * p->lost what the kernel lost since the last read. 0 or -errno.
 */
int sampler__read(struct sampler *s, struct profile *p, sampler_scope_cb scope, void *ctx);

/* Samples of tracked cgroups not counted whole (SAMPLE_STAT_*), over the run. */
int sampler__stats(struct sampler *s, __u64 *out);

/*
 * The CPU time the symbolizer has taken so far, in ns: naming frames at the reads, and
 * reading new processes' maps in the thread that does it.
 */
__u64 sampler__naming_ns(struct sampler *s);

/* Kernel symbols known so far, and whether the kernel named them (symbolize.h's). */
int sampler__kernel_symbols(const struct sampler *s, bool *by_kernel);

#endif
