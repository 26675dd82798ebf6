// SPDX-License-Identifier: GPL-2.0
/*
 * Model files and what is built from them: the loader's checks and messages, the built-in
 * models (they load, their CPU matches do not overlap, their plans fit the PMU in every
 * configuration), grouping, and the evaluation rules of user/models/README.md on small
 * models made for each rule.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "bpf/cgtma.h"
#include "capture.h"
#include "loadmodel.h"
#include "model_internal.h"
#include "suggest.h"
#include "test.h"

/* --- building small models ---------------------------------------------------------------- */

/* JOIN(a, b, c) is a ", " b ", " c: JSON lists of string literals, up to 16 items. */
#define COUNT_(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13, _14, _15, _16, n, ...) n
#define COUNT(...) COUNT_(__VA_ARGS__, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0)
#define JOIN(...) JOIN_(COUNT(__VA_ARGS__), __VA_ARGS__)
#define JOIN_(n, ...) JOIN__(n, __VA_ARGS__)
#define JOIN__(n, ...) JOIN##n(__VA_ARGS__)
#define JOIN1(a) a
#define JOIN2(a, ...) a ", " JOIN1(__VA_ARGS__)
#define JOIN3(a, ...) a ", " JOIN2(__VA_ARGS__)
#define JOIN4(a, ...) a ", " JOIN3(__VA_ARGS__)
#define JOIN5(a, ...) a ", " JOIN4(__VA_ARGS__)
#define JOIN6(a, ...) a ", " JOIN5(__VA_ARGS__)
#define JOIN7(a, ...) a ", " JOIN6(__VA_ARGS__)
#define JOIN8(a, ...) a ", " JOIN7(__VA_ARGS__)
#define JOIN9(a, ...) a ", " JOIN8(__VA_ARGS__)
#define JOIN10(a, ...) a ", " JOIN9(__VA_ARGS__)
#define JOIN11(a, ...) a ", " JOIN10(__VA_ARGS__)
#define JOIN12(a, ...) a ", " JOIN11(__VA_ARGS__)
#define JOIN13(a, ...) a ", " JOIN12(__VA_ARGS__)
#define JOIN14(a, ...) a ", " JOIN13(__VA_ARGS__)
#define JOIN15(a, ...) a ", " JOIN14(__VA_ARGS__)
#define JOIN16(a, ...) a ", " JOIN15(__VA_ARGS__)

#define HEAD                                                                                   \
	"{\"name\": \"t\", \"description\": \"test\", \"vendor\": \"intel\", \"source\": "     \
	"\"tests\", \"match\": [], "
#define PMU(n) "\"pmu\": {\"generic_counters\": " #n "}, "
#define EVENTS(...) "\"events\": [" JOIN(__VA_ARGS__) "], "
#define EV(n) "{\"name\": \"" n "\", \"encoding\": \"r" n "\"}"
#define AUX(...) "\"aux\": [" JOIN(__VA_ARGS__) "], "
#define AX(n, e) "{\"name\": \"" n "\", \"expr\": \"" e "\"}"
#define METRICS(...) "\"metrics\": [" JOIN(__VA_ARGS__) "], "
#define MX(n, e) "{\"name\": \"" n "\", \"expr\": \"" e "\", \"unit\": \"u\", \"desc\": \"d\"}"
#define NODES(...) "\"nodes\": [" JOIN(__VA_ARGS__) "]}"
/* A node: name, parent ("null" or "\"P\""), level, expr, thresh, maxval, siblings, more keys */
#define NODEX(n, p, l, e, t, maxval, sibs, more)                                               \
	"{\"name\": \"" n "\", \"parent\": " p ", \"level\": " #l ", \"domain\": \"Slots\", "  \
	"\"area\": \"FE\", \"expr\": \"" e "\", \"thresh\": \"" t "\", \"maxval\": " maxval   \
	", \"siblings\": [" sibs "], \"desc\": \"d\"" more "}"
#define NODE(n, p, l, e, t) NODEX(n, p, l, e, t, "null", "", "")
#define ROOT(n, e, t) NODE(n, "null", 1, e, t)

#define VALID HEAD PMU(4) EVENTS(EV("A"), EV("B")) NODES(ROOT("N1", "A / B", "val > 0.1"))

#define load load_model_text

/* --- the loader --------------------------------------------------------------------------- */

