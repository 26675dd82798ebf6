// SPDX-License-Identifier: GPL-2.0
/*
 * The --prometheus sink: [ADDR:]PORT parsing and its errors, the page built from synthetic
 * intervals (families, labels and their escaping, counters carried across intervals, values
 * not counted left out, a removed cgroup dropping out, a thread's series kept while it
 * exists), a real model's tree on the page, and
 * what the HTTP server answers.
 * Serves on a free loopback port; needs no root.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "capture.h"
#include "output.h"
#include "report.h"
#include "synth.h"
#include "test.h"

static const char *const event_names[] = { "cpu-clock", "ev\"2" };

static struct plan_node nodes[] = {
	{ .name = "Frontend_Bound", .full_name = "Frontend_Bound", .level = 1, .parent = -1 },
	{ .name = "Fetch_Latency", .full_name = "Frontend_Bound.Fetch_Latency", .level = 2,
	  .parent = 0 },
};

static struct plan_metric metrics[] = {
	{ .name = "CPU_Utilization", .unit = "CPUs", .desc = "Busy CPUs\\cores\non average" },
	{ .name = "Cycles_per_Second", .unit = "/s", .desc = "Cycles per second" },
	{ .name = "IPC", .unit = "", .desc = "Instructions per cycle" },
	/* A name that needs escaping as a label value. */
	{ .name = "GHz \"avg\"", .unit = "GHz", .desc = "Average frequency" },
};

static struct plan plan = {
	.nr_events = 2,
	.nr_nodes = 2,
	.nodes = nodes,
	.nr_metrics = 4,
	.metrics = metrics,
};

static const struct run run = {
	.model = "test",
	.plan = &plan,
	.nr_events = 2,
	.event_names = event_names,
	.level = 2,
	.interval_ms = 1000,
	.kernel = "6.1.0",
	.cpu = "Test \"CPU\" @ 2\\GHz",
};

#define N2 { NAN, NAN }
#define N4 { NAN, NAN, NAN, NAN }

/* count[e] < 0: not counted (enabled, never running); NAN: idle. */
struct scope_spec {
	enum scope_kind kind;
	const char *cgroup;		/* an irq scope's name */
	int cpu;
	bool removed;
	double count[2];
	double node[2];		/* NAN: not counted */
	double metric[4];	/* NAN: not counted */
};

static void add_scope(struct interval *iv, const struct scope_spec *sp)
{
	struct scope *s = interval_add_scope(iv, &run, sp->kind, sp->cgroup, sp->cpu);
	struct tma_result *t;

	CHECK(s != NULL, "interval_add_scope failed");
	if (!s)
		return;
	s->removed = sp->removed;
	for (int e = 0; e < 2; e++) {
		if (isnan(sp->count[e])) {
			s->state[e] = COUNT_IDLE;
			s->count[e] = 0;
			s->multiplex[e] = NAN;
		} else if (sp->count[e] < 0) {
			s->state[e] = COUNT_NOT_COUNTED;
			s->count[e] = NAN;
			s->multiplex[e] = 0;
		} else {
			s->state[e] = COUNT_OK;
			s->count[e] = sp->count[e];
			s->multiplex[e] = e == 0 ? 1 : 0.5;
			s->ran = true;
		}
	}
	t = &s->tma;
	s->has_tma = true;
	CHECK_INT(synth_result(t, &plan), 0);
	for (int n = 0; n < 2; n++) {
		t->value[n] = sp->node[n];
		t->counted[n] = !isnan(sp->node[n]);
	}
	for (int m = 0; m < 4; m++) {
		t->metric[m] = sp->metric[m];
		t->metric_counted[m] = !isnan(sp->metric[m]);
	}
}

static void make_interval(struct interval *iv, const struct scope_spec *specs, int n)
{
	memset(iv, 0, sizeof(*iv));
	iv->time = 1700000000;
	iv->interval_s = 1;
	iv->has_bpf_stats = true;
	iv->bpf_run_time_ns = 1500000;
	iv->bpf_run_cnt = 42;
	for (int i = 0; i < n; i++)
		add_scope(iv, &specs[i]);
	/* As a run gives them to the sinks. */
	interval_sort(iv);
}

static bool has_line(const char *page, const char *line)
{
	size_t n = strlen(line);

	for (const char *p = page; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, line, n) && (p[n] == '\n' || p[n] == '\0'))
			return true;
	return false;
}

/* Lines that begin with prefix. */
static int count_lines(const char *page, const char *prefix)
{
	int n = 0;

	for (const char *p = page; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		n += !strncmp(p, prefix, strlen(prefix));
	return n;
}

#define CHECK_LINE(page, line) CHECK(has_line(page, line), "no line '%s' in:\n%s", line, page)
#define CHECK_NO_LINE(page, line) CHECK(!has_line(page, line), "line '%s' in:\n%s", line, page)
#define CHECK_NOT_IN(page, text) CHECK(!strstr(page, text), "'%s' in:\n%s", text, page)

/*
 * What promtool checks first: every sample's family was declared just before with one HELP
 * and one TYPE, each family once, no empty family.
 */
static void check_structure(const char *page)
{
	char fam[256] = "", seen[4096] = " ";
	int samples = -1;

	for (const char *l = page; *l; l = strchr(l, '\n') + 1) {
		const char *end = strchr(l, '\n');
		char name[260];
		size_t n;

		CHECK(end != NULL, "the page does not end with a newline");
		if (!end)
			return;
		if (!strncmp(l, "# HELP ", 7)) {
			CHECK(samples != 0, "family %s has no sample", fam);
			n = strcspn(l + 7, " ");
			snprintf(fam, sizeof(fam), "%.*s", (int)n, l + 7);
			snprintf(name, sizeof(name), " %s ", fam);
			CHECK(!strstr(seen, name), "family %s twice", fam);
			strncat(seen, name + 1, sizeof(seen) - strlen(seen) - 1);
			samples = 0;
		} else if (!strncmp(l, "# TYPE ", 7)) {
			CHECK(!strncmp(l + 7, fam, strlen(fam)) && l[7 + strlen(fam)] == ' ',
			      "TYPE of another family than HELP: %.*s", (int)(end - l), l);
		} else {
			n = strcspn(l, "{ ");
			CHECK(n == strlen(fam) && !strncmp(l, fam, n),
			      "sample outside its family %s: %.*s", fam, (int)(end - l), l);
			CHECK(!strstr(l, "NaN") || strstr(l, "NaN") > end, "NaN: %.*s",
			      (int)(end - l), l);
			samples++;
		}
	}
	CHECK(samples != 0, "family %s has no sample", fam);
}

static int free_port(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0), port = -1;

	if (fd >= 0 && !bind(fd, (struct sockaddr *)&a, sizeof(a)) &&
	    !getsockname(fd, (struct sockaddr *)&a, &len))
		port = ntohs(a.sin_port);
	if (fd >= 0)
		close(fd);
	return port;
}

