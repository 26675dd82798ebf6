// SPDX-License-Identifier: GPL-2.0
/*
 * Event specifications to perf_event_attr: perf's names and modifiers, raw rNNN, PMU terms
 * in the built-in x86 layout and in sysfs formats (a fake sysfs tree in a temporary
 * directory), sysfs aliases, libpfm4 names encoded for a forced PMU, the errors, and the
 * splitting of -e lists.
 *
 * Tracepoints are not tested here: they need tracefs, which needs root; the live tests count
 * syscalls:sys_enter_getppid.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "events.h"
#include "measurement.h"
#include "pfmtable.h"
#include "suggest.h"
#include "test.h"

static char sysfs[] = "/tmp/cgtma-test-sysfs.XXXXXX";

static void put_file(const char *rel, const char *text)
{
	char path[4096], dir[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", sysfs, rel);
	/* mkdir -p of the parent */
	snprintf(dir, sizeof(dir), "%s", path);
	for (char *p = dir + strlen(sysfs) + 1; *p; p++) {
		if (*p == '/') {
			*p = '\0';
			mkdir(dir, 0755);
			*p = '/';
		}
	}
	f = fopen(path, "w");
	if (!f || fputs(text, f) < 0 || fclose(f)) {
		printf("not ok - cannot write %s\n", path);
		exit(1);
	}
}

static void remove_tree(void)
{
	char cmd[4200];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", sysfs);
	if (system(cmd) != 0)
		printf("# could not remove %s\n", sysfs);
}

/* A PMU tree as the kernel writes it: formats, aliases and types, newline-terminated. */
static void make_sysfs(void)
{
	if (!mkdtemp(sysfs)) {
		printf("not ok - mkdtemp: %s\n", strerror(errno));
		exit(1);
	}
	put_file("cpu/type", "4\n");
	put_file("cpu/format/event", "config:0-7\n");
	put_file("cpu/format/umask", "config:8-15\n");
	put_file("cpu/format/edge", "config:18\n");
	put_file("cpu/format/inv", "config:23\n");
	put_file("cpu/format/cmask", "config:24-31\n");
	put_file("cpu/format/ldlat", "config1:0-15\n");
	put_file("cpu/format/frontend", "config2:0-23\n");
	put_file("cpu/format/broken", "confog:0-7\n");
	put_file("cpu/format/backwards", "config:7-0\n");
	put_file("cpu/events/slots", "event=0x00,umask=0x4\n");
	put_file("cpu/events/topdown-fe-bound", "event=0x00,umask=0x82\n");
	put_file("cpu/events/topdown-retiring", "event=0x00,umask=0x80\n");
	put_file("cpu/events/mem-loads", "event=0xcd,umask=0x1,ldlat=3\n");
	put_file("cpu/events/nested", "topdown-fe-bound\n");
	/* A split field, as AMD's event: the value's bits fill the ranges in order. */
	put_file("amd_core/type", "8\n");
	put_file("amd_core/format/event", "config:0-7,32-35\n");
	put_file("amd_core/format/umask", "config:8-15\n");
	put_file("uncore_imc_0/type", "17\n");
	put_file("uncore_imc_0/format/event", "config:0-7\n");
	put_file("uncore_imc_0/format/umask", "config:8-15\n");
	put_file("uncore_imc_0/events/cas_count_read", "event=0x04,umask=0x03\n");
	/* An Arm core PMU as ACPI servers name it, with its aliases (drivers/perf/arm_pmuv3.c) */
	put_file("armv8_pmuv3_0/type", "10\n");
	put_file("armv8_pmuv3_0/format/event", "config:0-15\n");
	put_file("armv8_pmuv3_0/events/stall_slot_backend", "event=0x003d\n");
	put_file("armv8_pmuv3_0/events/cpu_cycles", "event=0x0011\n");
	put_file("armv8_pmuv3_0/caps/slots", "0x00000008\n");
	put_file("nottype/type", "four\n");
	put_file("nottype/format/event", "config:0-7\n");
}