static const struct {
	const char *json;
	const char *msg;	/* what the one-line message must contain */
} bad_files[] = {
	{ "", "line 1: unexpected end of the file" },
	{ "{\n\"name\": \"t\",\n\"vendor\" \"intel\"}", "line 3: invalid JSON" },
	{ "{\"name\": \"t\",\n\n\"x\": [1, 2,]}", "line 3: invalid JSON" },
	{ VALID "\n\n x", "line 3: invalid JSON" },
	{ "[]", "'top level' must be an object, not an array" },
	{ HEAD PMU(4) EVENTS(EV("A")) "\"nodez\": []}", "top level: unknown key 'nodez'" },
	{ "{\"name\": \"t\", \"description\": \"d\", \"vendor\": \"intel\", \"source\": \"s\", "
	  "\"pmu\": {\"generic_counters\": 4}, \"events\": []}",
	  "top level: missing key 'match'" },
	{ HEAD PMU(4) "\"events\": {}}", "top level: 'events' must be an array, not an object" },
	{ "{\"name\": \"T-1\", \"description\": \"d\", \"vendor\": \"intel\", \"source\": \"s\", "
	  "\"match\": [], \"pmu\": {\"generic_counters\": 4}, \"events\": []}",
	  "name 'T-1' is not made of [a-z0-9_-]" },
	{ "{\"name\": \"t\", \"description\": \"d\", \"vendor\": \"mips\", \"source\": \"s\", "
	  "\"match\": [], \"pmu\": {\"generic_counters\": 4}, \"events\": []}",
	  "vendor 'mips' is not intel, amd, arm or generic" },
	/* events */
	{ HEAD PMU(4) EVENTS("{\"name\": \"A\", \"encoding\": 5}") NODES(),
	  "event 'A': 'encoding' must be a string, not an integer" },
	{ HEAD PMU(4) EVENTS("{\"name\": \"A\"}") NODES(), "events[0]: missing key 'encoding'" },
	{ HEAD PMU(4) EVENTS("{\"name\": \"A\", \"encoding\": \"x\", \"umask\": 1}") NODES(),
	  "events[0]: unknown key 'umask'" },
	{ HEAD PMU(4) EVENTS("{\"name\": \"A\\\"B\", \"encoding\": \"x\"}") NODES(),
	  "'A\"B' is not a valid event name" },
	{ HEAD PMU(4) EVENTS(EV("A"), EV("A")) NODES(), "event 'A' is defined twice" },
	{ HEAD PMU(4) EVENTS("{\"name\": \"A\", \"encoding\": \"x\", \"retire_latency\": -1}")
		  NODES(),
	  "event 'A': 'retire_latency' is negative" },
	{ "{\"name\": \"t\", \"description\": \"d\", \"vendor\": \"intel\", \"source\": \"s\", "
	  "\"match\": [], \"pmu\": {\"generic_counters\": 4}, \"constants\": {\"W\": -4}, "
	  "\"events\": []}",
	  "constants: 'W' is negative (-4)" },
	{ "{\"name\": \"t\", \"description\": \"d\", \"vendor\": \"intel\", \"source\": \"s\", "
	  "\"match\": [], \"pmu\": {\"generic_counters\": 4}, \"constants\": {\"W\": 1e400}, "
	  "\"events\": []}",
	  "constants: 'W' is not a finite number" },
	{ HEAD PMU(4) EVENTS("{\"name\": \"A\\u0000\", \"encoding\": \"x\"}") NODES(),
	  "events[0]: 'name' contains a NUL character" },
	/* match */
	{ "{\"name\": \"t\", \"description\": \"d\", \"vendor\": \"intel\", \"source\": \"s\", "
	  "\"match\": [{\"vendor\": \"GenuineIntel\", \"family\": 6, \"models\": [\"x\"]}], "
	  "\"pmu\": {\"generic_counters\": 4}, \"events\": []}",
	  "match[0]: 'models[0]' must be a model number, a hex string (\"0xd49\") or a [lo, hi] "
	  "range" },
	{ "{\"name\": \"t\", \"description\": \"d\", \"vendor\": \"arm\", \"source\": \"s\", "
	  "\"match\": [{\"vendor\": \"0x41\", \"family\": 8, \"models\": [\"0xd4g\"]}], "
	  "\"pmu\": {\"generic_counters\": 6}, \"events\": []}",
	  "match[0]: 'models[0]' is not a hex model number in [0x0, 0xffff]" },
	{ "{\"name\": \"t\", \"description\": \"d\", \"vendor\": \"intel\", \"source\": \"s\", "
	  "\"match\": [{\"vendor\": \"GenuineIntel\", \"family\": 6, \"models\": [[9, 2]]}], "
	  "\"pmu\": {\"generic_counters\": 4}, \"events\": []}",
	  "match[0]: models[0]: empty range [9, 2]" },
	{ "{\"name\": \"t\", \"description\": \"d\", \"vendor\": \"intel\", \"source\": \"s\", "
	  "\"match\": [{\"vendor\": \"GenuineIntel\", \"family\": 6, \"model\": [1]}], "
	  "\"pmu\": {\"generic_counters\": 4}, \"events\": []}",
	  "match[0]: unknown key 'model'" },
	{ "{\"name\": \"t\", \"description\": \"d\", \"vendor\": \"intel\", \"source\": \"s\", "
	  "\"match\": [{\"vendor\": \"GenuineIntel\", \"family\": -1, \"models\": [1]}], "
	  "\"pmu\": {\"generic_counters\": 4}, \"events\": []}",
	  "match[0]: 'family' is -1, out of range" },
	/* pmu */
	{ HEAD "\"pmu\": {}, " EVENTS(EV("A")) NODES(), "pmu: missing key 'generic_counters'" },
	{ HEAD "\"pmu\": {\"generic_counters\": 4, \"fixed\": [\"X\"]}, " EVENTS(EV("A")) NODES(),
	  "pmu: fixed[0]: unknown event 'X'" },
	{ HEAD "\"pmu\": {\"generic_counters\": 4, \"perf_metrics\": {\"leader\": \"X\", "
	  "\"events\": [\"A\"]}}, " EVENTS(EV("A")) NODES(),
	  "pmu: perf_metrics: unknown leader event 'X'" },
	{ HEAD "\"pmu\": {\"generic_counters\": 4, \"perf_metrics\": {\"leader\": \"A\", "
	  "\"events\": []}}, " EVENTS(EV("A")) NODES(),
	  "pmu: perf_metrics: 'events' is empty" },
	{ HEAD "\"pmu\": {\"generic_counters\": \"4\"}, " EVENTS(EV("A")) NODES(),
	  "pmu: 'generic_counters' must be an integer, not a string" },
	/* nodes */
	{ HEAD PMU(4) EVENTS(EV("A")) NODES(ROOT("N1", "A + BOGUS", "val > 0.1")),
	  "node 'N1': expr: position 5: unknown name 'BOGUS'" },
	{ HEAD PMU(4) EVENTS(EV("A")) NODES(ROOT("N1", "A", "val >")),
	  "node 'N1': thresh: position 6: expected a value" },
	{ HEAD PMU(4) EVENTS(EV("A")) NODES(ROOT("N1", "A", "val > 0.1 and thresh(parent)")),
	  "node 'N1': thresh: position 22: thresh(parent) where there is no parent" },
	{ HEAD PMU(4) EVENTS(EV("A")) NODES(NODE("N1", "\"Nope\"", 2, "A", "val > 0.1")),
	  "node 'N1': parent 'Nope' is not a node" },
	{ HEAD PMU(4) EVENTS(EV("A")) NODES(NODE("N1", "\"N2\"", 2, "A", "val > 0.1"),
					    ROOT("N2", "A", "val > 0.1")),
	  "node 'N1': parent 'N2' comes after it" },
	{ HEAD PMU(4) EVENTS(EV("A")) NODES(ROOT("N1", "A", "val > 0.1"),
					    NODE("N2", "\"N1\"", 3, "A", "val > 0.1")),
	  "node 'N2': level 3, but its parent 'N1' is level 1" },
	{ HEAD PMU(4) EVENTS(EV("A")) NODES(NODE("N1", "null", 2, "A", "val > 0.1")),
	  "node 'N1': level 2 without a parent" },
	{ HEAD PMU(4) EVENTS(EV("A")) NODES(ROOT("N1", "A", "val > 0.1"),
					    ROOT("N1", "A", "val > 0.1")),
	  "node 'N1' is defined twice" },
	{ HEAD PMU(4) EVENTS(EV("A")) NODES(ROOT("A", "1", "val > 0.1")),
	  "'A' is defined both as event and as node" },
	{ HEAD PMU(4) EVENTS(EV("A")) NODES(ROOT("N.1", "A", "val > 0.1")),
	  "'N.1' is not a valid node name" },
	{ HEAD PMU(4) EVENTS(EV("A")) NODES(ROOT("val", "A", "val > 0.1")),
	  "'val' is a reserved word" },
	{ HEAD PMU(4) EVENTS(EV("A")) NODES(NODEX("N1", "null", 1, "A", "val > 0.1", "\"1\"", "",
						   "")),
	  "node 'N1': 'maxval' must be a number or null, not a string" },
	{ HEAD PMU(4) EVENTS(EV("A")) NODES(NODEX("N1", "null", 1, "A", "val > 0.1", "null",
						   "\"N9\"", "")),
	  "node 'N1': sibling 'N9' is not a node" },
	{ HEAD PMU(4) EVENTS(EV("A")) NODES(NODEX("N1", "null", 1, "A", "val > 0.1", "null", "",
						   ", \"overlap\": 1")),
	  "node 'N1': 'overlap' must be a boolean, not an integer" },
	/* sample: events of the model, with at most toplev's ":ppp" */
	{ HEAD PMU(4) EVENTS(EV("A")) NODES(NODEX("N1", "null", 1, "A", "val > 0.1", "null", "",
						   ", \"sample\": [\"B:pp\"]")),
	  "node 'N1': sample 'B' is not an event of the model" },
	{ HEAD PMU(4) EVENTS(EV("A")) NODES(NODEX("N1", "null", 1, "A", "val > 0.1", "null", "",
						   ", \"sample\": [\"A:pppp\"]")),
	  "node 'N1': sample 'A:pppp': at most three p's (perf's precise_ip)" },
	{ HEAD PMU(4) EVENTS(EV("A")) NODES(NODEX("N1", "null", 1, "A", "val > 0.1", "null", "",
						   ", \"sample\": [1]")),
	  "node 'N1': sample[0] must be an event name, not an integer" },
	{ HEAD PMU(4) EVENTS(EV("A")) NODES("{\"name\": \"N1\", \"parent\": null, \"level\": 1}"),
	  "node 'N1': missing key 'domain'" },
	{ HEAD PMU(4) EVENTS(EV("A")) NODES("{\"parent\": null}"), "nodes[0]: missing key 'name'" },
	/* references: cycles and bounds */
	{ HEAD PMU(4) EVENTS(EV("A")) NODES(ROOT("N1", "N2 + A", "val > 0.1"),
					    ROOT("N2", "N1 * 2", "val > 0.1")),
	  "references form a cycle: node 'N1' -> node 'N2' -> node 'N1'" },
	{ HEAD PMU(4) EVENTS(EV("A")) NODES(ROOT("N1", "A", "val > N1")),
	  "references form a cycle: node 'N1' -> node 'N1'" },
	{ HEAD PMU(4) EVENTS(EV("A")) AUX(AX("X", "Y + 1"), AX("Y", "A * X")) NODES(),
	  "references form a cycle: aux 'X' -> aux 'Y' -> aux 'X'" },
	{ HEAD PMU(4) EVENTS(EV("A")) AUX(AX("X", "N1")) NODES(ROOT("N1", "X", "val > 0")),
	  "references form a cycle: aux 'X' -> node 'N1' -> aux 'X'" },
	{ HEAD PMU(4) EVENTS(EV("A")) METRICS(MX("M", "M + 1")) NODES(),
	  "references form a cycle: metric 'M' -> metric 'M'" },
	{ HEAD PMU(4) EVENTS(EV("A")) METRICS("{\"name\": \"M\", \"expr\": \"A\", \"unit\": 3, "
					       "\"desc\": \"d\"}") NODES(),
	  "metric 'M': 'unit' must be a string, not an integer" },
	{ HEAD PMU(4) EVENTS(EV("A")) AUX("{\"name\": \"X\", \"expr\": \"A\", \"desc\": \"d\"}")
		  NODES(),
	  "aux 'X': unknown key 'desc'" },
};

static void test_bad_files(void)
{
	size_t i;

	for (i = 0; i < sizeof(bad_files) / sizeof(bad_files[0]); i++) {
		char *msg = NULL;
		struct model *m = load(bad_files[i].json, &msg);

		CHECK(m == NULL, "bad file %zu loaded", i);
		CHECK(msg && strstr(msg, bad_files[i].msg), "bad file %zu: got '%s', want '%s'", i,
		      msg ? msg : "", bad_files[i].msg);
		CHECK(msg && !strncmp(msg, "cgtma: model 't.json': ", 23),
		      "bad file %zu: message does not name the file: %s", i, msg ? msg : "");
		CHECK(msg && strchr(msg, '\n') == msg + strlen(msg) - 1,
		      "bad file %zu: not exactly one line: %s", i, msg ? msg : "");
		free(msg);
		model_free(m);
	}
}

