// SPDX-License-Identifier: GPL-2.0
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "alloc.h"
#include "events.h"
#include "mounts.h"
#include "pfm_encode.h"
#include "smallfile.h"
#include "suggest.h"

const char *event_sysfs_root = "/sys/bus/event_source/devices";

struct named_event {
	const char *name;
	__u32 type;
	__u64 config;
};

/* perf's names (tools/perf/util/parse-events.c), aliases included. */
static const struct named_event named_events[] = {
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
	{ "alignment-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_ALIGNMENT_FAULTS },
	{ "emulation-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_EMULATION_FAULTS },
	{ "cgroup-switches", PERF_TYPE_SOFTWARE, 11 /* PERF_COUNT_SW_CGROUP_SWITCHES, 5.13 */ },
	{ "cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
	{ "cpu-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
	{ "instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS },
	{ "cache-references", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES },
	{ "cache-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES },
	{ "branch-instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS },
	{ "branches", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS },
	{ "branch-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES },
	{ "bus-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BUS_CYCLES },
	{ "stalled-cycles-frontend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_FRONTEND },
	{ "stalled-cycles-backend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_BACKEND },
	{ "ref-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES },
};

/*
 * The x86 core PMU's format, for when sysfs has no "cpu" PMU (VMs, and unit tests encoding
 * for another machine). The event field's high nibble (bits 32-35) is AMD's; Intel event
 * codes fit in 8 bits, so one layout serves both.
 */
static const struct {
	const char *term;
	const char *format;
} x86_core_format[] = {
	{ "event", "config:0-7,32-35" }, { "umask", "config:8-15" },
	{ "edge", "config:18" },	 { "pc", "config:19" },
	{ "any", "config:21" },		 { "inv", "config:23" },
	{ "cmask", "config:24-31" },	 { "offcore_rsp", "config1:0-63" },
	{ "ldlat", "config1:0-15" },	 { "frontend", "config1:0-23" },
};

/* A PMU's counters, not the kernel's software or tracepoint events. */
static bool counts_hardware(const struct perf_event_attr *attr)
{
	return attr->type != PERF_TYPE_SOFTWARE && attr->type != PERF_TYPE_TRACEPOINT;
}

/*
 * perf's modifiers: u and k as perf's; G and H, guest and host, as perf's too. Without G or
 * H a hardware event excludes the guests of a VMM (exclude_guest, perf's default), so that
 * a VMM's cgroup is not charged what its guests run; G counts guests only, H the host only,
 * GH both.
 */
static int apply_modifiers(const char *mods, struct perf_event_attr *attr, char *err,
			   size_t errlen)
{
	bool user = false, kernel = false, guest = false, host = false;

	for (const char *m = mods; *m; m++) {
		if (*m == 'u')
			user = true;
		else if (*m == 'k')
			kernel = true;
		else if (*m == 'G')
			guest = true;
		else if (*m == 'H')
			host = true;
		else {
			snprintf(err, errlen, "unknown modifier '%c' (u, k, G and H are supported)",
				 *m);
			return -EINVAL;
		}
	}
	if (user != kernel) {
		attr->exclude_kernel = user;
		attr->exclude_hv = user;
		attr->exclude_user = kernel;
	}
	if (guest || host) {
		attr->exclude_guest = !guest;
		attr->exclude_host = !host;
	} else {
		attr->exclude_guest = counts_hardware(attr);
	}
	return 0;
}

static int parse_u64(const char *s, __u64 *v)
{
	char *end;

	if (!*s || *s == '-')
		return -EINVAL;
	errno = 0;
	*v = strtoull(s, &end, 0);
	return errno || *end ? -EINVAL : 0;
}

/* Places value into attr per a sysfs format string such as "config:0-7,32-35". */
static int place_bits(struct perf_event_attr *attr, const char *format, __u64 value,
		      const char *term, char *err, size_t errlen)
{
	char buf[128], *ranges, *save = NULL;
	__u64 *field, rest = value;

	snprintf(buf, sizeof(buf), "%s", format);
	ranges = strchr(buf, ':');
	if (!ranges)
		goto bad_format;
	*ranges++ = '\0';
	if (strcmp(buf, "config") == 0)
		field = &attr->config;
	else if (strcmp(buf, "config1") == 0)
		field = &attr->config1;
	else if (strcmp(buf, "config2") == 0)
		field = &attr->config2;
	else
		goto bad_format;

	for (char *r = strtok_r(ranges, ",", &save); r; r = strtok_r(NULL, ",", &save)) {
		unsigned int lo, hi;
		int n = sscanf(r, "%u-%u", &lo, &hi);

		if (n == 1)
			hi = lo;
		if (n < 1 || lo > hi || hi > 63)
			goto bad_format;
		for (unsigned int b = lo; b <= hi; b++, rest >>= 1)
			*field |= (rest & 1ULL) << b;
	}
	if (rest) {
		snprintf(err, errlen, "value 0x%llx does not fit term '%s' (%s)",
			 (unsigned long long)value, term, format);
		return -EINVAL;
	}
	return 0;
bad_format:
	snprintf(err, errlen, "unreadable format '%s' for term '%s'", format, term);
	return -EINVAL;
}

static int pmu_format(const char *pmu, const char *term, char *format, size_t len)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s/format/%s", event_sysfs_root, pmu, term);
	if (smallfile_read(path, format, len) == 0)
		return 0;
	/* The built-in layout stands in for a missing PMU only, not for a term it lacks. */
	snprintf(path, sizeof(path), "%s/%s", event_sysfs_root, pmu);
	if (strcmp(pmu, "cpu") != 0 || access(path, F_OK) == 0)
		return -ENOENT;
	for (size_t i = 0; i < sizeof(x86_core_format) / sizeof(x86_core_format[0]); i++) {
		if (strcmp(x86_core_format[i].term, term) == 0) {
			snprintf(format, len, "%s", x86_core_format[i].format);
			return 0;
		}
	}
	return -ENOENT;
}

static int parse_terms(const char *pmu, char *terms, struct perf_event_attr *attr, int depth,
		       char *err, size_t errlen);

/* One term: "umask=0x01", a flag such as "edge", or a sysfs alias such as "topdown-fe-bound". */
static int parse_term(const char *pmu, char *term, struct perf_event_attr *attr, int depth,
		      char *err, size_t errlen)
{
	char format[128], alias[512], path[4096];
	char *eq = strchr(term, '=');
	__u64 value = 1;
	int ret;

	if (eq) {
		*eq = '\0';
		if (parse_u64(eq + 1, &value)) {
			snprintf(err, errlen, "bad value '%s' for term '%s'", eq + 1, term);
			return -EINVAL;
		}
	}
	if (strcmp(term, "config") == 0 || strcmp(term, "config1") == 0 ||
	    strcmp(term, "config2") == 0) {
		__u64 *f = term[6] == '\0' ? &attr->config :
			   term[6] == '1'  ? &attr->config1 : &attr->config2;
		*f |= value;
		return 0;
	}
	if (pmu_format(pmu, term, format, sizeof(format)) == 0)
		return place_bits(attr, format, value, term, err, errlen);

	/* A sysfs event alias expands to terms of its own. */
	snprintf(path, sizeof(path), "%s/%s/events/%s", event_sysfs_root, pmu, term);
	if (!eq && depth == 0 && smallfile_read(path, alias, sizeof(alias)) == 0)
		return parse_terms(pmu, alias, attr, depth + 1, err, errlen);

	ret = -ENOENT;
	snprintf(err, errlen, "unknown term '%s' for PMU '%s'", term, pmu);
	return ret;
}

static int parse_terms(const char *pmu, char *terms, struct perf_event_attr *attr, int depth,
		       char *err, size_t errlen)
{
	char *save = NULL;
	int n = 0, ret;

	for (char *t = strtok_r(terms, ",", &save); t; t = strtok_r(NULL, ",", &save), n++) {
		ret = parse_term(pmu, t, attr, depth, err, errlen);
		if (ret)
			return ret;
	}
	if (!n) {
		snprintf(err, errlen, "no terms");
		return -EINVAL;
	}
	return 0;
}

/*
 * A PMU that sysfs lacks under that name but has as NAME_<digits> (ACPI's armv8_pmuv3_0),
 * the first in sysfs' order: its name into out. -ENOENT when there is none, or the name is
 * there itself.
 */
static int resolve_pmu(const char *pmu, char *out, size_t len)
{
	char path[4096];
	struct dirent *de;
	size_t n = strlen(pmu);
	DIR *d;
	int ret = -ENOENT;

	snprintf(path, sizeof(path), "%s/%s", event_sysfs_root, pmu);
	if (access(path, F_OK) == 0 || !(d = opendir(event_sysfs_root)))
		return -ENOENT;
	while (ret && (de = readdir(d))) {
		const char *rest = de->d_name + n;

		if (strncmp(de->d_name, pmu, n) || rest[0] != '_' || !rest[1] ||
		    strspn(rest + 1, "0123456789") != strlen(rest + 1))
			continue;
		snprintf(out, len, "%s", de->d_name);
		ret = 0;
	}
	closedir(d);
	return ret;
}

static int parse_pmu_event(const char *spec, struct perf_event_attr *attr, char *err,
			   size_t errlen);

/*
 * A bare event name that an Arm core PMU (armv8_*, armv9_*) lists in its sysfs events,
 * as perf takes them (STALL_SLOT_BACKEND: events/stall_slot_backend, case aside). -ENOENT
 * when none does.
 */
static int parse_arm_alias(const char *name, const char *mods, struct perf_event_attr *attr,
			   char *err, size_t errlen)
{
	char lower[128], path[4096], spec[512];
	struct dirent *de;
	DIR *d;
	int ret = -ENOENT;

	if (strlen(name) >= sizeof(lower) || strchr(name, '/') || !(d = opendir(event_sysfs_root)))
		return -ENOENT;
	for (size_t i = 0; i <= strlen(name); i++)
		lower[i] = (char)tolower((unsigned char)name[i]);
	while (ret == -ENOENT && (de = readdir(d))) {
		if (strncmp(de->d_name, "armv8_", 6) && strncmp(de->d_name, "armv9_", 6))
			continue;
		snprintf(path, sizeof(path), "%s/%s/events/%s", event_sysfs_root, de->d_name,
			 lower);
		if (access(path, R_OK))
			continue;
		snprintf(spec, sizeof(spec), "%s/%s/%s", de->d_name, lower, mods);
		ret = parse_pmu_event(spec, attr, err, errlen);
	}
	closedir(d);
	return ret;
}

/* "pmu/terms/mods" */
static int parse_pmu_event(const char *spec, struct perf_event_attr *attr, char *err,
			   size_t errlen)
{
	char buf[512], path[4096], type[32], name[256];
	char *pmu = buf, *terms, *mods;
	__u64 t;
	int ret;

	if (snprintf(buf, sizeof(buf), "%s", spec) >= (int)sizeof(buf)) {
		snprintf(err, errlen, "too long");
		return -EINVAL;
	}
	terms = strchr(buf, '/');
	*terms++ = '\0';
	mods = strchr(terms, '/');
	if (!mods || !*pmu) {
		snprintf(err, errlen, "expected PMU/terms/");
		return -EINVAL;
	}
	*mods++ = '\0';

	/* perf's "armv8_pmuv3" for "armv8_pmuv3_0": a name without its instance number */
	if (resolve_pmu(pmu, name, sizeof(name)) == 0)
		pmu = name;
	snprintf(path, sizeof(path), "%s/%s/type", event_sysfs_root, pmu);
	if (smallfile_read(path, type, sizeof(type)) == 0 && parse_u64(type, &t) == 0) {
		attr->type = (__u32)t;
	} else if (strcmp(pmu, "cpu") == 0) {
		attr->type = PERF_TYPE_RAW;	/* the core PMU's type on non-hybrid x86 */
	} else {
		snprintf(err, errlen, "no PMU named '%s' in %s", pmu, event_sysfs_root);
		return -ENOENT;
	}
	ret = parse_terms(pmu, terms, attr, 0, err, errlen);
	if (ret)
		return ret;
	return apply_modifiers(mods, attr, err, errlen);
}

static bool is_raw(const char *s)
{
	if (s[0] != 'r' || !s[1])
		return false;
	for (s++; *s; s++)
		if (!isxdigit((unsigned char)*s))
			return false;
	return true;
}

/* Lower-case "subsys:event", a tracepoint if tracefs knows it. */
static int parse_tracepoint(const char *spec, struct perf_event_attr *attr, char *err,
			    size_t errlen)
{
	char dir[4096], path[4600], subsys[256], id[32];
	const char *colon = strchr(spec, ':');
	__u64 v;
	int ret;

	if (!colon || colon == spec || (size_t)(colon - spec) >= sizeof(subsys) || !colon[1])
		return -ENOENT;
	for (const char *p = spec; *p; p++)
		if (!(islower((unsigned char)*p) || isdigit((unsigned char)*p) || *p == '_' ||
		      (p == colon)))
			return -ENOENT;
	memcpy(subsys, spec, colon - spec);
	subsys[colon - spec] = '\0';
	ret = tracefs_dir(dir, sizeof(dir));
	if (ret) {
		snprintf(err, errlen, "tracefs is not mounted and cannot be: %s", strerror(-ret));
		return ret;
	}
	snprintf(path, sizeof(path), "%s/events/%s/%s/id", dir, subsys, colon + 1);
	ret = smallfile_read(path, id, sizeof(id));
	if (ret) {
		snprintf(err, errlen, "no tracepoint %s in %s/events", spec, dir);
		return -ENOENT;
	}
	if (parse_u64(id, &v)) {
		snprintf(err, errlen, "unreadable tracepoint id in %s", path);
		return -EINVAL;
	}
	attr->type = PERF_TYPE_TRACEPOINT;
	attr->config = v;
	return 0;
}

int event_parse(const char *spec, struct perf_event_attr *attr, char *err, size_t errlen)
{
	struct pfm_encoding enc;
	char name[128];
	const char *mods = "";
	int ret;

	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	err[0] = '\0';

	if (!*spec) {
		snprintf(err, errlen, "empty event");
		return -EINVAL;
	}
	if (strchr(spec, '/'))
		return parse_pmu_event(spec, attr, err, errlen);

	snprintf(name, sizeof(name), "%s", spec);
	if (strchr(name, ':')) {
		char *colon = strchr(name, ':');

		*colon = '\0';
		mods = spec + (colon - name) + 1;
	}
	if (is_raw(name)) {
		attr->type = PERF_TYPE_RAW;
		attr->config = strtoull(name + 1, NULL, 16);
		return apply_modifiers(mods, attr, err, errlen);
	}
	for (size_t i = 0; i < sizeof(named_events) / sizeof(named_events[0]); i++) {
		if (strcmp(named_events[i].name, name) == 0) {
			attr->type = named_events[i].type;
			attr->config = named_events[i].config;
			return apply_modifiers(mods, attr, err, errlen);
		}
	}

	/* before tracepoints: "stall_backend:u" is an event with a modifier, not one */
	ret = parse_arm_alias(name, mods, attr, err, errlen);
	if (ret != -ENOENT)
		return ret;
	err[0] = '\0';
	ret = parse_tracepoint(spec, attr, err, errlen);
	if (ret != -ENOENT || err[0])
		return ret;

	ret = pfm_encode(spec, &enc, err, errlen);
	if (ret) {
		char reason[EVENT_ERR_LEN];

		snprintf(reason, sizeof(reason), "%s", err);
		snprintf(err, errlen,
			 "not a perf event name, tracepoint, raw or PMU event, nor known to libpfm4 (%s)",
			 reason);
		return ret;
	}
	attr->type = enc.type;
	attr->config = enc.config;
	attr->config1 = enc.config1;
	attr->config2 = enc.config2;
	attr->exclude_user = enc.exclude_user;
	attr->exclude_kernel = enc.exclude_kernel;
	attr->exclude_guest = counts_hardware(attr);
	return 0;
}

int event_list_split(const char *list, char ***specs)
{
	char **v = NULL;
	int n = 0, cap = 0, depth = 0;
	const char *start = list;

	for (const char *p = list;; p++) {
		if (*p == '/')
			depth = !depth;	/* inside pmu/terms/ commas separate terms */
		if ((*p == ',' && !depth) || !*p) {
			if (p == start) {
				event_list_free(v, n);
				return -EINVAL;
			}
			if (ALLOC_GROW(v, n + 1, cap)) {
				event_list_free(v, n);
				return -ENOMEM;
			}
			v[n] = strndup(start, p - start);
			if (!v[n]) {
				event_list_free(v, n);
				return -ENOMEM;
			}
			n++;
			start = p + 1;
		}
		if (!*p)
			break;
	}
	*specs = v;
	return n;
}

void event_list_free(char **specs, int nr)
{
	for (int i = 0; i < nr; i++)
		free(specs[i]);
	free(specs);
}

/* A candidate name with the typo's modifiers or umasks (":u", ":ANY_P") after it. */
struct named_suggest {
	struct suggest *sg;
	const char *suffix;
};

static int suggest_named(const char *name, void *ctx)
{
	const struct named_suggest *ns = ctx;
	char buf[512];

	snprintf(buf, sizeof(buf), "%s%s", name, ns->suffix);
	return suggest_add(ns->sg, buf);
}

/* The tracepoints of spec's subsystem, or spec's event under every subsystem that has it. */
static int suggest_tracepoints(const char *spec, struct suggest *sg)
{
	char dir[4096], path[4600], name[512];
	const char *colon = strchr(spec, ':');
	struct dirent *de;
	int ret = 0;
	DIR *d;

	if (!colon || colon == spec || strchr(colon + 1, ':') || tracefs_dir(dir, sizeof(dir)))
		return 0;
	snprintf(path, sizeof(path), "%s/events/%.*s", dir, (int)(colon - spec), spec);
	d = opendir(path);
	if (d) {
		while (!ret && (de = readdir(d)))
			if (de->d_type == DT_DIR && de->d_name[0] != '.') {
				snprintf(name, sizeof(name), "%.*s:%s", (int)(colon - spec), spec,
					 de->d_name);
				ret = suggest_add(sg, name);
			}
		closedir(d);
		return ret;
	}
	snprintf(path, sizeof(path), "%s/events", dir);
	d = opendir(path);
	if (!d)
		return 0;
	while (!ret && (de = readdir(d))) {
		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/events/%s/%s", dir, de->d_name, colon + 1);
		snprintf(name, sizeof(name), "%s:%s", de->d_name, colon + 1);
		if (!access(path, F_OK))
			ret = suggest_add(sg, name);
	}
	closedir(d);
	return ret;
}

int event_suggest(const char *spec, struct suggest *sg)
{
	struct named_suggest ns = { sg, strchr(spec, ':') ? strchr(spec, ':') : "" };
	int ret = 0;

	for (size_t i = 0; !ret && i < sizeof(named_events) / sizeof(named_events[0]); i++)
		ret = suggest_named(named_events[i].name, &ns);
	if (!ret)
		ret = suggest_tracepoints(spec, sg);
	if (!ret)
		ret = pfm_event_names(suggest_named, &ns);
	return ret;
}
