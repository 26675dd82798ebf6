// SPDX-License-Identifier: GPL-2.0
/*
 * report --html: which charts a page has and how they are named. A container's cgroup is
 * titled by the container's name (its path stays in data-scope); a -T record's threads are
 * charted after their cgroup; interrupt scopes after the cgroups, from the run's start; the
 * header counts cgroups, threads and interrupt scopes apart; a record's samples give a flame
 * graph per cgroup, its frames as wide as their share; every number in one format.
 */
#include <stdlib.h>
#include <unistd.h>

#include "output.h"
#include "profile_fixture.h"
#include "synth.h"
#include "test.h"

static const char *const events[] = { "cpu-clock", "context-switches" };
#define LIBPOD "/machine/libpod-0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

/* A scope that ran: every event enabled and running the whole second. */
static struct scope *ran(struct scope *s, __u64 count)
{
	for (int e = 0; s && e < 2; e++)
		s->sum[e] = (struct cgtma_count){ count + e, SYNTH_ENABLED, SYNTH_ENABLED };
	return s;
}

static void add_interval(struct synth *sy, struct interval *iv, bool summary, bool irq)
{
	const struct cgroup_names web = { "web", NULL, NULL };
	struct scope *cg, *t;

	memset(iv, 0, sizeof(*iv));
	iv->summary = summary;
	iv->time = sy->run.start_time + 1;
	iv->interval_s = 1;
	CHECK(ran(interval_add_scope(iv, &sy->run, SCOPE_SYSTEM, NULL, -1), 3000) != NULL, "sys");
	cg = ran(interval_add_scope(iv, &sy->run, SCOPE_CGROUP, LIBPOD, -1), 1000);
	CHECK(cg && !scope_set_names(cg, &web), "container");
	CHECK(ran(interval_add_scope(iv, &sy->run, SCOPE_CGROUP, "/plain", -1), 500) != NULL, "cg");
	t = ran(interval_add_task(iv, &sy->run, LIBPOD, 41, 42), 900);
	CHECK(t && !scope_set_names(t, &web), "thread");
	if (t)
		snprintf(t->comm, sizeof(t->comm), "nginx");
	if (irq)
		CHECK(ran(interval_add_scope(iv, &sy->run, SCOPE_IRQ, "NET_RX", -1), 20) != NULL,
		      "irq");
	interval_sort(iv);
	CHECK_INT(report_derive(&sy->run, iv), 0);
}

/* The page's charts, "KIND:SCOPE" in page order, one per line. */
static void charts_of(const char *page, char *buf, size_t len)
{
	const char *tag = "<svg class=\"cgtma-chart\" data-kind=\"";
	size_t at = 0;

	buf[0] = '\0';
	for (const char *p = strstr(page, tag); p; p = strstr(p + 1, tag)) {
		const char *k = p + strlen(tag), *ke = strchr(k, '"');
		const char *sc = strstr(ke, "data-scope=\"") + 12, *se = strchr(sc, '"');

		at += snprintf(buf + at, at < len ? len - at : 0, "%.*s:%.*s\n", (int)(ke - k), k,
			       (int)(se - sc), sc);
	}
}

/* The width of the first frame titled "NAME (" in s, or -1. */
static double frame_width(const char *s, const char *name, char *title, size_t len)
{
	char key[128];
	const char *t, *w;

	snprintf(key, sizeof(key), "<title>%s (", name);
	t = s ? strstr(s, key) : NULL;
	w = t ? strstr(t, "width=\"") : NULL;
	if (!w)
		return -1;
	snprintf(title, len, "%.*s", (int)(strstr(t, "</title>") - t - 7), t + 7);
	return atof(w + 7);
}

/*
 * Flame graphs from a record's samples: one per sampled cgroup, under its chart (or in a
 * section of its own when no interval named it), each frame as wide as its share of the
 * cgroup's samples of the first event, with a title saying it.
 */
/*
 * A cgroup made again under its path (a restarted container): a chart for each, in the
 * order they came, each titled with its id.
 */
/*
 * A page at path (a mkstemp() template), begun for an -e run of events: false when it did not
 * open (the checks said why).
 */
