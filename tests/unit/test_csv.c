// SPDX-License-Identifier: GPL-2.0
/*
 * -x: toplev's CSV. Synthetic intervals with the spr plan, computed from the vectors'
 * counts, must print what toplev prints for the same counts: the expected lines are built
 * from each vector's expected values, threshold flags and bottleneck (checked against the
 * toplev command line, see tests/vectors) and toplev's format rules (tl_output.py OutputCSV,
 * tl_uval.py): "%.1f" of the percentage, "% Domain" with " <" below threshold, "<==", Stddev
 * "0.0", Multiplex as Python prints perf's percentage, the description on the bottleneck's
 * row only, once per run; then the default metrics' rows (IPC, CPI, GHz) as toplev -m writes
 * its metrics. One vector's lines are also spelled out literally.
 */
#include <errno.h>
#include <stdlib.h>

#include "capture.h"
#include "nodesample.h"
#include "output.h"
#include "synth.h"
#include "test.h"

#define MAX_TEXT (1 << 20)

static int nr_vectors, nr_split_lines;

/* Renders the intervals (the last may be a summary) with a fresh sink. */
static char *render(const char *sep, const struct run *run, struct interval **ivs, int n)
{
	FILE *f = tmpfile();
	struct output *o = NULL;
	char *text;

	if (!f || output_csv_open(f, sep, &o))
		return NULL;
	if (o->ops->begin)
		CHECK_INT(o->ops->begin(o, run), 0);
	for (int i = 0; i < n; i++) {
		int (*fn)(struct output *, const struct run *, const struct interval *) =
			ivs[i]->summary ? o->ops->summary : o->ops->interval;

		CHECK_INT(fn(o, run, ivs[i]), 0);
	}
	output_close(o);
	text = synth_slurp(f);
	fclose(f);
	return text;
}

/* The text's line n (0-based) into buf; false past the end. */
static bool line_at(const char *text, int n, char *buf, size_t len)
{
	const char *p = text, *e;

	for (; n > 0 && p; n--) {
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	if (!p || !*p)
		return false;
	e = strchr(p, '\n');
	if (!e)
		e = p + strlen(p);
	snprintf(buf, len, "%.*s", (int)(e - p), p);
	return true;
}

static int count_lines(const char *text)
{
	int n = 0;

	for (const char *p = text; *p; p++)
		n += *p == '\n';
	return n;
}

/* toplev's unit: "%" and the domain, "Estimated" shortened to "est", " <" when below. */
static void expected_unit(const char *domain, bool below, char *buf, size_t len)
{
	char d[128];
	const char *e = strstr(domain, "Estimated");

	if (e)
		snprintf(d, sizeof(d), "%.*sest%s", (int)(e - domain), domain, e + 9);
	else
		snprintf(d, sizeof(d), "%s", domain);
	snprintf(buf, len, "%% %s%s", d, below ? " <" : "");
}

/* toplev's obj_desc(): up to the first '.', then "..". */
static void expected_desc(const char *desc, char *buf, size_t len)
{
	const char *dot = strchr(desc, '.');

	if (dot)
		snprintf(buf, len, "%.*s..", (int)(dot - desc + 1), desc);
	else
		snprintf(buf, len, "%s", desc);
}

/*
 * A metric's Value: three decimals, more below 0.1 until three significant digits show,
 * trailing zeros dropped as Python prints a float.
 */
static const char *expected_metric(double v, char *buf, size_t len)
{
	int decimals = 3;
	char *end;

	while (decimals < 12 && v != 0 && fabs(v) * pow(10, decimals - 3) < 0.1)
		decimals++;
	snprintf(buf, len, "%.*f", decimals, v);
	end = buf + strlen(buf) - 1;
	while (end[-1] != '.' && *end == '0')
		*end-- = '\0';
	return buf;
}

/*
 * The vector's default metrics (tests/vectors/metrics.py), in the models' order, as rows:
 * their Unit is "Metric" where the metric has none, as toplev writes it.
 */
static int check_metric_rows(const char *text, int line, json_object *vec, const char *ts,
			     const char *file, int idx)
{
	static const char *const names[] = { "IPC", "CPI", "GHz" };
	json_object *metrics, *v;
	char want[256], got[2048], num[64];

	json_object_object_get_ex(vec, "metrics", &metrics);
	for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++, line++) {
		CHECK(json_object_object_get_ex(metrics, names[k], &v), "%s[%d]: no %s", file,
		      idx, names[k]);
		snprintf(want, sizeof(want), "%s,%s,%s,%s,,,0.0,100.0,,", ts, names[k],
			 expected_metric(json_object_get_double(v), num, sizeof(num)),
			 k == 2 ? "GHz" : "Metric");
		CHECK(line_at(text, line, got, sizeof(got)) && !strcmp(got, want),
		      "%s[%d] line %d:\n     got  '%s'\n     want '%s'", file, idx, line, got, want);
	}
	return line;
}

