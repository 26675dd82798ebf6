/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Per-CPU perf events, opened for every task on one CPU: the counting events that the BPF
 * side reads from its events map, the cgroup-switches event that runs the perf-event switch
 * hook, the sampler's events, and CPU hotplug for the counting ones.
 *
 * Names: perfev_VERB() for what needs no object; OBJECT__VERB() (OBJECT__FIELD() to read
 * one) for the two that own descriptors, struct perfev_progs and struct perfev. What can
 * fail returns 0 (or a descriptor) or -errno.
 */
#ifndef CGTMA_PERFEV_H
#define CGTMA_PERFEV_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/perf_event.h>

struct bpf_link;
struct bpf_program;

/*
 * perf_event_open(2) of attr on cpu for every task, in group_fd's group (-1: none), closed on
 * exec: the descriptor, or -errno.
 */
int perfev_open_event(struct perf_event_attr *attr, int cpu, int group_fd);

/* CPUs x events descriptors: raises the soft RLIMIT_NOFILE to needed where it can. */
void perfev_raise_fd_limit(int needed);

/*
 * -C's list as a set of the possible CPUs (as many as perfev__nr_cpus() and the collector's
 * per-CPU arrays), *out allocated: 0; -EINVAL after saying what is wrong with it; -ENOMEM.
 */
int perfev_parse_cpus(const char *list, bool **out);

/*
 * The CPUs to count now: set[cpu] for each online one, of those selected (per possible CPU;
 * NULL: all). set has nr_cpus entries. 0 or -errno.
 */
int perfev_read_online_cpus(const bool *selected, bool *set, int nr_cpus);

/*
 * One event per CPU, each with a BPF program attached (the switch hook's cgroup-switches
 * event, a sampled event). Nothing here says what failed: the caller names the event.
 */
struct perfev_progs {
	int nr_cpus;
	int *fds;			/* per possible CPU, -1 where not opened */
	struct bpf_link **links;	/* the same: the program attached there, or NULL */
};

/* nr_cpus slots, none opened: 0 or -ENOMEM. */
int perfev_progs__init(struct perfev_progs *p, int nr_cpus);
/* Opens attr (its size set here) on cpu: 0 or -errno. */
int perfev_progs__open(struct perfev_progs *p, const struct perf_event_attr *attr, int cpu);
/* Attaches prog to cpu's event: 0 or -errno. */
int perfev_progs__attach(struct perfev_progs *p, struct bpf_program *prog, int cpu);
/* Detaches and closes cpu's event, if opened. */
void perfev_progs__close(struct perfev_progs *p, int cpu);
/* Every link first, then every event; p is empty after (released again: nothing). */
void perfev_progs__release(struct perfev_progs *p);

/*
 * The counting events: nr_events on every counted CPU, in groups, each in the BPF side's
 * events map at key cpu * nr_events + event; and with the perf-event switch hook, each
 * counted CPU's cgroup-switches event with the hook's program.
 */
struct perfev;

struct perfev_opts {
	int nr_events;				/* 1..CGTMA_MAX_EVENTS */
	const struct perf_event_attr *attrs;	/* per event */
	const int *group;			/* per event; a group's events are consecutive */
	const char *const *names;		/* per event, for messages */
	const bool *cpus;			/* per possible CPU, whether to count it
						 * (NULL: all); kept until perfev__destroy() */
	/* Told after a CPU's events are opened or closed by perfev__update_cpus(); may be NULL. */
	void (*cpu_changed)(int cpu, bool online, void *ctx);
	void *cpu_changed_ctx;
};

/*
 * Finds the possible CPUs and those counted now (online, and selected by o->cpus), opening
 * nothing yet: 0, or -errno after saying what failed (none of the selected CPUs online:
 * -ENODEV).
 */
int perfev__new(const struct perfev_opts *o, struct perfev **pp);
/* Closes everything still open. */
void perfev__destroy(struct perfev *pe);

int perfev__nr_cpus(const struct perfev *pe);
/* Per possible CPU: counted now (online, and selected). */
const bool *perfev__online(const struct perfev *pe);

/*
 * Opens every event on every counted CPU, each into map_fd (kept for hotplug): 0, or -errno
 * after saying which event on which CPU failed.
 */
int perfev__open_events(struct perfev *pe, int map_fd);

/*
 * Opens the cgroup-switches event (sample period 1) on every counted CPU: 0, or -errno with
 * why it cannot (no such event before Linux 5.13) in why.
 */
int perfev__open_switches(struct perfev *pe, char *why, size_t len);
/*
 * Attaches prog to each, and to those of CPUs that come online later, and puts each in map_fd
 * (a perf event array, by CPU), where the BPF side reads their counts: 0 or -errno, said.
 */
int perfev__attach_switches(struct perfev *pe, struct bpf_program *prog, int map_fd);
/* Detaches and closes the cgroup-switches events; CPUs that come online get none. */
void perfev__close_switches(struct perfev *pe);

/*
 * Follows CPU hotplug: a CPU that went offline since the last call has its events closed
 * (the kernel stops them: they would not count again if it came back) and is counted no
 * more; one that came online gets fresh events, after forget(cpu, ctx) has had the BPF side
 * drop the readings of the ones it had (0 or -errno). -v says when either happens, and
 * o->cpu_changed is told. A CPU that cannot be counted yet is tried again at the next call.
 */
typedef int (*perfev_forget_cb)(int cpu, void *ctx);
void perfev__update_cpus(struct perfev *pe, perfev_forget_cb forget, void *ctx);

#endif
