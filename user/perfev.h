/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Per-CPU perf events: opened for every task on one CPU, close-on-exec, with the message
 * that says what an open's failure usually means.
 */
#ifndef CGTMA_PERFEV_H
#define CGTMA_PERFEV_H

#include <linux/perf_event.h>

/* perf_event_open(2) of attr on cpu for every task, in group_fd's group (-1: none): the fd, or
 * -1 with errno. */
int perfev_open(struct perf_event_attr *attr, int cpu, int group_fd);

/* What errno err of perfev_open() usually means, as " (...)" to append; "" when nothing. */
const char *perfev_open_hint(int err);

/* CPUs x events descriptors: raises the soft RLIMIT_NOFILE to needed where it can. */
void perfev_raise_fd_limit(int needed);

#endif
