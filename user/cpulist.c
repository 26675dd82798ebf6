// SPDX-License-Identifier: GPL-2.0
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>

#include "cpulist.h"
#include "smallfile.h"

/* A CPU number at *p, without sign or spaces: 0 and *out, *p moved past it; or -EINVAL. */
static int cpu_number(const char **p, long *out)
{
	char *end;

	if (!isdigit((unsigned char)**p))
		return -EINVAL;
	errno = 0;
	*out = strtol(*p, &end, 10);
	if (errno || *out > 1L << 30)
		return -EINVAL;
	*p = end;
	return 0;
}

int cpulist_parse(const char *s, bool *set, int nr, long *beyond)
{
	const char *p = s;
	bool out_of_range = false;

	for (;;) {
		long lo, hi;

		if (cpu_number(&p, &lo))
			return -EINVAL;
		hi = lo;
		if (*p == '-') {
			p++;
			if (cpu_number(&p, &hi) || hi < lo)
				return -EINVAL;
		}
		if (hi >= nr && !out_of_range) {
			out_of_range = true;
			if (beyond)
				*beyond = lo >= nr ? lo : nr;
		}
		for (long c = lo; c <= hi && c < nr; c++)
			set[c] = true;
		if (*p != ',')
			break;
		p++;
	}
	if (*p == '\n')
		p++;
	if (*p)
		return -EINVAL;
	return out_of_range ? -ERANGE : 0;
}

int cpulist_read(const char *path, bool *set, int nr)
{
	char buf[4096];
	int err = smallfile_read(path, buf, sizeof(buf));

	if (!err && cpulist_parse(buf, set, nr, NULL) == -EINVAL)
		err = -EIO;
	return err;
}
