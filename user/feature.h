/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The optional libraries, as the Makefile found them when it built cgtma (cgtma_features.h):
 * a build without one has none of what needs it, and says so when asked for it.
 *
 *   libdw          --sample (names the sampled frames: symbolize.h)
 *   libmicrohttpd  --prometheus (serves /metrics: output_prometheus.c)
 */
#ifndef CGTMA_FEATURE_H
#define CGTMA_FEATURE_H

#include <stdbool.h>
#include <stdio.h>

#include "cgtma_features.h"

enum feature {
	FEATURE_LIBDW,
	FEATURE_LIBMICROHTTPD,
	FEATURE_NR,
};

/*
 * 0 when f is built in; else says that this build lacks what needs it, naming the option
 * and the library missing when it was built, and returns -EOPNOTSUPP.
 */
int feature_require(enum feature f);

/* Each library, '+' before it when built in, '-' when not: "+libdw -libmicrohttpd". */
void features_print(FILE *f);

#endif
