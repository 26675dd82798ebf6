// SPDX-License-Identifier: GPL-2.0
/* "Did you mean ...?" (suggest.h). */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "suggest.h"

/* Costs of turning the typo into a candidate (git's help.c passes the same). */
#define COST_SWAP 0
#define COST_REPLACE 2
#define COST_ADD 1
#define COST_DROP 3

/*
 * Damerau-Levenshtein (adjacent swaps) over three rows, as git's levenshtein.c; letters
 * compared without case.
 */
int suggest_distance(const char *from, const char *to)
{
	size_t n1 = strlen(from), n2 = strlen(to);
	int *r0 = malloc((n2 + 1) * sizeof(int)), *r1 = malloc((n2 + 1) * sizeof(int));
	int *r2 = malloc((n2 + 1) * sizeof(int)), *t, d;

	if (!r0 || !r1 || !r2) {
		free(r0);
		free(r1);
		free(r2);
		return INT_MAX;
	}
	for (size_t j = 0; j <= n2; j++)
		r1[j] = j * COST_ADD;
	for (size_t i = 0; i < n1; i++) {
		r2[0] = (i + 1) * COST_DROP;
		for (size_t j = 0; j < n2; j++) {
			int a = tolower((unsigned char)from[i]), b = tolower((unsigned char)to[j]);

			r2[j + 1] = r1[j] + (a != b) * COST_REPLACE;
			if (i > 0 && j > 0 && a == tolower((unsigned char)to[j - 1]) &&
			    tolower((unsigned char)from[i - 1]) == b &&
			    r2[j + 1] > r0[j - 1] + COST_SWAP)
				r2[j + 1] = r0[j - 1] + COST_SWAP;
			if (r2[j + 1] > r1[j + 1] + COST_DROP)
				r2[j + 1] = r1[j + 1] + COST_DROP;
			if (r2[j + 1] > r2[j] + COST_ADD)
				r2[j + 1] = r2[j] + COST_ADD;
		}
		t = r0;
		r0 = r1;
		r1 = r2;
		r2 = t;
	}
	d = r1[n2];
	free(r0);
	free(r1);
	free(r2);
	return d;
}

void suggest_init(struct suggest *sg, const char *typo)
{
	memset(sg, 0, sizeof(*sg));
	sg->typo = typo;
	sg->best = INT_MAX;
}

static void drop_names(struct suggest *sg)
{
	for (int i = 0; i < sg->nr; i++)
		free(sg->names[i]);
	sg->nr = 0;
	sg->more = 0;
}

int suggest_score(const char *typo, const char *candidate)
{
	return !strncasecmp(candidate, typo, strlen(typo)) ? 0 :
	       suggest_distance(typo, candidate) + 1;
}

int suggest_add_against(struct suggest *sg, const char *typo, const char *candidate)
{
	if (!*candidate || !strcasecmp(candidate, typo))
		return 0;
	return suggest_offer(sg, candidate, suggest_score(typo, candidate));
}

int suggest_offer(struct suggest *sg, const char *candidate, int score)
{
	int at;
	char *name;

	if (score >= SUGGEST_FLOOR || score > sg->best)
		return 0;
	if (score < sg->best) {
		drop_names(sg);
		sg->best = score;
	}
	/* Sorted by name, as git lists its equals; the first SUGGEST_MAX are kept. */
	for (at = 0; at < sg->nr; at++) {
		int c = strcasecmp(sg->names[at], candidate);

		if (!c)
			return 0;
		if (c > 0)
			break;
	}
	if (at == SUGGEST_MAX) {
		sg->more++;
		return 0;
	}
	name = strdup(candidate);
	if (!name)
		return -ENOMEM;
	if (sg->nr == SUGGEST_MAX) {
		free(sg->names[--sg->nr]);
		sg->more++;
	}
	memmove(&sg->names[at + 1], &sg->names[at], (sg->nr - at) * sizeof(*sg->names));
	sg->names[at] = name;
	sg->nr++;
	return 0;
}

int suggest_add(struct suggest *sg, const char *candidate)
{
	return suggest_add_against(sg, sg->typo, candidate);
}

int suggest_found(const struct suggest *sg)
{
	return sg->nr > 0;
}

void suggest_format(const struct suggest *sg, char *buf, size_t len)
{
	size_t at;

	if (!len)
		return;
	buf[0] = '\0';
	if (!sg->nr)
		return;
	at = snprintf(buf, len, "did you mean");
	for (int i = 0; i < sg->nr && at < len; i++)
		at += snprintf(buf + at, len - at, "%s'%s'",
			       i == 0 ? " " : i == sg->nr - 1 && !sg->more ? " or " : ", ",
			       sg->names[i]);
	if (at < len)
		snprintf(buf + at, len - at, "%s?", sg->more ? " or others" : "");
}

void suggest_release(struct suggest *sg)
{
	drop_names(sg);
	sg->best = INT_MAX;
}
