// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "collector.h"
#include "switchhook.h"
#include "log.h"
#include "perfev.h"
#include "probe.h"
#include "scale.h"
#include "cgtma.skel.h"

/* Cgroups read per batch lookup. */
#define READ_BATCH 64

struct collector {
	struct cgtma *skel;
	int nr_events;
	int nr_cpus;		/* possible */
	struct perfev *pe;	/* the counting events, and the cgroup-switches ones */
	size_t value_size;	/* nr_events * sizeof(struct cgtma_count): one epoch's counts */
	size_t cg_value_size;	/* a cgroup's value (on one CPU): CGTMA_CGROUP_VALUE_SIZE() */
	int cg_rows;		/* values a cgroup's lookup returns: 1, or nr_cpus when per CPU */
	long nr_inserted;	/* cgroups this process put in cgroup_counts, less those it
				 * took out: at most the entries (the mkdir hook adds more) */
	struct cgtma_charged *charged;	/* charged_ids, mapped: per CPU, both halves' lists */
	size_t charged_len;	/* the mapping's length */
	struct cgtma_misses *marks;	/* misses, mapped: per CPU, both halves' marks */
	size_t marks_len;
	char *cpu_totals;	/* cpu_counts, mapped: per CPU, both halves' totals */
	size_t cpu_totals_len;
	char *irq_totals;	/* irq_counts, mapped: per CPU and scope, both halves */
	size_t irq_totals_len;
	size_t irq_stride;	/* an irq_counts value: both halves, padded to a cache line */
	__u32 irq_mask;		/* --irq: the scopes counted */
	bool *changed;		/* per half and CPU: its counts in the half may have changed
				 * since the half was last read (collector__cpus_read()) */
	bool half_read;		/* the closed half was read since the last flush */
	struct cgtma_count *irq_still;	/* per scope and half: the sum of the CPUs not read */
	bool *still_of;		/* per half: the CPUs read when irq_still was summed */
	bool still_summed[2];	/* per half: irq_still was summed (still_of holds) */
	__u64 *ids;		/* the cgroups the lists name */
	long reads_listed, reads_all;	/* intervals read from the lists, and whole */
	int full_reads;		/* the next reads that read every cgroup (collector__track()) */
	__u32 open_epoch;	/* the half of the counts the CPUs write now */
	__u32 closed_epoch;	/* the half the last flush closed: what the reads return */
	struct cgtma_count *half;	/* per CPU: one cgroup's closed half, for the callback */
	bool batch_ok;		/* the kernel has BPF_MAP_LOOKUP_BATCH for per-CPU hashes */
	void *batch;		/* values of one batch lookup, kept between intervals */
	bool prealloc;		/* the per-cgroup maps are preallocated */
	int max_cgroups;	/* entries of the per-cgroup maps */
	int stats_fd;		/* BPF_ENABLE_STATS: run time is counted while it is open */
	enum switch_hook hook;	/* the one in use: tracepoint or perf-event */
	bool falls_back;	/* perf-event, with the tracepoint loaded as its fallback */
	bool miss_said;		/* the perf-event hook's first miss was said */
	bool watch_changes;	/* the mkdir and rmdir hooks are attached */
	bool per_cpu_cgroups;	/* -A with tracked cgroups: their counts per CPU */
	struct collector_setup su;	/* as opened: its cpus stay the caller's */
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

/*
 * Before 6.1 the kernel warns (WARN_ONCE, a splat in dmesg) when a raw tracepoint program,
 * as flush_slice is, uses a hash map that allocates at run time, and PREEMPT_RT kernels
 * refuse it: there, the maps are preallocated.
 */
static bool kernel_before_6_1(void)
{
	return probe_kernel_before(6, 1);
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

/*
 * For tests of the marks (tests/live/47-marks.sh): CGTMA_TEST_DROP_SWITCH=skip:N has the
 * perf-event hook's program leave every N-th run on a CPU and the next as if the kernel had
 * skipped them (there and back: only the count check finds them), miss:N every N-th as if
 * it had run and not seen the switch.
 */
static void test_drop_switch(struct collector *c)
{
	const char *v = getenv("CGTMA_TEST_DROP_SWITCH");
	unsigned int n;
	char how[8];

	if (!v || sscanf(v, "%7[a-z]:%u", how, &n) != 2 ||
	    (strcmp(how, "skip") != 0 && strcmp(how, "miss") != 0))
		return;
	c->skel->rodata->test_drop_every = n;
	c->skel->rodata->test_drop_counted = strcmp(how, "miss") == 0;
	pr_notice("CGTMA_TEST_DROP_SWITCH: the perf-event hook's program %s every %u-th run",
		  c->skel->rodata->test_drop_counted ? "ignores" : "skips", n);
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
		if (perfev__open_switches(c->pe, why, sizeof(why)) == 0) {
			unfit = switch_hook_unfit();
			dropped = unfit || !forced ? NULL :
				  switch_samples_dropped(perfev__online(c->pe),
								 c->nr_cpus, &unchecked);
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
			perfev__close_switches(c->pe);
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
				  "; the tracepoint takes over at the first switch it misses" :
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
	test_drop_switch(c);
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

static int attach_sched_switch(struct collector *c)
{
	int err;

	c->skel->links.on_switch = bpf_program__attach(c->skel->progs.on_switch);
	if (c->skel->links.on_switch)
		return 0;
	err = -errno;
	pr_err("cannot attach to sched_switch: %s", strerror(-err));
	return err;
}

/*
 * sched_switch is attached where it is the hook, and beside the perf-event hook with -T
 * (the switches inside a cgroup); under auto it waits, loaded, for the event's first miss.
 */
static int attach_switch_hook(struct collector *c)
{
	int err;

	if (c->hook == SWITCH_HOOK_TRACEPOINT || c->skel->rodata->per_task) {
		err = attach_sched_switch(c);
		if (err)
			return err;
	}
	if (c->hook == SWITCH_HOOK_PERF_EVENT)
		return perfev__attach_switches(c->pe, c->skel->progs.on_cgroup_switch,
					       bpf_map__fd(c->skel->maps.switch_events));
	return 0;
}

/*
 * After a flush: the perf-event hook's first miss. Under auto the BPF side has put the
 * tracepoint in charge (switch_tp_on): its program is attached now, and each CPU hands over
 * at its next switch. Once it was attached before a flush began (every switch in progress
 * then has ended since, so none waits for the event's program), the events go, and with them
 * their cost. Asked for by name, it is said once and kept.
 */
static void switch_hook_missed(struct collector *c, bool tp_attached_before)
{
	int cpu = __atomic_load_n(&c->skel->data->switch_miss_cpu, __ATOMIC_ACQUIRE);

	if (c->hook != SWITCH_HOOK_PERF_EVENT || cpu < 0)
		return;
	if (!c->falls_back) {
		if (!c->miss_said)
			pr_warn("--switch-hook=perf-event: it missed a switch on CPU %d (the "
				"kernel did not run its program there); kept as asked: each "
				"interval with a missed switch is marked not exact", cpu);
		c->miss_said = true;
		return;
	}
	if (!c->miss_said) {
		if (!c->skel->links.on_switch && attach_sched_switch(c))
			return;	/* said; the event goes on, marking what it misses */
		pr_warn("switch hook: the perf-event hook missed a switch on CPU %d (the kernel did "
			"not run its program there): the tracepoint (sched_switch) takes over on "
			"every CPU; the interval of the missed switch is marked not exact", cpu);
		c->miss_said = true;
	} else if (tp_attached_before) {
		perfev__close_switches(c->pe);
		c->hook = SWITCH_HOOK_TRACEPOINT;
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
static const char *maps_memory_hint(const struct collector *c, const struct collector_opts *o)
{
	static char s[512];
	int n;

	n = snprintf(s, sizeof(s), "the BPF maps ask for %.1f MB of kernel memory at load, "
		     "with %d event%s and %d possible CPUs; fewer events (-e, -l) lower it",
		     maps_load_bytes(c) / 1e6, c->nr_events, c->nr_events == 1 ? "" : "s",
		     c->nr_cpus);
	if (c->prealloc && n < (int)sizeof(s))
		n += snprintf(s + n, sizeof(s) - n, ", as --max-cgroups does (%d, preallocated "
			      "before Linux 6.1)", c->max_cgroups);
	if (c->per_cpu_cgroups && n < (int)sizeof(s))
		n += snprintf(s + n, sizeof(s) - n, "; -A keeps each cgroup's counts per "
			      "possible CPU: without it, once");
	if (o->per_task && n < (int)sizeof(s))
		snprintf(s + n, sizeof(s) - n, "; -T: --max-tasks");
	return s;
}

/*
 * The per-CPU state of the switches, which every possible CPU pays for, sized to the run's
 * events: the snapshot, the deltas and the charge cache's entries are declared for
 * CGTMA_MAX_EVENTS and end with their counts per event (runs of CGTMA_MAX_EVENTS counts: 3,
 * 1 and 1), trimmed here to nr_events each.
 */
static int size_cpu_state(struct collector *c)
{
	const struct {
		struct bpf_map *map;
		int runs;
	} maps[] = {
		{ c->skel->maps.snapshots, CGTMA_SNAPSHOT_COUNTS },
		{ c->skel->maps.deltas, 1 },
		{ c->skel->maps.charge_cache, 1 },
	};
	size_t unused = (CGTMA_MAX_EVENTS - c->nr_events) * sizeof(struct cgtma_count);

	for (size_t i = 0; i < sizeof(maps) / sizeof(maps[0]); i++) {
		int err = bpf_map__set_value_size(maps[i].map, bpf_map__value_size(maps[i].map) -
							       maps[i].runs * unused);

		if (err)
			return err;
	}
	return 0;
}

/* An array map (BPF_F_MMAPABLE) into *p, read-only, for the reads to look at in place. */
static int map_array(struct bpf_map *map, void **p, size_t *len)
{
	long page = sysconf(_SC_PAGESIZE);
	/* The kernel lays the values out 8-byte aligned, from the mapping's start. */
	size_t value = (bpf_map__value_size(map) + 7) / 8 * 8;
	void *m;

	*len = (bpf_map__max_entries(map) * value + page - 1) / page * page;
	m = mmap(NULL, *len, PROT_READ, MAP_SHARED, bpf_map__fd(map), 0);
	if (m == MAP_FAILED) {
		int err = -errno;

		*len = 0;
		pr_err("cannot map %s: %s", bpf_map__name(map), strerror(-err));
		return err;
	}
	*p = m;
	return 0;
}

/* The maps the reads look at in place: charged_ids, cpu_counts, irq_counts and misses. */
static int map_arrays(struct collector *c)
{
	void *p;
	int err;

	if ((err = map_array(c->skel->maps.charged_ids, &p, &c->charged_len)))
		return err;
	c->charged = p;
	if ((err = map_array(c->skel->maps.cpu_counts, &p, &c->cpu_totals_len)))
		return err;
	c->cpu_totals = p;
	if ((err = map_array(c->skel->maps.irq_counts, &p, &c->irq_totals_len)))
		return err;
	c->irq_totals = p;
	if ((err = map_array(c->skel->maps.misses, &p, &c->marks_len)))
		return err;
	c->marks = p;
	return 0;
}

/* What the kernel must have before anything is opened: 0, or -errno after saying what. */
static int check_kernel(const struct collector_setup *su)
{
	if (su->nr_events < 1 || su->nr_events > CGTMA_MAX_EVENTS) {
		pr_err("%d events requested; the limit is %d", su->nr_events,
			CGTMA_MAX_EVENTS);
		return -E2BIG;
	}
	if (access("/sys/kernel/btf/vmlinux", R_OK)) {
		pr_err("this kernel has no BTF (/sys/kernel/btf/vmlinux): cgtma needs a kernel "
		       "built with CONFIG_DEBUG_INFO_BTF=y, which Linux 5.5 and later export there");
		return -ENOTSUP;
	}
	return 0;
}

/* The per-CPU events (none opened yet) and the buffers that reads use: 0 or -errno, said. */
static int collector_new(const struct collector_opts *o, const struct collector_setup *su,
			 struct collector **cp)
{
	struct collector *c = calloc(1, sizeof(*c));
	int err;

	if (!c) {
		pr_err("the collector: out of memory");
		return -ENOMEM;
	}
	*cp = c;
	c->su = *su;
	c->nr_events = su->nr_events;
	c->per_cpu_cgroups = o->per_cpu && su->tracked_levels;
	c->stats_fd = -1;
	c->value_size = su->nr_events * sizeof(struct cgtma_count);
	c->irq_stride = (2 * c->value_size + 63) / 64 * 64;
	c->cg_value_size = CGTMA_CGROUP_VALUE_SIZE(su->nr_events);
	err = perfev__new(&(struct perfev_opts){
				  .nr_events = su->nr_events,
				  .attrs = su->attrs,
				  .group = su->group,
				  .names = su->names,
				  .cpus = su->cpus,
				  .verbose = o->verbose,
				  .cpu_changed = su->cpu_changed,
				  .cpu_changed_ctx = su->cpu_changed_ctx,
			  }, &c->pe);
	if (err)
		return err;
	c->nr_cpus = perfev__nr_cpus(c->pe);
	c->cg_rows = c->per_cpu_cgroups ? c->nr_cpus : 1;
	c->half = calloc(c->nr_cpus, c->value_size);
	c->ids = malloc(sizeof(*c->ids) * c->nr_cpus * CGTMA_CHARGED_MAX);
	c->changed = calloc(2 * c->nr_cpus, sizeof(*c->changed));
	c->irq_mask = o->irq_mask;
	c->irq_still = calloc(CGTMA_NR_IRQ * 2, c->value_size);
	c->still_of = calloc(2 * c->nr_cpus, sizeof(*c->still_of));
	if (!c->half || !c->ids || !c->changed || !c->irq_still || !c->still_of) {
		pr_err("the collector's read buffers for %d CPUs: out of memory", c->nr_cpus);
		return -ENOMEM;
	}
	return 0;
}

/*
 * Which event's enabled and running times each one shares, for the BPF side to read only
 * its counter (times_of): a member of a perf group its leader's, which the kernel schedules
 * with it; a software or tracepoint event, which is never multiplexed, those of the first
 * one such that leads its group; any other its own. The one it shares comes before it, so
 * that a slice's reading of it is at hand.
 */
static void share_times(struct collector *c)
{
	const int *group = c->su.group;
	int never_multiplexed = -1;

	for (int i = 0; i < c->nr_events; i++) {
		__u32 type = c->su.attrs[i].type;
		int j = i;

		if (i > 0 && group[i] == group[i - 1]) {
			while (j > 0 && group[j - 1] == group[i])
				j--;
		} else if (type == PERF_TYPE_SOFTWARE || type == PERF_TYPE_TRACEPOINT) {
			if (never_multiplexed < 0)
				never_multiplexed = i;
			j = never_multiplexed;
		}
		c->skel->rodata->times_of[i] = j;
	}
}

/*
 * Between open and load: the BPF side's read-only settings, the maps' sizes and layout, and
 * which programs load. 0 or -errno, said.
 */
static int configure(struct collector *c, const struct collector_opts *o)
{
	int err;

	c->skel->rodata->nr_events = c->nr_events;
	share_times(c);
	c->skel->rodata_levels->max_level = c->su.max_level;
	c->skel->rodata_levels->tracked_levels = c->su.tracked_levels;
	c->skel->rodata->new_cgroup_levels = c->su.new_cgroup_levels;
	c->skel->rodata->per_task = o->per_task;
	c->skel->rodata->cgroup_per_cpu = c->per_cpu_cgroups;
	c->prealloc = o->map_alloc == MAP_ALLOC_AUTO ? kernel_before_6_1() :
		      o->map_alloc == MAP_ALLOC_PREALLOC;
	c->max_cgroups = o->max_cgroups ? o->max_cgroups : c->prealloc ? 1024 : 16384;
	if (c->prealloc &&
	    ((err = bpf_map__set_map_flags(c->skel->maps.cgroup_counts, 0)) ||
	     (err = bpf_map__set_map_flags(c->skel->maps.new_cgroups, 0)) ||
	     (err = bpf_map__set_map_flags(c->skel->maps.task_counts, 0)))) {
		pr_err("cannot size the BPF maps: %s", strerror(-err));
		return err;
	}
	if ((err = bpf_map__set_max_entries(c->skel->maps.events, c->nr_cpus * c->nr_events)) ||
	    (err = bpf_map__set_value_size(c->skel->maps.cpu_counts, c->value_size)) ||
	    (err = bpf_map__set_max_entries(c->skel->maps.cpu_counts, 2 * c->nr_cpus)) ||
	    (err = bpf_map__set_type(c->skel->maps.cgroup_counts, c->per_cpu_cgroups ?
				     BPF_MAP_TYPE_PERCPU_HASH : BPF_MAP_TYPE_HASH)) ||
	    (err = bpf_map__set_value_size(c->skel->maps.cgroup_counts, c->cg_value_size)) ||
	    (err = bpf_map__set_value_size(c->skel->maps.irq_counts, c->irq_stride)) ||
	    (err = bpf_map__set_max_entries(c->skel->maps.irq_counts,
					    o->irq_mask ? c->nr_cpus * CGTMA_NR_IRQ : 1)) ||
	    (err = bpf_map__set_max_entries(c->skel->maps.irq_saved, o->irq_mask ? 4096 : 1)) ||
	    (err = size_cpu_state(c)) ||
	    (err = bpf_map__set_max_entries(c->skel->maps.cgroup_counts, c->max_cgroups)) ||
	    (err = bpf_map__set_max_entries(c->skel->maps.new_cgroups, c->max_cgroups)) ||
	    (err = bpf_map__set_max_entries(c->skel->maps.charged_ids, 2 * c->nr_cpus)) ||
	    (err = bpf_map__set_max_entries(c->skel->maps.misses, 2 * c->nr_cpus)) ||
	    (err = bpf_map__set_max_entries(c->skel->maps.switch_events, c->nr_cpus)) ||
	    (err = bpf_map__set_value_size(c->skel->maps.task_counts, task_value_size(c))) ||
	    (err = bpf_map__set_max_entries(c->skel->maps.task_counts, !o->per_task ? 1 :
					    o->max_tasks ? o->max_tasks : 4096))) {
		pr_err("cannot size the BPF maps: %s", strerror(-err));
		return err;
	}

	err = choose_switch_hook(c, o);
	if (err)
		return err;
	choose_irq_hooks(c, o);
	return 0;
}

/* Loads the programs and maps, and maps those read in place: 0, or -errno, said. */
static int load(struct collector *c, const struct collector_opts *o)
{
	struct timespec t0;
	int err;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	err = cgtma__load(c->skel);
	if (err == -EPERM && probe_kernel_before(5, 11) &&
	    !probe_capable(PROBE_CAP_SYS_RESOURCE)) {
		/* Memory cgroup accounting of BPF memory came in 5.11; before, RLIMIT_MEMLOCK. */
		pr_err("cannot load the BPF program: %s (before Linux 5.11 BPF maps count "
		       "against RLIMIT_MEMLOCK, and raising it needs CAP_SYS_RESOURCE: run as "
		       "root, add CAP_SYS_RESOURCE, or raise it with ulimit -l unlimited; %s)",
		       strerror(-err), maps_memory_hint(c, o));
		return err;
	}
	if (err == -ENOMEM || (err == -EPERM && probe_kernel_before(5, 11))) {
		/* The memory cgroup's limit (5.11+) or RLIMIT_MEMLOCK (before) refused a map. */
		pr_err("cannot load the BPF program: %s (%s)", strerror(-err),
		       maps_memory_hint(c, o));
		return err;
	}
	if (err == -EINVAL && !c->prealloc && kernel_before_6_1()) {
		/* The verifier's rule before 6.1 (check_map_prog_compatibility). */
		pr_err("cannot load the BPF program: %s (CGTMA_MAP_ALLOC=runtime: before Linux "
		       "6.1, PREEMPT_RT kernels and perf-event programs accept only "
		       "preallocated hash maps)", strerror(-err));
		return err;
	}
	if (err) {
		pr_err("cannot load the BPF program: %s%s", strerror(-err),
			o->verbose ? "" : " (run with -v to see the verifier's log)");
		return err;
	}
	if (o->verbose) {
		report_load(c, seconds_since(&t0));
		pr_notice("BPF: per-cgroup maps %s, %d entries", c->prealloc ?
			  "preallocated" : "allocated as cgroups come", c->max_cgroups);
		if (!probe_kallsyms_has("cgroup_mutex"))
			pr_notice("BPF: /proc/kallsyms has no address for cgroup_mutex (a kernel "
				  "without CONFIG_KALLSYMS_ALL, or no CAP_SYSLOG): a switch inside a "
				  "task's move to another cgroup charges the new one");
	}
	return map_arrays(c);
}

/* The hooks on cgroups: a task's move, and with new_cgroup_levels, mkdir and rmdir. */
static int attach_cgroup_hooks(struct collector *c)
{
	struct {
		struct bpf_program *prog;
		struct bpf_link **link;
		const char *tp;
	} hooks[] = {
		{ c->skel->progs.on_cgroup_attach, &c->skel->links.on_cgroup_attach,
		  "cgroup_attach_task" },
		{ c->skel->progs.on_cgroup_mkdir, &c->skel->links.on_cgroup_mkdir, "cgroup_mkdir" },
		{ c->skel->progs.on_cgroup_rmdir, &c->skel->links.on_cgroup_rmdir, "cgroup_rmdir" },
	};
	size_t n = c->su.new_cgroup_levels ? sizeof(hooks) / sizeof(hooks[0]) : 1;

	for (size_t i = 0; i < n; i++) {
		*hooks[i].link = bpf_program__attach(hooks[i].prog);
		if (!*hooks[i].link) {
			int err = -errno;

			pr_err("cannot attach to %s: %s", hooks[i].tp, strerror(-err));
			return err;
		}
	}
	c->watch_changes = c->su.new_cgroup_levels;
	return 0;
}

/*
 * Opens the counting events, attaches, then flushes: a CPU's first reading only starts its
 * slice, so nothing that ran before attach is attributed; the flush starts the CPUs that
 * have not switched yet. 0 or -errno, said.
 */
static int attach(struct collector *c, const struct collector_opts *o)
{
	int err;

	perfev_raise_fd_limit(c->nr_cpus * (c->nr_events + 1) + 256);
	if ((err = perfev__open_events(c->pe, bpf_map__fd(c->skel->maps.events))) ||
	    (err = attach_switch_hook(c)) ||
	    (err = attach_irq_hooks(c)) ||
	    (err = attach_cgroup_hooks(c)) ||
	    (err = collector__flush(c)))
		return err;
	if (o->bpf_stats) {
		c->stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
		if (c->stats_fd < 0)
			pr_warn("cannot enable BPF run-time statistics (Linux 5.8+): %s",
				strerror(errno));
	}
	c->batch_ok = probe_lookup_batch(bpf_map__fd(c->skel->maps.cgroup_counts),
					 (size_t)c->cg_rows * c->cg_value_size);
	if (c->batch_ok) {
		c->batch = malloc((size_t)c->cg_rows * c->cg_value_size * READ_BATCH);
		if (!c->batch) {
			pr_err("the collector's batch lookups of %d cgroups: out of memory",
			       READ_BATCH);
			return -ENOMEM;
		}
	}
	return 0;
}

int collector__open(const struct collector_opts *o, const struct collector_setup *su,
		    struct collector **cp)
{
	struct collector *c = NULL;
	int err;

	err = check_kernel(su);
	if (err)
		return err;
	libbpf_verbose = o->verbose;
	libbpf_set_print(libbpf_print);

	err = collector_new(o, su, &c);
	if (err)
		goto cleanup;
	c->skel = cgtma__open();
	if (!c->skel) {
		err = -errno;
		pr_err("cannot open the BPF object: %s", strerror(-err));
		goto cleanup;
	}
	err = configure(c, o);
	if (err)
		goto cleanup;
	err = load(c, o);
	if (err)
		goto cleanup;
	err = attach(c, o);
	if (err)
		goto cleanup;
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
	if (c->pe)
		perfev__close_switches(c->pe);
	cgtma__destroy(c->skel);
	if (c->stats_fd >= 0)
		close(c->stats_fd);
	perfev__destroy(c->pe);
	free(c->half);
	free(c->batch);
	if (c->charged)
		munmap(c->charged, c->charged_len);
	if (c->cpu_totals)
		munmap(c->cpu_totals, c->cpu_totals_len);
	if (c->irq_totals)
		munmap(c->irq_totals, c->irq_totals_len);
	if (c->marks)
		munmap(c->marks, c->marks_len);
	free(c->changed);
	free(c->irq_still);
	free(c->still_of);
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

int collector__levels_fd(const struct collector *c)
{
	return bpf_map__fd(c->skel->maps.rodata_levels);
}

int collector__cgroup_rows(const struct collector *c)
{
	return c->cg_rows;
}

bool collector__cpu_online(const struct collector *c, int cpu)
{
	return cpu >= 0 && cpu < c->nr_cpus && perfev__online(c->pe)[cpu];
}

/*
 * Before a CPU that came online gets its new events: the BPF side forgets the readings of
 * the events it had (reads of an empty slot leave the slice unread), so that no delta spans
 * two events. 1: a hook was mid-update there (it can be, on PREEMPT_RT); it ends in
 * microseconds.
 */
static int forget_cpu(int cpu, void *ctx)
{
	struct collector *c = ctx;
	__u64 epoch = c->open_epoch;
	LIBBPF_OPTS(bpf_test_run_opts, opts, .flags = BPF_F_TEST_RUN_ON_CPU, .cpu = cpu,
		    .ctx_in = &epoch, .ctx_size_in = sizeof(epoch));

	for (int try = 0;; try++) {
		if (bpf_prog_test_run_opts(bpf_program__fd(c->skel->progs.reset_cpu), &opts))
			return -errno;
		if (!opts.retval) {
			/*
			 * It wrote its old readings' total into one half or the other: read both
			 * there, even if its new events then fail to open.
			 */
			c->changed[cpu] = c->changed[c->nr_cpus + cpu] = true;
			return 0;
		}
		if (try == 100)
			return -EBUSY;
		usleep(100);
	}
}

/* Marks in changed the CPUs online. */
static void mark_online(const struct collector *c, bool *changed, const bool *online)
{
	for (int cpu = 0; cpu < c->nr_cpus; cpu++)
		changed[cpu] |= online[cpu];
}

int collector__flush(struct collector *c)
{
	int fd = bpf_program__fd(c->skel->progs.flush_slice);
	bool tp_attached = c->skel->links.on_switch != NULL;
	const bool *online = perfev__online(c->pe);
	bool *closing = &c->changed[c->open_epoch * c->nr_cpus];

	/* The half read since the last flush: what changed there since is marked from here. */
	if (c->half_read)
		memset(&c->changed[c->closed_epoch * c->nr_cpus], 0,
		       c->nr_cpus * sizeof(*c->changed));
	c->half_read = false;
	/*
	 * Who wrote the half this flush closes: the CPUs online at the flush that opened it (one
	 * gone offline since wrote until it went) and at this one; one that came online wrote its
	 * old readings' total in either half (forget_cpu() marks both). The others' counts stand
	 * still, in both halves. Kept until the half is read.
	 */
	mark_online(c, closing, online);
	perfev__update_cpus(c->pe, forget_cpu, c);
	mark_online(c, closing, online);
	/* A new round of the half the CPUs move into (the BPF side's flush_round). */
	__atomic_fetch_add(&c->skel->bss->flush_round, 1, __ATOMIC_RELEASE);
	for (int cpu = 0; cpu < c->nr_cpus; cpu++) {
		LIBBPF_OPTS(bpf_test_run_opts, opts, .flags = BPF_F_TEST_RUN_ON_CPU, .cpu = cpu);

		if (!online[cpu])
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
	switch_hook_missed(c, tp_attached);
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

const bool *collector__cpus_read(const struct collector *c)
{
	return &c->changed[c->closed_epoch * c->nr_cpus];
}

/*
 * The closed epoch's counts in row row of values laid out from base, each stride bytes
 * holding both epochs, epoch 0 first: a cgroup's value per CPU, a CPU's totals, an
 * interrupt scope's on a CPU.
 */
static const struct cgtma_count *closed_row(const struct collector *c, const void *base,
					    size_t stride, int row)
{
	return (const void *)((const char *)base + row * stride + c->closed_epoch * c->value_size);
}

/* The closed half of the CPUs collector__cpus_read() names, in rows of out. */
static void read_cpu_rows(struct collector *c, const void *base, size_t stride,
			  struct cgtma_count *out)
{
	const bool *read = collector__cpus_read(c);

	c->half_read = true;
	for (int cpu = 0; cpu < c->nr_cpus; cpu++)
		if (read[cpu])
			memcpy(&out[cpu * c->nr_events], closed_row(c, base, stride, cpu),
			       c->value_size);
}

/* In place: the values are nr_events counts, a multiple of 8 bytes, as the mapping lays out. */
void collector__read_cpus(struct collector *c, struct cgtma_count *out)
{
	read_cpu_rows(c, c->cpu_totals, 2 * c->value_size, out);
}

/* A cgroup's value (rows: one per CPU, or one) into c->half, closed half only. */
static const struct cgtma_count *closed_half(struct collector *c, const void *value,
					     size_t stride, int rows)
{
	for (int row = 0; row < rows; row++)
		memcpy(&c->half[row * c->nr_events], closed_row(c, value, stride, row),
		       c->value_size);
	return c->half;
}

/* Where interrupt scope irq's rows (one per CPU) start in irq_counts, and their stride. */
static const char *irq_rows(const struct collector *c, int irq, size_t *stride)
{
	*stride = CGTMA_NR_IRQ * c->irq_stride;
	return c->irq_totals + irq * c->irq_stride;
}

static void add_counts(struct cgtma_count *to, const struct cgtma_count *from, int n)
{
	for (int i = 0; i < n; i++)
		count_add(&to[i], &from[i]);
}

/*
 * Per counted scope, the sum of the closed half's counts on the CPUs that
 * collector__cpus_read() leaves out: their counts stand still, so the sum holds while the
 * CPUs read in that half stay the same.
 */
static void sum_irq_still(struct collector *c, const bool *read)
{
	int half = c->closed_epoch, n = c->nr_events;

	for (int irq = 0; irq < CGTMA_NR_IRQ; irq++) {
		struct cgtma_count *still = &c->irq_still[(irq * 2 + half) * n];
		size_t stride;
		const char *rows = irq_rows(c, irq, &stride);

		if (!(c->irq_mask & (1U << irq)))
			continue;
		memset(still, 0, c->value_size);
		for (int cpu = 0; cpu < c->nr_cpus; cpu++)
			if (!read[cpu])
				add_counts(still, closed_row(c, rows, stride, cpu), n);
	}
	memcpy(&c->still_of[half * c->nr_cpus], read, c->nr_cpus * sizeof(*read));
	c->still_summed[half] = true;
}

void collector__read_irq(struct collector *c, int irq, struct cgtma_count *out, bool summed)
{
	const bool *read = collector__cpus_read(c);
	int n = c->nr_events, half = c->closed_epoch;
	size_t stride;
	const char *rows = irq_rows(c, irq, &stride);

	if (!summed) {
		read_cpu_rows(c, rows, stride, out);
		return;
	}
	c->half_read = true;
	/* The CPUs read, and those that stood still as summed when they were last read. */
	if (!c->still_summed[half] ||
	    memcmp(&c->still_of[half * c->nr_cpus], read, c->nr_cpus * sizeof(*read)))
		sum_irq_still(c, read);
	memcpy(out, &c->irq_still[(irq * 2 + half) * n], c->value_size);
	for (int cpu = 0; cpu < c->nr_cpus; cpu++)
		if (read[cpu])
			add_counts(out, closed_row(c, rows, stride, cpu), n);
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

/*
 * The entry of map fd after *key (first: the first entry) into *key and value: true, or
 * false past the last. An entry removed between finding its key and reading it is skipped.
 */
static bool next_elem(int fd, bool first, void *key, size_t key_size, void *value)
{
	union {
		__u64 cgroup;
		struct cgtma_task_key task;
	} next;		/* room for a key of either map read so */

	while (bpf_map_get_next_key(fd, first ? NULL : key, &next) == 0) {
		first = false;
		memcpy(key, &next, key_size);
		if (bpf_map_lookup_elem(fd, key, value) == 0)
			return true;
	}
	return false;
}

/* Every cgroup in the map, batch by batch where the kernel can, else key by key. */
static int read_cgroups_all(struct collector *c, collector_cgroup_cb cb, void *ctx)
{
	int fd = bpf_map__fd(c->skel->maps.cgroup_counts);
	void *values;
	__u64 key;
	int err = 0;

	c->reads_all++;
	if (c->batch_ok)
		return read_cgroups_batch(c, cb, ctx);
	values = malloc(c->cg_rows * c->cg_value_size);
	if (!values)
		return -ENOMEM;
	for (bool first = true; !err && next_elem(fd, first, &key, sizeof(key), values);
	     first = false)
		err = cb(key, closed_half(c, values, c->cg_value_size, c->cg_rows), ctx);
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
	long n = 0, u = 0;

	/* Every possible CPU's: one that went offline may have listed some before. */
	for (int cpu = 0; cpu < c->nr_cpus; cpu++) {
		const struct cgtma_charged *l = &c->charged[cpu * 2 + c->closed_epoch];
		/* Once: the mapping is shared, and a CPU late to its flush may still add. */
		__u32 nr = __atomic_load_n(&l->nr, __ATOMIC_ACQUIRE);

		if (nr > CGTMA_CHARGED_MAX)
			return -1;
		memcpy(&c->ids[n], l->ids, nr * sizeof(*l->ids));
		n += nr;
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

/* Stat s of the BPF side summed over the CPUs (per_cpu: room for nr_cpus): 0 or -errno. */
static int read_stat(struct collector *c, __u32 s, __u64 *per_cpu, __u64 *out)
{
	*out = 0;
	if (bpf_map_lookup_elem(bpf_map__fd(c->skel->maps.stats), &s, per_cpu))
		return -errno;
	for (int cpu = 0; cpu < c->nr_cpus; cpu++)
		*out += per_cpu[cpu];
	return 0;
}

/* A stat that cannot be read reads 0. */
int collector__read_stats(struct collector *c, __u64 out[CGTMA_STAT_MAX])
{
	__u64 *per_cpu = calloc(c->nr_cpus, sizeof(__u64));

	if (!per_cpu)
		return -ENOMEM;
	for (__u32 s = 0; s < CGTMA_STAT_MAX; s++)
		read_stat(c, s, per_cpu, &out[s]);
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
	struct cgtma_task_key key;
	struct cgtma_task *t;
	int err = 0;

	t = malloc(task_value_size(c));
	if (!t)
		return -ENOMEM;
	for (bool first = true; !err && next_elem(fd, first, &key, sizeof(key), t);
	     first = false) {
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

void collector__read_marks(struct collector *c, collector_mark_cb cb, void *ctx,
			   struct collector_marks *sum)
{
	const bool *read = collector__cpus_read(c);

	memset(sum, 0, sizeof(*sum));
	c->half_read = true;
	for (int cpu = 0; cpu < c->nr_cpus; cpu++) {
		const struct cgtma_misses *l = &c->marks[cpu * 2 + c->closed_epoch];
		__u32 nr;

		if (!read[cpu])
			continue;
		/* Once: a CPU late to its flush may still add (none does once all flushed). */
		nr = __atomic_load_n(&l->nr, __ATOMIC_ACQUIRE);
		sum->marks += nr;
		sum->slices += l->slices;
		sum->max_ns += l->max_ns;
		sum->unbounded += l->unbounded;
		for (__u32 i = 0; cb && i < nr && i < CGTMA_MISSES_MAX; i++)
			cb(cpu, &l->m[i], ctx);
	}
}

enum switch_hook collector__switch_hook(const struct collector *c)
{
	return c->hook;
}
