/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What a run counts: the events of a Top-Down model's plan (the model detected from the CPU,
 * or named, or loaded from a file), or the events of an -e list; each encoded for
 * perf_event_open and assigned to a group. Shared by live runs and `cgtma list-events`.
 */
#ifndef CGTMA_MEASUREMENT_H
#define CGTMA_MEASUREMENT_H

#include <stdbool.h>
#include <linux/perf_event.h>

#include "exitstatus.h"
#include "model.h"
#include "plan.h"
#include "strbuf.h"

struct cgtma_count;

struct measure_opts {
	const char *events;		/* -e list; NULL: a model's events */
	const char *model;		/* --model */
	const char *model_file;		/* --model-file */
	int level;			/* 0: 1 */
	int perf_metrics;		/* 1, 0, or -1 to detect */
	int smt;			/* 1, 0, or -1 to detect */
	int nmi_watchdog;		/* 1, 0, or -1 to detect */
	int slots;			/* --slots; 0: caps/slots, else the model's width */
	const char *metrics;		/* -m, --metrics: model_options.metrics */
};

struct measurement {
	struct model *model;
	struct plan *plan;
	int nr_events;
	char **names;
	struct perf_event_attr *attrs;
	int *group;
	bool perf_metrics;
	bool smt;
	int level;
	/*
	 * What the choice of model has to say ("no hardware PMU: ...; using the software
	 * model"), kept for measurement_notices(): the caller says it once the rest of its
	 * input is known good, so that a usage error is said first and alone.
	 */
	struct strbuf notices;
};

/*
 * Chooses and plans. 0, -EINVAL for bad input (an unknown event or model, a level that needs
 * more counters than there are), or another -errno; what is wrong printed. A level beyond
 * the model's depth is its depth, with a notice (model_level()).
 */
int measurement_setup(const struct measure_opts *o, struct measurement *m);
/* Prints the notices measurement_setup() kept, once. */
void measurement_notices(struct measurement *m);
void measurement_release(struct measurement *m);

/*
 * At the end of a run: warns of the events that were never on a counter (enabled, never
 * running) over totals (nr_cpus rows of nr_events), each name once.
 */
void measurement_say_never_ran(const struct measurement *m, const struct cgtma_count *totals,
			       int nr_cpus);

#endif