/* A NUL byte inside the buffer, and names with control characters, keep messages one line. */
static void test_bad_bytes(void)
{
	static const char json[] = "{\"name\": \"t\"}\0 trailing";
	char *msg = NULL;
	struct capture c;
	struct model *m;
	int err;

	capture_begin(&c, 2);
	err = model_load_string("t.json", json, sizeof(json) - 1, &m);
	msg = capture_end(&c);
	CHECK_INT(err, -EINVAL);
	CHECK(msg && strstr(msg, "line 1: NUL byte in the file"), "%s", msg);
	free(msg);

	m = load(HEAD PMU(4) EVENTS(EV("A")) NODES(ROOT("N1", "A + \\\"x\\ny\\\"", "val > 0")),
		 &msg);
	CHECK(m == NULL, "loaded");
	CHECK(msg && strchr(msg, '\n') == msg + strlen(msg) - 1, "not one line: %s", msg);
	free(msg);
	model_free(m);
}

static void test_limits(void)
{
	char json[32768], *msg = NULL;
	struct model *m;
	int i, n;

	/* Each node reads the previous one twice: 2^30 computations for the last one. */
	n = snprintf(json, sizeof(json), HEAD PMU(4) EVENTS(EV("A")) "\"nodes\": [" ROOT(
						 "N0", "A", "val > 0"));
	for (i = 1; i < 30; i++)
		n += snprintf(json + n, sizeof(json) - n,
			      ", " ROOT("N%d", "N%d + N%d", "val > 0"), i, i - 1, i - 1);
	snprintf(json + n, sizeof(json) - n, "]}");
	m = load(json, &msg);
	CHECK(m == NULL, "exponential model loaded");
	CHECK(msg && strstr(msg, "more than 1000000 steps"), "%s", msg);
	free(msg);
	model_free(m);

	/* A long chain of aux, each nesting a little: the evaluation stack is bounded. */
	n = snprintf(json, sizeof(json), HEAD PMU(4) EVENTS(EV("A")) "\"aux\": [" AX("X0", "A"));
	for (i = 1; i < 400; i++)
		n += snprintf(json + n, sizeof(json) - n, ", " AX("X%d", "(X%d + 1) * 2"), i, i - 1);
	snprintf(json + n, sizeof(json) - n, "]}");
	m = load(json, &msg);
	CHECK(m == NULL, "deeply nested model loaded");
	CHECK(msg && strstr(msg, "nest more than 1000 deep"), "%s", msg);
	free(msg);
	model_free(m);

	/* The same chain, short, is fine. */
	n = snprintf(json, sizeof(json), HEAD PMU(4) EVENTS(EV("A")) "\"aux\": [" AX("X0", "A"));
	for (i = 1; i < 100; i++)
		n += snprintf(json + n, sizeof(json) - n, ", " AX("X%d", "(X%d + 1) * 2"), i, i - 1);
	snprintf(json + n, sizeof(json) - n, "]}");
	m = load(json, &msg);
	CHECK(m != NULL, "short chain: %s", msg);
	free(msg);
	model_free(m);
}

static void test_load_file(void)
{
	struct capture c;
	struct model *m;
	char *msg;
	int err;

	capture_begin(&c, 2);
	err = model_load_file("tests/no/such/model.json", &m);
	msg = capture_end(&c);
	CHECK_INT(err, -ENOENT);
	CHECK(msg && strstr(msg, "cannot open model file 'tests/no/such/model.json': No such file"),
	      "%s", msg);
	free(msg);

	capture_begin(&c, 2);
	err = model_load_file("tests", &m);
	msg = capture_end(&c);
	CHECK_INT(err, -EINVAL);
	CHECK(msg && strstr(msg, "is not a regular file"), "%s", msg);
	free(msg);

	err = model_load_file("user/models/spr.json", &m);
	CHECK_INT(err, 0);
	if (!err)
		CHECK_STR(model_name(m), "spr");
	model_free(m);

	capture_begin(&c, 2);
	err = model_load_builtin("nosuchmodel", &m);
	msg = capture_end(&c);
	CHECK_INT(err, -ENOENT);
	CHECK(msg && strstr(msg, "no built-in model 'nosuchmodel'"), "%s", msg);
	free(msg);
}

/* -M NAME that is no model: the models close to it, or to the CPU names it is known by. */
static void test_suggest(void)
{
	static const struct {
		const char *name, *want;
	} cases[] = {
		{ "skylake", "did you mean 'skx'?" },
		{ "Skylake-X", "did you mean 'skx'?" },
		{ "cascadelake", "did you mean 'skx'?" },
		{ "icelake", "did you mean 'icx'?" },
		{ "Sapphire Rapids", "did you mean 'spr'?" },
		{ "graniterapids", "did you mean 'gnr'?" },
		{ "genoa", "did you mean 'zen4'?" },
		{ "turin", "did you mean 'zen5'?" },
		{ "graviton3", "did you mean 'neoverse-v1'?" },
		{ "n1", "did you mean 'neoverse-n1'?" },
		{ "neoverse_v2", "did you mean 'neoverse-v2'?" },
		{ "sprr", "did you mean 'spr'?" },
		{ "zen", "did you mean 'zen4' or 'zen5'?" },
		{ "xyzzy", "" },
		{ "", "" },
	};
	char buf[SUGGEST_LEN];
	struct capture c;
	struct model *m;
	char *msg;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		model_suggest(cases[i].name, buf, sizeof(buf));
		CHECK(!strcmp(buf, cases[i].want), "'%s': '%s', want '%s'", cases[i].name, buf,
		      cases[i].want);
	}
	capture_begin(&c, 2);
	CHECK_INT(model_load_builtin("skylake", &m), -ENOENT);
	msg = capture_end(&c);
	CHECK(msg && strstr(msg, "no built-in model 'skylake': did you mean 'skx'? (cgtma "
			      "--list-models lists them)"), "%s", msg);
	free(msg);
}

/* A model of metrics (sw) has one level: -l 2 is said, and 1 shown. */
static void test_level(void)
{
	char notice[128];
	struct model *m;

	if (model_load_builtin("sw", &m))
		return;
	CHECK_INT(model_level(m, 0, notice, sizeof(notice)), 1);
	CHECK_STR(notice, "");
	CHECK_INT(model_level(m, 2, notice, sizeof(notice)), 1);
	CHECK_STR(notice, "level 2: model 'sw' has no tree, one level of metrics: showing it");
	model_free(m);
	if (model_load_builtin("neoverse-v1", &m))
		return;
	CHECK_INT(model_level(m, 3, notice, sizeof(notice)), 1);
	CHECK_STR(notice, "level 3: model 'neoverse-v1' has level 1 only: showing it");
	model_free(m);
}

/* --- the built-in models ------------------------------------------------------------------ */

static int nr_builtins(void)
{
	const char *const *n = model_builtin_names();
	int nr = 0;

	while (n[nr])
		nr++;
	return nr;
}

/*
 * At its deepest level, with -m, a model's plan is one run's events at most: every metric,
 * or the metric groups that fit, the others named.
 */
static void check_fits_a_run(const struct model *m)
{
	struct model_options o = { .level = model_max_level(m), .metrics = "",
				   .max_events = CGTMA_MAX_EVENTS };
	struct plan *p = NULL;

	if (!o.level)
		o.level = 1;
	CHECK(plan_new(m, &o, &p) == 0, "%s: no plan at level %d", model_name(m), o.level);
	if (!p)
		return;
	CHECK(p->nr_events <= CGTMA_MAX_EVENTS, "%s at level %d: %d events, a run counts %d",
	      model_name(m), o.level, p->nr_events, CGTMA_MAX_EVENTS);
	CHECK((p->groups_left_out != NULL) == (p->nr_events_all > CGTMA_MAX_EVENTS),
	      "%s at level %d: %d events for every metric, left out '%s'", model_name(m),
	      o.level, p->nr_events_all, p->groups_left_out ? p->groups_left_out : "");
	plan_free(p);
}

static void test_builtins_load(void)
{
	const char *const *names = model_builtin_names();
	int i;

	CHECK(nr_builtins() >= 8, "only %d built-in models", nr_builtins());
	for (i = 0; names[i]; i++) {
		struct model *m;
		int err = model_load_builtin(names[i], &m);

		CHECK(err == 0, "built-in %s does not load", names[i]);
		if (err)
			continue;
		CHECK_STR(model_name(m), names[i]);
		CHECK(model_description(m) && *model_description(m), "%s: no description",
		      names[i]);
		if (i)
			CHECK(strcmp(names[i - 1], names[i]) < 0, "%s listed after %s", names[i],
			      names[i - 1]);
		if (model_has_perf_metrics(m))
			CHECK(model_perf_metrics_sysfs(m) != NULL,
			      "%s: perf-metrics without a sysfs name to detect it", names[i]);
		check_fits_a_run(m);
		model_free(m);
	}
}

