/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CGTMA_VERSION_H
#define CGTMA_VERSION_H

#include <stdio.h>

/*
 * What --version prints: the release, the commit it was built from (CGTMA_VERSION and
 * CGTMA_COMMIT, from the generated build/version_data.h), the libbpf it runs with (asked of
 * libbpf at run time: a shared libbpf may be newer than the headers), LINKAGE ("static"
 * or "dynamic": only main() knows how it was linked), and the optional libraries built in
 * (feature.h).
 */
void version_print(FILE *f, const char *linkage);

#endif
