// SPDX-License-Identifier: GPL-2.0
/*
 * --json: one object per interval, on one line:
 *   {"time": T, "interval": S, "model": M, "rows": [ROW, ...]}
 *   ROW: {"scope": "system"|"cpu"|"cgroup"|"task", ["cgroup": P,] ["own_tasks": true,]
 *         (the row of the root's own tasks, P CGROUP_ROOT_OWN) ["container": NAME,]
 *         ["pod": NAME, "namespace": NS,] (a container's or pod's cgroup, and its
 *         threads) ["cpu": N,]
 *         ["pid": N, "tid": N, "comm": S,] (task rows, -T)
 *         "counts": {EVENT: N|null}, "multiplex": {EVENT: F|null}
 *         [, "nodes": {NODE: F|null}, "bottleneck": NODE|null] [, "metrics": {NAME: F|null}]
 *         [, "noise": {["wait": S/S,] ["throttled": S/S, "nr_throttled": N,]
 *         ["pressure_some": F,] ["pressure_full": F,] ["preempted": N/S,]
 *         ["smt_shared": S/S,] ["antagonists": [{"cgroup": P, ["container": NAME,]
 *         ["preempt": N/S, "took": S/S,] ["smt": S/S]}, ...]]}] (a cgroup's, each field
 *         where the kernel or the switch hook gives it: interval.h's struct noise; at most
 *         NOISE_ANTAGONISTS_MAX antagonists, the busiest first, no key where none; a
 *         thread's, with -T, wait and preempted at most)}
 * The summary at the end of a run is the same object with "summary": true.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "output.h"
#include "profile.h"
#include "strbuf.h"

/*
 * The line is written straight into a buffer kept from one interval to the next: with
 * thousands of cgroups, building a json-c object per row and value cost more than all the
 * rest of an interval (malloc and free of some 100,000 objects a second).
 */

/* s as a JSON string: quoted, with '"', '\\' and control characters escaped. */
static void add_string(struct strbuf *sb, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	const char *run = s;

	strbuf_add(sb, "\"", 1);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		char esc[6] = { '\\', 'u', '0', '0', hex[c >> 4], hex[c & 15] };

		if (c >= 0x20 && c != '"' && c != '\\')
			continue;
		strbuf_add(sb, run, (size_t)(s - run));
		run = s + 1;
		if (c == '"' || c == '\\') {
			esc[1] = (char)c;
			strbuf_add(sb, esc, 2);
		} else if (c == '\n') {
			strbuf_add(sb, "\\n", 2);
		} else if (c == '\t') {
			strbuf_add(sb, "\\t", 2);
		} else {
			strbuf_add(sb, esc, 6);
		}
	}
	strbuf_add(sb, run, (size_t)(s - run));
	strbuf_add(sb, "\"", 1);
}

/* "key": */
static void add_key(struct strbuf *sb, const char *key)
{
	add_string(sb, key);
	strbuf_add(sb, ":", 1);
}

/* ,"KEY":"VALUE" where there is a value. */
static void add_name(struct strbuf *sb, const char *key, const char *value)
{
	if (!value)
		return;
	strbuf_addstr(sb, ",");
	add_key(sb, key);
	add_string(sb, value);
}

/* A double as json-c wrote it (%.17g, with ".0" on whole numbers), or null. */
static void add_number(struct strbuf *sb, double v)
{
	char num[32];
	int n;

	if (!isfinite(v)) {
		strbuf_add(sb, "null", 4);
		return;
	}
	n = snprintf(num, sizeof(num), "%.17g", v);
	strbuf_add(sb, num, (size_t)n);
	if (!strpbrk(num, ".e"))
		strbuf_add(sb, ".0", 2);
}

/*
 * Seconds, as the clocks give them: nanoseconds at most, and no digit the double does not
 * hold. The fewest decimals (1 to 9) that read back as the same double; 9 where none does
 * (an interval of 0.199978311 s, not 0.19997831099999999).
 */
static void add_seconds(struct strbuf *sb, double v)
{
	char num[48];
	int n = 0;

	if (!isfinite(v)) {
		strbuf_add(sb, "null", 4);
		return;
	}
	for (int decimals = 1; decimals <= 9; decimals++) {
		n = snprintf(num, sizeof(num), "%.*f", decimals, v);
		if (n < 0 || (size_t)n >= sizeof(num) || strtod(num, NULL) == v)
			break;
	}
	/* No clock reads this far (a damaged record's time): the double as %g writes it. */
	if (n < 0 || (size_t)n >= sizeof(num))
		n = snprintf(num, sizeof(num), "%.17g", v);
	strbuf_add(sb, num, (size_t)n);
}

