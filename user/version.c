// SPDX-License-Identifier: GPL-2.0
#include <bpf/libbpf.h>

#include "version.h"
#include "version_data.h"

void version_print(FILE *f, const char *linkage)
{
	fprintf(f, "cgtma %s\ncommit: %s\nlibbpf: %u.%u\nbuild: %s\n", CGTMA_VERSION, CGTMA_COMMIT,
		libbpf_major_version(), libbpf_minor_version(), linkage);
}
