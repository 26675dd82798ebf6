// SPDX-License-Identifier: GPL-2.0
/*
 * The text output: the tree's lines (percentages, '<==', nodes below threshold hidden or,
 * with -v, marked '<', the multiplex marks, the not-exact line, [split]), and the row order:
 * each cgroup's row with its threads under it (-T), and the interrupt scopes (--irq), which
 * interval_sort() puts after the threads, still printed; the marks that tell a cgroup's
 * incarnations apart; the default metrics' line under each tree, and -m's block.
 */
#include <stdlib.h>

#include "output.h"
#include "synth.h"
#include "test.h"

static char *render(const struct run *run, const struct interval *iv)
{
	FILE *f = tmpfile();
	struct output *o = NULL;
	char *text;

	if (!f || output_text_open(f, 0, &o))
		return NULL;
	if (o->ops->begin)
		CHECK_INT(o->ops->begin(o, run), 0);
	CHECK_INT(o->ops->interval(o, run, iv), 0);
	output_close(o);
	text = synth_slurp(f);
	fclose(f);
	return text;
}

static void add(struct interval *iv, const struct run *run, enum scope_kind kind,
		const char *cgroup, int tid, const char *irq, __u64 count)
{
	struct scope *s = kind == SCOPE_TASK ? interval_add_task(iv, run, cgroup, tid, tid) :
			  interval_add_scope(iv, run, kind, kind == SCOPE_IRQ ? irq : cgroup, -1);

	CHECK(s != NULL, "scope");
	if (!s)
		return;
	if (kind == SCOPE_TASK)
		snprintf(s->comm, sizeof(s->comm), "w%d", tid);
	s->sum[0] = (struct cgtma_count){ count, 10, 10 };
}

/*
 * One scope of spr level 2 (perf-metrics) from vector 0's counts: Frontend_Bound 10.9 %
 * and Retiring 12.1 % below their thresholds, Core_Bound 29.5 % the bottleneck.
 */
static const struct {
	const char *what;
	bool verbose;
	double multiplex;	/* every event ran this fraction of its enabled time */
	__u64 missed_slices;
	const char *want[6];	/* whole lines, each with its newline before and after */
	const char *absent[4];	/* text that must not be anywhere */
} tree_cases[] = {
	{ "percentages, the bottleneck and the default metrics", false, 1, 0,
	  { "\nsystem\n",
	    "\n  Bad_Speculation           37.1 % Slots\n",
	    "\n    Machine_Clears          24.3 % Slots\n",
	    "\n  Backend_Bound             39.9 % Slots\n",
	    "\n    Core_Bound              29.5 % Slots            <==\n"
	    "  IPC 0.650  CPI 1.538  GHz 1.953\n" },
	  { "Frontend_Bound", "Retiring", "Memory_Bound", "counted" } },
	{ "below threshold, shown with -v and marked", true, 1, 0,
	  { "\n  Frontend_Bound            10.9 % Slots            <  \n",
	    "\n    Fetch_Latency            9.6 % Slots            <  \n",
	    "\n    Memory_Bound            10.5 % Slots            <  \n",
	    "\n  Retiring                  12.1 % Slots            <  \n",
	    "\n  Bad_Speculation           37.1 % Slots\n",
	    "\n    Core_Bound              29.5 % Slots            <==\n" },
	  { "NOT EXACT" } },
	{ "multiplexed: the scope's and each node's share", false, 0.25, 0,
	  { "\nsystem  [counted 25% of the time]\n",
	    "\n  Bad_Speculation           37.1 % Slots                (counted 25%)\n",
	    "\n    Core_Bound              29.5 % Slots            <== (counted 25%)\n" },
	  { "Frontend_Bound" } },
	{ "multiplexed, below threshold, -v", true, 0.5, 0,
	  { "\nsystem  [counted 50% of the time]\n",
	    "\n  Retiring                  12.1 % Slots            <   (counted 50%)\n" },
	  {} },
	{ "counted all but a sliver: no mark", false, 0.996, 0,
	  { "\nsystem\n", "\n  Bad_Speculation           37.1 % Slots\n" },
	  { "counted" } },
	{ "slices the hook missed: not exact", false, 1, 3,
	  { "\n# NOT EXACT: 3 slices began with a switch or move the hook did not see: at most "
	    "0.000 ms of their time may be another cgroup's\n" },
	  {} },
};

