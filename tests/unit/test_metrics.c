// SPDX-License-Identifier: GPL-2.0
/*
 * Flat metrics: the model file's "groups" and "default" keys, the expressions' cpu_s, which
 * metrics a plan computes (the default ones; -m all; --metrics by name or group, case
 * ignored) and how it groups their events (after the tree's, multiplexing said), the
 * option's parsing, its errors with their suggestions, and list-events -m.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>

#include "capture.h"
#include "commands.h"
#include "loadmodel.h"
#include "measurement.h"
#include "model_internal.h"
#include "options.h"
#include "test.h"

/*
 * Two generic counters: the tree (A / B) takes both, so IPC (the same events) joins its
 * group, and Rate (C) and Other (D, A) need groups of their own.
 */
#define MODEL_HEAD                                                                             \
	"{\"name\": \"t\", \"description\": \"test\", \"vendor\": \"intel\", \"source\": "     \
	"\"tests\", \"match\": [], \"pmu\": {\"generic_counters\": 2}, \"events\": ["          \
	"{\"name\": \"A\", \"encoding\": \"r1\"}, {\"name\": \"B\", \"encoding\": \"r2\"}, "   \
	"{\"name\": \"C\", \"encoding\": \"r3\"}, {\"name\": \"D\", \"encoding\": \"r4\"}], "  \
	"\"nodes\": [{\"name\": \"N1\", \"parent\": null, \"level\": 1, \"domain\": "          \
	"\"Slots\", \"area\": \"FE\", \"expr\": \"A / B\", \"thresh\": \"val > 0.1\", "        \
	"\"maxval\": null, \"siblings\": [], \"desc\": \"d\"}], \"metrics\": ["
#define METRIC(name, expr, more)                                                               \
	"{\"name\": \"" name "\", \"expr\": \"" expr "\", \"unit\": \"\", \"desc\": \"d\"" more "}"
#define MODEL                                                                                  \
	MODEL_HEAD METRIC("IPC", "A / B", ", \"default\": true") ", "                          \
	METRIC("Rate", "C / cpu_s", ", \"groups\": [\"Info.System\", \"Summary\"]") ", "      \
	METRIC("Other", "D / A", ", \"groups\": [\"Info.Thread\"], \"default\": false") "]}"

#define load load_model_text

/* The test model, its loader's message dropped (test_loader checks there is none). */
static struct model *load_test_model(void)
{
	char *msg;
	struct model *m = load(MODEL, &msg);

	free(msg);
	return m;
}

static const struct {
	const char *metric;	/* one metric's object */
	const char *msg;
} bad_metrics[] = {
	{ METRIC("M", "A", ", \"groups\": \"Summary\""),
	  "metric 'M': 'groups' must be an array, not a string" },
	{ METRIC("M", "A", ", \"groups\": [1]"), "metric 'M': groups[0] must be a string, not an "
	  "integer" },
	{ METRIC("M", "A", ", \"groups\": [\"\"]"), "metric 'M': groups[0] must be 1 to 64 "
	  "characters" },
	{ METRIC("M", "A", ", \"groups\": [\"Info,Thread\"]"), "metric 'M': group 'Info,Thread': "
	  "no spaces, commas or control characters in a group's name" },
	{ METRIC("M", "A", ", \"groups\": [\"Info Thread\"]"), "group 'Info Thread': no spaces" },
	{ METRIC("M", "A", ", \"groups\": [\"X\", \"X\"]"), "metric 'M': group 'X' is listed "
	  "twice" },
	{ METRIC("M", "A", ", \"default\": 1"), "metric 'M': 'default' must be a boolean, not an "
	  "integer" },
	{ METRIC("M", "A", ", \"group\": []"), "metric 'M': unknown key 'group'" },
	{ METRIC("cpu_s", "A", ""), "metrics[0]: 'cpu_s' is a reserved word" },
};

