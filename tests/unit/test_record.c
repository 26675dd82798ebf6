// SPDX-License-Identifier: GPL-2.0
/*
 * Record files: what the writer puts in, the reader gives back bit for bit (header, times,
 * every scope's sums), and the Top-Down tree derived from it is the live one; a file cut at
 * any byte of its last record, or with a byte flipped, gives an error naming the record and
 * still every record before it; `cgtma report` plans shallower levels from the recorded
 * events and refuses deeper ones, naming what was not counted; profile records (sampled
 * stacks) come back summed, and report writes --folded and --pprof from them.
 *
 * The data is a real spr vector (tests/vectors/spr-generic.json) with the spr model's text.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <json-c/json.h>

#include "capture.h"
#include "commands.h"
#include "pprof.h"
#include "record.h"
#include "profile_fixture.h"
#include "strbuf.h"
#include "synth.h"
#include "test.h"

#define VECTOR "tests/vectors/spr-generic.json"
#define MODEL_FILE "user/models/spr.json"
#define NR_INTERVALS 5

static char dir[] = "/tmp/cgtma-test-record.XXXXXX";

struct fixture {
	struct model *model;
	struct plan *plan;
	char *model_text;
	const char **names;
	double *base;			/* the vector's count per plan event */
	struct run run;
	struct interval iv[NR_INTERVALS + 1];	/* the last is the summary */
};

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	long n;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0) {
		buf = malloc(n + 1);
		if (buf && fread(buf, 1, n, f) != (size_t)n) {
			free(buf);
			buf = NULL;
		}
		if (buf) {
			buf[n] = '\0';
			if (len)
				*len = n;
		}
	}
	fclose(f);
	return buf;
}

static void put_file(const char *path, const char *data, size_t len)
{
	FILE *f = fopen(path, "wb");

	CHECK(f && fwrite(data, 1, len, f) == len && fclose(f) == 0, "cannot write %s", path);
}

/*
 * The spr plan at level, and per event its count in the vector's first entry. once: each
 * event recorded once, as a record made before events were counted again per group (its
 * scopes are not derived: the plan has more events than it).
 */
static int fixture_init(struct fixture *fx, int level, bool once)
{
	struct model_options mo = { .level = level };
	json_object *vec, *counts, *v;

	memset(fx, 0, sizeof(*fx));
	fx->model_text = slurp(MODEL_FILE, NULL);
	if (!fx->model_text || model_load_builtin("spr", &fx->model) ||
	    plan_new(fx->model, &mo, &fx->plan))
		return -1;
	vec = json_object_from_file(VECTOR);
	if (!vec || !json_object_object_get_ex(json_object_array_get_idx(vec, 0), "counts",
					       &counts))
		return -1;
	fx->names = calloc(fx->plan->nr_events, sizeof(*fx->names));
	fx->base = calloc(fx->plan->nr_events, sizeof(*fx->base));
	for (int e = 0; e < fx->plan->nr_events; e++) {
		fx->names[e] = fx->plan->events[e].name;
		fx->base[e] = json_object_object_get_ex(counts, fx->names[e], &v) ?
				      json_object_get_double(v) : 0;
	}
	json_object_put(vec);

	fx->run.nr_events = fx->plan->nr_events;
	for (int e = 0, k = 0; once && e < fx->plan->nr_events; e++) {
		if (fx->plan->events[e].duplicate)
			continue;
		fx->names[k] = fx->names[e];
		fx->base[k] = fx->base[e];
		fx->run.nr_events = ++k;
	}
	fx->run.model = "spr";
	fx->run.model_source = fx->model_text;
	fx->run.plan = fx->plan;
	fx->run.event_names = fx->names;
	fx->run.level = level;
	fx->run.start_time = 1767225600.123456789;
	fx->run.interval_ms = 1000;
	fx->run.hostname = "host-a";
	fx->run.kernel = "6.1.0-test";
	fx->run.cpu = "Test CPU @ 3.0GHz";
	fx->run.per_cpu = true;
	fx->run.cgroups = true;

	/* System, a cgroup, the cgroup on CPU 1 and a removed one; counts drifting. */
	for (int i = 0; i <= NR_INTERVALS; i++) {
		struct interval *iv = &fx->iv[i];
		struct scope *s[5];

		iv->summary = i == NR_INTERVALS;
		iv->time = fx->run.start_time + (i + 1) * 1.000123456789;
		iv->interval_s = iv->summary ? NR_INTERVALS * 1.0001 : 1.000123456789 + i * 1e-7;
		iv->has_bpf_stats = i % 2;
		iv->bpf_run_time_ns = 123456789ULL * (i + 1);
		iv->bpf_run_cnt = 1000 + i;
		iv->missed_slices = i % 3 == 1 ? 1 + i : 0;
		iv->missed_max_ns = i % 3 == 1 ? 1234567ULL * i : 0;
		iv->missed_unbounded = i % 3 == 1 ? i / 3 : 0;
		/* Marks listed, a switch missed and runs skipped: kept as the live run had them. */
		if (i % 3 == 1) {
			iv->marks = calloc(2, sizeof(*iv->marks));
			if (iv->marks) {
				iv->nr_marks = 2;
				iv->marks[0] = (struct mark){ .cpu = 1, .ran = "/", .charged = "/a/b",
					.m = { .kind = CGTMA_MISS_SWITCH, .count = 1, .ran_cgroup = 1,
					       .charged_cgroup = 4242, .slice_ns = 8042000 + i,
					       .max_ns = 5369000, .unseen_ns = 5398000, .pid = 81,
					       .charged_pid = 1234, .comm = "tokio-rt-worker" } };
				iv->marks[1] = (struct mark){ .cpu = 0,
					.m = { .kind = CGTMA_MISS_SKIPPED, .count = 3,
					       .max_ns = ~0ULL, .unseen_ns = ~0ULL } };
			}
		}
		s[0] = interval_add_scope(iv, &fx->run, SCOPE_SYSTEM, NULL, -1);
		s[1] = interval_add_scope(iv, &fx->run, SCOPE_CGROUP, "/a/b", -1);
		s[2] = interval_add_scope(iv, &fx->run, SCOPE_CGROUP, "/a/b", 1);
		s[3] = interval_add_scope(iv, &fx->run, SCOPE_CGROUP, "/gone", -1);
		s[4] = interval_add_task(iv, &fx->run, "/a/b", 10, 11);
		if (!s[0] || !s[1] || !s[2] || !s[3] || !s[4])
			return -1;
		snprintf(s[4]->comm, sizeof(s[4]->comm), "nginx");
		/*
		 * A pod's container, on its total, its CPU row and its thread (the record keeps
		 * them on the cgroup's rows, the thread's come back from there); /gone has none.
		 */
		{
			const struct cgroup_names n = { "nginx", "frontend-7d4b9", "shop" };

			if (scope_set_names(s[1], &n) || scope_set_names(s[2], &n) ||
			    scope_set_names(s[4], &n))
				return -1;
		}
		s[3]->removed = i == 2;
		/* Cgroup ids (version 6): a cgroup's rows and its thread's carry its own. */
		s[1]->cgroup_id = s[2]->cgroup_id = s[4]->cgroup_id = 1ULL << 40 | 5;
		s[3]->cgroup_id = 6;
		/*
		 * Noise (version 8): the cgroup's every field and two antagonists, drifting by
		 * values a decimal would not hold; /gone's wait and throttling alone; its per-CPU
		 * row none.
		 */
		synth_noise(&s[1]->noise);
		s[1]->noise.wait = (i + 1) / 3.0;
		s[1]->noise.antagonists[1].took = 0.1 * (i + 1);
		s[3]->noise = (struct noise){ .has = NOISE_WAIT | NOISE_THROTTLED, .wait = 0.7 / (i + 1),
					      .throttled = 1e-9 * i, .nr_throttled = 1ULL << 40 | i };
		for (int e = 0; e < fx->run.nr_events; e++)
			for (int k = 0; k < 5; k++) {
				double f = 1.0 / (k + 1) * (1 + 0.1 * i) * (1 + 0.01 * e);

				s[k]->sum[e].counter = (__u64)(fx->base[e] * f);
				if (k == 0)	/* beyond a double's 53 bits */
					s[k]->sum[e].counter += 1ULL << 60;
				s[k]->sum[e].enabled = 1000000000ULL + 17 * e + i;
				/* The cgroup on CPU 1 multiplexed; one event never ran. */
				s[k]->sum[e].running = k == 2 ? 600000000ULL + e :
						       s[k]->sum[e].enabled;
				if (k == 2 && e == 3)
					s[k]->sum[e].running = 0;
			}
		if (!once && report_derive(&fx->run, iv))
			return -1;
	}
	return 0;
}

