// SPDX-License-Identifier: GPL-2.0
/*
 * Scans of /proc/kallsyms and the kernel's raw BTF through one 64 KiB buffer (kernscan.h).
 * Both files are generated or copied by the kernel as they are read, so the cost left is the
 * kernel's; nothing is kept, and nothing as large as the file is allocated (first touches of
 * fresh pages are dear in a VM).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/btf.h>

#include "kernscan.h"

#define SCAN_BUF (64 * 1024)

/*
 * A range [pos, end) of a file read through buf: the unread part of what was read is
 * buf[start, start + len).
 */
struct stream {
	int fd;
	long long pos, end;
	char *buf;
	size_t start, len;
	int err;
};

/* Makes n bytes readable at buf + start; false at the range's end (or on an error). */
static bool need(struct stream *s, size_t n)
{
	if (s->len >= n)
		return true;
	if (n > SCAN_BUF)
		return false;
	memmove(s->buf, s->buf + s->start, s->len);
	s->start = 0;
	while (s->len < n) {
		long long want = SCAN_BUF - s->len;
		ssize_t r;

		if (want > s->end - s->pos)
			want = s->end - s->pos;
		if (want <= 0)
			return false;
		r = pread(s->fd, s->buf + s->len, want, s->pos);
		if (r <= 0) {
			s->err = r < 0 ? -errno : -EINVAL;
			return false;
		}
		s->pos += r;
		s->len += r;
	}
	return true;
}

static void consume(struct stream *s, size_t n)
{
	s->start += n;
	s->len -= n;
}

static bool skip(struct stream *s, size_t n)
{
	while (n) {
		size_t k;

		if (!s->len && !need(s, 1))
			return false;
		k = n < s->len ? n : s->len;
		consume(s, k);
		n -= k;
	}
	return true;
}

static __u32 get_u32(const struct stream *s, size_t at)
{
	__u32 v;

	memcpy(&v, s->buf + s->start + at, sizeof(v));
	return v;
}

/*
 * The address on the line of lines[0, len) where name stands as a whole symbol name
 * ("ADDR T name" then a newline, or a tab before a module's name), 0 where none does.
 */
static unsigned long long find_symbol(const char *lines, size_t len, const char *name,
				      size_t nlen)
{
	const char *p = lines, *end = lines + len;

	while ((p = memmem(p, end - p, name, nlen))) {
		const char *after = p + nlen;

		if (p - lines >= 3 && p[-1] == ' ' && p[-3] == ' ' && after < end &&
		    (*after == '\n' || *after == '\t')) {
			const char *line = memrchr(lines, '\n', p - lines);

			return strtoull(line ? line + 1 : lines, NULL, 16);
		}
		p++;
	}
	return 0;
}

int kallsyms_scan(const char *path, const char *name, unsigned long long *addr)
{
	size_t nlen = strlen(name), len = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC), err = 0;
	char *buf;

	*addr = 0;
	if (fd < 0)
		return -errno;
	buf = malloc(SCAN_BUF);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	/* A seq_file: read on, whole lines at a time; a line's tail waits for the next read. */
	for (;;) {
		ssize_t r = read(fd, buf + len, SCAN_BUF - len);
		const char *last;

		if (r < 0) {
			err = -errno;
			break;
		}
		if (r == 0)
			break;
		len += r;
		last = memrchr(buf, '\n', len);
		if (!last) {
			/* No line fits: not kallsyms. */
			if (len == SCAN_BUF)
				break;
			continue;
		}
		*addr = find_symbol(buf, last + 1 - buf, name, nlen);
		if (*addr)
			break;
		len -= last + 1 - buf;
		memmove(buf, last + 1, len);
	}
	free(buf);
	close(fd);
	return err;
}

/* The string offsets that name each query's strings (a deduplicated table has one each). */
#define MAX_OFFS 4

struct wanted {
	__u32 name[MAX_OFFS], member[MAX_OFFS];
	int nr_name, nr_member;
};

static bool has_off(const __u32 *offs, int n, __u32 off)
{
	for (int i = 0; i < n; i++)
		if (offs[i] == off)
			return true;
	return false;
}

static int add_off(__u32 *offs, int *n, __u32 off)
{
	if (*n == MAX_OFFS)
		return -E2BIG;
	offs[(*n)++] = off;
	return 0;
}