/* The scope's events enabled (and running) for the vector's cpu_s, the GHz's divisor. */
static void set_cpu_s(struct scope *s, int nr_events, json_object *vec)
{
	json_object *v;
	__u64 ns;

	if (!json_object_object_get_ex(vec, "cpu_s", &v))
		return;
	ns = (__u64)llround(json_object_get_double(v) * 1e9);
	for (int i = 0; i < nr_events; i++)
		s->sum[i].enabled = s->sum[i].running = ns;
}

static bool exp_thresh(json_object *expected, const char *full)
{
	json_object *e, *t;

	return json_object_object_get_ex(expected, full, &e) &&
	       json_object_object_get_ex(e, "thresh", &t) && json_object_get_boolean(t);
}

static double exp_value(json_object *expected, const char *full)
{
	json_object *e, *v;

	if (!json_object_object_get_ex(expected, full, &e) ||
	    !json_object_object_get_ex(e, "value", &v))
		return NAN;
	return json_object_get_double(v);
}

/*
 * One vector: an interval ending 1.5 s into the run and the summary, at -l 3, with and
 * without -v. Returns the rendered text (without -v) for more checks, or NULL.
 */
static char *check_vector(const char *file, int idx, json_object *vec, bool verbose)
{
	json_object *counts, *expected, *jbn, *jpm;
	struct interval iv = { .interval_s = 1 }, sum = { .interval_s = 1, .summary = true };
	struct interval *ivs[] = { &iv, &sum };
	const char *bn = NULL;
	char *text = NULL, want[2048], got[2048], unit[160], desc[1024], sample[512];
	bool desc_shown = false;
	struct synth sy;
	int line = 1;

	if (!json_object_object_get_ex(vec, "counts", &counts) ||
	    !json_object_object_get_ex(vec, "expected", &expected))
		return NULL;
	if (json_object_object_get_ex(vec, "bottleneck", &jbn) && jbn)
		bn = json_object_get_string(jbn);
	json_object_object_get_ex(vec, "perf_metrics", &jpm);
	if (synth_open(&sy, "spr", 3, jpm && json_object_get_boolean(jpm), NULL, 0)) {
		CHECK(0, "%s[%d]: no spr plan", file, idx);
		return NULL;
	}
	sy.run.verbose = verbose;
	iv.time = sy.run.start_time + 1.5;
	sum.time = iv.time;
	if (!synth_scope(&sy, &iv, SCOPE_SYSTEM, NULL, -1, counts, 1) ||
	    !synth_scope(&sy, &sum, SCOPE_SYSTEM, NULL, -1, counts, 1)) {
		CHECK(0, "%s[%d]: counts missing or not whole", file, idx);
		goto out;
	}
	set_cpu_s(&iv.scopes[0], sy.run.nr_events, vec);
	set_cpu_s(&sum.scopes[0], sy.run.nr_events, vec);
	CHECK_INT(interval_derive(&sy.run, &iv), 0);
	CHECK_INT(interval_derive(&sy.run, &sum), 0);
	text = render(",", &sy.run, ivs, 2);
	CHECK(text != NULL, "%s[%d]: nothing rendered", file, idx);
	if (!text)
		goto out;
	nr_vectors++;

	CHECK(line_at(text, 0, got, sizeof(got)) &&
	      !strcmp(got, "Timestamp,Area,Value,Unit,Description,Sample,Stddev,Multiplex,Bottleneck,Idle"),
	      "header: '%s'", got);
	for (int pass = 0; pass < 2; pass++) {
		char split[1024] = "";
		int at = 0;

		for (int i = 0; i < sy.plan->nr_nodes; i++) {
			const struct plan_node *n = &sy.plan->nodes[i];
			bool above = exp_thresh(expected, n->full_name);
			bool is_bn = bn && !strcmp(bn, n->full_name);

			if (!above && !verbose)
				continue;
			expected_unit(n->domain, !above, unit, sizeof(unit));
			desc[0] = '\0';
			/* No child printed above threshold; the first time only. */
			if (is_bn && !desc_shown) {
				bool child = false;

				for (int k = 0; k < sy.plan->nr_nodes; k++)
					if (sy.plan->nodes[k].parent == i &&
					    exp_thresh(expected, sy.plan->nodes[k].full_name))
						child = true;
				if (!child) {
					expected_desc(n->desc, desc, sizeof(desc));
					desc_shown = true;
				}
			}
			/* The node's own sample events (test_nodesample checks their form). */
			node_sample_column(sy.plan, i, sample, sizeof(sample));
			snprintf(want, sizeof(want), "%s,%s,%.1f,%s,%s,%s,0.0,100.0,%s,",
				 pass ? "SUMMARY" : "1.5", n->full_name,
				 exp_value(expected, n->full_name) * 100, unit, desc, sample,
				 is_bn ? "<==" : "");
			CHECK(line_at(text, line, got, sizeof(got)), "%s[%d]: line %d missing",
			      file, idx, line);
			CHECK(!strcmp(got, want), "%s[%d]%s line %d:\n     got  '%s'\n     want '%s'",
			      file, idx, verbose ? " -v" : "", line, got, want);
			line++;
			if (n->split)
				at += snprintf(split + at, sizeof(split) - at, "%s%s",
					       at ? ", " : "", n->full_name);
		}
		line = check_metric_rows(text, line, vec, pass ? "SUMMARY" : "1.5", file, idx);
		/* The split nodes printed, after the rows. */
		if (at) {
			snprintf(want, sizeof(want), "# split: %s: %s: computed from events in "
				 "several groups, counted at different times",
				 pass ? "SUMMARY" : "1.5", split);
			CHECK(line_at(text, line, got, sizeof(got)) && !strcmp(got, want),
			      "%s[%d]%s split line %d:\n     got  '%s'\n     want '%s'", file, idx,
			      verbose ? " -v" : "", line, got, want);
			line++;
			nr_split_lines++;
		}
	}
	CHECK(line_at(text, line, got, sizeof(got)) && !strncmp(got, "# cgtma model spr on Test CPU", 29),
	      "%s[%d]: footer: '%s'", file, idx, got);
	CHECK_INT(count_lines(text), line + 1);
	/* Exactly one bottleneck mark per pass when toplev has one, none otherwise. */
	{
		int marks = 0;

		for (const char *p = text; (p = strstr(p, ",<==,")); p++)
			marks++;
		CHECK_INT(marks, bn ? 2 : 0);
	}
out:
	interval_free(&iv);
	interval_free(&sum);
	synth_close(&sy);
	if (verbose) {
		free(text);
		text = NULL;
	}
	return text;
}

