/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A few names found in the kernel's two big tables, /proc/kallsyms and its BTF
 * (/sys/kernel/btf/vmlinux), read once as a stream through a small buffer. A parse of the
 * whole table, as libbpf makes for a __ksym or btf__load_vmlinux_btf() makes, costs some
 * 50 ms of CPU each on a 2-vCPU VM (several times that under emulation), most of a start's
 * time outside the verifier; a scan for a few names costs a few.
 */
#ifndef CGTMA_KERNSCAN_H
#define CGTMA_KERNSCAN_H

#include <stdbool.h>

/*
 * The address /proc/kallsyms (or a file in its format at path) gives symbol name: *addr,
 * 0 when it has no such symbol or hides the address (no CAP_SYSLOG). 0 or -errno (the file
 * cannot be read).
 */
int kallsyms_scan(const char *path, const char *name, unsigned long long *addr);

/* One question for btf_scan(). */
struct btf_query {
	const char *name;		/* a struct's name (member set), else a typedef's */
	const char *member;		/* NULL: is there a typedef name */
	bool found;			/* the answer */
};

/*
 * Answers the n queries from the raw BTF at path (the kernel's, or a file in its format): a
 * struct called name with a member called member, or a typedef called name. 0, or -errno
 * where the file cannot be read or is not raw BTF of this machine's byte order (-EINVAL),
 * for the caller to ask libbpf instead.
 */
int btf_scan(const char *path, struct btf_query *q, int n);

#endif
