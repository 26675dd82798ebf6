// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <string.h>
#include <bpf/libbpf.h>

#include "bpf/cgtma.h"
#include "env.h"
#include "irqhooks.h"
#include "log.h"
#include "probe.h"
#include "cgtma.skel.h"

/* An interrupt entry this close after an exit reads nothing (the gap is the next one's). */
#define IRQ_COALESCE_NS 500

/*
 * --irq: the interrupt programs that run, tp_btf where the kernel's BTF has the tracepoints
 * (plain loads), raw tracepoints otherwise; softirq ones only for a selected vector, the
 * hardirq ones only when hardirq is selected.
 */
void irq_hooks_choose(struct cgtma *skel)
{
	__u32 irq_mask = env.irq_mask;
	bool softirq = irq_mask & ((1U << CGTMA_IRQ_HARDIRQ) - 1);
	bool hardirq = irq_mask & (1U << CGTMA_IRQ_HARDIRQ);
	/* CGTMA_IRQ_HOOK=raw_tp takes the raw tracepoints where tp_btf would do: for tests. */
	bool btf = irq_mask && !env.irq_raw_tp &&
		   probe_btf_has_tracepoints((const char *const[]){ "softirq_entry",
								 "irq_handler_entry" }, 2);
	__typeof__(skel->progs) *p = &skel->progs;

	skel->rodata->irq_mask = irq_mask;
	skel->rodata->irq_coalesce_ns = IRQ_COALESCE_NS;
	if (irq_mask && env.test_irq_busy_every) {
		skel->rodata->test_irq_busy_every = env.test_irq_busy_every;
		pr_notice("CGTMA_TEST_IRQ_IN_UPDATE: every %u-th interrupt entry on a CPU is taken "
			  "as if it came during an update", env.test_irq_busy_every);
	}
	bpf_program__set_autoload(p->on_softirq_entry, softirq && btf);
	bpf_program__set_autoload(p->on_softirq_exit, softirq && btf);
	bpf_program__set_autoload(p->on_hardirq_entry, hardirq && btf);
	bpf_program__set_autoload(p->on_hardirq_exit, hardirq && btf);
	bpf_program__set_autoload(p->raw_softirq_entry, softirq && !btf);
	bpf_program__set_autoload(p->raw_softirq_exit, softirq && !btf);
	bpf_program__set_autoload(p->raw_hardirq_entry, hardirq && !btf);
	bpf_program__set_autoload(p->raw_hardirq_exit, hardirq && !btf);
	if (irq_mask && log_verbose())
		pr_notice("--irq: %s", btf ? "tp_btf tracepoints" : env.irq_raw_tp ?
			  "raw tracepoints (CGTMA_IRQ_HOOK)" : "raw tracepoints (no tp_btf)");
}

static int attach_one(struct bpf_program *prog, struct bpf_link **link)
{
	int err;

	if (!bpf_program__autoload(prog))
		return 0;
	*link = bpf_program__attach(prog);
	if (*link)
		return 0;
	err = -errno;
	pr_err("--irq: cannot attach %s: %s", bpf_program__name(prog), strerror(-err));
	return err;
}

/*
 * Exits before entries: an entry seen with its exit missed would leave its scope owning the
 * CPU; an exit without its entry is recognised and ignored.
 */
int irq_hooks_attach(struct cgtma *skel)
{
	__typeof__(skel->progs) *p = &skel->progs;
	__typeof__(skel->links) *l = &skel->links;
	int err;

	if ((err = attach_one(p->on_softirq_exit, &l->on_softirq_exit)) ||
	    (err = attach_one(p->on_hardirq_exit, &l->on_hardirq_exit)) ||
	    (err = attach_one(p->raw_softirq_exit, &l->raw_softirq_exit)) ||
	    (err = attach_one(p->raw_hardirq_exit, &l->raw_hardirq_exit)) ||
	    (err = attach_one(p->on_softirq_entry, &l->on_softirq_entry)) ||
	    (err = attach_one(p->on_hardirq_entry, &l->on_hardirq_entry)) ||
	    (err = attach_one(p->raw_softirq_entry, &l->raw_softirq_entry)) ||
	    (err = attach_one(p->raw_hardirq_entry, &l->raw_hardirq_entry)))
		return err;
	return 0;
}
