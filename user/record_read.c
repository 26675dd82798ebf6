// SPDX-License-Identifier: GPL-2.0
/*
 * Reading record files (format in record.h) for `cgtma report`. Every record is checked
 * (head checksum, length, payload checksum, then the payload's own structure) before
 * anything of it is returned; the first damaged record ends the reading, and the error
 * names it by number and byte offset.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "irqscope.h"
#include "profile.h"
#include "record.h"

/* Sanity limits: a payload that passes its checksum but claims more is not from cgtma. */
#define RECORD_MAX_EVENTS 4096

/* The fuzzer explores what lies behind the checksums, which it could not forge. */
#ifdef CGTMA_FUZZING
#define SKIP_CHECKSUMS 1
#else
#define SKIP_CHECKSUMS 0
#endif

struct record_reader {
	FILE *f;
	long long offset;		/* of the next record */
	long index;			/* number of the next record */
	unsigned int seq;		/* intervals and summary read or missing */
	long missing;			/* intervals the writer could not write (gap records) */
	bool summary_read;
	bool has_profile;		/* a profile record was read */
	struct profile profile;		/* their sum */
	bool failed;			/* an error was returned: nothing more is read */
	struct record_header h;
	char **event_names;		/* h.run's, owned */
	unsigned char *buf;
	size_t cap;
};

/* A bounds-checked walk through a payload. */
struct cursor {
	const unsigned char *p;
	size_t left;
	bool short_read;
};

static const unsigned char *take(struct cursor *c, size_t n)
{
	const unsigned char *p = c->p;

	if (c->short_read || n > c->left) {
		c->short_read = true;
		return NULL;
	}
	c->p += n;
	c->left -= n;
	return p;
}

static uint32_t rd32(const unsigned char *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
}

static unsigned int get_u8(struct cursor *c)
{
	const unsigned char *p = take(c, 1);

	return p ? *p : 0;
}

static uint32_t get_u32(struct cursor *c)
{
	const unsigned char *p = take(c, 4);

	return p ? rd32(p) : 0;
}

static uint64_t get_u64(struct cursor *c)
{
	const unsigned char *p = take(c, 8);

	return p ? rd32(p) | (uint64_t)rd32(p + 4) << 32 : 0;
}

static double get_f64(struct cursor *c)
{
	uint64_t bits = get_u64(c);
	double v;

	memcpy(&v, &bits, sizeof(v));
	return v;
}

/* A NUL-terminated copy (NULL for an empty string, or when the payload ends). */
static char *get_str(struct cursor *c, size_t *len, bool *nomem)
{
	uint32_t n = get_u32(c);
	const unsigned char *p = take(c, n);
	char *s;

	if (len)
		*len = n;
	if (!p || !n)
		return NULL;
	s = malloc((size_t)n + 1);
	if (!s) {
		*nomem = true;
		return NULL;
	}
	memcpy(s, p, n);
	s[n] = '\0';
	return s;
}

/* The same, "" for an empty string. */
static char *get_str_or_empty(struct cursor *c, bool *nomem)
{
	char *s = get_str(c, NULL, nomem);

	if (!s && !*nomem) {
		s = strdup("");
		*nomem = !s;
	}
	return s;
}