static void fixture_release(struct fixture *fx)
{
	for (int i = 0; i <= NR_INTERVALS; i++)
		interval_free(&fx->iv[i]);
	free(fx->names);
	free(fx->base);
	free(fx->model_text);
	plan_free(fx->plan);
	model_free(fx->model);
}

static int write_record(const struct fixture *fx, const char *path)
{
	struct output *o;
	int err = output_record_open(path, &o);

	if (err)
		return err;
	err = o->ops->begin(o, &fx->run);
	for (int i = 0; i <= NR_INTERVALS && !err; i++)
		err = (fx->iv[i].summary ? o->ops->summary : o->ops->interval)(o, &fx->run,
									      &fx->iv[i]);
	output_close(o);
	return err;
}

static bool same_double(double a, double b)
{
	return memcmp(&a, &b, sizeof(a)) == 0;
}

static void check_header(const struct fixture *fx, const struct record_header *h)
{
	const struct run *run = &h->run;

	CHECK_INT(h->version, RECORD_VERSION);
	CHECK_STR(run->hostname, "host-a");
	CHECK_STR(run->kernel, "6.1.0-test");
	CHECK_STR(run->cpu, "Test CPU @ 3.0GHz");
	CHECK_STR(run->model, "spr");
	CHECK(run->model_source && h->model_source_len == strlen(fx->model_text) &&
	      memcmp(run->model_source, fx->model_text, h->model_source_len) == 0,
	      "the model's text differs");
	CHECK(same_double(run->start_time, fx->run.start_time), "start %.17g", run->start_time);
	CHECK_INT(run->interval_ms, 1000);
	CHECK_INT(run->level, fx->run.level);
	CHECK(h->has_plan && run->per_cpu && run->cgroups && !run->perf_metrics && !run->smt,
	      "flags");
	/* What report decides itself. */
	CHECK(!run->plan && !run->verbose && !run->prometheus_tasks, "plan, -v");
	CHECK_INT(run->nr_events, fx->plan->nr_events);
	for (int e = 0; e < run->nr_events && e < fx->plan->nr_events; e++) {
		CHECK_STR(run->event_names[e], fx->plan->events[e].name);
		CHECK_STR(h->encodings[e], fx->plan->events[e].encoding);
		CHECK_INT(h->group[e], fx->plan->events[e].group);
		CHECK_INT(h->fixed[e], fx->plan->events[e].fixed);
	}
	/* The metrics the plan computed, by name (version 7). */
	CHECK(h->has_metrics, "no metrics in a version %u header", h->version);
	CHECK_INT(h->nr_metrics, fx->plan->nr_metrics);
	for (int m = 0; m < h->nr_metrics && m < fx->plan->nr_metrics; m++)
		CHECK_STR(h->metrics[m], fx->plan->metrics[m].name);
}

/* Two noises field by field, doubles bit for bit. */
static bool same_noise(const struct noise *a, const struct noise *b)
{
	bool same = a->has == b->has && same_double(a->wait, b->wait) &&
		    same_double(a->throttled, b->throttled) && a->nr_throttled == b->nr_throttled &&
		    same_double(a->pressure_some, b->pressure_some) &&
		    same_double(a->pressure_full, b->pressure_full) &&
		    same_double(a->preempted, b->preempted) &&
		    same_double(a->smt_shared, b->smt_shared) &&
		    a->nr_antagonists == b->nr_antagonists;

	for (int i = 0; same && i < a->nr_antagonists; i++) {
		const struct antagonist *x = &a->antagonists[i], *y = &b->antagonists[i];

		same = !strcmp(x->cgroup, y->cgroup) && !strcmp(x->container, y->container) &&
		       same_double(x->preempt, y->preempt) && same_double(x->took, y->took) &&
		       same_double(x->smt, y->smt);
	}
	return same;
}

/* iv, as read back, against the original: bit for bit, and derived the same. */
static void check_interval(const struct fixture *fx, const struct interval *want,
			   struct interval *got)
{
	const struct plan *p = fx->plan;
	int n = fx->plan->nr_events;

	CHECK_INT(got->summary, want->summary);
	CHECK(same_double(got->time, want->time), "time %.17g", got->time);
	CHECK(same_double(got->interval_s, want->interval_s), "interval %.17g", got->interval_s);
	CHECK_INT(got->has_bpf_stats, want->has_bpf_stats);
	CHECK_INT(got->bpf_run_time_ns, want->bpf_run_time_ns);
	CHECK_INT(got->bpf_run_cnt, want->bpf_run_cnt);
	CHECK_INT(got->missed_slices, want->missed_slices);
	CHECK_INT(got->missed_max_ns, want->missed_max_ns);
	CHECK_INT(got->missed_unbounded, want->missed_unbounded);
	CHECK_INT(got->nr_marks, want->nr_marks);
	for (int k = 0; k < got->nr_marks && k < want->nr_marks; k++) {
		const struct mark *g = &got->marks[k], *w = &want->marks[k];

		CHECK(g->cpu == w->cpu && !memcmp(&g->m, &w->m, sizeof(g->m)) &&
		      !strcmp(g->ran, w->ran) && !strcmp(g->charged, w->charged),
		      "mark %d of an interval differs", k);
	}
	CHECK_INT(got->nr_scopes, want->nr_scopes);
	if (got->nr_scopes != want->nr_scopes)
		return;
	CHECK(report_derive(&fx->run, got) == 0, "derive");
	for (int s = 0; s < got->nr_scopes; s++) {
		const struct scope *a = &want->scopes[s], *b = &got->scopes[s];

		CHECK_INT(b->kind, a->kind);
		CHECK_INT(b->cpu, a->cpu);
		CHECK_INT(b->removed, a->removed);
		CHECK(b->cgroup_id == a->cgroup_id, "scope %d cgroup id %llu, want %llu", s,
		      (unsigned long long)b->cgroup_id, (unsigned long long)a->cgroup_id);
		CHECK((!a->cgroup && !b->cgroup) || (a->cgroup && b->cgroup &&
						     !strcmp(a->cgroup, b->cgroup)),
		      "scope %d cgroup", s);
		CHECK(cgroup_names_equal(&b->names, a->names.container, a->names.pod,
					 a->names.namespace),
		      "scope %d names: %s %s %s", s, b->names.container ? b->names.container : "-",
		      b->names.pod ? b->names.pod : "-", b->names.namespace ? b->names.namespace : "-");
		CHECK(same_noise(&a->noise, &b->noise), "scope %d noise: has %#x, want %#x", s,
		      b->noise.has, a->noise.has);
		CHECK(memcmp(a->sum, b->sum, n * sizeof(*a->sum)) == 0, "scope %d sums", s);
		CHECK(memcmp(a->count, b->count, n * sizeof(*a->count)) == 0, "scope %d counts", s);
		CHECK(a->has_tma && b->has_tma && a->tma.bottleneck == b->tma.bottleneck &&
		      memcmp(a->tma.value, b->tma.value, p->nr_nodes * sizeof(double)) == 0 &&
		      memcmp(a->tma.metric, b->tma.metric, p->nr_metrics * sizeof(double)) == 0,
		      "scope %d: the tree differs", s);
	}
}

/* Reads path: how many intervals (and summary) came back, and the end's code. */
static int read_all(const struct fixture *fx, const char *path, int *nread,
		    struct record_error *e)
{
	struct record_reader *r;
	struct interval iv = {};
	int err;

	*nread = 0;
	memset(e, 0, sizeof(*e));
	err = record_reader__open(path, &r, e);
	if (err)
		return err;
	while ((err = record_reader__next(r, &iv, e)) > 0) {
		if (fx && *nread <= NR_INTERVALS)
			check_interval(fx, &fx->iv[*nread], &iv);
		(*nread)++;
	}
	interval_free(&iv);
	record_reader__close(r);
	return err;
}

static void test_crc(void)
{
	unsigned char buf[1000];

	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (unsigned char)(i * 7 + 3);
	for (size_t n = 0; n <= sizeof(buf); n += 37)
		CHECK_INT(record_crc32(0, buf, n), crc32(0, buf, n));
	CHECK_INT(record_crc32(record_crc32(0, buf, 100), buf + 100, 200), crc32(0, buf, 300));
}

