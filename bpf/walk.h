/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the BPF programs that walk up from a task's cgroup to its tracked ancestors share
 * (cgtma.bpf.c's counting hook and sample.bpf.c's sampler); BPF only, user space never reads it.
 */
#ifndef CGTMA_WALK_H
#define CGTMA_WALK_H

/* Parent steps the hook takes from a task's cgroup: tasks deeper than this below the
 * shallowest tracked level are not attributed to it. */
#define CGTMA_WALK_MAX 32

#endif
