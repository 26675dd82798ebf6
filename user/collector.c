// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "collector.h"
#include "cpulist.h"
#include "switchhook.h"
#include "log.h"
#include "cgtma.skel.h"

/* Cgroups read per batch lookup. */
#define READ_BATCH 64

struct collector {
	struct cgtma *skel;
	int nr_events;
	int nr_cpus;		/* possible */
	bool *online;		/* per possible CPU: online, and selected (-C) */
	int *fds;		/* nr_cpus * nr_events, -1 where not opened */
	size_t value_size;	/* nr_events * sizeof(struct cgtma_count): one epoch's counts */
	size_t cg_value_size;	/* a cgroup's value (on one CPU): CGTMA_CGROUP_VALUE_SIZE() */
	int cg_rows;		/* values a cgroup's lookup returns: 1, or nr_cpus when per CPU */
	long nr_inserted;	/* cgroups this process put in cgroup_counts, less those it
				 * took out: at most the entries (the mkdir hook adds more) */
	struct cgtma_charged *charged;	/* per CPU: one half's list of charged_ids */
	__u64 *ids;		/* the cgroups the lists name */
	long reads_listed, reads_all;	/* intervals read from the lists, and whole */
	int full_reads;		/* the next reads that read every cgroup (collector__track()) */
	__u32 open_epoch;	/* the half of the counts the CPUs write now */
	__u32 closed_epoch;	/* the half the last flush closed: what the reads return */
	struct cgtma_count *half;	/* per CPU: one cgroup's closed half, for the callback */
	bool batch_ok;		/* the kernel has BPF_MAP_LOOKUP_BATCH for per-CPU hashes */
	void *batch;		/* values of one batch lookup, kept between intervals */
	int stats_fd;		/* BPF_ENABLE_STATS: run time is counted while it is open */
	enum switch_hook hook;	/* the one in use: tracepoint or perf-event */
	bool falls_back;	/* perf-event, with the tracepoint attached as its fallback */
	bool miss_said;		/* the forced perf-event hook's first miss was said */
	bool watch_changes;	/* the mkdir and rmdir hooks are attached */
	int *switch_fds;	/* per possible CPU with the perf-event hook, -1 where none */
	struct bpf_link **switch_links;	/* the same, the program attached to each */
	struct collector_opts o;	/* as opened: events are opened again on hotplug */
};

static bool libbpf_verbose;

/* A task_counts value: the header and both epochs' counts. */
static size_t task_value_size(const struct collector *c)
{
	return offsetof(struct cgtma_task, ev) + 2 * c->value_size;
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list args)
{
	if (level == LIBBPF_DEBUG || !libbpf_verbose)
		return 0;
	return vfprintf(stderr, fmt, args);
}

/* The CPUs to count now: those online, of the ones -C selects. 0 or -errno. */
static int counted_cpus(const struct collector *c, bool *set)
{
	int err = cpulist_read("/sys/devices/system/cpu/online", set, c->nr_cpus);

	for (int cpu = 0; !err && c->o.cpus && cpu < c->nr_cpus; cpu++)
		set[cpu] &= c->o.cpus[cpu];
	return err;
}

/* Whether the running kernel's release is older than major.minor (unknown: older). */
static bool kernel_before(int want_major, int want_minor)
{
	struct utsname u;
	int major = 0, minor = 0;

	if (uname(&u) || sscanf(u.release, "%d.%d", &major, &minor) != 2)
		return true;
	return major < want_major || (major == want_major && minor < want_minor);
}

/*
 * Before 6.1 the kernel warns (WARN_ONCE, a splat in dmesg) when a raw tracepoint program,
 * as flush_slice is, uses a hash map that allocates at run time, and PREEMPT_RT kernels
 * refuse it: there, the maps are preallocated.
 */
static bool kernel_before_6_1(void)
{
	return kernel_before(6, 1);
}

/* CapEff from /proc/self/status; 0 when it cannot be read. */
static unsigned long long effective_caps(void)
{
	unsigned long long eff = 0;
	char line[256];
	FILE *f = fopen("/proc/self/status", "re");

	if (!f)
		return geteuid() == 0 ? ~0ULL : 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &eff) == 1)
			break;
	fclose(f);
	return eff;
}

#define CAP_BIT(n) (1ULL << (n))
#define CAP_SYS_ADMIN_BIT CAP_BIT(21)
#define CAP_PERFMON_BIT CAP_BIT(38)
#define CAP_BPF_BIT CAP_BIT(39)
#define CAP_SYS_RESOURCE_BIT CAP_BIT(24)

/* perf and BPF need CAP_PERFMON+CAP_BPF or CAP_SYS_ADMIN. */
static bool has_privileges(void)
{
	unsigned long long eff = effective_caps();

	return (eff & CAP_SYS_ADMIN_BIT) || ((eff & CAP_PERFMON_BIT) && (eff & CAP_BPF_BIT));
}

int collector__check_privileges(void)
{
	if (has_privileges())
		return 0;
	pr_err("not permitted: needs root, or CAP_PERFMON and CAP_BPF (Linux 5.8+)");
	return -EPERM;
}

/* kernel.perf_event_paranoid, or -1 when it cannot be read. */
static int perf_event_paranoid(void)
{
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "re");
	int v = -1;

	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

/*
 * Whether /proc/kallsyms gives this process the address of a kernel symbol, as libbpf needs
 * to resolve the BPF side's __ksym externs: data symbols need CONFIG_KALLSYMS_ALL, and
 * addresses read as 0 without CAP_SYSLOG (or perf_event_paranoid <= 1).
 */
static bool kallsyms_has(const char *name)
{
	char line[512], sym[256];
	unsigned long long addr;
	bool found = false;
	FILE *f = fopen("/proc/kallsyms", "re");

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = sscanf(line, "%llx %*c %255s", &addr, sym) == 2 && addr &&
			strcmp(sym, name) == 0;
	fclose(f);
	return found;
}

static double seconds_since(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (t1.tv_sec - t0->tv_sec) + (t1.tv_nsec - t0->tv_nsec) / 1e9;
}

/*
 * With -v: what the verifier did with each loaded program. verified_insns is there from
 * Linux 5.16; before it, the load time is all there is to show how hard it worked.
 */
static void report_load(const struct collector *c, double load_s)
{
	struct bpf_program *prog;
	char line[1024];
	int n = 0;

	bpf_object__for_each_program(prog, c->skel->obj) {
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);

		if (!bpf_program__autoload(prog) ||
		    bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info, &len))
			continue;
		if (len >= offsetof(struct bpf_prog_info, verified_insns) +
			   sizeof(info.verified_insns) && info.verified_insns)
			n += snprintf(line + n, sizeof(line) - n, "%s%s %u", n ? ", " : "",
				      bpf_program__name(prog), info.verified_insns);
		else
			n += snprintf(line + n, sizeof(line) - n, "%s%s (kernel before 5.16)",
				      n ? ", " : "", bpf_program__name(prog));
		if (n >= (int)sizeof(line))
			break;
	}
	pr_notice("BPF: loaded in %.3f s; verified instructions: %s", load_s, line);
}

