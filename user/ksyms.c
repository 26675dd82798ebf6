// SPDX-License-Identifier: GPL-2.0
/*
 * Names of kernel addresses (ksyms.h): through the kernel's own lookup where a namer is
 * given, else from /proc/kallsyms.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "ksyms.h"
#include "log.h"

/*
 * Names kept, as symbolize.c keeps user names: emptied when it reaches this many, so that a
 * long run over ever new addresses holds a bounded table.
 */
#define KSYMS_NAMES_MAX 65536

void ksyms_set_namer(struct ksyms *ks, ksyms_namer_fn fn, void *ctx)
{
	ks->namer = fn;
	ks->namer_ctx = ctx;
}

static void forget_names(struct ksyms *ks)
{
	for (int i = 0; i < ks->nr_names; i++)
		free(ks->names[i]);
	ks->nr_names = 0;
	hashmap_clear(&ks->index);
}

void ksyms_release(struct ksyms *ks)
{
	forget_names(ks);
	free(ks->names);
	for (int i = 0; i < ks->nr_syms; i++)
		free(ks->syms[i].name);
	free(ks->syms);
	*ks = (struct ksyms)KSYMS_INIT;
}

int ksyms_nr_known(const struct ksyms *ks, bool *by_namer)
{
	if (by_namer)
		*by_namer = ks->namer;
	return ks->namer ? ks->nr_names : ks->nr_syms;
}

/* --- through the namer ------------------------------------------------------------------ */

/*
 * The function's name in a text of `%ps`: without " [module]" (as /proc/kallsyms names it,
 * the module in a column of its own); NULL for "0x..." (no symbol) or no text. 0 or -ENOMEM.
 */
static int name_of_text(const char *text, char **name)
{
	size_t len;

	*name = NULL;
	if (!text || !*text || !strncmp(text, "0x", 2))
		return 0;
	len = strcspn(text, " ");
	*name = strndup(text, len);
	return *name ? 0 : -ENOMEM;
}

/* Stores ip's name (NULL: none): 0 or -ENOMEM, the table unchanged. */
static int keep_name(struct ksyms *ks, uint64_t ip, char *name)
{
	if (ALLOC_GROW(ks->names, ks->nr_names + 1, ks->cap_names) ||
	    hashmap_put_u64(&ks->index, ip, ks->nr_names)) {
		free(name);
		return -ENOMEM;
	}
	ks->names[ks->nr_names++] = name;
	return 0;
}

/* Asks the namer for batch[0..nb) and keeps their names: 0, -ENOMEM or the namer's error. */
static int name_batch(struct ksyms *ks, const uint64_t *batch, int nb)
{
	const char *texts[KSYMS_NAMER_BATCH];
	int err = ks->namer(ks->namer_ctx, batch, nb, texts);

	for (int j = 0; !err && j < nb; j++) {
		char *name;

		err = name_of_text(texts[j], &name) ?: keep_name(ks, batch[j], name);
	}
	return err;
}

/*
 * Names the addresses not named yet, KSYMS_NAMER_BATCH at a time, each once: 0, -ENOMEM, or
 * the namer's error.
 */
static int name_new(struct ksyms *ks, const uint64_t *ips, int n)
{
	uint64_t batch[KSYMS_NAMER_BATCH];
	int nb = 0, err;

	if (ks->nr_names + n > KSYMS_NAMES_MAX)
		forget_names(ks);
	for (int i = 0; i < n; i++) {
		bool queued = false;

		for (int j = 0; j < nb && !queued; j++)
			queued = batch[j] == ips[i];
		if (queued || hashmap_get_u64(&ks->index, ips[i]) >= 0)
			continue;
		batch[nb++] = ips[i];
		if (nb == KSYMS_NAMER_BATCH) {
			err = name_batch(ks, batch, nb);
			if (err)
				return err;
			nb = 0;
		}
	}
	return nb ? name_batch(ks, batch, nb) : 0;
}

/* --- /proc/kallsyms --------------------------------------------------------------------- */

static int ksym_cmp(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/*
 * The text symbols of /proc/kallsyms, sorted (all zero without the privilege to see them):
 * 0, or -ENOMEM with none kept (read again at the next call). Parsed by hand: sscanf() took
 * most of the time cgtma spent in user space on the file.
 */
static int read_kallsyms(struct ksyms *ks)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	int err = 0;
	FILE *f = fopen("/proc/kallsyms", "re");

	if (!f) {
		ks->read = true;
		return 0;
	}
	/* "ffffffff81000000 T _stext\t[module]": address, type, name (up to a tab or the end). */
	while ((n = getline(&line, &cap, f)) > 0) {
		char *end, *name;
		struct ksym k;

		k.addr = strtoull(line, &end, 16);
		if (end == line || end[0] != ' ' || !end[1] || end[2] != ' ' || !k.addr ||
		    !strchr("tTwW", end[1]))
			continue;
		name = end + 3;
		name[strcspn(name, "\t\n")] = '\0';
		k.name = strdup(name);
		if (!k.name || ALLOC_GROW(ks->syms, ks->nr_syms + 1, ks->cap_syms)) {
			free(k.name);
			err = -ENOMEM;
			break;
		}
		ks->syms[ks->nr_syms++] = k;
	}
	free(line);
	fclose(f);
	if (err) {
		for (int i = 0; i < ks->nr_syms; i++)
			free(ks->syms[i].name);
		ks->nr_syms = 0;
		return err;
	}
	qsort(ks->syms, ks->nr_syms, sizeof(*ks->syms), ksym_cmp);
	ks->read = true;
	return 0;
}

/* The text symbol holding ip, or NULL: past the last one is not the kernel's text. */
static const char *kallsyms_name(const struct ksyms *ks, uint64_t ip)
{
	int lo = 0, hi = ks->nr_syms - 1;

	while (lo <= hi) {
		int mid = (lo + hi) / 2;

		if (ks->syms[mid].addr <= ip)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	/* hi: the last symbol at or below ip. */
	return hi >= 0 && hi < ks->nr_syms - 1 ? ks->syms[hi].name : NULL;
}

int ksyms_name(struct ksyms *ks, const uint64_t *ips, int n, const char **names)
{
	int err;

	if (ks->namer) {
		err = name_new(ks, ips, n);
		if (!err) {
			for (int i = 0; i < n; i++)
				names[i] = ks->names[hashmap_get_u64(&ks->index, ips[i])];
			return 0;
		}
		if (err == -ENOMEM)
			return err;
		pr_warn("--sample: cannot name kernel addresses through the kernel (%s): reading "
			"/proc/kallsyms", strerror(-err));
		forget_names(ks);
		ks->namer = NULL;
	}
	if (!ks->read) {
		err = read_kallsyms(ks);
		if (err)
			return err;
	}
	for (int i = 0; i < n; i++)
		names[i] = kallsyms_name(ks, ips[i]);
	return 0;
}
