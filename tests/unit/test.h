/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A minimal table-friendly unit-test harness (in the spirit of git's t/unit-tests): each
 * check prints "not ok" with its location on failure; main() returns test_done(), which is
 * non-zero when any check failed. Output is TAP-like so run-unit.sh can summarize it.
 *
 * Checks that cannot run in this build or on this machine (a model's events with a libpfm4
 * that lacks the model's table) are not passed in silence: SKIP prints "skip" with the
 * location and the reason, and test_done() counts them.
 */
#ifndef CGTMA_TEST_H
#define CGTMA_TEST_H

#include <math.h>
#include <stdio.h>
#include <string.h>

static int test_failures;
static int test_checks;
static int test_skips;

#define CHECK(cond, ...)                                                                  \
	do {                                                                              \
		test_checks++;                                                            \
		if (!(cond)) {                                                            \
			test_failures++;                                                  \
			printf("not ok - %s:%d: %s: ", __FILE__, __LINE__, #cond);        \
			printf(__VA_ARGS__);                                              \
			printf("\n");                                                     \
		}                                                                         \
	} while (0)

#define SKIP(...)                                                                         \
	do {                                                                              \
		test_skips++;                                                             \
		printf("skip - %s:%d: ", __FILE__, __LINE__);                             \
		printf(__VA_ARGS__);                                                      \
		printf("\n");                                                             \
	} while (0)

#define CHECK_INT(got, want)                                                              \
	CHECK((long long)(got) == (long long)(want), "got %lld, want %lld", (long long)(got), \
	      (long long)(want))

/* got through a pointer: an array's address is never NULL, and compilers say so. */
#define CHECK_STR(got, want)                                                              \
	do {                                                                              \
		const char *got_ = (got);                                                 \
		CHECK(got_ && strcmp(got_, (want)) == 0, "got '%s', want '%s'",           \
		      got_ ? got_ : "(null)", (want));                                    \
	} while (0)

/* |got - want| <= tol, NaNs equal only to NaNs. */
#define CHECK_NEAR(got, want, tol)                                                        \
	CHECK((isnan(got) && isnan(want)) || fabs((double)(got) - (double)(want)) <= (tol), \
	      "got %.17g, want %.17g (tolerance %g)", (double)(got), (double)(want),       \
	      (double)(tol))

static inline int test_done(const char *suite)
{
	printf("%s %s: %d checks, %d failed", test_failures ? "FAIL" : "ok", suite, test_checks,
	       test_failures);
	if (test_skips)
		printf(", %d skipped", test_skips);
	printf("\n");
	return test_failures ? 1 : 0;
}

#endif
