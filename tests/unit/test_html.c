// SPDX-License-Identifier: GPL-2.0
/*
 * report --html: which charts a page has and how they are named. A container's cgroup is
 * titled by the container's name (its path stays in data-scope); a -T record's threads are
 * charted after their cgroup; interrupt scopes after the cgroups, from the run's start; the
 * header counts cgroups, threads and interrupt scopes apart.
 */
#include <stdlib.h>
#include <unistd.h>

#include "output.h"
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
	free(page);
	synth_close(&sy);
	return test_done("html");
}