/* The whole answer to one HTTP/1.0 request (the server closes after it), or NULL. */
static char *http_get(int port, const char *method, const char *path)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	size_t len = 0, cap = 1 << 16;
	char req[256], *buf = malloc(cap);
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	ssize_t n;

	if (!buf || fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)))
		goto fail;
	snprintf(req, sizeof(req), "%s %s HTTP/1.0\r\nHost: localhost\r\n\r\n", method, path);
	if (write(fd, req, strlen(req)) != (ssize_t)strlen(req))
		goto fail;
	while ((n = read(fd, buf + len, cap - len - 1)) > 0) {
		len += n;
		if (len + 1 == cap) {
			char *nb = realloc(buf, cap *= 2);

			if (!nb)
				goto fail;
			buf = nb;
		}
	}
	buf[len] = '\0';
	close(fd);
	return buf;
fail:
	if (fd >= 0)
		close(fd);
	free(buf);
	return NULL;
}

static void test_bad_listen(void)
{
	static const char *const bad[] = {
		"", "abc", "0", "65536", "99999999999999999999", "-1", "+9100", " 9100", "9100x",
		"127.0.0.1:", ":9100", "127.0.0.1:0", "::1:9100", "[::1]", "[::1:9100", "[]:9100",
		"[::1]9100", "1.2.3.4:5:6",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct output *o = NULL;
		struct capture c;
		char *err;
		int ret;

		capture_begin(&c, 2);
		ret = output_prometheus_open(bad[i], &o);
		err = capture_end(&c);
		CHECK(ret == -EINVAL, "'%s': got %d, want -EINVAL", bad[i], ret);
		CHECK(err && strstr(err, "--prometheus '") && strstr(err, bad[i]) &&
			      strstr(err, "[ADDR:]PORT") &&
			      strchr(err, '\n') == err + strlen(err) - 1,
		      "'%s': the message is '%s'", bad[i], err ? err : "");
		if (!ret)
			output_close(o);
		free(err);
	}
}

static void test_port_in_use(int port)
{
	struct output *o = NULL;
	struct capture c;
	char listen[64], want[128], *err;
	int ret;

	/* A second server on the same port: the error names the address and the reason. */
	snprintf(listen, sizeof(listen), "%d", port);
	capture_begin(&c, 2);
	ret = output_prometheus_open(listen, &o);
	err = capture_end(&c);
	CHECK_INT(ret, -EADDRINUSE);
	snprintf(want, sizeof(want),
		 "cgtma: cannot serve Prometheus on 127.0.0.1:%d: Address already in use\n", port);
	CHECK_STR(err, want);
	free(err);
	if (!ret)
		output_close(o);
}

