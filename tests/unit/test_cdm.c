// SPDX-License-Identifier: GPL-2.0
/*
 * --cdm: crucible's metric files. Synthetic intervals (the spr plan from a vector's counts,
 * the sw model, -e events) go through the sink; after every interval the pair on disk must
 * follow every rule of CDM (docs/crucible.md, "The Common Data Model's rules"): a JSON
 * array of {idx, desc{source, class, type}, names{...}} with exactly those keys (no
 * default-aggregation: CDM's v8dev index rejects it; class throughput, never count) and
 * known name keys, CSV rows "idx,begin,end,value" of integer milliseconds whose idx is in
 * the JSON, begin <= end, each series' next begin its previous end + 1, no NaN or Inf.
 * Then what the rows say: node series in percent with crucible's toplev type names, the
 * system as cgroup "/" (with --irq as cgroup and irq "all", apart from the root cgroup and
 * the irq scopes, each named by its own "irq"), a node not counted skipped and covered by the next row, and writes
 * that fail (a file size limit stands in for a full disk) cut back to whole intervals,
 * reported once, and retried.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "capture.h"
#include "commands.h"
#include "outfile.h"
#include "output.h"
#include "record.h"
#include "synth.h"
#include "test.h"

#define MAX_ROWS 100000

struct row {
	long idx;
	long long begin, end;
	double value;
};

struct files {
	json_object *json;
	struct row *rows;
	int nr_rows;
};

static void files_free(struct files *f)
{
	json_object_put(f->json);
	free(f->rows);
	memset(f, 0, sizeof(*f));
}

static bool known_name(const char *k)
{
	static const char *const keys[] = { "cgroup", "cpu", "container", "pod", "irq", "pid", "tid",
					     "cmd" };

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (!strcmp(k, keys[i]))
			return true;
	return false;
}

static json_object *entry_of(json_object *arr, long idx)
{
	for (size_t i = 0; i < json_object_array_length(arr); i++) {
		json_object *e = json_object_array_get_idx(arr, i), *ji;

		if (json_object_object_get_ex(e, "idx", &ji) && json_object_get_int64(ji) == idx)
			return e;
	}
	return NULL;
}

/* Parses one "idx,begin,end,value" line strictly: four fields, integers, a finite value. */
static bool parse_row(const char *line, size_t len, struct row *r)
{
	char buf[256], *end;
	const char *f[4];
	int n = 1;

	if (len >= sizeof(buf))
		return false;
	memcpy(buf, line, len);
	buf[len] = '\0';
	f[0] = buf;
	for (char *p = buf; *p; p++)
		if (*p == ',') {
			if (n == 4)
				return false;
			*p = '\0';
			f[n++] = p + 1;
		}
	if (n != 4)
		return false;
	for (int i = 0; i < 3; i++) {
		if (!*f[i] || strspn(f[i], "0123456789") != strlen(f[i]))
			return false;
	}
	r->idx = strtol(f[0], NULL, 10);
	r->begin = strtoll(f[1], NULL, 10);
	r->end = strtoll(f[2], NULL, 10);
	r->value = strtod(f[3], &end);
	return *f[3] && !*end && isfinite(r->value) && !strpbrk(f[3], "eEnN");
}

/* Reads the pair and checks every CDM rule; false (with CHECK failures) when one breaks. */
static bool read_files(const char *dir, struct files *out)
{
	char path[4096];
	char *csv;
	int fails = test_failures;

	memset(out, 0, sizeof(*out));
	snprintf(path, sizeof(path), "%s/metric-data-cgtma.json", dir);
	out->json = json_object_from_file(path);
	CHECK(out->json && json_object_is_type(out->json, json_type_array), "%s: not an array", path);
	if (!out->json)
		return false;
	for (size_t i = 0; i < json_object_array_length(out->json); i++) {
		json_object *e = json_object_array_get_idx(out->json, i), *desc, *names, *v;
		int nkeys = 0;

		CHECK(json_object_object_length(e) == 3 && json_object_object_get_ex(e, "idx", &v) &&
		      json_object_is_type(v, json_type_int) && json_object_object_get_ex(e, "desc", &desc) &&
		      json_object_object_get_ex(e, "names", &names),
		      "entry %zu: not {idx, desc, names}", i);
		if (!json_object_object_get_ex(e, "desc", &desc) ||
		    !json_object_object_get_ex(e, "names", &names))
			continue;
		json_object_object_foreach(desc, k, dv) {
			CHECK(!strcmp(k, "source") || !strcmp(k, "class") || !strcmp(k, "type"),
			      "entry %zu: desc key '%s'", i, k);
			CHECK(json_object_is_type(dv, json_type_string), "entry %zu: %s not a string", i, k);
			nkeys++;
		}
		CHECK(json_object_object_get_ex(desc, "source", &v) && json_object_object_get_ex(desc, "class", &v) &&
		      json_object_object_get_ex(desc, "type", &v), "entry %zu: desc lacks a key", i);
		CHECK_INT(nkeys, 3);
		if (json_object_object_get_ex(desc, "class", &v))
			CHECK_STR(json_object_get_string(v), "throughput");
		json_object_object_foreach(names, nk, nv) {
			CHECK(known_name(nk), "entry %zu: name key '%s'", i, nk);
			CHECK(json_object_is_type(nv, json_type_string), "entry %zu: name %s not a string", i, nk);
		}
		CHECK(entry_of(out->json, (long)i) != NULL, "no idx %zu", i);
	}

	snprintf(path, sizeof(path), "%s/metric-data-cgtma.csv", dir);
	csv = synth_read_file(path);
	CHECK(csv != NULL, "%s: cannot read", path);
	if (!csv)
		return false;
	CHECK(!*csv || csv[strlen(csv) - 1] == '\n', "%s: a cut last line", path);
	out->rows = calloc(MAX_ROWS, sizeof(*out->rows));
	for (const char *p = csv; out->rows && *p && out->nr_rows < MAX_ROWS;) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		struct row *r = &out->rows[out->nr_rows];

		CHECK(parse_row(p, len, r), "%s: bad row '%.*s'", path, (int)len, p);
		CHECK(r->begin <= r->end, "row %d: begin %lld > end %lld", out->nr_rows, r->begin, r->end);
		CHECK(entry_of(out->json, r->idx) != NULL, "row %d: idx %ld not in the JSON",
		      out->nr_rows, r->idx);
		/* The series' previous row ends just before. */
		for (int k = out->nr_rows - 1; k >= 0; k--)
			if (out->rows[k].idx == r->idx) {
				CHECK(r->begin == out->rows[k].end + 1,
				      "idx %ld: begin %lld after end %lld", r->idx, r->begin, out->rows[k].end);
				break;
			}
		out->nr_rows++;
		p += len + (nl ? 1 : 0);
	}
	free(csv);
	return test_failures == fails;
}

/* The idx of the series (type, cgroup[, cpu]), or -1. */
static long find_idx(json_object *arr, const char *type, const char *cgroup, const char *cpu)
{
	for (size_t i = 0; i < json_object_array_length(arr); i++) {
		json_object *e = json_object_array_get_idx(arr, i), *desc, *names, *t, *c, *p, *ji;

		json_object_object_get_ex(e, "desc", &desc);
		json_object_object_get_ex(e, "names", &names);
		json_object_object_get_ex(e, "idx", &ji);
		if (!json_object_object_get_ex(desc, "type", &t) || strcmp(json_object_get_string(t), type))
			continue;
		if (!json_object_object_get_ex(names, "cgroup", &c) ||
		    strcmp(json_object_get_string(c), cgroup))
			continue;
		if (cpu ? !json_object_object_get_ex(names, "cpu", &p) ||
			      strcmp(json_object_get_string(p), cpu) :
			  json_object_object_get_ex(names, "cpu", &p))
			continue;
		return json_object_get_int64(ji);
	}
	return -1;
}

