/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Whether this build's libpfm4 has a PMU's table, for the checks that encode a model's
 * libpfm4 names: Debian's libpfm4 for arm64 has the Arm tables only, and there the x86
 * models' checks are skipped (SKIP), the others run.
 */
#ifndef CGTMA_TEST_PFMTABLE_H
#define CGTMA_TEST_PFMTABLE_H

#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "model.h"
#include "pfm_encode.h"
#include "test.h"

/*
 * Asked in a child forced to that table: libpfm4 initializes once per process, reading
 * LIBPFM_FORCE_PMU then, and the caller (or its children) has yet to force its own. The
 * tables the models name are x86's: a libpfm4 for x86 without one fails the check.
 */
static inline bool pfm_table_built_in(const char *pmu)
{
	int status = -1;
	bool yes;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		setenv("LIBPFM_FORCE_PMU", pmu, 1);
		_exit(pfm_has_pmu(pmu) ? 0 : 1);
	}
	CHECK(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status),
	      "cannot ask libpfm4 for '%s' in a child", pmu);
	yes = pid > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
#ifdef __x86_64__
	CHECK(yes, "libpfm4 for x86 without its '%s' table", pmu);
#endif
	return yes;
}

/*
 * Whether the built-in model's libpfm4 names (if it has any) can be encoded here: else a SKIP
 * says why, and the caller skips the checks that encode them.
 */
static inline bool model_encodes_here(const char *name)
{
	struct model *m;
	const char *pmu;
	bool yes;

	if (model_load_builtin(name, &m))
		return true;	/* the caller's own checks say it does not load */
	pmu = model_libpfm4_pmu(m);
	yes = !pmu || pfm_table_built_in(pmu);
	if (!yes)
		SKIP("model %s: this libpfm4 has no '%s' table to encode its events with", name,
		     pmu);
	model_free(m);
	return yes;
}

#endif