static void check_tree_lines(void)
{
	json_object *vectors = json_object_from_file("tests/vectors/spr-perf-metrics.json");
	json_object *counts = NULL;
	struct synth sy;

	if (vectors)
		json_object_object_get_ex(json_object_array_get_idx(vectors, 0), "counts", &counts);
	CHECK(counts != NULL, "spr-perf-metrics.json");
	CHECK_INT(synth_open(&sy, "spr", 2, true, NULL, 0), 0);
	for (size_t c = 0; counts && c < sizeof(tree_cases) / sizeof(tree_cases[0]); c++) {
		struct interval iv = { .interval_s = 1 };
		struct scope *s;
		char *text;

		sy.run.verbose = tree_cases[c].verbose;
		iv.time = sy.run.start_time + 1;
		iv.missed_slices = tree_cases[c].missed_slices;
		s = synth_scope(&sy, &iv, SCOPE_SYSTEM, NULL, -1, counts, 1);
		CHECK(s != NULL, "%s: scope", tree_cases[c].what);
		for (int e = 0; s && tree_cases[c].multiplex < 1 && e < sy.run.nr_events; e++)
			synth_multiplex(s, e, tree_cases[c].multiplex);
		CHECK_INT(interval_derive(&sy.run, &iv), 0);
		text = render(&sy.run, &iv);
		CHECK(text != NULL, "%s: render", tree_cases[c].what);
		for (int k = 0; text && k < 6 && tree_cases[c].want[k]; k++)
			CHECK(strstr(text, tree_cases[c].want[k]), "%s: no line '%s' in:\n%s",
			      tree_cases[c].what, tree_cases[c].want[k], text);
		for (int k = 0; text && k < 4 && tree_cases[c].absent[k]; k++)
			CHECK(!strstr(text, tree_cases[c].absent[k]), "%s: '%s' in:\n%s",
			      tree_cases[c].what, tree_cases[c].absent[k], text);
		free(text);
		interval_free(&iv);
	}
	synth_close(&sy);
	json_object_put(vectors);
}

/* Threads and interrupt scopes in one interval (-G / -T --irq). */
static void check_threads_and_irq(void)
{
	static const char *const events[] = { "cpu-clock" };
	struct interval iv = { .interval_s = 1 };
	struct synth sy;
	const char *a, *t1, *t2, *b, *t3, *irq;
	char *text;

	CHECK_INT(synth_open(&sy, NULL, 1, false, events, 1), 0);
	iv.time = sy.run.start_time + 1;
	add(&iv, &sy.run, SCOPE_SYSTEM, NULL, 0, NULL, 100);
	add(&iv, &sy.run, SCOPE_CGROUP, "/a", 0, NULL, 50);
	add(&iv, &sy.run, SCOPE_CGROUP, "/b", 0, NULL, 30);
	add(&iv, &sy.run, SCOPE_TASK, "/a", 11, NULL, 20);
	add(&iv, &sy.run, SCOPE_TASK, "/a", 12, NULL, 25);
	add(&iv, &sy.run, SCOPE_TASK, "/b", 13, NULL, 30);
	add(&iv, &sy.run, SCOPE_IRQ, NULL, 0, "NET_RX", 7);
	interval_sort(&iv);
	CHECK_INT(interval_derive(&sy.run, &iv), 0);
	/* Said under the header: not exact, and how much it can matter. */
	iv.missed_slices = 1;
	iv.missed_max_ns = 42000;
	text = render(&sy.run, &iv);
	CHECK(text != NULL, "render");
	if (text) {
		CHECK(strstr(text, "\n# NOT EXACT: 1 slice began with a switch or move the hook "
				   "did not see: at most 0.042 ms of its time may be another "
				   "cgroup's\n"), "not exact:\n%s", text);
		a = strstr(text, "\n/a ");
		t2 = strstr(text, "\n  w12:12 ");
		t1 = strstr(text, "\n  w11:11 ");
		b = strstr(text, "\n/b ");
		t3 = strstr(text, "\n  w13:13 ");
		irq = strstr(text, "\nirq:NET_RX ");
		/* Busiest thread first, under its cgroup; the irq row last. */
		CHECK(a && t2 && t1 && b && t3 && irq && a < t2 && t2 < t1 && t1 < b && b < t3 &&
		      t3 < irq, "rows out of order:\n%s", text);
	}
	free(text);
	interval_free(&iv);
	synth_close(&sy);
}

