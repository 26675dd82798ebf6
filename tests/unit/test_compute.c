// SPDX-License-Identifier: GPL-2.0
/*
 * cgtma compute: options and exit codes, the JSON output (full precision, the same numbers
 * tma_compute gives, thresholds and bottleneck as the vectors say), the default choice of
 * the perf-metrics path, the table, and reading counts from stdin.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>

#include <json-c/json.h>

#include "capture.h"
#include "commands.h"
#include "measurement.h"
#include "test.h"

/* The counts file the tests write, a temporary file. */
static char tmp_counts[] = "/tmp/cgtma-test-counts-XXXXXX";
#define TMP_COUNTS tmp_counts

struct result {
	int rc;
	char *out;
	char *err;
};

static struct result compute(const char *const *args)
{
	char *argv[32];
	struct capture out, err;
	struct result r;
	int argc = 0;

	argv[argc++] = "compute";
	for (; *args && argc < 31; args++)
		argv[argc++] = (char *)*args;
	argv[argc] = NULL;
	capture_begin(&out, 1);
	capture_begin(&err, 2);
	r.rc = cmd_compute(argc, argv);
	r.err = capture_end(&err);
	r.out = capture_end(&out);
	return r;
}

static void result_free(struct result *r)
{
	free(r->out);
	free(r->err);
}

static int lines(const char *s)
{
	int n = 0;

	for (; s && *s; s++)
		n += *s == '\n';
	return n;
}

/* Writes the counts of vector idx of a vector file to TMP_COUNTS, less the names in drop. */
static json_object *write_counts(const char *file, int idx, const char *drop_prefix)
{
	json_object *vectors = json_object_from_file(file), *vec, *counts, *copy;

	if (!vectors)
		return NULL;
	vec = json_object_get(json_object_array_get_idx(vectors, idx));
	json_object_put(vectors);
	json_object_object_get_ex(vec, "counts", &counts);
	copy = json_object_new_object();
	json_object_object_foreach(counts, key, val) {
		if (!drop_prefix || strncmp(key, drop_prefix, strlen(drop_prefix)))
			json_object_object_add(copy, key, json_object_get(val));
	}
	json_object_to_file(TMP_COUNTS, copy);
	json_object_put(copy);
	return vec;
}

static void test_usage(void)
{
	/* cgtma compute's own messages: one line each */
	static const struct {
		const char *args[6];
		const char *msg;
	} usage_errors[] = {
		{ { "--model", "spr", "-l", "x", "c.json" }, "--level 'x': expected an integer from 1 to 6" },
		{ { "--model", "spr", "-l", "-1", "c.json" }, "--level -1: the minimum is 1" },
		{ { "--model", "spr", "-l", "0", "c.json" }, "--level 0: the minimum is 1" },
		{ { "--model", "spr", "-l", "7", "c.json" }, "--level '7': expected an integer from 1 to 6" },
		{ { "--model", "spr", "--interval", "0", "c.json" }, "bad interval '0'" },
		{ { "--model", "spr", "--cpu-time", "-1", "c.json" }, "bad CPU time '-1'" },
		{ { "--model", "spr", "--metrics=", "c.json" }, "--metrics=: the list is empty" },
		{ { "--model", "spr" }, "no counts file" },
		{ { "c.json" }, "no model" },
		{ { "--model", "spr", "a.json", "b.json" }, "more than one counts file ('b.json')" },
	};
	/* getopt's, as every command says them: the option, then where help is */
	static const struct {
		const char *args[6];
		const char *msg;
	} getopt_errors[] = {
		{ { "--bogus", "x.json" }, "unrecognized option '--bogus'" },
		{ { "--model" }, "option '--model' requires an argument" },
		{ { "--model", "spr", "-l" }, "option '-l' requires an argument" },
		{ { "--modle", "spr", "x.json" }, "unrecognized option '--modle'; did you mean "
						   "'--model'?" },
		{ { "--json=yes", "x.json" }, "option '--json' doesn't allow an argument" },
	};
	struct result r;
	size_t i;

	for (i = 0; i < sizeof(usage_errors) / sizeof(usage_errors[0]); i++) {
		r = compute(usage_errors[i].args);
		CHECK_INT(r.rc, 2);
		CHECK(strstr(r.err, usage_errors[i].msg), "usage error %zu: %s", i, r.err);
		CHECK(lines(r.err) == 1, "usage error %zu: %d lines", i, lines(r.err));
		CHECK_STR(r.out, "");
		result_free(&r);
	}
	for (i = 0; i < sizeof(getopt_errors) / sizeof(getopt_errors[0]); i++) {
		r = compute(getopt_errors[i].args);
		CHECK_INT(r.rc, 2);
		CHECK(strstr(r.err, getopt_errors[i].msg) &&
		      strstr(r.err, "\nTry 'cgtma compute --help'.\n"), "getopt error %zu: %s", i,
		      r.err);
		CHECK(lines(r.err) == 2, "getopt error %zu: %d lines", i, lines(r.err));
		CHECK_STR(r.out, "");
		result_free(&r);
	}

	r = compute((const char *[]){ "--help", NULL });
	CHECK_INT(r.rc, 0);
	CHECK(strstr(r.out, "Usage: cgtma compute") && strstr(r.out, "Examples:"), "%s", r.out);
	CHECK_STR(r.err, "");
	result_free(&r);
}

