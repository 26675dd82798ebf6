/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Subcommands of cgtma other than live profiling. Each takes its own argv (argv[0] is the
 * subcommand's name) and returns the process exit code: 0 success, 1 failure, 2 bad usage.
 */
#ifndef CGTMA_COMMANDS_H
#define CGTMA_COMMANDS_H

int cmd_compute(int argc, char **argv);		/* cgtma compute: offline Top-Down from counts */
int cmd_list_events(int argc, char **argv);	/* cgtma list-events: groups and encodings */
int cmd_report(int argc, char **argv);		/* cgtma report: recompute a --record file */

#endif
