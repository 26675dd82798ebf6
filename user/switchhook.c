// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <linux/types.h>
#include <bpf/libbpf.h>

#include "env.h"
#include "log.h"
#include "perfev.h"
#include "probe.h"
#include "smallfile.h"
#include "switchhook.h"
#include "cgtma.skel.h"

/* Whether a file holds a string (a short one: /proc and /sys). */
static bool file_has(const char *path, const char *what)
{
	char buf[4096];

	return smallfile_read(path, buf, sizeof(buf)) == 0 && strstr(buf, what) != NULL;
}

/*
 * How the kernel is fully preemptible, or NULL: PREEMPT_RT, a PREEMPT_DYNAMIC kernel in full
 * (or lazy) mode, or one built with PREEMPT.
 */
static const char *fully_preemptible(void)
{
	struct utsname u;

	if (uname(&u) == 0 && strstr(u.version, "PREEMPT_RT"))
		return "PREEMPT_RT";
	if (file_has("/sys/kernel/debug/sched/preempt", "(full)") ||
	    file_has("/sys/kernel/debug/sched/preempt", "(lazy)") ||
	    file_has("/proc/cmdline", "preempt=full") || file_has("/proc/cmdline", "preempt=lazy"))
		return "preempt=full";
	if (uname(&u) == 0 && strstr(u.version, " PREEMPT ") && !strstr(u.version, "DYNAMIC"))
		return "PREEMPT";
	return NULL;
}

/*
 * The probe of samples: on some kernels (a 6.18 build was seen doing it; Debian's 6.18 has
 * every sample) the samples of switches away from the idle task on one CPU never
 * arrive, though the event counts them. The hook would miss each switch out of idle there,
 * and the next task's cgroup would take the idle time before it: 0.4 s of a spinner
 * migrated to that idle CPU (tests/live/12-cpu-stat.sh, "E"). Probed with context-switches,
 * which the kernel emits from the same function as cgroup-switches, at the same point, and
 * which needs no other cgroup: sampled at every switch into a small ring buffer and counted
 * at once, on every CPU, while a thread pinned to it sleeps again and again (each wake-up a
 * switch out of idle, unless the CPU is busy: then its idle exits go unchecked, as none
 * happen). A kernel that drops samples has fewer in the buffer than its count.
 */
#define PROBE_SLEEPS 50
#define PROBE_SLEEP_US 200
#define PROBE_PAGES 8		/* 32 KiB of 16-byte samples: 2,000 switches */

struct sample_probe {
	int cpu;
	int fd;
	void *ring;		/* 1 + PROBE_PAGES pages */
};

static void *probe_sleeper(void *arg)
{
	const struct sample_probe *p = arg;
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(p->cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set) == 0)
		for (int i = 0; i < PROBE_SLEEPS; i++)
			usleep(PROBE_SLEEP_US);
	return NULL;
}

/*
 * What p's ring holds: the samples, and how many of them were switches away from the idle
 * task (pid 0: the task switched away from is the one running when the sample is taken).
 * -1 when it filled up (no verdict).
 */
static long probe_samples(const struct sample_probe *p, size_t page, long *idle)
{
	const struct perf_event_mmap_page *meta = p->ring;
	const char *data = (const char *)p->ring + page;
	__u64 head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
	long samples = 0;

	*idle = 0;
	if (head + 64 > PROBE_PAGES * page)
		return -1;
	for (__u64 off = 0; off < head;) {
		const struct perf_event_header *h = (const void *)(data + off);

		if (h->size == 0)
			break;
		if (h->type == PERF_RECORD_SAMPLE) {
			samples++;
			/* PERF_SAMPLE_TID: u32 pid, u32 tid after the header. */
			if (*(const __u32 *)(h + 1) == 0)
				(*idle)++;
		} else if (h->type == PERF_RECORD_LOST) {
			return -1;
		}
		off += h->size;
	}
	return samples;
}

enum probe_verdict { PROBE_UNKNOWN, PROBE_DELIVERED, PROBE_DROPPED };

/*
 * One round on the CPUs still unknown: each sampled and counted while its sleeper runs. A
 * CPU is settled when samples went missing (dropped) or a switch away from idle arrived
 * (delivered); one kept busy throughout stays unknown.
 */