static void test_round_trip(const struct fixture *fx, const char *path)
{
	struct record_reader *r;
	struct record_error e;
	int n, err;

	CHECK_INT(write_record(fx, path), 0);
	CHECK_INT(record_reader__open(path, &r, &e), 0);
	if (r) {
		check_header(fx, record_reader__header(r));
		record_reader__close(r);
	}
	err = read_all(fx, path, &n, &e);
	CHECK_INT(err, 0);
	CHECK_INT(n, NR_INTERVALS + 1);
}

/* Offsets of the records: [0] the header record, then each interval and the summary. */
static uint32_t get_le32(const char *p)
{
	return (unsigned char)p[0] | (unsigned char)p[1] << 8 | (unsigned char)p[2] << 16 |
	       (uint32_t)(unsigned char)p[3] << 24;
}

static int record_offsets(const char *data, size_t len, long *off, int max)
{
	size_t pos = RECORD_FILE_HEAD;
	int n = 0;

	while (pos + RECORD_HEAD <= len && n < max) {
		uint32_t plen = get_le32(data + pos + 4);

		off[n++] = pos;
		pos += RECORD_HEAD + plen + 4;
	}
	return n;
}

static void test_truncation(const struct fixture *fx, const char *path)
{
	char cut[300];
	size_t len;
	char *data = slurp(path, &len);
	long off[NR_INTERVALS + 2];
	struct record_error e;
	int n, err, fails = 0;

	CHECK(data, "cannot read %s", path);
	if (!data)
		return;
	CHECK_INT(record_offsets(data, len, off, NR_INTERVALS + 2), NR_INTERVALS + 2);
	snprintf(cut, sizeof(cut), "%s.cut", path);

	/* Every length from one byte short of the end down to the start of the summary. */
	put_file(cut, data, len);
	for (size_t at = len - 1; at >= (size_t)off[NR_INTERVALS + 1]; at--) {
		CHECK(truncate(cut, at) == 0, "truncate %s: %s", cut, strerror(errno));
		/* Contents are checked once below; here, that they all come back. */
		err = read_all(at == len - 1 ? fx : NULL, cut, &n, &e);
		if (err != -EBADMSG || n != NR_INTERVALS || e.index != NR_INTERVALS + 1 ||
		    e.offset != off[NR_INTERVALS + 1] ||
		    !strstr(e.what, at == (size_t)off[NR_INTERVALS + 1] ?
					    "ends before the summary" : "truncated")) {
			if (fails++ < 5)
				CHECK(0, "cut at %zu: err %d, %d read, record %ld at %lld: %s", at,
				      err, n, e.index, e.offset, e.what);
		}
	}
	CHECK_INT(fails, 0);

	/* Cut inside the third interval: the first two come back. */
	put_file(cut, data, off[3] + 20);
	CHECK_INT(read_all(fx, cut, &n, &e), -EBADMSG);
	CHECK_INT(n, 2);
	CHECK_INT(e.index, 3);
	CHECK_INT(e.offset, off[3]);

	/* Cut inside the header record, and inside the file's head. */
	put_file(cut, data, off[0] + 5);
	CHECK_INT(read_all(NULL, cut, &n, &e), -EBADMSG);
	CHECK(strstr(e.what, "truncated") && e.index == 0, "%s", e.what);
	put_file(cut, data, 10);
	CHECK_INT(read_all(NULL, cut, &n, &e), -EBADMSG);
	CHECK(strstr(e.what, "truncated"), "%s", e.what);
	free(data);
	unlink(cut);
}

static void test_corruption(const struct fixture *fx, const char *path)
{
	char bad[300];
	size_t len;
	char *data = slurp(path, &len);
	long off[NR_INTERVALS + 2];
	struct record_error e;
	int n;

	if (!data)
		return;
	record_offsets(data, len, off, NR_INTERVALS + 2);
	snprintf(bad, sizeof(bad), "%s.bad", path);

	/* A flipped bit in the payload of interval 3. */
	data[off[3] + RECORD_HEAD + 40] ^= 0x10;
	put_file(bad, data, len);
	CHECK_INT(read_all(fx, bad, &n, &e), -EBADMSG);
	CHECK_INT(n, 2);
	CHECK_INT(e.index, 3);
	CHECK_INT(e.offset, off[3]);
	CHECK_STR(e.what, "bad checksum");
	data[off[3] + RECORD_HEAD + 40] ^= 0x10;

	/* In a length: the head's own checksum says so, rather than "truncated". */
	data[off[2] + 5] ^= 0x01;
	put_file(bad, data, len);
	CHECK_INT(read_all(fx, bad, &n, &e), -EBADMSG);
	CHECK_INT(n, 1);
	CHECK(strstr(e.what, "bad checksum in the record's head"), "%s", e.what);
	data[off[2] + 5] ^= 0x01;

	/* In the tag. */
	data[off[4]] = 'X';
	put_file(bad, data, len);
	CHECK_INT(read_all(fx, bad, &n, &e), -EBADMSG);
	CHECK_INT(n, 3);
	CHECK(strstr(e.what, "not a record"), "%s", e.what);
	data[off[4]] = 'C';

	/* In the header record: nothing can be read. */
	data[off[0] + RECORD_HEAD + 3] ^= 0xff;
	put_file(bad, data, len);
	CHECK_INT(read_all(fx, bad, &n, &e), -EBADMSG);
	CHECK(e.index == 0 && strstr(e.what, "bad checksum"), "%ld %s", e.index, e.what);
	data[off[0] + RECORD_HEAD + 3] ^= 0xff;

	/* Not a record file; a newer format. */
	data[0] = 'X';
	put_file(bad, data, len);
	CHECK_INT(read_all(fx, bad, &n, &e), -EBADMSG);
	CHECK(strstr(e.what, "not a cgtma record file"), "%s", e.what);
	data[0] = 'C';
	data[8] = RECORD_VERSION + 1;
	put_file(bad, data, len);
	CHECK_INT(read_all(fx, bad, &n, &e), -EBADMSG);
	CHECK(strstr(e.what, "version 9; this cgtma reads versions 1 to 8"), "%s", e.what);
	data[8] = RECORD_VERSION;

	/* A record after the summary, and an interval repeated (its sequence number). */
	data = realloc(data, len + (off[2] - off[1]));
	memcpy(data + len, data + off[1], off[2] - off[1]);
	put_file(bad, data, len + (off[2] - off[1]));
	CHECK_INT(read_all(fx, bad, &n, &e), -EBADMSG);
	CHECK_INT(n, NR_INTERVALS + 1);
	CHECK(strstr(e.what, "after the summary"), "%s", e.what);
	put_file(bad, data, off[2]);
	{
		FILE *f = fopen(bad, "ab");

		fwrite(data + off[1], 1, off[2] - off[1], f);
		fclose(f);
	}
	CHECK_INT(read_all(fx, bad, &n, &e), -EBADMSG);
	CHECK_INT(n, 1);
	CHECK(strstr(e.what, "interval 1 where 2 was next"), "%s", e.what);
	free(data);
	unlink(bad);
}

static void put_le32(char *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (char)(v >> (8 * i));
}

/* Renumbers the interval record at off (its payload starts with the number) and reseals it. */
static void renumber(char *data, long off, uint32_t seq)
{
	uint32_t plen = get_le32(data + off + 4);

	put_le32(data + off + RECORD_HEAD, seq);
	put_le32(data + off + RECORD_HEAD + plen,
		 record_crc32(0, data + off + RECORD_HEAD, plen));
}

/*
 * A file's header as a version before 7 wrote it: without its metric list (an empty one
 * here), resealed. The file's new length.
 */
static size_t drop_header_metrics(char *data, size_t len)
{
	char *h = data + RECORD_FILE_HEAD, *payload = h + RECORD_HEAD;
	uint32_t plen = get_le32(h + 4);

	CHECK_INT(get_le32(payload + plen - 4), 0);
	memmove(payload + plen - 4, payload + plen, len - (size_t)(payload + plen - data));
	plen -= 4;
	put_le32(h + 4, plen);
	put_le32(h + 8, record_crc32(0, h, 8));
	put_le32(payload + plen, record_crc32(0, payload, plen));
	return len - 4;
}

/* A gap record of payload length len (8 when well formed) at p; returns its size. */
static size_t gap_record(char *p, uint32_t len, uint32_t first, uint32_t count)
{
	memcpy(p, "CGRG", 4);
	put_le32(p + 4, len);
	put_le32(p + 8, record_crc32(0, p, 8));
	put_le32(p + RECORD_HEAD, first);
	put_le32(p + RECORD_HEAD + 4, count);
	put_le32(p + RECORD_HEAD + len, record_crc32(0, p + RECORD_HEAD, len));
	return RECORD_HEAD + len + 4;
}

