// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "collector.h"
#include "env.h"
#include "interval.h"
#include "log.h"
#include "measurement.h"
#include "model.h"
#include "nodesample.h"
#include "sampling.h"
#include "tma.h"

/*
 * --sample without a list: cycles with a hardware model, cpu-clock with a software model and
 * with -e, which need no PMU; to either the model's nodes add their own sample events as
 * they go over their threshold (add_node_samples()).
 */
static const char *sample_default(const struct measurement *m)
{
	return m->model && !model_software(m->model) ? "cycles" : "cpu-clock";
}

int sampling_setup(struct sampling *sp, const struct measurement *m)
{
	const char *list = env.sample_events;

	sp->grows = !(list && *list) && m->plan && m->plan->nr_nodes;
	sp->plan = m->plan;
	return sample_events_parse(list, sample_default(m), env.sample_hz, &sp->ev);
}

/* The events sampled, ';' between. */
static void name_samples(struct sampling *sp)
{
	strbuf_setlen(&sp->names, 0);
	for (int e = 0; e < sp->ev.nr; e++)
		strbuf_addf(&sp->names, "%s%s", e ? ";" : "", sp->ev.names[e]);
}

int sampling_open(struct sampling *sp, const struct collector *col, const bool *cpus)
{
	struct sampler_opts so = {
		.events = &sp->ev,
		.max_events = sp->grows ? SAMPLE_MAX_EVENTS : sp->ev.nr,
		.tracked_fd = collector__tracked_fd(col),
		.levels_fd = collector__levels_fd(col),
		.cpus = cpus,
		/* The outputs that carry them; a record for report --pprof. */
		.lines = env.pprof || env.out.record,
	};
	int err = collector__sample_layout(col, &so.layout) ?: sampler__open(&so, &sp->smp);

	if (!err)
		name_samples(sp);
	return err;
}

void sampling_cpu_changed(struct sampling *sp, int cpu, bool online)
{
	if (!sp->smp)
		return;
	if (!online)
		sampler__close_cpu(sp->smp, cpu);
	else if (sampler__open_cpu(sp->smp, cpu))
		pr_warn("--sample: CPU %d came online but is not sampled: tried again each "
			"interval", cpu);
	else if (log_verbose())
		pr_notice("--sample: CPU %d came online: sampled from now", cpu);
}

int sampling_read(struct sampling *sp, struct interval *iv, sampler_scope_cb scope, void *ctx)
{
	int err;

	if (!sp->smp)
		return 0;
	profile_release(&sp->iv);
	err = sampler__read(sp->smp, &sp->iv, scope, ctx);
	if (!err)
		err = profile_merge(&sp->run, &sp->iv);
	if (err) {
		pr_err("--sample: cannot read the samples: %s", strerror(-err));
		return err;
	}
	sp->iv.duration_ns = (uint64_t)(iv->interval_s * 1e9);
	iv->profile = &sp->iv;
	return 0;
}

/*
 * --sample without a list, with a model's tree: the sample events of the nodes at or over
 * their threshold in a tracked cgroup's tree this interval, not sampled yet, sampled from
 * now on (to the end of the run, up to SAMPLE_MAX_EVENTS events in all). An event the
 * kernel refuses (a PMU without PEBS) is said once and not tried again.
 */
bool sampling_add_nodes(struct sampling *sp, const struct interval *iv)
{
	const struct tma_result **trees;
	struct node_sample_pick pick[SAMPLE_MAX_EVENTS];
	char *have[SAMPLE_MAX_EVENTS * 5];
	int nr = 0, nr_have = 0, n;
	bool added = false;

	if (!sp->grows || sp->ev.nr >= SAMPLE_MAX_EVENTS)
		return false;
	trees = calloc(iv->nr_scopes + 1, sizeof(*trees));
	if (!trees)
		return false;
	for (int i = 0; i < iv->nr_scopes; i++)
		if (iv->scopes[i].kind == SCOPE_CGROUP && iv->scopes[i].has_tma)
			trees[nr++] = &iv->scopes[i].tma;
	for (int e = 0; e < sp->ev.nr; e++)
		have[nr_have++] = sp->ev.names[e];
	for (int r = 0; r < sp->nr_refused; r++)
		have[nr_have++] = sp->refused[r];
	n = node_samples_pick(sp->plan, trees, nr, have, nr_have,
			      SAMPLE_MAX_EVENTS - sp->ev.nr, pick);
	free(trees);
	for (int i = 0; i < n; i++) {
		const char *node = sp->plan->nodes[pick[i].node].full_name;
		char name[256];

		node_sample_name(&pick[i].s, name, sizeof(name));
		if (sample_events_add(&sp->ev, name, pick[i].s.encoding,
				      pick[i].s.precise) == 0 &&
		    sampler__add_event(sp->smp, sp->ev.nr - 1) == 0) {
			if (log_verbose())
				pr_notice("--sample: sampling %s from now on: %s is at or over its "
					  "threshold", name, node);
			added = true;
			continue;
		}
		if (sp->ev.nr && !strcmp(sp->ev.names[sp->ev.nr - 1], name))
			sample_events_pop(&sp->ev);
		pr_warn("--sample: %s (for %s) is not sampled; the others are", name, node);
		if (sp->nr_refused < (int)(sizeof(sp->refused) / sizeof(sp->refused[0])) &&
		    (sp->refused[sp->nr_refused] = strdup(name)))
			sp->nr_refused++;
	}
	if (added)
		name_samples(sp);
	return added;
}


void sampling_summary(struct sampling *sp, struct interval *iv, double start_s,
		      double duration_s)
{
	if (!sp->smp)
		return;
	sp->run.start_ns = (uint64_t)(start_s * 1e9);
	sp->run.duration_ns = (uint64_t)(duration_s * 1e9);
	iv->profile = &sp->run;
}

void sampling_say_stats(struct sampling *sp)
{
	char lost[256];

	if (sp->smp && profile_lost_any(&sp->run.lost))
		pr_warn("--sample: %s", profile_lost_text(&sp->run.lost, lost, sizeof(lost)));
	if (sp->smp && log_verbose()) {
		bool by_kernel = false;
		int nk = sampler__kernel_symbols(sp->smp, &by_kernel);

		pr_notice("--sample: naming frames (symbols, processes' maps) took %.1f ms of CPU; "
			  "kernel frames: %d %s", sampler__naming_ns(sp->smp) / 1e6, nk,
			  by_kernel ? "addresses named by the kernel" :
				      "symbols read from /proc/kallsyms");
	}
}

void sampling_release(struct sampling *sp)
{
	sampler__destroy(sp->smp);
	sample_events_release(&sp->ev);
	strbuf_release(&sp->names);
	for (int r = 0; r < sp->nr_refused; r++)
		free(sp->refused[r]);
	profile_release(&sp->run);
	profile_release(&sp->iv);
}