/*
 * A scaled count as a whole number, or null. A heavily multiplexed event can scale past what
 * an int64 holds (llround is undefined there): such a count is the int64's limit.
 */
static void add_count(struct strbuf *sb, double v)
{
	int64_t i;

	if (!isfinite(v)) {
		strbuf_add(sb, "null", 4);
		return;
	}
	i = v >= 0x1p63 ? INT64_MAX : v < -0x1p63 ? INT64_MIN : llround(v);
	strbuf_addf(sb, "%" PRId64, i);
}

/*
 * {"event":value,...} over the events that lists show: the scaled counts (null when not
 * counted), or with multiplex each event's running / enabled.
 */
static void add_per_event(struct strbuf *sb, const struct run *run, const struct scope *s,
			  bool multiplex)
{
	strbuf_add(sb, "{", 1);
	for (int i = 0, first = 1; i < run->nr_events; i++) {
		if (!run_lists_event(run, i))
			continue;
		if (!first)
			strbuf_add(sb, ",", 1);
		first = 0;
		add_key(sb, run->event_names[i]);
		if (multiplex)
			add_number(sb, s->multiplex[i]);
		else
			add_count(sb, s->state[i] != COUNT_NOT_COUNTED ? s->count[i] : NAN);
	}
	strbuf_add(sb, "}", 1);
}

/* A mark (interval.h): where, what, and how much of it may be another cgroup's. */
static void add_mark(struct strbuf *sb, const struct mark *k)
{
	const struct cgtma_miss *m = &k->m;

	strbuf_addf(sb, "{\"cpu\":%d,\"kind\":", k->cpu);
	add_string(sb, mark_kind_name(m->kind));
	if (m->kind == CGTMA_MISS_SKIPPED) {
		strbuf_addf(sb, ",\"switches\":%u}", m->count);
		return;
	}
	if (m->kind == CGTMA_MISS_READ) {
		strbuf_addstr(sb, "}");
		return;
	}
	if (m->kind == CGTMA_MISS_IRQ) {
		strbuf_addf(sb, ",\"interrupts\":%u}", m->count);
		return;
	}
	strbuf_addf(sb, ",\"slice_ns\":%llu,\"max_ns\":%llu,\"charged\":{\"cgroup\":",
		    (unsigned long long)m->slice_ns, (unsigned long long)m->max_ns);
	add_string(sb, k->charged);
	strbuf_addf(sb, ",\"pid\":%u},\"began\":{\"pid\":%u", m->charged_pid, m->pid);
	add_name(sb, "cgroup", *k->ran ? k->ran : NULL);
	add_name(sb, "comm", *m->comm ? m->comm : NULL);
	if (m->unseen_ns != ~0ULL)
		strbuf_addf(sb, ",\"run_ns\":%llu", (unsigned long long)m->unseen_ns);
	strbuf_addstr(sb, "}}");
}

/*
 * Whether the interval's counts are exact, on every line; where not, the marks' totals and,
 * in a live run, the marks themselves.
 */
static void add_exactness(struct strbuf *sb, const struct interval *iv)
{
	strbuf_addf(sb, ",\"exact\":%s,\"missed_slices\":%llu", iv->missed_slices ? "false" :
		    "true", (unsigned long long)iv->missed_slices);
	if (!iv->missed_slices)
		return;
	strbuf_addf(sb, ",\"missed_max_ns\":%llu", (unsigned long long)iv->missed_max_ns);
	if (iv->missed_unbounded)
		strbuf_addf(sb, ",\"missed_unbounded\":%llu",
			    (unsigned long long)iv->missed_unbounded);
	if (!iv->nr_marks)
		return;
	strbuf_addstr(sb, ",\"marks\":[");
	for (int i = 0; i < iv->nr_marks; i++) {
		if (i)
			strbuf_addstr(sb, ",");
		add_mark(sb, &iv->marks[i]);
	}
	strbuf_addstr(sb, "]");
}

/* "name":value after sep, which becomes ",". */
static void add_field(struct strbuf *sb, const char **sep, const char *name, double value)
{
	strbuf_addstr(sb, *sep);
	add_key(sb, name);
	add_number(sb, value);
	*sep = ",";
}

