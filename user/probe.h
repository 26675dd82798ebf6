/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the running kernel and this process can do, read from /proc, uname(2) and the
 * kernel's BTF: the privileges perf and BPF need, the kernel's release, what /proc/kallsyms
 * shows, the types and tracepoints the BPF side may use; and what a loaded map can do.
 * Nothing here opens a perf event or loads a program.
 */
#ifndef CGTMA_PROBE_H
#define CGTMA_PROBE_H

#include <stdbool.h>
#include <stddef.h>

/* Capability numbers, as <linux/capability.h> has them from Linux 5.8. */
#define PROBE_CAP_SYS_ADMIN 21
#define PROBE_CAP_SYS_RESOURCE 24
#define PROBE_CAP_PERFMON 38
#define PROBE_CAP_BPF 39

/*
 * Whether this process may load BPF programs and open perf events (root, or CAP_PERFMON and
 * CAP_BPF): 0, or -EPERM after saying what it needs. Checked before anything probes the
 * PMU, whose answer would otherwise be the missing privilege's.
 */
int probe_privileges(void);

/* Whether capability cap (PROBE_CAP_*) is in this process's effective set. */
bool probe_capable(int cap);

/* Whether the running kernel's release is older than major.minor (unknown: older). */
bool probe_kernel_before(int major, int minor);

/* kernel.perf_event_paranoid, or -1 when it cannot be read. */
int probe_perf_event_paranoid(void);

/*
 * The address /proc/kallsyms gives this process for a kernel symbol, 0 where it gives none:
 * data symbols need CONFIG_KALLSYMS_ALL, and addresses read as 0 without CAP_SYSLOG (or
 * perf_event_paranoid <= 1).
 */
unsigned long long probe_kallsyms_addr(const char *name);

/*
 * Whether the kernel's BTF can be read (/sys/kernel/btf/vmlinux). The questions below scan
 * it for their names (kernscan.h) rather than parse it whole.
 */
bool probe_kernel_btf(void);

/* The most types one question below asks. */
#define PROBE_BTF_MAX 4

/*
 * Whether the kernel's BTF has, for each of the n pairs { type, member }, struct type with a
 * member of that name. One pass over the BTF for them all.
 */
bool probe_btf_has_members(const char *const pairs[][2], int n);

/* Whether the kernel's BTF has each of the n tracepoints (as tp_btf programs attach to them). */
bool probe_btf_has_tracepoints(const char *const names[], int n);

/*
 * Whether BPF_MAP_LOOKUP_BATCH works here (per-CPU hashes: 5.6+) on map_fd, a map with
 * __u64 keys whose lookups return value_size bytes per key.
 */
bool probe_lookup_batch(int map_fd, size_t value_size);

#endif
