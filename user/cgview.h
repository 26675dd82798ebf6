/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Which cgroup v2 hierarchy cgtma reads, and as whom. On a host the v2 mount shows the
 * hierarchy's root and paths are the host's. In a container with a private cgroup namespace
 * (podman's default on v2, crucible's engine, a Kubernetes DaemonSet) the container's own
 * cgroup2 mount shows only its subtree, and the paths it would give are relative to that:
 * the ids the BPF program sees are global, those paths are not. So:
 *
 *   host     a cgroup2 mount here shows the hierarchy's root (a host, or a container that
 *            kept the host's mount, as `unshare --cgroup` does): read it; paths are host paths.
 *   handle   none does, but the root can be opened by its file handle through a mount of the
 *            hierarchy (open_by_handle_at(2) needs CAP_DAC_READ_SEARCH in the initial user
 *            namespace, as a privileged container has): read the host's hierarchy through
 *            that descriptor; paths are host paths, the same as on the host.
 *   subtree  neither: only the namespace's subtree is visible, and paths are relative to its
 *            root. The BPF side's levels are the host's and that root's depth is unknown, so
 *            every level is looked up; paths the mkdir hook records (host paths) are
 *            translated by id (cgview_translate).
 *
 * Where this process's mount namespace has no cgroup2 mount at all but PID 1 is another mount
 * namespace's init (a container with pid=host in the host's cgroup namespace: podman's
 * default where it sees cgroup v1, as on a hybrid host with crucible's engine), PID 1's
 * mounts are taken instead, through /proc/1/root, and chosen among as above: root is read
 * through /proc/1/root, mount is the mount point as PID 1 sees it (a host path, as -G gives).
 *
 * Where neither namespace has one (or PID 1's cannot be read, as in a sandbox whose PID 1
 * is not the host's init) but cgroup v2 is in use (this process's v2 cgroup is not the root,
 * or its cgroup namespace is not the initial one), cgtma mounts cgroup2 itself, read-only
 * and attached nowhere (fsmount(2), CAP_SYS_ADMIN), and chooses as above through it: the
 * hierarchy's root in the initial cgroup namespace, else by file handle, else the subtree.
 * Where v2 is not in use (a machine on cgroup v1 only), cgroup v2 is not mounted: -ENOENT.
 *
 * The hierarchy's root is the cgroup with id 1 (kernfs numbers its root 1).
 */
#ifndef CGTMA_CGVIEW_H
#define CGTMA_CGVIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

enum cgview_kind { CGVIEW_HOST, CGVIEW_HANDLE, CGVIEW_SUBTREE };

struct cgview {
	enum cgview_kind kind;
	char root[4096];	/* the directory the cgroup paths are relative to, to read */
	char mount[4096];	/* the cgroup2 mount point: -G's absolute paths have it stripped */
	char shown[4096];	/* what messages prefix a path with: the mount, or "host:" */
	bool private_ns;	/* this process's cgroup namespace is not the host's */
	char ns_root[4096];	/* this cgroup namespace's root as a path of the view, which
				 * /proc/PID/cgroup's paths are relative to: "/" unless
				 * private (cgview__find_ns_root) */
	char why[4096 + 512];	/* how the view was chosen, for -v; or why none was found */
	int fd;			/* the root opened by handle, or -1 */
};

/* The cgroup id of the hierarchy's root. */
#define CGVIEW_ROOT_ID 1

/*
 * The path of cgroup id relative to the hierarchy's root ("/" for the root), found by its
 * file handle (CAP_DAC_READ_SEARCH) where the view shows the host's hierarchy: 0, or -errno
 * (-ENOENT where the view cannot name it: a subtree's, a removed cgroup).
 */
int cgview__path_of(const struct cgview *v, __u64 id, char *out, size_t len);

/*
 * What the view is chosen from. NULL: this process's /proc/self/mountinfo, and PID 1's
 * /proc/1/mountinfo through /proc/1/root when PID 1's mount namespace is another. Tests
 * give their own: init_mountinfo, when set, stands for another mount namespace's PID 1
 * whose root directory is init_root.
 */
struct cgview_sources {
	const char *mountinfo;
	const char *init_mountinfo;
	const char *init_root;
	bool own_mount;			/* cgroup v2 is in use: mount it when none is seen */
	int (*own_mount_fd)(void);	/* that mount (NULL: fsmount(2)) */
};

/*
 * Chooses the view (the one place it is chosen). 0; -ENOENT when cgroup2 is mounted in
 * neither namespace (why says where it was looked for); or -errno. cgview__close() releases it.
 */
int cgview__open(struct cgview *v, const struct cgview_sources *src);
void cgview__close(struct cgview *v);

/*
 * Learns v->ns_root in a private cgroup namespace: the cgroup of the view whose cgroup.procs
 * lists pid and whose path ends with pid's path as self_cgroup shows it (the "0::" line,
 * relative to the namespace's root), less that suffix. NULL and 0: /proc/self/cgroup and
 * getpid(). 0 (ns_root stays "/" outside a private namespace), -ENOENT when pid's cgroup is
 * not in the view, or -errno.
 */
int cgview__find_ns_root(struct cgview *v, const char *self_cgroup, int pid);

/*
 * A path the BPF mkdir hook recorded (relative to the hierarchy's root) as a path of the
 * view: the same in the host views; in the subtree view, the suffix of it that names the
 * cgroup with this id under root. 0, -ENOENT when the cgroup is not in the view (or gone),
 * -ENAMETOOLONG.
 */
int cgview_translate(enum cgview_kind kind, const char *root, const char *host_path, __u64 id,
		     char *out, size_t len);

#endif
