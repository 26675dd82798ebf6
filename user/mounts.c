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

int mount_find(const char *mountinfo, const char *fstype, char *path, size_t len)
{
	char line[4096];
	FILE *f;
	int err = -ENOENT;

	f = fopen(mountinfo ? mountinfo : "/proc/self/mountinfo", "re");
	if (!f)
		return -errno;
	/* id parent major:minor root mount-point options [optional...] - fstype source super */
	while (fgets(line, sizeof(line), f)) {
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
		if (n < 5 || strcmp(fields[3], "/") != 0)
			continue;
		unescape_octal(fields[4]);
		if (strlen(fields[4]) >= len) {
			err = -ENAMETOOLONG;
			break;
		}
		strcpy(path, fields[4]);
		err = 0;
		break;
	}
	fclose(f);
	return err;
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
