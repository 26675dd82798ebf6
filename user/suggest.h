/* SPDX-License-Identifier: GPL-2.0 */
/*
 * "Did you mean ...?" for a name that matched nothing (a container, a cgroup, an event), the
 * way git answers a mistyped command: every candidate is scored by a weighted edit distance
 * (two swapped letters are free, a letter replaced costs 2, one added 1, one dropped 3, plus
 * 1; a candidate the typo begins is 0), and the best-scored ones are offered when the score
 * is under SUGGEST_FLOOR. Case is ignored.
 *
 *   struct suggest sg;
 *
 *   suggest_init(&sg, typo);
 *   suggest_add(&sg, candidate);	// for each; duplicates are offered once
 *   suggest_format(&sg, buf, len);	// "" or "did you mean 'a' or 'b'?"
 *   suggest_release(&sg);
 */
#ifndef CGTMA_SUGGEST_H
#define CGTMA_SUGGEST_H

#include <stddef.h>

#define SUGGEST_FLOOR 7		/* git's SIMILARITY_FLOOR */
#define SUGGEST_MAX 5		/* names offered at most */
#define SUGGEST_LEN 1024	/* room for suggest_format()'s text of long names */

struct suggest {
	const char *typo;
	int best;			/* the best score so far (INT_MAX: none) */
	int nr;				/* names holding it, SUGGEST_MAX at most */
	int more;			/* how many more hold it */
	char *names[SUGGEST_MAX];
};

void suggest_init(struct suggest *sg, const char *typo);
/* Scores candidate against the typo and keeps it if among the best. -ENOMEM or 0. */
int suggest_add(struct suggest *sg, const char *candidate);
/*
 * The same, scored against another form of the typo: the typo as it reads where candidate
 * would be (a glob's matches put in, for one).
 */
int suggest_add_against(struct suggest *sg, const char *typo, const char *candidate);
/*
 * Offers candidate with a score of the caller's (suggest_score() of another name that stands
 * for it: a model offered for a CPU's name). -ENOMEM or 0.
 */
int suggest_offer(struct suggest *sg, const char *candidate, int score);
/* The score of candidate for typo: 0 when typo begins it, else the distance plus 1. */
int suggest_score(const char *typo, const char *candidate);
/* Whether anything is close enough to offer. */
int suggest_found(const struct suggest *sg);
/*
 * "did you mean 'a'?", "did you mean 'a' or 'b'?", "did you mean 'a', 'b' or 'c'?" ("or
 * others" when more were as close) into buf, "" when nothing is close; the names sorted.
 */
void suggest_format(const struct suggest *sg, char *buf, size_t len);
void suggest_release(struct suggest *sg);

/* The weighted distance between the two strings (exposed for its tests). */
int suggest_distance(const char *from, const char *to);

#endif