/* Parses spec and checks it succeeds with the given type and config. */
#define CHECK_EVENT(spec, want_type, want_config)                                        \
	do {                                                                              \
		struct perf_event_attr a_;                                                \
		char e_[EVENT_ERR_LEN];                                                   \
		int r_ = event_parse((spec), &a_, e_, sizeof(e_));                        \
		CHECK(r_ == 0, "%s: returned %d (%s)", (spec), r_, e_);                   \
		if (r_ == 0) {                                                            \
			CHECK(a_.type == (want_type), "%s: type %u, want %u", (spec),     \
			      a_.type, (unsigned)(want_type));                            \
			CHECK(a_.config == (want_config), "%s: config 0x%llx, want 0x%llx", \
			      (spec), (unsigned long long)a_.config,                      \
			      (unsigned long long)(want_config));                        \
			CHECK(a_.size == sizeof(a_), "%s: size %u", (spec), a_.size);     \
		}                                                                         \
	} while (0)

/* Parses spec and checks it fails with want_ret and a reason mentioning want_text. */
#define CHECK_BAD(spec, want_ret, want_text)                                             \
	do {                                                                              \
		struct perf_event_attr a_;                                                \
		char e_[EVENT_ERR_LEN];                                                   \
		int r_ = event_parse((spec), &a_, e_, sizeof(e_));                        \
		CHECK(r_ == (want_ret), "'%s': returned %d, want %d (%s)", (spec), r_,    \
		      (want_ret), e_);                                                    \
		CHECK(strstr(e_, (want_text)) != NULL, "'%s': reason '%s' lacks '%s'",    \
		      (spec), e_, (want_text));                                           \
	} while (0)

