/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The BPF side's owner: opens its skeleton, sizes its maps, configures, loads and attaches
 * it over the per-CPU events (perfev.h: per online CPU, never per cgroup), tracks cgroups and
 * flushes running slices; collector_read.h reads the accumulated counts.
 *
 * Counts come in two halves, epochs, that the CPUs write by turns: each flush closes the half
 * being written and opens the other, so the reads after it return counts that nothing is
 * adding to, one cut for every CPU and cgroup. The counts read back are cumulative within
 * their half since tracking began: callers take differences half by half
 * (collector__closed_epoch() says which half a read returned).
 */
#ifndef CGTMA_COLLECTOR_H
#define CGTMA_COLLECTOR_H

#include <stdbool.h>
#include <linux/perf_event.h>
#include <linux/types.h>

#include "bpf/cgtma.h"
#include "perfev.h"

struct collector;

/* What the run has settled by the time the collector opens: the events, CPUs and levels. */
struct collector_setup {
	/*
	 * The events and CPUs, as the per-CPU events take them (-C: cpus; kept until
	 * collector__destroy()). Their cpu_changed is told when a counted CPU comes online (its
	 * events opened) or goes offline (closed), from collector__flush(), so that others with
	 * per-CPU events follow the same CPUs (the sampler); NULL: nobody. Its errors are its
	 * own to say.
	 */
	struct perfev_opts events;
	__u32 max_level;			/* deepest level a tracked cgroup can have */
	__u64 tracked_levels;			/* bit L: level L can hold tracked cgroups */
	__u64 new_cgroup_levels;		/* bit L: new cgroups at L count from birth */
	bool noise;				/* count preemptions and SMT sharing between
						 * cgroups (collector__read_noise()) */
};

/*
 * Checks BTF (probe_privileges() has passed), opens every event on every online CPU (of
 * those su->events.cpus selects), loads and attaches, as the run's configuration says
 * (env.h: -A, -T, --irq, --max-cgroups, --max-tasks, the switch hook, the maps'
 * allocation). A CPU left out has no events: the tracepoint hooks read nothing there, and
 * the perf-event hook has no cgroup-switches event there to run on. Prints what failed,
 * naming the event and CPU or the step, and returns -errno.
 */
int collector__open(const struct collector_setup *su, struct collector **cp);
void collector__destroy(struct collector *c);

/* Possible CPUs: the per-CPU arrays below have this many entries of nr_events counts. */
int collector__nr_cpus(const struct collector *c);

/*
 * The map whose keys are the tracked cgroups (v2 ids), for another BPF object to share
 * (bpf_map__reuse_fd()): the sampler reads whether a key is there, nothing else.
 */
int collector__tracked_fd(const struct collector *c);

/*
 * The read-only map of the tracked levels (bpf/cgroup.bpf.h), frozen at the load, for another
 * BPF object to share as its own before its load (bpf_map__reuse_fd()).
 */
int collector__levels_fd(const struct collector *c);

/*
 * Where the kernel's fields are for the sampler (bpf/cgtma.h), as the counting object's
 * CO-RE relocations found them (with --sample only: the program that finds them is loaded
 * then): 0, or -errno said (-EOPNOTSUPP where a field is not of the size the sampler reads).
 */
int collector__sample_layout(const struct collector *c, struct cgtma_layout *l);

/* Rows of counts a cgroup's read gives: nr_cpus with per_cpu_cgroups, else 1 (the sum). */
int collector__cgroup_rows(const struct collector *c);
/* Whether cpu is counted: online, and selected by -C. */
bool collector__cpu_online(const struct collector *c, int cpu);

/*
 * Accounts the slice running on every online CPU up to now. First follows CPU hotplug: a CPU
 * that came online since the last call gets its events and is counted from now on; one that
 * went offline has its events closed and keeps its counts (collector__cpu_online() says
 * which are online). -v says when either happens.
 */
int collector__flush(struct collector *c);

/* Starts counting a cgroup (no-op if tracked); -E2BIG when the map is full. */
int collector__track(struct collector *c, __u64 id);
int collector__untrack(struct collector *c, __u64 id);

/*
 * Whether the v2 hierarchy may have changed (a cgroup made or removed) since the
 * count *seen, which it then updates; call it before walking the hierarchy, so that a change
 * during the walk is seen next time. Always true where the hooks are not attached (no
 * new_cgroup_levels).
 */
bool collector__cgroups_changed(struct collector *c, __u64 *seen);

/* Takes one cgroup the mkdir hook recorded; -ENOENT when there is none left. */
int collector__pop_new_cgroup(struct collector *c, struct cgtma_new_cgroup *out);

#endif
