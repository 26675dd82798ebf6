// SPDX-License-Identifier: GPL-2.0
/*
 * Scope keys (interval.h): the same scope has the same key in every interval (removed or not,
 * with its names or without), every other scope another, for every kind and for paths of
 * any bytes; keys compare in interval_sort()'s order (kind, name, then CPU or tid as
 * numbers); scope_key_of() gives the key a scope would have. Prints what making 10,000
 * cgroup scopes' keys costs.
 */
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "interval.h"
#include "test.h"

struct id {
	enum scope_kind kind;
	const char *name;	/* path, or irq name */
	int cpu, tid;
};

static const char *const paths[] = {
	"/", "/a", "/a b", "/a  b", "/a\"b", "/a'b", "/a\\b", "/a\\", "/a\"", "/a/b", "/a b/c",
	"/ab", "/a\x01", "/a\x02", "/a\x03", "/a\x01\x01", "/a\x02\x01", "/a\x01\x02", "/a\x02\x02",
	"/a\x01" "b", "/a\x02" "b", "/\xff", "/a\n", "/a\t", "(removed: 3 more cgroups)",
	"(removed cgroup 42)",
};
#define NR_PATHS (int)(sizeof(paths) / sizeof(paths[0]))

static const int cpus[] = { -1, 0, 1, 9, 15, 16, 255, 256, 4095 };
#define NR_CPUS (int)(sizeof(cpus) / sizeof(cpus[0]))

static const int tids[] = { 0, 1, 2, 15, 16, 100, 4194304, 2147483647 };
#define NR_TIDS (int)(sizeof(tids) / sizeof(tids[0]))

static const char *const irqs[] = { "HI", "NET_RX", "NET_TX", "hardirq" };
#define NR_IRQS (int)(sizeof(irqs) / sizeof(irqs[0]))

/* interval_sort()'s order as it was written out before keys. */
static int old_cmp(const struct id *x, const struct id *y)
{
	int c;

	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	if (x->kind == SCOPE_CGROUP || x->kind == SCOPE_TASK || x->kind == SCOPE_IRQ) {
		c = strcmp(x->name, y->name);
		if (c)
			return c < 0 ? -1 : 1;
	}
	if (x->kind == SCOPE_TASK)
		return x->tid < y->tid ? -1 : x->tid > y->tid;
	return x->cpu < y->cpu ? -1 : x->cpu > y->cpu;
}

static int sign(int v)
{
	return (v > 0) - (v < 0);
}

static struct scope *add(struct interval *iv, const struct run *run, const struct id *d)
{
	if (d->kind == SCOPE_TASK)
		return interval_add_task(iv, run, d->name, 1000, d->tid);
	return interval_add_scope(iv, run, d->kind, d->name, d->cpu);
}

static int nr_ids;
static struct id ids[4096];

static void make_ids(void)
{
	ids[nr_ids++] = (struct id){ SCOPE_SYSTEM, NULL, -1, 0 };
	for (int c = 1; c < NR_CPUS; c++)
		ids[nr_ids++] = (struct id){ SCOPE_CPU, NULL, cpus[c], 0 };
	for (int p = 0; p < NR_PATHS; p++)
		for (int c = 0; c < NR_CPUS; c++)
			ids[nr_ids++] = (struct id){ SCOPE_CGROUP, paths[p], cpus[c], 0 };
	for (int p = 0; p < NR_PATHS; p++)
		for (int t = 0; t < NR_TIDS; t++)
			ids[nr_ids++] = (struct id){ SCOPE_TASK, paths[p], -1, tids[t] };
	for (int q = 0; q < NR_IRQS; q++)
		for (int c = 0; c < NR_CPUS; c++)
			ids[nr_ids++] = (struct id){ SCOPE_IRQ, irqs[q], cpus[c], 0 };
}

/* Every pair: equal keys exactly for equal scopes, and strcmp() in the old order. */
static void check_pairs(void)
{
	struct run run = { .nr_events = 1 };
	struct interval iv = {};
	int bad_order = 0, same = 0;

	for (int i = 0; i < nr_ids; i++)
		CHECK(add(&iv, &run, &ids[i]) != NULL, "scope %d", i);
	if (iv.nr_scopes != nr_ids)
		return;
	for (int i = 0; i < nr_ids; i++) {
		const char *k = scope_key(&iv.scopes[i]);
		char *of = scope_key_of(ids[i].kind, ids[i].name, ids[i].cpu, ids[i].tid);

		CHECK(k && of && !strcmp(k, of), "scope_key_of() of scope %d", i);
		free(of);
		for (int j = 0; j < nr_ids; j++) {
			int c = strcmp(k, scope_key(&iv.scopes[j]));

			same += i != j && c == 0;
			bad_order += sign(c) != old_cmp(&ids[i], &ids[j]);
		}
	}
	CHECK_INT(same, 0);
	CHECK_INT(bad_order, 0);
	printf("# %d scopes, %d pairs compared\n", nr_ids, nr_ids * nr_ids);
	interval_free(&iv);
}