/* CPUs x events descriptors: a big machine at level 3 passes the usual soft limit of 1024. */
static void raise_fd_limit(int needed)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur >= (rlim_t)needed)
		return;
	rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > (rlim_t)needed ?
		      (rlim_t)needed : rl.rlim_max;
	setrlimit(RLIMIT_NOFILE, &rl);
}

static int perf_event_open(struct perf_event_attr *attr, int cpu, int group_fd)
{
	return syscall(__NR_perf_event_open, attr, -1, cpu, group_fd, PERF_FLAG_FD_CLOEXEC);
}

static const char *perf_open_hint(int err)
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
		if (perf_event_paranoid() > 2 && !(effective_caps() & CAP_SYS_ADMIN_BIT))
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

/* Opens the cgroup-switches event on every online CPU, sample period 1. */
static struct perf_event_attr switch_attr = {
	.type = PERF_TYPE_SOFTWARE,
	.size = sizeof(switch_attr),
	.config = PERF_COUNT_SW_CGROUP_SWITCHES,
	.sample_period = 1,
};

static int open_switch_events(struct collector *c, char *why, size_t len)
{

	c->switch_fds = malloc(sizeof(*c->switch_fds) * c->nr_cpus);
	c->switch_links = calloc(c->nr_cpus, sizeof(*c->switch_links));
	if (!c->switch_fds || !c->switch_links) {
		snprintf(why, len, "out of memory");
		return -ENOMEM;
	}
	for (int cpu = 0; cpu < c->nr_cpus; cpu++)
		c->switch_fds[cpu] = -1;
	for (int cpu = 0; cpu < c->nr_cpus; cpu++) {
		int err;

		if (!c->online[cpu])
			continue;
		c->switch_fds[cpu] = perf_event_open(&switch_attr, cpu, -1);
		if (c->switch_fds[cpu] >= 0)
			continue;
		err = errno;
		if (err == ENOENT || err == EINVAL)
			snprintf(why, len, "the kernel has no cgroup-switches event (Linux 5.13+)");
		else
			snprintf(why, len, "cannot open the cgroup-switches event on CPU %d: %s%s",
				 cpu, strerror(err), perf_open_hint(err));
		return -err;
	}
	return 0;
}

static void close_switch_events(struct collector *c)
{
	for (int cpu = 0; c->switch_links && cpu < c->nr_cpus; cpu++)
		bpf_link__destroy(c->switch_links[cpu]);
	for (int cpu = 0; c->switch_fds && cpu < c->nr_cpus; cpu++)
		if (c->switch_fds[cpu] >= 0)
			close(c->switch_fds[cpu]);
	free(c->switch_links);
	free(c->switch_fds);
	c->switch_links = NULL;
	c->switch_fds = NULL;
}

/*
 * Picks the switch hook before the load, so that the verifier sees only the programs in
 * use. Auto takes the perf-event hook wherever the kernel has it (5.13+, the perf_event
 * controller on v2, not fully preemptible), with sched_switch loaded and attached beside
 * it: that one ends the slices at switches out of idle, which some kernels do not report to
 * the event, and takes every switch over at the first other one the event misses
 * (pe_falls_back). No probe at start decides it: a probe sees the missing samples only on
 * CPUs that idle while it runs, and the check at every slice sees them whenever they
 * happen. Asked for by name, the perf-event hook runs alone and is kept whatever it misses
 * (a user measuring its cost): the probe then warns where it can tell, and the intervals
 * where it missed are marked not exact.
 */
static int choose_switch_hook(struct collector *c, const struct collector_opts *o)
{
	bool forced = o->switch_hook == SWITCH_HOOK_PERF_EVENT;
	const char *pt_auto = getenv("CGTMA_PER_TASK_AUTO");
	char why[256] = "";
	const char *unfit, *dropped = NULL;
	int unchecked = -1;

	c->hook = SWITCH_HOOK_TRACEPOINT;
	/*
	 * -T needs BPF at every switch: the tracepoint alone does it all, unless the perf-event
	 * hook is asked for (it then takes the switches between cgroups, the tracepoint those
	 * inside one). CGTMA_PER_TASK_AUTO=perf-event has auto pick it with -T as without,
	 * with its fallback: for tests of that pair.
	 */
	if (o->per_task && o->switch_hook == SWITCH_HOOK_AUTO &&
	    !(pt_auto && strcmp(pt_auto, "perf-event") == 0)) {
		snprintf(why, sizeof(why), "--per-task ends a slice at every switch");
	} else if (o->switch_hook != SWITCH_HOOK_TRACEPOINT) {
		/* The event first: a kernel without it (before 5.13) says so, whatever else. */
		if (open_switch_events(c, why, sizeof(why)) == 0) {
			unfit = switch_hook_unfit();
			dropped = unfit || !forced ? NULL :
				  switch_samples_dropped(c->online, c->nr_cpus, &unchecked);
			if (dropped)
				pr_warn("--switch-hook=perf-event: %s; kept as asked: the time before a "
					"switch it misses goes to the cgroup that runs after it, and "
					"each interval with such a switch is marked not exact", dropped);
			if (unfit)
				snprintf(why, sizeof(why), "%s", unfit);
			else
				c->hook = SWITCH_HOOK_PERF_EVENT;
		}
		if (c->hook != SWITCH_HOOK_PERF_EVENT)
			close_switch_events(c);
	}
	if (forced && c->hook != SWITCH_HOOK_PERF_EVENT) {
		pr_err("--switch-hook=perf-event: %s", why);
		return -EOPNOTSUPP;
	}
	c->falls_back = c->hook == SWITCH_HOOK_PERF_EVENT && !forced;
	if (o->verbose) {
		if (c->hook == SWITCH_HOOK_PERF_EVENT)
			pr_notice("switch hook: perf-event (cgroup-switches on every CPU: BPF runs "
				  "at switches between cgroups)%s", c->falls_back ?
				  ", with sched_switch at switches out of idle; the tracepoint takes "
				  "over at the first other switch it misses" :
				  "; kept whatever it misses (asked for by name)");
		else
			pr_notice("switch hook: tracepoint (sched_switch: BPF runs at every "
				  "switch)%s%s", *why ? ": " : "", why);
		if (unchecked >= 0)
			pr_notice("switch hook: CPU %d never went idle during the probe of samples: "
				  "its switches out of idle were not checked", unchecked);
	}
	c->skel->rodata->pe_hook = c->hook == SWITCH_HOOK_PERF_EVENT;
	c->skel->rodata->pe_falls_back = c->falls_back;
	bpf_program__set_autoload(c->skel->progs.on_cgroup_switch,
				  c->hook == SWITCH_HOOK_PERF_EVENT);
	bpf_program__set_autoload(c->skel->progs.on_switch, c->hook == SWITCH_HOOK_TRACEPOINT ||
				  o->per_task || c->falls_back);
	/* The moves that are no misses matter to the perf-event hook alone. */
	if (c->hook != SWITCH_HOOK_PERF_EVENT) {
		int err = bpf_map__set_max_entries(c->skel->maps.moved_to, 1);

		if (err) {
			pr_err("cannot size the BPF map moved_to: %s", strerror(-err));
			return err;
		}
	}
	return 0;
}

