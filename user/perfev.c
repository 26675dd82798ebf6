// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "perfev.h"
#include "probe.h"

/* A big machine at level 3 passes the usual soft limit of 1024. */
void perfev_raise_fd_limit(int needed)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur >= (rlim_t)needed)
		return;
	rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > (rlim_t)needed ?
		      (rlim_t)needed : rl.rlim_max;
	setrlimit(RLIMIT_NOFILE, &rl);
}

int perfev_open(struct perf_event_attr *attr, int cpu, int group_fd)
{
	return syscall(__NR_perf_event_open, attr, -1, cpu, group_fd, PERF_FLAG_FD_CLOEXEC);
}

const char *perfev_open_hint(int err)
{
	switch (err) {
	case ENOENT:
	case EOPNOTSUPP:
		return " (the CPU or kernel does not support this event; is there a hardware PMU?)";
	case EACCES:
	case EPERM:
		/*
		 * Debian's kernels (a patch of theirs) treat perf_event_paranoid 3 as "only
		 * CAP_SYS_ADMIN opens perf events": CAP_PERFMON no longer suffices there.
		 */
		if (probe_perf_event_paranoid() > 2 && !probe_capable(PROBE_CAP_SYS_ADMIN))
			return " (kernel.perf_event_paranoid is above 2, where Debian's kernels "
			       "let only CAP_SYS_ADMIN open perf events: run as root, or set "
			       "sysctl kernel.perf_event_paranoid=2 for CAP_PERFMON to suffice)";
		return " (needs root, or CAP_PERFMON and CAP_BPF)";
	case EINVAL:
		return " (bad encoding for this PMU, or a group it cannot schedule)";
	case EMFILE:
		return " (too many open files: raise ulimit -n)";
	default:
		return "";
	}
}
