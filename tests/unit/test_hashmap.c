// SPDX-License-Identifier: GPL-2.0
/*
 * The shared helpers user/hashmap.c and user/strbuf.c. The map: u64 and string keys against
 * a plain array, through growth and removals (checked against a linear search after every
 * step), and allocation failures that must leave it as it was, found by a copy of hashmap.c
 * built here with a malloc that fails on demand. The buffer: appends, printf, cutting back,
 * failure, reading a stream up to a limit.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hashmap.h"
#include "strbuf.h"
#include "test.h"

/* A second copy of the map, its allocations failing when fail_in reaches 0. */
static int fail_in = -1;

static void *failing_malloc(size_t n)
{
	if (fail_in >= 0 && fail_in-- == 0)
		return NULL;
	return malloc(n);
}

static char *failing_strdup(const char *s)
{
	char *d = failing_malloc(strlen(s) + 1);

	return d ? strcpy(d, s) : NULL;
}

#define malloc failing_malloc
#define strdup failing_strdup
#define hashmap_get_u64 fi_hashmap_get_u64
#define hashmap_get_str fi_hashmap_get_str
#define hashmap_put_u64 fi_hashmap_put_u64
#define hashmap_put_str fi_hashmap_put_str
#define hashmap_del_u64 fi_hashmap_del_u64
#define hashmap_del_str fi_hashmap_del_str
#define hashmap_clear fi_hashmap_clear
int hashmap_get_u64(const struct hashmap *m, uint64_t key);
int hashmap_get_str(const struct hashmap *m, const char *key);
int hashmap_put_u64(struct hashmap *m, uint64_t key, int value);
int hashmap_put_str(struct hashmap *m, const char *key, int value);
bool hashmap_del_u64(struct hashmap *m, uint64_t key);
bool hashmap_del_str(struct hashmap *m, const char *key);
void hashmap_clear(struct hashmap *m);
#include "hashmap.c"
#undef malloc
#undef strdup
#undef hashmap_get_u64
#undef hashmap_get_str
#undef hashmap_put_u64
#undef hashmap_put_str
#undef hashmap_del_u64
#undef hashmap_del_str
#undef hashmap_clear

#define NR_KEYS 3000

static uint64_t u64_key(int i)
{
	/* Keys alike in their low bits, as cgroup ids are. */
	return (uint64_t)i << 32 | 0x1000;
}

static void str_key(int i, char *buf, size_t len)
{
	snprintf(buf, len, "/kubepods/pod%d/c", i);
}

/* Every key i < n is present with value i unless gone[i]; no other is. */
static void check_all(const struct hashmap *m, const bool *gone, int n, bool str)
{
	int bad = 0, present = 0;
	char key[64];

	for (int i = 0; i < n + 10; i++) {
		int want = i < n && !gone[i] ? i : -1, got;

		str_key(i, key, sizeof(key));
		got = str ? hashmap_get_str(m, key) : hashmap_get_u64(m, u64_key(i));
		bad += got != want;
		present += want >= 0;
	}
	CHECK(bad == 0, "%d keys wrong of %d", bad, n);
	CHECK_INT(m->nr, present);
	CHECK(m->nr_slots >= 2 * m->nr, "%zu keys in %zu slots", m->nr, m->nr_slots);
}

static void test_map(bool str)
{
	struct hashmap m = HASHMAP_INIT;
	static bool gone[NR_KEYS];
	char key[64];

	memset(gone, 0, sizeof(gone));
	CHECK_INT(str ? hashmap_get_str(&m, "/x") : hashmap_get_u64(&m, 0), -1);
	CHECK(!(str ? hashmap_del_str(&m, "/x") : hashmap_del_u64(&m, 0)), "removed from nothing");
	for (int i = 0; i < NR_KEYS; i++) {
		str_key(i, key, sizeof(key));
		CHECK_INT(str ? hashmap_put_str(&m, key, i) :
				hashmap_put_u64(&m, u64_key(i), i), 0);
		if (i % 97 == 0)
			check_all(&m, gone, i + 1, str);
	}
	check_all(&m, gone, NR_KEYS, str);
	/* Removing every third key, then every fifth: the rest stay found. */
	for (int step = 3; step <= 5; step += 2) {
		for (int i = 0; i < NR_KEYS; i += step) {
			str_key(i, key, sizeof(key));
			CHECK(gone[i] == !(str ? hashmap_del_str(&m, key) :
					   hashmap_del_u64(&m, u64_key(i))), "del %d", i);
			gone[i] = true;
		}
		check_all(&m, gone, NR_KEYS, str);
	}
	/* Back again, and a value replaced. */
	for (int i = 0; i < NR_KEYS; i += 3) {
		str_key(i, key, sizeof(key));
		CHECK_INT(str ? hashmap_put_str(&m, key, i) :
				hashmap_put_u64(&m, u64_key(i), i), 0);
		gone[i] = false;
	}
	check_all(&m, gone, NR_KEYS, str);
	str_key(1, key, sizeof(key));
	CHECK_INT(str ? hashmap_put_str(&m, key, 7) : hashmap_put_u64(&m, u64_key(1), 7), 0);
	CHECK_INT(str ? hashmap_get_str(&m, key) : hashmap_get_u64(&m, u64_key(1)), 7);
	CHECK_INT(str ? hashmap_put_str(&m, key, -1) : hashmap_put_u64(&m, u64_key(1), -1),
		  -EINVAL);
	hashmap_clear(&m);
	CHECK(m.nr == 0 && m.nr_slots == 0 && !m.slots, "cleared");
	CHECK_INT(str ? hashmap_get_str(&m, key) : hashmap_get_u64(&m, u64_key(1)), -1);
}

