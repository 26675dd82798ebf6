// SPDX-License-Identifier: GPL-2.0
/*
 * The expression language: precedence and associativity as in Python, toplev's division
 * errors and short circuits, name resolution, the parse errors, and the static walk that
 * folds smt_enabled/topdown_use_fixed.
 */
#include <errno.h>
#include <math.h>

#include "expr.h"
#include "test.h"

/* A small world for names: what a model's lookup would give. */
static const struct {
	const char *name;
	enum expr_symbol_kind kind;
	int index;
	double value;
} world[] = {
	{ "K2", EXPR_SYM_CONSTANT, 0, 2 },
	{ "EV_A", EXPR_SYM_EVENT, 0, 0 },
	{ "EV_Z", EXPR_SYM_EVENT, 1, 0 },
	{ "cpu-clock", EXPR_SYM_EVENT, 2, 0 },
	{ "UOPS_RETIRED.MS:c1:e1", EXPR_SYM_EVENT, 3, 0 },
	{ "EV_NAN", EXPR_SYM_EVENT, 4, 0 },
	{ "de_no_dispatch_per_slot.no_ops_from_frontend:cmask=6", EXPR_SYM_EVENT, 5, 0 },
	{ "AUX_OK", EXPR_SYM_AUX, 0, 0 },
	{ "AUX_DIV", EXPR_SYM_AUX, 1, 0 },
	{ "N0", EXPR_SYM_NODE, 0, 0 },
	{ "N1", EXPR_SYM_NODE, 1, 0 },
	{ "M0", EXPR_SYM_METRIC, 0, 0 },
};

static double events[6] = { 10, 0, 5, 7, NAN, 3 };
static double retlat[6] = { 1.5, 0, 0, 0, 0, 0 };
static bool flags[2] = { true, false };
static struct expr *aux[2];
static int node_calls[2];

static int lookup(void *ctx, const char *name, struct expr_symbol *sym)
{
	size_t i;

	for (i = 0; i < sizeof(world) / sizeof(world[0]); i++) {
		if (!strcmp(world[i].name, name)) {
			sym->kind = world[i].kind;
			sym->index = world[i].index;
			sym->value = world[i].value;
			return 0;
		}
	}
	return -ENOENT;
}

static double node_cb(const struct expr_env *env, int i)
{
	node_calls[i]++;
	return i == 0 ? 0.25 : 0.75;
}

static double metric_cb(const struct expr_env *env, int i)
{
	return 42;
}

static const struct expr_scope thresh_scope = {
	.lookup = lookup, .allow_val = true, .parent = 1,
};
static const struct expr_scope value_scope = {
	.lookup = lookup, .allow_val = false, .parent = -1,
};

static struct expr_env env = {
	.params = { [EXPR_PARAM_SMT_ENABLED] = 1, [EXPR_PARAM_TOPDOWN_USE_FIXED] = 0,
		    [EXPR_PARAM_INTERVAL_S] = 2 },
	.val = 0.5,
	.events = events,
	.retire_latency = retlat,
	.flags = flags,
	.aux = aux,
	.node = node_cb,
	.metric = metric_cb,
};

/* Compiles and evaluates src; returns the evaluation's error, -100 when it does not compile. */
static int run(const char *src, double *out)
{
	char msg[256];
	struct expr *e;
	int err;

	*out = NAN;
	err = expr_compile(src, &thresh_scope, &e, msg, sizeof(msg));
	CHECK(!err, "'%s' does not compile: %s", src, msg);
	if (err)
		return -100;
	err = expr_eval(e, &env, out);
	expr_free(e);
	return err;
}