static const struct {
	const char *text;
	size_t len;
	const char *msg;
} bad_texts[] = {
#define TEXT(s) s, sizeof(s) - 1
	{ TEXT(""), "(line 1: unexpected end of the file)" },
	{ TEXT("{\"TOPDOWN.SLOTS\": 12}\n\n x"), "(line 3: invalid JSON" },
	{ TEXT("{\"TOPDOWN.SLOTS\": 12}\n\0"), "(line 2: NUL byte in the file)" },
	{ TEXT("{\"TOPDOWN.SLOTS\":\n"), "(line 2: unexpected end of the file)" },
#undef TEXT
};

static void test_errors(void)
{
	json_object *bad;
	struct result r;

	r = compute((const char *[]){ "--model", "nosuch", "x.json", NULL });
	CHECK_INT(r.rc, 2);
	CHECK(strstr(r.err, "no built-in model 'nosuch'"), "%s", r.err);
	result_free(&r);

	r = compute((const char *[]){ "--model", "spr", "tests/no/such.json", NULL });
	CHECK_INT(r.rc, 2);
	CHECK(strstr(r.err, "cannot open 'tests/no/such.json': No such file"), "%s", r.err);
	result_free(&r);

	/* under --json the error is JSON on stdout too, '/' not escaped (as no JSON cgtma
	 * writes escapes it) */
	r = compute((const char *[]){ "--json", "--model", "spr", "tests/no/such.json", NULL });
	CHECK_INT(r.rc, 2);
	CHECK_STR(r.out, "{\"error\":\"compute: cannot open 'tests/no/such.json': No such file or "
			 "directory\"}\n");
	result_free(&r);

	/* a missing event is named; under --json the error is JSON on stdout too */
	json_object_put(write_counts("tests/vectors/spr-perf-metrics.json", 0, "ARITH."));
	r = compute((const char *[]){ "--model", "spr", "-l", "3", "--json", TMP_COUNTS, NULL });
	CHECK_INT(r.rc, 2);
	CHECK(strstr(r.err, "no count for event 'ARITH.DIV_ACTIVE'"), "%s", r.err);
	CHECK(!strncmp(r.out, "{\"error\":", 9) && lines(r.out) == 1, "%s", r.out);
	result_free(&r);

	/* a node whose events cannot fit one group says so; the others say nothing */
	json_object_put(write_counts("tests/vectors/spr-perf-metrics.json", 0, NULL));
	r = compute((const char *[]){ "--model", "spr", "-l", "3", "--perf-metrics", "--json",
				      TMP_COUNTS, NULL });
	CHECK_INT(r.rc, 0);
	{
		json_object *out = json_tokener_parse(r.out), *nodes = NULL, *v;
		int split = 0, fe_split = -1;

		CHECK(out && json_object_object_get_ex(out, "nodes", &nodes), "%s", r.out);
		for (size_t i = 0; nodes && i < json_object_array_length(nodes); i++) {
			json_object *n = json_object_array_get_idx(nodes, i), *name;
			int s = json_object_object_get_ex(n, "split", &v) &&
				 json_object_get_boolean(v);

			json_object_object_get_ex(n, "name", &name);
			split += s;
			if (!strcmp(json_object_get_string(name),
				    "Backend_Bound.Memory_Bound.CXL_Mem_Bound"))
				CHECK(s, "CXL_Mem_Bound not split");
			if (!strcmp(json_object_get_string(name), "Frontend_Bound"))
				fe_split = s;
		}
		CHECK_INT(fe_split, 0);
		CHECK_INT(split, 2);
		json_object_put(out);
	}
	result_free(&r);

	/* --perf-metrics on a model without that path */
	r = compute((const char *[]){ "--model", "skx", "--perf-metrics", TMP_COUNTS, NULL });
	CHECK_INT(r.rc, 2);
	CHECK(strstr(r.err, "model 'skx' has no perf-metrics path"), "%s", r.err);
	result_free(&r);

	/* --model and --model-file disagreeing */
	r = compute((const char *[]){ "--model", "skx", "--model-file", "user/models/spr.json",
				      TMP_COUNTS, NULL });
	CHECK_INT(r.rc, 2);
	CHECK(strstr(r.err, "holds model 'spr', not 'skx'"), "%s", r.err);
	result_free(&r);

	/* counts that are not an object of numbers */
	bad = json_object_new_array();
	json_object_to_file(TMP_COUNTS, bad);
	json_object_put(bad);
	r = compute((const char *[]){ "--model", "spr", TMP_COUNTS, NULL });
	CHECK_INT(r.rc, 2);
	CHECK(strstr(r.err, "must hold one JSON object"), "%s", r.err);
	result_free(&r);

	bad = json_tokener_parse("{\"TOPDOWN.SLOTS\": \"12\"}");
	json_object_to_file(TMP_COUNTS, bad);
	json_object_put(bad);
	r = compute((const char *[]){ "--model", "spr", TMP_COUNTS, NULL });
	CHECK_INT(r.rc, 2);
	CHECK(strstr(r.err, "the count of 'TOPDOWN.SLOTS' is not a number"), "%s", r.err);
	result_free(&r);

	bad = json_tokener_parse("{\"TOPDOWN.SLOTS\": 12}");
	json_object_to_file(TMP_COUNTS, bad);
	json_object_put(bad);
	r = compute((const char *[]){ "--model", "spr", "--json", TMP_COUNTS, NULL });
	CHECK_INT(r.rc, 2);
	CHECK(strstr(r.err, "no count for event"), "%s", r.err);
	result_free(&r);

	/* Impossible counts, named: negative, and 1e400 (json-c reads it as infinity). */
	{
		static const struct {
			const char *text, *msg;
		} impossible[] = {
			{ "{\"TOPDOWN.SLOTS\": -5}", "the count of 'TOPDOWN.SLOTS' is negative (-5)" },
			{ "{\"TOPDOWN.SLOTS\": -0.5}", "the count of 'TOPDOWN.SLOTS' is negative" },
			{ "{\"TOPDOWN.SLOTS\": 1e400}", "the count of 'TOPDOWN.SLOTS' is not finite" },
			{ "{\"TOPDOWN.SLOTS\": -1e400}", "the count of 'TOPDOWN.SLOTS' is" },
		};

		for (size_t i = 0; i < sizeof(impossible) / sizeof(impossible[0]); i++) {
			FILE *f = fopen(TMP_COUNTS, "w");

			if (!f)
				continue;
			fputs(impossible[i].text, f);
			fclose(f);
			r = compute((const char *[]){ "--model", "spr", TMP_COUNTS, NULL });
			CHECK_INT(r.rc, 2);
			CHECK(strstr(r.err, impossible[i].msg) && lines(r.err) == 1, "%s: %s",
			      impossible[i].text, r.err);
			result_free(&r);
		}
	}

	/* Text that is not one JSON object: the line, as model files say it. */
	for (size_t i = 0; i < sizeof(bad_texts) / sizeof(bad_texts[0]); i++) {
		FILE *f = fopen(TMP_COUNTS, "w");

		if (!f)
			continue;
		fwrite(bad_texts[i].text, 1, bad_texts[i].len, f);
		fclose(f);
		r = compute((const char *[]){ "--model", "spr", TMP_COUNTS, NULL });
		CHECK_INT(r.rc, 2);
		CHECK(strstr(r.err, "is not valid JSON") && strstr(r.err, bad_texts[i].msg) &&
		      lines(r.err) == 1, "text %zu: %s", i, r.err);
		result_free(&r);
	}
}

