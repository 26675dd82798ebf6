// SPDX-License-Identifier: GPL-2.0
/*
 * Counter arithmetic: deltas of cumulative readings (modulo 2^64), sums, scaling for
 * multiplexing with its edge cases (running = 0, enabled = 0, running > enabled), and how a
 * scope's raw sums become counts and states in interval_derive().
 */
#include <math.h>
#include <stdlib.h>

#include "interval.h"
#include "scale.h"
#include "test.h"

#define C(c, e, r) ((struct cgtma_count){ .counter = (c), .enabled = (e), .running = (r) })

static void check_count(const struct cgtma_count *got, __u64 c, __u64 e, __u64 r)
{
	CHECK(got->counter == c && got->enabled == e && got->running == r,
	      "got {%llu, %llu, %llu}, want {%llu, %llu, %llu}", (unsigned long long)got->counter,
	      (unsigned long long)got->enabled, (unsigned long long)got->running,
	      (unsigned long long)c, (unsigned long long)e, (unsigned long long)r);
}

static void test_delta(void)
{
	struct cgtma_count d, now, before;

	now = C(1500, 2000, 1000);
	before = C(500, 1000, 400);
	count_delta(&d, &now, &before);
	check_count(&d, 1000, 1000, 600);

	/* Nothing happened. */
	count_delta(&d, &now, &now);
	check_count(&d, 0, 0, 0);

	/* From zero (a cgroup's first reading). */
	before = C(0, 0, 0);
	count_delta(&d, &now, &before);
	check_count(&d, 1500, 2000, 1000);

	/*
	 * A sum over CPUs that wrapped past 2^64 between two readings: the difference is still
	 * what was added (a clamp to 0 would drop a whole interval of a long run).
	 */
	now = C(10, 2000, 1000);
	before = C(~0ULL - 9, 1000, ~0ULL);
	count_delta(&d, &now, &before);
	check_count(&d, 20, 1000, 1001);

	/* The full 64-bit range, no overflow in the subtraction. */
	now = C(~0ULL, ~0ULL, ~0ULL);
	before = C(1, 0, ~0ULL - 5);
	count_delta(&d, &now, &before);
	check_count(&d, ~0ULL - 1, ~0ULL, 5);
}

static void test_add(void)
{
	struct cgtma_count sum = C(0, 0, 0), d;

	d = C(1, 2, 3);
	count_add(&sum, &d);
	count_add(&sum, &d);
	d = C(100, 200, 0);
	count_add(&sum, &d);
	check_count(&sum, 102, 204, 6);
}

/* Summed deltas of a cumulative series equal its last value minus its first. */
static void test_delta_series(void)
{
	static const struct cgtma_count series[] = {
		{ 100, 1000, 1000 }, { 100, 1000, 1000 }, { 250, 3000, 2000 },
		{ 250, 3000, 2000 }, { 1000, 9000, 4500 }, { 123456789, 987654321, 87654321 },
	};
	struct cgtma_count prev = series[0], total = C(0, 0, 0), d;

	for (size_t i = 1; i < sizeof(series) / sizeof(series[0]); i++) {
		count_delta(&d, &series[i], &prev);
		count_add(&total, &d);
		prev = series[i];
	}
	check_count(&total, 123456789 - 100, 987654321 - 1000, 87654321 - 1000);
}

struct scale_case {
	struct cgtma_count c;
	enum count_state state;
	double scaled;
	double multiplex;
};

