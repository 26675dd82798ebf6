// SPDX-License-Identifier: GPL-2.0
/*
 * Finding mounts in mountinfo (fake files), cgroup paths as users write them (normalize,
 * level, match), and resolving paths and globs against a temporary directory tree standing
 * in for a cgroup v2 root (id, expand, walk).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroups.h"
#include "suggest.h"
#include "cgview.h"
#include "mounts.h"
#include "test.h"

static char tmp[] = "/tmp/cgtma-test-cgroups.XXXXXX";

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f || fputs(text, f) < 0 || fclose(f)) {
		printf("not ok - cannot write %s: %s\n", path, strerror(errno));
		exit(1);
	}
}

/* Writes text to a mountinfo file and looks fstype up in it. */
static int find_in(const char *text, const char *fstype, char *out, size_t len)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/mountinfo", tmp);
	write_file(path, text);
	out[0] = '\0';
	return mount_find(path, fstype, out, len);
}

#define CHECK_MOUNT(text, fstype, want)                                                   \
	do {                                                                              \
		char out_[4096];                                                          \
		int r_ = find_in((text), (fstype), out_, sizeof(out_));                   \
		CHECK(r_ == 0, "%s: returned %d", (fstype), r_);                          \
		const char *o_ = out_;                                                    \
		if (r_ == 0)                                                              \
			CHECK_STR(o_, (want));                                            \
	} while (0)

static const char pure_v2[] =
	"22 1 253:1 / / rw,relatime shared:1 - ext4 /dev/vda1 rw\n"
	"25 22 0:22 / /sys rw,nosuid,nodev,noexec,relatime shared:7 - sysfs sysfs rw\n"
	"29 25 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 "
	"rw,nsdelegate,memory_recursiveprot\n"
	"42 25 0:13 / /sys/kernel/tracing rw,relatime shared:18 - tracefs tracefs rw\n"
	"40 25 0:7 / /sys/kernel/debug rw,relatime shared:16 - debugfs debugfs rw\n";

static const char hybrid[] =
	"31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
	"32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
	"33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct\n"
	"40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd\n"
	"41 31 0:38 / /sys/fs/cgroup/unified rw,relatime shared:5 master:2 - cgroup2 cgroup2 rw\n";

/* podman's container in the host's cgroup namespace on a hybrid host: cgroup v1 only. */
static const char hybrid_v1_only[] =
	"30 20 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
	"31 30 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n";

/* A container's view: a bind mount of its own subtree comes first, then the real root. */
static const char container[] =
	"100 90 0:26 /kubepods/pod1/abc /sys/fs/cgroup ro,nosuid - cgroup2 cgroup rw\n"
	"101 90 0:26 / /host/sys/fs/cgroup rw,relatime - cgroup2 cgroup rw\n";

static void test_mount_find(void)
{
	char out[4096], path[4096];

	CHECK_MOUNT(pure_v2, "cgroup2", "/sys/fs/cgroup");
	CHECK_MOUNT(pure_v2, "tracefs", "/sys/kernel/tracing");
	CHECK_MOUNT(pure_v2, "debugfs", "/sys/kernel/debug");
	CHECK_MOUNT(pure_v2, "ext4", "/");
	/* Hybrid: v1 "cgroup" mounts are not cgroup2; optional fields may be several. */
	CHECK_MOUNT(hybrid, "cgroup2", "/sys/fs/cgroup/unified");
	CHECK_MOUNT(hybrid, "cgroup", "/sys/fs/cgroup/cpu");
	/* Only a mount showing the filesystem's root counts. */
	CHECK_MOUNT(container, "cgroup2", "/host/sys/fs/cgroup");
	/* Escaped mount points (space, tab, backslash) come back unescaped. */
	CHECK_MOUNT("41 31 0:38 / /mnt/my\\040cg\\011x\\134y rw - cgroup2 cgroup2 rw\n", "cgroup2",
		    "/mnt/my cg\tx\\y");
	/* A line without the " - " separator is skipped, not misread. */
	CHECK_MOUNT("garbage line cgroup2\n41 31 0:38 / /cg rw - cgroup2 cgroup2 rw\n", "cgroup2",
		    "/cg");
	/* The first of two. */
	CHECK_MOUNT("1 0 0:1 / /a rw - cgroup2 x rw\n2 0 0:1 / /b rw - cgroup2 x rw\n", "cgroup2",
		    "/a");

	CHECK_INT(find_in(hybrid, "tracefs", out, sizeof(out)), -ENOENT);
	CHECK_INT(find_in("", "cgroup2", out, sizeof(out)), -ENOENT);
	CHECK_INT(find_in("100 90 0:26 /sub /sys/fs/cgroup rw - cgroup2 cgroup rw\n", "cgroup2", out,
			  sizeof(out)), -ENOENT);
	CHECK_INT(find_in(pure_v2, "cgroup2fs", out, sizeof(out)), -ENOENT);
	CHECK_INT(find_in(pure_v2, "cgroup", out, sizeof(out)), -ENOENT);
	/* A buffer too small for the path. */
	CHECK_INT(find_in(pure_v2, "cgroup2", out, strlen("/sys/fs/cgroup")), -ENAMETOOLONG);
	CHECK_INT(find_in(pure_v2, "cgroup2", out, strlen("/sys/fs/cgroup") + 1), 0);
	/* No such file. */
	snprintf(path, sizeof(path), "%s/no-such-mountinfo", tmp);
	CHECK_INT(mount_find(path, "cgroup2", out, sizeof(out)), -ENOENT);
}