static const char *desc_str(json_object *arr, long idx, const char *key)
{
	json_object *desc, *v;

	if (!json_object_object_get_ex(entry_of(arr, idx), "desc", &desc) ||
	    !json_object_object_get_ex(desc, key, &v))
		return "";
	return json_object_get_string(v);
}

static int rows_of(const struct files *f, long idx, struct row *out, int max)
{
	int n = 0;

	for (int i = 0; i < f->nr_rows; i++)
		if (f->rows[i].idx == idx && n < max)
			out[n++] = f->rows[i];
	return n;
}

static double exp_value_pct(json_object *expected, const char *full)
{
	json_object *e, *v;

	if (!json_object_object_get_ex(expected, full, &e) ||
	    !json_object_object_get_ex(e, "value", &v))
		return NAN;
	return json_object_get_double(v) * 100;
}

static char *make_dir(void)
{
	char tmpl[] = "/tmp/cgtma-test-cdm.XXXXXX";
	char *d = mkdtemp(tmpl);

	return d ? strdup(d) : NULL;
}

/* Removes a directory of make_dir()'s with what it holds, and frees its name. */
static void drop_dir(char *dir)
{
	char cmd[4200];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd))
		printf("# cannot remove %s\n", dir);
	free(dir);
}

/* A check's end: its n intervals freed, its synthetic run closed, its directory dropped. */
static void release(struct interval *iv, int n, struct synth *sy, char *dir)
{
	for (int k = 0; k < n; k++)
		interval_free(&iv[k]);
	synth_close(sy);
	drop_dir(dir);
}

static int emit(struct output *o, const struct run *run, const struct interval *iv)
{
	return o->ops->interval(o, run, iv);
}

/*
 * One interval through a fresh sink in dir, read back into *f: false when the sink did not
 * open (the checks have said why).
 */
static bool write_interval(const char *dir, const struct run *run, struct interval *iv,
			   struct files *f, const char *what)
{
	struct output *o = NULL;

	CHECK_INT(interval_derive(run, iv), 0);
	CHECK_INT(output_cdm_open(dir, &o), 0);
	if (!o)
		return false;
	CHECK_INT(o->ops->begin(o, run), 0);
	CHECK_INT(emit(o, run, iv), 0);
	output_close(o);
	CHECK(read_files(dir, f), "%s", what);
	return true;
}

/*
 * n intervals through a fresh sink in dir, the run's start unknown (the first interval's
 * length gives it), read back into *f: false when the sink did not open.
 */
static bool write_unstarted(const char *dir, struct run *run, struct interval *iv, int n,
			    struct files *f, const char *what)
{
	struct output *o = NULL;

	CHECK_INT(output_cdm_open(dir, &o), 0);
	if (!o)
		return false;
	run->start_time = 0;
	CHECK_INT(o->ops->begin(o, run), 0);
	for (int k = 0; k < n; k++)
		CHECK_INT(emit(o, run, &iv[k]), 0);
	output_close(o);
	CHECK(read_files(dir, f), "%s", what);
	return true;
}

/*
 * A synthetic spr run with perf metrics, and the first spr test vector's counts and expected
 * values (from *all, tests/vectors/spr-perf-metrics.json, for the caller to put, also when
 * false comes back): false when one of them is missing.
 */
static bool spr_open(struct synth *sy, json_object **all, json_object **counts,
		     json_object **expected)
{
	json_object *vec;

	*all = json_object_from_file("tests/vectors/spr-perf-metrics.json");
	vec = *all ? json_object_array_get_idx(*all, 0) : NULL;
	return vec && json_object_object_get_ex(vec, "counts", counts) &&
	       json_object_object_get_ex(vec, "expected", expected) &&
	       synth_open(sy, "spr", 2, true, NULL, 0) == 0;
}

/*
 * The spr tree: four intervals; a cgroup that appears in the second, is not counted in the
 * third and counted again in the fourth; the root next to the system in the fourth.
 */
static void check_nodes(void)
{
	json_object *all = NULL, *counts, *expected;
	struct interval iv[4] = {};
	struct output *o = NULL;
	struct files f = {};
	struct row r[8];
	struct synth sy;
	char *dir = make_dir(), early[4096];
	long long start_ms, end_ms[4];
	long idx, idx_a;

	if (!dir || !spr_open(&sy, &all, &counts, &expected)) {
		CHECK(0, "setup");
		json_object_put(all);
		free(dir);
		return;
	}
	start_ms = llround(sy.run.start_time * 1000);
	for (int i = 0; i < 4; i++) {
		struct scope *s;

		iv[i].interval_s = 1;
		iv[i].time = sy.run.start_time + 1.0 + i + 0.0004 * i;
		end_ms[i] = llround(iv[i].time * 1000);
		CHECK(synth_scope(&sy, &iv[i], SCOPE_SYSTEM, NULL, -1, counts, 1) != NULL, "scope");
		if (i == 0)
			continue;
		s = synth_scope(&sy, &iv[i], SCOPE_CGROUP, "/a \"quoted\"\\x", -1, counts, 2);
		if (s && i == 2)
			for (int k = 0; k < sy.run.nr_events; k++)
				s->sum[k].running = 0;	/* enabled, never on a counter */
		if (i == 3)
			CHECK(synth_scope(&sy, &iv[i], SCOPE_CGROUP, "/", -1, counts, 1) != NULL, "root");
		interval_sort(&iv[i]);
		CHECK_INT(interval_derive(&sy.run, &iv[i]), 0);
	}
	CHECK_INT(interval_derive(&sy.run, &iv[0]), 0);

	CHECK_INT(output_cdm_open(dir, &o), 0);
	if (!o)
		goto out;
	/* No files before counting starts (crucible's start script waits for them)... */
	snprintf(early, sizeof(early), "%s/metric-data-cgtma.json", dir);
	CHECK(access(early, F_OK) != 0, "%s exists before begin", early);
	CHECK_INT(o->ops->begin(o, &sy.run), 0);
	/* ...and valid from then on, before any interval: "[]" and an empty CSV. */
	CHECK(read_files(dir, &f), "empty pair");
	CHECK_INT(json_object_array_length(f.json), 0);
	CHECK_INT(f.nr_rows, 0);
	files_free(&f);
	/* A summary is no interval: it writes only the idle spans (check_idle_spans()). */

	for (int i = 0; i < 4; i++) {
		CHECK_INT(emit(o, &sy.run, &iv[i]), 0);
		CHECK(read_files(dir, &f), "after interval %d", i);
		if (i < 3)
			files_free(&f);
	}
	/* Level 1 and 2 nodes and the default metrics of the system and the cgroup. */
	CHECK_INT(sy.plan->nr_metrics, 3);
	CHECK_INT(json_object_array_length(f.json), 2 * (sy.plan->nr_nodes + 3));
	{
		static const char *const crucible[] = { "frontend-bound", "bad-speculation",
			"backend-bound", "retiring", "memory-bound", "core-bound" };

		for (size_t k = 0; k < sizeof(crucible) / sizeof(crucible[0]); k++)
			CHECK(find_idx(f.json, crucible[k], "/", NULL) >= 0, "no %s", crucible[k]);
		CHECK(find_idx(f.json, "fetch-latency", "/", NULL) >= 0, "no fetch-latency");
		CHECK(find_idx(f.json, "l1-bound", "/", NULL) < 0, "level 3 at -l 2");
	}
	idx = find_idx(f.json, "backend-bound", "/", NULL);
	CHECK_STR(desc_str(f.json, idx, "source"), "cgtma");
	CHECK_STR(desc_str(f.json, idx, "class"), "throughput");
	/* The system: every interval, from just after the run's start, chained; the root once. */
	CHECK_INT(rows_of(&f, idx, r, 8), 4);
	CHECK_INT(r[0].begin, start_ms + 1);
	for (int i = 0; i < 4; i++)
		CHECK_INT(r[i].end, end_ms[i]);
	CHECK_NEAR(r[0].value, exp_value_pct(expected, "Backend_Bound"), 1e-5);
	/* The cgroup: from the second interval's start; none in the third; the fourth's row
	 * covers the third's time too. */
	idx_a = find_idx(f.json, "memory-bound", "/a \"quoted\"\\x", NULL);
	CHECK(idx_a >= 0, "the cgroup's memory-bound");
	CHECK_INT(rows_of(&f, idx_a, r, 8), 2);
	CHECK_INT(r[0].begin, end_ms[0] + 1);
	CHECK_INT(r[0].end, end_ms[1]);
	CHECK_INT(r[1].begin, end_ms[1] + 1);
	CHECK_INT(r[1].end, end_ms[3]);
	CHECK_NEAR(r[1].value, exp_value_pct(expected, "Backend_Bound.Memory_Bound"), 1e-5);
	files_free(&f);
	output_close(o);
out:
	json_object_put(all);
	release(iv, 4, &sy, dir);
}