static int damage(struct record_reader *r, struct record_error *e, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* A string into a fixed buffer, cut to fit. */
static void get_str_into(struct cursor *c, char *buf, size_t len)
{
	uint32_t n = get_u32(c);
	const unsigned char *p = take(c, n);

	buf[0] = '\0';
	if (p && n)
		snprintf(buf, len, "%.*s", (int)n, (const char *)p);
}

/*
 * The most marks an interval can list: each CPU's (CGTMA_MISSES_MAX; skipped runs and failed
 * reads take the last place of a full list, and one more is room to spare) at Linux's
 * largest NR_CPUS. More is damage, never a huge allocation.
 */
#define RECORD_MAX_MARKS ((CGTMA_MISSES_MAX + 1) * 8192)

/* An interval's marks (record.h) into iv->marks; -EBADMSG when they do not fit the payload. */
static int get_marks(struct cursor *c, struct interval *iv)
{
	/* cpu, kind, count, 5 u64, 2 u32, three strings' lengths */
	const size_t min_mark = 3 * 4 + 5 * 8 + 2 * 4 + 3 * 4;
	uint32_t n = get_u32(c);

	if (c->short_read || n > c->left / min_mark || n > RECORD_MAX_MARKS)
		return -EBADMSG;
	if (!n)
		return 0;
	iv->marks = calloc(n, sizeof(*iv->marks));
	if (!iv->marks)
		return -ENOMEM;
	iv->nr_marks = n;
	for (uint32_t i = 0; i < n; i++) {
		struct mark *k = &iv->marks[i];

		k->cpu = (int32_t)get_u32(c);
		k->m.kind = get_u32(c);
		k->m.count = get_u32(c);
		k->m.ran_cgroup = get_u64(c);
		k->m.charged_cgroup = get_u64(c);
		k->m.slice_ns = get_u64(c);
		k->m.max_ns = get_u64(c);
		k->m.unseen_ns = get_u64(c);
		k->m.pid = get_u32(c);
		k->m.charged_pid = get_u32(c);
		get_str_into(c, k->m.comm, sizeof(k->m.comm));
		get_str_into(c, k->ran, sizeof(k->ran));
		get_str_into(c, k->charged, sizeof(k->charged));
	}
	return c->short_read ? -EBADMSG : 0;
}

/* The NOISE_* bits a record's noise may hold (report.h). */
#define NOISE_KNOWN (NOISE_WAIT | NOISE_THROTTLED | NOISE_PRESSURE_SOME | NOISE_PRESSURE_FULL | \
		     NOISE_PREEMPTED | NOISE_SMT)

/* A cgroup scope's noise (record.h, version 8 on) into n; -EBADMSG when it is malformed. */
static int get_noise(struct cursor *c, struct noise *n)
{
	memset(n, 0, sizeof(*n));
	n->has = get_u32(c);
	if (n->has & ~NOISE_KNOWN)
		return -EBADMSG;
	if (n->has & NOISE_WAIT)
		n->wait = get_f64(c);
	if (n->has & NOISE_THROTTLED) {
		n->throttled = get_f64(c);
		n->nr_throttled = get_u64(c);
	}
	if (n->has & NOISE_PRESSURE_SOME)
		n->pressure_some = get_f64(c);
	if (n->has & NOISE_PRESSURE_FULL)
		n->pressure_full = get_f64(c);
	if (n->has & NOISE_PREEMPTED)
		n->preempted = get_f64(c);
	if (n->has & NOISE_SMT)
		n->smt_shared = get_f64(c);
	if (!(n->has & (NOISE_PREEMPTED | NOISE_SMT)))
		return c->short_read ? -EBADMSG : 0;
	n->nr_antagonists = (int)get_u32(c);
	if (c->short_read || n->nr_antagonists < 0 ||
	    n->nr_antagonists > NOISE_ANTAGONISTS_MAX)
		return -EBADMSG;
	for (int i = 0; i < n->nr_antagonists; i++) {
		struct antagonist *a = &n->antagonists[i];

		get_str_into(c, a->cgroup, sizeof(a->cgroup));
		get_str_into(c, a->container, sizeof(a->container));
		if (n->has & NOISE_PREEMPTED) {
			a->preempt = get_f64(c);
			a->took = get_f64(c);
		}
		if (n->has & NOISE_SMT)
			a->smt = get_f64(c);
		if (c->short_read || !*a->cgroup)
			return -EBADMSG;
	}
	return 0;
}

static int damage(struct record_reader *r, struct record_error *e, const char *fmt, ...)
{
	va_list ap;

	e->index = r->index;
	e->offset = r->offset;
	va_start(ap, fmt);
	vsnprintf(e->what, sizeof(e->what), fmt, ap);
	va_end(ap);
	r->failed = true;
	return -EBADMSG;
}

static int read_error(struct record_reader *r)
{
	r->failed = true;
	return errno ? -errno : -EIO;
}

/*
 * The next record, checked: 1 with *type and the payload in r->buf (len bytes); 0 at the end
 * of the file on a record boundary; -EBADMSG or -errno.
 */