static void test_perf_names(void)
{
	static const struct {
		const char *spec;
		__u32 type;
		__u64 config;
	} cases[] = {
		{ "cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK },
		{ "task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK },
		{ "page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS },
		{ "faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS },
		{ "minor-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN },
		{ "major-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ },
		{ "context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES },
		{ "cs", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES },
		{ "cpu-migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS },
		{ "migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS },
		{ "cgroup-switches", PERF_TYPE_SOFTWARE, 11 },
		{ "cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
		{ "cpu-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
		{ "instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS },
		{ "cache-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES },
		{ "branches", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS },
		{ "branch-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES },
		{ "ref-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES },
		{ "stalled-cycles-frontend", PERF_TYPE_HARDWARE,
		  PERF_COUNT_HW_STALLED_CYCLES_FRONTEND },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		CHECK_EVENT(cases[i].spec, cases[i].type, cases[i].config);
}

static bool parses(const char *spec, struct perf_event_attr *a)
{
	char err[EVENT_ERR_LEN];
	int ret = event_parse(spec, a, err, sizeof(err));

	CHECK(ret == 0, "%s: returned %d (%s)", spec, ret, err);
	return ret == 0;
}

static void check_excl(const char *spec, int user, int kernel, int hv)
{
	struct perf_event_attr a;

	if (!parses(spec, &a))
		return;
	CHECK(a.exclude_user == user && a.exclude_kernel == kernel && a.exclude_hv == hv,
	      "%s: exclude user %d kernel %d hv %d, want %d %d %d", spec, a.exclude_user,
	      a.exclude_kernel, a.exclude_hv, user, kernel, hv);
}

static void check_guest(const char *spec, int guest, int host)
{
	struct perf_event_attr a;

	if (!parses(spec, &a))
		return;
	CHECK(a.exclude_guest == guest && a.exclude_host == host,
	      "%s: exclude guest %d host %d, want %d %d", spec, a.exclude_guest, a.exclude_host,
	      guest, host);
}

static void test_modifiers(void)
{
	check_excl("cycles", 0, 0, 0);
	check_excl("cycles:u", 0, 1, 1);
	check_excl("cycles:k", 1, 0, 0);
	check_excl("cycles:uk", 0, 0, 0);	/* both: nothing excluded */
	check_excl("cycles:ku", 0, 0, 0);
	check_excl("instructions:u", 0, 1, 1);
	check_excl("cpu/event=0x3c/u", 0, 1, 1);
	check_excl("cpu/event=0x3c/k", 1, 0, 0);
	check_excl("cpu/event=0x3c/", 0, 0, 0);
	/* guests: excluded from hardware events by default, as perf; G and H as perf's */
	check_guest("cycles", 1, 0);
	check_guest("cycles:u", 1, 0);
	check_guest("cycles:G", 0, 1);
	check_guest("cycles:H", 1, 0);
	check_guest("cycles:GH", 0, 0);
	check_guest("cycles:uG", 0, 1);
	check_guest("cpu/event=0x3c/", 1, 0);
	check_guest("cpu/event=0x3c/G", 0, 1);
	check_guest("cpu/event=0x3c/HG", 0, 0);
	check_guest("r003c", 1, 0);
	check_guest("cpu-clock", 0, 0);		/* software: no guest to exclude */
	check_guest("cpu-clock:H", 1, 0);
	check_guest("context-switches:u", 0, 0);
	/* A modifier does not change what is counted. */
	CHECK_EVENT("cycles:u", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES);
	CHECK_EVENT("cpu-clock:k", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK);

	CHECK_BAD("cycles:x", -EINVAL, "unknown modifier 'x'");
	CHECK_BAD("cycles:up", -EINVAL, "unknown modifier 'p'");
	CHECK_BAD("cpu/event=0x3c/z", -EINVAL, "unknown modifier 'z'");
}

static void test_raw(void)
{
	CHECK_EVENT("r01a0", PERF_TYPE_RAW, 0x1a0);
	CHECK_EVENT("r0", PERF_TYPE_RAW, 0);
	CHECK_EVENT("rC0", PERF_TYPE_RAW, 0xc0);
	CHECK_EVENT("r5300c0", PERF_TYPE_RAW, 0x5300c0);
	CHECK_EVENT("rffffffffffffffff", PERF_TYPE_RAW, ~0ULL);
}

/* With no cpu PMU in sysfs (VMs), cpu/.../ uses the x86 core layout and the raw type. */
static void test_builtin_layout(void)
{
	char empty[4200];

	snprintf(empty, sizeof(empty), "%s/none", sysfs);
	event_sysfs_root = empty;

	CHECK_EVENT("cpu/event=0xa0,umask=0x01,cmask=6/", PERF_TYPE_RAW,
		    0xa0 | 0x01 << 8 | 6ULL << 24);
	CHECK_EVENT("cpu/event=0x3c,edge,inv,cmask=1/", PERF_TYPE_RAW,
		    0x3c | 1ULL << 18 | 1ULL << 23 | 1ULL << 24);
	CHECK_EVENT("cpu/event=0xc2,umask=0x02,any/", PERF_TYPE_RAW, 0xc2 | 0x02 << 8 | 1ULL << 21);
	/* Decimal values, and flags given a value. */
	CHECK_EVENT("cpu/event=60,umask=0,edge=1/", PERF_TYPE_RAW, 60 | 1ULL << 18);
	/* AMD's 12-bit event code: the high nibble goes to bits 32-35. */
	CHECK_EVENT("cpu/event=0x1a0,umask=0xff/", PERF_TYPE_RAW, 0xa0 | 0xff << 8 | 1ULL << 32);
	CHECK_EVENT("cpu/event=0xfff/", PERF_TYPE_RAW, 0xff | 0xfULL << 32);
	/* config, config1 and config2 directly. */
	CHECK_EVENT("cpu/config=0x1234/", PERF_TYPE_RAW, 0x1234);
	{
		struct perf_event_attr a;
		char err[EVENT_ERR_LEN];

		CHECK_INT(event_parse("cpu/event=0xb7,umask=0x01,offcore_rsp=0x10001/", &a, err,
				      sizeof(err)), 0);
		CHECK(a.config == (0xb7 | 0x01 << 8) && a.config1 == 0x10001,
		      "offcore_rsp: config 0x%llx config1 0x%llx", (unsigned long long)a.config,
		      (unsigned long long)a.config1);
		CHECK_INT(event_parse("cpu/event=0xcd,umask=1,ldlat=3/", &a, err, sizeof(err)), 0);
		CHECK(a.config1 == 3, "ldlat: config1 0x%llx", (unsigned long long)a.config1);
		CHECK_INT(event_parse("cpu/event=1,config1=5,config2=7/", &a, err, sizeof(err)), 0);
		CHECK(a.config == 1 && a.config1 == 5 && a.config2 == 7,
		      "config1/config2: 0x%llx 0x%llx 0x%llx", (unsigned long long)a.config,
		      (unsigned long long)a.config1, (unsigned long long)a.config2);
	}

	/* Values wider than their field. */
	CHECK_BAD("cpu/event=0x1000/", -EINVAL, "does not fit term 'event'");
	CHECK_BAD("cpu/umask=0x100/", -EINVAL, "does not fit term 'umask'");
	CHECK_BAD("cpu/edge=2/", -EINVAL, "does not fit term 'edge'");
	CHECK_BAD("cpu/cmask=256/", -EINVAL, "does not fit term 'cmask'");
	/* Malformed terms and values. */
	CHECK_BAD("cpu/bogus=1/", -ENOENT, "unknown term 'bogus'");
	CHECK_BAD("cpu/event=0x3c,nope/", -ENOENT, "unknown term 'nope'");
	CHECK_BAD("cpu/event=xyz/", -EINVAL, "bad value 'xyz'");
	CHECK_BAD("cpu/event=-1/", -EINVAL, "bad value '-1'");
	CHECK_BAD("cpu/event=/", -EINVAL, "bad value ''");
	CHECK_BAD("cpu/event=0x3c0x/", -EINVAL, "bad value");
	CHECK_BAD("cpu/event=99999999999999999999/", -EINVAL, "bad value");
	CHECK_BAD("cpu//", -EINVAL, "no terms");
	CHECK_BAD("cpu/event=1", -EINVAL, "expected PMU/terms/");
	CHECK_BAD("/event=1/", -EINVAL, "expected PMU/terms/");
	/* Other PMUs need sysfs. */
	CHECK_BAD("nopmu/event=1/", -ENOENT, "no PMU named 'nopmu'");
	/* No aliases without sysfs. */
	CHECK_BAD("cpu/topdown-fe-bound/", -ENOENT, "unknown term 'topdown-fe-bound'");

	event_sysfs_root = sysfs;
}

/* Arm's events as perf and libpfm4 write them: name, raw number, PMU terms; :u and :k */
static void test_arm(void)
{
	static const struct {
		const char *spec;
		unsigned type;
		unsigned long long config;
		bool no_kernel, no_user;
	} cases[] = {
		{ "STALL_SLOT_BACKEND", 10, 0x3d, false, false },
		{ "stall_slot_backend", 10, 0x3d, false, false },
		{ "STALL_SLOT_BACKEND:u", 10, 0x3d, true, false },
		{ "stall_slot_backend:k", 10, 0x3d, false, true },
		{ "CPU_CYCLES:k", 10, 0x11, false, true },
		{ "r3d", PERF_TYPE_RAW, 0x3d, false, false },
		{ "r3d:u", PERF_TYPE_RAW, 0x3d, true, false },
		{ "r8158:k", PERF_TYPE_RAW, 0x8158, false, true },
		{ "armv8_pmuv3_0/event=0x3d/", 10, 0x3d, false, false },
		{ "armv8_pmuv3/event=0x3d/", 10, 0x3d, false, false },
		{ "armv8_pmuv3/event=0x3d/u", 10, 0x3d, true, false },
		{ "armv8_pmuv3_0/stall_slot_backend/k", 10, 0x3d, false, true },
		{ "armv8_pmuv3_0/event=0x8158/", 10, 0x8158, false, false },
	};
	struct perf_event_attr a;
	char err[EVENT_ERR_LEN];

	event_sysfs_root = sysfs;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int ret = event_parse(cases[i].spec, &a, err, sizeof(err));

		CHECK(ret == 0, "%s: %d (%s)", cases[i].spec, ret, err);
		if (ret)
			continue;
		CHECK(a.type == cases[i].type && a.config == cases[i].config,
		      "%s: type %u config 0x%llx", cases[i].spec, a.type,
		      (unsigned long long)a.config);
		CHECK(a.exclude_kernel == cases[i].no_kernel && a.exclude_user == cases[i].no_user,
		      "%s: exclude_kernel %d exclude_user %d", cases[i].spec, a.exclude_kernel,
		      a.exclude_user);
		CHECK(a.exclude_guest, "%s: counts guests", cases[i].spec);
	}
	/* "armv8_pmu" is no instance of armv8_pmuv3: not a PMU; a name no PMU lists stays unknown */
	CHECK_BAD("armv8_pmu/event=0x3d/", -ENOENT, "no PMU named 'armv8_pmu'");
	CHECK(event_parse("STALL_SLOT_BACKEND_X", &a, err, sizeof(err)) == -ENOENT,
	      "an unknown Arm name parsed");
	CHECK_BAD("r3d:x", -EINVAL, "unknown modifier 'x'");
}

static void test_sysfs(void)
{
	struct perf_event_attr a;
	char err[EVENT_ERR_LEN];

	event_sysfs_root = sysfs;
	CHECK_EVENT("cpu/event=0xa0,umask=0x01,cmask=6/", 4, 0xa0 | 0x01 << 8 | 6ULL << 24);
	CHECK_EVENT("cpu/event=0x3c,edge,inv/", 4, 0x3c | 1ULL << 18 | 1ULL << 23);
	/* The type comes from sysfs. */
	CHECK_EVENT("uncore_imc_0/event=0x04,umask=0x03/", 17, 0x0304);
	CHECK_EVENT("amd_core/event=0x1a0,umask=0x1/", 8, 0xa0 | 1 << 8 | 1ULL << 32);
	/* Aliases expand to their terms; extra terms add to them. */
	CHECK_EVENT("cpu/slots/", 4, 0x0400);
	CHECK_EVENT("cpu/topdown-fe-bound/", 4, 0x8200);
	CHECK_EVENT("cpu/topdown-retiring/", 4, 0x8000);
	CHECK_EVENT("uncore_imc_0/cas_count_read/", 17, 0x0304);
	CHECK_EVENT("cpu/topdown-fe-bound,edge/", 4, 0x8200 | 1ULL << 18);
	CHECK_INT(event_parse("cpu/mem-loads/", &a, err, sizeof(err)), 0);
	CHECK(a.config == 0x1cd && a.config1 == 3, "mem-loads: config 0x%llx config1 0x%llx",
	      (unsigned long long)a.config, (unsigned long long)a.config1);
	CHECK_INT(event_parse("cpu/event=0xc6,frontend=0x400406/", &a, err, sizeof(err)), 0);
	CHECK(a.config == 0xc6 && a.config2 == 0x400406, "frontend: config 0x%llx config2 0x%llx",
	      (unsigned long long)a.config, (unsigned long long)a.config2);
	check_excl("cpu/topdown-fe-bound/u", 0, 1, 1);

	/* sysfs's layout wins over the built-in one: here event is 8 bits only. */
	CHECK_BAD("cpu/event=0x1a0/", -EINVAL, "does not fit term 'event' (config:0-7)");
	CHECK_BAD("uncore_imc_0/event=1,any/", -ENOENT, "unknown term 'any' for PMU 'uncore_imc_0'");
	/* A cpu PMU in sysfs without an 'any' format (AMD's): no built-in stand-in for it. */
	CHECK_BAD("cpu/event=0x3c,any/", -ENOENT, "unknown term 'any' for PMU 'cpu'");
	/* An alias is not a term with a value, and aliases do not nest. */
	CHECK_BAD("cpu/topdown-fe-bound=1/", -ENOENT, "unknown term 'topdown-fe-bound'");
	CHECK_BAD("cpu/nested/", -ENOENT, "unknown term 'topdown-fe-bound'");
	CHECK_BAD("cpu/no-such-alias/", -ENOENT, "unknown term 'no-such-alias'");
	/* Unreadable formats and types. */
	CHECK_BAD("cpu/broken=1/", -EINVAL, "unreadable format 'confog:0-7'");
	CHECK_BAD("cpu/backwards=1/", -EINVAL, "unreadable format 'config:7-0'");
	CHECK_BAD("nottype/event=1/", -ENOENT, "no PMU named 'nottype'");
	CHECK_BAD("nopmu/event=1/", -ENOENT, "no PMU named 'nopmu'");
}

/* libpfm4 encodes for the PMU LIBPFM_FORCE_PMU names, whatever this machine is. */
static void test_libpfm(void)
{
	struct perf_event_attr a;
	char err[EVENT_ERR_LEN];

	CHECK_EVENT("INST_RETIRED:ANY_P", PERF_TYPE_RAW, 0xc0);
	CHECK_EVENT("CPU_CLK_UNHALTED:THREAD_P", PERF_TYPE_RAW, 0x3c);
	CHECK_EVENT("BR_MISP_RETIRED:ALL_BRANCHES", PERF_TYPE_RAW, 0xc5);
	CHECK_EVENT("UOPS_ISSUED:ANY", PERF_TYPE_RAW, 0x010e);
	/* libpfm4's modifiers: c= (cmask), e (edge), i (inv). */
	CHECK_EVENT("UOPS_RETIRED:RETIRE_SLOTS:c=1:e=1", PERF_TYPE_RAW,
		    0x02c2 | 1ULL << 18 | 1ULL << 24);
	CHECK_EVENT("UOPS_ISSUED:ANY:c=1:i=1", PERF_TYPE_RAW, 0x010e | 1ULL << 23 | 1ULL << 24);
	/* Both privilege levels unless asked: exclusion is cgtma's choice, not libpfm4's. */
	CHECK_INT(event_parse("INST_RETIRED:ANY_P", &a, err, sizeof(err)), 0);
	CHECK(!a.exclude_user && !a.exclude_kernel, "INST_RETIRED:ANY_P: exclude user %d kernel %d",
	      a.exclude_user, a.exclude_kernel);
	CHECK(a.exclude_guest && !a.exclude_host, "INST_RETIRED:ANY_P: exclude guest %d host %d",
	      a.exclude_guest, a.exclude_host);
	CHECK_INT(event_parse("INST_RETIRED:ANY_P:u=1:k=0", &a, err, sizeof(err)), 0);
	CHECK(!a.exclude_user && a.exclude_kernel, "INST_RETIRED:ANY_P:u: exclude user %d kernel %d",
	      a.exclude_user, a.exclude_kernel);

	CHECK_BAD("NO_SUCH_EVENT:ANY", -ENOENT, "nor known to libpfm4");
	CHECK_BAD("INST_RETIRED:NO_SUCH_UMASK", -EINVAL, "nor known to libpfm4");
	CHECK_BAD("UOPS_ISSUED:ANY:c=999", -EINVAL, "nor known to libpfm4");
}

static void test_bad(void)
{
	CHECK_BAD("", -EINVAL, "empty event");
	CHECK_BAD("no-such-event", -ENOENT, "not a perf event name");
	CHECK_BAD("cpuclock", -ENOENT, "not a perf event name");
	CHECK_BAD("CPU-CLOCK", -ENOENT, "not a perf event name");
	/* Not raw: 'r' alone, or non-hex digits. */
	CHECK_BAD("r", -ENOENT, "not a perf event name");
	CHECK_BAD("r12g", -ENOENT, "not a perf event name");
}

struct split_case {
	const char *list;
	int n;
	const char *want[4];
};

static void test_split(void)
{
	static const struct split_case cases[] = {
		{ "cpu-clock", 1, { "cpu-clock" } },
		{ "cpu-clock,cycles", 2, { "cpu-clock", "cycles" } },
		{ "cpu/event=0xa0,umask=0x01,cmask=6/", 1, { "cpu/event=0xa0,umask=0x01,cmask=6/" } },
		{ "cycles,cpu/event=0xa0,umask=0x01/,instructions", 3,
		  { "cycles", "cpu/event=0xa0,umask=0x01/", "instructions" } },
		{ "cpu/event=1,umask=2/u,cpu/event=3,edge/k", 2,
		  { "cpu/event=1,umask=2/u", "cpu/event=3,edge/k" } },
		{ "cpu/slots/,cpu/topdown-fe-bound/,cpu/topdown-retiring/", 3,
		  { "cpu/slots/", "cpu/topdown-fe-bound/", "cpu/topdown-retiring/" } },
		{ "INST_RETIRED:ANY_P,UOPS_ISSUED:ANY:c=1", 2,
		  { "INST_RETIRED:ANY_P", "UOPS_ISSUED:ANY:c=1" } },
		{ "syscalls:sys_enter_getppid,cpu-clock,cs,faults", 4,
		  { "syscalls:sys_enter_getppid", "cpu-clock", "cs", "faults" } },
	};
	static const char *const bad[] = { "", ",", "a,", ",a", "a,,b", "cpu/event=1/,,b" };

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char **v = NULL;
		int n = event_list_split(cases[i].list, &v);

		CHECK(n == cases[i].n, "'%s': %d entries, want %d", cases[i].list, n, cases[i].n);
		for (int j = 0; j < n && j < cases[i].n; j++)
			CHECK_STR(v[j], cases[i].want[j]);
		if (n > 0)
			event_list_free(v, n);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char **v = NULL;
		int n = event_list_split(bad[i], &v);

		CHECK(n == -EINVAL, "'%s': returned %d, want -EINVAL", bad[i], n);
		if (n > 0)
			event_list_free(v, n);
	}
	/* 33 entries split fine: the limit of 32 is the caller's to enforce. */
	{
		char list[33 * 10] = "";
		char **v = NULL;
		int n;

		for (int i = 0; i < 33; i++)
			strcat(list, i ? ",cs" : "cs");
		n = event_list_split(list, &v);
		CHECK_INT(n, 33);
		if (n > 0) {
			CHECK_STR(v[32], "cs");
			event_list_free(v, n);
		}
	}
}

/* -e's group for one list: names in order, and each event's group. */
static void check_topdown(const char *list, int nr, const char *const *names, const int *groups)
{
	struct measure_opts o = { .events = list, .perf_metrics = -1, .smt = -1,
				  .nmi_watchdog = -1 };
	struct measurement m = {};
	int ret = measurement_setup(&o, &m);

	CHECK(ret == 0, "%s: %d", list, ret);
	CHECK(m.nr_events == nr, "%s: %d events, want %d", list, m.nr_events, nr);
	for (int i = 0; !ret && i < nr && i < m.nr_events; i++) {
		CHECK_STR(m.names[i], names[i]);
		CHECK(m.group[i] == groups[i], "%s: %s in group %d, want %d", list, names[i],
		      m.group[i], groups[i]);
	}
	/* the leader is the slots event, with the metrics' exclusions */
	if (!ret && nr > 1 && !strcmp(names[0], "cpu/slots/")) {
		CHECK(m.attrs[0].type == 4 && m.attrs[0].config == 0x0400, "%s: leader %u 0x%llx",
		      list, m.attrs[0].type, (unsigned long long)m.attrs[0].config);
		CHECK(m.attrs[0].exclude_kernel == m.attrs[1].exclude_kernel, "%s: exclusions",
		      list);
	}
	measurement_release(&m);
}

/* perf-metrics events given with -e get a slots leader, as perf gives them */
static void test_topdown_leader(void)
{
	check_topdown("cpu/topdown-fe-bound/", 2,
		      (const char *[]){ "cpu/slots/", "cpu/topdown-fe-bound/" },
		      (const int[]){ 0, 0 });
	check_topdown("cycles,cpu/topdown-retiring/u,cpu-clock,cpu/event=0x00,umask=0x82/u", 5,
		      (const char *[]){ "cycles", "cpu/slots/", "cpu/topdown-retiring/u",
					"cpu/event=0x00,umask=0x82/u", "cpu-clock" },
		      (const int[]){ 0, 1, 1, 1, 2 });
	/* a slots event in the list leads, wherever it was */
	check_topdown("cpu/topdown-fe-bound/,cycles,cpu/slots/", 3,
		      (const char *[]){ "cpu/slots/", "cpu/topdown-fe-bound/", "cycles" },
		      (const int[]){ 0, 0, 1 });
	/* without metrics events nothing changes */
	check_topdown("cpu/slots/,cycles", 2, (const char *[]){ "cpu/slots/", "cycles" },
		      (const int[]){ 0, 1 });
}

/* An unknown name: the close perf and libpfm4 (skx) names, modifiers and umasks kept. */
static void check_suggest(const char *typo, const char *want)
{
	char buf[SUGGEST_LEN];
	struct suggest sg;

	suggest_init(&sg, typo);
	CHECK_INT(event_suggest(typo, &sg), 0);
	suggest_format(&sg, buf, sizeof(buf));
	CHECK(strcmp(buf, want) == 0, "'%s': got \"%s\", want \"%s\"", typo, buf, want);
	suggest_release(&sg);
}

static void test_suggest(bool skx)
{
	check_suggest("cycels", "did you mean 'cycles'?");
	check_suggest("cycels:u", "did you mean 'cycles:u'?");
	check_suggest("context-swtiches", "did you mean 'context-switches'?");
	if (skx) {
		check_suggest("INST_RETIRD:ANY_P", "did you mean 'INST_RETIRED:ANY_P'?");
		check_suggest("br_msip_retired", "did you mean 'BR_MISP_RETIRED'?");
	} else {
		SKIP("libpfm4 names suggested: this libpfm4 has no 'skx' table");
	}
	check_suggest("completely-unrelated-name", "");
}

int main(void)
{
	bool skx;

	/* Before the first libpfm4 use: it reads the variable when it initializes. */
	setenv("LIBPFM_FORCE_PMU", "skx", 1);
	skx = pfm_table_built_in("skx");
	make_sysfs();

	test_perf_names();
	test_modifiers();
	test_raw();
	test_builtin_layout();
	test_sysfs();
	test_arm();
	if (skx)
		test_libpfm();
	else
		SKIP("libpfm4 names encoded: this libpfm4 has no 'skx' table");
	test_bad();
	test_split();
	test_topdown_leader();
	test_suggest(skx);

	remove_tree();
	return test_done("events");
}
