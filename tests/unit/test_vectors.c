// SPDX-License-Identifier: GPL-2.0
/*
 * The built-in models against toplev: every vector in tests/vectors (computed with pmu-tools'
 * model files and checked against the toplev command line; tests/vectors/README.md says how
 * each file's numbers were obtained) must give the same values (within 1e-9), the same
 * threshold flags and the same bottleneck. Intel vectors are level 3, AMD level 2.
 * Arm's (neoverse-*.json) are computed from Linux perf's expressions by
 * tests/vectors/neoverse.py, at every level the model has.
 *
 * And every flat metric of the model (all of them, as -m computes them, and none more), within
 * 1e-9 of the value (1e-9 absolute below 1): the Arm ones written by neoverse.py (with
 * "units", each metric's unit as perf prints it), the x86 ones by tests/vectors/x86_metrics.py
 * from toplev's and perf's own expressions; the default IPC, CPI and GHz among them.
 */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include <json-c/json.h>

#include "model_internal.h"
#include "test.h"

#define VECTOR_DIR "tests/vectors"
#define VALUE_TOLERANCE 1e-9

static int nr_vectors;
static double cost_us;		/* of one computation of the first level-3 vector */
static char cost_of[64];

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static bool get_bool(json_object *o, const char *key)
{
	json_object *v;

	return json_object_object_get_ex(o, key, &v) && json_object_get_boolean(v);
}

static double get_double(json_object *o, const char *key, double dflt)
{
	json_object *v;

	return json_object_object_get_ex(o, key, &v) ? json_object_get_double(v) : dflt;
}

static int get_int(json_object *o, const char *key)
{
	json_object *v;

	return json_object_object_get_ex(o, key, &v) ? json_object_get_int(v) : 0;
}

static int plan_node(const struct plan *p, const char *full_name)
{
	int i;

	for (i = 0; i < p->nr_nodes; i++) {
		if (!strcmp(p->nodes[i].full_name, full_name))
			return i;
	}
	return -1;
}

static int plan_metric(const struct plan *p, const char *name)
{
	for (int i = 0; i < p->nr_metrics; i++)
		if (!strcmp(p->metrics[i].name, name))
			return i;
	return -1;
}

/*
 * The vector's "metrics": every metric of the plan, each as the vector expects it, and none
 * more; IPC, CPI and GHz are default metrics of every model that has vectors.
 */
static void check_metrics(const char *file, int idx, json_object *vec, const struct plan *p,
			  const struct tma_result *r)
{
	static const char *const defaults[] = { "IPC", "CPI", "GHz" };
	json_object *want;

	CHECK(json_object_object_get_ex(vec, "metrics", &want), "%s[%d]: no metrics", file, idx);
	if (!want)
		return;
	for (size_t k = 0; k < sizeof(defaults) / sizeof(defaults[0]); k++) {
		int i = plan_metric(p, defaults[k]);

		CHECK(i >= 0 && p->metrics[i].is_default, "%s[%d]: %s is no default metric", file,
		      idx, defaults[k]);
	}
	CHECK(json_object_object_length(want) == p->nr_metrics,
	      "%s[%d]: %d metrics, the model has %d", file, idx, json_object_object_length(want),
	      p->nr_metrics);
	for (int i = 0; i < p->nr_metrics; i++) {
		const char *name = p->metrics[i].name;
		json_object *wv;
		double w;

		if (!json_object_object_get_ex(want, name, &wv)) {
			CHECK(0, "%s[%d]: no expected value for metric %s", file, idx, name);
			continue;
		}
		w = json_object_get_double(wv);
		CHECK(r->metric_counted[i], "%s[%d]: metric %s not counted", file, idx, name);
		CHECK(fabs(r->metric[i] - w) <= VALUE_TOLERANCE * fmax(1, fabs(w)),
		      "%s[%d]: metric %s = %.17g, reference %.17g", file, idx, name, r->metric[i], w);
	}
}