static int read_record(struct record_reader *r, char *type, size_t *len, struct record_error *e)
{
	unsigned char head[RECORD_HEAD];
	struct stat st;
	uint32_t n;
	size_t got;

	errno = 0;
	got = fread(head, 1, sizeof(head), r->f);
	if (got < sizeof(head) && ferror(r->f))
		return read_error(r);
	if (got == 0)
		return 0;
	if (got < sizeof(head))
		return damage(r, e, "truncated (the file ends %zu bytes into the record's %d-byte "
			      "head)", got, RECORD_HEAD);
	if (memcmp(head, "CGR", 3))
		return damage(r, e, "not a record (bad tag %02x %02x %02x %02x)", head[0], head[1],
			      head[2], head[3]);
	if (record_crc32(0, head, 8) != rd32(head + 8) && !SKIP_CHECKSUMS)
		return damage(r, e, "bad checksum in the record's head (its type or length is "
			      "damaged)");
	n = rd32(head + 4);
	if (n > RECORD_MAX)
		return damage(r, e, "bad length %u", n);
	/* Known short before allocating for it. */
	if (fstat(fileno(r->f), &st) == 0 && S_ISREG(st.st_mode) &&
	    r->offset + RECORD_HEAD + n + 4 > st.st_size)
		return damage(r, e, "truncated (the file ends %lld of %u bytes into the record)",
			      (long long)st.st_size - r->offset, n + RECORD_HEAD + 4);
	if (r->cap < (size_t)n + 4) {
		unsigned char *nb = realloc(r->buf, (size_t)n + 4);

		if (!nb) {
			r->failed = true;
			return -ENOMEM;
		}
		r->buf = nb;
		r->cap = (size_t)n + 4;
	}
	got = fread(r->buf, 1, (size_t)n + 4, r->f);
	if (got < (size_t)n + 4 && ferror(r->f))
		return read_error(r);
	if (got < (size_t)n + 4)
		return damage(r, e, "truncated (the file ends %zu of %u bytes into the record)",
			      got + RECORD_HEAD, n + RECORD_HEAD + 4);
	if (record_crc32(0, r->buf, n) != rd32(r->buf + n) && !SKIP_CHECKSUMS)
		return damage(r, e, "bad checksum");
	if (head[3] != 'H' && head[3] != 'I' && head[3] != 'S' && head[3] != 'G' &&
	    (head[3] != 'P' || r->h.version < 4))
		return damage(r, e, "unknown record type '%c'", head[3]);
	*type = head[3];
	*len = n;
	return 1;
}

/* Moves past the record just parsed. */
static void advance(struct record_reader *r, size_t len)
{
	r->offset += RECORD_HEAD + len + 4;
	r->index++;
}

/* The header's metric names (version 7 on), after its events. */
static int parse_metrics(struct record_reader *r, struct cursor *c, struct record_error *e)
{
	struct record_header *h = &r->h;
	bool nomem = false;
	uint32_t n = get_u32(c);

	if (c->short_read || n > RECORD_MAX_EVENTS || (n && !h->has_plan))
		return damage(r, e, "malformed header (%u metrics)", n);
	h->metrics = calloc(n + 1, sizeof(*h->metrics));
	if (!h->metrics)
		return -ENOMEM;
	h->has_metrics = true;
	for (uint32_t i = 0; i < n; i++) {
		h->metrics[i] = get_str(c, NULL, &nomem);
		if (nomem)
			return -ENOMEM;
		if (c->short_read || !h->metrics[i])
			return damage(r, e, "malformed header (metric %u of %u)", i + 1, n);
		h->nr_metrics++;
	}
	return 0;
}

