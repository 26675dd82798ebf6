// SPDX-License-Identifier: GPL-2.0
/*
 * Writes a --record file with samples (tests/unit/profile_fixture.h's, recorded twice)
 * through cgtma's own record writer, for `cgtma report FILE --pprof/--folded/--html` where
 * nothing can be sampled live (tests/tools/check-pprof.sh).
 *
 *   mkprofile OUT
 */
#include <stdio.h>

#include "output.h"
#include "record.h"
#include "../unit/profile_fixture.h"

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: mkprofile OUT\n");
		return 2;
	}
	if (profile_fixture_record(argv[1])) {
		fprintf(stderr, "mkprofile: cannot write '%s'\n", argv[1]);
		return 1;
	}
	return 0;
}
