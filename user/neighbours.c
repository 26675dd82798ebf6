// SPDX-License-Identifier: GPL-2.0
/* A cgroup's neighbours from the BPF side's pairs of cgroups (neighbours.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "cgview.h"
#include "neighbours.h"

/* Paths kept between intervals: beyond, the cache starts again (cgroups come and go). */
#define PATHS_KEPT 8192
/* Antagonists a run's tally keeps apart: the rest go to one entry. */
#define RUN_KEPT 256
#define OTHERS_NAME "(others)"

void neighbours_add(const struct cgtma_noise_key *key, const struct cgtma_noise_pair *pair,
		    void *ctx)
{
	struct neighbours *nb = ctx;
	struct neighbour_pair *p;

	if (nb->err)
		return;
	/* Both halves' pairs may come in one read: one entry per pair all the same. */
	for (int i = 0; i < nb->nr; i++) {
		p = &nb->pairs[i];
		if (p->cgroup == key->cgroup && p->other == key->other) {
			p->preempt += pair->preempt;
			p->took_ns += pair->took_ns;
			p->smt_ns += pair->smt_ns;
			return;
		}
	}
	if (ALLOC_GROW(nb->pairs, nb->nr + 1, nb->cap)) {
		nb->err = -ENOMEM;
		return;
	}
	nb->pairs[nb->nr++] = (struct neighbour_pair){
		.cgroup = key->cgroup, .other = key->other, .preempt = pair->preempt,
		.took_ns = pair->took_ns, .smt_ns = pair->smt_ns,
	};
}

/* Whether path is dir or inside it. */
static bool path_within(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	if (!strcmp(dir, "/"))
		return true;
	return !strncmp(path, dir, n) && (path[n] == '\0' || path[n] == '/');
}

/* The path of cgroup id (NULL: not known), from the cache or the view. */
static int path_of(struct neighbours *nb, const struct cgview *view,
		   const struct neighbour_row *rows, int nr_rows, __u64 id, const char **out)
{
	int i = hashmap_get_u64(&nb->ids, id);
	char buf[4096];
	char *copy = NULL;

	if (i >= 0) {
		*out = nb->paths[i];
		return 0;
	}
	if (id == CGVIEW_ROOT_ID) {
		copy = strdup("/");
	} else if (view && !cgview__path_of(view, id, buf, sizeof(buf))) {
		copy = strdup(buf);
	} else {
		for (int r = 0; r < nr_rows && !copy; r++)
			if (rows[r].id == id)
				copy = strdup(rows[r].path);
		if (!copy) {
			/* Gone before it was named: said by id, once. */
			snprintf(buf, sizeof(buf), "(cgroup id %llu)", (unsigned long long)id);
			copy = strdup(buf);
		}
	}
	if (!copy)
		return -ENOMEM;
	if (ALLOC_GROW(nb->paths, nb->nr_paths + 1, nb->cap_paths) ||
	    hashmap_put_u64(&nb->ids, id, nb->nr_paths)) {
		free(copy);
		return -ENOMEM;
	}
	nb->paths[nb->nr_paths++] = copy;
	*out = copy;
	return 0;
}

/*
 * The deepest of the rows (by path in by_path) that holds path, or -1: path, then each
 * directory above it, up to the root.
 */
static int deepest_row(const struct hashmap *by_path, const char *path)
{
	char dir[4096];
	char *slash;
	int r;

	if (snprintf(dir, sizeof(dir), "%s", path) >= (int)sizeof(dir))
		return -1;
	for (;;) {
		r = hashmap_get_str(by_path, dir);
		if (r >= 0 || !strcmp(dir, "/"))
			return r;
		slash = strrchr(dir, '/');
		if (!slash)
			return -1;
		slash[slash == dir] = '\0';	/* "/a" -> "/" */
	}
}

int neighbours_resolve(struct neighbours *nb, const struct cgview *view,
		       const struct neighbour_row *rows, int nr_rows, neighbour_name_fn name_of,
		       void *ctx)
{
	struct hashmap by_path = HASHMAP_INIT;
	int err = nb->err;

	for (int r = 0; r < nr_rows && !err && nb->nr; r++)
		err = hashmap_put_str(&by_path, rows[r].path, r);
	for (int i = 0; i < nb->nr && !err; i++) {
		struct neighbour_pair *p = &nb->pairs[i];
		const char *other;
		int r;

		if ((err = path_of(nb, view, rows, nr_rows, p->cgroup, &p->path)) ||
		    (err = path_of(nb, view, rows, nr_rows, p->other, &other)))
			break;
		/* Named by the deepest tracked cgroup that holds it. */
		r = other[0] == '/' ? deepest_row(&by_path, other) : -1;
		p->other_name = r >= 0 ? rows[r].path : other;
		p->other_container = r >= 0 ? rows[r].container :
				     name_of && other[0] == '/' ? name_of(p->other, other, ctx) :
				     NULL;
		if (p->path[0] != '/')
			p->path = NULL;		/* "(cgroup id N)": in no row by path */
	}
	hashmap_clear(&by_path);
	return err;
}

