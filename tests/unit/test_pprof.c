// SPDX-License-Identifier: GPL-2.0
/*
 * user/pprof.c: the gzipped profile.proto of a hand-built profile, decoded back field by
 * field (tests/unit/pb.h): sample types, samples with their stacks, values and labels,
 * mappings with build IDs, locations with lines, functions, times, the string table; and
 * the file written whole, replacing the old one, or not at all.
 */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pb.h"
#include "pprof.h"
#include "profile_fixture.h"
#include "test.h"

#define MAX_STRS 64

struct decoded {
	struct pb top;
	const char *strs[MAX_STRS];
	size_t lens[MAX_STRS];
	int nr_strs;
};

/* String i of the table, NUL-terminated in buf. */
static const char *s_of(const struct decoded *d, uint64_t i, char *buf, size_t len)
{
	if (i >= (uint64_t)d->nr_strs)
		return "(out of the table)";
	snprintf(buf, len, "%.*s", (int)d->lens[i], d->strs[i]);
	return buf;
}

#define STR(d, i) s_of(d, i, (char[128]){ 0 }, 128)

static void decode(struct decoded *d, const unsigned char *buf, size_t len)
{
	struct pb m = { .p = buf, .n = len }, sub;
	uint64_t v;
	int f;

	d->top = m;
	d->nr_strs = 0;
	while (pb_next(&m, &f, &v, &sub))
		if (f == 6 && d->nr_strs < MAX_STRS) {
			d->strs[d->nr_strs] = (const char *)sub.p;
			d->lens[d->nr_strs++] = sub.n;
		}
	CHECK(!m.bad, "the encoding is malformed");
}

/* The label key's value on a sample, or NULL. */
static const char *label(const struct decoded *d, struct pb smp, const char *key, char *buf)
{
	for (int i = 0; i < pb_count(smp, 3); i++) {
		struct pb l = pb_msg(smp, 3, i);

		if (!strcmp(s_of(d, pb_uint(l, 1), buf, 128), key))
			return s_of(d, pb_uint(l, 2), buf, 128);
	}
	return NULL;
}

/* The function name of a location id (1-based), "" when it has no line. */
static const char *loc_func(const struct decoded *d, uint64_t id, char *buf)
{
	struct pb loc = pb_msg(d->top, 4, id - 1), line = pb_msg(loc, 4, 0);
	uint64_t fid = pb_uint(line, 1);

	CHECK_INT(pb_uint(loc, 1), id);
	if (!fid)
		return "";
	CHECK_INT(pb_uint(pb_msg(d->top, 5, fid - 1), 1), fid);
	return s_of(d, pb_uint(pb_msg(d->top, 5, fid - 1), 2), buf, 128);
}