static void test_loader(void)
{
	struct model *m;
	char *msg, json[2048];

	m = load(MODEL, &msg);
	CHECK_STR(msg, "");
	free(msg);
	if (m) {
		CHECK_INT(m->nr_metrics, 3);
		CHECK(m->metrics[0].is_default && !m->metrics[1].is_default &&
		      !m->metrics[2].is_default, "default flags");
		CHECK_INT(m->metrics[1].nr_groups, 2);
		CHECK_STR(m->metrics[1].groups[1], "Summary");
		CHECK_INT(m->metrics[0].nr_groups, 0);
		CHECK_INT(model_extra_metrics(m), 2);
	}
	model_free(m);

	for (size_t i = 0; i < sizeof(bad_metrics) / sizeof(bad_metrics[0]); i++) {
		snprintf(json, sizeof(json), "%s%s]}", MODEL_HEAD, bad_metrics[i].metric);
		m = load(json, &msg);
		CHECK(!m && strstr(msg, bad_metrics[i].msg), "case %zu: %s", i, msg);
		free(msg);
		model_free(m);
	}

	/* A file that marks no metric default shows them all (sw's before the key, one's own). */
	m = load(MODEL_HEAD METRIC("X", "A", "") ", " METRIC("Y", "B", "") "]}", &msg);
	CHECK(m && m->metrics[0].is_default && m->metrics[1].is_default, "all default");
	CHECK(!m || !model_extra_metrics(m), "nothing for -m");
	free(msg);
	model_free(m);
}

/* cpu_s is the input's: GHz-like metrics divide by it, not by the interval. */
static void test_cpu_s(void)
{
	struct model_options o = { .level = 1, .metrics = "" };
	double counts[8] = { 0 };
	bool counted[8];
	struct tma_result r = {};
	struct tma_input in = { .counts = counts, .counted = counted, .interval_s = 2,
				.cpu_s = 0.25 };
	struct plan *p = NULL;
	struct model *m = load_test_model();

	if (!m || plan_new(m, &o, &p)) {
		CHECK(0, "no plan");
		model_free(m);
		return;
	}
	for (int i = 0; i < p->nr_events; i++) {
		counted[i] = true;
		counts[i] = !strcmp(p->events[i].name, "C") ? 3e9 :
			    !strcmp(p->events[i].name, "A") ? 2e9 : 1e9;
	}
	CHECK_INT(tma_result_init(&r, p), 0);
	CHECK_INT(tma_compute(p, &in, &r), 0);
	CHECK_STR(p->metrics[1].name, "Rate");
	CHECK_NEAR(r.metric[1], 3e9 / 0.25, 0.0);
	CHECK_NEAR(r.metric[0], 2.0, 0.0);
	/* a scope with no busy time: the division error makes the metric 0 */
	in.cpu_s = 0;
	CHECK_INT(tma_compute(p, &in, &r), 0);
	CHECK_NEAR(r.metric[1], 0.0, 0.0);
	tma_result_release(&r);
	plan_free(p);
	model_free(m);
}

/* plan_new() under o, its metrics' names (space-separated) checked against want. */
static struct plan *plan_checked(const struct model *m, const struct model_options *o,
				 const char *want, size_t i)
{
	struct plan *p = NULL;
	char names[128] = "";

	CHECK_INT(plan_new(m, o, &p), 0);
	for (int k = 0; p && k < p->nr_metrics; k++)
		snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s",
			 k ? " " : "", p->metrics[k].name);
	CHECK(!p || !strcmp(names, want), "case %zu: '%s', want '%s'", i, names, want);
	return p;
}