static void check_vectors(const char *file)
{
	char path[256];
	json_object *vecs;

	snprintf(path, sizeof(path), "tests/vectors/%s", file);
	vecs = json_object_from_file(path);
	CHECK(vecs && json_object_is_type(vecs, json_type_array), "%s: not readable", path);
	if (!vecs)
		return;
	for (size_t i = 0; i < json_object_array_length(vecs); i++) {
		json_object *vec = json_object_array_get_idx(vecs, i);

		free(check_vector(file, (int)i, vec, false));
		free(check_vector(file, (int)i, vec, true));
	}
	json_object_put(vecs);
}

/*
 * The first spr perf-metrics vector, as toplev -l3 -x, -I prints it, spelled out: the Sample
 * column is each node's `sample` of pmu-tools' spr_server_ratios.py, as toplev names them.
 */
static void check_literal(void)
{
	static const char *const want[] = {
		"Timestamp,Area,Value,Unit,Description,Sample,Stddev,Multiplex,Bottleneck,Idle",
		"1.5,Bad_Speculation,37.1,% Slots,,,0.0,100.0,,",
		"1.5,Bad_Speculation.Branch_Mispredicts,12.8,% Slots,,topdown.br_mispredict_slots,0.0,100.0,,",
		"1.5,Bad_Speculation.Branch_Mispredicts.Other_Mispredicts,19.1,% Slots,,,0.0,100.0,,",
		"1.5,Bad_Speculation.Machine_Clears,24.3,% Slots,,machine_clears.count,0.0,100.0,,",
		"1.5,Backend_Bound,39.9,% Slots,,topdown.backend_bound_slots,0.0,100.0,,",
		"1.5,Backend_Bound.Memory_Bound.L1_Bound,22.8,% Stalls,,mem_load_retired.l1_hit,0.0,100.0,,",
		"1.5,Backend_Bound.Core_Bound,29.5,% Slots,,,0.0,100.0,,",
		"1.5,Backend_Bound.Core_Bound.Serializing_Operation,40.5,% Clocks,"
		"Cycles stalled on serializing instructions (e...,resource_stalls.scoreboard,0.0,100.0,<==,",
		"1.5,Backend_Bound.Core_Bound.Ports_Utilization,16.3,% Clocks,,,0.0,100.0,,",
		"1.5,Retiring.Heavy_Operations.Microcode_Sequencer,53.7,% Slots,,uops_retired.ms,0.0,100.0,,",
		"1.5,IPC,0.65,Metric,,,0.0,100.0,,",
		"1.5,CPI,1.538,Metric,,,0.0,100.0,,",
		"1.5,GHz,1.953,GHz,,,0.0,100.0,,",
		"SUMMARY,Bad_Speculation,37.1,% Slots,,,0.0,100.0,,",
	};
	json_object *vecs = json_object_from_file("tests/vectors/spr-perf-metrics.json");
	char *text, got[2048];

	if (!vecs) {
		CHECK(0, "no spr-perf-metrics.json");
		return;
	}
	text = check_vector("spr-perf-metrics.json", 0, json_object_array_get_idx(vecs, 0), false);
	for (size_t i = 0; text && i < sizeof(want) / sizeof(want[0]); i++) {
		CHECK(line_at(text, (int)i, got, sizeof(got)) && !strcmp(got, want[i]),
		      "line %zu:\n     got  '%s'\n     want '%s'", i, got, want[i]);
	}
	free(text);
	json_object_put(vecs);
}