/* The JSON output of vector 0 of a file: the vector's values, flags and bottleneck. */
/*
 * The default metrics, {"name", "value", "unit"} after the nodes, as tests/vectors/metrics.py
 * computed them from the vector's counts; GHz over the CPU time compute takes by default,
 * --interval's 1 s (the vector's is cpu_s).
 */
static void check_default_metrics(json_object *out, json_object *vec)
{
	static const char *const names[] = { "IPC", "CPI", "GHz" }, *const units[] = { "", "", "GHz" };
	json_object *metrics = NULL, *want, *cpu_s;

	CHECK(json_object_object_get_ex(out, "metrics", &metrics), "no metrics");
	json_object_object_get_ex(vec, "metrics", &want);
	json_object_object_get_ex(vec, "cpu_s", &cpu_s);
	if (!metrics || !want || !cpu_s)
		return;
	CHECK_INT(json_object_array_length(metrics), 3);
	for (size_t k = 0; k < 3 && k < json_object_array_length(metrics); k++) {
		json_object *m = json_object_array_get_idx(metrics, k);
		double w = json_object_get_double(json_object_object_get(want, names[k]));

		if (k == 2)
			w *= json_object_get_double(cpu_s);
		CHECK_STR(json_object_get_string(json_object_object_get(m, "name")), names[k]);
		CHECK_STR(json_object_get_string(json_object_object_get(m, "unit")), units[k]);
		CHECK_NEAR(json_object_get_double(json_object_object_get(m, "value")), w, 1e-9);
	}
}