static void probe_round(struct sample_probe *p, enum probe_verdict *v, const bool *online,
			int nr_cpus, char *why, size_t len)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_SW_CONTEXT_SWITCHES,
		.sample_period = 1,
		.sample_type = PERF_SAMPLE_TID,
		.disabled = 1,
		.wakeup_events = 1 << 30,	/* nobody reads it while it runs */
	};
	size_t page = sysconf(_SC_PAGESIZE), ring_len = (1 + PROBE_PAGES) * page;
	pthread_t *threads = calloc(nr_cpus, sizeof(*threads));
	bool *started = calloc(nr_cpus, sizeof(*started));

	if (!threads || !started)
		goto out;	/* no verdict; the load that follows fails on memory anyway */
	for (int cpu = 0; cpu < nr_cpus; cpu++) {
		p[cpu] = (struct sample_probe){ .cpu = cpu, .fd = -1, .ring = MAP_FAILED };
		if (!online[cpu] || v[cpu] != PROBE_UNKNOWN)
			continue;
		p[cpu].fd = perfev_open_event(&attr, cpu, -1);
		if (p[cpu].fd >= 0)
			p[cpu].ring = mmap(NULL, ring_len, PROT_READ | PROT_WRITE, MAP_SHARED,
					   p[cpu].fd, 0);
	}
	for (int cpu = 0; cpu < nr_cpus; cpu++)
		if (p[cpu].ring != MAP_FAILED)
			ioctl(p[cpu].fd, PERF_EVENT_IOC_ENABLE, 0);
	for (int cpu = 0; cpu < nr_cpus; cpu++)
		if (p[cpu].ring != MAP_FAILED)
			started[cpu] = pthread_create(&threads[cpu], NULL, probe_sleeper, &p[cpu]) == 0;
	for (int cpu = 0; cpu < nr_cpus; cpu++)
		if (started[cpu])
			pthread_join(threads[cpu], NULL);
	for (int cpu = 0; cpu < nr_cpus; cpu++) {
		long samples, idle;
		__u64 count;

		if (!started[cpu])
			continue;
		ioctl(p[cpu].fd, PERF_EVENT_IOC_DISABLE, 0);
		samples = probe_samples(&p[cpu], page, &idle);
		if (read(p[cpu].fd, &count, sizeof(count)) != sizeof(count) || samples < 0)
			continue;
		/* Both come from one call per switch: equal where nothing is dropped. */
		if ((__u64)samples * 10 < count * 9) {
			v[cpu] = PROBE_DROPPED;
			snprintf(why, len, "the kernel drops samples of software events at switches "
				 "on CPU %d (%ld of %llu arrived): the cgroup-switches event would "
				 "miss switches", cpu, samples, (unsigned long long)count);
		} else if (idle > 0) {
			v[cpu] = PROBE_DELIVERED;
		}
	}
out:
	for (int cpu = 0; threads && started && cpu < nr_cpus; cpu++) {
		if (p[cpu].ring != MAP_FAILED)
			munmap(p[cpu].ring, ring_len);
		if (p[cpu].fd >= 0)
			close(p[cpu].fd);
	}
	free(started);
	free(threads);
}

/* Rounds until every CPU is settled or one drops samples, at most this many. */
#define PROBE_ROUNDS 4

const char *switch_samples_dropped(const bool *online, int nr_cpus, int *unchecked)
{
	static char why[200];
	struct sample_probe *p = calloc(nr_cpus, sizeof(*p));
	enum probe_verdict *v = calloc(nr_cpus, sizeof(*v));
	const char *ret = NULL;

	*unchecked = -1;
	for (int round = 0; p && v && !ret && round < PROBE_ROUNDS; round++) {
		*unchecked = -1;
		probe_round(p, v, online, nr_cpus, why, sizeof(why));
		for (int cpu = 0; cpu < nr_cpus; cpu++) {
			if (online[cpu] && v[cpu] == PROBE_DROPPED)
				ret = why;
			if (online[cpu] && v[cpu] == PROBE_UNKNOWN && *unchecked < 0)
				*unchecked = cpu;
		}
		if (*unchecked < 0)
			break;
	}
	if (ret)
		*unchecked = -1;
	free(v);
	free(p);
	return ret;
}