static void test_page(void)
{
	/* Interval 1: the system, a cgroup with every character that needs escaping, one that
	 * stays, one removed in this interval, one that ran nothing (idle). */
	const struct scope_spec iv1[] = {
		{ SCOPE_SYSTEM, NULL, -1, false, { 3000, -1 }, { 0.25, NAN },
		  { 2.5, 1e9, NAN, 7 } },
		{ SCOPE_CGROUP, "/q\"uo\\te\nnl", -1, false, { 1000.4, 10 }, { 0.5, 0.125 },
		  { 1, 2, 3, 4 } },
		{ SCOPE_CGROUP, "/stays", -1, false, { 400, 4 }, N2, { 0.4, NAN, NAN, NAN } },
		{ SCOPE_CGROUP, "/gone", -1, true, { 600, 6 }, { 0.75, 0.5 }, N4 },
		{ SCOPE_CGROUP, "/idle", -1, false, N2, N2, N4 },
	};
	/* Interval 2: /gone is no more; /stays ran again, now counting the second event; a
	 * path removed and made again in this interval (two scopes, one label set). */
	const struct scope_spec iv2[] = {
		{ SCOPE_CGROUP, "/stays", -1, false, { 100, 2 }, { 0.5, NAN },
		  { 0.1, NAN, NAN, NAN } },
		{ SCOPE_SYSTEM, NULL, -1, false, { 2000, 20 }, { 0.3, 0.1 }, { 2, 1, 1, 1 } },
		{ SCOPE_CGROUP, "/again", -1, false, { 5, 1 }, { 0.9, NAN },
		  { 0.9, NAN, NAN, NAN } },
		{ SCOPE_CGROUP, "/again", -1, true, { 7, 1 }, { 0.1, NAN },
		  { 0.1, NAN, NAN, NAN } },
		{ SCOPE_CGROUP, "/gone2", -1, true, { 70, 7 }, N2, N4 },
	};
	/* Interval 3, per CPU: /again goes on from both scopes' counts; a new cgroup where
	 * /gone2 was starts from zero; the idle /q"uo... is gone now (its last row). */
	const struct scope_spec iv3[] = {
		{ SCOPE_SYSTEM, NULL, -1, false, { 10, 1 }, N2, N4 },
		{ SCOPE_CPU, NULL, 1, false, { 10, 1 }, N2, N4 },
		{ SCOPE_CGROUP, "/again", -1, false, { 8, 1 }, N2, N4 },
		{ SCOPE_CGROUP, "/again", 1, false, { 8, 1 }, N2, N4 },
		{ SCOPE_CGROUP, "/gone2", -1, false, { 3, 0 }, N2, N4 },
		{ SCOPE_CGROUP, "/q\"uo\\te\nnl", -1, true, { 0, 0 }, N2, N4 },
	};
	/* Interval 4: the system alone; idle cgroups stay, those gone are not. */
	const struct scope_spec iv4[] = {
		{ SCOPE_SYSTEM, NULL, -1, false, { 10, 1 }, N2, N4 },
	};
	struct interval iv;
	struct output *o = NULL;
	struct capture c;
	char listen[32], *page, *warn, *http;
	int port = free_port(), ret;

	CHECK(port > 0, "no free port");
	snprintf(listen, sizeof(listen), "127.0.0.1:%d", port);
	ret = output_prometheus_open(listen, &o);
	CHECK_INT(ret, 0);
	if (ret)
		return;
	{
		char name[64];

		snprintf(name, sizeof(name), "prometheus %s", listen);
		CHECK_STR(o->name, name);
	}
	page = output_prometheus_page(o);
	CHECK_STR(page, "");	/* before the run starts: an empty page, not an error */
	free(page);

	test_port_in_use(port);

	capture_begin(&c, 2);
	CHECK_INT(o->ops->begin(o, &run), 0);
	warn = capture_end(&c);
	CHECK_STR(warn, "");
	free(warn);
	page = output_prometheus_page(o);
	CHECK_LINE(page, "# TYPE cgtma_run_info gauge");
	CHECK_LINE(page, "cgtma_run_info{model=\"test\",cpu_model=\"Test \\\"CPU\\\" @ 2\\\\GHz\","
			 "kernel=\"6.1.0\",level=\"2\"} 1");
	CHECK_NOT_IN(page, "cgtma_events_total");
	check_structure(page);
	free(page);

	make_interval(&iv, iv1, sizeof(iv1) / sizeof(iv1[0]));
	CHECK_INT(o->ops->interval(o, &run, &iv), 0);
	interval_free(&iv);	/* the sink keeps nothing of it */
	page = output_prometheus_page(o);
	check_structure(page);
	CHECK_LINE(page, "# TYPE cgtma_events_total counter");
	CHECK_LINE(page, "cgtma_interval_seconds 1.000000");
	CHECK_LINE(page, "cgtma_interval_exact 1");
	CHECK_LINE(page, "cgtma_events_total{scope=\"system\",event=\"cpu-clock\"} 3000");
	/* Not counted: no sample (never NaN); idle: a zero count. */
	CHECK_NOT_IN(page, "cgtma_events_total{scope=\"system\",event=\"ev\\\"2\"}");
	CHECK_LINE(page, "cgtma_events_total{scope=\"cgroup\",cgroup=\"/q\\\"uo\\\\te\\nnl\","
			 "event=\"cpu-clock\"} 1000");
	CHECK_LINE(page, "cgtma_events_total{scope=\"cgroup\",cgroup=\"/q\\\"uo\\\\te\\nnl\","
			 "event=\"ev\\\"2\"} 10");
	CHECK_LINE(page, "cgtma_events_total{scope=\"cgroup\",cgroup=\"/idle\","
			 "event=\"cpu-clock\"} 0");
	CHECK_LINE(page, "cgtma_events_total{scope=\"cgroup\",cgroup=\"/gone\","
			 "event=\"cpu-clock\"} 600");
	CHECK_LINE(page, "# TYPE cgtma_multiplex_ratio gauge");
	CHECK_LINE(page, "cgtma_multiplex_ratio{scope=\"system\",event=\"ev\\\"2\"} 0");
	CHECK_LINE(page, "cgtma_multiplex_ratio{scope=\"cgroup\",cgroup=\"/stays\","
			 "event=\"ev\\\"2\"} 0.5");
	CHECK_NOT_IN(page, "cgtma_multiplex_ratio{scope=\"cgroup\",cgroup=\"/idle\"");
	CHECK_LINE(page, "# TYPE cgtma_topdown_ratio gauge");
	CHECK_LINE(page, "cgtma_topdown_ratio{scope=\"system\",node=\"Frontend_Bound\","
			 "level=\"1\"} 0.25");
	CHECK_NOT_IN(page, "cgtma_topdown_ratio{scope=\"system\","
			 "node=\"Frontend_Bound.Fetch_Latency\"");
	CHECK_LINE(page, "cgtma_topdown_ratio{scope=\"cgroup\",cgroup=\"/gone\","
			 "node=\"Frontend_Bound.Fetch_Latency\",level=\"2\"} 0.5");
	CHECK_NOT_IN(page, "cgtma_topdown_ratio{scope=\"cgroup\",cgroup=\"/stays\"");
	/* One family for the model's metrics: the metric by name, its unit where it has one. */
	CHECK_LINE(page, "# HELP cgtma_metric Flat metric of the model in the last interval: "
		   "metric is its name as the model spells it (toplev's or perf's: IPC, CPI, "
		   "GHz, CPU_Utilization, ...), unit its unit where it has one. Absent when an "
		   "event it reads was not counted.");
	CHECK_LINE(page, "# TYPE cgtma_metric gauge");
	CHECK_LINE(page, "cgtma_metric{scope=\"system\",metric=\"CPU_Utilization\","
			 "unit=\"CPUs\"} 2.5");
	CHECK_LINE(page, "cgtma_metric{scope=\"system\",metric=\"Cycles_per_Second\","
			 "unit=\"/s\"} 1000000000");
	CHECK_NOT_IN(page, "cgtma_metric{scope=\"system\",metric=\"IPC\"");
	CHECK_LINE(page, "cgtma_metric{scope=\"system\",metric=\"GHz \\\"avg\\\"\","
			 "unit=\"GHz\"} 7");
	CHECK_LINE(page, "cgtma_metric{scope=\"cgroup\",cgroup=\"/q\\\"uo\\\\te\\nnl\","
			 "metric=\"IPC\"} 3");
	CHECK_LINE(page, "cgtma_metric{scope=\"cgroup\",cgroup=\"/stays\","
			 "metric=\"CPU_Utilization\",unit=\"CPUs\"} 0.4");
	/* Not counted, or a scope without a tree: no sample. */
	CHECK_NOT_IN(page, "cgroup=\"/stays\",metric=\"IPC\"");
	CHECK_NOT_IN(page, "cgroup=\"/gone\",metric=");
	CHECK_INT(count_lines(page, "cgtma_metric{"), 8);
	CHECK_LINE(page, "cgtma_bpf_run_seconds_total 0.001500000");
	CHECK_LINE(page, "cgtma_bpf_runs_total 42");
	CHECK_NOT_IN(page, "NaN");

	/* The same page over HTTP, with the text format's content type. */
	http = http_get(port, "GET", "/metrics");
	CHECK(http && !strncmp(http, "HTTP/1.", 7) && !strncmp(http + 8, " 200 ", 5),
	      "GET /metrics: %s", http ? http : "(no answer)");
	CHECK(http &&
	      strstr(http, "\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n"),
	      "GET /metrics: %s", http ? http : "(no answer)");
	CHECK(http && strstr(http, "\r\n\r\n") && !strcmp(strstr(http, "\r\n\r\n") + 4, page),
	      "GET /metrics: the body differs from the page");
	free(http);
	http = http_get(port, "GET", "/nope");
	CHECK(http && !strncmp(http + 8, " 404 ", 5), "GET /nope: %s", http ? http : "(none)");
	free(http);
	http = http_get(port, "DELETE", "/metrics");
	CHECK(http && !strncmp(http + 8, " 405 ", 5) && strstr(http, "\r\nAllow: GET, HEAD\r\n"),
	      "DELETE /metrics: %s", http ? http : "(none)");
	free(http);
	free(page);

	make_interval(&iv, iv2, sizeof(iv2) / sizeof(iv2[0]));
	iv.interval_s = 0.5;
	iv.has_bpf_stats = false;
	iv.missed_slices = 2;	/* slices begun by a switch or move the hook did not see */
	iv.missed_max_ns = 1500000;
	iv.missed_unbounded = 1;
	CHECK_INT(o->ops->interval(o, &run, &iv), 0);
	interval_free(&iv);
	page = output_prometheus_page(o);
	check_structure(page);
	CHECK_LINE(page, "cgtma_interval_seconds 0.500000");
	CHECK_LINE(page, "cgtma_interval_exact 0");
	/* Counters of the marks: a scrape that misses the interval still sees them. */
	CHECK_LINE(page, "cgtma_inexact_intervals_total 1");
	CHECK_LINE(page, "cgtma_missed_slices_total 2");
	CHECK_LINE(page, "cgtma_missed_bound_seconds_total 0.001500000");
	CHECK_LINE(page, "cgtma_missed_unbounded_total 1");
	/* Counters go on from where they were; one counted for the first time starts. */
	CHECK_LINE(page, "cgtma_events_total{scope=\"system\",event=\"cpu-clock\"} 5000");
	CHECK_LINE(page, "cgtma_events_total{scope=\"system\",event=\"ev\\\"2\"} 20");
	CHECK_LINE(page, "cgtma_events_total{scope=\"cgroup\",cgroup=\"/stays\","
			 "event=\"cpu-clock\"} 500");
	CHECK_LINE(page, "cgtma_events_total{scope=\"cgroup\",cgroup=\"/stays\","
			 "event=\"ev\\\"2\"} 6");
	/* The removed cgroup was on the last page only. */
	CHECK_NOT_IN(page, "cgroup=\"/gone\"");
	/* One with no row now (idle, found by a glob) stays: its counters, and no gauges. */
	CHECK_LINE(page, "cgtma_events_total{scope=\"cgroup\",cgroup=\"/idle\","
			 "event=\"cpu-clock\"} 0");
	CHECK_LINE(page, "cgtma_events_total{scope=\"cgroup\",cgroup=\"/q\\\"uo\\\\te\\nnl\","
			 "event=\"cpu-clock\"} 1000");
	CHECK_NOT_IN(page, "cgtma_multiplex_ratio{scope=\"cgroup\",cgroup=\"/q");
	CHECK_NOT_IN(page, "cgtma_topdown_ratio{scope=\"cgroup\",cgroup=\"/q");
	/* One label set, one series: both scopes' counts, the live scope's gauges. */
	CHECK_LINE(page, "cgtma_events_total{scope=\"cgroup\",cgroup=\"/again\","
			 "event=\"cpu-clock\"} 12");
	CHECK_LINE(page, "cgtma_topdown_ratio{scope=\"cgroup\",cgroup=\"/again\","
			 "node=\"Frontend_Bound\",level=\"1\"} 0.9");
	CHECK_NOT_IN(page, "node=\"Frontend_Bound\",level=\"1\"} 0.1");
	CHECK_NOT_IN(page, "cgtma_bpf_");
	free(page);

	make_interval(&iv, iv3, sizeof(iv3) / sizeof(iv3[0]));
	CHECK_INT(o->ops->interval(o, &run, &iv), 0);
	interval_free(&iv);
	page = output_prometheus_page(o);
	check_structure(page);
	/* The live /again carried on; a cgroup on one CPU is its own series. */
	CHECK_LINE(page, "cgtma_events_total{scope=\"cgroup\",cgroup=\"/again\","
			 "event=\"cpu-clock\"} 20");
	CHECK_LINE(page, "cgtma_events_total{scope=\"cgroup\",cgroup=\"/again\",cpu=\"1\","
			 "event=\"cpu-clock\"} 8");
	CHECK_LINE(page, "cgtma_events_total{scope=\"cpu\",cpu=\"1\",event=\"ev\\\"2\"} 1");
	CHECK_LINE(page, "cgtma_events_total{scope=\"system\",event=\"cpu-clock\"} 5010");
	CHECK_LINE(page, "cgtma_events_total{scope=\"cgroup\",cgroup=\"/gone2\","
			 "event=\"cpu-clock\"} 3");
	CHECK_LINE(page, "cgtma_events_total{scope=\"cgroup\",cgroup=\"/stays\","
			 "event=\"cpu-clock\"} 500");
	/* Its last row: on this page, counters as they were. */
	CHECK_LINE(page, "cgtma_events_total{scope=\"cgroup\",cgroup=\"/q\\\"uo\\\\te\\nnl\","
			 "event=\"cpu-clock\"} 1000");
	/* Families without a sample are left out whole. */
	CHECK_NOT_IN(page, "cgtma_topdown_ratio");
	CHECK_NOT_IN(page, "cgtma_metric");
	free(page);

	make_interval(&iv, iv4, sizeof(iv4) / sizeof(iv4[0]));
	CHECK_INT(o->ops->interval(o, &run, &iv), 0);
	interval_free(&iv);
	page = output_prometheus_page(o);
	check_structure(page);
	CHECK_NOT_IN(page, "/q\\\"uo");
	CHECK_LINE(page, "cgtma_events_total{scope=\"cgroup\",cgroup=\"/stays\","
			 "event=\"cpu-clock\"} 500");
	CHECK_LINE(page, "cgtma_events_total{scope=\"cgroup\",cgroup=\"/again\",cpu=\"1\","
			 "event=\"cpu-clock\"} 8");
	/* A CPU's series without a row now is not kept: CPUs are always reported. */
	CHECK_NOT_IN(page, "scope=\"cpu\"");
	free(page);

	output_close(o);
	/* Closed: the port is free again. */
	ret = output_prometheus_open(listen, &o);
	CHECK_INT(ret, 0);
	if (!ret)
		output_close(o);
}