/* The entry named name in t, added where it is not there (NULL: no memory). */
static struct neighbour *tally_entry(struct neighbour_tally *t, const char *name,
				     const char *container, bool bounded)
{
	struct neighbour *e;

	for (int i = 0; i < t->nr; i++)
		if (!strcmp(t->v[i].cgroup, name))
			return &t->v[i];
	if (bounded && t->nr >= RUN_KEPT)
		return tally_entry(t, OTHERS_NAME, NULL, false);
	if (ALLOC_GROW(t->v, t->nr + 1, t->cap))
		return NULL;
	e = &t->v[t->nr++];
	memset(e, 0, sizeof(*e));
	snprintf(e->cgroup, sizeof(e->cgroup), "%s", name);
	snprintf(e->container, sizeof(e->container), "%s", container ? container : "");
	return e;
}

int neighbours_tally(const struct neighbours *nb, const char *path, __u64 id,
		     struct neighbour_tally *t)
{
	for (int i = 0; i < nb->nr; i++) {
		const struct neighbour_pair *p = &nb->pairs[i];
		struct neighbour *e;

		if (!(p->path ? path_within(p->path, path) : p->cgroup == id))
			continue;
		/* Inside the subtree (the root's holds every cgroup): not a neighbour. */
		if (p->other == id || !strcmp(path, "/") ||
		    (p->other_name[0] == '/' && path_within(p->other_name, path)))
			continue;
		t->preempt += p->preempt;
		t->smt_ns += p->smt_ns;
		e = tally_entry(t, p->other_name, p->other_container, false);
		if (!e)
			return -ENOMEM;
		e->preempt += p->preempt;
		e->took_ns += p->took_ns;
		e->smt_ns += p->smt_ns;
	}
	return 0;
}

void neighbours_clear(struct neighbours *nb)
{
	nb->nr = 0;
	nb->err = 0;
	if (nb->nr_paths < PATHS_KEPT)
		return;
	for (int i = 0; i < nb->nr_paths; i++)
		free(nb->paths[i]);
	nb->nr_paths = 0;
	hashmap_clear(&nb->ids);
}

void neighbours_release(struct neighbours *nb)
{
	for (int i = 0; i < nb->nr_paths; i++)
		free(nb->paths[i]);
	free(nb->paths);
	free(nb->pairs);
	hashmap_clear(&nb->ids);
	memset(nb, 0, sizeof(*nb));
}

/* The busiest first: by the time taken and shared, then by preemptions. */
static int busier(const void *a, const void *b)
{
	const struct neighbour *x = *(struct neighbour *const *)a;
	const struct neighbour *y = *(struct neighbour *const *)b;
	__u64 tx = x->took_ns + x->smt_ns, ty = y->took_ns + y->smt_ns;

	if (tx != ty)
		return tx > ty ? -1 : 1;
	if (x->preempt != y->preempt)
		return x->preempt > y->preempt ? -1 : 1;
	return strcmp(x->cgroup, y->cgroup);
}

void neighbour_tally_noise(const struct neighbour_tally *t, double seconds, bool smt,
			   struct noise *n)
{
	struct neighbour *top[NOISE_ANTAGONISTS_MAX] = {}, **all;
	int nr = 0;

	if (seconds <= 0)
		seconds = t->span;
	if (seconds <= 0)
		return;
	n->has |= NOISE_PREEMPTED | (smt ? NOISE_SMT : 0);
	n->preempted = t->preempt / seconds;
	n->smt_shared = smt ? t->smt_ns / 1e9 / seconds : 0;
	all = t->nr ? malloc(t->nr * sizeof(*all)) : NULL;
	if (all) {
		for (int i = 0; i < t->nr; i++)
			all[i] = &t->v[i];
		qsort(all, t->nr, sizeof(*all), busier);
		for (; nr < t->nr && nr < NOISE_ANTAGONISTS_MAX; nr++)
			top[nr] = all[nr];
		free(all);
	} else {
		/* No memory to sort: the first ones, rather than none. */
		for (; nr < t->nr && nr < NOISE_ANTAGONISTS_MAX; nr++)
			top[nr] = &t->v[nr];
	}
	n->nr_antagonists = 0;
	for (int i = 0; i < nr; i++) {
		struct antagonist *a = &n->antagonists[n->nr_antagonists];

		/* Noise of nothing: a pair counted with no time and no preemption. */
		if (!top[i]->preempt && !top[i]->took_ns && !(smt && top[i]->smt_ns))
			continue;
		memset(a, 0, sizeof(*a));
		snprintf(a->cgroup, sizeof(a->cgroup), "%s", top[i]->cgroup);
		snprintf(a->container, sizeof(a->container), "%s", top[i]->container);
		a->preempt = top[i]->preempt / seconds;
		a->took = top[i]->took_ns / 1e9 / seconds;
		a->smt = smt ? top[i]->smt_ns / 1e9 / seconds : 0;
		n->nr_antagonists++;
	}
}

int neighbour_tally_merge(struct neighbour_tally *to, const struct neighbour_tally *from,
			  double seconds)
{
	to->preempt += from->preempt;
	to->smt_ns += from->smt_ns;
	to->span += seconds;
	for (int i = 0; i < from->nr; i++) {
		const struct neighbour *f = &from->v[i];
		struct neighbour *e = tally_entry(to, f->cgroup, f->container, true);

		if (!e)
			return -ENOMEM;
		e->preempt += f->preempt;
		e->took_ns += f->took_ns;
		e->smt_ns += f->smt_ns;
	}
	return 0;
}

void neighbour_tally_reset(struct neighbour_tally *t)
{
	t->preempt = t->smt_ns = 0;
	t->span = 0;
	t->nr = 0;
}

void neighbour_tally_release(struct neighbour_tally *t)
{
	free(t->v);
	memset(t, 0, sizeof(*t));
}
