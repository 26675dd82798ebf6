/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Top-Down models: loading model files (user/models/README.md), and what a model says of
 * itself (its name, levels, PMU, metrics). plan.h turns one into a plan for a run, tma.h
 * computes the tree from counts.
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

#endif
