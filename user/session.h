/* SPDX-License-Identifier: GPL-2.0 */
/* A live profiling run: from options to intervals on every output, until stopped. */
#ifndef CGTMA_SESSION_H
#define CGTMA_SESSION_H

#include <stdbool.h>

struct session_opts {
	int interval_ms;		/* -I */
	double duration_s;		/* -d; 0: until Ctrl-C or the command's exit */
	bool per_cpu;
	bool json;
	bool verbose;
	int level;			/* -l; 0: the default (1) */
	const char **cgroups;		/* -G, as given */
	int nr_cgroups;
	bool all_cgroups;
	int depth;			/* --depth for --all-cgroups */
	const char *events;		/* -e list; NULL: the model's events */
	const char *model;		/* --model */
	const char *model_file;		/* --model-file */
	int perf_metrics;		/* 1, 0, or -1 to detect */
	int smt;			/* 1, 0, or -1 to detect */
	int max_cgroups;
	char **command;			/* after --; NULL-terminated, or NULL */
};

/* Runs until done; returns the process exit code (the command's, when one was run). */
int session_run(const struct session_opts *o);

#endif