static int attach_switch_event(struct collector *c, int cpu)
{
	int err;

	c->switch_links[cpu] = bpf_program__attach_perf_event(c->skel->progs.on_cgroup_switch,
							      c->switch_fds[cpu]);
	if (c->switch_links[cpu])
		return 0;
	err = -errno;
	pr_err("cannot attach to the cgroup-switches event of CPU %d: %s", cpu, strerror(-err));
	return err;
}

static int attach_switch_hook(struct collector *c)
{
	int err;

	if (bpf_program__autoload(c->skel->progs.on_switch)) {
		c->skel->links.on_switch = bpf_program__attach(c->skel->progs.on_switch);
		if (!c->skel->links.on_switch) {
			err = -errno;
			pr_err("cannot attach to sched_switch: %s", strerror(-err));
			return err;
		}
	}
	for (int cpu = 0; c->hook == SWITCH_HOOK_PERF_EVENT && cpu < c->nr_cpus; cpu++) {
		if (c->switch_fds[cpu] < 0)
			continue;
		err = attach_switch_event(c, cpu);
		if (err)
			return err;
	}
	return 0;
}

/*
 * After a flush: says the perf-event hook's first miss, once. Where the tracepoint took
 * over (it had before the flush began: every switch in progress then has ended since, so
 * none waits for the event's program), the events go, and with them its cost.
 */
static void switch_hook_missed(struct collector *c, bool tp_on_before)
{
	int cpu = __atomic_load_n(&c->skel->data->switch_miss_cpu, __ATOMIC_ACQUIRE);

	if (c->hook != SWITCH_HOOK_PERF_EVENT || cpu < 0 || (c->falls_back && !tp_on_before))
		return;
	if (c->falls_back) {
		pr_warn("switch hook: the perf-event hook missed a switch on CPU %d (the kernel did "
			"not run its program there): the tracepoint (sched_switch) has taken over "
			"on every CPU; the interval of the missed switch is marked not exact", cpu);
		close_switch_events(c);
		c->hook = SWITCH_HOOK_TRACEPOINT;
	} else if (!c->miss_said) {
		pr_warn("--switch-hook=perf-event: it missed a switch on CPU %d (the kernel did not "
			"run its program there); kept as asked: each interval with a missed switch "
			"is marked not exact", cpu);
		c->miss_said = true;
	}
}

/* An interrupt entry this close after an exit reads nothing (the gap is the next one's). */
#define IRQ_COALESCE_NS 500

/*
 * --irq: the interrupt programs that run, tp_btf where the kernel's BTF has the tracepoints
 * (plain loads), raw tracepoints otherwise; softirq ones only for a selected vector, the
 * hardirq ones only when hardirq is selected.
 */
static void choose_irq_hooks(struct collector *c, const struct collector_opts *o)
{
	bool softirq = o->irq_mask & ((1U << CGTMA_IRQ_HARDIRQ) - 1);
	bool hardirq = o->irq_mask & (1U << CGTMA_IRQ_HARDIRQ);
	/* CGTMA_IRQ_HOOK=raw_tp takes the raw tracepoints where tp_btf would do: for tests. */
	const char *force = getenv("CGTMA_IRQ_HOOK");
	bool btf = !(force && strcmp(force, "raw_tp") == 0) &&
		   libbpf_find_vmlinux_btf_id("softirq_entry", BPF_TRACE_RAW_TP) > 0 &&
		   libbpf_find_vmlinux_btf_id("irq_handler_entry", BPF_TRACE_RAW_TP) > 0;
	__typeof__(c->skel->progs) *p = &c->skel->progs;

	c->skel->rodata->irq_mask = o->irq_mask;
	c->skel->rodata->irq_coalesce_ns = IRQ_COALESCE_NS;
	bpf_program__set_autoload(p->on_softirq_entry, softirq && btf);
	bpf_program__set_autoload(p->on_softirq_exit, softirq && btf);
	bpf_program__set_autoload(p->on_hardirq_entry, hardirq && btf);
	bpf_program__set_autoload(p->on_hardirq_exit, hardirq && btf);
	bpf_program__set_autoload(p->raw_softirq_entry, softirq && !btf);
	bpf_program__set_autoload(p->raw_softirq_exit, softirq && !btf);
	bpf_program__set_autoload(p->raw_hardirq_entry, hardirq && !btf);
	bpf_program__set_autoload(p->raw_hardirq_exit, hardirq && !btf);
	if (o->irq_mask && o->verbose)
		pr_notice("--irq: %s", btf ? "tp_btf tracepoints" : force ?
			  "raw tracepoints (CGTMA_IRQ_HOOK)" : "raw tracepoints (no tp_btf)");
}

static int attach_one(struct bpf_program *prog, struct bpf_link **link)
{
	int err;

	if (!bpf_program__autoload(prog))
		return 0;
	*link = bpf_program__attach(prog);
	if (*link)
		return 0;
	err = -errno;
	pr_err("--irq: cannot attach %s: %s", bpf_program__name(prog), strerror(-err));
	return err;
}

/*
 * Exits before entries: an entry seen with its exit missed would leave its scope owning the
 * CPU; an exit without its entry is recognised and ignored.
 */
static int attach_irq_hooks(struct collector *c)
{
	__typeof__(c->skel->progs) *p = &c->skel->progs;
	__typeof__(c->skel->links) *l = &c->skel->links;
	int err;

	if ((err = attach_one(p->on_softirq_exit, &l->on_softirq_exit)) ||
	    (err = attach_one(p->on_hardirq_exit, &l->on_hardirq_exit)) ||
	    (err = attach_one(p->raw_softirq_exit, &l->raw_softirq_exit)) ||
	    (err = attach_one(p->raw_hardirq_exit, &l->raw_hardirq_exit)) ||
	    (err = attach_one(p->on_softirq_entry, &l->on_softirq_entry)) ||
	    (err = attach_one(p->on_hardirq_entry, &l->on_hardirq_entry)) ||
	    (err = attach_one(p->raw_softirq_entry, &l->raw_softirq_entry)) ||
	    (err = attach_one(p->raw_hardirq_entry, &l->raw_hardirq_entry)))
		return err;
	return 0;
}

