// SPDX-License-Identifier: GPL-2.0
/*
 * CPU lists (-C, and sysfs's online file): single CPUs, ranges and their mix set exactly the
 * CPUs named; a sysfs line's newline is taken; malformed lists are -EINVAL (nothing to
 * guess: a trailing comma, a range backwards, a sign, spaces); a CPU past the machine's is
 * -ERANGE, naming the first CPU that does not exist.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cpulist.h"
#include "test.h"

#define NR 16

/* The list as a string of 0s and 1s, one per CPU, or the error. */
static const char *bits(const char *list, int nr)
{
	static char out[NR + 16];
	bool set[NR] = {};
	long beyond = -1;
	int err = cpulist_parse(list, set, nr, &beyond);

	if (err == -ERANGE)
		snprintf(out, sizeof(out), "ERANGE %ld", beyond);
	else if (err)
		snprintf(out, sizeof(out), "error %d", err);
	else
		for (int c = 0; c < nr; c++)
			out[c] = set[c] ? '1' : '0', out[c + 1] = '\0';
	return out;
}

int main(void)
{
	char path[] = "/tmp/test_cpulist.XXXXXX";
	bool set[NR] = {};
	FILE *f;
	int fd;

	CHECK_STR(bits("0", 8), "10000000");
	CHECK_STR(bits("7", 8), "00000001");
	CHECK_STR(bits("0-3,6", 8), "11110010");
	CHECK_STR(bits("1,1-2,5-5", 8), "01100100");
	CHECK_STR(bits("0-7\n", 8), "11111111");
	CHECK_STR(bits("8", 8), "ERANGE 8");
	CHECK_STR(bits("2,12", 8), "ERANGE 12");
	CHECK_STR(bits("6-9", 8), "ERANGE 8");	/* 8 is the first that does not exist */
	CHECK_STR(bits("", 8), "error -22");
	CHECK_STR(bits("1,", 8), "error -22");
	CHECK_STR(bits(",1", 8), "error -22");
	CHECK_STR(bits("3-1", 8), "error -22");
	CHECK_STR(bits("-1", 8), "error -22");
	CHECK_STR(bits("1-", 8), "error -22");
	CHECK_STR(bits("1 ,2", 8), "error -22");
	CHECK_STR(bits("a", 8), "error -22");
	CHECK_STR(bits("0x1", 8), "error -22");
	CHECK_STR(bits("99999999999999999999", 8), "error -22");

	fd = mkstemp(path);
	CHECK(fd >= 0, "mkstemp: %s", strerror(errno));
	if (fd >= 0) {
		f = fdopen(fd, "w");
		fputs("0-2,9\n", f);
		fclose(f);
		CHECK_INT(cpulist_read(path, set, NR), 0);
		CHECK(set[0] && set[1] && set[2] && !set[3] && set[9] && !set[10],
		      "0-2,9 read from a file");
		f = fopen(path, "w");
		fputs("garbage\n", f);
		fclose(f);
		CHECK_INT(cpulist_read(path, set, NR), -EIO);
		unlink(path);
	}
	CHECK_INT(cpulist_read("/nonexistent/online", set, NR), -ENOENT);
	return test_done("cpulist");
}
