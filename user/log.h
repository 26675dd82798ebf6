/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Messages to the user. Errors and warnings go to stderr as "cgtma: ..." naming the subject
 * and the reason; under --json an error is also a JSON line on stdout ({"error": "..."}), or
 * in the file -o names once it is open, so that a consumer of the stream sees why it ended
 * (bpftool's p_err does the same).
 */
#ifndef CGTMA_LOG_H
#define CGTMA_LOG_H

#include <stdbool.h>

void log_set_json(bool on);
/* Where the JSON error lines go from now on (-o's file): STDOUT_FILENO at start. */
void log_set_json_fd(int fd);

/* How much cgtma says on stderr: -v raises it, once, for every module. */
enum log_level {
	LOG_DEFAULT,	/* errors, warnings and notices */
	LOG_VERBOSE,	/* -v: what each step found and chose, libbpf's warnings */
};

void log_set_level(enum log_level level);
/* Whether -v raised the level: a module says more, or shows what it would leave out. */
bool log_verbose(void);
void pr_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void pr_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A one-line notice ("no hardware PMU: using the software model"); stderr. */
void pr_notice(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
