// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mounts.h"

/* mountinfo escapes space, tab, newline and backslash as \ooo. */
static void unescape_octal(char *s)
{
	char *d = s;

	while (*s) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*d++ = (char)((s[1] - '0') << 6 | (s[2] - '0') << 3 | (s[3] - '0'));
			s += 4;
		} else {
			*d++ = *s++;
		}
	}
	*d = '\0';
}

int mount_each(const char *mountinfo, const char *fstype, mount_cb cb, void *ctx)
{
	char line[4096];
	FILE *f;
	int ret = 0;

	f = fopen(mountinfo ? mountinfo : "/proc/self/mountinfo", "re");
	if (!f)
		return -errno;
	/* id parent major:minor root mount-point options [optional...] - fstype source super */
	while (!ret && fgets(line, sizeof(line), f)) {
		char *fields[6], *sep, *type, *save = NULL;
		int n = 0;

		sep = strstr(line, " - ");
		if (!sep)
			continue;
		*sep = '\0';
		type = strtok_r(sep + 3, " \n", &save);
		if (!type || strcmp(type, fstype) != 0)
			continue;
		save = NULL;
		for (char *t = strtok_r(line, " ", &save); t && n < 6; t = strtok_r(NULL, " ", &save))
			fields[n++] = t;
		if (n < 5)
			continue;
		unescape_octal(fields[3]);
		unescape_octal(fields[4]);
		ret = cb(fields[3], fields[4], ctx);
	}
	fclose(f);
	return ret;
}

struct find_ctx {
	char *path;
	size_t len;
};

static int find_cb(const char *root, const char *mnt, void *ctx)
{
	struct find_ctx *fc = ctx;

	if (strcmp(root, "/") != 0)
		return 0;
	if (strlen(mnt) >= fc->len)
		return -ENAMETOOLONG;
	strcpy(fc->path, mnt);
	return 1;
}

int mount_find(const char *mountinfo, const char *fstype, char *path, size_t len)
{
	struct find_ctx fc = { path, len };
	int ret = mount_each(mountinfo, fstype, find_cb, &fc);

	return ret == 1 ? 0 : ret ? ret : -ENOENT;
}

int tracefs_dir(char *path, size_t len)
{
	static const char fallback[] = "/sys/kernel/tracing";
	char debugfs[4096];
	struct stat st;

	if (mount_find(NULL, "tracefs", path, len) == 0)
		return 0;
	if (mount_find(NULL, "debugfs", debugfs, sizeof(debugfs)) == 0 &&
	    (size_t)snprintf(path, len, "%s/tracing", debugfs) < len &&
	    stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		return 0;
	if (len < sizeof(fallback))
		return -ENAMETOOLONG;
	if (mount("nodev", fallback, "tracefs", 0, NULL) != 0)
		return -errno;
	strcpy(path, fallback);
	return 0;
}
