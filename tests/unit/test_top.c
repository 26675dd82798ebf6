// SPDX-License-Identifier: GPL-2.0
/*
 * --top N (top.h): which cgroups an interval's terminal view keeps (the N busiest by the time
 * they ran, ties in path order; only rows the terminal shows are ranked), what goes with
 * the ones left out (their per-CPU and thread rows), where the "+ K others" row goes (after
 * the cgroups and threads, before the interrupt scopes), and what it holds: the others' sums
 * added up, a cgroup inside another of them once. Then the terminal's text, byte for byte,
 * for the software model, with and without --top, and a tree model's "+ K others" tree: the
 * tree of the others' counts summed.
 */
#include <stdlib.h>

#include "output.h"
#include "synth.h"
#include "test.h"
#include "top.h"

/* sw's events: cpu-clock, context-switches, cpu-migrations, page-faults. */
struct row {
	enum scope_kind kind;
	const char *name;	/* a cgroup's path, an irq scope's name */
	int cpu, tid;
	__u64 ran_ns;		/* every event's enabled (and running) time; 0: idle */
	__u64 switches;
};

static void add_rows(struct interval *iv, const struct run *run, const struct row *rows, int n)
{
	for (int i = 0; i < n; i++) {
		const struct row *r = &rows[i];
		struct scope *s = r->kind == SCOPE_TASK ?
			interval_add_task(iv, run, r->name, r->tid, r->tid) :
			interval_add_scope(iv, run, r->kind, r->name, r->cpu);

		CHECK(s != NULL, "row %d", i);
		if (!s)
			continue;
		if (r->kind == SCOPE_TASK)
			snprintf(s->comm, sizeof(s->comm), "t%d", r->tid);
		for (int e = 0; e < run->nr_events; e++)
			s->sum[e] = (struct cgtma_count){ 0, r->ran_ns, r->ran_ns };
		s->sum[0].counter = r->ran_ns;		/* cpu-clock counts nanoseconds */
		s->sum[1].counter = r->switches;
		s->sum[3].counter = r->switches / 2;
	}
	interval_sort(iv);
	CHECK_INT(interval_derive(run, iv), 0);
}

/* The shown rows' labels, one a line ("system", "cpu1", "/a@cpu1", "/a:7", "irq:NET_RX"). */
static char *labels(const struct interval *iv)
{
	char *out = calloc(iv->nr_scopes + 1, 80), label[80];

	for (int i = 0; out && i < iv->nr_scopes; i++) {
		strcat(out, scope_label(&iv->scopes[i], true, label, sizeof(label)));
		strcat(out, "\n");
	}
	return out;
}

static const struct row busy[] = {
	{ SCOPE_SYSTEM, NULL, -1, 0, 2000000000, 5000 },
	{ SCOPE_CPU, NULL, 1, 0, 1000000000, 2500 },
	{ SCOPE_CGROUP, "/a", -1, 0, 300000000, 30 },
	{ SCOPE_CGROUP, "/a", 1, 0, 300000000, 30 },
	{ SCOPE_CGROUP, "/b", -1, 0, 900000000, 90 },
	{ SCOPE_CGROUP, "/b/x", -1, 0, 100000000, 10 },
	{ SCOPE_CGROUP, "/c", -1, 0, 500000000, 50 },
	{ SCOPE_CGROUP, "/c/y", -1, 0, 200000000, 20 },
	{ SCOPE_CGROUP, "/c/y/z", -1, 0, 150000000, 16 },
	{ SCOPE_CGROUP, "/d", -1, 0, 100000000, 12 },
	{ SCOPE_CGROUP, "/idle", -1, 0, 0, 0 },
	{ SCOPE_TASK, "/a", -1, 7, 200000000, 20 },
	{ SCOPE_TASK, "/b", -1, 8, 800000000, 80 },
	{ SCOPE_IRQ, "NET_RX", -1, 0, 10000000, 0 },
};

