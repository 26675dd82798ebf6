// SPDX-License-Identifier: GPL-2.0
/*
 * Computing the Top-Down tree from counts with toplev's semantics (user/models/README.md,
 * "Evaluation"). The flags are the subtle part: in toplev every reference to a node
 * recomputes it and sets its flag from its threshold rule with the flags as they are at that
 * moment, even after the main pass forced that flag false. Those side effects decide which
 * flags are set when siblings propagate and the bottleneck is chosen.
 *
 * So a reference computes the node again, its threshold and the nodes it references
 * included, in toplev's order. What is not redone is the arithmetic of a value that depends
 * on the counts alone (plan.c decides which): its first computation records the node
 * computations its expression made, and later references replay those (flags and all) and
 * reuse the value. A level-3 tree is ~120 node computations but ~40 value evaluations.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model_internal.h"

/* toplev's MAX_ERROR: values outside (-0.05, 1.05) are mismeasured, never flagged. */
#define RATIO_MARGIN 0.05
/* toplev's SIB_THRESH: children closer than this leave the choice at their parent. */
#define SIBLING_MARGIN 0.05

struct node_memo {
	bool done;		/* value and calls are this computation's */
	int ctx;		/* the counts they were computed from (plan_deps.ctx) */
	bool overflow;		/* more calls than plan.c counted: not memoized after all */
	int err;		/* of the value expression */
	double value;
	int nr_calls;
};

struct tma_scratch {
	double *events;		/* per model event: the count */
	double *retlat;		/* per model event: the retire latency */
	double *val;		/* per model node: value of its latest computation */
	/*
	 * Per model node: the value its own computation in the main pass gave, from its group's
	 * counts; what is reported. A node of another group that reads it later computes it again,
	 * from that group's counts, into val.
	 */
	double *own;
	bool *flags;		/* per model node */
	struct node_memo *memo;	/* per model node */
	int *calls;		/* the memoized nodes' lists of computations (plan_priv.memo_at) */
};

struct tma_ctx {
	const struct model *m;
	const struct plan_priv *priv;
	struct tma_scratch *s;
	int recorder;		/* model node whose first evaluation is recording, or -1 */
	int ctx;		/* whose counts s->events holds (plan_deps.ctx), -1: none yet */
};

static double compute_node(const struct expr_env *env, int i);

/* The value expression of node i: evaluated, or replayed from its memo. */
static int node_value(const struct expr_env *env, int i, double *v)
{
	struct tma_ctx *c = env->ctx;
	struct node_memo *mm = &c->s->memo[i];
	int k, err;

	if (!c->priv->memo || c->priv->memo_calls[i] < 0)
		return expr_eval(c->m->nodes[i].expr, env, v);
	if (mm->done && mm->ctx == c->ctx) {
		const int *calls = c->s->calls + c->priv->memo_at[i];

		for (k = 0; k < mm->nr_calls; k++)
			compute_node(env, calls[k]);
		*v = mm->value;
		return mm->err;
	}
	mm->nr_calls = 0;
	mm->overflow = false;
	c->recorder = i;
	err = expr_eval(c->m->nodes[i].expr, env, v);
	/* plan.c's count is an upper bound; should it be wrong, stay correct, just slower */
	mm->done = !mm->overflow;
	mm->ctx = c->ctx;
	mm->err = err;
	mm->value = err ? 0 : *v;
	return err;
}

/* toplev's Node.compute(): a division error anywhere in it makes it 0 with its flag false. */
static double compute_node(const struct expr_env *env, int i)
{
	struct tma_ctx *c = env->ctx;
	const struct model_node *n = &c->m->nodes[i];
	int recorder = c->recorder;
	struct expr_env thresh_env;
	double v, t;
	int err;

	/* A computation made by a value expression being recorded joins its list. */
	if (recorder >= 0) {
		struct node_memo *rm = &c->s->memo[recorder];

		if (rm->nr_calls < c->priv->memo_calls[recorder])
			c->s->calls[c->priv->memo_at[recorder] + rm->nr_calls++] = i;
		else
			rm->overflow = true;
		c->recorder = -1;
	}
	err = node_value(env, i, &v);
	c->recorder = -1;	/* the threshold's computations belong to no list */
	if (err)
		goto error;
	c->s->val[i] = v;
	thresh_env = *env;
	thresh_env.val = v;
	if (expr_eval(n->thresh, &thresh_env, &t))
		goto error;
	c->s->flags[i] = expr_truth(t);
	c->recorder = recorder;
	return v;
error:
	c->s->val[i] = 0;
	c->s->flags[i] = false;
	c->recorder = recorder;
	return 0;
}

/* Metrics have no flag; a division error makes them 0 (toplev's handle_error_metric). */
static double compute_metric(const struct expr_env *env, int i)
{
	struct tma_ctx *c = env->ctx;
	int recorder = c->recorder, err;
	double v;

	/* Values that read metrics are not memoized: nothing here joins a list. */
	c->recorder = -1;
	err = expr_eval(c->m->metrics[i].expr, env, &v);
	c->recorder = recorder;
	return err ? 0 : v;
}