static void check_json(const char *file, const char *const *args)
{
	json_object *vec, *out = NULL, *nodes = NULL, *expected, *model, *bn = NULL;
	struct result r;
	size_t i;
	int nr_bn = 0;

	vec = write_counts(file, 0, NULL);
	if (!vec)
		return;
	r = compute(args);
	CHECK_INT(r.rc, 0);
	CHECK_STR(r.err, "");
	CHECK(lines(r.out) == 1, "%d lines", lines(r.out));
	out = json_tokener_parse(r.out);
	CHECK(out && json_object_object_get_ex(out, "nodes", &nodes), "not JSON: %s", r.out);
	if (!nodes)
		goto out;
	json_object_object_get_ex(out, "model", &model);
	CHECK_STR(json_object_get_string(model), "spr");
	check_default_metrics(out, vec);
	json_object_object_get_ex(vec, "expected", &expected);
	json_object_object_get_ex(vec, "bottleneck", &bn);
	CHECK_INT(json_object_array_length(nodes), json_object_object_length(expected));
	for (i = 0; i < json_object_array_length(nodes); i++) {
		json_object *n = json_object_array_get_idx(nodes, i), *name, *value, *thresh, *b,
			    *want, *wv, *wt;

		json_object_object_get_ex(n, "name", &name);
		json_object_object_get_ex(n, "value", &value);
		json_object_object_get_ex(n, "thresh", &thresh);
		json_object_object_get_ex(n, "bottleneck", &b);
		/* "split" only on a node split over groups */
		CHECK(json_object_object_length(n) ==
			      4 + json_object_object_get_ex(n, "split", NULL),
		      "node %zu: %d keys", i, json_object_object_length(n));
		if (!json_object_object_get_ex(expected, json_object_get_string(name), &want)) {
			CHECK(0, "unexpected node %s", json_object_get_string(name));
			continue;
		}
		json_object_object_get_ex(want, "value", &wv);
		json_object_object_get_ex(want, "thresh", &wt);
		CHECK_NEAR(json_object_get_double(value), json_object_get_double(wv), 1e-9);
		CHECK(json_object_get_boolean(thresh) == json_object_get_boolean(wt), "%s thresh",
		      json_object_get_string(name));
		if (json_object_get_boolean(b)) {
			nr_bn++;
			CHECK_STR(json_object_get_string(name), json_object_get_string(bn));
		}
	}
	CHECK_INT(nr_bn, bn && !json_object_is_type(bn, json_type_null));
	/* tree order: the first node is level 1, the first child follows its parent */
	CHECK_STR(json_object_get_string(json_object_object_get(json_object_array_get_idx(nodes, 0),
								"name")),
		  "Frontend_Bound");
out:
	json_object_put(out);
	json_object_put(vec);
	result_free(&r);
}