static const struct {
	const char *src;
	double want;
} values[] = {
	/* arithmetic and its precedence */
	{ "1 + 2 * 3", 7 },
	{ "(1 + 2) * 3", 9 },
	{ "2 - 3 - 4", -5 },
	{ "8 / 4 / 2", 1 },
	{ "-2 * 3", -6 },
	{ "- 2 - -3", 1 },
	{ "--2", 2 },
	{ "-K2 * K2", -4 },
	{ "2 * -3 + 1", -5 },
	{ "1e3", 1000 },
	{ ".5 + 1.5e-1", 0.65 },
	{ "6.", 6 },
	{ "True + True + False", 2 },
	/* comparisons, no chains */
	{ "1 < 2", 1 },
	{ "2 <= 2", 1 },
	{ "1 > 2", 0 },
	{ "2 >= 3", 0 },
	{ "1 + 1 == 2", 1 },
	{ "1 != 1", 0 },
	/* not is below comparison, and below and/or in Python's order */
	{ "not 1 == 2", 1 },
	{ "not 0 and 0", 0 },
	{ "1 or 0 and 0", 1 },
	{ "(1 or 0) and 0", 0 },
	{ "not not 3", 1 },
	/* and/or give 0 or 1 */
	{ "0 or 5", 1 },
	{ "3 and 4", 1 },
	{ "2 > 1 and 3", 1 },
	/* the conditional is lowest and right-associative */
	{ "1 if 0 else 2", 2 },
	{ "1 + 1 if 0 else 5", 5 },
	{ "1 if 1 else 2 if 0 else 3", 1 },
	{ "0 if 0 else 2 if 0 else 3", 3 },
	{ "(1 if 0 else 2) * 10", 20 },
	/* short circuits: the branch not taken is not evaluated, division included */
	{ "0 and 1 / 0", 0 },
	{ "1 or 1 / 0", 1 },
	{ "5 if 1 else 1 / 0", 5 },
	{ "1 / 0 if 0 else 7", 7 },
	{ "7 if EV_Z == 0 else 1 / EV_Z", 7 },
	/* functions */
	{ "min(3, 1, 2)", 1 },
	{ "max(1, 3, 2)", 3 },
	{ "max(0, 1 - 3)", 0 },
	{ "min (2, 5)", 2 },
	{ "abs(-2.5)", 2.5 },
	{ "d_ratio(6, 3)", 2 },
	{ "d_ratio(6, EV_Z)", 0 },
	{ "d_ratio(6, -0.0 * 1)", 0 },
	/* names */
	{ "EV_A + K2", 12 },
	{ "\"cpu-clock\" * 2", 10 },
	{ "UOPS_RETIRED.MS:c1:e1", 7 },
	{ "de_no_dispatch_per_slot.no_ops_from_frontend:cmask=6 * 2", 6 },
	{ "smt_enabled + topdown_use_fixed * 10 + interval_s * 100", 201 },
	{ "val * 2", 1 },
	{ "thresh(parent) * 10 + thresh(N0)", 1 },
	{ "retlat(EV_A) * EV_A", 15 },
	{ "AUX_OK", 5 },
	{ "N0 + N1", 1 },
	{ "M0 - 2", 40 },
	/* Python's min/max: a NaN first stays, a NaN later is never larger or smaller */
	{ "max(1, EV_NAN)", 1 },
	{ "min(1, EV_NAN)", 1 },
	/* NaN is true, as in Python */
	{ "1 if EV_NAN else 2", 1 },
	{ "not EV_NAN", 0 },
};

static void test_values(void)
{
	size_t i;

	for (i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
		double v;
		int err = run(values[i].src, &v);

		CHECK(err == 0, "'%s': error %d", values[i].src, err);
		CHECK(fabs(v - values[i].want) < 1e-12, "'%s' = %.17g, want %.17g", values[i].src,
		      v, values[i].want);
	}
}

static void test_nan_and_errors(void)
{
	double v;

	CHECK_INT(run("max(EV_NAN, 1)", &v), 0);
	CHECK(isnan(v), "max(NaN, 1) is NaN in Python, got %g", v);
	CHECK_INT(run("EV_NAN == EV_NAN", &v), 0);
	CHECK_NEAR(v, 0.0, 0.0);

	/* division by zero, either sign, is an error; in an aux too, which is inline */
	CHECK_INT(run("1 / 0", &v), -EDOM);
	CHECK_INT(run("1 / (0 * -1)", &v), -EDOM);
	CHECK_INT(run("EV_A / EV_Z + 1", &v), -EDOM);
	CHECK_INT(run("AUX_DIV + 1", &v), -EDOM);
	CHECK_INT(run("0 / 0", &v), -EDOM);
	/* 0/x is fine, and so is x/NaN (no exception in Python either) */
	CHECK_INT(run("0 / 5", &v), 0);
	CHECK_INT(run("1 / EV_NAN", &v), 0);

	/* a node referenced is computed each time it is referenced, as toplev's compute() */
	node_calls[0] = node_calls[1] = 0;
	CHECK_INT(run("N0 + N0 * N1", &v), 0);
	CHECK_INT(node_calls[0], 2);
	CHECK_INT(node_calls[1], 1);
	node_calls[0] = 0;
	CHECK_INT(run("1 if 1 else N0", &v), 0);
	CHECK_INT(node_calls[0], 0);
}