static void test_scale(void)
{
	static const struct scale_case cases[] = {
		/* Never enabled: the scope did not run. */
		{ { 0, 0, 0 }, COUNT_IDLE, 0, NAN },
		/* A counter without time is still idle: enabled is what says it ran. */
		{ { 5, 0, 0 }, COUNT_IDLE, 0, NAN },
		{ { 5, 0, 7 }, COUNT_IDLE, 0, NAN },
		/* Enabled, never on a counter: no value at all, not zero. */
		{ { 0, 1000, 0 }, COUNT_NOT_COUNTED, NAN, 0 },
		{ { 42, 1000, 0 }, COUNT_NOT_COUNTED, NAN, 0 },
		/* Counted the whole time: exact. */
		{ { 12345, 1000, 1000 }, COUNT_OK, 12345, 1 },
		{ { 0, 1000, 1000 }, COUNT_OK, 0, 1 },
		/* Half the time: doubled. */
		{ { 100, 2000, 1000 }, COUNT_OK, 200, 0.5 },
		/* A quarter. */
		{ { 100, 200, 50 }, COUNT_OK, 400, 0.25 },
		/* A third: not an integer ratio. */
		{ { 1000, 3, 1 }, COUNT_OK, 3000, 1.0 / 3 },
		/* running > enabled by clock rounding: never scaled down. */
		{ { 1000, 999, 1000 }, COUNT_OK, 1000, 1 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct scale_case *k = &cases[i];
		double scaled = -1, mux = -1;
		enum count_state st = count_scale(&k->c, &scaled, &mux);

		CHECK(st == k->state, "case %zu: state %d, want %d", i, st, k->state);
		CHECK_NEAR(scaled, k->scaled, 1e-9);
		CHECK_NEAR(mux, k->multiplex, 1e-12);
	}

	/* Large counts keep their precision (relative error of a double). */
	{
		struct cgtma_count c = C(1000000000000000ULL, 3000000000ULL, 1000000000ULL);
		double scaled, mux;

		CHECK_INT(count_scale(&c, &scaled, &mux), COUNT_OK);
		CHECK_NEAR(scaled / 3e15, 1.0, 1e-12);
		CHECK_NEAR(mux, 1.0 / 3, 1e-12);
	}
}

/* A scope's sums become counts, states, multiplexing and "ran" as the outputs see them. */
static void test_derive(void)
{
	const char *names[] = { "a", "b", "c", "d" };
	struct run run = { .model = "events", .nr_events = 4, .event_names = names };
	struct interval iv = { .interval_s = 1 };
	struct scope *s, *idle;

	s = interval_add_scope(&iv, &run, SCOPE_CGROUP, "/x", -1);
	idle = interval_add_scope(&iv, &run, SCOPE_CGROUP, "/idle", -1);
	CHECK(s && idle, "interval_add_scope failed");
	if (!s || !idle)
		return;
	CHECK_STR(iv.scopes[0].cgroup, "/x");
	s = &iv.scopes[0];
	idle = &iv.scopes[1];
	s->sum[0] = C(100, 1000, 1000);		/* exact */
	s->sum[1] = C(100, 1000, 250);		/* multiplexed: x4 */
	s->sum[2] = C(0, 1000, 0);		/* never scheduled on a counter */
	s->sum[3] = C(0, 0, 0);			/* not enabled */
	CHECK_INT(interval_derive(&run, &iv), 0);
	s = &iv.scopes[0];
	idle = &iv.scopes[1];

	CHECK(s->ran, "a scope with enabled time ran");
	CHECK_INT(s->state[0], COUNT_OK);
	CHECK_NEAR(s->count[0], 100.0, 0);
	CHECK_NEAR(s->multiplex[0], 1.0, 0);
	CHECK_INT(s->state[1], COUNT_OK);
	CHECK_NEAR(s->count[1], 400.0, 1e-9);
	CHECK_NEAR(s->multiplex[1], 0.25, 1e-12);
	CHECK_INT(s->state[2], COUNT_NOT_COUNTED);
	CHECK(isnan(s->count[2]), "not counted is NAN, got %g", s->count[2]);
	CHECK_INT(s->state[3], COUNT_IDLE);
	CHECK_NEAR(s->count[3], 0.0, 0);

	CHECK(!idle->ran, "a scope with no enabled time did not run");
	for (int i = 0; i < 4; i++) {
		CHECK_INT(idle->state[i], COUNT_IDLE);
		CHECK_NEAR(idle->count[i], 0.0, 0);
	}

	/* Sorting: system, CPUs, then cgroups by path and CPU. */
	CHECK(interval_add_scope(&iv, &run, SCOPE_CPU, NULL, 1) != NULL, "add cpu1");
	CHECK(interval_add_scope(&iv, &run, SCOPE_CGROUP, "/x", 0) != NULL, "add /x@0");
	CHECK(interval_add_scope(&iv, &run, SCOPE_SYSTEM, NULL, -1) != NULL, "add system");
	CHECK(interval_add_scope(&iv, &run, SCOPE_CPU, NULL, 0) != NULL, "add cpu0");
	interval_sort(&iv);
	{
		static const char *const want[] = { "system", "cpu0", "cpu1", "/idle", "/x",
						    "/x@cpu0" };
		char buf[64];

		CHECK_INT(iv.nr_scopes, 6);
		for (int i = 0; i < iv.nr_scopes && i < 6; i++)
			CHECK_STR(scope_label(&iv.scopes[i], false, buf, sizeof(buf)), want[i]);
	}
	interval_free(&iv);
	CHECK(iv.scopes == NULL && iv.nr_scopes == 0, "interval_free empties");

	/* Containers and pods by name; their paths when asked (-v); plain cgroups by path. */
	{
		static const struct {
			struct cgroup_names n;
			int cpu;
			bool paths;
			const char *want;
		} labels[] = {
			{ { "web", NULL, NULL }, -1, false, "web" },
			{ { "web", NULL, NULL }, 3, false, "web@cpu3" },
			{ { "web", NULL, NULL }, -1, true, "/c/libpod-1" },
			{ { "nginx", "frontend", "shop" }, -1, false, "shop/frontend/nginx" },
			{ { NULL, "frontend", "shop" }, 1, false, "shop/frontend@cpu1" },
			{ { NULL, NULL, NULL }, -1, false, "/c/libpod-1" },
		};
		char buf[64];

		for (size_t i = 0; i < sizeof(labels) / sizeof(labels[0]); i++) {
			struct scope *sc;

			memset(&iv, 0, sizeof(iv));
			sc = interval_add_scope(&iv, &run, SCOPE_CGROUP, "/c/libpod-1",
						labels[i].cpu);
			CHECK(sc && scope_set_names(sc, &labels[i].n) == 0, "names");
			if (sc)
				CHECK_STR(scope_label(sc, labels[i].paths, buf, sizeof(buf)),
					  labels[i].want);
			interval_free(&iv);
		}
	}
}

/* Events never on a counter in a whole run, over every CPU's totals. */
static void test_never_ran(void)
{
	/* 2 CPUs x 4 events: [cpu * 4 + e] = { counter, enabled, running } */
	const struct cgtma_count totals[8] = {
		{ 10, 100, 100 }, { 0, 100, 0 }, { 0, 0, 0 }, { 0, 100, 0 },
		{ 0, 50, 0 },	  { 0, 50, 0 },	 { 0, 0, 0 }, { 5, 50, 1 },
	};
	bool never[4];

	/* 0 ran on CPU 0; 1 never anywhere; 2 never enabled (idle); 3 ran once on CPU 1 */
	CHECK_INT(count_never_ran(totals, 2, 4, never), 1);
	CHECK(!never[0] && never[1] && !never[2] && !never[3], "never %d %d %d %d", never[0],
	      never[1], never[2], never[3]);
	/* one CPU alone: 3 never ran on it */
	CHECK_INT(count_never_ran(totals, 1, 4, never), 2);
	CHECK(never[1] && never[3], "one CPU: %d %d", never[1], never[3]);
}

/*
 * The rotation in phase with a cgroup's switches: one event nearly always on a counter and
 * another nearly never, in the cgroup's time, where the CPUs had each about as much as the
 * rotation gives; over enough of the cgroup's time to rule out chance. Figures from
 * 38-hw-groups on arm64-6.1 (two groups alternating, each on the counters half the time):
 * at the default 4 ms period a cgroup had a group 99.6 % of an interval; at 5 ms, 50.5 %.
 */
static void test_rotation_in_phase(void)
{
/* the CPUs: two groups half the time each, and an event never multiplexed */
#define HALF { C(1, 200000000, 100000000), C(1, 200000000, 100000000), C(1, 200000000, 200000000) }
	static const struct {
		struct cgtma_count scope[3], cpus[3];
		int on, off;	/* -1, -1: not in phase */
	} cases[] = {
		/* in phase: one group nearly all the cgroup's time, the other hardly */
		{ { C(1, 100000000, 99600000), C(1, 100000000, 400000), C(1, 100000000, 100000000) },
		  HALF, 0, 1 },
		/* three groups, a third each on the CPUs: the cgroup had the third one */
		{ { C(1, 200000000, 2000000), C(1, 200000000, 1000000), C(1, 200000000, 197000000) },
		  { C(1, 300000000, 100000000), C(1, 300000000, 100000000), C(1, 300000000, 100000000) },
		  2, 0 },
		/* a fair rotation, even a lopsided one */
		{ { C(1, 100000000, 50500000), C(1, 100000000, 49500000), C(1, 100000000, 100000000) },
		  HALF, -1, -1 },
		{ { C(1, 100000000, 80000000), C(1, 100000000, 6000000), C(1, 100000000, 100000000) },
		  HALF, -1, -1 },
		/* one group on, none off: the cgroup's CPUs had idle counters, others busy ones */
		{ { C(1, 100000000, 100000000), C(1, 100000000, 99000000), C(1, 100000000, 100000000) },
		  HALF, -1, -1 },
		/* all off: another perf user's pinned events held the counters of its CPUs */
		{ { C(1, 100000000, 0), C(1, 100000000, 1000000), C(1, 100000000, 100000000) },
		  HALF, -1, -1 },
		/* too little of the cgroup's time to tell: 40 ms, a handful of periods */
		{ { C(1, 40000000, 40000000), C(1, 40000000, 0), C(1, 40000000, 40000000) },
		  HALF, -1, -1 },
		/* the CPUs hardly multiplexed the one, or hardly ran the other */
		{ { C(1, 100000000, 100000000), C(1, 100000000, 0), C(1, 100000000, 100000000) },
		  { C(1, 200000000, 192000000), C(1, 200000000, 8000000), C(1, 200000000, 200000000) },
		  -1, -1 },
		/* nothing enabled on the CPUs (an idle interval) */
		{ { C(0, 100000000, 100000000), C(0, 100000000, 0), C(0, 0, 0) },
		  { C(0, 0, 0), C(0, 0, 0), C(0, 0, 0) }, -1, -1 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		bool want = cases[i].on >= 0;
		int on, off;

		CHECK(count_rotation_in_phase(cases[i].scope, cases[i].cpus, 3, &on, &off) == want,
		      "case %zu: want %s", i, want ? "in phase" : "not");
		if (want)
			CHECK(on == cases[i].on && off == cases[i].off,
			      "case %zu: on %d off %d, want %d %d", i, on, off, cases[i].on,
			      cases[i].off);
	}
#undef HALF
}

int main(void)
{
	test_delta();
	test_add();
	test_delta_series();
	test_scale();
	test_derive();
	test_never_ran();
	test_rotation_in_phase();
	return test_done("scale");
}
