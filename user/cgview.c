// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>
#include <linux/magic.h>

#include "cgroups.h"
#include "bpf/cgtma.h"
#include "cgview.h"
#include "mounts.h"

#define HANDLE_MAX 128	/* MAX_HANDLE_SZ */

struct scan {
	struct cgview *v;
	const char *prefix;	/* "", or the root of the mount namespace whose mounts these are */
	char fallback[4096];	/* a mount of the hierarchy that shows a subtree */
	bool fallback_ns_root;	/* ... the namespace's root (mounted in it: root "/") */
	bool above;		/* a mount shows cgroups above this namespace's root */
};

static bool is_hierarchy_root(const char *dir)
{
	struct statfs sf;
	struct stat st;

	return stat(dir, &st) == 0 && S_ISDIR(st.st_mode) && st.st_ino == CGVIEW_ROOT_ID &&
	       statfs(dir, &sf) == 0 && sf.f_type == CGROUP2_SUPER_MAGIC;
}

static int copy(char *dst, size_t len, const char *src)
{
	if (strlen(src) >= len)
		return -ENAMETOOLONG;
	strcpy(dst, src);
	return 0;
}

static int scan_cb(const char *root, const char *mnt, void *ctx)
{
	struct scan *sc = ctx;
	char at[8192];

	/* mountinfo shows a cgroup2 mount's root relative to the reader's namespace. */
	if (strncmp(root, "/..", 3) == 0 && (root[3] == '/' || root[3] == '\0'))
		sc->above = true;
	if (snprintf(at, sizeof(at), "%s%s", sc->prefix, mnt) >= (int)sizeof(at))
		return -ENAMETOOLONG;
	if (is_hierarchy_root(at)) {
		int err = copy(sc->v->mount, sizeof(sc->v->mount), mnt);

		return err ? err : 1;
	}
	if (!sc->fallback[0] || (!sc->fallback_ns_root && strcmp(root, "/") == 0)) {
		if (copy(sc->fallback, sizeof(sc->fallback), mnt))
			return -ENAMETOOLONG;
		sc->fallback_ns_root = strcmp(root, "/") == 0;
	}
	return 0;
}

/*
 * Cgroup id's directory, opened by its file handle through dfd, a directory of the
 * hierarchy: a kernfs handle is the node's 64-bit id, the root's is CGVIEW_ROOT_ID. The
 * handle's type comes from the kernel (name_to_handle_at of dfd), only the id is ours.
 */
static int open_by_id(int dfd, __u64 id, int *out)
{
	char buf[sizeof(struct file_handle) + HANDLE_MAX] __attribute__((aligned(8)));
	struct file_handle *fh = (struct file_handle *)buf;
	int mnt_id, fd, err = 0;
	struct stat st;

	fh->handle_bytes = HANDLE_MAX;
	if (name_to_handle_at(dfd, "", fh, &mnt_id, AT_EMPTY_PATH)) {
		err = -errno;
	} else if (fh->handle_bytes != sizeof(id)) {
		err = -EOPNOTSUPP;
	} else {
		memcpy(fh->f_handle, &id, sizeof(id));
		fd = open_by_handle_at(dfd, fh, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0) {
			err = -errno;
		} else if (fstat(fd, &st) || st.st_ino != id) {
			close(fd);
			err = -ESTALE;
		} else {
			*out = fd;
		}
	}
	return err;
}

/* The hierarchy's root, opened by its file handle through a mount of the hierarchy. */
static int open_root_by_handle(const char *mnt, int *out)
{
	int dfd = open(mnt, O_RDONLY | O_DIRECTORY | O_CLOEXEC), err;

	if (dfd < 0)
		return -errno;
	err = open_by_id(dfd, CGVIEW_ROOT_ID, out);
	close(dfd);
	return err;
}

