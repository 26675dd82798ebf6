/* SPDX-License-Identifier: GPL-2.0 */
/*
 * libpfm4 event names to perf_event_attr fields. Kept apart because libpfm4's headers bring
 * their own struct perf_event_attr, which clashes with <linux/perf_event.h>.
 */
#ifndef CGTMA_PFM_ENCODE_H
#define CGTMA_PFM_ENCODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pfm_encoding {
	uint32_t type;
	uint64_t config;
	uint64_t config1;
	uint64_t config2;
	int exclude_user;
	int exclude_kernel;
};

/*
 * Calls fn with the name of every event of the PMUs libpfm4 finds present (its own
 * detection, or LIBPFM_FORCE_PMU) until fn returns non-zero, which is returned; 0.
 */
int pfm_event_names(int (*fn)(const char *name, void *ctx), void *ctx);

/*
 * Whether libpfm4 has the table of the PMU it names name ("icx", "arm_n1"), present on this
 * machine or not: a distribution's libpfm4 may leave out other architectures' (Debian's
 * arm64 package has no x86 table). Under a LIBPFM_FORCE_PMU naming another table it may say
 * no, as libpfm4 stops looking at the forced one.
 */
bool pfm_has_pmu(const char *name);

/*
 * Encodes a libpfm4 event string ("INST_RETIRED:ANY_P", "UOPS_RETIRED:MS:c=1:e=1") for the
 * host PMU, or the one LIBPFM_FORCE_PMU names. Returns 0, or -ENOENT/-EINVAL with libpfm4's
 * reason in err.
 */
int pfm_encode(const char *name, struct pfm_encoding *enc, char *err, size_t errlen);

#endif