static void test_json(void)
{
	/* without an option, the counts decide the path: the values tell which was taken */
	check_json("tests/vectors/spr-perf-metrics.json",
		   (const char *[]){ "--model", "spr", "-l", "3", "--json", TMP_COUNTS, NULL });
	check_json("tests/vectors/spr-generic.json",
		   (const char *[]){ "--model", "spr", "-l3", "--json", TMP_COUNTS, NULL });
	check_json("tests/vectors/spr-perf-metrics.json",
		   (const char *[]){ "--json", "--model-file", "user/models/spr.json", "--level=3",
				     "--perf-metrics", "--no-smt", TMP_COUNTS, NULL });
}

/* Every digit a double needs to read back the same, and the exact layout (json-c's plain). */
static void test_json_format(void)
{
	static const char want[] = "{\"model\":\"spr\",\"nodes\":[{\"name\":\"Frontend_Bound\","
				   "\"value\":0.10897812900789075,\"thresh\":false,"
				   "\"bottleneck\":false},{\"name\":\"Bad_Speculation\",";
	struct result r;

	json_object_put(write_counts("tests/vectors/spr-perf-metrics.json", 0, NULL));
	r = compute((const char *[]){ "--model", "spr", "--json", TMP_COUNTS, NULL });
	CHECK_INT(r.rc, 0);
	CHECK(!strncmp(r.out, want, sizeof(want) - 1), "%s", r.out);
	result_free(&r);
}

