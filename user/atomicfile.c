// SPDX-License-Identifier: GPL-2.0
/* Files written whole or not at all (atomicfile.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomicfile.h"

/*
 * Where the file goes: *target, path itself or, through a symbolic link, the file it names
 * (the link stays); *special when that is no regular file (/dev/stdout, a FIFO): written
 * in place, as nothing can be renamed over it. 0 or -errno.
 */
static int resolve(const char *path, char **target, bool *special)
{
	struct stat st;

	*special = false;
	*target = realpath(path, NULL);
	if (!*target) {
		if (errno != ENOENT)
			return -errno;
		*target = strdup(path);		/* a new file */
		return *target ? 0 : -ENOMEM;
	}
	if (stat(*target, &st))
		return -errno;
	if (S_ISDIR(st.st_mode))
		return -EISDIR;
	*special = !S_ISREG(st.st_mode);
	return 0;
}

/* "TARGET.XXXXXX" created (0644, as the other outputs are), its name in *tmp: fd or -errno. */
static int create_temp(const char *target, char **tmp)
{
	int fd, err;

	if (asprintf(tmp, "%s.XXXXXX", target) < 0) {
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
	char *target, *tmp = NULL;
	bool special;
	int fd, err = resolve(path, &target, &special);

	if (!err) {
		fd = special ? open(target, O_WRONLY | O_CLOEXEC | O_NONBLOCK) :
			       create_temp(target, &tmp);
		err = fd < 0 ? (special ? -errno : fd) : 0;
		/* A FIFO with no reader yet is writable all the same. */
		if (special && err == -ENXIO)
			err = 0;
		if (fd >= 0)
			close(fd);
		if (tmp)
			unlink(tmp);
	}
	free(tmp);
	free(target);
	return err;
}

int atomic_write_file(const char *path, int (*write)(FILE *f, void *arg), void *arg)
{
	char *target, *tmp = NULL;
	bool special;
	int fd = -1, err = resolve(path, &target, &special);
	FILE *f;

	if (!err) {
		fd = special ? open(target, O_WRONLY | O_CLOEXEC) : create_temp(target, &tmp);
		err = fd < 0 ? (special ? -errno : fd) : 0;
	}
	if (err)
		goto out;
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
	if (!err && tmp && fdatasync(fd))
		err = -errno;
	if (fclose(f) && !err)
		err = errno ? -errno : -EIO;
	if (!err && tmp && rename(tmp, target))
		err = -errno;
out:
	if (err && tmp)
		unlink(tmp);
	free(tmp);
	free(target);
	return err;
}