/*
 * The kernel refuses a group member (EINVAL) when the group with it could never be on the
 * counters at once: more hardware events than the PMU has counters (a model written for a
 * larger PMU). Says so, naming the group and its size, rather than EINVAL's generic hint.
 */
static void report_group_refused(const struct collector_opts *o, int i, int cpu)
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
 * stays recorded in c->fds for close_cpu_events(); ENODEV: the CPU went offline meanwhile.
 */
static int open_cpu_events(struct collector *c, int cpu)
{
	const struct collector_opts *o = &c->o;
	int map_fd = bpf_map__fd(c->skel->maps.events), leader = -1;

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
		fd = perf_event_open(&attr, cpu, leader);
		if (fd < 0) {
			err = errno;
			if (err == EINVAL && leader >= 0)
				report_group_refused(o, i, cpu);
			else if (err != ENODEV)
				pr_err("cannot open event '%s' on CPU %d: %s%s", o->names[i], cpu,
				       strerror(err), perf_open_hint(err));
			return -err;
		}
		c->fds[key] = fd;
		if (leader < 0)
			leader = fd;
		if (bpf_map_update_elem(map_fd, &key, &fd, BPF_ANY)) {
			err = errno;
			pr_err("cannot add event '%s' of CPU %d to the BPF map: %s", o->names[i],
			       cpu, strerror(err));
			return -err;
		}
	}
	return 0;
}

/* Takes a CPU's events out of the map and closes them (and its switch event). */
static void close_cpu_events(struct collector *c, int cpu)
{
	int map_fd = bpf_map__fd(c->skel->maps.events);

	for (int i = 0; i < c->nr_events; i++) {
		__u32 key = cpu * c->nr_events + i;

		if (c->fds[key] < 0)
			continue;
		bpf_map_delete_elem(map_fd, &key);
		close(c->fds[key]);
		c->fds[key] = -1;
	}
	if (c->switch_links && c->switch_links[cpu]) {
		bpf_link__destroy(c->switch_links[cpu]);
		c->switch_links[cpu] = NULL;
	}
	if (c->switch_fds && c->switch_fds[cpu] >= 0) {
		close(c->switch_fds[cpu]);
		c->switch_fds[cpu] = -1;
	}
}

static int open_events(struct collector *c)
{
	for (int cpu = 0; cpu < c->nr_cpus; cpu++) {
		int err;

		if (!c->online[cpu])
			continue;	/* events cannot be opened on offline CPUs */
		err = open_cpu_events(c, cpu);
		if (err == -ENODEV)
			pr_err("cannot open events on CPU %d: it went offline", cpu);
		if (err)
			return err;
	}
	return 0;
}

/* Whether BPF_MAP_LOOKUP_BATCH works on per-CPU hashes here (5.6+). */
static bool probe_batch(struct collector *c)
{
	int fd = bpf_map__fd(c->skel->maps.cgroup_counts);
	__u64 keys[1], out_batch;
	__u32 count = 1;
	void *values = calloc(c->cg_rows, c->cg_value_size);
	int ret;

	if (!values)
		return false;
	ret = bpf_map_lookup_batch(fd, NULL, &out_batch, keys, values, &count, NULL);
	free(values);
	return ret == 0 || errno == ENOENT;
}

/*
 * Kernel memory the maps ask for at load (arrays, and hashes where preallocated; each
 * per-CPU one times the possible CPUs), in bytes: what a refusal for memory was about.
 */
static double maps_load_bytes(const struct collector *c)
{
	const struct bpf_map *m;
	double sum = 0;

	bpf_object__for_each_map(m, c->skel->obj) {
		enum bpf_map_type t = bpf_map__type(m);
		double one = (bpf_map__value_size(m) + 7) & ~7U;

		if ((t == BPF_MAP_TYPE_HASH || t == BPF_MAP_TYPE_PERCPU_HASH) &&
		    (bpf_map__map_flags(m) & BPF_F_NO_PREALLOC))
			continue;
		if (t == BPF_MAP_TYPE_PERCPU_ARRAY || t == BPF_MAP_TYPE_PERCPU_HASH)
			one *= c->nr_cpus;
		sum += one * bpf_map__max_entries(m);
	}
	return sum;
}

/*
 * How much the maps asked for, and what lowers it: for the message of a load the kernel
 * refused for memory. A static buffer: called once, on the way out.
 */
static const char *maps_memory_hint(const struct collector *c, const struct collector_opts *o,
				    bool prealloc, int max_cgroups)
{
	static char s[512];
	int n;

	n = snprintf(s, sizeof(s), "the BPF maps ask for %.1f MB of kernel memory at load, "
		     "with %d event%s and %d possible CPUs; fewer events (-e, -l) lower it",
		     maps_load_bytes(c) / 1e6, o->nr_events, o->nr_events == 1 ? "" : "s",
		     c->nr_cpus);
	if (prealloc && n < (int)sizeof(s))
		n += snprintf(s + n, sizeof(s) - n, ", as --max-cgroups does (%d, preallocated "
			      "before Linux 6.1)", max_cgroups);
	if (o->per_cpu_cgroups && n < (int)sizeof(s))
		n += snprintf(s + n, sizeof(s) - n, "; -A keeps each cgroup's counts per "
			      "possible CPU: without it, once");
	if (o->per_task && n < (int)sizeof(s))
		snprintf(s + n, sizeof(s) - n, "; -T: --max-tasks");
	return s;
}

