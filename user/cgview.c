// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>
#include <linux/magic.h>

#include "cgroups.h"
#include "cgview.h"
#include "mounts.h"

#define HANDLE_MAX 128	/* MAX_HANDLE_SZ */

struct scan {
	struct cgview *v;
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

	/* mountinfo shows a cgroup2 mount's root relative to the reader's namespace. */
	if (strncmp(root, "/..", 3) == 0 && (root[3] == '/' || root[3] == '\0'))
		sc->above = true;
	if (is_hierarchy_root(mnt)) {
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
 * The hierarchy's root, opened by its file handle through a mount of the hierarchy: a
 * kernfs handle is the node's 64-bit id, the root's is CGVIEW_ROOT_ID. The handle's type
 * comes from the kernel (name_to_handle_at of the mount), only the id is ours.
 */
static int open_root_by_handle(const char *mnt, int *out)
{
	char buf[sizeof(struct file_handle) + HANDLE_MAX] __attribute__((aligned(8)));
	struct file_handle *fh = (struct file_handle *)buf;
	__u64 id = CGVIEW_ROOT_ID;
	int mnt_id, dfd, fd, err = 0;
	struct stat st;

	dfd = open(mnt, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
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
		} else if (fstat(fd, &st) || st.st_ino != CGVIEW_ROOT_ID) {
			close(fd);
			err = -ESTALE;
		} else {
			*out = fd;
		}
	}
	close(dfd);
	return err;
}

/* Whether this process's cgroup namespace differs from PID 1's; false when unreadable. */
static bool ns_differs_from_pid1(void)
{
	struct stat self, init;

	return stat("/proc/self/ns/cgroup", &self) == 0 && stat("/proc/1/ns/cgroup", &init) == 0 &&
	       self.st_ino != init.st_ino;
}

int cgview_open(struct cgview *v, const char *mountinfo)
{
	struct scan sc = { .v = v };
	int ret;

	memset(v, 0, sizeof(*v));
	v->fd = -1;
	ret = mount_each(mountinfo, "cgroup2", scan_cb, &sc);
	if (ret < 0)
		return ret;
	v->private_ns = sc.above || ns_differs_from_pid1();
	if (ret == 1) {
		v->kind = CGVIEW_HOST;
		strcpy(v->root, v->mount);
		strcpy(v->shown, v->mount);
		snprintf(v->why, sizeof(v->why), "the host's hierarchy at %s%s", v->mount,
			 v->private_ns ? " (this cgroup namespace is private, but that mount "
			 "shows the hierarchy's root)" : "");
		return 0;
	}
	if (!sc.fallback[0])
		return -ENOENT;
	v->private_ns = v->private_ns || sc.fallback_ns_root;
	strcpy(v->mount, sc.fallback);
	ret = open_root_by_handle(v->mount, &v->fd);
	if (ret == 0) {
		v->kind = CGVIEW_HANDLE;
		snprintf(v->root, sizeof(v->root), "/proc/self/fd/%d", v->fd);
		strcpy(v->shown, "host:");
		snprintf(v->why, sizeof(v->why), "the host's hierarchy, its root opened by file "
			 "handle through %s, which shows only %s", v->mount,
			 sc.fallback_ns_root ? "this cgroup namespace's subtree" : "a subtree");
		return 0;
	}
	v->kind = CGVIEW_SUBTREE;
	strcpy(v->root, v->mount);
	strcpy(v->shown, v->mount);
	snprintf(v->why, sizeof(v->why), "only %s is visible (%s): the host's hierarchy root "
		 "cannot be opened by file handle (%s; needs CAP_DAC_READ_SEARCH in the initial user "
		 "namespace); cgroup paths are relative to it",
		 sc.fallback_ns_root ? "this cgroup namespace's subtree" : "a subtree", v->mount,
		 strerror(-ret));
	return 0;
}

void cgview_close(struct cgview *v)
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