/* No CPU may be claimed by two built-in models. */
static void test_builtin_matches(void)
{
	const char *const *names = model_builtin_names();
	struct model *models[64] = { 0 };
	int nr = nr_builtins(), i, j, k, r, cpu, overlaps = 0;
	const char *name, *notice;

	for (i = 0; i < nr && i < 64; i++)
		model_load_builtin(names[i], &models[i]);
	for (i = 0; i < nr && i < 64; i++) {
		for (k = 0; models[i] && k < models[i]->nr_matches; k++) {
			const struct model_match *mt = &models[i]->matches[k];

			for (r = 0; r < mt->nr_ranges; r++) {
				for (cpu = mt->ranges[r].lo; cpu <= mt->ranges[r].hi; cpu++) {
					int claims = 0;

					for (j = 0; j < nr && j < 64; j++)
						claims += models[j] &&
							  model_matches(models[j], mt->vendor,
									 mt->family, cpu, NULL);
					if (claims != 1 && overlaps++ < 5)
						CHECK(claims == 1, "%s family %d model %d: %d models",
						      mt->vendor, mt->family, cpu, claims);
				}
			}
		}
	}
	CHECK_INT(overlaps, 0);
	for (i = 0; i < nr && i < 64; i++)
		model_free(models[i]);

	CHECK_INT(model_match_cpu("GenuineIntel", 6, 143, &name, &notice), 0);
	CHECK_STR(name, "spr");
	CHECK_INT(model_match_cpu("GenuineIntel", 6, 85, &name, &notice), 0);
	CHECK_STR(name, "skx");
	CHECK_INT(model_match_cpu("AuthenticAMD", 25, 0x11, &name, &notice), 0);
	CHECK_STR(name, "zen4");
	CHECK_INT(model_match_cpu("AuthenticAMD", 26, 0x02, &name, &notice), 0);
	CHECK_STR(name, "zen5");
	/* Zen 3 gets the generic model, with a notice saying why */
	CHECK_INT(model_match_cpu("AuthenticAMD", 25, 0x21, &name, &notice), 0);
	CHECK_STR(name, "generic");
	CHECK(notice != NULL, "no notice for Zen 3");
	CHECK_INT(model_match_cpu("CentaurHauls", 6, 15, &name, &notice), -ENOENT);
}

static int generic_limit(const struct model *m, const struct model_options *o)
{
	if (m->pmu.software)
		return 1 << 30;
	return (o->smt ? m->pmu.generic_counters_smt : m->pmu.generic_counters) -
	       o->reserved_counters;
}

static bool is_fixed(const struct model *m, const char *name)
{
	int i;

	for (i = 0; i < m->pmu.nr_fixed; i++) {
		if (!strcmp(m->events[m->pmu.fixed[i]].name, name))
			return true;
	}
	return false;
}

static bool is_pm_event(const struct model *m, const char *name)
{
	for (int j = 0; j < m->pmu.nr_pm_events; j++)
		if (!strcmp(m->events[m->pmu.pm_events[j]].name, name))
			return true;
	return false;
}

/* The invariants of a plan's events and groups. */
static void check_plan(const struct model *m, const struct model_options *o, const struct plan *p)
{
	int i, j, generic = 0, limit = generic_limit(m, o), leader = 0;
	char where[96];

	snprintf(where, sizeof(where), "%s l%d pm%d smt%d reserved %d", m->name, o->level,
		 o->perf_metrics, o->smt, o->reserved_counters);
	CHECK(p->nr_events == 0 || p->events[0].group == 0, "%s: first group not 0", where);
	for (i = 0; i < p->nr_events; i++) {
		const struct plan_event *e = &p->events[i];
		bool earlier = false;

		CHECK(e->fixed == is_fixed(m, e->name), "%s: %s fixed %d", where, e->name,
		      e->fixed);
		if (i && e->group != p->events[i - 1].group) {
			/* groups consecutive and numbered in order */
			CHECK(e->group == p->events[i - 1].group + 1, "%s: group %d after %d", where,
			      e->group, p->events[i - 1].group);
			generic = 0;
			leader = i;
		}
		/* once per group; a copy in a later group is marked as one */
		for (j = 0; j < i; j++) {
			if (strcmp(p->events[j].name, e->name))
				continue;
			earlier = true;
			CHECK(p->events[j].group != e->group, "%s: %s twice in group %d", where,
			      e->name, e->group);
		}
		CHECK(e->duplicate == earlier, "%s: %s duplicate %d", where, e->name, e->duplicate);
		CHECK(e->group >= 0 && e->group < p->nr_groups, "%s: group %d of %d", where,
		      e->group, p->nr_groups);
		if (!e->fixed && !(o->perf_metrics && is_pm_event(m, e->name)))
			generic++;
		CHECK(generic <= limit, "%s: group %d needs more than %d generic counters", where,
		      e->group, limit);
		/* perf-metrics events only in a group the leader leads */
		if (o->perf_metrics && is_pm_event(m, e->name))
			CHECK_STR(p->events[leader].name, m->events[m->pmu.pm_leader].name);
	}
	if (p->nr_events)
		CHECK_INT(p->events[p->nr_events - 1].group, p->nr_groups - 1);
	/* one extra-register value per group (Intel's frontend MSR: 0x7 vs 0x8 on spr/gnr) */
	for (i = 0; i < p->nr_events; i++) {
		const char *ci = strstr(p->events[i].encoding, "config1=");

		for (j = 0; ci && j < i; j++) {
			const char *cj = strstr(p->events[j].encoding, "config1=");

			if (cj && p->events[j].group == p->events[i].group)
				CHECK(strtoull(ci + 8, NULL, 0) == strtoull(cj + 8, NULL, 0),
				      "%s: %s and %s share group %d with different config1", where,
				      p->events[i].name, p->events[j].name, p->events[i].group);
		}
	}
	/* every reported node, parents first; one not split reads its own group's events */
	for (i = 0; i < p->nr_nodes; i++) {
		const int *ev;
		int n = plan_node_events(p, i, &ev);

		CHECK(p->nodes[i].level <= o->level, "%s: %s reported", where, p->nodes[i].name);
		CHECK(p->nodes[i].parent < i, "%s: parent after %s", where, p->nodes[i].name);
		CHECK(p->nodes[i].split == (p->nodes[i].split_reason != NULL), "%s: %s", where,
		      p->nodes[i].name);
		for (j = 0; j < n && p->nodes[i].group >= 0; j++)
			CHECK_INT(p->events[ev[j]].group, p->nodes[i].group);
	}
}

/* Every built-in, every level, perf-metrics on and off, SMT on and off, 0 and 1 reserved. */
static void test_builtin_plans(void)
{
	const char *const *names = model_builtin_names();
	int i, level, pm, smt, reserved, nr_plans = 0;

	for (i = 0; names[i]; i++) {
		struct model *m;

		if (model_load_builtin(names[i], &m))
			continue;
		for (level = 0; level <= model_max_level(m); level++)
			for (pm = 0; pm <= model_has_perf_metrics(m); pm++)
				for (smt = 0; smt <= 1; smt++)
					for (reserved = 0; reserved <= 1; reserved++) {
						struct model_options o = {
							.level = level, .perf_metrics = pm,
							.smt = smt, .reserved_counters = reserved,
						};
						struct plan *p;
						int err = plan_new(m, &o, &p);

						CHECK(err == 0, "%s l%d pm%d smt%d r%d: %d", names[i],
						      level, pm, smt, reserved, err);
						if (err)
							continue;
						nr_plans++;
						check_plan(m, &o, p);
						plan_free(p);
					}
		model_free(m);
	}
	CHECK(nr_plans > 100, "only %d plans checked", nr_plans);
}

/* --- grouping on small models ------------------------------------------------------------- */

static int group_of(const struct plan *p, const char *name)
{
	int i;

	for (i = 0; i < p->nr_events; i++) {
		if (!strcmp(p->events[i].name, name))
			return p->events[i].group;
	}
	return -1;
}

