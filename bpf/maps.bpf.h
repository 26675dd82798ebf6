/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Map helpers both BPF objects use: lookup-or-insert, and the per-CPU statistics array, which
 * each object sizes by defining STATS_MAX (its number of statistics) before including this.
 */
#ifndef CGTMA_MAPS_BPF_H
#define CGTMA_MAPS_BPF_H

#include <bpf/bpf_helpers.h>
#include "kernel_defs.bpf.h"

#ifndef STATS_MAX
#error "define STATS_MAX, the object's number of statistics, before including maps.bpf.h"
#endif

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, STATS_MAX);
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

/*
 * The value of key in hash map, inserted as init where the map has none: NULL where there is
 * none after all. *err is the insert's error (0: found, or inserted here). A failed insert is
 * looked up again all the same: another CPU may have inserted the key first (-EEXIST, or
 * -E2BIG where that insert filled the map).
 */
static __always_inline void *map_lookup_or_insert(void *map, const void *key, const void *init,
						  int *err)
{
	void *v = bpf_map_lookup_elem(map, key);

	*err = 0;
	if (v)
		return v;
	/* int: 5.10 calls the map's update directly, whose int return is not sign-extended. */
	*err = bpf_map_update_elem(map, key, init, BPF_NOEXIST);
	return bpf_map_lookup_elem(map, key);
}

#endif
