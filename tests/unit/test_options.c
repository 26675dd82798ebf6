// SPDX-License-Identifier: GPL-2.0
/*
 * The collector's options as env.c takes them: each getopt value into its field of the run's
 * struct env, bad values refused as usage (-EINVAL), other options left to the caller (0);
 * and the environment's CGTMA_SWITCH_HOOK, CGTMA_MAP_ALLOC and the tests' knobs.
 */
#include <errno.h>
#include <stdlib.h>

#include "bpf/cgtma.h"
#include "env.h"
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
		int ret;

		env = (struct env){ .switch_hook = SWITCH_HOOK_AUTO };
		ret = env_collector_opt(cases[i].c, cases[i].arg);
		CHECK(ret == cases[i].ret, "case %zu: got %d, want %d", i, ret, cases[i].ret);
		if (ret != 1)
			continue;
		CHECK_INT(env.max_cgroups, cases[i].max_cgroups);
		CHECK_INT(env.max_tasks, cases[i].max_tasks);
		CHECK_INT(env.switch_hook, cases[i].hook);
		CHECK_INT(env.per_task, cases[i].per_task);
		CHECK_INT(env.per_cpu, cases[i].per_cpu);
		CHECK_INT(env.irq_mask, cases[i].irq_mask);
	}

	{
		env = (struct env){};
		unsetenv("CGTMA_SWITCH_HOOK");
		unsetenv("CGTMA_MAP_ALLOC");
		CHECK_INT(env_read_environ(), 0);
		CHECK_INT(env.switch_hook, SWITCH_HOOK_AUTO);
		CHECK_INT(env.map_alloc, MAP_ALLOC_AUTO);
		setenv("CGTMA_SWITCH_HOOK", "tracepoint", 1);
		setenv("CGTMA_MAP_ALLOC", "prealloc", 1);
		CHECK_INT(env_read_environ(), 0);
		CHECK_INT(env.switch_hook, SWITCH_HOOK_TRACEPOINT);
		CHECK_INT(env.map_alloc, MAP_ALLOC_PREALLOC);
		/* Empty: the default stays. */
		setenv("CGTMA_SWITCH_HOOK", "", 1);
		setenv("CGTMA_MAP_ALLOC", "runtime", 1);
		CHECK_INT(env_read_environ(), 0);
		CHECK_INT(env.switch_hook, SWITCH_HOOK_TRACEPOINT);
		CHECK_INT(env.map_alloc, MAP_ALLOC_RUNTIME);
		setenv("CGTMA_MAP_ALLOC", "lazy", 1);
		CHECK_INT(env_read_environ(), -EINVAL);
		unsetenv("CGTMA_MAP_ALLOC");
		setenv("CGTMA_SWITCH_HOOK", "sched_switch", 1);
		CHECK_INT(env_read_environ(), -EINVAL);
		unsetenv("CGTMA_SWITCH_HOOK");
	}

	/* The tests' knobs: read as the modules that use them want them. */
	{
		env = (struct env){};
		unsetenv("CGTMA_RUNTIME_ROOT");
		setenv("CGTMA_TEST_DROP_SWITCH", "skip:7", 1);
		setenv("CGTMA_PER_TASK_AUTO", "perf-event", 1);
		setenv("CGTMA_IRQ_HOOK", "raw_tp", 1);
		CHECK_INT(env_read_environ(), 0);
		CHECK_INT(env.test_drop_every, 7);
		CHECK_INT(env.test_drop_counted, false);
		CHECK_INT(env.per_task_auto, true);
		CHECK_INT(env.irq_raw_tp, true);
		CHECK_STR(env.runtime_root, "");
		env = (struct env){};
		setenv("CGTMA_RUNTIME_ROOT", "/tmp/fixtures", 1);
		setenv("CGTMA_TEST_DROP_SWITCH", "miss:3", 1);
		setenv("CGTMA_PER_TASK_AUTO", "tracepoint", 1);
		setenv("CGTMA_IRQ_HOOK", "tp_btf", 1);
		CHECK_INT(env_read_environ(), 0);
		CHECK_INT(env.test_drop_every, 3);
		CHECK_INT(env.test_drop_counted, true);
		CHECK_INT(env.per_task_auto, false);
		CHECK_INT(env.irq_raw_tp, false);
		CHECK_STR(env.runtime_root, "/tmp/fixtures");
		/* Not a knob: left off. */
		env = (struct env){};
		setenv("CGTMA_TEST_DROP_SWITCH", "drop:3", 1);
		CHECK_INT(env_read_environ(), 0);
		CHECK_INT(env.test_drop_every, 0);
		unsetenv("CGTMA_TEST_DROP_SWITCH");
		unsetenv("CGTMA_PER_TASK_AUTO");
		unsetenv("CGTMA_IRQ_HOOK");
		unsetenv("CGTMA_RUNTIME_ROOT");
	}
	return test_done("options");
}
