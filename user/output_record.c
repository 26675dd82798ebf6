// SPDX-License-Identifier: GPL-2.0
/*
 * --record FILE: the run's raw sums, one checksummed record per interval (format in
 * record.h). Each record is built in memory and written with one write(), so whatever kills
 * the run, the file holds whole records up to the last interval and at most one cut one.
 * A write that fails (a full disk) is cut back to the last whole record and the run goes on
 * (outfile.h); once writes succeed again, a gap record says which intervals are missing.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "log.h"
#include "outfile.h"
#include "profile.h"
#include "record.h"
#include "strbuf.h"
#include "version_data.h"

struct record_sink {
	struct outfile file;	/* its lost count: intervals not written */
	bool broken;		/* nothing more goes in: no header, or a record not built */
	bool summary_written;	/* the summary is the last record: no profile after it */
	long profiles_lost;	/* profile records not written */
	unsigned int seq;	/* the last interval's number, written or not */
	unsigned int gap_first;	/* the first interval not written since the last one that was */
	int nr_events;
	const char *path;
	char *quoted;		/* "'PATH'", for messages */
	char name[];		/* "record PATH" */
};

uint32_t record_crc32(uint32_t crc, const void *buf, size_t len)
{
	return crc32_z(crc, buf, len);
}

/* The put_* appends are not checked one by one: finish() sees the buffer's failure. */
static void put_u8(struct strbuf *b, unsigned int v)
{
	unsigned char c = v;

	strbuf_add(b, &c, 1);
}

static void le32(unsigned char *p, uint32_t v)
{
	p[0] = v;
	p[1] = v >> 8;
	p[2] = v >> 16;
	p[3] = v >> 24;
}

static void put_u32(struct strbuf *b, uint32_t v)
{
	unsigned char c[4];

	le32(c, v);
	strbuf_add(b, c, sizeof(c));
}

static void put_u64(struct strbuf *b, uint64_t v)
{
	put_u32(b, (uint32_t)v);
	put_u32(b, (uint32_t)(v >> 32));
}

static void put_f64(struct strbuf *b, double v)
{
	uint64_t bits;

	memcpy(&bits, &v, sizeof(bits));
	put_u64(b, bits);
}

static void put_str(struct strbuf *b, const char *s)
{
	size_t n = s ? strlen(s) : 0;

	put_u32(b, n);
	if (n)
		strbuf_add(b, s, n);
}

/* Starts a record: its tag, then a length and the head's checksum filled in by finish(). */
static void start(struct strbuf *b, char type)
{
	char tag[4] = { 'C', 'G', 'R', type };

	strbuf_setlen(b, 0);
	strbuf_add(b, tag, sizeof(tag));
	put_u32(b, 0);
	put_u32(b, 0);
}

static int finish(struct strbuf *b)
{
	size_t payload;

	if (b->failed)
		return -ENOMEM;
	payload = b->len - RECORD_HEAD;
	if (payload > RECORD_MAX)
		return -E2BIG;
	le32((unsigned char *)b->buf + 4, payload);
	le32((unsigned char *)b->buf + 8, record_crc32(0, b->buf, 8));
	put_u32(b, record_crc32(0, b->buf + RECORD_HEAD, payload));
	return b->failed ? -ENOMEM : 0;
}

/* Writes the records in a, then b (if any), as one: both or, cut back, neither. */
static int write_records(struct record_sink *rs, struct strbuf *a, struct strbuf *b)
{
	int err = finish(a);

	if (!err && b)
		err = finish(b);
	if (!err && b && strbuf_add(a, b->buf, b->len))
		err = -ENOMEM;
	return err ? err : outfile_append(&rs->file, a->buf, a->len);
}

/* An interval or the summary; a gap record first when earlier ones could not be written. */
static int emit(struct output *o, struct strbuf *b)
{
	struct record_sink *rs = o->priv;
	struct strbuf gap = STRBUF_INIT;
	int err;

	if (rs->gap_first) {
		start(&gap, 'G');
		put_u32(&gap, rs->gap_first);
		put_u32(&gap, rs->seq - rs->gap_first);
	}
	err = rs->gap_first ? write_records(rs, &gap, b) : write_records(rs, b, NULL);
	strbuf_release(&gap);
	strbuf_release(b);
	if (err == -ENOMEM || err == -E2BIG) {
		rs->file.lost++;
		rs->broken = true;
		return err;
	}
	if (err) {
		/* Said and counted by the outfile; the run goes on, and fails at its end. */
		o->lost = true;
		if (!rs->gap_first)
			rs->gap_first = rs->seq;
		return 0;
	}
	rs->gap_first = 0;
	return 0;
}