static int parse_header(struct record_reader *r, size_t len, struct record_error *e)
{
	struct cursor c = { .p = r->buf, .left = len };
	struct record_header *h = &r->h;
	struct run *run = &h->run;
	bool nomem = false;
	uint32_t n;

	/* The order record_begin() writes them in (record.h). */
	h->cgtma_version = get_str(&c, NULL, &nomem);
	run->hostname = get_str_or_empty(&c, &nomem);
	run->kernel = get_str_or_empty(&c, &nomem);
	run->cpu = get_str_or_empty(&c, &nomem);
	run->start_time = get_f64(&c);
	run->interval_ms = (int)get_u32(&c);
	run->model = get_str(&c, NULL, &nomem);
	run->model_source = get_str(&c, &h->model_source_len, &nomem);
	run->level = (int)get_u32(&c);
	run->perf_metrics = get_u8(&c);
	run->smt = get_u8(&c);
	run->per_cpu = get_u8(&c);
	run->cgroups = get_u8(&c);
	h->has_plan = get_u8(&c);
	h->nmi_watchdog = get_u32(&c) != 0;
	n = get_u32(&c);
	if (nomem)
		return -ENOMEM;
	if (c.short_read)
		return damage(r, e, "malformed header (it ends before the event list)");
	if (!run->model)
		return damage(r, e, "malformed header (no model name)");
	if (n == 0 || n > RECORD_MAX_EVENTS)
		return damage(r, e, "malformed header (%u events)", n);
	r->event_names = calloc(n, sizeof(*r->event_names));
	h->encodings = calloc(n, sizeof(*h->encodings));
	h->group = calloc(n, sizeof(*h->group));
	h->fixed = calloc(n, sizeof(*h->fixed));
	if (!r->event_names || !h->encodings || !h->group || !h->fixed)
		return -ENOMEM;
	run->nr_events = n;
	run->event_names = (const char *const *)r->event_names;
	for (uint32_t i = 0; i < n; i++) {
		r->event_names[i] = get_str(&c, NULL, &nomem);
		h->encodings[i] = get_str(&c, NULL, &nomem);
		h->group[i] = (int)get_u32(&c);
		h->fixed[i] = get_u8(&c);
		if (nomem)
			return -ENOMEM;
		if (c.short_read || !r->event_names[i])
			return damage(r, e, "malformed header (event %u of %u)", i + 1, n);
	}
	if (h->version >= 7) {
		int err = parse_metrics(r, &c, e);

		if (err)
			return err;
	}
	if (c.left)
		return damage(r, e, "malformed header (%zu bytes left over)", c.left);
	return 0;
}

int record_reader__open(const char *path, struct record_reader **rp, struct record_error *e)
{
	struct record_reader *r = calloc(1, sizeof(*r));
	unsigned char head[RECORD_FILE_HEAD];
	size_t len, got;
	char type;
	int err;

	*rp = NULL;
	if (!r)
		return -ENOMEM;
	r->f = fopen(path, "rb");
	if (!r->f) {
		err = -errno;
		free(r);
		return err;
	}
	errno = 0;
	got = fread(head, 1, sizeof(head), r->f);
	if (got < sizeof(head) && ferror(r->f)) {
		err = read_error(r);
		goto fail;
	}
	if (got < 8 || memcmp(head, RECORD_MAGIC, 8)) {
		err = damage(r, e, "not a cgtma record file (no '%s' at its start)", RECORD_MAGIC);
		goto fail;
	}
	if (got < sizeof(head)) {
		err = damage(r, e, "truncated (in the file's %d-byte head)", RECORD_FILE_HEAD);
		goto fail;
	}
	r->h.version = rd32(head + 8);
	if (r->h.version < RECORD_VERSION_OLDEST || r->h.version > RECORD_VERSION) {
		err = damage(r, e, "record format version %u; this cgtma reads versions %d to %d",
			     r->h.version, RECORD_VERSION_OLDEST, RECORD_VERSION);
		goto fail;
	}
	r->offset = RECORD_FILE_HEAD;
	err = read_record(r, &type, &len, e);
	if (err == 0)
		err = damage(r, e, "truncated (the file ends before the header record)");
	if (err < 0)
		goto fail;
	if (type != 'H') {
		err = damage(r, e, "the first record is not the header");
		goto fail;
	}
	err = parse_header(r, len, e);
	if (err)
		goto fail;
	advance(r, len);
	*rp = r;
	return 0;
fail:
	record_reader__close(r);
	return err;
}

const struct record_header *record_reader__header(const struct record_reader *r)
{
	return &r->h;
}

/*
 * A record keeps a container's names on its cgroup's rows only: its threads take them from
 * there, as a live run gives them (a thread ran, so its cgroup has a row). Scopes come
 * sorted, a cgroup's threads together: the last match is tried first.
 */
