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
		expr__for_each_ref(m->aux[x].expr, c->params, close_ref, &cc);
	} else if (x < m->nr_aux + m->nr_nodes) {
		const struct model_node *n = &m->nodes[x - m->nr_aux];

		expr__for_each_ref(n->expr, c->params, close_ref, &cc);
		expr__for_each_ref(n->thresh, c->params, close_ref, &cc);
	} else {
		expr__for_each_ref(m->metrics[x - m->nr_aux - m->nr_nodes].expr, c->params,
				   close_ref, &cc);
	}
}

static bool in_set(const uint64_t *set, int e)
{
	return set[e / 64] >> (e % 64) & 1;
}

/* --- grouping ----------------------------------------------------------------------------- */

struct grouper {
	const struct model *m;
	int limit;		/* generic counters per group */
	bool *fixed;		/* per model event */
	int *group;		/* per model event: -1 until placed */
	int *order;		/* model events in the order they were placed */
	int nr_placed;
	int *generic;		/* per group: generic counters used */
	unsigned long long *config1;	/* per model event: its extra register value, or 0 */
	unsigned long long *group_config1;	/* per group: the one its events use, or 0 */
	int nr_groups;
	int first_free;		/* groups before it are the perf-metrics one */
};

static void place(struct grouper *g, int e, int group)
{
	g->group[e] = group;
	g->order[g->nr_placed++] = e;
	if (!g->fixed[e])
		g->generic[group]++;
	if (g->config1[e])
		g->group_config1[group] = g->config1[e];
}

static int new_group(struct grouper *g)
{
	g->generic[g->nr_groups] = 0;
	g->group_config1[g->nr_groups] = 0;
	return g->nr_groups++;
}

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

static bool fits_config1(const struct grouper *g, int k, int e)
{
	return !g->config1[e] || !g->group_config1[k] || g->group_config1[k] == g->config1[e];
}

/* Whether every not yet placed event of set agrees with group k's extra register. */
static bool unit_fits_config1(const struct grouper *g, int k, const uint64_t *set)
{
	for (int e = 0; e < g->m->nr_events; e++)
		if (in_set(set, e) && g->group[e] < 0 && !fits_config1(g, k, e))
			return false;
	return true;
}

/* The unit's own events disagree among themselves: they cannot share any group. */
static bool unit_self_consistent(const struct grouper *g, const uint64_t *set)
{
	unsigned long long v = 0;

	for (int e = 0; e < g->m->nr_events; e++) {
		if (!in_set(set, e) || g->group[e] >= 0 || !g->config1[e])
			continue;
		if (v && v != g->config1[e])
			return false;
		v = g->config1[e];
	}
	return true;
}

/*
 * Places the not yet placed events of one node (or metric) together: in the first group
 * with room for all of them, else in a new group; when they cannot fit in one group at all,
 * one by one, each where it fits (scaling copes with a node read from several groups).
 */
static void place_unit(struct grouper *g, const uint64_t *set)
{
	int e, k, need = 0, any = 0;

	/*
	 * Software events never compete for counters, and grouping them only hurts: read one
	 * by one, the members of a group led by cpu-clock (an hrtimer PMU) report running time
	 * 0 when they belong to the other software PMU (seen on 6.18). Each gets its own.
	 */
	if (g->m->pmu.software) {
		for (e = 0; e < g->m->nr_events; e++)
			if (in_set(set, e) && g->group[e] < 0)
				place(g, e, new_group(g));
		return;
	}

	for (e = 0; e < g->m->nr_events; e++) {
		if (in_set(set, e) && g->group[e] < 0) {
			any = 1;
			need += !g->fixed[e];
		}
	}
	if (!any)
		return;
	if (need <= g->limit && unit_self_consistent(g, set)) {
		for (k = g->first_free; k < g->nr_groups; k++) {
			if (g->generic[k] + need <= g->limit && unit_fits_config1(g, k, set))
				break;
		}
		if (k == g->nr_groups)
			k = new_group(g);
		for (e = 0; e < g->m->nr_events; e++) {
			if (in_set(set, e) && g->group[e] < 0)
				place(g, e, k);
		}
		return;
	}
	for (e = 0; e < g->m->nr_events; e++) {
		if (!in_set(set, e) || g->group[e] >= 0)
			continue;
		for (k = g->first_free; k < g->nr_groups; k++) {
			if ((g->fixed[e] || g->generic[k] < g->limit) && fits_config1(g, k, e))
				break;
		}
		if (k == g->nr_groups)
			k = new_group(g);
		place(g, e, k);
	}
}

