// SPDX-License-Identifier: GPL-2.0
/* "Did you mean ...?": git's weights, what is offered and how it reads. */
#include "suggest.h"
#include "test.h"

static void offered(const char *typo, const char *const *cands, const char *want)
{
	struct suggest sg;
	char buf[256];

	suggest_init(&sg, typo);
	for (int i = 0; cands[i]; i++)
		CHECK_INT(suggest_add(&sg, cands[i]), 0);
	suggest_format(&sg, buf, sizeof(buf));
	CHECK(strcmp(buf, want) == 0, "'%s': got \"%s\", want \"%s\"", typo, buf, want);
	suggest_release(&sg);
}

int main(void)
{
	static const char *const containers[] = {
		"iperf-client", "iperf-server", "hog", "web", NULL,
	};
	static const char *const events[] = {
		"cpu-clock", "task-clock", "cycles", "cpu-cycles", "instructions",
		"context-switches", "cs", "cpu-migrations", NULL,
	};
	static const char *const many[] = { "a1", "a2", "a3", "a4", "a5", "a6", "a7", NULL };
	static const char *const dup[] = { "web", "web", "hog", NULL };

	/* Swapped neighbours cost nothing; replaced 2, added 1, dropped 3. */
	CHECK_INT(suggest_distance("clinet", "client"), 0);
	CHECK_INT(suggest_distance("cycels", "cycles"), 0);
	CHECK_INT(suggest_distance("abc", "abd"), 2);
	CHECK_INT(suggest_distance("abc", "abcd"), 1);
	CHECK_INT(suggest_distance("abcd", "abc"), 3);
	CHECK_INT(suggest_distance("", "abc"), 3);
	CHECK_INT(suggest_distance("ABC", "abc"), 0);

	offered("iperf-clinet", containers, "did you mean 'iperf-client'?");
	offered("iperf-srever", containers, "did you mean 'iperf-server'?");
	/* Nothing close: nothing offered. */
	offered("database", containers, "");
	offered("cycels", events, "did you mean 'cycles'?");
	offered("instrutions", events, "did you mean 'instructions'?");
	/* A prefix is the best score: every name it begins. */
	offered("cpu-", events, "did you mean 'cpu-clock', 'cpu-cycles' or 'cpu-migrations'?");
	offered("iperf", containers, "did you mean 'iperf-client' or 'iperf-server'?");
	/* At most SUGGEST_MAX names, then "or others". */
	offered("a", many, "did you mean 'a1', 'a2', 'a3', 'a4', 'a5' or others?");
	/* The typo itself is no suggestion; a name seen twice is offered once. */
	offered("we", dup, "did you mean 'web'?");
	offered("web", dup, "");
	return test_done("suggest");
}
