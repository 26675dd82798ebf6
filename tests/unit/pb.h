/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A tiny protocol buffer reader for the tests of the pprof writer: the fields of one message
 * (varints and length-delimited ones, as profile.proto uses), and a gzip reader (zlib).
 */
#ifndef CGTMA_TEST_PB_H
#define CGTMA_TEST_PB_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

struct pb {
	const unsigned char *p;
	size_t n;
	bool bad;		/* a field ran past the end, or a wire type not used here */
};

static inline bool pb_varint(struct pb *m, uint64_t *v)
{
	*v = 0;
	for (int shift = 0; shift < 64; shift += 7) {
		if (!m->n) {
			m->bad = true;
			return false;
		}
		m->n--;
		*v |= (uint64_t)(*m->p & 0x7f) << shift;
		if (!(*m->p++ & 0x80))
			return true;
	}
	m->bad = true;
	return false;
}

/* The next field: its number, and its value (a varint) or its bytes (sub). */
static inline bool pb_next(struct pb *m, int *field, uint64_t *v, struct pb *sub)
{
	uint64_t key, len;

	if (!m->n || !pb_varint(m, &key))
		return false;
	*field = key >> 3;
	*v = 0;
	*sub = (struct pb){ 0 };
	if ((key & 7) == 0)
		return pb_varint(m, v);
	if ((key & 7) != 2 || !pb_varint(m, &len) || len > m->n) {
		m->bad = true;
		return false;
	}
	*sub = (struct pb){ .p = m->p, .n = len };
	m->p += len;
	m->n -= len;
	return true;
}

/* How many times field occurs. */
static inline int pb_count(struct pb m, int field)
{
	struct pb sub;
	uint64_t v;
	int f, n = 0;

	while (pb_next(&m, &f, &v, &sub))
		n += f == field;
	return n;
}

/* The k-th occurrence of a message field (an empty message when there is none). */
static inline struct pb pb_msg(struct pb m, int field, int k)
{
	struct pb sub;
	uint64_t v;
	int f;

	while (pb_next(&m, &f, &v, &sub))
		if (f == field && k-- == 0)
			return sub;
	return (struct pb){ 0 };
}

/* A varint field's value (the last occurrence), 0 when absent. */
static inline uint64_t pb_uint(struct pb m, int field)
{
	struct pb sub;
	uint64_t v, got = 0;
	int f;

	while (pb_next(&m, &f, &v, &sub))
		if (f == field)
			got = v;
	return got;
}

/* A packed repeated varint field into out (at most max): how many. */
static inline int pb_packed(struct pb m, int field, uint64_t *out, int max)
{
	struct pb sub = pb_msg(m, field, 0);
	int n = 0;

	while (sub.n && n < max && pb_varint(&sub, &out[n]))
		n++;
	return n;
}

/* gunzip of buf (malloc'd, *out_len bytes), or NULL. */
static inline unsigned char *gunzip(const void *buf, size_t len, size_t *out_len)
{
	z_stream z = { .next_in = (Bytef *)buf, .avail_in = len };
	size_t cap = 1 << 20;
	unsigned char *out = malloc(cap);
	int zerr;

	if (!out || inflateInit2(&z, 15 + 16) != Z_OK) {
		free(out);
		return NULL;
	}
	z.next_out = out;
	z.avail_out = cap;
	zerr = inflate(&z, Z_FINISH);
	*out_len = cap - z.avail_out;
	inflateEnd(&z);
	if (zerr != Z_STREAM_END) {
		free(out);
		return NULL;
	}
	return out;
}

#endif
