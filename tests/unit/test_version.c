// SPDX-License-Identifier: GPL-2.0
/*
 * --version's lines, as scripts read them: "cgtma X.Y.Z", "commit: DESCRIBE", "libbpf: M.N"
 * (the libbpf this process runs with, not the headers'), "build: static|dynamic", and
 * "features: " with each optional library '+' or '-' as this build has it.
 */
#include <bpf/libbpf.h>
#include <regex.h>
#include <stdlib.h>

#include "cgtma_features.h"
#include "test.h"
#include "version.h"
#include "version_data.h"

static char *printed(const char *linkage)
{
	static char buf[512];
	FILE *f = tmpfile();
	size_t n = 0;

	if (!f)
		return NULL;
	version_print(f, linkage);
	rewind(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = 0;
	fclose(f);
	return buf;
}

static int matches(const char *s, const char *re)
{
	regex_t r;
	int ok;

	if (regcomp(&r, re, REG_EXTENDED | REG_NOSUB))
		return 0;
	ok = regexec(&r, s, 0, NULL, 0) == 0;
	regfree(&r);
	return ok;
}

int main(void)
{
	char want[512];
	const char *got;

	/* A release number of three parts, a commit git describe (or VERSION) could give. */
	CHECK(matches(CGTMA_VERSION, "^[0-9]+\\.[0-9]+\\.[0-9]+$"), "CGTMA_VERSION '%s'",
	      CGTMA_VERSION);
	CHECK(matches(CGTMA_COMMIT, "^[A-Za-z0-9._+-]+$"), "CGTMA_COMMIT '%s'", CGTMA_COMMIT);

	snprintf(want, sizeof(want),
		 "cgtma %s\ncommit: %s\nlibbpf: %u.%u\nbuild: static\nfeatures: %clibdw "
		 "%clibmicrohttpd\n", CGTMA_VERSION, CGTMA_COMMIT, libbpf_major_version(),
		 libbpf_minor_version(), CGTMA_HAVE_LIBDW ? '+' : '-',
		 CGTMA_HAVE_LIBMICROHTTPD ? '+' : '-');
	got = printed("static");
	CHECK_STR(got, want);
	/* libbpf 1.x is what the build needs; 0.0 would mean the call reached no library. */
	CHECK(got && matches(got, "\nlibbpf: [1-9][0-9]*\\.[0-9]+\n"), "%s", got);
	got = printed("dynamic");
	CHECK(got && matches(got, "\nbuild: dynamic\nfeatures: [-+]libdw [-+]libmicrohttpd\n$"),
	      "%s", got);
	return test_done("version");
}