int cgview__path_of(const struct cgview *v, __u64 id, char *out, size_t len)
{
	char link[64], path[4096];
	size_t root_len = strlen(v->root);
	int dfd, fd, err;
	ssize_t n;

	if (id == CGVIEW_ROOT_ID && v->kind != CGVIEW_SUBTREE)
		return snprintf(out, len, "/") < (int)len ? 0 : -ENAMETOOLONG;
	dfd = v->fd >= 0 ? v->fd : open(v->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	err = open_by_id(dfd, id, &fd);
	if (dfd != v->fd)
		close(dfd);
	if (err)
		return err;
	/* Its path as this process sees it: under the view's root, where it is reachable. */
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, path, sizeof(path) - 1);
	err = n < 0 ? -errno : 0;
	close(fd);
	if (err)
		return err;
	path[n] = '\0';
	if (v->kind != CGVIEW_HOST || strncmp(path, v->root, root_len) != 0 ||
	    (path[root_len] != '/' && path[root_len] != '\0'))
		return -ENOENT;
	return snprintf(out, len, "%s", path[root_len] ? path + root_len : "/") < (int)len ?
	       0 : -ENAMETOOLONG;
}

/* The initial cgroup namespace's inode number (the kernel's PROC_CGROUP_INIT_INO). */
#define CGROUP_NS_INIT_INO 0xEFFFFFFBU

/*
 * Whether this process's cgroup namespace differs from PID 1's, or (PID 1's unreadable) is
 * not the initial one; false when neither can be told.
 */
static bool ns_differs_from_pid1(void)
{
	struct stat self, init;

	if (stat("/proc/self/ns/cgroup", &self))
		return false;
	if (stat("/proc/1/ns/cgroup", &init))
		return self.st_ino != CGROUP_NS_INIT_INO;
	return self.st_ino != init.st_ino;
}

/*
 * Whether cgroup v2 is in use here though no mount of it is visible: this process's v2
 * cgroup (/proc/self/cgroup's "0::" line) is not the root, or its cgroup namespace is not
 * the initial one. On a machine that uses only cgroup v1 every process is in the v2 root.
 */
static bool v2_in_use(const char *self_cgroup)
{
	char own[4096];
	struct stat st;

	if (stat("/proc/self/ns/cgroup", &st) == 0 && st.st_ino != CGROUP_NS_INIT_INO)
		return true;
	return cgroup_read_proc(self_cgroup, own, sizeof(own)) == 0 && strcmp(own, "/") != 0;
}

/*
 * A cgroup2 mount of cgtma's own, read-only and attached nowhere (fsopen(2), fsmount(2);
 * CAP_SYS_ADMIN): it shows this cgroup namespace's root. The descriptor, or -errno.
 */
static int own_mount(void)
{
	int fs, mfd;

	fs = fsopen("cgroup2", FSOPEN_CLOEXEC);
	if (fs < 0)
		return -errno;
	if (fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0)) {
		mfd = -errno;
	} else {
		mfd = fsmount(fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID |
			      MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
		if (mfd < 0)
			mfd = -errno;
	}
	close(fs);
	return mfd;
}

/* The first cgroup2 mount point whose root is the hierarchy's (or above this namespace's). */
static int root_mount_cb(const char *root, const char *mnt, void *ctx)
{
	struct cgview *v = ctx;

	if (strcmp(root, "/") != 0 && strncmp(root, "/..", 3) != 0)
		return 0;
	return copy(v->mount, sizeof(v->mount), mnt) ? 0 : 1;
}

/*
 * The view through a mount of our own (mfd, taken): the hierarchy's root where this cgroup
 * namespace is the initial one, else its root by file handle through it, else its subtree.
 * -G's absolute paths have stripped the mount point PID 1's mountinfo names, where it can be
 * read though PID 1's root cannot (init_mountinfo), else nothing.
 */
