/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A live run's state, for session.c (its loop: start, intervals, summary, exit status) and
 * session_rows.c (an interval's rows from what the loop read) alone.
 */
#ifndef CGTMA_SESSION_INTERNAL_H
#define CGTMA_SESSION_INTERNAL_H

#include <stdbool.h>

#include "bpf/cgtma.h"
#include "child.h"
#include "counts.h"
#include "env.h"
#include "marks.h"
#include "neighbours.h"
#include "measurement.h"
#include "output.h"
#include "report.h"
#include "sampling.h"
#include "selection.h"
#include "tasks.h"
#include "tracker.h"

struct collector;

struct session {
	struct measurement m;
	struct run run;
	struct collector *col;
	struct selection sel;		/* which cgroups are tracked */
	int nr_cpus;
	int stride;			/* per_cpu ? nr_cpus : 1 */
	bool *cpus;			/* -C: per possible CPU, whether to count it; or NULL */

	struct tracker tk;		/* the cgroups counted, and those that were */
	struct tasks tasks;		/* -T: their threads */
	/* --irq: per selected interrupt scope, as a tracked cgroup's (tracker.h) */
	struct scope_counts irq[CGTMA_NR_IRQ];
	struct cgtma_count *irq_now;	/* per CPU: one scope's reading */

	struct scope_counts cpu;	/* per CPU */
	/*
	 * --all-cgroups: the root's own tasks (in no child of it), as a row of their own
	 * (session_rows.c), stride * nr_events each: the interval's, and over the run the
	 * system's and the level-1 cgroups' sums. NULL: no row.
	 */
	struct cgtma_count *own, *own_system, *own_children;
	bool own_inexact;		/* a level-1 cgroup was refused: no row from then on */
	struct cgtma_count *cpu_now;	/* per CPU: a reading */
	__u64 *read_first, *read_prev, *read_now;	/* per CPU: when counters were read */
	struct marks marks;		/* the marks of each interval, and the run's totals */
	struct output *outputs[OUTPUTS_MAX];
	int nr_outputs;
	double run_start_mono;
	double last_mono;
	struct child child;		/* -- COMMAND */
	bool output_failed;		/* some interval could not be written: exit 1 */
	bool stdout_closed;		/* standard output's reader went away */
	bool stop;			/* end after this interval */
	bool warned_in_phase;		/* session_warn_in_phase() said it */

	struct sampling sp;		/* --sample */
	/* Noise between cgroups (collector_setup.noise): the interval's pairs, one cgroup's
	 * sums of them, and the tracked cgroups they are sorted into. */
	struct neighbours nb;
	struct neighbour_tally tally;
	struct neighbour_row *rows;
	int cap_rows;
};

/* A tracked cgroup, NULL when it is not (or no longer) counted. */
static inline const struct tracked *tracked_of(const struct session *s, __u64 id)
{
	int i = tracker_find(&s->tk, id);

	return i < 0 || s->tk.tracked[i].refused ? NULL : &s->tk.tracked[i];
}

/*
 * A cgroup a glob or --all-* found (not named by -G) that did not run in the interval, and
 * had its first row already: with thousands tracked and a few busy, its row of zeros and
 * the reading of its files would be most of an interval's cost. It has no row and is not
 * read for noise (its next reading a zero point); its last interval and the summary still
 * show it.
 */
static inline bool tracked_quiet(const struct tracked *tr)
{
	return !tr->ran && !tr->named && tr->reported && tr->present;
}

/* Whether --irq selected interrupt scope irq. */
static inline bool irq_selected(const struct session *s, int irq)
{
	return env.irq_mask & (1U << irq);
}

/*
 * The interval's scopes: the system, CPUs (-A), tracked cgroups, the root's own tasks,
 * interrupt scopes, threads (-T); with totals the summary's, from the run's sums, with the
 * removed cgroups. Sorted and derived (report_derive()). 0 or -ENOMEM.
 */
int session_build_interval(struct session *s, struct interval *iv, bool totals);

/* Once per run: a cgroup whose rotation falls in phase with its switches (session_rows.c). */
void session_warn_in_phase(struct session *s, const struct interval *iv);

#endif