static const struct {
	const char *src;
	bool thresh;		/* compile as a thresh expression */
	const char *msg;	/* the error, in full */
} errors[] = {
	{ "", true, "position 1: empty expression" },
	{ "   ", true, "position 4: empty expression" },
	{ "1 +", true, "position 4: expected a value, found 'end of expression'" },
	{ "1 2", true, "position 3: unexpected '2'" },
	{ "foo + 1", true, "position 1: unknown name 'foo'" },
	{ "1 + (2 * 3", true, "position 11: expected ')', found 'end of expression'" },
	{ "(1 + 2))", true, "position 8: unexpected ')'" },
	{ "1 < 2 < 3", true, "position 7: chained comparisons are not supported" },
	{ "1 if 2", true, "position 7: expected 'else', found 'end of expression'" },
	{ "1 ? 2", true, "position 3: unexpected character '?'" },
	{ "1 = 2", true, "position 3: unexpected character '='" },
	{ "1abc", true, "position 1: malformed number" },
	{ "1e+", true, "position 1: malformed number" },
	{ "EV_A:", true, "position 5: empty ':' modifier" },
	{ "\"cpu-clock", true, "position 1: unterminated quoted name" },
	{ "\"\" + 1", true, "position 1: empty quoted name" },
	{ "\"nope\"", true, "position 1: unknown name 'nope'" },
	{ "bogus(1)", true, "position 1: unknown function 'bogus'" },
	{ "max(1)", true, "position 1: max() takes at least 2 arguments" },
	{ "abs(1, 2)", true, "position 1: abs() takes 1 argument" },
	{ "d_ratio(1)", true, "position 1: d_ratio() takes 2 arguments" },
	{ "d_ratio(1, 2, 3)", true, "position 1: d_ratio() takes 2 arguments" },
	{ "max(1, 2", true, "position 9: expected ')' or ',', found 'end of expression'" },
	{ "thresh(EV_A)", true, "position 8: thresh() takes a node, 'EV_A' is not one" },
	{ "thresh(1)", true, "position 8: thresh() takes a name, found '1'" },
	{ "retlat(N0)", true, "position 8: retlat() takes an event, 'N0' is not one" },
	{ "thresh(parent)", false, "position 8: thresh(parent) where there is no parent" },
	{ "val > 1", false, "position 1: 'val' is only defined in a thresh expression" },
	{ "1 + \x01", true, "position 5: unexpected byte 0x01" },
	{ "smt_enabled(1)", true, "position 1: unknown function 'smt_enabled'" },
};

static void test_errors(void)
{
	size_t i;

	for (i = 0; i < sizeof(errors) / sizeof(errors[0]); i++) {
		struct expr *e = (struct expr *)1;
		char msg[256];
		const char *got = msg;
		int err;

		err = expr_compile(errors[i].src, errors[i].thresh ? &thresh_scope : &value_scope,
				    &e, msg, sizeof(msg));
		CHECK(err == -EINVAL, "'%s' compiled (%d)", errors[i].src, err);
		CHECK(e == NULL, "'%s': expression returned on error", errors[i].src);
		CHECK_STR(got, errors[i].msg);
	}
}

/* The evaluation stack is bounded whatever the input: deep nesting is refused. */
static void test_depth(void)
{
	char src[4096], msg[256];
	struct expr *e;
	int i, n = 0;

	for (i = 0; i < 300; i++)
		src[n++] = '(';
	src[n++] = '1';
	for (i = 0; i < 300; i++)
		src[n++] = ')';
	src[n] = 0;
	CHECK_INT(expr_compile(src, &value_scope, &e, msg, sizeof(msg)), -EINVAL);
	CHECK(strstr(msg, "nested more than 200 deep") != NULL, "%s", msg);

	/* a long sum is a deep tree too */
	n = 0;
	for (i = 0; i < 400; i++)
		n += sprintf(src + n, "1+");
	sprintf(src + n, "1");
	CHECK_INT(expr_compile(src, &value_scope, &e, msg, sizeof(msg)), -EINVAL);
	CHECK(strstr(msg, "nested more than 200 deep") != NULL, "%s", msg);

	n = 0;
	for (i = 0; i < 300; i++)
		src[n++] = '-';
	sprintf(src + n, "1");
	CHECK_INT(expr_compile(src, &value_scope, &e, msg, sizeof(msg)), -EINVAL);

	/* within the bound it works, and reports its size and depth */
	n = 0;
	for (i = 0; i < 150; i++)
		n += sprintf(src + n, "1+");
	sprintf(src + n, "1");
	CHECK_INT(expr_compile(src, &value_scope, &e, msg, sizeof(msg)), 0);
	CHECK_INT(expr_size(e), 301);
	CHECK_INT(expr_depth(e), 151);
	expr_free(e);
}

