// SPDX-License-Identifier: GPL-2.0
/*
 * --sample without a list: the nodes' own sample events.
 *
 * - The model data: every node of every Intel model at levels 1-2 names toplev's sample
 *   events (pmu-tools commit 2568760f, the `sample = [...]` of each class in
 *   {skx,icx,spr,gnr}_server_ratios.py; a few are pinned here by hand), every one encodes
 *   for the model's PMU (libpfm4 forced to it, as a live run does), and a precise one (":pp")
 *   is a PEBS event there. AMD's and Arm's nodes name their main event.
 * - The selection: from a plan and trees (value, flag per node), the events of the nodes at
 *   or over their threshold in any tree, each once, leaving out those already sampled, at
 *   most as many as there is room for.
 * - The CSV's form: toplev's names, lowercase, a space between.
 */
#include <math.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "events.h"
#include "model_internal.h"
#include "nodesample.h"
#include "pfmtable.h"
#include "test.h"

static int node_index(const struct plan *p, const char *name)
{
	for (int i = 0; i < p->nr_nodes; i++)
		if (!strcmp(p->nodes[i].name, name))
			return i;
	return -1;
}

static struct plan *plan_of(const char *model, int level, struct model **m)
{
	struct model_options o = { .level = level };
	struct plan *p = NULL;

	CHECK(model_load_builtin(model, m) == 0, "%s does not load", model);
	if (*m)
		CHECK(plan_new(*m, &o, &p) == 0, "%s: no plan at level %d", model, level);
	return p;
}

/* toplev's Sample column for some nodes, as its ratio files list them. */
static const struct {
	const char *model, *node, *column;
} toplev[] = {
	{ "icx", "Frontend_Bound", "frontend_retired.latency_ge_4:pp" },
	{ "icx", "Fetch_Latency", "frontend_retired.latency_ge_16:pp frontend_retired.latency_ge_8:pp" },
	{ "icx", "Branch_Mispredicts", "br_misp_retired.all_branches" },
	{ "icx", "Memory_Bound", "" },
	{ "icx", "L2_Bound", "mem_load_retired.l2_hit" },
	{ "icx", "L3_Bound", "mem_load_retired.l3_hit:pp" },
	{ "skx", "Branch_Mispredicts", "br_misp_retired.all_branches:pp" },
	{ "spr", "Backend_Bound", "topdown.backend_bound_slots" },
	{ "gnr", "Machine_Clears", "machine_clears.count" },
	{ "gnr", "Heavy_Operations", "uops_retired.heavy" },
};

static void check_columns(void)
{
	for (size_t i = 0; i < sizeof(toplev) / sizeof(toplev[0]); i++) {
		struct model *m = NULL;
		struct plan *p = plan_of(toplev[i].model, 3, &m);
		char col[512];
		int n = p ? node_index(p, toplev[i].node) : -1;

		CHECK(n >= 0, "%s: no node %s", toplev[i].model, toplev[i].node);
		if (n >= 0) {
			node_sample_column(p, n, col, sizeof(col));
			CHECK(!strcmp(col, toplev[i].column), "%s %s: Sample '%s', toplev's '%s'",
			      toplev[i].model, toplev[i].node, col, toplev[i].column);
		}
		plan_free(p);
		model_free(m);
	}
}

/* In a child (libpfm4 initializes once): every node's sample events of one model encode. */
static void check_model_events(const char *name)
{
	char err[EVENT_ERR_LEN];
	struct model *m;
	int with = 0;

	CHECK(model_load_builtin(name, &m) == 0, "%s does not load", name);
	if (!m)
		return;
	if (m->pmu.libpfm4)
		setenv("LIBPFM_FORCE_PMU", m->pmu.libpfm4, 1);
	for (int i = 0; i < m->nr_nodes; i++) {
		const struct model_node *n = &m->nodes[i];

		with += n->nr_samples > 0;
		for (int k = 0; k < n->nr_samples; k++) {
			const struct model_event *e = &m->events[n->sample_events[k]];
			struct perf_event_attr attr;
			int ret = event_parse(e->encoding, &attr, err, sizeof(err));

			CHECK(ret == 0, "%s %s: sample %s (%s): %s", name, n->name, e->name,
			      e->encoding, err);
			CHECK(attr.type != PERF_TYPE_SOFTWARE, "%s %s: sample %s is a software event",
			      name, n->name, e->name);
			CHECK(!n->sample_precise[k] || !strcmp(m->vendor, "intel"),
			      "%s %s: %s precise on a PMU without PEBS", name, n->name, e->name);
		}
		/* Intel: toplev names some for most nodes; AMD, Arm: every node its main event. */
		if (strcmp(m->vendor, "intel"))
			CHECK(n->nr_samples == 1, "%s %s: %d sample events, want its main one", name,
			      n->name, n->nr_samples);
	}
	if (!strcmp(m->vendor, "intel"))
		CHECK(with >= m->nr_nodes / 3, "%s: %d of %d nodes with sample events", name, with,
		      m->nr_nodes);
	model_free(m);
}

