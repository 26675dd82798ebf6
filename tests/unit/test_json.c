// SPDX-License-Identifier: GPL-2.0
/*
 * --json: the sink writes its lines by hand, so json-c reads them back here. Cgroup paths
 * with every character a directory name can hold (quotes, backslashes, control characters,
 * UTF-8) round-trip; counts that are not counted or scale past an int64 are null or clamped;
 * multiplexing of an idle scope is null; doubles keep every digit; the keys and their order
 * are the documented ones (a container's and pod's names after the cgroup); one line per
 * interval, the summary marked.
 */
#include <stdint.h>
#include <stdlib.h>

#include "output.h"
#include "synth.h"
#include "test.h"

static const char *const events[] = { "cpu-clock", "context-switches", "ev\"il\\name" };
static const char weird[] = "/a \"quoted\" \\ back\tslash\n\x01\x1f/\xc3\xa9t\xc3\xa9";

static char *render(const struct run *run, struct interval **ivs, int n)
{
	FILE *f = tmpfile();
	struct output *o = NULL;
	char *text;

	if (!f || output_json_open(f, &o))
		return NULL;
	for (int i = 0; i < n; i++)
		CHECK_INT((ivs[i]->summary ? o->ops->summary : o->ops->interval)(o, run, ivs[i]), 0);
	output_close(o);
	text = synth_slurp(f);
	fclose(f);
	return text;
}

static json_object *row_at(json_object *line, int i)
{
	json_object *rows;

	if (!json_object_object_get_ex(line, "rows", &rows))
		return NULL;
	return json_object_array_get_idx(rows, i);
}

static json_object *get(json_object *o, const char *k1, const char *k2)
{
	json_object *v = NULL;

	if (!o || !json_object_object_get_ex(o, k1, &v))
		return NULL;
	if (k2 && !json_object_object_get_ex(v, k2, &v))
		return NULL;
	return v;
}

/* The keys of o, comma-separated, in order. */
static void keys_of(json_object *o, char *buf, size_t len)
{
	size_t at = 0;

	buf[0] = '\0';
	json_object_object_foreach(o, k, v) {
		(void)v;
		at += snprintf(buf + at, at < len ? len - at : 0, "%s%s", at ? "," : "", k);
	}
}

/*
 * "split_nodes": the nodes whose events are in several groups, after "bottleneck", only when
 * the plan has any (spr level 3 with perf-metrics: two; level 2: none, no key); each event
 * once in "counts" though the plan counts some in several groups.
 */
static void check_split_nodes(int level, int want)
{
	json_object *vectors = json_object_from_file("tests/vectors/spr-perf-metrics.json");
	json_object *counts = NULL, *line = NULL, *split;
	struct interval iv = { .interval_s = 1 }, *ivs[1] = { &iv };
	struct synth sy;
	char *text;
	int n = 0;

	if (vectors)
		json_object_object_get_ex(json_object_array_get_idx(vectors, 0), "counts", &counts);
	CHECK_INT(synth_open(&sy, "spr", level, true, NULL, 0), 0);
	iv.time = sy.run.start_time + 1;
	CHECK(synth_scope(&sy, &iv, SCOPE_SYSTEM, NULL, -1, counts, 1) != NULL, "scope");
	CHECK_INT(interval_derive(&sy.run, &iv), 0);
	text = render(&sy.run, ivs, 1);
	if (text)
		line = json_tokener_parse(text);
	CHECK(line != NULL, "%s", text);
	split = get(row_at(line, 0), "split_nodes", NULL);
	CHECK((split != NULL) == (want > 0), "l%d: split_nodes %s", level, text);
	for (int i = 0; i < sy.plan->nr_nodes; i++) {
		if (!sy.plan->nodes[i].split)
			continue;
		CHECK(split && n < (int)json_object_array_length(split) &&
		      !strcmp(json_object_get_string(json_object_array_get_idx(split, n)),
			      sy.plan->nodes[i].full_name), "l%d: %s", level,
		      sy.plan->nodes[i].full_name);
		n++;
	}
	CHECK_INT(n, want);
	for (int i = 0; i < sy.plan->nr_events; i++)
		n += sy.plan->events[i].duplicate;
	CHECK(level < 3 || n > want, "l%d: no event counted twice", level);
	CHECK_INT(json_object_object_length(get(row_at(line, 0), "counts", NULL)),
		  sy.plan->nr_events - (n - want));
	json_object_put(line);
	free(text);
	interval_free(&iv);
	synth_close(&sy);
	json_object_put(vectors);
}