static void test_table(void)
{
	struct result r;

	json_object_put(write_counts("tests/vectors/spr-perf-metrics.json", 0, NULL));
	r = compute((const char *[]){ "--model", "spr", "-l", "3", TMP_COUNTS, NULL });
	CHECK_INT(r.rc, 0);
	CHECK(!strncmp(r.out, "model spr: level 3, perf-metrics on, SMT off\n", 45), "%s", r.out);
	/* then the terminal view's tree of one scope, as a live run's with -v */
	CHECK(!strncmp(r.out + 45, "system\n", 7), "%s", r.out);
	CHECK(strstr(r.out, "\n      Serializing_Operation      40.5 % Clocks           <==\n"),
	      "%s", r.out);
	CHECK(strstr(r.out, "\n  Frontend_Bound                 10.9 % Slots            <  \n"),
	      "%s", r.out);
	CHECK(strstr(r.out, "\n  Bad_Speculation                37.1 % Slots\n"), "%s", r.out);
	CHECK(strstr(r.out, "\n      CXL_Mem_Bound              10.3 % Stalls           <   "
			    "[split]\n"), "%s", r.out);
	/* the tree, then its default metrics on one line */
	CHECK(strstr(r.out, "Microcode_Sequencer        53.7 % Slots\n"
			    "  IPC 0.650  CPI 1.538  GHz 1.953\n"), "%s", r.out);
	CHECK_INT(lines(r.out), 1 + 1 + 40 + 1);
	result_free(&r);

	/* the counts lack the perf-metrics events: the generic path, by default */
	json_object_put(write_counts("tests/vectors/spr-generic.json", 0, NULL));
	r = compute((const char *[]){ "--model", "spr", TMP_COUNTS, NULL });
	CHECK_INT(r.rc, 0);
	CHECK(!strncmp(r.out, "model spr: level 1, perf-metrics off, SMT off\n", 46), "%s", r.out);
	CHECK_INT(lines(r.out), 1 + 1 + 4 + 1);
	result_free(&r);

	/* -l beyond the model's depth reports what there is; -M as every command takes it */
	json_object_put(write_counts("tests/vectors/zen4.json", 0, NULL));
	r = compute((const char *[]){ "-M", "zen4", "-l", "6", "--smt", TMP_COUNTS, NULL });
	CHECK_INT(r.rc, 0);
	CHECK(!strncmp(r.out, "model zen4: level 2, perf-metrics off, SMT on\n", 46), "%s", r.out);
	CHECK_INT(lines(r.out), 1 + 1 + 13 + 1);
	result_free(&r);
}

/*
 * -l beyond a model's depth: a live run's plan (measurement_setup, as list-events and cgtma
 * make it) and compute agree, showing every level the model has with the same notice.
 * Neoverse V1, N2 and V2 are one level deep (perf has only TopdownL1 for them): -l 2 is
 * their level 1; N3 has a level 2.
 */
static void test_levels(void)
{
	/* the tree's level 1 takes every counter: a run leaves IPC and CPI out, and says so */
	static const char mux[] = "IPC, CPI not counted: their events would make the PMU "
				  "multiplex the tree; -m counts them\n";
	static const struct {
		const char *model;
		int level, shown;
		const char *notice;
		bool mux;
	} cases[] = {
		{ "neoverse-v1", 2, 1, "level 2: model 'neoverse-v1' has level 1 only: showing it", true },
		{ "neoverse-n2", 2, 1, "level 2: model 'neoverse-n2' has level 1 only: showing it", true },
		{ "neoverse-v2", 2, 1, "level 2: model 'neoverse-v2' has level 1 only: showing it", true },
		{ "neoverse-v2", 6, 1, "level 6: model 'neoverse-v2' has level 1 only: showing it", true },
		{ "neoverse-n3", 2, 2, NULL, false },
		{ "neoverse-n3", 5, 4, "level 5: model 'neoverse-n3' has levels 1 to 4: showing them",
		  false },
		{ "zen4", 6, 2, "level 6: model 'zen4' has levels 1 to 2: showing them", false },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct measure_opts o = { .model = cases[i].model, .level = cases[i].level,
					  .perf_metrics = -1, .smt = 0, .nmi_watchdog = 0 };
		char file[64], level[8], want_err[512];
		struct measurement m = {};
		struct result r, r1;
		int nodes = 0;

		CHECK_INT(measurement_setup(&o, &m), 0);
		CHECK_INT(m.level, cases[i].shown);
		if (m.plan) {
			CHECK_INT(m.plan->opts.level, cases[i].shown);
			for (int k = 0; k < m.plan->nr_nodes; k++)
				nodes += m.plan->nodes[k].level <= cases[i].shown;
			CHECK_INT(m.plan->nr_nodes, nodes);
		}
		snprintf(want_err, sizeof(want_err), "%s%s%s", cases[i].notice ? cases[i].notice : "",
			 cases[i].notice ? "\n" : "", cases[i].mux ? mux : "");
		CHECK_STR(m.notices.buf ? m.notices.buf : "", want_err);
		measurement_release(&m);

		/* compute: the same notice (as cgtma: says it), the shown level's output */
		snprintf(file, sizeof(file), "tests/vectors/%s.json", cases[i].model);
		json_object_put(write_counts(file, 0, NULL));
		snprintf(level, sizeof(level), "%d", cases[i].level);
		r = compute((const char *[]){ "-M", cases[i].model, "-l", level, "--json",
					      TMP_COUNTS, NULL });
		snprintf(level, sizeof(level), "%d", cases[i].shown);
		r1 = compute((const char *[]){ "-M", cases[i].model, "-l", level, "--json",
					       TMP_COUNTS, NULL });
		CHECK_INT(r.rc, 0);
		CHECK_INT(r1.rc, 0);
		snprintf(want_err, sizeof(want_err), "%s%s%s", cases[i].notice ? "cgtma: " : "",
			 cases[i].notice ? cases[i].notice : "", cases[i].notice ? "\n" : "");
		CHECK_STR(r.err, want_err);
		CHECK_STR(r.out, r1.out);
		CHECK(strstr(r.out, "\"nodes\":[{\"name\":\"Frontend_"), "%s", r.out);
		result_free(&r);
		result_free(&r1);
	}
}

