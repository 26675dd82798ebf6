/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --irq: the interrupt scopes, by name (the softirq vectors as the kernel names them, and
 * "hardirq" for every hardirq handler), the option's list of them, and the BPF programs
 * that carve them out of the cgroups.
 */
#ifndef CGTMA_IRQSCOPE_H
#define CGTMA_IRQSCOPE_H

#include <linux/types.h>

struct cgtma;

/* Scope i's name (i < CGTMA_NR_IRQ, cgtma.h), e.g. "NET_RX". */
const char *irq_scope_name(int i);

/* "irq:NET_RX" for the scope named "NET_RX" (a static string), or NULL. */
const char *irq_scope_label(const char *name);

/* The scope named name (as irq_scope_name() spells it), or -1. */
int irq_scope_find(const char *name);

/*
 * "NET_RX,NET_TX,hardirq" (NULL or "": every scope) -> *mask, bit i for scope i. A name it
 * does not know is printed, with the valid ones, and gives -EINVAL.
 */
int irq_scopes_parse(const char *list, __u32 *mask);

/*
 * Between the skeleton's open and load: the interrupt programs that load for the scopes in
 * env.irq_mask (none when 0), tp_btf where the kernel's BTF has the tracepoints, raw tracepoints
 * otherwise; -v says which.
 */
void irq_hooks_choose(struct cgtma *skel);

/* After the load: attaches the programs that loaded, exits first: 0 or -errno, said. */
int irq_hooks_attach(struct cgtma *skel);

#endif
