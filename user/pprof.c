// SPDX-License-Identifier: GPL-2.0
/*
 * The pprof writer (pprof.h): the protocol buffer encoding of profile.proto written here, by
 * hand (varints and length-delimited messages are all it needs), gzipped with zlib.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "alloc.h"
#include "atomicfile.h"
#include "hashmap.h"
#include "pprof.h"

/* profile.proto's field numbers. */
enum {
	PROFILE_SAMPLE_TYPE = 1, PROFILE_SAMPLE, PROFILE_MAPPING, PROFILE_LOCATION,
	PROFILE_FUNCTION, PROFILE_STRING_TABLE, PROFILE_TIME_NANOS = 9, PROFILE_DURATION_NANOS,
	PROFILE_PERIOD_TYPE, PROFILE_PERIOD, PROFILE_DEFAULT_SAMPLE_TYPE = 14,
	VALUE_TYPE_TYPE = 1, VALUE_TYPE_UNIT,
	SAMPLE_LOCATION_ID = 1, SAMPLE_VALUE, SAMPLE_LABEL,
	LABEL_KEY = 1, LABEL_STR, LABEL_NUM,
	MAPPING_ID = 1, MAPPING_MEMORY_START, MAPPING_MEMORY_LIMIT, MAPPING_FILE_OFFSET,
	MAPPING_FILENAME, MAPPING_BUILD_ID, MAPPING_HAS_FUNCTIONS, MAPPING_HAS_FILENAMES,
	MAPPING_HAS_LINE_NUMBERS,
	LOCATION_ID = 1, LOCATION_MAPPING_ID, LOCATION_ADDRESS, LOCATION_LINE,
	LINE_FUNCTION_ID = 1, LINE_LINE,
	FUNCTION_ID = 1, FUNCTION_NAME, FUNCTION_SYSTEM_NAME, FUNCTION_FILENAME,
};

enum { WIRE_VARINT = 0, WIRE_LEN = 2 };

/* The appends are not checked one by one: the caller checks the buffer's failure once. */
static void put_varint(struct strbuf *b, uint64_t v)
{
	unsigned char c[10];
	int n = 0;

	do {
		c[n] = v & 0x7f;
		v >>= 7;
		if (v)
			c[n] |= 0x80;
		n++;
	} while (v);
	strbuf_add(b, c, n);
}

/* A varint field; 0 is proto3's default, left out. */
static void put_uint(struct strbuf *b, int field, uint64_t v)
{
	if (!v)
		return;
	put_varint(b, (uint64_t)field << 3 | WIRE_VARINT);
	put_varint(b, v);
}

static void put_bytes(struct strbuf *b, int field, const void *data, size_t len)
{
	put_varint(b, (uint64_t)field << 3 | WIRE_LEN);
	put_varint(b, len);
	strbuf_add(b, data, len);
}

/* A message field from m, which is emptied for the next one. */
static void put_msg(struct strbuf *b, int field, struct strbuf *m)
{
	put_bytes(b, field, m->buf ? m->buf : "", m->len);
	if (m->failed)
		b->failed = true;
	strbuf_setlen(m, 0);
}

struct encoder {
	const struct profile *p;
	struct hashmap str_index;	/* string -> its index in the table */
	const char **strs;
	int nr_strs, cap_strs;
	char **owned;			/* the strings made here ("EVENT/period=N/") */
	int nr_owned, cap_owned;
	struct hashmap func_index;	/* "name\x1ffile" -> function id - 1 */
	int *loc_func;			/* per location: its function's id, 0 when none */
	int nr_funcs;
	struct strbuf funcs;		/* the Function messages, as they are found */
	bool failed;
};

/* s's index in the string table (0, "", for NULL). */
static int64_t str(struct encoder *e, const char *s)
{
	int i;

	if (!s || !*s)
		return 0;
	i = hashmap_get_str(&e->str_index, s);
	if (i >= 0)
		return i;
	if (ALLOC_GROW(e->strs, e->nr_strs + 1, e->cap_strs) ||
	    hashmap_put_str(&e->str_index, s, e->nr_strs)) {
		e->failed = true;
		return 0;
	}
	e->strs[e->nr_strs] = s;
	return e->nr_strs++;
}

/* The name of a sample type: the event's, with its period where another type shares it. */
static int64_t type_name(struct encoder *e, int t)
{
	const struct profile_type *type = &e->p->types[t];
	char *s;

	for (int u = 0; u < e->p->nr_types; u++) {
		if (u == t || strcmp(e->p->types[u].event, type->event))
			continue;
		if (ALLOC_GROW(e->owned, e->nr_owned + 1, e->cap_owned) ||
		    asprintf(&s, "%s/period=%" PRIu64 "/", type->event, type->period) < 0) {
			e->failed = true;
			return 0;
		}
		e->owned[e->nr_owned++] = s;
		return str(e, s);
	}
	return str(e, type->event);
}

