// SPDX-License-Identifier: GPL-2.0
#include <errno.h>

#include "feature.h"
#include "log.h"

static const struct {
	const char *library;
	bool built_in;
	const char *option;
	const char *lacks;	/* what a build without the library cannot do */
} features[FEATURE_NR] = {
	[FEATURE_LIBDW] = { "libdw", CGTMA_HAVE_LIBDW, "--sample",
			    "cannot sample call stacks: libdw, which names their frames" },
	[FEATURE_LIBMICROHTTPD] = { "libmicrohttpd", CGTMA_HAVE_LIBMICROHTTPD, "--prometheus",
				    "has no Prometheus endpoint: libmicrohttpd, which serves it" },
};

int feature_require(enum feature f)
{
	if (features[f].built_in)
		return 0;
	pr_err("%s: this build %s, was missing when cgtma was built (cgtma --version lists "
	       "what a build has)", features[f].option, features[f].lacks);
	return -EOPNOTSUPP;
}

void features_print(FILE *f)
{
	for (int i = 0; i < FEATURE_NR; i++)
		fprintf(f, "%s%c%s", i ? " " : "", features[i].built_in ? '+' : '-',
			features[i].library);
}
