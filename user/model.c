// SPDX-License-Identifier: GPL-2.0
/*
 * Loading and validating model files (user/models/README.md), the built-in models, and CPU
 * detection. A file is either accepted whole, with every name resolved and the limits of
 * model_internal.h checked, or rejected with one line naming the file, the place and the
 * reason.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include <json-c/json.h>

#include "jsonfile.h"
#include "log.h"
#include "model_internal.h"
#include "models_table.h"
#include "strbuf.h"
#include "suggest.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Larger files are surely not model files (the built-ins are tens of KiB). */
#define MODEL_MAX_FILE_SIZE (16 << 20)

struct symbol {
	const char *name;
	enum expr_symbol_kind kind;
	int index;
};

struct loader {
	const char *origin;
	struct model *m;
	struct symbol *syms;
	int nr_syms;
	/* reference analysis, per entity: aux first, then nodes, then metrics */
	unsigned char *color;
	double *cost;
	int *nest;
	int *stack;
	int depth;
};

static int lerr(const struct loader *ld, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Prints one line: control characters from the input are replaced so it stays one line. */
static int lerr(const struct loader *ld, const char *fmt, ...)
{
	char msg[640];
	va_list ap;
	char *c;
	int n;

	n = snprintf(msg, sizeof(msg), "model '%s': ", ld->origin);
	if (n < 0 || (size_t)n >= sizeof(msg))
		n = 0;
	va_start(ap, fmt);
	vsnprintf(msg + n, sizeof(msg) - n, fmt, ap);
	va_end(ap);
	for (c = msg; *c; c++) {
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			*c = '?';
	}
	pr_err("%s", msg);
	return -EINVAL;
}

/* --- JSON access -------------------------------------------------------------------------- */

static const char *json_type_desc(json_object *o)
{
	switch (json_object_get_type(o)) {
	case json_type_null: return "null";
	case json_type_boolean: return "a boolean";
	case json_type_double: return "a number";
	case json_type_int: return "an integer";
	case json_type_object: return "an object";
	case json_type_array: return "an array";
	case json_type_string: return "a string";
	}
	return "something else";
}

static bool in_list(const char *key, const char *const *list)
{
	for (; *list; list++) {
		if (!strcmp(key, *list))
			return true;
	}
	return false;
}

/* Unknown keys are errors (a typo must not drop a formula), and so are missing ones. */
static int check_keys(const struct loader *ld, const char *where, json_object *obj,
		      const char *const *required, const char *const *optional)
{
	static const char *const none[] = { NULL };

	if (!optional)
		optional = none;
	json_object_object_foreach(obj, key, val) {
		(void)val;
		if (!in_list(key, required) && !in_list(key, optional))
			return lerr(ld, "%s: unknown key '%.64s'", where, key);
	}
	for (; *required; required++) {
		if (!json_object_object_get_ex(obj, *required, NULL))
			return lerr(ld, "%s: missing key '%s'", where, *required);
	}
	return 0;
}

static int want_type(const struct loader *ld, const char *where, const char *key, json_object *v,
		     enum json_type type, const char *what)
{
	if (json_object_get_type(v) == type)
		return 0;
	return lerr(ld, "%s: '%s' must be %s, not %s", where, key, what, json_type_desc(v));
}

/* A string without NUL bytes; absent optional keys give NULL. */
static int get_string(const struct loader *ld, const char *where, json_object *obj,
		      const char *key, const char **out)
{
	json_object *v;
	int err;

	*out = NULL;
	if (!json_object_object_get_ex(obj, key, &v))
		return 0;
	err = want_type(ld, where, key, v, json_type_string, "a string");
	if (err)
		return err;
	if (strlen(json_object_get_string(v)) != (size_t)json_object_get_string_len(v))
		return lerr(ld, "%s: '%s' contains a NUL character", where, key);
	*out = json_object_get_string(v);
	return 0;
}

static int dup_string(const struct loader *ld, const char *where, json_object *obj,
		      const char *key, char **out)
{
	const char *s;
	int err;

	*out = NULL;
	err = get_string(ld, where, obj, key, &s);
	if (err || !s)
		return err;
	*out = strdup(s);
	return *out ? 0 : -ENOMEM;
}

static int json_to_int(const struct loader *ld, const char *where, const char *key, json_object *v,
		       int min, int max, int *out)
{
	int64_t i;
	int err;

	err = want_type(ld, where, key, v, json_type_int, "an integer");
	if (err)
		return err;
	i = json_object_get_int64(v);
	if (i < min || i > max)
		return lerr(ld, "%s: '%s' is %lld, out of range [%d, %d]", where, key, (long long)i,
			    min, max);
	*out = (int)i;
	return 0;
}

static int get_int(const struct loader *ld, const char *where, json_object *obj, const char *key,
		   int min, int max, int *out)
{
	json_object *v;

	if (!json_object_object_get_ex(obj, key, &v))
		return 0;
	return json_to_int(ld, where, key, v, min, max, out);
}

/* A model's quantity (a constant, a latency, a limit): finite and not negative. */
static int json_to_number(const struct loader *ld, const char *where, const char *key,
			  json_object *v, double *out)
{
	enum json_type t = json_object_get_type(v);

	if (t != json_type_int && t != json_type_double)
		return lerr(ld, "%s: '%s' must be a number, not %s", where, key, json_type_desc(v));
	*out = json_object_get_double(v);
	if (!isfinite(*out))
		return lerr(ld, "%s: '%s' is not a finite number", where, key);
	if (*out < 0)
		return lerr(ld, "%s: '%s' is negative (%g)", where, key, *out);
	return 0;
}

/* An array member; *out NULL when absent. */
static int get_array(const struct loader *ld, const char *where, json_object *obj,
		     const char *key, json_object **out)
{
	json_object *v;

	*out = NULL;
	if (!json_object_object_get_ex(obj, key, &v))
		return 0;
	*out = v;
	return want_type(ld, where, key, v, json_type_array, "an array");
}

/* arr[k] as a string: 0; or an error saying that KEY[k] must be what (a node name, ...). */
static int array_string(const struct loader *ld, const char *where, json_object *arr,
			const char *key, size_t k, const char *what, const char **out)
{
	json_object *v = json_object_array_get_idx(arr, k);

	if (json_object_get_type(v) != json_type_string)
		return lerr(ld, "%s: %s[%zu] must be %s, not %s", where, key, k, what,
			    json_type_desc(v));
	*out = json_object_get_string(v);
	return 0;
}

/* --- names -------------------------------------------------------------------------------- */

static const char *const reserved_names[] = {
	"if", "else", "and", "or", "not", "True", "False", "val", "parent", "smt_enabled",
	"topdown_use_fixed", "interval_s", "cpu_s", "slots", "cpu_part", "cpu_revision", "min",
	"max", "abs", "d_ratio", "thresh", "retlat", NULL,
};

static bool ident_start(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static bool ident_char(char c)
{
	return ident_start(c) || (c >= '0' && c <= '9');
}

/* [A-Za-z_][A-Za-z0-9_]*, with '.' too when dots is set */
static bool is_identifier(const char *s, bool dots)
{
	if (!ident_start(*s))
		return false;
	for (s++; *s; s++) {
		if (!ident_char(*s) && !(dots && *s == '.'))
			return false;
	}
	return true;
}

/* Event names can be anything an expression can quote: printable, no '"'. */
static bool is_event_name(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++) {
		if ((unsigned char)*s < 0x20 || *s == 0x7f || *s == '"')
			return false;
	}
	return true;
}

static const char *const kind_names[] = {
	[EXPR_SYM_CONSTANT] = "constant", [EXPR_SYM_AUX] = "aux", [EXPR_SYM_NODE] = "node",
	[EXPR_SYM_METRIC] = "metric",	  [EXPR_SYM_EVENT] = "event",
};

static int check_name(const struct loader *ld, const char *where, const char *name,
		      enum expr_symbol_kind kind)
{
	bool ok;

	switch (kind) {
	case EXPR_SYM_EVENT: ok = is_event_name(name); break;
	case EXPR_SYM_NODE: ok = is_identifier(name, false); break;
	default: ok = is_identifier(name, true); break;
	}
	if (!ok)
		return lerr(ld, "%s: '%.64s' is not a valid %s name", where, name, kind_names[kind]);
	if (kind != EXPR_SYM_EVENT && in_list(name, reserved_names))
		return lerr(ld, "%s: '%s' is a reserved word", where, name);
	return 0;
}

/* ld->syms was sized for every name of the file. */
static void add_symbol(struct loader *ld, const char *name, enum expr_symbol_kind kind, int index)
{
	ld->syms[ld->nr_syms].name = name;
	ld->syms[ld->nr_syms].kind = kind;
	ld->syms[ld->nr_syms].index = index;
	ld->nr_syms++;
}

static int cmp_symbol(const void *a, const void *b)
{
	return strcmp(((const struct symbol *)a)->name, ((const struct symbol *)b)->name);
}

/* Sorts the names and rejects one defined twice, in any two namespaces. */
static int index_symbols(struct loader *ld)
{
	int i;

	qsort(ld->syms, ld->nr_syms, sizeof(*ld->syms), cmp_symbol);
	for (i = 1; i < ld->nr_syms; i++) {
		const struct symbol *a = &ld->syms[i - 1], *b = &ld->syms[i];

		if (strcmp(a->name, b->name))
			continue;
		if (a->kind == b->kind)
			return lerr(ld, "%s '%.64s' is defined twice", kind_names[a->kind], a->name);
		return lerr(ld, "'%.64s' is defined both as %s and as %s", a->name,
			    kind_names[a->kind], kind_names[b->kind]);
	}
	return 0;
}

static const struct symbol *find_symbol(const struct loader *ld, const char *name)
{
	struct symbol key = { .name = name };

	if (!ld->nr_syms)
		return NULL;
	return bsearch(&key, ld->syms, ld->nr_syms, sizeof(*ld->syms), cmp_symbol);
}

static int lookup(void *ctx, const char *name, struct expr_symbol *sym)
{
	const struct loader *ld = ctx;
	const struct symbol *s = find_symbol(ld, name);

	if (!s)
		return -ENOENT;
	sym->kind = s->kind;
	sym->index = s->index;
	sym->value = s->kind == EXPR_SYM_CONSTANT ? ld->m->constant_values[s->index] : 0;
	return 0;
}

static int find_kind(const struct loader *ld, const char *name, enum expr_symbol_kind kind)
{
	const struct symbol *s = find_symbol(ld, name);

	return s && s->kind == kind ? s->index : -1;
}

/* --- sections ----------------------------------------------------------------------------- */

/* A model number written in hex, as Arm's part numbers are: "0xd49". */
static int hex_model(const struct loader *ld, const char *where, const char *key, json_object *v,
		     int *out)
{
	const char *s = json_object_get_string(v);
	char *end;
	unsigned long n;

	if (strncmp(s, "0x", 2) || !s[2])
		return lerr(ld, "%s: '%s' must be a model number, a hex string (\"0xd49\") or a "
			    "[lo, hi] range", where, key);
	errno = 0;
	n = strtoul(s + 2, &end, 16);
	if (*end || errno || n > 0xffff)
		return lerr(ld, "%s: '%s' is not a hex model number in [0x0, 0xffff]", where, key);
	*out = (int)n;
	return 0;
}

static int load_match(struct loader *ld, json_object *arr)
{
	static const char *const required[] = { "vendor", "family", "models", NULL };
	static const char *const optional[] = { "notice", NULL };
	struct model *m = ld->m;
	size_t i, j, n = json_object_array_length(arr);
	int err;

	m->matches = calloc(n ? n : 1, sizeof(*m->matches));
	if (!m->matches)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		json_object *e = json_object_array_get_idx(arr, i), *models;
		struct model_match *mt = &m->matches[i];
		char where[64];

		snprintf(where, sizeof(where), "match[%zu]", i);
		m->nr_matches++;
		err = want_type(ld, "match", where, e, json_type_object, "an object");
		if (!err)
			err = check_keys(ld, where, e, required, optional);
		if (!err)
			err = dup_string(ld, where, e, "vendor", &mt->vendor);
		if (!err && !*mt->vendor)
			err = lerr(ld, "%s: 'vendor' is empty", where);
		if (!err)
			err = dup_string(ld, where, e, "notice", &mt->notice);
		if (!err)
			err = get_int(ld, where, e, "family", 0, 0xffff, &mt->family);
		if (!err)
			err = get_array(ld, where, e, "models", &models);
		if (err)
			return err;
		mt->ranges = calloc(json_object_array_length(models) + 1, sizeof(*mt->ranges));
		if (!mt->ranges)
			return -ENOMEM;
		for (j = 0; j < json_object_array_length(models); j++) {
			json_object *r = json_object_array_get_idx(models, j);
			struct model_range *range = &mt->ranges[j];
			char key[48];

			snprintf(key, sizeof(key), "models[%zu]", j);
			if (json_object_get_type(r) == json_type_int) {
				err = json_to_int(ld, where, key, r, 0, 0xffff, &range->lo);
				range->hi = range->lo;
			} else if (json_object_get_type(r) == json_type_string) {
				err = hex_model(ld, where, key, r, &range->lo);
				range->hi = range->lo;
			} else if (json_object_get_type(r) == json_type_array &&
				   json_object_array_length(r) == 2) {
				err = json_to_int(ld, where, key, json_object_array_get_idx(r, 0), 0,
						  0xffff, &range->lo);
				if (!err)
					err = json_to_int(ld, where, key,
							  json_object_array_get_idx(r, 1), 0, 0xffff,
							  &range->hi);
				if (!err && range->lo > range->hi)
					err = lerr(ld, "%s: %s: empty range [%d, %d]", where, key,
						   range->lo, range->hi);
			} else {
				err = lerr(ld, "%s: '%s' must be a model number, a hex string "
					   "(\"0xd49\") or a [lo, hi] range", where, key);
			}
			if (err)
				return err;
			mt->nr_ranges++;
		}
	}
	return 0;
}