static int record_begin(struct output *o, const struct run *run)
{
	struct record_sink *rs = o->priv;
	const struct plan *p = run->plan;
	unsigned char head[RECORD_FILE_HEAD] = RECORD_MAGIC;
	struct strbuf b = STRBUF_INIT;
	int err;

	head[8] = RECORD_VERSION;
	rs->nr_events = run->nr_events;
	err = outfile_write_whole(&rs->file, head, sizeof(head));
	if (err) {
		rs->broken = true;
		return err;
	}
	start(&b, 'H');
	put_str(&b, CGTMA_VERSION);
	put_str(&b, run->hostname);
	put_str(&b, run->kernel);
	put_str(&b, run->cpu);
	put_f64(&b, run->start_time);
	put_u32(&b, run->interval_ms);
	put_str(&b, run->model);
	put_str(&b, run->model_source);
	put_u32(&b, run->level);
	put_u8(&b, run->perf_metrics);
	put_u8(&b, run->smt);
	put_u8(&b, run->per_cpu);
	put_u8(&b, run->cgroups);
	put_u8(&b, p != NULL);
	put_u32(&b, p ? p->opts.nmi_watchdog : 0);
	put_u32(&b, run->nr_events);
	for (int i = 0; i < run->nr_events; i++) {
		put_str(&b, run->event_names[i]);
		put_str(&b, p ? p->events[i].encoding : run->event_names[i]);
		put_u32(&b, p ? p->events[i].group : i);
		put_u8(&b, p ? p->events[i].fixed : 0);
	}
	/* What report must compute again: the metrics -m chose are no option it has. */
	put_u32(&b, p ? p->nr_metrics : 0);
	for (int i = 0; p && i < p->nr_metrics; i++)
		put_str(&b, p->metrics[i].name);
	/* Without its header a record is nothing: this failure ends the sink. */
	err = finish(&b);
	if (!err)
		err = outfile_write_whole(&rs->file, b.buf, b.len);
	strbuf_release(&b);
	if (err)
		rs->broken = true;
	return err;
}

/* A mark (report.h) as the record keeps it (record.h). */
static void put_mark(struct strbuf *b, const struct mark *k)
{
	const struct cgtma_miss *m = &k->m;

	put_u32(b, (uint32_t)k->cpu);
	put_u32(b, m->kind);
	put_u32(b, m->count);
	put_u64(b, m->ran_cgroup);
	put_u64(b, m->charged_cgroup);
	put_u64(b, m->slice_ns);
	put_u64(b, m->max_ns);
	put_u64(b, m->unseen_ns);
	put_u32(b, m->pid);
	put_u32(b, m->charged_pid);
	put_str(b, m->comm);
	put_str(b, k->ran);
	put_str(b, k->charged);
}

/* A cgroup scope's noise (record.h): its bits, then the fields they say it has. */
static void put_noise(struct strbuf *b, const struct noise *n)
{
	put_u32(b, n->has);
	if (n->has & NOISE_WAIT)
		put_f64(b, n->wait);
	if (n->has & NOISE_THROTTLED) {
		put_f64(b, n->throttled);
		put_u64(b, n->nr_throttled);
	}
	if (n->has & NOISE_PRESSURE_SOME)
		put_f64(b, n->pressure_some);
	if (n->has & NOISE_PRESSURE_FULL)
		put_f64(b, n->pressure_full);
	if (n->has & NOISE_PREEMPTED)
		put_f64(b, n->preempted);
	if (n->has & NOISE_SMT)
		put_f64(b, n->smt_shared);
	/* Antagonists come with the switch hook's fields, and say nothing without them. */
	if (!(n->has & (NOISE_PREEMPTED | NOISE_SMT)))
		return;
	put_u32(b, n->nr_antagonists);
	for (int i = 0; i < n->nr_antagonists; i++) {
		const struct antagonist *a = &n->antagonists[i];

		put_str(b, a->cgroup);
		put_str(b, a->container);
		if (n->has & NOISE_PREEMPTED) {
			put_f64(b, a->preempt);
			put_f64(b, a->took);
		}
		if (n->has & NOISE_SMT)
			put_f64(b, a->smt);
	}
}