/* A vector's "units" {NAME: UNIT} (neoverse.py's): each metric's unit is the one it gives. */
static void check_units(const char *file, int idx, json_object *vec, const struct plan *p)
{
	json_object *units;

	if (!json_object_object_get_ex(vec, "units", &units))
		return;
	json_object_object_foreach(units, name, want) {
		int i = plan_metric(p, name);

		CHECK(i >= 0 && !strcmp(p->metrics[i].unit, json_object_get_string(want)),
		      "%s[%d]: metric %s in '%s', the reference's '%s'", file, idx, name,
		      i >= 0 ? p->metrics[i].unit : "(none)", json_object_get_string(want));
	}
}

static void run_vector(const char *file, int idx, json_object *vec)
{
	json_object *jmodel, *counts, *expected, *jbn;
	struct model_options o = { 0 };
	struct tma_result r = { .bottleneck = -1 }, ref = { .bottleneck = -1 };
	struct tma_input in = { .interval_s = 1 };
	struct model *m = NULL;
	struct plan *p = NULL;
	double *values = NULL;
	bool *counted = NULL;
	int i, err;

	nr_vectors++;
	CHECK(json_object_object_get_ex(vec, "model", &jmodel), "%s[%d]: no model", file, idx);
	CHECK(json_object_object_get_ex(vec, "counts", &counts), "%s[%d]: no counts", file, idx);
	CHECK(json_object_object_get_ex(vec, "expected", &expected), "%s[%d]: no expected", file,
	      idx);
	if (!jmodel || !counts || !expected)
		return;
	err = model_load_builtin(json_object_get_string(jmodel), &m);
	CHECK(!err, "%s[%d]: model %s does not load", file, idx, json_object_get_string(jmodel));
	if (err)
		return;

	/* Arm's: every level the model has, with #slots and the MIDR the vector gives */
	o.level = !strcmp(model_vendor(m), "arm") ? model_max_level(m) :
		  strcmp(model_vendor(m), "amd") ? 3 : 2;
	o.perf_metrics = get_bool(vec, "perf_metrics");
	o.smt = get_bool(vec, "smt");
	o.slots = get_int(vec, "slots");
	o.cpu_part = get_int(vec, "cpu_part");
	o.cpu_revision = get_int(vec, "cpu_revision");
	o.metrics = "";		/* every metric, as -m */
	in.interval_s = get_double(vec, "interval_s", 1);
	in.cpu_s = get_double(vec, "cpu_s", 0);
	err = plan_new(m, &o, &p);
	CHECK(!err, "%s[%d]: no plan", file, idx);
	if (err)
		goto out;

	values = calloc(p->nr_events + 1, sizeof(*values));
	counted = calloc(p->nr_events + 1, sizeof(*counted));
	if (!values || !counted)
		goto out;
	for (i = 0; i < p->nr_events; i++) {
		json_object *v;

		CHECK(json_object_object_get_ex(counts, p->events[i].name, &v),
		      "%s[%d]: the vector has no count for '%s'", file, idx, p->events[i].name);
		values[i] = v ? json_object_get_double(v) : 0;
		counted[i] = true;
	}
	in.counts = values;
	in.counted = counted;
	err = tma_result_init(&r, p);
	if (!err)
		err = tma_compute(p, &in, &r);
	CHECK(!err, "%s[%d]: compute failed: %d", file, idx, err);
	if (err)
		goto out;

	/* What one computation costs (reported, never checked: machines differ). */
	if (!cost_of[0] && o.level == 3) {
		double t0 = now();

		for (i = 0; i < 2000; i++)
			tma_compute(p, &in, &r);
		cost_us = (now() - t0) / 2000 * 1e6;
		snprintf(cost_of, sizeof(cost_of), "%s", file);
	}

	/* toplev's way, recomputing on every reference, gives bit for bit the same */
	plan_set_memo(p, false);
	if (!tma_result_init(&ref, p) && !tma_compute(p, &in, &ref)) {
		CHECK(!memcmp(r.value, ref.value, p->nr_nodes * sizeof(*r.value)) &&
			      !memcmp(r.above, ref.above, p->nr_nodes * sizeof(*r.above)) &&
			      r.bottleneck == ref.bottleneck,
		      "%s[%d]: memoized values differ from recomputed ones", file, idx);
	}
	tma_result_release(&ref);

	check_metrics(file, idx, vec, p, &r);
	check_units(file, idx, vec, p);

	/* The same nodes, both ways. */
	CHECK_INT(p->nr_nodes, json_object_object_length(expected));
	json_object_object_foreach(expected, name, want) {
		json_object *wv, *wt;
		int n = plan_node(p, name);

		CHECK(n >= 0, "%s[%d]: the model has no node %s", file, idx, name);
		if (n < 0)
			continue;
		json_object_object_get_ex(want, "value", &wv);
		CHECK(r.counted[n], "%s[%d]: %s not counted", file, idx, name);
		CHECK(fabs(r.value[n] - json_object_get_double(wv)) <= VALUE_TOLERANCE,
		      "%s[%d]: %s = %.17g, toplev %.17g", file, idx, name, r.value[n],
		      json_object_get_double(wv));
		if (json_object_object_get_ex(want, "thresh", &wt))
			CHECK(r.above[n] == json_object_get_boolean(wt),
			      "%s[%d]: %s above threshold: %d, toplev %d", file, idx, name,
			      r.above[n], json_object_get_boolean(wt));
	}
	if (json_object_object_get_ex(vec, "bottleneck", &jbn)) {
		const char *want_bn = json_object_is_type(jbn, json_type_null)
					   ? "(none)"
					   : json_object_get_string(jbn);
		const char *got = r.bottleneck >= 0 ? p->nodes[r.bottleneck].full_name : "(none)";

		CHECK_STR(got, want_bn);
		if (strcmp(got, want_bn))
			printf("  in %s[%d]\n", file, idx);
	}
out:
	tma_result_release(&r);
	free(values);
	free(counted);
	plan_free(p);
	model_free(m);
}

