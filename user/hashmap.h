/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A small open-addressing hash map from a key to an int, for finding an entry of the
 * caller's array by its key: a u64 (a cgroup id) or a string (a cgroup path, a label).
 *
 *   struct hashmap m = HASHMAP_INIT;
 *
 *   if (hashmap_put_str(&m, path, nr))	// before nr++: on failure nothing changed
 *           return -ENOMEM;
 *   i = hashmap_get_str(&m, path);	// nr, or -1 when absent
 *   hashmap_clear(&m);
 *
 * One map holds one kind of key: use either the _u64 or the _str calls on it. String keys
 * are copied. Values are >= 0. The table stays at most half full; it grows by allocating the
 * larger table before letting go of the old one, so a failed insertion (-ENOMEM) leaves the
 * map as it was. Nothing here is thread-safe.
 */
#ifndef CGTMA_HASHMAP_H
#define CGTMA_HASHMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct hashmap_entry;

struct hashmap {
	struct hashmap_entry *slots;
	size_t nr_slots;		/* 0, or a power of 2 */
	size_t nr;			/* keys in the map */
};

#define HASHMAP_INIT { 0 }

/* The value stored under key, or -1 when there is none. */
int hashmap_get_u64(const struct hashmap *m, uint64_t key);
int hashmap_get_str(const struct hashmap *m, const char *key);

/*
 * Stores value under key, replacing the value it had: 0; -EINVAL for a negative value;
 * -ENOMEM, the map unchanged.
 */
int hashmap_put_u64(struct hashmap *m, uint64_t key, int value);
int hashmap_put_str(struct hashmap *m, const char *key, int value);

/* Removes key and its value; false when it was not there. Never allocates. */
bool hashmap_del_u64(struct hashmap *m, uint64_t key);
bool hashmap_del_str(struct hashmap *m, const char *key);

/* Removes every key and frees the table: the map is empty, and can be used again. */
void hashmap_clear(struct hashmap *m);

#endif
