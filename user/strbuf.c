// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "strbuf.h"

int strbuf_grow(struct strbuf *sb, size_t extra)
{
	size_t want, alloc;
	char *nb;

	if (sb->failed)
		return -ENOMEM;
	if (extra > SIZE_MAX - sb->len - 1)
		goto fail;
	want = sb->len + extra + 1;
	if (want <= sb->alloc)
		return 0;
	alloc = sb->alloc ? sb->alloc : 64;
	while (alloc < want)
		alloc = alloc <= SIZE_MAX / 2 ? 2 * alloc : want;
	nb = realloc(sb->buf, alloc);
	if (!nb)
		goto fail;
	sb->buf = nb;
	sb->alloc = alloc;
	return 0;
fail:
	sb->failed = true;
	return -ENOMEM;
}

int strbuf_add(struct strbuf *sb, const void *data, size_t len)
{
	int err = strbuf_grow(sb, len);

	if (err)
		return err;
	memcpy(sb->buf + sb->len, data, len);
	sb->len += len;
	sb->buf[sb->len] = '\0';
	return 0;
}

int strbuf_addstr(struct strbuf *sb, const char *s)
{
	return strbuf_add(sb, s, strlen(s));
}

int strbuf_addf(struct strbuf *sb, const char *fmt, ...)
{
	va_list ap;
	int n, err;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0) {
		/* Only a format the C library cannot print: the text would be wrong. */
		sb->failed = true;
		return -ENOMEM;
	}
	err = strbuf_grow(sb, n);
	if (err)
		return err;
	va_start(ap, fmt);
	vsnprintf(sb->buf + sb->len, n + 1, fmt, ap);
	va_end(ap);
	sb->len += n;
	return 0;
}

void strbuf_setlen(struct strbuf *sb, size_t len)
{
	if (len < sb->len) {
		sb->len = len;
		sb->buf[len] = '\0';
	}
	sb->failed = false;
}

int strbuf_fread(struct strbuf *sb, FILE *f, size_t max)
{
	for (;;) {
		size_t chunk = sb->len > 8192 ? sb->len : 8192, room, n;
		int err;

		if (sb->len > max)
			return -EFBIG;
		/* Up to one byte past max: enough to tell a file of max bytes from a longer one. */
		room = max - sb->len < chunk ? max - sb->len + 1 : chunk;
		err = strbuf_grow(sb, room);
		if (err)
			return err;
		errno = 0;
		n = fread(sb->buf + sb->len, 1, room, f);
		sb->len += n;
		sb->buf[sb->len] = '\0';
		if (n < room) {
			if (ferror(f))
				return errno ? -errno : -EIO;
			return sb->len > max ? -EFBIG : 0;
		}
	}
}

char *strbuf_detach(struct strbuf *sb, size_t *len)
{
	char *text;

	if (!sb->failed && !sb->buf)
		strbuf_grow(sb, 0);
	if (sb->failed) {
		strbuf_release(sb);
		return NULL;
	}
	text = sb->buf;
	text[sb->len] = '\0';
	if (len)
		*len = sb->len;
	*sb = (struct strbuf)STRBUF_INIT;
	return text;
}

void strbuf_release(struct strbuf *sb)
{
	free(sb->buf);
	*sb = (struct strbuf)STRBUF_INIT;
}