static void test_grouping(void)
{
	struct model_options o = { .level = 1 };
	struct model *m;
	struct plan *p;
	struct capture c;
	char *msg;
	int err;

	/* nodes kept together; a node too big for a group is split; fixed events are free */
	m = load(HEAD "\"pmu\": {\"generic_counters\": 4, \"fixed\": [\"F\"]}, "
		      EVENTS(EV("A"), EV("B"), EV("C"), EV("D"), EV("E"), EV("F"), EV("G"),
			     EV("H"), EV("I"), EV("J"), EV("K"), EV("L"), EV("M"))
			      NODES(ROOT("N1", "A + B", "val > 0"), ROOT("N2", "C + D + F", "val > 0"),
				    ROOT("N3", "E + G + H", "val > 0"),
				    ROOT("N4", "I + J + K + L + M + A + E", "val > 0"),
				    ROOT("N5", "B * 2", "val > 0")),
		 &msg);
	free(msg);
	if (!m)
		return;
	err = plan_new(m, &o, &p);
	CHECK_INT(err, 0);
	if (!err) {
		check_plan(m, &o, p);
		CHECK_INT(p->nr_events, 13);
		CHECK_INT(group_of(p, "A"), 0);
		CHECK_INT(group_of(p, "B"), 0);
		CHECK_INT(group_of(p, "C"), 0);
		CHECK_INT(group_of(p, "D"), 0);
		CHECK_INT(group_of(p, "F"), 0);
		CHECK_INT(group_of(p, "E"), 1);
		CHECK_INT(group_of(p, "G"), 1);
		CHECK_INT(group_of(p, "H"), 1);
		/* I J K L M cannot share one group: each goes where it fits */
		CHECK_INT(group_of(p, "I"), 1);
		CHECK_INT(group_of(p, "J"), 2);
		CHECK_INT(group_of(p, "M"), 2);
		CHECK_INT(p->nr_groups, 3);
		CHECK_STR(p->events[0].name, "A");
		CHECK_STR(p->events[5].name, "E");
		plan_free(p);
	}

	/* a reserved counter shrinks the groups */
	o.reserved_counters = 3;
	err = plan_new(m, &o, &p);
	CHECK_INT(err, 0);
	if (!err) {
		check_plan(m, &o, p);
		CHECK_INT(p->nr_groups, 12);
		CHECK_INT(group_of(p, "F"), 0);
		plan_free(p);
	}

	/* no counter left: an error naming the event */
	o.reserved_counters = 4;
	capture_begin(&c, 2);
	err = plan_new(m, &o, &p);
	msg = capture_end(&c);
	CHECK_INT(err, -E2BIG);
	CHECK(msg && strstr(msg, "event 'A' needs a generic counter and none is left "
				 "(4 counters, 4 reserved)"),
	      "%s", msg);
	free(msg);

	/* perf-metrics on a model without that path */
	o.reserved_counters = 0;
	o.perf_metrics = true;
	capture_begin(&c, 2);
	err = plan_new(m, &o, &p);
	msg = capture_end(&c);
	CHECK_INT(err, -EINVAL);
	CHECK(msg && strstr(msg, "has no perf-metrics path"), "%s", msg);
	free(msg);
	model_free(m);

	/* software: no limit, and never grouped (cpu-clock's group would starve the others) */
	m = load("{\"name\": \"s\", \"description\": \"d\", \"vendor\": \"generic\", \"source\": "
		 "\"s\", \"match\": [], \"pmu\": {\"software\": true}, "
		 EVENTS(EV("A"), EV("B"), EV("C"), EV("D"), EV("E"), EV("F"))
			 METRICS(MX("M", "A + B + C + D + E + F")) NODES(),
		 &msg);
	free(msg);
	if (!m)
		return;
	o = (struct model_options){ .level = 1, .reserved_counters = 1 };
	err = plan_new(m, &o, &p);
	CHECK_INT(err, 0);
	if (!err) {
		CHECK_INT(p->nr_groups, 6);
		CHECK_INT(p->nr_events, 6);
		for (int i = 0; i < p->nr_events; i++)
			CHECK_INT(p->events[i].group, i);
		CHECK_INT(p->nr_nodes, 0);
		CHECK_INT(p->nr_metrics, 1);
		plan_free(p);
	}
	model_free(m);
}

/* --- evaluation on small models ----------------------------------------------------------- */

struct run {
	struct model *m;
	struct plan *p;
	struct tma_result r;
	bool ok;
};

/*
 * Loads json, plans it at level with the options, and computes it from counts written
 * "A=1 B=0.5 U=-": '-' marks an event not counted; events not given count 0.
 */
static void run_model(struct run *run, const char *json, struct model_options o,
		      const char *counts, double interval_s, const double *retire_latency)
{
	double values[CGTMA_MAX_EVENTS] = { 0 }, latency[CGTMA_MAX_EVENTS] = { 0 };
	bool counted[CGTMA_MAX_EVENTS];
	struct tma_input in = { .counts = values, .counted = counted, .interval_s = interval_s };
	struct tma_result ref;
	char *msg = NULL;
	int i;

	memset(run, 0, sizeof(*run));
	run->r.bottleneck = -1;
	run->m = load(json, &msg);
	CHECK(run->m != NULL, "model does not load: %s", msg);
	free(msg);
	if (!run->m || plan_new(run->m, &o, &run->p))
		return;
	CHECK(run->p->nr_events <= CGTMA_MAX_EVENTS, "too many events");
	for (i = 0; i < run->p->nr_events && i < CGTMA_MAX_EVENTS; i++) {
		const char *name = run->p->events[i].name, *at;
		size_t len = strlen(name);

		counted[i] = true;
		for (at = counts; (at = strstr(at, name)); at += len) {
			if ((at == counts || at[-1] == ' ') && at[len] == '=') {
				counted[i] = at[len + 1] != '-';
				values[i] = counted[i] ? strtod(at + len + 1, NULL) : 0;
				break;
			}
		}
		if (retire_latency)
			latency[i] = retire_latency[i];
	}
	if (retire_latency)
		in.retire_latency = latency;
	if (tma_result_init(&run->r, run->p))
		return;
	run->ok = tma_compute(run->p, &in, &run->r) == 0;
	CHECK(run->ok, "compute failed");

	/* toplev's way, every reference recomputed, must give the same to the bit */
	plan_set_memo(run->p, false);
	if (run->ok && !tma_result_init(&ref, run->p)) {
		CHECK(tma_compute(run->p, &in, &ref) == 0 &&
			      !memcmp(run->r.value, ref.value, run->p->nr_nodes * sizeof(double)) &&
			      !memcmp(run->r.above, ref.above, run->p->nr_nodes * sizeof(bool)) &&
			      !memcmp(run->r.metric, ref.metric, run->p->nr_metrics * sizeof(double)) &&
			      run->r.bottleneck == ref.bottleneck,
		      "memoized and recomputed results differ");
		tma_result_release(&ref);
	}
	plan_set_memo(run->p, true);
}

static void run_free(struct run *run)
{
	tma_result_release(&run->r);
	plan_free(run->p);
	model_free(run->m);
}

static int node(const struct run *run, const char *full_name)
{
	int i;

	for (i = 0; run->p && i < run->p->nr_nodes; i++) {
		if (!strcmp(run->p->nodes[i].full_name, full_name))
			return i;
	}
	CHECK(0, "no node %s", full_name);
	return -1;
}

static double value(const struct run *run, const char *name)
{
	int i = node(run, name);

	return i >= 0 && run->ok ? run->r.value[i] : -999;
}

static int above(const struct run *run, const char *name)
{
	int i = node(run, name);

	return i >= 0 && run->ok ? run->r.above[i] : -1;
}

static const char *bottleneck(const struct run *run)
{
	if (!run->ok || run->r.bottleneck < 0)
		return "(none)";
	return run->p->nodes[run->r.bottleneck].full_name;
}

static const struct model_options L1 = { .level = 1 }, L2 = { .level = 2 };

/* A division by zero makes the node 0 and unflagged; whoever referenced it goes on. */
/* Events that program one extra register differently never share a group. */
static void test_grouping_config1(void)
{
	struct model_options o = { .level = 1 };
	struct model *m;
	struct plan *p;
	char *msg = NULL;

	m = load(HEAD PMU(8)
		 EVENTS("{\"name\": \"F7\", \"encoding\": \"cpu/event=0xad,umask=0x40,config1=0x7/\"}",
			"{\"name\": \"F8\", \"encoding\": \"cpu/event=0xc2,umask=0x04,config1=0x8/\"}",
			"{\"name\": \"G8\", \"encoding\": \"cpu/event=0xc2,umask=0x04,cmask=1,config1=0x8/\"}",
			EV("A"))
			 NODES(ROOT("N1", "F7 + F8 + G8 + A", "val > 0.1")),
		 &msg);
	CHECK(m != NULL, "%s", msg ? msg : "");
	free(msg);
	if (!m)
		return;
	if (plan_new(m, &o, &p) == 0) {
		CHECK(group_of(p, "F7") != group_of(p, "F8"), "0x7 and 0x8 share a group");
		CHECK_INT(group_of(p, "F8"), group_of(p, "G8"));
		CHECK_INT(p->nr_groups, 2);
		plan_free(p);
	}
	model_free(m);
}

