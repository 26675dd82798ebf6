/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The live run's configuration: every option (cgtma.c parses the command line into it) and
 * every environment variable (env_read_environ()), read once at start, and read by the
 * modules that need them, as retsnoop's env does. Verbosity is log.h's level. The
 * subcommands (compute, list-events, report) parse their own options (options.h).
 */
#ifndef CGTMA_ENV_H
#define CGTMA_ENV_H

#include <signal.h>
#include <stdbool.h>
#include <linux/types.h>

#include "measurement.h"
#include "output.h"
#include "selection.h"
#include "switchhook.h"

/*
 * How the per-cgroup maps get their memory. Preallocated is the rule before Linux 6.1 (the
 * verifier refuses run-time allocation in perf-event programs, and on PREEMPT_RT in raw
 * tracepoint programs, and warns elsewhere); from 6.1 entries are allocated as cgroups come.
 * The environment's CGTMA_MAP_ALLOC overrides it, so tests can run either layout anywhere.
 */
enum map_alloc {
	MAP_ALLOC_AUTO,			/* by the kernel's version */
	MAP_ALLOC_PREALLOC,
	MAP_ALLOC_RUNTIME,
};

struct env {
	/* What to measure. */
	struct selection_opts select;	/* -G, -p, --all-cgroups, --all-containers, --depth */
	struct measure_opts measure;	/* model or -e, level, perf-metrics, SMT */
	int no_match_status;		/* --no-match-status: the exit status of a run
					 * where a selector never matched */

	/* How and how long. */
	int interval_ms;		/* -I */
	double duration_s;		/* -d; 0: until Ctrl-C or the command's exit */
	const char *cpus;		/* -C: a CPU list, or NULL for every CPU */
	char **command;			/* after --; NULL-terminated, or NULL */
	sigset_t start_mask;		/* the signal mask cgtma started with (for the command) */

	/* The collector (collector.h). */
	bool per_cpu;			/* -A: with tracked cgroups, their counts per CPU, at
					 * possible CPUs times the memory */
	int max_cgroups;		/* --max-cgroups: tracked cgroups the maps hold;
					 * 0: 16384, or 1024 where they are preallocated */
	enum switch_hook switch_hook;	/* --switch-hook, CGTMA_SWITCH_HOOK */
	enum map_alloc map_alloc;	/* CGTMA_MAP_ALLOC */
	bool per_task;			/* -T: every switch ends a slice; thread rows */
	int max_tasks;			/* --max-tasks: threads the task map holds; 0: 4096 */
	__u32 irq_mask;			/* --irq: bit i carves out interrupt scope i */
	bool bpf_stats;			/* have the kernel time the hook (5.8+): --prometheus
					 * exports cgtma's own cost */
	bool no_noise;			/* --no-noise: no noise read or counted (noise.h,
					 * neighbours.h) */

	/* -T's rows. */
	const char *comm;		/* --comm glob, or NULL */
	bool prometheus_tasks;		/* --prometheus-tasks */

	/* --sample (sampling.h). */
	bool sample;
	const char *sample_events;	/* --sample=LIST, or NULL: the model's default */
	int sample_hz;			/* -F */
	int sample_max;			/* --sample-max; 0: SAMPLE_MAX_STACKS */
	const char *folded;		/* --folded FILE, or NULL */
	bool folded_pid;		/* --folded-pid */
	const char *pprof;		/* --pprof FILE, or NULL */

	/* The outputs: the terminal, --json, -x, --cdm, --prometheus, --record, -o. */
	struct output_opts out;

	/* For tests, from the environment. */
	const char *runtime_root;	/* CGTMA_RUNTIME_ROOT: where the container runtimes'
					 * state files are ("": /) */
	bool per_task_auto;		/* CGTMA_PER_TASK_AUTO=perf-event: auto takes the
					 * perf-event hook with -T too */
	bool irq_raw_tp;		/* CGTMA_IRQ_HOOK=raw_tp: raw tracepoints for --irq
					 * where tp_btf would do */
	unsigned int test_drop_every;	/* CGTMA_TEST_DROP_SWITCH=skip:N or miss:N: the
					 * perf-event hook's program leaves every N-th run */
	bool test_drop_counted;		/* miss:N: as if it ran and did not see the switch */
	unsigned int test_irq_busy_every; /* CGTMA_TEST_IRQ_IN_UPDATE=N: every N-th interrupt
					 * entry on a CPU as if it came during an update */
	unsigned int test_start_delay_ms; /* CGTMA_TEST_START_DELAY=MS: a wait before the
					  * run's start, its BPF programs attached */
};

/* The run's configuration, with its defaults before parsing. */
extern struct env env;

/*
 * The environment's settings: CGTMA_SWITCH_HOOK (as --switch-hook, which overrides it),
 * CGTMA_MAP_ALLOC and the tests' knobs. 0; -EINVAL for a bad value, said.
 */
int env_read_environ(void);

/*
 * Takes getopt's c (with its argument) into env when it is a collector option
 * (COLLECTOR_LONG_OPTIONS, -A, -T): 1; 0 when it is not one; -EINVAL for a bad value, said.
 */
int env_collector_opt(int c, const char *arg);

/* --switch-hook, CGTMA_SWITCH_HOOK: "auto", "tracepoint", "perf-event" -> 0 and *out; -EINVAL
 * for anything else. */
int switch_hook_parse(const char *s, enum switch_hook *out);

/* CGTMA_MAP_ALLOC: "auto", "prealloc", "runtime" -> 0 and *out; -EINVAL for anything else. */
int map_alloc_parse(const char *s, enum map_alloc *out);

#endif