static json_object *first_vector(const char *file, json_object **all)
{
	char path[256];

	snprintf(path, sizeof(path), "tests/vectors/%s", file);
	*all = json_object_from_file(path);
	return *all ? json_object_array_get_idx(*all, 0) : NULL;
}

/*
 * Per cgroup and per CPU: the CPUs column, the scopes' labels, quoting, idle markers,
 * multiplexing, a scope not counted, and one header, with the CPUs column from the start,
 * in a run with cgroups (-G) whose first interval had the system alone (-G matched nothing
 * yet).
 */
static void check_scopes(void)
{
	json_object *all, *vec = first_vector("spr-perf-metrics.json", &all), *counts;
	struct interval a = { .interval_s = 1 }, b = { .interval_s = 1 };
	struct interval *ivs[] = { &a, &b };
	struct scope *s, *busy, *idle, *half;
	char *text, got[2048];
	struct synth sy;
	int dstall;

	if (!vec || !json_object_object_get_ex(vec, "counts", &counts) ||
	    synth_open(&sy, "spr", 3, true, NULL, 0)) {
		CHECK(0, "no vector or plan");
		json_object_put(all);
		return;
	}
	sy.run.verbose = true;
	sy.run.cgroups = true;
	/* a: the system alone, 2 s in; b: with cgroups and a CPU, 3 s in. */
	a.time = sy.run.start_time + 2;
	b.time = sy.run.start_time + 3;
	CHECK(synth_scope(&sy, &a, SCOPE_SYSTEM, NULL, -1, counts, 1) != NULL, "scope");
	CHECK(synth_scope(&sy, &b, SCOPE_SYSTEM, NULL, -1, counts, 1) != NULL, "scope");
	CHECK(synth_scope(&sy, &b, SCOPE_CPU, NULL, 1, counts, 1) != NULL, "scope");
	busy = synth_scope(&sy, &b, SCOPE_CGROUP, "/busy,one", -1, counts, 1);
	idle = synth_scope(&sy, &b, SCOPE_CGROUP, "/idle", -1, counts, 1);
	half = synth_scope(&sy, &b, SCOPE_CGROUP, "/half", 0, counts, 1);
	s = interval_add_scope(&b, &sy.run, SCOPE_CGROUP, "/notcounted", -1);
	CHECK(busy && idle && half && s, "scopes");
	/* Containers by name: a pod's on its own, podman's on one CPU. */
	{
		const struct cgroup_names pc = { "nginx", "frontend", "shop" },
					  web = { "web", NULL, NULL };
		struct scope *n1 = synth_scope(&sy, &b, SCOPE_CGROUP, "/kubepods/podu/abc", -1,
					       counts, 1);
		struct scope *n2 = synth_scope(&sy, &b, SCOPE_CGROUP, "/libpod_parent/libpod-1", 1,
					       counts, 1);

		/* A thread of the container (-T): named by the container, as its cgroup. */
		struct scope *t = interval_add_task(&b, &sy.run, "/libpod_parent/libpod-1", 42, 43);

		CHECK(n1 && n2 && !scope_set_names(n1, &pc) && !scope_set_names(n2, &web),
		      "named scopes");
		CHECK(t && n2 && !scope_set_names(t, &web), "a named thread");
		if (t && n2) {
			memcpy(t->sum, n2->sum, sy.run.nr_events * sizeof(*t->sum));
			snprintf(t->comm, sizeof(t->comm), "nginx");
		}
	}
	/*
	 * A cgroup made again under its path (a restarted container): each of its rows says
	 * which incarnation it is; a removed cgroup alone keeps its bare label.
	 */
	if (!busy || !idle || !half || !s)
		goto out;
	/* Idle: 1% of the busiest cgroup's cycles. */
	for (int i = 0; i < sy.run.nr_events; i++)
		idle->sum[i].counter /= 100;
	/* ICache_Misses reads ICACHE_DATA.STALLS, which ran half the time. */
	dstall = synth_event(&sy, "ICACHE_DATA.STALLS");
	CHECK(dstall >= 0, "no ICACHE_DATA.STALLS in the plan");
	if (dstall >= 0)
		synth_multiplex(half, dstall, 1.0 / 3);
	/* Enabled, never running: no value, no rows. */
	for (int i = 0; i < sy.run.nr_events; i++)
		s->sum[i].enabled = SYNTH_ENABLED;
	/* Each set before the next is added: adding moves the scopes
	 * (busy, idle, half and s are not used after it). */
	{
		static const struct { const char *path; __u64 id; bool removed; } inc[] = {
			{ "/web", 9, false }, { "/web", 7, true }, { "/gone", 3, true },
		};

		for (size_t i = 0; i < sizeof(inc) / sizeof(inc[0]); i++) {
			struct scope *sc = synth_scope(&sy, &b, SCOPE_CGROUP, inc[i].path, -1,
						       counts, 1);

			CHECK(sc != NULL, "%s", inc[i].path);
			if (!sc)
				goto out;
			sc->cgroup_id = inc[i].id;
			sc->removed = inc[i].removed;
		}
	}
	interval_sort(&b);
	CHECK_INT(interval_derive(&sy.run, &a), 0);
	CHECK_INT(interval_derive(&sy.run, &b), 0);

	text = render(",", &sy.run, ivs, 2);
	CHECK(text != NULL, "nothing rendered");
	if (!text)
		goto out;
	CHECK(line_at(text, 0, got, sizeof(got)) &&
	      !strcmp(got, "Timestamp,CPUs,Area,Value,Unit,Description,Sample,Stddev,Multiplex,Bottleneck,Idle"),
	      "header: '%s'", got);
	CHECK(line_at(text, 1, got, sizeof(got)) && !strncmp(got, "2.0,system,Frontend_Bound,", 26),
	      "first row: '%s'", got);
	/*
	 * -v: every node of the system, its three metrics, the split nodes' line (spr level 3
	 * with perf-metrics has two), then the next interval's rows: no second header.
	 */
	CHECK_INT(sy.plan->nr_metrics, 3);
	CHECK(line_at(text, 1 + sy.plan->nr_nodes, got, sizeof(got)) &&
	      !strcmp(got, "2.0,system,IPC,0.65,Metric,,,0.0,100.0,,"), "IPC row: '%s'", got);
	CHECK(line_at(text, 3 + sy.plan->nr_nodes, got, sizeof(got)) &&
	      !strcmp(got, "2.0,system,GHz,1.953,GHz,,,0.0,100.0,,"), "GHz row: '%s'", got);
	/* every scope kind has the metric rows after its nodes */
	CHECK(strstr(text, "\n3.0,CPU1,GHz,1.953,GHz,") != NULL, "a CPU's GHz");
	CHECK(strstr(text, "\n3.0,/half@CPU0,IPC,") != NULL, "a cgroup per CPU's IPC");
	CHECK(strstr(text, "\n3.0,web:43(nginx),CPI,1.538,Metric,") != NULL, "a thread's CPI");
	CHECK(line_at(text, 4 + sy.plan->nr_nodes, got, sizeof(got)) &&
	      !strcmp(got, "# split: 2.0: Backend_Bound.Memory_Bound.CXL_Mem_Bound, "
		      "Retiring.Light_Operations.Other_Light_Ops: computed from events in several "
		      "groups, counted at different times"), "split line: '%s'", got);
	CHECK(line_at(text, 5 + sy.plan->nr_nodes, got, sizeof(got)) &&
	      !strncmp(got, "3.0,system,Frontend_Bound,", 26), "second interval: '%s'", got);
	CHECK(strstr(text, "\nTimestamp") == NULL, "a second header:\n%s", text);
	CHECK(strstr(text, "\n3.0,system,Frontend_Bound,") != NULL, "system row");
	CHECK(strstr(text, "\n3.0,CPU1,Frontend_Bound,") != NULL, "CPU row");
	CHECK(strstr(text, "\n3.0,\"/busy,one\",Frontend_Bound,") != NULL,
	      "a cgroup with the separator in it is quoted");
	CHECK(strstr(text, "\n3.0,/half@CPU0,Frontend_Bound,") != NULL, "cgroup per CPU");
	CHECK(strstr(text, "\n3.0,shop/frontend/nginx,Frontend_Bound,") != NULL,
	      "a pod's container by name");
	CHECK(strstr(text, "\n3.0,web@CPU1,Frontend_Bound,") != NULL, "a container per CPU");
	CHECK(strstr(text, "\n3.0,web:43(nginx),Frontend_Bound,") != NULL,
	      "a container's thread by the container's name");
	CHECK(strstr(text, "libpod") == NULL && strstr(text, "kubepods") == NULL,
	      "a container's path in the CPUs column");
	CHECK(strstr(text, "/notcounted") == NULL, "a scope not counted has no rows");
	{
		const char *old = strstr(text, "\n3.0,/web (removed id 7),Frontend_Bound,");
		const char *live = strstr(text, "\n3.0,/web (id 9),Frontend_Bound,");

		CHECK(old && live && old < live, "a restarted cgroup's two rows:\n%s", text);
		CHECK(strstr(text, "\n3.0,/gone,Frontend_Bound,") != NULL,
		      "a removed cgroup alone has its bare label");
	}
	/* Idle marks: the idle cgroup only (2 cgroup scopes; the per-CPU one is its own kind). */
	CHECK(strstr(text, "\n3.0,/idle,Frontend_Bound,") != NULL, "idle cgroup row");
	{
		char *p = strstr(text, "\n3.0,/idle,Frontend_Bound,");
		char *q = strstr(text, "\n3.0,\"/busy,one\",Frontend_Bound,");
		char *r = strstr(text, "\n3.0,system,Frontend_Bound,");

		CHECK(p && line_at(p + 1, 0, got, sizeof(got)) && got[strlen(got) - 1] == 'Y',
		      "idle mark: '%s'", got);
		CHECK(q && line_at(q + 1, 0, got, sizeof(got)) && got[strlen(got) - 1] == ',',
		      "busy: '%s'", got);
		CHECK(r && line_at(r + 1, 0, got, sizeof(got)) && got[strlen(got) - 1] == ',',
		      "system: '%s'", got);
	}
	/* Multiplex per node: ICache_Misses ran a third of the time, ITLB_Misses all of it. */
	{
		char *p = strstr(text, "\n3.0,/half@CPU0,Frontend_Bound.Fetch_Latency.ICache_Misses,");
		char *q = strstr(text, "\n3.0,/half@CPU0,Frontend_Bound.Fetch_Latency.ITLB_Misses,");

		CHECK(p && line_at(p + 1, 0, got, sizeof(got)) && strstr(got, ",0.0,33.33,"),
		      "multiplex 33.33: '%s'", p ? got : "(no row)");
		CHECK(q && line_at(q + 1, 0, got, sizeof(got)) && strstr(got, ",0.0,100.0,"),
		      "multiplex 100.0: '%s'", q ? got : "(no row)");
	}
	free(text);

	/* Another separator: the comma in the path needs no quotes any more. */
	text = render(";", &sy.run, ivs, 2);
	CHECK(text && strstr(text, "\n3.0;/busy,one;Frontend_Bound;"), "';' separator");
	CHECK(text && strstr(text, "Timestamp;CPUs;Area;Value;Unit;"), "';' header");
	free(text);
out:
	interval_free(&a);
	interval_free(&b);
	synth_close(&sy);
	json_object_put(all);
}