/* The id of location l's function (made on first sight), 0 when it was not resolved. */
static int function_id(struct encoder *e, int l)
{
	const struct profile_location *loc = &e->p->locs[l];
	struct strbuf key = STRBUF_INIT, m = STRBUF_INIT;
	int id;

	if (!loc->func)
		return 0;
	strbuf_addf(&key, "%s\x1f%s", loc->func, loc->file ? loc->file : "");
	id = key.failed ? -1 : hashmap_get_str(&e->func_index, key.buf);
	if (id < 0 && (key.failed || hashmap_put_str(&e->func_index, key.buf, e->nr_funcs))) {
		e->failed = true;
		id = -1;
	} else if (id < 0) {
		id = e->nr_funcs++;
		put_uint(&m, FUNCTION_ID, id + 1);
		put_uint(&m, FUNCTION_NAME, str(e, loc->func));
		put_uint(&m, FUNCTION_SYSTEM_NAME, str(e, loc->func));
		put_uint(&m, FUNCTION_FILENAME, str(e, loc->file));
		put_msg(&e->funcs, PROFILE_FUNCTION, &m);
	}
	strbuf_release(&key);
	strbuf_release(&m);
	return id + 1;
}

static void value_type(struct encoder *e, struct strbuf *b, int field, int t)
{
	struct strbuf m = STRBUF_INIT;

	put_uint(&m, VALUE_TYPE_TYPE, type_name(e, t));
	put_uint(&m, VALUE_TYPE_UNIT, str(e, "count"));
	put_msg(b, field, &m);
	strbuf_release(&m);
}

static void label(struct encoder *e, struct strbuf *b, const char *key, const char *value)
{
	struct strbuf m = STRBUF_INIT;

	if (!value)
		return;
	put_uint(&m, LABEL_KEY, str(e, key));
	put_uint(&m, LABEL_STR, str(e, value));
	put_msg(b, SAMPLE_LABEL, &m);
	strbuf_release(&m);
}

/* A numeric label (pprof's num): -tagfocus=pid=1234 and -tags read it as a number. */
static void label_num(struct encoder *e, struct strbuf *b, const char *key, uint64_t value)
{
	struct strbuf m = STRBUF_INIT;

	put_uint(&m, LABEL_KEY, str(e, key));
	put_uint(&m, LABEL_NUM, value);
	put_msg(b, SAMPLE_LABEL, &m);
	strbuf_release(&m);
}

static void samples(struct encoder *e, struct strbuf *b)
{
	const struct profile *p = e->p;
	struct strbuf m = STRBUF_INIT, packed = STRBUF_INIT;

	for (int s = 0; s < p->nr_samples; s++) {
		const struct profile_sample *smp = &p->samples[s];
		const struct profile_scope *sc = &p->scopes[smp->scope];
		bool any = false;

		for (int t = 0; t < p->nr_types; t++)
			any |= smp->values[t] != 0;
		if (!any)
			continue;
		for (int k = 0; k < smp->nr_locs; k++)
			put_varint(&packed, smp->locs[k] + 1);
		put_bytes(&m, SAMPLE_LOCATION_ID, packed.buf ? packed.buf : "", packed.len);
		strbuf_setlen(&packed, 0);
		for (int t = 0; t < p->nr_types; t++)
			put_varint(&packed, smp->values[t]);
		put_bytes(&m, SAMPLE_VALUE, packed.buf ? packed.buf : "", packed.len);
		strbuf_setlen(&packed, 0);
		label(e, &m, "cgroup", sc->cgroup);
		label(e, &m, "container", sc->container);
		label(e, &m, "pod", sc->pod);
		if (smp->pid)
			label_num(e, &m, "pid", smp->pid);
		label(e, &m, "comm", smp->comm);
		put_msg(b, PROFILE_SAMPLE, &m);
	}
	if (packed.failed)
		b->failed = true;
	strbuf_release(&m);
	strbuf_release(&packed);
}

/* What a mapping's frames were resolved to, for its has_* fields. */
struct resolved {
	int frames, funcs, files, lines;
};

static void mappings(struct encoder *e, struct strbuf *b)
{
	const struct profile *p = e->p;
	struct resolved *r = calloc(p->nr_maps ? p->nr_maps : 1, sizeof(*r));
	struct strbuf m = STRBUF_INIT;

	if (!r) {
		e->failed = true;
		return;
	}
	for (int l = 0; l < p->nr_locs; l++) {
		const struct profile_location *loc = &p->locs[l];

		if (loc->mapping < 0)
			continue;
		r[loc->mapping].frames++;
		r[loc->mapping].funcs += loc->func != NULL;
		r[loc->mapping].files += loc->file != NULL;
		r[loc->mapping].lines += loc->line > 0;
	}
	for (int i = 0; i < p->nr_maps; i++) {
		const struct profile_mapping *map = &p->maps[i];

		put_uint(&m, MAPPING_ID, i + 1);
		put_uint(&m, MAPPING_MEMORY_START, map->start);
		put_uint(&m, MAPPING_MEMORY_LIMIT, map->limit);
		put_uint(&m, MAPPING_FILE_OFFSET, map->file_offset);
		put_uint(&m, MAPPING_FILENAME, str(e, map->file));
		put_uint(&m, MAPPING_BUILD_ID, str(e, map->build_id));
		put_uint(&m, MAPPING_HAS_FUNCTIONS, r[i].frames && r[i].funcs == r[i].frames);
		put_uint(&m, MAPPING_HAS_FILENAMES, r[i].frames && r[i].files == r[i].frames);
		put_uint(&m, MAPPING_HAS_LINE_NUMBERS, r[i].frames && r[i].lines == r[i].frames);
		put_msg(b, PROFILE_MAPPING, &m);
	}
	strbuf_release(&m);
	free(r);
}

