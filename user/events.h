/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Event specifications, as `cgtma -e` and model files write them, to perf_event_attr:
 *
 *   cpu-clock, context-switches, cycles, ...  perf's software and generic hardware names,
 *                                             optionally with :u, :k, :G, :H
 *   sched:sched_wakeup                        tracepoints (tracefs is mounted if needed)
 *   r01a0                                     raw config for the core PMU
 *   cpu/event=0xa0,umask=0x01,cmask=6/        PMU terms (sysfs format, or the x86 core
 *   cpu/topdown-fe-bound/                     layout when sysfs has no such PMU); sysfs
 *                                             aliases; trailing u, k, G, H modifiers
 *
 * As perf, hardware events exclude a VMM's guests unless G (guests only) or GH (both) says
 * otherwise; H is the host only.
 *   INST_RETIRED:ANY_P                        libpfm4 names (LIBPFM_FORCE_PMU is honoured)
 */
#ifndef CGTMA_EVENTS_H
#define CGTMA_EVENTS_H

#include <stddef.h>
#include <linux/perf_event.h>

#define EVENT_ERR_LEN 256

/*
 * Fills attr's type, config, config1, config2 and exclusions (the rest is zeroed; attr->size
 * is set). Returns 0, or -ENOENT (unknown event) / -EINVAL (malformed) with the reason in
 * err, which the caller prints after the event's name.
 */
int event_parse(const char *spec, struct perf_event_attr *attr, char *err, size_t errlen);

/*
 * Splits an -e list at commas that are not inside a pmu/terms/ specification. Returns the
 * number of entries (>= 1) with *specs allocated, or -EINVAL for an empty entry, -ENOMEM.
 */
int event_list_split(const char *list, char ***specs);
void event_list_free(char **specs, int nr);

struct suggest;

/*
 * Offers sg the names close to an event that event_parse() did not know: perf's names, the
 * tracepoints of its subsystem (or the same event under another subsystem), and the events
 * of the PMUs libpfm4 finds. 0 or -ENOMEM.
 */
int event_suggest(const char *spec, struct suggest *sg);

/* Where PMUs are described; tests point it at a fake tree. */
extern const char *event_sysfs_root;

#endif