static int event_list(struct loader *ld, const char *where, json_object *arr, int **out, int *nr)
{
	size_t i, n = json_object_array_length(arr);

	*out = calloc(n ? n : 1, sizeof(**out));
	if (!*out)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		json_object *e = json_object_array_get_idx(arr, i);
		int idx, k;

		if (json_object_get_type(e) != json_type_string)
			return lerr(ld, "%s[%zu] must be an event name, not %s", where, i,
				    json_type_desc(e));
		idx = find_kind(ld, json_object_get_string(e), EXPR_SYM_EVENT);
		if (idx < 0)
			return lerr(ld, "%s[%zu]: unknown event '%.64s'", where, i,
				    json_object_get_string(e));
		for (k = 0; k < *nr; k++) {
			if ((*out)[k] == idx)
				return lerr(ld, "%s: event '%.64s' is listed twice", where,
					    json_object_get_string(e));
		}
		(*out)[(*nr)++] = idx;
	}
	return 0;
}

static int load_pmu(struct loader *ld, json_object *pmu)
{
	static const char *const optional[] = { "generic_counters", "generic_counters_smt", "fixed",
						"perf_metrics", "software", "libpfm4",
						"nmi_watchdog", "slots", "uncounted_if_zero",
						NULL };
	static const char *const pm_keys[] = { "leader", "events", NULL };
	struct model_pmu *p = &ld->m->pmu;
	json_object *v, *arr;
	const char *leader;
	int err, k;

	p->pm_leader = -1;
	p->generic_counters = -1;
	p->generic_counters_smt = -1;
	err = want_type(ld, "model", "pmu", pmu, json_type_object, "an object");
	if (!err)
		err = check_keys(ld, "pmu", pmu, (const char *const[]){ NULL }, optional);
	if (err)
		return err;
	if (json_object_object_get_ex(pmu, "software", &v)) {
		err = want_type(ld, "pmu", "software", v, json_type_boolean, "a boolean");
		if (err)
			return err;
		p->software = json_object_get_boolean(v);
	}
	err = dup_string(ld, "pmu", pmu, "libpfm4", &p->libpfm4);
	if (!err)
		err = get_int(ld, "pmu", pmu, "generic_counters", 0, 1024, &p->generic_counters);
	if (!err)
		err = get_int(ld, "pmu", pmu, "generic_counters_smt", 0, 1024,
			      &p->generic_counters_smt);
	if (!err)
		err = get_int(ld, "pmu", pmu, "slots", 1, 255, &p->slots);
	if (err)
		return err;
	if (p->generic_counters < 0) {
		if (!p->software)
			return lerr(ld, "pmu: missing key 'generic_counters'");
		p->generic_counters = 0;
	}
	if (p->generic_counters_smt < 0)
		p->generic_counters_smt = p->generic_counters;
	err = get_array(ld, "pmu", pmu, "fixed", &arr);
	if (!err && arr)
		err = event_list(ld, "pmu: fixed", arr, &p->fixed, &p->nr_fixed);
	if (err)
		return err;
	err = get_array(ld, "pmu", pmu, "uncounted_if_zero", &arr);
	if (!err && arr)
		err = event_list(ld, "pmu: uncounted_if_zero", arr, &p->zero_events,
				 &p->nr_zero_events);
	if (err)
		return err;
	p->nmi_watchdog = -1;
	if (json_object_object_get_ex(pmu, "nmi_watchdog", &v)) {
		err = want_type(ld, "pmu", "nmi_watchdog", v, json_type_string, "an event name");
		if (err)
			return err;
		p->nmi_watchdog = find_kind(ld, json_object_get_string(v), EXPR_SYM_EVENT);
		if (p->nmi_watchdog < 0)
			return lerr(ld, "pmu: nmi_watchdog: unknown event '%.64s'",
				    json_object_get_string(v));
	}
	if (!json_object_object_get_ex(pmu, "perf_metrics", &v))
		return 0;
	err = want_type(ld, "pmu", "perf_metrics", v, json_type_object, "an object");
	if (!err)
		err = check_keys(ld, "pmu: perf_metrics", v, pm_keys, NULL);
	if (!err)
		err = get_string(ld, "pmu: perf_metrics", v, "leader", &leader);
	if (!err)
		err = get_array(ld, "pmu: perf_metrics", v, "events", &arr);
	if (err)
		return err;
	p->pm_leader = find_kind(ld, leader, EXPR_SYM_EVENT);
	if (p->pm_leader < 0)
		return lerr(ld, "pmu: perf_metrics: unknown leader event '%.64s'", leader);
	err = event_list(ld, "pmu: perf_metrics: events", arr, &p->pm_events, &p->nr_pm_events);
	if (err)
		return err;
	if (!p->nr_pm_events)
		return lerr(ld, "pmu: perf_metrics: 'events' is empty");
	for (k = 0; k < p->nr_pm_events; k++) {
		if (p->pm_events[k] == p->pm_leader)
			return lerr(ld, "pmu: perf_metrics: the leader is also one of the events");
	}
	return 0;
}

