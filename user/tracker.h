/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The cgroups a run counts, found by id, each with its counts (counts.h); and, for the
 * run's summary, the cgroups that were counted and are gone. Memory follows the cgroups
 * tracked now: a removed cgroup keeps only its path and totals summed over CPUs, up to
 * TRACKER_REMOVED_KEPT of them; beyond that, removed cgroups are folded into one row that
 * says how many it holds. No kernel here: the session keeps the BPF maps in step.
 *
 *   struct tracker t;
 *
 *   tracker_init(&t, nr_events, per_cpu ? nr_cpus : 1);
 *   i = tracker_find(&t, id);            // or -1
 *   tracker_add(&t, id, path, false);    // 0 or -ENOMEM; index t.nr - 1
 *   tracker_retire(&t, i);               // reported for the last time: indexes may change
 *   tracker_release(&t);
 */
#ifndef CGTMA_TRACKER_H
#define CGTMA_TRACKER_H

#include <stdbool.h>
#include <stddef.h>

#include "bpf/cgtma.h"
#include "counts.h"
#include "hashmap.h"
#include "interval.h"
#include "noise.h"

/* Removed cgroups the summary names one by one; the rest it folds into one row. */
#define TRACKER_REMOVED_KEPT 1000

/* A cgroup being counted. */
struct tracked {
	__u64 id;
	char *path;
	struct cgroup_names names;	/* its container or pod, if it is one */
	bool present;			/* found by this interval's rescan */
	bool refused;			/* the maps were full: warned about once, not counted */
	bool ran;			/* some event counted or was enabled in this interval */
	bool named;			/* -G gave its path or its container's name, no glob:
					 * it has a row every interval */
	bool reported;			/* it has had an interval row */
	struct scope_counts counts;	/* per event, or per CPU and event */
	struct noise_reader noise;	/* its noise: the session reads it */
};

/* A cgroup that was counted and is gone: its totals over the run, summed over CPUs. */
struct removed {
	__u64 id;
	char *path;
	struct cgroup_names names;
	struct cgtma_count *total;	/* per event */
	struct noise noise;		/* over the run */
};

struct tracker {
	int nr_events;
	int stride;			/* per CPU (nr_cpus) or summed (1) */
	struct tracked *tracked;
	int nr, cap;
	struct hashmap ids;		/* id -> index into tracked */
	struct removed *removed;
	int nr_removed, cap_removed;
	struct cgtma_count *folded;	/* per event: the removed cgroups beyond the kept ones */
	long nr_folded;
};

int tracker_init(struct tracker *t, int nr_events, int stride);
void tracker_release(struct tracker *t);

/* The index of the cgroup with this id, or -1. */
int tracker_find(const struct tracker *t, __u64 id);

/* Starts keeping a cgroup (index t->nr - 1 on success): 0, or -ENOMEM with t unchanged. */
int tracker_add(struct tracker *t, __u64 id, const char *path, bool refused);

/*
 * A cgroup gone and reported for the last time: its per-interval state is freed and its
 * totals go to the removed ones (or the folded row). The last tracked cgroup takes index i.
 * Returns 0, or -ENOMEM when its totals could not be kept (it is retired all the same, and
 * they are folded).
 */
int tracker_retire(struct tracker *t, int i);

/* Replaces the path of cgroup i (v2 cgroups can be renamed in place): 0 or -ENOMEM. */
int tracker_rename(struct tracker *t, int i, const char *path);

#endif