/*
 * A real model's Top-Down tree (spr, three levels, one vector's counts) for the system and a
 * cgroup: every node the tree computed is on the page with its level and value, the family
 * once, and the vector's level-2 nodes are there by their full names.
 */
static void test_real_model(void)
{
	json_object *all = json_object_from_file("tests/vectors/spr-generic.json"), *counts;
	struct interval iv = { .interval_s = 1 };
	struct output *o = NULL;
	struct synth sy;
	char listen[32], line[512], *page = NULL;
	int samples = 0, want = 0;

	CHECK(all && json_object_object_get_ex(json_object_array_get_idx(all, 0), "counts",
					       &counts), "no tests/vectors/spr-generic.json");
	if (!all)
		return;
	CHECK_INT(synth_open(&sy, "spr", 3, false, NULL, 0), 0);
	snprintf(listen, sizeof(listen), "127.0.0.1:%d", free_port());
	CHECK_INT(output_prometheus_open(listen, &o), 0);
	CHECK(synth_scope(&sy, &iv, SCOPE_SYSTEM, NULL, -1, counts, 1) &&
	      synth_scope(&sy, &iv, SCOPE_CGROUP, "/c", -1, counts, 1), "synth_scope");
	CHECK_INT(report_derive(&sy.run, &iv), 0);
	if (o) {
		CHECK_INT(o->ops->begin(o, &sy.run), 0);
		CHECK_INT(o->ops->interval(o, &sy.run, &iv), 0);
		page = output_prometheus_page(o);
	}
	for (int i = 0; page && i < iv.nr_scopes; i++) {
		const struct scope *sc = &iv.scopes[i];

		for (int n = 0; n < sy.plan->nr_nodes; n++) {
			if (!sc->tma.counted[n])
				continue;
			snprintf(line, sizeof(line),
				 "cgtma_topdown_ratio{scope=\"%s\"%s,node=\"%s\",level=\"%d\"} %.10g",
				 sc->kind == SCOPE_SYSTEM ? "system" : "cgroup",
				 sc->kind == SCOPE_SYSTEM ? "" : ",cgroup=\"/c\"",
				 sy.plan->nodes[n].full_name, sy.plan->nodes[n].level,
				 sc->tma.value[n]);
			CHECK_LINE(page, line);
			want++;
		}
	}
	for (const char *l = page; l && (l = strstr(l, "\ncgtma_topdown_ratio{")); l++)
		samples++;
	CHECK(want > 20 && samples == want, "%d node samples, want %d (> 20)", samples, want);
	if (page) {
		check_structure(page);
		CHECK_LINE(page, "# TYPE cgtma_topdown_ratio gauge");
		CHECK(strstr(page, "cgtma_topdown_ratio{scope=\"cgroup\",cgroup=\"/c\","
				   "node=\"Backend_Bound.Memory_Bound\",level=\"2\"} "),
		      "no Backend_Bound.Memory_Bound for /c");
	}
	free(page);
	interval_free(&iv);
	if (o)
		output_close(o);
	synth_close(&sy);
	json_object_put(all);
}

