// SPDX-License-Identifier: GPL-2.0
/*
 * Workloads with exactly known counts, for the live tests and benchmarks:
 *
 *   workload getppid N [PAUSE_MS]  N getppid() system calls (sys_enter_getppid fires N
 *                                  times), sleeping PAUSE_MS after every N/10 so the work
 *                                  spans several intervals and many context switches
 *   workload spin MS               burn one CPU for MS milliseconds of wall time
 *   workload cgexec DIR CMD...     move into cgroup DIR (its cgroup.procs), then exec CMD
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int do_getppid(long n, long pause_ms)
{
	long chunk = n >= 10 ? n / 10 : 1;

	for (long i = 0; i < n; i++) {
		/* The raw syscall: libc must not be allowed to cache or skip it. */
		syscall(SYS_getppid);
		if (pause_ms && (i + 1) % chunk == 0 && i + 1 < n)
			usleep(pause_ms * 1000);
	}
	return 0;
}

static int do_spin(long ms)
{
	double end = now() + ms / 1000.0;
	volatile unsigned long x = 0;

	while (now() < end)
		for (int i = 0; i < 10000; i++)
			x += i;
	return 0;
}

static int do_cgexec(const char *dir, char **cmd)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	f = fopen(path, "we");
	if (!f || fprintf(f, "%d\n", getpid()) < 0 || fclose(f)) {
		fprintf(stderr, "workload: cannot join %s: %s\n", dir, strerror(errno));
		return 1;
	}
	execvp(cmd[0], cmd);
	fprintf(stderr, "workload: cannot run %s: %s\n", cmd[0], strerror(errno));
	return 127;
}

int main(int argc, char **argv)
{
	if (argc >= 3 && !strcmp(argv[1], "getppid"))
		return do_getppid(atol(argv[2]), argc > 3 ? atol(argv[3]) : 0);
	if (argc == 3 && !strcmp(argv[1], "spin"))
		return do_spin(atol(argv[2]));
	if (argc >= 4 && !strcmp(argv[1], "cgexec"))
		return do_cgexec(argv[2], argv + 3);
	fprintf(stderr, "usage: workload getppid N [PAUSE_MS] | spin MS | cgexec DIR CMD...\n");
	return 2;
}
