/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --irq: the BPF programs that carve the interrupt scopes (irqscope.h) out of the cgroups,
 * chosen and attached for the collector.
 */
#ifndef CGTMA_IRQHOOKS_H
#define CGTMA_IRQHOOKS_H

struct cgtma;

/*
 * Between the skeleton's open and load: the interrupt programs that load for the scopes in
 * env.irq_mask (none when 0), tp_btf where the kernel's BTF has the tracepoints, raw tracepoints
 * otherwise; -v says which.
 */
void irq_hooks_choose(struct cgtma *skel);

/* After the load: attaches the programs that loaded, exits first: 0 or -errno, said. */
int irq_hooks_attach(struct cgtma *skel);

#endif