/* Which metrics, in which order, in which groups, for each --metrics value. */
static void test_plan(void)
{
	static const struct {
		const char *list;
		const char *names;	/* the plan's metrics, in order */
		int groups, base_groups;
		bool multiplexed;
	} cases[] = {
		{ NULL, "IPC", 1, 1, false },
		{ "", "IPC Rate Other", 3, 1, true },
		{ "summary", "IPC Rate", 2, 1, true },
		{ "INFO.THREAD", "IPC Other", 2, 1, true },
		{ "ipc", "IPC", 1, 1, false },
		{ "Other,Info.System", "IPC Rate Other", 3, 1, true },
		/* plan_new() ignores what matches nothing */
		{ "nothing,Rate", "IPC Rate", 2, 1, true },
	};
	struct model *m = load_test_model();

	if (!m)
		return;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct model_options o = { .level = 1, .metrics = cases[i].list };
		struct plan *p;

		p = plan_checked(m, &o, cases[i].names, i);
		if (!p)
			continue;
		CHECK_INT(p->nr_groups, cases[i].groups);
		CHECK_INT(p->all.nr_groups, cases[i].groups);
		CHECK_INT(p->base.nr_groups, cases[i].base_groups);
		CHECK_INT(p->tree.nr_groups, 1);
		CHECK_INT(p->all.multiplexed, cases[i].multiplexed);
		CHECK_INT(p->base.multiplexed, false);
		CHECK_INT(p->tree.multiplexed, false);
		/* the tree's group first, the default metric's events counted with it */
		CHECK_INT(p->nodes[0].group, 0);
		CHECK_INT(p->metrics[0].group, 0);
		CHECK(p->metrics[0].is_default, "case %zu: IPC default", i);
		for (int k = 1; k < p->nr_metrics; k++) {
			CHECK(p->metrics[k].group >= p->base.nr_groups && !p->metrics[k].split,
			      "case %zu: %s in group %d", i, p->metrics[k].name,
			      p->metrics[k].group);
			CHECK(!p->metrics[k].is_default, "case %zu", i);
		}
		plan_free(p);
	}
	model_free(m);
}

/*
 * -m where every metric does not fit max_events: the metric groups (a metric's first group,
 * else its name) in the model's order while the plan stays within it. The test model: the
 * tree and IPC 2 events, Rate (Info.System) 1 more, Other (Info.Thread) 2 more.
 */
static void test_areas(void)
{
	static const struct {
		const char *list;
		int max_events;
		const char *names, *left_out;
		int nr_events, nr_all;
	} cases[] = {
		{ "", 0, "IPC Rate Other", NULL, 5, 5 },	/* no limit */
		{ "", 5, "IPC Rate Other", NULL, 5, 5 },
		{ "", 4, "IPC Rate", "Info.Thread", 3, 5 },
		{ "", 3, "IPC Rate", "Info.Thread", 3, 5 },
		{ "", 2, "IPC", "Info.System,Info.Thread", 2, 5 },
		/* a later group that fits is taken after one that does not */
		{ "", 1, "IPC", "Info.System,Info.Thread", 2, 5 },
		/* a list is never cut: the caller says it does not fit */
		{ "Other", 2, "IPC Other", NULL, 4, 4 },
	};
	struct model *m = load_test_model();

	if (!m)
		return;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct model_options o = { .level = 1, .metrics = cases[i].list,
					   .max_events = cases[i].max_events };
		struct plan *p;

		p = plan_checked(m, &o, cases[i].names, i);
		if (!p)
			continue;
		CHECK(cases[i].left_out ? p->groups_left_out &&
			      !strcmp(p->groups_left_out, cases[i].left_out) : !p->groups_left_out,
		      "case %zu: left out '%s'", i, p->groups_left_out ? p->groups_left_out : "");
		CHECK_INT(p->nr_events, cases[i].nr_events);
		CHECK_INT(p->nr_events_all, cases[i].nr_all);
		plan_free(p);
	}
	model_free(m);
}

/*
 * spr at level 1 with -m: toplev's areas in its order, Info.Thread to Info.Memory.Core
 * (and Info.Memory.Prefetches after the TLB and Latency ones), every one whole, within 128
 * events.
 */