/* Metrics, rates over --interval, and counts from stdin. */
static void test_metrics_stdin(void)
{
	static const char counts[] = "{\"cpu-clock\": 3e9, \"context-switches\": 100, "
				     "\"cpu-migrations\": 0, \"page-faults\": 7}";
	json_object *out, *metrics = NULL, *m0, *v, *nodes;
	struct result r;
	int fd, saved;
	FILE *f = fopen(TMP_COUNTS, "w");

	if (!f)
		return;
	fputs(counts, f);
	fclose(f);
	fd = open(TMP_COUNTS, O_RDONLY);
	saved = dup(0);
	dup2(fd, 0);
	close(fd);
	r = compute((const char *[]){ "--model", "sw", "--interval", "2", "--json", "-", NULL });
	dup2(saved, 0);
	close(saved);
	clearerr(stdin);
	CHECK_INT(r.rc, 0);
	out = json_tokener_parse(r.out);
	CHECK(out && json_object_object_get_ex(out, "metrics", &metrics), "%s", r.out);
	if (metrics) {
		CHECK_INT(json_object_array_length(metrics), 4);
		m0 = json_object_array_get_idx(metrics, 0);
		CHECK_STR(json_object_get_string(json_object_object_get(m0, "name")),
			  "CPU_Utilization");
		CHECK_STR(json_object_get_string(json_object_object_get(m0, "unit")), "CPUs");
		v = json_object_object_get(m0, "value");
		CHECK_NEAR(json_object_get_double(v), 1.5, 0.0);
		v = json_object_object_get(json_object_array_get_idx(metrics, 1), "value");
		CHECK_NEAR(json_object_get_double(v), 50.0, 0.0);
		CHECK(json_object_object_get_ex(out, "nodes", &nodes) &&
		      json_object_array_length(nodes) == 0, "%s", r.out);
	}
	json_object_put(out);
	result_free(&r);
}

/*
 * -m, --metrics and --cpu-time on a model of spr's with one more metric in groups: the
 * default line, the block -m prints (spr's own metrics, toplev's, then the added one), the
 * selection by group or name without regard to case, and the errors.
 */