int collector__open(const struct collector_opts *o, struct collector **cp)
{
	struct collector *c;
	struct timespec t0;
	int err, max_cgroups;
	bool prealloc;

	if (o->nr_events < 1 || o->nr_events > CGTMA_MAX_EVENTS) {
		pr_err("%d events requested; the limit is %d", o->nr_events,
			CGTMA_MAX_EVENTS);
		return -E2BIG;
	}
	if (access("/sys/kernel/btf/vmlinux", R_OK)) {
		pr_err("this kernel has no BTF (/sys/kernel/btf/vmlinux): cgtma needs a kernel "
		       "built with CONFIG_DEBUG_INFO_BTF=y, which Linux 5.5 and later export there");
		return -ENOTSUP;
	}

	libbpf_verbose = o->verbose;
	libbpf_set_print(libbpf_print);

	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->nr_events = o->nr_events;
	c->o = *o;
	c->stats_fd = -1;
	c->value_size = o->nr_events * sizeof(struct cgtma_count);
	c->cg_value_size = CGTMA_CGROUP_VALUE_SIZE(o->nr_events);
	c->nr_cpus = libbpf_num_possible_cpus();
	if (c->nr_cpus <= 0) {
		err = c->nr_cpus ? c->nr_cpus : -EIO;
		pr_err("cannot count possible CPUs: %s", strerror(-err));
		goto cleanup;
	}
	c->cg_rows = o->per_cpu_cgroups ? c->nr_cpus : 1;
	c->online = calloc(c->nr_cpus, sizeof(*c->online));
	c->half = calloc(c->nr_cpus, c->value_size);
	c->fds = malloc(sizeof(*c->fds) * c->nr_cpus * o->nr_events);
	c->charged = calloc(c->nr_cpus, sizeof(*c->charged));
	c->ids = malloc(sizeof(*c->ids) * c->nr_cpus * CGTMA_CHARGED_MAX);
	if (!c->online || !c->fds || !c->half || !c->charged || !c->ids) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (int i = 0; i < c->nr_cpus * o->nr_events; i++)
		c->fds[i] = -1;
	err = counted_cpus(c, c->online);
	if (err) {
		pr_err("cannot read /sys/devices/system/cpu/online: %s",
			strerror(-err));
		goto cleanup;
	}
	if (o->cpus) {
		int n = 0;

		for (int cpu = 0; cpu < c->nr_cpus; cpu++)
			n += c->online[cpu];
		if (!n) {
			pr_err("-C: none of the CPUs it names is online");
			err = -ENODEV;
			goto cleanup;
		}
		if (o->verbose)
			pr_notice("-C: counting %d CPU%s, and any other it names once online", n,
				  n == 1 ? "" : "s");
	}

	c->skel = cgtma__open();
	if (!c->skel) {
		err = -errno;
		pr_err("cannot open the BPF object: %s", strerror(-err));
		goto cleanup;
	}
	c->skel->rodata->nr_events = o->nr_events;
	c->skel->rodata->max_level = o->max_level;
	c->skel->rodata->tracked_levels = o->tracked_levels;
	c->skel->rodata->new_cgroup_levels = o->new_cgroup_levels;
	c->skel->rodata->per_task = o->per_task;
	c->skel->rodata->cgroup_per_cpu = o->per_cpu_cgroups;
	prealloc = o->map_alloc == MAP_ALLOC_AUTO ? kernel_before_6_1() :
		   o->map_alloc == MAP_ALLOC_PREALLOC;
	max_cgroups = o->max_cgroups ? o->max_cgroups : prealloc ? 1024 : 16384;
	if (prealloc &&
	    ((err = bpf_map__set_map_flags(c->skel->maps.cgroup_counts, 0)) ||
	     (err = bpf_map__set_map_flags(c->skel->maps.new_cgroups, 0)) ||
	     (err = bpf_map__set_map_flags(c->skel->maps.task_counts, 0)))) {
		pr_err("cannot size the BPF maps: %s", strerror(-err));
		goto cleanup;
	}
	if ((err = bpf_map__set_max_entries(c->skel->maps.events, c->nr_cpus * o->nr_events)) ||
	    (err = bpf_map__set_value_size(c->skel->maps.cpu_counts, c->value_size)) ||
	    (err = bpf_map__set_type(c->skel->maps.cgroup_counts, o->per_cpu_cgroups ?
				     BPF_MAP_TYPE_PERCPU_HASH : BPF_MAP_TYPE_HASH)) ||
	    (err = bpf_map__set_value_size(c->skel->maps.cgroup_counts, c->cg_value_size)) ||
	    (err = bpf_map__set_value_size(c->skel->maps.irq_counts, 2 * c->value_size)) ||
	    (err = bpf_map__set_max_entries(c->skel->maps.irq_counts,
					    o->irq_mask ? CGTMA_NR_IRQ : 1)) ||
	    (err = bpf_map__set_max_entries(c->skel->maps.irq_saved, o->irq_mask ? 4096 : 1)) ||
	    (err = bpf_map__set_value_size(c->skel->maps.charge_cache,
					   offsetof(struct cgtma_charge_entry, acc) +
						   c->value_size)) ||
	    (err = bpf_map__set_max_entries(c->skel->maps.cgroup_counts, max_cgroups)) ||
	    (err = bpf_map__set_max_entries(c->skel->maps.new_cgroups, max_cgroups)) ||
	    (err = bpf_map__set_value_size(c->skel->maps.task_counts, task_value_size(c))) ||
	    (err = bpf_map__set_max_entries(c->skel->maps.task_counts, !o->per_task ? 1 :
					    o->max_tasks ? o->max_tasks : 4096))) {
		pr_err("cannot size the BPF maps: %s", strerror(-err));
		goto cleanup;
	}

	err = choose_switch_hook(c, o);
	if (err)
		goto cleanup;
	choose_irq_hooks(c, o);

	clock_gettime(CLOCK_MONOTONIC, &t0);
	err = cgtma__load(c->skel);
	if (err == -EPERM && kernel_before(5, 11) && !(effective_caps() & CAP_SYS_RESOURCE_BIT)) {
		/* Memory cgroup accounting of BPF memory came in 5.11; before, RLIMIT_MEMLOCK. */
		pr_err("cannot load the BPF program: %s (before Linux 5.11 BPF maps count "
		       "against RLIMIT_MEMLOCK, and raising it needs CAP_SYS_RESOURCE: run as "
		       "root, add CAP_SYS_RESOURCE, or raise it with ulimit -l unlimited; %s)",
		       strerror(-err), maps_memory_hint(c, o, prealloc, max_cgroups));
		goto cleanup;
	}
	if (err == -ENOMEM || (err == -EPERM && kernel_before(5, 11))) {
		/* The memory cgroup's limit (5.11+) or RLIMIT_MEMLOCK (before) refused a map. */
		pr_err("cannot load the BPF program: %s (%s)", strerror(-err),
		       maps_memory_hint(c, o, prealloc, max_cgroups));
		goto cleanup;
	}
	if (err == -EINVAL && !prealloc && kernel_before_6_1()) {
		/* The verifier's rule before 6.1 (check_map_prog_compatibility). */
		pr_err("cannot load the BPF program: %s (CGTMA_MAP_ALLOC=runtime: before Linux "
		       "6.1, PREEMPT_RT kernels and perf-event programs accept only "
		       "preallocated hash maps)", strerror(-err));
		goto cleanup;
	}
	if (err) {
		pr_err("cannot load the BPF program: %s%s", strerror(-err),
			o->verbose ? "" : " (run with -v to see the verifier's log)");
		goto cleanup;
	}
	if (o->verbose) {
		report_load(c, seconds_since(&t0));
		pr_notice("BPF: per-cgroup maps %s, %d entries", prealloc ?
			  "preallocated" : "allocated as cgroups come", max_cgroups);
		if (!kallsyms_has("cgroup_mutex"))
			pr_notice("BPF: /proc/kallsyms has no address for cgroup_mutex (a kernel "
				  "without CONFIG_KALLSYMS_ALL, or no CAP_SYSLOG): a switch inside a "
				  "task's move to another cgroup charges the new one");
	}

	raise_fd_limit(c->nr_cpus * (o->nr_events + 1) + 256);
	err = open_events(c);
	if (err)
		goto cleanup;

	/*
	 * Attach, then flush: a CPU's first reading only starts its slice, so nothing that ran
	 * before attach is attributed; the flush starts the CPUs that have not switched yet.
	 */
	err = attach_switch_hook(c);
	if (err)
		goto cleanup;
	err = attach_irq_hooks(c);
	if (err)
		goto cleanup;
	c->skel->links.on_cgroup_attach = bpf_program__attach(c->skel->progs.on_cgroup_attach);
	if (!c->skel->links.on_cgroup_attach) {
		err = -errno;
		pr_err("cannot attach to cgroup_attach_task: %s", strerror(-err));
		goto cleanup;
	}
	if (o->new_cgroup_levels) {
		struct {
			struct bpf_program *prog;
			struct bpf_link **link;
			const char *tp;
		} hooks[] = {
			{ c->skel->progs.on_cgroup_mkdir, &c->skel->links.on_cgroup_mkdir, "cgroup_mkdir" },
			{ c->skel->progs.on_cgroup_rmdir, &c->skel->links.on_cgroup_rmdir, "cgroup_rmdir" },
		};

		for (size_t i = 0; i < sizeof(hooks) / sizeof(hooks[0]); i++) {
			*hooks[i].link = bpf_program__attach(hooks[i].prog);
			if (!*hooks[i].link) {
				err = -errno;
				pr_err("cannot attach to %s: %s", hooks[i].tp, strerror(-err));
				goto cleanup;
			}
		}
		c->watch_changes = true;
	}
	err = collector__flush(c);
	if (err)
		goto cleanup;
	if (o->bpf_stats) {
		c->stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
		if (c->stats_fd < 0)
			pr_warn("cannot enable BPF run-time statistics (Linux 5.8+): %s",
				strerror(errno));
	}
	c->batch_ok = probe_batch(c);
	if (c->batch_ok) {
		c->batch = malloc((size_t)c->cg_rows * c->cg_value_size * READ_BATCH);
		if (!c->batch) {
			err = -ENOMEM;
			goto cleanup;
		}
	}
	*cp = c;
	return 0;

cleanup:
	collector__destroy(c);
	return err;
}

