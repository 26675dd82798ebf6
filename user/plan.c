// SPDX-License-Identifier: GPL-2.0
/*
 * From a model and the run's options to a plan: which nodes are reported, which events they
 * and the metrics read (with smt_enabled and topdown_use_fixed folded in, so that formulas
 * for the other configuration cost nothing), and how those events are grouped so that no
 * group needs more counters than the PMU has.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "model_internal.h"
#include "strbuf.h"

/* Event sets per entity (aux, then nodes, then metrics), as bitsets over model events. */
struct closure {
	const struct model *m;
	const double *params;
	int words;
	uint64_t *sets;
	unsigned char *done;
};

static uint64_t *set_of(const struct closure *c, int x)
{
	return c->sets + (size_t)x * c->words;
}

static void close_entity(struct closure *c, int x);

struct close_ctx {
	struct closure *c;
	uint64_t *set;
};

static int close_ref(void *ctx, enum expr_ref_kind kind, int index)
{
	struct close_ctx *cc = ctx;
	const struct model *m = cc->c->m;
	uint64_t *from;
	int y, w;

	switch (kind) {
	case EXPR_REF_EVENT:
	case EXPR_REF_RETLAT:
		/* retlat() needs the event in the plan too: its latency is given per event. */
		cc->set[index / 64] |= 1ull << (index % 64);
		return 0;
	case EXPR_REF_THRESH:
		return 0;	/* reads a flag, computes nothing */
	case EXPR_REF_AUX: y = index; break;
	case EXPR_REF_NODE: y = m->nr_aux + index; break;
	case EXPR_REF_METRIC: y = m->nr_aux + m->nr_nodes + index; break;
	default: return 0;
	}
	close_entity(cc->c, y);
	from = set_of(cc->c, y);
	for (w = 0; w < cc->c->words; w++)
		cc->set[w] |= from[w];
	return 0;
}

/* The loader rejected cycles and bounded the nesting, so this recursion ends, shallowly. */
static void close_entity(struct closure *c, int x)
{
	const struct model *m = c->m;
	struct close_ctx cc = { .c = c, .set = set_of(c, x) };

	if (c->done[x])
		return;
	c->done[x] = 1;
	if (x < m->nr_aux) {
		expr_for_each_ref(m->aux[x].expr, c->params, close_ref, &cc);
	} else if (x < m->nr_aux + m->nr_nodes) {
		const struct model_node *n = &m->nodes[x - m->nr_aux];

		expr_for_each_ref(n->expr, c->params, close_ref, &cc);
		expr_for_each_ref(n->thresh, c->params, close_ref, &cc);
	} else {
		expr_for_each_ref(m->metrics[x - m->nr_aux - m->nr_nodes].expr, c->params,
				   close_ref, &cc);
	}
}

static bool in_set(const uint64_t *set, int e)
{
	return set[e / 64] >> (e % 64) & 1;
}

/* --- grouping ----------------------------------------------------------------------------- */

/*
 * A counter constraint as the kernel's x86 scheduler sees it (arch/x86/events/core.c): bit
 * i < 32 for generic counter i, bit 32 + j for fixed counter j.
 */
#define GENERIC_BITS 0xffffffffull
#define FIXED_BIT(j) (1ull << (32 + (j)))

/*
 * config1 of a raw encoding ("cpu/...,config1=0x8/"): Intel's frontend, offcore-response and
 * load-latency events program one extra register per core, so events wanting different
 * values there can never be scheduled together.
 */
static unsigned long long encoding_config1(const char *enc)
{
	const char *p = strstr(enc, "config1=");

	return p ? strtoull(p + 8, NULL, 0) : 0;
}

struct pgroup {
	int n;
	int *ev;			/* model events, leader first, in the order placed */
	int *plan;			/* per member: its plan event index */
	unsigned long long config1;	/* the extra register value its events use, or 0 */
	bool pm;			/* led by the perf-metrics leader, may hold its events */
};

struct grouper {
	const struct model *m;
	const struct model_options *o;
	unsigned long long *mask;	/* per model event; 0 for perf-metrics events */
	unsigned long long *config1;	/* per model event */
	bool *pm;			/* per model event: a perf-metrics event (on that path) */
	unsigned long long *extra;	/* what others hold beside every group */
	int nr_extra;
	unsigned long long *scratch;
	struct pgroup *groups;
	int nr_groups;
};

/*
 * perf_assign_events(): events by increasing weight (number of allowed counters), each on
 * a free fixed counter when it may use one, else on the lowest free generic counter; no
 * backtracking (the kernel backtracks only for overlapping constraints, which no core PMU
 * table here has). The kernel refuses a group this cannot place (validate_group()).
 */
static bool assign(const unsigned long long *c, int n)
{
	unsigned long long used = 0;
	int placed = 0;

	for (int w = 1; w <= 64 && placed < n; w++) {
		for (int i = 0; i < n; i++) {
			unsigned long long free;

			if (__builtin_popcountll(c[i]) != w)
				continue;
			free = c[i] & ~used;
			if (!free)
				return false;
			if (free & ~GENERIC_BITS)
				free &= ~GENERIC_BITS;
			used |= free & -free;
			placed++;
		}
	}
	return placed == n;
}

