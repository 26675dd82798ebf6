// SPDX-License-Identifier: GPL-2.0
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <linux/perf_event.h>

#include "cpu.h"
#include "events.h"
#include "perfev.h"
#include "smallfile.h"

#define ARM_IMPLEMENTER_ARM 0x41

void cpu_id_from_midr(unsigned long long midr, struct cpu_id *id)
{
	memset(id, 0, sizeof(*id));
	id->arm = true;
	id->implementer = midr >> 24 & 0xff;
	id->variant = midr >> 20 & 0xf;
	id->part = midr >> 4 & 0xfff;
	id->revision = midr & 0xf;
	snprintf(id->vendor, sizeof(id->vendor), "0x%02x", id->implementer);
	/* Architecture 0xf ("see the ID registers") is every AArch64 CPU: cpuinfo says 8. */
	id->family = 8;
	id->model = (int)id->part;
	cpu_describe(id, id->name, sizeof(id->name));
}

void cpu_describe(const struct cpu_id *id, char *buf, size_t len)
{
	if (id->arm)
		snprintf(buf, len, "implementer 0x%02x part 0x%03x r%up%u", id->implementer,
			 id->part, id->variant, id->revision);
	else
		snprintf(buf, len, "%s family %d model %d", id->vendor[0] ? id->vendor : "unknown",
			 id->family, id->model);
}

int cpu_arm_part(const struct cpu_id *id)
{
	return id->arm && id->implementer == ARM_IMPLEMENTER_ARM ? (int)id->part : 0;
}

int cpu_arm_revision(const struct cpu_id *id)
{
	return id->arm && id->implementer == ARM_IMPLEMENTER_ARM ?
	       (int)(id->variant * 16 + id->revision) : 0;
}

static int read_midr(struct cpu_id *id)
{
	unsigned long long midr;
	FILE *f = fopen(CPU_MIDR_PATH, "re");
	int ok;

	if (!f)
		return -errno;
	ok = fscanf(f, "%llx", &midr) == 1;
	fclose(f);
	if (!ok)
		return -EIO;
	cpu_id_from_midr(midr, id);
	return 0;
}

/* An arm64 cpuinfo field: "CPU implementer\t: 0x41", "CPU revision\t: 3". */
static bool arm_field(const char *line, const char *key, const char *v, unsigned *out)
{
	size_t n = strlen(key);

	if (strncmp(line, key, n) || (line[n] != '\t' && line[n] != ' ' && line[n] != ':'))
		return false;
	*out = (unsigned)strtoul(v, NULL, 0);
	return true;
}

int cpu_identify(const char *cpuinfo, struct cpu_id *id)
{
	char line[512];
	int seen = 0;
	unsigned arch = 8;
	FILE *f = fopen(cpuinfo ? cpuinfo : "/proc/cpuinfo", "re");

	memset(id, 0, sizeof(*id));
	id->family = id->model = -1;
	if (!f)
		return cpuinfo ? -errno : read_midr(id);
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
		} else if (arm_field(line, "CPU implementer", v, &id->implementer)) {
			id->arm = true;
			seen = 1;
		} else if (!arm_field(line, "CPU architecture", v, &arch) &&
			   !arm_field(line, "CPU variant", v, &id->variant) &&
			   !arm_field(line, "CPU part", v, &id->part)) {
			arm_field(line, "CPU revision", v, &id->revision);
		}
	}
	fclose(f);
	if (id->arm) {
		snprintf(id->vendor, sizeof(id->vendor), "0x%02x", id->implementer);
		id->family = (int)arch;
		id->model = (int)id->part;
	}
	if (!id->vendor[0])
		return cpuinfo ? -ENOENT : read_midr(id);
	if (id->arm)
		cpu_describe(id, id->name, sizeof(id->name));
	return 0;
}

bool cpu_has_pmu(const char **why)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = PERF_TYPE_HARDWARE,
		.config = PERF_COUNT_HW_CPU_CYCLES,
		.disabled = 1,
	};
	int fd = perfev_open_event(&attr, 0, -1);

	if (fd >= 0) {
		close(fd);
		return true;
	}
	if (why)
		*why = fd == -ENOENT || fd == -EOPNOTSUPP || fd == -ENODEV ?
		       "cycles cannot be counted here (a VM without a virtual PMU?)" :
		       strerror(-fd);
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

int cpu_pmu_slots(void)
{
	char path[4096], buf[32];
	struct dirent *de;
	DIR *d = opendir(event_sysfs_root);
	int slots = 0;

	if (!d)
		return 0;
	while (!slots && (de = readdir(d))) {
		if (strncmp(de->d_name, "armv8_", 6) && strncmp(de->d_name, "armv9_", 6))
			continue;
		snprintf(path, sizeof(path), "%s/%s/caps/slots", event_sysfs_root, de->d_name);
		/* the kernel prints it as hex: 0x00000008 */
		if (smallfile_read(path, buf, sizeof(buf)) == 0 && *buf) {
			unsigned long v = strtoul(buf, NULL, 0);

			slots = v <= 255 ? (int)v : 0;
		}
	}
	closedir(d);
	return slots;
}