/*
 * An -e run (no model): no Top-Down level in cgtma_run_info. A count scaled past what an
 * int64 holds still adds up. Scopes out of interval_sort()'s order are refused. Of two scopes
 * with one label set, the live one gives the gauges, whichever comes first.
 */
/* A run of -e events, no plan. */
static const struct run erun = {
	.model = "events",
	.nr_events = 2,
	.event_names = event_names,
	.interval_ms = 1000,
	.kernel = "6.1.0",
	.cpu = "Test CPU",
};

/* A sink on a free port, begun for erun; NULL (said) when it cannot be opened. */
static struct output *open_events_sink(void)
{
	struct output *o = NULL;
	char listen[32];

	snprintf(listen, sizeof(listen), "127.0.0.1:%d", free_port());
	CHECK_INT(output_prometheus_open(listen, &o), 0);
	if (o)
		CHECK_INT(o->ops->begin(o, &erun), 0);
	return o;
}

static void test_events_run(void)
{
	const struct scope_spec huge[] = {
		{ SCOPE_SYSTEM, NULL, -1, false, { 2e19, 1 }, N2, N4 },
	};
	const struct scope_spec unsorted[] = {
		{ SCOPE_CGROUP, "/b", -1, false, { 1, 1 }, N2, N4 },
		{ SCOPE_CGROUP, "/a", -1, false, { 1, 1 }, N2, N4 },
	};
	const struct scope_spec live_last[] = {
		{ SCOPE_CGROUP, "/x", -1, true, { 1, 1 }, N2, N4 },
		{ SCOPE_CGROUP, "/x", -1, false, { 2, 1 }, N2, N4 },
	};
	const struct scope_spec live_first[] = {
		{ SCOPE_CGROUP, "/x", -1, false, { 4, 1 }, N2, N4 },
		{ SCOPE_CGROUP, "/x", -1, true, { 8, 1 }, N2, N4 },
	};
	struct interval iv;
	struct output *o = open_events_sink();
	char *page;

	if (!o)
		return;
	page = output_prometheus_page(o);
	CHECK_LINE(page, "cgtma_run_info{model=\"events\",cpu_model=\"Test CPU\","
			 "kernel=\"6.1.0\"} 1");
	CHECK_NOT_IN(page, "level=");
	free(page);

	make_interval(&iv, huge, 1);
	CHECK_INT(o->ops->interval(o, &erun, &iv), 0);
	CHECK_INT(o->ops->interval(o, &erun, &iv), 0);
	interval_free(&iv);
	page = output_prometheus_page(o);
	CHECK_LINE(page, "cgtma_events_total{scope=\"system\",event=\"cpu-clock\"} "
			 "40000000000000000000");
	check_structure(page);
	free(page);

	/* Not sorted: the page stays as it was. */
	memset(&iv, 0, sizeof(iv));
	for (int i = 0; i < 2; i++)
		add_scope(&iv, &unsorted[i]);
	CHECK_INT(o->ops->interval(o, &erun, &iv), -EINVAL);
	interval_free(&iv);
	page = output_prometheus_page(o);
	CHECK_NOT_IN(page, "/b");
	free(page);

	/* Both orders are interval_sort()'s: the label set is equal. */
	memset(&iv, 0, sizeof(iv));
	for (int i = 0; i < 2; i++)
		add_scope(&iv, &live_last[i]);
	CHECK_INT(o->ops->interval(o, &erun, &iv), 0);
	interval_free(&iv);
	memset(&iv, 0, sizeof(iv));
	for (int i = 0; i < 2; i++)
		add_scope(&iv, &live_first[i]);
	CHECK_INT(o->ops->interval(o, &erun, &iv), 0);
	interval_free(&iv);
	page = output_prometheus_page(o);
	/* The counts of all four scopes; the live ones stayed: on the page, not removed. */
	CHECK_LINE(page, "cgtma_events_total{scope=\"cgroup\",cgroup=\"/x\","
			 "event=\"cpu-clock\"} 15");
	check_structure(page);
	free(page);
	output_close(o);
}

