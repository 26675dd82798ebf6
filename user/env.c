// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "env.h"
#include "exitstatus.h"
#include "irqscope.h"
#include "log.h"
#include "options.h"

struct env env = {
	.interval_ms = 1000,
	.select.depth = 3,
	.no_match_status = EXIT_NO_MATCH,
	.measure = { .perf_metrics = -1, .smt = -1, .nmi_watchdog = -1 },
	.runtime_root = "",
};

/* The index of s in names[0..n-1], or -EINVAL. */
static int name_index(const char *const *names, size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(s, names[i]) == 0)
			return (int)i;
	return -EINVAL;
}

int switch_hook_parse(const char *s, enum switch_hook *out)
{
	static const char *const names[] = {
		[SWITCH_HOOK_AUTO] = "auto",
		[SWITCH_HOOK_TRACEPOINT] = "tracepoint",
		[SWITCH_HOOK_PERF_EVENT] = "perf-event",
	};
	int i = name_index(names, sizeof(names) / sizeof(names[0]), s);

	if (i < 0)
		return i;
	*out = (enum switch_hook)i;
	return 0;
}

int map_alloc_parse(const char *s, enum map_alloc *out)
{
	static const char *const names[] = {
		[MAP_ALLOC_AUTO] = "auto",
		[MAP_ALLOC_PREALLOC] = "prealloc",
		[MAP_ALLOC_RUNTIME] = "runtime",
	};
	int i = name_index(names, sizeof(names) / sizeof(names[0]), s);

	if (i < 0)
		return i;
	*out = (enum map_alloc)i;
	return 0;
}

int env_collector_opt(int c, const char *arg)
{
	switch (c) {
	case 'A':
		env.per_cpu = true;
		return 1;
	case OPT_MAX_CGROUPS:
		return opt_int("--max-cgroups", arg, 1, 1 << 20, "", &env.max_cgroups) ?
			       -EINVAL : 1;
	case OPT_SWITCH_HOOK:
		if (switch_hook_parse(arg, &env.switch_hook)) {
			pr_err("--switch-hook '%s': expected auto, tracepoint or perf-event", arg);
			return -EINVAL;
		}
		return 1;
	case 'T':
		env.per_task = true;
		return 1;
	case OPT_MAX_TASKS:
		return opt_int("--max-tasks", arg, 1, 1 << 20, "", &env.max_tasks) ? -EINVAL : 1;
	case OPT_IRQ:
		return irq_scopes_parse(arg, &env.irq_mask) ? -EINVAL : 1;
	case OPT_NO_NOISE:
		env.no_noise = true;
		return 1;
	default:
		return 0;
	}
}

/*
 * For tests of the marks (tests/live/47-marks.sh): CGTMA_TEST_DROP_SWITCH=skip:N has the
 * perf-event hook's program leave every N-th run on a CPU and the next as if the kernel had
 * skipped them (there and back: only the count check finds them), miss:N every N-th as if
 * it had run and not seen the switch. Anything else is no knob.
 */
static void read_test_drop_switch(const char *v)
{
	unsigned int n;
	char how[8];

	/* skip drops two runs of every N: N of 2 would drop them all. */
	if (!v || sscanf(v, "%7[a-z]:%u", how, &n) != 2 ||
	    (strcmp(how, "skip") != 0 && strcmp(how, "miss") != 0) ||
	    n < (strcmp(how, "skip") ? 1U : 3U))
		return;
	env.test_drop_every = n;
	env.test_drop_counted = strcmp(how, "miss") == 0;
}

/*
 * For tests of the marks of interrupts during an update (tests/live/23-irq.sh):
 * CGTMA_TEST_IRQ_IN_UPDATE=N has every N-th interrupt entry on a CPU (--irq) taken as if it
 * had come while a program updated the CPU's slice. Anything else is no knob.
 */
static void read_test_irq_in_update(const char *v)
{
	unsigned int n;
	char end;

	if (v && sscanf(v, "%u%c", &n, &end) == 1 && n > 0)
		env.test_irq_busy_every = n;
}

/*
 * For tests of what the BPF side counts before the run's start (tests/live/66-noise-start.sh):
 * CGTMA_TEST_START_DELAY=MS waits MS milliseconds between the attach and the run's zero
 * point, as a loaded machine can. Anything else is no knob.
 */
static void read_test_start_delay(const char *v)
{
	unsigned int ms;
	char end;

	if (v && sscanf(v, "%u%c", &ms, &end) == 1 && ms > 0 && ms <= 60000)
		env.test_start_delay_ms = ms;
}

int env_read_environ(void)
{
	const char *hook = getenv("CGTMA_SWITCH_HOOK"), *alloc = getenv("CGTMA_MAP_ALLOC");
	const char *pt_auto = getenv("CGTMA_PER_TASK_AUTO"), *irq = getenv("CGTMA_IRQ_HOOK");
	const char *root = getenv("CGTMA_RUNTIME_ROOT");

	if (hook && *hook && switch_hook_parse(hook, &env.switch_hook)) {
		pr_err("CGTMA_SWITCH_HOOK '%s': expected auto, tracepoint or perf-event", hook);
		return -EINVAL;
	}
	if (alloc && *alloc && map_alloc_parse(alloc, &env.map_alloc)) {
		pr_err("CGTMA_MAP_ALLOC '%s': expected auto, prealloc or runtime", alloc);
		return -EINVAL;
	}
	env.per_task_auto = pt_auto && strcmp(pt_auto, "perf-event") == 0;
	env.irq_raw_tp = irq && strcmp(irq, "raw_tp") == 0;
	env.runtime_root = root ? root : "";
	read_test_drop_switch(getenv("CGTMA_TEST_DROP_SWITCH"));
	read_test_irq_in_update(getenv("CGTMA_TEST_IRQ_IN_UPDATE"));
	read_test_start_delay(getenv("CGTMA_TEST_START_DELAY"));
	return 0;
}