/* Whether every uncounted_if_zero event the plan has was counted and read 0. */
static bool zero_events_read_zero(const struct plan *p, const struct tma_input *in)
{
	const struct plan_priv *priv = p->priv;
	const struct model_pmu *pmu = &p->model->pmu;
	bool any = false;

	for (int i = 0; i < pmu->nr_zero_events; i++) {
		int pe = priv->plan_event[pmu->zero_events[i]];

		if (pe < 0)
			continue;
		if (!in->counted[pe] || in->counts[pe] != 0)
			return false;
		any = true;
	}
	return any;
}

static bool reads_zero_event(const struct model *m, const struct plan_deps *d)
{
	for (int i = 0; i < d->nr; i++)
		for (int k = 0; k < m->pmu.nr_zero_events; k++)
			if (d->model_events[i] == m->pmu.zero_events[k])
				return true;
	return false;
}

static bool deps_counted(const struct plan_deps *d, const bool *counted)
{
	int i;

	for (i = 0; i < d->nr; i++) {
		if (!counted[d->events[i]])
			return false;
	}
	return true;
}

/*
 * A node or metric reads the counts of its own group: with an event counted in several
 * groups, the copy measured beside the unit's other events (toplev ties a node to its group
 * the same way). The nodes it computes read them too. Every one of its events is loaded,
 * even when the group is the one loaded last: units of one group read different events, and
 * an event the last unit did not read still holds another group's copy.
 */
static void use_counts(struct tma_ctx *c, const struct plan_deps *d, const struct tma_input *in)
{
	for (int i = 0; i < d->nr; i++) {
		c->s->events[d->model_events[i]] = in->counts[d->events[i]];
		if (in->retire_latency)
			c->s->retlat[d->model_events[i]] = in->retire_latency[d->events[i]];
	}
	c->ctx = d->ctx;
}

static bool plausible(double v)
{
	return v > -RATIO_MARGIN && v < 1 + RATIO_MARGIN;
}

/* A node the bottleneck search considers below parent cur. */
static bool candidate(const struct plan *p, const struct tma_scratch *s,
		      const struct tma_result *r, int i, int cur)
{
	const struct plan_priv *priv = p->priv;
	int mi = priv->model_node[i];

	return p->nodes[i].parent == cur && r->counted[i] && s->flags[mi] &&
	       !p->model->nodes[mi].overlap;
}

/*
 * toplev's _find_bn(): from the highest flagged level-1 node, descend to the highest flagged
 * child (overlap nodes left out, ties to the first in tree order) until there is none, or
 * the two highest children are within SIBLING_MARGIN of each other. Values are unclamped.
 */
static int find_bottleneck(const struct plan *p, const struct tma_scratch *s,
			   const struct tma_result *r)
{
	const int *model_node = ((const struct plan_priv *)p->priv)->model_node;
	int cur = -1, level = 0, i;

	for (;;) {
		int best = -1, nr = 0;
		double second = -INFINITY;

		for (i = 0; i < p->nr_nodes; i++) {
			if (!candidate(p, s, r, i, cur))
				continue;
			nr++;
			if (best < 0 || s->own[model_node[i]] > s->own[model_node[best]])
				best = i;
		}
		if (best < 0)
			break;
		if (level > 0 && nr > 1) {
			for (i = 0; i < p->nr_nodes; i++) {
				if (i != best && candidate(p, s, r, i, cur) &&
				    s->own[model_node[i]] > second)
					second = s->own[model_node[i]];
			}
			if (s->own[model_node[best]] - second <= SIBLING_MARGIN)
				break;
		}
		cur = best;
		level++;
	}
	if (cur < 0 || !r->above[cur])
		return -1;
	return cur;
}