/*
 * A cgroup removed and made again under its path (a restarted container): each row of it in
 * one interval or summary says which incarnation it is; a row alone keeps its old mark.
 * Rows are given out of order: interval_sort() puts them in the order of their ids.
 */
static const struct {
	const char *what;
	struct { __u64 id; bool removed; } rows[3];
	const char *want[3];	/* the rows' ends, in the order printed */
} incarnation_cases[] = {
	{ "restarted: the one gone, then the live one", { { 9, false }, { 7, true } },
	  { "  (removed id 7)\n", "  (id 9)\n" } },
	{ "restarted twice", { { 12, true }, { 9, false }, { 7, true } },
	  { "  (removed id 7)\n", "  (id 9)\n", "  (removed id 12)\n" } },
	{ "removed, alone", { { 7, true } }, { "  (removed)\n" } },
	{ "live, alone", { { 7, false } }, { " 40\n" } },
	{ "no ids (an old record)", { { 0, false }, { 0, true } },
	  { "  (removed)\n", " 40\n" } },
};

static void check_incarnations(void)
{
	static const char *const events[] = { "cpu-clock" };
	struct synth sy;

	CHECK_INT(synth_open(&sy, NULL, 1, false, events, 1), 0);
	for (size_t c = 0; c < sizeof(incarnation_cases) / sizeof(incarnation_cases[0]); c++) {
		struct interval iv = { .interval_s = 1, .time = sy.run.start_time + 1 };
		const char *at;
		char *text;
		int n = 0;

		add(&iv, &sy.run, SCOPE_SYSTEM, NULL, 0, NULL, 100);
		for (int r = 0; r < 3 && incarnation_cases[c].rows[r].id +
				incarnation_cases[c].rows[r].removed + !r; r++) {
			add(&iv, &sy.run, SCOPE_CGROUP, "/web", 0, NULL, 40);
			iv.scopes[iv.nr_scopes - 1].cgroup_id = incarnation_cases[c].rows[r].id;
			iv.scopes[iv.nr_scopes - 1].removed = incarnation_cases[c].rows[r].removed;
		}
		interval_sort(&iv);
		CHECK_INT(interval_derive(&sy.run, &iv), 0);
		text = render(&sy.run, &iv);
		CHECK(text != NULL, "render");
		at = text;
		for (int r = 0; at && r < 3 && incarnation_cases[c].want[r]; r++, n++) {
			const char *row = strstr(at, "\n/web ");
			const char *end = row ? strchr(row + 1, '\n') : NULL;
			size_t len = strlen(incarnation_cases[c].want[r]);

			CHECK(end && (size_t)(end + 1 - row) > len &&
			      !strncmp(end + 1 - len, incarnation_cases[c].want[r], len),
			      "%s: row %d does not end in '%s':\n%s", incarnation_cases[c].what, r,
			      incarnation_cases[c].want[r], text);
			at = end;
		}
		CHECK(at && !strstr(at, "\n/web "), "%s: more rows than %d:\n%s",
		      incarnation_cases[c].what, n, text);
		free(text);
		interval_free(&iv);
	}
	synth_close(&sy);
}