#define CHECK_NORM(root, arg, want)                                                       \
	do {                                                                              \
		char out_[256], err_[256] = "";                                           \
		int r_ = cgroup_normalize((root), (arg), out_, sizeof(out_), err_,        \
					  sizeof(err_));                                  \
		CHECK(r_ == 0, "'%s': returned %d (%s)", (arg), r_, err_);                \
		const char *o_ = out_;                                                    \
		if (r_ == 0)                                                              \
			CHECK_STR(o_, (want));                                            \
	} while (0)

static void test_normalize(void)
{
	const char *r = "/sys/fs/cgroup", *p;
	char out[256], err[256];

	CHECK_NORM(r, "/sys/fs/cgroup/system.slice/foo.service", "/system.slice/foo.service");
	CHECK_NORM(r, "/sys/fs/cgroup", "/");
	CHECK_NORM(r, "/sys/fs/cgroup/", "/");
	CHECK_NORM(r, "/sys/fs/cgroup//a//b/", "/a/b");
	CHECK_NORM(r, "/", "/");
	CHECK_NORM(r, "//", "/");
	CHECK_NORM(r, "a", "/a");
	CHECK_NORM(r, "a/b", "/a/b");
	CHECK_NORM(r, "/a/b", "/a/b");
	CHECK_NORM(r, "a//b///c/", "/a/b/c");
	/* Only a whole path component of the mount point is stripped. */
	CHECK_NORM(r, "/sys/fs/cgroupX/a", "/sys/fs/cgroupX/a");
	/* Names that merely start with dots are names. */
	CHECK_NORM(r, "a/.hidden", "/a/.hidden");
	CHECK_NORM(r, "a/...", "/a/...");
	CHECK_NORM(r, "a/..b", "/a/..b");
	/* Globs are kept as they are. */
	CHECK_NORM(r, "system.slice/docker-*.scope", "/system.slice/docker-*.scope");
	CHECK_NORM(r, "/sys/fs/cgroup/k8s/pod[0-9]?/*", "/k8s/pod[0-9]?/*");
	/* Hybrid: the root is the unified mount. */
	CHECK_NORM("/sys/fs/cgroup/unified", "/sys/fs/cgroup/unified/a/b", "/a/b");
	CHECK_NORM("/sys/fs/cgroup/unified", "unified/a", "/unified/a");

	CHECK_INT(cgroup_normalize(r, "a/./b", out, sizeof(out), err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "'.' and '..'") != NULL, "reason: '%s'", err);
	CHECK_INT(cgroup_normalize(r, "a/../b", out, sizeof(out), err, sizeof(err)), -EINVAL);
	CHECK_INT(cgroup_normalize(r, "..", out, sizeof(out), err, sizeof(err)), -EINVAL);
	CHECK_INT(cgroup_normalize(r, "/sys/fs/cgroup/..", out, sizeof(out), err, sizeof(err)),
		  -EINVAL);
	CHECK_INT(cgroup_normalize(r, "a/.", out, sizeof(out), err, sizeof(err)), -EINVAL);
	/* Malformed globs: an unclosed '[' and '**' are refused, well-formed sets pass. */
	{
		static const struct {
			const char *arg, *want;	/* want: the normalized path, or NULL */
			const char *reason;	/* part of the error when refused */
		} globs[] = {
			{ "x/[", NULL, "'[' is not closed" },
			{ "x/[ab", NULL, "'[' is not closed" },
			{ "x/[!]", NULL, "'[' is not closed" },
			{ "x/[a/b]", NULL, "'[' is not closed" },
			{ "x/**", NULL, "'**' is not supported" },
			{ "a**b/c", NULL, "'**' is not supported" },
			{ "x/[ab]", "/x/[ab]", NULL },
			{ "x/[]]", "/x/[]]", NULL },
			{ "x/[!]a]*", "/x/[!]a]*", NULL },
			{ "x/*/y*", "/x/*/y*", NULL },
			{ "x/a]", "/x/a]", NULL },
		};

		for (size_t i = 0; i < sizeof(globs) / sizeof(globs[0]); i++) {
			int r_ = cgroup_normalize(r, globs[i].arg, out, sizeof(out), err,
						  sizeof(err));

			if (globs[i].want) {
				CHECK(r_ == 0, "'%s': returned %d (%s)", globs[i].arg, r_, err);
				p = out;
				CHECK_STR(p, globs[i].want);
			} else {
				CHECK(r_ == -EINVAL, "'%s': returned %d, want -EINVAL", globs[i].arg,
				      r_);
				CHECK(strstr(err, globs[i].reason) != NULL, "'%s': reason '%s'",
				      globs[i].arg, err);
			}
		}
	}
	/* Output buffers too small. */
	CHECK_INT(cgroup_normalize(r, "abcdefgh", out, 8, err, sizeof(err)), -ENAMETOOLONG);
	CHECK_INT(cgroup_normalize(r, "abcdefg", out, 9, err, sizeof(err)), 0);
	p = out;
	CHECK_STR(p, "/abcdefg");
	CHECK_INT(cgroup_normalize(r, "a", out, 1, err, sizeof(err)), -ENAMETOOLONG);
}