/* Pass one: where each query's strings are in the string section. */
static int find_strings(struct stream *s, struct btf_query *q, struct wanted *w, int n)
{
	bool in_long = false;	/* in the tail of a string longer than the buffer */
	__u32 off = 0;

	while (need(s, 1)) {
		const char *str = s->buf + s->start, *nul = memchr(str, 0, s->len);
		size_t k;
		int err = 0;

		if (!nul) {
			/* It goes on past what was read: read on, or, where it fills the buffer,
			 * pass it by (no name asked for is that long). */
			if (s->len < SCAN_BUF && need(s, s->len + 1))
				continue;
			if (s->err)
				break;
			in_long = true;
			off += s->len;
			consume(s, s->len);
			continue;
		}
		for (int i = 0; i < n && !err && !in_long; i++) {
			if (!strcmp(str, q[i].name))
				err = add_off(w[i].name, &w[i].nr_name, off);
			if (!err && q[i].member && !strcmp(str, q[i].member))
				err = add_off(w[i].member, &w[i].nr_member, off);
		}
		if (err)
			return err;
		in_long = false;
		k = nul - str + 1;
		consume(s, k);
		off += k;
	}
	return s->err;
}

/* The bytes that follow a type's header in the type section, by its kind and vlen. */
static long type_tail(__u32 info)
{
	__u32 vlen = BTF_INFO_VLEN(info);

	switch (BTF_INFO_KIND(info)) {
	case 1: case 14: case 17:		/* int, var, decl tag */
		return 4;
	case 2: case 7: case 8: case 9: case 10: case 11: case 12: case 16: case 18:
		return 0;			/* ptr, fwd, typedef, modifiers, func, float, type tag */
	case 3:					/* array */
		return 12;
	case 4: case 5: case 15: case 19:	/* struct, union, datasec, enum64 */
		return vlen * 12L;
	case 6: case 13:			/* enum, func proto */
		return vlen * 8L;
	default:
		return -1;
	}
}

/* Pass two: the types, each struct and typedef that a query names checked. */
static int check_types(struct stream *s, struct btf_query *q, const struct wanted *w, int n)
{
	while (need(s, 12)) {
		__u32 name = get_u32(s, 0), info = get_u32(s, 4), kind = BTF_INFO_KIND(info);
		long tail = type_tail(info);

		if (tail < 0)
			return -EINVAL;
		consume(s, 12);
		for (int i = 0; i < n; i++) {
			if (q[i].found || !has_off(w[i].name, w[i].nr_name, name))
				continue;
			if (!q[i].member && kind == 8)
				q[i].found = true;
			if (!q[i].member || kind != 4)
				continue;
			for (__u32 m = 0; m < BTF_INFO_VLEN(info) && !q[i].found; m++) {
				if (!need(s, 12 * (m + 1)))
					return s->err ?: -EINVAL;
				q[i].found = has_off(w[i].member, w[i].nr_member, get_u32(s, 12 * m));
			}
		}
		if (!skip(s, tail))
			return s->err ?: -EINVAL;
	}
	return s->err ?: (s->len ? -EINVAL : 0);
}

int btf_scan(const char *path, struct btf_query *q, int n)
{
	struct btf_header h;
	struct stream s = { .fd = open(path, O_RDONLY | O_CLOEXEC) };
	struct wanted *w = calloc(n ?: 1, sizeof(*w));
	int err;

	for (int i = 0; i < n; i++)
		q[i].found = false;
	if (s.fd < 0 || !w) {
		err = s.fd < 0 ? -errno : -ENOMEM;
		goto out;
	}
	if (pread(s.fd, &h, sizeof(h), 0) != sizeof(h) || h.magic != BTF_MAGIC ||
	    h.hdr_len < sizeof(h)) {
		err = -EINVAL;
		goto out;
	}
	s.buf = malloc(SCAN_BUF);
	if (!s.buf) {
		err = -ENOMEM;
		goto out;
	}
	s.pos = (long long)h.hdr_len + h.str_off;
	s.end = s.pos + h.str_len;
	err = find_strings(&s, q, w, n);
	if (err)
		goto out;
	s.pos = (long long)h.hdr_len + h.type_off;
	s.end = s.pos + h.type_len;
	s.start = s.len = 0;
	err = check_types(&s, q, w, n);
out:
	free(s.buf);
	free(w);
	if (s.fd >= 0)
		close(s.fd);
	return err;
}