static int group_events(struct plan *p, const struct model *m, const struct model_options *o,
			const uint64_t *needed, const uint64_t *const *units, int nr_units)
{
	struct plan_priv *priv = p->priv;
	struct grouper g = { .m = m };
	int i, e, k, err = -ENOMEM;
	bool pm_group = false;

	g.fixed = calloc(m->nr_events + 1, sizeof(*g.fixed));
	g.group = malloc((m->nr_events + 1) * sizeof(*g.group));
	g.order = malloc((m->nr_events + 1) * sizeof(*g.order));
	g.generic = calloc(m->nr_events + 2, sizeof(*g.generic));
	g.config1 = calloc(m->nr_events + 1, sizeof(*g.config1));
	g.group_config1 = calloc(m->nr_events + 2, sizeof(*g.group_config1));
	if (!g.fixed || !g.group || !g.order || !g.generic || !g.config1 || !g.group_config1)
		goto out;
	for (e = 0; e < m->nr_events; e++)
		g.config1[e] = encoding_config1(m->events[e].encoding);
	for (e = 0; e < m->nr_events; e++)
		g.group[e] = -1;
	for (i = 0; i < m->pmu.nr_fixed; i++)
		g.fixed[m->pmu.fixed[i]] = true;

	if (m->pmu.software) {
		g.limit = INT_MAX;
	} else {
		g.limit = (o->smt ? m->pmu.generic_counters_smt : m->pmu.generic_counters) -
			  o->reserved_counters;
		if (g.limit < 0)
			g.limit = 0;
	}

	/* The kernel's perf-metrics events only exist in a group led by the slots event. */
	if (o->perf_metrics) {
		for (i = 0; i < m->pmu.nr_pm_events; i++)
			pm_group |= in_set(needed, m->pmu.pm_events[i]);
	}
	if (pm_group) {
		k = new_group(&g);
		place(&g, m->pmu.pm_leader, k);
		for (i = 0; i < m->pmu.nr_pm_events; i++) {
			if (in_set(needed, m->pmu.pm_events[i]))
				place(&g, m->pmu.pm_events[i], k);
		}
		/* It takes no generic counter, and nothing else joins it. */
		g.generic[k] = 0;
		g.first_free = 1;
	}

	for (e = 0; e < m->nr_events; e++) {
		if (in_set(needed, e) && !g.fixed[e] && g.group[e] < 0 && !g.limit) {
			pr_err("model %s: event '%s' needs a generic counter and none is left "
			       "(%d counters, %d reserved)",
			       m->name, m->events[e].name,
			       o->smt ? m->pmu.generic_counters_smt : m->pmu.generic_counters,
			       o->reserved_counters);
			err = -E2BIG;
			goto out;
		}
	}
	for (i = 0; i < nr_units; i++)
		place_unit(&g, units[i]);

	p->nr_events = g.nr_placed;
	p->nr_groups = g.nr_groups;
	p->events = calloc(g.nr_placed + 1, sizeof(*p->events));
	priv->model_event = calloc(g.nr_placed + 1, sizeof(*priv->model_event));
	if (!p->events || !priv->model_event)
		goto out;
	/* Events of a group consecutive, each group in the order its events were placed. */
	i = 0;
	for (k = 0; k < g.nr_groups; k++) {
		int j;

		for (j = 0; j < g.nr_placed; j++) {
			const struct model_event *ev;

			e = g.order[j];
			if (g.group[e] != k)
				continue;
			ev = &m->events[e];
			p->events[i].name = ev->name;
			p->events[i].encoding = ev->encoding;
			p->events[i].group = k;
			p->events[i].fixed = g.fixed[e];
			priv->model_event[i] = e;
			priv->plan_event[e] = i;
			i++;
		}
	}
	err = 0;
out:
	free(g.fixed);
	free(g.group);
	free(g.order);
	free(g.generic);
	free(g.config1);
	free(g.group_config1);
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
	if (expr__divides(m->aux[index].expr))
		return 1;
	return expr__for_each_ref(m->aux[index].expr, NULL, can_fail_ref, ctx);
}

