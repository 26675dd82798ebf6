// SPDX-License-Identifier: GPL-2.0
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "smallfile.h"

int smallfile_read(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t n = 0;
	ssize_t got;

	if (fd < 0)
		return -errno;
	/* Files of /proc may come in more than one read(2) each: read to the end. */
	while (n + 1 < size && (got = read(fd, buf + n, size - 1 - n)) != 0) {
		if (got < 0) {
			int err = -errno;

			close(fd);
			return err;
		}
		n += got;
	}
	close(fd);
	while (n && isspace((unsigned char)buf[n - 1]))
		n--;
	buf[n] = '\0';
	return 0;
}