/* -G arguments that plainly are no v2 cgroup (the v1 case needs a v1 mount: 15-errors.sh). */
static void test_not_v2(void)
{
	static const struct {
		const char *mount, *arg, *why;
	} cases[] = {
		{ "/sys/fs/cgroup/unified", "/sys/fs/cgroup", "it holds the v2 mount" },
		{ "/sys/fs/cgroup/unified", "/sys/fs/cgroup/", "it holds the v2 mount" },
		{ "/sys/fs/cgroup/unified", "/sys", "it holds the v2 mount" },
		{ "/sys/fs/cgroup/unified", "/sys/fs/cgroup/unified", NULL },
		{ "/sys/fs/cgroup/unified", "/sys/fs/cgroup/unified/a", NULL },
		{ "/sys/fs/cgroup/unified", "/sys/fs/cgroup/unifiedx", NULL },
		{ "/sys/fs/cgroup/unified", "/", NULL },
		{ "/sys/fs/cgroup/unified", "sys/fs/cgroup", NULL },	/* relative: v2's */
		{ "/sys/fs/cgroup", "/tmp/no/such/cgroup", NULL },
		{ "/sys/fs/cgroup", "/web", NULL },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *why = cgroup_arg_not_v2(cases[i].mount, cases[i].arg);

		CHECK(cases[i].why ? why && !strcmp(why, cases[i].why) : !why, "%s in %s: %s",
		      cases[i].arg, cases[i].mount, why ? why : "(v2)");
	}
}

static void test_level_match(void)
{
	CHECK_INT(cgroup_level("/"), 0);
	CHECK_INT(cgroup_level("/a"), 1);
	CHECK_INT(cgroup_level("/a/b"), 2);
	CHECK_INT(cgroup_level("/system.slice/docker-1.scope/inner"), 3);

	CHECK(!cgroup_is_pattern("/a/b"), "plain path");
	CHECK(!cgroup_is_pattern("/a.b/c-d_e"), "plain path with punctuation");
	CHECK(cgroup_is_pattern("/a/*"), "star");
	CHECK(cgroup_is_pattern("/a/b?"), "question mark");
	CHECK(cgroup_is_pattern("/a/[bc]"), "bracket");

	CHECK(cgroup_match("/a", "/a"), "literal");
	CHECK(!cgroup_match("/a", "/ab"), "literal is not a prefix");
	CHECK(!cgroup_match("/a", "/a/b"), "literal does not match children");
	CHECK(cgroup_match("/a/*", "/a/b"), "star");
	CHECK(!cgroup_match("/a/*", "/a/b/c"), "star does not cross '/'");
	CHECK(!cgroup_match("/a/*", "/a"), "star needs its level");
	CHECK(cgroup_match("/*/b", "/x/b"), "star in the middle");
	CHECK(cgroup_match("/system.slice/docker-*.scope", "/system.slice/docker-abc.scope"),
	      "docker scopes");
	CHECK(!cgroup_match("/system.slice/docker-*.scope", "/system.slice/docker-abc.service"),
	      "suffix must match");
	CHECK(!cgroup_match("/system.slice/docker-*.scope", "/system.slice/docker-a/b.scope"),
	      "star does not cross '/' in a name");
	/* As the rescan's expansion: a hidden name is not matched by a wildcard, by name it is. */
	CHECK(!cgroup_match("/a/*", "/a/.hidden"), "star does not match a leading '.'");
	CHECK(!cgroup_match("/*/b", "/.x/b"), "nor in the middle");
	CHECK(cgroup_match("/a/.hid*", "/a/.hidden"), "a leading '.' given literally");
	CHECK(cgroup_is_hidden("/a/.hidden") && cgroup_is_hidden("/.x/b"), "hidden");
	CHECK(!cgroup_is_hidden("/a/b.c") && !cgroup_is_hidden("/"), "not hidden");
	CHECK(cgroup_match("/new-?", "/new-1"), "question mark");
	CHECK(!cgroup_match("/new-?", "/new-10"), "question mark is one character");
	CHECK(cgroup_match("/pod[0-9]", "/pod7"), "class");
	CHECK(!cgroup_match("/pod[0-9]", "/podx"), "class excludes");
	CHECK(cgroup_match("/pod[!0-9]", "/podx"), "negated class");
}

static char root[4200];

static void mk(const char *rel)
{
	char path[4400];

	snprintf(path, sizeof(path), "%s%s", root, rel);
	if (mkdir(path, 0755)) {
		printf("not ok - mkdir %s: %s\n", path, strerror(errno));
		exit(1);
	}
}

static void touch(const char *rel)
{
	char path[4400];

	snprintf(path, sizeof(path), "%s%s", root, rel);
	write_file(path, "");
}

static __u64 ino(const char *rel)
{
	char path[4400];
	struct stat st;

	snprintf(path, sizeof(path), "%s%s", root, strcmp(rel, "/") ? rel : "");
	return stat(path, &st) ? 0 : st.st_ino;
}

/* What a walk or an expansion saw, in order. */
struct seen {
	int n;
	char paths[32][256];
	__u64 ids[32];
	int stop_after;		/* return 99 from the callback after this many; 0: never */
};

static int seen_cb(const char *path, __u64 id, void *ctx)
{
	struct seen *s = ctx;

	if (s->n < 32) {
		snprintf(s->paths[s->n], sizeof(s->paths[s->n]), "%s", path);
		s->ids[s->n] = id;
	}
	s->n++;
	return s->stop_after && s->n >= s->stop_after ? 99 : 0;
}

static int seen_index(const struct seen *s, const char *path)
{
	for (int i = 0; i < s->n && i < 32; i++)
		if (strcmp(s->paths[i], path) == 0)
			return i;
	return -1;
}

