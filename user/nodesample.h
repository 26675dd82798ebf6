/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --sample without a list: which sample events the Top-Down tree asks for. Each node of a
 * model names its own (plan_node_sample(): toplev's `sample`); those of the nodes at or over
 * their threshold are the ones worth sampling, as toplev's --run-sample picks them.
 */
#ifndef CGTMA_NODESAMPLE_H
#define CGTMA_NODESAMPLE_H

#include <stddef.h>

#include "tma.h"

/* A node's sample event as --sample takes it and outputs name it: "MEM_LOAD_RETIRED.L2_HIT:pp". */
void node_sample_name(const struct plan_sample *s, char *buf, size_t len);

/*
 * The CSV's Sample column for a node, as toplev writes it: its sample events, lowercase,
 * a space between ("frontend_retired.latency_ge_16:pp frontend_retired.latency_ge_8:pp");
 * "" for a node with none.
 */
void node_sample_column(const struct plan *p, int node, char *buf, size_t len);

struct node_sample_pick {
	int node;			/* the plan node that asked for it first */
	struct plan_sample s;
};

/*
 * The sample events to add, in plan order: those of the nodes at or over their threshold
 * (counted, tma_result.above) in any of the nr trees, each once, leaving out the nr_have
 * names already sampled (as node_sample_name() writes them), at most room of them. Returns
 * how many it put in out.
 */
int node_samples_pick(const struct plan *p, const struct tma_result *const *trees, int nr,
		      char *const *have, int nr_have, int room, struct node_sample_pick *out);

#endif