static int choose_own(struct cgview *v, int mfd, const char *where, const char *init_mountinfo)
{
	char at[64];
	int ret;

	snprintf(at, sizeof(at), "/proc/self/fd/%d", mfd);
	v->mount[0] = '\0';
	if (init_mountinfo && mount_each(init_mountinfo, "cgroup2", root_mount_cb, v) != 1)
		v->mount[0] = '\0';
	v->fd = mfd;
	strcpy(v->root, at);
	if (is_hierarchy_root(at)) {
		v->kind = CGVIEW_HOST;
		v->private_ns = ns_differs_from_pid1();
		strcpy(v->shown, "host:");
		snprintf(v->why, sizeof(v->why), "the host's hierarchy through a cgroup2 mount of "
			 "cgtma's own, attached nowhere (%s); -G paths are from its root", where);
		return 0;
	}
	v->private_ns = true;
	ret = open_root_by_handle(at, &v->fd);
	if (ret == 0) {
		close(mfd);
		v->kind = CGVIEW_HANDLE;
		snprintf(v->root, sizeof(v->root), "/proc/self/fd/%d", v->fd);
		strcpy(v->shown, "host:");
		snprintf(v->why, sizeof(v->why), "the host's hierarchy, its root opened by file "
			 "handle through a cgroup2 mount of cgtma's own, attached nowhere (%s), which "
			 "shows only this cgroup namespace's subtree", where);
		return 0;
	}
	v->kind = CGVIEW_SUBTREE;
	strcpy(v->shown, "cgroupns:");
	snprintf(v->why, sizeof(v->why), "only this cgroup namespace's subtree is visible (a "
		 "cgroup2 mount of cgtma's own, attached nowhere: %s): the host's hierarchy root "
		 "cannot be opened by file handle (%s; needs CAP_DAC_READ_SEARCH in the initial user "
		 "namespace); cgroup paths are relative to it", where, strerror(-ret));
	return 0;
}

/*
 * Whether PID 1 is another mount namespace's init, whose mounts to look at: 1 (with its
 * mountinfo and root in init), 0 when it shares ours, -errno when that cannot be told.
 */
static int init_elsewhere(const struct cgview_sources *src, struct cgview_sources *init)
{
	struct stat self, pid1;

	if (src) {
		*init = (struct cgview_sources){ .mountinfo = src->init_mountinfo,
						 .init_root = src->init_root };
		return src->init_mountinfo != NULL;
	}
	*init = (struct cgview_sources){ .mountinfo = "/proc/1/mountinfo",
					 .init_root = "/proc/1/root" };
	if (stat("/proc/self/ns/mnt", &self) || stat("/proc/1/ns/mnt", &pid1))
		return -errno;
	return self.st_ino != pid1.st_ino || self.st_dev != pid1.st_dev;
}

/* The view from the mounts scanned (found: one shows the hierarchy's root). */
static int choose(struct cgview *v, struct scan *sc, bool found)
{
	char through[256] = "", at[8192];
	int ret;

	/* The prefix is /proc/1/root (tests: another short one). */
	if (sc->prefix[0])
		snprintf(through, sizeof(through), " in PID 1's mount namespace, through %.64s "
			 "(this one has no cgroup2 mount)", sc->prefix);
	v->private_ns = sc->above || ns_differs_from_pid1();
	if (found) {
		v->kind = CGVIEW_HOST;
		if (snprintf(v->root, sizeof(v->root), "%s%s", sc->prefix, v->mount) >=
		    (int)sizeof(v->root))
			return -ENAMETOOLONG;
		strcpy(v->shown, v->mount);
		snprintf(v->why, sizeof(v->why), "the host's hierarchy at %s%s%s", v->mount, through,
			 v->private_ns ? " (this cgroup namespace is private, but that mount "
			 "shows the hierarchy's root)" : "");
		return 0;
	}
	v->private_ns = v->private_ns || sc->fallback_ns_root;
	strcpy(v->mount, sc->fallback);
	if (snprintf(at, sizeof(at), "%s%s", sc->prefix, v->mount) >= (int)sizeof(v->root))
		return -ENAMETOOLONG;
	ret = open_root_by_handle(at, &v->fd);
	if (ret == 0) {
		v->kind = CGVIEW_HANDLE;
		snprintf(v->root, sizeof(v->root), "/proc/self/fd/%d", v->fd);
		strcpy(v->shown, "host:");
		snprintf(v->why, sizeof(v->why), "the host's hierarchy, its root opened by file "
			 "handle through %s%s, which shows only %s", v->mount, through,
			 sc->fallback_ns_root ? "this cgroup namespace's subtree" : "a subtree");
		return 0;
	}
	v->kind = CGVIEW_SUBTREE;
	strcpy(v->root, at);
	strcpy(v->shown, v->mount);
	snprintf(v->why, sizeof(v->why), "only %s is visible (%s%s): the host's hierarchy root "
		 "cannot be opened by file handle (%s; needs CAP_DAC_READ_SEARCH in the initial user "
		 "namespace); cgroup paths are relative to it",
		 sc->fallback_ns_root ? "this cgroup namespace's subtree" : "a subtree", v->mount,
		 through, strerror(-ret));
	return 0;
}