/* The paths seen, sorted, joined by spaces: glob sorts, readdir does not. */
static const char *seen_sorted(struct seen *s)
{
	static char out[4096];
	int n = s->n < 32 ? s->n : 32;

	out[0] = '\0';
	for (int i = 0; i < n; i++)
		for (int j = i + 1; j < n; j++)
			if (strcmp(s->paths[i], s->paths[j]) > 0) {
				char t[256];
				__u64 id = s->ids[i];

				memcpy(t, s->paths[i], sizeof(t));
				memcpy(s->paths[i], s->paths[j], sizeof(t));
				memcpy(s->paths[j], t, sizeof(t));
				s->ids[i] = s->ids[j];
				s->ids[j] = id;
			}
	for (int i = 0; i < n; i++)
		snprintf(out + strlen(out), sizeof(out) - strlen(out), "%s%s", i ? " " : "",
			 s->paths[i]);
	return out;
}

static void check_ids(const struct seen *s)
{
	for (int i = 0; i < s->n && i < 32; i++)
		CHECK(s->ids[i] == ino(s->paths[i]) && s->ids[i] != 0, "%s: id %llu, inode %llu",
		      s->paths[i], (unsigned long long)s->ids[i],
		      (unsigned long long)ino(s->paths[i]));
}

/*
 * root/            cgroup.procs (a file, as in a real cgroup)
 *   a/             cgroup.procs
 *     b/  c/  new-1/  new-2/  .hidden/
 *     c/d/
 *   sys/
 *     docker-1.scope/ docker-2.scope/ docker-x.service/
 */
static void make_tree(void)
{
	snprintf(root, sizeof(root), "%s/root", tmp);
	mk("");
	touch("/cgroup.procs");
	mk("/a");
	touch("/a/cgroup.procs");
	mk("/a/b");
	mk("/a/c");
	mk("/a/c/d");
	mk("/a/new-1");
	mk("/a/new-2");
	mk("/a/.hidden");
	mk("/sys");
	mk("/sys/docker-1.scope");
	mk("/sys/docker-2.scope");
	mk("/sys/docker-x.service");
	touch("/sys/docker-file.scope");
}

static void test_id(void)
{
	__u64 id = 0;

	CHECK_INT(cgroup_id(root, "/a/b", &id), 0);
	CHECK(id == ino("/a/b") && id, "id of /a/b: %llu", (unsigned long long)id);
	CHECK_INT(cgroup_id(root, "/", &id), 0);
	CHECK(id == ino("/"), "id of the root: %llu", (unsigned long long)id);
	CHECK_INT(cgroup_id(root, "/nope", &id), -ENOENT);
	CHECK_INT(cgroup_id(root, "/a/cgroup.procs", &id), -ENOTDIR);
}

static void test_expand(void)
{
	struct seen s;

	/* A literal path: itself, if it exists. */
	memset(&s, 0, sizeof(s));
	CHECK_INT(cgroup_expand(root, "/a/b", seen_cb, &s), 0);
	CHECK_STR(seen_sorted(&s), "/a/b");
	check_ids(&s);
	memset(&s, 0, sizeof(s));
	CHECK_INT(cgroup_expand(root, "/", seen_cb, &s), 0);
	CHECK_STR(seen_sorted(&s), "/");
	CHECK(s.ids[0] == ino("/"), "root id");
	/* A literal path that does not exist, or is a file, matches nothing: no error. */
	memset(&s, 0, sizeof(s));
	CHECK_INT(cgroup_expand(root, "/a/zzz", seen_cb, &s), 0);
	CHECK_INT(cgroup_expand(root, "/a/cgroup.procs", seen_cb, &s), 0);
	CHECK_INT(s.n, 0);

	/* Globs: directories only, one level per '*', hidden names not matched by '*'. */
	memset(&s, 0, sizeof(s));
	CHECK_INT(cgroup_expand(root, "/a/*", seen_cb, &s), 0);
	CHECK_STR(seen_sorted(&s), "/a/b /a/c /a/new-1 /a/new-2");
	check_ids(&s);
	memset(&s, 0, sizeof(s));
	CHECK_INT(cgroup_expand(root, "/a/new-*", seen_cb, &s), 0);
	CHECK_STR(seen_sorted(&s), "/a/new-1 /a/new-2");
	memset(&s, 0, sizeof(s));
	CHECK_INT(cgroup_expand(root, "/*/c", seen_cb, &s), 0);
	CHECK_STR(seen_sorted(&s), "/a/c");
	memset(&s, 0, sizeof(s));
	CHECK_INT(cgroup_expand(root, "/*/*/d", seen_cb, &s), 0);
	CHECK_STR(seen_sorted(&s), "/a/c/d");
	memset(&s, 0, sizeof(s));
	CHECK_INT(cgroup_expand(root, "/sys/docker-*.scope", seen_cb, &s), 0);
	CHECK_STR(seen_sorted(&s), "/sys/docker-1.scope /sys/docker-2.scope");
	check_ids(&s);
	memset(&s, 0, sizeof(s));
	CHECK_INT(cgroup_expand(root, "/a/[bc]", seen_cb, &s), 0);
	CHECK_STR(seen_sorted(&s), "/a/b /a/c");
	memset(&s, 0, sizeof(s));
	CHECK_INT(cgroup_expand(root, "/a/new-?", seen_cb, &s), 0);
	CHECK_STR(seen_sorted(&s), "/a/new-1 /a/new-2");
	/* A wildcard component longer than any name can still match one. */
	memset(&s, 0, sizeof(s));
	{
		char pat[400] = "/a/[";

		memset(pat + 4, 'n', 300);
		strcpy(pat + 304, "]ew-?");
		CHECK_INT(cgroup_expand(root, pat, seen_cb, &s), 0);
		CHECK_STR(seen_sorted(&s), "/a/new-1 /a/new-2");
	}
	/* A hidden name matches when its '.' is given, as cgroup_match() has it. */
	memset(&s, 0, sizeof(s));
	CHECK_INT(cgroup_expand(root, "/a/.hid*", seen_cb, &s), 0);
	CHECK_STR(seen_sorted(&s), "/a/.hidden");
	check_ids(&s);
	/* Files never match: cgroup.procs is not a cgroup. */
	memset(&s, 0, sizeof(s));
	CHECK_INT(cgroup_expand(root, "/*", seen_cb, &s), 0);
	CHECK_STR(seen_sorted(&s), "/a /sys");
	memset(&s, 0, sizeof(s));
	CHECK_INT(cgroup_expand(root, "/a/cgroup.*", seen_cb, &s), 0);
	CHECK_INT(s.n, 0);
	/* Matching nothing is not an error. */
	memset(&s, 0, sizeof(s));
	CHECK_INT(cgroup_expand(root, "/a/none-*", seen_cb, &s), 0);
	CHECK_INT(cgroup_expand(root, "/nope/*", seen_cb, &s), 0);
	CHECK_INT(s.n, 0);

	/* A callback's error stops the expansion and is returned. */
	memset(&s, 0, sizeof(s));
	s.stop_after = 2;
	CHECK_INT(cgroup_expand(root, "/a/*", seen_cb, &s), 99);
	CHECK_INT(s.n, 2);
	memset(&s, 0, sizeof(s));
	s.stop_after = 1;
	CHECK_INT(cgroup_expand(root, "/a/b", seen_cb, &s), 99);
}