/*
 * "metrics": {"IPC": F, "CPI": F, "GHz": F} on the row of every kind of scope, GHz over its
 * own busy time (a cgroup and its thread ran half the second, an interrupt scope a quarter),
 * null where its events were not counted; the last key of the row.
 */
static void check_metrics(void)
{
	static const struct {
		enum scope_kind kind;
		const char *name;
		int cpu;
		__u64 ns;
		const char *want;
	} scopes[] = {
		{ SCOPE_SYSTEM, NULL, -1, 1000000000, "{\"IPC\":0.64999999992319035,"
		  "\"CPI\":1.5384615386433365,\"GHz\":1.952880331}}" },
		{ SCOPE_CPU, NULL, 3, 1000000000, "\"GHz\":1.952880331}}" },
		{ SCOPE_CGROUP, "/a", -1, 500000000, "\"GHz\":3.905760662}}" },
		{ SCOPE_CGROUP, "/a", 1, 0, "{\"IPC\":null,\"CPI\":null,\"GHz\":null}}" },
		{ SCOPE_TASK, "/a", -1, 500000000, "\"GHz\":3.905760662}}" },
		{ SCOPE_IRQ, "NET_RX", -1, 250000000, "\"GHz\":7.8115213240000001}}" },
	};
	json_object *vectors = json_object_from_file("tests/vectors/spr-perf-metrics.json");
	json_object *counts = NULL;
	struct interval iv = { .interval_s = 1 }, *ivs[1] = { &iv };
	struct synth sy;
	char *text, *row;

	if (vectors)
		json_object_object_get_ex(json_object_array_get_idx(vectors, 0), "counts", &counts);
	CHECK_INT(synth_open(&sy, "spr", 1, true, NULL, 0), 0);
	iv.time = sy.run.start_time + 1;
	for (size_t k = 0; counts && k < sizeof(scopes) / sizeof(scopes[0]); k++) {
		struct scope *s = scopes[k].kind == SCOPE_TASK ?
			interval_add_task(&iv, &sy.run, scopes[k].name, 5, 5) :
			interval_add_scope(&iv, &sy.run, scopes[k].kind, scopes[k].name,
					   scopes[k].cpu);

		for (int i = 0; s && i < sy.run.nr_events; i++) {
			json_object *v;

			json_object_object_get_ex(counts, sy.run.event_names[i], &v);
			/* never running where never enabled: the scope did not run */
			s->sum[i] = (struct cgtma_count){ (__u64)json_object_get_double(v),
							  scopes[k].ns, scopes[k].ns };
		}
	}
	CHECK_INT(interval_derive(&sy.run, &iv), 0);
	text = render(&sy.run, ivs, 1);
	CHECK(text != NULL, "render");
	/* rows in the order added: each one's metrics, then the row's end */
	row = text;
	for (size_t k = 0; text && k < sizeof(scopes) / sizeof(scopes[0]); k++) {
		char *m = strstr(row, ",\"metrics\":");
		char *want = m ? strstr(m, scopes[k].want) : NULL;
		char *next = m ? strstr(m, "{\"scope\":") : NULL;

		CHECK(want && (!next || want < next), "row %zu: no '%s' in %s", k,
		      scopes[k].want, m ? m : text);
		row = m ? m + 1 : row;
	}
	free(text);
	interval_free(&iv);
	synth_close(&sy);
	json_object_put(vectors);
}