static bool open_page(char *path, struct synth *sy, struct output **o)
{
	int fd = mkstemp(path);

	CHECK(fd >= 0, "mkstemp");
	if (fd < 0)
		return false;
	close(fd);
	CHECK_INT(synth_open(sy, NULL, 1, false, events, 2), 0);
	*o = NULL;
	CHECK_INT(output_html_open(path, o), 0);
	if (!*o)
		return false;
	CHECK_INT((*o)->ops->begin(*o, &sy->run), 0);
	return true;
}

/* Interval iv (the summary when last) sorted and derived, through the page's sink o. */
static void emit_sorted(struct output *o, struct synth *sy, struct interval *iv, bool last)
{
	interval_sort(iv);
	CHECK_INT(report_derive(&sy->run, iv), 0);
	CHECK_INT(last ? o->ops->summary(o, &sy->run, iv) : o->ops->interval(o, &sy->run, iv), 0);
}

/* The page written at path, read back (NULL: none) and removed; its n intervals freed. */
static char *close_page(struct output *o, const char *path, struct interval *iv, int n)
{
	char *page;

	output_close(o);
	for (int k = 0; k < n; k++)
		interval_free(&iv[k]);
	page = synth_read_file(path);
	unlink(path);
	return page;
}

static void test_incarnations(void)
{
	char path[] = "/tmp/cgtma-test-html.XXXXXX", charts[2048] = "";
	struct interval iv[3] = {};
	struct output *o = NULL;
	struct synth sy;
	struct scope *sc;
	char *page;

	if (!open_page(path, &sy, &o))
		return;
	for (int k = 0; k < 3; k++) {
		iv[k].time = sy.run.start_time + k + 1;
		iv[k].interval_s = 1;
		iv[k].summary = k == 2;
		ran(interval_add_scope(&iv[k], &sy.run, SCOPE_SYSTEM, NULL, -1), 100);
		/* The first one in the first interval (and removed), the second after. */
		if (k != 1) {
			sc = ran(interval_add_scope(&iv[k], &sy.run, SCOPE_CGROUP, "/web", -1), 10);
			if (sc) {
				sc->cgroup_id = 10;
				sc->removed = true;
			}
		}
		if (k != 0) {
			sc = ran(interval_add_scope(&iv[k], &sy.run, SCOPE_CGROUP, "/web", -1), 20);
			if (sc)
				sc->cgroup_id = 20;
		}
		emit_sorted(o, &sy, &iv[k], k == 2);
	}
	page = close_page(o, path, iv, 3);
	charts_of(page ? page : "", charts, sizeof(charts));
	CHECK(!strcmp(charts, "system:system\ncgroup:/web\ncgroup:/web\n"), "charts:\n%s", charts);
	CHECK(page && strstr(page, "<h2>/web (id 10)") && strstr(page, "<h2>/web (id 20)") &&
	      strstr(page, "<h2>/web (id 10)") < strstr(page, "<h2>/web (id 20)"),
	      "the two incarnations' titles");
	free(page);
	synth_close(&sy);
}

