/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Names of sampled addresses, as frames of a profile (profile.h).
 *
 * User frames: a process's memory map, read while it lives (symbolizer_note_pid() at its
 * first sample, so that one that exits before the interval is read still resolves), each
 * mapped file opened through /proc/PID/map_files (or /proc/PID/root, where a container's
 * binaries are), its symbols (and DWARF, for lines) read with elfutils' libdwfl once per
 * build ID.
 * JIT code from /tmp/perf-PID.map in the process's root (PID as its own namespace numbers
 * it). Kernel frames through ksyms.h: named by the kernel where a namer is set, else from
 * /proc/kallsyms, read at the first one to name. An address without a symbol keeps its
 * mapping, which profile_frame_name() shows as module+offset.
 *
 *   struct symbolizer *sym;
 *   symbolizer_new(&sym, lines);
 *   symbolizer_note_pid(sym, pid);			// any thread, as soon as pid is seen
 *   loc = symbolizer_user(sym, &profile, pid, ip);	// the reading thread
 *   n = symbolizer_kernel(sym, &profile, ips, n, locs);	// the reading thread alone
 *   symbolizer_after_read(sym);			// forgets processes gone for a while
 *   symbolizer_free(sym);
 *
 * Thread-safe: one thread may note pids while another resolves.
 */
#ifndef CGTMA_SYMBOLIZE_H
#define CGTMA_SYMBOLIZE_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#include "feature.h"
#include "ksyms.h"

struct profile;
struct symbolizer;

#if CGTMA_HAVE_LIBDW

/*
 * 0, or -ENOMEM (*sp is then to be freed). With lines, user frames get their source file and
 * line too, from DWARF (only --pprof and --record carry them: reading a module's DWARF, often
 * a large compressed debug file, costs far more than its symbols).
 */
int symbolizer_new(struct symbolizer **sp, bool lines);
void symbolizer_free(struct symbolizer *s);

/*
 * Reads pid's memory map and opens its files now (again, for a pid known: after an exec),
 * before waiting for the naming under way in another thread: 0; -ESRCH when it is gone and
 * was not known (a known one keeps its last map); -ENOMEM. A map is also read again when an
 * address is not in it, once per interval.
 */
int symbolizer_note_pid(struct symbolizer *s, int pid);

/*
 * The location (an index into p->locs) of ip in process pid: >= 0, or -ENOMEM. Never fails
 * for want of a name: such a frame has its mapping, or none.
 */
int symbolizer_user(struct symbolizer *s, struct profile *p, int pid, uint64_t ip);

/*
 * The locations of the kernel addresses ips[0..n) into locs[]: n, or -ENOMEM. Each has the
 * kernel's mapping, and its function where one holds it. Called by one thread only.
 */
int symbolizer_kernel(struct symbolizer *s, struct profile *p, const uint64_t *ips, int n,
		      int *locs);

/* Kernel addresses named by fn (ksyms.h) from now on, not from /proc/kallsyms. */
void symbolizer_set_kernel_namer(struct symbolizer *s, ksyms_namer_fn fn, void *ctx);

/*
 * After an interval's samples are resolved: a process found gone at two calls in a row is
 * forgotten (the second gives its last samples, still in the kernel's other half, their turn).
 */
void symbolizer_after_read(struct symbolizer *s);

/* Distinct files opened so far (one per build ID), for -v and tests. */
int symbolizer_nr_modules(const struct symbolizer *s);

/*
 * Kernel symbols known, for -v and tests: 0 until the first kernel frame is named; then
 * those named so far by the kernel (*by_kernel true; by_kernel may be NULL), or those read
 * from /proc/kallsyms.
 */
int symbolizer_nr_kernel_symbols(const struct symbolizer *s, bool *by_kernel);

#else
/*
 * A build without libdw has no symbolize.c: no symbolizer is made (-EOPNOTSUPP, said), and
 * the calls that take one have none to work on.
 */
static inline int symbolizer_new(struct symbolizer **sp, bool lines)
{
	*sp = NULL;
	return feature_require(FEATURE_LIBDW);
}

static inline void symbolizer_free(struct symbolizer *s)
{
}

static inline int symbolizer_note_pid(struct symbolizer *s, int pid)
{
	return -EOPNOTSUPP;
}

static inline int symbolizer_user(struct symbolizer *s, struct profile *p, int pid, uint64_t ip)
{
	return -EOPNOTSUPP;
}

static inline int symbolizer_kernel(struct symbolizer *s, struct profile *p,
				    const uint64_t *ips, int n, int *locs)
{
	return -EOPNOTSUPP;
}

static inline void symbolizer_set_kernel_namer(struct symbolizer *s, ksyms_namer_fn fn,
					       void *ctx)
{
}

static inline void symbolizer_after_read(struct symbolizer *s)
{
}

static inline int symbolizer_nr_kernel_symbols(const struct symbolizer *s, bool *by_kernel)
{
	return 0;
}
#endif

#endif
