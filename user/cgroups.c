// SPDX-License-Identifier: GPL-2.0
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>
#include <linux/magic.h>

#include "cgroups.h"
#include "suggest.h"

/*
 * Refuses what fnmatch() would take silently but no user means: a '[' that no ']' closes in
 * its component (matched as a plain '['), and '**', which a shell's globstar reads as any
 * depth while fnmatch() reads it as '*' within one level.
 */
static int check_glob(const char *comp, size_t n, char *err, size_t errlen)
{
	for (size_t i = 0; i < n; i++) {
		size_t j;

		if (comp[i] == '*' && i + 1 < n && comp[i + 1] == '*') {
			snprintf(err, errlen, "'**' is not supported: a wildcard matches within "
				 "one level, so write one '*' per level");
			return -EINVAL;
		}
		if (comp[i] != '[')
			continue;
		/* A ']' right after '[' or '[!' (or '[^') is a member, not the end. */
		j = i + 1;
		if (j < n && (comp[j] == '!' || comp[j] == '^'))
			j++;
		if (j < n && comp[j] == ']')
			j++;
		while (j < n && comp[j] != ']')
			j++;
		if (j >= n) {
			snprintf(err, errlen, "'[' is not closed by ']' within its level");
			return -EINVAL;
		}
		i = j;
	}
	return 0;
}

const char *cgroup_arg_not_v2(const char *mount, const char *arg)
{
	size_t mlen = strlen(mount), alen = strlen(arg);
	char path[4096];
	struct statfs st;
	char *slash;

	while (alen > 1 && arg[alen - 1] == '/')
		alen--;
	if (arg[0] != '/' || alen >= sizeof(path) ||
	    (strncmp(arg, mount, mlen) == 0 && (arg[mlen] == '/' || arg[mlen] == '\0')))
		return NULL;
	if (alen > 1 && alen < mlen && strncmp(arg, mount, alen) == 0 && mount[alen] == '/')
		return "it holds the v2 mount";
	memcpy(path, arg, alen);
	path[alen] = '\0';
	/* Up to the nearest directory that exists: a cgroup not made yet, or a glob. */
	while (statfs(path, &st)) {
		slash = strrchr(path, '/');
		if (errno != ENOENT || !slash || slash == path)
			return NULL;
		*slash = '\0';
	}
	return st.f_type == CGROUP_SUPER_MAGIC ? "it is in a cgroup v1 hierarchy" : NULL;
}

int cgroup_normalize(const char *root, const char *arg, char *out, size_t len, char *err,
		     size_t errlen)
{
	size_t rlen = strlen(root), o = 0;
	const char *p = arg;

	/* An absolute path under the mount point: strip the mount point. */
	if (strncmp(arg, root, rlen) == 0 && (arg[rlen] == '/' || arg[rlen] == '\0'))
		p = arg + rlen;

	if (len < 2)
		return -ENAMETOOLONG;
	out[o++] = '/';
	while (*p) {
		const char *end;
		size_t n;

		while (*p == '/')
			p++;
		if (!*p)
			break;
		end = strchr(p, '/');
		n = end ? (size_t)(end - p) : strlen(p);
		if ((n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.')) {
			snprintf(err, errlen, "'.' and '..' are not allowed in cgroup paths");
			return -EINVAL;
		}
		if (check_glob(p, n, err, errlen))
			return -EINVAL;
		if (o > 1)
			out[o++] = '/';
		if (o + n + 1 > len)
			return -ENAMETOOLONG;
		memcpy(out + o, p, n);
		o += n;
		p += n;
	}
	out[o] = '\0';
	return 0;
}

int cgroup_read_proc(const char *file, char *out, size_t len)
{
	char line[4096];
	int ret = -ENOENT;
	FILE *f;

	f = fopen(file, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "0::", 3) != 0)
			continue;	/* a v1 hierarchy's line */
		line[strcspn(line, "\n")] = '\0';
		ret = -ENAMETOOLONG;
		if (strlen(line + 3) < len) {
			strcpy(out, line + 3);
			ret = 0;
		}
		break;
	}
	fclose(f);
	return ret;
}

