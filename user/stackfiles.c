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

struct folded_arg {
	const struct profile *p;
	bool with_task;
};

static int write_folded(FILE *f, void *arg)
{
	const struct folded_arg *a = arg;

	return a->p->nr_types ? profile_write_folded(a->p, 0, a->with_task, f) : 0;
}

int stackfiles_write(const struct profile *p, const char *folded, bool folded_pid,
		     const char *pprof)
{
	struct folded_arg a = { .p = p, .with_task = folded_pid };
	int err = 0;

	if (folded) {
		err = atomic_write_file(folded, write_folded, &a);
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