/*
 * The file a run leaves when intervals 2 and 3 could not be written (a full disk): interval
 * 1, a gap record, then intervals 4 on. Built from the fixture's file, whose intervals come
 * back in order; the gap's numbers are skipped and counted. Then gaps that do not fit.
 */
static void test_gaps(const struct fixture *fx, const char *path)
{
	size_t len, glen, at;
	char *data = slurp(path, &len), *gapped;
	long off[NR_INTERVALS + 2];
	struct record_reader *r;
	struct record_error e = {};
	struct interval iv = {};
	char bad[300];
	int n = 0, err;

	if (!data)
		return;
	CHECK_INT(record_offsets(data, len, off, NR_INTERVALS + 2), NR_INTERVALS + 2);
	snprintf(bad, sizeof(bad), "%s.gap", path);
	gapped = malloc(len + 3 * 24);
	if (!gapped) {
		free(data);
		return;
	}
	/* Header and interval 1; the gap of 2; the rest renumbered from 4. */
	memcpy(gapped, data, off[2]);
	at = off[2];
	glen = gap_record(gapped + at, 8, 2, 2);
	at += glen;
	memcpy(gapped + at, data + off[2], len - off[2]);
	for (int i = 2; i <= NR_INTERVALS + 1; i++)
		renumber(gapped, off[i] + glen, i + 2);
	put_file(bad, gapped, len + glen);

	CHECK_INT(record_reader__open(bad, &r, &e), 0);
	if (r) {
		while ((err = record_reader__next(r, &iv, &e)) > 0) {
			if (n <= NR_INTERVALS)
				check_interval(fx, &fx->iv[n], &iv);
			n++;
		}
		CHECK(err == 0, "a file with a gap: %d, %s", err, e.what);
		CHECK_INT(n, NR_INTERVALS + 1);
		CHECK_INT(record_reader__missing(r), 2);
		record_reader__close(r);
	}
	interval_free(&iv);

	/* A gap that does not start at the next number. */
	gap_record(gapped + off[2], 8, 3, 2);
	put_file(bad, gapped, len + glen);
	CHECK_INT(read_all(NULL, bad, &n, &e), -EBADMSG);
	CHECK_INT(n, 1);
	CHECK_STR(e.what, "a gap of 2 interval(s) from 3 where 2 was next");
	/* An empty one. */
	gap_record(gapped + off[2], 8, 2, 0);
	put_file(bad, gapped, len + glen);
	CHECK_INT(read_all(NULL, bad, &n, &e), -EBADMSG);
	CHECK_STR(e.what, "a gap of 0 interval(s) from 2 where 2 was next");
	/* Two in a row: the second takes the place of interval 4. */
	memcpy(gapped, data, off[2]);
	at = off[2] + gap_record(gapped + off[2], 8, 2, 1);
	at += gap_record(gapped + at, 8, 3, 1);
	put_file(bad, gapped, at);
	CHECK_INT(read_all(NULL, bad, &n, &e), -EBADMSG);
	CHECK_INT(n, 1);
	CHECK_STR(e.what, "two gap records in a row");
	/* Malformed: 4 bytes. */
	at = off[2] + gap_record(gapped + off[2], 4, 2, 0);
	put_file(bad, gapped, at);
	CHECK_INT(read_all(NULL, bad, &n, &e), -EBADMSG);
	CHECK_STR(e.what, "malformed gap record (4 bytes, not 8)");
	/* After the summary. */
	memcpy(gapped, data, len);
	at = len + gap_record(gapped + len, 8, NR_INTERVALS + 2, 1);
	put_file(bad, gapped, at);
	CHECK_INT(read_all(NULL, bad, &n, &e), -EBADMSG);
	CHECK_INT(n, NR_INTERVALS + 1);
	CHECK_STR(e.what, "a record after the summary");

	free(gapped);
	free(data);
	unlink(bad);
}

/*
 * The writer on a disk that fills and frees again, without root: RLIMIT_FSIZE (SIGXFSZ
 * ignored) makes writes past a size fail with EFBIG, the first of them halfway through a
 * record. Intervals 2 and 3 cannot be written; after the limit is lifted, 4 and the summary
 * are, behind a gap record. The reader gets 0, 1, 4 and the summary, each as written, and
 * counts 2 missing; nothing of the cut writes is left in the file.
 */
static void test_writer_resumes(const struct fixture *fx, const char *path)
{
	struct rlimit old, lim;
	struct record_reader *r = NULL;
	struct record_error e = {};
	struct interval iv = {};
	struct output *o;
	struct capture c;
	struct stat st;
	const int want[] = { 0, 1, 4, NR_INTERVALS };
	char *msg;
	int n = 0, err;

	if (getrlimit(RLIMIT_FSIZE, &old) || output_record_open(path, &o)) {
		CHECK(0, "set-up: %s", strerror(errno));
		return;
	}
	signal(SIGXFSZ, SIG_IGN);
	CHECK_INT(o->ops->begin(o, &fx->run), 0);
	for (int i = 0; i < 2; i++)
		CHECK_INT(o->ops->interval(o, &fx->run, &fx->iv[i]), 0);
	CHECK_INT(stat(path, &st), 0);
	lim = old;
	lim.rlim_cur = st.st_size + 10;
	CHECK_INT(setrlimit(RLIMIT_FSIZE, &lim), 0);
	capture_begin(&c, 2);
	for (int i = 2; i < 4; i++)
		CHECK_INT(o->ops->interval(o, &fx->run, &fx->iv[i]), 0);
	setrlimit(RLIMIT_FSIZE, &old);
	CHECK(o->lost, "the sink says it lost intervals");
	CHECK_INT(o->ops->interval(o, &fx->run, &fx->iv[4]), 0);
	CHECK_INT(o->ops->summary(o, &fx->run, &fx->iv[NR_INTERVALS]), 0);
	output_close(o);
	msg = capture_end(&c);
	signal(SIGXFSZ, SIG_DFL);
	CHECK(msg && strstr(msg, "File too large") && strstr(msg, "is written again (2 interval(s)") &&
	      strstr(msg, "2 interval(s) could not be written"), "messages: %s", msg ? msg : "");
	free(msg);

	CHECK_INT(record_reader__open(path, &r, &e), 0);
	if (!r)
		return;
	while ((err = record_reader__next(r, &iv, &e)) > 0) {
		if (n < 4)
			check_interval(fx, &fx->iv[want[n]], &iv);
		n++;
	}
	CHECK(err == 0, "reading the resumed file: %d, %s", err, e.what);
	CHECK_INT(n, 4);
	CHECK_INT(record_reader__missing(r), 2);
	record_reader__close(r);
	interval_free(&iv);
	unlink(path);
}

/* An -e run: no plan, no model text; the event names are what matters. */
static void test_events_run(const char *path)
{
	static const char *const names[] = { "cpu-clock", "sched:sched_switch" };
	struct run run = {
		.model = "events", .nr_events = 2, .event_names = names, .level = 1,
		.hostname = "h", .kernel = NULL, .cpu = "c", .interval_ms = 250,
	};
	struct interval iv = { .time = 2, .interval_s = 0.25 };
	struct record_reader *r = NULL;
	struct record_error e;
	struct output *o;
	struct scope *s;
	int err;

	s = interval_add_scope(&iv, &run, SCOPE_SYSTEM, NULL, -1);
	if (!s)
		return;
	s->sum[1] = (struct cgtma_count){ 5, 6, 3 };
	CHECK_INT(output_record_open(path, &o), 0);
	CHECK_INT(o->ops->begin(o, &run), 0);
	CHECK_INT(o->ops->interval(o, &run, &iv), 0);
	iv.summary = true;
	CHECK_INT(o->ops->summary(o, &run, &iv), 0);
	output_close(o);

	iv.summary = false;
	CHECK_INT(record_reader__open(path, &r, &e), 0);
	if (!r)
		return;
	CHECK(!record_reader__header(r)->has_plan && !record_reader__header(r)->run.model_source,
	      "an -e record has no plan and no model text");
	CHECK_STR(record_reader__header(r)->encodings[1], "sched:sched_switch");
	{
		const struct run *rr = &record_reader__header(r)->run;

		/* The run as written, a kernel not known as "". */
		CHECK(!strcmp(rr->model, "events") && rr->nr_events == 2 &&
		      !strcmp(rr->event_names[1], "sched:sched_switch") && rr->level == 1 &&
		      rr->interval_ms == 250 && !strcmp(rr->hostname, "h") &&
		      !strcmp(rr->kernel, "") && !strcmp(rr->cpu, "c") && !rr->plan,
		      "the run read back");
	}
	err = record_reader__next(r, &iv, &e);
	CHECK_INT(err, 1);
	CHECK(iv.nr_scopes == 1 && iv.scopes[0].sum[1].running == 3, "sums");
	CHECK_INT(record_reader__next(r, &iv, &e), 1);
	CHECK(iv.summary, "the summary");
	CHECK_INT(record_reader__next(r, &iv, &e), 0);
	record_reader__close(r);
	interval_free(&iv);
}