/* Nodes split over groups carry [split]; the others do not (spr level 3, perf-metrics). */
static void check_split_marker(void)
{
	json_object *vectors = json_object_from_file("tests/vectors/spr-perf-metrics.json");
	json_object *counts = NULL;
	struct interval iv = { .interval_s = 1 };
	struct synth sy;
	int split = 0;
	char *text;

	if (vectors)
		json_object_object_get_ex(json_object_array_get_idx(vectors, 0), "counts", &counts);
	CHECK(counts != NULL, "spr-perf-metrics.json");
	CHECK_INT(synth_open(&sy, "spr", 3, true, NULL, 0), 0);
	sy.run.verbose = true;
	iv.time = sy.run.start_time + 1;
	CHECK(synth_scope(&sy, &iv, SCOPE_SYSTEM, NULL, -1, counts, 1) != NULL, "scope");
	CHECK_INT(interval_derive(&sy.run, &iv), 0);
	text = render(&sy.run, &iv);
	CHECK(text != NULL, "render");
	for (int i = 0; text && i < sy.plan->nr_nodes; i++) {
		char key[160];
		const char *line, *end;

		snprintf(key, sizeof(key), " %s ", sy.plan->nodes[i].name);
		line = strstr(text, key);
		CHECK(line != NULL, "%s not shown:\n%s", sy.plan->nodes[i].name, text);
		if (!line)
			continue;
		end = strchr(line, '\n');
		CHECK((strstr(line, "[split]") && strstr(line, "[split]") < end) ==
			      sy.plan->nodes[i].split,
		      "%s: split %d:\n%s", sy.plan->nodes[i].name, sy.plan->nodes[i].split, text);
		split += sy.plan->nodes[i].split;
	}
	CHECK_INT(split, 2);
	free(text);
	interval_free(&iv);
	synth_close(&sy);
	json_object_put(vectors);
}

/*
 * Containers' rows: the name; with -v the name and the short id as `podman ps` shows them
 * (not the path, cut to the column); a cgroup that is no container keeps its path.
 */
static void check_container_labels(void)
{
	static const char *const events[] = { "cpu-clock" };
	static const char path[] = "/machine.slice/libpod-7c289fc6a1b2c3d4e5f60718293a4b5c6d7e8f"
				   "90a1b2c3d4e5f60718293a4b5c.scope";
	static const struct {
		bool verbose;
		const char *want, *absent;
	} cases[] = {
		{ false, "\nweb  ", "7c289fc6a1b2" },
		{ true, "\nweb (7c289fc6a1b2)  ", "..", },
	};
	struct synth sy;

	CHECK_INT(synth_open(&sy, NULL, 1, false, events, 1), 0);
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct interval iv = { .interval_s = 1 };
		struct cgroup_names web = { .container = "web" };
		char *text;

		sy.run.verbose = cases[c].verbose;
		iv.time = sy.run.start_time + 1;
		add(&iv, &sy.run, SCOPE_SYSTEM, NULL, 0, NULL, 100);
		add(&iv, &sy.run, SCOPE_CGROUP, path, 0, NULL, 50);
		add(&iv, &sy.run, SCOPE_CGROUP, "/user.slice", 0, NULL, 30);
		CHECK_INT(scope_set_names(&iv.scopes[1], &web), 0);
		interval_sort(&iv);
		CHECK_INT(interval_derive(&sy.run, &iv), 0);
		text = render(&sy.run, &iv);
		CHECK(text && strstr(text, cases[c].want) && !strstr(text, cases[c].absent) &&
		      strstr(text, "\n/user.slice "), "verbose %d: want '%s', not '%s':\n%s",
		      cases[c].verbose, cases[c].want, cases[c].absent, text);
		free(text);
		interval_free(&iv);
	}
	synth_close(&sy);
}

/* The scope's events enabled and running for ns: its busy CPU time, GHz's divisor. */
static void set_time(struct scope *s, int nr_events, __u64 ns)
{
	for (int i = 0; s && i < nr_events; i++)
		s->sum[i].enabled = s->sum[i].running = ns;
}

/* The text after the interval's header line (whose clock time is the machine's zone's). */
static const char *after_header(const char *text)
{
	const char *nl = text ? strchr(text, '\n') : NULL;

	return nl ? nl + 1 : "";
}

/*
 * The default metrics' line under every kind of scope's tree, GHz over each scope's own busy
 * time (the most enabled time of its events: 1 s for the system and a CPU, 0.5 s for a
 * cgroup and its thread, 0.25 s for an interrupt scope), "-" where not counted (GHz needs
 * the cycles alone); byte for byte.
 */
