/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The signals that end a live run: SIGINT, SIGTERM, SIGHUP, and SIGCHLD (the command's end).
 * They stay blocked from main()'s first line and are taken synchronously between intervals
 * (sigtimedwait()), so that nothing is cut halfway.
 */
#ifndef CGTMA_SIGNALS_H
#define CGTMA_SIGNALS_H

#include <signal.h>

/* The signals that end a run, as a set. */
void signals_stop_set(sigset_t *set);

/*
 * Blocks them, and puts the mask before into *old. main() calls it first, so that a signal
 * that comes while cgtma starts waits for the run's loop, even where it was ignored (a
 * background job of a script): a blocked signal is kept pending whatever its disposition.
 */
void signals_block(sigset_t *old);

/* Takes those of set still pending: one that came while the run stopped was the stop. */
void signals_drain(const sigset_t *set);

#endif