static void locations(struct encoder *e, struct strbuf *b)
{
	const struct profile *p = e->p;
	struct strbuf m = STRBUF_INIT, line = STRBUF_INIT;

	for (int l = 0; l < p->nr_locs; l++) {
		const struct profile_location *loc = &p->locs[l];
		int func = function_id(e, l);

		put_uint(&m, LOCATION_ID, l + 1);
		put_uint(&m, LOCATION_MAPPING_ID, loc->mapping + 1);
		put_uint(&m, LOCATION_ADDRESS, loc->addr);
		if (func) {
			put_uint(&line, LINE_FUNCTION_ID, func);
			put_uint(&line, LINE_LINE, loc->line > 0 ? loc->line : 0);
			put_msg(&m, LOCATION_LINE, &line);
		}
		put_msg(b, PROFILE_LOCATION, &m);
	}
	strbuf_release(&m);
	strbuf_release(&line);
}

int pprof_encode(const struct profile *p, struct strbuf *b)
{
	struct encoder e = { .p = p };
	size_t start = b->len;

	/* The table's first string is "", index 0 (str() gives it for NULL and ""). */
	if (ALLOC_GROW(e.strs, 1, e.cap_strs))
		return -ENOMEM;
	e.strs[e.nr_strs++] = "";
	for (int t = 0; t < p->nr_types; t++)
		value_type(&e, b, PROFILE_SAMPLE_TYPE, t);
	samples(&e, b);
	mappings(&e, b);
	locations(&e, b);
	if (e.funcs.len || e.funcs.failed)
		strbuf_add(b, e.funcs.buf, e.funcs.len);
	if (e.funcs.failed)
		b->failed = true;
	put_uint(b, PROFILE_TIME_NANOS, p->start_ns);
	put_uint(b, PROFILE_DURATION_NANOS, p->duration_ns);
	if (p->nr_types) {
		/* Else pprof shows the last type first; the sampler puts cycles first. */
		put_uint(b, PROFILE_DEFAULT_SAMPLE_TYPE, type_name(&e, 0));
		if (p->types[0].period) {
			value_type(&e, b, PROFILE_PERIOD_TYPE, 0);
			put_uint(b, PROFILE_PERIOD, p->types[0].period);
		}
	}
	/* Last: every string above is in the table by now. */
	for (int i = 0; i < e.nr_strs; i++)
		put_bytes(b, PROFILE_STRING_TABLE, e.strs[i], strlen(e.strs[i]));

	for (int i = 0; i < e.nr_owned; i++)
		free(e.owned[i]);
	free(e.owned);
	free(e.strs);
	hashmap_clear(&e.str_index);
	hashmap_clear(&e.func_index);
	strbuf_release(&e.funcs);
	if (e.failed || b->failed) {
		strbuf_setlen(b, start);
		return -ENOMEM;
	}
	return 0;
}

/* gzip (RFC 1952) of buf into f, as pprof files are. */
static int gzip_to(const void *buf, size_t len, FILE *f)
{
	unsigned char out[65536];
	z_stream z = { .next_in = (Bytef *)buf, .avail_in = len };
	int zerr, err = 0;

	/* windowBits 15 + 16: a gzip header and trailer around the deflate stream. */
	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY))
		return -ENOMEM;
	do {
		z.next_out = out;
		z.avail_out = sizeof(out);
		zerr = deflate(&z, Z_FINISH);
		if (zerr == Z_STREAM_ERROR) {
			err = -EINVAL;
			break;
		}
		errno = 0;
		if (fwrite(out, 1, sizeof(out) - z.avail_out, f) != sizeof(out) - z.avail_out) {
			err = errno ? -errno : -EIO;
			break;
		}
	} while (zerr != Z_STREAM_END);
	deflateEnd(&z);
	errno = 0;
	if (!err && (fflush(f) || ferror(f)))
		err = errno ? -errno : -EIO;
	return err;
}

int pprof_write(const struct profile *p, FILE *f)
{
	struct strbuf b = STRBUF_INIT;
	int err = pprof_encode(p, &b);

	if (!err)
		err = gzip_to(b.buf ? b.buf : "", b.len, f);
	strbuf_release(&b);
	return err;
}

static int write_cb(FILE *f, void *arg)
{
	return pprof_write(arg, f);
}

int pprof_write_file(const struct profile *p, const char *path)
{
	return atomic_write_file(path, write_cb, (void *)p);
}