int cgroup_resolve(const char *base, const char *rel, char *out, size_t len)
{
	size_t o;

	if (rel[0] != '/')
		return -EINVAL;
	if (strlen(base) >= len)
		return -ENAMETOOLONG;
	strcpy(out, base);
	o = strcmp(out, "/") ? strlen(out) : 0;	/* out[0..o) without a trailing '/' */
	for (const char *p = rel; *p;) {
		size_t n;

		while (*p == '/')
			p++;
		n = strcspn(p, "/");
		if (n == 0 || (n == 1 && p[0] == '.')) {
			/* nothing, or "." */
		} else if (n == 2 && p[0] == '.' && p[1] == '.') {
			if (o == 0)
				return -EINVAL;
			while (out[--o] != '/')
				;
		} else {
			if (o + 1 + n >= len)
				return -ENAMETOOLONG;
			out[o++] = '/';
			memcpy(out + o, p, n);
			o += n;
		}
		p += n;
	}
	if (o == 0)
		out[o++] = '/';
	out[o] = '\0';
	return 0;
}

bool cgroup_is_pattern(const char *path)
{
	return strpbrk(path, "*?[") != NULL;
}

int cgroup_level(const char *path)
{
	int level = 0;

	for (const char *p = path; *p; p++)
		if (*p == '/' && p[1])
			level++;
	return level;
}

/* As shell globs: no wildcard crosses '/' or matches a leading '.'. */
#define MATCH_FLAGS (FNM_PATHNAME | FNM_PERIOD)

bool cgroup_match(const char *pattern, const char *path)
{
	return fnmatch(pattern, path, MATCH_FLAGS) == 0;
}

bool cgroup_is_hidden(const char *path)
{
	return strstr(path, "/.") != NULL;
}

int cgroup_id(const char *root, const char *path, __u64 *id)
{
	char full[4096];
	struct stat st;

	if ((size_t)snprintf(full, sizeof(full), "%s%s", root, strcmp(path, "/") ? path : "") >=
	    sizeof(full))
		return -ENAMETOOLONG;
	if (stat(full, &st))
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	*id = st.st_ino;
	return 0;
}

/*
 * The id of a directory entry of the cgroup v2 tree. A cgroup's id is its kernfs node id,
 * which kernfs gives as the inode number in readdir as in stat (cgroup_id() relies on the
 * same, and on a 64-bit kernel it is the whole id): matching thousands of cgroups every
 * interval needs no stat each.
 */
static __u64 entry_id(const struct dirent *de)
{
	return de->d_ino;
}

/*
 * Matches the pattern's components from rest on (no leading '/') below path, a cgroup
 * relative to root ("" for the root itself): one directory read per component with
 * wildcards, none for a literal one.
 */
