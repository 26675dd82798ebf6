// SPDX-License-Identifier: GPL-2.0
/* A cgroup's noise from cgroup and /proc files (noise.h). */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "alloc.h"
#include "noise.h"
#include "smallfile.h"

/* The fields' order in the run's sums, as their NOISE_* bits go. */
enum { SUM_WAIT, SUM_THROTTLED, SUM_SOME, SUM_FULL };

/* The number after "key " at the start of one of text's lines: 0 or -ENOENT. */
static int line_value(const char *text, const char *key, __u64 *v)
{
	size_t len = strlen(key);

	for (const char *l = text; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL)
		if (!strncmp(l, key, len) && l[len] == ' ')
			return sscanf(l + len + 1, "%llu", (unsigned long long *)v) == 1 ? 0 : -ENOENT;
	return -ENOENT;
}

int noise_parse_cpu_stat(const char *text, __u64 *throttled_usec, __u64 *nr_throttled)
{
	__u64 t, n;

	if (line_value(text, "throttled_usec", &t) || line_value(text, "nr_throttled", &n))
		return -ENOENT;
	*throttled_usec = t;
	*nr_throttled = n;
	return 0;
}

/* The total= of text's line that starts with kind ("some", "full"): 0 or -ENOENT. */
static int pressure_total(const char *text, const char *kind, __u64 *total)
{
	size_t len = strlen(kind);

	for (const char *l = text; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
		const char *end = strchr(l, '\n'), *t;

		if (strncmp(l, kind, len) || l[len] != ' ')
			continue;
		t = strstr(l, " total=");
		if (!t || (end && t > end))
			return -ENOENT;
		return sscanf(t + 7, "%llu", (unsigned long long *)total) == 1 ? 0 : -ENOENT;
	}
	return -ENOENT;
}

int noise_parse_pressure(const char *text, __u64 *some_usec, __u64 *full_usec, unsigned *has)
{
	*has = 0;
	if (pressure_total(text, "some", some_usec) == 0)
		*has |= NOISE_PRESSURE_SOME;
	if (pressure_total(text, "full", full_usec) == 0)
		*has |= NOISE_PRESSURE_FULL;
	return *has ? 0 : -ENOENT;
}

int noise_parse_schedstat(const char *text, __u64 *run_delay)
{
	unsigned long long run, delay;

	if (sscanf(text, "%llu %llu", &run, &delay) != 2)
		return -ENOENT;
	*run_delay = delay;
	return 0;
}

/* A reading of a subtree's threads. */
struct walk {
	const char *proc;
	const struct noise_reader *last;
	struct noise_thread *threads;
	int nr, cap;
	struct hashmap tids;
	__u64 wait_ns;			/* of threads in the last reading too */
	bool no_schedstat;		/* a live thread has none: the kernel keeps none */
};

/* Thread tid, listed in the subtree: its run_delay, and its wait since the last reading. */
static int add_thread(struct walk *w, int tid)
{
	char file[4200], text[256];
	__u64 delay;
	int i;

	/* Listed twice: it moved between two of the subtree's cgroups as they were read. */
	if (hashmap_get_u64(&w->tids, tid) >= 0)
		return 0;
	snprintf(file, sizeof(file), "%s/%d/schedstat", w->proc, tid);
	if (smallfile_read(file, text, sizeof(text)) || noise_parse_schedstat(text, &delay)) {
		/* Gone since its cgroup was read, or a kernel without schedstats. */
		snprintf(file, sizeof(file), "%s/%d", w->proc, tid);
		w->no_schedstat |= access(file, F_OK) == 0;
		return 0;
	}
	i = hashmap_get_u64(&w->last->tids, tid);
	/* A smaller run_delay is another thread under a reused id: no delta. */
	if (i >= 0 && delay >= w->last->threads[i].run_delay)
		w->wait_ns += delay - w->last->threads[i].run_delay;
	if (ALLOC_GROW(w->threads, w->nr + 1, w->cap) || hashmap_put_u64(&w->tids, tid, w->nr))
		return -ENOMEM;
	w->threads[w->nr++] = (struct noise_thread){ .tid = tid, .run_delay = delay };
	return 0;
}

/*
 * The threads of the cgroup at path (len bytes of a buffer of cap) and its descendants.
 * 0; -ENOENT when the cgroup is gone; -ENOMEM.
 */