static void check_default_metrics(void)
{
	static const char want[] =
		"system\n"
		"  Bad_Speculation      37.1 % Slots\n"
		"  Backend_Bound        39.9 % Slots            <==\n"
		"  IPC 0.650  CPI 1.538  GHz 1.953\n"
		"cpu0\n"
		"  Bad_Speculation      37.1 % Slots\n"
		"  Backend_Bound        39.9 % Slots            <==\n"
		"  IPC 0.650  CPI 1.538  GHz 1.953\n"
		"/a\n"
		"  Bad_Speculation      37.1 % Slots\n"
		"  Backend_Bound        39.9 % Slots            <==\n"
		"  IPC 0.650  CPI 1.538  GHz 3.906\n"
		"  w9:9\n"
		"  Bad_Speculation      37.1 % Slots\n"
		"  Backend_Bound        39.9 % Slots            <==\n"
		"  IPC 0.650  CPI 1.538  GHz 3.906\n"
		"/a@cpu1  [counted 0% of the time]\n"
		"  Bad_Speculation      37.1 % Slots\n"
		"  Backend_Bound        39.9 % Slots            <==\n"
		"  IPC -  CPI -  GHz 1.953\n"
		"irq:NET_RX\n"
		"  Bad_Speculation      37.1 % Slots\n"
		"  Backend_Bound        39.9 % Slots            <==\n"
		"  IPC 0.650  CPI 1.538  GHz 7.812\n"
		"\n";
	json_object *vectors = json_object_from_file("tests/vectors/spr-perf-metrics.json");
	json_object *counts = NULL;
	struct interval iv = { .interval_s = 1 };
	struct scope *s;
	struct synth sy;
	char *text;

	if (vectors)
		json_object_object_get_ex(json_object_array_get_idx(vectors, 0), "counts", &counts);
	CHECK(counts != NULL, "spr-perf-metrics.json");
	CHECK_INT(synth_open(&sy, "spr", 1, true, NULL, 0), 0);
	iv.time = sy.run.start_time + 1;
	synth_scope(&sy, &iv, SCOPE_SYSTEM, NULL, -1, counts, 1);
	synth_scope(&sy, &iv, SCOPE_CPU, NULL, 0, counts, 1);
	set_time(synth_scope(&sy, &iv, SCOPE_CGROUP, "/a", -1, counts, 1), sy.run.nr_events,
		 SYNTH_ENABLED / 2);
	/* the instructions were not counted on this CPU: no metric, the tree still */
	s = synth_scope(&sy, &iv, SCOPE_CGROUP, "/a", 1, counts, 1);
	if (s)
		s->sum[synth_event(&sy, "INST_RETIRED.ANY")].running = 0;
	set_time(synth_scope(&sy, &iv, SCOPE_IRQ, "NET_RX", -1, counts, 1), sy.run.nr_events,
		 SYNTH_ENABLED / 4);
	s = interval_add_task(&iv, &sy.run, "/a", 9, 9);
	if (s) {
		snprintf(s->comm, sizeof(s->comm), "w9");
		memcpy(s->sum, iv.scopes[2].sum, sy.run.nr_events * sizeof(*s->sum));
	}
	CHECK_INT(iv.nr_scopes, 6);
	interval_sort(&iv);
	CHECK_INT(interval_derive(&sy.run, &iv), 0);
	text = render(&sy.run, &iv);
	CHECK(text && !strcmp(after_header(text), want), "got:\n%s\nwant:\n%s",
	      after_header(text), want);
	free(text);
	interval_free(&iv);
	synth_close(&sy);
	json_object_put(vectors);
}

/*
 * --metrics (as -m): a block of its metrics under the tree, each with its unit, how much of
 * the time its events ran where that was not all, "not counted" where never; byte for byte.
 * The model is spr's with one more metric, which --metrics picks by name with spr's own
 * UopPI (toplev's).
 */