/* "counters": [0, 1, 2, 3], the generic counters an event may use; all when absent. */
static int load_counters(struct loader *ld, const char *where, json_object *e,
			 unsigned long long *mask)
{
	json_object *arr;
	size_t i;
	int err, c;

	*mask = ~0ull;
	err = get_array(ld, where, e, "counters", &arr);
	if (err || !arr)
		return err;
	*mask = 0;
	for (i = 0; i < json_object_array_length(arr); i++) {
		err = json_to_int(ld, where, "counters", json_object_array_get_idx(arr, i), 0, 63,
				  &c);
		if (err)
			return err;
		*mask |= 1ull << c;
	}
	return 0;
}

static int load_events(struct loader *ld, json_object *arr)
{
	static const char *const required[] = { "name", "encoding", NULL };
	static const char *const optional[] = { "sysfs", "retire_latency", "counters", NULL };
	struct model *m = ld->m;
	size_t i, n = json_object_array_length(arr);
	int err;

	m->events = calloc(n ? n : 1, sizeof(*m->events));
	if (!m->events)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		json_object *e = json_object_array_get_idx(arr, i), *v;
		struct model_event *ev = &m->events[i];
		char where[128];

		snprintf(where, sizeof(where), "events[%zu]", i);
		m->nr_events++;
		err = want_type(ld, "events", where, e, json_type_object, "an object");
		if (!err)
			err = check_keys(ld, where, e, required, optional);
		if (!err)
			err = dup_string(ld, where, e, "name", &ev->name);
		if (err)
			return err;
		snprintf(where, sizeof(where), "event '%.64s'", ev->name);
		err = check_name(ld, where, ev->name, EXPR_SYM_EVENT);
		if (!err)
			err = dup_string(ld, where, e, "encoding", &ev->encoding);
		if (!err && !*ev->encoding)
			err = lerr(ld, "%s: 'encoding' is empty", where);
		if (!err)
			err = dup_string(ld, where, e, "sysfs", &ev->sysfs);
		if (!err && json_object_object_get_ex(e, "retire_latency", &v)) {
			err = json_to_number(ld, where, "retire_latency", v, &ev->retire_latency);
		}
		if (!err)
			err = load_counters(ld, where, e, &ev->counters);
		if (err)
			return err;
		add_symbol(ld, ev->name, EXPR_SYM_EVENT, i);
	}
	return 0;
}

static int load_constants(struct loader *ld, json_object *obj)
{
	struct model *m = ld->m;
	int n = json_object_object_length(obj), err;

	m->constant_names = calloc(n ? n : 1, sizeof(*m->constant_names));
	m->constant_values = calloc(n ? n : 1, sizeof(*m->constant_values));
	if (!m->constant_names || !m->constant_values)
		return -ENOMEM;
	json_object_object_foreach(obj, key, val) {
		int i = m->nr_constants;

		err = check_name(ld, "constants", key, EXPR_SYM_CONSTANT);
		if (!err)
			err = json_to_number(ld, "constants", key, val, &m->constant_values[i]);
		if (err)
			return err;
		m->constant_names[i] = strdup(key);
		if (!m->constant_names[i])
			return -ENOMEM;
		m->nr_constants++;
		add_symbol(ld, m->constant_names[i], EXPR_SYM_CONSTANT, i);
	}
	return 0;
}

/* First pass over aux, nodes and metrics: their names, so that expressions can be compiled. */
static int collect_names(struct loader *ld, json_object *arr, const char *section,
			 enum expr_symbol_kind kind)
{
	struct model *m = ld->m;
	size_t i, n = arr ? json_object_array_length(arr) : 0;
	int err;