int cgview__open(struct cgview *v, const struct cgview_sources *src)
{
	static const char none[] = "no cgroup2 entry in /proc/self/mountinfo";
	struct scan sc = { .v = v, .prefix = "" };
	char pid1[512], where[600];
	struct cgview_sources init;
	int ret;

	memset(v, 0, sizeof(*v));
	v->fd = -1;
	strcpy(v->ns_root, "/");
	ret = mount_each(src ? src->mountinfo : NULL, "cgroup2", scan_cb, &sc);
	if (ret < 0) {
		snprintf(v->why, sizeof(v->why), "%s cannot be read: %s",
			 src && src->mountinfo ? src->mountinfo : "/proc/self/mountinfo",
			 strerror(-ret));
		return ret;
	}
	if (ret == 1 || sc.fallback[0])
		return choose(v, &sc, ret == 1);
	/*
	 * None here. With pid=host, PID 1 is the host's init: its mount namespace has the
	 * host's cgroup2 mount, readable through /proc/1/root (a container in the host's cgroup
	 * namespace, with no cgroup2 mount of its own).
	 */
	ret = init_elsewhere(src, &init);
	if (ret < 0) {
		snprintf(pid1, sizeof(pid1), "whether PID 1 is in another mount namespace cannot "
			 "be told: %s", strerror(-ret));
	} else if (ret == 0) {
		snprintf(pid1, sizeof(pid1), "PID 1 shares this mount namespace");
	} else {
		sc.prefix = init.init_root;
		ret = mount_each(init.mountinfo, "cgroup2", scan_cb, &sc);
		if (ret == 1 || (ret == 0 && sc.fallback[0]))
			return choose(v, &sc, ret == 1);
		if (ret < 0)
			snprintf(pid1, sizeof(pid1), "PID 1's, in another mount namespace, cannot be "
				 "read (%s): %s", init.mountinfo, strerror(-ret));
		else
			snprintf(pid1, sizeof(pid1), "nor in PID 1's, in another mount namespace "
				 "(%s)", init.mountinfo);
	}
	/*
	 * Neither: where cgroup v2 is in use (we are in a cgroup below its root, or in a cgroup
	 * namespace of our own), mount it ourselves, attached nowhere; on a machine that uses
	 * only v1, say it is not mounted.
	 */
	if (src ? src->own_mount : v2_in_use("/proc/self/cgroup")) {
		int mfd = src && src->own_mount_fd ? src->own_mount_fd() : own_mount();

		if (mfd >= 0) {
			snprintf(where, sizeof(where), "%s; %s", none, pid1);
			return choose_own(v, mfd, where, src ? src->init_mountinfo :
					  "/proc/1/mountinfo");
		}
		snprintf(v->why, sizeof(v->why), "%s%s%s; nor can cgtma mount one of its own: %s",
			 none, strncmp(pid1, "nor ", 4) ? "; " : ", ", pid1, strerror(-mfd));
		return -ENOENT;
	}
	/* "PID 1 shares ...": the plain message of a machine without cgroup v2. */
	if (strncmp(pid1, "PID 1 shares", 12) == 0)
		snprintf(v->why, sizeof(v->why), "%s", none);
	else
		snprintf(v->why, sizeof(v->why), "%s%s%s", none,
			 strncmp(pid1, "nor ", 4) ? "; " : ", ", pid1);
	return -ENOENT;
}