static const struct {
	int n;
	bool verbose;
	const char *want;	/* the rows shown (the idle one too: the terminal hides it) */
	__u64 others_ns;	/* the others' cpu-clock */
	__u64 others_switches;
} cases[] = {
	/* /b and /c are the busiest; /a, /b/x, /c/y, /c/y/z, /d the rest, /c/y/z in /c/y. */
	{ 2, false, "system\ncpu1\n/b\n/c\n/idle\n/b:8\n+ 5 others\nirq:NET_RX\n",
	  300000000 + 100000000 + 200000000 + 100000000, 30 + 10 + 20 + 12 },
	/* Ties (/b/x and /d at 0.1 s) go in path order: /b/x stays. */
	{ 6, false, "system\ncpu1\n/a\n/a@cpu1\n/b\n/b/x\n/c\n/c/y\n/c/y/z\n/idle\n/a:7\n"
	  "/b:8\n+ 1 other\nirq:NET_RX\n", 100000000, 12 },
	/* With -v the idle cgroup is ranked too: last. */
	{ 6, true, "system\ncpu1\n/a\n/a@cpu1\n/b\n/b/x\n/c\n/c/y\n/c/y/z\n/a:7\n/b:8\n"
	  "+ 2 others\nirq:NET_RX\n", 100000000, 12 },
	/* /a goes with its per-CPU row and its thread; /c/y and /c/y/z are in /c. */
	{ 1, false, "system\ncpu1\n/b\n/idle\n/b:8\n+ 6 others\nirq:NET_RX\n",
	  300000000 + 100000000 + 500000000 + 100000000, 30 + 10 + 50 + 12 },
};

static void check_view(void)
{
	struct synth sy;

	CHECK_INT(synth_open(&sy, "sw", 1, false, NULL, 0), 0);
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct interval iv = { .interval_s = 2, .time = sy.run.start_time + 2 };
		struct top_view v;
		const struct scope *o = NULL;
		char *got;
		int ret;

		sy.run.verbose = cases[c].verbose;
		add_rows(&iv, &sy.run, busy, sizeof(busy) / sizeof(busy[0]));
		ret = top_view_make(&sy.run, &iv, cases[c].n, &v);
		CHECK_INT(ret, 1);
		if (ret != 1) {
			interval_free(&iv);
			continue;
		}
		got = labels(&v.shown);
		CHECK(got && !strcmp(got, cases[c].want), "--top %d: got\n%s\nwant\n%s",
		      cases[c].n, got, cases[c].want);
		free(got);
		for (int i = 0; i < v.shown.nr_scopes; i++)
			if (v.shown.scopes[i].cgroup && v.shown.scopes[i].cgroup[0] == '+')
				o = &v.shown.scopes[i];
		CHECK(o != NULL, "no others row");
		if (o) {
			CHECK_INT(o->sum[0].counter, cases[c].others_ns);
			CHECK_INT(o->sum[0].enabled, cases[c].others_ns);
			CHECK_INT(o->sum[1].counter, cases[c].others_switches);
			/* Derived as every row: CPUs over the interval's 2 s. */
			CHECK_NEAR(o->tma.metric[0], cases[c].others_ns / 2e9, 1e-12);
			CHECK(o->ran && !o->removed && o->cpu == -1, "the others row's state");
		}
		/* The interval's own fields come along. */
		CHECK(v.shown.time == iv.time && v.shown.interval_s == 2, "times");
		top_view_release(&v);
		interval_free(&iv);
	}
	sy.run.verbose = false;
	/* Four ranked rows (the idle one is not, without -v): --top 4 leaves iv as it is. */
	{
		static const struct row few[] = {
			{ SCOPE_SYSTEM, NULL, -1, 0, 2000000000, 5000 },
			{ SCOPE_CGROUP, "/a", -1, 0, 1, 1 }, { SCOPE_CGROUP, "/b", -1, 0, 1, 1 },
			{ SCOPE_CGROUP, "/c", -1, 0, 1, 1 }, { SCOPE_CGROUP, "/d", -1, 0, 1, 1 },
			{ SCOPE_CGROUP, "/idle", -1, 0, 0, 0 },
		};
		struct interval iv = { .interval_s = 1 };
		struct top_view v;

		add_rows(&iv, &sy.run, few, sizeof(few) / sizeof(few[0]));
		CHECK_INT(top_view_make(&sy.run, &iv, 4, &v), 0);
		CHECK_INT(top_view_make(&sy.run, &iv, 3, &v), 1);
		top_view_release(&v);
		interval_free(&iv);
	}
	synth_close(&sy);
}

static char *render(const struct run *run, const struct interval *iv, int top)
{
	FILE *f = tmpfile();
	struct output *o = NULL;
	char *text;

	if (!f || output_text_open(f, top, &o))
		return NULL;
	CHECK_INT(o->ops->interval(o, run, iv), 0);
	output_close(o);
	text = synth_slurp(f);
	fclose(f);
	return text;
}

