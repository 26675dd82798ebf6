/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Map helpers both BPF objects use.
 */
#ifndef CGTMA_MAPS_BPF_H
#define CGTMA_MAPS_BPF_H

#include <bpf/bpf_helpers.h>
#include "cgtma.h"

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, CGTMA_STAT_MAX);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

static __always_inline void stat_add(__u32 which, __u64 n)
{
	__u64 *v = bpf_map_lookup_elem(&stats, &which);

	if (v)
		*v += n;
}

static __always_inline void stat_inc(__u32 which)
{
	stat_add(which, 1);
}

#endif