	switch (kind) {
	case EXPR_SYM_AUX:
		m->aux = calloc(n ? n : 1, sizeof(*m->aux));
		m->aux_exprs = calloc(n ? n : 1, sizeof(*m->aux_exprs));
		if (!m->aux || !m->aux_exprs)
			return -ENOMEM;
		break;
	case EXPR_SYM_NODE:
		m->nodes = calloc(n ? n : 1, sizeof(*m->nodes));
		if (!m->nodes)
			return -ENOMEM;
		break;
	default:
		m->metrics = calloc(n ? n : 1, sizeof(*m->metrics));
		if (!m->metrics)
			return -ENOMEM;
		break;
	}
	for (i = 0; i < n; i++) {
		json_object *e = json_object_array_get_idx(arr, i);
		char where[64], **name;

		snprintf(where, sizeof(where), "%s[%zu]", section, i);
		err = want_type(ld, section, where, e, json_type_object, "an object");
		if (err)
			return err;
		switch (kind) {
		case EXPR_SYM_AUX: name = &m->aux[m->nr_aux++].name; break;
		case EXPR_SYM_NODE: name = &m->nodes[m->nr_nodes++].name; break;
		default: name = &m->metrics[m->nr_metrics++].name; break;
		}
		err = dup_string(ld, where, e, "name", name);
		if (err)
			return err;
		if (!*name)
			return lerr(ld, "%s: missing key 'name'", where);
		err = check_name(ld, where, *name, kind);
		if (err)
			return err;
		add_symbol(ld, *name, kind, i);
	}
	return 0;
}

static int compile(struct loader *ld, const char *where, json_object *obj, const char *key,
		   bool allow_val, int parent, struct expr **out)
{
	struct expr_scope scope = {
		.lookup = lookup,
		.ctx = ld,
		.allow_val = allow_val,
		.parent = parent,
	};
	const char *src;
	char msg[256];
	int err;

	err = get_string(ld, where, obj, key, &src);
	if (err)
		return err;
	err = expr_compile(src, &scope, out, msg, sizeof(msg));
	if (err == -ENOMEM)
		return err;
	if (err)
		return lerr(ld, "%s: %s: %s", where, key, msg);
	return 0;
}

static int load_aux(struct loader *ld, json_object *arr)
{
	static const char *const required[] = { "name", "expr", NULL };
	struct model *m = ld->m;
	int i, err;

	for (i = 0; i < m->nr_aux; i++) {
		json_object *e = json_object_array_get_idx(arr, i);
		char where[96];

		snprintf(where, sizeof(where), "aux '%s'", m->aux[i].name);
		err = check_keys(ld, where, e, required, NULL);
		if (!err)
			err = compile(ld, where, e, "expr", false, -1, &m->aux[i].expr);
		if (err)
			return err;
		m->aux_exprs[i] = m->aux[i].expr;
	}
	return 0;
}

/*
 * A node's "sample": events of the model, each with toplev's precision suffix (":p", ":pp",
 * ":ppp"), as toplev's ratio files list them ("FRONTEND_RETIRED.LATENCY_GE_4:pp").
 */
static int load_node_samples(struct loader *ld, const char *where, struct model_node *n,
			     json_object *e)
{
	json_object *arr;
	size_t nr;
	int err;

	if (!json_object_object_get_ex(e, "sample", &arr))
		return 0;
	err = get_array(ld, where, e, "sample", &arr);
	if (err)
		return err;
	nr = json_object_array_length(arr);
	n->sample_events = calloc(nr + 1, sizeof(*n->sample_events));
	n->sample_precise = calloc(nr + 1, sizeof(*n->sample_precise));
	if (!n->sample_events || !n->sample_precise)
		return -ENOMEM;
	for (size_t k = 0; k < nr; k++) {
		char name[256], *colon;
		const char *s;
		int idx, p = 0;

		err = array_string(ld, where, arr, "sample", k, "an event name", &s);
		if (err)
			return err;
		snprintf(name, sizeof(name), "%s", s);
		colon = strrchr(name, ':');
		if (colon && colon[1] && strspn(colon + 1, "p") == strlen(colon + 1)) {
			p = (int)strlen(colon + 1);
			*colon = '\0';
		}
		if (p > 3)
			return lerr(ld, "%s: sample '%.64s': at most three p's (perf's precise_ip)",
				    where, s);
		idx = find_kind(ld, name, EXPR_SYM_EVENT);
		if (idx < 0)
			return lerr(ld, "%s: sample '%.64s' is not an event of the model", where,
				    name);
		n->sample_events[n->nr_samples] = idx;
		n->sample_precise[n->nr_samples++] = p;
	}
	return 0;
}

static int load_node(struct loader *ld, int i, json_object *e)
{
	static const char *const required[] = { "name",	  "parent", "level",	"domain",
						"area",	  "expr",   "thresh",	"maxval",
						"siblings", "desc", NULL };
	static const char *const optional[] = { "overlap", "sample", NULL };
	struct model *m = ld->m;
	struct model_node *n = &m->nodes[i];
	json_object *v, *sibs;
	char where[96];
	size_t k;
	int err;

	snprintf(where, sizeof(where), "node '%s'", n->name);
	err = check_keys(ld, where, e, required, optional);
	if (err)
		return err;

	json_object_object_get_ex(e, "parent", &v);
	n->parent = -1;
	if (json_object_get_type(v) == json_type_string) {
		const char *parent = json_object_get_string(v);

		n->parent = find_kind(ld, parent, EXPR_SYM_NODE);
		if (n->parent < 0)
			return lerr(ld, "%s: parent '%.64s' is not a node", where, parent);
		if (n->parent >= i)
			return lerr(ld, "%s: parent '%.64s' comes after it (parents go first)", where,
				    parent);
	} else if (json_object_get_type(v) != json_type_null) {
		return lerr(ld, "%s: 'parent' must be a node name or null, not %s", where,
			    json_type_desc(v));
	}
	err = get_int(ld, where, e, "level", 1, 64, &n->level);
	if (err)
		return err;
	if (n->parent < 0 && n->level != 1)
		return lerr(ld, "%s: level %d without a parent (level 1 nodes have none)", where,
			    n->level);
	if (n->parent >= 0 && n->level != m->nodes[n->parent].level + 1)
		return lerr(ld, "%s: level %d, but its parent '%s' is level %d", where, n->level,
			    m->nodes[n->parent].name, m->nodes[n->parent].level);
	if (n->level > m->max_level)
		m->max_level = n->level;

	if (n->parent < 0) {
		n->full_name = strdup(n->name);
	} else {
		const char *pf = m->nodes[n->parent].full_name;

		n->full_name = malloc(strlen(pf) + strlen(n->name) + 2);
		if (n->full_name)
			sprintf(n->full_name, "%s.%s", pf, n->name);
	}
	if (!n->full_name)
		return -ENOMEM;

	err = dup_string(ld, where, e, "domain", &n->domain);
	if (!err)
		err = dup_string(ld, where, e, "area", &n->area);
	if (!err)
		err = dup_string(ld, where, e, "desc", &n->desc);
	if (!err)
		err = compile(ld, where, e, "expr", false, -1, &n->expr);
	if (!err)
		err = compile(ld, where, e, "thresh", true, n->parent, &n->thresh);
	if (err)
		return err;

	json_object_object_get_ex(e, "maxval", &v);
	if (json_object_get_type(v) != json_type_null) {
		if (json_object_get_type(v) != json_type_int &&
		    json_object_get_type(v) != json_type_double)
			return lerr(ld, "%s: 'maxval' must be a number or null, not %s", where,
				    json_type_desc(v));
		err = json_to_number(ld, where, "maxval", v, &n->maxval);
		if (err)
			return err;
		n->has_maxval = true;
	}

	if (json_object_object_get_ex(e, "overlap", &v)) {
		err = want_type(ld, where, "overlap", v, json_type_boolean, "a boolean");
		if (err)
			return err;
		n->overlap = json_object_get_boolean(v);
	}

	err = get_array(ld, where, e, "siblings", &sibs);
	if (err)
		return err;
	n->siblings = calloc(json_object_array_length(sibs) + 1, sizeof(*n->siblings));
	if (!n->siblings)
		return -ENOMEM;
	for (k = 0; k < json_object_array_length(sibs); k++) {
		const char *name;
		int idx;

		err = array_string(ld, where, sibs, "siblings", k, "a node name", &name);
		if (err)
			return err;
		idx = find_kind(ld, name, EXPR_SYM_NODE);
		if (idx < 0)
			return lerr(ld, "%s: sibling '%.64s' is not a node", where, name);
		if (idx == i)
			return lerr(ld, "%s: lists itself as a sibling", where);
		n->siblings[n->nr_siblings++] = idx;
	}
	return load_node_samples(ld, where, n, e);
}

