/* SPDX-License-Identifier: GPL-2.0 */
/*
 * cgroup v2 paths as users write them and as cgtma reports them: relative to the v2 root,
 * starting with '/', "/" being the root itself. Which root, and how to reach it, is cgview.h's.
 */
#ifndef CGTMA_CGROUPS_H
#define CGTMA_CGROUPS_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

/*
 * A -G argument in canonical form: an absolute path under root has root stripped; anything
 * else is taken relative to root. "//" and trailing '/' are folded, "." and ".." refused,
 * and so are malformed globs: a '[' not closed within its level, and '**'.
 * Returns 0 or -EINVAL (with the reason in err) / -ENAMETOOLONG.
 */
/*
 * Why arg, a -G argument read as a file path, is no v2 cgroup, where it plainly is not: it
 * lies in a cgroup v1 hierarchy (a hybrid host's /sys/fs/cgroup/cpu: its nearest existing
 * directory is on a v1 cgroup file system), or holds the v2 mount (a hybrid host's
 * /sys/fs/cgroup). NULL otherwise: then it is taken relative to mount, the v2 mount.
 */
const char *cgroup_arg_not_v2(const char *mount, const char *arg);

int cgroup_normalize(const char *root, const char *arg, char *out, size_t len, char *err,
		     size_t errlen);

/*
 * base (canonical) joined with rel, an absolute path that may climb with "..", as
 * /proc/PID/cgroup shows a cgroup outside the reader's cgroup namespace ("/../../x/y" is
 * two levels above the namespace's root, then x/y). 0, -EINVAL when rel climbs above the
 * hierarchy's root or is not absolute, -ENAMETOOLONG.
 */
int cgroup_resolve(const char *base, const char *rel, char *out, size_t len);

/*
 * The v2 cgroup a /proc file of cgroups names (/proc/PID/cgroup, /proc/PID/task/TID/cgroup):
 * its "0::" line, relative to the reader's cgroup namespace (it may climb with "..", see
 * cgroup_resolve()). 0, -ENOENT when the file has no v2 line (v1 only), -ENAMETOOLONG, or
 * the -errno of opening it (-ENOENT too for a task that exited).
 */
int cgroup_read_proc(const char *file, char *out, size_t len);

/* Whether a canonical path has shell wildcards (*, ?, [). */
bool cgroup_is_pattern(const char *path);

/* Depth of a canonical path: "/" is 0, "/a" is 1, "/a/b" is 2. */
int cgroup_level(const char *path);

/*
 * fnmatch() of a canonical pattern against a canonical path, as cgroup_expand() matches:
 * no wildcard crosses '/' or matches a leading '.'.
 */
bool cgroup_match(const char *pattern, const char *path);

/* Whether a canonical path has a hidden component (".name"), which cgroup_walk() skips. */
bool cgroup_is_hidden(const char *path);

/* The v2 id (the directory's inode number) of a canonical path. 0 or -errno. */
int cgroup_id(const char *root, const char *path, __u64 *id);

typedef int (*cgroup_cb)(const char *path, __u64 id, void *ctx);

/*
 * Calls cb for every existing cgroup matching a canonical path or pattern. A non-zero return
 * from cb stops the walk and is returned. Matching nothing is not an error.
 */
int cgroup_expand(const char *root, const char *pattern, cgroup_cb cb, void *ctx);

struct suggest;

/*
 * For a canonical path or pattern that matches nothing: offers sg, at the first level where
 * it matches nothing (along every branch where it matches), the cgroups there, each with the
 * rest of the pattern after it ("/bench/iperf-clinet" offers "/bench/iperf-client"). 0 or
 * -ENOMEM.
 */
int cgroup_suggest(const char *root, const char *pattern, struct suggest *sg);

/* Calls cb for every cgroup of levels 1..depth, parents before children. */
int cgroup_walk(const char *root, int depth, cgroup_cb cb, void *ctx);

#endif
