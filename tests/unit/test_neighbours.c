// SPDX-License-Identifier: GPL-2.0
/*
 * A cgroup's neighbours (neighbours.h) from the BPF side's pairs of cgroups: what cgroups
 * outside a tracked subtree did to tasks inside it, each antagonist named by the deepest
 * tracked cgroup that holds it, rates over the interval, the busiest five, the run's sums.
 * Paths come from the tracked rows and the root's id here (no cgroup view).
 */
#include <string.h>

#include "neighbours.h"
#include "test.h"

/* Ids: 1 the root; tracked /a (10) with /a/x (11) and /a/y (12) below, /b (20), /c (30). */
static const struct neighbour_row rows[] = {
	{ "/a", 10, NULL }, { "/a/x", 11, "web" }, { "/a/y", 12, NULL },
	{ "/b", 20, "batch" }, { "/c", 30, NULL },
};
#define NR_ROWS (int)(sizeof(rows) / sizeof(rows[0]))

static void add(struct neighbours *nb, __u64 cg, __u64 other, __u32 half, __u64 preempt,
		__u64 took_ns, __u64 smt_ns)
{
	struct cgtma_noise_key k = { .cgroup = cg, .other = other, .half = half };
	struct cgtma_noise_pair p = { preempt, took_ns, smt_ns };

	neighbours_add(&k, &p, nb);
}

static const struct antagonist *find(const struct noise *n, const char *cg)
{
	for (int i = 0; i < n->nr_antagonists; i++)
		if (!strcmp(n->antagonists[i].cgroup, cg))
			return &n->antagonists[i];
	return NULL;
}

static void test_interval(void)
{
	struct neighbours nb = NEIGHBOURS_INIT;
	struct neighbour_tally t = {}, run = {};
	const struct antagonist *a;
	struct noise n = {};

	add(&nb, 11, 20, 0, 40, 200000000, 0);	/* /b preempted /a/x 40 times, took 0.2 s */
	add(&nb, 11, 20, 1, 10, 50000000, 0);	/* the same pair in the other half: one */
	add(&nb, 11, 12, 0, 30, 100000000, 0);	/* /a/y, inside /a */
	add(&nb, 12, 1, 0, 6, 30000000, 0);	/* the root's own tasks preempted /a/y */
	add(&nb, 20, 11, 0, 45, 400000000, 300000000);
	CHECK_INT(nb.nr, 4);
	CHECK_INT(neighbours_resolve(&nb, NULL, rows, NR_ROWS, NULL, NULL), 0);

	/* /a: /a/y's preemptions of /a/x are its own affair; /b and the root are noise. */
	CHECK_INT(neighbours_tally(&nb, "/a", 10, &t), 0);
	CHECK_INT(t.preempt, 56);
	neighbour_tally_noise(&t, 2.0, false, &n);
	CHECK_INT(n.has, NOISE_PREEMPTED);
	CHECK_NEAR(n.preempted, 28.0, 1e-9);
	CHECK_INT(n.nr_antagonists, 2);
	/* Busiest first: /b took 0.25 s, the root 0.03 s. */
	CHECK_STR(n.antagonists[0].cgroup, "/b");
	CHECK_STR(n.antagonists[0].container, "batch");
	CHECK_NEAR(n.antagonists[0].preempt, 25.0, 1e-9);
	CHECK_NEAR(n.antagonists[0].took, 0.125, 1e-9);
	CHECK_STR(n.antagonists[1].cgroup, "/");
	CHECK_NEAR(n.antagonists[1].took, 0.015, 1e-9);
	CHECK_INT(neighbour_tally_merge(&run, &t, 2.0), 0);

	/* /a/x: /a/y is a neighbour now, named by its own tracked row. */
	neighbour_tally_reset(&t);
	memset(&n, 0, sizeof(n));
	CHECK_INT(neighbours_tally(&nb, "/a/x", 11, &t), 0);
	neighbour_tally_noise(&t, 2.0, true, &n);
	CHECK_INT(n.has, NOISE_PREEMPTED | NOISE_SMT);
	CHECK_NEAR(n.preempted, 40.0, 1e-9);
	a = find(&n, "/a/y");
	CHECK(a && a->preempt == 15.0, "/a/y preempted /a/x 15 times/s");

	/* /b: /a/x preempted it and shared its core; named /a/x, the deepest row. */
	neighbour_tally_reset(&t);
	memset(&n, 0, sizeof(n));
	CHECK_INT(neighbours_tally(&nb, "/b", 20, &t), 0);
	neighbour_tally_noise(&t, 2.0, true, &n);
	CHECK_NEAR(n.smt_shared, 0.15, 1e-9);
	CHECK_INT(n.nr_antagonists, 1);
	CHECK_STR(n.antagonists[0].cgroup, "/a/x");
	CHECK_STR(n.antagonists[0].container, "web");
	CHECK_NEAR(n.antagonists[0].smt, 0.15, 1e-9);
	/* Without SMT siblings the smt figures are not given. */
	memset(&n, 0, sizeof(n));
	neighbour_tally_noise(&t, 2.0, false, &n);
	CHECK_INT(n.has, NOISE_PREEMPTED);
	CHECK_NEAR(n.antagonists[0].smt, 0.0, 0);

	/* /c: nothing happened to it; preempted is there, at 0, and no antagonist. */
	neighbour_tally_reset(&t);
	memset(&n, 0, sizeof(n));
	CHECK_INT(neighbours_tally(&nb, "/c", 30, &t), 0);
	neighbour_tally_noise(&t, 2.0, false, &n);
	CHECK_INT(n.has, NOISE_PREEMPTED);
	CHECK_NEAR(n.preempted, 0.0, 0);
	CHECK_INT(n.nr_antagonists, 0);

	/* The run: a second interval of /a, 1 s, /b again; the sums over 3 s. */
	neighbours_clear(&nb);
	CHECK_INT(nb.nr, 0);
	add(&nb, 10, 20, 0, 4, 100000000, 0);
	CHECK_INT(neighbours_resolve(&nb, NULL, rows, NR_ROWS, NULL, NULL), 0);
	neighbour_tally_reset(&t);
	CHECK_INT(neighbours_tally(&nb, "/a", 10, &t), 0);
	CHECK_INT(neighbour_tally_merge(&run, &t, 1.0), 0);
	memset(&n, 0, sizeof(n));
	neighbour_tally_noise(&run, 0, false, &n);
	CHECK_NEAR(n.preempted, 60.0 / 3, 1e-9);
	a = find(&n, "/b");
	CHECK(a && a->preempt == 54.0 / 3 && a->took > 0.35 / 3 - 1e-9 &&
	      a->took < 0.35 / 3 + 1e-9, "/b over the run");

	neighbour_tally_release(&t);
	neighbour_tally_release(&run);
	neighbours_release(&nb);
}