/*
 * A damaged record's time, far past what a clock reads (the fuzzer's 1e250): no decimals
 * fit a line, and it is written whole as %g writes it, still JSON.
 */
static void check_huge_seconds(struct synth *sy)
{
	struct interval big = { .time = 1e250, .interval_s = -1e300 };
	struct interval *ivs[] = { &big };
	json_object *line;
	char *text;

	CHECK(interval_add_scope(&big, &sy->run, SCOPE_SYSTEM, NULL, -1) != NULL, "scope");
	interval_derive(&sy->run, &big);
	text = render(&sy->run, ivs, 1);
	line = text ? json_tokener_parse(text) : NULL;
	CHECK(line != NULL, "huge seconds: not JSON: %s", text ? text : "");
	if (line) {
		CHECK(json_object_get_double(get(line, "time", NULL)) == 1e250, "time 1e250");
		CHECK(json_object_get_double(get(line, "interval", NULL)) == -1e300, "interval");
		json_object_put(line);
	}
	free(text);
	interval_free(&big);
}

/*
 * "noise": every field of struct noise where its bit is set, in the documented order, the
 * antagonists as an array (a container's name only where it has one); a cgroup whose kernel
 * gave only its wait has no other key, and no "antagonists".
 */
static void check_noise(struct synth *sy)
{
	struct interval iv = { .time = 1700000001, .interval_s = 1 }, *ivs[] = { &iv };
	struct scope *full = interval_add_scope(&iv, &sy->run, SCOPE_CGROUP, "/a", -1);
	struct scope *wait = interval_add_scope(&iv, &sy->run, SCOPE_CGROUP, "/b", -1);
	json_object *line;
	char *text, *at;

	CHECK(full && wait, "cannot add scopes");
	if (!full || !wait)
		return;
	synth_noise(&full->noise);
	wait->noise = (struct noise){ .has = NOISE_WAIT, .wait = 1.5 };
	interval_derive(&sy->run, &iv);
	text = render(&sy->run, ivs, 1);
	line = text ? json_tokener_parse(text) : NULL;
	CHECK(line != NULL, "not JSON: %s", text ? text : "");
	json_object_put(line);
	at = text ? strstr(text, "\"cgroup\":\"/a\"") : NULL;
	CHECK(at && strstr(at, ",\"noise\":{\"wait\":0.5,\"throttled\":0.25,\"nr_throttled\":12,"
			   "\"pressure_some\":0.5625,\"pressure_full\":0.125,\"preempted\":35.5,"
			   "\"smt_shared\":0.0625,\"antagonists\":[{\"cgroup\":\"/kubepods/pod1/abc\","
			   "\"container\":\"web\",\"preempt\":20.25,\"took\":0.375,\"smt\":0.03125},"
			   "{\"cgroup\":\"/batch\",\"preempt\":3.5,\"took\":0.046875,"
			   "\"smt\":0.015625}]}}"), "full noise: %s", text ? text : "");
	at = text ? strstr(text, "\"cgroup\":\"/b\"") : NULL;
	CHECK(at && strstr(at, ",\"noise\":{\"wait\":1.5}}"), "wait only: %s", text ? text : "");
	/* Antagonists without the switch hook's figures say nothing: no key, as in a record. */
	free(text);
	wait->noise.nr_antagonists = 1;
	snprintf(wait->noise.antagonists[0].cgroup, sizeof(wait->noise.antagonists[0].cgroup),
		 "/x");
	text = render(&sy->run, ivs, 1);
	at = text ? strstr(text, "\"cgroup\":\"/b\"") : NULL;
	CHECK(at && strstr(at, ",\"noise\":{\"wait\":1.5}}"), "antagonists without figures: %s",
	      text ? text : "");
	/* The switch hook without SMT siblings: preemptions and what antagonists took. */
	full->noise.has = NOISE_PREEMPTED;
	free(text);
	text = render(&sy->run, ivs, 1);
	at = text ? strstr(text, "\"cgroup\":\"/a\"") : NULL;
	CHECK(at && strstr(at, ",\"noise\":{\"preempted\":35.5,\"antagonists\":[{\"cgroup\":"
			   "\"/kubepods/pod1/abc\",\"container\":\"web\",\"preempt\":20.25,"
			   "\"took\":0.375},{\"cgroup\":\"/batch\",\"preempt\":3.5,"
			   "\"took\":0.046875}]}}"), "preempted only: %s", text ? text : "");
	free(text);
	interval_free(&iv);
}

