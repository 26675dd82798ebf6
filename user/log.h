/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Messages to the user. Errors and warnings go to stderr as "cgtma: ..." naming the subject
 * and the reason; under --json an error is also a JSON line on stdout ({"error": "..."}), so
 * a consumer of the stream sees why it ended (bpftool's p_err does the same).
 */
#ifndef CGTMA_LOG_H
#define CGTMA_LOG_H

#include <stdbool.h>

void log_set_json(bool on);
void pr_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void pr_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A one-line notice ("no hardware PMU: using the software model"); stderr. */
void pr_notice(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