/* Containers' and pods' names: labels next to the cgroup's, escaped; none on plain cgroups. */
static void test_names(void)
{
	const struct scope_spec specs[] = {
		{ SCOPE_CGROUP, "/kubepods/burstable/podu", -1, false, { 6, 1 }, N2, N4 },
		{ SCOPE_CGROUP, "/kubepods/burstable/podu/abc", -1, false, { 5, 1 }, N2, N4 },
		{ SCOPE_CGROUP, "/libpod_parent/libpod-1", -1, false, { 3, 1 }, N2, N4 },
		{ SCOPE_CGROUP, "/plain", -1, false, { 4, 1 }, N2, N4 },
	};
	const struct cgroup_names names[] = {
		{ NULL, "frontend-7d4b9", "shop" },
		{ "nginx", "frontend-7d4b9", "shop" },
		{ "w\"eb", NULL, NULL },
		{ NULL, NULL, NULL },
	};
	struct interval iv = {};
	struct output *o = open_events_sink();
	char *page;

	if (!o)
		return;
	for (int i = 0; i < 4; i++) {
		add_scope(&iv, &specs[i]);
		CHECK_INT(scope_set_names(&iv.scopes[i], &names[i]), 0);
	}
	CHECK_INT(o->ops->interval(o, &erun, &iv), 0);
	interval_free(&iv);
	page = output_prometheus_page(o);
	CHECK_LINE(page, "cgtma_events_total{scope=\"cgroup\",cgroup=\"/kubepods/burstable/podu/abc\","
			 "container=\"nginx\",pod=\"frontend-7d4b9\",namespace=\"shop\","
			 "event=\"cpu-clock\"} 5");
	CHECK_LINE(page, "cgtma_events_total{scope=\"cgroup\",cgroup=\"/kubepods/burstable/podu\","
			 "pod=\"frontend-7d4b9\",namespace=\"shop\",event=\"cpu-clock\"} 6");
	CHECK_LINE(page, "cgtma_events_total{scope=\"cgroup\",cgroup=\"/libpod_parent/libpod-1\","
			 "container=\"w\\\"eb\",event=\"cpu-clock\"} 3");
	CHECK_LINE(page, "cgtma_events_total{scope=\"cgroup\",cgroup=\"/plain\","
			 "event=\"cpu-clock\"} 4");
	check_structure(page);
	free(page);
	output_close(o);
}

/*
 * -T with --prometheus-tasks: a thread's series stays on the page, its counter as it was and
 * no gauges, in intervals where it did not run; the next run adds to it (it never restarts);
 * it leaves after the page of its last row (marked exited), and with its cgroup. Without
 * --prometheus-tasks no thread is on the page, irq scopes (sorted after threads) or not.
 */
struct thread_step {
	bool cgroup;			/* /a reported */
	bool cgroup_removed;
	double t1, t2;			/* the threads' cpu-clock; NAN: no row */
	bool t1_exited;
	const char *want1, *want2;	/* their counter on the page; NULL: absent */
	bool gauge1;			/* thread 1's multiplex gauge on the page */
};

