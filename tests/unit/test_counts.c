// SPDX-License-Identifier: GPL-2.0
/*
 * A scope's counts: deltas per epoch half, totals across them, rows taken one by one or
 * summed (and a sum that wraps past 2^64 still giving the rows' deltas), some rows taken
 * and the others left, whether the scope ran, and the three resets.
 */
#include <stdint.h>

#include "counts.h"
#include "test.h"

#define EVENTS 2
#define ROWS 3

/* Row r, event e of a reading: counter base * 10^r + e, enabled and running base. */
static void reading(struct cgtma_count *now, int rows, __u64 base)
{
	__u64 scale = 1;

	for (int r = 0; r < rows; r++, scale *= 10)
		for (int e = 0; e < EVENTS; e++)
			now[r * EVENTS + e] = (struct cgtma_count){
				.counter = base * scale + e, .enabled = base, .running = base };
}

static void test_halves(void)
{
	struct cgtma_count now[ROWS * EVENTS];
	struct scope_counts c;
	static const struct {
		int half;
		__u64 base;		/* the reading */
		__u64 delta0, total0;	/* row 0, event 0 */
		__u64 delta5, total5;	/* row 2, event 1 */
		bool ran;
	} steps[] = {
		{ 0, 10, 10, 10, 1001, 1001, true },
		{ 1, 4, 4, 14, 401, 1402, true },
		{ 0, 10, 0, 14, 0, 1402, false },	/* half 0 again, unchanged */
		{ 0, 15, 5, 19, 500, 1902, true },
		{ 1, 7, 3, 22, 300, 2202, true },
	};

	CHECK_INT(scope_counts_init(&c, ROWS, EVENTS), 0);
	CHECK_INT(c.rows * c.nr_events, ROWS * EVENTS);
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		reading(now, ROWS, steps[i].base);
		CHECK(scope_counts_take(&c, now, ROWS, steps[i].half) == steps[i].ran, "step %zu", i);
		CHECK_INT(c.delta[0].counter, steps[i].delta0);
		CHECK_INT(c.total[0].counter, steps[i].total0);
		CHECK_INT(c.delta[5].counter, steps[i].delta5);
		CHECK_INT(c.total[5].counter, steps[i].total5);
	}
	CHECK_INT(c.total[0].enabled, 22);

	scope_counts_reset(&c);
	for (int k = 0; k < ROWS * EVENTS; k++)
		CHECK_INT(c.delta[k].counter | c.delta[k].enabled | c.delta[k].running, 0);
	CHECK_INT(c.total[5].counter, 2202);
	scope_counts_reset_total(&c);
	CHECK_INT(c.total[5].counter | c.total[0].enabled, 0);
	/* The kernel's row starts again: a reading is all delta. */
	scope_counts_reset_readings(&c);
	reading(now, ROWS, 2);
	scope_counts_take(&c, now, ROWS, 1);
	CHECK_INT(c.delta[5].counter, 201);
	CHECK_INT(c.total[5].counter, 201);
	scope_counts_release(&c);
	CHECK(!c.prev && !c.delta && !c.total, "released");
	/* Resets of a released one do nothing. */
	scope_counts_reset(&c);
	scope_counts_reset_total(&c);
	scope_counts_reset_readings(&c);
}

/* One row kept, three read: the sum of the rows' counts, per event. */
static void test_summed(void)
{
	struct cgtma_count now[ROWS * EVENTS] = {};
	struct scope_counts c;

	CHECK_INT(scope_counts_init(&c, 1, EVENTS), 0);
	reading(now, ROWS, 1);
	CHECK(scope_counts_take(&c, now, ROWS, 0), "ran");
	CHECK_INT(c.delta[0].counter, 1 + 10 + 100);
	CHECK_INT(c.delta[1].counter, 2 + 11 + 101);
	CHECK_INT(c.delta[1].enabled, 3);
	/* Row 1's counter wraps past 2^64: the summed delta is still the rows' deltas. */
	now[1 * EVENTS].counter = UINT64_MAX - 4;
	scope_counts_take(&c, now, ROWS, 1);
	now[1 * EVENTS].counter = 5;	/* +10 */
	now[0].counter += 7;
	CHECK(scope_counts_take(&c, now, ROWS, 1), "ran");
	CHECK_INT(c.delta[0].counter, 17);
	CHECK_INT(c.delta[1].counter, 0);
	CHECK_INT(c.delta[0].enabled, 0);
	/* Nothing changed: did not run. */
	CHECK(!scope_counts_take(&c, now, ROWS, 1), "did not run");
	/* Enabled without a count is running too (a scope that ran and counted nothing). */
	now[2 * EVENTS + 1].enabled += 1;
	CHECK(scope_counts_take(&c, now, ROWS, 1), "enabled is running");
	scope_counts_release(&c);
}

/*
 * Some rows taken (the CPUs online at this flush or the last): a row not named keeps its
 * readings in both halves, counts nothing in the interval, and when named again takes its
 * delta against its own half's last reading, whatever the buffer held between.
 */
static void test_some_rows(void)
{
	struct cgtma_count now[ROWS * EVENTS];
	struct scope_counts c;
	bool rows[ROWS] = { true, true, true };

	CHECK_INT(scope_counts_init(&c, ROWS, EVENTS), 0);
	reading(now, ROWS, 1);
	CHECK(scope_counts_take_rows(&c, now, 0, rows), "ran");
	reading(now, ROWS, 2);
	CHECK(scope_counts_take_rows(&c, now, 1, rows), "ran");
	CHECK_INT(c.delta[2 * EVENTS].counter, 200);
	/* Row 2 goes offline: its slot in the buffer holds junk that must not be taken. */
	rows[2] = false;
	reading(now, ROWS, 3);
	now[2 * EVENTS].counter = 999999;
	CHECK(scope_counts_take_rows(&c, now, 0, rows), "ran");
	CHECK_INT(c.delta[0].counter, 2);
	CHECK_INT(c.delta[2 * EVENTS].counter, 0);
	CHECK_INT(c.delta[2 * EVENTS + 1].enabled, 0);
	CHECK_INT(c.total[2 * EVENTS].counter, 100 + 200);
	/* Nothing in the named rows changed: did not run, though row 2's slot differs. */
	CHECK(!scope_counts_take_rows(&c, now, 0, rows), "did not run");
	/* Back online, in half 1: the delta from half 1's last reading (base 2, 200). */
	rows[2] = true;
	reading(now, ROWS, 5);
	CHECK(scope_counts_take_rows(&c, now, 1, rows), "ran");
	CHECK_INT(c.delta[2 * EVENTS].counter, 300);
	CHECK_INT(c.total[2 * EVENTS].counter, 100 + 200 + 300);
	scope_counts_release(&c);
}

int main(void)
{
	test_halves();
	test_summed();
	test_some_rows();
	return test_done("counts");
}