static void test_areas_spr(void)
{
	static const char *const left[] = { "Info.Memory.TLB", "Info.Memory.Latency",
					    "Info.Memory.Mix", "Info.System" };
	struct model_options o = { .level = 1, .metrics = "", .max_events = CGTMA_MAX_EVENTS };
	struct model *m = NULL;
	struct plan *p = NULL;
	int planned = 0;

	CHECK_INT(model_load_builtin("spr", &m), 0);
	if (!m)
		return;
	CHECK_INT(plan_new(m, &o, &p), 0);
	if (!p)
		goto out;
	CHECK_STR(p->groups_left_out,
		  "Info.Memory.TLB,Info.Memory.Latency,Info.Memory.Mix,Info.System");
	CHECK_INT(p->nr_events_all, 155);
	CHECK_INT(p->nr_events, 128);
	for (int i = 0; i < m->nr_metrics; i++) {
		const struct model_metric *mt = &m->metrics[i];
		bool out = false, in = false;

		for (size_t k = 0; k < sizeof(left) / sizeof(left[0]); k++)
			out |= mt->nr_groups && !strcmp(mt->groups[0], left[k]);
		for (int k = 0; k < p->nr_metrics; k++)
			in |= !strcmp(p->metrics[k].name, mt->name);
		CHECK(in != out, "spr: %s (%s) %s", mt->name,
		      mt->nr_groups ? mt->groups[0] : "-", in ? "planned" : "left out");
		planned += in;
	}
	CHECK_INT(p->nr_metrics, planned);
	CHECK_INT(planned, 3 + 79);
out:
	plan_free(p);
	model_free(m);
}

static const struct {
	const char *list;
	const char *msg;	/* "" when the list is good */
} checks[] = {
	{ "", "" },
	{ "summary,ipc", "" },
	{ "Info.System", "" },
	{ "Sumary", "cgtma: --metrics: model t has no metric or metric group 'Sumary': did you "
	  "mean 'Summary'? (cgtma list-events -M t -m lists them)\n" },
	{ "IPC,Infos.Thread", "cgtma: --metrics: model t has no metric or metric group "
	  "'Infos.Thread': did you mean 'Info.Thread'? (cgtma list-events -M t -m lists them)\n" },
	{ "Nothing_Like_It", "cgtma: --metrics: model t has no metric or metric group "
	  "'Nothing_Like_It' (cgtma list-events -M t -m lists them)\n" },
	{ "IPC,", "cgtma: --metrics 'IPC,': an empty item in the list\n" },
	{ ",IPC", "cgtma: --metrics ',IPC': an empty item in the list\n" },
};

static void test_check(void)
{
	struct model *m = load_test_model();
	char *msg;

	if (!m)
		return;
	for (size_t i = 0; i < sizeof(checks) / sizeof(checks[0]); i++) {
		struct capture c;
		int err;

		if (capture_begin(&c, 2))
			continue;
		err = model_metrics_check(m, checks[i].list);
		msg = capture_end(&c);
		CHECK_INT(err, *checks[i].msg ? -EINVAL : 0);
		CHECK(!strcmp(msg, checks[i].msg), "case %zu: '%s'", i, msg);
		free(msg);
	}
	model_free(m);
	/* A metric of the source the model leaves out says why (metrics_left_out). */
	if (model_load_builtin("zen4", &m) == 0) {
		struct capture c;

		if (!capture_begin(&c, 2)) {
			CHECK_INT(model_metrics_check(m, "ipc,Backend_Cycles_Idle"), -EINVAL);
			msg = capture_end(&c);
			CHECK_STR(msg, "cgtma: --metrics: model zen4 leaves backend_cycles_idle out: "
				  "the kernel has no stalled-cycles-backend on Zen 2 and later (Linux "
				  "6.9, commit c7b2edd8377b: no event counts it); the tree's "
				  "Backend_Bound and its Memory_Bound/Core_Bound measure the backend's "
				  "stalls\n");
			free(msg);
		}
		model_free(m);
	} else {
		CHECK(0, "the zen4 model");
	}
}