/* Whether the events of a and b (b may be NULL) and what others hold can all be placed. */
static bool schedulable(const struct grouper *g, const int *a, int na, const int *b, int nb)
{
	int n = 0;

	for (int i = 0; i < na + nb; i++) {
		int e = i < na ? a[i] : b[i - na];

		if (!g->pm[e])
			g->scratch[n++] = g->mask[e];
	}
	for (int i = 0; i < g->nr_extra; i++)
		g->scratch[n++] = g->extra[i];
	return assign(g->scratch, n);
}

static bool in_group(const struct pgroup *k, int e)
{
	for (int i = 0; i < k->n; i++)
		if (k->ev[i] == e)
			return true;
	return false;
}

static int new_group(struct grouper *g)
{
	struct pgroup *k = &g->groups[g->nr_groups];

	memset(k, 0, sizeof(*k));
	k->ev = calloc(g->m->nr_events + 1, sizeof(*k->ev));
	k->plan = calloc(g->m->nr_events + 1, sizeof(*k->plan));
	if (!k->ev || !k->plan) {
		free(k->ev);
		free(k->plan);
		return -ENOMEM;
	}
	return g->nr_groups++;
}

static void add_to_group(struct grouper *g, int k, int e)
{
	struct pgroup *pg = &g->groups[k];

	if (in_group(pg, e))
		return;
	pg->ev[pg->n++] = e;
	if (g->config1[e])
		pg->config1 = g->config1[e];
}

/* The unit's events (leader added where it reads perf-metrics events), in model order. */
static int unit_events(const struct grouper *g, const uint64_t *set, int *out, bool *pm)
{
	int n = 0;

	*pm = false;
	for (int e = 0; e < g->m->nr_events; e++) {
		if (in_set(set, e)) {
			out[n++] = e;
			*pm |= g->pm[e];
		}
	}
	if (*pm && !in_set(set, g->m->pmu.pm_leader)) {
		/* the leader goes first */
		memmove(out + 1, out, n * sizeof(*out));
		out[0] = g->m->pmu.pm_leader;
		n++;
	} else if (*pm) {
		for (int i = 0; out[0] != g->m->pmu.pm_leader; i++) {
			if (out[i] == g->m->pmu.pm_leader) {
				memmove(out + 1, out, i * sizeof(*out));
				out[0] = g->m->pmu.pm_leader;
			}
		}
	}
	return n;
}

/* The extra-register value the events share, 0 when none, -1 when they disagree. */
static long long common_config1(const struct grouper *g, unsigned long long start, const int *ev,
				int n)
{
	unsigned long long v = start;

	for (int i = 0; i < n; i++) {
		unsigned long long c = g->config1[ev[i]];

		if (c && v && c != v)
			return -1;
		if (c)
			v = c;
	}
	return (long long)v;
}

/* How many events group k gains by taking ev, or -1 when it cannot take them. */
static int join_cost(const struct grouper *g, int k, const int *ev, int n, bool pm)
{
	const struct pgroup *pg = &g->groups[k];
	int add[n + 1], na = 0;

	if (pm && !pg->pm)
		return -1;
	if (common_config1(g, pg->config1, ev, n) < 0)
		return -1;
	for (int i = 0; i < n; i++)
		if (!in_group(pg, ev[i]))
			add[na++] = ev[i];
	if (na && !schedulable(g, pg->ev, pg->n, add, na))
		return -1;
	return na;
}

/* "generic counters 0-3 and fixed counter 1" */
static void describe_counters(unsigned long long mask, char *buf, size_t len)
{
	unsigned long long gen = mask & GENERIC_BITS, fix = mask >> 32;
	size_t at = 0;

	buf[0] = 0;
	if (gen) {
		int lo = __builtin_ctzll(gen), hi = 63 - __builtin_clzll(gen);

		if (gen == ((2ull << hi) - (1ull << lo)))
			at += snprintf(buf + at, len - at, lo == hi ? "generic counter %d" :
					"generic counters %d-%d", lo, hi);
		else
			at += snprintf(buf + at, len - at, "generic counters 0x%llx", gen);
	}
	if (fix && at < len)
		snprintf(buf + at, len - at, "%s%d fixed counter%s", gen ? " and " : "",
			 __builtin_popcountll(fix), __builtin_popcountll(fix) > 1 ? "s" : "");
}

/* Why a unit's events cannot be one group: the counters some of them want are too few. */
static char *split_reason(const struct grouper *g, const int *ev, int n)
{
	char what[96], *r = NULL;
	int nc = 0;

	if (common_config1(g, 0, ev, n) < 0)
		return strdup("its events need different values of one extra register (config1)");
	for (int i = 0; i < n; i++)
		if (!g->pm[ev[i]])
			g->scratch[nc++] = g->mask[ev[i]];
	for (int i = 0; i < g->nr_extra; i++)
		g->scratch[nc++] = g->extra[i];
	/* Hall's condition: a set of counters wanted by more events than it has */
	for (int i = 0; i < nc; i++) {
		unsigned long long want = g->scratch[i];
		int users = 0;

		for (int j = 0; j < nc; j++)
			users += (g->scratch[j] & ~want) == 0;
		if (users <= __builtin_popcountll(want))
			continue;
		describe_counters(want, what, sizeof(what));
		r = malloc(192);
		if (r)
			snprintf(r, 192, "%d events%s for the %d counters they can use (%s)",
				 users, !g->nr_extra ? "" : g->o->nmi_watchdog ?
				 " (the NMI watchdog's among them)" : " (others' among them)",
				 __builtin_popcountll(want), what);
		return r;
	}
	return strdup("no assignment of its events to the PMU's counters exists");
}