/*
 * A version 1 record (the fuzz corpus' seed, written before container names): its run, and
 * every interval to the summary.
 */
static void test_version1(void)
{
	static const char *const names[] = { "cpu-clock", "context-switches", "cpu-migrations",
					     "page-faults" };
	struct interval iv = {};
	struct record_reader *r = NULL;
	struct record_error e;
	const struct run *run;
	int n = 0, err;

	CHECK_INT(record_reader__open("tests/fuzz/corpus/fuzz_record/sw-2-intervals.cgtma", &r,
				      &e), 0);
	if (!r)
		return;
	CHECK_INT(record_reader__header(r)->version, 1);
	run = &record_reader__header(r)->run;
	CHECK_STR(run->model, "sw");
	CHECK_INT(run->nr_events, 4);
	for (int i = 0; i < run->nr_events && i < 4; i++)
		CHECK_STR(run->event_names[i], names[i]);
	CHECK(run->cgroups && !run->per_cpu, "flags");
	while ((err = record_reader__next(r, &iv, &e)) > 0) {
		CHECK_INT(iv.nr_scopes, 3);
		if (iv.nr_scopes == 3)
			CHECK(iv.scopes[0].kind == SCOPE_SYSTEM && !strcmp(iv.scopes[1].cgroup, "/a") &&
			      !strcmp(iv.scopes[2].cgroup, "/b") && !iv.scopes[1].names.container,
			      "scopes of interval %d", n);
		CHECK_INT(iv.summary, n == 2);
		n++;
	}
	CHECK_INT(err, 0);
	CHECK_INT(n, 3);
	record_reader__close(r);
	interval_free(&iv);
}

/*
 * A version 5 record (the fuzz corpus' seed, before marks and cgroup ids): its intervals
 * read with no marks and no bound, the cgroups' counts whole.
 */
static void test_version5(void)
{
	struct interval iv = {};
	struct record_reader *r = NULL;
	struct record_error e;
	int n = 0, err;

	CHECK_INT(record_reader__open("tests/fuzz/corpus/fuzz_record/samples-2-profiles-v5.cgtma",
				      &r, &e), 0);
	if (!r)
		return;
	CHECK_INT(record_reader__header(r)->version, 5);
	CHECK_STR(record_reader__header(r)->run.event_names[0], "cpu-clock");
	while ((err = record_reader__next(r, &iv, &e)) > 0) {
		CHECK(!iv.missed_slices && !iv.missed_unbounded && !iv.missed_max_ns &&
		      !iv.nr_marks, "interval %d: no marks", n);
		CHECK_INT(iv.nr_scopes, 3);
		for (int i = 1; i < iv.nr_scopes && i < 3; i++)
			CHECK(iv.scopes[i].kind == SCOPE_CGROUP &&
			      !strcmp(iv.scopes[i].cgroup, i == 1 ? "/db" : "/web") &&
			      iv.scopes[i].sum[0].counter == 400000000, "interval %d: scope %d", n, i);
		n++;
	}
	CHECK_INT(err, 0);
	CHECK_INT(n, 3);
	record_reader__close(r);
	interval_free(&iv);
}

static void test_unwritable(void)
{
	struct capture c;
	struct output *o = NULL;
	char *msg;
	int err;

	capture_begin(&c, 2);
	err = output_record_open("/nonexistent-dir/x.cgtma", &o);
	msg = capture_end(&c);
	CHECK_INT(err, -ENOENT);
	CHECK(msg && strstr(msg, "'/nonexistent-dir/x.cgtma'") &&
	      strstr(msg, "No such file or directory"), "message: %s", msg ? msg : "");
	free(msg);
}

/* cgtma report with argv, what it printed in *out and *err. */
static int run_report_argv(char **argv, int argc, char **out, char **err)
{
	struct capture co, ce;
	int ret;

	capture_begin(&co, 1);
	capture_begin(&ce, 2);
	ret = cmd_report(argc, argv);
	*err = capture_end(&ce);
	*out = capture_end(&co);
	return ret;
}

static int run_report(const char *path, const char *level, char **out, char **err_out)
{
	char *argv[] = { "report", (char *)path, "--json", "-l", (char *)level, NULL };

	return run_report_argv(argv, 5, out, err_out);
}

/*
 * cgtma report on a level-2 record: -l 1 maps the events, -l 3 needs uncounted ones, and so
 * does -l 6, spr's level 4.
 */
static void test_report_levels(const char *path)
{
	struct fixture fx2;
	char *out = NULL, *err = NULL;
	int ret;

	CHECK_INT(fixture_init(&fx2, 2, false), 0);
	CHECK_INT(write_record(&fx2, path), 0);

	ret = run_report(path, "1", &out, &err);
	CHECK_INT(ret, 0);
	/* Every interval and the summary, with level-1 nodes only. */
	{
		int lines = 0;

		for (char *p = out; p && (p = strchr(p, '\n')); p++)
			lines++;
		CHECK_INT(lines, NR_INTERVALS + 1);
	}
	CHECK(out && strstr(out, "\"Backend_Bound\":") && !strstr(out, "Memory_Bound"),
	      "level-1 nodes only: %.300s", out ? out : "");
	free(out);
	free(err);

	ret = run_report(path, "3", &out, &err);
	CHECK_INT(ret, 2);
	CHECK(err && strstr(err, "level 3 needs events the run did not count") &&
	      strstr(err, "recorded level 2"), "stderr: %s", err ? err : "");
	free(out);
	free(err);

	/* beyond spr's depth: its deepest level, said so (model_level), which needs more too */
	ret = run_report(path, "6", &out, &err);
	CHECK_INT(ret, 2);
	CHECK(err && strstr(err, "cgtma: level 6: model 'spr' has levels 1 to 4: showing them\n") &&
	      strstr(err, "level 4 needs events the run did not count"), "stderr: %s",
	      err ? err : "");
	free(out);
	free(err);

	ret = run_report("/nonexistent-dir/x.cgtma", "1", &out, &err);
	CHECK_INT(ret, 1);
	CHECK(err && strstr(err, "/nonexistent-dir/x.cgtma") && strstr(err, "No such file"),
	      "stderr: %s", err ? err : "");
	free(out);
	free(err);
	fixture_release(&fx2);
}

/*
 * A level-3 record reported at level 3: each copy of an event maps to its own recorded copy;
 * and a record listing each event once (made before events were counted again per group)
 * still reports, every copy reading the one recorded.
 */
static void test_report_copies(const char *path)
{
	struct fixture fx3;
	char *out = NULL, *err = NULL;

	for (int once = 0; once <= 1; once++) {
		int lines = 0;

		CHECK_INT(fixture_init(&fx3, 3, once), 0);
		CHECK(once ? fx3.run.nr_events < fx3.plan->nr_events :
			     fx3.run.nr_events == fx3.plan->nr_events,
		      "once %d: %d events of %d", once, fx3.run.nr_events, fx3.plan->nr_events);
		CHECK_INT(write_record(&fx3, path), 0);
		CHECK_INT(run_report(path, "3", &out, &err), 0);
		for (char *p = out; p && (p = strchr(p, '\n')); p++)
			lines++;
		CHECK_INT(lines, NR_INTERVALS + 1);
		CHECK(out && strstr(out, "\"Backend_Bound.Memory_Bound.L1_Bound\":0.") &&
		      strstr(out, "\"split_nodes\":["), "once %d: %.300s", once, out ? out : "");
		CHECK(err && !*err, "once %d: stderr %s", once, err ? err : "");
		free(out);
		free(err);
		fixture_release(&fx3);
	}
}

/*
 * What `cgtma report` feeds the views: a count scaled past an int64 is the int64's limit in
 * --json (not what llround makes of it); a cgroup one of whose events was enabled but never
 * ran was counted 0 % of the time (the multiplex rule every view shares); --html alone
 * prints nothing on stdout.
 */