static int name_tasks(struct interval *iv)
{
	const struct scope *cg = NULL;

	for (int i = 0; i < iv->nr_scopes; i++) {
		struct scope *t = &iv->scopes[i];

		if (t->kind != SCOPE_TASK)
			continue;
		if (!cg || strcmp(cg->cgroup, t->cgroup)) {
			cg = NULL;
			for (int j = 0; j < iv->nr_scopes && !cg; j++)
				if (iv->scopes[j].kind == SCOPE_CGROUP && iv->scopes[j].cpu < 0 &&
				    !strcmp(iv->scopes[j].cgroup, t->cgroup))
					cg = &iv->scopes[j];
		}
		if (cg && scope_set_names(t, &cg->names))
			return -ENOMEM;
	}
	return 0;
}

static int parse_interval(struct record_reader *r, size_t len, struct interval *iv,
			  struct record_error *e)
{
	struct cursor c = { .p = r->buf, .left = len };
	int n = r->h.run.nr_events;
	uint32_t seq, nr_events, nr_scopes;
	size_t min_scope;
	bool nomem = false;

	/* The last interval's marks, if the caller hands the same interval again. */
	free(iv->marks);
	iv->marks = NULL;
	iv->nr_marks = 0;
	seq = get_u32(&c);
	iv->time = get_f64(&c);
	iv->interval_s = get_f64(&c);
	iv->has_bpf_stats = get_u8(&c);
	iv->bpf_run_time_ns = get_u64(&c);
	iv->bpf_run_cnt = get_u64(&c);
	iv->missed_slices = r->h.version >= 3 ? get_u64(&c) : 0;
	iv->missed_max_ns = r->h.version >= 6 ? get_u64(&c) : 0;
	/* Before version 6 no bound was kept: every marked slice is one without. */
	iv->missed_unbounded = r->h.version >= 6 ? get_u64(&c) : iv->missed_slices;
	if (iv->missed_unbounded > iv->missed_slices)
		return damage(r, e, "malformed interval (more slices with no bound than marked)");
	if (r->h.version >= 6) {
		int err = get_marks(&c, iv);

		if (err == -ENOMEM)
			return err;
		if (err)
			return damage(r, e, "malformed interval (its marks)");
	}
	nr_events = get_u32(&c);
	nr_scopes = get_u32(&c);
	if (c.short_read)
		return damage(r, e, "malformed interval (it ends before its scopes)");
	if (seq != r->seq + 1)
		return damage(r, e, "interval %u where %u was next (a record is missing)", seq,
			      r->seq + 1);
	if (nr_events != (uint32_t)n)
		return damage(r, e, "malformed interval (%u events, the header has %d)", nr_events,
			      n);
	min_scope = 10 + 24 * (size_t)n;
	if (nr_scopes > c.left / min_scope)
		return damage(r, e, "malformed interval (%u scopes in %zu bytes)", nr_scopes,
			      c.left);
	for (uint32_t i = 0; i < nr_scopes; i++) {
		unsigned int kind = get_u8(&c), removed = get_u8(&c);
		int cpu = (int)get_u32(&c);
		char *cgroup = get_str(&c, NULL, &nomem), *comm = NULL;
		struct cgroup_names names = {};
		struct noise noise = {};
		int pid = 0, tid = 0, irq, bad_noise = 0;
		__u64 cgroup_id = 0;
		struct scope *s;

		if ((kind == SCOPE_CGROUP || kind == SCOPE_TASK) && r->h.version >= 6)
			cgroup_id = get_u64(&c);
		if (!nomem && kind == SCOPE_TASK) {
			pid = (int)get_u32(&c);
			tid = (int)get_u32(&c);
			comm = get_str(&c, NULL, &nomem);
		}
		if (!nomem && kind == SCOPE_CGROUP && r->h.version >= 2) {
			names.container = get_str(&c, NULL, &nomem);
			names.pod = get_str(&c, NULL, &nomem);
			names.namespace = get_str(&c, NULL, &nomem);
			if (r->h.version >= 8)
				bad_noise = get_noise(&c, &noise);
		}
		if (nomem) {
			free(cgroup);
			free(comm);
			cgroup_names_release(&names);
			return -ENOMEM;
		}
		irq = kind == SCOPE_IRQ ? irq_scope_find(cgroup) : -1;
		if (c.short_read || bad_noise || kind > SCOPE_IRQ || cpu < -1 ||
		    (kind == SCOPE_CGROUP || kind == SCOPE_TASK || kind == SCOPE_IRQ) !=
			    (cgroup != NULL) ||
		    (kind == SCOPE_TASK && (!comm || strlen(comm) > 15 || cpu != -1)) ||
		    (kind == SCOPE_IRQ && irq < 0) ||
		    (kind == SCOPE_CPU && cpu < 0) || (kind == SCOPE_SYSTEM && cpu != -1)) {
			free(cgroup);
			free(comm);
			cgroup_names_release(&names);
			return damage(r, e, "malformed interval (scope %u of %u)", i + 1,
				      nr_scopes);
		}
		if (kind == SCOPE_TASK)
			s = interval_add_task(iv, &r->h.run, cgroup, pid, tid);
		else
			s = interval_add_scope(iv, &r->h.run, kind,
					       irq >= 0 ? irq_scope_name(irq) : cgroup, cpu);
		free(cgroup);
		if (s && comm)
			snprintf(s->comm, sizeof(s->comm), "%s", comm);
		free(comm);
		if (s)
			s->names = names;	/* taken */
		else
			cgroup_names_release(&names);
		if (!s)
			return -ENOMEM;
		s->removed = removed;
		s->cgroup_id = cgroup_id;
		s->noise = noise;
		for (int k = 0; k < n; k++) {
			s->sum[k].counter = get_u64(&c);
			s->sum[k].enabled = get_u64(&c);
			s->sum[k].running = get_u64(&c);
		}
		if (c.short_read)
			return damage(r, e, "malformed interval (scope %u of %u)", i + 1,
				      nr_scopes);
	}
	if (c.left)
		return damage(r, e, "malformed interval (%zu bytes left over)", c.left);
	r->seq = seq;
	return name_tasks(iv);
}