static void test_flames(void)
{
	char path[] = "/tmp/cgtma-test-html.XXXXXX", title[128];
	struct output *o = NULL;
	struct interval iv = {};
	struct fixture_ids id;
	struct profile p;
	struct synth sy;
	const char *web, *db;
	char *page;
	int fd = mkstemp(path), n = 0;

	CHECK(fd >= 0, "mkstemp");
	if (fd < 0)
		return;
	close(fd);
	CHECK_INT(profile_fixture(&p, &id), 0);
	CHECK_INT(synth_open(&sy, NULL, 1, false, events, 2), 0);
	CHECK_INT(output_html_open(path, &o), 0);
	if (!o)
		return;
	outputs_profile(&o, 1, &p);
	CHECK_INT(o->ops->begin(o, &sy.run), 0);
	iv.time = sy.run.start_time + 1;
	iv.interval_s = 1;
	CHECK(ran(interval_add_scope(&iv, &sy.run, SCOPE_CGROUP, "/web", -1), 10) != NULL, "web");
	CHECK_INT(report_derive(&sy.run, &iv), 0);
	CHECK_INT(o->ops->interval(o, &sy.run, &iv), 0);
	iv.summary = true;
	CHECK_INT(o->ops->summary(o, &sy.run, &iv), 0);
	output_close(o);
	interval_free(&iv);
	page = synth_read_file(path);
	unlink(path);
	for (const char *s = page; s && (s = strstr(s, "<svg class=\"cgtma-flame\"")); s++)
		n++;
	CHECK_INT(n, 2);
	/* /web's is in its chart's section; /db, sampled but in no interval, has its own. */
	web = page ? strstr(page, "<svg class=\"cgtma-flame\" data-scope=\"/web\" "
				  "data-event=\"cpu-clock\" data-samples=\"8\"") : NULL;
	db = page ? strstr(page, "<h2>/db</h2>\n<p class=\"summary\">Sampled stacks: cpu-clock, "
				 "3 samples") : NULL;
	CHECK(web && strstr(page, "data-scope=\"/web\" width") < web &&
	      !memmem(strstr(page, "data-scope=\"/web\" width"),
		      web - strstr(page, "data-scope=\"/web\" width"), "<section", 8),
	      "/web's flame graph is not under its chart");
	CHECK(db && db > web, "/db's flame graph");
	/* Widths: the share of the scope's samples of 1100 pixels. */
	CHECK_NEAR(frame_width(web, "web", title, sizeof(title)), 1100.0, 0.01);
	CHECK_NEAR(frame_width(web, "spin_web", title, sizeof(title)), 1100.0, 0.01);
	CHECK(!strcmp(title, "spin_web (8 samples, 100.00 %)"), "title %s", title);
	CHECK_NEAR(frame_width(web, "asm_sysvec", title, sizeof(title)), 1100 / 8.0, 0.01);
	CHECK(!strcmp(title, "asm_sysvec (1 sample, 12.50 %)"), "title %s", title);
	CHECK_NEAR(frame_width(db, "spin_db", title, sizeof(title)), 1100 * 2 / 3.0, 0.01);
	CHECK(!strcmp(title, "spin_db (2 samples, 66.67 %)"), "title %s", title);
	CHECK_NEAR(frame_width(db, "spin+0x1abc", title, sizeof(title)), 1100 / 3.0, 0.01);
	CHECK(web && db && strstr(web, "spin_db") > db, "/db's frames in /web's graph");
	CHECK(page && !strstr(page, "<script") && !strstr(page, "http"), "fetches or scripts");
	free(page);
	synth_close(&sy);
	profile_release(&p);
}

/*
 * A tree with the model's metrics: under each chart's tree and bottleneck, IPC and GHz over
 * time (CPI, IPC's inverse, is not charted), each hatched where the scope did not run and
 * marked like the rest where the interval is not exact; the summary line gives their whole
 * run's values. A plan made here, its results filled in as tma_compute() would.
 */
