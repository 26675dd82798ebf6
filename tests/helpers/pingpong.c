// SPDX-License-Identifier: GPL-2.0
/*
 * Two processes passing one byte back and forth over two pipes, both pinned to one CPU, so
 * that every round trip is exactly two context switches between them (perf bench sched
 * pipe, but with each side placed in cgroups of its own choosing: perf 6.1's has no -G).
 *
 *   pingpong [-c CPU|any] [-n LOOPS] [-w WARMUP] [-A DIR[,DIR...]] [-B DIR[,DIR...]] [-s]
 *            [-p ID]
 *
 *   -c CPU    the CPU both run on (default 0); any: no pinning, the scheduler places them on
 *             any CPU they may use, from one pass to the next
 *   -n LOOPS  timed round trips (default 200000); -w: untimed ones before (default LOOPS/10)
 *   -A, -B    cgroup directories the first and second process join (writing their pid into
 *             each one's cgroup.procs): a v2 cgroup and, on hybrid systems, a v1 one
 *   -s        hold the kernel's BPF run-time statistics on while timing (BPF_ENABLE_STATS)
 *   -p ID     report the run_cnt and run_time_ns that BPF program ID gained while timing
 *
 * Prints one line of key=value pairs: loops, seconds, ops_per_s, usec_per_op (wall time; an op
 * is one round trip), cpu_usec_per_op (CPU time of both processes: on a busy machine, time
 * the CPU gave to others is left out, while the switches between the two, hooks included,
 * are in) and, with -p, run_cnt and run_time_ns. Exit status 0, 1 on failure, 2 on bad usage.
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/bpf.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* CPU time of this process and of the other one, in seconds. */
static int cpu_time(clockid_t other, double *t)
{
	struct timespec a, b;

	if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a) || clock_gettime(other, &b))
		return -errno;
	*t = a.tv_sec + a.tv_nsec / 1e9 + b.tv_sec + b.tv_nsec / 1e9;
	return 0;
}

static long sys_bpf(int cmd, union bpf_attr *attr)
{
	return syscall(__NR_bpf, cmd, attr, sizeof(*attr));
}

/* Joins every directory of a comma-separated list; 0 or -errno. */
static int join_cgroups(const char *list)
{
	char *copy, *dir, *save = NULL;
	int err = 0;

	if (!list)
		return 0;
	copy = strdup(list);
	if (!copy)
		return -ENOMEM;
	for (dir = strtok_r(copy, ",", &save); dir && !err; dir = strtok_r(NULL, ",", &save)) {
		char path[4096];
		FILE *f;

		snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
		f = fopen(path, "we");
		if (!f || fprintf(f, "%d\n", getpid()) < 0 || fclose(f)) {
			err = -errno;
			fprintf(stderr, "pingpong: cannot join cgroup '%s': %s\n", dir,
				strerror(errno));
		}
	}
	free(copy);
	return err;
}

static int prog_stats(int prog_fd, __u64 *cnt, __u64 *ns)
{
	struct bpf_prog_info info = {};
	union bpf_attr attr = {};

	attr.info.bpf_fd = prog_fd;
	attr.info.info_len = sizeof(info);
	attr.info.info = (__u64)(unsigned long)&info;
	if (sys_bpf(BPF_OBJ_GET_INFO_BY_FD, &attr))
		return -errno;
	*cnt = info.run_cnt;
	*ns = info.run_time_ns;
	return 0;
}

static int bounce(int in, int out, long n)
{
	char c = 0;

	for (long i = 0; i < n; i++)
		if (read(in, &c, 1) != 1 || write(out, &c, 1) != 1)
			return -1;
	return 0;
}

static int serve(int in, int out, long n)
{
	char c = 0;

	for (long i = 0; i < n; i++)
		if (write(out, &c, 1) != 1 || read(in, &c, 1) != 1)
			return -1;
	return 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: pingpong [-c CPU|any] [-n LOOPS] [-w WARMUP] [-A DIR[,DIR...]] "
		"[-B DIR[,DIR...]] [-s] [-p PROG_ID]\n");
}