/* Failed allocations: the insertion fails, every key before it is still there. */
static void test_map_no_memory(void)
{
	struct hashmap m = HASHMAP_INIT, s = HASHMAP_INIT;
	size_t slots;
	int n = 0, failures = 0;
	char key[64];

	/* u64: a failure can only be the growth. */
	for (; n < 200; n++) {
		fail_in = 0;
		if (fi_hashmap_put_u64(&m, u64_key(n), n)) {
			failures++;
			CHECK_INT(m.nr, n);
			for (int i = 0; i < n; i++)
				CHECK_INT(fi_hashmap_get_u64(&m, u64_key(i)), i);
			CHECK_INT(fi_hashmap_get_u64(&m, u64_key(n)), -1);
			fail_in = -1;
			CHECK_INT(fi_hashmap_put_u64(&m, u64_key(n), n), 0);
		}
	}
	fail_in = -1;
	CHECK(failures >= 4, "only %d growths failed", failures);
	slots = m.nr_slots;
	CHECK(slots >= 2 * m.nr, "%zu keys in %zu slots", m.nr, slots);
	fi_hashmap_clear(&m);

	/* Strings: the copy of the key, then the growth. */
	failures = 0;
	for (n = 0; n < 200; n++) {
		str_key(n, key, sizeof(key));
		for (int k = 0; k < 2; k++) {
			fail_in = k;
			if (!fi_hashmap_put_str(&s, key, n))
				break;
			failures++;
			CHECK_INT(s.nr, n);
			CHECK_INT(fi_hashmap_get_str(&s, key), -1);
			for (int i = 0; i < n; i += 7) {
				char other[64];

				str_key(i, other, sizeof(other));
				CHECK_INT(fi_hashmap_get_str(&s, other), i);
			}
		}
		fail_in = -1;
		if (fi_hashmap_get_str(&s, key) < 0)
			CHECK_INT(fi_hashmap_put_str(&s, key, n), 0);
	}
	fail_in = -1;
	CHECK(failures > 200, "only %d insertions failed", failures);
	CHECK_INT(s.nr, 200);
	fi_hashmap_clear(&s);
}

static void test_strbuf(void)
{
	struct strbuf sb = STRBUF_INIT;
	char *text, big[10000];
	size_t len = 1;
	FILE *f;

	text = strbuf_detach(&sb, &len);
	CHECK(text && !*text && len == 0, "an empty buffer gives \"\"");
	free(text);
	CHECK_INT(strbuf_addstr(&sb, "a"), 0);
	CHECK_INT(strbuf_add(&sb, "b\0c", 3), 0);
	CHECK_INT(strbuf_addf(&sb, "%d-%s", 42, "x"), 0);
	CHECK(sb.len == 8 && !memcmp(sb.buf, "ab\0c42-x", 9), "appended: %zu bytes", sb.len);
	strbuf_setlen(&sb, 2);
	CHECK_STR(sb.buf, "ab");
	memset(big, 'y', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	for (int i = 0; i < 100; i++)
		strbuf_addstr(&sb, big);
	CHECK_INT(sb.len, 2 + 100 * (sizeof(big) - 1));
	CHECK(sb.alloc > sb.len && sb.buf[sb.len] == '\0', "NUL-terminated");

	/* A failure sticks until cut back. */
	CHECK_INT(strbuf_grow(&sb, SIZE_MAX - 1), -ENOMEM);
	CHECK_INT(strbuf_addstr(&sb, "z"), -ENOMEM);
	CHECK_INT(sb.len, 2 + 100 * (sizeof(big) - 1));
	strbuf_setlen(&sb, 1);
	CHECK(!sb.failed && !strcmp(sb.buf, "a"), "cut back: '%s'", sb.buf);
	CHECK_INT(strbuf_grow(&sb, SIZE_MAX), -ENOMEM);
	CHECK(!strbuf_detach(&sb, NULL) && !sb.buf && !sb.len, "a failed buffer gives NULL");

	/* A stream, up to a limit. */
	f = tmpfile();
	if (!f)
		return;
	for (int i = 0; i < 3; i++)
		fputs(big, f);
	rewind(f);
	CHECK_INT(strbuf_fread(&sb, f, 3 * (sizeof(big) - 1)), 0);
	CHECK_INT(sb.len, 3 * (sizeof(big) - 1));
	strbuf_release(&sb);
	rewind(f);
	CHECK_INT(strbuf_fread(&sb, f, 3 * (sizeof(big) - 1) - 1), -EFBIG);
	strbuf_release(&sb);
	fclose(f);
}

int main(void)
{
	test_map(false);
	test_map(true);
	test_map_no_memory();
	test_strbuf();
	return test_done("hashmap");
}
