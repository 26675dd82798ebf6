// SPDX-License-Identifier: GPL-2.0
/*
 * user/profile.c: interning (the same fields give the same index), counting per type and
 * stack, a type added after samples, frame names for resolved and unresolved frames, and the
 * folded writer's merging, order and escaping; profile_merge() sums profiles, their spans and
 * their losses; the losses as the terminal and stderr say them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "profile.h"
#include "test.h"

static char *folded_as(const struct profile *p, int type, bool with_task)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	CHECK_INT(profile_write_folded(p, type, with_task, f), 0);
	fclose(f);
	return buf;
}

static char *folded(const struct profile *p, int type)
{
	return folded_as(p, type, false);
}

int main(void)
{
	struct profile p = PROFILE_INIT;
	struct profile_mapping bin = { .start = 0x400000, .limit = 0x401000, .file_offset = 0x1000,
				       .file = "/usr/bin/spin", .build_id = "ab12" };
	int t, t2, web, db, m, spin, spin2, main_, raw, noloc;
	char name[64], *out;

	t = profile_type(&p, "cpu-clock", 0);
	CHECK_INT(t, 0);
	CHECK_INT(profile_type(&p, "cpu-clock", 0), t);
	web = profile_scope(&p, "web", "/sys/web", "web", NULL);
	db = profile_scope(&p, "/db;x", "/db;x", NULL, NULL);
	CHECK_INT(profile_scope(&p, "web", "/sys/web", "web", NULL), web);
	CHECK(strcmp(p.scopes[web].container, "web") == 0, "container %s", p.scopes[web].container);
	CHECK(p.scopes[db].pod == NULL, "no pod");
	m = profile_mapping(&p, &bin);
	CHECK_INT(profile_mapping(&p, &bin), m);
	CHECK(p.maps[m].file != bin.file, "the profile holds its own copy");

	spin = profile_location(&p, &(struct profile_location){ .addr = 0x400100, .mapping = m,
								 .func = "spin" });
	spin2 = profile_location(&p, &(struct profile_location){ .addr = 0x400104, .mapping = m,
								  .func = "spin" });
	main_ = profile_location(&p, &(struct profile_location){ .addr = 0x400200, .mapping = m,
								  .func = "main" });
	raw = profile_location(&p, &(struct profile_location){ .addr = 0x400abc, .mapping = m });
	noloc = profile_location(&p, &(struct profile_location){ .addr = 0xdead, .mapping = -1 });
	CHECK(spin != spin2, "two addresses are two locations");
	CHECK_INT(profile_location(&p, &(struct profile_location){ .addr = 0x400100, .mapping = m,
								    .func = "spin" }), spin);
	CHECK(strcmp(profile_frame_name(&p, raw, name, sizeof(name)), "spin+0x1abc") == 0, "%s", name);
	CHECK(strcmp(profile_frame_name(&p, noloc, name, sizeof(name)), "[unknown]+0xdead") == 0,
	      "%s", name);

	CHECK_INT(profile_add(&p, web, (int[]){ spin, main_ }, 2, t, 3), 0);
	CHECK_INT(profile_add(&p, web, (int[]){ spin, main_ }, 2, t, 2), 0);
	CHECK_INT(profile_add(&p, web, (int[]){ spin2, main_ }, 2, t, 1), 0);
	CHECK_INT(profile_add(&p, db, (int[]){ raw, main_ }, 2, t, 7), 0);
	CHECK_INT(profile_add(&p, db, (int[]){ noloc }, 1, t, 1), 0);
	CHECK_INT(p.nr_samples, 4);
	CHECK_INT(p.samples[0].values[t], 5);
	CHECK_INT(profile_add(&p, 99, (int[]){ spin }, 1, t, 1), -EINVAL);
	CHECK_INT(profile_add(&p, web, (int[]){ spin }, 1, 5, 1), -EINVAL);

	/* A second type: old samples count 0 of it, new counts go to it alone. */
	t2 = profile_type(&p, "cycles", 100000);
	CHECK_INT(t2, 1);
	CHECK_INT(p.samples[0].values[t2], 0);
	CHECK_INT(profile_add(&p, web, (int[]){ spin, main_ }, 2, t2, 4), 0);
	CHECK_INT(p.samples[0].values[t], 5);
	CHECK_INT(p.samples[0].values[t2], 4);

	out = folded(&p, t);
	CHECK(strcmp(out, "/db_x;[unknown]+0xdead 1\n"
			  "/db_x;main;spin+0x1abc 7\n"
			  "web;main;spin 6\n") == 0, "folded:\n%s", out);
	free(out);
	out = folded(&p, t2);
	CHECK(strcmp(out, "web;main;spin 4\n") == 0, "folded:\n%s", out);
	free(out);

	/* Merged into an empty profile: the same stacks; twice: every count doubled. */
	{
		struct profile sum = PROFILE_INIT;

		p.start_ns = 1000;
		p.duration_ns = 500;
		CHECK_INT(profile_merge(&sum, &p), 0);
		out = folded(&sum, t);
		CHECK(strcmp(out, "/db_x;[unknown]+0xdead 1\n"
				  "/db_x;main;spin+0x1abc 7\n"
				  "web;main;spin 6\n") == 0, "merged:\n%s", out);
		free(out);
		CHECK_INT(sum.start_ns, 1000);
		CHECK_INT(sum.duration_ns, 500);
		p.start_ns = 1200;
		p.duration_ns = 800;
		CHECK_INT(profile_merge(&sum, &p), 0);
		CHECK_INT(sum.nr_samples, 4);
		CHECK_INT(sum.samples[0].values[t2], 8);
		CHECK(strcmp(sum.maps[0].build_id, "ab12") == 0, "build id %s",
		      sum.maps[0].build_id);
		/* The span covers both: 1000 to 2000. */
		CHECK_INT(sum.start_ns, 1000);
		CHECK_INT(sum.duration_ns, 1000);
		profile_release(&sum);
	}

	/*
	 * Threads: a sample per (scope, pid, comm, stack); folded, one line per stack without
	 * --folded-pid, a COMM-PID frame after the scope's with it (none where not known);
	 * merged, the same samples.
	 */
	{
		static const char by_task[] = "/a;-42;f 13\n"
					      "/a;f 11\n"
					      "/a;spin_x-42;f 3\n"
					      "/a;spin_x-43;f 5\n"
					      "/a;worker-42;f 7\n";
		struct profile q = PROFILE_INIT, sum = PROFILE_INIT;
		int tq = profile_type(&q, "cpu-clock", 0);
		int sq = profile_scope(&q, "/a", "/a", NULL, NULL);
		int f = profile_location(&q, &(struct profile_location){ .addr = 1, .mapping = -1,
									  .func = "f" });

		CHECK_INT(profile_add_task(&q, sq, 42, "spin;x", (int[]){ f }, 1, tq, 2), 0);
		CHECK_INT(profile_add_task(&q, sq, 42, "spin;x", (int[]){ f }, 1, tq, 1), 0);
		CHECK_INT(profile_add_task(&q, sq, 43, "spin;x", (int[]){ f }, 1, tq, 5), 0);
		CHECK_INT(profile_add_task(&q, sq, 42, "worker", (int[]){ f }, 1, tq, 7), 0);
		CHECK_INT(profile_add(&q, sq, (int[]){ f }, 1, tq, 11), 0);
		CHECK_INT(profile_add_task(&q, sq, 42, "", (int[]){ f }, 1, tq, 13), 0);
		CHECK_INT(q.nr_samples, 5);
		CHECK_INT(q.samples[0].pid, 42);
		CHECK_STR(q.samples[0].comm, "spin;x");
		CHECK_INT(q.samples[0].values[tq], 3);
		CHECK(q.samples[3].comm == NULL && q.samples[3].pid == 0, "no task");
		out = folded(&q, tq);
		CHECK_STR(out, "/a;f 39\n");
		free(out);
		out = folded_as(&q, tq, true);
		CHECK_STR(out, by_task);
		free(out);
		CHECK_INT(profile_merge(&sum, &q), 0);
		CHECK_INT(sum.nr_samples, 5);
		out = folded_as(&sum, tq, true);
		CHECK_STR(out, by_task);
		free(out);
		profile_release(&sum);
		profile_release(&q);
	}

	/* Losses: said only where there are some, each kind with its count; merged, summed. */
	{
		struct profile a = PROFILE_INIT, b = PROFILE_INIT;
		char buf[256];

		CHECK(!profile_lost_any(&a.lost), "nothing lost");
		CHECK_STR(profile_lost_text(&a.lost, buf, sizeof(buf)), "");
		a.lost.samples = 3;
		CHECK(profile_lost_any(&a.lost), "samples lost");
		CHECK_STR(profile_lost_text(&a.lost, buf, sizeof(buf)),
			  "3 samples lost: the kernel's counts map was full (raise --sample-max)");
		b.lost.user_stacks = 5;
		CHECK_STR(profile_lost_text(&b.lost, buf, sizeof(buf)),
			  "5 user and 0 kernel stacks kept without their frames: the stack maps had "
			  "no room for them");
		b.lost.kernel_stacks = 2;
		CHECK_INT(profile_merge(&a, &b), 0);
		CHECK_INT(a.lost.samples, 3);
		CHECK_INT(a.lost.user_stacks, 5);
		CHECK_INT(a.lost.kernel_stacks, 2);
		CHECK_STR(profile_lost_text(&a.lost, buf, sizeof(buf)),
			  "3 samples lost: the kernel's counts map was full (raise --sample-max); 5 "
			  "user and 2 kernel stacks kept without their frames: the stack maps had no "
			  "room for them");
		/* Cut to the buffer, never past it. */
		CHECK_INT((int)strlen(profile_lost_text(&a.lost, buf, 10)), 9);
		profile_release(&a);
		profile_release(&b);
	}

	profile_release(&p);
	CHECK_INT(p.nr_samples, 0);
	return test_done("profile");
}