/*
 * Places one node's (or metric's) events, toplev's way: all in one group, the one that gains
 * the fewest events by it (events it already holds are shared), else a new group. Events
 * in other groups are counted again here. When they cannot fit one group at all, each goes
 * where it fits or is already counted, and the unit is split. Returns its group, -1 when
 * split (*why saying why), or -ENOMEM as -2.
 */
static int place_unit(struct grouper *g, const uint64_t *set, char **why)
{
	int ev[g->m->nr_events + 1], n, best = -1, best_cost = INT_MAX;
	bool pm;

	*why = NULL;
	n = unit_events(g, set, ev, &pm);
	if (!n)
		return -1;
	if (common_config1(g, 0, ev, n) >= 0 && schedulable(g, ev, n, NULL, 0)) {
		for (int k = 0; k < g->nr_groups; k++) {
			int cost = join_cost(g, k, ev, n, pm);

			if (cost >= 0 && cost < best_cost) {
				best = k;
				best_cost = cost;
			}
		}
		if (best < 0) {
			best = new_group(g);
			if (best < 0)
				return -2;
			g->groups[best].pm = pm;
		}
		for (int i = 0; i < n; i++)
			add_to_group(g, best, ev[i]);
		return best;
	}

	*why = split_reason(g, ev, n);
	if (!*why)
		return -2;
	for (int i = 0; i < n; i++) {
		int e = ev[i], k;

		for (k = 0; k < g->nr_groups && !in_group(&g->groups[k], e); k++)
			;
		if (k < g->nr_groups)
			continue;
		for (k = 0; k < g->nr_groups && join_cost(g, k, &e, 1, g->pm[e]) < 0; k++)
			;
		if (k == g->nr_groups) {
			k = new_group(g);
			if (k < 0)
				return -2;
			g->groups[k].pm = g->pm[e];
			if (g->pm[e])
				add_to_group(g, k, g->m->pmu.pm_leader);
		}
		add_to_group(g, k, e);
	}
	return -1;
}

/* Software events: never multiplexed, and grouped they misbehave; each on its own. */
static int place_software(struct grouper *g, const uint64_t *set)
{
	for (int e = 0; e < g->m->nr_events; e++) {
		int k;

		if (!in_set(set, e))
			continue;
		for (k = 0; k < g->nr_groups && !in_group(&g->groups[k], e); k++)
			;
		if (k < g->nr_groups)
			continue;
		k = new_group(g);
		if (k < 0)
			return -ENOMEM;
		add_to_group(g, k, e);
	}
	return 0;
}

static int grouper_init(struct grouper *g, const struct model *m, const struct model_options *o,
			int max_groups)
{
	const struct model_pmu *pmu = &m->pmu;
	int ngen = o->smt ? pmu->generic_counters_smt : pmu->generic_counters;
	unsigned long long gen;

	g->m = m;
	g->o = o;
	if (ngen > 32)
		ngen = 32;
	gen = ngen ? (~0ull >> (64 - ngen)) : 0;
	g->mask = calloc(m->nr_events + 1, sizeof(*g->mask));
	g->config1 = calloc(m->nr_events + 1, sizeof(*g->config1));
	g->pm = calloc(m->nr_events + 1, sizeof(*g->pm));
	g->extra = calloc(o->reserved_counters + 2, sizeof(*g->extra));
	g->scratch = calloc(m->nr_events + o->reserved_counters + 2, sizeof(*g->scratch));
	g->groups = calloc(max_groups + 1, sizeof(*g->groups));
	if (!g->mask || !g->config1 || !g->pm || !g->extra || !g->scratch || !g->groups)
		return -ENOMEM;
	for (int e = 0; e < m->nr_events; e++) {
		g->mask[e] = m->events[e].counters & gen;
		g->config1[e] = encoding_config1(m->events[e].encoding);
	}
	for (int j = 0; j < pmu->nr_fixed && j < 32; j++)
		g->mask[pmu->fixed[j]] |= FIXED_BIT(j);
	for (int j = 0; o->perf_metrics && j < pmu->nr_pm_events; j++)
		g->pm[pmu->pm_events[j]] = true;
	/* the watchdog counts cycles on the counter its event would use */
	if (o->nmi_watchdog)
		g->extra[g->nr_extra++] = pmu->nmi_watchdog >= 0 ? g->mask[pmu->nmi_watchdog] : gen;
	for (int i = 0; i < o->reserved_counters; i++)
		g->extra[g->nr_extra++] = gen;
	return 0;
}

static void grouper_release(struct grouper *g)
{
	for (int k = 0; g->groups && k < g->nr_groups; k++) {
		free(g->groups[k].ev);
		free(g->groups[k].plan);
	}
	free(g->groups);
	free(g->mask);
	free(g->config1);
	free(g->pm);
	free(g->extra);
	free(g->scratch);
}

