/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Capturing what code under test prints: capture_begin(fd) sends fd (1 or 2) to a temporary
 * file, capture_end() restores it and returns what was written (NUL-terminated, the
 * caller frees it). One capture at a time per fd.
 */
#ifndef CGTMA_TEST_CAPTURE_H
#define CGTMA_TEST_CAPTURE_H

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

struct capture {
	int fd;
	int saved;
	FILE *tmp;
};

static inline int capture_begin(struct capture *c, int fd)
{
	fflush(fd == 1 ? stdout : stderr);
	c->fd = fd;
	c->saved = -1;
	c->tmp = tmpfile();
	if (!c->tmp)
		return -1;
	c->saved = dup(fd);
	if (c->saved < 0 || dup2(fileno(c->tmp), fd) < 0) {
		if (c->saved >= 0)
			close(c->saved);
		c->saved = -1;
		fclose(c->tmp);
		c->tmp = NULL;
		return -1;
	}
	return 0;
}

static inline char *capture_end(struct capture *c)
{
	int tfd;
	off_t len;
	char *buf;

	if (!c->tmp)
		return calloc(1, 1);
	fflush(c->fd == 1 ? stdout : stderr);
	dup2(c->saved, c->fd);
	close(c->saved);
	/* What was written went through the descriptor, not the FILE: read it that way. */
	tfd = fileno(c->tmp);
	len = lseek(tfd, 0, SEEK_END);
	buf = malloc(len > 0 ? len + 1 : 1);
	if (buf) {
		ssize_t n = len > 0 ? pread(tfd, buf, len, 0) : 0;

		buf[n > 0 ? n : 0] = 0;
	}
	fclose(c->tmp);
	return buf;
}

#endif
