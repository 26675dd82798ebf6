// SPDX-License-Identifier: GPL-2.0
/* --folded and --pprof files (stackfiles.h). */
#include <errno.h>
#include <string.h>

#include "atomicfile.h"
#include "log.h"
#include "pprof.h"
#include "stackfiles.h"

int stackfiles_check(const char *folded, const char *pprof)
{
	const char *paths[] = { folded, pprof };

	for (int i = 0; i < 2; i++) {
		int err = paths[i] ? atomic_check(paths[i]) : 0;

		if (err) {
			pr_err("cannot write '%s': %s", paths[i], strerror(-err));
			return err == -EINVAL ? -EIO : err;
		}
	}
	return 0;
}

static int write_folded(FILE *f, void *arg)
{
	const struct profile *p = arg;

	return p->nr_types ? profile_write_folded(p, 0, f) : 0;
}

int stackfiles_write(const struct profile *p, const char *folded, const char *pprof)
{
	int err = 0;

	if (folded) {
		err = atomic_write_file(folded, write_folded, (void *)p);
		if (err)
			pr_err("cannot write '%s': %s", folded, strerror(-err));
	}
	if (!err && pprof) {
		err = pprof_write_file(p, pprof);
		if (err)
			pr_err("cannot write '%s': %s", pprof, strerror(-err));
	}
	return err;
}