const char *switch_hook_unfit(void)
{
	static char why[200];
	char line[256], name[64];
	int hierarchy, nr, enabled;
	const char *ret = "the kernel has no perf_event cgroup controller "
			  "(CONFIG_CGROUP_PERF): the cgroup-switches event never fires";
	const char *preempt;
	FILE *f;

	/*
	 * The kernel runs a perf event's BPF program only while no other BPF program or BPF
	 * map operation holds the CPU's bpf_prog_active; map operations from user space (any
	 * tool's, cgtma's own reads included) hold it with preemption enabled on a fully
	 * preemptible kernel, and a switch that preempts one runs no program: 4 % of a
	 * cgroup's counts went elsewhere on 6.1-rt (tests/live/18-switch-hook.sh).
	 */
	preempt = fully_preemptible();
	if (preempt) {
		snprintf(why, sizeof(why), "the kernel is fully preemptible (%s), and the kernel "
			 "skips the cgroup-switches event's program at a switch that preempts a BPF "
			 "map operation", preempt);
		return why;
	}
	if (!probe_kernel_btf())
		return "cannot read the kernel's BTF";
	if (!probe_btf_has_members((const char *const[][2]){ { "sched_entity", "cfs_rq" },
							     { "cfs_rq", "rq" } }, 2))
		return "the kernel has no CONFIG_FAIR_GROUP_SCHED: the hook cannot find the next task";

	/* The event compares perf_event cgroups: they are v2's only if the controller is. */
	f = fopen("/proc/cgroups", "re");
	if (!f)
		return "cannot read /proc/cgroups";
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%63s %d %d %d", name, &hierarchy, &nr, &enabled) != 4 ||
		    strcmp(name, "perf_event") != 0)
			continue;
		if (!enabled) {
			ret = "the perf_event cgroup controller is disabled (cgroup_disable=)";
		} else if (hierarchy != 0) {
			snprintf(why, sizeof(why), "the perf_event controller is bound to cgroup v1 "
				 "hierarchy %d: the cgroup-switches event compares its cgroups, not "
				 "v2's", hierarchy);
			ret = why;
		} else {
			ret = NULL;
		}
		break;
	}
	fclose(f);
	return ret;
}

/* --- the run's hook ----------------------------------------------------------------- */

/* For tests of the marks (tests/live/47-marks.sh): CGTMA_TEST_DROP_SWITCH (env.h). */
static void test_drop_switch(struct switch_hooks *sw)
{
	if (!env.test_drop_every)
		return;
	sw->skel->rodata->test_drop_every = env.test_drop_every;
	sw->skel->rodata->test_drop_counted = env.test_drop_counted;
	pr_notice("CGTMA_TEST_DROP_SWITCH: the perf-event hook's program %s every %u-th run",
		  env.test_drop_counted ? "ignores the switch of" :
		  "skips, with the run after it,", env.test_drop_every);
}

/*
 * Picks the switch hook before the load, so that the verifier sees only the programs in
 * use. Auto takes the perf-event hook wherever the kernel has it (5.13+, the perf_event
 * controller on v2, not fully preemptible), alone: no BPF runs at switches inside a cgroup.
 * It checks itself all run long, at every slice (one that ends in another cgroup than it
 * began in began with a switch it missed) and at every flush (its event's count against its
 * program's runs: the kernel skips the program at some switches, and drops the samples of
 * some at all on some kernels). At its first miss the BPF side hands the switches to
 * sched_switch, whose program is loaded from the start and attached then (pe_falls_back).
 * No probe at start decides it: a probe sees the missing samples only on CPUs that idle
 * while it runs, and the checks see them whenever they happen. Asked for by name, the
 * perf-event hook is kept whatever it misses (a user measuring its cost): the probe then
 * warns where it can tell, and the intervals where it missed are marked not exact.
 */
