/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Sampled call stacks, counted per scope and stack: what the sampler builds and what every
 * consumer reads (the terminal's top functions, --folded, --pprof, the record, the HTML flame
 * graphs). One profile covers a run, or one interval of it.
 *
 *   struct profile p = PROFILE_INIT;
 *   int t = profile_type(&p, "cycles", 0);
 *   int s = profile_scope(&p, "/web", "/web", NULL, NULL);
 *   int m = profile_mapping(&p, &(struct profile_mapping){ .file = "/usr/bin/x", ... });
 *   int l = profile_location(&p, &(struct profile_location){ .addr = ip, .mapping = m,
 *                                                            .func = "spin" });
 *   profile_add(&p, s, (int[]){ l, ... }, n, t, 1);	// leaf first
 *   profile_release(&p);
 *
 * Each profile_* constructor returns an index (>= 0) into its array, the same index for the
 * same fields (the profile interns them), or -ENOMEM. The profile owns copies of every string
 * it is given; the pointers in its arrays stay valid until profile_release(), even as it grows.
 * The arrays are public for reading; only the calls here change them.
 */
#ifndef CGTMA_PROFILE_H
#define CGTMA_PROFILE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "hashmap.h"

/* One sampled event: its name as the user gave it, and its period (0: sampled by frequency). */
struct profile_type {
	const char *event;
	uint64_t period;
};

/* Whom the samples are charged to: one tracked cgroup, named as the terminal names it. */
struct profile_scope {
	const char *name;		/* the cgroup's path, or its container's name */
	const char *cgroup;		/* the cgroup's path */
	const char *container;		/* NULL when not a known container */
	const char *pod;		/* NULL when not in a known pod */
};

/* A module mapped into a process, or the kernel. */
struct profile_mapping {
	uint64_t start, limit;		/* its addresses in the process: [start, limit) */
	uint64_t file_offset;		/* the offset in file that start maps */
	const char *file;		/* "/usr/bin/x", "[kernel.kallsyms]", "[jit]", "[heap]",
					 * "[anon]" */
	const char *build_id;		/* lower-case hex, or NULL when not known */
};

/* One frame. */
struct profile_location {
	uint64_t addr;			/* as sampled: a process's address, or a kernel address */
	int mapping;			/* index into maps, or -1 when no module holds addr */
	const char *func;		/* the function's name, or NULL when not resolved */
	const char *file;		/* its source file, or NULL */
	int line;			/* its source line, or 0 */
};

/* A distinct (scope, process, thread name, stack), with one count for each type. */
struct profile_sample {
	int scope;
	uint32_t pid;			/* the process (tgid), 0 when not known */
	const char *comm;		/* the sampled thread's name, NULL when not known */
	int *locs;			/* indexes into locs, leaf first */
	int nr_locs;
	uint64_t *values;		/* nr_types counts (the arrays grow with the types) */
};

/*
 * Samples the kernel did not count whole over what the profile covers (bpf/sample.h's
 * SAMPLE_STAT_*): a sample is counted once per tracked cgroup it lands in.
 */
struct profile_lost {
	uint64_t samples;		/* not counted: the kernel's counts map was full */
	uint64_t user_stacks;		/* counted without their user stack: no room for it */
	uint64_t kernel_stacks;		/* the same for the kernel stack */
};

struct profile {
	struct profile_type *types;
	int nr_types, cap_types;
	struct profile_scope *scopes;
	int nr_scopes, cap_scopes;
	struct profile_mapping *maps;
	int nr_maps, cap_maps;
	struct profile_location *locs;
	int nr_locs, cap_locs;
	struct profile_sample *samples;
	int nr_samples, cap_samples;
	uint64_t start_ns;		/* CLOCK_REALTIME at the start of what it covers */
	uint64_t duration_ns;
	struct profile_lost lost;

	/* Interning: the keys of the arrays above, and the strings. */
	struct hashmap type_index, scope_index, map_index, loc_index, sample_index, str_index;
	char **strs;
	int nr_strs, cap_strs;
};

#define PROFILE_INIT { 0 }

int profile_type(struct profile *p, const char *event, uint64_t period);
int profile_scope(struct profile *p, const char *name, const char *cgroup, const char *container,
		  const char *pod);
int profile_mapping(struct profile *p, const struct profile_mapping *m);
int profile_location(struct profile *p, const struct profile_location *l);

/*
 * Adds count to type's value for the (scope, pid, comm, stack): 0, or -ENOMEM (nothing
 * added). profile_add() is the same with neither process nor thread name known.
 */
int profile_add_task(struct profile *p, int scope, uint32_t pid, const char *comm,
		     const int *locs, int nr_locs, int type, uint64_t count);
int profile_add(struct profile *p, int scope, const int *locs, int nr_locs, int type,
		uint64_t count);

/*
 * How a frame is named wherever one is shown: its function, or else "module+0xOFFSET" (the
 * offset in the mapping's file, "[heap]+0x..." for a mapping of none), or else, in no
 * mapping, "[unknown]+0xADDR". Writes into buf, returns buf.
 */
const char *profile_frame_name(const struct profile *p, int loc, char *buf, size_t len);

/*
 * Folded stacks of one type, for flamegraph.pl, speedscope and inferno: a line for each
 * distinct stack with a count, "SCOPE;outermost;...;leaf COUNT"; with_task, the thread's
 * name and process after the scope, "SCOPE;COMM-PID;outermost;...;leaf COUNT", as
 * stackcollapse-perf.pl --pid names them (left out where not known). 0, or -errno of the
 * write.
 */
int profile_write_folded(const struct profile *p, int type, bool with_task, FILE *f);

/*
 * Adds src's counts into dst (profiles of intervals into the run's, a record's profile
 * records into one): its types, scopes, mappings and frames interned into dst's, the
 * (scope, stack) counts summed, samples that count nothing left out, its losses added. dst's
 * span grows to cover src's. 0, or -ENOMEM (dst then holds part of src).
 */
int profile_merge(struct profile *dst, const struct profile *src);

/* Whether anything was lost. */
static inline bool profile_lost_any(const struct profile_lost *l)
{
	return l->samples || l->user_stacks || l->kernel_stacks;
}

/*
 * What was lost, said as the terminal and stderr say it ("N samples lost: ...; N user and N
 * kernel stacks kept without their frames: ..."), into buf; "" when nothing was. Returns buf.
 */
const char *profile_lost_text(const struct profile_lost *l, char *buf, size_t len);

/* A function and its samples, as profile_top_functions() ranks them. */
struct profile_top {
	char *name;			/* profile_frame_name() of the leaf frames */
	uint64_t count;
};

/*
 * The functions scope's samples of type were in (their leaf frames, by name), busiest first:
 * how many (>= 0) in *top, which profile_top_free() releases, with the scope's samples of
 * type in *total; or -ENOMEM.
 */
int profile_top_functions(const struct profile *p, int scope, int type, struct profile_top **top,
			  uint64_t *total);
void profile_top_free(struct profile_top *top, int n);

/* The scope named name, or -1. */
int profile_scope_find(const struct profile *p, const char *name);

void profile_release(struct profile *p);

#endif