static void test_report_views(const char *path)
{
	static const char *const names[] = { "cpu-clock", "instructions" };
	struct run run = {
		.model = "events", .nr_events = 2, .event_names = names, .level = 1,
		.hostname = "h", .kernel = "k", .cpu = "c", .interval_ms = 1000,
		.start_time = 1, .cgroups = true,
	};
	struct interval iv = { .time = 2, .interval_s = 1 };
	char html[300], *argv[] = { "report", (char *)path, "--json", NULL };
	char *argv_html[] = { "report", (char *)path, "--html", html, NULL };
	char *out = NULL, *err = NULL, *page;
	struct capture co, ce;
	struct output *o;
	struct scope *s, *c;
	int ret;

	snprintf(html, sizeof(html), "%s.html", path);
	s = interval_add_scope(&iv, &run, SCOPE_SYSTEM, NULL, -1);
	c = interval_add_scope(&iv, &run, SCOPE_CGROUP, "/c", -1);
	if (!s || !c) {
		CHECK(0, "interval_add_scope");
		interval_free(&iv);
		return;
	}
	/* Ran a nanosecond of 4 s: scaled 4e27. */
	s->sum[0] = (struct cgtma_count){ 1000000000000000000ULL, 4000000000ULL, 1 };
	s->sum[1] = (struct cgtma_count){ 10, 10, 10 };
	c->sum[0] = (struct cgtma_count){ 500000000, 1000000000, 1000000000 };
	c->sum[1] = (struct cgtma_count){ 0, 1000000000, 0 };
	CHECK_INT(output_record_open(path, &o), 0);
	CHECK_INT(o->ops->begin(o, &run), 0);
	CHECK_INT(o->ops->interval(o, &run, &iv), 0);
	iv.summary = true;
	CHECK_INT(o->ops->summary(o, &run, &iv), 0);
	output_close(o);
	interval_free(&iv);

	capture_begin(&co, 1);
	capture_begin(&ce, 2);
	ret = cmd_report(3, argv);
	err = capture_end(&ce);
	out = capture_end(&co);
	CHECK_INT(ret, 0);
	CHECK(out && strstr(out, "\"counts\":{\"cpu-clock\":9223372036854775807,"),
	      "a count past int64: %s", out ? out : "");
	free(out);
	free(err);

	capture_begin(&co, 1);
	capture_begin(&ce, 2);
	ret = cmd_report(4, argv_html);
	err = capture_end(&ce);
	out = capture_end(&co);
	CHECK_INT(ret, 0);
	CHECK_STR(out, "");
	CHECK_STR(err, "");
	page = slurp(html, NULL);
	CHECK(page && strstr(page, "data-kind=\"cgroup\" data-scope=\"/c\""), "no chart of /c");
	CHECK(page && strstr(page, "<h2>/c</h2>\n<p class=\"summary\">") &&
	      strstr(strstr(page, "<h2>/c</h2>"), "counted 0 % of the time"),
	      "/c: an event never ran, yet: %.2000s", page ? strstr(page, "<h2>/c</h2>") : "");
	free(page);
	free(out);
	free(err);
	unlink(html);
}

/*
 * The flat metrics, live and replayed: the software model's (every one a default metric),
 * the generic model's with -m (all five) and --metrics Cycles_per_Second (the three
 * default ones and it), and Neoverse V1's at level 1, where the run counted GHz alone (IPC
 * and CPI would have made the PMU multiplex the tree). What the live run's --json, -x, and
 * terminal printed, `cgtma report` prints byte for byte from the record, the metrics -m
 * chose among them; a record naming metrics the replanned model does not compute (here one
 * renamed in the header) is refused, naming what differs, exit 1.
 */
static void test_report_metrics(const char *path, const char *model, const char *selection,
				int nr_metrics)
{
	static const char *const views[][3] = { { "--json" }, { "-x", "," }, { NULL } };
	struct model_options mo = { .level = 1, .metrics = selection, .spare_tree = true };
	struct model *m = NULL;
	struct plan *p = NULL;
	struct run run = { .model = model, .level = 1, .hostname = "h", .kernel = "k",
			   .cpu = "c", .interval_ms = 500, .start_time = 1700000000.5,
			   .cgroups = true };
	struct interval iv[3] = {};
	char file[128], *model_text;
	const char **names = NULL;

	snprintf(file, sizeof(file), "user/models/%s.json", model);
	model_text = slurp(file, NULL);
	if (!model_text || model_load_builtin(model, &m) || plan_new(m, &mo, &p)) {
		CHECK(0, "the %s model", model);
		goto out;
	}
	names = calloc(p->nr_events, sizeof(*names));
	if (!names)
		goto out;
	for (int e = 0; e < p->nr_events; e++)
		names[e] = p->events[e].name;
	run.plan = p;
	run.nr_events = p->nr_events;
	run.event_names = names;
	run.model_source = model_text;
	CHECK(p->nr_metrics == nr_metrics, "%s's metrics: %d", model, p->nr_metrics);
	for (int i = 0; i < 3; i++) {
		struct scope *s[3];

		iv[i].summary = i == 2;
		iv[i].time = run.start_time + 0.5 * (i + 1) + 1e-7 * i;
		iv[i].interval_s = iv[i].summary ? 1.0000003 : 0.5000001 + 1e-7 * i;
		s[0] = interval_add_scope(&iv[i], &run, SCOPE_SYSTEM, NULL, -1);
		s[1] = interval_add_scope(&iv[i], &run, SCOPE_CGROUP, "/web", -1);
		s[2] = interval_add_scope(&iv[i], &run, SCOPE_CGROUP, "/db", -1);
		if (!s[0] || !s[1] || !s[2]) {
			CHECK(0, "scopes");
			goto out;
		}
		for (int k = 0; k < 3; k++)
			for (int e = 0; e < run.nr_events; e++) {
				__u64 t = 1000000000ULL / (k + 1) + 977ULL * i + 13ULL * e;

				/* /db ran nothing in the first interval: no metrics there. */
				if (k == 2 && i == 0)
					continue;
				s[k]->sum[e] = (struct cgtma_count){ e ? 37ULL * (k + 1) + i : t,
								     t, t };
			}
		interval_sort(&iv[i]);
		CHECK_INT(report_derive(&run, &iv[i]), 0);
	}
	{
		struct output *rec;

		CHECK_INT(output_record_open(path, &rec), 0);
		CHECK_INT(rec->ops->begin(rec, &run), 0);
		for (int i = 0; i < 3; i++)
			CHECK_INT((i == 2 ? rec->ops->summary : rec->ops->interval)(rec, &run,
										  &iv[i]), 0);
		output_close(rec);
	}
	for (size_t v = 0; v < sizeof(views) / sizeof(views[0]); v++) {
		char *argv[5] = { "report", (char *)path, (char *)views[v][0],
				  (char *)views[v][1], NULL };
		int argc = 2 + !!views[v][0] + !!views[v][1];
		struct output *o = NULL;
		FILE *f = tmpfile();
		char *live, *out = NULL, *err = NULL;

		if (!f)
			continue;
		CHECK_INT(views[v][0] && !strcmp(views[v][0], "--json") ?
			  output_json_open(f, &o) : views[v][0] ? output_csv_open(f, ",", &o) :
			  output_text_open(f, 0, &o), 0);
		if (!o) {
			fclose(f);
			continue;
		}
		CHECK_INT(outputs_begin(&o, 1, &run), 0);
		for (int i = 0; i < 3; i++)
			CHECK_INT(outputs_emit(&o, 1, &run, &iv[i]), 0);
		output_close(o);
		live = synth_slurp(f);
		fclose(f);
		CHECK_INT(run_report_argv(argv, argc, &out, &err), 0);
		/* The last metric, one -m added where it did. */
		CHECK(live && strstr(live, p->metrics[p->nr_metrics - 1].name),
		      "%s: no %s in %s", views[v][0] ? views[v][0] : "text",
		      p->metrics[p->nr_metrics - 1].name, live);
		CHECK(live && out && !strcmp(live, out), "%s: the live run printed\n%s\nreport\n%s",
		      views[v][0] ? views[v][0] : "text", live, out);
		CHECK_STR(err, "");
		free(live);
		free(out);
		free(err);
	}
	/* A record of metrics the model does not compute: refused, saying which. */
	if (p->nr_metrics > 1) {
		const char *was = p->metrics[1].name;
		char *argv[] = { "report", (char *)path, "--json", NULL }, *out, *err;
		struct output *rec;
		char want[128];

		p->metrics[1].name = "Bogus_Metric";
		CHECK_INT(output_record_open(path, &rec), 0);
		CHECK_INT(rec->ops->begin(rec, &run), 0);
		CHECK_INT(rec->ops->summary(rec, &run, &iv[2]), 0);
		output_close(rec);
		p->metrics[1].name = was;
		CHECK_INT(run_report_argv(argv, 3, &out, &err), 1);
		snprintf(want, sizeof(want), ": this cgtma plans metrics the run did not compute: "
			 "%s\n", was);
		CHECK(err && strstr(err, ": the run computed metrics this cgtma does not plan from "
				    "the recorded model: Bogus_Metric\n") && strstr(err, want),
		      "stderr: %s", err);
		free(out);
		free(err);
	}
out:
	for (int i = 0; i < 3; i++)
		interval_free(&iv[i]);
	free(names);
	free(model_text);
	plan_free(p);
	model_free(m);
}

