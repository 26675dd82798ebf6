/* SPDX-License-Identifier: GPL-2.0 */
/* A live profiling run: from the configuration (env.h) to intervals on every output, until
 * stopped. */
#ifndef CGTMA_SESSION_H
#define CGTMA_SESSION_H

/* Runs until done; returns the process exit code (the command's, when one was run). */
int session_run(void);

#endif
