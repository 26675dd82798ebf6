// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for record files: arbitrary bytes as a file for `cgtma report`, with
 * every sink that reads the whole run (--json and --html) and the samples' (--folded and
 * --pprof, into a directory of /dev/shm made for them). Built with CGTMA_FUZZING, the
 * reader does not check checksums, so that what lies behind them gets explored. Nothing may
 * crash, leak or loop; damage must end in an error message, not in reading past the data.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "commands.h"
#include "log.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[] = "/dev/shm/cgtma-fuzz.XXXXXX", folded[64], pprof[64];

static void remove_outputs(void)
{
	unlink(folded);
	unlink(pprof);
	rmdir(dir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1;
	static char path[64];
	char *argv[] = { "report", path, "--json", "--html", "/dev/null", "--folded", folded,
			 "--pprof", pprof, NULL };

	if (fd < 0) {
		fd = memfd_create("record", 0);
		if (fd < 0 || !mkdtemp(dir))
			return 0;
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		snprintf(folded, sizeof(folded), "%s/out.folded", dir);
		snprintf(pprof, sizeof(pprof), "%s/out.pb.gz", dir);
		atexit(remove_outputs);
	}
	if (ftruncate(fd, 0) || pwrite(fd, data, size, 0) != (ssize_t)size)
		return 0;
	cmd_report(9, argv);
	log_set_json(false);
	return 0;
}