/* sw's flat metrics per CPU: their units, classes, aggregations; names cgroup and cpu. */
static void check_metrics(void)
{
	struct interval iv = { .interval_s = 2 };
	struct files f = {};
	struct row r[4];
	struct synth sy;
	char *dir = make_dir();
	long idx;

	if (!dir || synth_open(&sy, "sw", 1, false, NULL, 0)) {
		CHECK(0, "setup");
		free(dir);
		return;
	}
	sy.run.per_cpu = true;
	iv.time = sy.run.start_time + 2;
	for (int k = 0; k < 3; k++) {
		struct scope *s = interval_add_scope(&iv, &sy.run, k == 0 ? SCOPE_SYSTEM :
						     k == 1 ? SCOPE_CPU : SCOPE_CGROUP,
						     k == 2 ? "/x" : NULL, k == 0 ? -1 : 0);

		for (int i = 0; s && i < sy.run.nr_events; i++)
			s->sum[i] = (struct cgtma_count){ 1000, 2 * SYNTH_ENABLED, 2 * SYNTH_ENABLED };
		if (s)
			s->sum[synth_event(&sy, "cpu-clock")].counter = 3000000000ULL;
	}
	if (!write_interval(dir, &sy.run, &iv, &f, "sw files"))
		goto out;
	CHECK_INT(json_object_array_length(f.json), 3 * 4);
	idx = find_idx(f.json, "cpu-utilization", "/", "all");
	CHECK(idx >= 0, "system cpu-utilization, cpu all");
	CHECK_STR(desc_str(f.json, idx, "class"), "throughput");
	CHECK_INT(rows_of(&f, idx, r, 4), 1);
	CHECK_NEAR(r[0].value, 1.5, 1e-9);
	CHECK_INT(r[0].begin, llround(sy.run.start_time * 1000) + 1);
	idx = find_idx(f.json, "context-switches", "/", "0");
	CHECK(idx >= 0, "CPU 0's context-switches");
	CHECK_INT(rows_of(&f, idx, r, 4), 1);
	CHECK_NEAR(r[0].value, 500.0, 1e-9);
	CHECK(find_idx(f.json, "page-faults", "/x", "0") >= 0, "the cgroup's page-faults on CPU 0");
	files_free(&f);
out:
	release(&iv, 1, &sy, dir);
}

/*
 * The flat metrics beside a Top-Down tree (a plan made here, its results filled in as
 * tma_compute() would): one type per metric, the metric's name in kebab case (IPC is ipc,
 * CPU_Utilization cpu-utilization, perf's branch_misprediction_rate
 * branch-misprediction-rate), a thread's task-ipc; each series named as its scope's node
 * series are; a metric not counted has no row. Both files byte for byte.
 */