/* A gap record: the intervals it names are skipped, and counted. */
static int parse_gap(struct record_reader *r, size_t len, struct record_error *e)
{
	struct cursor c = { .p = r->buf, .left = len };
	uint32_t first = get_u32(&c), count = get_u32(&c);

	if (c.short_read || c.left)
		return damage(r, e, "malformed gap record (%zu bytes, not 8)", len);
	if (first != r->seq + 1 || count == 0 || count > UINT32_MAX - r->seq)
		return damage(r, e, "a gap of %u interval(s) from %u where %u was next", count,
			      first, r->seq + 1);
	r->seq += count;
	r->missing += count;
	return 0;
}

/* A string reference: NULL for 0, else the string; *bad when out of the table. */
static const char *get_ref(struct cursor *c, char **strs, uint32_t nr, bool *bad)
{
	uint32_t i = get_u32(c);

	if (i > nr)
		*bad = true;
	return i && i <= nr ? strs[i - 1] : NULL;
}

/*
 * A profile record's tables into p (empty before), each entry interned there, and a map
 * per table from the record's indexes to p's: version says which fields it has. 0,
 * -ENOMEM, or 1 when the record is malformed (*what names the table).
 */
static int parse_profile_into(struct cursor *c, struct profile *p, char **strs, uint32_t ns,
			      uint32_t version, const char **what)
{
	uint32_t nr_types, nr_scopes, nr_maps, nr_locs, nr_samples;
	int *types = NULL, *scopes = NULL, *maps = NULL, *locs = NULL, *stack = NULL;
	bool bad = false;
	int err = 0;

	/* Each entry takes at least min bytes: a count past what is left is damage. */
#define TABLE(var, min, name, remap)                                                      \
	do {                                                                              \
		*what = name;                                                             \
		var = get_u32(c);                                                         \
		if (c->short_read || var > c->left / (min)) {                             \
			err = 1;                                                          \
			goto out;                                                         \
		}                                                                         \
		remap = malloc(((size_t)var + 1) * sizeof(*remap));                       \
		if (!remap) {                                                             \
			err = -ENOMEM;                                                    \
			goto out;                                                         \
		}                                                                         \
	} while (0)
#define CHECKED(cond)                                                                     \
	do {                                                                              \
		if (bad || c->short_read || !(cond)) {                                    \
			err = 1;                                                          \
			goto out;                                                         \
		}                                                                         \
	} while (0)
#define ADDED(index)                                                                      \
	do {                                                                              \
		if ((index) < 0) {                                                        \
			err = index;                                                      \
			goto out;                                                         \
		}                                                                         \
	} while (0)

	TABLE(nr_types, 12, "types", types);
	for (uint32_t i = 0; i < nr_types; i++) {
		const char *ev = get_ref(c, strs, ns, &bad);
		uint64_t period = get_u64(c);

		CHECKED(ev);
		ADDED(types[i] = profile_type(p, ev, period));
	}
	TABLE(nr_scopes, 16, "scopes", scopes);
	for (uint32_t i = 0; i < nr_scopes; i++) {
		const char *name = get_ref(c, strs, ns, &bad), *cg = get_ref(c, strs, ns, &bad);
		const char *ct = get_ref(c, strs, ns, &bad), *pod = get_ref(c, strs, ns, &bad);

		CHECKED(name);
		ADDED(scopes[i] = profile_scope(p, name, cg, ct, pod));
	}
	TABLE(nr_maps, 32, "mappings", maps);
	for (uint32_t i = 0; i < nr_maps; i++) {
		struct profile_mapping m;

		m.start = get_u64(c);
		m.limit = get_u64(c);
		m.file_offset = get_u64(c);
		m.file = get_ref(c, strs, ns, &bad);
		m.build_id = get_ref(c, strs, ns, &bad);
		CHECKED(true);
		ADDED(maps[i] = profile_mapping(p, &m));
	}
	TABLE(nr_locs, 24, "locations", locs);
	for (uint32_t i = 0; i < nr_locs; i++) {
		struct profile_location l;
		int32_t mapping;

		l.addr = get_u64(c);
		mapping = (int32_t)get_u32(c);
		l.func = get_ref(c, strs, ns, &bad);
		l.file = get_ref(c, strs, ns, &bad);
		l.line = (int)get_u32(c);
		CHECKED(mapping >= -1 && mapping < (int64_t)nr_maps && l.line >= 0);
		l.mapping = mapping >= 0 ? maps[mapping] : -1;
		ADDED(locs[i] = profile_location(p, &l));
	}
	TABLE(nr_samples, (version >= 6 ? 16 : 8) + 8 * (size_t)nr_types, "samples", stack);
	for (uint32_t i = 0; i < nr_samples; i++) {
		uint32_t scope = get_u32(c), pid = 0, nr;
		const char *comm = NULL;
		int *st;

		if (version >= 6) {
			pid = get_u32(c);
			comm = get_ref(c, strs, ns, &bad);
		}
		nr = get_u32(c);
		CHECKED(scope < nr_scopes && nr <= c->left / 4);
		st = realloc(stack, ((size_t)nr + 1) * sizeof(*stack));
		if (!st) {
			err = -ENOMEM;
			goto out;
		}
		stack = st;
		for (uint32_t k = 0; k < nr; k++) {
			uint32_t loc = get_u32(c);

			CHECKED(loc < nr_locs);
			stack[k] = locs[loc];
		}
		for (uint32_t t = 0; t < nr_types; t++) {
			uint64_t v = get_u64(c);

			CHECKED(true);
			ADDED(profile_add_task(p, scopes[scope], pid, comm, stack, nr, types[t],
					       v));
		}
	}
	if (version >= 5) {
		*what = "losses";
		p->lost.samples = get_u64(c);
		p->lost.user_stacks = get_u64(c);
		p->lost.kernel_stacks = get_u64(c);
		CHECKED(true);
	}
	*what = NULL;
	if (c->left)
		err = 1;
out:
	free(types);
	free(scopes);
	free(maps);
	free(locs);
	free(stack);
	return err;
#undef TABLE
#undef CHECKED
#undef ADDED
}

