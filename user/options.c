// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "options.h"
#include "suggest.h"

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

/*
 * Whether word is a command a shell would run: a path to an executable, or a name found in
 * PATH. `cgtma --metrics stress -c 1` runs stress, as the live run takes a command without
 * "--"; a metric or group named as a command must then come after "=".
 */
static bool is_command(const char *word)
{
	const char *path = getenv("PATH");
	char file[4096];

	if (strchr(word, '/'))
		return access(word, X_OK) == 0;
	for (const char *d = path; d && *d; d += *d == ':') {
		size_t len = strcspn(d, ":");

		if (snprintf(file, sizeof(file), "%.*s/%s", (int)len, len ? d : ".", word) <
			    (int)sizeof(file) && access(file, X_OK) == 0)
			return true;
		d += len;
	}
	return false;
}

int metrics_opt(struct measure_opts *mo, int c, int argc, char **argv)
{
	const char *list = "";

	if (c != 'm' && c != OPT_METRICS)
		return 0;
	if (c == OPT_METRICS && optarg)
		list = optarg;
	else if (c == OPT_METRICS && optind < argc && argv[optind][0] != '-' &&
		 !is_command(argv[optind]))
		list = argv[optind++];
	if (c == OPT_METRICS && optarg && !*optarg) {
		pr_err("--metrics=: the list is empty (-m alone adds every metric)");
		return -EINVAL;
	}
	/* once all, always all */
	if (!mo->metrics || *mo->metrics)
		mo->metrics = list;
	return 1;
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

void option_error(const char *cmd, const struct option *longopts, int c, char *const argv[])
{
	const char *given = optind > 0 ? argv[optind - 1] : "";
	char did[SUGGEST_LEN] = "", name[128];
	bool is_long = strncmp(given, "--", 2) == 0;
	struct suggest sg;

	if (c == ':') {
		if (is_long)
			pr_err("option '%s' requires an argument", given);
		else
			pr_err("option '-%c' requires an argument", optopt);
	} else if (is_long && optopt) {
		pr_err("option '%.*s' doesn't allow an argument", (int)strcspn(given, "="), given);
	} else if (is_long) {
		char cand[128];

		snprintf(name, sizeof(name), "%.*s", (int)strcspn(given, "="), given);
		suggest_init(&sg, name);
		for (const struct option *o = longopts; o->name; o++) {
			snprintf(cand, sizeof(cand), "--%s", o->name);
			suggest_add(&sg, cand);
		}
		suggest_format(&sg, did, sizeof(did));
		suggest_release(&sg);
		pr_err("unrecognized option '%s'%s%s", name, *did ? "; " : "", did);
	} else {
		pr_err("unrecognized option '-%c'", optopt);
	}
	fprintf(stderr, "Try 'cgtma%s%s --help'.\n", cmd ? " " : "", cmd ? cmd : "");
}
