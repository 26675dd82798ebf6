/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A live run's marks (collector_read.h): slices charged though the switch hook did not see
 * where they began. Each interval's are listed with their cgroups named as the outputs name
 * them, their totals go in the interval and in the run's summary, and -v says each one.
 */
#ifndef CGTMA_MARKS_H
#define CGTMA_MARKS_H

#include <stdbool.h>

#include "collector_read.h"

struct cgview;
struct interval;
struct tracker;

struct marks {
	struct collector *col;
	const struct tracker *tk;	/* names the tracked cgroups, containers' and pods' */
	const struct cgview *view;	/* names the others, by file handle */
	struct collector_marks run;	/* the totals over the run's intervals */
};

/* The closed half's marks into iv (its list and totals), and their totals into the run's. */
void marks_read(struct marks *mk, struct interval *iv);

/* Reads the closed half's marks and drops them: those of what ran before the run began. */
void marks_skip(struct marks *mk);

/* The run's totals into its summary iv. */
void marks_summary(const struct marks *mk, struct interval *iv);

#endif