/* A profile record: read whole into a profile of its own, then added to the sum. */
static int parse_profile(struct record_reader *r, size_t len, struct record_error *e)
{
	struct cursor c = { .p = r->buf, .left = len };
	struct profile p = PROFILE_INIT;
	const char *what = "head";
	bool nomem = false;
	char **strs = NULL;
	uint32_t ns;
	int err;

	p.start_ns = get_u64(&c);
	p.duration_ns = get_u64(&c);
	ns = get_u32(&c);
	err = c.short_read || ns > c.left / 4;
	if (!err) {
		strs = calloc((size_t)ns + 1, sizeof(*strs));
		err = strs ? 0 : -ENOMEM;
		what = "strings";
	}
	for (uint32_t i = 0; !err && i < ns; i++) {
		strs[i] = get_str_or_empty(&c, &nomem);
		err = nomem ? -ENOMEM : c.short_read;
	}
	if (!err)
		err = parse_profile_into(&c, &p, strs, ns, r->h.version, &what);
	if (!err)
		err = profile_merge(&r->profile, &p);
	for (uint32_t i = 0; strs && i < ns; i++)
		free(strs[i]);
	free(strs);
	profile_release(&p);
	if (err == 1 && what)
		return damage(r, e, "malformed profile record (in its %s)", what);
	if (err == 1)
		return damage(r, e, "malformed profile record (%zu bytes left over)", c.left);
	if (err) {
		r->failed = true;
		return err;
	}
	r->has_profile = true;
	return 0;
}