static void test_walk(void)
{
	struct seen s;
	int ia, ic, id;

	memset(&s, 0, sizeof(s));
	CHECK_INT(cgroup_walk(root, 0, seen_cb, &s), 0);
	CHECK_INT(s.n, 0);

	memset(&s, 0, sizeof(s));
	CHECK_INT(cgroup_walk(root, 1, seen_cb, &s), 0);
	CHECK_STR(seen_sorted(&s), "/a /sys");
	check_ids(&s);

	/* Levels 1..3, parents before children; no files, no hidden directories. */
	memset(&s, 0, sizeof(s));
	CHECK_INT(cgroup_walk(root, 3, seen_cb, &s), 0);
	ia = seen_index(&s, "/a");
	ic = seen_index(&s, "/a/c");
	id = seen_index(&s, "/a/c/d");
	CHECK(ia >= 0 && ic > ia && id > ic, "order: /a at %d, /a/c at %d, /a/c/d at %d", ia, ic,
	      id);
	CHECK_STR(seen_sorted(&s),
		  "/a /a/b /a/c /a/c/d /a/new-1 /a/new-2 /sys /sys/docker-1.scope "
		  "/sys/docker-2.scope /sys/docker-x.service");
	check_ids(&s);

	memset(&s, 0, sizeof(s));
	CHECK_INT(cgroup_walk(root, 2, seen_cb, &s), 0);
	CHECK(seen_index(&s, "/a/c/d") < 0, "depth 2 stops above /a/c/d");
	CHECK_INT(s.n, 9);

	/* A callback's error stops the walk. */
	memset(&s, 0, sizeof(s));
	s.stop_after = 3;
	CHECK_INT(cgroup_walk(root, 3, seen_cb, &s), 99);
	CHECK_INT(s.n, 3);

	/* A root that does not exist (removed while we walk) is not an error. */
	{
		char gone[4400];

		snprintf(gone, sizeof(gone), "%s/gone", tmp);
		memset(&s, 0, sizeof(s));
		CHECK_INT(cgroup_walk(gone, 2, seen_cb, &s), 0);
		CHECK_INT(s.n, 0);
	}
}

struct mounts_seen {
	char text[1024];
};

static int mounts_cb(const char *mroot, const char *mnt, void *ctx)
{
	struct mounts_seen *m = ctx;
	size_t n = strlen(m->text);

	snprintf(m->text + n, sizeof(m->text) - n, "%s[%s=%s]", n ? " " : "", mnt, mroot);
	return strcmp(mnt, "/stop") == 0 ? 7 : 0;
}

static int mounts_in(const char *text, struct mounts_seen *m)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/mountinfo", tmp);
	write_file(path, text);
	memset(m, 0, sizeof(*m));
	return mount_each(path, "cgroup2", mounts_cb, m);
}

/* Every mount of the type, its root as mountinfo shows it ("/.." from a private namespace). */
static void test_mount_each(void)
{
	struct mounts_seen m;

	CHECK_INT(mounts_in(container, &m), 0);
	CHECK_STR(m.text, "[/sys/fs/cgroup=/kubepods/pod1/abc] [/host/sys/fs/cgroup=/]");
	CHECK_INT(mounts_in("62 52 0:38 /../.. /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n"
			    "63 52 0:38 /my\\040ns /mnt/a\\011b rw - cgroup2 cgroup2 rw\n"
			    "64 52 0:38 / /stop rw - cgroup2 cgroup2 rw\n"
			    "65 52 0:38 / /after rw - cgroup2 cgroup2 rw\n", &m), 7);
	CHECK_STR(m.text, "[/sys/fs/cgroup/unified=/../..] [/mnt/a\tb=/my ns] [/stop=/]");
	CHECK_INT(mounts_in(hybrid, &m), 0);
	CHECK_STR(m.text, "[/sys/fs/cgroup/unified=/]");
}

