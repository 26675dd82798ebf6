/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A cgroup's neighbours: the other cgroups that preempted its tasks, took the CPU from them,
 * or ran on its core's other hardware thread (report.h's struct noise: preempted,
 * smt_shared, antagonists). The BPF side counts per pair of the tasks' own cgroups
 * (bpf/noise.bpf.h); here the pairs of an interval go to the tracked cgroups that hold them:
 * a tracked cgroup's noise is what cgroups outside its subtree did to tasks inside it, and
 * each antagonist is named by the deepest tracked cgroup that holds it, or its own path.
 *
 *   struct neighbours nb = NEIGHBOURS_INIT;
 *
 *   collector__read_noise(col, neighbours_add, &nb);
 *   neighbours_resolve(&nb, &view, rows, nr_rows, name_of, ctx);
 *   for each tracked cgroup r:
 *           neighbours_tally(&nb, rows[r].path, rows[r].id, &interval);   // zeroed first
 *           neighbour_tally_noise(&interval, seconds, smt, &noise);
 *           neighbour_tally_merge(&run, &interval, seconds);
 *   neighbours_clear(&nb);
 */
#ifndef CGTMA_NEIGHBOURS_H
#define CGTMA_NEIGHBOURS_H

#include <stdbool.h>
#include <linux/types.h>

#include "bpf/cgtma.h"
#include "hashmap.h"
#include "report.h"

struct cgview;

/* A tracked cgroup, as the pairs are sorted into them. */
struct neighbour_row {
	const char *path;		/* canonical, "/" the root */
	__u64 id;
	const char *container;		/* its container or pod, or NULL */
};

/* One pair of an interval, with both cgroups named (neighbours_resolve()). */
struct neighbour_pair {
	__u64 cgroup, other;		/* v2 ids */
	__u64 preempt, took_ns, smt_ns;
	const char *path;		/* cgroup's path (NULL: not known) */
	const char *other_name;		/* the antagonist's name: its tracked cgroup, or path */
	const char *other_container;	/* its container or pod, or NULL */
};

struct neighbours {
	struct neighbour_pair *pairs;
	int nr, cap;
	int err;			/* neighbours_add()'s first error (-ENOMEM) */
	/* The paths of the ids seen, kept between intervals. */
	struct hashmap ids;		/* id -> index into paths */
	char **paths;
	int nr_paths, cap_paths;
};

#define NEIGHBOURS_INIT { .ids = HASHMAP_INIT }

/* One antagonist's sums. */
struct neighbour {
	char cgroup[256];
	char container[64];
	__u64 preempt, took_ns, smt_ns;
};

/* A tracked cgroup's sums over an interval or the run (span: the seconds they cover). */
struct neighbour_tally {
	__u64 preempt, smt_ns;
	double span;
	struct neighbour *v;
	int nr, cap;
};

/* collector_noise_cb: adds one pair of the interval (ctx: the struct neighbours). */
void neighbours_add(const struct cgtma_noise_key *key, const struct cgtma_noise_pair *pair,
		    void *ctx);

/* The container or pod name of cgroup id at path, or NULL: for an antagonist in no row. */
typedef const char *(*neighbour_name_fn)(__u64 id, const char *path, void *ctx);

/*
 * Names both cgroups of every pair: paths by id through view (the tracked rows' own ids
 * where the view cannot name them: a removed cgroup), and each antagonist by the deepest of
 * rows that holds it, or by its own path with its container's name from name_of (NULL:
 * none). 0, or -ENOMEM (or neighbours_add()'s error).
 */
int neighbours_resolve(struct neighbours *nb, const struct cgview *view,
		       const struct neighbour_row *rows, int nr_rows, neighbour_name_fn name_of,
		       void *ctx);

/*
 * Adds to t what cgroups outside the subtree of path (id) did to tasks inside it in the
 * interval. 0 or -ENOMEM.
 */
int neighbours_tally(const struct neighbours *nb, const char *path, __u64 id,
		     struct neighbour_tally *t);

/* Forgets the interval's pairs (the paths stay, up to a bound). */
void neighbours_clear(struct neighbours *nb);
void neighbours_release(struct neighbours *nb);

/*
 * Fills n's preempted and antagonists (NOISE_PREEMPTED), and with smt smt_shared and the
 * antagonists' smt (NOISE_SMT), from t over seconds (t->span where 0).
 */
void neighbour_tally_noise(const struct neighbour_tally *t, double seconds, bool smt,
			   struct noise *n);

/* Adds from's sums, over seconds, to to's. 0 or -ENOMEM (to unchanged but for its sums). */
int neighbour_tally_merge(struct neighbour_tally *to, const struct neighbour_tally *from,
			  double seconds);

/* Empties t, keeping its allocation. */
void neighbour_tally_reset(struct neighbour_tally *t);
void neighbour_tally_release(struct neighbour_tally *t);

#endif
