/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --folded and --pprof: the files of sampled stacks, for a live run and for `report`. Each is
 * checked before the work that fills it (a bad path fails at once, not after the run), and
 * written whole or not at all at the end (atomicfile.h). Both say what failed, naming the file.
 */
#ifndef CGTMA_STACKFILES_H
#define CGTMA_STACKFILES_H

#include <stdbool.h>

#include "profile.h"

/* Whether folded and pprof (either may be NULL) can be written: 0, or -errno (said). */
int stackfiles_check(const char *folded, const char *pprof);

/*
 * Writes p's stacks: folded, those of its first sampled event (the format has no place to
 * say which event a line counts), with folded_pid each thread's COMM-PID frame after the
 * cgroup's (--folded-pid); pprof, every event. 0, or the first -errno (said).
 */
int stackfiles_write(const struct profile *p, const char *folded, bool folded_pid,
		     const char *pprof);

#endif