/* More than five: the five busiest, by time, then by preemptions; a pair of nothing is not. */
static void test_top_five(void)
{
	struct neighbours nb = NEIGHBOURS_INIT;
	struct neighbour_tally t = {};
	struct noise n = {};
	static const struct neighbour_row many[] = {
		{ "/v", 100, NULL }, { "/o1", 101, NULL }, { "/o2", 102, NULL },
		{ "/o3", 103, NULL }, { "/o4", 104, NULL }, { "/o5", 105, NULL },
		{ "/o6", 106, NULL }, { "/o7", 107, NULL },
	};

	for (int i = 1; i <= 6; i++)
		add(&nb, 100, 100 + i, 0, 10 - i, 1000000ull * i, 0);
	add(&nb, 100, 107, 0, 0, 0, 0);
	CHECK_INT(neighbours_resolve(&nb, NULL, many, 8, NULL, NULL), 0);
	CHECK_INT(neighbours_tally(&nb, "/v", 100, &t), 0);
	neighbour_tally_noise(&t, 1.0, false, &n);
	CHECK_INT(n.nr_antagonists, 5);
	CHECK_STR(n.antagonists[0].cgroup, "/o6");
	CHECK_STR(n.antagonists[4].cgroup, "/o2");
	neighbour_tally_release(&t);
	neighbours_release(&nb);
}

/* A cgroup gone before it was named: by id, and in no tracked row's subtree. */
static void test_unknown(void)
{
	struct neighbours nb = NEIGHBOURS_INIT;
	struct neighbour_tally t = {};
	struct noise n = {};

	add(&nb, 10, 999, 0, 3, 1000, 0);
	add(&nb, 998, 20, 0, 3, 1000, 0);
	CHECK_INT(neighbours_resolve(&nb, NULL, rows, NR_ROWS, NULL, NULL), 0);
	CHECK_INT(neighbours_tally(&nb, "/a", 10, &t), 0);
	neighbour_tally_noise(&t, 1.0, false, &n);
	CHECK_INT(n.nr_antagonists, 1);
	CHECK_STR(n.antagonists[0].cgroup, "(cgroup id 999)");
	neighbour_tally_reset(&t);
	CHECK_INT(neighbours_tally(&nb, "/", 1, &t), 0);
	/* Every cgroup is inside the root's subtree: nothing is its neighbour. */
	CHECK_INT(t.preempt, 0);
	neighbour_tally_release(&t);
	neighbours_release(&nb);
}

static const char *name_db(__u64 id, const char *path, void *ctx)
{
	(void)ctx;
	return id == 40 && !strcmp(path, "/libpod-40") ? "db" : NULL;
}

/* An antagonist in no tracked row: its path, and its container's name where it is one. */
static void test_untracked_container(void)
{
	struct neighbours nb = NEIGHBOURS_INIT;
	static const struct neighbour_row with_db[] = {
		{ "/a", 10, NULL }, { "/libpod-40", 40, NULL },
	};
	struct neighbour_tally t = {};
	struct noise n = {};

	add(&nb, 10, 40, 0, 2, 1000, 0);
	/* The paths come from rows and ids alone here: a row names /libpod-40's path. */
	CHECK_INT(neighbours_resolve(&nb, NULL, with_db, 2, name_db, NULL), 0);
	CHECK_INT(neighbours_tally(&nb, "/a", 10, &t), 0);
	neighbour_tally_noise(&t, 1.0, false, &n);
	CHECK_INT(n.nr_antagonists, 1);
	CHECK_STR(n.antagonists[0].cgroup, "/libpod-40");
	/* Tracked: the row's own name (none here), not name_of's. */
	CHECK_STR(n.antagonists[0].container, "");
	neighbour_tally_release(&t);
	neighbours_release(&nb);

	nb = (struct neighbours)NEIGHBOURS_INIT;
	memset(&n, 0, sizeof(n));
	add(&nb, 10, 40, 0, 2, 1000, 0);
	CHECK_INT(neighbours_resolve(&nb, NULL, with_db, 1, name_db, NULL), 0);
	CHECK_INT(neighbours_tally(&nb, "/a", 10, &t), 0);
	neighbour_tally_noise(&t, 1.0, false, &n);
	/* Untracked and not in the view: named by id, with no container. */
	CHECK_STR(n.antagonists[0].cgroup, "(cgroup id 40)");
	CHECK_STR(n.antagonists[0].container, "");
	neighbour_tally_release(&t);
	neighbours_release(&nb);
}

int main(void)
{
	test_interval();
	test_top_five();
	test_unknown();
	test_untracked_container();
	return test_done("neighbours");
}