/*
 * The subtree view: the tree's /a stands in for a namespace's root, host paths from the
 * mkdir hook have more components above it. A suffix names the cgroup only with its id.
 */
static void test_view(void)
{
	char view[4400], outb[256], path[4400], mi[4096];
	const char *out = outb;
	__u64 id_cd, id_c, id_b;
	struct cgview v;
	FILE *f;

	snprintf(view, sizeof(view), "%s/a", root);
	CHECK_INT(cgroup_id(view, "/c/d", &id_cd), 0);
	CHECK_INT(cgroup_id(view, "/c", &id_c), 0);
	CHECK_INT(cgroup_id(view, "/b", &id_b), 0);
	CHECK_INT(cgview_translate(CGVIEW_SUBTREE, view, "/kubepods/pod1/a/c/d", id_cd, outb,
				   sizeof(outb)), 0);
	CHECK_STR(out, "/c/d");
	CHECK_INT(cgview_translate(CGVIEW_SUBTREE, view, "/x/c", id_c, outb, sizeof(outb)), 0);
	CHECK_STR(out, "/c");
	/* Another cgroup named like one of the view's, elsewhere: not ours. */
	CHECK_INT(cgview_translate(CGVIEW_SUBTREE, view, "/other/b", id_b + 1000000, outb,
				   sizeof(outb)), -ENOENT);
	CHECK_INT(cgview_translate(CGVIEW_SUBTREE, view, "/x/gone", id_b, outb, sizeof(outb)),
		  -ENOENT);
	CHECK_INT(cgview_translate(CGVIEW_SUBTREE, view, "/x/c", id_c, outb, 2), -ENAMETOOLONG);
	/* The host views: the hook's paths are theirs. */
	CHECK_INT(cgview_translate(CGVIEW_HOST, view, "/kubepods/pod1", 5, outb, sizeof(outb)), 0);
	CHECK_STR(out, "/kubepods/pod1");
	CHECK_INT(cgview_translate(CGVIEW_HANDLE, "/proc/self/fd/3", "/a/b", 5, outb, sizeof(outb)),
		  0);
	CHECK_STR(out, "/a/b");

	/* No mount shows the hierarchy's root (these are no cgroup2 at all): the one mounted in
	 * the namespace (root "/") is the view, and the namespace is private. */
	snprintf(mi, sizeof(mi), "%s/mountinfo", tmp);
	f = fopen(mi, "w");
	fprintf(f, "1 0 0:9 /k8s/x %s/b rw - cgroup2 c rw\n2 0 0:9 / %s rw - cgroup2 c rw\n",
		view, view);
	fclose(f);
	CHECK_INT(cgview__open(&v, &(struct cgview_sources){ .mountinfo = mi }), 0);
	CHECK_INT(v.kind, CGVIEW_SUBTREE);
	CHECK_STR(v.root, view);
	CHECK_STR(v.mount, view);
	CHECK(v.private_ns, "a namespace-rooted mount only: private");
	CHECK(strstr(v.why, "this cgroup namespace's subtree") != NULL, "why: %s", v.why);
	cgview__close(&v);
	write_file(mi, "");
	CHECK_INT(cgview__open(&v, &(struct cgview_sources){ .mountinfo = mi }), -ENOENT);
	CHECK_STR(v.why, "no cgroup2 entry in /proc/self/mountinfo");
	snprintf(path, sizeof(path), "%s/none", tmp);
	CHECK_INT(cgview__open(&v, &(struct cgview_sources){ .mountinfo = path }), -ENOENT);
}

/*
 * None in this mount namespace, PID 1 in another: its mounts, through its root directory
 * (here /proc/self/root stands for /proc/1/root; a real cgroup2 mount for the host's).
 */
static void test_view_pid1(void)
{
	char mi[4096], init[4096], text[9000], real[4096], want[8192], view[4400];
	struct cgview v;
	const char *out;

	snprintf(mi, sizeof(mi), "%s/mountinfo", tmp);
	snprintf(init, sizeof(init), "%s/init-mountinfo", tmp);
	write_file(mi, hybrid_v1_only);
	if (mount_find(NULL, "cgroup2", real, sizeof(real)) == 0) {
		snprintf(text, sizeof(text), "%s40 30 0:40 / %s rw - cgroup2 cgroup2 rw\n",
			 hybrid_v1_only, real);
		write_file(init, text);
		CHECK_INT(cgview__open(&v, &(struct cgview_sources){ mi, init, "/proc/self/root", false, NULL }),
			  0);
		CHECK_INT(v.kind, CGVIEW_HOST);
		snprintf(want, sizeof(want), "/proc/self/root%s", real);
		out = v.root;
		CHECK_STR(out, want);
		out = v.mount;
		CHECK_STR(out, real);	/* what -G's absolute paths have stripped */
		out = v.shown;
		CHECK_STR(out, real);
		CHECK(strstr(v.why, "the host's hierarchy at ") == v.why &&
		      strstr(v.why, "in PID 1's mount namespace, through /proc/self/root") != NULL,
		      "why: %s", v.why);
		cgview__close(&v);
	} else {
		printf("# no cgroup2 mounted here: the view through PID 1's root is untested\n");
	}
	/* PID 1's shows a subtree only (a fixture directory): read through its root too. */
	snprintf(view, sizeof(view), "%s/a", root);
	snprintf(text, sizeof(text), "40 30 0:40 / %s rw - cgroup2 cgroup2 rw\n", view);
	write_file(init, text);
	CHECK_INT(cgview__open(&v, &(struct cgview_sources){ mi, init, "/proc/self/root", false, NULL }), 0);
	CHECK_INT(v.kind, CGVIEW_SUBTREE);
	snprintf(want, sizeof(want), "/proc/self/root%s", view);
	out = v.root;
	CHECK_STR(out, want);
	out = v.mount;
	CHECK_STR(out, view);
	cgview__close(&v);
	/* Neither has one: said, PID 1's tried. */
	write_file(init, hybrid_v1_only);
	CHECK_INT(cgview__open(&v, &(struct cgview_sources){ mi, init, "/proc/self/root", false, NULL }),
		  -ENOENT);
	snprintf(want, sizeof(want), "no cgroup2 entry in /proc/self/mountinfo, nor in PID 1's, "
		 "in another mount namespace (%s)", init);
	out = v.why;
	CHECK_STR(out, want);
	/* PID 1 shares the namespace: not looked at. */
	CHECK_INT(cgview__open(&v, &(struct cgview_sources){ .mountinfo = mi }), -ENOENT);
	CHECK_STR(v.why, "no cgroup2 entry in /proc/self/mountinfo");
	snprintf(init, sizeof(init), "%s/no-init-mountinfo", tmp);
	CHECK_INT(cgview__open(&v, &(struct cgview_sources){ mi, init, "/proc/self/root", false, NULL }),
		  -ENOENT);
	CHECK(strstr(v.why, "cannot be read") != NULL, "why: %s", v.why);
}