static int walk_cgroup(struct walk *w, char *path, size_t len, size_t cap)
{
	struct dirent *e;
	FILE *f;
	DIR *d;
	int tid, err = 0;

	if ((size_t)snprintf(path + len, cap - len, "/cgroup.threads") >= cap - len)
		return -ENAMETOOLONG;
	f = fopen(path, "re");
	path[len] = '\0';
	while (f && !err && fscanf(f, "%d", &tid) == 1)
		err = add_thread(w, tid);
	if (f)
		fclose(f);
	if (err)
		return err;
	d = opendir(path);
	if (!d)
		return -ENOENT;
	while (!err && (e = readdir(d))) {
		size_t n;

		if (e->d_type != DT_DIR || !strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		n = (size_t)snprintf(path + len, cap - len, "/%s", e->d_name);
		/* A descendant gone since the directory was listed has no threads: not an error. */
		if (n < cap - len)
			err = walk_cgroup(w, path, len + n, cap);
		err = err == -ENOENT || err == -ENAMETOOLONG ? 0 : err;
		path[len] = '\0';
	}
	closedir(d);
	return err;
}

/* Adds value over span to the run's sum of field k. */
static void sum_add(struct noise_reader *r, int k, double value, double span)
{
	r->sum[k] += value * span;
	r->span[k] += span;
}

int noise_read(struct noise_reader *r, const char *proc, const char *dir, double now)
{
	struct walk w = { .proc = proc, .last = r };
	__u64 throttled = 0, nr = 0, some = 0, full = 0;
	unsigned has = 0, psi = 0, both;
	double span = now - r->time;
	char path[8192], text[512];
	int err;

	memset(&r->now, 0, sizeof(r->now));
	if ((size_t)snprintf(path, sizeof(path), "%s", dir) >= sizeof(path))
		return -ENAMETOOLONG;
	err = walk_cgroup(&w, path, strlen(path), sizeof(path));
	if (err) {
		free(w.threads);
		hashmap_clear(&w.tids);
		return err;
	}
	if (!w.no_schedstat)
		has |= NOISE_WAIT;
	snprintf(path, sizeof(path), "%s/cpu.stat", dir);
	if (smallfile_read(path, text, sizeof(text)) == 0 &&
	    noise_parse_cpu_stat(text, &throttled, &nr) == 0)
		has |= NOISE_THROTTLED;
	snprintf(path, sizeof(path), "%s/cpu.pressure", dir);
	/* Missing without PSI; EOPNOTSUPP where cgroup.pressure turned it off. */
	if (smallfile_read(path, text, sizeof(text)) == 0 &&
	    noise_parse_pressure(text, &some, &full, &psi) == 0)
		has |= psi;

	/* What both readings have, over the time between them. */
	both = r->time > 0 && span > 0 ? has & r->has : 0;
	r->now.has = both;
	if (both & NOISE_WAIT) {
		r->now.wait = w.wait_ns / 1e9 / span;
		sum_add(r, SUM_WAIT, r->now.wait, span);
	}
	if (both & NOISE_THROTTLED) {
		r->now.throttled = throttled > r->throttled_usec ?
			(throttled - r->throttled_usec) / 1e6 / span : 0;
		r->now.nr_throttled = nr > r->nr_throttled ? nr - r->nr_throttled : 0;
		r->nr_throttled_sum += r->now.nr_throttled;
		sum_add(r, SUM_THROTTLED, r->now.throttled, span);
	}
	if (both & NOISE_PRESSURE_SOME) {
		r->now.pressure_some = some > r->some_usec ? (some - r->some_usec) / 1e6 / span : 0;
		sum_add(r, SUM_SOME, r->now.pressure_some, span);
	}
	if (both & NOISE_PRESSURE_FULL) {
		r->now.pressure_full = full > r->full_usec ? (full - r->full_usec) / 1e6 / span : 0;
		sum_add(r, SUM_FULL, r->now.pressure_full, span);
	}

	free(r->threads);
	hashmap_clear(&r->tids);
	r->threads = w.threads;
	r->nr_threads = w.nr;
	r->cap_threads = w.cap;
	r->tids = w.tids;
	r->time = now;
	r->has = has;
	r->throttled_usec = throttled;
	r->nr_throttled = nr;
	r->some_usec = some;
	r->full_usec = full;
	return 0;
}

void noise_forget(struct noise_reader *r)
{
	free(r->threads);
	r->threads = NULL;
	r->nr_threads = r->cap_threads = 0;
	hashmap_clear(&r->tids);
	r->time = 0;
	r->has = 0;
	memset(&r->now, 0, sizeof(r->now));
}

void noise_total(const struct noise_reader *r, struct noise *out)
{
	memset(out, 0, sizeof(*out));
	for (int k = SUM_WAIT; k <= SUM_FULL; k++)
		if (r->span[k] > 0)
			out->has |= 1U << k;
	out->wait = r->span[SUM_WAIT] > 0 ? r->sum[SUM_WAIT] / r->span[SUM_WAIT] : 0;
	out->throttled = r->span[SUM_THROTTLED] > 0 ?
		r->sum[SUM_THROTTLED] / r->span[SUM_THROTTLED] : 0;
	out->nr_throttled = r->nr_throttled_sum;
	out->pressure_some = r->span[SUM_SOME] > 0 ? r->sum[SUM_SOME] / r->span[SUM_SOME] : 0;
	out->pressure_full = r->span[SUM_FULL] > 0 ? r->sum[SUM_FULL] / r->span[SUM_FULL] : 0;
	neighbour_tally_noise(&r->others, 0, r->others_smt, out);
}

void noise_release(struct noise_reader *r)
{
	noise_forget(r);
	neighbour_tally_release(&r->others);
	memset(r, 0, sizeof(*r));
}
