/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --irq: the interrupt scopes, by name (the softirq vectors as the kernel names them, and
 * "hardirq" for every hardirq handler), and the option's list of them. Their BPF programs:
 * irqhooks.h.
 */
#ifndef CGTMA_IRQSCOPE_H
#define CGTMA_IRQSCOPE_H

#include <linux/types.h>

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

#endif