/*
 * The system's scope of a 2 s interval of sw: cpu_clock ns of CPU time, 2001 switches, no
 * migration, 400 page faults counted a quarter of the time.
 */
static void sw_interval(struct synth *sy, struct interval *iv, __u64 cpu_clock)
{
	struct scope *s;

	*iv = (struct interval){ .interval_s = 2, .time = sy->run.start_time + 0.375 };
	s = interval_add_scope(iv, &sy->run, SCOPE_SYSTEM, NULL, -1);
	if (!s)
		return;
	for (int i = 0; i < sy->run.nr_events; i++) {
		s->sum[i].enabled = s->sum[i].running = 2 * SYNTH_ENABLED;
		s->sum[i].counter = 0;
	}
	s->sum[synth_event(sy, "cpu-clock")].counter = cpu_clock;
	s->sum[synth_event(sy, "context-switches")].counter = 2001;
	s->sum[synth_event(sy, "page-faults")].counter = 400;
	s->sum[synth_event(sy, "page-faults")].running = SYNTH_ENABLED / 2;
	CHECK_INT(interval_derive(&sy->run, iv), 0);
}

/*
 * Flat metrics (sw) and plain events (-e): one row each, their unit, and zeros too: a
 * scope's rows are the same every interval. A metric with three decimals, more when small.
 */
