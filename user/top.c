// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hashmap.h"
#include "top.h"

/* A row --top ranks: a tracked cgroup's whole row that the terminal shows. */
static bool ranked(const struct run *run, const struct scope *s)
{
	return s->kind == SCOPE_CGROUP && s->cpu < 0 && (run->verbose || !scope_idle(s));
}

struct rank {
	int scope;
	double time;		/* scope_cpu_s(): the time its tasks ran */
};

/* Busiest first; of equal time, in the interval's order. */
static int busier(const void *a, const void *b)
{
	const struct rank *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? 1 : -1;
	return x->scope - y->scope;
}

/* Whether a cgroup in the map (path -> 0) holds path below it. */
static bool ancestor_in(const struct hashmap *m, const char *path)
{
	char buf[4096];
	char *slash;

	if (path[0] != '/' || strlen(path) >= sizeof(buf))
		return false;
	strcpy(buf, path);
	while ((slash = strrchr(buf, '/')) && buf[1]) {
		/* "/a/b" -> "/a" -> "/" */
		slash[slash == buf] = '\0';
		if (hashmap_get_str(m, buf) >= 0)
			return true;
	}
	return false;
}

/*
 * The "+ K others" row: the sums of the K cgroups left out (left_out[i]; paths holds their
 * paths), each counted once. 0 or -ENOMEM.
 */
static int sum_others(const struct run *run, const struct interval *iv, const bool *left_out,
		      const struct hashmap *paths, int k, struct interval *others)
{
	struct scope *o;
	char label[64];

	snprintf(label, sizeof(label), "+ %d other%s", k, k == 1 ? "" : "s");
	o = interval_add_scope(others, run, SCOPE_CGROUP, label, -1);
	if (!o)
		return -ENOMEM;
	o->others = true;
	others->time = iv->time;
	others->interval_s = iv->interval_s;
	others->summary = iv->summary;
	for (int i = 0; i < iv->nr_scopes; i++) {
		const struct scope *s = &iv->scopes[i];

		if (!left_out[i] || ancestor_in(paths, s->cgroup))
			continue;
		for (int e = 0; e < run->nr_events; e++) {
			o->sum[e].counter += s->sum[e].counter;
			o->sum[e].enabled += s->sum[e].enabled;
			o->sum[e].running += s->sum[e].running;
		}
	}
	return interval_derive(run, others);
}

/*
 * shown: iv's rows but those left out and the per-CPU and thread rows of their cgroups
 * (paths), with others' row after the cgroups and threads, before the interrupt scopes.
 * 0 or -ENOMEM.
 */
static int keep_rows(const struct interval *iv, const bool *left_out, const struct hashmap *paths,
		     const struct interval *others, struct interval *shown)
{
	bool placed = false;

	*shown = *iv;
	shown->nr_scopes = 0;
	shown->cap_scopes = iv->nr_scopes + 1;
	shown->scopes = malloc(shown->cap_scopes * sizeof(*shown->scopes));
	if (!shown->scopes)
		return -ENOMEM;
	for (int i = 0; i <= iv->nr_scopes; i++) {
		const struct scope *s = i < iv->nr_scopes ? &iv->scopes[i] : NULL;

		if (!placed && (!s || s->kind > SCOPE_TASK)) {
			shown->scopes[shown->nr_scopes++] = others->scopes[0];
			placed = true;
		}
		if (!s || left_out[i])
			continue;
		/* A cgroup's whole row is ranked itself: only its parts go with it. */
		if ((s->kind == SCOPE_TASK || (s->kind == SCOPE_CGROUP && s->cpu >= 0)) &&
		    hashmap_get_str(paths, s->cgroup) >= 0)
			continue;
		shown->scopes[shown->nr_scopes++] = *s;
	}
	return 0;
}

int top_view_make(const struct run *run, const struct interval *iv, int n, struct top_view *v)
{
	struct rank *r = malloc((iv->nr_scopes + 1) * sizeof(*r));
	bool *left_out = calloc(iv->nr_scopes + 1, sizeof(*left_out));
	struct hashmap paths = HASHMAP_INIT;
	int nr = 0, err = -ENOMEM;

	memset(v, 0, sizeof(*v));
	if (!r || !left_out)
		goto out;
	for (int i = 0; i < iv->nr_scopes; i++)
		if (ranked(run, &iv->scopes[i]))
			r[nr++] = (struct rank){ i, scope_cpu_s(&iv->scopes[i], run->nr_events) };
	err = 0;
	if (nr <= n)
		goto out;
	qsort(r, nr, sizeof(*r), busier);
	for (int k = n; k < nr && !err; k++) {
		left_out[r[k].scope] = true;
		err = hashmap_put_str(&paths, iv->scopes[r[k].scope].cgroup, 0);
	}
	err = err ?: sum_others(run, iv, left_out, &paths, nr - n, &v->others) ?:
	      keep_rows(iv, left_out, &paths, &v->others, &v->shown) ?: 1;
out:
	free(r);
	free(left_out);
	hashmap_clear(&paths);
	if (err < 0)
		top_view_release(v);
	return err;
}

void top_view_release(struct top_view *v)
{
	free(v->shown.scopes);
	interval_free(&v->others);
	memset(v, 0, sizeof(*v));
}
