/* SPDX-License-Identifier: GPL-2.0 */
/*
 * cgroup v2 access for the BPF objects: a task's cgroup, a cgroup's parent, level and id.
 */
#ifndef CGTMA_CGROUP_BPF_H
#define CGTMA_CGROUP_BPF_H

#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

/*
 * The tracked levels, read-only data of their own (a map: .rodata.levels): user space sets
 * them in the counting program before its load, and the sampler reuses that map, so both
 * read one copy, and the verifier prunes their walks' steps at levels that cannot hold
 * tracked cgroups in each.
 */
/* Deepest level with a tracked cgroup; levels below it are never looked up. */
const volatile __u32 max_level SEC(".rodata.levels") = 0;
/* Bit L set: cgroups at level L may be tracked (explicit paths, globs, --all-cgroups). */
const volatile __u64 tracked_levels SEC(".rodata.levels") = 0;

/*
 * Parent steps a walk takes from a task's cgroup to its tracked ancestors: tasks deeper than
 * this below the shallowest tracked level are not attributed to it. A walk looks up only the
 * levels where tracked_level() holds, and loads no parent where tracked_above() does not.
 */
#define CGTMA_WALK_MAX 32

/* Whether cgroups at level can be tracked. */
static __always_inline bool tracked_level(int level)
{
	return level <= (int)max_level && (tracked_levels & (1ULL << (level & 63)));
}

/* Whether a level from 0 to level can hold tracked cgroups. */
static __always_inline bool tracked_up_to(int level)
{
	return level >= 0 && (tracked_levels & ((2ULL << (level & 63)) - 1));
}

/* Whether a level above level (>= 0), from 0 to level - 1, can hold tracked cgroups. */
static __always_inline bool tracked_above(int level)
{
	return tracked_levels & ((1ULL << (level & 63)) - 1);
}

/* struct cgroup embeds its css first, but let CO-RE say where. */
static __always_inline struct cgroup *cgroup_parent(struct cgroup *cg)
{
	struct cgroup_subsys_state *css = BPF_CORE_READ(cg, self.parent);

	return css ? (void *)css - bpf_core_field_offset(struct cgroup, self) : NULL;
}

static __always_inline struct cgroup *task_cgroup(struct task_struct *task)
{
	return BPF_CORE_READ(task, cgroups, dfl_cgrp);
}

/*
 * A cgroup's level, id and parent, through either kind of pointer: a BTF one (a tp_btf
 * argument's cgroup; btf set, a constant at every call) by plain loads, with parents through
 * css->cgroup so that each keeps its BTF type; any other through bpf_probe_read_kernel().
 */
static __always_inline int cgroup_level(struct cgroup *cg, bool btf)
{
	return btf ? cg->level : BPF_CORE_READ(cg, level);
}

static __always_inline __u64 cgroup_id(struct cgroup *cg, bool btf)
{
	return btf ? cg->kn->id : BPF_CORE_READ(cg, kn, id);
}

static __always_inline struct cgroup *cgroup_up(struct cgroup *cg, bool btf)
{
	struct cgroup_subsys_state *parent;

	if (!btf)
		return cgroup_parent(cg);
	parent = cg->self.parent;
	return parent ? parent->cgroup : NULL;
}

/* Only the v2 hierarchy: in hybrid mode v1 hierarchies fire the cgroup tracepoints too. */
static __always_inline bool on_v2(struct cgroup *cgrp)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();

	return BPF_CORE_READ(cgrp, root) == BPF_CORE_READ(task, cgroups, dfl_cgrp, root);
}

#endif