/*
 * A metric's "groups": what `--metrics GROUP,...` picks it by. A group is one word of
 * printable characters, no ',' (the option's separator) and no space, each once.
 */
static int load_metric_groups(struct loader *ld, const char *where, struct model_metric *mt,
			      json_object *e)
{
	json_object *arr;
	size_t nr;
	int err;

	err = get_array(ld, where, e, "groups", &arr);
	if (err || !arr)
		return err;
	nr = json_object_array_length(arr);
	mt->groups = calloc(nr + 1, sizeof(*mt->groups));
	if (!mt->groups)
		return -ENOMEM;
	for (size_t k = 0; k < nr; k++) {
		const char *name;
		size_t len;

		err = array_string(ld, where, arr, "groups", k, "a string", &name);
		if (err)
			return err;
		len = strlen(name);
		if (!len || len > 64 ||
		    len != (size_t)json_object_get_string_len(json_object_array_get_idx(arr, k)))
			return lerr(ld, "%s: groups[%zu] must be 1 to 64 characters", where, k);
		for (const char *c = name; *c; c++)
			if (*c <= ' ' || *c == ',' || *c == 0x7f)
				return lerr(ld, "%s: group '%.64s': no spaces, commas or control "
					    "characters in a group's name", where, name);
		for (int j = 0; j < mt->nr_groups; j++)
			if (!strcmp(mt->groups[j], name))
				return lerr(ld, "%s: group '%.64s' is listed twice", where, name);
		mt->groups[mt->nr_groups] = strdup(name);
		if (!mt->groups[mt->nr_groups])
			return -ENOMEM;
		mt->nr_groups++;
	}
	return 0;
}

static int load_metrics(struct loader *ld, json_object *arr)
{
	static const char *const required[] = { "name", "expr", "unit", "desc", NULL };
	static const char *const optional[] = { "groups", "default", NULL };
	struct model *m = ld->m;
	bool any_default = false;
	int i, err;

	for (i = 0; i < m->nr_metrics; i++) {
		json_object *e = json_object_array_get_idx(arr, i), *v;
		struct model_metric *mt = &m->metrics[i];
		char where[96];

		snprintf(where, sizeof(where), "metric '%s'", mt->name);
		err = check_keys(ld, where, e, required, optional);
		if (!err)
			err = dup_string(ld, where, e, "unit", &mt->unit);
		if (!err)
			err = dup_string(ld, where, e, "desc", &mt->desc);
		if (!err)
			err = compile(ld, where, e, "expr", false, -1, &mt->expr);
		if (!err)
			err = load_metric_groups(ld, where, mt, e);
		if (!err && json_object_object_get_ex(e, "default", &v)) {
			err = want_type(ld, where, "default", v, json_type_boolean, "a boolean");
			mt->is_default = !err && json_object_get_boolean(v);
		}
		if (err)
			return err;
		any_default |= mt->is_default;
	}
	/* A file of flat metrics that marks none (a model of one's own, an older record's)
	 * shows them all, as it was written to. */
	for (i = 0; !any_default && i < m->nr_metrics; i++)
		m->metrics[i].is_default = true;
	return 0;
}

/* --- references between aux, nodes and metrics --------------------------------------------- */

enum { WHITE, GRAY, BLACK };

static int entity_of(const struct model *m, enum expr_ref_kind kind, int index)
{
	switch (kind) {
	case EXPR_REF_AUX: return index;
	case EXPR_REF_NODE: return m->nr_aux + index;
	case EXPR_REF_METRIC: return m->nr_aux + m->nr_nodes + index;
	default: return -1;
	}
}

static const char *entity_desc(const struct model *m, int x, char *buf, size_t size)
{
	if (x < m->nr_aux)
		snprintf(buf, size, "aux '%s'", m->aux[x].name);
	else if (x < m->nr_aux + m->nr_nodes)
		snprintf(buf, size, "node '%s'", m->nodes[x - m->nr_aux].name);
	else
		snprintf(buf, size, "metric '%s'", m->metrics[x - m->nr_aux - m->nr_nodes].name);
	return buf;
}

static void entity_exprs(const struct model *m, int x, const struct expr **a, const struct expr **b)
{
	*b = NULL;
	if (x < m->nr_aux) {
		*a = m->aux[x].expr;
	} else if (x < m->nr_aux + m->nr_nodes) {
		*a = m->nodes[x - m->nr_aux].expr;
		*b = m->nodes[x - m->nr_aux].thresh;
	} else {
		*a = m->metrics[x - m->nr_aux - m->nr_nodes].expr;
	}
}

static int visit(struct loader *ld, int x, int above);

struct visit_ctx {
	struct loader *ld;
	int above;	/* nesting of the path that led here, this entity included */
	double cost;
	int nest;	/* deepest nesting below this entity */
};

static int visit_ref(void *ctx, enum expr_ref_kind kind, int index)
{
	struct visit_ctx *c = ctx;
	struct loader *ld = c->ld;
	int y = entity_of(ld->m, kind, index), err;

	if (y < 0)
		return 0;
	err = visit(ld, y, c->above);
	if (err)
		return err;
	c->cost += ld->cost[y];
	if (c->cost > MODEL_MAX_STEPS)
		c->cost = MODEL_MAX_STEPS + 1.0;
	if (ld->nest[y] > c->nest)
		c->nest = ld->nest[y];
	return 0;
}

static int report_cycle(struct loader *ld, int y)
{
	char path[512], buf[96];
	size_t len = 0;
	int i = ld->depth - 1;

	while (i > 0 && ld->stack[i] != y)
		i--;
	path[0] = 0;
	for (; i < ld->depth; i++) {
		len += snprintf(path + len, len < sizeof(path) ? sizeof(path) - len : 0, "%s -> ",
				entity_desc(ld->m, ld->stack[i], buf, sizeof(buf)));
		if (len >= sizeof(path))
			break;
	}
	if (len < sizeof(path))
		snprintf(path + len, sizeof(path) - len, "%s", entity_desc(ld->m, y, buf, sizeof(buf)));
	return lerr(ld, "references form a cycle: %s", path);
}

/*
 * Depth-first over the references (every branch), computing for each entity what one
 * computation of it costs with its references expanded, and how deep evaluation nests.
 */
static int visit(struct loader *ld, int x, int above)
{
	const struct expr *a, *b;
	struct visit_ctx c = { .ld = ld };
	int own, err;
	char buf[96];

	if (ld->color[x] == GRAY)
		return report_cycle(ld, x);
	if (ld->color[x] == BLACK)
		goto check;
	entity_exprs(ld->m, x, &a, &b);
	own = expr_depth(a);
	if (b && expr_depth(b) > own)
		own = expr_depth(b);
	/* Bounding the path also bounds this recursion. */
	if (above + own > MODEL_MAX_NESTING)
		return lerr(ld, "%s: expressions nest more than %d deep through the references",
			    entity_desc(ld->m, x, buf, sizeof(buf)), MODEL_MAX_NESTING);
	ld->color[x] = GRAY;
	ld->stack[ld->depth++] = x;
	c.above = above + own;
	err = expr_for_each_ref(a, NULL, visit_ref, &c);
	if (!err && b)
		err = expr_for_each_ref(b, NULL, visit_ref, &c);
	if (err)
		return err;
	ld->depth--;
	ld->color[x] = BLACK;
	c.cost += expr_size(a) + (b ? expr_size(b) : 0);
	ld->cost[x] = c.cost > MODEL_MAX_STEPS ? MODEL_MAX_STEPS + 1.0 : c.cost;
	ld->nest[x] = own + c.nest;
check:
	if (above + ld->nest[x] > MODEL_MAX_NESTING)
		return lerr(ld, "%s: expressions nest more than %d deep through the references",
			    entity_desc(ld->m, x, buf, sizeof(buf)), MODEL_MAX_NESTING);
	return 0;
}

