/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Top-Down models: loading model files (user/models/README.md), turning one into a plan for a
 * run (which events, in which groups, which nodes are reported), and computing the tree from
 * counts with toplev's semantics.
 *
 * Errors are printed to stderr naming the file and the node or line; functions return 0 or
 * -errno (-EINVAL for a bad file).
 */
#ifndef CGTMA_MODEL_H
#define CGTMA_MODEL_H

#include <stdbool.h>
#include <stddef.h>

struct model;

/* Built-in models, compiled from user/models/NAME.json. */
int model_load_builtin(const char *name, struct model **mp);
/* A model file on disk (--model-file). */
int model_load_file(const char *path, struct model **mp);
/* A model from memory; origin names it in error messages. */
int model_load_string(const char *origin, const char *json, size_t len, struct model **mp);
void model_free(struct model *m);

/*
 * "did you mean 'skx'?" into buf for a -M NAME that is no built-in model: the models whose
 * names are close, or that run on the CPU a close name is known by (skylake, genoa,
 * graviton3, ...; '-', '_', '.', spaces and case ignored); "" when none is.
 */
void model_suggest(const char *name, char *buf, size_t len);
/*
 * A --metrics list (model_options.metrics) checked against m: 0 when every comma-separated
 * item names a metric or a metric group of m (case ignored); else -EINVAL, with the first
 * item that names none, and what is close to it, said as an error.
 */
int model_metrics_check(const struct model *m, const char *list);
/*
 * Whether the model's i-th metric is one that a run with this list computes (by_name: the
 * list names metrics alone, exactly, as a record lists those its run computed).
 */
bool model_metric_selected(const struct model *m, int i, const char *list, bool by_name);
/* Whether name is one of the model's default metrics (IPC, CPI, GHz). */
bool model_metric_is_default(const struct model *m, const char *name);
/* How many of the model's metrics are not default ones: what -m can add. */
int model_extra_metrics(const struct model *m);

/* NULL-terminated list of the built-in model names, in file-name order. */
const char *const *model_builtin_names(void);

const char *model_name(const struct model *m);
const char *model_description(const struct model *m);
const char *model_vendor(const struct model *m);
/* Whether the model counts software events only (pmu "software": no PMU needed). */
bool model_software(const struct model *m);
/* Deepest node level of the model (0 for a model with metrics only). */
int model_max_level(const struct model *m);
/*
 * The level a run shows for -l LEVEL (0: 1), one rule for live runs, list-events, report and
 * compute: LEVEL, or the model's depth where LEVEL is beyond it (Neoverse V1, N2 and V2 are
 * one level deep, as perf's TopdownL1), with a notice saying so in NOTICE (else empty). A
 * model without nodes (metrics only: sw, generic) has one level, 1.
 */
int model_level(const struct model *m, int level, char *notice, size_t len);
/* The JSON text the model was loaded from (what --record keeps). */
const char *model_source(const struct model *m);
/* libpfm4's name for the PMU whose tables the model's event names are in, or NULL. */
const char *model_libpfm4_pmu(const struct model *m);
/* The slots per cycle the model documents for its CPU (pmu "slots"), 0 when it has none. */
int model_slots(const struct model *m);
/* Whether the model has a perf-metrics path, and the sysfs name that reveals it. */
bool model_has_perf_metrics(const struct model *m);
const char *model_perf_metrics_sysfs(const struct model *m);
/*
 * The events of the perf-metrics path by index: 0 its leader, then the metric events; NULL
 * past the last (and for a model without that path).
 */
const char *model_perf_metrics_event(const struct model *m, int i);

/*
 * CPU detection: the built-in model whose "match" covers this CPU. vendor is /proc/cpuinfo's
 * vendor_id. Returns 0 and the model name, or -ENOENT when none matches. *notice, when set,
 * is a line to show the user (e.g. that Zen 3 has no top-down events).
 */
int model_match_cpu(const char *vendor, int family, int cpu_model, const char **name,
		     const char **notice);

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

struct tma_input {
	const double *counts;	/* per plan event: the scaled count */
	const bool *counted;	/* per plan event: false when it never ran in the interval */
	double interval_s;
	double cpu_s;		/* the scope's busy CPU time in the interval (scope_cpu_s()) */
	const double *retire_latency;	/* per plan event, or NULL: the model's defaults */
};

struct tma_result {
	double *value;		/* per plan node: reported value (clamped to maxval), NAN when
				 * not counted */
	bool *counted;		/* per plan node: false when it read an event not counted */
	bool *above;		/* per plan node: above threshold (printed without -v) */
	int bottleneck;		/* plan node index, or -1 */
	double *metric;		/* per plan metric; NAN when not counted */
	bool *metric_counted;
	/*
	 * The model's uncounted_if_zero events (Arm's STALL_SLOT*) all read 0 here: the PMU
	 * does not count them, and the nodes and metrics reading them are not counted.
	 */
	bool uncounted;
	void *scratch;		/* private: tma_compute's work space, sized for the plan */
};

/* Says once, as a warning, what a result's `uncounted` means for p's model. */
void plan_warn_uncounted(const struct plan *p);

/* Allocates a result for plan p (p must outlive it); tma_result_release frees it. */
int tma_result_init(struct tma_result *r, const struct plan *p);
void tma_result_release(struct tma_result *r);
/*
 * One computation of the tree and the metrics (one scope, one interval) with toplev's
 * semantics (user/models/README.md, "Evaluation"). r must have been initialized for p. A
 * plan can be shared by threads; a result cannot. No allocation: fit for every scope of every
 * interval (~10 us for a level-3 Intel tree).
 */
int tma_compute(const struct plan *p, const struct tma_input *in, struct tma_result *r);

#endif