static void check_flat_metrics(void)
{
	static const char *const events[] = { "cycles" };
	static struct plan_node nodes[] = {
		{ .name = "Frontend_Bound", .full_name = "Frontend_Bound", .level = 1,
		  .parent = -1 },
	};
	static struct plan_metric metrics[] = {
		{ .name = "IPC", .unit = "" }, { .name = "CPI", .unit = "" },
		{ .name = "GHz", .unit = "GHz" }, { .name = "CPU_Utilization", .unit = "CPUs" },
		{ .name = "branch_misprediction_rate", .unit = "" },
	};
	static struct plan plan = { .nr_events = 1, .nr_nodes = 1, .nodes = nodes,
				    .nr_metrics = 5, .metrics = metrics };
	/* Per scope: the node's value, then the metrics' (NAN: not counted). */
	static const double values[3][6] = {
		{ 0.25, 1.5, 0.6666666666666666, 2.9, 1.75, 0.0125 },
		{ 0.5, 0.65, 1.5384615384615385, 2.4, 0.5, NAN },
		{ 0.125, 0.27, 3.7037037037037037, 2.35, 0.25, 0.0003 },
	};
	struct run run = { .model = "t", .plan = &plan, .nr_events = 1, .event_names = events,
			   .level = 1, .cgroups = true, .start_time = 1700000000.25 };
	struct interval iv = { .interval_s = 1, .time = 1700000001.25 };
	struct output *o = NULL;
	char *dir = make_dir(), path[4200], *json = NULL, *csv = NULL;
	struct files f = {};

	if (!dir) {
		CHECK(0, "setup");
		return;
	}
	for (int k = 0; k < 3; k++) {
		struct scope *s = k == 2 ? interval_add_task(&iv, &run, "/web.scope", 7, 8) :
			interval_add_scope(&iv, &run, k ? SCOPE_CGROUP : SCOPE_SYSTEM,
					   k ? "/web.scope" : NULL, -1);
		struct tma_result *t = s ? &s->tma : NULL;

		if (!s) {
			CHECK(0, "scope %d", k);
			goto out;
		}
		s->has_tma = s->ran = true;
		CHECK_INT(synth_result(t, &plan), 0);
		s->state[0] = COUNT_OK;
		t->value[0] = values[k][0];
		t->counted[0] = true;
		for (int m = 0; m < 5; m++) {
			t->metric[m] = values[k][1 + m];
			t->metric_counted[m] = !isnan(values[k][1 + m]);
		}
		if (k == 1)
			CHECK_INT(cgroup_names_set(&s->names, "web", NULL, NULL), 0);
		if (k == 2)
			snprintf(s->comm, sizeof(s->comm), "nginx");
	}
	CHECK_INT(output_cdm_open(dir, &o), 0);
	if (!o)
		goto out;
	CHECK_INT(o->ops->begin(o, &run), 0);
	CHECK_INT(emit(o, &run, &iv), 0);
	output_close(o);
	CHECK(read_files(dir, &f), "the pair follows CDM's rules");
	files_free(&f);
	snprintf(path, sizeof(path), "%s/metric-data-cgtma.json", dir);
	json = synth_read_file(path);
	CHECK_STR(json, "[\n"
"{\"idx\":0,\"desc\":{\"source\":\"cgtma\",\"class\":\"throughput\",\"type\":\"frontend-bound\"},"
"\"names\":{\"cgroup\":\"/\",\"container\":\"none\",\"pod\":\"none\"}},\n"
"{\"idx\":1,\"desc\":{\"source\":\"cgtma\",\"class\":\"throughput\",\"type\":\"ipc\"},"
"\"names\":{\"cgroup\":\"/\",\"container\":\"none\",\"pod\":\"none\"}},\n"
"{\"idx\":2,\"desc\":{\"source\":\"cgtma\",\"class\":\"throughput\",\"type\":\"cpi\"},"
"\"names\":{\"cgroup\":\"/\",\"container\":\"none\",\"pod\":\"none\"}},\n"
"{\"idx\":3,\"desc\":{\"source\":\"cgtma\",\"class\":\"throughput\",\"type\":\"ghz\"},"
"\"names\":{\"cgroup\":\"/\",\"container\":\"none\",\"pod\":\"none\"}},\n"
"{\"idx\":4,\"desc\":{\"source\":\"cgtma\",\"class\":\"throughput\",\"type\":\"cpu-utilization\"},"
"\"names\":{\"cgroup\":\"/\",\"container\":\"none\",\"pod\":\"none\"}},\n"
"{\"idx\":5,\"desc\":{\"source\":\"cgtma\",\"class\":\"throughput\","
"\"type\":\"branch-misprediction-rate\"},"
"\"names\":{\"cgroup\":\"/\",\"container\":\"none\",\"pod\":\"none\"}},\n"
"{\"idx\":6,\"desc\":{\"source\":\"cgtma\",\"class\":\"throughput\",\"type\":\"frontend-bound\"},"
"\"names\":{\"cgroup\":\"/web.scope\",\"container\":\"web\",\"pod\":\"none\"}},\n"
"{\"idx\":7,\"desc\":{\"source\":\"cgtma\",\"class\":\"throughput\",\"type\":\"ipc\"},"
"\"names\":{\"cgroup\":\"/web.scope\",\"container\":\"web\",\"pod\":\"none\"}},\n"
"{\"idx\":8,\"desc\":{\"source\":\"cgtma\",\"class\":\"throughput\",\"type\":\"cpi\"},"
"\"names\":{\"cgroup\":\"/web.scope\",\"container\":\"web\",\"pod\":\"none\"}},\n"
"{\"idx\":9,\"desc\":{\"source\":\"cgtma\",\"class\":\"throughput\",\"type\":\"ghz\"},"
"\"names\":{\"cgroup\":\"/web.scope\",\"container\":\"web\",\"pod\":\"none\"}},\n"
"{\"idx\":10,\"desc\":{\"source\":\"cgtma\",\"class\":\"throughput\","
"\"type\":\"cpu-utilization\"},"
"\"names\":{\"cgroup\":\"/web.scope\",\"container\":\"web\",\"pod\":\"none\"}},\n"
"{\"idx\":11,\"desc\":{\"source\":\"cgtma\",\"class\":\"throughput\","
"\"type\":\"task-frontend-bound\"},"
"\"names\":{\"cgroup\":\"/web.scope\",\"pid\":\"7\",\"tid\":\"8\",\"cmd\":\"nginx\"}},\n"
"{\"idx\":12,\"desc\":{\"source\":\"cgtma\",\"class\":\"throughput\",\"type\":\"task-ipc\"},"
"\"names\":{\"cgroup\":\"/web.scope\",\"pid\":\"7\",\"tid\":\"8\",\"cmd\":\"nginx\"}},\n"
"{\"idx\":13,\"desc\":{\"source\":\"cgtma\",\"class\":\"throughput\",\"type\":\"task-cpi\"},"
"\"names\":{\"cgroup\":\"/web.scope\",\"pid\":\"7\",\"tid\":\"8\",\"cmd\":\"nginx\"}},\n"
"{\"idx\":14,\"desc\":{\"source\":\"cgtma\",\"class\":\"throughput\",\"type\":\"task-ghz\"},"
"\"names\":{\"cgroup\":\"/web.scope\",\"pid\":\"7\",\"tid\":\"8\",\"cmd\":\"nginx\"}},\n"
"{\"idx\":15,\"desc\":{\"source\":\"cgtma\",\"class\":\"throughput\","
"\"type\":\"task-cpu-utilization\"},"
"\"names\":{\"cgroup\":\"/web.scope\",\"pid\":\"7\",\"tid\":\"8\",\"cmd\":\"nginx\"}},\n"
"{\"idx\":16,\"desc\":{\"source\":\"cgtma\",\"class\":\"throughput\","
"\"type\":\"task-branch-misprediction-rate\"},"
"\"names\":{\"cgroup\":\"/web.scope\",\"pid\":\"7\",\"tid\":\"8\",\"cmd\":\"nginx\"}}\n"
"]\n");
	snprintf(path, sizeof(path), "%s/metric-data-cgtma.csv", dir);
	csv = synth_read_file(path);
	CHECK_STR(csv, "0,1700000000251,1700000001250,25\n"
		       "1,1700000000251,1700000001250,1.5\n"
		       "2,1700000000251,1700000001250,0.666667\n"
		       "3,1700000000251,1700000001250,2.9\n"
		       "4,1700000000251,1700000001250,1.75\n"
		       "5,1700000000251,1700000001250,0.0125\n"
		       "6,1700000000251,1700000001250,50\n"
		       "7,1700000000251,1700000001250,0.65\n"
		       "8,1700000000251,1700000001250,1.538462\n"
		       "9,1700000000251,1700000001250,2.4\n"
		       "10,1700000000251,1700000001250,0.5\n"
		       "11,1700000000251,1700000001250,12.5\n"
		       "12,1700000000251,1700000001250,0.27\n"
		       "13,1700000000251,1700000001250,3.703704\n"
		       "14,1700000000251,1700000001250,2.35\n"
		       "15,1700000000251,1700000001250,0.25\n"
		       "16,1700000000251,1700000001250,0.0003\n");
out:
	free(json);
	free(csv);
	interval_free(&iv);
	drop_dir(dir);
}

/* -e: events as rates; names made types; a start not given by begin() still chains. */
static void check_events(void)
{
	static const char *const events[] = { "syscalls:sys_enter_getppid", "cpu/event=0x3c/",
					      "never" };
	struct interval iv[2] = { { .interval_s = 0.5 }, { .interval_s = 0.5 } };
	struct files f = {};
	struct row r[4];
	struct synth sy;
	char *dir = make_dir();
	long idx;

	CHECK_INT(synth_open(&sy, NULL, 1, false, events, 3), 0);
	for (int k = 0; k < 2; k++) {
		struct scope *s = interval_add_scope(&iv[k], &sy.run, SCOPE_SYSTEM, NULL, -1);

		iv[k].time = sy.run.start_time + 0.5 * (k + 1);
		if (s) {
			s->sum[0] = (struct cgtma_count){ 100, 10, 10 };
			s->sum[1] = (struct cgtma_count){ 7, 10, 5 };
			s->sum[2] = (struct cgtma_count){ 0, 10, 0 };
		}
		CHECK_INT(interval_derive(&sy.run, &iv[k]), 0);
	}
	if (!write_unstarted(dir, &sy.run, iv, 2, &f, "-e files"))
		goto out;
	CHECK_INT(json_object_array_length(f.json), 2);
	idx = find_idx(f.json, "syscalls-sys-enter-getppid", "/", NULL);
	CHECK(idx >= 0, "getppid series");
	CHECK_INT(rows_of(&f, idx, r, 4), 2);
	CHECK_NEAR(r[0].value, 200.0, 1e-9);
	CHECK_INT(r[0].end - r[0].begin + 1, 500);
	idx = find_idx(f.json, "cpu-event-0x3c", "/", NULL);
	CHECK(idx >= 0, "raw event series");
	CHECK_INT(rows_of(&f, idx, r, 4), 2);
	CHECK_NEAR(r[0].value, 28.0, 1e-9);
	files_free(&f);
out:
	release(iv, 2, &sy, dir);
}

/*
 * Not exact: from the first interval with a slice that began at a missed switch, a
 * "missed-slices" series under the system's names, 0 from the run's start up to it and
 * each interval's count after, and "missed-max-seconds" beside it, the bound of their time;
 * none in a run that had no such interval (check_events: its JSON holds the two event
 * series only). Four intervals of 500 ms; 3 missed slices in the second, 1 in the fourth.
 */