static void check_metrics_block(void)
{
	static const char extra[] =
		"[{\"name\": \"L1_Misses_per_Second\", \"expr\": \"MEM_LOAD_RETIRED.L1_MISS / "
		"interval_s\", \"unit\": \"/s\", \"desc\": \"d\", \"groups\": [\"Mem\"]}]";
	static const char want_system[] =
		"system\n"
		"  Bad_Speculation      37.1 % Slots\n"
		"  Backend_Bound        39.9 % Slots            <==\n"
		"  metrics\n"
		"    IPC                       0.650\n"
		"    CPI                       1.538\n"
		"    GHz                       1.953 GHz\n"
		"    UopPI                     1.117\n"
		"    L1_Misses_per_Second  184323.000 /s\n"
		"/a  [counted 50% of the time]\n";
	static const char want_a[] =
		"    L1_Misses_per_Second  184324.000 /s (counted 50%)\n"
		"/b  [counted 0% of the time]\n";
	static const char want_b[] =
		"    UopPI                     1.117\n"
		"    L1_Misses_per_Second  not counted\n\n";
	json_object *vectors = json_object_from_file("tests/vectors/spr-perf-metrics.json");
	json_object *counts = NULL, *spr = json_object_from_file("user/models/spr.json");
	json_object *metrics = NULL, *add = json_tokener_parse(extra);
	const char *json = NULL;
	struct interval iv = { .interval_s = 1 };
	struct model *m = NULL;
	struct scope *s;
	struct synth sy;
	char *text;
	int l1;

	if (vectors)
		json_object_object_get_ex(json_object_array_get_idx(vectors, 0), "counts", &counts);
	if (spr && add && json_object_object_get_ex(spr, "metrics", &metrics))
		for (size_t i = 0; i < json_object_array_length(add); i++)
			json_object_array_add(metrics,
					      json_object_get(json_object_array_get_idx(add, i)));
	if (metrics)
		json = json_object_to_json_string(spr);
	CHECK(counts && json && !model_load_string("spr+", json, strlen(json), &m), "model");
	CHECK_INT(synth_open_model(&sy, m, 1, true, "UopPI,L1_Misses_per_Second"), 0);
	CHECK_INT(sy.plan->nr_metrics, 5);
	l1 = synth_event(&sy, "MEM_LOAD_RETIRED.L1_MISS");
	iv.time = sy.run.start_time + 1;
	synth_scope(&sy, &iv, SCOPE_SYSTEM, NULL, -1, counts, 1);
	s = synth_scope(&sy, &iv, SCOPE_CGROUP, "/a", -1, counts, 1);
	if (s && l1 >= 0)
		synth_multiplex(s, l1, 0.5);
	s = synth_scope(&sy, &iv, SCOPE_CGROUP, "/b", -1, counts, 1);
	if (s && l1 >= 0)
		s->sum[l1].running = 0;
	CHECK_INT(interval_derive(&sy.run, &iv), 0);
	text = render(&sy.run, &iv);
	CHECK(text && !strncmp(after_header(text), want_system, sizeof(want_system) - 1),
	      "got:\n%s", after_header(text));
	CHECK(text && strstr(text, want_a), "got:\n%s", after_header(text));
	CHECK(text && strlen(text) > strlen(want_b) &&
	      !strcmp(text + strlen(text) - strlen(want_b), want_b), "got:\n%s",
	      after_header(text));
	free(text);
	interval_free(&iv);
	synth_close(&sy);
	json_object_put(add);
	json_object_put(spr);
	json_object_put(vectors);
}

/*
 * A cgroup's noise under its row (a table: -e), every field and its top antagonist by its
 * container's name; with -v each antagonist on a line of its own, its path beside the
 * container's name; a cgroup with only its wait keeps the one field. Byte for byte.
 */
