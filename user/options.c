// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "irqscope.h"
#include "log.h"
#include "options.h"

int opt_int(const char *opt, const char *s, long min, long max, const char *unit, int *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max) {
		if (!errno && end != s && !*end && v < min)
			pr_err("%s %ld: the minimum is %ld%s", opt, v, min, unit);
		else
			pr_err("%s '%s': expected an integer from %ld to %ld%s", opt, s, min, max,
			       unit);
		return -EINVAL;
	}
	*out = (int)v;
	return 0;
}

int model_opt(struct measure_opts *mo, int c, const char *arg)
{
	switch (c) {
	case 'M':
		mo->model = arg;
		return 1;
	case OPT_MODEL_FILE:
		mo->model_file = arg;
		return 1;
	case 'l':
		return opt_int("--level", arg, 1, LEVEL_MAX, "", &mo->level) ? -EINVAL : 1;
	case OPT_PERF_METRICS:
	case OPT_NO_PERF_METRICS:
		mo->perf_metrics = c == OPT_PERF_METRICS;
		return 1;
	case OPT_SMT:
	case OPT_NO_SMT:
		mo->smt = c == OPT_SMT;
		return 1;
	case OPT_NMI_WATCHDOG:
	case OPT_NO_NMI_WATCHDOG:
		mo->nmi_watchdog = c == OPT_NMI_WATCHDOG;
		return 1;
	case OPT_SLOTS:
		return opt_int("--slots", arg, 1, 255, "", &mo->slots) ? -EINVAL : 1;
	default:
		return 0;
	}
}

int output_opt(struct output_opts *oo, int c, const char *arg)
{
	switch (c) {
	case 'j':
		oo->json = true;
		log_set_json(true);
		return 1;
	case 'x':
		oo->csv_sep = arg;
		return 1;
	case OPT_CDM:
		oo->cdm_dir = arg;
		return 1;
	default:
		return 0;
	}
}

int output_opts_check(const struct output_opts *oo)
{
	if (oo->json && oo->csv_sep) {
		pr_err("--json and -x both write to stdout: give one");
		return -EINVAL;
	}
	if (oo->top && (oo->json || oo->csv_sep)) {
		pr_err("--top N shapes the terminal's view, which --json and -x replace: give one");
		return -EINVAL;
	}
	return 0;
}

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

int collector_opt(struct collector_opts *co, int c, const char *arg)
{
	switch (c) {
	case 'A':
		co->per_cpu = true;
		return 1;
	case OPT_MAX_CGROUPS:
		return opt_int("--max-cgroups", arg, 1, 1 << 20, "", &co->max_cgroups) ?
			       -EINVAL : 1;
	case OPT_SWITCH_HOOK:
		if (switch_hook_parse(arg, &co->switch_hook)) {
			pr_err("--switch-hook '%s': expected auto, tracepoint or perf-event", arg);
			return -EINVAL;
		}
		return 1;
	case 'T':
		co->per_task = true;
		return 1;
	case OPT_MAX_TASKS:
		return opt_int("--max-tasks", arg, 1, 1 << 20, "", &co->max_tasks) ? -EINVAL : 1;
	case OPT_IRQ:
		return irq_scopes_parse(arg, &co->irq_mask) ? -EINVAL : 1;
	default:
		return 0;
	}
}

int collector_opts_env(struct collector_opts *co)
{
	const char *hook = getenv("CGTMA_SWITCH_HOOK"), *alloc = getenv("CGTMA_MAP_ALLOC");

	if (hook && *hook && switch_hook_parse(hook, &co->switch_hook)) {
		pr_err("CGTMA_SWITCH_HOOK '%s': expected auto, tracepoint or perf-event", hook);
		return -EINVAL;
	}
	if (alloc && *alloc && map_alloc_parse(alloc, &co->map_alloc)) {
		pr_err("CGTMA_MAP_ALLOC '%s': expected auto, prealloc or runtime", alloc);
		return -EINVAL;
	}
	return 0;
}
