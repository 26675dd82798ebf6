// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "scale.h"
#include "tracker.h"

int tracker_init(struct tracker *t, int nr_events, int stride)
{
	memset(t, 0, sizeof(*t));
	t->nr_events = nr_events;
	t->stride = stride;
	t->folded = calloc(nr_events, sizeof(*t->folded));
	return t->folded ? 0 : -ENOMEM;
}

static void tracked_free(struct tracked *tr)
{
	free(tr->path);
	cgroup_names_release(&tr->names);
	scope_counts_release(&tr->counts);
	noise_release(&tr->noise);
}

void tracker_release(struct tracker *t)
{
	for (int i = 0; i < t->nr; i++)
		tracked_free(&t->tracked[i]);
	free(t->tracked);
	hashmap_clear(&t->ids);
	for (int i = 0; i < t->nr_removed; i++) {
		free(t->removed[i].path);
		cgroup_names_release(&t->removed[i].names);
		free(t->removed[i].total);
	}
	free(t->removed);
	free(t->folded);
	memset(t, 0, sizeof(*t));
}

int tracker_find(const struct tracker *t, __u64 id)
{
	return hashmap_get_u64(&t->ids, id);
}

int tracker_add(struct tracker *t, __u64 id, const char *path, bool refused)
{
	struct tracked tr = { .id = id, .present = true, .refused = refused };

	if (ALLOC_GROW(t->tracked, t->nr + 1, t->cap))
		return -ENOMEM;
	tr.path = strdup(path);
	if (!tr.path || scope_counts_init(&tr.counts, t->stride, t->nr_events) ||
	    hashmap_put_u64(&t->ids, id, t->nr)) {
		tracked_free(&tr);
		return -ENOMEM;
	}
	t->tracked[t->nr++] = tr;
	return 0;
}

int tracker_rename(struct tracker *t, int i, const char *path)
{
	char *p = strdup(path);

	if (!p)
		return -ENOMEM;
	free(t->tracked[i].path);
	t->tracked[i].path = p;
	return 0;
}

/* The cgroup's totals over the run, summed over CPUs, into sum (per event). */
static void sum_over_cpus(const struct tracker *t, const struct tracked *tr,
			  struct cgtma_count *sum)
{
	for (int c = 0; c < t->stride; c++)
		for (int e = 0; e < t->nr_events; e++)
			count_add(&sum[e], &tr->counts.total[c * t->nr_events + e]);
}

int tracker_retire(struct tracker *t, int i)
{
	struct tracked *tr = &t->tracked[i];
	struct removed r = {};
	int err = 0;

	if (t->nr_removed < TRACKER_REMOVED_KEPT) {
		err = ALLOC_GROW(t->removed, t->nr_removed + 1, t->cap_removed);
		if (!err) {
			r.total = calloc(t->nr_events, sizeof(*r.total));
			err = r.total ? 0 : -ENOMEM;
		}
	} else {
		err = 1;	/* folded, by the bound, not for want of memory */
	}
	if (err == 0) {
		sum_over_cpus(t, tr, r.total);
		r.id = tr->id;
		r.path = tr->path;	/* the path and names go with it */
		tr->path = NULL;
		r.names = tr->names;
		noise_total(&tr->noise, &r.noise);
		memset(&tr->names, 0, sizeof(tr->names));
		t->removed[t->nr_removed++] = r;
	} else {
		sum_over_cpus(t, tr, t->folded);
		t->nr_folded++;
	}
	hashmap_del_u64(&t->ids, tr->id);
	tracked_free(tr);
	/* The last one takes the hole; its index in the map follows. */
	if (i != t->nr - 1) {
		*tr = t->tracked[t->nr - 1];
		hashmap_put_u64(&t->ids, tr->id, i);	/* replaces: never allocates */
	}
	t->nr--;
	return err < 0 ? err : 0;
}
