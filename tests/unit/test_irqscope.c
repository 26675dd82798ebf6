// SPDX-License-Identifier: GPL-2.0
/*
 * --irq's list: names to scope bits (case-insensitive, every scope when empty), a bad name
 * refused, the names and labels the outputs use, and the label of an irq scope.
 */
#include <errno.h>
#include <stdlib.h>

#include "bpf/cgtma.h"
#include "interval.h"
#include "irqscope.h"
#include "test.h"

int main(void)
{
	struct scope sc = { .kind = SCOPE_IRQ, .irq = "NET_RX", .cpu = -1 };
	char buf[64];
	__u32 mask;

	CHECK_INT(irq_scopes_parse(NULL, &mask), 0);
	CHECK_INT(mask, (1U << CGTMA_NR_IRQ) - 1);
	CHECK_INT(irq_scopes_parse("NET_RX,NET_TX,hardirq", &mask), 0);
	CHECK_INT(mask, (1U << 3) | (1U << 2) | (1U << CGTMA_IRQ_HARDIRQ));
	CHECK_INT(irq_scopes_parse("net_rx,HRTIMER", &mask), 0);
	CHECK_INT(mask, (1U << 3) | (1U << 8));
	CHECK_INT(irq_scopes_parse("NET_RX,BOGUS", &mask), -EINVAL);
	CHECK_INT(irq_scopes_parse(",", &mask), -EINVAL);
	CHECK_STR(irq_scope_name(0), "HI");
	CHECK_STR(irq_scope_name(9), "RCU");
	CHECK_STR(irq_scope_name(CGTMA_IRQ_HARDIRQ), "hardirq");
	CHECK_INT(irq_scope_find("NET_RX"), 3);
	CHECK_INT(irq_scope_find("nope"), -1);
	CHECK_STR(irq_scope_label("HRTIMER"), "irq:HRTIMER");
	CHECK(irq_scope_label("nope") == NULL, "no label for an unknown name");
	CHECK_STR(scope_label(&sc, false, buf, sizeof(buf)), "irq:NET_RX");
	sc.cpu = 1;
	CHECK_STR(scope_label(&sc, false, buf, sizeof(buf)), "irq:NET_RX@cpu1");
	CHECK_STR(scope_kind_name(SCOPE_IRQ), "irq");
	return test_done("irqscope");
}
