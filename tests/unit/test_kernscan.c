// SPDX-License-Identifier: GPL-2.0
/*
 * kallsyms_scan() and btf_scan(): the scans find what a whole parse would.
 * - kallsyms: a symbol as a whole name only (not one that begins or ends like it), on a
 *   module's line too, on a line cut by the scan's 64 KiB reads, and 0 for a hidden address;
 * - BTF: a synthetic file made with libbpf (structs with and without the member, a typedef,
 *   a union of the struct's name, a string longer than the scan's buffer, types past it),
 *   and the running kernel's BTF against libbpf's parse of it, where there is one.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/btf.h>

#include "kernscan.h"
#include "test.h"

static char *temp_file(const void *data, size_t len)
{
	static char path[64];
	FILE *f;
	int fd;

	snprintf(path, sizeof(path), "/tmp/cgtma-kernscan.XXXXXX");
	fd = mkstemp(path);
	f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!f || fwrite(data, 1, len, f) != len) {
		CHECK(0, "cannot write %s: %s", path, strerror(errno));
		if (f)
			fclose(f);
		return NULL;
	}
	fclose(f);
	return path;
}

static void check_kallsyms(void)
{
	size_t cap = 200000, len = 0;
	char *text = malloc(cap), *path;
	unsigned long long addr;
	int i;

	if (!text)
		return;
	len += snprintf(text + len, cap - len, "ffffffff81000000 T _text\n"
		       "ffffffff82000010 D cgroup_mutex_x\n"
		       "ffffffff82000020 d xcgroup_mutex\n");
	/* Filler to past the first 64 KiB read, so that a line is cut there. */
	for (i = 0; len < 65536 - 20; i++)
		len += snprintf(text + len, cap - len, "ffffffff81%06x t filler_%d\n", i, i);
	len += snprintf(text + len, cap - len, "ffffffff82345678 D cgroup_mutex\n"
		       "ffffffffc0001000 t mod_sym\t[mod]\n"
		       "0000000000000000 D hidden_sym\n");
	path = temp_file(text, len);
	if (!path)
		goto out;
	CHECK_INT(kallsyms_scan(path, "cgroup_mutex", &addr), 0);
	CHECK(addr == 0xffffffff82345678ULL, "cgroup_mutex at %llx", addr);
	CHECK_INT(kallsyms_scan(path, "mod_sym", &addr), 0);
	CHECK(addr == 0xffffffffc0001000ULL, "mod_sym at %llx", addr);
	CHECK_INT(kallsyms_scan(path, "_text", &addr), 0);
	CHECK(addr == 0xffffffff81000000ULL, "_text at %llx", addr);
	CHECK_INT(kallsyms_scan(path, "hidden_sym", &addr), 0);
	CHECK(addr == 0, "hidden_sym at %llx", addr);
	CHECK_INT(kallsyms_scan(path, "cgroup_mut", &addr), 0);
	CHECK(addr == 0, "a prefix found at %llx", addr);
	CHECK_INT(kallsyms_scan(path, "filler_4", &addr), 0);
	CHECK(addr == 0xffffffff81000004ULL, "filler_4 at %llx", addr);
	unlink(path);
	CHECK_INT(kallsyms_scan("/nonexistent/kallsyms", "x", &addr), -ENOENT);
out:
	free(text);
}

/* The scan's answers for the queries on path, against want. */
static void expect(const char *path, struct btf_query *q, const bool *want, int n)
{
	CHECK_INT(btf_scan(path, q, n), 0);
	for (int i = 0; i < n; i++)
		CHECK(q[i].found == want[i], "%s%s%s: %d, want %d", q[i].name,
		      q[i].member ? "." : "", q[i].member ?: "", q[i].found, want[i]);
}

