/* SPDX-License-Identifier: GPL-2.0 */
/* A live profiling run: from options to intervals on every output, until stopped. */
#ifndef CGTMA_SESSION_H
#define CGTMA_SESSION_H

#include <signal.h>
#include <stdbool.h>
#include <linux/types.h>

#include "collector.h"
#include "measurement.h"
#include "output.h"
#include "selection.h"

struct session_opts {
	int interval_ms;		/* -I */
	double duration_s;		/* -d; 0: until Ctrl-C or the command's exit */
	const char *cpus;		/* -C: a CPU list, or NULL for every CPU */
	struct output_opts out;		/* sinks: terminal, --json, -x, --cdm, ... */
	struct selection_opts select;	/* -G, --all-cgroups, --all-containers, --depth */
	struct measure_opts measure;	/* model or -e, level, perf-metrics, SMT */
	struct collector_opts collect;	/* -A, -T, --irq, --max-cgroups, --switch-hook, ... */
	const char *comm;		/* --comm glob, or NULL */
	bool prometheus_tasks;		/* --prometheus-tasks */
	char **command;			/* after --; NULL-terminated, or NULL */
	bool sample;			/* --sample */
	const char *sample_events;	/* --sample=LIST, or NULL: the model's default */
	int sample_hz;			/* -F */
	int sample_max;			/* --sample-max; 0: SAMPLE_MAX_STACKS */
	const char *folded;		/* --folded FILE, or NULL */
	bool folded_pid;		/* --folded-pid */
	const char *pprof;		/* --pprof FILE, or NULL */
	int no_match_status;		/* --no-match-status: the exit status of a run
					 * where a selector never matched */
	sigset_t start_mask;		/* the signal mask cgtma started with (for the command) */
};

/* Runs until done; returns the process exit code (the command's, when one was run). */
int session_run(const struct session_opts *o);

#endif