static int record_interval(struct output *o, const struct run *run, const struct interval *iv)
{
	struct record_sink *rs = o->priv;
	struct strbuf b = STRBUF_INIT;

	if (rs->broken) {
		rs->file.lost++;	/* said once, when it broke */
		return 0;
	}
	rs->summary_written |= iv->summary;
	/* Numbered whether or not it gets written: a reader sees the gap. */
	start(&b, iv->summary ? 'S' : 'I');
	put_u32(&b, ++rs->seq);
	put_f64(&b, iv->time);
	put_f64(&b, iv->interval_s);
	put_u8(&b, iv->has_bpf_stats);
	put_u64(&b, iv->bpf_run_time_ns);
	put_u64(&b, iv->bpf_run_cnt);
	put_u64(&b, iv->missed_slices);
	put_u64(&b, iv->missed_max_ns);
	put_u64(&b, iv->missed_unbounded);
	put_u32(&b, iv->nr_marks);
	for (int i = 0; i < iv->nr_marks; i++)
		put_mark(&b, &iv->marks[i]);
	put_u32(&b, rs->nr_events);
	put_u32(&b, iv->nr_scopes);
	for (int i = 0; i < iv->nr_scopes; i++) {
		const struct scope *s = &iv->scopes[i];

		put_u8(&b, s->kind);
		put_u8(&b, s->removed);
		put_u32(&b, (uint32_t)s->cpu);
		put_str(&b, s->kind == SCOPE_CGROUP || s->kind == SCOPE_TASK ? s->cgroup :
			    s->kind == SCOPE_IRQ ? s->irq : NULL);
		if (s->kind == SCOPE_CGROUP || s->kind == SCOPE_TASK)
			put_u64(&b, s->cgroup_id);
		if (s->kind == SCOPE_TASK) {
			put_u32(&b, (uint32_t)s->pid);
			put_u32(&b, (uint32_t)s->tid);
			put_str(&b, s->comm);
		}
		if (s->kind == SCOPE_CGROUP) {
			put_str(&b, s->names.container);
			put_str(&b, s->names.pod);
			put_str(&b, s->names.namespace);
			put_noise(&b, &s->noise);
		}
		for (int e = 0; e < rs->nr_events; e++) {
			put_u64(&b, s->sum[e].counter);
			put_u64(&b, s->sum[e].enabled);
			put_u64(&b, s->sum[e].running);
		}
	}
	return emit(o, &b);
}

/* A string of the profile as the record refers to it: 0 for none, else its index + 1. */
static void put_ref(struct strbuf *b, const struct profile *p, const char *s)
{
	put_u32(b, s ? hashmap_get_str(&p->str_index, s) + 1 : 0);
}

