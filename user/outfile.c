// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "outfile.h"

void outfile_init(struct outfile *of, int fd, const char *name, const char *keeps)
{
	struct stat st;
	off_t pos;

	memset(of, 0, sizeof(*of));
	of->fd = fd;
	of->name = name;
	of->keeps = keeps;
	of->regular = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
	/*
	 * Records go after what the file holds: an O_APPEND descriptor (a shell's >>) writes at
	 * the end, whatever its offset says before the first write.
	 */
	if (!of->regular)
		pos = 0;
	else if (fcntl(fd, F_GETFL) & O_APPEND)
		pos = lseek(fd, 0, SEEK_END);
	else
		pos = lseek(fd, 0, SEEK_CUR);
	of->size = pos > 0 ? pos : 0;
}

void outfile_failed(struct outfile *of, const char *name, int err)
{
	of->resumed = 0;
	if (of->failing)
		return;
	of->failing = true;
	if (++of->episodes > OUTFILE_EPISODES_SAID)
		return;
	pr_err("cannot write %s%s: %s; profiling goes on, %s, and the next intervals are tried "
	       "again%s", name, of->episodes > 1 ? " again" : "", strerror(-err), of->keeps,
	       of->episodes == OUTFILE_EPISODES_SAID ? " (its next failures are not said)" : "");
}

void outfile_written(struct outfile *of)
{
	if (!of->failing || ++of->resumed < OUTFILE_RESUMED)
		return;
	of->failing = false;
	if (of->episodes > OUTFILE_EPISODES_SAID)
		return;
	pr_notice("%s is written again (%ld interval(s) could not be)", of->name,
		  of->lost - of->lost_said);
	of->lost_said = of->lost;
}

/* Back to the last whole record, so that the next one starts on a record boundary. */
static void cut_back(struct outfile *of)
{
	if (ftruncate(of->fd, of->size) == 0 && lseek(of->fd, of->size, SEEK_SET) == of->size)
		return;
	pr_err("cannot cut %s back to its last whole record: %s; nothing more is written there",
	       of->name, strerror(errno));
	of->broken = true;
}

int outfile_write_whole(struct outfile *of, const void *buf, size_t len)
{
	const char *p = buf;
	size_t left = len;

	if (of->closed)
		return -EPIPE;
	if (of->broken)
		return -EIO;
	while (left) {
		ssize_t n = write(of->fd, p, left);
		int err;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = -errno;
			if (err == -EPIPE)
				of->closed = true;
			else if (of->regular)
				cut_back(of);
			return err;
		}
		p += n;
		left -= n;
	}
	of->size += len;
	return 0;
}

int outfile_append(struct outfile *of, const void *buf, size_t len)
{
	int err = outfile_write_whole(of, buf, len);

	if (err == -EPIPE)
		return err;
	if (err == -EIO && of->broken) {
		of->lost++;	/* said when it broke */
		return err;
	}
	if (err) {
		of->lost++;
		outfile_failed(of, of->name, err);
		return err;
	}
	outfile_written(of);
	return 0;
}
