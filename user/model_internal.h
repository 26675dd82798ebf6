/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The loaded form of a model file, shared by the loader (model.c), the planner (plan.c) and
 * the evaluator (tma.c). Everything is validated by the loader: names are resolved to
 * indices, parents come before their children, and references between nodes, aux and
 * metrics have no cycles, nest boundedly and expand to a bounded amount of work.
 */
#ifndef CGTMA_MODEL_INTERNAL_H
#define CGTMA_MODEL_INTERNAL_H

#include <stdbool.h>

#include "expr.h"
#include "tma.h"

/*
 * Bounds that keep any accepted file cheap to compute: the work of one computation of every
 * node and metric with nested references expanded (toplev's models take a few thousand
 * steps), and the nesting of expressions through the references they make (the stack the
 * evaluation needs).
 */
#define MODEL_MAX_STEPS 1000000
#define MODEL_MAX_NESTING 1000

struct model_event {
	char *name;
	char *encoding;
	char *sysfs;		/* NULL when none */
	double retire_latency;	/* retlat()'s default; 0 when the file gives none */
	/*
	 * The generic counters it may run on (bit i: counter i), the kernel's constraint for
	 * it (intel/core.c's tables, the "Counter" field of Intel's event files); all bits set
	 * when the file gives none. A fixed event runs on its fixed counter or on these.
	 */
	unsigned long long counters;
};

struct model_aux {
	char *name;
	struct expr *expr;
};

struct model_node {
	char *name;
	char *full_name;	/* Backend_Bound.Memory_Bound */
	int parent;		/* model node index, -1 for level 1 */
	int level;
	char *domain;
	char *area;
	char *desc;
	struct expr *expr;
	struct expr *thresh;
	bool has_maxval;
	double maxval;
	int nr_siblings;
	int *siblings;		/* model node indices */
	bool overlap;
	/*
	 * Its sample events (toplev's `sample`, the Sample column): model event indices, and
	 * each one's precision (perf's precise_ip: the p's of toplev's ":pp").
	 */
	int nr_samples;
	int *sample_events;
	int *sample_precise;
};

struct model_metric {
	char *name;
	char *unit;
	char *desc;
	struct expr *expr;
	int nr_groups;
	char **groups;		/* the file's "groups": what --metrics GROUP picks it by */
	bool is_default;	/* counted and shown without -m */
};

struct model_range {
	int lo, hi;		/* inclusive */
};

struct model_match {
	char *vendor;
	int family;
	int nr_ranges;
	struct model_range *ranges;
	char *notice;		/* NULL when none */
};

struct model_pmu {
	bool software;		/* no counter limits */
	char *libpfm4;		/* libpfm4's PMU for the encodings' names, or NULL */
	int generic_counters;
	int generic_counters_smt;
	int nr_fixed;
	int *fixed;		/* event indices; fixed[i] runs on fixed counter i */
	int nmi_watchdog;	/* event index of what the NMI watchdog counts (its counter is
				 * taken), -1: it takes one generic counter */
	int pm_leader;		/* event index of the perf-metrics leader, -1 without that path */
	int nr_pm_events;
	int *pm_events;		/* event indices */
	int slots;		/* documented issue slots per cycle (Arm: #slots), 0 when none */
	/*
	 * Events that read 0 together only where the PMU does not count them (QEMU's emulated
	 * PMU opens Arm's STALL_* events and never counts them): event indices.
	 */
	int nr_zero_events;
	int *zero_events;
};

struct model {
	char *origin;		/* for messages: the file, or the built-in's name */
	char *text;		/* the JSON it was loaded from */
	char *name;
	char *description;
	char *vendor;
	char *source;
	int nr_matches;
	struct model_match *matches;
	struct model_pmu pmu;
	int nr_constants;
	char **constant_names;
	double *constant_values;
	int nr_events;
	struct model_event *events;
	int nr_aux;
	struct model_aux *aux;
	struct expr **aux_exprs;	/* aux[i].expr, the array expr_env.aux wants */
	int nr_nodes;
	struct model_node *nodes;
	int nr_metrics;
	struct model_metric *metrics;
	/*
	 * The source's metrics the model leaves out (metrics_left_out), each name with the
	 * reason its entry gives: --metrics naming one says why it is not there.
	 */
	int nr_left_out;
	char **left_out_names;
	const char **left_out_reasons;	/* into left_out_reason_texts */
	int nr_left_out_reasons;
	char **left_out_reason_texts;
	int max_level;
};

/* A plan's private part (plan->priv): what tma_compute needs besides the public arrays. */
struct plan_deps {
	int nr;
	int *events;		/* plan event indices: the copies in the unit's group */
	int *model_events;	/* the model event of each */
	int ctx;		/* its group, or a number of its own when split: computations
				 * with the same ctx read the same counts */
};

struct plan_priv {
	double params[EXPR_NR_PARAMS];	/* smt_enabled, topdown_use_fixed (interval_s unset) */
	int *model_event;	/* per plan event: model event index */
	int *plan_event;	/* per model event: its first plan event, -1 when not in the plan */
	int *model_node;	/* per plan node: model node index */
	int *plan_node;		/* per model node: plan node index, -1 when not reported */
	int *model_metric;	/* per plan metric: model metric index */
	/* The events each reported node and metric reads, through everything it computes. */
	struct plan_deps *node_deps;
	struct plan_deps *metric_deps;
	char **split_reason;	/* per node then metric, NULL when not split */
	int nr_split_reasons;
	/*
	 * Memoized node values (see tma.c), per model node: the most node computations its
	 * value expression makes, or -1 when its value is not memoized (it reads flags or
	 * metrics, or a node it computes can fail on flags); memo_at: where its list of
	 * computations starts in an array of memo_total.
	 */
	int *memo_calls;
	int *memo_at;
	int memo_total;
	bool memo;		/* false: recompute every reference, as toplev does */
};

/* For tests: compute without memoization (the reference behavior) or with it (the default). */
void plan_set_memo(struct plan *p, bool on);

/* Whether one of m's "match" entries covers this CPU; *notice is that entry's notice. */
bool model_matches(const struct model *m, const char *vendor, int family, int cpu_model,
		    const char **notice);

#endif