void collector__destroy(struct collector *c)
{
	if (!c)
		return;
	/* Links and programs first, so nothing reads the events while they close. */
	close_switch_events(c);
	cgtma__destroy(c->skel);
	if (c->stats_fd >= 0)
		close(c->stats_fd);
	if (c->fds)
		for (int i = 0; i < c->nr_cpus * c->nr_events; i++)
			if (c->fds[i] >= 0)
				close(c->fds[i]);
	free(c->fds);
	free(c->online);
	free(c->half);
	free(c->batch);
	free(c->charged);
	free(c->ids);
	free(c);
}

int collector__nr_cpus(const struct collector *c)
{
	return c->nr_cpus;
}

int collector__tracked_fd(const struct collector *c)
{
	return bpf_map__fd(c->skel->maps.cgroup_counts);
}

int collector__cgroup_rows(const struct collector *c)
{
	return c->cg_rows;
}

bool collector__cpu_online(const struct collector *c, int cpu)
{
	return cpu >= 0 && cpu < c->nr_cpus && c->online[cpu];
}

/*
 * A CPU that came online: a fresh start there. Its events go into the map only after the
 * BPF side has forgotten the readings of the events it had before (reads of an empty slot
 * leave the slice unread), so that no delta spans two events; the flush then starts its
 * slice.
 */
static int cpu_came_online(struct collector *c, int cpu)
{
	__u64 epoch = c->open_epoch;
	LIBBPF_OPTS(bpf_test_run_opts, opts, .flags = BPF_F_TEST_RUN_ON_CPU, .cpu = cpu,
		    .ctx_in = &epoch, .ctx_size_in = sizeof(epoch));
	int err;

	close_cpu_events(c, cpu);
	/* 1: a hook was mid-update there (it can be, on PREEMPT_RT); it ends in microseconds. */
	for (int try = 0;; try++) {
		if (bpf_prog_test_run_opts(bpf_program__fd(c->skel->progs.reset_cpu), &opts))
			return -errno;
		if (!opts.retval)
			break;
		if (try == 100)
			return -EBUSY;
		usleep(100);
	}
	err = open_cpu_events(c, cpu);
	if (!err && c->hook == SWITCH_HOOK_PERF_EVENT) {
		c->switch_fds[cpu] = perf_event_open(&switch_attr, cpu, -1);
		err = c->switch_fds[cpu] < 0 ? -errno : attach_switch_event(c, cpu);
	}
	if (err) {
		close_cpu_events(c, cpu);
		return err;
	}
	c->online[cpu] = true;
	if (c->o.verbose)
		pr_notice("CPU %d came online: counted from now", cpu);
	return 0;
}

/*
 * CPUs that came online since the last interval are counted from now on; those that went
 * offline keep the counts they had, and their events are closed (the kernel stops them: they
 * would not count again if the CPU came back).
 */
static void update_cpus(struct collector *c)
{
	bool *now = calloc(c->nr_cpus, sizeof(*now));

	if (!now || counted_cpus(c, now)) {
		free(now);
		return;		/* keep the CPUs as they were; try again next interval */
	}
	for (int cpu = 0; cpu < c->nr_cpus; cpu++) {
		int err;

		if (now[cpu] == c->online[cpu])
			continue;
		if (!now[cpu]) {
			close_cpu_events(c, cpu);
			c->online[cpu] = false;
			if (c->o.verbose)
				pr_notice("CPU %d went offline: its counts end with its last interval",
					  cpu);
			continue;
		}
		err = cpu_came_online(c, cpu);
		/* ENODEV: gone again already, or not ready: the next interval tries again. */
		if (err && err != -ENODEV && err != -ENXIO)
			pr_warn("CPU %d came online but cannot be counted: %s", cpu,
				strerror(-err));
	}
	free(now);
}