static void add_thread(struct interval *iv, const struct run *r, int tid, double count,
		       bool exited)
{
	struct scope *s = interval_add_task(iv, r, "/a", 100, tid);

	CHECK(s != NULL, "interval_add_task failed");
	if (!s)
		return;
	snprintf(s->comm, sizeof(s->comm), "worker-%d", tid);
	s->removed = exited;
	s->state[0] = s->state[1] = COUNT_OK;
	s->count[0] = count;
	s->count[1] = 0;
	s->multiplex[0] = s->multiplex[1] = 1;
	s->ran = true;
}

static void test_threads(void)
{
	static const struct thread_step steps[] = {
		{ true, false, 4, 6, false, "4", "6", true },
		/* Neither ran: both stay, without gauges. */
		{ true, false, NAN, NAN, false, "4", "6", false },
		{ true, false, NAN, NAN, false, "4", "6", false },
		/* Thread 1 runs again: its counter goes on from 4. */
		{ true, false, 3, NAN, false, "7", "6", true },
		/* Its last row: on this page, then gone. */
		{ true, false, 1, NAN, true, "8", "6", true },
		{ true, false, NAN, NAN, false, NULL, "6", false },
		/* The cgroup goes: thread 2 with it, after this page. */
		{ true, true, NAN, NAN, false, NULL, "6", false },
		{ false, false, NAN, NAN, false, NULL, NULL, false },
	};
	struct run trun = erun;
	struct output *o = open_events_sink();
	const char *k1 = "cgtma_events_total{scope=\"task\",cgroup=\"/a\",pid=\"100\",tid=\"101\","
			 "comm=\"worker-101\",event=\"cpu-clock\"} ";
	const char *k2 = "cgtma_events_total{scope=\"task\",cgroup=\"/a\",pid=\"100\",tid=\"102\","
			 "comm=\"worker-102\",event=\"cpu-clock\"} ";
	const char *g1 = "cgtma_multiplex_ratio{scope=\"task\",cgroup=\"/a\",pid=\"100\","
			 "tid=\"101\",comm=\"worker-101\",event=\"cpu-clock\"} 1";
	struct interval iv;
	char line[512], *page;

	if (!o)
		return;
	trun.prometheus_tasks = true;
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		const struct thread_step *st = &steps[i];
		const struct scope_spec sys = { SCOPE_SYSTEM, NULL, -1, false, { 20, 1 }, N2, N4 };
		const struct scope_spec cg = { SCOPE_CGROUP, "/a", -1, st->cgroup_removed,
					       { 10, 1 }, N2, N4 };

		memset(&iv, 0, sizeof(iv));
		iv.interval_s = 1;
		add_scope(&iv, &sys);
		if (st->cgroup)
			add_scope(&iv, &cg);
		if (!isnan(st->t1))
			add_thread(&iv, &trun, 101, st->t1, st->t1_exited);
		if (!isnan(st->t2))
			add_thread(&iv, &trun, 102, st->t2, false);
		interval_sort(&iv);
		CHECK_INT(o->ops->interval(o, &trun, &iv), 0);
		interval_free(&iv);
		page = output_prometheus_page(o);
		if (st->want1) {
			snprintf(line, sizeof(line), "%s%s", k1, st->want1);
			CHECK_LINE(page, line);
		} else {
			CHECK_NOT_IN(page, "tid=\"101\"");
		}
		if (st->want2) {
			snprintf(line, sizeof(line), "%s%s", k2, st->want2);
			CHECK_LINE(page, line);
		} else {
			CHECK_NOT_IN(page, "tid=\"102\"");
		}
		if (st->gauge1)
			CHECK_LINE(page, g1);
		else
			CHECK_NO_LINE(page, g1);
		/* A thread without a scope has no gauges at all. */
		if (isnan(st->t2) && st->want2)
			CHECK_NOT_IN(page, "cgtma_multiplex_ratio{scope=\"task\",cgroup=\"/a\","
					   "pid=\"100\",tid=\"102\"");
		check_structure(page);
		free(page);
	}
	output_close(o);

	/* Without --prometheus-tasks: no thread, with irq scopes sorted after them. */
	o = open_events_sink();
	if (!o)
		return;
	trun.prometheus_tasks = false;
	memset(&iv, 0, sizeof(iv));
	iv.interval_s = 1;
	add_scope(&iv, &(const struct scope_spec){ SCOPE_CGROUP, "/a", -1, false, { 10, 1 }, N2,
						  N4 });
	add_scope(&iv, &(const struct scope_spec){ SCOPE_IRQ, "NET_RX", -1, false, { 2, 1 }, N2,
						  N4 });
	add_thread(&iv, &trun, 101, 4, false);
	interval_sort(&iv);
	CHECK_INT(o->ops->interval(o, &trun, &iv), 0);
	interval_free(&iv);
	page = output_prometheus_page(o);
	CHECK_NOT_IN(page, "scope=\"task\"");
	CHECK_LINE(page, "cgtma_events_total{scope=\"irq\",irq=\"NET_RX\",event=\"cpu-clock\"} 2");
	CHECK_LINE(page, "cgtma_events_total{scope=\"cgroup\",cgroup=\"/a\",event=\"cpu-clock\"} 10");
	check_structure(page);
	free(page);
	output_close(o);
}

/*
 * An idle interrupt scope has no row (session.c): its series stays on the page with its
 * counter as it was, and goes on from there when the scope takes interrupts again.
 */
static void test_idle_irq(void)
{
	static const double netrx[] = { 2, NAN, NAN, 3 };
	static const char *const want[] = { "2", "2", "2", "5" };
	struct output *o = open_events_sink();
	struct interval iv;
	char line[256], *page;

	if (!o)
		return;
	for (int i = 0; i < 4; i++) {
		memset(&iv, 0, sizeof(iv));
		iv.interval_s = 1;
		add_scope(&iv, &(const struct scope_spec){ SCOPE_SYSTEM, NULL, -1, false, { 20, 1 },
							  N2, N4 });
		if (!isnan(netrx[i]))
			add_scope(&iv, &(const struct scope_spec){ SCOPE_IRQ, "NET_RX", -1, false,
								  { netrx[i], 1 }, N2, N4 });
		interval_sort(&iv);
		CHECK_INT(o->ops->interval(o, &erun, &iv), 0);
		interval_free(&iv);
		page = output_prometheus_page(o);
		snprintf(line, sizeof(line),
			 "cgtma_events_total{scope=\"irq\",irq=\"NET_RX\",event=\"cpu-clock\"} %s",
			 want[i]);
		CHECK_LINE(page, line);
		check_structure(page);
		free(page);
	}
	output_close(o);
}