static int check_references(struct loader *ld)
{
	struct model *m = ld->m;
	int nr = m->nr_aux + m->nr_nodes + m->nr_metrics, x, err;
	double steps = 0;

	ld->color = calloc(nr + 1, sizeof(*ld->color));
	ld->cost = calloc(nr + 1, sizeof(*ld->cost));
	ld->nest = calloc(nr + 1, sizeof(*ld->nest));
	ld->stack = calloc(nr + 1, sizeof(*ld->stack));
	if (!ld->color || !ld->cost || !ld->nest || !ld->stack)
		return -ENOMEM;
	for (x = 0; x < nr; x++) {
		err = visit(ld, x, 0);
		if (err)
			return err;
		if (x >= m->nr_aux)
			steps += ld->cost[x];
	}
	if (steps > MODEL_MAX_STEPS)
		return lerr(ld, "computing every node and metric once would take more than %d steps "
			    "(nodes reference each other too often)", MODEL_MAX_STEPS);
	return 0;
}

/* --- the file ----------------------------------------------------------------------------- */

static int parse_json(const struct loader *ld, const char *json, size_t len, json_object **out)
{
	struct json_parse_error e;
	int err;

	if (len > MODEL_MAX_FILE_SIZE)
		return lerr(ld, "larger than %d bytes", MODEL_MAX_FILE_SIZE);
	err = json_parse_strict(json, len, out, &e);
	if (err == -EINVAL)
		return lerr(ld, "line %d: %s", e.line, e.what);
	return err;
}

/*
 * metrics_left_out: [{"names": [...], "reason": "..."}], the source's metrics the model
 * does not have and why; a name the model has is an error.
 */
static int load_left_out(struct loader *ld, json_object *arr)
{
	static const char *const required[] = { "names", "reason", NULL };
	struct model *m = ld->m;
	size_t n = json_object_array_length(arr), total = 0;
	int err = 0;

	for (size_t i = 0; i < n; i++) {
		json_object *e = json_object_array_get_idx(arr, i), *names;

		if (json_object_get_type(e) != json_type_object ||
		    !json_object_object_get_ex(e, "names", &names) ||
		    json_object_get_type(names) != json_type_array)
			return lerr(ld, "metrics_left_out[%zu]: must be {\"names\": [...], "
				    "\"reason\": \"...\"}", i);
		total += json_object_array_length(names);
	}
	m->left_out_names = calloc(total + 1, sizeof(*m->left_out_names));
	m->left_out_reasons = calloc(total + 1, sizeof(*m->left_out_reasons));
	m->left_out_reason_texts = calloc(n + 1, sizeof(*m->left_out_reason_texts));
	if (!m->left_out_names || !m->left_out_reasons || !m->left_out_reason_texts)
		return -ENOMEM;
	for (size_t i = 0; !err && i < n; i++) {
		json_object *e = json_object_array_get_idx(arr, i), *names;
		char where[64];
		char **reason = &m->left_out_reason_texts[m->nr_left_out_reasons];

		snprintf(where, sizeof(where), "metrics_left_out[%zu]", i);
		err = check_keys(ld, where, e, required, NULL);
		if (!err)
			err = dup_string(ld, where, e, "reason", reason);
		if (err)
			break;
		m->nr_left_out_reasons++;
		json_object_object_get_ex(e, "names", &names);
		for (size_t k = 0; !err && k < json_object_array_length(names); k++) {
			const char *name;

			err = array_string(ld, where, names, "names", k, "a metric name", &name);
			for (int j = 0; !err && j < m->nr_metrics; j++)
				if (!strcmp(m->metrics[j].name, name))
					err = lerr(ld, "%s: '%.64s' is a metric the model has", where,
						   name);
			if (err)
				break;
			m->left_out_names[m->nr_left_out] = strdup(name);
			if (!m->left_out_names[m->nr_left_out])
				return -ENOMEM;
			m->left_out_reasons[m->nr_left_out++] = *reason;
		}
	}
	return err;
}

static int load(struct loader *ld, json_object *top)
{
	static const char *const required[] = { "name", "description", "vendor", "source",
						"match", "pmu", "events", NULL };
	static const char *const optional[] = { "constants", "aux", "nodes", "metrics",
						"metrics_left_out", NULL };
	static const char *const vendors[] = { "intel", "amd", "arm", "generic", NULL };
	struct model *m = ld->m;
	json_object *match, *pmu, *constants = NULL, *events, *aux, *nodes, *metrics, *left_out;
	size_t nr_syms;
	int i, err;

	err = want_type(ld, "file", "top level", top, json_type_object, "an object");
	if (!err)
		err = check_keys(ld, "top level", top, required, optional);
	if (!err)
		err = dup_string(ld, "top level", top, "name", &m->name);
	if (!err && (!*m->name || strspn(m->name, "abcdefghijklmnopqrstuvwxyz0123456789_-") !=
					  strlen(m->name)))
		err = lerr(ld, "name '%.64s' is not made of [a-z0-9_-]", m->name);
	if (!err)
		err = dup_string(ld, "top level", top, "description", &m->description);
	if (!err)
		err = dup_string(ld, "top level", top, "source", &m->source);
	if (!err)
		err = dup_string(ld, "top level", top, "vendor", &m->vendor);
	if (!err && !in_list(m->vendor, vendors))
		err = lerr(ld, "vendor '%.64s' is not intel, amd, arm or generic", m->vendor);
	if (!err)
		err = get_array(ld, "top level", top, "match", &match);
	if (!err)
		err = get_array(ld, "top level", top, "events", &events);
	if (!err)
		err = get_array(ld, "top level", top, "aux", &aux);
	if (!err)
		err = get_array(ld, "top level", top, "nodes", &nodes);
	if (!err)
		err = get_array(ld, "top level", top, "metrics", &metrics);
	if (!err)
		err = get_array(ld, "top level", top, "metrics_left_out", &left_out);
	if (!err && json_object_object_get_ex(top, "constants", &constants))
		err = want_type(ld, "top level", "constants", constants, json_type_object,
				"an object");
	if (err)
		return err;
	json_object_object_get_ex(top, "pmu", &pmu);

	nr_syms = json_object_array_length(events) +
		  (constants ? json_object_object_length(constants) : 0) +
		  (aux ? json_object_array_length(aux) : 0) +
		  (nodes ? json_object_array_length(nodes) : 0) +
		  (metrics ? json_object_array_length(metrics) : 0);
	ld->syms = calloc(nr_syms + 1, sizeof(*ld->syms));
	if (!ld->syms)
		return -ENOMEM;

	err = load_events(ld, events);
	if (!err && constants)
		err = load_constants(ld, constants);
	if (!err)
		err = collect_names(ld, aux, "aux", EXPR_SYM_AUX);
	if (!err)
		err = collect_names(ld, nodes, "nodes", EXPR_SYM_NODE);
	if (!err)
		err = collect_names(ld, metrics, "metrics", EXPR_SYM_METRIC);
	if (!err)
		err = index_symbols(ld);
	if (!err)
		err = load_match(ld, match);
	if (!err)
		err = load_pmu(ld, pmu);
	if (!err)
		err = load_aux(ld, aux);
	for (i = 0; !err && i < m->nr_nodes; i++)
		err = load_node(ld, i, json_object_array_get_idx(nodes, i));
	if (!err)
		err = load_metrics(ld, metrics);
	if (!err && left_out)
		err = load_left_out(ld, left_out);
	if (!err)
		err = check_references(ld);
	return err;
}