static char own_dir[4400];

static int own_fd(void)
{
	return open(own_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

static int own_eperm(void)
{
	return -EPERM;
}

/*
 * None seen here nor for PID 1, cgroup v2 in use: a mount of cgtma's own (here a directory
 * stands for it: a real cgroup2 mount's for the host's root, a fixture for a subtree).
 */
static void test_view_own(void)
{
	char mi[4096], init[4096], want[8192];
	struct cgview v;
	const char *out;

	snprintf(mi, sizeof(mi), "%s/mountinfo", tmp);
	snprintf(init, sizeof(init), "%s/init-mountinfo", tmp);
	write_file(mi, hybrid_v1_only);
	write_file(init, hybrid_v1_only);
	if (mount_find(NULL, "cgroup2", own_dir, sizeof(own_dir)) == 0) {
		CHECK_INT(cgview__open(&v, &(struct cgview_sources){ mi, init, "/proc/self/root",
								    true, own_fd }), 0);
		CHECK_INT(v.kind, CGVIEW_HOST);
		snprintf(want, sizeof(want), "/proc/self/fd/%d", v.fd);
		out = v.root;
		CHECK_STR(out, want);
		CHECK_STR(v.mount, "");		/* nothing stripped from -G */
		CHECK_STR(v.shown, "host:");
		CHECK(strstr(v.why, "through a cgroup2 mount of cgtma's own, attached nowhere (no "
			     "cgroup2 entry in /proc/self/mountinfo; nor in PID 1's") != NULL,
		      "why: %s", v.why);
		cgview__close(&v);
		CHECK_INT(v.fd, -1);
	}
	snprintf(own_dir, sizeof(own_dir), "%s/a", root);
	CHECK_INT(cgview__open(&v, &(struct cgview_sources){ .mountinfo = mi, .own_mount = true,
							    .own_mount_fd = own_fd }), 0);
	CHECK_INT(v.kind, CGVIEW_SUBTREE);
	CHECK(v.private_ns, "a mount of our own showing a subtree: a private namespace");
	CHECK_STR(v.shown, "cgroupns:");
	CHECK(strstr(v.why, "PID 1 shares this mount namespace") != NULL, "why: %s", v.why);
	cgview__close(&v);
	CHECK_INT(cgview__open(&v, &(struct cgview_sources){ mi, init, "/proc/self/root", true,
							    own_eperm }), -ENOENT);
	snprintf(want, sizeof(want), "no cgroup2 entry in /proc/self/mountinfo, nor in PID 1's, "
		 "in another mount namespace (%s); nor can cgtma mount one of its own: %s", init,
		 strerror(EPERM));
	out = v.why;
	CHECK_STR(out, want);
}

static void mkdirs(const char *base, const char *rel, const char *procs)
{
	char path[4400], cmd[4500];

	snprintf(path, sizeof(path), "%s%s", base, rel);
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s'", path);
	if (system(cmd) != 0) {
		printf("not ok - %s\n", cmd);
		exit(1);
	}
	snprintf(path, sizeof(path), "%s%s/cgroup.procs", base, rel);
	write_file(path, procs);
}

/*
 * Where a private namespace's root is: the cgroup listing our pid whose path ends with ours
 * as /proc/self/cgroup shows it. A decoy with the same tail elsewhere lists another pid.
 */
static void test_ns_root(void)
{
	char self[4096];
	struct cgview v = { .kind = CGVIEW_HOST, .private_ns = true };
	const char *out = v.ns_root;

	snprintf(v.root, sizeof(v.root), "%s/nsroot", tmp);
	mkdirs(v.root, "", "1\n");
	mkdirs(v.root, "/x/ns", "7\n");
	mkdirs(v.root, "/x/ns/c/d", "5\n4242\n");
	mkdirs(v.root, "/y/ns/c/d", "4243\n");
	mkdirs(v.root, "/y/other", "");
	snprintf(self, sizeof(self), "%s/self-cgroup", tmp);
	write_file(self, "12:cpu,cpuacct:/\n0::/c/d\n");
	CHECK_INT(cgview__find_ns_root(&v, self, 4242), 0);
	CHECK_STR(out, "/x/ns");
	CHECK_INT(cgview__find_ns_root(&v, self, 4243), 0);
	CHECK_STR(out, "/y/ns");
	CHECK_INT(cgview__find_ns_root(&v, self, 7), -ENOENT);	/* not in a /c/d */
	CHECK_STR(out, "/");
	write_file(self, "0::/\n");
	CHECK_INT(cgview__find_ns_root(&v, self, 7), 0);		/* at the namespace's root */
	CHECK_STR(out, "/x/ns");
	CHECK_INT(cgview__find_ns_root(&v, self, 1), 0);		/* the hierarchy's root */
	CHECK_STR(out, "/");
	write_file(self, "0::/../elsewhere\n");
	CHECK_INT(cgview__find_ns_root(&v, self, 4242), -ENOENT);
	write_file(self, "12:cpu,cpuacct:/\n");
	CHECK_INT(cgview__find_ns_root(&v, self, 4242), -ENOENT);
	/* Not private: the namespace's root is the view's, nothing read. */
	v.private_ns = false;
	CHECK_INT(cgview__find_ns_root(&v, "/nonexistent", 4242), 0);
	CHECK_STR(out, "/");
}

/* Paths from /proc in a private namespace, joined to its root. */
static void test_resolve(void)
{
	static const struct { const char *base, *rel, *want; } ok[] = {
		{ "/a/b", "/c", "/a/b/c" },	{ "/a/b", "/../../x/y", "/x/y" },
		{ "/a/b", "/..", "/a" },	{ "/a/b", "/../..", "/" },
		{ "/a/b", "/", "/a/b" },	{ "/", "/x//y/", "/x/y" },
		{ "/", "/", "/" },
	};
	char outb[64];
	const char *out = outb;

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		CHECK_INT(cgroup_resolve(ok[i].base, ok[i].rel, outb, sizeof(outb)), 0);
		CHECK_STR(out, ok[i].want);
	}
	CHECK_INT(cgroup_resolve("/a", "/../..", outb, sizeof(outb)), -EINVAL);
	CHECK_INT(cgroup_resolve("/a", "x", outb, sizeof(outb)), -EINVAL);
	CHECK_INT(cgroup_resolve("/a", "/0123456789", outb, 8), -ENAMETOOLONG);
	CHECK_INT(cgroup_resolve("/0123456789", "/", outb, 8), -ENAMETOOLONG);
}

/* /proc/PID/cgroup's forms: hybrid (v1 lines first), v1 only, and none at all. */
static void test_read_proc(void)
{
	char path[4096], out[64];
	const char *o = out;

	snprintf(path, sizeof(path), "%s/proc-cgroup", tmp);
	write_file(path, "12:cpu,cpuacct:/x\n1:name=systemd:/init.scope\n0::/a/b\n");
	CHECK_INT(cgroup_read_proc(path, out, sizeof(out)), 0);
	CHECK_STR(o, "/a/b");
	write_file(path, "0::/../../c\n");
	CHECK_INT(cgroup_read_proc(path, out, sizeof(out)), 0);
	CHECK_STR(o, "/../../c");
	CHECK_INT(cgroup_read_proc(path, out, 8), -ENAMETOOLONG);
	write_file(path, "12:cpu,cpuacct:/x\n");
	CHECK_INT(cgroup_read_proc(path, out, sizeof(out)), -ENOENT);
	snprintf(path, sizeof(path), "%s/no-such-task/cgroup", tmp);
	CHECK_INT(cgroup_read_proc(path, out, sizeof(out)), -ENOENT);
}

/* A path or glob matching nothing: the cgroups at the level where it stops matching. */
static void check_suggest(const char *pattern, const char *want)
{
	char buf[SUGGEST_LEN];
	struct suggest sg;

	suggest_init(&sg, pattern);
	CHECK_INT(cgroup_suggest(root, pattern, &sg), 0);
	suggest_format(&sg, buf, sizeof(buf));
	CHECK(!strcmp(buf, want), "'%s': got \"%s\", want \"%s\"", pattern, buf, want);
	suggest_release(&sg);
}

static void test_suggest(void)
{
	check_suggest("/a/nwe-1", "did you mean '/a/new-1'?");
	check_suggest("/sis", "did you mean '/sys'?");
	/* The rest of the pattern follows the name offered, glob and all. */
	check_suggest("/sy/docker-*.scope", "did you mean '/sys/docker-*.scope'?");
	/* Below a glob that matches: each branch where the next level matches nothing. */
	check_suggest("/*/docker-3.scope",
		      "did you mean '/sys/docker-1.scope' or '/sys/docker-2.scope'?");
	check_suggest("/a/c/x", "did you mean '/a/c/d'?");
	/* Hidden cgroups and files are no cgroups to offer; nothing close, nothing offered. */
	check_suggest("/a/.hidde", "");
	check_suggest("/completely-else", "");
}

int main(void)
{
	char cmd[4200];
	int ret;

	if (!mkdtemp(tmp)) {
		printf("not ok - mkdtemp: %s\n", strerror(errno));
		return 1;
	}
	test_mount_find();
	test_normalize();
	test_not_v2();
	test_level_match();
	make_tree();
	test_id();
	test_expand();
	test_suggest();
	test_walk();
	test_mount_each();
	test_view();
	test_view_pid1();
	test_view_own();
	test_ns_root();
	test_resolve();
	test_read_proc();

	ret = test_done("cgroups");
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	if (system(cmd) != 0)
		printf("# could not remove %s\n", tmp);
	return ret;
}
