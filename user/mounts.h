/* SPDX-License-Identifier: GPL-2.0 */
/* Finding pseudo filesystems (cgroup2, tracefs) from /proc/self/mountinfo, never by guess. */
#ifndef CGTMA_MOUNTS_H
#define CGTMA_MOUNTS_H

#include <stddef.h>

/*
 * The mount point of the first mount of fstype that shows the filesystem's root (a bind mount
 * of a subdirectory, as containers have, is skipped). Returns 0, or -ENOENT when none.
 * mountinfo is the file to read; NULL means /proc/self/mountinfo (tests pass their own).
 */
int mount_find(const char *mountinfo, const char *fstype, char *path, size_t len);

/*
 * Calls cb(root, mount_point, ctx) for every mount of fstype, in mountinfo's order, both
 * unescaped; root is the mount's root within the filesystem, as this process sees it (a
 * cgroup2 mount's root is shown relative to the reader's cgroup namespace, "/.." and all).
 * A non-zero return from cb stops and is returned. 0, or -errno when mountinfo cannot be read.
 */
typedef int (*mount_cb)(const char *root, const char *mnt, void *ctx);
int mount_each(const char *mountinfo, const char *fstype, mount_cb cb, void *ctx);

/*
 * The tracefs directory holding events/: a mounted tracefs, or debugfs's tracing/. When
 * neither is mounted and we are root, mounts tracefs on /sys/kernel/tracing, as perf does.
 */
int tracefs_dir(char *path, size_t len);

#endif