struct refs {
	int n;
	char seen[16][16];
};

static int record_ref(void *ctx, enum expr_ref_kind kind, int index)
{
	static const char *const kinds[] = { "aux", "node", "metric", "event", "retlat", "thresh" };
	struct refs *r = ctx;

	if (r->n < 16)
		snprintf(r->seen[r->n++], sizeof(r->seen[0]), "%s%d", kinds[kind], index);
	return 0;
}

static const char *refs_of(const char *src, const double *params, char *buf, size_t size)
{
	struct refs r = { 0 };
	char msg[200];
	struct expr *e;
	size_t len = 0;
	int i;

	buf[0] = 0;
	if (expr_compile(src, &thresh_scope, &e, msg, sizeof(msg))) {
		snprintf(buf, size, "error: %s", msg);
		return buf;
	}
	expr_for_each_ref(e, params, record_ref, &r);
	expr_free(e);
	for (i = 0; i < r.n && len < size; i++)
		len += snprintf(buf + len, size - len, "%s%s", i ? " " : "", r.seen[i]);
	return buf;
}

static void test_refs(void)
{
	static const double smt_fixed[EXPR_NR_PARAMS] = { 1, 1, 0 };
	static const double none[EXPR_NR_PARAMS] = { 0, 0, 0 };
	char buf[256];

	/* every branch without params, each occurrence, in source order */
	CHECK_STR(refs_of("EV_A if smt_enabled else N0 + N0", NULL, buf, sizeof(buf)),
		  "event0 node0 node0");
	CHECK_STR(refs_of("AUX_OK + M0 * retlat(EV_Z) + thresh(N1)", NULL, buf, sizeof(buf)),
		  "aux0 metric0 retlat1 thresh1");
	/* with params: the branch the configuration excludes is not visited */
	CHECK_STR(refs_of("EV_A if smt_enabled else N0", smt_fixed, buf, sizeof(buf)), "event0");
	CHECK_STR(refs_of("EV_A if smt_enabled else N0", none, buf, sizeof(buf)), "node0");
	CHECK_STR(refs_of("EV_A if not topdown_use_fixed and K2 > 1 else EV_Z", smt_fixed, buf,
			  sizeof(buf)),
		  "event1");
	CHECK_STR(refs_of("topdown_use_fixed and EV_A", none, buf, sizeof(buf)), "");
	CHECK_STR(refs_of("topdown_use_fixed or EV_A", none, buf, sizeof(buf)), "event0");
	CHECK_STR(refs_of("smt_enabled or EV_A", smt_fixed, buf, sizeof(buf)), "");
	/* interval_s is a run-time value: never folded */
	CHECK_STR(refs_of("EV_A if interval_s else EV_Z", none, buf, sizeof(buf)),
		  "event0 event1");
	/* a division by zero is a run-time error, not a constant */
	CHECK_STR(refs_of("EV_A if 1 / (smt_enabled - 1) else EV_Z", smt_fixed, buf, sizeof(buf)),
		  "event0 event1");
	CHECK_STR(refs_of("EV_A if d_ratio(1, smt_enabled - 1) else EV_Z", smt_fixed, buf,
			  sizeof(buf)),
		  "event1");
	CHECK_STR(refs_of("(EV_A if smt_enabled else EV_Z) if max(topdown_use_fixed, 0) else N1",
			  smt_fixed, buf, sizeof(buf)),
		  "event0");
}

int main(void)
{
	char msg[256];

	if (expr_compile("EV_A / 2", &value_scope, &aux[0], msg, sizeof(msg)) ||
	    expr_compile("1 / EV_Z", &value_scope, &aux[1], msg, sizeof(msg))) {
		printf("not ok - aux do not compile: %s\n", msg);
		return 1;
	}
	test_values();
	test_nan_and_errors();
	test_errors();
	test_depth();
	test_refs();
	expr_free(aux[0]);
	expr_free(aux[1]);
	return test_done("expr");
}