/* ,"noise":{...} with the fields the kernel gave; nothing where it gave none. */
static void add_noise(struct strbuf *sb, const struct noise *n)
{
	int nr_antagonists = n->has & (NOISE_PREEMPTED | NOISE_SMT) ? n->nr_antagonists : 0;
	const char *sep = "{";

	if (!n->has)
		return;
	strbuf_addstr(sb, ",\"noise\":");
	if (n->has & NOISE_WAIT)
		add_field(sb, &sep, "wait", n->wait);
	if (n->has & NOISE_THROTTLED) {
		add_field(sb, &sep, "throttled", n->throttled);
		strbuf_addf(sb, ",\"nr_throttled\":%llu", (unsigned long long)n->nr_throttled);
	}
	if (n->has & NOISE_PRESSURE_SOME)
		add_field(sb, &sep, "pressure_some", n->pressure_some);
	if (n->has & NOISE_PRESSURE_FULL)
		add_field(sb, &sep, "pressure_full", n->pressure_full);
	if (n->has & NOISE_PREEMPTED)
		add_field(sb, &sep, "preempted", n->preempted);
	if (n->has & NOISE_SMT)
		add_field(sb, &sep, "smt_shared", n->smt_shared);
	/* An antagonist's figures are the switch hook's: none without them (interval.h). */
	for (int i = 0; i < nr_antagonists; i++) {
		const struct antagonist *a = &n->antagonists[i];
		const char *asep = ",";

		strbuf_addstr(sb, i ? ",{\"cgroup\":" : ",\"antagonists\":[{\"cgroup\":");
		add_string(sb, a->cgroup);
		add_name(sb, "container", *a->container ? a->container : NULL);
		if (n->has & NOISE_PREEMPTED) {
			add_field(sb, &asep, "preempt", a->preempt);
			add_field(sb, &asep, "took", a->took);
		}
		if (n->has & NOISE_SMT)
			add_field(sb, &asep, "smt", a->smt);
		strbuf_add(sb, "}", 1);
	}
	if (nr_antagonists)
		strbuf_add(sb, "]", 1);
	strbuf_add(sb, "}", 1);
}

static void add_scope(struct strbuf *sb, const struct run *run, const struct scope *s)
{
	strbuf_addstr(sb, "{\"scope\":");
	add_string(sb, scope_kind_name(s->kind));
	if (s->kind == SCOPE_CGROUP || s->kind == SCOPE_TASK) {
		strbuf_addstr(sb, ",\"cgroup\":");
		add_string(sb, s->cgroup);
		/* What tells the cgroup from one made again under its path (0: not recorded). */
		if (s->cgroup_id)
			strbuf_addf(sb, ",\"cgroup_id\":%llu", (unsigned long long)s->cgroup_id);
	}
	if (scope_is_root_own(s))
		strbuf_addstr(sb, ",\"own_tasks\":true");
	if (s->kind == SCOPE_CGROUP || s->kind == SCOPE_TASK) {
		add_name(sb, "container", s->names.container);
		add_name(sb, "pod", s->names.pod);
		add_name(sb, "namespace", s->names.namespace);
	}
	if (s->kind == SCOPE_TASK) {
		strbuf_addf(sb, ",\"pid\":%d,\"tid\":%d,\"comm\":", s->pid, s->tid);
		add_string(sb, s->comm);
	}
	if (s->kind == SCOPE_IRQ) {
		strbuf_addstr(sb, ",\"irq\":");
		add_string(sb, s->irq);
	}
	if (s->cpu >= 0)
		strbuf_addf(sb, ",\"cpu\":%d", s->cpu);
	/* The cgroup's last row, or the summary's of a cgroup gone: the next intervals do not
	 * name it. */
	if (s->removed)
		strbuf_addstr(sb, s->kind == SCOPE_TASK ? ",\"exited\":true" : ",\"removed\":true");
	strbuf_addstr(sb, ",\"counts\":");
	add_per_event(sb, run, s, false);
	strbuf_addstr(sb, ",\"multiplex\":");
	add_per_event(sb, run, s, true);

	if (run->plan && run->plan->nr_nodes) {
		int bn = s->tma.bottleneck;

		strbuf_addstr(sb, ",\"nodes\":{");
		for (int i = 0; i < run->plan->nr_nodes; i++) {
			if (i)
				strbuf_add(sb, ",", 1);
			add_key(sb, run->plan->nodes[i].full_name);
			add_number(sb, s->tma.counted[i] ? s->tma.value[i] : NAN);
		}
		strbuf_addstr(sb, "},\"bottleneck\":");
		if (bn >= 0)
			add_string(sb, run->plan->nodes[bn].full_name);
		else
			strbuf_add(sb, "null", 4);
		/* Nodes computed from counts of several groups, multiplexed apart: when any. */
		for (int i = 0, first = 1; i < run->plan->nr_nodes; i++) {
			if (!run->plan->nodes[i].split)
				continue;
			strbuf_addstr(sb, first ? ",\"split_nodes\":[" : ",");
			first = 0;
			add_string(sb, run->plan->nodes[i].full_name);
		}
		for (int i = 0; i < run->plan->nr_nodes; i++)
			if (run->plan->nodes[i].split) {
				strbuf_add(sb, "]", 1);
				break;
			}
	}
	if (run->plan && run->plan->nr_metrics) {
		strbuf_addstr(sb, ",\"metrics\":{");
		for (int i = 0; i < run->plan->nr_metrics; i++) {
			if (i)
				strbuf_add(sb, ",", 1);
			add_key(sb, run->plan->metrics[i].name);
			add_number(sb, s->tma.metric_counted[i] ? s->tma.metric[i] : NAN);
		}
		strbuf_add(sb, "}", 1);
	}
	add_noise(sb, &s->noise);
	strbuf_add(sb, "}", 1);
}