int switch_hooks_choose(struct switch_hooks *sw, struct cgtma *skel, struct perfev *pe)
{
	enum switch_hook asked = env.switch_hook;
	bool per_task = env.per_task, forced = asked == SWITCH_HOOK_PERF_EVENT;
	char why[256] = "";
	const char *unfit, *dropped = NULL;
	int unchecked = -1;

	sw->skel = skel;
	sw->pe = pe;
	sw->in_use = SWITCH_HOOK_TRACEPOINT;
	/*
	 * -T needs BPF at every switch: the tracepoint alone does it all, unless the perf-event
	 * hook is asked for (it then takes the switches between cgroups, the tracepoint those
	 * inside one). CGTMA_PER_TASK_AUTO=perf-event has auto pick it with -T as without,
	 * with its fallback: for tests of that pair.
	 */
	if (per_task && asked == SWITCH_HOOK_AUTO && !env.per_task_auto) {
		snprintf(why, sizeof(why), "--per-task ends a slice at every switch");
	} else if (asked != SWITCH_HOOK_TRACEPOINT) {
		/* The event first: a kernel without it (before 5.13) says so, whatever else. */
		if (perfev__open_switches(sw->pe, why, sizeof(why)) == 0) {
			unfit = switch_hook_unfit();
			dropped = unfit || !forced ? NULL :
				  switch_samples_dropped(perfev__online(sw->pe),
								 perfev__nr_cpus(sw->pe), &unchecked);
			if (dropped)
				pr_warn("--switch-hook=perf-event: %s; kept as asked: the time before a "
					"switch it misses goes to the cgroup that runs after it, and "
					"each interval with such a switch is marked not exact", dropped);
			if (unfit)
				snprintf(why, sizeof(why), "%s", unfit);
			else
				sw->in_use = SWITCH_HOOK_PERF_EVENT;
		}
		if (sw->in_use != SWITCH_HOOK_PERF_EVENT)
			perfev__close_switches(sw->pe);
	}
	if (forced && sw->in_use != SWITCH_HOOK_PERF_EVENT) {
		pr_err("--switch-hook=perf-event: %s", why);
		return -EOPNOTSUPP;
	}
	sw->falls_back = sw->in_use == SWITCH_HOOK_PERF_EVENT && !forced;
	if (log_verbose()) {
		if (sw->in_use == SWITCH_HOOK_PERF_EVENT)
			pr_notice("switch hook: perf-event (cgroup-switches on every CPU: BPF runs "
				  "at switches between cgroups)%s", sw->falls_back ?
				  "; the tracepoint takes over at the first switch it misses" :
				  "; kept whatever it misses (asked for by name)");
		else
			pr_notice("switch hook: tracepoint (sched_switch: BPF runs at every "
				  "switch)%s%s", *why ? ": " : "", why);
		if (unchecked >= 0)
			pr_notice("switch hook: CPU %d never went idle during the probe of samples: "
				  "its switches out of idle were not checked", unchecked);
	}
	sw->skel->rodata->pe_hook = sw->in_use == SWITCH_HOOK_PERF_EVENT;
	sw->skel->rodata->pe_falls_back = sw->falls_back;
	test_drop_switch(sw);
	bpf_program__set_autoload(sw->skel->progs.on_cgroup_switch,
				  sw->in_use == SWITCH_HOOK_PERF_EVENT);
	bpf_program__set_autoload(sw->skel->progs.on_switch, sw->in_use == SWITCH_HOOK_TRACEPOINT ||
				  per_task || sw->falls_back);
	/* The moves that are no misses matter to the perf-event hook alone. */
	if (sw->in_use != SWITCH_HOOK_PERF_EVENT) {
		int err = bpf_map__set_max_entries(sw->skel->maps.moved_to, 1);

		if (err) {
			pr_err("cannot size the BPF map moved_to: %s", strerror(-err));
			return err;
		}
	}
	return 0;
}

static int attach_sched_switch(struct switch_hooks *sw)
{
	int err;

	sw->skel->links.on_switch = bpf_program__attach(sw->skel->progs.on_switch);
	if (sw->skel->links.on_switch)
		return 0;
	err = -errno;
	pr_err("cannot attach to sched_switch: %s", strerror(-err));
	return err;
}

/*
 * sched_switch is attached where it is the hook, and beside the perf-event hook with -T
 * (the switches inside a cgroup); under auto it waits, loaded, for the event's first miss.
 */
int switch_hooks_attach(struct switch_hooks *sw)
{
	int err;

	if (sw->in_use == SWITCH_HOOK_TRACEPOINT || sw->skel->rodata->per_task) {
		err = attach_sched_switch(sw);
		if (err)
			return err;
	}
	if (sw->in_use == SWITCH_HOOK_PERF_EVENT)
		return perfev__attach_switches(sw->pe, sw->skel->progs.on_cgroup_switch,
					       bpf_map__fd(sw->skel->maps.switch_events));
	return 0;
}

/*
 * After a flush: the perf-event hook's first miss. Under auto the BPF side has put the
 * tracepoint in charge (switch_tp_on): its program is attached now, and each CPU hands over
 * at its next switch. Once it was attached before a flush began (every switch in progress
 * then has ended since, so none waits for the event's program), the events go, and with them
 * their cost. Asked for by name, it is said once and kept.
 */
void switch_hooks_flushed(struct switch_hooks *sw, bool tp_attached_before)
{
	int cpu = __atomic_load_n(&sw->skel->data->switch_miss_cpu, __ATOMIC_ACQUIRE);

	if (sw->in_use != SWITCH_HOOK_PERF_EVENT || cpu < 0 || sw->fallback_failed)
		return;
	if (!sw->falls_back) {
		if (!sw->miss_said)
			pr_warn("--switch-hook=perf-event: it missed a switch on CPU %d (the "
				"kernel did not run its program there); kept as asked: each "
				"interval with a missed switch is marked not exact", cpu);
		sw->miss_said = true;
		return;
	}
	if (!sw->miss_said) {
		if (!sw->skel->links.on_switch && attach_sched_switch(sw)) {
			/* Said once; the event goes on, marking what it misses. */
			sw->fallback_failed = true;
			return;
		}
		pr_warn("switch hook: the perf-event hook missed a switch on CPU %d (the kernel did "
			"not run its program there): the tracepoint (sched_switch) takes over on "
			"every CPU; the interval of the missed switch is marked not exact", cpu);
		sw->miss_said = true;
	} else if (tp_attached_before) {
		perfev__close_switches(sw->pe);
		sw->in_use = SWITCH_HOOK_TRACEPOINT;
	}
}