static void run_file(const char *name)
{
	char path[512];
	json_object *vectors;
	size_t i;

	snprintf(path, sizeof(path), "%s/%s", VECTOR_DIR, name);
	vectors = json_object_from_file(path);
	CHECK(vectors && json_object_is_type(vectors, json_type_array), "%s: not a JSON array",
	      path);
	if (!vectors)
		return;
	for (i = 0; i < json_object_array_length(vectors); i++)
		run_vector(name, (int)i, json_object_array_get_idx(vectors, i));
	json_object_put(vectors);
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(void)
{
	char *names[256];
	int nr = 0, i;
	struct dirent *de;
	DIR *d = opendir(VECTOR_DIR);

	CHECK(d != NULL, "cannot open %s: %s", VECTOR_DIR, strerror(errno));
	if (!d)
		return test_done("vectors");
	while ((de = readdir(d)) && nr < (int)(sizeof(names) / sizeof(names[0]))) {
		size_t len = strlen(de->d_name);

		if (len > 5 && !strcmp(de->d_name + len - 5, ".json"))
			names[nr++] = strdup(de->d_name);
	}
	closedir(d);
	qsort(names, nr, sizeof(names[0]), cmp_name);
	for (i = 0; i < nr; i++) {
		if (names[i])
			run_file(names[i]);
		free(names[i]);
	}
	/* Every model with a Top-Down tree has vectors: a directory that went missing fails. */
	CHECK(nr >= 12, "only %d vector files in %s", nr, VECTOR_DIR);
	printf("# %d vectors from %d files; one level-3 computation (%s): %.1f us\n", nr_vectors,
	       nr, cost_of, cost_us);
	return test_done("vectors");
}