static int expand(const char *root, char *path, size_t cap, const char *rest, cgroup_cb cb,
		  void *ctx)
{
	const char *slash = strchr(rest, '/');
	size_t n = slash ? (size_t)(slash - rest) : strlen(rest), plen = strlen(path);
	char comp[4096], full[4096];
	struct dirent *de;
	int ret = 0;
	__u64 id;
	DIR *d;

	/* A pattern component may be longer than the names it matches ("[0-9a-f]..."). */
	if (n >= sizeof(comp))
		return -ENAMETOOLONG;
	memcpy(comp, rest, n);
	comp[n] = '\0';
	if (!strpbrk(comp, "*?[\\")) {
		if (n > NAME_MAX)
			return 0;	/* longer than any name: matches nothing */
		if (plen + 1 + n + 1 > cap)
			return -ENAMETOOLONG;
		snprintf(path + plen, cap - plen, "/%s", comp);
		if (slash)
			ret = expand(root, path, cap, slash + 1, cb, ctx);
		else if (cgroup_id(root, path, &id) == 0)
			ret = cb(path, id, ctx);
		path[plen] = '\0';
		return ret;
	}
	if ((size_t)snprintf(full, sizeof(full), "%s%s", root, path) >= sizeof(full))
		return -ENAMETOOLONG;
	d = opendir(full);
	/* Gone or not a directory: nothing matches there. Any other failure is the caller's
	 * to report: a scan that could not read is not one that found the cgroups removed. */
	if (!d)
		return errno == ENOENT || errno == ENOTDIR ? 0 : -errno;
	while ((de = readdir(d)) && !ret) {
		if (de->d_type != DT_DIR || !strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (fnmatch(comp, de->d_name, FNM_PERIOD) != 0)
			continue;
		if (plen + 1 + strlen(de->d_name) + 1 > cap)
			continue;
		snprintf(path + plen, cap - plen, "/%s", de->d_name);
		if (slash)
			ret = expand(root, path, cap, slash + 1, cb, ctx);
		else
			ret = cb(path, entry_id(de), ctx);
		path[plen] = '\0';
	}
	closedir(d);
	return ret;
}

int cgroup_expand(const char *root, const char *pattern, cgroup_cb cb, void *ctx)
{
	char path[4096] = "";
	int ret;
	__u64 id;

	if (!cgroup_is_pattern(pattern)) {
		ret = cgroup_id(root, pattern, &id);
		if (ret == -ENOENT || ret == -ENOTDIR)
			return 0;
		return ret ? ret : cb(pattern, id, ctx);
	}
	return expand(root, path, sizeof(path), pattern[0] == '/' ? pattern + 1 : pattern, cb,
		      ctx);
}

static int walk(const char *root, char *path, size_t len, int level, int depth, cgroup_cb cb,
		void *ctx)
{
	char full[4096];
	size_t plen = strlen(path);
	struct dirent *de;
	DIR *d;
	int ret = 0;

	snprintf(full, sizeof(full), "%s%s", root, path);
	d = opendir(full);
	if (!d)	/* removed while we walk: not an error */
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(d)) && !ret) {
		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		if (plen + 1 + strlen(de->d_name) + 1 > len)
			continue;
		snprintf(path + plen, len - plen, "%s%s", plen > 1 ? "/" : "", de->d_name);
		ret = cb(path, entry_id(de), ctx);
		if (!ret && level + 1 < depth)
			ret = walk(root, path, len, level + 1, depth, cb, ctx);
		path[plen] = '\0';
	}
	closedir(d);
	return ret;
}

int cgroup_walk(const char *root, int depth, cgroup_cb cb, void *ctx)
{
	char path[4096] = "/";

	if (depth < 1)
		return 0;
	return walk(root, path, sizeof(path), 0, depth, cb, ctx);
}

/*
 * cgroup_suggest()'s descent: dir (canonical, "" for the root) exists; rest is what the
 * pattern has below it. Where a level matches nothing, its names are offered, each with the
 * pattern's rest after it. *found tells the caller that something below dir matched.
 */
static int suggest_below(const char *root, const char *dir, const char *rest,
			 struct suggest *sg, bool *found)
{
	const char *slash = strchr(rest, '/'), *tail = slash ? slash : "";
	char comp[NAME_MAX + 1], full[4096], sub[4096];
	size_t n = slash ? (size_t)(slash - rest) : strlen(rest);
	bool any = false;
	struct dirent *de;
	int ret = 0;
	DIR *d;

	char typo[4096];	/* the pattern, with what its globs above matched put in */

	if (n > NAME_MAX || (size_t)snprintf(full, sizeof(full), "%s%s", root, dir) >= sizeof(full))
		return 0;
	snprintf(typo, sizeof(typo), "%s/%s", dir, rest);
	memcpy(comp, rest, n);
	comp[n] = '\0';
	d = opendir(full);
	if (!d)
		return 0;
	while (!ret && (de = readdir(d))) {
		if (de->d_type != DT_DIR || de->d_name[0] == '.' ||
		    fnmatch(comp, de->d_name, FNM_PERIOD) != 0)
			continue;
		any = true;
		snprintf(sub, sizeof(sub), "%s/%s", dir, de->d_name);
		if (slash)
			ret = suggest_below(root, sub, slash + 1, sg, found);
		else
			*found = true;
	}
	if (!ret && !any) {
		rewinddir(d);
		while (!ret && (de = readdir(d))) {
			if (de->d_type != DT_DIR || de->d_name[0] == '.')
				continue;
			snprintf(sub, sizeof(sub), "%s/%s%s", dir, de->d_name, tail);
			ret = suggest_add_against(sg, typo, sub);
		}
	}
	closedir(d);
	return ret;
}

int cgroup_suggest(const char *root, const char *pattern, struct suggest *sg)
{
	bool found = false;

	if (!strcmp(pattern, "/"))
		return 0;
	return suggest_below(root, "", pattern[0] == '/' ? pattern + 1 : pattern, sg, &found);
}
