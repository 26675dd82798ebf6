/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --sample in a live run: the events sampled (the list given, or the model's default, which
 * grows by the sample events of the nodes the trees show over their threshold), the sampler
 * over the collector's tracked set, and the profiles: each interval's, and the run's, which
 * the summary, --folded and --pprof take.
 */
#ifndef CGTMA_SAMPLING_H
#define CGTMA_SAMPLING_H

#include <stdbool.h>
#include <linux/types.h>

#include "profile.h"
#include "sampler.h"
#include "strbuf.h"

struct collector;
struct interval;
struct measurement;

struct sampling {
	struct sample_events ev;
	struct sampler *smp;		/* NULL: the run does not sample */
	struct profile run;		/* the run's samples, whole at the end */
	struct profile iv;		/* the interval's */
	struct strbuf names;		/* the events sampled, ';' between (run.sample_events) */
	const struct plan *plan;	/* grows: the tree whose nodes add their events */
	bool grows;			/* no list given, and a model's tree */
	char *refused[SAMPLE_MAX_EVENTS * 4];	/* the nodes' events the kernel refused */
	int nr_refused;
};

#define SAMPLING_INIT { .names = STRBUF_INIT }

/*
 * The events to sample: --sample's list (none: m's default, which then grows with m's tree)
 * at -F's rate. 0; -EINVAL after saying what is wrong; -ENOMEM.
 */
int sampling_setup(struct sampling *sp, const struct measurement *m);

/*
 * Opens the sampler (sampler.h) over the collector's tracked set and levels, with the kernel's
 * layout its relocations found, on the CPUs cpus selects (NULL: all): 0 or -errno, said.
 * sp->names then names the events.
 */
int sampling_open(struct sampling *sp, const struct collector *col, const bool *cpus);

/* CPU hotplug, as the collector follows it (collector_setup.events.cpu_changed). */
void sampling_cpu_changed(struct sampling *sp, int cpu, bool online);

/*
 * The interval's samples into sp->iv and the run's, and iv->profile: 0 or -errno, said.
 * scope names a tracked cgroup's scope (sampler_scope_cb).
 */
int sampling_read(struct sampling *sp, struct interval *iv, sampler_scope_cb scope, void *ctx);

/*
 * Grows the events by those of the nodes at or over their threshold in a cgroup's tree of
 * iv, sampled from now on: true when some were added (sp->names changed).
 */
bool sampling_add_nodes(struct sampling *sp, const struct interval *iv);

/* The run's samples into the summary iv, the run having begun at start_s (Unix time). */
void sampling_summary(struct sampling *sp, struct interval *iv, double start_s,
		      double duration_s);

/* At the end: what the kernel lost, and with -v the cost of naming frames. */
void sampling_say_stats(struct sampling *sp);

void sampling_release(struct sampling *sp);

#endif