static void check_models(void)
{
	const char *const *names = model_builtin_names();

	for (int i = 0; names[i]; i++) {
		int status;
		pid_t pid;

		if (!model_encodes_here(names[i]))
			continue;
		fflush(stdout);
		pid = fork();
		if (pid == 0) {
			test_failures = 0;
			check_model_events(names[i]);
			fflush(stdout);
			_exit(test_failures ? 1 : 0);
		}
		CHECK(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
		      WEXITSTATUS(status) == 0, "model %s's sample events", names[i]);
	}
}

/* A tree with every node counted, under threshold but those listed. */
struct tree {
	struct tma_result r;
	bool counted[256], above[256];
	double value[256];
};

static void tree_init(struct tree *t, const struct plan *p, const char *const *over)
{
	memset(t, 0, sizeof(*t));
	t->r.counted = t->counted;
	t->r.above = t->above;
	t->r.value = t->value;
	t->r.bottleneck = -1;
	for (int i = 0; i < p->nr_nodes; i++)
		t->counted[i] = true;
	for (; over && *over; over++) {
		int n = node_index(p, *over);

		CHECK(n >= 0, "no node %s", *over);
		if (n >= 0) {
			t->above[n] = true;
			t->value[n] = 0.5;
		}
	}
}

static void check_pick(void)
{
	struct model *m = NULL;
	struct plan *p = plan_of("icx", 3, &m);
	struct node_sample_pick out[8];
	struct tree a, b;
	const struct tma_result *trees[2] = { &a.r, &b.r };
	char name[256];
	int n;

	if (!p)
		return;
	CHECK(p->nr_nodes < 256, "icx: %d nodes", p->nr_nodes);
	/* Nothing over threshold: nothing to add. */
	tree_init(&a, p, NULL);
	CHECK_INT(node_samples_pick(p, trees, 1, NULL, 0, 8, out), 0);

	/* One cgroup frontend bound, another branch mispredicting: both nodes' events, in the
	 * tree's order, Fetch_Latency's two after Frontend_Bound's one. */
	tree_init(&a, p, (const char *[]){ "Frontend_Bound", "Fetch_Latency", NULL });
	tree_init(&b, p, (const char *[]){ "Bad_Speculation", "Branch_Mispredicts", NULL });
	n = node_samples_pick(p, trees, 2, NULL, 0, 8, out);
	CHECK_INT(n, 4);
	{
		static const char *const want[] = {
			"FRONTEND_RETIRED.LATENCY_GE_4:pp", "FRONTEND_RETIRED.LATENCY_GE_16:pp",
			"FRONTEND_RETIRED.LATENCY_GE_8:pp", "BR_MISP_RETIRED.ALL_BRANCHES",
		};

		for (int i = 0; i < n && i < 4; i++) {
			node_sample_name(&out[i].s, name, sizeof(name));
			CHECK(!strcmp(name, want[i]), "pick %d: %s, want %s", i, name, want[i]);
		}
		CHECK(n == 4 && out[0].s.precise == 2 && out[3].s.precise == 0 &&
		      !strcmp(out[3].s.encoding, "BR_MISP_RETIRED:ALL_BRANCHES"),
		      "precision or encoding: %d, %d, %s", out[0].s.precise, out[3].s.precise,
		      n == 4 ? out[3].s.encoding : "?");
		CHECK(n == 4 && !strcmp(p->nodes[out[3].node].name, "Branch_Mispredicts"),
		      "the node of the last pick");
	}

	/* Already sampled ones are left out; room limits the rest. */
	{
		char *have[] = { "FRONTEND_RETIRED.LATENCY_GE_4:pp", "cycles" };

		n = node_samples_pick(p, trees, 2, have, 2, 2, out);
		CHECK_INT(n, 2);
		node_sample_name(&out[0].s, name, sizeof(name));
		CHECK(!strcmp(name, "FRONTEND_RETIRED.LATENCY_GE_16:pp"), "first left: %s", name);
	}

	/* An event two nodes share comes once (Branch_Resteers and Branch_Mispredicts). */
	tree_init(&a, p, (const char *[]){ "Frontend_Bound", "Fetch_Latency", "Branch_Resteers",
					   "Bad_Speculation", "Branch_Mispredicts", NULL });
	n = node_samples_pick(p, trees, 1, NULL, 0, 8, out);
	for (int i = 0; i < n; i++)
		for (int j = 0; j < i; j++)
			CHECK(strcmp(out[i].s.event, out[j].s.event) || out[i].s.precise !=
			      out[j].s.precise, "%s picked twice", out[i].s.event);
	/* A node not counted in a tree is not over its threshold there. */
	tree_init(&a, p, (const char *[]){ "Bad_Speculation", "Branch_Mispredicts", NULL });
	a.counted[node_index(p, "Branch_Mispredicts")] = false;
	CHECK_INT(node_samples_pick(p, trees, 1, NULL, 0, 8, out), 0);
	plan_free(p);
	model_free(m);
}

int main(void)
{
	check_columns();
	check_models();
	check_pick();
	return test_done("nodesample");
}