static void check_missed(void)
{
	static const char *const events[] = { "syscalls:sys_enter_getppid" };
	static const __u64 missed[4] = { 0, 3, 0, 1 };
	static const __u64 max_ns[4] = { 0, 2000000, 0, 250000 };
	struct interval iv[4] = {};
	struct output *o = NULL;
	struct files f = {};
	struct row r[8];
	struct synth sy;
	char *dir = make_dir();
	long long start_ms;
	long idx;

	CHECK_INT(synth_open(&sy, NULL, 1, false, events, 1), 0);
	start_ms = llround(sy.run.start_time * 1000);
	for (int k = 0; k < 4; k++) {
		struct scope *s = interval_add_scope(&iv[k], &sy.run, SCOPE_SYSTEM, NULL, -1);

		iv[k].interval_s = 0.5;
		iv[k].time = sy.run.start_time + 0.5 * (k + 1);
		iv[k].missed_slices = missed[k];
		iv[k].missed_max_ns = max_ns[k];
		if (s)
			s->sum[0] = (struct cgtma_count){ 100, 10, 10 };
		CHECK_INT(interval_derive(&sy.run, &iv[k]), 0);
	}
	CHECK_INT(output_cdm_open(dir, &o), 0);
	if (!o)
		goto out;
	CHECK_INT(o->ops->begin(o, &sy.run), 0);
	/* Exact so far: no such series yet. */
	CHECK_INT(emit(o, &sy.run, &iv[0]), 0);
	CHECK(read_files(dir, &f), "exact files");
	CHECK_INT(json_object_array_length(f.json), 1);
	CHECK(find_idx(f.json, "missed-slices", "/", NULL) < 0, "a missed-slices series while exact");
	files_free(&f);
	for (int k = 1; k < 4; k++)
		CHECK_INT(emit(o, &sy.run, &iv[k]), 0);
	output_close(o);
	CHECK(read_files(dir, &f), "not-exact files");
	CHECK_INT(json_object_array_length(f.json), 3);
	idx = find_idx(f.json, "missed-slices", "/", NULL);
	CHECK(idx >= 0, "missed-slices series");
	CHECK_STR(desc_str(f.json, idx, "class"), "throughput");
	/* The whole run, without a gap: exact (0), 3, exact (0), 1. */
	CHECK_INT(rows_of(&f, idx, r, 8), 4);
	CHECK_INT(r[0].begin, start_ms + 1);
	for (int k = 0; k < 4; k++) {
		CHECK_INT(r[k].end, llround(iv[k].time * 1000));
		CHECK_NEAR(r[k].value, (double)missed[k], 0);
	}
	/* Beside it, the most of those slices' time that may be another cgroup's, in seconds. */
	idx = find_idx(f.json, "missed-max-seconds", "/", NULL);
	CHECK(idx >= 0, "missed-max-seconds series");
	CHECK_INT(rows_of(&f, idx, r, 8), 4);
	for (int k = 0; k < 4; k++)
		CHECK_NEAR(r[k].value, max_ns[k] / 1e9, 1e-12);
	files_free(&f);
out:
	release(iv, 4, &sy, dir);
}

/*
 * A cgroup with no row in intervals where it did not run (found by a glob): its event
 * series gets those spans at 0 rate, before its next row and at the run's end; one gone
 * gets none after its last row. Five intervals of 500 ms: /g runs in 0 and 3, /x in 0 and
 * is gone in 2.
 */
static void check_idle_spans(void)
{
	static const char *const events[] = { "syscalls:sys_enter_getppid" };
	static const struct { int k; const char *cg; bool removed; __u64 n; } rows[] = {
		{ 0, "/g", false, 100 }, { 0, "/x", false, 10 }, { 2, "/x", true, 0 },
		{ 3, "/g", false, 50 },
	};
	struct interval iv[5] = {}, total = { .summary = true };
	struct output *o = NULL;
	struct files f = {};
	struct row r[8];
	struct synth sy;
	char *dir = make_dir();
	long idx;
	int n;

	CHECK_INT(synth_open(&sy, NULL, 1, false, events, 1), 0);
	for (int k = 0; k < 5; k++) {
		struct scope *s = interval_add_scope(&iv[k], &sy.run, SCOPE_SYSTEM, NULL, -1);

		iv[k].interval_s = 0.5;
		iv[k].time = sy.run.start_time + 0.5 * (k + 1);
		if (s)
			s->sum[0] = (struct cgtma_count){ 1000, 10, 10 };
		for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
			if (rows[i].k != k)
				continue;
			s = interval_add_scope(&iv[k], &sy.run, SCOPE_CGROUP, rows[i].cg, -1);
			if (!s)
				continue;
			s->removed = rows[i].removed;
			s->sum[0] = (struct cgtma_count){ rows[i].n, rows[i].n ? 10 : 0,
							  rows[i].n ? 10 : 0 };
		}
		interval_sort(&iv[k]);
		CHECK_INT(interval_derive(&sy.run, &iv[k]), 0);
	}
	CHECK_INT(output_cdm_open(dir, &o), 0);
	if (!o)
		goto out;
	CHECK_INT(o->ops->begin(o, &sy.run), 0);
	for (int k = 0; k < 5; k++)
		CHECK_INT(emit(o, &sy.run, &iv[k]), 0);
	CHECK_INT(o->ops->summary(o, &sy.run, &total), 0);
	output_close(o);
	CHECK(read_files(dir, &f), "idle spans");
	idx = find_idx(f.json, "syscalls-sys-enter-getppid", "/g", NULL);
	CHECK(idx >= 0, "/g's series");
	n = rows_of(&f, idx, r, 8);
	CHECK_INT(n, 4);
	if (n == 4) {
		/* 200/s in 0; 0 over 1 and 2, one row; 100/s in 3; 0 in 4, from the summary. */
		CHECK_NEAR(r[0].value, 200.0, 1e-9);
		CHECK_NEAR(r[1].value, 0.0, 1e-9);
		CHECK_INT(r[1].begin, r[0].end + 1);
		CHECK_INT(r[1].end - r[1].begin + 1, 1000);
		CHECK_NEAR(r[2].value, 100.0, 1e-9);
		CHECK_INT(r[2].begin, r[1].end + 1);
		CHECK_INT(r[2].end - r[2].begin + 1, 500);
		CHECK_NEAR(r[3].value, 0.0, 1e-9);
		CHECK_INT(r[3].begin, r[2].end + 1);
		CHECK_INT(r[3].end - r[3].begin + 1, 500);
	}
	idx = find_idx(f.json, "syscalls-sys-enter-getppid", "/x", NULL);
	CHECK(idx >= 0, "/x's series");
	n = rows_of(&f, idx, r, 8);
	/* 20/s in 0, 0 over 1 (the gap), 0 in 2 (its last row): nothing after. */
	CHECK_INT(n, 3);
	if (n == 3) {
		CHECK_NEAR(r[0].value, 20.0, 1e-9);
		CHECK_INT(r[1].end - r[1].begin + 1, 500);
		CHECK_NEAR(r[2].value, 0.0, 1e-9);
		CHECK_INT(r[2].end, r[0].end + 1000);
	}
	files_free(&f);
out:
	release(iv, 5, &sy, dir);
}

/* A series' name under key, or NULL. */
static const char *name_of(json_object *arr, long idx, const char *key)
{
	json_object *names, *v;

	if (!json_object_object_get_ex(entry_of(arr, idx), "names", &names) ||
	    !json_object_object_get_ex(names, key, &v))
		return NULL;
	return json_object_get_string(v);
}

/*
 * With cgroups tracked, every series has "container" and "pod" ("NAMESPACE/NAME"), "none"
 * where the cgroup is no container's or pod's.
 */
static void check_names(void)
{
	static const char *const events[] = { "syscalls:sys_enter_getppid" };
	static const struct {
		const char *cgroup;
		struct cgroup_names n;
		const char *container, *pod;
	} scopes[] = {
		{ NULL, { NULL, NULL, NULL }, "none", "none" },
		{ "/kubepods/podu", { NULL, "frontend", "shop" }, "none", "shop/frontend" },
		{ "/kubepods/podu/abc", { "nginx", "frontend", "shop" }, "nginx", "shop/frontend" },
		{ "/libpod_parent/libpod-1", { "web", NULL, NULL }, "web", "none" },
		{ "/plain", { NULL, NULL, NULL }, "none", "none" },
	};
	struct interval iv = { .interval_s = 0.5 };
	struct files f = {};
	struct synth sy;
	char *dir = make_dir();

	CHECK_INT(synth_open(&sy, NULL, 1, false, events, 1), 0);
	sy.run.cgroups = true;
	iv.time = sy.run.start_time + 0.5;
	for (size_t i = 0; i < sizeof(scopes) / sizeof(scopes[0]); i++) {
		struct scope *s = interval_add_scope(&iv, &sy.run, scopes[i].cgroup ? SCOPE_CGROUP :
						     SCOPE_SYSTEM, scopes[i].cgroup, -1);

		CHECK(s && scope_set_names(s, &scopes[i].n) == 0, "scope");
		if (s)
			s->sum[0] = (struct cgtma_count){ 10 * (i + 1), 10, 10 };
	}
	if (!write_interval(dir, &sy.run, &iv, &f, "names files"))
		goto out;
	for (size_t i = 0; i < sizeof(scopes) / sizeof(scopes[0]); i++) {
		const char *cg = scopes[i].cgroup ? scopes[i].cgroup : "/";
		long idx = find_idx(f.json, "syscalls-sys-enter-getppid", cg, NULL);

		CHECK(idx >= 0, "series of %s", cg);
		if (idx < 0)
			continue;
		CHECK_STR(name_of(f.json, idx, "container"), scopes[i].container);
		CHECK_STR(name_of(f.json, idx, "pod"), scopes[i].pod);
	}
	files_free(&f);
out:
	release(&iv, 1, &sy, dir);
}

