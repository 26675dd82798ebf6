/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Option values: the model options that the live run and `cgtma list-events` share, the
 * output options that the live run and `cgtma report` share (one parser for each set, one
 * message per mistake), and the getopt values of the live run's collector options (env.h
 * takes them).
 */
#ifndef CGTMA_OPTIONS_H
#define CGTMA_OPTIONS_H

#include <getopt.h>

#include "measurement.h"
#include "output.h"

/* The deepest -l/--level a live run, a report or list-events takes. */
#define LEVEL_MAX 6

/* getopt values of the shared options without a letter; a command's own start after them. */
enum {
	OPT_MODEL_FILE = 0x100,
	OPT_PERF_METRICS,
	OPT_NO_PERF_METRICS,
	OPT_SMT,
	OPT_NO_SMT,
	OPT_NMI_WATCHDOG,
	OPT_NO_NMI_WATCHDOG,
	OPT_SLOTS,
	OPT_CDM,
	OPT_MAX_CGROUPS,
	OPT_SWITCH_HOOK,
	OPT_MAX_TASKS,
	OPT_IRQ,
	OPT_NO_NOISE,
	OPT_METRICS,
	OPT_COMMAND_FIRST,
};

/* --model/-M, --model-file, --level/-l, --[no-]perf-metrics, --[no-]smt, --slots */
#define MODEL_LONG_OPTIONS                                                 \
	{ "model", required_argument, NULL, 'M' },                         \
	{ "model-file", required_argument, NULL, OPT_MODEL_FILE },         \
	{ "level", required_argument, NULL, 'l' },                         \
	{ "perf-metrics", no_argument, NULL, OPT_PERF_METRICS },           \
	{ "no-perf-metrics", no_argument, NULL, OPT_NO_PERF_METRICS },     \
	{ "smt", no_argument, NULL, OPT_SMT },                             \
	{ "no-smt", no_argument, NULL, OPT_NO_SMT },                       \
	{ "nmi-watchdog", no_argument, NULL, OPT_NMI_WATCHDOG },           \
	{ "no-nmi-watchdog", no_argument, NULL, OPT_NO_NMI_WATCHDOG },     \
	{ "slots", required_argument, NULL, OPT_SLOTS }

/* -m, --metrics[=LIST]: with "m" in the short options; metrics_opt() takes them */
#define METRICS_LONG_OPTION { "metrics", optional_argument, NULL, OPT_METRICS }

/* --json/-j, --csv/-x SEP, --cdm DIR: the views on stdout and crucible's files */
#define OUTPUT_LONG_OPTIONS                                                \
	{ "json", no_argument, NULL, 'j' },                                \
	{ "csv", required_argument, NULL, 'x' },                           \
	{ "cdm", required_argument, NULL, OPT_CDM }

/* -A/--per-cpu, --max-cgroups, --switch-hook, -T/--per-task, --max-tasks, --irq, --no-noise */
#define COLLECTOR_LONG_OPTIONS                                             \
	{ "per-cpu", no_argument, NULL, 'A' },                             \
	{ "max-cgroups", required_argument, NULL, OPT_MAX_CGROUPS },       \
	{ "switch-hook", required_argument, NULL, OPT_SWITCH_HOOK },       \
	{ "per-task", no_argument, NULL, 'T' },                            \
	{ "max-tasks", required_argument, NULL, OPT_MAX_TASKS },           \
	{ "irq", optional_argument, NULL, OPT_IRQ },                       \
	{ "no-noise", no_argument, NULL, OPT_NO_NOISE }

/*
 * s as an integer from min to max into *out: 0; or -EINVAL after saying what is wrong, with
 * opt's name (unit, such as " ms", follows the bounds in the message).
 */
int opt_int(const char *opt, const char *s, long min, long max, const char *unit, int *out);

/*
 * Takes getopt's c (with its argument) into mo when it is a model option: 1; 0 when it is
 * not one; -EINVAL for a bad value, said.
 */
int model_opt(struct measure_opts *mo, int c, const char *arg);

/*
 * Takes getopt's c into mo when it is -m or --metrics: 1; 0 when it is neither; -EINVAL for
 * an empty list, said. -m takes no argument (toplev's); --metrics takes LIST as
 * --metrics=LIST or, as perf's -M, from the next word when that is no option (argv[optind],
 * which it then skips); without one it is -m. A list of the whole set is the whole set.
 */
int metrics_opt(struct measure_opts *mo, int c, int argc, char **argv);

/*
 * Takes getopt's c (with its argument) into oo when it is an output option: 1; 0 when it is
 * not one. --json also turns errors into JSON lines (log_set_json).
 */
int output_opt(struct output_opts *oo, int c, const char *arg);

/* The output options taken, together: 0; or -EINVAL after saying what clashes. */
int output_opts_check(const struct output_opts *oo);

/*
 * Says a getopt_long() mistake in getopt's words, but as cgtma's messages are said ("cgtma:",
 * where getopt names argv[0]'s whole path): an unrecognized option (with the long ones
 * close to it offered), a missing argument, an argument to an option that takes none; then
 * how to get help. c is getopt_long()'s return ('?', or ':' where the short options begin
 * with ':', after any '+'), run with opterr 0. cmd: the subcommand ("report"), or NULL for
 * the live run.
 */
void option_error(const char *cmd, const struct option *longopts, int c, char *const argv[]);

#endif
