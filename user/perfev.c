// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "cpulist.h"
#include "log.h"
#include "perfev.h"
#include "probe.h"

struct perfev {
	int nr_cpus;		/* possible */
	bool *online;		/* per possible CPU: online, and selected (-C) */
	int *fds;		/* nr_cpus * nr_events, -1 where not opened */
	int map_fd;		/* the BPF side's events map, -1 until perfev__open_events() */
	struct perfev_progs switches;	/* cgroup-switches per CPU, with the perf-event hook */
	struct bpf_program *switch_prog;	/* attached to each; NULL while none is */
	int switch_map_fd;	/* the BPF side's map of them (by CPU), -1 while none is */
	struct perfev_opts o;
};

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

int perfev_open_event(struct perf_event_attr *attr, int cpu, int group_fd)
{
	int fd = syscall(__NR_perf_event_open, attr, -1, cpu, group_fd, PERF_FLAG_FD_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

/* What perfev_open_event()'s -errno err usually means, as " (...)" to append; "" if nothing. */
static const char *open_hint(int err)
{
	switch (-err) {
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

int perfev_parse_cpus(const char *list, bool **out)
{
	int nr = libbpf_num_possible_cpus(), err;
	bool *set;
	long beyond;

	if (nr <= 0) {
		pr_err("cannot count possible CPUs: %s", strerror(nr ? -nr : EIO));
		return nr ? nr : -EIO;
	}
	set = calloc(nr, sizeof(*set));
	if (!set) {
		pr_err("-C '%s': out of memory", list);
		return -ENOMEM;
	}
	err = cpulist_parse(list, set, nr, &beyond);
	if (err == -ERANGE)
		pr_err("-C '%s': there is no CPU %ld (this machine's CPUs are 0-%d)", list, beyond,
		       nr - 1);
	else if (err)
		pr_err("-C '%s': expected CPU numbers and ranges, such as 0-3,8", list);
	if (err) {
		free(set);
		return -EINVAL;
	}
	*out = set;
	return 0;
}

int perfev_read_online_cpus(const bool *selected, bool *set, int nr_cpus)
{
	int err = cpulist_read("/sys/devices/system/cpu/online", set, nr_cpus);

	for (int cpu = 0; !err && selected && cpu < nr_cpus; cpu++)
		set[cpu] &= selected[cpu];
	return err;
}

/* --- one event per CPU, with a program --------------------------------------------------- */

int perfev_progs__init(struct perfev_progs *p, int nr_cpus)
{
	p->nr_cpus = nr_cpus;
	p->fds = malloc(sizeof(*p->fds) * nr_cpus);
	p->links = calloc(nr_cpus, sizeof(*p->links));
	if (!p->fds || !p->links) {
		perfev_progs__release(p);
		return -ENOMEM;
	}
	for (int cpu = 0; cpu < nr_cpus; cpu++)
		p->fds[cpu] = -1;
	return 0;
}

int perfev_progs__open(struct perfev_progs *p, const struct perf_event_attr *attr, int cpu)
{
	struct perf_event_attr a = *attr;

	a.size = sizeof(a);
	p->fds[cpu] = perfev_open_event(&a, cpu, -1);
	return p->fds[cpu] < 0 ? p->fds[cpu] : 0;
}

int perfev_progs__attach(struct perfev_progs *p, struct bpf_program *prog, int cpu)
{
	p->links[cpu] = bpf_program__attach_perf_event(prog, p->fds[cpu]);
	return p->links[cpu] ? 0 : -errno;
}

void perfev_progs__close(struct perfev_progs *p, int cpu)
{
	if (p->links && p->links[cpu]) {
		bpf_link__destroy(p->links[cpu]);
		p->links[cpu] = NULL;
	}
	if (p->fds && p->fds[cpu] >= 0) {
		close(p->fds[cpu]);
		p->fds[cpu] = -1;
	}
}

void perfev_progs__release(struct perfev_progs *p)
{
	for (int cpu = 0; p->links && cpu < p->nr_cpus; cpu++)
		bpf_link__destroy(p->links[cpu]);
	for (int cpu = 0; p->fds && cpu < p->nr_cpus; cpu++)
		if (p->fds[cpu] >= 0)
			close(p->fds[cpu]);
	free(p->links);
	free(p->fds);
	p->links = NULL;
	p->fds = NULL;
}

/* --- the counting events ----------------------------------------------------------------- */

int perfev__new(const struct perfev_opts *o, struct perfev **pp)
{
	struct perfev *pe = calloc(1, sizeof(*pe));
	int err;

	if (!pe) {
		pr_err("the per-CPU events: out of memory");
		return -ENOMEM;
	}
	pe->o = *o;
	pe->map_fd = -1;
	pe->switch_map_fd = -1;
	pe->nr_cpus = libbpf_num_possible_cpus();
	if (pe->nr_cpus <= 0) {
		err = pe->nr_cpus ? pe->nr_cpus : -EIO;
		pr_err("cannot count possible CPUs: %s", strerror(-err));
		goto cleanup;
	}
	pe->online = calloc(pe->nr_cpus, sizeof(*pe->online));
	pe->fds = malloc(sizeof(*pe->fds) * pe->nr_cpus * o->nr_events);
	if (!pe->online || !pe->fds) {
		pr_err("the per-CPU events (%d CPUs, %d events each): out of memory",
		       pe->nr_cpus, o->nr_events);
		err = -ENOMEM;
		goto cleanup;
	}
	for (int i = 0; i < pe->nr_cpus * o->nr_events; i++)
		pe->fds[i] = -1;
	err = perfev_read_online_cpus(o->cpus, pe->online, pe->nr_cpus);
	if (err) {
		pr_err("cannot read /sys/devices/system/cpu/online: %s",
			strerror(-err));
		goto cleanup;
	}
	if (o->cpus) {
		int n = 0;

		for (int cpu = 0; cpu < pe->nr_cpus; cpu++)
			n += pe->online[cpu];
		if (!n) {
			pr_err("-C: none of the CPUs it names is online");
			err = -ENODEV;
			goto cleanup;
		}
		if (log_verbose())
			pr_notice("-C: counting %d CPU%s, and any other it names once online", n,
				  n == 1 ? "" : "s");
	}
	*pp = pe;
	return 0;

cleanup:
	perfev__destroy(pe);
	return err;
}

void perfev__destroy(struct perfev *pe)
{
	if (!pe)
		return;
	perfev_progs__release(&pe->switches);
	if (pe->fds)
		for (int i = 0; i < pe->nr_cpus * pe->o.nr_events; i++)
			if (pe->fds[i] >= 0)
				close(pe->fds[i]);
	free(pe->fds);
	free(pe->online);
	free(pe);
}

int perfev__nr_cpus(const struct perfev *pe)
{
	return pe->nr_cpus;
}

const bool *perfev__online(const struct perfev *pe)
{
	return pe->online;
}

/*
 * The kernel refuses a group member (EINVAL) when the group with it could never be on the
 * counters at once: more hardware events than the PMU has counters (a model written for a
 * larger PMU). Says so, naming the group and its size, rather than EINVAL's generic hint.
 */
static void report_group_refused(const struct perfev_opts *o, int i, int cpu)
{
	int first = i, last = i;

	while (first > 0 && o->group[first - 1] == o->group[i])
		first--;
	while (last + 1 < o->nr_events && o->group[last + 1] == o->group[i])
		last++;
	pr_err("cannot open event '%s' on CPU %d: the PMU cannot schedule its group of %d events "
	       "(from '%s' to '%s') at once: more events than this CPU's counters, or an encoding "
	       "it does not take (Invalid argument)", o->names[i], cpu, last - first + 1,
	       o->names[first], o->names[last]);
}

/*
 * Opens every event on one online CPU and puts them in the map. On failure, what was opened
 * stays recorded in pe->fds for close_cpu_events(); ENODEV: the CPU went offline meanwhile.
 */
static int open_cpu_events(struct perfev *pe, int cpu)
{
	const struct perfev_opts *o = &pe->o;
	int leader = -1;

	for (int i = 0; i < o->nr_events; i++) {
		struct perf_event_attr attr = o->attrs[i];
		__u32 key = cpu * o->nr_events + i;
		int fd, err;

		if (i == 0 || o->group[i] != o->group[i - 1])
			leader = -1;
		attr.size = sizeof(attr);
		attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
		attr.inherit = 0;	/* inherited events cannot be read from BPF */
		attr.disabled = 0;
		fd = perfev_open_event(&attr, cpu, leader);
		if (fd < 0) {
			if (fd == -EINVAL && leader >= 0)
				report_group_refused(o, i, cpu);
			else if (fd != -ENODEV)
				pr_err("cannot open event '%s' on CPU %d: %s%s", o->names[i], cpu,
				       strerror(-fd), open_hint(fd));
			return fd;
		}
		pe->fds[key] = fd;
		if (leader < 0)
			leader = fd;
		if (bpf_map_update_elem(pe->map_fd, &key, &fd, BPF_ANY)) {
			err = errno;
			pr_err("cannot add event '%s' of CPU %d to the BPF map: %s", o->names[i],
			       cpu, strerror(err));
			return -err;
		}
	}
	return 0;
}

/* Takes a CPU's cgroup-switches event out of the BPF side's map and closes it. */
static void close_switch_event(struct perfev *pe, int cpu)
{
	if (pe->switch_map_fd >= 0 && pe->switches.fds && pe->switches.fds[cpu] >= 0)
		bpf_map_delete_elem(pe->switch_map_fd, &cpu);
	perfev_progs__close(&pe->switches, cpu);
}

/* Takes a CPU's events out of the map and closes them (and its switch event). */
static void close_cpu_events(struct perfev *pe, int cpu)
{
	for (int i = 0; i < pe->o.nr_events; i++) {
		__u32 key = cpu * pe->o.nr_events + i;

		if (pe->fds[key] < 0)
			continue;
		bpf_map_delete_elem(pe->map_fd, &key);
		close(pe->fds[key]);
		pe->fds[key] = -1;
	}
	close_switch_event(pe, cpu);
}

int perfev__open_events(struct perfev *pe, int map_fd)
{
	pe->map_fd = map_fd;
	for (int cpu = 0; cpu < pe->nr_cpus; cpu++) {
		int err;

		if (!pe->online[cpu])
			continue;	/* events cannot be opened on offline CPUs */
		err = open_cpu_events(pe, cpu);
		if (err == -ENODEV)
			pr_err("cannot open events on CPU %d: it went offline", cpu);
		if (err)
			return err;
	}
	return 0;
}

/* --- the cgroup-switches events ---------------------------------------------------------- */

static const struct perf_event_attr switch_attr = {
	.type = PERF_TYPE_SOFTWARE,
	.config = PERF_COUNT_SW_CGROUP_SWITCHES,
	.sample_period = 1,
};

int perfev__open_switches(struct perfev *pe, char *why, size_t len)
{
	if (perfev_progs__init(&pe->switches, pe->nr_cpus)) {
		snprintf(why, len, "out of memory");
		return -ENOMEM;
	}
	for (int cpu = 0; cpu < pe->nr_cpus; cpu++) {
		int err;

		if (!pe->online[cpu])
			continue;
		err = perfev_progs__open(&pe->switches, &switch_attr, cpu);
		if (!err)
			continue;
		if (err == -ENOENT || err == -EINVAL)
			snprintf(why, len, "the kernel has no cgroup-switches event (Linux 5.13+)");
		else
			snprintf(why, len, "cannot open the cgroup-switches event on CPU %d: %s%s",
				 cpu, strerror(-err), open_hint(err));
		return err;
	}
	return 0;
}

void perfev__close_switches(struct perfev *pe)
{
	/* Out of the map first: the BPF side compares the count of those it holds. */
	for (int cpu = 0; pe->switch_map_fd >= 0 && pe->switches.fds && cpu < pe->nr_cpus; cpu++)
		if (pe->switches.fds[cpu] >= 0)
			bpf_map_delete_elem(pe->switch_map_fd, &cpu);
	perfev_progs__release(&pe->switches);
	pe->switch_prog = NULL;
	pe->switch_map_fd = -1;
}

/* The program on cpu's event, then the event into the map, whose count the BPF side reads. */
static int attach_switch_event(struct perfev *pe, int cpu)
{
	int err = perfev_progs__attach(&pe->switches, pe->switch_prog, cpu);

	if (err) {
		pr_err("cannot attach to the cgroup-switches event of CPU %d: %s", cpu,
		       strerror(-err));
		return err;
	}
	if (bpf_map_update_elem(pe->switch_map_fd, &cpu, &pe->switches.fds[cpu], BPF_ANY)) {
		err = -errno;
		pr_err("cannot add the cgroup-switches event of CPU %d to the BPF map: %s", cpu,
		       strerror(-err));
	}
	return err;
}

int perfev__attach_switches(struct perfev *pe, struct bpf_program *prog, int map_fd)
{
	pe->switch_prog = prog;
	pe->switch_map_fd = map_fd;
	for (int cpu = 0; cpu < pe->nr_cpus; cpu++) {
		int err;

		if (pe->switches.fds[cpu] < 0)
			continue;
		err = attach_switch_event(pe, cpu);
		if (err)
			return err;
	}
	return 0;
}

/* --- CPU hotplug ------------------------------------------------------------------------- */

/*
 * A CPU that came online: a fresh start there. Its events go into the map only after the
 * BPF side has forgotten the readings of the events it had before (reads of an empty slot
 * leave the slice unread), so that no delta spans two events; the owner's flush then starts
 * its slice.
 */
static int cpu_came_online(struct perfev *pe, int cpu, perfev_forget_cb forget, void *ctx)
{
	int err;

	close_cpu_events(pe, cpu);
	err = forget(cpu, ctx);
	if (err)
		return err;
	err = open_cpu_events(pe, cpu);
	if (!err && pe->switch_prog) {
		err = perfev_progs__open(&pe->switches, &switch_attr, cpu);
		if (!err)
			err = attach_switch_event(pe, cpu);
	}
	if (err) {
		close_cpu_events(pe, cpu);
		return err;
	}
	pe->online[cpu] = true;
	if (log_verbose())
		pr_notice("CPU %d came online: counted from now", cpu);
	return 0;
}

void perfev__update_cpus(struct perfev *pe, perfev_forget_cb forget, void *ctx)
{
	bool *now = calloc(pe->nr_cpus, sizeof(*now));

	if (!now || perfev_read_online_cpus(pe->o.cpus, now, pe->nr_cpus)) {
		free(now);
		return;		/* keep the CPUs as they were; try again next interval */
	}
	for (int cpu = 0; cpu < pe->nr_cpus; cpu++) {
		int err;

		if (now[cpu] == pe->online[cpu])
			continue;
		if (!now[cpu]) {
			close_cpu_events(pe, cpu);
			pe->online[cpu] = false;
			if (log_verbose())
				pr_notice("CPU %d went offline: its counts end with its last interval",
					  cpu);
			if (pe->o.cpu_changed)
				pe->o.cpu_changed(cpu, false, pe->o.cpu_changed_ctx);
			continue;
		}
		err = cpu_came_online(pe, cpu, forget, ctx);
		if (!err && pe->o.cpu_changed)
			pe->o.cpu_changed(cpu, true, pe->o.cpu_changed_ctx);
		/* ENODEV: gone again already, or not ready: the next interval tries again. */
		if (err && err != -ENODEV && err != -ENXIO)
			pr_warn("CPU %d came online but cannot be counted: %s", cpu,
				strerror(-err));
	}
	free(now);
}
