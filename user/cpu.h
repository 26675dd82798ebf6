/* SPDX-License-Identifier: GPL-2.0 */
/* What this machine offers for counting: the CPU's identity, a PMU, SMT, the NMI watchdog. */
#ifndef CGTMA_CPU_H
#define CGTMA_CPU_H

#include <stdbool.h>
#include <stddef.h>

/*
 * x86: vendor_id, cpu family and model. Arm (MIDR_EL1): vendor is the implementer as
 * cpuinfo writes it ("0x41", Arm Ltd), family the architecture (8: AArch64), model the part
 * (0xd49); variant and revision too. Models match on vendor, family and model alike.
 */
struct cpu_id {
	char vendor[32];	/* vendor_id: GenuineIntel, AuthenticAMD; Arm: "0x41" */
	int family;
	int model;
	char name[128];		/* model name; Arm: built from the MIDR */
	bool arm;		/* identified by a MIDR: the fields below are set */
	unsigned implementer, variant, part, revision;
};

#define CPU_MIDR_PATH "/sys/devices/system/cpu/cpu0/regs/identification/midr_el1"

/*
 * Reads the first processor of cpuinfo; NULL: /proc/cpuinfo, and CPU_MIDR_PATH where that
 * names neither a vendor_id nor a CPU implementer. 0 or -errno.
 */
int cpu_identify(const char *cpuinfo, struct cpu_id *id);

/* Fills id from a MIDR_EL1 value (0x410fd493: N2 r0p3). */
void cpu_id_from_midr(unsigned long long midr, struct cpu_id *id);

/* "GenuineIntel family 6 model 143", "implementer 0x41 part 0xd49 r0p3". */
void cpu_describe(const struct cpu_id *id, char *buf, size_t len);

/* An Arm Ltd (implementer 0x41) CPU's part, and its variant * 16 + revision; 0 otherwise. */
int cpu_arm_part(const struct cpu_id *id);
int cpu_arm_revision(const struct cpu_id *id);

/*
 * Whether a hardware PMU can count here: opens a cycles counter on the CPU. False in most
 * VMs. *why gets the reason when not.
 */
bool cpu_has_pmu(const char **why);

/* SMT active (/sys/devices/system/cpu/smt/active). */
bool cpu_smt_active(void);

/* The hard-lockup detector holds a counter on every CPU (/proc/sys/kernel/nmi_watchdog). */
bool cpu_nmi_watchdog(void);

/*
 * Issue slots per cycle as the Arm core PMU says (caps/slots of an armv8_* or armv9_* PMU in
 * event_sysfs_root, from PMMIR_EL1): 0 when it reads 0 (PMUv3 before 3.4, most VMs) or no
 * such file exists.
 */
int cpu_pmu_slots(void);

/* The core PMU offers this sysfs event (perf-metrics: topdown-retiring, ...). */
bool cpu_pmu_has_event(const char *sysfs_name);

#endif
