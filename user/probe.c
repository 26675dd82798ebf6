// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <stdlib.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>

#include "kernscan.h"
#include "log.h"
#include "probe.h"

bool probe_kernel_before(int want_major, int want_minor)
{
	struct utsname u;
	int major = 0, minor = 0;

	if (uname(&u) || sscanf(u.release, "%d.%d", &major, &minor) != 2)
		return true;
	return major < want_major || (major == want_major && minor < want_minor);
}

/* CapEff from /proc/self/status; 0 when it cannot be read. */
static unsigned long long effective_caps(void)
{
	unsigned long long eff = 0;
	char line[256];
	FILE *f = fopen("/proc/self/status", "re");

	if (!f)
		return geteuid() == 0 ? ~0ULL : 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &eff) == 1)
			break;
	fclose(f);
	return eff;
}

#define CAP_BIT(n) (1ULL << (n))

bool probe_capable(int cap)
{
	return effective_caps() & CAP_BIT(cap);
}

/* perf and BPF need CAP_PERFMON+CAP_BPF or CAP_SYS_ADMIN. */
static bool has_privileges(void)
{
	unsigned long long eff = effective_caps();

	return (eff & CAP_BIT(PROBE_CAP_SYS_ADMIN)) ||
	       ((eff & CAP_BIT(PROBE_CAP_PERFMON)) && (eff & CAP_BIT(PROBE_CAP_BPF)));
}

int probe_privileges(void)
{
	if (has_privileges())
		return 0;
	pr_err("not permitted: needs root, or CAP_PERFMON and CAP_BPF (Linux 5.8+)");
	return -EPERM;
}

int probe_perf_event_paranoid(void)
{
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "re");
	int v = -1;

	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

unsigned long long probe_kallsyms_addr(const char *name)
{
	unsigned long long addr;

	return kallsyms_scan("/proc/kallsyms", name, &addr) ? 0 : addr;
}

bool probe_lookup_batch(int map_fd, size_t value_size)
{
	__u64 keys[1], out_batch;
	__u32 count = 1;
	void *values = malloc(value_size);
	int ret;

	if (!values)
		return false;
	ret = bpf_map_lookup_batch(map_fd, NULL, &out_batch, keys, values, &count, NULL);
	free(values);
	return ret == 0 || errno == ENOENT;
}

#define KERNEL_BTF "/sys/kernel/btf/vmlinux"

/*
 * The running kernel's BTF, parsed once for the questions btf_scan() cannot answer (a
 * kernel whose BTF is elsewhere than KERNEL_BTF): some 45 ms of a start, and libbpf's CO-RE
 * load parses its own copy. Kept for the process's life; NULL where the kernel has none.
 */
static const struct btf *kernel_btf(void)
{
	static struct btf *btf;
	static bool tried;

	if (!tried) {
		tried = true;
		btf = btf__load_vmlinux_btf();
	}
	return btf;
}

bool probe_kernel_btf(void)
{
	return access(KERNEL_BTF, R_OK) == 0 || kernel_btf();
}

/* Whether the kernel's whole parsed BTF has q's type: where btf_scan() cannot answer. */
static bool btf_parsed_has(const struct btf_query *q)
{
	const struct btf *btf = kernel_btf();
	const struct btf_member *m;
	const struct btf_type *t;
	int id;

	if (!btf)
		return false;
	id = btf__find_by_name_kind(btf, q->name, q->member ? BTF_KIND_STRUCT : BTF_KIND_TYPEDEF);
	if (id <= 0 || !q->member)
		return id > 0;
	t = btf__type_by_id(btf, id);
	m = btf_members(t);
	for (int i = 0; i < btf_vlen(t); i++)
		if (strcmp(btf__name_by_offset(btf, m[i].name_off), q->member) == 0)
			return true;
	return false;
}

/*
 * Whether the kernel's BTF has every one of the n types asked: one scan for them all (each
 * pass reads the whole 5 MB file, a page per read), else the whole parse.
 */
static bool btf_has_all(struct btf_query *q, int n)
{
	bool scanned = btf_scan(KERNEL_BTF, q, n) == 0;

	for (int i = 0; i < n; i++)
		if (!(scanned ? q[i].found : btf_parsed_has(&q[i])))
			return false;
	return true;
}

bool probe_btf_has_members(const char *const pairs[][2], int n)
{
	struct btf_query q[PROBE_BTF_MAX];

	if (n > PROBE_BTF_MAX)
		return false;
	for (int i = 0; i < n; i++)
		q[i] = (struct btf_query){ .name = pairs[i][0], .member = pairs[i][1] };
	return btf_has_all(q, n);
}

bool probe_btf_has_tracepoints(const char *const names[], int n)
{
	char type[PROBE_BTF_MAX][128];
	struct btf_query q[PROBE_BTF_MAX];

	if (n > PROBE_BTF_MAX)
		return false;
	/* What a tp_btf program attaches to: the tracepoint's btf_trace_NAME typedef. */
	for (int i = 0; i < n; i++) {
		if (snprintf(type[i], sizeof(type[i]), "btf_trace_%s", names[i]) >=
		    (int)sizeof(type[i]))
			return false;
		q[i] = (struct btf_query){ .name = type[i] };
	}
	return btf_has_all(q, n);
}