static void check_fixture(void)
{
	struct profile p;
	struct fixture_ids id;
	struct decoded d;
	char *buf = NULL, s[128];
	size_t len = 0, plen = 0;
	unsigned char *pbuf;
	uint64_t ids[8], vals[4];
	FILE *f;
	struct pb smp, map, loc;

	CHECK_INT(profile_fixture(&p, &id), 0);
	f = open_memstream(&buf, &len);
	CHECK_INT(pprof_write(&p, f), 0);
	fclose(f);
	CHECK(len > 2 && (unsigned char)buf[0] == 0x1f && (unsigned char)buf[1] == 0x8b,
	      "not gzip");
	pbuf = gunzip(buf, len, &plen);
	CHECK(pbuf != NULL, "gunzip");
	if (!pbuf)
		goto out;
	decode(&d, pbuf, plen);

	/* The string table: "" first, each string once. */
	CHECK(d.nr_strs > 10 && d.lens[0] == 0, "string table");
	for (int i = 1; i < d.nr_strs; i++)
		for (int j = 1; j < i; j++)
			CHECK(d.lens[i] != d.lens[j] || memcmp(d.strs[i], d.strs[j], d.lens[i]),
			      "string %d twice", i);

	/* Sample types, the default one, the times. */
	CHECK_INT(pb_count(d.top, 1), 2);
	CHECK_STR(STR(&d, pb_uint(pb_msg(d.top, 1, 0), 1)), "cpu-clock");
	CHECK_STR(STR(&d, pb_uint(pb_msg(d.top, 1, 0), 2)), "count");
	CHECK_STR(STR(&d, pb_uint(pb_msg(d.top, 1, 1), 1)), "cycles");
	CHECK_STR(STR(&d, pb_uint(d.top, 14)), "cpu-clock");
	CHECK_INT(pb_uint(d.top, 9), FIX_START_NS);
	CHECK_INT(pb_uint(d.top, 10), FIX_DURATION_NS);
	CHECK_INT(pb_count(d.top, 11), 0);	/* cpu-clock is sampled by frequency */

	/* Samples: stacks leaf first, one value per type, labels. */
	CHECK_INT(pb_count(d.top, 2), 4);
	smp = pb_msg(d.top, 2, 0);
	CHECK_INT(pb_packed(smp, 1, ids, 8), 2);
	CHECK_STR(loc_func(&d, ids[0], s), "spin_web");
	CHECK_STR(loc_func(&d, ids[1], s), "main");
	CHECK_INT(pb_packed(smp, 2, vals, 4), 2);
	CHECK_INT(vals[0], 7);
	CHECK_INT(vals[1], 3);
	CHECK_STR(label(&d, smp, "cgroup", s), "/web");
	CHECK_STR(label(&d, smp, "container", s), "web");
	CHECK_STR(label(&d, smp, "pod", s), "shop/web-0");
	smp = pb_msg(d.top, 2, 1);
	CHECK_INT(pb_packed(smp, 1, ids, 8), 3);
	CHECK_STR(loc_func(&d, ids[0], s), "asm_sysvec");
	smp = pb_msg(d.top, 2, 3);
	CHECK_INT(pb_packed(smp, 1, ids, 8), 2);
	CHECK_STR(loc_func(&d, ids[0], s), "");	/* unresolved: an address, no line */
	CHECK_INT(pb_packed(smp, 2, vals, 4), 2);
	CHECK_INT(vals[0], 1);
	CHECK_INT(vals[1], 0);
	CHECK_STR(label(&d, smp, "cgroup", s), "/db");
	CHECK(label(&d, smp, "container", s) == NULL, "/db is no container");
	CHECK(label(&d, smp, "pod", s) == NULL, "/db is in no pod");

	/* Mappings: the binary's frames are not all resolved, the kernel's are. */
	CHECK_INT(pb_count(d.top, 3), 2);
	map = pb_msg(d.top, 3, id.bin);
	CHECK_INT(pb_uint(map, 1), id.bin + 1);
	CHECK_INT(pb_uint(map, 2), 0x400000);
	CHECK_INT(pb_uint(map, 3), 0x402000);
	CHECK_INT(pb_uint(map, 4), 0x1000);
	CHECK_STR(STR(&d, pb_uint(map, 5)), "/usr/bin/spin");
	CHECK_STR(STR(&d, pb_uint(map, 6)), "ab12cd34");
	CHECK_INT(pb_uint(map, 7), 0);
	map = pb_msg(d.top, 3, id.kernel);
	CHECK_STR(STR(&d, pb_uint(map, 5)), "[kernel.kallsyms]");
	CHECK_INT(pb_uint(map, 6), 0);
	CHECK_INT(pb_uint(map, 7), 1);

	/* Locations: address, mapping, line; functions once per name and file. */
	CHECK_INT(pb_count(d.top, 4), 5);
	loc = pb_msg(d.top, 4, id.spin_db);
	CHECK_INT(pb_uint(loc, 2), id.bin + 1);
	CHECK_INT(pb_uint(loc, 3), 0x400200);
	CHECK_INT(pb_uint(pb_msg(loc, 4, 0), 2), 20);
	CHECK_STR(STR(&d, pb_uint(pb_msg(d.top, 5, pb_uint(pb_msg(loc, 4, 0), 1) - 1), 4)),
		  "spin.c");
	CHECK_INT(pb_count(pb_msg(d.top, 4, id.raw), 4), 0);
	CHECK_INT(pb_count(d.top, 5), 4);
	free(pbuf);
out:
	free(buf);
	profile_release(&p);
}