/* getopt's view: -m, --metrics, --metrics LIST (perf's -M), --metrics=LIST. */
static void test_option(void)
{
	static const struct option longopts[] = { METRICS_LONG_OPTION, {} };
	static const struct {
		const char *argv[4];
		const char *metrics;	/* NULL: not given */
		int next;		/* argv index getopt stops at */
	} cases[] = {
		{ { "x", "-m", "cmd" }, "", 2 },
		{ { "x", "--metrics" }, "", 2 },
		{ { "x", "--metrics", "Summary,IPC" }, "Summary,IPC", 3 },
		{ { "x", "--metrics=Summary" }, "Summary", 2 },
		{ { "x", "--metrics", "-v" }, "", 3 },
		{ { "x", "--metrics", "-" }, "", 2 },
		{ { "x", "--metrics", "Summary", "-m" }, "", 4 },	/* all wins */
		{ { "x", "-m", "--metrics", "IPC" }, "", 4 },
		/* a command (in PATH, or a path) is the run's, not a list */
		{ { "x", "--metrics", "sh", "-c" }, "", 2 },
		{ { "x", "--metrics", "/bin/sh" }, "", 2 },
		{ { "x", "--metrics=sh" }, "sh", 2 },
		{ { "x" }, NULL, 1 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct measure_opts mo = {};
		char *argv[5] = {};
		int argc = 0, c;

		while (argc < 4 && cases[i].argv[argc])
			argc++;
		memcpy(argv, cases[i].argv, sizeof(cases[i].argv));
		optind = 1;
		opterr = 0;
		while ((c = getopt_long(argc, argv, "+mv", longopts, NULL)) != -1)
			CHECK_INT(metrics_opt(&mo, c, argc, argv), c == 'v' || c == '?' ? 0 : 1);
		CHECK(cases[i].metrics ? mo.metrics && !strcmp(mo.metrics, cases[i].metrics) :
					 !mo.metrics, "case %zu: '%s'", i,
		      mo.metrics ? mo.metrics : "(null)");
		CHECK(optind == cases[i].next, "case %zu: optind %d, want %d", i, optind,
		      cases[i].next);
	}
	{
		struct measure_opts mo = {};
		char *argv[] = { "x", "--metrics=", NULL };
		struct capture c;
		char *msg;

		optind = 1;
		if (!capture_begin(&c, 2)) {
			CHECK_INT(getopt_long(2, argv, "+m", longopts, NULL), OPT_METRICS);
			CHECK_INT(metrics_opt(&mo, OPT_METRICS, 2, argv), -EINVAL);
			msg = capture_end(&c);
			CHECK_STR(msg, "cgtma: --metrics=: the list is empty (-m alone adds every "
				  "metric)\n");
			free(msg);
		}
	}
	opterr = 1;
}

/*
 * The run's setup: -m's groups multiplex where the tree's did not, and it says so; an
 * unknown group is a usage error.
 */
static void test_measurement(void)
{
	static const char path[] = "/tmp/cgtma-test-metrics.json";
	struct measure_opts o = { .model_file = path, .perf_metrics = -1, .smt = 0,
				  .nmi_watchdog = 0 };
	struct measurement m = {};
	FILE *f = fopen(path, "w");
	struct capture c;
	char *msg;

	if (!f)
		return;
	fputs(MODEL, f);
	fclose(f);
	CHECK_INT(measurement_setup(&o, &m), 0);
	CHECK_STR(m.notices.buf ? m.notices.buf : "", "");
	CHECK_INT(m.nr_events, 2);
	measurement_release(&m);

	o.metrics = "";
	memset(&m, 0, sizeof(m));
	CHECK_INT(measurement_setup(&o, &m), 0);
	CHECK_STR(m.notices.buf ? m.notices.buf : "",
		  "-m: the metrics' events do not fit the counters beside the tree's: the PMU "
		  "multiplexes 3 groups, each counted part of the time and scaled (cgtma "
		  "list-events -m shows them)\n");
	CHECK_INT(m.nr_events, 5);
	measurement_release(&m);

	o.metrics = "Summary,Bogus";
	memset(&m, 0, sizeof(m));
	if (!capture_begin(&c, 2)) {
		CHECK_INT(measurement_setup(&o, &m), -EINVAL);
		msg = capture_end(&c);
		CHECK(strstr(msg, "no metric or metric group 'Bogus'"), "%s", msg);
		free(msg);
	}
	measurement_release(&m);
	unlink(path);
}

/*
 * `cgtma list-events` with argv (NULL-terminated): its exit status, with what it wrote to
 * standard output in *text and to standard error in *msg (the caller frees both); -1 where
 * the output cannot be captured.
 */
static int list_events(char **argv, char **text, char **msg)
{
	struct capture out, err;
	int argc = 0, rc;

	while (argv[argc])
		argc++;
	if (capture_begin(&out, 1))
		return -1;
	if (capture_begin(&err, 2)) {
		free(capture_end(&out));
		return -1;
	}
	rc = cmd_list_events(argc, argv);
	*msg = capture_end(&err);
	*text = capture_end(&out);
	return rc;
}

/*
 * list-events -m: each group's metrics beside its nodes, then the metrics with their groups;
 * on spr the metric groups that fit one run, and a warning naming those left out.
 */
static void test_list_events(void)
{
	static const char want[] =
		"model sw, level 1, generic counters, SMT off: 4 events in 4 groups\n"
		"group 0:\n"
		"  metrics: CPU_Utilization\n"
		"  cpu-clock                                            type 1 config 0x0 config1 0x0\n";
	static const char warning[] =
		"cgtma: warning: -m: every metric needs 155 events at level 1, one run counts 128: "
		"left out the metric groups Info.Memory.TLB, Info.Memory.Latency, Info.Memory.Mix, "
		"Info.System; --metrics=Info.Memory.TLB,Info.Memory.Latency,Info.Memory.Mix,"
		"Info.System counts them\n";
	static const char head[] =
		"model spr, level 1, generic counters, SMT off: 128 events in 16 groups\n"
		"group 0:\n  nodes: Frontend_Bound, Bad_Speculation, Backend_Bound, Retiring\n"
		"  metrics: IPC, CPI, GHz, UopPI, CoreIPC, Instructions, Big_Code (split), ";
	char *argv[] = { "list-events", "-M", "spr", "--no-perf-metrics", "--no-nmi-watchdog",
			 "-m", NULL };
	char *text, *msg;
	int rc = list_events(argv, &text, &msg);

	if (rc < 0)
		return;
	CHECK_INT(rc, 0);
	CHECK(strstr(msg, warning), "%s", msg);
	CHECK(!strncmp(text, head, sizeof(head) - 1), "%s", text);
	CHECK(strstr(text, "\nmetrics:\n  IPC                         default: Instructions "
			   "retired per unhalted core cycle (toplev's Info.Thread IPC)\n"), "%s",
	      text);
	CHECK(strstr(text, "\n  GHz                         default; unit GHz: Average "
			   "frequency"), "%s", text);
	CHECK(strstr(text, "\n  Useless_HWPF                groups Info.Memory.Prefetches") &&
	      !strstr(text, "\n  Kernel_Utilization ") && !strstr(text, "\n  Load_STLB_MPKI "),
	      "%s", text);
	free(text);
	free(msg);

	argv[4] = "-m";
	argv[5] = NULL;
	argv[2] = "sw";
	rc = list_events(argv, &text, &msg);
	if (rc < 0)
		return;
	CHECK_INT(rc, 0);
	CHECK(!strncmp(text, want, sizeof(want) - 1), "%s", text);
	CHECK_STR(msg, "cgtma: -m: model 'sw' has no metrics beyond those it shows by default\n");
	free(text);
	free(msg);
}

/*
 * A --metrics list beyond one run's events is a usage error with the numbers and the way
 * out: fewer groups, and a lower level only where one makes room.
 */
static void test_list_too_large(void)
{
	static const struct {
		const char *level, *list, *err;
	} cases[] = {
		{ "3", "--metrics=Info.Memory,Info.System,Info.Frontend,Info.Branches",
		  "cgtma: --metrics Info.Memory,Info.System,Info.Frontend,Info.Branches: model 'spr' "
		  "at level 3 needs 142 events with these metrics, one run counts at most 128: name "
		  "fewer metrics or groups (-m alone counts the groups that fit); -l 2 counts them\n" },
		{ "1", "--metrics=Mem,Fed,Offcore,Branches,OS,Ret,Flops,Cor",
		  "cgtma: --metrics Mem,Fed,Offcore,Branches,OS,Ret,Flops,Cor: model 'spr' at level "
		  "1 needs 131 events with these metrics, one run counts at most 128: name fewer "
		  "metrics or groups (-m alone counts the groups that fit)\n" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *argv[] = { "list-events", "-M", "spr", "-l", (char *)cases[i].level,
				 "--no-perf-metrics", "--no-nmi-watchdog", (char *)cases[i].list,
				 NULL };
		char *text, *msg;
		int rc = list_events(argv, &text, &msg);

		if (rc < 0)
			return;
		CHECK_INT(rc, 2);
		CHECK_STR(strstr(msg, "cgtma: --metrics "), cases[i].err);
		CHECK_STR(text, "");
		free(text);
		free(msg);
	}
}

/*
 * Without -m, a run counts a default metric only where its events leave the tree's counting
 * as it is: on Neoverse at level 1 the tree and the cycle counter fill the PMU (GHz reads
 * the tree's cycles); Zen 4 without the NMI watchdog likewise, with it the tree's two
 * groups take IPC and CPI in; SPR at level 2 with the watchdog holding the fixed cycles
 * counter. -m counts them all; compute (no spare_tree) every one.
 */
static void test_defaults_beside_tree(void)
{
	static const struct {
		const char *model;
		int level;
		bool watchdog, spare;
		const char *metrics, *names, *left_out;
	} cases[] = {
		{ "neoverse-v1", 1, false, true, NULL, "GHz", "IPC,CPI" },
		{ "neoverse-n3", 1, false, true, NULL, "GHz", "IPC,CPI" },
		{ "neoverse-n3", 2, false, true, NULL, "IPC CPI GHz", NULL },
		{ "neoverse-n1", 1, false, true, NULL, "IPC CPI GHz", NULL },
		{ "zen4", 1, false, true, NULL, "GHz", "IPC,CPI" },
		{ "zen4", 1, true, true, NULL, "IPC CPI GHz", NULL },
		{ "zen5", 2, false, true, NULL, "IPC CPI GHz", NULL },
		{ "spr", 2, true, true, NULL, "", "IPC,CPI,GHz" },
		{ "spr", 1, true, true, NULL, "IPC CPI GHz", NULL },
		{ "spr", 2, false, true, NULL, "IPC CPI GHz", NULL },
		{ "gnr", 2, true, true, NULL, "", "IPC,CPI,GHz" },
		{ "skx", 2, true, true, NULL, "IPC CPI GHz", NULL },
		/* --metrics counts the defaults too; compute every one */
		{ "spr", 2, true, true, "Time", "IPC CPI GHz Time", NULL },
		{ "neoverse-v1", 1, false, false, NULL, "IPC CPI GHz", NULL },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct model_options o = { .level = cases[i].level, .metrics = cases[i].metrics,
					   .nmi_watchdog = cases[i].watchdog,
					   .spare_tree = cases[i].spare };
		struct model *m = NULL;
		struct plan *p;

		CHECK_INT(model_load_builtin(cases[i].model, &m), 0);
		if (!m)
			continue;
		p = plan_checked(m, &o, cases[i].names, i);
		if (p) {
			CHECK(cases[i].left_out ? p->defaults_left_out &&
				      !strcmp(p->defaults_left_out, cases[i].left_out)
						: !p->defaults_left_out,
			      "case %zu (%s): left out '%s'", i, cases[i].model,
			      p->defaults_left_out ? p->defaults_left_out : "");
			/* what is counted leaves the tree as it is */
			CHECK(!cases[i].spare || cases[i].metrics ||
				      (p->tree.multiplexed ? p->base.nr_groups == p->tree.nr_groups
							   : !p->base.multiplexed),
			      "case %zu (%s): the defaults change the tree's counting", i,
			      cases[i].model);
		}
		plan_free(p);
		model_free(m);
	}
}

int main(void)
{
	test_loader();
	test_cpu_s();
	test_plan();
	test_areas();
	test_areas_spr();
	test_defaults_beside_tree();
	test_check();
	test_option();
	test_measurement();
	test_list_events();
	test_list_too_large();
	return test_done("metrics");
}
