/* SPDX-License-Identifier: GPL-2.0 */
/*
 * CPU lists as perf's -C and sysfs write them ("0-3,8"): what perf users give to -C, and what
 * /sys/devices/system/cpu/online says.
 */
#ifndef CGTMA_CPULIST_H
#define CGTMA_CPULIST_H

#include <stdbool.h>

/*
 * Sets set[c] for every CPU c that s names (comma-separated numbers and ranges lo-hi, a
 * trailing newline allowed): 0. -EINVAL when s is malformed (empty, a range backwards, not
 * a number); -ERANGE when it names a CPU of nr or more (set has nr entries), the first such
 * one in *beyond.
 */
int cpulist_parse(const char *s, bool *set, int nr, long *beyond);

/* The same, read from a sysfs file such as /sys/devices/system/cpu/online: 0 or -errno. */
int cpulist_read(const char *path, bool *set, int nr);

#endif