static void check_flat(void)
{
	static const char *const events[] = { "cpu-clock", "context-switches", "weird,\"ev\"" };
	struct interval iv;
	struct interval *ivs[] = { &iv };
	struct synth sy;
	struct scope *s;
	char *text;

	CHECK_INT(synth_open(&sy, "sw", 1, false, NULL, 0), 0);
	sw_interval(&sy, &iv, 776000000);	/* 0.388 CPUs */
	text = render(",", &sy.run, ivs, 1);
	CHECK(text && !strcmp(text,
		"Timestamp,Area,Value,Unit,Description,Sample,Stddev,Multiplex,Bottleneck,Idle\n"
		"0.375,CPU_Utilization,0.388,CPUs,,,0.0,100.0,,\n"
		"0.375,Context_Switches,1000.5,/s,,,0.0,100.0,,\n"
		"0.375,CPU_Migrations,0.0,/s,,,0.0,100.0,,\n"
		"0.375,Page_Faults,800.0,/s,,,0.0,25.0,,\n"),
	      "sw rows:\n%s", text ? text : "(null)");
	free(text);
	interval_free(&iv);
	sw_interval(&sy, &iv, 776000);		/* 0.000388 CPUs: three digits still */
	text = render(",", &sy.run, ivs, 1);
	CHECK(text && strstr(text, "\n0.375,CPU_Utilization,0.000388,CPUs,"),
	      "a small metric:\n%s", text ? text : "(null)");
	free(text);
	interval_free(&iv);
	sw_interval(&sy, &iv, 3000000000ULL);	/* 1.5 CPUs */
	/* Not exact: a comment line after the rows, which toplev's readers skip. */
	iv.missed_slices = 3;
	iv.missed_max_ns = 1250000;
	iv.missed_unbounded = 1;
	text = render(",", &sy.run, ivs, 1);
	CHECK(text && strstr(text, ",0.0,25.0,,\n# not exact: 0.375: 2 slices began with a "
			     "switch or move the hook did not see: at most 1.250 ms of their time "
			     "may be another cgroup's; 1 with no bound (switches at which the kernel "
			     "skipped the perf-event hook, failed readings of the counters, "
			     "interrupts during an update, or marks of a record that kept no "
			     "bound)\n"),
	      "not exact:\n%s", text ? text : "(null)");
	free(text);
	iv.missed_slices = iv.missed_max_ns = iv.missed_unbounded = 0;
	/* -A: the CPUs column from the start, though this interval has the system alone. */
	sy.run.per_cpu = true;
	text = render(",", &sy.run, ivs, 1);
	{
		static const char want[] = "Timestamp,CPUs,Area,Value,Unit,Description,Sample,"
					   "Stddev,Multiplex,Bottleneck,Idle\n"
					   "0.375,system,CPU_Utilization,1.5,CPUs,";

		CHECK(text && !strncmp(text, want, sizeof(want) - 1), "-A:\n%s",
		      text ? text : "(null)");
	}
	free(text);
	interval_free(&iv);
	synth_close(&sy);

	CHECK_INT(synth_open(&sy, NULL, 1, false, events, 3), 0);
	iv = (struct interval){ .interval_s = 1, .time = sy.run.start_time + 1 };
	s = interval_add_scope(&iv, &sy.run, SCOPE_SYSTEM, NULL, -1);
	if (s) {
		s->sum[0] = (struct cgtma_count){ 5, 10, 5 };
		s->sum[1] = (struct cgtma_count){ 0, 10, 10 };
		s->sum[2] = (struct cgtma_count){ 7, 10, 10 };
	}
	CHECK_INT(interval_derive(&sy.run, &iv), 0);
	text = render(",", &sy.run, ivs, 1);
	CHECK(text && !strcmp(text,
		"Timestamp,Area,Value,Unit,Description,Sample,Stddev,Multiplex,Bottleneck,Idle\n"
		"1.0,cpu-clock,10.0,Count,,,0.0,50.0,,\n"
		"1.0,context-switches,0.0,Count,,,0.0,100.0,,\n"
		"1.0,\"weird,\"\"ev\"\"\",7.0,Count,,,0.0,100.0,,\n"),
	      "-e rows:\n%s", text ? text : "(null)");
	free(text);
	interval_free(&iv);
	synth_close(&sy);

	{
		struct output *o = NULL;
		struct capture cap;
		char *err;

		capture_begin(&cap, 2);
		CHECK_INT(output_csv_open(stdout, "", &o), -EINVAL);
		err = capture_end(&cap);
		CHECK(err && strstr(err, "-x: the separator is empty"), "message: %s", err);
		free(err);
	}
}