static void test_tree_metrics(void)
{
	static const char *const ev[] = { "cycles" };
	static struct plan_node nodes[] = {
		{ .name = "Frontend_Bound", .full_name = "Frontend_Bound", .level = 1,
		  .parent = -1 },
		{ .name = "Backend_Bound", .full_name = "Backend_Bound", .level = 1, .parent = -1 },
	};
	static struct plan_metric metrics[] = {
		{ .name = "IPC", .unit = "" }, { .name = "CPI", .unit = "" },
		{ .name = "GHz", .unit = "GHz" },
	};
	static struct plan plan = { .nr_events = 1, .nr_nodes = 2, .nodes = nodes,
				    .nr_metrics = 3, .metrics = metrics };
	struct run run = { .model = "t", .plan = &plan, .nr_events = 1, .event_names = ev,
			   .level = 1, .cgroups = true, .start_time = 1700000000,
			   .interval_ms = 1000 };
	/* Per interval (the third the summary): the cgroup's IPC, GHz; NAN: it did not run. */
	static const double ipc[3] = { 0.65, NAN, 0.27 }, ghz[3] = { 2.9, NAN, 2.4 };
	char path[] = "/tmp/cgtma-test-html.XXXXXX";
	struct interval iv[3] = {};
	struct output *o = NULL;
	const char *web, *panel;
	char *page = NULL;
	int fd = mkstemp(path);

	CHECK(fd >= 0, "mkstemp");
	if (fd < 0)
		return;
	close(fd);
	for (int k = 0; k < 3; k++) {
		iv[k].time = run.start_time + (k < 2 ? k + 1 : 2);
		iv[k].interval_s = k < 2 ? 1 : 2;
		iv[k].summary = k == 2;
		iv[k].missed_slices = k == 0;
		for (int i = 0; i < 2; i++) {
			struct scope *sc = interval_add_scope(&iv[k], &run, i ? SCOPE_CGROUP :
							      SCOPE_SYSTEM, i ? "/web" : NULL, -1);
			bool idle = i && isnan(ipc[k]);

			if (!sc || synth_result(&sc->tma, &plan)) {
				CHECK(0, "scope");
				goto out;
			}
			sc->has_tma = true;
			sc->ran = !idle;
			sc->state[0] = idle ? COUNT_IDLE : COUNT_OK;
			sc->multiplex[0] = idle ? NAN : 1;
			sc->sum[0] = (struct cgtma_count){ idle ? 0 : 100, idle ? 0 : 10,
							    idle ? 0 : 10 };
			for (int n = 0; n < 2 && !idle; n++) {
				sc->tma.value[n] = n ? 0.6 : 0.4;
				sc->tma.counted[n] = true;
			}
			sc->tma.bottleneck = idle ? -1 : 1;
			sc->tma.metric[0] = i ? ipc[k] : 1.5;
			sc->tma.metric[1] = 1 / sc->tma.metric[0];
			sc->tma.metric[2] = i ? ghz[k] : 3;
			for (int m = 0; m < 3; m++)
				sc->tma.metric_counted[m] = !idle;
		}
	}
	CHECK_INT(output_html_open(path, &o), 0);
	if (!o)
		goto out;
	CHECK_INT(o->ops->begin(o, &run), 0);
	for (int k = 0; k < 3; k++)
		CHECK_INT((k == 2 ? o->ops->summary : o->ops->interval)(o, &run, &iv[k]), 0);
	output_close(o);
	page = synth_read_file(path);
	web = page ? strstr(page, "<h2>/web</h2>") : NULL;
	CHECK(web != NULL, "no chart of /web");
	if (!web)
		goto out;
	/* The summary line: the level-1 nodes, then the metrics charted, then the bottleneck. */
	CHECK(strstr(web, "Backend_Bound <b>60.0 %</b> &middot; IPC <b>0.27</b> &middot; GHz "
		     "<b>2.4 GHz</b> &mdash; bottleneck <b>Backend_Bound</b>"), "summary: %.400s",
	      strstr(web, "<p class=\"summary\">"));
	CHECK(!strstr(page, ">CPI<") && !strstr(page, "CPI <b>"), "CPI charted");
	/* The panels, under the bottleneck strip: IPC's title, its line, /web's idle hatch. */
	panel = strstr(web, "<text class=\"ptitle\" x=\"64\" y=\"318.0\">IPC</text>\n"
		       "<rect class=\"plot\" x=\"64\" y=\"324.0\" width=\"740\" "
		       "height=\"90\"/>");
	CHECK(panel && strstr(web, ">Bottleneck<") < panel, "no IPC panel under the strip");
	CHECK(strstr(web, "<text class=\"ptitle\" x=\"64\" y=\"460.0\">GHz</text>"),
	      "no GHz panel, titled once");
	CHECK(panel && strstr(panel, "stroke=\"#76b7b2\""), "IPC's line");
	CHECK(panel && strstr(panel, "fill=\"url(#idle1)\""), "the idle interval's hatch");
	/* Its axis and values as toplev prints an IPC. */
	CHECK(panel && strstr(panel, "text-anchor=\"end\">0.5</text>") &&
	      strstr(panel, "text-anchor=\"end\">1</text>"), "IPC's axis");
	CHECK(panel && strstr(panel, "<text class=\"legend num\" x=\"826\" y=\"352.0\">0.27</text>")
	      && strstr(panel, ">highest interval<") &&
	      strstr(panel, "<text class=\"legend num\" x=\"826\" y=\"390.0\">0.65</text>"),
	      "IPC's whole run and highest interval");
	CHECK(strstr(web, "<text class=\"legend num\" x=\"826\" y=\"494.0\">2.4 GHz</text>"),
	      "GHz's whole run");
	/* The chart's height holds them; the marked interval's tick is over it. */
	CHECK(strstr(page, "data-scope=\"/web\" width=\"1100\" height=\"586\""), "height: %.200s",
	      strstr(page, "data-scope=\"/web\""));
	CHECK(strstr(web, "<rect class=\"inexact\""), "no tick over the interval not exact");
out:
	free(page);
	unlink(path);
	for (int k = 0; k < 3; k++)
		interval_free(&iv[k]);
}

