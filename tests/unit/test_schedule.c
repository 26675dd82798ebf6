// SPDX-License-Identifier: GPL-2.0
/*
 * Every group cgtma plans, for every built-in model, level and option (perf-metrics, SMT,
 * the NMI watchdog), placed on the PMU the way the kernel's x86 scheduler would: from the
 * events' encodings (not from the model's "counters", which this checks), the kernel's
 * constraint tables (arch/x86/events/intel/core.c: intel_skl_, intel_icl_ and
 * intel_glc/spr_event_constraints; AMD Zen: none for these events), and perf_assign_events()'s
 * greedy by weight. A group the kernel could not place is refused by perf_event_open
 * (validate_group()), or, beside the watchdog's pinned event, never runs.
 *
 * Then, per model and level, the nodes whose events are not all in one group: none at
 * levels 1 and 2.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "events.h"
#include "model.h"
#include "pfmtable.h"
#include "plan.h"
#include "test.h"

#define FIX(j) (1ull << (32 + (j)))
#define GEN(n) ((1ull << (n)) - 1)

enum match { M_FIXED, M_UEVENT, M_EVENT, M_RANGE, M_END };

/* One entry of a constraint table; masks are for 8 generic counters. */
struct kc {
	enum match how;
	unsigned lo, hi;
	unsigned long long mask;
};

/* fixed-counter events with a real event code may also use every generic counter */
static const struct kc skl[] = {
	{ M_FIXED, 0x00c0, 0, FIX(0) | 0xff }, { M_FIXED, 0x003c, 0, FIX(1) | 0xff },
	{ M_FIXED, 0x0300, 0, FIX(2) },	       { M_UEVENT, 0x01c0, 0, 0x2 },
	{ M_EVENT, 0xd0, 0, 0xf },	       { M_EVENT, 0xd1, 0, 0xf },
	{ M_EVENT, 0xd2, 0, 0xf },	       { M_EVENT, 0xcd, 0, 0xf },
	{ M_EVENT, 0xc6, 0, 0xf },	       { M_END, 0, 0, 0 },
};

static const struct kc icl[] = {
	{ M_FIXED, 0x00c0, 0, FIX(0) | 0xff }, { M_FIXED, 0x01c0, 0, FIX(0) | 0xff },
	{ M_FIXED, 0x0100, 0, FIX(0) },	       { M_FIXED, 0x003c, 0, FIX(1) | 0xff },
	{ M_FIXED, 0x0300, 0, FIX(2) },	       { M_FIXED, 0x0400, 0, FIX(3) },
	{ M_RANGE, 0x03, 0x0a, 0xf },	       { M_RANGE, 0x1f, 0x28, 0xf },
	{ M_EVENT, 0x32, 0, 0xf },	       { M_RANGE, 0x48, 0x54, 0xf },
	{ M_RANGE, 0x60, 0x8b, 0xf },	       { M_UEVENT, 0x04a3, 0, 0xff },
	{ M_UEVENT, 0x10a3, 0, 0xff },	       { M_UEVENT, 0x14a3, 0, 0xff },
	{ M_EVENT, 0xa3, 0, 0xf },	       { M_RANGE, 0xa8, 0xb0, 0xf },
	{ M_RANGE, 0xb7, 0xbd, 0xf },	       { M_RANGE, 0xd0, 0xe6, 0xf },
	{ M_EVENT, 0xef, 0, 0xf },	       { M_RANGE, 0xf0, 0xf4, 0xf },
	{ M_END, 0, 0, 0 },
};

/* Sapphire Rapids and Granite Rapids (Golden and Redwood Cove) */
static const struct kc glc[] = {
	{ M_FIXED, 0x00c0, 0, FIX(0) | 0xff }, { M_FIXED, 0x0100, 0, FIX(0) },
	{ M_FIXED, 0x003c, 0, FIX(1) | 0xff }, { M_FIXED, 0x0300, 0, FIX(2) },
	{ M_FIXED, 0x0400, 0, FIX(3) },	       { M_EVENT, 0x2e, 0, 0xff },
	{ M_EVENT, 0x3c, 0, 0xff },	       { M_RANGE, 0x01, 0x8f, 0xf },
	{ M_UEVENT, 0x01a3, 0, 0xf },	       { M_UEVENT, 0x02a3, 0, 0xf },
	{ M_UEVENT, 0x08a3, 0, 0xf },	       { M_UEVENT, 0x04a4, 0, 0x1 },
	{ M_UEVENT, 0x08a4, 0, 0x1 },	       { M_UEVENT, 0x02cd, 0, 0x1 },
	{ M_EVENT, 0xce, 0, 0x1 },	       { M_RANGE, 0xd0, 0xdf, 0xf },
	{ M_RANGE, 0x90, 0xfe, 0xff },	       { M_END, 0, 0, 0 },
};

/* arm64 (armv8pmu_get_event_idx): CPU_CYCLES on the cycle counter when free, else any */
static const struct kc armv8[] = {
	{ M_UEVENT, 0x0011, 0, FIX(0) | 0xff }, { M_END, 0, 0, 0 },
};