int model_load_string(const char *origin, const char *json, size_t len, struct model **mp)
{
	struct loader ld = { .origin = origin };
	json_object *top;
	int err;

	*mp = NULL;
	err = parse_json(&ld, json, len, &top);
	if (err)
		return err;
	ld.m = calloc(1, sizeof(*ld.m));
	if (!ld.m) {
		err = -ENOMEM;
		goto out;
	}
	ld.m->pmu.pm_leader = -1;
	ld.m->pmu.nmi_watchdog = -1;
	ld.m->origin = strdup(origin);
	ld.m->text = strndup(json, len);
	err = ld.m->origin && ld.m->text ? load(&ld, top) : -ENOMEM;
	if (err == -ENOMEM)
		pr_err("model '%s': out of memory", origin);
out:
	json_object_put(top);
	free(ld.syms);
	free(ld.color);
	free(ld.cost);
	free(ld.nest);
	free(ld.stack);
	if (err) {
		model_free(ld.m);
		return err;
	}
	*mp = ld.m;
	return 0;
}

int model_load_file(const char *path, struct model **mp)
{
	struct stat st;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;
	int err = 0;

	*mp = NULL;
	f = fopen(path, "r");
	if (!f) {
		err = -errno;
		pr_err("cannot open model file '%s': %s", path, strerror(-err));
		return err;
	}
	if (fstat(fileno(f), &st)) {
		err = -errno;
	} else if (!S_ISREG(st.st_mode)) {
		pr_err("model file '%s' is not a regular file", path);
		fclose(f);
		return -EINVAL;
	} else {
		err = json_read(f, MODEL_MAX_FILE_SIZE, &buf, &len);
	}
	fclose(f);
	if (err) {
		pr_err("cannot read model file '%s': %s", path, strerror(-err));
		return err;
	}
	err = model_load_string(path, buf, len, mp);
	free(buf);
	return err;
}

void model_free(struct model *m)
{
	int i;

	if (!m)
		return;
	for (i = 0; i < m->nr_left_out; i++)
		free(m->left_out_names[i]);
	free(m->left_out_names);
	free(m->left_out_reasons);
	for (i = 0; i < m->nr_left_out_reasons; i++)
		free(m->left_out_reason_texts[i]);
	free(m->left_out_reason_texts);
	free(m->origin);
	free(m->name);
	free(m->description);
	free(m->vendor);
	free(m->source);
	for (i = 0; i < m->nr_matches; i++) {
		free(m->matches[i].vendor);
		free(m->matches[i].ranges);
		free(m->matches[i].notice);
	}
	free(m->matches);
	free(m->pmu.fixed);
	free(m->pmu.pm_events);
	free(m->pmu.zero_events);
	free(m->pmu.libpfm4);
	free(m->text);
	for (i = 0; i < m->nr_constants; i++)
		free(m->constant_names[i]);
	free(m->constant_names);
	free(m->constant_values);
	for (i = 0; i < m->nr_events; i++) {
		free(m->events[i].name);
		free(m->events[i].encoding);
		free(m->events[i].sysfs);
	}
	free(m->events);
	for (i = 0; i < m->nr_aux; i++) {
		free(m->aux[i].name);
		expr_free(m->aux[i].expr);
	}
	free(m->aux);
	free(m->aux_exprs);
	for (i = 0; i < m->nr_nodes; i++) {
		struct model_node *n = &m->nodes[i];

		free(n->name);
		free(n->full_name);
		free(n->domain);
		free(n->area);
		free(n->desc);
		expr_free(n->expr);
		expr_free(n->thresh);
		free(n->siblings);
		free(n->sample_events);
		free(n->sample_precise);
	}
	free(m->nodes);
	for (i = 0; i < m->nr_metrics; i++) {
		free(m->metrics[i].name);
		free(m->metrics[i].unit);
		free(m->metrics[i].desc);
		expr_free(m->metrics[i].expr);
		for (int k = 0; k < m->metrics[i].nr_groups; k++)
			free(m->metrics[i].groups[k]);
		free(m->metrics[i].groups);
	}
	free(m->metrics);
	free(m);
}

/* --- accessors ---------------------------------------------------------------------------- */

const char *model_name(const struct model *m)
{
	return m->name;
}

const char *model_source(const struct model *m)
{
	return m->text;
}

const char *model_libpfm4_pmu(const struct model *m)
{
	return m->pmu.libpfm4;
}

const char *model_description(const struct model *m)
{
	return m->description;
}

const char *model_vendor(const struct model *m)
{
	return m->vendor;
}

bool model_software(const struct model *m)
{
	return m->pmu.software;
}

int model_max_level(const struct model *m)
{
	return m->max_level;
}

int model_level(const struct model *m, int level, char *notice, size_t len)
{
	notice[0] = '\0';
	if (!level)
		level = 1;
	if (!m->max_level && level > 1) {
		/* sw, generic: a table of metrics, which -l must not seem to deepen. */
		snprintf(notice, len, "level %d: model '%s' has no tree, one level of metrics: "
			 "showing it", level, m->name);
		return 1;
	}
	if (!m->max_level || level <= m->max_level)
		return level;
	if (m->max_level == 1)
		snprintf(notice, len, "level %d: model '%s' has level 1 only: showing it", level,
			 m->name);
	else
		snprintf(notice, len, "level %d: model '%s' has levels 1 to %d: showing them",
			 level, m->name, m->max_level);
	return m->max_level;
}

bool model_has_perf_metrics(const struct model *m)
{
	return m->pmu.pm_leader >= 0;
}

const char *model_perf_metrics_event(const struct model *m, int i)
{
	if (m->pmu.pm_leader < 0 || i < 0 || i > m->pmu.nr_pm_events)
		return NULL;
	return m->events[i ? m->pmu.pm_events[i - 1] : m->pmu.pm_leader].name;
}

int model_slots(const struct model *m)
{
	return m->pmu.slots;
}

const char *model_perf_metrics_sysfs(const struct model *m)
{
	int i;

	for (i = 0; i < m->pmu.nr_pm_events; i++) {
		if (m->events[m->pmu.pm_events[i]].sysfs)
			return m->events[m->pmu.pm_events[i]].sysfs;
	}
	return NULL;
}

bool model_matches(const struct model *m, const char *vendor, int family, int cpu_model,
		    const char **notice)
{
	int i, r;

	for (i = 0; i < m->nr_matches; i++) {
		const struct model_match *mt = &m->matches[i];

		if (strcmp(mt->vendor, vendor) || mt->family != family)
			continue;
		for (r = 0; r < mt->nr_ranges; r++) {
			if (cpu_model >= mt->ranges[r].lo && cpu_model <= mt->ranges[r].hi) {
				if (notice)
					*notice = mt->notice;
				return true;
			}
		}
	}
	return false;
}

/* --- built-in models ---------------------------------------------------------------------- */

static const struct {
	const char *name;
	const char *json;
} builtins[] = { CGTMA_BUILTIN_MODELS { NULL, NULL } };

#define NR_BUILTINS ((int)ARRAY_SIZE(builtins) - 1)

const char *const *model_builtin_names(void)
{
	static const char *names[ARRAY_SIZE(builtins)];
	int i;

	for (i = 0; i < NR_BUILTINS; i++)
		names[i] = builtins[i].name;
	names[NR_BUILTINS] = NULL;
	return names;
}

