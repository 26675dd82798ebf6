// SPDX-License-Identifier: GPL-2.0
/*
 * Expressions of model files: a tokenizer, a recursive-descent parser with Python's
 * precedence, a tree evaluator and the static walks the model and the plan need.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "expr.h"

/*
 * Evaluation recurses along the tree: bounding its depth bounds the stack an expression
 * can take, whatever the input (a sum of 10000 terms is a tree 10000 deep).
 */
#define EXPR_MAX_DEPTH 200

enum expr_op {
	OP_NUM,
	OP_PARAM,
	OP_VAL,
	OP_AUX,
	OP_NODE,
	OP_METRIC,
	OP_EVENT,
	OP_RETLAT,
	OP_THRESH,
	OP_NEG,
	OP_NOT,
	OP_ABS,
	OP_ADD,
	OP_SUB,
	OP_MUL,
	OP_DIV,
	OP_LT,
	OP_LE,
	OP_GT,
	OP_GE,
	OP_EQ,
	OP_NE,
	OP_AND,
	OP_OR,
	OP_MIN,
	OP_MAX,
	OP_D_RATIO,
	OP_IF,		/* a if b else c */
};

struct expr_node {
	enum expr_op op;
	int a, b, c;	/* operands: indices into expr->nodes */
	int index;	/* OP_PARAM, OP_AUX, OP_NODE, OP_METRIC, OP_EVENT, OP_RETLAT, OP_THRESH */
	int depth;	/* height of the subtree */
	double num;	/* OP_NUM */
};

struct expr {
	int nr;
	int root;
	struct expr_node *nodes;
};

/* --- tokenizer ---------------------------------------------------------------------------- */

enum tok {
	T_END,
	T_NUM,
	T_NAME,
	T_QNAME,	/* "quoted-name" */
	T_LPAREN,
	T_RPAREN,
	T_COMMA,
	T_PLUS,
	T_MINUS,
	T_STAR,
	T_SLASH,
	T_LT,
	T_LE,
	T_GT,
	T_GE,
	T_EQ,
	T_NE,
	T_IF,
	T_ELSE,
	T_AND,
	T_OR,
	T_NOT,
	T_TRUE,
	T_FALSE,
};

struct parser {
	const char *src;
	size_t pos;		/* where the tokenizer continues */
	enum tok tok;		/* the current token */
	size_t tok_start;
	size_t tok_len;		/* of the text, quotes excluded for T_QNAME */
	double num;
	const struct expr_scope *scope;
	struct expr *e;
	int alloc;
	int err;
	char *errbuf;
	size_t errlen;
};