struct pmu {
	const char *model;
	const struct kc *table;	/* NULL: no constraints (AMD's for these events) */
	int generic, generic_smt;
	unsigned watchdog;	/* the config of the NMI watchdog's cycles event */
};

static const struct pmu pmus[] = {
	{ "skx", skl, 8, 4, 0x3c },	     { "icx", icl, 8, 8, 0x3c },
	{ "spr", glc, 8, 8, 0x3c },	     { "gnr", glc, 8, 8, 0x3c },
	{ "zen4", NULL, 6, 6, 0x76 },	     { "zen5", NULL, 6, 6, 0x76 },
	{ "generic", NULL, 2, 2, 0x3c },     { "neoverse-n1", armv8, 6, 6, 0x11 },
	{ "neoverse-v1", armv8, 6, 6, 0x11 }, { "neoverse-n2", armv8, 6, 6, 0x11 },
	{ "neoverse-v2", armv8, 6, 6, 0x11 }, { "neoverse-n3", armv8, 6, 6, 0x11 },
	{ "neoverse-v3", armv8, 6, 6, 0x11 },
};

/* X86_RAW_EVENT_MASK: event, umask, edge, inv, cmask */
#define RAW_MASK (0xffffull | 1ull << 18 | 1ull << 23 | 0xffull << 24)

static unsigned long long constraint(const struct pmu *pmu, unsigned long long config, int ngen)
{
	const struct kc *c;

	if (pmu->table) {
		for (c = pmu->table; c->how != M_END; c++) {
			bool hit = false;

			switch (c->how) {
			case M_FIXED: hit = (config & RAW_MASK) == c->lo; break;
			case M_UEVENT: hit = (config & 0xffff) == c->lo; break;
			case M_EVENT: hit = (config & 0xff) == c->lo; break;
			case M_RANGE: hit = (config & 0xff) >= c->lo && (config & 0xff) <= c->hi; break;
			default: break;
			}
			if (hit)
				return (c->mask & ~GEN(32)) | (c->mask & GEN(ngen));
		}
	}
	return GEN(ngen);
}

/* perf_assign_events(): by increasing weight; a fixed counter first, else the lowest. */
static bool kernel_assign(const unsigned long long *c, int n)
{
	unsigned long long used = 0;
	int done = 0;

	for (int w = 1; w <= 64; w++)
		for (int i = 0; i < n; i++) {
			unsigned long long free = c[i] & ~used;

			if (__builtin_popcountll(c[i]) != w)
				continue;
			if (!free)
				return false;
			if (free >> 32)
				free &= ~GEN(32);
			used |= free & -free;
			done++;
		}
	return done == n;
}

static bool is_metric(unsigned long long config)
{
	return (config & 0xff) == 0 && (config >> 8 & 0xff) >= 0x80;
}

static int nr_checked;

static void check_groups(const struct pmu *pmu, const struct plan *p, const char *where)
{
	struct perf_event_attr attr;
	char err[EVENT_ERR_LEN];
	int ngen = p->opts.smt ? pmu->generic_smt : pmu->generic;

	for (int i = 0; i < p->nr_events;) {
		unsigned long long c[64];
		int n = 0, start = i;
		bool metrics = false, others = false;

		/* the watchdog's pinned cycles event sits beside every group */
		if (p->opts.nmi_watchdog)
			c[n++] = constraint(pmu, pmu->watchdog, ngen);
		for (; i < p->nr_events && p->events[i].group == p->events[start].group; i++) {
			CHECK(event_parse(p->events[i].encoding, &attr, err, sizeof(err)) == 0,
			      "%s: %s: %s", where, p->events[i].name, err);
			if (is_metric(attr.config)) {
				/* perf's order: slots, the metrics events, the others */
				CHECK(!others, "%s: %s after other events", where,
				      p->events[i].name);
				metrics = true;
				continue;	/* the metric pseudo-counters */
			}
			others |= i > start;
			CHECK(n < 64, "%s: group too long", where);
			if (n < 64)
				c[n++] = constraint(pmu, attr.config, ngen);
		}
		if (metrics) {
			event_parse(p->events[start].encoding, &attr, err, sizeof(err));
			CHECK((attr.config & 0xffff) == 0x0400, "%s: group %d: metrics led by %s",
			      where, p->events[start].group, p->events[start].name);
		}
		CHECK(kernel_assign(c, n), "%s: group %d (%d events from %s) cannot be scheduled",
		      where, p->events[start].group, i - start, p->events[start].name);
		nr_checked++;
	}
}

