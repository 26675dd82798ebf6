// SPDX-License-Identifier: GPL-2.0
/*
 * Workloads with exactly known counts, for the live tests and benchmarks:
 *
 *   workload getppid N [PAUSE_MS]  N getppid() system calls (sys_enter_getppid fires N
 *                                  times), sleeping PAUSE_MS after every N/10 so the work
 *                                  spans several intervals and many context switches
 *   workload getppid-until-term    getppid() calls until SIGTERM, then prints how many: a
 *                                  task that runs as long as a test needs, counted exactly
 *   workload spin MS               burn one CPU for MS milliseconds of wall time
 *   workload loop N                N turns of a two-instruction loop in user space: 2 N
 *                                  instructions retired, plus the process's fixed start
 *                                  and exit (the hardware-counter oracle of 35-hw-counters)
 *   workload cgexec DIR CMD...     move into cgroup DIR (its cgroup.procs), then exec CMD;
 *                                  what runs in DIR before CMD does not depend on the pid
 *   workload gate FIFO CMD...      wait for a writer of the named pipe FIFO, then exec CMD
 *                                  (an absolute path): started in its cgroup before a
 *                                  measurement, released during it, it retires the same
 *                                  instructions there every time
 *   workload tour N DIR...         move into each cgroup DIR in turn and make N getppid()
 *                                  calls in each: many cgroups charged on one CPU at once
 *   workload threads PAUSE_MS N... one thread per N, named getppid-I (I from 1), each making
 *                                  N getppid() calls as above; prints "TID N" per thread
 *                                  once all have started, and again nothing: the main
 *                                  thread makes none
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
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

static volatile sig_atomic_t stop;

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

/*
 * The count follows every call: a SIGTERM that arrives between a call's entry (counted by
 * the kernel) and the increment is seen only after the increment.
 */
static int do_getppid_until_term(void)
{
	struct sigaction sa = { .sa_handler = on_term };
	unsigned long n = 0;

	if (sigaction(SIGTERM, &sa, NULL))
		return 1;
	while (!stop) {
		syscall(SYS_getppid);
		n++;
	}
	printf("%lu\n", n);
	return fflush(stdout) ? 1 : 0;
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

/*
 * In assembly, so that a turn is two instructions (a decrement that sets the flags, a
 * branch back) whatever the compiler does.
 */
static int do_loop(unsigned long n)
{
	if (n == 0)
		return 0;
#if defined(__aarch64__)
	__asm__ volatile("1: subs %0, %0, #1\n\tb.ne 1b" : "+r"(n) : : "cc");
#elif defined(__x86_64__)
	__asm__ volatile("1: dec %0\n\tjnz 1b" : "+r"(n) : : "cc");
#else
#error "workload loop: no two-instruction loop written for this architecture"
#endif
	return 0;
}

/*
 * "0" moves the writer itself: the instructions after the write do not depend on the pid's
 * digits, so a command exec'd in two cgroups retires the same count in each.
 *
 * Just before the write, the thread's CPU clock is read (a system call, never the vDSO):
 * the kernel then brings this task's runtime up to date, charging it to the cgroup it still
 * is in. cpu.stat charges runtime lazily, at the next scheduler update, to the cgroup the
 * task is in by then: without the read, what ran since the last one (the exec, this
 * program's start, some 0.6 ms here) would land in DIR's cpu.stat, though it ran outside
 * DIR, and cgtma, which charges it where it ran, would seem short by that much.
 */
static int join(const char *dir)
{
	char path[4096];
	struct timespec ts;
	ssize_t n;
	int fd, err;

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0) {
		err = errno;
	} else {
		syscall(SYS_clock_gettime, CLOCK_THREAD_CPUTIME_ID, &ts);
		n = write(fd, "0\n", 2);
		err = n == 2 ? 0 : n < 0 ? errno : EIO;
		close(fd);
	}
	if (!err)
		return 0;
	fprintf(stderr, "workload: cannot join %s: %s\n", dir, strerror(err));
	return 1;
}