static void test_zero_denominator(void)
{
	struct run run;

	run_model(&run,
		  HEAD PMU(4) EVENTS(EV("A"), EV("B"), EV("Z"))
			  AUX(AX("AUX_DIV", "A / Z"))
			  NODES(ROOT("N1", "A / B", "val > 0.1"),
				ROOT("N2", "A / Z", "val > 0.1"),
				ROOT("N3", "N2 + 0.3", "val > 0.1"),
				ROOT("N4", "AUX_DIV + 0.5", "val > 0.1"),
				ROOT("N5", "A", "val / Z > 0.1"),
				ROOT("N6", "d_ratio(A, Z) + 0.2", "val > 0.1")),
		  L1, "A=0.4 B=1 Z=0", 1, NULL);
	CHECK_NEAR(value(&run, "N1"), 0.4, 1e-15);
	CHECK_INT(above(&run, "N1"), 1);
	CHECK_NEAR(value(&run, "N2"), 0.0, 0.0);
	CHECK_INT(above(&run, "N2"), 0);
	CHECK_NEAR(value(&run, "N3"), 0.3, 1e-15);
	CHECK_INT(above(&run, "N3"), 1);
	/* an aux is inline: its division error is the node's */
	CHECK_NEAR(value(&run, "N4"), 0.0, 0.0);
	CHECK_INT(above(&run, "N4"), 0);
	/* a division error in the threshold zeroes the node too (toplev's try covers both) */
	CHECK_NEAR(value(&run, "N5"), 0.0, 0.0);
	CHECK_INT(above(&run, "N5"), 0);
	CHECK_NEAR(value(&run, "N6"), 0.2, 1e-15);
	CHECK_STR(bottleneck(&run), "N1");
	run_free(&run);
}

static void test_clamps(void)
{
	struct run run;

	run_model(&run,
		  HEAD PMU(4) EVENTS(EV("A"), EV("B"))
			  NODES(ROOT("Neg", "max(0, A - B)", "val > 0.1"),
				NODEX("Over", "null", 1, "A * 3", "val > 0.1", "1", "", ""),
				NODEX("Clamped", "null", 1, "A * 2", "val > 0.1", "0.5", "", ""),
				NODEX("Raw", "null", 1, "A * 1.5 - B", "val > 0.01", "null", "", "")),
		  L1, "A=0.4 B=0.5", 1, NULL);
	CHECK_NEAR(value(&run, "Neg"), 0.0, 0.0);
	CHECK_INT(above(&run, "Neg"), 0);
	/* 1.2 is printed as its maxval, and is not above threshold: outside (-0.05, 1.05) */
	CHECK_NEAR(value(&run, "Over"), 1.0, 0.0);
	CHECK_INT(above(&run, "Over"), 0);
	CHECK_NEAR(value(&run, "Clamped"), 0.5, 0.0);
	CHECK_INT(above(&run, "Clamped"), 1);
	/* a negative value within the margin is shown as is */
	CHECK_NEAR(value(&run, "Raw"), 0.1, 1e-15);
	/* the bottleneck compares unclamped values: 0.8, not 0.5 */
	CHECK_STR(bottleneck(&run), "Clamped");
	run_free(&run);

	run_model(&run,
		  HEAD PMU(4) EVENTS(EV("A"))
			  NODES(NODEX("X", "null", 1, "A", "val > 0.1", "0.3", "", ""),
				ROOT("Y", "A - 0.4", "val > 0.1")),
		  L1, "A=0.9", 1, NULL);
	CHECK_NEAR(value(&run, "X"), 0.3, 0.0);
	CHECK_NEAR(value(&run, "Y"), 0.5, 1e-15);
	CHECK_STR(bottleneck(&run), "X");
	run_free(&run);

	/* 1.05 is outside, and so is anything below -0.05 */
	run_model(&run,
		  HEAD PMU(4) EVENTS(EV("A"))
			  NODES(ROOT("Low", "A - 1.1", "1"), ROOT("High", "A", "1"),
				ROOT("In", "A - 0.0001", "1")),
		  L1, "A=1.05", 1, NULL);
	CHECK_INT(above(&run, "Low"), 0);
	CHECK_INT(above(&run, "High"), 0);
	CHECK_INT(above(&run, "In"), 1);
	run_free(&run);
}

/* toplev's formula shape: slots from the perf-metrics sum, not from the slots counter. */
static void test_perf_metrics_sum(void)
{
	static const char json[] =
		HEAD "\"pmu\": {\"generic_counters\": 2, \"fixed\": [\"SLOTS\"], \"perf_metrics\": "
		     "{\"leader\": \"SLOTS\", \"events\": [\"PM_FE\", \"PM_BE\", \"PM_RET\"]}}, "
		EVENTS("{\"name\": \"SLOTS\", \"encoding\": \"slots\", \"sysfs\": \"slots\"}",
		       "{\"name\": \"PM_FE\", \"encoding\": \"fe\", \"sysfs\": \"topdown-fe-bound\"}",
		       "{\"name\": \"PM_BE\", \"encoding\": \"be\", \"sysfs\": \"topdown-be-bound\"}",
		       "{\"name\": \"PM_RET\", \"encoding\": \"ret\", \"sysfs\": \"topdown-retiring\"}",
		       EV("GEN_FE"), EV("GEN_BE"), EV("CLK"))
		AUX(AX("PM_SUM", "PM_FE + PM_BE + PM_RET"))
		NODES(ROOT("Frontend_Bound",
			   "PM_FE / SLOTS / (PM_SUM / SLOTS) if topdown_use_fixed else GEN_FE / SLOTS",
			   "val > 0.15"),
		      ROOT("Backend_Bound",
			   "PM_BE / SLOTS / (PM_SUM / SLOTS) if topdown_use_fixed else GEN_BE / SLOTS",
			   "val > 0.2"),
		      NODE("Cycles", "\"Backend_Bound\"", 2, "CLK / SLOTS", "val > 0"));
	struct model_options o = { .level = 1, .perf_metrics = true };
	struct run run;

	run_model(&run, json, o, "SLOTS=1000 PM_FE=300 PM_BE=400 PM_RET=100 GEN_FE=200 GEN_BE=100",
		  1, NULL);
	CHECK_NEAR(value(&run, "Frontend_Bound"), 0.375, 1e-15);
	CHECK_NEAR(value(&run, "Backend_Bound"), 0.5, 1e-15);
	CHECK_STR(bottleneck(&run), "Backend_Bound");
	if (run.p) {
		/* group 0: the leader, then its events in the model's order; no generic events */
		CHECK_INT(run.p->nr_events, 4);
		CHECK_STR(run.p->events[0].name, "SLOTS");
		CHECK_STR(run.p->events[1].name, "PM_FE");
		CHECK_STR(run.p->events[2].name, "PM_BE");
		CHECK_STR(run.p->events[3].name, "PM_RET");
		CHECK_INT(run.p->nr_groups, 1);
	}
	CHECK_STR(model_perf_metrics_sysfs(run.m), "topdown-fe-bound");
	run_free(&run);

	/* off: the generic formulas, and none of the perf-metrics events in the plan */
	o.perf_metrics = false;
	run_model(&run, json, o, "SLOTS=1000 GEN_FE=200 GEN_BE=100", 1, NULL);
	CHECK_NEAR(value(&run, "Frontend_Bound"), 0.2, 1e-15);
	CHECK_NEAR(value(&run, "Backend_Bound"), 0.1, 1e-15);
	if (run.p) {
		CHECK_INT(run.p->nr_events, 3);
		CHECK_INT(group_of(run.p, "PM_FE"), -1);
	}
	run_free(&run);
}

static void test_siblings(void)
{
	struct run run;

	/*
	 * C1 sets C2 and C0; C2, now set, sets C3 when its turn comes. C0's turn had passed
	 * when C1 set it, so C4 stays unset: propagation is one pass in tree order.
	 */
	run_model(&run,
		  HEAD PMU(4) EVENTS(EV("A"))
			  NODES(ROOT("P", "A", "val > 0.1"),
				NODEX("C0", "\"P\"", 2, "A * 0.01", "val > 0.2 and thresh(parent)",
				      "null", "\"C4\"", ""),
				NODEX("C1", "\"P\"", 2, "A * 0.6", "val > 0.2 and thresh(parent)",
				      "null", "\"C2\", \"C0\"", ""),
				NODEX("C2", "\"P\"", 2, "A * 0.02", "val > 0.2 and thresh(parent)",
				      "null", "\"C3\"", ""),
				NODE("C3", "\"P\"", 2, "A * 0.03", "val > 0.2 and thresh(parent)"),
				NODE("C4", "\"P\"", 2, "A * 0.04", "val > 0.2 and thresh(parent)"),
				NODEX("C5", "\"P\"", 2, "A * 3", "val > 0.2", "null", "", ""),
				NODEX("C6", "\"P\"", 2, "A * 0.05", "val > 0.2 and thresh(parent)",
				      "null", "\"C7\"", ""),
				NODE("C7", "\"P\"", 2, "A * 2.5", "0")),
		  L2, "A=0.5", 1, NULL);
	CHECK_INT(above(&run, "P.C1"), 1);
	CHECK_INT(above(&run, "P.C0"), 1);
	CHECK_INT(above(&run, "P.C2"), 1);
	CHECK_INT(above(&run, "P.C3"), 1);
	CHECK_INT(above(&run, "P.C4"), 0);
	/* flagged by its own rule but outside the range: forced off, propagates nothing */
	CHECK_INT(above(&run, "P.C5"), 0);
	CHECK_INT(above(&run, "P.C6"), 0);
	CHECK_INT(above(&run, "P.C7"), 0);
	CHECK_STR(bottleneck(&run), "P.C1");
	run_free(&run);

	/* a sibling set to a value out of range is still not above threshold */
	run_model(&run,
		  HEAD PMU(4) EVENTS(EV("A"))
			  NODES(NODEX("P", "null", 1, "A", "val > 0.1", "null", "\"Q\"", ""),
				ROOT("Q", "A * 3", "0")),
		  L1, "A=0.5", 1, NULL);
	CHECK_INT(above(&run, "P"), 1);
	CHECK_INT(above(&run, "Q"), 0);
	run_free(&run);
}