/* The height of the chart of data-scope scope, or -1. */
static int chart_height(const char *page, const char *scope)
{
	char tag[256];
	const char *at;

	snprintf(tag, sizeof(tag), "data-scope=\"%s\" width=\"1100\" height=\"", scope);
	at = strstr(page, tag);
	return at ? atoi(at + strlen(tag)) : -1;
}

/*
 * A cgroup's noise: two more panels in its chart (its wait; its antagonists, the busiest
 * over the run first, named as the terminal names them, the path in a title), none in a
 * chart of a cgroup without noise; under its title the whole run's noise in a line. The
 * second interval lists /batch alone: web took nothing there, and /batch took more over
 * the run.
 */
static void test_noise(void)
{
	char path[] = "/tmp/cgtma-test-html.XXXXXX";
	struct interval iv[3] = {};
	struct output *o = NULL;
	struct synth sy;
	char *page;
	const char *web, *batch;

	if (!open_page(path, &sy, &o))
		return;
	for (int k = 0; k < 3; k++) {
		struct scope *a;

		iv[k].time = sy.run.start_time + k + 1;
		iv[k].interval_s = 1;
		iv[k].summary = k == 2;
		ran(interval_add_scope(&iv[k], &sy.run, SCOPE_SYSTEM, NULL, -1), 100);
		ran(interval_add_scope(&iv[k], &sy.run, SCOPE_CGROUP, "/b", -1), 10);
		a = ran(interval_add_scope(&iv[k], &sy.run, SCOPE_CGROUP, "/a", -1), 10);
		if (a)
			synth_noise(&a->noise);
		if (a && k == 1) {
			a->noise = (struct noise){ .has = NOISE_WAIT | NOISE_PREEMPTED | NOISE_SMT,
						   .wait = 1.5, .nr_antagonists = 1 };
			a->noise.antagonists[0] = (struct antagonist){ .cgroup = "/batch",
								       .took = 0.25, .smt = 0.25 };
		}
		emit_sorted(o, &sy, &iv[k], k == 2);
	}
	page = close_page(o, path, iv, 3);
	CHECK(page != NULL, "no page");
	if (!page)
		goto out;
	CHECK(strstr(page, "<h2>/a</h2>\n<p class=\"summary\">") &&
	      strstr(page, "<p class=\"summary noise\">noise: wait <b>0.50 s/s</b>, pressure some "
			   "<b>56 %</b> full <b>12 %</b>, throttled <b>0.25 s/s</b> (12 times), "
			   "preempted <b>35.5/s</b>, SMT shared <b>0.06 s/s</b>; antagonists: web "
			   "took <b>0.38 s/s</b>, SMT <b>0.03 s/s</b> (preempted it 20.2/s) &middot; "
			   "/batch took <b>0.05 s/s</b>, SMT <b>0.02 s/s</b> (preempted it 3.5/s) "
			   "<span class=\"over\">(over the whole run)</span></p>\n"
			   "<svg class=\"cgtma-chart\" data-kind=\"cgroup\" data-scope=\"/a\""),
	      "the noise line under /a's title");
	CHECK_INT(chart_height(page, "/a") - chart_height(page, "/b"), 2 * (22 + 90 + 30));
	CHECK(strstr(page, ">Run-queue wait <") && strstr(page, ">Antagonists: CPU time they "
							    "took from it"),
	      "the noise panels' titles");
	CHECK(strstr(strstr(page, ">Run-queue wait <") + 1, ">Run-queue wait <") == NULL,
	      "a wait panel in a chart without noise");
	web = strstr(page, ">web<title>/kubepods/pod1/abc</title></text>");
	batch = strstr(page, ">/batch</text>");
	CHECK(web && batch && batch < web, "the legend: /batch (0.28 s/s over the run) before web "
	      "(0.20 s/s)");
	CHECK(strstr(page, "text-anchor=\"end\">0.06 s/s</text>") &&
	      strstr(page, "text-anchor=\"end\">0.41 s/s</text>") &&
	      strstr(page, "text-anchor=\"end\">0.50 s/s</text>"),
	      "the legends' whole-run values: /batch, web, the wait");
	free(page);
out:
	synth_close(&sy);
}

