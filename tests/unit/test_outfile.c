// SPDX-License-Identifier: GPL-2.0
/*
 * A file that fills up, is freed, and fills up again (outfile.h): each episode is said when
 * it starts and when it ends (OUTFILE_RESUMED records in a row: one record that slips in
 * does not end it), with the records it lost; the file holds whole records only; the lost
 * count is the sum. A full disk is played by RLIMIT_FSIZE (with SIGXFSZ ignored a
 * write past it fails with EFBIG, as one on a full disk fails with ENOSPC).
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#include "capture.h"
#include "outfile.h"
#include "test.h"

#define REC "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcde\n"	/* 64 */

static int count(const char *hay, const char *needle)
{
	int n = 0;

	for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
		n++;
	return n;
}

/* Appends n records; how many went in. */
static int append(struct outfile *of, int n)
{
	int ok = 0;

	for (int i = 0; i < n; i++)
		ok += outfile_append(of, REC, strlen(REC)) == 0;
	return ok;
}

/* The file may grow to limit bytes from now on. */
static void set_limit(rlim_t limit)
{
	struct rlimit rl;

	CHECK_INT(getrlimit(RLIMIT_FSIZE, &rl), 0);
	rl.rlim_cur = limit;
	CHECK_INT(setrlimit(RLIMIT_FSIZE, &rl), 0);
}

int main(void)
{
	char path[] = "/tmp/cgtma-test-outfile.XXXXXX", *said;
	int fd = mkstemp(path);
	struct capture cap;
	struct outfile of;
	struct rlimit saved;

	CHECK(fd >= 0, "mkstemp");
	if (fd < 0)
		return test_done("outfile");
	signal(SIGXFSZ, SIG_IGN);
	getrlimit(RLIMIT_FSIZE, &saved);
	outfile_init(&of, fd, "'out'", "what was written stays");
	CHECK_INT(capture_begin(&cap, 2), 0);

	/*
	 * 10 records fit; 4 more are lost; room again: OUTFILE_RESUMED go in (said); full
	 * again: 6 lost; room for one (fewer than OUTFILE_RESUMED): the episode goes on; full: 2
	 * lost; room: OUTFILE_RESUMED go in (said, 8 lost).
	 */
	set_limit(10 * 64 + 30);
	CHECK_INT(append(&of, 14), 10);
	set_limit((10 + OUTFILE_RESUMED) * 64 + 30);
	CHECK_INT(append(&of, OUTFILE_RESUMED), OUTFILE_RESUMED);
	CHECK_INT(append(&of, 6), 0);
	set_limit((11 + OUTFILE_RESUMED) * 64 + 30);
	CHECK_INT(append(&of, 3), 1);
	set_limit(saved.rlim_cur);
	CHECK_INT(append(&of, OUTFILE_RESUMED), OUTFILE_RESUMED);

	said = capture_end(&cap);
	CHECK_INT(of.lost, 12);
	CHECK_INT(lseek(fd, 0, SEEK_END), (11 + 2 * OUTFILE_RESUMED) * 64);
	CHECK_INT(count(said, "cgtma: cannot write 'out': File too large; profiling goes on, "
			      "what was written stays, and the next intervals are tried again\n"), 1);
	CHECK_INT(count(said, "cgtma: cannot write 'out' again: File too large;"), 1);
	CHECK_INT(count(said, "cgtma: 'out' is written again (4 interval(s) could not be)\n"), 1);
	CHECK_INT(count(said, "cgtma: 'out' is written again (8 interval(s) could not be)\n"), 1);
	CHECK_INT(count(said, "\n"), 4);
	free(said);

	/* A file that keeps failing and recovering says OUTFILE_EPISODES_SAID episodes. */
	CHECK_INT(capture_begin(&cap, 2), 0);
	for (int i = 0; i < OUTFILE_EPISODES_SAID + 3; i++) {
		set_limit(lseek(fd, 0, SEEK_END) + 30);
		append(&of, 1);
		set_limit(saved.rlim_cur);
		append(&of, OUTFILE_RESUMED);
	}
	said = capture_end(&cap);
	/* Two of those episodes were said above. */
	CHECK_INT(count(said, "cannot write 'out' again"), OUTFILE_EPISODES_SAID - 2);
	CHECK_INT(count(said, "(its next failures are not said)"), 1);
	CHECK_INT(count(said, "is written again (1 interval(s) could not be)"),
		  OUTFILE_EPISODES_SAID - 2);
	CHECK_INT(of.lost, 12 + OUTFILE_EPISODES_SAID + 3);
	free(said);

	close(fd);
	unlink(path);
	return test_done("outfile");
}
