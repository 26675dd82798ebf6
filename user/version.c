// SPDX-License-Identifier: GPL-2.0
#include <bpf/libbpf.h>

#include "feature.h"
#include "version.h"
#include "version_data.h"

void version_print(FILE *f, const char *linkage)
{
	fprintf(f, "cgtma %s\ncommit: %s\nlibbpf: %u.%u\nbuild: %s\nfeatures: ", CGTMA_VERSION,
		CGTMA_COMMIT, libbpf_major_version(), libbpf_minor_version(), linkage);
	features_print(f);
	fputc('\n', f);
}
