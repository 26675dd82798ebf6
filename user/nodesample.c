// SPDX-License-Identifier: GPL-2.0
#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "nodesample.h"

void node_sample_name(const struct plan_sample *s, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s%.*s", s->event, s->precise ? ":" : "", s->precise, "ppp");
}

void node_sample_column(const struct plan *p, int node, char *buf, size_t len)
{
	size_t at = 0;

	buf[0] = '\0';
	for (int i = 0, n = plan_node_samples(p, node); i < n && at + 1 < len; i++) {
		struct plan_sample s;

		plan_node_sample(p, node, i, &s);
		at += snprintf(buf + at, len - at, "%s", i ? " " : "");
		if (at + 1 >= len)
			break;
		node_sample_name(&s, buf + at, len - at);
		for (; buf[at]; at++)
			buf[at] = (char)tolower((unsigned char)buf[at]);
	}
}

static bool named(char *const *names, int nr, const char *name)
{
	for (int i = 0; i < nr; i++)
		if (!strcmp(names[i], name))
			return true;
	return false;
}

static bool picked(const struct node_sample_pick *out, int nr, const char *name)
{
	char other[256];

	for (int i = 0; i < nr; i++) {
		node_sample_name(&out[i].s, other, sizeof(other));
		if (!strcmp(other, name))
			return true;
	}
	return false;
}

int node_samples_pick(const struct plan *p, const struct tma_result *const *trees, int nr,
		      char *const *have, int nr_have, int room, struct node_sample_pick *out)
{
	int n = 0;

	for (int node = 0; node < p->nr_nodes && n < room; node++) {
		bool over = false;

		for (int t = 0; t < nr && !over; t++)
			over = trees[t]->counted[node] && trees[t]->above[node];
		for (int i = 0; over && i < plan_node_samples(p, node) && n < room; i++) {
			struct plan_sample s;
			char name[256];

			plan_node_sample(p, node, i, &s);
			node_sample_name(&s, name, sizeof(name));
			if (named(have, nr_have, name) || picked(out, n, name))
				continue;
			out[n++] = (struct node_sample_pick){ .node = node, .s = s };
		}
	}
	return n;
}