/* An event no group can hold, even alone: the user's to fix (fewer reserved counters). */
static int check_alone(const struct grouper *g, const uint64_t *needed)
{
	const struct model *m = g->m;
	const struct model_options *o = g->o;
	int ngen = o->smt ? m->pmu.generic_counters_smt : m->pmu.generic_counters;
	char what[96];

	for (int e = 0; e < m->nr_events; e++) {
		if (!in_set(needed, e) || g->pm[e] || schedulable(g, &e, 1, NULL, 0))
			continue;
		if (!(g->mask[e] & ~GENERIC_BITS) && ngen - o->reserved_counters -
		    (o->nmi_watchdog && m->pmu.nmi_watchdog < 0) <= 0) {
			pr_err("model %s: event '%s' needs a generic counter and none is left "
			       "(%d counters, %d reserved%s)", m->name, m->events[e].name, ngen,
			       o->reserved_counters, o->nmi_watchdog ? ", the NMI watchdog's" : "");
		} else {
			describe_counters(g->mask[e], what, sizeof(what));
			pr_err("model %s: event '%s' can only use %s, and others hold them",
			       m->name, m->events[e].name, what[0] ? what : "no counter");
		}
		return -E2BIG;
	}
	return 0;
}

/* The plan's events, group by group, and each unit's events in the group it reads. */
static int emit_events(struct plan *p, struct grouper *g)
{
	struct plan_priv *priv = p->priv;
	const struct model *m = g->m;
	int i = 0, total = 0;

	for (int k = 0; k < g->nr_groups; k++) {
		struct pgroup *pg = &g->groups[k];

		total += pg->n;
		/* as perf orders a topdown group: slots, its metrics events, then the others */
		for (int j = 1, at = 1; pg->pm && j < pg->n; j++) {
			int e = pg->ev[j];

			if (!g->pm[e])
				continue;
			memmove(pg->ev + at + 1, pg->ev + at, (j - at) * sizeof(*pg->ev));
			pg->ev[at++] = e;
		}
	}
	p->events = calloc(total + 1, sizeof(*p->events));
	priv->model_event = calloc(total + 1, sizeof(*priv->model_event));
	if (!p->events || !priv->model_event)
		return -ENOMEM;
	for (int k = 0; k < g->nr_groups; k++) {
		struct pgroup *pg = &g->groups[k];

		for (int j = 0; j < pg->n; j++, i++) {
			const struct model_event *ev = &m->events[pg->ev[j]];

			p->events[i].name = ev->name;
			p->events[i].encoding = ev->encoding;
			p->events[i].group = k;
			p->events[i].fixed = (g->mask[pg->ev[j]] & ~GENERIC_BITS) != 0;
			p->events[i].duplicate = priv->plan_event[pg->ev[j]] >= 0;
			priv->model_event[i] = pg->ev[j];
			if (priv->plan_event[pg->ev[j]] < 0)
				priv->plan_event[pg->ev[j]] = i;
			pg->plan[j] = i;
		}
	}
	p->nr_events = total;
	p->nr_groups = g->nr_groups;
	return 0;
}

/* The plan events unit reads: its group's copies, or the first copies when it is split. */
static int make_deps(const struct plan_priv *priv, const struct grouper *g, const uint64_t *set,
		     int group, int ctx, struct plan_deps *d)
{
	int e, n = 0;

	for (e = 0; e < g->m->nr_events; e++)
		n += in_set(set, e);
	d->events = calloc(n + 1, sizeof(*d->events));
	d->model_events = calloc(n + 1, sizeof(*d->model_events));
	if (!d->events || !d->model_events)
		return -ENOMEM;
	d->ctx = ctx;
	for (e = 0; e < g->m->nr_events; e++) {
		int pe = priv->plan_event[e];

		if (!in_set(set, e))
			continue;
		if (group >= 0) {
			const struct pgroup *pg = &g->groups[group];

			for (int j = 0; j < pg->n; j++)
				if (pg->ev[j] == e)
					pe = pg->plan[j];
		}
		d->model_events[d->nr] = e;
		d->events[d->nr++] = pe;
	}
	return 0;
}

/*
 * Whether groups 0..nr-1 fit the counters together (and agree on the extra register): else
 * the kernel time-shares them, each counted part of the time. 1, 0, or -ENOMEM.
 */