/* The text after the interval's header line (the local time), or "". */
static const char *body(const char *text)
{
	const char *nl = text ? strchr(text, '\n') : NULL;

	return nl ? nl : "";
}

/*
 * A cgroup kept off the CPU all interval (it waited: starved, not idle) is a row the
 * terminal shows, so --top ranks it: it goes into "+ K others", which shows though none of
 * its cgroups ran, and only the idle one is counted as not having run.
 */
static void check_starved(struct synth *sy)
{
	static const struct row rows[] = {
		{ SCOPE_SYSTEM, NULL, -1, 0, 2000000000, 5000 },
		{ SCOPE_CGROUP, "/web", -1, 0, 900000000, 90 },
		{ SCOPE_CGROUP, "/db", -1, 0, 0, 0 },
		{ SCOPE_CGROUP, "/idle", -1, 0, 0, 0 },
	};
	struct interval iv = { .interval_s = 2, .time = 1700000002 };
	char *text;

	add_rows(&iv, &sy->run, rows, sizeof(rows) / sizeof(rows[0]));
	for (int i = 0; i < iv.nr_scopes; i++)
		if (iv.scopes[i].cgroup && !strcmp(iv.scopes[i].cgroup, "/db")) {
			iv.scopes[i].noise.has = NOISE_WAIT;
			iv.scopes[i].noise.wait = 0.9;
		}
	text = render(&sy->run, &iv, 1);
	CHECK_STR(body(text), "\n"
"scope       CPU_Utilization  Context_Switches    CPU_Migrations       Page_Faults\n"
"                       CPUs                /s                /s                /s\n"
"system                1.000          2500.000             0.000          1250.000\n"
"/web                  0.450            45.000             0.000            22.500\n"
"+ 1 other                 -                 -                 -                 -\n"
"(1 tracked cgroup did not run; -v shows it)\n"
"\n");
	free(text);
	/* Without --top the starved row is there, with what kept it off. */
	text = render(&sy->run, &iv, 0);
	CHECK(text && strstr(text, "\n/db ") && strstr(text, "\n  /db: noise: wait 0.90 s/s") &&
	      strstr(text, "(1 tracked cgroup did not run;"), "without --top:\n%s", text);
	free(text);
	interval_free(&iv);
}

/* The software model's table, byte for byte, with --top and without; a starved cgroup's. */
static void check_table(void)
{
	static const struct row rows[] = {
		{ SCOPE_SYSTEM, NULL, -1, 0, 2000000000, 5000 },
		{ SCOPE_CGROUP, "/web", -1, 0, 900000000, 90 },
		{ SCOPE_CGROUP, "/db", -1, 0, 500000000, 50 },
		{ SCOPE_CGROUP, "/batch", -1, 0, 300000000, 33 },
		{ SCOPE_CGROUP, "/idle", -1, 0, 0, 0 },
	};
	struct interval iv = { .interval_s = 2, .time = 1700000002 };
	struct synth sy;
	char *text;

	CHECK_INT(synth_open(&sy, "sw", 1, false, NULL, 0), 0);
	add_rows(&iv, &sy.run, rows, sizeof(rows) / sizeof(rows[0]));
	text = render(&sy.run, &iv, 1);
	CHECK_STR(body(text), "\n"
"scope        CPU_Utilization  Context_Switches    CPU_Migrations       Page_Faults\n"
"                        CPUs                /s                /s                /s\n"
"system                 1.000          2500.000             0.000          1250.000\n"
"/web                   0.450            45.000             0.000            22.500\n"
"+ 2 others             0.400            41.500             0.000            20.500\n"
"(1 tracked cgroup did not run; -v shows it)\n"
"\n");
	free(text);
	/* Without --top, and with one as large as the cgroups: every row. */
	for (int top = 0; top <= 3; top += 3) {
		text = render(&sy.run, &iv, top);
		CHECK_STR(body(text), "\n"
"scope    CPU_Utilization  Context_Switches    CPU_Migrations       Page_Faults\n"
"                    CPUs                /s                /s                /s\n"
"system             1.000          2500.000             0.000          1250.000\n"
"/batch             0.150            16.500             0.000             8.000\n"
"/db                0.250            25.000             0.000            12.500\n"
"/web               0.450            45.000             0.000            22.500\n"
"(1 tracked cgroup did not run; -v shows it)\n"
"\n");
		free(text);
	}
	interval_free(&iv);
	check_starved(&sy);
	synth_close(&sy);
}