/* The largest line buffer kept between intervals (bytes). */
#define JSON_LINE_KEEP (64 * 1024)

static int write_record(struct output *o, const struct run *run, const struct interval *iv)
{
	struct strbuf *sb = o->priv;
	int err = 0;

	strbuf_setlen(sb, 0);
	strbuf_addstr(sb, "{\"time\":");
	add_seconds(sb, iv->time);
	strbuf_addstr(sb, ",\"interval\":");
	add_seconds(sb, iv->interval_s);
	strbuf_addstr(sb, ",\"model\":");
	add_string(sb, run->model);
	if (iv->summary)
		strbuf_addstr(sb, ",\"summary\":true");
	add_exactness(sb, iv);
	/* --sample's losses, the same way: only where there were some. */
	if (iv->profile && profile_lost_any(&iv->profile->lost))
		strbuf_addf(sb, ",\"samples_lost\":%" PRIu64 ",\"user_stacks_lost\":%" PRIu64
			    ",\"kernel_stacks_lost\":%" PRIu64, iv->profile->lost.samples,
			    iv->profile->lost.user_stacks, iv->profile->lost.kernel_stacks);
	strbuf_addstr(sb, ",\"rows\":[");
	for (int i = 0; i < iv->nr_scopes; i++) {
		if (i)
			strbuf_add(sb, ",", 1);
		add_scope(sb, run, &iv->scopes[i]);
	}
	strbuf_addstr(sb, "]}\n");
	if (sb->failed)
		return -ENOMEM;
	/* One write per line, then flush: a reader never sees half an object. */
	if (fwrite(sb->buf, 1, sb->len, o->f) != sb->len || fflush(o->f))
		err = errno ? -errno : -EIO;
	/*
	 * The buffer is kept for the next line, unless it is large: an interval of thousands of
	 * cgroups (a batch created or removed) would otherwise keep its size resident for good.
	 */
	if (sb->alloc > JSON_LINE_KEEP)
		strbuf_release(sb);
	return err;
}

static int json_summary(struct output *o, const struct run *run, const struct interval *total)
{
	return write_record(o, run, total);
}

static void json_close(struct output *o)
{
	strbuf_release(o->priv);
	free(o->priv);
	o->priv = NULL;
}

static const struct output_ops json_ops = {
	.interval = write_record,
	.summary = json_summary,
	.close = json_close,
};

int output_json_open(FILE *f, struct output **op)
{
	struct output *o = calloc(1, sizeof(*o));
	struct strbuf *sb = calloc(1, sizeof(*sb));

	if (!o || !sb) {
		free(o);
		free(sb);
		return -ENOMEM;
	}
	o->ops = &json_ops;
	o->name = "json";
	o->f = f;
	o->priv = sb;
	*op = o;
	return 0;
}
