// SPDX-License-Identifier: GPL-2.0
#include <signal.h>
#include <time.h>

#include "signals.h"

void signals_stop_set(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGINT);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGHUP);
	sigaddset(set, SIGCHLD);
}

void signals_block(sigset_t *old)
{
	sigset_t block;

	signals_stop_set(&block);
	sigprocmask(SIG_BLOCK, &block, old);
}

void signals_drain(const sigset_t *set)
{
	const struct timespec zero = {};

	while (sigtimedwait(set, NULL, &zero) > 0)
		;
}