/*
 * The names users know the models' CPUs by (microarchitectures, products, the cloud chips
 * built on Neoverse cores), written as squashed() leaves them. They are only offered when -M
 * names no model, never taken for one: "skylake" is the client part too, which skx's
 * formulas (and CPU match) are not for, and a run names the model it used.
 */
static const struct {
	const char *name;
	const char *model;
} known_names[] = {
	{ "skylake", "skx" }, { "skylakesp", "skx" }, { "skylakex", "skx" },
	{ "skylakeserver", "skx" }, { "cascadelake", "skx" }, { "cascadelakesp", "skx" },
	{ "clx", "skx" }, { "cooperlake", "skx" }, { "cpx", "skx" },
	{ "icelake", "icx" }, { "icelakesp", "icx" }, { "icelakex", "icx" },
	{ "icelakeserver", "icx" },
	{ "sapphirerapids", "spr" }, { "emeraldrapids", "spr" }, { "emr", "spr" },
	{ "graniterapids", "gnr" }, { "xeon6", "gnr" },
	{ "genoa", "zen4" }, { "bergamo", "zen4" }, { "siena", "zen4" }, { "turin", "zen5" },
	{ "n1", "neoverse-n1" }, { "n2", "neoverse-n2" }, { "n3", "neoverse-n3" },
	{ "v1", "neoverse-v1" }, { "v2", "neoverse-v2" }, { "v3", "neoverse-v3" },
	{ "graviton2", "neoverse-n1" }, { "altra", "neoverse-n1" },
	{ "graviton3", "neoverse-v1" }, { "graviton4", "neoverse-v2" },
	{ "grace", "neoverse-v2" }, { "axion", "neoverse-v2" }, { "cobalt100", "neoverse-n2" },
	{ "software", "sw" },
};

/* s without '-', '_', '.' and spaces, into buf: "Skylake-X" is "Skylakex" (case is ignored). */
static const char *squashed(const char *s, char *buf, size_t len)
{
	size_t o = 0;

	for (; *s && o + 1 < len; s++)
		if (!strchr("-_. ", *s))
			buf[o++] = *s;
	buf[o] = '\0';
	return buf;
}

void model_suggest(const char *name, char *buf, size_t len)
{
	char typo[64], cand[64];
	struct suggest sg;
	int err = 0;

	buf[0] = '\0';
	squashed(name, typo, sizeof(typo));
	if (!*typo)
		return;
	suggest_init(&sg, typo);
	for (int i = 0; i < NR_BUILTINS && !err; i++)
		err = suggest_offer(&sg, builtins[i].name,
				    suggest_score(typo, squashed(builtins[i].name, cand,
								 sizeof(cand))));
	for (size_t i = 0; i < ARRAY_SIZE(known_names) && !err; i++)
		err = suggest_offer(&sg, known_names[i].model,
				    suggest_score(typo, known_names[i].name));
	if (!err)
		suggest_format(&sg, buf, len);
	suggest_release(&sg);
}

int model_load_builtin(const char *name, struct model **mp)
{
	char origin[128], close[SUGGEST_LEN];
	int i;

	*mp = NULL;
	for (i = 0; i < NR_BUILTINS; i++) {
		if (strcmp(builtins[i].name, name))
			continue;
		snprintf(origin, sizeof(origin), "user/models/%s.json (built in)", name);
		return model_load_string(origin, builtins[i].json, strlen(builtins[i].json), mp);
	}
	model_suggest(name, close, sizeof(close));
	pr_err("no built-in model '%s'%s%s (cgtma --list-models lists them)", name,
	       *close ? ": " : "", close);
	return -ENOENT;
}

int model_match_cpu(const char *vendor, int family, int cpu_model, const char **name,
		     const char **notice)
{
	/*
	 * The models stay loaded: *notice points into one. They are reachable from here, so
	 * leak checkers do not count them.
	 */
	static struct model *loaded[ARRAY_SIZE(builtins)];
	int i, err;

	*name = NULL;
	if (notice)
		*notice = NULL;
	for (i = 0; i < NR_BUILTINS; i++) {
		if (!loaded[i]) {
			err = model_load_builtin(builtins[i].name, &loaded[i]);
			if (err)
				return err;
		}
		if (model_matches(loaded[i], vendor, family, cpu_model, notice)) {
			*name = builtins[i].name;
			return 0;
		}
	}
	return -ENOENT;
}

/* --- metric selection (--metrics) ----------------------------------------------------------- */

/*
 * Whether item (len bytes) names metric mt or one of its groups, case ignored; by_name:
 * its name alone, exactly (a record's list of the metrics a run computed).
 */
static bool metric_matches(const struct model_metric *mt, const char *item, size_t len,
			   bool by_name)
{
	if (by_name)
		return strlen(mt->name) == len && !strncmp(mt->name, item, len);
	if (strlen(mt->name) == len && !strncasecmp(mt->name, item, len))
		return true;
	for (int k = 0; k < mt->nr_groups; k++)
		if (strlen(mt->groups[k]) == len && !strncasecmp(mt->groups[k], item, len))
			return true;
	return false;
}

bool model_metric_selected(const struct model *m, int i, const char *list, bool by_name)
{
	const struct model_metric *mt = &m->metrics[i];

	if (mt->is_default || (list && !*list))
		return true;
	for (const char *p = list; p && *p; p += *p == ',') {
		size_t len = strcspn(p, ",");

		if (len && metric_matches(mt, p, len, by_name))
			return true;
		p += len;
	}
	return false;
}

bool model_metric_is_default(const struct model *m, const char *name)
{
	for (int i = 0; i < m->nr_metrics; i++)
		if (!strcmp(m->metrics[i].name, name))
			return m->metrics[i].is_default;
	return false;
}

int model_extra_metrics(const struct model *m)
{
	int n = 0;

	for (int i = 0; i < m->nr_metrics; i++)
		n += !m->metrics[i].is_default;
	return n;
}

/* What is close to a --metrics item that matched nothing: the metrics' names and groups. */
static void metrics_suggest(const struct model *m, const char *item, char *buf, size_t len)
{
	struct suggest sg;
	int err = 0;

	suggest_init(&sg, item);
	for (int i = 0; i < m->nr_metrics && !err; i++) {
		err = suggest_add(&sg, m->metrics[i].name);
		for (int k = 0; k < m->metrics[i].nr_groups && !err; k++)
			err = suggest_add(&sg, m->metrics[i].groups[k]);
	}
	buf[0] = '\0';
	if (!err)
		suggest_format(&sg, buf, len);
	suggest_release(&sg);
}

int model_metrics_check(const struct model *m, const char *list)
{
	char item[128], close[SUGGEST_LEN];

	for (const char *p = list; p && *p; p++) {
		size_t len = strcspn(p, ",");
		bool found = false;

		if (!len) {
			pr_err("--metrics '%s': an empty item in the list", list);
			return -EINVAL;
		}
		for (int i = 0; i < m->nr_metrics && !found; i++)
			found = metric_matches(&m->metrics[i], p, len, false);
		if (!found) {
			snprintf(item, sizeof(item), "%.*s", (int)(len < 100 ? len : 100), p);
			for (int i = 0; i < m->nr_left_out; i++)
				if (!strcasecmp(m->left_out_names[i], item)) {
					pr_err("--metrics: model %s leaves %s out: %s", m->name,
					       m->left_out_names[i], m->left_out_reasons[i]);
					return -EINVAL;
				}
			metrics_suggest(m, item, close, sizeof(close));
			pr_err("--metrics: model %s has no metric or metric group '%s'%s%s "
			       "(cgtma list-events -M %s -m lists them)", m->name, item,
			       *close ? ": " : "", close, m->name);
			return -EINVAL;
		}
		p += len;
		if (!*p)
			break;
		if (!p[1]) {
			pr_err("--metrics '%s': an empty item in the list", list);
			return -EINVAL;
		}
	}
	return 0;
}
