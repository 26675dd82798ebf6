/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The command a run profiles (cgtma ... -- COMMAND), as perf stat runs one: started once
 * counting has begun, reaped when it exits, stopped when the run is, and its status passed
 * on as the run's exit status.
 *
 *   struct child ch = CHILD_INIT;
 *
 *   child_start(&ch, argv, &old_mask);     // 0, or -errno (said); ch.exec_errno set when
 *                                          // exec failed
 *   child_reap(&ch);                       // on SIGCHLD: true once it has exited
 *   child_stop(&ch);                       // SIGTERM, then SIGKILL after 5 s
 *   status = child_exit_status(&ch);       // as a shell reports it
 */
#ifndef CGTMA_CHILD_H
#define CGTMA_CHILD_H

#include <signal.h>
#include <stdbool.h>
#include <sys/types.h>

struct child {
	pid_t pid;		/* 0: none */
	int status;		/* waitpid()'s, once done */
	bool done;
	int exec_errno;		/* why it could not be run, 0 if it could */
};

#define CHILD_INIT { 0 }

/*
 * Forks and execs argv[0] (searched in PATH) with the signal mask old_mask and SIGPIPE at its
 * default; returns once the exec happened, or with -errno (said, naming the command) when it
 * did not: exec_errno then says why.
 */
int child_start(struct child *ch, char *const argv[], const sigset_t *old_mask);

/* Without waiting: true when it has exited (status is then set), false while it runs. */
bool child_reap(struct child *ch);

/* SIGTERM, then SIGKILL if it has not exited after 5 s: it must not outlive the run. */
void child_stop(struct child *ch);

/*
 * The run's exit status for it, as a shell gives: its own, 128 + a signal that killed it,
 * 127 when it was not found and 126 when it could not be run.
 */
int child_exit_status(const struct child *ch);

#endif