/*
 * A cgroup's noise: a gauge per field it has, with its scope labels (its container's name
 * too), and the antagonist pairs labelled by the other cgroup's path (and container); none
 * for its row on one CPU, none of a field it lacks. The next interval's antagonists replace
 * the pairs: one that left is off the page, as is a cgroup's noise in an interval without
 * its row.
 */
static void test_noise(void)
{
	const struct scope_spec specs[] = {
		{ SCOPE_CGROUP, "/a", -1, false, { 6, 1 }, N2, N4 },
		{ SCOPE_CGROUP, "/a", 1, false, { 6, 1 }, N2, N4 },
		{ SCOPE_CGROUP, "/b", -1, false, { 4, 1 }, N2, N4 },
	};
	const struct cgroup_names web = { "web", NULL, NULL };
	struct interval iv = {};
	struct output *o = open_events_sink();
	char *page;

	if (!o)
		return;
	for (int i = 0; i < 3; i++)
		add_scope(&iv, &specs[i]);
	CHECK_INT(scope_set_names(&iv.scopes[0], &web), 0);
	synth_noise(&iv.scopes[0].noise);
	synth_noise(&iv.scopes[1].noise);
	iv.scopes[2].noise = (struct noise){ .has = NOISE_WAIT, .wait = 1.5 };
	CHECK_INT(o->ops->interval(o, &erun, &iv), 0);
	interval_free(&iv);
	page = output_prometheus_page(o);
	CHECK_LINE(page, "# TYPE cgtma_noise_wait_seconds_per_second gauge");
	CHECK_LINE(page, "cgtma_noise_wait_seconds_per_second{scope=\"cgroup\",cgroup=\"/a\","
			 "container=\"web\"} 0.5");
	CHECK_LINE(page, "cgtma_noise_wait_seconds_per_second{scope=\"cgroup\",cgroup=\"/b\"} 1.5");
	CHECK_LINE(page, "cgtma_noise_throttled_seconds_per_second{scope=\"cgroup\",cgroup=\"/a\","
			 "container=\"web\"} 0.25");
	CHECK_LINE(page, "cgtma_noise_throttled_periods{scope=\"cgroup\",cgroup=\"/a\","
			 "container=\"web\"} 12");
	CHECK_LINE(page, "cgtma_noise_pressure_some_ratio{scope=\"cgroup\",cgroup=\"/a\","
			 "container=\"web\"} 0.5625");
	CHECK_LINE(page, "cgtma_noise_pressure_full_ratio{scope=\"cgroup\",cgroup=\"/a\","
			 "container=\"web\"} 0.125");
	CHECK_LINE(page, "cgtma_noise_preempted_per_second{scope=\"cgroup\",cgroup=\"/a\","
			 "container=\"web\"} 35.5");
	CHECK_LINE(page, "cgtma_noise_smt_shared_seconds_per_second{scope=\"cgroup\",cgroup=\"/a\","
			 "container=\"web\"} 0.0625");
	CHECK_LINE(page, "cgtma_noise_antagonist_preempt_per_second{scope=\"cgroup\",cgroup=\"/a\","
			 "container=\"web\",antagonist=\"/kubepods/pod1/abc\","
			 "antagonist_container=\"web\"} 20.25");
	CHECK_LINE(page, "cgtma_noise_antagonist_took_seconds_per_second{scope=\"cgroup\","
			 "cgroup=\"/a\",container=\"web\",antagonist=\"/kubepods/pod1/abc\","
			 "antagonist_container=\"web\"} 0.375");
	CHECK_LINE(page, "cgtma_noise_antagonist_smt_seconds_per_second{scope=\"cgroup\","
			 "cgroup=\"/a\",container=\"web\",antagonist=\"/batch\"} 0.015625");
	CHECK_INT(count_lines(page, "cgtma_noise_antagonist_"), 6);
	/* Of /b, the wait alone; of /a on CPU 1, nothing. */
	CHECK_INT(count_lines(page, "cgtma_noise_"), 7 + 6 + 1);
	CHECK_NOT_IN(page, "cpu=\"1\"} 0.5");
	check_structure(page);
	free(page);

	/* The next interval: /a's first antagonist has left it, /b has no row. */
	add_scope(&iv, &specs[0]);
	CHECK_INT(scope_set_names(&iv.scopes[0], &web), 0);
	synth_noise(&iv.scopes[0].noise);
	iv.scopes[0].noise.antagonists[0] = iv.scopes[0].noise.antagonists[1];
	iv.scopes[0].noise.nr_antagonists = 1;
	CHECK_INT(o->ops->interval(o, &erun, &iv), 0);
	interval_free(&iv);
	page = output_prometheus_page(o);
	CHECK_NOT_IN(page, "/kubepods/pod1/abc");
	CHECK_NOT_IN(page, "cgtma_noise_wait_seconds_per_second{scope=\"cgroup\",cgroup=\"/b\"}");
	CHECK_LINE(page, "cgtma_noise_antagonist_took_seconds_per_second{scope=\"cgroup\","
			 "cgroup=\"/a\",container=\"web\",antagonist=\"/batch\"} 0.046875");
	CHECK_INT(count_lines(page, "cgtma_noise_antagonist_"), 3);
	check_structure(page);
	free(page);
	output_close(o);
}

int main(void)
{
	test_bad_listen();
	test_page();
	test_real_model();
	test_events_run();
	test_names();
	test_threads();
	test_idle_irq();
	test_noise();
	return test_done("prometheus");
}
