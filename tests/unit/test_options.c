// SPDX-License-Identifier: GPL-2.0
/*
 * The collector's options as options.c takes them: each getopt value into its field of
 * struct collector_opts, bad values refused as usage (-EINVAL), other options left to the
 * caller (0); and the environment's CGTMA_SWITCH_HOOK and CGTMA_MAP_ALLOC.
 */
#include <errno.h>
#include <stdlib.h>

#include "bpf/cgtma.h"
#include "options.h"
#include "test.h"

static const struct {
	int c;
	const char *arg;
	int ret;
	int max_cgroups, max_tasks;
	enum switch_hook hook;
	bool per_task, per_cpu;
	__u32 irq_mask;
} cases[] = {
	{ .c = 'A', .ret = 1, .per_cpu = true },
	{ .c = 'T', .ret = 1, .per_task = true },
	{ .c = OPT_MAX_CGROUPS, .arg = "4096", .ret = 1, .max_cgroups = 4096 },
	{ .c = OPT_MAX_CGROUPS, .arg = "1048576", .ret = 1, .max_cgroups = 1 << 20 },
	{ .c = OPT_MAX_CGROUPS, .arg = "1048577", .ret = -EINVAL },
	{ .c = OPT_MAX_CGROUPS, .arg = "0", .ret = -EINVAL },
	{ .c = OPT_MAX_CGROUPS, .arg = "12k", .ret = -EINVAL },
	{ .c = OPT_MAX_TASKS, .arg = "100", .ret = 1, .max_tasks = 100 },
	{ .c = OPT_MAX_TASKS, .arg = "-1", .ret = -EINVAL },
	{ .c = OPT_SWITCH_HOOK, .arg = "tracepoint", .ret = 1, .hook = SWITCH_HOOK_TRACEPOINT },
	{ .c = OPT_SWITCH_HOOK, .arg = "perf-event", .ret = 1, .hook = SWITCH_HOOK_PERF_EVENT },
	{ .c = OPT_SWITCH_HOOK, .arg = "auto", .ret = 1, .hook = SWITCH_HOOK_AUTO },
	{ .c = OPT_SWITCH_HOOK, .arg = "perf_event", .ret = -EINVAL },
	{ .c = OPT_IRQ, .ret = 1, .irq_mask = (1U << CGTMA_NR_IRQ) - 1 },
	{ .c = OPT_IRQ, .arg = "NET_RX,hardirq", .ret = 1,
	  .irq_mask = (1U << 3) | (1U << CGTMA_IRQ_HARDIRQ) },
	{ .c = OPT_IRQ, .arg = "NET_RX,BOGUS", .ret = -EINVAL },
	/* The model's and the command's own options are not the collector's. */
	{ .c = 'M', .arg = "zen4", .ret = 0 },
	{ .c = 'v', .ret = 0 },
	{ .c = 'C', .arg = "0-3", .ret = 0 },
};

int main(void)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct collector_opts co = { .switch_hook = SWITCH_HOOK_AUTO };
		int ret = collector_opt(&co, cases[i].c, cases[i].arg);

		CHECK(ret == cases[i].ret, "case %zu: got %d, want %d", i, ret, cases[i].ret);
		if (ret != 1)
			continue;
		CHECK_INT(co.max_cgroups, cases[i].max_cgroups);
		CHECK_INT(co.max_tasks, cases[i].max_tasks);
		CHECK_INT(co.switch_hook, cases[i].hook);
		CHECK_INT(co.per_task, cases[i].per_task);
		CHECK_INT(co.per_cpu, cases[i].per_cpu);
		CHECK_INT(co.irq_mask, cases[i].irq_mask);
	}

	{
		struct collector_opts co = {};

		unsetenv("CGTMA_SWITCH_HOOK");
		unsetenv("CGTMA_MAP_ALLOC");
		CHECK_INT(collector_opts_env(&co), 0);
		CHECK_INT(co.switch_hook, SWITCH_HOOK_AUTO);
		CHECK_INT(co.map_alloc, MAP_ALLOC_AUTO);
		setenv("CGTMA_SWITCH_HOOK", "tracepoint", 1);
		setenv("CGTMA_MAP_ALLOC", "prealloc", 1);
		CHECK_INT(collector_opts_env(&co), 0);
		CHECK_INT(co.switch_hook, SWITCH_HOOK_TRACEPOINT);
		CHECK_INT(co.map_alloc, MAP_ALLOC_PREALLOC);
		/* Empty: the default stays. */
		setenv("CGTMA_SWITCH_HOOK", "", 1);
		setenv("CGTMA_MAP_ALLOC", "runtime", 1);
		CHECK_INT(collector_opts_env(&co), 0);
		CHECK_INT(co.switch_hook, SWITCH_HOOK_TRACEPOINT);
		CHECK_INT(co.map_alloc, MAP_ALLOC_RUNTIME);
		setenv("CGTMA_MAP_ALLOC", "lazy", 1);
		CHECK_INT(collector_opts_env(&co), -EINVAL);
		unsetenv("CGTMA_MAP_ALLOC");
		setenv("CGTMA_SWITCH_HOOK", "sched_switch", 1);
		CHECK_INT(collector_opts_env(&co), -EINVAL);
		unsetenv("CGTMA_SWITCH_HOOK");
	}
	return test_done("options");
}