int tma_compute(const struct plan *p, const struct tma_input *in, struct tma_result *r)
{
	const struct plan_priv *priv = p->priv;
	const struct model *m = p->model;
	struct tma_scratch *s = r->scratch;
	struct tma_ctx ctx = { .m = m, .priv = priv, .s = s, .recorder = -1, .ctx = -1 };
	struct expr_env env = {
		.events = s->events,
		.retire_latency = s->retlat,
		.flags = s->flags,
		.aux = m->aux_exprs,
		.node = compute_node,
		.metric = compute_metric,
		.ctx = &ctx,
	};
	bool all_counted = true;
	int i, k;

	memcpy(env.params, priv->params, sizeof(env.params));
	env.params[EXPR_PARAM_INTERVAL_S] = in->interval_s;
	env.params[EXPR_PARAM_CPU_S] = in->cpu_s;

	/* Events outside the plan are never read: the plan holds every formula's closure. */
	for (i = 0; i < m->nr_events; i++) {
		s->events[i] = 0;
		s->retlat[i] = m->events[i].retire_latency;
	}
	for (i = 0; i < p->nr_events; i++) {
		int e = priv->model_event[i];

		s->events[e] = in->counts[i];
		if (in->retire_latency)
			s->retlat[e] = in->retire_latency[i];
		all_counted &= in->counted[i];
	}
	for (i = 0; i < m->nr_nodes; i++) {
		s->flags[i] = false;
		s->val[i] = 0;
		s->own[i] = 0;
		s->memo[i].done = false;
	}

	r->uncounted = zero_events_read_zero(p, in);

	/* The main pass, in tree order. */
	for (i = 0; i < p->nr_nodes; i++) {
		int mi = priv->model_node[i];

		r->counted[i] = all_counted || deps_counted(&priv->node_deps[i], in->counted);
		if (r->uncounted && reads_zero_event(m, &priv->node_deps[i]))
			r->counted[i] = false;
		if (!r->counted[i])
			continue;
		use_counts(&ctx, &priv->node_deps[i], in);
		compute_node(&env, mi);
		s->own[mi] = s->val[mi];
		if (!plausible(s->own[mi]))
			s->flags[mi] = false;
	}

	/* Sibling propagation, once, in tree order: a flag set here propagates further on. */
	for (i = 0; i < p->nr_nodes; i++) {
		const struct model_node *n = &m->nodes[priv->model_node[i]];

		if (!r->counted[i] || !s->flags[priv->model_node[i]])
			continue;
		for (k = 0; k < n->nr_siblings; k++) {
			int sib = n->siblings[k], ps = priv->plan_node[sib];

			if (ps >= 0 && !r->counted[ps])
				continue;
			s->flags[sib] = true;
		}
	}

	for (i = 0; i < p->nr_nodes; i++) {
		const struct model_node *n = &m->nodes[priv->model_node[i]];
		double v = s->own[priv->model_node[i]];

		if (!r->counted[i]) {
			r->value[i] = NAN;
			r->above[i] = false;
			continue;
		}
		r->above[i] = s->flags[priv->model_node[i]] && plausible(v);
		/* Python's min(v, maxval): v unless maxval is strictly smaller. */
		r->value[i] = n->has_maxval && n->maxval < v ? n->maxval : v;
	}
	r->bottleneck = find_bottleneck(p, s, r);

	/* Metrics last: the nodes they compute can no longer change what was reported. */
	for (i = 0; i < p->nr_metrics; i++) {
		r->metric_counted[i] =
			all_counted || deps_counted(&priv->metric_deps[i], in->counted);
		/* Arm's stall rates under QEMU: zeros from events it does not count */
		if (r->uncounted && reads_zero_event(m, &priv->metric_deps[i]))
			r->metric_counted[i] = false;
		if (r->metric_counted[i])
			use_counts(&ctx, &priv->metric_deps[i], in);
		r->metric[i] = r->metric_counted[i] ? compute_metric(&env, priv->model_metric[i])
						    : NAN;
	}
	return 0;
}

int tma_result_init(struct tma_result *r, const struct plan *p)
{
	const struct plan_priv *priv = p->priv;
	const struct model *m = p->model;
	struct tma_scratch *s;

	memset(r, 0, sizeof(*r));
	r->bottleneck = -1;
	r->value = calloc(p->nr_nodes + 1, sizeof(*r->value));
	r->counted = calloc(p->nr_nodes + 1, sizeof(*r->counted));
	r->above = calloc(p->nr_nodes + 1, sizeof(*r->above));
	r->metric = calloc(p->nr_metrics + 1, sizeof(*r->metric));
	r->metric_counted = calloc(p->nr_metrics + 1, sizeof(*r->metric_counted));
	s = calloc(1, sizeof(*s));
	r->scratch = s;
	if (s) {
		s->events = calloc(m->nr_events + 1, sizeof(*s->events));
		s->retlat = calloc(m->nr_events + 1, sizeof(*s->retlat));
		s->val = calloc(m->nr_nodes + 1, sizeof(*s->val));
		s->own = calloc(m->nr_nodes + 1, sizeof(*s->own));
		s->flags = calloc(m->nr_nodes + 1, sizeof(*s->flags));
		s->memo = calloc(m->nr_nodes + 1, sizeof(*s->memo));
		s->calls = calloc(priv->memo_total + 1, sizeof(*s->calls));
	}
	if (!r->value || !r->counted || !r->above || !r->metric || !r->metric_counted || !s ||
	    !s->events || !s->retlat || !s->val || !s->own || !s->flags || !s->memo || !s->calls) {
		tma_result_release(r);
		return -ENOMEM;
	}
	return 0;
}

void tma_result_release(struct tma_result *r)
{
	struct tma_scratch *s = r->scratch;

	if (s) {
		free(s->events);
		free(s->retlat);
		free(s->val);
		free(s->own);
		free(s->flags);
		free(s->memo);
		free(s->calls);
		free(s);
	}
	free(r->value);
	free(r->counted);
	free(r->above);
	free(r->metric);
	free(r->metric_counted);
	memset(r, 0, sizeof(*r));
	r->bottleneck = -1;
}