int main(void)
{
	struct synth sy;
	struct interval iv = { .time = 1764756000.123456789, .interval_s = 0.199978311 };
	/* The summary holds slices begun by switches or moves the hook did not see: not exact. */
	struct interval total = { .time = 1700000002.5, .interval_s = 2, .summary = true,
				  .missed_slices = 3, .missed_max_ns = 2500000,
				  .missed_unbounded = 1 };
	/*
	 * Its marks as a live interval lists them: a switch missed, runs skipped, and interrupts
	 * that came during an update.
	 */
	struct mark marks[3] = {
		{ .cpu = 1, .m = { .kind = CGTMA_MISS_SWITCH, .count = 1, .ran_cgroup = 1,
				   .charged_cgroup = 7, .slice_ns = 4000000, .max_ns = 2500000,
				   .unseen_ns = 2400000, .pid = 75, .charged_pid = 1234,
				   .comm = "tokio-rt-worker" },
		  .ran = "/", .charged = "/b" },
		{ .cpu = 0, .m = { .kind = CGTMA_MISS_SKIPPED, .count = 1,
				   .unseen_ns = ~0ULL, .max_ns = ~0ULL } },
		{ .cpu = 1, .m = { .kind = CGTMA_MISS_IRQ, .count = 2,
				   .unseen_ns = ~0ULL, .max_ns = ~0ULL } },
	};
	struct interval *ivs[] = { &iv, &total };
	struct scope *sys, *cg, *idle, *task;
	json_object *line, *row;
	char *text, *nl, keys[256];

	total.marks = marks;
	total.nr_marks = 3;
	CHECK_INT(synth_open(&sy, NULL, 1, false, events, 3), 0);
	sys = interval_add_scope(&iv, &sy.run, SCOPE_SYSTEM, NULL, -1);
	cg = interval_add_scope(&iv, &sy.run, SCOPE_CGROUP, weird, 1);
	idle = interval_add_scope(&iv, &sy.run, SCOPE_CGROUP, "/idle", -1);
	CHECK(sys && cg && idle, "cannot add scopes");
	/* A pod's container: its names next to the cgroup, escaped as paths are. */
	{
		const struct cgroup_names n = { "ng\"inx", "frontend", "shop" };

		CHECK_INT(scope_set_names(idle, &n), 0);
		/* Its thread (-T): the same names, before the thread's own fields. */
		task = interval_add_task(&iv, &sy.run, "/idle", 7, 8);
		CHECK(task != NULL, "cannot add a thread");
		if (task) {
			CHECK_INT(scope_set_names(task, &n), 0);
			snprintf(task->comm, sizeof(task->comm), "nginx");
		}
	}
	for (int i = 0; i < 3; i++) {
		sys->sum[i] = (struct cgtma_count){ 1000 + i, SYNTH_ENABLED, SYNTH_ENABLED };
		/* Counted a third of the time: 7 scaled by 3 is 21. */
		cg->sum[i] = (struct cgtma_count){ 7, 3 * 1000000, 1000000 };
	}
	/* Counted so little that scaling passes what an int64 holds. */
	cg->sum[1] = (struct cgtma_count){ UINT64_MAX / 2, 3000, 1 };
	cg->removed = true;
	cg->cgroup_id = 4294967301ULL;	/* past 32 bits */
	interval_derive(&sy.run, &iv);
	CHECK(interval_add_scope(&total, &sy.run, SCOPE_SYSTEM, NULL, -1) != NULL, "summary");
	interval_derive(&sy.run, &total);

	text = render(&sy.run, ivs, 2);
	CHECK(text != NULL, "no output");
	if (!text)
		return test_done("json");
	nl = strchr(text, '\n');
	CHECK(nl && strchr(nl + 1, '\n') && !strchr(strchr(nl + 1, '\n') + 1, '\n'),
	      "want exactly two lines: %s", text);
	if (nl)
		*nl = '\0';

	line = json_tokener_parse(text);
	CHECK(line != NULL, "line 1 is not JSON: %s", text);
	keys_of(line, keys, sizeof(keys));
	CHECK(strcmp(keys, "time,interval,model,exact,missed_slices,rows") == 0, "keys %s", keys);
	/* Exact, said on every line: a reader never misses the key. */
	CHECK(json_object_get_boolean(get(line, "exact", NULL)), "interval not exact");
	CHECK_INT(json_object_get_int64(get(line, "missed_slices", NULL)), 0);
	CHECK(json_object_get_double(get(line, "time", NULL)) == 1764756000.123456789, "time");
	/* Seconds to the nanosecond at most: the clocks' resolution, not the double's. */
	CHECK(strstr(text, "{\"time\":1764756000.1234567,\"interval\":0.199978311,") == text,
	      "time and interval: %s", text);
	CHECK_STR(json_object_get_string(get(line, "model", NULL)), "events");

	row = row_at(line, 0);
	keys_of(row, keys, sizeof(keys));
	CHECK(strcmp(keys, "scope,counts,multiplex") == 0, "keys %s", keys);
	CHECK_INT(json_object_get_int64(get(row, "counts", "ev\"il\\name")), 1002);
	CHECK(json_object_get_double(get(row, "multiplex", "cpu-clock")) == 1.0, "multiplex 1");

	row = row_at(line, 1);
	keys_of(row, keys, sizeof(keys));
	CHECK(strcmp(keys, "scope,cgroup,cgroup_id,cpu,removed,counts,multiplex") == 0, "keys %s",
	      keys);
	CHECK_STR(json_object_get_string(get(row, "cgroup", NULL)), weird);
	CHECK_INT(json_object_get_int64(get(row, "cgroup_id", NULL)), 4294967301LL);
	CHECK_INT(json_object_get_int(get(row, "cpu", NULL)), 1);
	CHECK(json_object_get_boolean(get(row, "removed", NULL)), "removed");
	CHECK_INT(json_object_get_int64(get(row, "counts", "cpu-clock")), 21);
	CHECK_INT(json_object_get_int64(get(row, "counts", "context-switches")), INT64_MAX);
	CHECK_NEAR(json_object_get_double(get(row, "multiplex", "cpu-clock")), 1.0 / 3, 1e-15);

	/* Idle: zero counts, multiplexing unknown (null). */
	row = row_at(line, 2);
	keys_of(row, keys, sizeof(keys));
	CHECK(strcmp(keys, "scope,cgroup,container,pod,namespace,counts,multiplex") == 0,
	      "keys %s", keys);
	CHECK_STR(json_object_get_string(get(row, "container", NULL)), "ng\"inx");
	CHECK_STR(json_object_get_string(get(row, "pod", NULL)), "frontend");
	CHECK_STR(json_object_get_string(get(row, "namespace", NULL)), "shop");
	CHECK_INT(json_object_get_int64(get(row, "counts", "cpu-clock")), 0);
	CHECK(json_object_object_get_ex(get(row, "multiplex", NULL), "cpu-clock", NULL) &&
	      get(row, "multiplex", "cpu-clock") == NULL, "idle multiplex is not null");

	row = row_at(line, 3);
	keys_of(row, keys, sizeof(keys));
	CHECK(strcmp(keys, "scope,cgroup,container,pod,namespace,pid,tid,comm,counts,multiplex") == 0,
	      "task keys %s", keys);
	CHECK_STR(json_object_get_string(get(row, "container", NULL)), "ng\"inx");
	CHECK_INT(json_object_get_int(get(row, "tid", NULL)), 8);
	json_object_put(line);

	line = nl ? json_tokener_parse(nl + 1) : NULL;
	CHECK(line != NULL, "line 2 is not JSON");
	keys_of(line, keys, sizeof(keys));
	CHECK(strcmp(keys, "time,interval,model,summary,exact,missed_slices,missed_max_ns,"
		      "missed_unbounded,marks,rows") == 0, "keys %s", keys);
	CHECK_INT(json_object_get_int64(get(line, "missed_max_ns", NULL)), 2500000);
	CHECK_INT(json_object_get_int64(get(line, "missed_unbounded", NULL)), 1);
	{
		json_object *ms = get(line, "marks", NULL), *m0, *m1, *m2, *o;

		CHECK_INT(ms ? json_object_array_length(ms) : 0, 3);
		m0 = ms ? json_object_array_get_idx(ms, 0) : NULL;
		m1 = ms ? json_object_array_get_idx(ms, 1) : NULL;
		m2 = ms ? json_object_array_get_idx(ms, 2) : NULL;
		keys_of(m0, keys, sizeof(keys));
		CHECK(strcmp(keys, "cpu,kind,slice_ns,max_ns,charged,began") == 0, "keys %s", keys);
		CHECK_STR(json_object_get_string(get(m0, "kind", NULL)), "switch");
		CHECK_INT(json_object_get_int64(get(m0, "max_ns", NULL)), 2500000);
		CHECK_STR(json_object_get_string(get(m0, "charged", "cgroup")), "/b");
		CHECK_INT(json_object_get_int(get(m0, "charged", "pid")), 1234);
		o = get(m0, "began", NULL);
		keys_of(o, keys, sizeof(keys));
		CHECK(strcmp(keys, "pid,cgroup,comm,run_ns") == 0, "began keys %s", keys);
		CHECK_STR(json_object_get_string(get(m0, "began", "comm")), "tokio-rt-worker");
		CHECK_INT(json_object_get_int64(get(m0, "began", "run_ns")), 2400000);
		keys_of(m1, keys, sizeof(keys));
		CHECK(strcmp(keys, "cpu,kind,switches") == 0, "skipped keys %s", keys);
		CHECK_STR(json_object_get_string(get(m1, "kind", NULL)), "skipped");
		keys_of(m2, keys, sizeof(keys));
		CHECK(strcmp(keys, "cpu,kind,interrupts") == 0, "interrupt keys %s", keys);
		CHECK_STR(json_object_get_string(get(m2, "kind", NULL)), "interrupt");
		CHECK_INT(json_object_get_int(get(m2, "interrupts", NULL)), 2);
	}
	CHECK(json_object_get_double(get(line, "interval", NULL)) == 2.0, "summary interval");
	/* Whole seconds keep their ".0", as json-c writes a double. */
	CHECK(nl && strstr(nl + 1, "{\"time\":1700000002.5,\"interval\":2.0,") == nl + 1,
	      "summary's time and interval: %s", nl ? nl + 1 : "");
	CHECK(!json_object_get_boolean(get(line, "exact", NULL)), "summary marked exact");
	CHECK_INT(json_object_get_int64(get(line, "missed_slices", NULL)), 3);
	json_object_put(line);

	free(text);
	interval_free(&iv);
	total.marks = NULL;	/* the test's own array */
	total.nr_marks = 0;
	interval_free(&total);
	check_huge_seconds(&sy);
	check_noise(&sy);
	synth_close(&sy);
	check_split_nodes(3, 2);
	check_split_nodes(2, 0);
	check_metrics();
	return test_done("json");
}
