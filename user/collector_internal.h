/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The collector's state, for its own files alone: collector.c opens, configures, loads,
 * attaches, flushes and tracks; collector_read.c reads what the BPF side counted.
 */
#ifndef CGTMA_COLLECTOR_INTERNAL_H
#define CGTMA_COLLECTOR_INTERNAL_H

#include <stddef.h>

#include "collector.h"
#include "switchhook.h"

/* Cgroups read per batch lookup. */
#define READ_BATCH 64

struct collector {
	struct cgtma *skel;
	int nr_events;
	int nr_cpus;		/* possible */
	struct perfev *pe;	/* the counting events, and the cgroup-switches ones */
	size_t value_size;	/* nr_events * sizeof(struct cgtma_count): one epoch's counts */
	size_t cg_value_size;	/* a cgroup's value (on one CPU): CGTMA_CGROUP_VALUE_SIZE() */
	int cg_rows;		/* values a cgroup's lookup returns: 1, or nr_cpus when per CPU */
	long nr_inserted;	/* cgroups this process put in cgroup_counts, less those it
				 * took out: at most the entries (the mkdir hook adds more) */
	struct cgtma_charged *charged;	/* charged_ids, mapped: per CPU, both halves' lists */
	size_t charged_len;	/* the mapping's length */
	struct cgtma_misses *marks;	/* misses, mapped: per CPU, both halves' marks */
	size_t marks_len;
	char *cpu_totals;	/* cpu_counts, mapped: per CPU, both halves' totals */
	size_t cpu_totals_len;
	char *irq_totals;	/* irq_counts, mapped: per CPU and scope, both halves */
	size_t irq_totals_len;
	size_t irq_stride;	/* an irq_counts value: both halves, padded to a cache line */
	__u32 irq_mask;		/* --irq: the scopes counted */
	bool *changed;		/* per half and CPU: its counts in the half may have changed
				 * since the half was last read (collector__cpus_read()) */
	bool half_read;		/* the closed half was read since the last flush */
	struct cgtma_count *irq_still;	/* per scope and half: the sum of the CPUs not read */
	bool *still_of;		/* per half: the CPUs read when irq_still was summed */
	bool still_summed[2];	/* per half: irq_still was summed (still_of holds) */
	__u64 *ids;		/* the cgroups the lists name */
	long reads_listed, reads_all;	/* intervals read from the lists, and whole */
	int full_reads;		/* the next reads that read every cgroup (collector__track()) */
	__u32 open_epoch;	/* the half of the counts the CPUs write now */
	__u32 closed_epoch;	/* the half the last flush closed: what the reads return */
	struct cgtma_count *half;	/* per CPU: one cgroup's closed half, for the callback */
	bool batch_ok;		/* the kernel has BPF_MAP_LOOKUP_BATCH for per-CPU hashes */
	void *batch;		/* values of one batch lookup, kept between intervals */
	bool prealloc;		/* the per-cgroup maps are preallocated */
	int max_cgroups;	/* entries of the per-cgroup maps */
	int stats_fd;		/* BPF_ENABLE_STATS: run time is counted while it is open */
	struct switch_hooks sw;	/* which hook ends slices, and its fallback */
	bool watch_changes;	/* the mkdir and rmdir hooks are attached */
	bool per_cpu_cgroups;	/* -A with tracked cgroups: their counts per CPU */
	bool smt;		/* some CPU has an SMT sibling (noise_cpus says which) */
	struct cgtma_noise_key *noise_keys;	/* collector__read_noise()'s, kept */
	int cap_noise_keys;
	struct collector_setup su;	/* as opened: its cpus stay the caller's */
};

/* A task_counts value: the header and both epochs' counts. */
static inline size_t task_value_size(const struct collector *c)
{
	return offsetof(struct cgtma_task, ev) + 2 * c->value_size;
}

#endif
