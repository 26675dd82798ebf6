/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A growable byte buffer (after git's strbuf): text or binary, always followed by a NUL that
 * is not part of it. A zeroed struct strbuf (STRBUF_INIT) is empty and owns nothing.
 *
 * An append adds all of its bytes or none. The first one that cannot get memory marks the
 * buffer failed, and every later append is refused too: the text is then whole up to where
 * it failed, and a caller may append many pieces and check once, at the end (sb->failed, or
 * strbuf_detach()).
 */
#ifndef CGTMA_STRBUF_H
#define CGTMA_STRBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct strbuf {
	char *buf;		/* NULL until something is added */
	size_t len;
	size_t alloc;
	bool failed;		/* an append found no memory: the text is incomplete */
};

#define STRBUF_INIT { 0 }

/* Room for extra more bytes: 0, or -ENOMEM (and the buffer failed). */
int strbuf_grow(struct strbuf *sb, size_t extra);
/* Appends len bytes, a string, or printf's output: 0, or -ENOMEM once the buffer failed. */
int strbuf_add(struct strbuf *sb, const void *data, size_t len);
int strbuf_addstr(struct strbuf *sb, const char *s);
int strbuf_addf(struct strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * Cuts the buffer back to len bytes (at most its length) and clears a failure: for a caller
 * that drops everything it added since len, whether it all went in or not.
 */
void strbuf_setlen(struct strbuf *sb, size_t len);

/*
 * Appends what is left of f until its end. -EFBIG when the buffer would hold more than max
 * bytes; -errno (-EIO when errno does not say) when reading fails; -ENOMEM. On an error the
 * buffer holds what was read so far.
 */
int strbuf_fread(struct strbuf *sb, FILE *f, size_t max);

/*
 * Hands the text over (the caller frees it; never NULL for an empty buffer), its length in
 * *len when len is not NULL, and leaves sb empty. NULL when the buffer failed: its memory is
 * released then.
 */
char *strbuf_detach(struct strbuf *sb, size_t *len);
/* Frees the memory and leaves sb empty, its failure forgotten. */
void strbuf_release(struct strbuf *sb);

#endif
