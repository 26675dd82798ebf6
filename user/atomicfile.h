/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Files written whole or not at all (report's --folded and --pprof): the text goes into a
 * temporary file beside PATH, is synced, and is renamed over PATH. A full disk, an error or
 * a kill midway leaves PATH as it was (a kill may leave the temporary "PATH.XXXXXX").
 * Through a symbolic link, the file it names is replaced and the link stays; what is no
 * regular file (/dev/stdout, a FIFO) is written in place, never replaced.
 */
#ifndef CGTMA_ATOMICFILE_H
#define CGTMA_ATOMICFILE_H

#include <stdio.h>

/*
 * Calls write(f, arg) on the temporary file, then replaces path with it. Returns 0, or the
 * -errno of write (its return), of creating, flushing or syncing the file, or of the rename;
 * nothing is left behind then.
 */
int atomic_write_file(const char *path, int (*write)(FILE *f, void *arg), void *arg);

/*
 * Whether path could be written so, before the work that fills it: a temporary file is
 * created beside it and removed. 0, or -errno (-EISDIR when path is a directory).
 */
int atomic_check(const char *path);

#endif