static void check_synthetic(void)
{
	struct btf_query q[] = {
		{ .name = "sched_entity", .member = "cfs_rq" },
		{ .name = "sched_entity", .member = "rq" },
		{ .name = "cfs_rq", .member = "rq" },
		{ .name = "btf_trace_sched_switch" },
		{ .name = "btf_trace_nope" },
		{ .name = "only_union", .member = "a" },
		{ .name = "sched_entity" },
		{ .name = "late", .member = "last" },
	};
	static const bool want[] = { true, false, false, true, false, false, false, true };
	struct btf *b = btf__new_empty();
	char *longstr = malloc(70000), *path;
	const void *raw;
	__u32 size;
	int id_int, se;

	if (!b || !longstr)
		goto out;
	memset(longstr, 'x', 69999);
	longstr[69999] = 0;
	id_int = btf__add_int(b, "int", 4, BTF_INT_SIGNED);
	se = btf__add_struct(b, "sched_entity", 8);
	btf__add_field(b, "load", id_int, 0, 0);
	btf__add_field(b, "cfs_rq", id_int, 32, 0);
	/* cfs_rq has no member rq here; a member named rq elsewhere must not count. */
	btf__add_struct(b, "cfs_rq", 4);
	btf__add_field(b, "nr_running", id_int, 0, 0);
	btf__add_struct(b, "other", 4);
	btf__add_field(b, "rq", id_int, 0, 0);
	btf__add_typedef(b, "btf_trace_sched_switch", se);
	btf__add_union(b, "only_union", 4);
	btf__add_field(b, "a", id_int, 0, 0);
	btf__add_str(b, longstr);
	/* Enough types to take the last past the first 64 KiB of the type section. */
	for (int i = 0; i < 3000; i++) {
		char name[32];

		snprintf(name, sizeof(name), "filler_%d", i);
		btf__add_struct(b, name, 4);
		btf__add_field(b, "f", id_int, 0, 0);
		btf__add_enum(b, name, 4);
		btf__add_enum_value(b, "E", i);
	}
	btf__add_struct(b, "late", 8);
	btf__add_field(b, "first", id_int, 0, 0);
	btf__add_field(b, "last", id_int, 32, 0);
	raw = btf__raw_data(b, &size);
	path = raw ? temp_file(raw, size) : NULL;
	CHECK(path != NULL, "synthetic BTF");
	if (!path)
		goto out;
	expect(path, q, want, sizeof(want) / sizeof(want[0]));
	unlink(path);
	path = temp_file("not BTF at all, but longer than its header", 42);
	if (path) {
		CHECK_INT(btf_scan(path, q, 1), -EINVAL);
		unlink(path);
	}
	CHECK_INT(btf_scan("/nonexistent/btf", q, 1), -ENOENT);
out:
	free(longstr);
	btf__free(b);
}

/* libbpf's answer, from its parse of the whole file. */
static bool libbpf_has(const struct btf *b, const struct btf_query *q)
{
	int id = btf__find_by_name_kind(b, q->name, q->member ? BTF_KIND_STRUCT : BTF_KIND_TYPEDEF);
	const struct btf_member *m;
	const struct btf_type *t;

	if (id <= 0 || !q->member)
		return id > 0;
	t = btf__type_by_id(b, id);
	m = btf_members(t);
	for (int i = 0; i < btf_vlen(t); i++)
		if (!strcmp(btf__name_by_offset(b, m[i].name_off), q->member))
			return true;
	return false;
}

static void check_kernel(void)
{
	static const char *path = "/sys/kernel/btf/vmlinux";
	struct btf_query q[] = {
		{ .name = "sched_entity", .member = "cfs_rq" },
		{ .name = "cfs_rq", .member = "rq" },
		{ .name = "task_struct", .member = "pid" },
		{ .name = "task_struct", .member = "no_such_member" },
		{ .name = "btf_trace_sched_switch" },
		{ .name = "btf_trace_softirq_entry" },
		{ .name = "btf_trace_no_such_tp" },
		{ .name = "mutex", .member = "owner" },
	};
	int n = sizeof(q) / sizeof(q[0]);
	bool want[sizeof(q) / sizeof(q[0])];
	struct btf *b;

	if (access(path, R_OK)) {
		printf("ok - # skip: %s: %s\n", path, strerror(errno));
		return;
	}
	b = btf__parse(path, NULL);
	CHECK(b != NULL, "libbpf parses %s", path);
	if (!b)
		return;
	for (int i = 0; i < n; i++)
		want[i] = libbpf_has(b, &q[i]);
	CHECK(want[0] && want[2] && want[4] && !want[3] && !want[6], "libbpf's own answers");
	expect(path, q, want, n);
	btf__free(b);
}

int main(void)
{
	check_kallsyms();
	check_synthetic();
	check_kernel();
	return test_done("kernscan");
}
