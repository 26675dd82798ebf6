// SPDX-License-Identifier: GPL-2.0
/*
 * The tracked-cgroup set: finding by id after retirements move entries around, the totals a
 * removed cgroup keeps (summed over CPUs), the bound on kept removed cgroups and the folded
 * row beyond it, renames.
 */
#include <stdlib.h>

#include "test.h"
#include "tracker.h"

#define EVENTS 3
#define CPUS 4

/* Gives cgroup i of t totals that tell it apart: event e on CPU c is id * 100 + c * 10 + e. */
static void set_totals(struct tracker *t, int i)
{
	struct tracked *tr = &t->tracked[i];

	for (int c = 0; c < t->stride; c++)
		for (int e = 0; e < EVENTS; e++) {
			struct cgtma_count *k = &tr->counts.total[c * EVENTS + e];

			k->counter = tr->id * 100 + c * 10 + e;
			k->enabled = k->running = 1000;
		}
}

/* What set_totals() gives summed over CPUs. */
static unsigned long long summed(__u64 id, int stride, int e)
{
	unsigned long long v = 0;

	for (int c = 0; c < stride; c++)
		v += id * 100 + c * 10 + e;
	return v;
}

static void test_find_and_retire(void)
{
	struct tracker t;
	char path[32];

	CHECK_INT(tracker_init(&t, EVENTS, CPUS), 0);
	for (int i = 0; i < 10; i++) {
		snprintf(path, sizeof(path), "/c%d", i);
		CHECK_INT(tracker_add(&t, 1000 + i, path, i == 7), 0);
		set_totals(&t, t.nr - 1);
	}
	CHECK_INT(t.nr, 10);
	CHECK_INT(tracker_find(&t, 1003), 3);
	CHECK_INT(tracker_find(&t, 42), -1);
	CHECK(t.tracked[7].refused, "refused is kept");

	/* Retiring 3 moves the last (1009) into its place. */
	CHECK_INT(tracker_retire(&t, 3), 0);
	CHECK_INT(t.nr, 9);
	CHECK_INT(tracker_find(&t, 1003), -1);
	CHECK_INT(tracker_find(&t, 1009), 3);
	CHECK_STR(t.tracked[3].path, "/c9");
	CHECK_INT(t.nr_removed, 1);
	CHECK_STR(t.removed[0].path, "/c3");
	for (int e = 0; e < EVENTS; e++) {
		CHECK_INT(t.removed[0].total[e].counter, summed(1003, CPUS, e));
		CHECK_INT(t.removed[0].total[e].enabled, 1000 * CPUS);
	}
	/* Retiring the last one moves nothing. */
	CHECK_INT(tracker_retire(&t, t.nr - 1), 0);
	CHECK_INT(tracker_find(&t, 1008), -1);
	for (int i = 0; i < t.nr; i++)
		CHECK_INT(tracker_find(&t, t.tracked[i].id), i);

	CHECK_INT(tracker_rename(&t, 0, "/renamed"), 0);
	CHECK_STR(t.tracked[0].path, "/renamed");
	tracker_release(&t);
}

/* Past TRACKER_REMOVED_KEPT, removed cgroups are folded: counted, and their sums added. */
static void test_bound(void)
{
	const int extra = 25, n = TRACKER_REMOVED_KEPT + extra;
	unsigned long long want[EVENTS] = { 0 };
	struct tracker t;
	char path[32];

	CHECK_INT(tracker_init(&t, EVENTS, 1), 0);
	for (int i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "/churn/%d", i);
		CHECK_INT(tracker_add(&t, 5000 + i, path, false), 0);
		set_totals(&t, 0 + t.nr - 1);
		if (i >= TRACKER_REMOVED_KEPT)
			for (int e = 0; e < EVENTS; e++)
				want[e] += summed(5000 + i, 1, e);
		CHECK_INT(tracker_retire(&t, t.nr - 1), 0);
	}
	CHECK_INT(t.nr, 0);
	CHECK_INT(t.nr_removed, TRACKER_REMOVED_KEPT);
	CHECK_INT(t.nr_folded, extra);
	CHECK_STR(t.removed[TRACKER_REMOVED_KEPT - 1].path, "/churn/999");
	for (int e = 0; e < EVENTS; e++)
		CHECK_INT(t.folded[e].counter, want[e]);
	/* The id map keeps no removed cgroup. */
	CHECK_INT(t.ids.nr, 0);
	tracker_release(&t);
}

int main(void)
{
	test_find_and_retire();
	test_bound();
	return test_done("tracker");
}