/*
 * A thread's series when the thread names itself after its first row (an interval that
 * ended between its start and its prctl): one series, both rows in it, and the name it has
 * now in the JSON, which is written again.
 */
static void check_thread_rename(void)
{
	static const char *const events[] = { "syscalls:sys_enter_getppid" };
	static const char *const comms[] = { "workload", "getppid-1", "getppid-1" };
	struct interval iv[3] = { { .interval_s = 0.5 }, { .interval_s = 0.5 },
				  { .interval_s = 0.5 } };
	struct row rows[4];
	struct output *o = NULL;
	struct files f = {};
	struct synth sy;
	char *dir = make_dir();
	long idx;

	CHECK_INT(synth_open(&sy, NULL, 1, false, events, 1), 0);
	sy.run.cgroups = true;
	for (int k = 0; k < 3; k++) {
		struct scope *s = interval_add_task(&iv[k], &sy.run, "/a", 100, 101);

		CHECK(s != NULL, "task scope");
		if (!s)
			goto out;
		iv[k].time = sy.run.start_time + 0.5 * (k + 1);
		snprintf(s->comm, sizeof(s->comm), "%s", comms[k]);
		s->sum[0] = (struct cgtma_count){ 1000 * (k + 1), 10, 10 };
		CHECK_INT(interval_derive(&sy.run, &iv[k]), 0);
	}
	CHECK_INT(output_cdm_open(dir, &o), 0);
	if (!o)
		goto out;
	CHECK_INT(o->ops->begin(o, &sy.run), 0);
	for (int k = 0; k < 3; k++)
		CHECK_INT(emit(o, &sy.run, &iv[k]), 0);
	output_close(o);
	if (!read_files(dir, &f)) {
		CHECK(false, "rename files");
		goto out;
	}
	idx = find_idx(f.json, "task-syscalls-sys-enter-getppid", "/a", NULL);
	CHECK(idx >= 0, "the thread's series");
	if (idx >= 0) {
		CHECK_STR(name_of(f.json, idx, "cmd"), "getppid-1");
		CHECK_STR(name_of(f.json, idx, "tid"), "101");
		CHECK_INT(rows_of(&f, idx, rows, 4), 3);
	}
	/* One series of the thread's: the rename made no second one. */
	CHECK_INT((int)json_object_array_length(f.json), 1);
	files_free(&f);
out:
	release(iv, 3, &sy, dir);
}

/*
 * --irq: the system, the root cgroup, a cgroup and two interrupt scopes, whole and per CPU.
 * Each its own series, told apart by "cgroup" and "irq": the system {"all", "all"}, the root
 * {"/", "none"}, a cgroup {P, "none"}, an interrupt {"none", NAME}; every series has the same
 * keys, and each says its own rate.
 */
static void check_irq_names(void)
{
	static const char *const events[] = { "syscalls:sys_enter_getppid" };
	static const struct {
		enum scope_kind kind;
		const char *cgroup, *irq;	/* the scope's */
		const char *want_cgroup, *want_irq;
	} scopes[] = {
		{ SCOPE_SYSTEM, NULL, NULL, "all", "all" },
		{ SCOPE_CGROUP, "/", NULL, "/", "none" },
		{ SCOPE_CGROUP, "/a", NULL, "/a", "none" },
		{ SCOPE_IRQ, NULL, "NET_RX", "none", "NET_RX" },
		{ SCOPE_IRQ, NULL, "hardirq", "none", "hardirq" },
	};
	const size_t nr = sizeof(scopes) / sizeof(scopes[0]);
	struct interval iv = { .interval_s = 0.5 };
	struct files f = {};
	struct synth sy;
	char *dir = make_dir();
	const char *type = "syscalls-sys-enter-getppid";

	CHECK_INT(synth_open(&sy, NULL, 1, false, events, 1), 0);
	sy.run.cgroups = true;	/* as --irq sets it */
	sy.run.per_cpu = true;
	iv.time = sy.run.start_time + 0.5;
	for (size_t i = 0; i < nr; i++) {
		/* Whole (-1), then on CPU 0; the system's per-CPU scope is a SCOPE_CPU. */
		for (int cpu = -1; cpu <= 0; cpu++) {
			enum scope_kind k = scopes[i].kind == SCOPE_SYSTEM && cpu >= 0 ? SCOPE_CPU :
					    scopes[i].kind;
			struct scope *s = interval_add_scope(&iv, &sy.run, k, k == SCOPE_IRQ ?
							     scopes[i].irq : scopes[i].cgroup, cpu);

			CHECK(s != NULL, "scope");
			if (!s)
				continue;
			/* 10 * (i + 1) calls whole, i + 1 on CPU 0: rates 20 * (i + 1), 2 * (i + 1). */
			s->sum[0] = (struct cgtma_count){ (cpu < 0 ? 10 : 1) * (i + 1), 10, 10 };
		}
	}
	if (!write_interval(dir, &sy.run, &iv, &f, "irq names files"))
		goto out;
	CHECK_INT(json_object_array_length(f.json), 2 * nr);
	for (size_t i = 0; i < nr; i++) {
		for (int cpu = -1; cpu <= 0; cpu++) {
			long idx = -1;
			struct row r[2];

			/* find_idx() matches the cgroup; the irq picks among those. */
			for (size_t k = 0; k < json_object_array_length(f.json); k++) {
				long j = json_object_get_int64(json_object_object_get(
					json_object_array_get_idx(f.json, k), "idx"));
				const char *c = name_of(f.json, j, "cgroup"), *q = name_of(f.json, j, "irq");
				const char *p = name_of(f.json, j, "cpu");

				if (c && q && p && !strcmp(c, scopes[i].want_cgroup) &&
				    !strcmp(q, scopes[i].want_irq) && !strcmp(p, cpu < 0 ? "all" : "0")) {
					CHECK(idx < 0, "two series of cgroup %s irq %s", c, q);
					idx = j;
				}
			}
			CHECK(idx >= 0, "no series of cgroup %s irq %s cpu %d: %s",
			      scopes[i].want_cgroup, scopes[i].want_irq, cpu,
			      json_object_to_json_string(f.json));
			if (idx < 0)
				continue;
			CHECK_STR(desc_str(f.json, idx, "type"), type);
			/* The same keys as every other series. */
			CHECK_STR(name_of(f.json, idx, "container"), "none");
			CHECK_STR(name_of(f.json, idx, "pod"), "none");
			CHECK_INT(json_object_object_length(json_object_object_get(
					  entry_of(f.json, idx), "names")), 5);
			CHECK_INT(rows_of(&f, idx, r, 2), 1);
			CHECK_NEAR(r[0].value, (cpu < 0 ? 20.0 : 2.0) * (i + 1), 1e-9);
		}
	}
	/* No series is labelled as the old scheme did. */
	CHECK(find_idx(f.json, type, "irq:NET_RX", "all") < 0, "an irq:NET_RX cgroup series");
	files_free(&f);
out:
	release(&iv, 1, &sy, dir);
}

