/* SPDX-License-Identifier: GPL-2.0 */
/*
 * cgtma's exit status (cgtma(8), EXIT STATUS): 0 success, 1 failure, 2 bad usage, 3 (or
 * --no-match-status) a selector that never matched. Internal
 * functions return 0 or -errno, having printed what went wrong; each command's entry point
 * turns that into its status here, and nowhere else.
 */
#ifndef CGTMA_EXITSTATUS_H
#define CGTMA_EXITSTATUS_H

#include <errno.h>
#include <stdlib.h>

#define EXIT_USAGE 2
/*
 * A run that went well but where a -G selector (or --all-containers) matched nothing from
 * start to end: what was asked for was not measured. --no-match-status sets another.
 */
#define EXIT_NO_MATCH 3

/*
 * -EINVAL means "what the user gave is wrong" (an option, a selector, an event, a model, an
 * input file's content), so functions that check input return it and nothing else does:
 * where an -EINVAL comes from the kernel or from cgtma's own data, the function that got it
 * passes on another errno (-EIO), so that it reads as the failure it is.
 */
static inline int exit_status(int err)
{
	if (!err)
		return EXIT_SUCCESS;
	return err == -EINVAL ? EXIT_USAGE : EXIT_FAILURE;
}

/* err, from the kernel or cgtma's own data, as a failure: -EINVAL becomes -EIO. */
static inline int not_usage(int err)
{
	return err == -EINVAL ? -EIO : err;
}

#endif
