// SPDX-License-Identifier: GPL-2.0
/* Files written whole or not at all (atomicfile.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomicfile.h"

/* "PATH.XXXXXX" created (0644, as the other outputs are), its name in *tmp: fd or -errno. */
static int create_temp(const char *path, char **tmp)
{
	struct stat st;
	int fd, err;

	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		return -EISDIR;
	if (asprintf(tmp, "%s.XXXXXX", path) < 0) {
		*tmp = NULL;
		return -ENOMEM;
	}
	fd = mkostemp(*tmp, O_CLOEXEC);
	if (fd < 0 || fchmod(fd, 0644)) {
		err = -errno;
		if (fd >= 0) {
			close(fd);
			unlink(*tmp);
		}
		free(*tmp);
		*tmp = NULL;
		return err;
	}
	return fd;
}

int atomic_check(const char *path)
{
	char *tmp;
	int fd = create_temp(path, &tmp);

	if (fd < 0)
		return fd;
	close(fd);
	unlink(tmp);
	free(tmp);
	return 0;
}

int atomic_write_file(const char *path, int (*write)(FILE *f, void *arg), void *arg)
{
	char *tmp;
	int fd = create_temp(path, &tmp), err;
	FILE *f;

	if (fd < 0)
		return fd;
	f = fdopen(fd, "w");
	if (!f) {
		err = -errno;
		close(fd);
		goto out;
	}
	err = write(f, arg);
	errno = 0;
	if (fflush(f) && !err)
		err = errno ? -errno : -EIO;
	/* Synced before the rename: a crash then leaves the old file or the whole new one. */
	if (!err && fdatasync(fd))
		err = -errno;
	if (fclose(f) && !err)
		err = errno ? -errno : -EIO;
	if (!err && rename(tmp, path))
		err = -errno;
out:
	if (err)
		unlink(tmp);
	free(tmp);
	return err;
}