/* The encoding of a profile, to compare two (pprof's: every field of every table). */
static char *encoded(const struct profile *p, size_t *len)
{
	struct strbuf b = STRBUF_INIT;

	CHECK_INT(pprof_encode(p, &b), 0);
	return strbuf_detach(&b, len);
}

/* The fixture's profile twice, as a reader of profile_fixture_record()'s file sums it. */
static void fixture_twice(struct profile *want)
{
	struct fixture_ids id;
	struct profile once;

	*want = (struct profile)PROFILE_INIT;
	CHECK_INT(profile_fixture(&once, &id), 0);
	CHECK_INT(profile_merge(want, &once), 0);
	CHECK_INT(profile_merge(want, &once), 0);
	profile_release(&once);
}

/* The offset of the n-th record of type in data, or -1. */
static long find_record(const char *data, size_t len, char type, int n)
{
	long off[64];
	int nr = record_offsets(data, len, off, 64);

	for (int i = 0; i < nr; i++)
		if (data[off[i] + 3] == type && n-- == 0)
			return off[i];
	return -1;
}

/*
 * Profile records: summed back into the profile written (every table, every count), as
 * they are read; a malformed one, or one in a version 3 file, is refused naming it; report
 * writes --folded and --pprof from them, and refuses a record without samples and an output
 * it cannot write.
 */
/*
 * A profile record that meets a full disk is cut back and said at the close, the record
 * goes on (the next profile record is whole), and none goes after the summary.
 */
static void test_profile_full_disk(void)
{
	static const char *const names[] = { "cpu-clock" };
	struct run run = { .model = "events", .nr_events = 1, .event_names = names,
			   .hostname = "h", .cpu = "c", .interval_ms = 1000 };
	struct interval iv = { .time = 2, .interval_s = 1 };
	struct record_error e = {};
	struct profile p, got;
	struct fixture_ids id;
	struct rlimit old, lim;
	struct output *o;
	struct capture c;
	struct stat st;
	char path[256], *msg;

	snprintf(path, sizeof(path), "%s/full.cgtma", dir);
	CHECK_INT(profile_fixture(&p, &id), 0);
	CHECK(interval_add_scope(&iv, &run, SCOPE_SYSTEM, NULL, -1) != NULL, "scope");
	if (getrlimit(RLIMIT_FSIZE, &old) || output_record_open(path, &o)) {
		CHECK(0, "set-up: %s", strerror(errno));
		return;
	}
	signal(SIGXFSZ, SIG_IGN);
	CHECK_INT(o->ops->begin(o, &run), 0);
	CHECK_INT(stat(path, &st), 0);
	lim = old;
	lim.rlim_cur = st.st_size + 10;
	CHECK_INT(setrlimit(RLIMIT_FSIZE, &lim), 0);
	capture_begin(&c, 2);
	CHECK_INT(outputs_profile(&o, 1, &p), -EFBIG);
	setrlimit(RLIMIT_FSIZE, &old);
	CHECK(o->lost, "the sink says it lost a profile record");
	CHECK_INT(outputs_profile(&o, 1, &p), 0);
	CHECK_INT(o->ops->interval(o, &run, &iv), 0);
	iv.summary = true;
	CHECK_INT(o->ops->summary(o, &run, &iv), 0);
	CHECK_INT(outputs_profile(&o, 1, &p), -EINVAL);
	output_close(o);
	msg = capture_end(&c);
	signal(SIGXFSZ, SIG_DFL);
	CHECK(msg && strstr(msg, "File too large") &&
	      strstr(msg, "1 profile record(s) (sampled stacks) could not be written"),
	      "messages: %s", msg ? msg : "");
	free(msg);
	/* The file holds the second: the fixture's counts once. */
	CHECK_INT(record_read_profile(path, &got, &e), 0);
	CHECK_INT(got.nr_samples, 4);
	CHECK_INT(got.nr_samples ? got.samples[0].values[0] : 0, 7);
	profile_release(&got);
	profile_release(&p);
	interval_free(&iv);
	unlink(path);
}

static void test_profile_records(const char *no_samples)
{
	char path[256], bad[256], folded[256], pprof[256], *data, *a, *b, *out, *err;
	struct record_reader *r;
	struct record_error e = {};
	struct interval iv = {};
	struct profile want, got;
	size_t len, alen, blen;
	long off;
	int n = 0, ret;

	snprintf(path, sizeof(path), "%s/samples.cgtma", dir);
	snprintf(bad, sizeof(bad), "%s/bad.cgtma", dir);
	snprintf(folded, sizeof(folded), "%s/out.folded", dir);
	snprintf(pprof, sizeof(pprof), "%s/out.pb.gz", dir);
	CHECK_INT(profile_fixture_record(path), 0);
	fixture_twice(&want);

	/* Read as the records come: none before the first, all of them by the summary. */
	CHECK_INT(record_reader__open(path, &r, &e), 0);
	CHECK(record_reader__profile(r) == NULL, "a profile before any profile record");
	while (record_reader__next(r, &iv, &e) > 0) {
		const struct profile *p = record_reader__profile(r);

		n++;
		CHECK(p && p->nr_samples == 4, "interval %d: %d samples", n,
		      p ? p->nr_samples : -1);
		CHECK_INT(p ? p->samples[0].values[0] : 0, n == 1 ? 7 : 14);
	}
	CHECK_INT(n, 3);
	record_reader__close(r);
	interval_free(&iv);

	CHECK_INT(record_read_profile(path, &got, &e), 0);
	a = encoded(&want, &alen);
	b = encoded(&got, &blen);
	CHECK(a && b && alen == blen && !memcmp(a, b, alen), "the profile read back differs");
	CHECK_INT(got.start_ns, FIX_START_NS);
	CHECK_INT(got.duration_ns, FIX_DURATION_NS);
	/* The losses of both profile records, summed. */
	CHECK_INT(got.lost.samples, 2 * FIX_LOST_SAMPLES);
	CHECK_INT(got.lost.user_stacks, 2 * FIX_LOST_USTACKS);
	CHECK_INT(got.lost.kernel_stacks, 2 * FIX_LOST_KSTACKS);
	CHECK_STR(got.maps[1].build_id ? got.maps[1].build_id : got.maps[0].build_id, "ab12cd34");
	free(a);
	free(b);
	profile_release(&got);

	/*
	 * report --folded --pprof: the files, nothing on stdout; on stderr the live run's losses
	 * over both profile records, as the live run said them at its end.
	 */
	ret = run_report_argv((char *[]){ "report", path, "--folded", folded, "--pprof", pprof,
					  NULL }, 6, &out, &err);
	CHECK_INT(ret, 0);
	CHECK_STR(out, "");
	CHECK(err && strstr(err, "samples.cgtma: --sample: 6 samples lost: the kernel's counts map "
			    "was full (raise --sample-max); 10 user and 4 kernel stacks kept without "
			    "their frames") && strchr(err, '\n') &&
	      !strchr(strchr(err, '\n') + 1, '\n'),
	      "%s", err ? err : "");
	free(out);
	free(err);
	data = slurp(folded, NULL);
	CHECK_STR(data, "/db;main;spin+0x1abc 2\n/db;main;spin_db 4\nweb;main;spin_web 14\n"
			"web;main;spin_web;asm_sysvec 2\n");
	free(data);
	data = slurp(pprof, &len);
	CHECK(data && len > 20 && (unsigned char)data[0] == 0x1f, "no gzip in %s", pprof);
	free(data);

	/* An output that cannot be written: said, exit 1, before anything is read. */
	ret = run_report_argv((char *[]){ "report", path, "--pprof", "/nonexistent-dir/p.pb.gz",
					  NULL }, 4, &out, &err);
	CHECK_INT(ret, 1);
	CHECK(err && strstr(err, "cannot write '/nonexistent-dir/p.pb.gz': No such file"),
	      "%s", err ? err : "");
	free(out);
	free(err);

	/* A malformed profile record (a frame out of its table), resealed: refused, named. */
	data = slurp(path, &len);
	off = data ? find_record(data, len, 'P', 1) : -1;
	CHECK(off > 0, "no second profile record");
	if (off > 0) {
		uint32_t plen = get_le32(data + off + 4);

		/* The last sample: [raw, main] and its 2 counts, then the 3 losses; raw becomes
		 * location 99. */
		put_le32(data + off + RECORD_HEAD + plen - 24 - 16 - 8, 99);
		put_le32(data + off + RECORD_HEAD + plen,
			 record_crc32(0, data + off + RECORD_HEAD, plen));
		put_file(bad, data, len);
		CHECK_INT(record_read_profile(bad, &got, &e), -EBADMSG);
		CHECK(strstr(e.what, "malformed profile record (in its samples)"), "%s", e.what);
		CHECK_INT(e.offset, off);
		/* What came before it is kept: the first record's counts. */
		CHECK_INT(got.nr_samples ? got.samples[0].values[0] : 0, 7);
		profile_release(&got);
		ret = run_report_argv((char *[]){ "report", bad, "--folded", folded, NULL }, 4,
				      &out, &err);
		CHECK_INT(ret, 1);
		CHECK(err && strstr(err, "malformed profile record (in its samples)"), "%s",
		      err ? err : "");
		free(out);
		free(err);

		/* A version 3 file has no profile records: one is damage there. */
		data[8] = 3;
		len = drop_header_metrics(data, len);
		put_file(bad, data, len);
		CHECK_INT(record_read_profile(bad, &got, &e), -EBADMSG);
		CHECK(strstr(e.what, "unknown record type 'P'"), "%s", e.what);
		profile_release(&got);
	}
	free(data);

	/* A record without samples: --folded says so, exit 1. */
	ret = run_report_argv((char *[]){ "report", (char *)no_samples, "--folded", folded,
					  NULL }, 4, &out, &err);
	CHECK_INT(ret, 1);
	CHECK(err && strstr(err, "no samples (the run was not recorded with --sample): nothing "
			    "for --folded"), "%s", err ? err : "");
	free(out);
	free(err);
	CHECK(access(folded, F_OK) == 0, "the folded file written before is gone");
	unlink(bad);
	unlink(path);
	unlink(folded);
	unlink(pprof);
	profile_release(&want);
}