static void test_metrics_option(void)
{
	static const char model[] = "/tmp/cgtma-test-metrics-model.json";
	static const char extra[] =
		"[{\"name\": \"Kernel_Test\", \"expr\": \"CPU_CLK_UNHALTED.THREAD / 4e9\", "
		"\"unit\": \"\", \"desc\": \"x\", \"groups\": [\"Info.System\", \"Summary\"]}]";
	json_object *m = json_object_from_file("user/models/spr.json"), *metrics, *add;
	struct result r;

	add = json_tokener_parse(extra);
	if (!m || !add || !json_object_object_get_ex(m, "metrics", &metrics)) {
		CHECK(0, "no spr model to extend");
		return;
	}
	for (size_t i = 0; i < json_object_array_length(add); i++)
		json_object_array_add(metrics, json_object_get(json_object_array_get_idx(add, i)));
	json_object_to_file(model, m);
	json_object_put(m);
	json_object_put(add);
	json_object_put(write_counts("tests/vectors/spr-perf-metrics.json", 0, NULL));

	/* no -m: the default line; GHz over --cpu-time */
	r = compute((const char *[]){ "--model-file", model, "--cpu-time", "0.5", TMP_COUNTS,
				      NULL });
	CHECK_INT(r.rc, 0);
	CHECK(strstr(r.out, "\n  IPC 0.650  CPI 1.538  GHz 3.906\n") && !strstr(r.out, "UopPI"),
	      "%s", r.out);
	result_free(&r);
	/* -m: every metric, one a line, with its unit, in the model's order */
	r = compute((const char *[]){ "--model-file", model, "-m", TMP_COUNTS, NULL });
	CHECK_INT(r.rc, 0);
	CHECK(strstr(r.out, "<  \n  metrics\n"
			    "    IPC                             0.650\n"
			    "    CPI                             1.538\n"
			    "    GHz                             1.953 GHz\n"
			    "    Big_Code                        0.084 % [split]\n"
			    "    Branching_Overhead             10.599 %\n") &&
	      strstr(r.out, "\n    UopPI                           1.117\n") &&
	      strstr(r.out, "\n    IpFarBranch                     1.943\n"
			    "    Kernel_Test                     0.488\n"), "%s", r.out);
	result_free(&r);
	/* a group, case ignored, after --metrics as perf's -M takes it: the defaults and it */
	r = compute((const char *[]){ "--model-file", model, "--metrics", "summary", "--json",
				      TMP_COUNTS, NULL });
	CHECK_INT(r.rc, 0);
	CHECK(strstr(r.out, "{\"name\":\"GHz\",\"value\":1.952880331,\"unit\":\"GHz\"},"
			    "{\"name\":\"Instructions\",\"value\":1269372215.0,\"unit\":\"\"},"
			    "{\"name\":\"Time\",\"value\":1.0,\"unit\":\"s\"},"
			    "{\"name\":\"Kernel_Test\",\"value\":0.48822008275000001,"
			    "\"unit\":\"\"}]}") && !strstr(r.out, "UopPI"), "%s", r.out);
	result_free(&r);
	/* a name, with --metrics=LIST */
	r = compute((const char *[]){ "--model-file", model, "--metrics=UOPPI", "--json",
				      TMP_COUNTS, NULL });
	CHECK_INT(r.rc, 0);
	CHECK(strstr(r.out, "\"UopPI\"") && !strstr(r.out, "Kernel_Test"), "%s", r.out);
	result_free(&r);
	/* a group that does not exist: a usage error, and what is close */
	r = compute((const char *[]){ "--model-file", model, "--metrics", "Info.Thread,Sumary",
				      TMP_COUNTS, NULL });
	CHECK_INT(r.rc, 2);
	CHECK_STR(r.err, "cgtma: --metrics: model spr has no metric or metric group 'Sumary': "
		  "did you mean 'Summary'? (cgtma list-events -M spr -m lists them)\n");
	CHECK_STR(r.out, "");
	result_free(&r);
	r = compute((const char *[]){ "--model-file", model, "--metrics", "IPC,,CPI", TMP_COUNTS,
				      NULL });
	CHECK_INT(r.rc, 2);
	CHECK_STR(r.err, "cgtma: --metrics 'IPC,,CPI': an empty item in the list\n");
	result_free(&r);
	unlink(model);
}

int main(void)
{
	int fd = mkstemp(tmp_counts);

	if (fd < 0) {
		printf("not ok - cannot create %s\n", tmp_counts);
		return 1;
	}
	close(fd);
	test_usage();
	test_errors();
	test_json();
	test_json_format();
	test_table();
	test_levels();
	test_metrics_stdin();
	test_metrics_option();
	unlink(TMP_COUNTS);
	return test_done("compute");
}
