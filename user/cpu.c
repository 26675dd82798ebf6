// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/perf_event.h>

#include "cpu.h"
#include "events.h"

int cpu_identify(const char *cpuinfo, struct cpu_id *id)
{
	char line[512];
	int seen = 0;
	FILE *f = fopen(cpuinfo ? cpuinfo : "/proc/cpuinfo", "re");

	if (!f)
		return -errno;
	memset(id, 0, sizeof(*id));
	id->family = id->model = -1;
	while (fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':'), *v;

		if (line[0] == '\n' && seen)
			break;	/* the first processor is enough */
		if (!colon)
			continue;
		v = colon + 1 + (colon[1] == ' ');
		v[strcspn(v, "\n")] = '\0';
		if (!strncmp(line, "vendor_id", 9)) {
			snprintf(id->vendor, sizeof(id->vendor), "%s", v);
			seen = 1;
		} else if (!strncmp(line, "cpu family", 10)) {
			sscanf(v, "%d", &id->family);
		} else if (!strncmp(line, "model name", 10)) {
			snprintf(id->name, sizeof(id->name), "%s", v);
		} else if (!strncmp(line, "model", 5) && (line[5] == '\t' || line[5] == ' ')) {
			sscanf(v, "%d", &id->model);
		}
	}
	fclose(f);
	return id->vendor[0] ? 0 : -ENOENT;
}

bool cpu_has_pmu(const char **why)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = PERF_TYPE_HARDWARE,
		.config = PERF_COUNT_HW_CPU_CYCLES,
		.disabled = 1,
	};
	int fd = syscall(__NR_perf_event_open, &attr, -1, 0, -1, PERF_FLAG_FD_CLOEXEC);

	if (fd >= 0) {
		close(fd);
		return true;
	}
	if (why)
		*why = errno == ENOENT || errno == EOPNOTSUPP || errno == ENODEV ?
		       "cycles cannot be counted here (a VM without a virtual PMU?)" :
		       strerror(errno);
	return false;
}

static int read_int(const char *path, int *v)
{
	FILE *f = fopen(path, "re");
	int ok;

	if (!f)
		return -errno;
	ok = fscanf(f, "%d", v) == 1;
	fclose(f);
	return ok ? 0 : -EIO;
}

bool cpu_smt_active(void)
{
	int v = 0;

	return read_int("/sys/devices/system/cpu/smt/active", &v) == 0 && v == 1;
}

bool cpu_nmi_watchdog(void)
{
	int v = 0;

	return read_int("/proc/sys/kernel/nmi_watchdog", &v) == 0 && v == 1;
}

bool cpu_pmu_has_event(const char *sysfs_name)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/cpu/events/%s", event_sysfs_root, sysfs_name);
	return access(path, R_OK) == 0;
}
