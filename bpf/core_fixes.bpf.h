/* SPDX-License-Identifier: GPL-2.0 */
/*
 * CO-RE shims: the layouts of kernel structs that changed between releases or differ in
 * PREEMPT_RT builds, as `___suffix` types that libbpf matches by name and fields; the code
 * picks one with bpf_core_field_exists().
 */
#ifndef CGTMA_CORE_FIXES_BPF_H
#define CGTMA_CORE_FIXES_BPF_H

/* Before 5.19 (and its stable backports), one node served both of the mover's lists. */
struct css_set___old {
	struct list_head mg_preload_node;
} __attribute__((preserve_access_index));

/* PREEMPT_RT kernels build struct mutex on an rt_mutex: from 5.15 on its base... */
struct mutex___rt {
	struct rt_mutex_base rtmutex;
} __attribute__((preserve_access_index));

/* ... and in the RT patches of older kernels (Debian's 5.10-rt) on a whole rt_mutex. */
struct rt_mutex___old {
	struct task_struct *owner;
} __attribute__((preserve_access_index));

struct mutex___rt_old {
	struct rt_mutex___old lock;
} __attribute__((preserve_access_index));

#endif
