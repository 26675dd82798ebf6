/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Which cgroups a run counts: -G paths and globs, --all-cgroups, and the container and pod
 * selectors (-G container:, pod:, --all-containers), resolved against the v2 hierarchy as
 * this process sees it (cgview.h) and kept current as cgroups come and go. What it tracks
 * lives in the tracker (tracker.h) and in the collector's maps; this module decides what
 * goes in and out.
 *
 *   selection_setup()    parses the selectors, before the collector is opened (it says
 *                        which levels the BPF side must watch)
 *   selection_start()    the first walk, once the collector is loaded
 *   selection_update()   each interval, before the flush: new cgroups from the mkdir hook,
 *                        the cgroups -p's processes moved to, and a walk when the hierarchy
 *                        changed
 *   selection_retire()   each interval, after the report: gone cgroups leave
 *   selection_unmatched() at the end: says which selectors never matched
 *
 * A selector that matches nothing at the start is said with the close names that exist (a
 * typo, more often than not), and cgtma keeps watching: containers often start after it.
 */
#ifndef CGTMA_SELECTION_H
#define CGTMA_SELECTION_H

#include <stdbool.h>
#include <linux/types.h>

#include "cgview.h"

struct collector;
struct container_selector;
struct containers;
struct pending;
struct pid_cgroup;
struct tracker;

/* What to count, as the command line says it. */
struct selection_opts {
	const char **cgroups;		/* -G, as given: paths, globs, container: and pod: */
	int nr_cgroups;
	bool all_cgroups;
	bool all_containers;		/* --all-containers */
	int depth;			/* --depth for --all-cgroups */
	const int *pids;		/* -p: the cgroups these processes are in */
	int nr_pids;
};

/* Whether o selects any cgroup. */
bool selection_opts_any(const struct selection_opts *o);

struct selection {
	const struct selection_opts *o;
	struct cgview view;		/* the v2 hierarchy, as this process can see it */
	char **patterns;		/* canonical -G paths and globs */
	bool *pattern_matched;		/* per pattern: whether it ever found a cgroup */
	int nr_patterns;
	__u64 changes_seen;		/* the hierarchy's change count at the last walk */
	struct container_selector *selectors;	/* -G container:, pod:, --all-containers */
	const char **selector_args;	/* per selector: its -G argument (NULL: --all-*) */
	bool *selector_matched;		/* per selector: whether it ever found a cgroup */
	int nr_selectors;
	struct containers *containers;	/* names of the cgroups tracked */
	struct pid_cgroup *pids;	/* -p: each process's cgroup, found again each interval */
	int nr_pids;
	struct pending *pending;	/* new container cgroups not named yet */
	int nr_pending, cap_pending;
	struct collector *col;		/* from selection_start() on */
	struct tracker *tk;
};

/* An empty selection, safe to release. */
#define SELECTION_INIT { .view.fd = -1 }

/*
 * Parses o's selectors (o is kept: it must outlive sel) and finds the hierarchy; per_task
 * (-T) finds this cgroup namespace's root too, and -v says what it found. *levels gets
 * bit L for every level whose new cgroups must be counted from their mkdir, *max_level the
 * deepest. 0, -EINVAL for a bad selector (one that names no cgroup included), or another
 * -errno; the reason printed.
 */
int selection_setup(struct selection *sel, const struct selection_opts *o, bool per_task,
		    __u64 *levels, __u32 *max_level);

/* Whether anything is selected (else there is nothing to walk or track). */
bool selection_active(const struct selection *sel);

/* Tracks what the selectors match now. 0 or -errno, printed. */
int selection_start(struct selection *sel, struct collector *col, struct tracker *tk);

/* Adopts the cgroups born since the last call, and walks again if the hierarchy changed. */
int selection_update(struct selection *sel);

/* Stops counting the tracked cgroups a walk found gone (they have had their last report). */
void selection_retire(struct selection *sel);

/*
 * Warns of each selector that never matched during the run, with the close names now, and
 * returns how many there are (0 when the run never started tracking).
 */
int selection_unmatched(struct selection *sel);

void selection_release(struct selection *sel);

#endif
