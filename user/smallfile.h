/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The small text files of /proc, /sys and cgroupfs (a value, a few lines of statistics),
 * read whole into the caller's buffer: one read loop for every module that reads them.
 */
#ifndef CGTMA_SMALLFILE_H
#define CGTMA_SMALLFILE_H

#include <stddef.h>

/*
 * path's text into buf, NUL-terminated, cut to size - 1 bytes, without the whitespace that
 * ends it (the newline after a sysfs value): 0, or -errno of the open or a read.
 */
int smallfile_read(const char *path, char *buf, size_t size);

#endif
