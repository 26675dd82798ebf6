// SPDX-License-Identifier: GPL-2.0
/*
 * Linear probing; a removal shifts the entries after it back into place (no tombstones), so
 * a lookup stops at the first free slot however many keys came and went.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hashmap.h"

struct hashmap_entry {
	uint64_t hash;		/* the key itself for a u64 key */
	char *str;		/* a string key's copy; NULL for a u64 key */
	int value;		/* -1: a free slot */
};

#define MIN_SLOTS 16

/* splitmix64's finalizer: every bit of the key moves the low bits the mask keeps. */
static uint64_t mix(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

/* FNV-1a. */
static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

static size_t home(const struct hashmap *m, uint64_t hash)
{
	return mix(hash) & (m->nr_slots - 1);
}

/* The slot holding the key, or -1. */
static long find(const struct hashmap *m, uint64_t hash, const char *str)
{
	if (!m->nr)
		return -1;
	for (size_t i = home(m, hash);; i = (i + 1) & (m->nr_slots - 1)) {
		const struct hashmap_entry *e = &m->slots[i];

		if (e->value < 0)
			return -1;
		if (e->hash == hash && (!str || !strcmp(e->str, str)))
			return (long)i;
	}
}

static void place(struct hashmap *m, const struct hashmap_entry *e)
{
	size_t i = home(m, e->hash);

	while (m->slots[i].value >= 0)
		i = (i + 1) & (m->nr_slots - 1);
	m->slots[i] = *e;
}

/* Room for one more key, at most half full; on failure the old table stays. */
static int reserve(struct hashmap *m)
{
	struct hashmap old = *m;
	size_t n = m->nr_slots ? m->nr_slots : MIN_SLOTS;

	while (2 * (m->nr + 1) > n)
		n *= 2;
	if (n == m->nr_slots)
		return 0;
	m->slots = malloc(n * sizeof(*m->slots));
	if (!m->slots) {
		*m = old;
		return -ENOMEM;
	}
	m->nr_slots = n;
	for (size_t i = 0; i < n; i++)
		m->slots[i].value = -1;
	for (size_t i = 0; i < old.nr_slots; i++)
		if (old.slots[i].value >= 0)
			place(m, &old.slots[i]);
	free(old.slots);
	return 0;
}

static int put(struct hashmap *m, uint64_t hash, const char *str, int value)
{
	struct hashmap_entry e = { .hash = hash, .value = value };
	long i;

	if (value < 0)
		return -EINVAL;
	i = find(m, hash, str);
	if (i >= 0) {
		m->slots[i].value = value;
		return 0;
	}
	if (str) {
		e.str = strdup(str);
		if (!e.str)
			return -ENOMEM;
	}
	if (reserve(m)) {
		free(e.str);
		return -ENOMEM;
	}
	place(m, &e);
	m->nr++;
	return 0;
}

static bool del(struct hashmap *m, uint64_t hash, const char *str)
{
	long found = find(m, hash, str);
	size_t mask = m->nr_slots - 1, hole, i;

	if (found < 0)
		return false;
	hole = (size_t)found;
	free(m->slots[hole].str);
	m->slots[hole].value = -1;
	m->nr--;
	/* Moves back each entry after the hole whose probe passed over the hole. */
	for (i = (hole + 1) & mask; m->slots[i].value >= 0; i = (i + 1) & mask) {
		size_t want = home(m, m->slots[i].hash);

		if (((i - want) & mask) >= ((i - hole) & mask)) {
			m->slots[hole] = m->slots[i];
			m->slots[i].value = -1;
			hole = i;
		}
	}
	return true;
}

int hashmap_get_u64(const struct hashmap *m, uint64_t key)
{
	long i = find(m, key, NULL);

	return i < 0 ? -1 : m->slots[i].value;
}

int hashmap_get_str(const struct hashmap *m, const char *key)
{
	long i = find(m, hash_str(key), key);

	return i < 0 ? -1 : m->slots[i].value;
}

int hashmap_put_u64(struct hashmap *m, uint64_t key, int value)
{
	return put(m, key, NULL, value);
}

int hashmap_put_str(struct hashmap *m, const char *key, int value)
{
	return put(m, hash_str(key), key, value);
}

bool hashmap_del_u64(struct hashmap *m, uint64_t key)
{
	return del(m, key, NULL);
}

bool hashmap_del_str(struct hashmap *m, const char *key)
{
	return del(m, hash_str(key), key);
}

void hashmap_clear(struct hashmap *m)
{
	for (size_t i = 0; i < m->nr_slots; i++)
		if (m->slots[i].value >= 0)
			free(m->slots[i].str);
	free(m->slots);
	*m = (struct hashmap)HASHMAP_INIT;
}
