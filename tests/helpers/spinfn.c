// SPDX-License-Identifier: GPL-2.0
/*
 * Spins in one of three functions, for the sampling tests: each cgroup runs its own, so
 * that every sample's leaf names the cgroup it came from.
 *
 *   spinfn alpha|beta|gamma MS   burn one CPU in spin_alpha(), spin_beta() or spin_gamma()
 *                                for MS milliseconds of wall time, then exit
 *   spinfn wide MS               the same in spin_wide(), whose samples land at 65536
 *                                addresses: nearly one stack per sample, to fill stack maps
 *   spinfn deep MS               the same in spin_deep(), DEPTH calls of descend() below
 *                                main(): a stack walk must find each of their frames
 *   spinfn deepsys MS            the same with spin_sys() at the bottom, calling getppid()
 *                                in a loop: most samples are taken in the kernel, where the
 *                                user stack starts at the registers the syscall saved
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * The clock is read every 2^24 turns (milliseconds): nearly every sample lands in the loop
 * itself, even under an emulator, where reading the clock costs far more than the loop. Each
 * function adds its own constant: identical bodies would be folded into one by gcc's
 * identical code folding (-fipa-icf, on at -O2), and the three names would be one address.
 */
#define SPIN(name, k)							\
	__attribute__((noinline)) static void spin_##name(double end)	\
	{								\
		volatile unsigned long x = 0;				\
									\
		do {							\
			for (int i = 0; i < (1 << 24); i++)		\
				x += i ^ (k);				\
		} while (now() < end);					\
	}

SPIN(alpha, 0x11)
SPIN(beta, 0x22)
SPIN(gamma, 0x33)

/*
 * 65536 nops run straight through: a sample's leaf is any of them, so each sample is a new
 * stack until thousands are stored. (Under an emulator a sample lands at a translated
 * block's end instead, at far fewer addresses.)
 */
__attribute__((noinline)) static void spin_wide(double end)
{
	do {
		__asm__ volatile(".rept 65536\n\tnop\n\t.endr" ::: "memory");
	} while (now() < end);
}

SPIN(deep, 0x44)

/* The libc's syscall(), which keeps the frame pointer as it is: getppid() may be cached. */
__attribute__((noinline)) static void spin_sys(double end)
{
	do {
		for (int i = 0; i < 1000; i++)
			syscall(SYS_getppid);
	} while (now() < end);
}

/* The frames of descend() above the spinning function, as 67-sample-walk counts them. */
#define DEPTH 40

static volatile int depth;

/* Not a tail call (the store after it), so that each call keeps its frame. */
__attribute__((noinline)) static void descend(int n, double end, void (*spin)(double))
{
	if (n > 1)
		descend(n - 1, end, spin);
	else
		spin(end);
	depth++;
}

int main(int argc, char **argv)
{
	double end;

	if (argc != 3) {
		fprintf(stderr, "usage: spinfn alpha|beta|gamma|wide|deep|deepsys MS\n");
		return 2;
	}
	end = now() + atof(argv[2]) / 1000;
	if (!strcmp(argv[1], "alpha"))
		spin_alpha(end);
	else if (!strcmp(argv[1], "beta"))
		spin_beta(end);
	else if (!strcmp(argv[1], "gamma"))
		spin_gamma(end);
	else if (!strcmp(argv[1], "wide"))
		spin_wide(end);
	else if (!strcmp(argv[1], "deep"))
		descend(DEPTH, end, spin_deep);
	else if (!strcmp(argv[1], "deepsys"))
		descend(DEPTH, end, spin_sys);
	else
		return 2;
	return 0;
}