int collector__flush(struct collector *c)
{
	int fd = bpf_program__fd(c->skel->progs.flush_slice);
	bool tp_on = __atomic_load_n(&c->skel->bss->switch_tp_on, __ATOMIC_ACQUIRE);

	update_cpus(c);
	/* A new round of the half the CPUs move into (the BPF side's flush_round). */
	__atomic_fetch_add(&c->skel->bss->flush_round, 1, __ATOMIC_RELEASE);
	for (int cpu = 0; cpu < c->nr_cpus; cpu++) {
		LIBBPF_OPTS(bpf_test_run_opts, opts, .flags = BPF_F_TEST_RUN_ON_CPU, .cpu = cpu);

		if (!c->online[cpu])
			continue;
		for (int try = 0;; try++) {
			if (bpf_prog_test_run_opts(fd, &opts)) {
				int err = -errno;

				/* A CPU gone offline since the last look has no slice to flush. */
				if (err == -ENXIO)
					break;
				pr_err("cannot flush CPU %d: %s%s", cpu, strerror(-err),
				       err == -EINVAL || err == -EOPNOTSUPP ?
					       " (running a program on a given CPU needs Linux 5.10+)" :
					       "");
				return err;
			}
			/*
			 * 1: a hook was in the middle of an update there (on PREEMPT_RT the
			 * cgroup hooks can be interrupted); it ends within microseconds.
			 */
			if (!opts.retval)
				break;
			if (try == 1000) {
				pr_err("cannot flush CPU %d: a BPF hook there stays busy", cpu);
				return -EBUSY;
			}
			usleep(10);
		}
	}
	/* Every CPU has closed its epoch: the reads see that half, which nothing writes now. */
	c->closed_epoch = c->open_epoch;
	c->open_epoch ^= 1;
	switch_hook_missed(c, tp_on);
	return 0;
}

int collector__read_times(struct collector *c, __u64 *out)
{
	if (bpf_map_lookup_elem(bpf_map__fd(c->skel->maps.read_times), &c->closed_epoch, out))
		return -errno;
	return 0;
}

int collector__closed_epoch(const struct collector *c)
{
	return c->closed_epoch;
}

/*
 * After a change to cgroup_counts' keys: the BPF side's charge caches look up again whether
 * a cgroup is tracked (the change is in the map before the generation moves).
 */
static void tracked_changed(struct collector *c)
{
	__atomic_fetch_add(&c->skel->bss->tracked_gen, 1, __ATOMIC_RELEASE);
}

int collector__track(struct collector *c, __u64 id)
{
	int fd = bpf_map__fd(c->skel->maps.cgroup_counts);
	void *zero = calloc(c->cg_rows, c->cg_value_size);
	int err = 0;

	if (!zero)
		return -ENOMEM;
	/*
	 * Per-CPU values of a non-preallocated hash come from the kernel's BPF allocator, which
	 * refills its caches and the percpu pool asynchronously: a burst of inserts can see
	 * ENOMEM while memory is plentiful. Give the refill a moment.
	 */
	for (int tries = 0;; tries++) {
		if (!bpf_map_update_elem(fd, &id, zero, BPF_NOEXIST)) {
			c->nr_inserted++;
			break;
		}
		if (errno == EEXIST) {
			/*
			 * The mkdir hook's: counted since its birth, and perhaps listed in a
			 * half read before the caller knew the cgroup. Every cgroup is read in
			 * both halves once. (An insert of ours is counted from now, in the open
			 * half, which the next read lists.)
			 */
			c->full_reads = 2;
			break;
		}
		if (errno != ENOMEM || tries == 100) {
			err = -errno;
			break;
		}
		usleep(1000 << (tries < 4 ? tries : 4));
	}
	free(zero);
	if (!err)
		tracked_changed(c);
	return err;
}

int collector__untrack(struct collector *c, __u64 id)
{
	int fd = bpf_map__fd(c->skel->maps.cgroup_counts);

	if (bpf_map_delete_elem(fd, &id)) {
		if (errno != ENOENT)
			return -errno;
	} else if (c->nr_inserted > 0) {
		c->nr_inserted--;
	}
	tracked_changed(c);
	return 0;
}

/* Per-CPU map values come back as nr_cpus values, each rounded up to 8 bytes: ours are. */
int collector__read_cpus(struct collector *c, struct cgtma_count *out)
{
	if (bpf_map_lookup_elem(bpf_map__fd(c->skel->maps.cpu_counts), &c->closed_epoch, out))
		return -errno;
	return 0;
}

/*
 * The closed epoch's counts of one cgroup's value or an interrupt scope's: rows values (one
 * per CPU, or one), each stride bytes holding both epochs, epoch 0 first.
 */
static const struct cgtma_count *closed_half(struct collector *c, const void *value,
					     size_t stride, int rows)
{
	for (int row = 0; row < rows; row++)
		memcpy(&c->half[row * c->nr_events],
		       (const char *)value + row * stride + c->closed_epoch * c->value_size,
		       c->value_size);
	return c->half;
}

int collector__read_irq(struct collector *c, int irq, struct cgtma_count *out)
{
	__u32 key = irq;
	void *values = malloc(c->nr_cpus * 2 * c->value_size);

	if (!values)
		return -ENOMEM;
	if (bpf_map_lookup_elem(bpf_map__fd(c->skel->maps.irq_counts), &key, values)) {
		int err = -errno;

		free(values);
		return err;
	}
	memcpy(out, closed_half(c, values, 2 * c->value_size, c->nr_cpus),
	       c->nr_cpus * c->value_size);
	free(values);
	return 0;
}

static int read_cgroups_batch(struct collector *c, collector_cgroup_cb cb, void *ctx)
{
	int fd = bpf_map__fd(c->skel->maps.cgroup_counts);
	size_t per_key = c->cg_rows * c->cg_value_size;
	__u64 keys[READ_BATCH], in_batch, out_batch;
	char *values = c->batch;
	bool first = true, done = false;
	int err = 0;

	while (!done && !err) {
		__u32 count = READ_BATCH;

		if (bpf_map_lookup_batch(fd, first ? NULL : &in_batch, &out_batch, keys, values,
					 &count, NULL)) {
			if (errno != ENOENT) {
				err = -errno;
				break;
			}
			done = true;	/* ENOENT: the last batch, possibly partial */
		}
		for (__u32 i = 0; i < count && !err; i++)
			err = cb(keys[i], closed_half(c, values + i * per_key, c->cg_value_size,
						      c->cg_rows), ctx);
		in_batch = out_batch;
		first = false;
	}
	return err;
}

/* Every cgroup in the map, batch by batch where the kernel can, else key by key. */
static int read_cgroups_all(struct collector *c, collector_cgroup_cb cb, void *ctx)
{
	int fd = bpf_map__fd(c->skel->maps.cgroup_counts);
	void *values;
	__u64 key, next;
	bool first = true;
	int err = 0;

	c->reads_all++;
	if (c->batch_ok)
		return read_cgroups_batch(c, cb, ctx);
	values = malloc(c->cg_rows * c->cg_value_size);
	if (!values)
		return -ENOMEM;
	while (!err && bpf_map_get_next_key(fd, first ? NULL : &key, &next) == 0) {
		first = false;
		key = next;
		if (bpf_map_lookup_elem(fd, &key, values))
			continue;	/* removed between the two calls */
		err = cb(key, closed_half(c, values, c->cg_value_size, c->cg_rows), ctx);
	}
	free(values);
	return err;
}

static int cmp_u64(const void *a, const void *b)
{
	__u64 x = *(const __u64 *)a, y = *(const __u64 *)b;

	return x < y ? -1 : x > y;
}

