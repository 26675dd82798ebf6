/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Names of kernel addresses, for the kernel frames of a profile.
 *
 * Where a namer is given (the sampler's BPF program, sampler.c: the kernel's own lookup of
 * each address, as `%ps` prints it), only the addresses sampled are named, each once. Without
 * one, /proc/kallsyms is read whole at the first address to name: 5 MB that the kernel
 * formats, 70 to 90 ms of CPU here, where naming a few hundred addresses through the kernel
 * costs a few test runs of a program.
 *
 *   struct ksyms ks = KSYMS_INIT;
 *   ksyms_set_namer(&ks, fn, ctx);		// optional
 *   err = ksyms_name(&ks, ips, n, names);	// names[i]: a name, or NULL
 *   ksyms_release(&ks);
 *
 * Not thread-safe: one thread names kernel frames.
 */
#ifndef CGTMA_KSYMS_H
#define CGTMA_KSYMS_H

#include <stdbool.h>
#include <stdint.h>

#include "hashmap.h"

/* The most addresses a namer is given at once. */
#define KSYMS_NAMER_BATCH 32

/*
 * Names ips[0..n) (n at most KSYMS_NAMER_BATCH) into texts[], as the kernel's `%ps` prints
 * them ("func", "func [module]", "0x..." for an address without a symbol), each NULL where
 * the namer has no text (one that did not fit its buffer): 0 or -errno. The texts stay valid
 * until the next call.
 */
typedef int (*ksyms_namer_fn)(void *ctx, const uint64_t *ips, int n, const char **texts);

/* One of /proc/kallsyms's text symbols. */
struct ksym {
	uint64_t addr;
	char *name;
};

struct ksyms {
	ksyms_namer_fn namer;
	void *namer_ctx;
	/* With a namer: the names given so far (NULL: none), by address in index. */
	char **names;
	int nr_names, cap_names;
	struct hashmap index;
	/* Without one: /proc/kallsyms's text symbols, sorted, once read. */
	struct ksym *syms;
	int nr_syms, cap_syms;
	bool read;
};

#define KSYMS_INIT { 0 }

/* Names through fn from now on (after a failed call of fn, through /proc/kallsyms). */
void ksyms_set_namer(struct ksyms *ks, ksyms_namer_fn fn, void *ctx);

/*
 * The names of ips[0..n) into names[] (NULL for an address that has none), valid until the
 * next call: 0 or -ENOMEM.
 */
int ksyms_name(struct ksyms *ks, const uint64_t *ips, int n, const char **names);

/*
 * Symbols known (tests, -v): named so far by the namer (*by_namer true; by_namer may be
 * NULL), or read from /proc/kallsyms.
 */
int ksyms_nr_known(const struct ksyms *ks, bool *by_namer);

void ksyms_release(struct ksyms *ks);

#endif
