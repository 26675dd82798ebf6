/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A model's plan for a run: which events, in which groups the PMU can schedule, which nodes
 * are reported, which flat metrics are computed, and what was left out (user/plan.c).
 * Errors are printed naming the model and the node; functions return 0 or -errno.
 */
#ifndef CGTMA_PLAN_H
#define CGTMA_PLAN_H

#include <stdbool.h>

#include "model.h"

struct model_options {
	int level;		/* report nodes of levels 1..level */
	bool perf_metrics;	/* the perf-metrics path (topdown_use_fixed) */
	bool smt;		/* smt_enabled */
	int reserved_counters;	/* generic counters taken by others */
	bool nmi_watchdog;	/* the NMI watchdog holds a counter (the model says which) */
	/*
	 * Arm: `slots` for expressions (perf's #slots) when above 0, else the model's width;
	 * cpu_part and cpu_revision, the MIDR's part and variant * 16 + revision of an Arm Ltd
	 * (implementer 0x41) CPU, 0 when unknown (offline, or another implementer).
	 */
	int slots;
	int cpu_part;
	int cpu_revision;
	/*
	 * The flat metrics: NULL, the model's default ones only (IPC, CPI, GHz); "", all of
	 * them (-m); else a comma-separated list of metric names and groups, matched without
	 * regard to case, whose metrics are added to the default ones (model_metrics_check()
	 * says which items match nothing; plan_new() ignores those).
	 */
	const char *metrics;
	/*
	 * metrics names metrics alone, exactly, none of their groups: a record's list of what
	 * its run computed (a group may share a metric's name: icx's Retire).
	 */
	bool metrics_by_name;
	/*
	 * The most events one run counts (CGTMA_MAX_EVENTS for a live run), 0 for no limit:
	 * with -m (metrics ""), where every metric needs more, the metric groups are taken in
	 * the model's order while the plan stays within it (plan->groups_left_out).
	 */
	int max_events;
	/*
	 * A plan for counting (a live run, list-events, a record's report): without -m or
	 * --metrics, each default metric only where its events leave the tree's counting as it
	 * is (plan->defaults_left_out). false (compute): every default metric.
	 */
	bool spare_tree;
};

struct plan_event {
	const char *name;	/* the model's name for it */
	const char *encoding;	/* an event specification, as `cgtma -e` takes */
	int group;		/* 0..nr_groups-1; events of a group are consecutive, leader first */
	bool fixed;		/* runs on a fixed counter */
	/*
	 * A copy of an earlier plan event (the same model event) in another group, there so
	 * that a node's events are counted together: what lists events by name shows the
	 * first copy only.
	 */
	bool duplicate;
};

struct plan_node {
	const char *name;	/* short name */
	const char *full_name;	/* Backend_Bound.Memory_Bound */
	int level;
	int parent;		/* index into plan->nodes, -1 for level 1 */
	const char *domain;
	const char *area;
	const char *desc;
	double maxval;		/* reported values are clamped to it; NAN when none */
	/*
	 * The group all its events are counted in, or -1 when they cannot fit one group
	 * (split): then its value mixes counts multiplexed at different times, and outputs
	 * flag it. Software models never split (their events are never multiplexed).
	 */
	int group;
	bool split;
	const char *split_reason;	/* why, when split (owned by the plan) */
};

struct plan_metric {
	const char *name;
	const char *unit;
	const char *desc;
	int nr_groups;
	const char *const *groups;	/* the model's metric groups it is in */
	bool is_default;	/* one of the model's default metrics, shown without -m */
	int group;		/* as plan_node's */
	bool split;
	const char *split_reason;
};

/* A model instantiated for one run. */
struct plan {
	const struct model *model;
	struct model_options opts;
	int nr_events;
	struct plan_event *events;
	int nr_groups;
	int nr_nodes;
	struct plan_node *nodes;	/* reported nodes, in tree order */
	int nr_metrics;
	struct plan_metric *metrics;	/* the default ones first, then those -m added */
	/*
	 * The groups each stage of planning filled, the tree's first, then the default
	 * metrics' (base), then those -m adds (all: nr_groups), and whether they cannot all be
	 * on the PMU's counters at once, so that the kernel time-shares them (each counted
	 * part of the time, and scaled). A later stage's units may join an earlier one's
	 * groups. Software events are never multiplexed.
	 */
	struct plan_stage {
		int nr_groups;
		bool multiplexed;
	} tree, base, all;
	/*
	 * What plan_new() left out, comma-separated, NULL for nothing. defaults_left_out: with
	 * spare_tree and neither -m nor --metrics, the default metrics whose events would
	 * change the tree's counting (a group that does not fit the counters beside the
	 * tree's, or one more group where the tree's multiplex already); -m counts them.
	 * groups_left_out: with -m under max_events, the metric groups (a metric's first
	 * group, else its name) that did not fit, where every metric needs nr_events_all
	 * events (else nr_events_all is nr_events).
	 */
	char *defaults_left_out;
	char *groups_left_out;
	int nr_events_all;
	void *priv;			/* compiled expressions, dependency sets */
};

/*
 * The events the reported nodes and the metrics need (transitively, under these options),
 * grouped as toplev does: each node's (and metric's) events in one group, events shared
 * between groups counted once in each, and every group one the kernel's x86 scheduler can
 * place on the PMU's counters (generic and fixed counters, each event's allowed counters,
 * the NMI watchdog's counter). A node whose events cannot fit one group is split over
 * several, and says why. Fails with -E2BIG naming the culprit when one event cannot be
 * scheduled at all.
 */
int plan_new(const struct model *m, const struct model_options *o, struct plan **pp);
void plan_free(struct plan *p);
/*
 * The deepest level below o->level at which the plan, with every metric o selects (none
 * left out), counts o->max_events events at most; 0 when there is none, or -errno.
 */
int plan_fitting_level(const struct model *m, const struct model_options *o);

/*
 * The plan events a reported node (or a metric) reads, through everything it computes:
 * returns how many, with their plan event indices in *events (owned by the plan).
 */
int plan_node_events(const struct plan *p, int node, const int **events);
int plan_metric_events(const struct plan *p, int metric, const int **events);

/*
 * A node's sample events, toplev's `sample` (its Sample column): where in the code to look
 * when the node is over its threshold. Intel's are PEBS events with a precision; AMD's and
 * Arm's the node's main event.
 */
struct plan_sample {
	const char *event;	/* the model's name ("FRONTEND_RETIRED.LATENCY_GE_4") */
	const char *encoding;	/* as `cgtma -e` takes it */
	int precise;		/* perf's precise_ip: toplev's ":pp" is 2 */
};

/* How many sample events reported node has; plan_node_sample() gives the i-th. */
int plan_node_samples(const struct plan *p, int node);
void plan_node_sample(const struct plan *p, int node, int i, struct plan_sample *out);

/* Says once, as a warning, what a result's `uncounted` means for p's model. */
void plan_warn_uncounted(const struct plan *p);

#endif