/*
 * A version 7 record (the fuzz corpus' seed, mkrecord's before noise): read whole, its
 * cgroups with no noise, and report's --json without the key.
 */
static void test_version7(void)
{
	const char *path = "tests/fuzz/corpus/fuzz_record/sw-2-cgroups-v7.cgtma";
	char *argv[] = { "report", (char *)path, "--json", NULL }, *out = NULL, *err_out = NULL;
	struct interval iv = {};
	struct record_reader *r = NULL;
	struct record_error e;
	int n = 0, err;

	CHECK_INT(record_reader__open(path, &r, &e), 0);
	if (!r)
		return;
	CHECK_INT(record_reader__header(r)->version, 7);
	while ((err = record_reader__next(r, &iv, &e)) > 0) {
		CHECK_INT(iv.nr_scopes, 3);
		for (int i = 1; i < iv.nr_scopes; i++)
			CHECK(iv.scopes[i].kind == SCOPE_CGROUP && !iv.scopes[i].noise.has &&
			      !iv.scopes[i].noise.nr_antagonists, "interval %d: scope %d", n, i);
		n++;
	}
	CHECK_INT(err, 0);
	CHECK_INT(n, 4);
	record_reader__close(r);
	interval_free(&iv);
	CHECK_INT(run_report_argv(argv, 3, &out, &err_out), 0);
	CHECK(out && strstr(out, "\"cgroup\":\"/web\"") && !strstr(out, "noise"),
	      "report --json of a version 7 record: %s", out ? out : "");
	free(out);
	free(err_out);
}

/*
 * The fuzz corpus' version 8 seed (mkrecord's): every cgroup row of every interval and of
 * the summary has each noise field and two antagonists, so that the fuzzer starts from them.
 */
static void test_noise_seed(void)
{
	struct interval iv = {};
	struct record_reader *r = NULL;
	struct record_error e;
	int n = 0, err;

	CHECK_INT(record_reader__open("tests/fuzz/corpus/fuzz_record/sw-2-cgroups-noise.cgtma",
				      &r, &e), 0);
	if (!r)
		return;
	CHECK_INT(record_reader__header(r)->version, 8);
	while ((err = record_reader__next(r, &iv, &e)) > 0) {
		CHECK_INT(iv.nr_scopes, 3);
		CHECK(!iv.scopes[0].noise.has, "interval %d: the system has noise", n);
		for (int i = 1; i < iv.nr_scopes; i++) {
			const struct noise *z = &iv.scopes[i].noise;

			CHECK(z->has == 0x3f && z->nr_antagonists == 1 &&
			      !strcmp(z->antagonists[0].cgroup, i == 1 ? "/web" : "/db") &&
			      z->antagonists[0].took > 0, "interval %d: scope %d: has %#x, %d "
			      "antagonists", n, i, z->has, z->nr_antagonists);
		}
		n++;
	}
	CHECK_INT(err, 0);
	CHECK_INT(n, 4);
	record_reader__close(r);
	interval_free(&iv);
}

/*
 * A noise with a bit no cgtma knows (from a writer that knows more, or damage behind a good
 * checksum): the interval is malformed there, and reading stops.
 */
static void test_noise_unknown_bit(const char *path)
{
	static const char *const names[] = { "cpu-clock" };
	struct run run = { .model = "events", .nr_events = 1, .event_names = names,
			   .level = 1, .interval_ms = 250 };
	struct interval iv = { .time = 2, .interval_s = 0.25 };
	struct record_reader *r = NULL;
	struct record_error e;
	struct output *o;
	struct scope *s;

	CHECK(interval_add_scope(&iv, &run, SCOPE_SYSTEM, NULL, -1) != NULL, "scope");
	s = interval_add_scope(&iv, &run, SCOPE_CGROUP, "/a", -1);
	if (!s)
		return;
	s->noise = (struct noise){ .has = NOISE_WAIT | NOISE_SMT << 1, .wait = 1 };
	CHECK_INT(output_record_open(path, &o), 0);
	CHECK_INT(o->ops->begin(o, &run), 0);
	CHECK_INT(o->ops->interval(o, &run, &iv), 0);
	output_close(o);
	CHECK_INT(record_reader__open(path, &r, &e), 0);
	if (r) {
		CHECK_INT(record_reader__next(r, &iv, &e), -EBADMSG);
		CHECK_STR(e.what, "malformed interval (scope 2 of 2)");
		record_reader__close(r);
	}
	interval_free(&iv);
	unlink(path);
}

int main(void)
{
	struct fixture fx;
	char path[256], path2[256];

	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(path, sizeof(path), "%s/run.cgtma", dir);
	snprintf(path2, sizeof(path2), "%s/other.cgtma", dir);

	test_crc();
	CHECK_INT(fixture_init(&fx, 3, false), 0);
	test_round_trip(&fx, path);
	test_truncation(&fx, path);
	test_corruption(&fx, path);
	test_gaps(&fx, path);
	test_writer_resumes(&fx, path2);
	fixture_release(&fx);
	test_events_run(path2);
	test_profile_records(path2);
	test_profile_full_disk();
	test_version1();
	test_version5();
	test_version7();
	test_noise_seed();
	test_noise_unknown_bit(path2);
	test_unwritable();
	test_report_levels(path2);
	test_report_copies(path2);
	test_report_views(path2);
	test_report_metrics(path2, "sw", NULL, 4);
	test_report_metrics(path2, "generic", "", 5);
	test_report_metrics(path2, "generic", "Cycles_per_Second", 4);
	/* a run that left IPC and CPI out beside the tree replays without them */
	test_report_metrics(path2, "neoverse-v1", NULL, 1);
	/*
	 * A group that shares its name with a metric (icx's Retire is both): the replay takes
	 * the recorded metrics by name, not the group's other members too (UopPI, IpAssist).
	 */
	test_report_metrics(path2, "icx", "Info.Pipeline", 9);

	unlink(path);
	unlink(path2);
	rmdir(dir);
	return test_done("record");
}