const struct profile *record_reader__profile(const struct record_reader *r)
{
	return r->has_profile ? &r->profile : NULL;
}

long record_reader__missing(const struct record_reader *r)
{
	return r->missing;
}

int record_reader__next(struct record_reader *r, struct interval *iv, struct record_error *e)
{
	bool after_gap = false;
	size_t len;
	char type;
	int err;

	interval_clear(iv);
	iv->summary = false;
	if (r->failed)
		return -EINVAL;
	err = read_record(r, &type, &len, e);
	/* Profile records come anywhere before the summary, but between a gap and its interval. */
	while (err > 0 && type == 'P' && !r->summary_read) {
		err = parse_profile(r, len, e);
		if (err)
			return err;
		advance(r, len);
		err = read_record(r, &type, &len, e);
	}
	/* A gap is followed by the interval written after it, never by another gap. */
	if (err > 0 && type == 'G' && !r->summary_read) {
		err = parse_gap(r, len, e);
		if (err)
			return err;
		advance(r, len);
		after_gap = true;
		err = read_record(r, &type, &len, e);
	}
	if (err < 0)
		return err;
	if (err > 0 && (type == 'G' || type == 'P'))
		return damage(r, e, "%s", !after_gap ? "a record after the summary" :
				    type == 'G' ? "two gap records in a row" :
				    "a profile record between a gap and its interval");
	if (err == 0)
		return r->summary_read ? 0 :
			damage(r, e, "the file ends before the summary (the run did not finish, "
			       "or the file was cut)");
	if (r->summary_read)
		return damage(r, e, "a record after the summary");
	if (type == 'H')
		return damage(r, e, "a second header record");
	err = parse_interval(r, len, iv, e);
	if (err) {
		r->failed = true;
		interval_clear(iv);
		return err;
	}
	iv->summary = type == 'S';
	r->summary_read = iv->summary;
	advance(r, len);
	return 1;
}

void record_reader__close(struct record_reader *r)
{
	struct record_header *h;

	if (!r)
		return;
	h = &r->h;
	if (r->f)
		fclose(r->f);
	free(h->cgtma_version);
	free((char *)h->run.hostname);
	free((char *)h->run.kernel);
	free((char *)h->run.cpu);
	free((char *)h->run.model);
	free((char *)h->run.model_source);
	for (int i = 0; i < h->run.nr_events; i++) {
		free(r->event_names[i]);
		free(h->encodings[i]);
	}
	free(r->event_names);
	free(h->encodings);
	free(h->group);
	free(h->fixed);
	for (int i = 0; i < h->nr_metrics; i++)
		free(h->metrics[i]);
	free(h->metrics);
	free(r->buf);
	profile_release(&r->profile);
	free(r);
}

int record_read_profile(const char *path, struct profile *p, struct record_error *e)
{
	struct record_reader *r;
	struct interval iv = {};
	int err;

	*p = (struct profile)PROFILE_INIT;
	err = record_reader__open(path, &r, e);
	if (err)
		return err;
	while ((err = record_reader__next(r, &iv, e)) > 0)
		;
	interval_free(&iv);
	/* Moved out: the reader's is left empty for its close. */
	*p = r->profile;
	r->profile = (struct profile)PROFILE_INIT;
	record_reader__close(r);
	return err;
}