/* Two types of one event, sampled at two periods: told apart by the period. */
static void check_same_event(void)
{
	struct profile p = PROFILE_INIT;
	struct strbuf b = STRBUF_INIT;
	struct decoded d;
	int sc, loc;

	profile_type(&p, "cycles", 1000);
	profile_type(&p, "cycles", 0);
	sc = profile_scope(&p, "/a", "/a", NULL, NULL);
	loc = profile_location(&p, &(struct profile_location){ .addr = 1, .mapping = -1 });
	CHECK_INT(profile_add(&p, sc, &loc, 1, 0, 5), 0);
	CHECK_INT(pprof_encode(&p, &b), 0);
	decode(&d, (unsigned char *)b.buf, b.len);
	CHECK_STR(STR(&d, pb_uint(pb_msg(d.top, 1, 0), 1)), "cycles/period=1000/");
	CHECK_STR(STR(&d, pb_uint(pb_msg(d.top, 1, 1), 1)), "cycles/period=0/");
	/* The period of the first type. */
	CHECK_STR(STR(&d, pb_uint(pb_msg(d.top, 11, 0), 1)), "cycles/period=1000/");
	CHECK_INT(pb_uint(d.top, 12), 1000);
	/* A location with no mapping: mapping_id 0. */
	CHECK_INT(pb_uint(pb_msg(d.top, 4, 0), 2), 0);
	strbuf_release(&b);
	profile_release(&p);
}

/* The file: written whole, replacing what was there; a path that cannot be written leaves
 * nothing behind. */
static void check_file(void)
{
	char dir[] = "/tmp/cgtma-test-pprof.XXXXXX", path[128], bad[160], link[128];
	struct stat st;
	struct profile p;
	struct fixture_ids id;
	struct dirent *e;
	DIR *d;
	FILE *f;
	int n = 0;

	CHECK(mkdtemp(dir) != NULL, "mkdtemp");
	snprintf(path, sizeof(path), "%s/out.pb.gz", dir);
	f = fopen(path, "w");
	fputs("old", f);
	fclose(f);
	CHECK_INT(profile_fixture(&p, &id), 0);
	CHECK_INT(pprof_write_file(&p, path), 0);
	f = fopen(path, "r");
	CHECK(f && getc(f) == 0x1f && getc(f) == 0x8b, "the file is not the new gzip");
	if (f)
		fclose(f);
	snprintf(bad, sizeof(bad), "%s/no/such/dir/out.pb.gz", dir);
	CHECK_INT(pprof_write_file(&p, bad), -ENOENT);
	CHECK_INT(pprof_write_file(&p, dir), -EISDIR);
	/* No regular file: written in place, never replaced. */
	CHECK_INT(pprof_write_file(&p, "/dev/null"), 0);
	CHECK(stat("/dev/null", &st) == 0 && S_ISCHR(st.st_mode), "/dev/null was replaced");
	/* Through a link: the file it names is replaced, the link stays. */
	snprintf(link, sizeof(link), "%s/link", dir);
	CHECK_INT(symlink("out.pb.gz", link), 0);
	CHECK_INT(pprof_write_file(&p, link), 0);
	CHECK(lstat(link, &st) == 0 && S_ISLNK(st.st_mode), "the link was replaced");
	unlink(link);
	/* Nothing but the file in the directory: no temporary left. */
	d = opendir(dir);
	while (d && (e = readdir(d)))
		n += e->d_name[0] != '.';
	if (d)
		closedir(d);
	CHECK_INT(n, 1);
	unlink(path);
	rmdir(dir);
	profile_release(&p);
}

int main(void)
{
	check_fixture();
	check_same_event();
	check_file();
	return test_done("pprof");
}