int main(void)
{
	char path[] = "/tmp/cgtma-test-html.XXXXXX", charts[2048] = "";
	struct interval iv[3];
	struct output *o = NULL;
	struct synth sy;
	char *page;
	FILE *f;
	int fd = mkstemp(path);

	CHECK(fd >= 0, "mkstemp");
	if (fd < 0)
		return test_done("html");
	close(fd);
	CHECK_INT(synth_open(&sy, NULL, 1, false, events, 2), 0);
	CHECK_INT(output_html_open(path, &o), 0);
	if (!o)
		return test_done("html");
	CHECK_INT(o->ops->begin(o, &sy.run), 0);
	/* NET_RX is idle (no row) in the first interval: its chart starts hatched, not blank. */
	add_interval(&sy, &iv[0], false, false);
	add_interval(&sy, &iv[1], false, true);
	add_interval(&sy, &iv[2], true, true);
	/* The second interval is not exact: a tick over it, and a line in the table. */
	iv[1].missed_slices = 2;
	iv[1].missed_max_ns = 1500000;
	CHECK_INT(o->ops->interval(o, &sy.run, &iv[0]), 0);
	CHECK_INT(o->ops->interval(o, &sy.run, &iv[1]), 0);
	CHECK_INT(o->ops->summary(o, &sy.run, &iv[2]), 0);
	output_close(o);
	for (int i = 0; i < 3; i++)
		interval_free(&iv[i]);

	f = fopen(path, "r");
	page = f && fseek(f, 0, SEEK_END) == 0 ? synth_slurp(f) : NULL;
	if (f)
		fclose(f);
	unlink(path);
	CHECK(page != NULL, "no page");
	if (!page)
		return test_done("html");
	charts_of(page, charts, sizeof(charts));
	CHECK(!strcmp(charts, "system:system\n"
			      "cgroup:" LIBPOD "\n"
			      "task:" LIBPOD ":42\n"
			      "cgroup:/plain\n"
			      "irq:irq:NET_RX\n"), "charts:\n%s", charts);
	CHECK(strstr(page, "<h2>web</h2>") != NULL, "the container's chart is not titled 'web'");
	CHECK(strstr(page, "<h2>nginx:42 in web</h2>") != NULL, "the thread's title");
	CHECK(strstr(page, "<h2>" LIBPOD) == NULL, "a chart titled by the libpod path");
	CHECK(strstr(page, "the system, 2 cgroups, 1 thread and 1 interrupt scope<") != NULL,
	      "the header's scopes");
	CHECK(strstr(page, "<tr class=\"inexact\"><th>Exact</th><td>1 of 2 intervals are not (red "
		     "ticks above the charts): 2 slices began with a switch or move the hook did "
		     "not see: at most 1.500 ms of their time may be another cgroup&#39;s</td>"),
	      "the table's line on exactness");
	{
		int ticks = 0;

		for (const char *t = page; (t = strstr(t, "<rect class=\"inexact\"")); t++)
			ticks++;
		/* One a chart (five charts), over the second interval only. */
		CHECK_INT(ticks, 5);
	}
	/* One number format: SI prefixes, the rate's unit joined to its prefix, no exponent. */
	CHECK(strstr(page, ">5 k<") && strstr(page, ">2.5 k<"), "the axis of 3000 /s: no 5 k, 2.5 k");
	CHECK(strstr(page, ">3 k/s<") && strstr(page, "<b>3 k/s</b>") && strstr(page, ">900 /s<"),
	      "the system's 3000 /s and the thread's 900 /s not as '3 k/s', '900 /s'");
	CHECK(strstr(page, "e+") == NULL, "a number with an exponent: %.60s", strstr(page, "e+") - 30);
	free(page);
	synth_close(&sy);
	test_flames();
	test_incarnations();
	test_tree_metrics();
	test_noise();
	return test_done("html");
}