/* Whether a cgroup.procs lists pid. */
static bool procs_list(const char *root, const char *path, int pid)
{
	char file[8192];
	bool in = false;
	FILE *f;
	int p;

	if (snprintf(file, sizeof(file), "%s%s/cgroup.procs", root, strcmp(path, "/") ? path : "")
	    >= (int)sizeof(file))
		return false;
	f = fopen(file, "re");
	if (!f)
		return false;
	while (!in && fscanf(f, "%d", &p) == 1)
		in = p == pid;
	fclose(f);
	return in;
}

struct ns_search {
	const char *root;
	const char *own;	/* pid's path, relative to the namespace's root */
	size_t own_len;
	int pid;
	char *out;
	size_t len;
};

/* A cgroup of the view whose path ends with own and that holds pid: out is the rest. */
static int ns_search_cb(const char *path, __u64 id, void *ctx)
{
	struct ns_search *ns = ctx;
	size_t n = strlen(path), keep;

	(void)id;
	if (strcmp(ns->own, "/") == 0) {
		keep = n;
	} else {
		if (n < ns->own_len || strcmp(path + n - ns->own_len, ns->own) != 0)
			return 0;
		keep = n - ns->own_len;
	}
	if (!procs_list(ns->root, path, ns->pid))
		return 0;
	if (keep == 0)
		return copy(ns->out, ns->len, "/") ? -ENAMETOOLONG : 1;
	if (keep >= ns->len)
		return -ENAMETOOLONG;
	memcpy(ns->out, path, keep);
	ns->out[keep] = '\0';
	return 1;
}

int cgview__find_ns_root(struct cgview *v, const char *self_cgroup, int pid)
{
	char own[4096], found[sizeof(v->ns_root)];
	struct ns_search ns = { .root = v->root, .own = own, .out = found, .len = sizeof(found) };
	int ret;

	strcpy(v->ns_root, "/");
	if (!v->private_ns)
		return 0;
	ret = cgroup_read_proc(self_cgroup ? self_cgroup : "/proc/self/cgroup", own, sizeof(own));
	if (ret)
		return ret;
	/* Outside its own namespace's root ("/.."): the root is not below it. */
	if (own[0] != '/' || strncmp(own, "/..", 3) == 0)
		return -ENOENT;
	ns.own_len = strlen(own);
	ns.pid = pid ? pid : getpid();
	/* pid's cgroup is one only: the first that lists it is it. */
	ret = ns_search_cb("/", CGVIEW_ROOT_ID, &ns);
	if (ret == 0)
		ret = cgroup_walk(v->root, CGTMA_MAX_LEVEL, ns_search_cb, &ns);
	if (ret < 0)
		return ret;
	if (ret == 0)
		return -ENOENT;
	strcpy(v->ns_root, found);
	return 0;
}

void cgview__close(struct cgview *v)
{
	if (v->fd >= 0)
		close(v->fd);
	v->fd = -1;
}

int cgview_translate(enum cgview_kind kind, const char *root, const char *host_path, __u64 id,
		     char *out, size_t len)
{
	__u64 got;

	if (kind != CGVIEW_SUBTREE)
		return copy(out, len, host_path);
	/*
	 * The view's root is some ancestor: each '/' of the host path may start the path in the
	 * view. The one whose directory has this id is it; another cgroup of the same relative
	 * name elsewhere has another id.
	 */
	for (const char *p = host_path; (p = strchr(p, '/')); p++) {
		if (cgroup_id(root, p, &got) == 0 && got == id)
			return copy(out, len, p);
	}
	return -ENOENT;
}
