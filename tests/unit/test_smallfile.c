// SPDX-License-Identifier: GPL-2.0
/*
 * smallfile_read(): a file's whole text, the whitespace that ends it dropped (and only that),
 * cut to the buffer; a /proc file longer than what one read(2) gives comes whole; a missing file is
 * -ENOENT and a directory -EISDIR.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "smallfile.h"
#include "test.h"

/* text into a temporary file, read back into a buffer of size bytes: buf, or the error. */
static const char *read_back(const char *text, size_t size)
{
	static char buf[8192], out[8192 + 32];
	char path[] = "/tmp/cgtma-smallfile.XXXXXX";
	int fd = mkstemp(path), err;

	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text)) {
		snprintf(out, sizeof(out), "cannot write %s: %s", path, strerror(errno));
		return out;
	}
	close(fd);
	err = smallfile_read(path, buf, size);
	unlink(path);
	if (err)
		snprintf(out, sizeof(out), "error %d", err);
	else
		snprintf(out, sizeof(out), "%s", buf);
	return out;
}

int main(void)
{
	static const struct {
		const char *text;
		size_t size;
		const char *want;
	} cases[] = {
		{ "0-3,8\n", 64, "0-3,8" },
		{ "42", 64, "42" },
		{ "", 64, "" },
		{ "\n \t\n", 64, "" },
		/* Lines inside stay: cpu.stat, cpu.pressure. */
		{ "some avg10=0.00 total=5\nfull avg10=0.00 total=3\n", 128,
		  "some avg10=0.00 total=5\nfull avg10=0.00 total=3" },
		{ "  leading kept\n", 64, "  leading kept" },
		/* Cut to size - 1 bytes, then trimmed. */
		{ "0123456789", 5, "0123" },
		{ "012 456789", 5, "012" },
		{ "x", 1, "" },
	};
	static char big[6000];
	char buf[16];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		CHECK_STR(read_back(cases[i].text, cases[i].size), cases[i].want);

	memset(big, 'a', sizeof(big) - 1);
	CHECK_INT(strlen(read_back(big, 8192)), sizeof(big) - 1);

	/*
	 * A seq_file of /proc gives at most a page per read(2): smaps, tens of kB, comes
	 * whole up to the buffer's end.
	 */
	CHECK_INT(smallfile_read("/proc/self/smaps", big, sizeof(big)), 0);
	CHECK(strlen(big) > 4096 + 1024, "/proc/self/smaps: %zu bytes of %zu", strlen(big),
	      sizeof(big) - 1);
	CHECK_INT(smallfile_read("/nonexistent/smallfile", buf, sizeof(buf)), -ENOENT);
	CHECK_INT(smallfile_read("/tmp", buf, sizeof(buf)), -EISDIR);
	return test_done("smallfile");
}