/*
 * The cgroups the CPUs charged in the closed half, once each, into c->ids: how many, or -1
 * when a list overflowed (or cannot be read) and every cgroup must be read.
 */
static long charged_ids(struct collector *c)
{
	int fd = bpf_map__fd(c->skel->maps.charged_ids);
	long n = 0, u = 0;

	if (bpf_map_lookup_elem(fd, &c->closed_epoch, c->charged))
		return -1;
	for (int cpu = 0; cpu < c->nr_cpus; cpu++) {
		const struct cgtma_charged *l = &c->charged[cpu];

		if (l->nr > CGTMA_CHARGED_MAX)
			return -1;
		memcpy(&c->ids[n], l->ids, l->nr * sizeof(*l->ids));
		n += l->nr;
	}
	/* A cgroup charged on several CPUs is on several lists. */
	qsort(c->ids, n, sizeof(*c->ids), cmp_u64);
	for (long i = 0; i < n; i++)
		if (!u || c->ids[u - 1] != c->ids[i])
			c->ids[u++] = c->ids[i];
	return u;
}

int collector__read_cgroups(struct collector *c, collector_cgroup_cb cb, void *ctx)
{
	int fd = bpf_map__fd(c->skel->maps.cgroup_counts);
	void *values;
	long n = charged_ids(c);
	int err = 0;

	/*
	 * One lookup per cgroup listed costs a system call each; a batch lookup copies every
	 * cgroup for a few. Below a quarter of those tracked, the lookups are cheaper.
	 */
	if (c->full_reads > 0 || n < 0 || n * 4 > c->nr_inserted) {
		if (c->full_reads > 0)
			c->full_reads--;
		return read_cgroups_all(c, cb, ctx);
	}
	c->reads_listed++;
	values = c->batch ? c->batch : malloc(c->cg_rows * c->cg_value_size);
	if (!values)
		return -ENOMEM;
	for (long i = 0; i < n && !err; i++) {
		if (bpf_map_lookup_elem(fd, &c->ids[i], values))
			continue;	/* no longer tracked */
		err = cb(c->ids[i], closed_half(c, values, c->cg_value_size, c->cg_rows), ctx);
	}
	if (values != c->batch)
		free(values);
	return err;
}

void collector__cgroup_reads(const struct collector *c, long *listed, long *all)
{
	*listed = c->reads_listed;
	*all = c->reads_all;
}

bool collector__cgroups_changed(struct collector *c, __u64 *seen)
{
	__u64 now;

	if (!c->watch_changes)
		return true;
	now = __atomic_load_n(&c->skel->bss->cgroup_changes, __ATOMIC_ACQUIRE);
	if (now == *seen)
		return false;
	*seen = now;
	return true;
}

int collector__pop_new_cgroup(struct collector *c, struct cgtma_new_cgroup *out)
{
	int fd = bpf_map__fd(c->skel->maps.new_cgroups);
	__u64 key;

	if (bpf_map_get_next_key(fd, NULL, &key))
		return -ENOENT;
	if (bpf_map_lookup_and_delete_elem(fd, &key, out)) {
		/* Hash maps gained lookup-and-delete in 5.14. */
		if (bpf_map_lookup_elem(fd, &key, out))
			return -errno;
		bpf_map_delete_elem(fd, &key);
	}
	return 0;
}

int collector__read_stats(struct collector *c, __u64 out[CGTMA_STAT_MAX])
{
	int fd = bpf_map__fd(c->skel->maps.stats);
	__u64 *per_cpu = calloc(c->nr_cpus, sizeof(__u64));

	if (!per_cpu)
		return -ENOMEM;
	for (__u32 s = 0; s < CGTMA_STAT_MAX; s++) {
		out[s] = 0;
		if (bpf_map_lookup_elem(fd, &s, per_cpu))
			continue;
		for (int cpu = 0; cpu < c->nr_cpus; cpu++)
			out[s] += per_cpu[cpu];
	}
	free(per_cpu);
	return 0;
}

int collector__hook_runtime(struct collector *c, __u64 *run_time_ns, __u64 *run_cnt)
{
	struct bpf_program *progs[2] = { c->skel->progs.on_switch,
					 c->skel->progs.on_cgroup_switch };

	*run_time_ns = *run_cnt = 0;
	/* Both with -T and the perf-event hook, and with its fallback. */
	for (int i = 0; i < 2; i++) {
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);

		if (!bpf_program__autoload(progs[i]))
			continue;
		if (bpf_obj_get_info_by_fd(bpf_program__fd(progs[i]), &info, &len))
			return -errno;
		*run_time_ns += info.run_time_ns;
		*run_cnt += info.run_cnt;
	}
	return 0;
}

int collector__read_tasks(struct collector *c, collector_task_cb cb, void *ctx)
{
	int fd = bpf_map__fd(c->skel->maps.task_counts);
	struct cgtma_task_key key, next;
	struct cgtma_task *t;
	bool first = true;
	int err = 0;

	t = malloc(task_value_size(c));
	if (!t)
		return -ENOMEM;
	while (!err && bpf_map_get_next_key(fd, first ? NULL : &key, &next) == 0) {
		first = false;
		key = next;
		if (bpf_map_lookup_elem(fd, &key, t))
			continue;	/* removed between the two calls */
		t->comm[sizeof(t->comm) - 1] = '\0';
		err = cb(&key, t->pid, t->comm, &t->ev[c->closed_epoch * c->nr_events], ctx);
	}
	free(t);
	return err;
}

int collector__forget_task(struct collector *c, const struct cgtma_task_key *key)
{
	if (bpf_map_delete_elem(bpf_map__fd(c->skel->maps.task_counts), key) && errno != ENOENT)
		return -errno;
	return 0;
}

long collector__task_insert_error(const struct collector *c)
{
	return __atomic_load_n(&c->skel->bss->task_insert_error, __ATOMIC_RELAXED);
}

/*
 * Every slice that began with a switch or a move the hook did not see: charged to the cgroup
 * that ran it, its start may have been another's, on any hook (the perf-event hook's missed
 * samples; on any hook, a task moving itself where cgroup_mutex is not in kallsyms, or a
 * running task moved by another CPU).
 */
int collector__missed_slices(struct collector *c, __u64 *out)
{
	__u64 *per_cpu = calloc(c->nr_cpus, sizeof(__u64));
	__u32 key = CGTMA_STAT_UNSEEN;
	int err = 0;

	if (!per_cpu)
		return -ENOMEM;
	*out = 0;
	if (bpf_map_lookup_elem(bpf_map__fd(c->skel->maps.stats), &key, per_cpu))
		err = -errno;
	for (int cpu = 0; !err && cpu < c->nr_cpus; cpu++)
		*out += per_cpu[cpu];
	free(per_cpu);
	return err;
}

enum switch_hook collector__switch_hook(const struct collector *c)
{
	return c->hook;
}