static void check_noise(void)
{
	static const char *const events[] = { "cpu-clock" };
	static const char noise_line[] =
		"  /a: noise: wait 0.50 s/s, pressure some 56 % full 12 %, throttled 0.25 s/s "
		"(12 times), preempted 35.5/s, SMT shared 0.06 s/s, top antagonist web (took "
		"0.38 s/s, SMT 0.03 s/s)\n";
	static const char antagonists[] =
		"    antagonist web (/kubepods/pod1/abc): preempted 20.2/s, took 0.38 s/s, SMT "
		"0.03 s/s\n"
		"    antagonist /batch: preempted 3.5/s, took 0.05 s/s, SMT 0.02 s/s\n";
	static const char table[] =
		"scope        cpu-clock\n"
		"system             100\n"
		"/a                  50\n"
		"/b                  30\n";
	struct interval iv = { .interval_s = 1 };
	struct synth sy;
	char want[1024];

	CHECK_INT(synth_open(&sy, NULL, 1, false, events, 1), 0);
	iv.time = sy.run.start_time + 1;
	add(&iv, &sy.run, SCOPE_SYSTEM, NULL, 0, NULL, 100);
	add(&iv, &sy.run, SCOPE_CGROUP, "/a", 0, NULL, 50);
	add(&iv, &sy.run, SCOPE_CGROUP, "/b", 0, NULL, 30);
	CHECK_INT(iv.nr_scopes, 3);
	if (iv.nr_scopes == 3) {
		synth_noise(&iv.scopes[1].noise);
		iv.scopes[2].noise = (struct noise){ .has = NOISE_WAIT, .wait = 1.5 };
	}
	CHECK_INT(interval_derive(&sy.run, &iv), 0);
	for (int verbose = 0; verbose <= 1; verbose++) {
		char *text;

		sy.run.verbose = verbose;
		text = render(&sy.run, &iv);
		snprintf(want, sizeof(want), "%s%s%s  /b: noise: wait 1.50 s/s\n\n", table,
			 noise_line, verbose ? antagonists : "");
		CHECK(text && !strcmp(after_header(text), want), "-v %d: got:\n%s\nwant:\n%s",
		      verbose, after_header(text), want);
		free(text);
	}
	/* Only the switch hook's SMT figures: what the antagonists shared of the core. */
	if (iv.nr_scopes == 3) {
		char *text;

		iv.scopes[1].noise.has = NOISE_SMT;
		text = render(&sy.run, &iv);
		CHECK(text && strstr(text, "\n  /a: noise: SMT shared 0.06 s/s, top antagonist web "
				   "(SMT 0.03 s/s)\n    antagonist web (/kubepods/pod1/abc): SMT "
				   "0.03 s/s\n    antagonist /batch: SMT 0.02 s/s\n"),
		      "SMT only:\n%s", text ? text : "");
		free(text);
	}
	interval_free(&iv);
	synth_close(&sy);
}

/*
 * A cgroup that did not run is hidden without -v, and counted below the table, unless its
 * noise says it was kept from the CPU (starved by a neighbour): that row is shown.
 */
static void check_starved_shown(void)
{
	static const char *const events[] = { "cpu-clock" };
	struct interval iv = { .interval_s = 1 };
	struct synth sy;
	char *text;

	CHECK_INT(synth_open(&sy, NULL, 1, false, events, 1), 0);
	iv.time = sy.run.start_time + 1;
	add(&iv, &sy.run, SCOPE_SYSTEM, NULL, 0, NULL, 100);
	add(&iv, &sy.run, SCOPE_CGROUP, "/hog", 0, NULL, 100);
	add(&iv, &sy.run, SCOPE_CGROUP, "/starved", 0, NULL, 0);
	add(&iv, &sy.run, SCOPE_CGROUP, "/idle", 0, NULL, 0);
	CHECK_INT(iv.nr_scopes, 4);
	if (iv.nr_scopes == 4) {
		iv.scopes[2].sum[0] = iv.scopes[3].sum[0] = (struct cgtma_count){ 0, 0, 0 };
		iv.scopes[2].noise = (struct noise){ .has = NOISE_WAIT | NOISE_PRESSURE_SOME,
						     .pressure_some = 1.0 };
		iv.scopes[3].noise = (struct noise){ .has = NOISE_WAIT | NOISE_PRESSURE_SOME };
	}
	CHECK_INT(interval_derive(&sy.run, &iv), 0);
	text = render(&sy.run, &iv);
	CHECK(text && strstr(text, "\n/starved ") && strstr(text, "\n  /starved: noise: wait 0.00 "
							      "s/s, pressure some 100 %\n"),
	      "a starved cgroup's row and noise:\n%s", text ? text : "");
	CHECK(text && !strstr(text, "/idle") &&
	      strstr(text, "\n(1 tracked cgroup did not run; -v shows it)\n"),
	      "an idle cgroup hidden and counted:\n%s", text ? text : "");
	free(text);
	interval_free(&iv);
	synth_close(&sy);
}

int main(void)
{
	check_tree_lines();
	check_threads_and_irq();
	check_split_marker();
	check_incarnations();
	check_container_labels();
	check_default_metrics();
	check_metrics_block();
	check_noise();
	check_starved_shown();
	return test_done("text");
}
