/* SPDX-License-Identifier: GPL-2.0 */
/* What this machine offers for counting: the CPU's identity, a PMU, SMT, the NMI watchdog. */
#ifndef CGTMA_CPU_H
#define CGTMA_CPU_H

#include <stdbool.h>
#include <stddef.h>

struct cpu_id {
	char vendor[32];	/* vendor_id: GenuineIntel, AuthenticAMD */
	int family;
	int model;
	char name[128];		/* model name */
};

/* Reads the first processor of cpuinfo (NULL: /proc/cpuinfo). 0 or -errno. */
int cpu_identify(const char *cpuinfo, struct cpu_id *id);

/*
 * Whether a hardware PMU can count here: opens a cycles counter on the CPU. False in most
 * VMs. *why gets the reason when not.
 */
bool cpu_has_pmu(const char **why);

/* SMT active (/sys/devices/system/cpu/smt/active). */
bool cpu_smt_active(void);

/* The hard-lockup detector holds a counter on every CPU (/proc/sys/kernel/nmi_watchdog). */
bool cpu_nmi_watchdog(void);

/* The core PMU offers this sysfs event (perf-metrics: topdown-retiring, ...). */
bool cpu_pmu_has_event(const char *sysfs_name);

#endif
