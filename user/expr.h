/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The expression language of model files (user/models/README.md, "Expressions"): a small,
 * Python-like language compiled once, with every name resolved to an index, and evaluated
 * with toplev's semantics (a division by zero is an error the caller sees; d_ratio is not).
 */
#ifndef CGTMA_EXPR_H
#define CGTMA_EXPR_H

#include <stdbool.h>
#include <stddef.h>

struct expr;

/* Parameters of a run, names every expression may read. */
enum expr_param {
	EXPR_PARAM_SMT_ENABLED,		/* smt_enabled: 0 or 1 */
	EXPR_PARAM_TOPDOWN_USE_FIXED,	/* topdown_use_fixed: 0 or 1 */
	EXPR_PARAM_INTERVAL_S,		/* interval_s: the interval's length in seconds */
	EXPR_PARAM_CPU_S,		/* cpu_s: the scope's busy CPU time in it, seconds */
	EXPR_PARAM_SLOTS,		/* slots: issue slots per cycle (Arm's #slots) */
	EXPR_PARAM_CPU_PART,		/* cpu_part: an Arm CPU's MIDR part, 0 unknown */
	EXPR_PARAM_CPU_REVISION,	/* cpu_revision: its variant * 16 + revision */
	EXPR_NR_PARAMS
};

/* What a model name stands for; the model's lookup fills it in. */
enum expr_symbol_kind {
	EXPR_SYM_CONSTANT,	/* folded into the expression as a number */
	EXPR_SYM_AUX,		/* evaluated inline: its errors are the caller's */
	EXPR_SYM_NODE,		/* computed, flag included; yields its value */
	EXPR_SYM_METRIC,	/* computed; yields its value */
	EXPR_SYM_EVENT,		/* the event's count */
};

struct expr_symbol {
	enum expr_symbol_kind kind;
	int index;		/* into the model's aux, nodes, metrics or events */
	double value;		/* EXPR_SYM_CONSTANT */
};

struct expr_scope {
	/*
	 * Resolves a model name (constants, aux, nodes, metrics, events, in that order).
	 * Returns 0 and fills *sym, or -ENOENT.
	 */
	int (*lookup)(void *ctx, const char *name, struct expr_symbol *sym);
	void *ctx;
	bool allow_val;		/* a thresh expression: `val` is the node's own value */
	int parent;		/* node index `thresh(parent)` reads, -1 when there is none */
};

/*
 * Compiles src. On error returns -EINVAL (-ENOMEM when out of memory) and writes one line to
 * err: the 1-based position in src and the reason ("position 7: unknown name 'FOO'").
 */
int expr_compile(const char *src, const struct expr_scope *scope, struct expr **ep, char *err,
		  size_t errlen);
void expr_free(struct expr *e);

/* Number of operations in the expression (a measure of its evaluation cost). */
int expr_size(const struct expr *e);
/* Height of its tree (a measure of the stack its evaluation takes). */
int expr_depth(const struct expr *e);
/* Whether it divides ('/', not d_ratio), that is whether its evaluation can fail by itself. */
bool expr_divides(const struct expr *e);

/* Evaluation context. The node and metric callbacks are the caller's (toplev's compute()). */
struct expr_env {
	double params[EXPR_NR_PARAMS];
	double val;			/* `val`, the node's own value, in its thresh */
	const double *events;		/* counts, by model event index */
	const double *retire_latency;	/* retlat(), by model event index */
	const bool *flags;		/* current node flags, by model node index (thresh()) */
	struct expr *const *aux;	/* the model's aux expressions, by index */
	/*
	 * Compute a node (setting its flag) or a metric and return the value. Their own
	 * division errors stay inside them (the value is then 0), so these cannot fail.
	 */
	double (*node)(const struct expr_env *env, int index);
	double (*metric)(const struct expr_env *env, int index);
	void *ctx;			/* the callbacks' */
};

/*
 * Evaluates e. Returns 0 and the value, or -EDOM when a division by zero happened in e or in
 * an aux it reads (not in a node or metric it computes: see expr_env).
 */
int expr_eval(const struct expr *e, const struct expr_env *env, double *out);

/* The truth of a value, as Python's bool(): anything but 0 (NaN is true). */
static inline bool expr_truth(double v)
{
	return v != 0;
}

/* References an expression makes, for dependency analysis. */
enum expr_ref_kind {
	EXPR_REF_AUX,
	EXPR_REF_NODE,		/* a computation of the node */
	EXPR_REF_METRIC,
	EXPR_REF_EVENT,		/* the event's count */
	EXPR_REF_RETLAT,	/* the event's retire latency */
	EXPR_REF_THRESH,	/* the node's flag, read without computing it */
};

typedef int (*expr_ref_fn)(void *ctx, enum expr_ref_kind kind, int index);

/*
 * Calls fn for every reference in e, once per occurrence, in source order; stops at the
 * first non-zero return of fn and returns it. With params NULL every branch is visited;
 * otherwise smt_enabled and topdown_use_fixed are taken from params and constant parts
 * are folded, so that the branch of an `if`, `and` or `or` that those values exclude is
 * skipped (the other parameters are never folded: every branch they choose is kept).
 */
int expr_for_each_ref(const struct expr *e, const double *params, expr_ref_fn fn, void *ctx);

#endif