static int do_cgexec(const char *dir, char **cmd)
{
	if (join(dir))
		return 1;
	execvp(cmd[0], cmd);
	fprintf(stderr, "workload: cannot run %s: %s\n", cmd[0], strerror(errno));
	return 127;
}

struct caller {
	long n, pause_ms;
	int index;
	pid_t tid;
	pthread_barrier_t *ready;
};

static void *caller_main(void *arg)
{
	struct caller *c = arg;
	char name[16];

	snprintf(name, sizeof(name), "getppid-%d", c->index);
	pthread_setname_np(pthread_self(), name);
	c->tid = (pid_t)syscall(SYS_gettid);
	pthread_barrier_wait(c->ready);
	pthread_barrier_wait(c->ready);	/* the main thread has printed the tids */
	do_getppid(c->n, c->pause_ms);
	return NULL;
}

static int do_threads(long pause_ms, int nr, char **counts)
{
	struct caller *c = calloc(nr, sizeof(*c));
	pthread_t *th = calloc(nr, sizeof(*th));
	pthread_barrier_t ready;

	if (!c || !th || pthread_barrier_init(&ready, NULL, nr + 1))
		return 1;
	for (int i = 0; i < nr; i++) {
		c[i] = (struct caller){ .n = atol(counts[i]), .pause_ms = pause_ms, .index = i + 1,
					.ready = &ready };
		if (pthread_create(&th[i], NULL, caller_main, &c[i])) {
			fprintf(stderr, "workload: cannot start a thread\n");
			return 1;
		}
	}
	pthread_barrier_wait(&ready);
	for (int i = 0; i < nr; i++)
		printf("%d %ld\n", c[i].tid, c[i].n);
	fflush(stdout);
	pthread_barrier_wait(&ready);
	for (int i = 0; i < nr; i++)
		pthread_join(th[i], NULL);
	return 0;
}

static int do_gate(const char *fifo, char **cmd)
{
	int fd = open(fifo, O_RDONLY | O_CLOEXEC);
	char c;

	if (fd < 0 || read(fd, &c, 1) < 0) {
		fprintf(stderr, "workload: cannot wait on %s: %s\n", fifo, strerror(errno));
		return 1;
	}
	close(fd);
	execv(cmd[0], cmd);
	fprintf(stderr, "workload: cannot run %s: %s\n", cmd[0], strerror(errno));
	return 127;
}

int main(int argc, char **argv)
{
	if (argc >= 4 && !strcmp(argv[1], "threads"))
		return do_threads(atol(argv[2]), argc - 3, argv + 3);
	if (argc >= 3 && !strcmp(argv[1], "getppid"))
		return do_getppid(atol(argv[2]), argc > 3 ? atol(argv[3]) : 0);
	if (argc == 2 && !strcmp(argv[1], "getppid-until-term"))
		return do_getppid_until_term();
	if (argc == 3 && !strcmp(argv[1], "spin"))
		return do_spin(atol(argv[2]));
	if (argc == 3 && !strcmp(argv[1], "loop"))
		return do_loop(strtoul(argv[2], NULL, 10));
	if (argc >= 4 && !strcmp(argv[1], "cgexec"))
		return do_cgexec(argv[2], argv + 3);
	if (argc >= 4 && !strcmp(argv[1], "gate"))
		return do_gate(argv[2], argv + 3);
	if (argc >= 4 && !strcmp(argv[1], "tour")) {
		for (int i = 3; i < argc; i++) {
			if (join(argv[i]))
				return 1;
			do_getppid(atol(argv[2]), 0);
		}
		return 0;
	}
	fprintf(stderr, "usage: workload getppid N [PAUSE_MS] | getppid-until-term | spin MS | "
		"loop N | cgexec DIR CMD... | gate FIFO CMD... | threads PAUSE_MS N... | "
		"tour N DIR...\n");
	return 2;
}