static void test_bottleneck_rules(void)
{
	static const char json_fmt[] =
		HEAD PMU(4) EVENTS(EV("A"), EV("B"), EV("C"), EV("D"))
		NODES(ROOT("L1a", "A", "val > 0.1"), ROOT("L1b", "B", "val > 0.1"),
		      NODE("K1", "\"L1a\"", 2, "C", "val > 0.05 and thresh(parent)"),
		      NODE("K2", "\"L1a\"", 2, "D", "val > 0.05 and thresh(parent)"),
		      NODEX("K3", "\"L1a\"", 2, "A", "val > 0.05", "null", "",
			    ", \"overlap\": true"));
	struct run run;

	/* level 1: no ambiguity rule, the highest wins even by 0.02 */
	run_model(&run, json_fmt, L1, "A=0.40 B=0.38", 1, NULL);
	CHECK_STR(bottleneck(&run), "L1a");
	run_free(&run);

	/* children within 0.05: the parent stays the bottleneck */
	run_model(&run, json_fmt, L2, "A=0.40 B=0.38 C=0.30 D=0.27", 1, NULL);
	CHECK_INT(above(&run, "L1a.K1"), 1);
	CHECK_INT(above(&run, "L1a.K2"), 1);
	CHECK_STR(bottleneck(&run), "L1a");
	run_free(&run);

	/* apart by more: the child; the overlap node (0.40) is never chosen */
	run_model(&run, json_fmt, L2, "A=0.40 B=0.38 C=0.30 D=0.20", 1, NULL);
	CHECK_INT(above(&run, "L1a.K3"), 1);
	CHECK_STR(bottleneck(&run), "L1a.K1");
	run_free(&run);

	/* 0.05 apart is still ambiguous (<=), a hair more is not */
	run_model(&run, json_fmt, L2, "A=0.40 B=0.38 C=0.375 D=0.325", 1, NULL);
	CHECK_STR(bottleneck(&run), "L1a");
	run_free(&run);
	run_model(&run, json_fmt, L2, "A=0.40 B=0.38 C=0.375001 D=0.325", 1, NULL);
	CHECK_STR(bottleneck(&run), "L1a.K1");
	run_free(&run);

	/* one flagged child: no comparison to make */
	run_model(&run, json_fmt, L2, "A=0.40 B=0.38 C=0.30 D=0.01", 1, NULL);
	CHECK_STR(bottleneck(&run), "L1a.K1");
	run_free(&run);

	/* nothing flagged: no bottleneck */
	run_model(&run, json_fmt, L2, "A=0.01 B=0.02 C=0.01 D=0.01", 1, NULL);
	CHECK_STR(bottleneck(&run), "(none)");
	run_free(&run);
}

/*
 * toplev's side effects: a reference recomputes a node and sets its flag from its rule with
 * the flags as they are then, after the main pass forced it off for being out of range. A
 * rule reading a node not computed yet reads false.
 */
static void test_reference_side_effects(void)
{
	static const char json[] =
		HEAD PMU(4) EVENTS(EV("A"), EV("B"))
		NODES(ROOT("Early", "B", "val > 0 and thresh(Big)"),
		      ROOT("Big", "A * 3", "val > 0.1"),
		      NODE("Child", "\"Big\"", 2, "B", "val > 0.1 and thresh(parent)"),
		      ROOT("User", "Big * 0.1", "val > 0.1"),
		      ROOT("Reader", "B", "val > 0.1 and thresh(Big)"),
		      NODE("Deep", "\"Reader\"", 2, "B * 2", "val > 0.1"),
		      NODE("Deeper", "\"Deep\"", 3, "B", "val > 0.1"),
		      ROOT("DeepUser", "Deeper * 0.5", "val > 0.05"),
		      ROOT("DeepReader", "B * 0.5", "val > 0.05 and thresh(Deeper)"));
	struct run run;

	run_model(&run, json, L2, "A=0.4 B=0.2", 1, NULL);
	/* Big is 1.2: forced off in the main pass, so Child (computed right after) is off */
	CHECK_NEAR(value(&run, "Big"), 1.2, 1e-15);
	CHECK_INT(above(&run, "Big"), 0);
	CHECK_INT(above(&run, "Big.Child"), 0);
	/* Early read Big's flag before Big was computed */
	CHECK_INT(above(&run, "Early"), 0);
	/* User recomputed Big, which set Big's flag again: Reader sees it */
	CHECK_INT(above(&run, "User"), 1);
	CHECK_INT(above(&run, "Reader"), 1);
	/* Big is the highest flagged level-1 node but is not shown: no bottleneck at all */
	CHECK_STR(bottleneck(&run), "(none)");
	/* a node below the reported levels, computed through a reference, has a flag too */
	CHECK_INT(above(&run, "DeepReader"), 1);
	run_free(&run);

	/* the same at level 3: Deeper is reported and computed in the main pass */
	run_model(&run, json, (struct model_options){ .level = 3 }, "A=0.4 B=0.2", 1, NULL);
	CHECK_INT(above(&run, "Reader.Deep.Deeper"), 1);
	CHECK_INT(above(&run, "DeepReader"), 1);
	run_free(&run);
}

/*
 * Values that depend on flags are never reused: a node reading a flag, and one computing a
 * node whose threshold can fail (which zeroes it) depending on flags.
 */
static void test_flag_dependent_values(void)
{
	static const char json[] =
		HEAD PMU(4) EVENTS(EV("A"), EV("B"))
		NODES(ROOT("G1", "F + 1", "val > 0"), ROOT("R1", "Q", "val > 0"),
		      ROOT("P", "A", "val > 0.1"),
		      NODE("F", "\"P\"", 2, "A", "thresh(parent) and val / B > 0.1"),
		      NODE("Q", "\"P\"", 2, "A * thresh(P)", "val > 0"),
		      ROOT("G2", "F + 2", "val > 0"), ROOT("R2", "Q", "val > 0"));
	struct run run;

	run_model(&run, json, L1, "A=0.3 B=0", 1, NULL);
	/* before P is flagged, F's threshold stops at thresh(parent); after, it divides by 0 */
	CHECK_NEAR(value(&run, "G1"), 1.3, 1e-15);
	CHECK_NEAR(value(&run, "G2"), 2.0, 0.0);
	CHECK_NEAR(value(&run, "R1"), 0.0, 0.0);
	CHECK_NEAR(value(&run, "R2"), 0.3, 1e-15);
	run_free(&run);
}

/* Events that did not run: the nodes reading them, directly or not, are not counted. */
static void test_not_counted(void)
{
	static const char json[] =
		HEAD PMU(4) EVENTS(EV("A"), EV("U"))
		METRICS(MX("MA", "A * 2"), MX("MU", "U * 2"), MX("MR", "A / interval_s"),
			MX("MZ", "A / 0"))
		NODES(NODEX("N1", "null", 1, "A", "val > 0.1", "null", "\"N2\"", ""),
		      ROOT("N2", "U + A", "val > 0.1"),
		      NODE("K", "\"N2\"", 2, "A * 0.5", "val > 0.1 and thresh(parent)"),
		      ROOT("N3", "N2 * 2", "val > 0.1"),
		      ROOT("N4", "A if smt_enabled else U", "val > 0.1"));
	struct model_options o = { .level = 2 };
	struct run run;
	int i;

	run_model(&run, json, o, "A=0.3 U=-", 2, NULL);
	CHECK_NEAR(value(&run, "N1"), 0.3, 1e-15);
	CHECK_INT(above(&run, "N1"), 1);
	i = node(&run, "N2");
	if (i >= 0 && run.ok) {
		CHECK(!run.r.counted[i], "N2 counted");
		CHECK(isnan(run.r.value[i]), "N2 has a value");
		/* the sibling propagation from N1 does not touch it */
		CHECK(!run.r.above[i], "N2 above");
	}
	/* a child that reads only counted events is counted; its parent's flag is false */
	i = node(&run, "N2.K");
	if (i >= 0 && run.ok)
		CHECK(run.r.counted[i] && !run.r.above[i], "K: counted %d above %d",
		      run.r.counted[i], run.r.above[i]);
	/* through a reference */
	i = node(&run, "N3");
	if (i >= 0 && run.ok)
		CHECK(!run.r.counted[i], "N3 counted");
	/* the branch not taken under --no-smt reads U */
	i = node(&run, "N4");
	if (i >= 0 && run.ok)
		CHECK(!run.r.counted[i], "N4 counted");
	CHECK_STR(bottleneck(&run), "N1");
	if (run.ok) {
		CHECK(run.r.metric_counted[0] && run.r.metric[0] == 0.6, "MA %g", run.r.metric[0]);
		CHECK(!run.r.metric_counted[1] && isnan(run.r.metric[1]), "MU counted");
		CHECK_NEAR(run.r.metric[2], 0.15, 1e-15);
		/* a metric's division error makes it 0 */
		CHECK(run.r.metric_counted[3] && run.r.metric[3] == 0, "MZ %g", run.r.metric[3]);
	}
	run_free(&run);

	/* with SMT on, N4 reads A only (U is not even in the plan's closure for it) */
	o.smt = true;
	run_model(&run, json, o, "A=0.3 U=-", 1, NULL);
	i = node(&run, "N4");
	if (i >= 0 && run.ok) {
		CHECK(run.r.counted[i], "N4 not counted with SMT");
		CHECK_NEAR(run.r.value[i], 0.3, 1e-15);
	}
	run_free(&run);
}