/* The same scopes again, in another interval, removed or with names: the same keys. */
static void check_stable(void)
{
	const struct cgroup_names n = { "web", "frontend-1", "shop" };
	struct run run = { .nr_events = 3 };
	struct interval a = {}, b = {};

	for (int i = 0; i < nr_ids; i++)
		add(&a, &run, &ids[i]);
	for (int i = nr_ids - 1; i >= 0; i--) {
		struct scope *s = add(&b, &run, &ids[i]);

		if (!s)
			continue;
		s->removed = i % 2;
		if (s->kind == SCOPE_CGROUP)
			CHECK_INT(scope_set_names(s, &n), 0);
	}
	CHECK_INT(a.nr_scopes, nr_ids);
	CHECK_INT(b.nr_scopes, nr_ids);
	/* The cgroup's path stays what it was given, beside the key. */
	for (int i = 0; i < a.nr_scopes; i++)
		if (ids[i].kind == SCOPE_CGROUP || ids[i].kind == SCOPE_TASK)
			CHECK_STR(a.scopes[i].cgroup, ids[i].name);
		else if (ids[i].kind == SCOPE_IRQ)
			CHECK(a.scopes[i].irq == ids[i].name && !a.scopes[i].cgroup, "irq %d", i);
	interval_sort(&a);
	interval_sort(&b);
	for (int i = 0; i < a.nr_scopes && i < b.nr_scopes; i++)
		CHECK_STR(scope_key(&b.scopes[i]), scope_key(&a.scopes[i]));
	interval_free(&a);
	interval_free(&b);
}

static void check_named_cases(void)
{
	struct run run = { .nr_events = 1 };
	struct interval iv = {};
	const struct id cases[][2] = {
		{ { SCOPE_CGROUP, "/a", -1, 0 }, { SCOPE_CGROUP, "/a", 0, 0 } },
		{ { SCOPE_CGROUP, "/a", -1, 0 }, { SCOPE_TASK, "/a", -1, 0 } },
		{ { SCOPE_IRQ, "NET_RX", -1, 0 }, { SCOPE_IRQ, "NET_RX", 0, 0 } },
		{ { SCOPE_SYSTEM, NULL, -1, 0 }, { SCOPE_CPU, NULL, 0, 0 } },
		{ { SCOPE_CPU, NULL, 0, 0 }, { SCOPE_CGROUP, "/", 0, 0 } },
		{ { SCOPE_TASK, "/a", -1, 1 }, { SCOPE_TASK, "/b", -1, 1 } },
		{ { SCOPE_CGROUP, "/a b", -1, 0 }, { SCOPE_CGROUP, "/a\"b", -1, 0 } },
		{ { SCOPE_CGROUP, "/a\x01", -1, 0 }, { SCOPE_CGROUP, "/a", 0, 0 } },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct scope *x, *y;

		interval_clear(&iv);
		x = add(&iv, &run, &cases[i][0]);
		y = add(&iv, &run, &cases[i][1]);
		/* add() may move the first: read both after. */
		x = &iv.scopes[0];
		CHECK(y && strcmp(scope_key(x), scope_key(&iv.scopes[1])) != 0,
		      "case %zu: one key for two scopes", i);
	}
	interval_clear(&iv);
	CHECK(interval_add_scope(&iv, &run, SCOPE_TASK, "/a", -1) == NULL,
	      "a thread needs interval_add_task()");
	CHECK_INT(iv.nr_scopes, 0);
	interval_free(&iv);
}

/* What 10,000 cgroup scopes cost to add (with their keys) and sort, as figures. */
static void bench(void)
{
	struct run run = { .nr_events = 8 };
	struct interval iv = {};
	struct timespec t0, t1, t2;
	char path[64];
	double add_ms = 1e9, sort_ms = 1e9;

	for (int rep = 0; rep < 5; rep++) {
		interval_clear(&iv);
		clock_gettime(CLOCK_MONOTONIC, &t0);
		for (int i = 0; i < 10000; i++) {
			snprintf(path, sizeof(path), "/kubepods/burstable/pod%05d/ctr", (i * 7919) %
				 10000);
			if (!interval_add_scope(&iv, &run, SCOPE_CGROUP, path, -1))
				break;
		}
		clock_gettime(CLOCK_MONOTONIC, &t1);
		interval_sort(&iv);
		clock_gettime(CLOCK_MONOTONIC, &t2);
		add_ms = fmin(add_ms, (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6);
		sort_ms = fmin(sort_ms, (t2.tv_sec - t1.tv_sec) * 1e3 +
				       (t2.tv_nsec - t1.tv_nsec) / 1e6);
	}
	CHECK_INT(iv.nr_scopes, 10000);
	printf("# 10,000 cgroup scopes: added with their keys in %.3f ms, sorted in %.3f ms "
	       "(best of 5)\n", add_ms, sort_ms);
	interval_free(&iv);
}

int main(void)
{
	make_ids();
	check_pairs();
	check_stable();
	check_named_cases();
	bench();
	return test_done("scopekey");
}