/*
 * A tree model: the others' tree is the one of their counts summed (two vectors' counts,
 * each tree unlike the sum's), under its "+ K others" line.
 */
static void check_tree(void)
{
	json_object *vectors = json_object_from_file("tests/vectors/spr-perf-metrics.json");
	json_object *c0 = NULL, *c1 = NULL;
	struct interval iv = { .interval_s = 1, .time = 1700000001 }, want = iv;
	struct top_view v;
	struct scope *sum;
	struct synth sy;
	bool differs[2] = {};
	char *text;
	int b = -1, c = -1;

	if (vectors) {
		json_object_object_get_ex(json_object_array_get_idx(vectors, 0), "counts", &c0);
		json_object_object_get_ex(json_object_array_get_idx(vectors, 1), "counts", &c1);
	}
	CHECK(c0 && c1, "spr-perf-metrics.json");
	if (!c0 || !c1 || synth_open(&sy, "spr", 2, true, NULL, 0)) {
		json_object_put(vectors);
		return;
	}
	CHECK(synth_scope(&sy, &iv, SCOPE_SYSTEM, NULL, -1, c0, 4) &&
	      synth_scope(&sy, &iv, SCOPE_CGROUP, "/a", -1, c0, 2) &&
	      synth_scope(&sy, &iv, SCOPE_CGROUP, "/b", -1, c0, 1) &&
	      synth_scope(&sy, &iv, SCOPE_CGROUP, "/c", -1, c1, 1), "spr scopes");
	/* Twice the time for /a: the busiest. */
	for (int e = 0; iv.nr_scopes == 4 && e < sy.run.nr_events; e++)
		iv.scopes[1].sum[e].enabled = iv.scopes[1].sum[e].running = 2 * SYNTH_ENABLED;
	interval_sort(&iv);
	CHECK_INT(interval_derive(&sy.run, &iv), 0);
	for (int i = 0; i < iv.nr_scopes; i++)
		if (iv.scopes[i].cgroup && !strcmp(iv.scopes[i].cgroup, "/b"))
			b = i;
		else if (iv.scopes[i].cgroup && !strcmp(iv.scopes[i].cgroup, "/c"))
			c = i;
	sum = interval_add_scope(&want, &sy.run, SCOPE_CGROUP, "/b+c", -1);
	CHECK(b >= 0 && c >= 0 && sum, "scopes");
	if (b < 0 || c < 0 || !sum)
		goto out;
	for (int e = 0; e < sy.run.nr_events; e++) {
		sum->sum[e].counter = iv.scopes[b].sum[e].counter + iv.scopes[c].sum[e].counter;
		sum->sum[e].enabled = iv.scopes[b].sum[e].enabled + iv.scopes[c].sum[e].enabled;
		sum->sum[e].running = iv.scopes[b].sum[e].running + iv.scopes[c].sum[e].running;
	}
	CHECK_INT(interval_derive(&sy.run, &want), 0);
	CHECK_INT(top_view_make(&sy.run, &iv, 1, &v), 1);
	CHECK_INT(v.shown.nr_scopes, 3);
	if (v.shown.nr_scopes == 3) {
		const struct scope *o = &v.shown.scopes[2];

		CHECK_STR(o->cgroup, "+ 2 others");
		for (int n = 0; n < sy.plan->nr_nodes; n++) {
			double w = want.scopes[0].tma.value[n];

			CHECK(o->tma.value[n] == w, "node %s: %g, want %g",
			      sy.plan->nodes[n].full_name, o->tma.value[n], w);
			differs[0] |= fabs(o->tma.value[n] - iv.scopes[b].tma.value[n]) > 1e-3;
			differs[1] |= fabs(o->tma.value[n] - iv.scopes[c].tma.value[n]) > 1e-3;
		}
		CHECK(differs[0] && differs[1], "the sum's tree is one of its parts'");
	}
	top_view_release(&v);
	text = render(&sy.run, &iv, 1);
	CHECK(text && strstr(text, "\n/a\n") && strstr(text, "\n+ 2 others\n  ") &&
	      !strstr(text, "\n/b\n") && !strstr(text, "\n/c\n"), "tree:\n%s", text);
	free(text);
out:
	interval_free(&want);
	interval_free(&iv);
	synth_close(&sy);
	json_object_put(vectors);
}

int main(void)
{
	check_view();
	check_table();
	check_tree();
	return test_done("top");
}