/*
 * QEMU's emulated PMU opens Arm's STALL_* events and reads 0 from them: a tree computed from
 * those zeros is not a measurement, so its nodes are not counted, and a warning says why.
 */
static void test_uncounted_if_zero(void)
{
	static const struct {
		const char *model;
		int level;
		const char *counts;
		bool uncounted;
	} cases[] = {
		{ "neoverse-v2", 1, "CPU_CYCLES=1000000000", true },
		{ "neoverse-v2", 1, "CPU_CYCLES=1000000000 STALL_SLOT=1", false },
		{ "neoverse-v2", 1, "CPU_CYCLES=1000000000 STALL_SLOT=-", false },	/* not run */
		{ "neoverse-n3", 4, "CPU_CYCLES=1000000000 OP_SPEC=5 OP_RETIRED=4", true },
		{ "neoverse-n3", 4, "CPU_CYCLES=1000000000 STALL_BACKEND_ST=7", false },
		{ "neoverse-n1", 1, "CPU_CYCLES=1000000000", true },
		{ "zen4", 2, "ls_not_halted_cyc=1000000000", false },	/* no such events */
	};

	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		/* with -m: the stall rates too */
		struct model_options o = { .level = cases[k].level, .metrics = "" };
		struct model *m;
		struct run run;

		if (model_load_builtin(cases[k].model, &m))
			continue;
		run_model(&run, model_source(m), o, cases[k].counts, 1, NULL);
		model_free(m);
		if (!run.ok)
			continue;
		CHECK(run.r.uncounted == cases[k].uncounted, "%s '%s': uncounted %d",
		      cases[k].model, cases[k].counts, run.r.uncounted);
		/* (an event not run leaves the nodes reading it not counted, as ever) */
		for (int i = 0; i < run.p->nr_nodes && !strchr(cases[k].counts, '-'); i++)
			CHECK(run.r.counted[i] != cases[k].uncounted, "%s '%s': %s counted %d",
			      cases[k].model, cases[k].counts, run.p->nodes[i].full_name,
			      run.r.counted[i]);
		if (cases[k].uncounted)
			CHECK(run.r.bottleneck < 0, "%s: a bottleneck", cases[k].model);
		/* the stall rates read those events, IPC does not */
		for (int i = 0; i < run.p->nr_metrics && !strchr(cases[k].counts, '-'); i++) {
			const char *name = run.p->metrics[i].name;
			bool stalls = strstr(name, "stalled_cycles") != NULL;

			if (!strcmp(name, "IPC") || stalls)
				CHECK(run.r.metric_counted[i] == !(stalls && cases[k].uncounted),
				      "%s '%s': metric %s counted %d", cases[k].model,
				      cases[k].counts, name, run.r.metric_counted[i]);
		}
		run_free(&run);
	}

	{
		struct model_options o = { .level = 1 };
		struct capture c;
		struct model *m;
		struct run run;
		char *said;

		if (model_load_builtin("neoverse-v2", &m))
			return;
		run_model(&run, model_source(m), o, "CPU_CYCLES=1", 1, NULL);
		model_free(m);
		if (!run.ok)
			return;
		capture_begin(&c, 2);
		plan_warn_uncounted(run.p);
		said = capture_end(&c);
		CHECK(said && strstr(said, "warning: STALL_SLOT_BACKEND, STALL_SLOT_FRONTEND, "
				     "STALL_SLOT, STALL_FRONTEND, STALL_BACKEND all read 0") &&
		      strstr(said, "not a measurement"), "said: %s", said ? said : "(nothing)");
		free(said);
		run_free(&run);
	}
}

static void test_retire_latency(void)
{
	static const char json[] =
		HEAD PMU(4) EVENTS(EV("CLK"), "{\"name\": \"COST\", \"encoding\": \"c\", "
					      "\"retire_latency\": 28.5}")
		NODES(ROOT("Cost", "COST * retlat(COST) / CLK", "val > 0.1"));
	double latency[2] = { 0, 0 };
	struct run run;

	run_model(&run, json, L1, "COST=2 CLK=100", 1, NULL);
	CHECK_NEAR(value(&run, "Cost"), 0.57, 1e-15);
	/* given per plan event, it replaces the model's default */
	if (run.p && run.p->nr_events == 2)
		latency[strcmp(run.p->events[0].name, "COST") ? 1 : 0] = 10;
	run_free(&run);
	run_model(&run, json, L1, "COST=2 CLK=100", 1, latency);
	CHECK_NEAR(value(&run, "Cost"), 0.2, 1e-15);
	run_free(&run);
}

/*
 * Each node reads its own group's copies of its events, whatever was computed before it: its
 * value must be what it is when every copy of every event holds its group's count. Counts
 * differ per copy here (each plan event its own), as multiplexed groups' do, for every
 * built-in model, level and path, with memoization on and off. (Units of one group read
 * different events: a node once read another group's copy of an event that the node before
 * it, in the same group, did not load.)
 */
static void test_group_copies(void)
{
	const char *const *names = model_builtin_names();
	int nr_checked = 0;

	for (int i = 0; names[i]; i++) {
		struct model *m;

		if (model_load_builtin(names[i], &m))
			continue;
		for (int level = 1; level <= model_max_level(m); level++)
			for (int pm = 0; pm <= model_has_perf_metrics(m); pm++)
				for (int memo = 0; memo <= 1; memo++) {
			struct model_options o = { .level = level, .perf_metrics = pm };
			struct tma_input in = { .interval_s = 1 };
			struct tma_result r, r1;
			struct plan *p;
			double *counts, *own;
			bool *counted;

			if (plan_new(m, &o, &p))
				continue;
			plan_set_memo(p, memo);
			counts = calloc(p->nr_events + 1, sizeof(*counts));
			own = calloc(p->nr_events + 1, sizeof(*own));
			counted = calloc(p->nr_events + 1, sizeof(*counted));
			CHECK(counts && own && counted && !tma_result_init(&r, p) &&
			      !tma_result_init(&r1, p), "allocation");
			for (int e = 0; e < p->nr_events; e++) {
				counts[e] = 1e6 * (1 + e % 7) + 1e5 * e;
				counted[e] = true;
			}
			in.counted = counted;
			in.counts = counts;
			CHECK_INT(tma_compute(p, &in, &r), 0);
			for (int n = 0; n < p->nr_nodes; n++) {
				int g = p->nodes[n].group;

				if (g < 0)
					continue;
				/* Every copy of each event as its copy in g (if g counts it). */
				for (int e = 0; e < p->nr_events; e++) {
					own[e] = counts[e];
					for (int f = 0; f < p->nr_events; f++)
						if (p->events[f].group == g &&
						    !strcmp(p->events[f].name, p->events[e].name))
							own[e] = counts[f];
				}
				in.counts = own;
				CHECK_INT(tma_compute(p, &in, &r1), 0);
				CHECK(r.value[n] == r1.value[n], "%s l%d pm%d memo%d: %s is %g, %g with "
				      "its group's counts alone", names[i], level, pm, memo,
				      p->nodes[n].name, r.value[n], r1.value[n]);
				nr_checked++;
				in.counts = counts;
			}
			tma_result_release(&r);
			tma_result_release(&r1);
			free(counts);
			free(own);
			free(counted);
			plan_free(p);
		}
		model_free(m);
	}
	CHECK(nr_checked > 1000, "only %d nodes checked", nr_checked);
}

int main(void)
{
	test_bad_files();
	test_bad_bytes();
	test_limits();
	test_load_file();
	test_suggest();
	test_level();
	test_builtins_load();
	test_builtin_matches();
	test_builtin_plans();
	test_group_copies();
	test_grouping();
	test_grouping_config1();
	test_zero_denominator();
	test_clamps();
	test_perf_metrics_sum();
	test_siblings();
	test_bottleneck_rules();
	test_reference_side_effects();
	test_flag_dependent_values();
	test_not_counted();
	test_retire_latency();
	test_uncounted_if_zero();
	return test_done("model");
}