/* One model's plans; libpfm4 reads LIBPFM_FORCE_PMU once per process, so in a child. */
static int plans_of(const struct pmu *pmu)
{
	const char *const *names = model_builtin_names();
	int nr_plans = 0;

	{
		struct model *m;
		bool known = false;

		for (int i = 0; names[i]; i++)
			known |= !strcmp(names[i], pmu->model);
		CHECK(known, "no built-in model %s", pmu->model);
		if (!known || model_load_builtin(pmu->model, &m))
			return 1;
		if (model_libpfm4_pmu(m))
			setenv("LIBPFM_FORCE_PMU", model_libpfm4_pmu(m), 1);
		for (int level = 1; level <= (model_max_level(m) ? model_max_level(m) : 1); level++)
			for (int pm = 0; pm <= model_has_perf_metrics(m); pm++)
				for (int smt = 0; smt <= 1; smt++)
					for (int wd = 0; wd <= 1; wd++) {
						struct model_options o = {
							.level = level, .perf_metrics = pm,
							.smt = smt, .nmi_watchdog = wd,
						};
						char where[96];
						struct plan *p;

						snprintf(where, sizeof(where),
							 "%s l%d perf-metrics %d smt %d watchdog %d",
							 pmu->model, level, pm, smt, wd);
						CHECK(plan_new(m, &o, &p) == 0, "%s: no plan", where);
						if (!p)
							continue;
						check_groups(pmu, p, where);
						nr_plans++;
						plan_free(p);
					}
		model_free(m);
	}
	printf("# %s: %d plans, %d groups scheduled\n", pmu->model, nr_plans, nr_checked);
	CHECK(nr_plans >= 4, "only %d plans", nr_plans);
	return test_failures;
}

static void test_every_plan(void)
{
	for (size_t k = 0; k < sizeof(pmus) / sizeof(pmus[0]); k++) {
		int status = -1;
		pid_t pid;

		if (!model_encodes_here(pmus[k].model))
			continue;
		fflush(stdout);
		pid = fork();
		if (pid == 0) {
			/* its own verdict: the parent counts the models before it that failed */
			test_failures = 0;
			_exit(plans_of(&pmus[k]) + fflush(stdout) ? 1 : 0);
		}
		CHECK(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
		      WEXITSTATUS(status) == 0, "%s: groups the kernel cannot schedule",
		      pmus[k].model);
	}
}

/*
 * Skylake-SP's level-2 nodes that read more events than its PMU has counters (8, 4 with
 * SMT), whatever the grouping: Backend_Bound's children compute Backend_Bound, which reads
 * the other three level-1 nodes' events as well.
 */
static bool too_big_for_skx(const char *model, int level, bool smt, const char *node)
{
	static const char *const big[] = { "Backend_Bound.Memory_Bound",
					   "Backend_Bound.Core_Bound", NULL };
	static const char *const big_smt[] = { "Bad_Speculation.Branch_Mispredicts",
					       "Bad_Speculation.Machine_Clears", NULL };

	if (strcmp(model, "skx") || level != 2)
		return false;
	for (int i = 0; big[i]; i++)
		if (!strcmp(node, big[i]) || (smt && !strcmp(node, big_smt[i])))
			return true;
	return false;
}

/* Nodes whose events span groups, listed; none at levels 1 and 2 but where none can be. */
static void test_nodes_in_one_group(void)
{
	const char *const *names = model_builtin_names();

	for (int i = 0; names[i]; i++) {
		struct model *m;

		if (model_load_builtin(names[i], &m))
			continue;
		for (int level = 1; level <= model_max_level(m); level++)
			for (int pm = 0; pm <= model_has_perf_metrics(m); pm++)
				for (int smt = 0; smt <= 1; smt++)
				for (int wd = 0; wd <= 1; wd++) {
					struct model_options o = { .level = level,
								   .perf_metrics = pm,
								   .smt = smt, .nmi_watchdog = wd };
					struct plan *p;
					int split = 0;

					if (plan_new(m, &o, &p))
						continue;
					for (int n = 0; n < p->nr_nodes; n++) {
						if (!p->nodes[n].split)
							continue;
						split++;
						printf("# %s l%d perf-metrics %d smt %d watchdog %d: "
						       "%s split: %s\n", names[i], level, pm, smt, wd,
						       p->nodes[n].full_name,
						       p->nodes[n].split_reason);
						CHECK(level > 2 || too_big_for_skx(names[i], level, smt,
							p->nodes[n].full_name),
						      "%s l%d pm%d smt%d wd%d: %s split", names[i], level,
						      pm, smt, wd, p->nodes[n].full_name);
						CHECK(p->nodes[n].group < 0 &&
						      strstr(p->nodes[n].split_reason, "counters they can use"),
						      "%s: %s", p->nodes[n].full_name,
						      p->nodes[n].split_reason);
					}
					/* a node not split reads one group's events */
					for (int n = 0; n < p->nr_nodes; n++) {
						const int *ev;
						int ne = plan_node_events(p, n, &ev);

						for (int j = 0; !p->nodes[n].split && j < ne; j++)
							CHECK(p->events[ev[j]].group == p->nodes[n].group,
							      "%s l%d: %s reads %s of group %d",
							      names[i], level, p->nodes[n].full_name,
							      p->events[ev[j]].name,
							      p->events[ev[j]].group);
					}
					plan_free(p);
				}
		model_free(m);
	}
}

int main(void)
{
	test_every_plan();
	test_nodes_in_one_group();
	return test_done("schedule");
}