/* Whether evaluating e can fail by itself (aux are inline; nodes it computes cannot fail it). */
static bool can_fail(const struct model *m, const struct expr *e)
{
	return expr__divides(e) || expr__for_each_ref(e, NULL, can_fail_ref, (void *)m);
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
		return expr__for_each_ref(m->aux[index].expr, w->pu->params, pure_ref, w);
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
		expr__for_each_ref(pu->m->nodes[i].expr, pu->params, pure_ref, &w);
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

void plan__set_memo(struct plan *p, bool on)
{
	((struct plan_priv *)p->priv)->memo = on;
}

/* --- the plan ----------------------------------------------------------------------------- */

static int make_deps(const struct plan_priv *priv, const uint64_t *set, int nr_events,
		     struct plan_deps *d)
{
	int e, n = 0;

	for (e = 0; e < nr_events; e++)
		n += in_set(set, e);
	d->events = calloc(n + 1, sizeof(*d->events));
	if (!d->events)
		return -ENOMEM;
	for (e = 0; e < nr_events; e++) {
		if (in_set(set, e))
			d->events[d->nr++] = priv->plan_event[e];
	}
	return 0;
}

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

int plan__new(const struct model *m, const struct model_options *o, struct plan **pp)
{
	int nr_entities = m->nr_aux + m->nr_nodes + m->nr_metrics;
	struct closure c = { .m = m };
	const uint64_t **units = NULL;
	uint64_t *needed = NULL;
	struct plan_priv *priv;
	struct plan *p;
	int i, k, w, nr_units = 0, err;

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
	for (i = 0; i < m->nr_metrics; i++) {
		p->metrics[i].name = m->metrics[i].name;
		p->metrics[i].unit = m->metrics[i].unit;
		p->metrics[i].desc = m->metrics[i].desc;
		priv->model_metric[i] = i;
		close_entity(&c, m->nr_aux + m->nr_nodes + i);
		units[nr_units++] = set_of(&c, m->nr_aux + m->nr_nodes + i);
	}
	p->nr_metrics = m->nr_metrics;
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

	err = group_events(p, m, o, needed, units, nr_units);
	if (err)
		goto out;

	err = -ENOMEM;
	priv->node_deps = calloc(p->nr_nodes + 1, sizeof(*priv->node_deps));
	priv->metric_deps = calloc(p->nr_metrics + 1, sizeof(*priv->metric_deps));
	if (!priv->node_deps || !priv->metric_deps)
		goto out;
	for (i = 0; i < p->nr_nodes; i++) {
		if (make_deps(priv, units[i], m->nr_events, &priv->node_deps[i]))
			goto out;
	}
	for (i = 0; i < p->nr_metrics; i++) {
		if (make_deps(priv, units[p->nr_nodes + i], m->nr_events, &priv->metric_deps[i]))
			goto out;
	}
	err = plan_memo(m, priv);
out:
	free(c.sets);
	free(c.done);
	free(needed);
	free(units);
	if (err) {
		plan__free(p);
		return err;
	}
	*pp = p;
	return 0;
}

int plan__node_events(const struct plan *p, int node, const int **events)
{
	const struct plan_priv *priv = p->priv;

	*events = priv->node_deps[node].events;
	return priv->node_deps[node].nr;
}

int plan__metric_events(const struct plan *p, int metric, const int **events)
{
	const struct plan_priv *priv = p->priv;

	*events = priv->metric_deps[metric].events;
	return priv->metric_deps[metric].nr;
}

void plan__free(struct plan *p)
{
	struct plan_priv *priv;
	int i;

	if (!p)
		return;
	priv = p->priv;
	if (priv) {
		for (i = 0; priv->node_deps && i < p->nr_nodes; i++)
			free(priv->node_deps[i].events);
		for (i = 0; priv->metric_deps && i < p->nr_metrics; i++)
			free(priv->metric_deps[i].events);
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
	free(p);
}