static int count_str(const char *hay, const char *needle)
{
	int n = 0;

	for (const char *p = hay; hay && (p = strstr(p, needle)); p++)
		n++;
	return n;
}

/*
 * A full disk, as a file size limit: writes fail partway; the CSV keeps whole intervals,
 * one error names the file, the sink returns 0 (the run goes on), the end says what was
 * lost, and writing resumes when there is room again.
 */
static void check_full(void)
{
	struct interval iv = { .interval_s = 1 };
	struct output *o = NULL;
	struct files f = {};
	struct capture cap;
	struct rlimit old, lim;
	struct synth sy;
	struct stat st;
	char *dir = make_dir(), *err_text, path[4200];
	off_t one;
	int nr_before;

	if (!dir || synth_open(&sy, "sw", 1, false, NULL, 0)) {
		CHECK(0, "setup");
		free(dir);
		return;
	}
	signal(SIGXFSZ, SIG_IGN);
	snprintf(path, sizeof(path), "%s/metric-data-cgtma.csv", dir);
	{
		struct scope *s = interval_add_scope(&iv, &sy.run, SCOPE_SYSTEM, NULL, -1);

		for (int i = 0; s && i < sy.run.nr_events; i++)
			s->sum[i] = (struct cgtma_count){ 123456789, SYNTH_ENABLED, SYNTH_ENABLED };
	}
	CHECK_INT(interval_derive(&sy.run, &iv), 0);
	CHECK_INT(output_cdm_open(dir, &o), 0);
	if (!o)
		goto out;
	CHECK_INT(o->ops->begin(o, &sy.run), 0);
	iv.time = sy.run.start_time + 1;
	CHECK_INT(emit(o, &sy.run, &iv), 0);
	CHECK_INT(stat(path, &st), 0);
	one = st.st_size;
	CHECK(one > 0, "one interval written");

	/* Room for a bit more than half an interval. */
	getrlimit(RLIMIT_FSIZE, &old);
	lim = old;
	lim.rlim_cur = one + one / 2 + 7;
	CHECK_INT(setrlimit(RLIMIT_FSIZE, &lim), 0);
	capture_begin(&cap, 2);
	for (int k = 2; k <= 4; k++) {
		iv.time = sy.run.start_time + k;
		CHECK_INT(emit(o, &sy.run, &iv), 0);
	}
	err_text = capture_end(&cap);
	CHECK_INT(count_str(err_text, "cannot write"), 1);
	CHECK(strstr(err_text, path) && strstr(err_text, strerror(EFBIG)),
	      "the error names the file and the reason: '%s'", err_text);
	free(err_text);
	CHECK_INT(stat(path, &st), 0);
	CHECK_INT(st.st_size, one);
	CHECK(read_files(dir, &f), "valid while full");
	nr_before = f.nr_rows;
	files_free(&f);

	/*
	 * Room again: the next interval is written, its rows cover the lost time; with one more
	 * (OUTFILE_RESUMED in a row) the file is said to be written again.
	 */
	CHECK_INT(setrlimit(RLIMIT_FSIZE, &old), 0);
	capture_begin(&cap, 2);
	for (int k = 5; k < 5 + OUTFILE_RESUMED; k++) {
		iv.time = sy.run.start_time + k;
		CHECK_INT(emit(o, &sy.run, &iv), 0);
	}
	output_close(o);
	err_text = capture_end(&cap);
	CHECK(strstr(err_text, "written again") != NULL, "resumed: '%s'", err_text);
	CHECK(strstr(err_text, "3 interval(s)") != NULL, "the end says what was lost: '%s'",
	      err_text);
	free(err_text);
	CHECK(read_files(dir, &f), "valid after");
	CHECK_INT(f.nr_rows, (1 + OUTFILE_RESUMED) * nr_before);
	if (f.nr_rows == (1 + OUTFILE_RESUMED) * nr_before) {
		CHECK_INT(f.rows[nr_before].begin, llround((sy.run.start_time + 1) * 1000) + 1);
		CHECK_INT(f.rows[nr_before].end, llround((sy.run.start_time + 5) * 1000));
	}
	files_free(&f);
out:
	signal(SIGXFSZ, SIG_DFL);
	release(&iv, 1, &sy, dir);
}

/* A path that cannot be a directory fails at open, naming it. */
static void check_unwritable(void)
{
	char *dir = make_dir(), file[4200], sub[4300], made[4400];
	struct output *o = NULL;
	struct capture cap;
	char *err_text;
	FILE *f;

	if (!dir) {
		CHECK(0, "setup");
		return;
	}
	snprintf(file, sizeof(file), "%s/plain", dir);
	snprintf(sub, sizeof(sub), "%s/sub", file);
	f = fopen(file, "w");
	if (f)
		fclose(f);
	capture_begin(&cap, 2);
	CHECK_INT(output_cdm_open(sub, &o), -ENOTDIR);
	CHECK_INT(output_cdm_open(file, &o), -ENOTDIR);
	err_text = capture_end(&cap);
	CHECK(strstr(err_text, sub) && strstr(err_text, strerror(ENOTDIR)),
	      "names the path and the reason: '%s'", err_text);
	free(err_text);
	/* A directory that does not exist yet is made, and holds the pair once counting
	 * starts. */
	snprintf(sub, sizeof(sub), "%s/new", dir);
	CHECK_INT(output_cdm_open(sub, &o), 0);
	CHECK(access(sub, W_OK) == 0, "%s made", sub);
	if (o) {
		struct synth sy2;

		CHECK_INT(synth_open(&sy2, "sw", 1, false, NULL, 0), 0);
		CHECK_INT(o->ops->begin(o, &sy2.run), 0);
		synth_close(&sy2);
	}
	output_close(o);
	snprintf(made, sizeof(made), "%s/metric-data-cgtma.json", sub);
	CHECK(access(made, R_OK) == 0, "%s made", made);
	drop_dir(dir);
}

/*
 * Top-Down node series through `cgtma report FILE --cdm DIR`: synthetic spr intervals
 * recorded with the --record sink, replayed by the report command.
 */
static void check_report(void)
{
	json_object *all = NULL, *counts, *expected;
	struct interval iv[3] = {};
	struct output *o = NULL;
	struct files f = {};
	struct capture cap, cap_err;
	struct row r[8];
	struct synth sy;
	char *dir = make_dir(), rec[4200], out[4200], *text;
	char *argv[5] = { "report", rec, "--cdm", out, NULL };
	long idx;

	if (!dir || !spr_open(&sy, &all, &counts, &expected)) {
		CHECK(0, "setup");
		json_object_put(all);
		free(dir);
		return;
	}
	snprintf(rec, sizeof(rec), "%s/run.cgtma", dir);
	snprintf(out, sizeof(out), "%s/cdm", dir);
	for (int i = 0; i < 3; i++) {
		iv[i].interval_s = 1;
		iv[i].time = sy.run.start_time + 1 + i;
		iv[i].summary = i == 2;
		CHECK(synth_scope(&sy, &iv[i], SCOPE_SYSTEM, NULL, -1, counts, 1) != NULL, "scope");
		CHECK(synth_scope(&sy, &iv[i], SCOPE_CGROUP, "/bench", -1, counts, 3) != NULL, "scope");
		CHECK_INT(interval_derive(&sy.run, &iv[i]), 0);
	}
	CHECK_INT(output_record_open(rec, &o), 0);
	if (!o)
		goto out;
	CHECK_INT(o->ops->begin(o, &sy.run), 0);
	for (int i = 0; i < 3; i++)
		CHECK_INT((iv[i].summary ? o->ops->summary : o->ops->interval)(o, &sy.run, &iv[i]), 0);
	output_close(o);

	capture_begin(&cap, 1);
	capture_begin(&cap_err, 2);
	CHECK_INT(cmd_report(4, argv), 0);
	text = capture_end(&cap_err);
	CHECK(!strstr(text, "error") && !strstr(text, "cannot"), "report said: %s", text);
	free(text);
	text = capture_end(&cap);
	free(text);
	CHECK(read_files(out, &f), "report --cdm files");
	CHECK_INT(json_object_array_length(f.json), 2 * (sy.plan->nr_nodes + sy.plan->nr_metrics));
	idx = find_idx(f.json, "core-bound", "/bench", NULL);
	CHECK(idx >= 0, "the cgroup's core-bound");
	CHECK_INT(rows_of(&f, idx, r, 8), 2);
	CHECK_NEAR(r[1].value, exp_value_pct(expected, "Backend_Bound.Core_Bound"), 1e-5);
	CHECK_INT(r[0].begin, llround(sy.run.start_time * 1000) + 1);
	CHECK_INT(r[1].end, llround((sy.run.start_time + 2) * 1000));
	idx = find_idx(f.json, "frontend-bound", "/", NULL);
	CHECK(idx >= 0 && rows_of(&f, idx, r, 8) == 2, "the system's frontend-bound, twice");
	files_free(&f);
out:
	json_object_put(all);
	release(iv, 3, &sy, dir);
}