static int groups_fit(const struct grouper *g, int nr)
{
	unsigned long long *c, c1 = 0;
	int n = 0, total = g->nr_extra, fit;

	for (int k = 0; k < nr; k++)
		total += g->groups[k].n;
	c = calloc(total + 1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	for (int k = 0; k < nr; k++) {
		const struct pgroup *pg = &g->groups[k];

		if (pg->config1 && c1 && pg->config1 != c1) {
			free(c);
			return 0;
		}
		if (pg->config1)
			c1 = pg->config1;
		for (int i = 0; i < pg->n; i++)
			if (!g->pm[pg->ev[i]])
				c[n++] = g->mask[pg->ev[i]];
	}
	for (int i = 0; i < g->nr_extra; i++)
		c[n++] = g->extra[i];
	fit = assign(c, n);
	free(c);
	return fit;
}

/* Where a stage of planning ends: its groups, and whether they multiplex. */
static int note_stage(const struct grouper *g, struct plan_stage *st)
{
	int fit = g->m->pmu.software ? 1 : groups_fit(g, g->nr_groups);

	if (fit < 0)
		return fit;
	st->nr_groups = g->nr_groups;
	st->multiplexed = !fit;
	return 0;
}

/* Units in order: the first nr_base (the tree's, the default metrics') get the first groups. */
static int group_events(struct plan *p, const struct model *m, const struct model_options *o,
			const uint64_t *needed, const uint64_t *const *units, int nr_units,
			int nr_base)
{
	struct plan_priv *priv = p->priv;
	struct grouper g = {};
	int *unit_group = NULL, err;
	char **why = NULL;

	unit_group = calloc(nr_units + 1, sizeof(*unit_group));
	why = calloc(nr_units + 1, sizeof(*why));
	priv->split_reason = why;
	priv->nr_split_reasons = nr_units;
	priv->node_deps = calloc(p->nr_nodes + 1, sizeof(*priv->node_deps));
	priv->metric_deps = calloc(p->nr_metrics + 1, sizeof(*priv->metric_deps));
	err = -ENOMEM;
	if (!unit_group || !why || !priv->node_deps || !priv->metric_deps ||
	    grouper_init(&g, m, o, nr_units + m->nr_events))
		goto out;
	err = m->pmu.software ? 0 : check_alone(&g, needed);
	if (err)
		goto out;
	err = -ENOMEM;
	for (int u = 0; u <= nr_units; u++) {
		if ((u == p->nr_nodes && note_stage(&g, &p->tree)) ||
		    (u == nr_base && note_stage(&g, &p->base)))
			goto out;
		if (u == nr_units)
			break;
		if (m->pmu.software) {
			if (place_software(&g, units[u]))
				goto out;
			unit_group[u] = -1;
			continue;
		}
		unit_group[u] = place_unit(&g, units[u], &why[u]);
		if (unit_group[u] == -2)
			goto out;
	}
	if (note_stage(&g, &p->all) || emit_events(p, &g))
		goto out;
	for (int u = 0; u < nr_units; u++) {
		bool node = u < p->nr_nodes;
		struct plan_deps *d = node ? &priv->node_deps[u] : &priv->metric_deps[u - p->nr_nodes];
		int ctx = unit_group[u] >= 0 ? unit_group[u] : g.nr_groups + u;

		if (make_deps(priv, &g, units[u], unit_group[u], ctx, d))
			goto out;
		if (node) {
			p->nodes[u].group = unit_group[u];
			p->nodes[u].split = why[u] != NULL;
			p->nodes[u].split_reason = why[u];
		} else {
			p->metrics[u - p->nr_nodes].group = unit_group[u];
			p->metrics[u - p->nr_nodes].split = why[u] != NULL;
			p->metrics[u - p->nr_nodes].split_reason = why[u];
		}
	}
	err = 0;
out:
	grouper_release(&g);
	free(unit_group);
	return err;
}

/* --- memoization ------------------------------------------------------------------------- */

/*
 * A node's value is a function of the counts alone when its expression reads no flag and no
 * metric, and every node it computes returns its own value, which holds when that node's
 * value is such a function too and its threshold cannot fail (a failing threshold zeroes the
 * node, and whether it fails can depend on flags). Such a value can be computed once per
 * computation, if the node computations its expression made are replayed in order on every
 * later reference: that is what keeps toplev's flag side effects.
 */
#define MEMO_MAX_CALLS 256

enum { PURE_UNKNOWN, PURE_BUSY, PURE_YES, PURE_NO };

struct purity {
	const struct model *m;
	const double *params;
	unsigned char *state;	/* per model node */
	int *calls;		/* per model node */
};

struct pure_walk {
	struct purity *pu;
	bool pure;
	long calls;
};

static bool node_pure(struct purity *pu, int i);

static int can_fail_ref(void *ctx, enum expr_ref_kind kind, int index)
{
	const struct model *m = ctx;

	if (kind != EXPR_REF_AUX)
		return 0;
	if (expr_divides(m->aux[index].expr))
		return 1;
	return expr_for_each_ref(m->aux[index].expr, NULL, can_fail_ref, ctx);
}

/* Whether evaluating e can fail by itself (aux are inline; nodes it computes cannot fail it). */
static bool can_fail(const struct model *m, const struct expr *e)
{
	return expr_divides(e) || expr_for_each_ref(e, NULL, can_fail_ref, (void *)m);
}

static int pure_ref(void *ctx, enum expr_ref_kind kind, int index)
{
	struct pure_walk *w = ctx;
	const struct model *m = w->pu->m;

	switch (kind) {
	case EXPR_REF_THRESH:
	case EXPR_REF_METRIC:
		w->pure = false;
		return 0;
	case EXPR_REF_AUX:
		return expr_for_each_ref(m->aux[index].expr, w->pu->params, pure_ref, w);
	case EXPR_REF_NODE:
		w->calls++;
		if (!node_pure(w->pu, index) || can_fail(m, m->nodes[index].thresh))
			w->pure = false;
		return 0;
	default:
		return 0;
	}
}

static bool node_pure(struct purity *pu, int i)
{
	struct pure_walk w = { .pu = pu, .pure = true };

	if (pu->state[i] == PURE_UNKNOWN) {
		/* The references are acyclic (the loader checked): BUSY is never met again. */
		pu->state[i] = PURE_BUSY;
		expr_for_each_ref(pu->m->nodes[i].expr, pu->params, pure_ref, &w);
		pu->state[i] = w.pure ? PURE_YES : PURE_NO;
		pu->calls[i] = w.calls > MEMO_MAX_CALLS ? MEMO_MAX_CALLS + 1 : (int)w.calls;
	}
	return pu->state[i] == PURE_YES;
}

static int plan_memo(const struct model *m, struct plan_priv *priv)
{
	struct purity pu = { .m = m, .params = priv->params };
	int i, err = -ENOMEM;

	pu.state = calloc(m->nr_nodes + 1, sizeof(*pu.state));
	pu.calls = calloc(m->nr_nodes + 1, sizeof(*pu.calls));
	priv->memo_calls = calloc(m->nr_nodes + 1, sizeof(*priv->memo_calls));
	priv->memo_at = calloc(m->nr_nodes + 1, sizeof(*priv->memo_at));
	if (!pu.state || !pu.calls || !priv->memo_calls || !priv->memo_at)
		goto out;
	for (i = 0; i < m->nr_nodes; i++) {
		priv->memo_calls[i] = -1;
		if (!node_pure(&pu, i) || pu.calls[i] > MEMO_MAX_CALLS)
			continue;
		priv->memo_calls[i] = pu.calls[i];
		priv->memo_at[i] = priv->memo_total;
		priv->memo_total += pu.calls[i];
	}
	priv->memo = true;
	err = 0;
out:
	free(pu.state);
	free(pu.calls);
	return err;
}

void plan_set_memo(struct plan *p, bool on)
{
	((struct plan_priv *)p->priv)->memo = on;
}

/* --- the plan ----------------------------------------------------------------------------- */

static int check_options(const struct model *m, const struct model_options *o)
{
	if (o->level < 0 || o->reserved_counters < 0) {
		pr_err("model %s: level %d or %d reserved counters is invalid", m->name, o->level,
		       o->reserved_counters);
		return -EINVAL;
	}
	if (o->perf_metrics && m->pmu.pm_leader < 0) {
		pr_err("model %s has no perf-metrics path", m->name);
		return -EINVAL;
	}
	return 0;
}

/* A plan of the tree and of the model metrics whose on[] is set (the default ones among them). */
static int plan_build(const struct model *m, const struct model_options *o, const bool *on,
		      struct plan **pp)
{
	int nr_entities = m->nr_aux + m->nr_nodes + m->nr_metrics;
	struct closure c = { .m = m };
	const uint64_t **units = NULL;
	uint64_t *needed = NULL;
	struct plan_priv *priv;
	struct plan *p;
	int i, k, w, nr_units = 0, nr_base_units = 0, err;

	*pp = NULL;
	err = check_options(m, o);
	if (err)
		return err;
	p = calloc(1, sizeof(*p));
	priv = calloc(1, sizeof(*priv));
	if (!p || !priv) {
		free(p);
		free(priv);
		return -ENOMEM;
	}
	p->model = m;
	p->opts = *o;
	p->priv = priv;
	priv->params[EXPR_PARAM_SMT_ENABLED] = o->smt;
	priv->params[EXPR_PARAM_TOPDOWN_USE_FIXED] = o->perf_metrics;
	priv->params[EXPR_PARAM_SLOTS] = o->slots > 0 ? o->slots : m->pmu.slots;
	priv->params[EXPR_PARAM_CPU_PART] = o->cpu_part;
	priv->params[EXPR_PARAM_CPU_REVISION] = o->cpu_revision;

	err = -ENOMEM;
	c.params = priv->params;
	c.words = (m->nr_events + 63) / 64 + 1;
	c.sets = calloc((size_t)(nr_entities + 1) * c.words, sizeof(*c.sets));
	c.done = calloc(nr_entities + 1, 1);
	needed = calloc(c.words, sizeof(*needed));
	units = calloc(m->nr_nodes + m->nr_metrics + 1, sizeof(*units));
	priv->plan_event = malloc((m->nr_events + 1) * sizeof(*priv->plan_event));
	priv->plan_node = malloc((m->nr_nodes + 1) * sizeof(*priv->plan_node));
	priv->model_node = calloc(m->nr_nodes + 1, sizeof(*priv->model_node));
	priv->model_metric = calloc(m->nr_metrics + 1, sizeof(*priv->model_metric));
	p->nodes = calloc(m->nr_nodes + 1, sizeof(*p->nodes));
	p->metrics = calloc(m->nr_metrics + 1, sizeof(*p->metrics));
	if (!c.sets || !c.done || !needed || !units || !priv->plan_event || !priv->plan_node ||
	    !priv->model_node || !priv->model_metric || !p->nodes || !p->metrics)
		goto out;
	for (i = 0; i < m->nr_events; i++)
		priv->plan_event[i] = -1;

	/* Reported nodes in tree order: a parent is always reported before its children. */
	for (i = 0; i < m->nr_nodes; i++) {
		const struct model_node *n = &m->nodes[i];
		struct plan_node *pn;

		priv->plan_node[i] = -1;
		if (n->level > o->level)
			continue;
		pn = &p->nodes[p->nr_nodes];
		pn->name = n->name;
		pn->full_name = n->full_name;
		pn->level = n->level;
		pn->parent = n->parent >= 0 ? priv->plan_node[n->parent] : -1;
		pn->domain = n->domain;
		pn->area = n->area;
		pn->desc = n->desc;
		pn->maxval = n->has_maxval ? n->maxval : NAN;
		priv->model_node[p->nr_nodes] = i;
		priv->plan_node[i] = p->nr_nodes++;
		close_entity(&c, m->nr_aux + i);
		units[nr_units++] = set_of(&c, m->nr_aux + i);
	}
	/* The default metrics, then those -m adds: the tree's groups and theirs come first. */
	for (k = 0; k < 2; k++) {
		for (i = 0; i < m->nr_metrics; i++) {
			const struct model_metric *mt = &m->metrics[i];
			struct plan_metric *pm = &p->metrics[p->nr_metrics];

			if (mt->is_default != !k || !on[i])
				continue;
			pm->name = mt->name;
			pm->unit = mt->unit;
			pm->desc = mt->desc;
			pm->nr_groups = mt->nr_groups;
			pm->groups = (const char *const *)mt->groups;
			pm->is_default = mt->is_default;
			priv->model_metric[p->nr_metrics++] = i;
			close_entity(&c, m->nr_aux + m->nr_nodes + i);
			units[nr_units++] = set_of(&c, m->nr_aux + m->nr_nodes + i);
		}
		if (!k)
			nr_base_units = nr_units;
	}
	for (i = 0; i < nr_units; i++) {
		for (w = 0; w < c.words; w++)
			needed[w] |= units[i][w];
	}

	/* A formula reading perf-metrics events on the other path is a model error. */
	if (!o->perf_metrics) {
		for (k = 0; k < m->pmu.nr_pm_events; k++) {
			if (!in_set(needed, m->pmu.pm_events[k]))
				continue;
			for (i = 0; i < nr_units; i++) {
				if (in_set(units[i], m->pmu.pm_events[k]))
					break;
			}
			pr_err("model %s: %s '%s' reads perf-metrics event '%s' with perf-metrics "
			       "off",
			       m->name, i < p->nr_nodes ? "node" : "metric",
			       i < p->nr_nodes ? p->nodes[i].full_name
					       : p->metrics[i - p->nr_nodes].name,
			       m->events[m->pmu.pm_events[k]].name);
			err = -EINVAL;
			goto out;
		}
	}

	err = group_events(p, m, o, needed, units, nr_units, nr_base_units);
	if (!err)
		err = plan_memo(m, priv);
out:
	free(c.sets);
	free(c.done);
	free(needed);
	free(units);
	if (err) {
		plan_free(p);
		return err;
	}
	*pp = p;
	return 0;
}

/* Appends name to a comma-separated list (*list NULL at first). */
static int list_add(char **list, const char *name)
{
	size_t at = *list ? strlen(*list) : 0;
	char *l = realloc(*list, at + strlen(name) + 2);

	if (!l)
		return -ENOMEM;
	sprintf(l + at, "%s%s", at ? "," : "", name);
	*list = l;
	return 0;
}

/*
 * Whether the default metrics switched on leave the tree's counting as it is: their groups
 * fit beside the tree's without multiplexing, or, where the tree multiplexes already, they
 * add no group to those the PMU time-shares.
 */
static bool defaults_beside_tree(const struct plan *p)
{
	if (p->tree.multiplexed)
		return p->base.nr_groups == p->tree.nr_groups;
	return !p->base.multiplexed;
}

/*
 * Counting without -m or --metrics: each default metric in the model's order, where it keeps
 * the tree's counting as it is (defaults_beside_tree()); the others are named in
 * defaults_left_out.
 */
static int plan_defaults(const struct model *m, const struct model_options *o, bool *on,
			 struct plan **pp)
{
	char *left = NULL;
	int err;

	err = plan_build(m, o, on, pp);
	if (err || m->pmu.software || defaults_beside_tree(*pp))
		return err;
	plan_free(*pp);
	*pp = NULL;
	for (int i = 0; i < m->nr_metrics; i++)
		on[i] = false;
	for (int i = 0; i < m->nr_metrics; i++) {
		struct plan *p;

		if (!m->metrics[i].is_default)
			continue;
		on[i] = true;
		err = plan_build(m, o, on, &p);
		if (err)
			goto out;
		on[i] = defaults_beside_tree(p);
		plan_free(p);
		if (!on[i] && list_add(&left, m->metrics[i].name)) {
			err = -ENOMEM;
			goto out;
		}
	}
	err = plan_build(m, o, on, pp);
	if (!err) {
		(*pp)->defaults_left_out = left;
		left = NULL;
	}
out:
	free(left);
	return err;
}

/* The group -m counts a metric by when not all fit: its first (toplev's area), else its name. */
static const char *metric_area(const struct model_metric *mt)
{
	return mt->nr_groups ? mt->groups[0] : mt->name;
}

/*
 * -m where every metric needs more than max_events events: the default metrics, then each
 * area (metric_area()) in the model's order whose metrics keep the plan within max_events;
 * the others are named in groups_left_out.
 */
static int plan_areas(const struct model *m, const struct model_options *o, bool *on,
		      struct plan **pp)
{
	int nr_all = (*pp)->nr_events, err = 0;
	bool *tried = calloc(m->nr_metrics + 1, sizeof(*tried));
	bool *was = calloc(m->nr_metrics + 1, sizeof(*was));
	char *left = NULL;

	plan_free(*pp);
	*pp = NULL;
	if (!tried || !was) {
		err = -ENOMEM;
		goto out;
	}
	for (int i = 0; i < m->nr_metrics; i++)
		on[i] = m->metrics[i].is_default;
	for (int i = 0; i < m->nr_metrics; i++) {
		const char *area = metric_area(&m->metrics[i]);
		struct plan *p;
		bool fits;

		if (m->metrics[i].is_default || tried[i])
			continue;
		memcpy(was, on, m->nr_metrics * sizeof(*on));
		for (int j = i; j < m->nr_metrics; j++) {
			if (!m->metrics[j].is_default && !strcmp(metric_area(&m->metrics[j]), area)) {
				on[j] = true;
				tried[j] = true;
			}
		}
		err = plan_build(m, o, on, &p);
		if (err)
			goto out;
		fits = p->nr_events <= o->max_events;
		plan_free(p);
		if (fits)
			continue;
		memcpy(on, was, m->nr_metrics * sizeof(*on));
		if (list_add(&left, area)) {
			err = -ENOMEM;
			goto out;
		}
	}
	err = plan_build(m, o, on, pp);
	if (!err) {
		(*pp)->groups_left_out = left;
		(*pp)->nr_events_all = nr_all;
		left = NULL;
	}
out:
	free(tried);
	free(was);
	free(left);
	return err;
}

int plan_new(const struct model *m, const struct model_options *o, struct plan **pp)
{
	bool *on = calloc(m->nr_metrics + 1, sizeof(*on));
	int err;

	*pp = NULL;
	if (!on)
		return -ENOMEM;
	for (int i = 0; i < m->nr_metrics; i++)
		on[i] = model_metric_selected(m, i, o->metrics, o->metrics_by_name);
	if (!o->metrics && o->spare_tree)
		err = plan_defaults(m, o, on, pp);
	else
		err = plan_build(m, o, on, pp);
	if (!err)
		(*pp)->nr_events_all = (*pp)->nr_events;
	if (!err && o->metrics && !*o->metrics && o->max_events > 0 &&
	    (*pp)->nr_events > o->max_events)
		err = plan_areas(m, o, on, pp);
	free(on);
	return err;
}

int plan_fitting_level(const struct model *m, const struct model_options *o)
{
	struct model_options lo = *o;

	lo.max_events = 0;	/* every metric o selects, none left out */
	for (lo.level = o->level - 1; lo.level >= 1; lo.level--) {
		struct plan *p;
		bool fits;
		int err = plan_new(m, &lo, &p);

		if (err)
			return err;
		fits = p->nr_events <= o->max_events;
		plan_free(p);
		if (fits)
			return lo.level;
	}
	return 0;
}

int plan_node_events(const struct plan *p, int node, const int **events)
{
	const struct plan_priv *priv = p->priv;

	*events = priv->node_deps[node].events;
	return priv->node_deps[node].nr;
}

int plan_node_samples(const struct plan *p, int node)
{
	const struct plan_priv *priv = p->priv;

	return p->model->nodes[priv->model_node[node]].nr_samples;
}

void plan_node_sample(const struct plan *p, int node, int i, struct plan_sample *out)
{
	const struct plan_priv *priv = p->priv;
	const struct model_node *n = &p->model->nodes[priv->model_node[node]];
	const struct model_event *e = &p->model->events[n->sample_events[i]];

	*out = (struct plan_sample){
		.event = e->name,
		.encoding = e->encoding,
		.precise = n->sample_precise[i],
	};
}

int plan_metric_events(const struct plan *p, int metric, const int **events)
{
	const struct plan_priv *priv = p->priv;

	*events = priv->metric_deps[metric].events;
	return priv->metric_deps[metric].nr;
}

void plan_free(struct plan *p)
{
	struct plan_priv *priv;
	int i;

	if (!p)
		return;
	priv = p->priv;
	if (priv) {
		for (i = 0; priv->node_deps && i < p->nr_nodes; i++) {
			free(priv->node_deps[i].events);
			free(priv->node_deps[i].model_events);
		}
		for (i = 0; priv->metric_deps && i < p->nr_metrics; i++) {
			free(priv->metric_deps[i].events);
			free(priv->metric_deps[i].model_events);
		}
		for (i = 0; priv->split_reason && i < priv->nr_split_reasons; i++)
			free(priv->split_reason[i]);
		free(priv->split_reason);
		free(priv->node_deps);
		free(priv->metric_deps);
		free(priv->model_event);
		free(priv->plan_event);
		free(priv->model_node);
		free(priv->plan_node);
		free(priv->model_metric);
		free(priv->memo_calls);
		free(priv->memo_at);
		free(priv);
	}
	free(p->events);
	free(p->nodes);
	free(p->metrics);
	free(p->defaults_left_out);
	free(p->groups_left_out);
	free(p);
}

void plan_warn_uncounted(const struct plan *p)
{
	const struct model *m = p->model;
	struct strbuf names = STRBUF_INIT;

	for (int i = 0; i < m->pmu.nr_zero_events; i++)
		strbuf_addf(&names, "%s%s", i ? ", " : "", m->events[m->pmu.zero_events[i]].name);
	pr_warn("%s all read 0: this PMU does not count them (an emulated PMU such as QEMU's?); "
		"the Top-Down nodes and metrics that read them are not a measurement and are shown "
		"as not counted", names.buf ? names.buf : "the model's stall events");
	strbuf_release(&names);
}