/* The profile record (record.h): its strings once, then everything by index. */
static void put_profile(struct strbuf *b, const struct profile *p)
{
	put_u64(b, p->start_ns);
	put_u64(b, p->duration_ns);
	put_u32(b, p->nr_strs);
	for (int i = 0; i < p->nr_strs; i++)
		put_str(b, p->strs[i]);
	put_u32(b, p->nr_types);
	for (int i = 0; i < p->nr_types; i++) {
		put_ref(b, p, p->types[i].event);
		put_u64(b, p->types[i].period);
	}
	put_u32(b, p->nr_scopes);
	for (int i = 0; i < p->nr_scopes; i++) {
		put_ref(b, p, p->scopes[i].name);
		put_ref(b, p, p->scopes[i].cgroup);
		put_ref(b, p, p->scopes[i].container);
		put_ref(b, p, p->scopes[i].pod);
	}
	put_u32(b, p->nr_maps);
	for (int i = 0; i < p->nr_maps; i++) {
		put_u64(b, p->maps[i].start);
		put_u64(b, p->maps[i].limit);
		put_u64(b, p->maps[i].file_offset);
		put_ref(b, p, p->maps[i].file);
		put_ref(b, p, p->maps[i].build_id);
	}
	put_u32(b, p->nr_locs);
	for (int i = 0; i < p->nr_locs; i++) {
		put_u64(b, p->locs[i].addr);
		put_u32(b, (uint32_t)p->locs[i].mapping);
		put_ref(b, p, p->locs[i].func);
		put_ref(b, p, p->locs[i].file);
		put_u32(b, (uint32_t)p->locs[i].line);
	}
	put_u32(b, p->nr_samples);
	for (int i = 0; i < p->nr_samples; i++) {
		const struct profile_sample *smp = &p->samples[i];

		put_u32(b, smp->scope);
		put_u32(b, smp->pid);
		put_ref(b, p, smp->comm);
		put_u32(b, smp->nr_locs);
		for (int k = 0; k < smp->nr_locs; k++)
			put_u32(b, smp->locs[k]);
		for (int t = 0; t < p->nr_types; t++)
			put_u64(b, smp->values[t]);
	}
	put_u64(b, p->lost.samples);
	put_u64(b, p->lost.user_stacks);
	put_u64(b, p->lost.kernel_stacks);
}

/*
 * The profile p (a run's samples so far, or an interval's) as a record of its own: before
 * the summary (after it, -EINVAL, the caller's mistake: the summary ends a record).
 */
static int record_profile(struct output *o, const struct profile *p)
{
	struct record_sink *rs = o->priv;
	struct strbuf b = STRBUF_INIT;
	int err;

	if (rs->summary_written)
		return -EINVAL;
	if (rs->broken) {
		rs->profiles_lost++;
		return 0;
	}
	start(&b, 'P');
	put_profile(&b, p);
	err = finish(&b);
	if (!err)
		err = outfile_write_whole(&rs->file, b.buf, b.len);
	strbuf_release(&b);
	if (err && err != -ENOMEM && err != -E2BIG)
		outfile_failed(&rs->file, rs->quoted, err);
	else if (!err)
		outfile_written(&rs->file);
	if (err) {
		rs->profiles_lost++;
		o->lost = true;
	}
	return err;
}

static void record_close(struct output *o)
{
	struct record_sink *rs = o->priv;

	bool ended = rs->broken || rs->file.broken;

	if (rs->file.lost && ended)
		output_lost(o, "%s: %ld interval(s) could not be written; the file ends where "
			    "recording stopped", rs->path, rs->file.lost);
	else if (rs->file.lost)
		output_lost(o, "%s: %ld interval(s) could not be written; the file holds the rest "
			    "(cgtma report says where they are missing)", rs->path, rs->file.lost);
	if (rs->profiles_lost)
		output_lost(o, "%s: %ld profile record(s) (sampled stacks) could not be written",
			    rs->path, rs->profiles_lost);
	/* Intervals are in the page cache as they end; this is for a crash of the machine. */
	if (!ended)
		fdatasync(rs->file.fd);
	close(rs->file.fd);
	free(rs->quoted);
	free(rs);
}

static const struct output_ops record_ops = {
	.begin = record_begin,
	.interval = record_interval,
	.summary = record_interval,
	.profile = record_profile,
	.close = record_close,
};

int output_record_open(const char *path, struct output **op)
{
	size_t len = strlen("record ") + strlen(path) + 1;
	struct record_sink *rs = calloc(1, sizeof(*rs) + len);
	struct output *o = calloc(1, sizeof(*o));
	int err, fd;

	if (!rs || !o) {
		free(rs);
		free(o);
		return -ENOMEM;
	}
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		err = -errno;
		pr_err("cannot create record file '%s': %s", path, strerror(-err));
		free(rs);
		free(o);
		return err;
	}
	snprintf(rs->name, len, "record %s", path);
	rs->path = rs->name + strlen("record ");
	if (asprintf(&rs->quoted, "'%s'", path) < 0) {
		close(fd);
		free(rs);
		free(o);
		return -ENOMEM;
	}
	outfile_init(&rs->file, fd, rs->quoted, "the record keeps what was written");
	o->ops = &record_ops;
	o->name = rs->name;
	o->priv = rs;
	*op = o;
	return 0;
}