static void perr(struct parser *p, size_t pos, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void perr(struct parser *p, size_t pos, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (p->err)
		return;
	p->err = -EINVAL;
	if (!p->errlen)
		return;
	n = snprintf(p->errbuf, p->errlen, "position %zu: ", pos + 1);
	if (n < 0 || (size_t)n >= p->errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(p->errbuf + n, p->errlen - n, fmt, ap);
	va_end(ap);
}

static void perr_nomem(struct parser *p)
{
	if (p->err)
		return;
	p->err = -ENOMEM;
	if (p->errlen)
		snprintf(p->errbuf, p->errlen, "out of memory");
}

static bool is_alpha(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool is_name_char(char c)
{
	return is_alpha(c) || is_digit(c) || c == '.';
}

static bool is_modifier_char(char c)
{
	return is_alpha(c) || is_digit(c) || c == '=';
}

/* Copies at most 40 characters of the token for a message, control characters replaced. */
static const char *tok_text(const struct parser *p, char *buf, size_t size)
{
	size_t i, n = p->tok_len;

	if (p->tok == T_END)
		return "end of expression";
	if (n > 40)
		n = 40;
	if (n >= size)
		n = size - 1;
	for (i = 0; i < n; i++) {
		char c = p->src[p->tok_start + (p->tok == T_QNAME) + i];

		buf[i] = (c >= 0x20 && c < 0x7f) ? c : '?';
	}
	buf[n] = 0;
	return buf;
}

static const struct {
	const char *word;
	enum tok tok;
} keywords[] = {
	{ "if", T_IF },	    { "else", T_ELSE }, { "and", T_AND },	{ "or", T_OR },
	{ "not", T_NOT },   { "True", T_TRUE }, { "False", T_FALSE },
};

static void lex_number(struct parser *p)
{
	const char *s = p->src;
	size_t i = p->pos;
	char buf[64];
	char *end;

	while (is_digit(s[i]))
		i++;
	if (s[i] == '.') {
		i++;
		while (is_digit(s[i]))
			i++;
	}
	if (s[i] == 'e' || s[i] == 'E') {
		size_t j = i + 1;

		if (s[j] == '+' || s[j] == '-')
			j++;
		if (!is_digit(s[j])) {
			perr(p, p->tok_start, "malformed number");
			return;
		}
		while (is_digit(s[j]))
			j++;
		i = j;
	}
	if (is_name_char(s[i])) {
		perr(p, p->tok_start, "malformed number");
		return;
	}
	if (i - p->pos >= sizeof(buf)) {
		perr(p, p->tok_start, "number too long");
		return;
	}
	/* The text was checked above: strtod sees only digits, a dot and an exponent. */
	memcpy(buf, s + p->pos, i - p->pos);
	buf[i - p->pos] = 0;
	p->num = strtod(buf, &end);
	p->tok = T_NUM;
	p->tok_len = i - p->pos;
	p->pos = i;
}

static void lex_name(struct parser *p)
{
	const char *s = p->src;
	size_t i = p->pos, k;

	while (is_name_char(s[i]))
		i++;
	while (s[i] == ':') {
		size_t j = i + 1;

		while (is_modifier_char(s[j]))
			j++;
		if (j == i + 1) {
			perr(p, i, "empty ':' modifier");
			return;
		}
		i = j;
	}
	p->tok = T_NAME;
	p->tok_len = i - p->pos;
	for (k = 0; k < sizeof(keywords) / sizeof(keywords[0]); k++) {
		if (strlen(keywords[k].word) == p->tok_len &&
		    !memcmp(keywords[k].word, s + p->pos, p->tok_len)) {
			p->tok = keywords[k].tok;
			break;
		}
	}
	p->pos = i;
}

static void lex_quoted(struct parser *p)
{
	const char *s = p->src;
	size_t i = p->pos + 1;

	while (s[i] && s[i] != '"') {
		if ((unsigned char)s[i] < 0x20) {
			perr(p, i, "control character in a quoted name");
			return;
		}
		i++;
	}
	if (!s[i]) {
		perr(p, p->tok_start, "unterminated quoted name");
		return;
	}
	if (i == p->pos + 1) {
		perr(p, p->tok_start, "empty quoted name");
		return;
	}
	p->tok = T_QNAME;
	p->tok_len = i - p->pos - 1;
	p->pos = i + 1;
}

static void next(struct parser *p)
{
	const char *s = p->src;
	char c, c1;

	if (p->err) {
		p->tok = T_END;
		return;
	}
	while (s[p->pos] == ' ' || s[p->pos] == '\t' || s[p->pos] == '\n' || s[p->pos] == '\r')
		p->pos++;
	p->tok_start = p->pos;
	p->tok_len = 1;
	c = s[p->pos];
	c1 = c ? s[p->pos + 1] : 0;
	if (!c) {
		p->tok = T_END;
		p->tok_len = 0;
		return;
	}
	if (is_digit(c) || (c == '.' && is_digit(c1))) {
		lex_number(p);
		return;
	}
	if (is_alpha(c)) {
		lex_name(p);
		return;
	}
	if (c == '"') {
		lex_quoted(p);
		return;
	}
	p->pos++;
	switch (c) {
	case '(': p->tok = T_LPAREN; return;
	case ')': p->tok = T_RPAREN; return;
	case ',': p->tok = T_COMMA; return;
	case '+': p->tok = T_PLUS; return;
	case '-': p->tok = T_MINUS; return;
	case '*': p->tok = T_STAR; return;
	case '/': p->tok = T_SLASH; return;
	case '<':
	case '>':
	case '=':
	case '!':
		if (c1 == '=') {
			p->pos++;
			p->tok_len = 2;
			p->tok = c == '<' ? T_LE : c == '>' ? T_GE : c == '=' ? T_EQ : T_NE;
			return;
		}
		if (c == '<' || c == '>') {
			p->tok = c == '<' ? T_LT : T_GT;
			return;
		}
		break;
	}
	if ((unsigned char)c >= 0x20 && (unsigned char)c < 0x7f)
		perr(p, p->tok_start, "unexpected character '%c'", c);
	else
		perr(p, p->tok_start, "unexpected byte 0x%02x", (unsigned char)c);
	p->tok = T_END;
}

/* --- parser ------------------------------------------------------------------------------- */

static int add_node(struct parser *p, enum expr_op op, int a, int b, int c, size_t pos)
{
	struct expr *e = p->e;
	struct expr_node *n;
	int depth = 0;

	if (p->err)
		return -1;
	if (ALLOC_GROW(e->nodes, e->nr + 1, p->alloc)) {
		perr_nomem(p);
		return -1;
	}
	if (a >= 0 && e->nodes[a].depth > depth)
		depth = e->nodes[a].depth;
	if (b >= 0 && e->nodes[b].depth > depth)
		depth = e->nodes[b].depth;
	if (c >= 0 && e->nodes[c].depth > depth)
		depth = e->nodes[c].depth;
	if (depth + 1 > EXPR_MAX_DEPTH) {
		perr(p, pos, "expression nested more than %d deep", EXPR_MAX_DEPTH);
		return -1;
	}
	n = &e->nodes[e->nr];
	memset(n, 0, sizeof(*n));
	n->op = op;
	n->a = a;
	n->b = b;
	n->c = c;
	n->depth = depth + 1;
	return e->nr++;
}

static int add_leaf(struct parser *p, enum expr_op op, int index, double num, size_t pos)
{
	int i = add_node(p, op, -1, -1, -1, pos);

	if (i >= 0) {
		p->e->nodes[i].index = index;
		p->e->nodes[i].num = num;
	}
	return i;
}

static int parse_expr(struct parser *p, int depth);

static bool expect(struct parser *p, enum tok tok, const char *what)
{
	char buf[48];

	if (p->err)
		return false;
	if (p->tok != tok) {
		perr(p, p->tok_start, "expected %s, found '%s'", what, tok_text(p, buf, sizeof(buf)));
		return false;
	}
	next(p);
	return true;
}

/* Guards the parser's own recursion; the tree depth is checked separately in add_node. */
static bool too_deep(struct parser *p, int depth)
{
	if (depth <= EXPR_MAX_DEPTH)
		return false;
	perr(p, p->tok_start, "expression nested more than %d deep", EXPR_MAX_DEPTH);
	return true;
}

static char *tok_strdup(const struct parser *p)
{
	size_t off = p->tok_start + (p->tok == T_QNAME);
	char *s = malloc(p->tok_len + 1);

	if (!s)
		return NULL;
	memcpy(s, p->src + off, p->tok_len);
	s[p->tok_len] = 0;
	return s;
}

static const char *const param_names[EXPR_NR_PARAMS] = {
	[EXPR_PARAM_SMT_ENABLED] = "smt_enabled",
	[EXPR_PARAM_TOPDOWN_USE_FIXED] = "topdown_use_fixed",
	[EXPR_PARAM_INTERVAL_S] = "interval_s",
	[EXPR_PARAM_CPU_S] = "cpu_s",
	[EXPR_PARAM_SLOTS] = "slots",
	[EXPR_PARAM_CPU_PART] = "cpu_part",
	[EXPR_PARAM_CPU_REVISION] = "cpu_revision",
};

/* A name as a value: parameter, `val`, or what the model's lookup says. */
static int parse_name_value(struct parser *p, bool quoted)
{
	size_t pos = p->tok_start;
	struct expr_symbol sym;
	char *name;
	int i, err, n = -1;

	name = tok_strdup(p);
	if (!name) {
		perr_nomem(p);
		return -1;
	}
	if (!quoted) {
		for (i = 0; i < EXPR_NR_PARAMS; i++) {
			if (!strcmp(name, param_names[i])) {
				n = add_leaf(p, OP_PARAM, i, 0, pos);
				goto out;
			}
		}
		if (!strcmp(name, "val")) {
			if (p->scope->allow_val)
				n = add_leaf(p, OP_VAL, 0, 0, pos);
			else
				perr(p, pos, "'val' is only defined in a thresh expression");
			goto out;
		}
	}
	err = p->scope->lookup ? p->scope->lookup(p->scope->ctx, name, &sym) : -ENOENT;
	if (err) {
		char buf[48];

		perr(p, pos, "unknown name '%s'", tok_text(p, buf, sizeof(buf)));
		goto out;
	}
	switch (sym.kind) {
	case EXPR_SYM_CONSTANT: n = add_leaf(p, OP_NUM, 0, sym.value, pos); break;
	case EXPR_SYM_AUX: n = add_leaf(p, OP_AUX, sym.index, 0, pos); break;
	case EXPR_SYM_NODE: n = add_leaf(p, OP_NODE, sym.index, 0, pos); break;
	case EXPR_SYM_METRIC: n = add_leaf(p, OP_METRIC, sym.index, 0, pos); break;
	case EXPR_SYM_EVENT: n = add_leaf(p, OP_EVENT, sym.index, 0, pos); break;
	}
out:
	free(name);
	next(p);
	return n;
}

/* The argument of thresh() or retlat(): a node (or `parent`), or an event. */
static int parse_name_arg(struct parser *p, enum expr_op op, const char *func)
{
	size_t pos = p->tok_start;
	struct expr_symbol sym;
	char buf[48];
	char *name;
	int err, n = -1;

	if (p->tok != T_NAME && p->tok != T_QNAME) {
		perr(p, pos, "%s() takes a name, found '%s'", func, tok_text(p, buf, sizeof(buf)));
		return -1;
	}
	name = tok_strdup(p);
	if (!name) {
		perr_nomem(p);
		return -1;
	}
	if (op == OP_THRESH && p->tok == T_NAME && !strcmp(name, "parent")) {
		if (p->scope->parent < 0)
			perr(p, pos, "thresh(parent) where there is no parent");
		else
			n = add_leaf(p, OP_THRESH, p->scope->parent, 0, pos);
		goto out;
	}
	err = p->scope->lookup ? p->scope->lookup(p->scope->ctx, name, &sym) : -ENOENT;
	if (err) {
		perr(p, pos, "unknown name '%s'", tok_text(p, buf, sizeof(buf)));
		goto out;
	}
	if (op == OP_THRESH && sym.kind != EXPR_SYM_NODE) {
		perr(p, pos, "thresh() takes a node, '%s' is not one", tok_text(p, buf, sizeof(buf)));
		goto out;
	}
	if (op == OP_RETLAT && sym.kind != EXPR_SYM_EVENT) {
		perr(p, pos, "retlat() takes an event, '%s' is not one",
		     tok_text(p, buf, sizeof(buf)));
		goto out;
	}
	n = add_leaf(p, op, sym.index, 0, pos);
out:
	free(name);
	next(p);
	return n;
}

static const struct {
	const char *name;
	enum expr_op op;
	int min_args, max_args;	/* max_args 0: any number */
} functions[] = {
	{ "min", OP_MIN, 2, 0 },       { "max", OP_MAX, 2, 0 },
	{ "abs", OP_ABS, 1, 1 },       { "d_ratio", OP_D_RATIO, 2, 2 },
	{ "thresh", OP_THRESH, 1, 1 }, { "retlat", OP_RETLAT, 1, 1 },
};

static int parse_call(struct parser *p, int depth)
{
	size_t pos = p->tok_start;
	enum expr_op op;
	char buf[48];
	int f, n = -1, nargs = 0;

	for (f = 0; f < (int)(sizeof(functions) / sizeof(functions[0])); f++) {
		if (strlen(functions[f].name) == p->tok_len &&
		    !memcmp(functions[f].name, p->src + p->tok_start, p->tok_len))
			break;
	}
	if (f == (int)(sizeof(functions) / sizeof(functions[0]))) {
		perr(p, pos, "unknown function '%s'", tok_text(p, buf, sizeof(buf)));
		return -1;
	}
	op = functions[f].op;
	next(p);		/* the name */
	next(p);		/* ( */
	if (op == OP_THRESH || op == OP_RETLAT) {
		n = parse_name_arg(p, op, functions[f].name);
		nargs = 1;
	} else {
		for (;;) {
			int arg = parse_expr(p, depth + 1);

			if (p->err)
				return -1;
			nargs++;
			if (nargs > 1 && functions[f].max_args && nargs > functions[f].max_args)
				break;
			/*
			 * min/max of several is Python's running comparison, left to right:
			 * min(a, b, c) is min(min(a, b), c).
			 */
			if (op == OP_ABS)
				n = add_node(p, OP_ABS, arg, -1, -1, pos);
			else if (nargs == 1)
				n = arg;
			else
				n = add_node(p, op, n, arg, -1, pos);
			if (p->tok != T_COMMA)
				break;
			next(p);
		}
	}
	if (p->err)
		return -1;
	if (nargs < functions[f].min_args ||
	    (functions[f].max_args && nargs > functions[f].max_args)) {
		if (functions[f].min_args == functions[f].max_args)
			perr(p, pos, "%s() takes %d argument%s", functions[f].name,
			     functions[f].min_args, functions[f].min_args == 1 ? "" : "s");
		else
			perr(p, pos, "%s() takes at least %d arguments", functions[f].name,
			     functions[f].min_args);
		return -1;
	}
	if (!expect(p, T_RPAREN, "')' or ','"))
		return -1;
	return n;
}

/* Whether the current name token is followed by '(' (a call), spaces allowed between. */
static bool before_paren(const struct parser *p)
{
	size_t i = p->pos;

	while (p->src[i] == ' ' || p->src[i] == '\t' || p->src[i] == '\n' || p->src[i] == '\r')
		i++;
	return p->src[i] == '(';
}

static int parse_primary(struct parser *p, int depth)
{
	size_t pos = p->tok_start;
	char buf[48];
	int n;

	if (too_deep(p, depth))
		return -1;
	switch (p->tok) {
	case T_NUM:
		n = add_leaf(p, OP_NUM, 0, p->num, pos);
		next(p);
		return n;
	case T_TRUE:
	case T_FALSE:
		n = add_leaf(p, OP_NUM, 0, p->tok == T_TRUE, pos);
		next(p);
		return n;
	case T_NAME:
		if (before_paren(p))
			return parse_call(p, depth);
		return parse_name_value(p, false);
	case T_QNAME:
		return parse_name_value(p, true);
	case T_LPAREN:
		next(p);
		n = parse_expr(p, depth + 1);
		if (!expect(p, T_RPAREN, "')'"))
			return -1;
		return n;
	default:
		if (!p->err)
			perr(p, pos, "expected a value, found '%s'", tok_text(p, buf, sizeof(buf)));
		return -1;
	}
}

static int parse_unary(struct parser *p, int depth)
{
	size_t pos = p->tok_start;
	int n;

	if (too_deep(p, depth))
		return -1;
	if (p->tok != T_MINUS)
		return parse_primary(p, depth);
	next(p);
	n = parse_unary(p, depth + 1);
	return add_node(p, OP_NEG, n, -1, -1, pos);
}

static int parse_term(struct parser *p, int depth)
{
	int n = parse_unary(p, depth);

	while (!p->err && (p->tok == T_STAR || p->tok == T_SLASH)) {
		size_t pos = p->tok_start;
		enum expr_op op = p->tok == T_STAR ? OP_MUL : OP_DIV;
		int r;

		next(p);
		r = parse_unary(p, depth);
		n = add_node(p, op, n, r, -1, pos);
	}
	return n;
}

static int parse_sum(struct parser *p, int depth)
{
	int n = parse_term(p, depth);

	while (!p->err && (p->tok == T_PLUS || p->tok == T_MINUS)) {
		size_t pos = p->tok_start;
		enum expr_op op = p->tok == T_PLUS ? OP_ADD : OP_SUB;
		int r;

		next(p);
		r = parse_term(p, depth);
		n = add_node(p, op, n, r, -1, pos);
	}
	return n;
}

static bool is_comparison(enum tok t)
{
	return t == T_LT || t == T_LE || t == T_GT || t == T_GE || t == T_EQ || t == T_NE;
}

static int parse_comparison(struct parser *p, int depth)
{
	static const enum expr_op ops[] = {
		[T_LT] = OP_LT, [T_LE] = OP_LE, [T_GT] = OP_GT,
		[T_GE] = OP_GE, [T_EQ] = OP_EQ, [T_NE] = OP_NE,
	};
	size_t pos;
	enum expr_op op;
	int n = parse_sum(p, depth), r;

	if (p->err || !is_comparison(p->tok))
		return n;
	pos = p->tok_start;
	op = ops[p->tok];
	next(p);
	r = parse_sum(p, depth);
	if (!p->err && is_comparison(p->tok)) {
		/* Python would chain (a < b < c); toplev's models never do. */
		perr(p, p->tok_start, "chained comparisons are not supported");
		return -1;
	}
	return add_node(p, op, n, r, -1, pos);
}

static int parse_not(struct parser *p, int depth)
{
	size_t pos = p->tok_start;
	int n;

	if (too_deep(p, depth))
		return -1;
	if (p->tok != T_NOT)
		return parse_comparison(p, depth);
	next(p);
	n = parse_not(p, depth + 1);
	return add_node(p, OP_NOT, n, -1, -1, pos);
}

static int parse_and(struct parser *p, int depth)
{
	int n = parse_not(p, depth);

	while (!p->err && p->tok == T_AND) {
		size_t pos = p->tok_start;
		int r;

		next(p);
		r = parse_not(p, depth);
		n = add_node(p, OP_AND, n, r, -1, pos);
	}
	return n;
}

static int parse_or(struct parser *p, int depth)
{
	int n = parse_and(p, depth);

	while (!p->err && p->tok == T_OR) {
		size_t pos = p->tok_start;
		int r;

		next(p);
		r = parse_and(p, depth);
		n = add_node(p, OP_OR, n, r, -1, pos);
	}
	return n;
}

/* expr := or ['if' or 'else' expr] */
static int parse_expr(struct parser *p, int depth)
{
	size_t pos;
	int a, cond, b;

	if (too_deep(p, depth))
		return -1;
	a = parse_or(p, depth);
	if (p->err || p->tok != T_IF)
		return a;
	pos = p->tok_start;
	next(p);
	cond = parse_or(p, depth);
	if (!expect(p, T_ELSE, "'else'"))
		return -1;
	b = parse_expr(p, depth + 1);
	return add_node(p, OP_IF, a, cond, b, pos);
}

int expr_compile(const char *src, const struct expr_scope *scope, struct expr **ep, char *err,
		  size_t errlen)
{
	struct parser p = {
		.src = src,
		.scope = scope,
		.errbuf = err,
		.errlen = errlen,
	};
	char buf[48];
	int root;

	*ep = NULL;
	if (errlen)
		err[0] = 0;
	p.e = calloc(1, sizeof(*p.e));
	if (!p.e) {
		perr_nomem(&p);
		return p.err;
	}
	next(&p);
	if (p.tok == T_END && !p.err) {
		perr(&p, p.tok_start, "empty expression");
	} else {
		root = parse_expr(&p, 0);
		if (!p.err && p.tok != T_END)
			perr(&p, p.tok_start, "unexpected '%s'", tok_text(&p, buf, sizeof(buf)));
		p.e->root = root;
	}
	if (p.err) {
		expr_free(p.e);
		return p.err;
	}
	*ep = p.e;
	return 0;
}

void expr_free(struct expr *e)
{
	if (!e)
		return;
	free(e->nodes);
	free(e);
}

int expr_size(const struct expr *e)
{
	return e->nr;
}

int expr_depth(const struct expr *e)
{
	return e->nodes[e->root].depth;
}

bool expr_divides(const struct expr *e)
{
	int i;

	for (i = 0; i < e->nr; i++) {
		if (e->nodes[i].op == OP_DIV)
			return true;
	}
	return false;
}

/* --- evaluation --------------------------------------------------------------------------- */

static int binop(enum expr_op op, double a, double b, double *out)
{
	switch (op) {
	case OP_ADD: *out = a + b; return 0;
	case OP_SUB: *out = a - b; return 0;
	case OP_MUL: *out = a * b; return 0;
	case OP_DIV:
		if (b == 0)
			return -EDOM;
		*out = a / b;
		return 0;
	case OP_D_RATIO: *out = b == 0 ? 0 : a / b; return 0;
	case OP_LT: *out = a < b; return 0;
	case OP_LE: *out = a <= b; return 0;
	case OP_GT: *out = a > b; return 0;
	case OP_GE: *out = a >= b; return 0;
	case OP_EQ: *out = a == b; return 0;
	case OP_NE: *out = a != b; return 0;
	/*
	 * Python's min/max keep the running result unless the next operand compares strictly
	 * smaller (larger); what NaN does follows from that.
	 */
	case OP_MIN: *out = b < a ? b : a; return 0;
	case OP_MAX: *out = b > a ? b : a; return 0;
	default: return -EINVAL;
	}
}

/* Evaluates both operands of n into a and b, returning from eval() on an error. */
#define OPERANDS()                                  \
	do {                                        \
		err = eval(e, n->a, env, &a);       \
		if (!err)                           \
			err = eval(e, n->b, env, &b); \
		if (err)                            \
			return err;                 \
	} while (0)

/* One switch per operation: this is the hot loop of every tree computation. */
static int eval(const struct expr *e, int i, const struct expr_env *env, double *out)
{
	const struct expr_node *n = &e->nodes[i];
	double a, b;
	int err;

	switch (n->op) {
	case OP_NUM:
		*out = n->num;
		return 0;
	case OP_PARAM:
		*out = env->params[n->index];
		return 0;
	case OP_VAL:
		*out = env->val;
		return 0;
	case OP_EVENT:
		*out = env->events[n->index];
		return 0;
	case OP_RETLAT:
		*out = env->retire_latency[n->index];
		return 0;
	case OP_THRESH:
		*out = env->flags[n->index];
		return 0;
	case OP_AUX:
		return eval(env->aux[n->index], env->aux[n->index]->root, env, out);
	case OP_NODE:
		*out = env->node(env, n->index);
		return 0;
	case OP_METRIC:
		*out = env->metric(env, n->index);
		return 0;
	case OP_IF:
		err = eval(e, n->b, env, &a);
		if (err)
			return err;
		return eval(e, expr_truth(a) ? n->a : n->c, env, out);
	case OP_AND:
	case OP_OR:
		err = eval(e, n->a, env, &a);
		if (err)
			return err;
		if (expr_truth(a) == (n->op == OP_OR)) {
			*out = expr_truth(a);
			return 0;
		}
		err = eval(e, n->b, env, &b);
		if (err)
			return err;
		*out = expr_truth(b);
		return 0;
	case OP_NEG:
	case OP_NOT:
	case OP_ABS:
		err = eval(e, n->a, env, &a);
		if (err)
			return err;
		*out = n->op == OP_NEG ? -a : n->op == OP_NOT ? !expr_truth(a) : fabs(a);
		return 0;
	case OP_ADD:
		OPERANDS();
		*out = a + b;
		return 0;
	case OP_SUB:
		OPERANDS();
		*out = a - b;
		return 0;
	case OP_MUL:
		OPERANDS();
		*out = a * b;
		return 0;
	case OP_DIV:
		OPERANDS();
		if (b == 0)
			return -EDOM;
		*out = a / b;
		return 0;
	default:
		OPERANDS();
		return binop(n->op, a, b, out);
	}
}

int expr_eval(const struct expr *e, const struct expr_env *env, double *out)
{
	return eval(e, e->root, env, out);
}

/* --- static walks ------------------------------------------------------------------------- */

/* Whether node i is a constant under params; *v its value then. */
static bool fold(const struct expr *e, int i, const double *params, double *v)
{
	const struct expr_node *n = &e->nodes[i];
	double a, b;

	switch (n->op) {
	case OP_NUM:
		*v = n->num;
		return true;
	case OP_PARAM:
		if (n->index != EXPR_PARAM_SMT_ENABLED && n->index != EXPR_PARAM_TOPDOWN_USE_FIXED)
			return false;
		*v = params[n->index];
		return true;
	case OP_IF:
		if (!fold(e, n->b, params, &a))
			return false;
		return fold(e, expr_truth(a) ? n->a : n->c, params, v);
	case OP_AND:
	case OP_OR:
		if (!fold(e, n->a, params, &a))
			return false;
		if (expr_truth(a) == (n->op == OP_OR)) {
			*v = expr_truth(a);
			return true;
		}
		if (!fold(e, n->b, params, &b))
			return false;
		*v = expr_truth(b);
		return true;
	case OP_NEG:
	case OP_NOT:
	case OP_ABS:
		if (!fold(e, n->a, params, &a))
			return false;
		*v = n->op == OP_NEG ? -a : n->op == OP_NOT ? !expr_truth(a) : fabs(a);
		return true;
	case OP_ADD:
	case OP_SUB:
	case OP_MUL:
	case OP_DIV:
	case OP_D_RATIO:
	case OP_LT:
	case OP_LE:
	case OP_GT:
	case OP_GE:
	case OP_EQ:
	case OP_NE:
	case OP_MIN:
	case OP_MAX:
		if (!fold(e, n->a, params, &a) || !fold(e, n->b, params, &b))
			return false;
		/* A division by zero is not a constant: it is an error at run time. */
		return binop(n->op, a, b, v) == 0;
	default:
		return false;
	}
}

static int walk(const struct expr *e, int i, const double *params, expr_ref_fn fn, void *ctx)
{
	const struct expr_node *n = &e->nodes[i];
	double v;
	int err;

	switch (n->op) {
	case OP_NUM:
	case OP_PARAM:
	case OP_VAL:
		return 0;
	case OP_AUX: return fn(ctx, EXPR_REF_AUX, n->index);
	case OP_NODE: return fn(ctx, EXPR_REF_NODE, n->index);
	case OP_METRIC: return fn(ctx, EXPR_REF_METRIC, n->index);
	case OP_EVENT: return fn(ctx, EXPR_REF_EVENT, n->index);
	case OP_RETLAT: return fn(ctx, EXPR_REF_RETLAT, n->index);
	case OP_THRESH: return fn(ctx, EXPR_REF_THRESH, n->index);
	case OP_IF:
		if (params && fold(e, n->b, params, &v))
			return walk(e, expr_truth(v) ? n->a : n->c, params, fn, ctx);
		break;
	case OP_AND:
	case OP_OR:
		/* A constant left operand has no references; it decides whether the right runs. */
		if (params && fold(e, n->a, params, &v)) {
			if (expr_truth(v) == (n->op == OP_OR))
				return 0;
			return walk(e, n->b, params, fn, ctx);
		}
		break;
	default:
		break;
	}
	if (n->op == OP_IF) {
		err = walk(e, n->b, params, fn, ctx);
		if (!err)
			err = walk(e, n->a, params, fn, ctx);
		if (!err)
			err = walk(e, n->c, params, fn, ctx);
		return err;
	}
	err = walk(e, n->a, params, fn, ctx);
	if (!err && n->b >= 0)
		err = walk(e, n->b, params, fn, ctx);
	return err;
}

int expr_for_each_ref(const struct expr *e, const double *params, expr_ref_fn fn, void *ctx)
{
	return walk(e, e->root, params, fn, ctx);
}
