/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --pprof FILE: a profile (profile.h) as a gzipped pprof profile (github.com/google/pprof,
 * proto/profile.proto), which `go tool pprof`, Pyroscope, Parca and Grafana read:
 *
 *   - one sample type per profile type: the event's name (with "/period=N/" where two types
 *     share a name), unit "count"; the first is the default one;
 *   - a sample per (scope, stack), labelled "cgroup" (its path), and "container" and "pod"
 *     where known; its locations leaf first;
 *   - mappings with their file names and build IDs (has_functions where every frame in it
 *     was resolved, so that a consumer with the binaries symbolizes the others);
 *   - a function per (name, source file), and each resolved location's line;
 *   - time_nanos and duration_nanos from the profile's start and duration.
 */
#ifndef CGTMA_PPROF_H
#define CGTMA_PPROF_H

#include <stdio.h>

#include "profile.h"
#include "strbuf.h"

/* The profile's protobuf encoding (not compressed) appended to b: 0 or -ENOMEM. */
int pprof_encode(const struct profile *p, struct strbuf *b);

/* The gzipped encoding written to f: 0, -ENOMEM, or the write's -errno. */
int pprof_write(const struct profile *p, FILE *f);

/* The same into path, whole or not at all (atomicfile.h): 0 or -errno. */
int pprof_write_file(const struct profile *p, const char *path);

#endif