/*
 * A cgroup's noise: its rows after its events', every field and both antagonists (the
 * first a container's), in the order the top of output_csv.c lists them; none on the
 * cgroup's row on one CPU, nor where the cgroup has none. Byte for byte.
 */
static void check_noise(void)
{
	static const char *const events[] = { "cpu-clock" };
	static const char want[] =
		"Timestamp,CPUs,Area,Value,Unit,Description,Sample,Stddev,Multiplex,Bottleneck,Idle\n"
		"1.0,system,cpu-clock,10.0,Count,,,0.0,100.0,,\n"
		"1.0,/a,cpu-clock,10.0,Count,,,0.0,100.0,,\n"
		"1.0,/a,Noise.wait,0.5,s/s,,,0.0,,,\n"
		"1.0,/a,Noise.throttled,0.25,s/s,,,0.0,,,\n"
		"1.0,/a,Noise.nr_throttled,12.0,times,,,0.0,,,\n"
		"1.0,/a,Noise.pressure_some,56.2,%,,,0.0,,,\n"
		"1.0,/a,Noise.pressure_full,12.5,%,,,0.0,,,\n"
		"1.0,/a,Noise.preempted,35.5,/s,,,0.0,,,\n"
		"1.0,/a,Noise.smt_shared,0.0625,s/s,,,0.0,,,\n"
		"1.0,/a,Noise.antagonist1.preempt,20.25,/s,/kubepods/pod1/abc (container web),,0.0,,,\n"
		"1.0,/a,Noise.antagonist1.took,0.375,s/s,/kubepods/pod1/abc (container web),,0.0,,,\n"
		"1.0,/a,Noise.antagonist1.smt,0.0312,s/s,/kubepods/pod1/abc (container web),,0.0,,,\n"
		"1.0,/a,Noise.antagonist2.preempt,3.5,/s,/batch,,0.0,,,\n"
		"1.0,/a,Noise.antagonist2.took,0.0469,s/s,/batch,,0.0,,,\n"
		"1.0,/a,Noise.antagonist2.smt,0.0156,s/s,/batch,,0.0,,,\n"
		"1.0,/a@CPU1,cpu-clock,10.0,Count,,,0.0,100.0,,\n"
		"1.0,/b,cpu-clock,10.0,Count,,,0.0,100.0,,\n";
	struct interval iv = { .interval_s = 1 }, *ivs[] = { &iv };
	struct synth sy;
	char *text;

	CHECK_INT(synth_open(&sy, NULL, 1, false, events, 1), 0);
	sy.run.cgroups = true;
	iv.time = sy.run.start_time + 1;
	for (int k = 0; k < 4; k++) {
		struct scope *s = interval_add_scope(&iv, &sy.run, k ? SCOPE_CGROUP : SCOPE_SYSTEM,
						     k == 3 ? "/b" : k ? "/a" : NULL,
						     k == 2 ? 1 : -1);

		if (!s)
			continue;
		s->sum[0] = (struct cgtma_count){ 10, 10, 10 };
		/* the per-CPU row's noise is never shown: the cgroup's is over all CPUs */
		if (k == 1 || k == 2)
			synth_noise(&s->noise);
	}
	CHECK_INT(iv.nr_scopes, 4);
	CHECK_INT(interval_derive(&sy.run, &iv), 0);
	text = render(",", &sy.run, ivs, 1);
	CHECK(text && !strcmp(text, want), "got:\n%s\nwant:\n%s", text ? text : "(null)", want);
	free(text);
	interval_free(&iv);
	synth_close(&sy);
}

int main(void)
{
	check_vectors("spr-perf-metrics.json");
	check_vectors("spr-generic.json");
	check_vectors("spr-zeros.json");
	CHECK(nr_vectors >= 4, "only %d vectors rendered", nr_vectors);
	/* Some vectors print a split node, some not (below its threshold, without -v). */
	CHECK(nr_split_lines > 0 && nr_split_lines < 4 * nr_vectors, "%d split lines",
	      nr_split_lines);
	printf("# %d vectors rendered, %d split lines\n", nr_vectors, nr_split_lines);
	check_literal();
	check_scopes();
	check_flat();
	check_noise();
	return test_done("csv");
}
