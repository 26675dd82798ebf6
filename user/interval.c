// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "interval.h"

static int dup_or_null(char **dst, const char *src)
{
	*dst = src ? strdup(src) : NULL;
	return src && !*dst ? -ENOMEM : 0;
}

int cgroup_names_set(struct cgroup_names *dst, const char *container, const char *pod,
		     const char *namespace)
{
	struct cgroup_names n;

	if (dup_or_null(&n.container, container) | dup_or_null(&n.pod, pod) |
	    dup_or_null(&n.namespace, namespace)) {
		cgroup_names_release(&n);
		return -ENOMEM;
	}
	cgroup_names_release(dst);
	*dst = n;
	return 0;
}

void cgroup_names_release(struct cgroup_names *n)
{
	free(n->container);
	free(n->pod);
	free(n->namespace);
	memset(n, 0, sizeof(*n));
}

static bool same(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

bool cgroup_names_equal(const struct cgroup_names *a, const char *container, const char *pod,
			const char *namespace)
{
	return same(a->container, container) && same(a->pod, pod) &&
	       same(a->namespace, namespace);
}

int scope_set_names(struct scope *s, const struct cgroup_names *n)
{
	if (!n->container && !n->pod && !n->namespace)
		return 0;
	return cgroup_names_set(&s->names, n->container, n->pod, n->namespace);
}

static void scope_release(struct scope *s)
{
	free((char *)s->key);	/* and the cgroup's path after it */
	cgroup_names_release(&s->names);
	free(s->sum);	/* count, multiplex and state live in the same block */
	if (s->has_tma)
		tma_result_release(&s->tma);
	memset(s, 0, sizeof(*s));
}

/*
 * A key is the kind as one character ('0' + kind: kinds sort in their order), the name
 * (cgroup path, thread's cgroup path, interrupt scope's name; empty for the system and a
 * CPU) with bytes 1 and 2 escaped as 2 2 and 2 3, byte 1 to end it (below every byte of an
 * escaped name: a shorter name sorts first, as strcmp() has it), then the CPU (a thread's
 * tid) as 8 hex digits of its value + 2^31 (numbers sort as their digits). The escape keeps
 * keys distinct and in order for any path: cgroup names may hold any byte but '/' and NUL.
 */
#define KEY_END '\1'
#define KEY_ESC '\2'
#define KEY_NUM 8

/* Whether name has a byte to escape; len is strlen(name). */
static bool key_escapes(const char *name, size_t len)
{
	return len && (memchr(name, KEY_END, len) || memchr(name, KEY_ESC, len));
}

/* The key's length for a name of len bytes. */
static size_t key_len(const char *name, size_t len)
{
	size_t n = 1 + len + 1 + KEY_NUM;

	if (key_escapes(name, len))
		for (size_t i = 0; i < len; i++)
			n += name[i] == KEY_END || name[i] == KEY_ESC;
	return n;
}

/* Writes the key (key_len() bytes and a NUL) at k. */
static void key_write(char *k, enum scope_kind kind, const char *name, size_t len, int num)
{
	static const char hex[] = "0123456789abcdef";
	uint32_t v = (uint32_t)num + 0x80000000u;

	*k++ = '0' + kind;
	if (key_escapes(name, len)) {
		for (size_t i = 0; i < len; i++) {
			if (name[i] == KEY_END || name[i] == KEY_ESC) {
				*k++ = KEY_ESC;
				*k++ = name[i] + 1;
			} else {
				*k++ = name[i];
			}
		}
	} else if (len) {
		memcpy(k, name, len);
		k += len;
	}
	*k++ = KEY_END;
	for (int i = KEY_NUM - 1; i >= 0; i--, v >>= 4)
		k[i] = hex[v & 0xf];
	k[KEY_NUM] = '\0';
}

char *scope_key_of(enum scope_kind kind, const char *name, int cpu, int tid)
{
	size_t len = name ? strlen(name) : 0;
	char *k = malloc(key_len(name, len) + 1);

	if (k)
		key_write(k, kind, name, len, kind == SCOPE_TASK ? tid : cpu);
	return k;
}

/* One zeroed block for a scope's per-event arrays: sums, counts, multiplex, states. */
static void *event_block(int n)
{
	return calloc(1, n * (sizeof(struct cgtma_count) + 2 * sizeof(double) +
			      sizeof(enum count_state)));
}

static struct scope *add_scope(struct interval *iv, const struct run *run, enum scope_kind kind,
			       const char *name, int cpu, int tid)
{
	bool path = kind == SCOPE_CGROUP || kind == SCOPE_TASK;
	size_t len = name ? strlen(name) : 0, klen = key_len(name, len);
	size_t plen = path && name ? len + 1 : 0;
	struct scope *s;
	int n = run->nr_events;
	char *key;

	if (ALLOC_GROW(iv->scopes, iv->nr_scopes + 1, iv->cap_scopes))
		return NULL;
	s = &iv->scopes[iv->nr_scopes];
	memset(s, 0, sizeof(*s));
	s->kind = kind;
	s->cpu = cpu;
	s->tid = tid;
	/* The key and the path in one block: the allocations of 10,000 scopes show in cgtma's
	 * own time per interval. */
	key = malloc(klen + 1 + plen);
	if (!key)
		return NULL;
	key_write(key, kind, name, len, kind == SCOPE_TASK ? tid : cpu);
	s->key = key;
	if (plen)
		s->cgroup = memcpy(key + klen + 1, name, plen);
	else if (kind == SCOPE_IRQ)
		s->irq = name;
	/*
	 * One block for the four per-event arrays, likewise. The doubles come first, so every
	 * array is aligned.
	 */
	s->sum = event_block(n);
	if (!s->sum) {
		scope_release(s);
		return NULL;
	}
	s->count = (double *)(s->sum + n);
	s->multiplex = s->count + n;
	s->state = (enum count_state *)(s->multiplex + n);
	iv->nr_scopes++;
	return s;
}

int scope_set_sums(struct scope *s, const struct cgtma_count *sums, int n)
{
	struct cgtma_count *block = event_block(n);

	if (!block)
		return -ENOMEM;
	free(s->sum);
	s->sum = memcpy(block, sums, n * sizeof(*sums));
	s->count = (double *)(s->sum + n);
	s->multiplex = s->count + n;
	s->state = (enum count_state *)(s->multiplex + n);
	return 0;
}

struct scope *interval_add_scope(struct interval *iv, const struct run *run,
				 enum scope_kind kind, const char *name, int cpu)
{
	if (kind == SCOPE_TASK)
		return NULL;
	return add_scope(iv, run, kind, kind == SCOPE_CGROUP || kind == SCOPE_IRQ ? name : NULL,
			 cpu, 0);
}

struct scope *interval_add_task(struct interval *iv, const struct run *run, const char *cgroup,
				int pid, int tid)
{
	struct scope *s = add_scope(iv, run, SCOPE_TASK, cgroup, -1, tid);

	if (s)
		s->pid = pid;
	return s;
}

double scope_cpu_s(const struct scope *s, int nr_events)
{
	__u64 enabled = 0;

	for (int i = 0; i < nr_events; i++)
		if (s->sum[i].enabled > enabled)
			enabled = s->sum[i].enabled;
	return enabled / 1e9;
}

static int derive_scope(const struct run *run, double interval_s, struct scope *s)
{
	bool *counted = NULL;
	struct tma_input in;
	int err;

	s->ran = false;
	for (int i = 0; i < run->nr_events; i++) {
		s->state[i] = count_scale(&s->sum[i], &s->count[i], &s->multiplex[i]);
		if (s->state[i] != COUNT_IDLE)
			s->ran = true;
	}
	if (!run->plan)
		return 0;

	if (!s->has_tma) {
		err = tma_result_init(&s->tma, run->plan);
		if (err)
			return err;
		s->has_tma = true;
	}
	counted = malloc(run->nr_events * sizeof(*counted));
	if (!counted)
		return -ENOMEM;
	/* A scope that never ran has no tree: nothing of it was counted. */
	for (int i = 0; i < run->nr_events; i++)
		counted[i] = s->state[i] == COUNT_OK;
	in.counts = s->count;
	in.counted = counted;
	in.interval_s = interval_s;
	in.cpu_s = scope_cpu_s(s, run->nr_events);
	in.retire_latency = NULL;
	err = tma_compute(run->plan, &in, &s->tma);
	free(counted);
	return err;
}

int interval_derive(const struct run *run, struct interval *iv)
{
	static bool said_uncounted;	/* once a run: the PMU, not the interval, is the cause */

	for (int i = 0; i < iv->nr_scopes; i++) {
		int err = derive_scope(run, iv->interval_s, &iv->scopes[i]);

		if (err)
			return err;
		if (iv->scopes[i].has_tma && iv->scopes[i].tma.uncounted && !said_uncounted) {
			plan_warn_uncounted(run->plan);
			said_uncounted = true;
		}
	}
	return 0;
}

void interval_clear(struct interval *iv)
{
	for (int i = 0; i < iv->nr_scopes; i++)
		scope_release(&iv->scopes[i]);
	iv->nr_scopes = 0;
}

const char *mark_kind_name(__u32 kind)
{
	switch (kind) {
	case CGTMA_MISS_SWITCH:
		return "switch";
	case CGTMA_MISS_SKIPPED:
		return "skipped";
	case CGTMA_MISS_MOVED:
		return "moved";
	case CGTMA_MISS_MOVE:
		return "move";
	case CGTMA_MISS_READ:
		return "read";
	case CGTMA_MISS_IRQ:
		return "interrupt";
	}
	return "unknown";
}

const char *interval_marks_text(const struct interval *iv, char *buf, size_t len)
{
	__u64 bounded = iv->missed_slices - iv->missed_unbounded;
	int n = 0;

	if (bounded || !iv->missed_unbounded)
		n = snprintf(buf, len, "%llu slice%s began with a switch or move the hook did not "
			     "see: at most %.3f ms of %s time may be another cgroup's",
			     (unsigned long long)bounded, bounded == 1 ? "" : "s",
			     iv->missed_max_ns / 1e6, bounded == 1 ? "its" : "their");
	if (iv->missed_unbounded && n >= 0 && (size_t)n < len)
		snprintf(buf + n, len - n, "%s%llu with no bound (switches at which the kernel "
			 "skipped the perf-event hook, failed readings of the counters, "
			 "interrupts during an update, or marks of a record that kept no bound)",
			 n ? "; " : "", (unsigned long long)iv->missed_unbounded);
	return buf;
}

/* Appends to buf (at *at, of len) what fmt says; a full buffer keeps what fits. */
static void append(char *buf, size_t len, size_t *at, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void append(char *buf, size_t len, size_t *at, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (*at >= len)
		return;
	va_start(ap, fmt);
	n = vsnprintf(buf + *at, len - *at, fmt, ap);
	va_end(ap);
	if (n > 0)
		*at += (size_t)n;
}

bool noise_kept_off_cpu(const struct noise *n)
{
	if ((n->has & NOISE_WAIT && n->wait > 0) || (n->has & NOISE_THROTTLED && n->throttled > 0) ||
	    (n->has & NOISE_PRESSURE_SOME && n->pressure_some > 0) ||
	    (n->has & NOISE_PREEMPTED && n->preempted > 0))
		return true;
	for (int i = 0; i < n->nr_antagonists; i++)
		if (n->antagonists[i].took > 0)
			return true;
	return false;
}

bool scope_idle(const struct scope *s)
{
	if (s->kind == SCOPE_TASK)
		return !s->ran;
	return s->kind == SCOPE_CGROUP && !s->others && !s->ran && !s->removed &&
	       !noise_kept_off_cpu(&s->noise);
}

const char *noise_text(const struct noise *n, const char *const em[2], char *buf, size_t len)
{
	const char *o = em ? em[0] : "", *c = em ? em[1] : "", *sep = "";
	size_t at = 0;

	buf[0] = '\0';
	if (n->has & NOISE_WAIT) {
		append(buf, len, &at, "wait %s%.2f s/s%s", o, n->wait, c);
		sep = ", ";
	}
	if (n->has & (NOISE_PRESSURE_SOME | NOISE_PRESSURE_FULL)) {
		append(buf, len, &at, "%spressure", sep);
		if (n->has & NOISE_PRESSURE_SOME)
			append(buf, len, &at, " some %s%.0f %%%s", o, n->pressure_some * 100, c);
		if (n->has & NOISE_PRESSURE_FULL)
			append(buf, len, &at, " full %s%.0f %%%s", o, n->pressure_full * 100, c);
		sep = ", ";
	}
	if (n->has & NOISE_THROTTLED) {
		append(buf, len, &at, "%sthrottled %s%.2f s/s%s (%llu time%s)", sep, o,
		       n->throttled, c, (unsigned long long)n->nr_throttled,
		       n->nr_throttled == 1 ? "" : "s");
		sep = ", ";
	}
	if (n->has & NOISE_PREEMPTED) {
		append(buf, len, &at, "%spreempted %s%.1f/s%s", sep, o, n->preempted, c);
		sep = ", ";
	}
	if (n->has & NOISE_SMT)
		append(buf, len, &at, "%sSMT shared %s%.2f s/s%s", sep, o, n->smt_shared, c);
	return buf;
}

const char *antagonist_text(const struct noise *n, const struct antagonist *a,
			    const char *const em[2], char *buf, size_t len)
{
	const char *o = em ? em[0] : "", *c = em ? em[1] : "";
	size_t at = 0;

	buf[0] = '\0';
	if (n->has & NOISE_PREEMPTED)
		append(buf, len, &at, "took %s%.2f s/s%s", o, a->took, c);
	if (n->has & NOISE_SMT)
		append(buf, len, &at, "%sSMT %s%.2f s/s%s", n->has & NOISE_PREEMPTED ? ", " : "", o,
		       a->smt, c);
	return buf;
}

void interval_free(struct interval *iv)
{
	interval_clear(iv);
	free(iv->marks);
	iv->marks = NULL;
	iv->nr_marks = 0;
	free(iv->scopes);
	iv->scopes = NULL;
	iv->cap_scopes = 0;
}

static int scope_cmp(const void *a, const void *b)
{
	const struct scope *x = a, *y = b;
	int c = strcmp(x->key, y->key);

	if (c)
		return c;
	if (x->cgroup_id != y->cgroup_id)
		return x->cgroup_id < y->cgroup_id ? -1 : 1;
	return (int)y->removed - (int)x->removed;
}

void interval_sort(struct interval *iv)
{
	qsort(iv->scopes, iv->nr_scopes, sizeof(*iv->scopes), scope_cmp);
}

bool interval_key_shared(const struct interval *iv, int k)
{
	const char *key = iv->scopes[k].key;

	return (k > 0 && !strcmp(iv->scopes[k - 1].key, key)) ||
	       (k + 1 < iv->nr_scopes && !strcmp(iv->scopes[k + 1].key, key));
}

const char *scope_incarnation(const struct interval *iv, int k, char *buf, size_t len)
{
	const struct scope *s = &iv->scopes[k];

	buf[0] = '\0';
	if (s->kind != SCOPE_CGROUP)
		return buf;
	if (s->cgroup_id && interval_key_shared(iv, k))
		snprintf(buf, len, "%sid %llu", s->removed ? "removed " : "",
			 (unsigned long long)s->cgroup_id);
	else if (s->removed)
		snprintf(buf, len, "removed");
	return buf;
}

double scope_multiplex(const struct scope *s, const struct run *run, const int *events, int nr)
{
	double m = NAN;

	if (!events)
		nr = run->nr_events;
	for (int k = 0; k < nr; k++) {
		int e = events ? events[k] : k;

		if (s->state[e] != COUNT_IDLE && (isnan(m) || s->multiplex[e] < m))
			m = s->multiplex[e];
	}
	return m;
}

const char *scope_kind_name(enum scope_kind kind)
{
	static const char *const names[] = {
		[SCOPE_SYSTEM] = "system",
		[SCOPE_CPU] = "cpu",
		[SCOPE_CGROUP] = "cgroup",
		[SCOPE_TASK] = "task",
		[SCOPE_IRQ] = "irq",
	};

	return names[kind];
}

bool scope_is_root_own(const struct scope *s)
{
	return s->kind == SCOPE_CGROUP && !strcmp(s->cgroup, CGROUP_ROOT_OWN);
}

/* A cgroup's or a thread's cgroup: its container's or pod's name, or (paths) its path. */
static void cgroup_label(const struct scope *s, bool paths, char *buf, size_t len)
{
	const struct cgroup_names *n = &s->names;

	if (paths || (!n->container && !n->pod))
		snprintf(buf, len, "%s", s->cgroup);
	else if (n->pod && n->container)
		snprintf(buf, len, "%s/%s/%s", n->namespace ? n->namespace : "", n->pod,
			 n->container);
	else if (n->pod)
		snprintf(buf, len, "%s/%s", n->namespace ? n->namespace : "", n->pod);
	else
		snprintf(buf, len, "%s", n->container);
}

const char *scope_label(const struct scope *s, bool paths, char *buf, size_t len)
{
	char name[1024];

	switch (s->kind) {
	case SCOPE_SYSTEM:
		snprintf(buf, len, "system");
		break;
	case SCOPE_CPU:
		snprintf(buf, len, "cpu%d", s->cpu);
		break;
	case SCOPE_CGROUP:
		cgroup_label(s, paths, name, sizeof(name));
		if (s->cpu >= 0)
			snprintf(buf, len, "%s@cpu%d", name, s->cpu);
		else
			snprintf(buf, len, "%s", name);
		break;
	case SCOPE_TASK:
		cgroup_label(s, paths, name, sizeof(name));
		snprintf(buf, len, "%s:%d", name, s->tid);
		break;
	case SCOPE_IRQ:
		if (s->cpu >= 0)
			snprintf(buf, len, "irq:%s@cpu%d", s->irq, s->cpu);
		else
			snprintf(buf, len, "irq:%s", s->irq);
		break;
	}
	return buf;
}
