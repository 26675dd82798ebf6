/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A profile built by hand, as the sampler would build one: two events, two cgroups (one a
 * container in a pod), a binary and the kernel, resolved and unresolved frames. The tests
 * of its consumers (pprof, the record, report, the HTML flame graphs) read it.
 *
 *   web (/web, container web, pod shop/web-0): main > spin_web      cpu-clock 7, cycles 3
 *                                              main > spin_web > [k] 1
 *   /db:                                       main > spin_db       cpu-clock 2
 *                                              main > spin+0x1abc   cpu-clock 1 (unresolved)
 */
#ifndef CGTMA_TEST_PROFILE_FIXTURE_H
#define CGTMA_TEST_PROFILE_FIXTURE_H

#include "profile.h"

#define FIX_START_NS 1767225600000000000ULL
#define FIX_DURATION_NS 5000000000ULL
#define FIX_LOST_SAMPLES 3
#define FIX_LOST_USTACKS 5
#define FIX_LOST_KSTACKS 2

struct fixture_ids {
	int clock, cycles;		/* types */
	int web, db;			/* scopes */
	int bin, kernel;		/* mappings */
	int spin_web, spin_db, main_, raw, kfunc;	/* locations */
};

/* 0, or -1 when something could not be added. */
static inline int profile_fixture(struct profile *p, struct fixture_ids *id)
{
	struct profile_mapping bin = { .start = 0x400000, .limit = 0x402000,
				       .file_offset = 0x1000, .file = "/usr/bin/spin",
				       .build_id = "ab12cd34" };
	struct profile_mapping kernel = { .start = 0xffffffff81000000,
					  .limit = 0xffffffff82000000,
					  .file = "[kernel.kallsyms]" };
	int err = 0;

	*p = (struct profile)PROFILE_INIT;
	p->start_ns = FIX_START_NS;
	p->duration_ns = FIX_DURATION_NS;
	p->lost = (struct profile_lost){ FIX_LOST_SAMPLES, FIX_LOST_USTACKS, FIX_LOST_KSTACKS };
	id->clock = profile_type(p, "cpu-clock", 0);
	id->cycles = profile_type(p, "cycles", 100000);
	id->web = profile_scope(p, "web", "/web", "web", "shop/web-0");
	id->db = profile_scope(p, "/db", "/db", NULL, NULL);
	id->bin = profile_mapping(p, &bin);
	id->kernel = profile_mapping(p, &kernel);
	id->spin_web = profile_location(p, &(struct profile_location){
		.addr = 0x400100, .mapping = id->bin, .func = "spin_web", .file = "spin.c",
		.line = 10 });
	id->spin_db = profile_location(p, &(struct profile_location){
		.addr = 0x400200, .mapping = id->bin, .func = "spin_db", .file = "spin.c",
		.line = 20 });
	id->main_ = profile_location(p, &(struct profile_location){
		.addr = 0x400300, .mapping = id->bin, .func = "main", .file = "spin.c",
		.line = 30 });
	id->raw = profile_location(p, &(struct profile_location){ .addr = 0x400abc,
								   .mapping = id->bin });
	id->kfunc = profile_location(p, &(struct profile_location){
		.addr = 0xffffffff81001234, .mapping = id->kernel, .func = "asm_sysvec" });
	if (id->clock < 0 || id->cycles < 0 || id->web < 0 || id->db < 0 || id->bin < 0 ||
	    id->kernel < 0 || id->spin_web < 0 || id->spin_db < 0 || id->main_ < 0 ||
	    id->raw < 0 || id->kfunc < 0)
		return -1;
	/* /web's samples in two threads of process 4242, /db's with no process known. */
	err |= profile_add_task(p, id->web, 4242, "web-srv", (int[]){ id->spin_web, id->main_ }, 2,
				id->clock, 7);
	err |= profile_add_task(p, id->web, 4242, "web-srv", (int[]){ id->spin_web, id->main_ }, 2,
				id->cycles, 3);
	err |= profile_add_task(p, id->web, 4242, "web-gc",
				(int[]){ id->kfunc, id->spin_web, id->main_ }, 3, id->clock, 1);
	err |= profile_add(p, id->db, (int[]){ id->spin_db, id->main_ }, 2, id->clock, 2);
	err |= profile_add(p, id->db, (int[]){ id->raw, id->main_ }, 2, id->clock, 1);
	return err ? -1 : 0;
}

#ifdef CGTMA_RECORD_H
/*
 * A --record file with samples, through cgtma's own record writer: an -e cpu-clock run of two
 * intervals and the summary over the cgroups /db and /web, with the fixture's profile
 * recorded before each interval (a reader sums them: every count doubled). 0 or -1.
 */
static inline int profile_fixture_record(const char *path)
{
	static const char *const events[] = { "cpu-clock" };
	static const char *const cgroups[] = { "/db", "/web" };
	struct run run = { .model = "events", .nr_events = 1, .event_names = events,
			   .start_time = FIX_START_NS / 1e9, .interval_ms = 1000, .cgroups = true,
			   .hostname = "testhost", .kernel = "6.1.0-test", .cpu = "Test CPU" };
	const struct cgtma_count second = { 1000000000, 1000000000, 1000000000 };
	struct interval iv = {};
	struct fixture_ids id;
	struct profile p;
	struct output *o;
	int err;

	if (profile_fixture(&p, &id) || output_record_open(path, &o)) {
		profile_release(&p);
		return -1;
	}
	err = o->ops->begin(o, &run);
	for (int i = 0; i < 3 && !err; i++) {
		struct scope *s;

		interval_clear(&iv);
		iv.summary = i == 2;
		iv.time = run.start_time + (i < 2 ? i + 1 : 2);
		iv.interval_s = i < 2 ? 1 : 2;
		s = interval_add_scope(&iv, &run, SCOPE_SYSTEM, NULL, -1);
		if (s)
			s->sum[0] = second;
		for (int c = 0; c < 2 && s; c++) {
			s = interval_add_scope(&iv, &run, SCOPE_CGROUP, cgroups[c], -1);
			if (s)
				s->sum[0] = (struct cgtma_count){ 400000000, second.enabled,
								  second.running };
		}
		if (!s)
			err = -1;
		else if (i < 2)
			err = outputs_profile(&o, 1, &p);
		if (!err)
			err = (iv.summary ? o->ops->summary : o->ops->interval)(o, &run, &iv);
	}
	output_close(o);
	interval_free(&iv);
	profile_release(&p);
	return err ? -1 : 0;
}
#endif

#endif