int main(int argc, char **argv)
{
	long loops = 200000, warmup = -1;
	const char *cg_a = NULL, *cg_b = NULL;
	int cpu = 0, prog_id = -1, stats_fd = -1, prog_fd = -1, opt, status;
	int to_b[2], to_a[2];
	__u64 cnt0 = 0, ns0 = 0, cnt1 = 0, ns1 = 0;
	bool stats = false, pin = true;
	cpu_set_t set;
	clockid_t child_clock;
	double t0, t1, c0, c1;
	pid_t child;

	while ((opt = getopt(argc, argv, "c:n:w:A:B:sp:h")) != -1) {
		switch (opt) {
		case 'c':
			pin = strcmp(optarg, "any") != 0;
			cpu = pin ? atoi(optarg) : 0;
			break;
		case 'n': loops = atol(optarg); break;
		case 'w': warmup = atol(optarg); break;
		case 'A': cg_a = optarg; break;
		case 'B': cg_b = optarg; break;
		case 's': stats = true; break;
		case 'p': prog_id = atoi(optarg); break;
		case 'h': usage(); return 0;
		default: usage(); return 2;
		}
	}
	if (optind != argc || loops < 1 || cpu < 0 || cpu >= CPU_SETSIZE) {
		usage();
		return 2;
	}
	if (warmup < 0)
		warmup = loops / 10;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (pin && sched_setaffinity(0, sizeof(set), &set)) {
		fprintf(stderr, "pingpong: cannot pin to CPU %d: %s\n", cpu, strerror(errno));
		return 1;
	}
	if (prog_id >= 0) {
		union bpf_attr attr = {};

		attr.prog_id = prog_id;
		prog_fd = sys_bpf(BPF_PROG_GET_FD_BY_ID, &attr);
		if (prog_fd < 0) {
			fprintf(stderr, "pingpong: cannot open BPF program %d: %s\n", prog_id,
				strerror(errno));
			return 1;
		}
	}
	if (pipe(to_b) || pipe(to_a)) {
		fprintf(stderr, "pingpong: cannot create pipes: %s\n", strerror(errno));
		return 1;
	}
	child = fork();
	if (child < 0) {
		fprintf(stderr, "pingpong: cannot fork: %s\n", strerror(errno));
		return 1;
	}
	if (child == 0) {
		char c = 1;

		close(to_b[1]);
		close(to_a[0]);
		/* Joined before the first byte comes back: every timed switch crosses as set. */
		if (join_cgroups(cg_b) || write(to_a[1], &c, 1) != 1)
			_exit(1);
		_exit(bounce(to_b[0], to_a[1], warmup + loops) ? 1 : 0);
	}
	close(to_b[0]);
	close(to_a[1]);
	if (join_cgroups(cg_a)) {
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
		return 1;
	}
	{
		char c;

		if (read(to_a[0], &c, 1) != 1) {
			fprintf(stderr, "pingpong: the second process failed to start\n");
			waitpid(child, NULL, 0);
			return 1;
		}
	}
	if (serve(to_a[0], to_b[1], warmup))
		goto broken;
	errno = clock_getcpuclockid(child, &child_clock);
	if (errno) {
		fprintf(stderr, "pingpong: cannot read the second process's CPU time: %s\n",
			strerror(errno));
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
		return 1;
	}

	if (stats) {
		union bpf_attr attr = {};

		attr.enable_stats.type = BPF_STATS_RUN_TIME;
		stats_fd = sys_bpf(BPF_ENABLE_STATS, &attr);
		if (stats_fd < 0) {
			fprintf(stderr, "pingpong: cannot enable BPF statistics: %s\n",
				strerror(errno));
			kill(child, SIGKILL);
			waitpid(child, NULL, 0);
			return 1;
		}
	}
	if (prog_fd >= 0 && prog_stats(prog_fd, &cnt0, &ns0))
		goto no_stats;
	if (cpu_time(child_clock, &c0))
		goto no_clock;
	t0 = now();
	if (serve(to_a[0], to_b[1], loops))
		goto broken;
	t1 = now();
	if (cpu_time(child_clock, &c1))
		goto no_clock;
	if (prog_fd >= 0 && prog_stats(prog_fd, &cnt1, &ns1))
		goto no_stats;
	if (stats_fd >= 0)
		close(stats_fd);

	if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "pingpong: the second process failed\n");
		return 1;
	}
	printf("loops=%ld seconds=%.6f ops_per_s=%.1f usec_per_op=%.4f cpu_usec_per_op=%.4f",
	       loops, t1 - t0, loops / (t1 - t0), (t1 - t0) * 1e6 / loops, (c1 - c0) * 1e6 / loops);
	if (prog_fd >= 0)
		printf(" run_cnt=%llu run_time_ns=%llu", (unsigned long long)(cnt1 - cnt0),
		       (unsigned long long)(ns1 - ns0));
	printf("\n");
	return 0;

no_clock:
	fprintf(stderr, "pingpong: cannot read CPU time: %s\n", strerror(errno));
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	return 1;
no_stats:
	fprintf(stderr, "pingpong: cannot read BPF program %d's statistics: %s\n", prog_id,
		strerror(errno));
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	return 1;
broken:
	fprintf(stderr, "pingpong: the pipe broke: %s\n", strerror(errno));
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	return 1;
}