/*
 * A cgroup's noise: a series per field it has ("run-wait", "preempted", "smt-shared",
 * "throttled"), each interval's value in its unit; an interval where the field is absent
 * writes no row of it (the next row covers that time); a cgroup without noise has none.
 * Two intervals of 500 ms: /a with every field, then its wait alone.
 */
static void check_noise(void)
{
	static const char *const events[] = { "cpu-clock" };
	static const struct {
		const char *type;
		int nr;
		double first, second;
	} want[] = {
		{ "run-wait", 2, 0.5, 1.5 },
		{ "preempted", 1, 35.5, NAN },
		{ "smt-shared", 1, 0.0625, NAN },
		{ "throttled", 1, 0.25, NAN },
	};
	struct interval iv[2] = { { .interval_s = 0.5 }, { .interval_s = 0.5 } };
	struct files f = {};
	struct row r[4];
	struct synth sy;
	char *dir = make_dir();

	CHECK_INT(synth_open(&sy, NULL, 1, false, events, 1), 0);
	sy.run.cgroups = true;
	for (int k = 0; k < 2; k++) {
		iv[k].time = sy.run.start_time + 0.5 * (k + 1);
		for (int i = 0; i < 3; i++) {
			struct scope *s = interval_add_scope(&iv[k], &sy.run,
							     i ? SCOPE_CGROUP : SCOPE_SYSTEM,
							     i == 2 ? "/b" : i ? "/a" : NULL, -1);

			if (s)
				s->sum[0] = (struct cgtma_count){ 100, 10, 10 };
			if (s && i == 1 && !k)
				synth_noise(&s->noise);
			if (s && i == 1 && k)
				s->noise = (struct noise){ .has = NOISE_WAIT, .wait = 1.5 };
		}
		CHECK_INT(interval_derive(&sy.run, &iv[k]), 0);
	}
	if (!write_unstarted(dir, &sy.run, iv, 2, &f, "noise files"))
		goto out;
	/* cpu-clock of the system, /a and /b, and /a's four noise series */
	CHECK_INT(json_object_array_length(f.json), 7);
	for (size_t t = 0; t < sizeof(want) / sizeof(want[0]); t++) {
		long idx = find_idx(f.json, want[t].type, "/a", NULL);
		int n;

		CHECK(idx >= 0, "no %s series of /a", want[t].type);
		CHECK_STR(desc_str(f.json, idx, "class"), "throughput");
		CHECK(find_idx(f.json, want[t].type, "/b", NULL) < 0, "%s of /b", want[t].type);
		n = rows_of(&f, idx, r, 4);
		CHECK_INT(n, want[t].nr);
		if (n >= 1) {
			CHECK_NEAR(r[0].value, want[t].first, 1e-9);
			CHECK_INT(r[0].end - r[0].begin + 1, 500);
		}
		if (n >= 2) {
			CHECK_NEAR(r[1].value, want[t].second, 1e-9);
			CHECK_INT(r[1].begin, r[0].end + 1);
		}
	}
	files_free(&f);
out:
	release(iv, 2, &sy, dir);
}

/*
 * Rows whose wall-clock lengths stray from the counts' span (a late read: 503, 497 and
 * 505 ms for three intervals of 500 ms each): every rate, an event's and a noise field's,
 * is per second of its row, so that rate times row adds up to the counts exactly (the
 * system's 100 + 50 + 77 calls, /a's 0.25 + 0.75 + 0 s of wait), and the first row begins
 * 1 ms after the run's start. Over the counts' span they added up to 227.3 calls.
 */
static void check_rates_add_up(void)
{
	static const char *const events[] = { "syscalls:sys_enter_getppid" };
	static const double wall[3] = { 0.503, 1.000, 1.505 };
	static const __u64 calls[3] = { 100, 50, 77 };
	static const double wait[3] = { 0.25, 0.75, 0 };
	struct interval iv[3] = {};
	struct output *o = NULL;
	struct files f = {};
	struct row r[4];
	struct synth sy;
	char *dir = make_dir();
	double sum = 0;
	long idx;
	int n;

	CHECK_INT(synth_open(&sy, NULL, 1, false, events, 1), 0);
	sy.run.cgroups = true;
	for (int k = 0; k < 3; k++) {
		iv[k].interval_s = 0.5;
		iv[k].time = sy.run.start_time + wall[k];
		for (int i = 0; i < 2; i++) {
			struct scope *s = interval_add_scope(&iv[k], &sy.run,
							     i ? SCOPE_CGROUP : SCOPE_SYSTEM,
							     i ? "/a" : NULL, -1);

			if (s)
				s->sum[0] = (struct cgtma_count){ i ? 1 : calls[k], 10, 10 };
			/* A noise rate covers the counts' span: wait[k] seconds in 0.5 s. */
			if (s && i)
				s->noise = (struct noise){ .has = NOISE_WAIT, .wait = wait[k] / 0.5 };
		}
		CHECK_INT(interval_derive(&sy.run, &iv[k]), 0);
	}
	CHECK_INT(output_cdm_open(dir, &o), 0);
	if (!o)
		goto out;
	CHECK_INT(o->ops->begin(o, &sy.run), 0);
	for (int k = 0; k < 3; k++)
		CHECK_INT(emit(o, &sy.run, &iv[k]), 0);
	output_close(o);
	if (!read_files(dir, &f)) {
		CHECK(0, "rates files");
		goto out;
	}
	idx = find_idx(f.json, "syscalls-sys-enter-getppid", "/", NULL);
	n = idx >= 0 ? rows_of(&f, idx, r, 4) : 0;
	CHECK_INT(n, 3);
	if (n >= 1)
		CHECK_INT(r[0].begin, llround(sy.run.start_time * 1000) + 1);
	for (int k = 0; k < n; k++) {
		long long len = r[k].end - r[k].begin + 1;

		CHECK_INT(len, llround((wall[k] - (k ? wall[k - 1] : 0)) * 1000));
		CHECK_NEAR(r[k].value * len / 1000, (double)calls[k], 1e-3);
		sum += r[k].value * len / 1000;
	}
	CHECK_NEAR(sum, 227.0, 3e-3);
	idx = find_idx(f.json, "run-wait", "/a", NULL);
	n = idx >= 0 ? rows_of(&f, idx, r, 4) : 0;
	CHECK_INT(n, 3);
	for (int k = 0; k < n; k++)
		CHECK_NEAR(r[k].value * (r[k].end - r[k].begin + 1) / 1000, wait[k], 1e-6);
	files_free(&f);
out:
	release(iv, 3, &sy, dir);
}

int main(void)
{
	check_nodes();
	check_metrics();
	check_flat_metrics();
	check_events();
	check_missed();
	check_idle_spans();
	check_names();
	check_thread_rename();
	check_irq_names();
	check_full();
	check_unwritable();
	check_report();
	check_noise();
	check_rates_add_up();
	return test_done("cdm");
}
