// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/cgtma.h"
#include "irqscope.h"
#include "log.h"

/* The kernel's softirq_to_name[] order (include/linux/interrupt.h), then the hardirqs. */
static const char *const names[CGTMA_NR_IRQ] = {
	"HI", "TIMER", "NET_TX", "NET_RX", "BLOCK", "IRQ_POLL", "TASKLET", "SCHED", "HRTIMER",
	"RCU", "hardirq",
};

static const char *const labels[CGTMA_NR_IRQ] = {
	"irq:HI", "irq:TIMER", "irq:NET_TX", "irq:NET_RX", "irq:BLOCK", "irq:IRQ_POLL",
	"irq:TASKLET", "irq:SCHED", "irq:HRTIMER", "irq:RCU", "irq:hardirq",
};

const char *irq_scope_label(const char *name)
{
	int i = irq_scope_find(name);

	return i < 0 ? NULL : labels[i];
}

const char *irq_scope_name(int i)
{
	return i >= 0 && i < CGTMA_NR_IRQ ? names[i] : "?";
}

int irq_scope_find(const char *name)
{
	for (int i = 0; name && i < CGTMA_NR_IRQ; i++)
		if (strcmp(name, names[i]) == 0)
			return i;
	return -1;
}

int irq_scopes_parse(const char *list, __u32 *mask)
{
	char *copy, *tok, *save = NULL;
	int err = 0;

	*mask = 0;
	if (!list || !*list) {
		*mask = (1U << CGTMA_NR_IRQ) - 1;
		return 0;
	}
	copy = strdup(list);
	if (!copy)
		return -ENOMEM;
	for (tok = strtok_r(copy, ",", &save); tok && !err; tok = strtok_r(NULL, ",", &save)) {
		int i;

		for (i = 0; i < CGTMA_NR_IRQ; i++)
			if (strcasecmp(tok, names[i]) == 0)
				break;
		if (i < CGTMA_NR_IRQ) {
			*mask |= 1U << i;
			continue;
		}
		pr_err("--irq '%s': unknown interrupt scope '%s'; valid: HI, TIMER, NET_TX, NET_RX, "
		       "BLOCK, IRQ_POLL, TASKLET, SCHED, HRTIMER, RCU, hardirq", list, tok);
		err = -EINVAL;
	}
	if (!err && !*mask) {
		pr_err("--irq '%s': no interrupt scope named", list);
		err = -EINVAL;
	}
	free(copy);
	return err;
}

/* --- the hooks ----------------------------------------------------------------------- */
