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

#include "bpfload.h"
#include "collector_internal.h"
#include "cpulist.h"
#include "env.h"
#include "irqhooks.h"
#include "log.h"
#include "perfev.h"
#include "probe.h"
#include "cgtma.skel.h"

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list args)
{
	if (level == LIBBPF_DEBUG || !log_verbose())
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
static const char *maps_memory_hint(const struct collector *c)
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
	if (env.per_task && n < (int)sizeof(s))
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
	if (su->events.nr_events < 1 || su->events.nr_events > CGTMA_MAX_EVENTS) {
		pr_err("%d events requested; the limit is %d", su->events.nr_events,
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
static int collector_new(const struct collector_setup *su, struct collector **cp)
{
	struct collector *c = calloc(1, sizeof(*c));
	int err;

	if (!c) {
		pr_err("the collector: out of memory");
		return -ENOMEM;
	}
	*cp = c;
	c->su = *su;
	c->nr_events = su->events.nr_events;
	c->per_cpu_cgroups = env.per_cpu && su->tracked_levels;
	c->stats_fd = -1;
	c->value_size = su->events.nr_events * sizeof(struct cgtma_count);
	c->irq_stride = (2 * c->value_size + 63) / 64 * 64;
	c->cg_value_size = CGTMA_CGROUP_VALUE_SIZE(su->events.nr_events);
	err = perfev__new(&su->events, &c->pe);
	if (err)
		return err;
	c->nr_cpus = perfev__nr_cpus(c->pe);
	c->cg_rows = c->per_cpu_cgroups ? c->nr_cpus : 1;
	c->half = calloc(c->nr_cpus, c->value_size);
	c->ids = malloc(sizeof(*c->ids) * c->nr_cpus * CGTMA_CHARGED_MAX);
	c->changed = calloc(2 * c->nr_cpus, sizeof(*c->changed));
	c->irq_mask = env.irq_mask;
	c->irq_still = calloc(CGTMA_NR_IRQ * 2, c->value_size);
	c->still_of = calloc(2 * c->nr_cpus, sizeof(*c->still_of));
	if (!c->half || !c->ids || !c->changed || !c->irq_still || !c->still_of) {
		pr_err("the collector's read buffers for %d CPUs: out of memory", c->nr_cpus);
		return -ENOMEM;
	}
	return 0;
}

static bool is_software(const struct collector *c, int i)
{
	__u32 type = c->su.events.attrs[i].type;

	return type == PERF_TYPE_SOFTWARE || type == PERF_TYPE_TRACEPOINT;
}

/*
 * Which event's enabled and running times each one shares, for the BPF side to read only
 * its counter (times_of): a member of a perf group its leader's, which the kernel schedules
 * with it; a group of software or tracepoint events alone, which is never multiplexed, those
 * of the first such group's leader; any other its own (a software event leading hardware
 * ones lives in the PMU's context, and is multiplexed with them). The one it shares comes
 * before it, so that a slice's reading of it is at hand.
 */
static void share_times(struct collector *c)
{
	const int *group = c->su.events.group;
	int never_multiplexed = -1;

	for (int i = 0; i < c->nr_events; i++) {
		bool software = is_software(c, i);
		int j = i;

		for (int k = i + 1; software && k < c->nr_events && group[k] == group[i]; k++)
			software = is_software(c, k);
		if (i > 0 && group[i] == group[i - 1]) {
			while (j > 0 && group[j - 1] == group[i])
				j--;
		} else if (software) {
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
static int configure(struct collector *c)
{
	int err;

	c->skel->rodata->nr_events = c->nr_events;
	share_times(c);
	c->skel->rodata_levels->max_level = c->su.max_level;
	c->skel->rodata_levels->tracked_levels = c->su.tracked_levels;
	c->skel->rodata->new_cgroup_levels = c->su.new_cgroup_levels;
	c->skel->rodata->per_task = env.per_task;
	c->skel->rodata->cgroup_per_cpu = c->per_cpu_cgroups;
	c->skel->rodata->noise_on = c->su.noise;
	/* The sampler's offsets (collector__sample_layout()): loaded only for it. */
	bpf_program__set_autoload(c->skel->progs.find_layout, env.sample);
	/*
	 * The kernel's lookup of cgroup_mutex where it has one (find_mutex()). The helper's
	 * probe takes a program type the kernel does not know (before 5.14) for a yes.
	 */
	bpf_program__set_autoload(c->skel->progs.find_cgroup_mutex,
				  libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_SYSCALL, NULL) == 1 &&
				  libbpf_probe_bpf_helper(BPF_PROG_TYPE_SYSCALL,
							  BPF_FUNC_kallsyms_lookup_name, NULL) == 1);
	c->prealloc = env.map_alloc == MAP_ALLOC_AUTO ? kernel_before_6_1() :
		      env.map_alloc == MAP_ALLOC_PREALLOC;
	c->max_cgroups = env.max_cgroups ? env.max_cgroups : c->prealloc ? 1024 : 16384;
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
					    env.irq_mask ? c->nr_cpus * CGTMA_NR_IRQ : 1)) ||
	    (err = bpf_map__set_max_entries(c->skel->maps.irq_saved, env.irq_mask ? 4096 : 1)) ||
	    (err = size_cpu_state(c)) ||
	    (err = bpf_map__set_max_entries(c->skel->maps.cgroup_counts, c->max_cgroups)) ||
	    (err = bpf_map__set_max_entries(c->skel->maps.new_cgroups, c->max_cgroups)) ||
	    (err = bpf_map__set_max_entries(c->skel->maps.charged_ids, 2 * c->nr_cpus)) ||
	    (err = bpf_map__set_max_entries(c->skel->maps.misses, 2 * c->nr_cpus)) ||
	    (err = bpf_map__set_max_entries(c->skel->maps.switch_events, c->nr_cpus)) ||
	    (err = bpf_map__set_max_entries(c->skel->maps.noise_cpus, c->nr_cpus)) ||
	    (err = bpf_map__set_max_entries(c->skel->maps.noise_pairs,
					    c->su.noise ? 2 * CGTMA_NOISE_PAIRS : 1)) ||
	    (err = bpf_map__set_value_size(c->skel->maps.task_counts, task_value_size(c))) ||
	    (err = bpf_map__set_max_entries(c->skel->maps.task_counts, !env.per_task ? 1 :
					    env.max_tasks ? env.max_tasks : 4096))) {
		pr_err("cannot size the BPF maps: %s", strerror(-err));
		return err;
	}

	err = switch_hooks_choose(&c->sw, c->skel, c->pe);
	if (err)
		return err;
	irq_hooks_choose(c->skel);
	return 0;
}

/*
 * cgroup_mutex's address for the BPF side (moves.bpf.h), after the load and before the
 * attach: from the kernel's own lookup (find_cgroup_mutex, Linux 5.16+), else from a scan
 * of /proc/kallsyms. Where the lookup ran, its answer stands: the file has the address
 * exactly where the lookup does. 0 where neither gives it (said with -v).
 */
static void find_mutex(struct collector *c)
{
	struct bpf_program *prog = c->skel->progs.find_cgroup_mutex;
	LIBBPF_OPTS(bpf_test_run_opts, opts);

	if (bpf_program__autoload(prog) &&
	    !bpf_prog_test_run_opts(bpf_program__fd(prog), &opts))
		return;
	c->skel->bss->cgroup_mutex_addr = probe_kallsyms_addr("cgroup_mutex");
}

/*
 * Loads the programs and maps, maps those read in place, and gives the BPF side
 * cgroup_mutex's address: 0, or -errno, said.
 */
static int load(struct collector *c)
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
		       strerror(-err), maps_memory_hint(c));
		return err;
	}
	if (err == -ENOMEM || (err == -EPERM && probe_kernel_before(5, 11))) {
		/* The memory cgroup's limit (5.11+) or RLIMIT_MEMLOCK (before) refused a map. */
		pr_err("cannot load the BPF program: %s (%s)", strerror(-err),
		       maps_memory_hint(c));
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
			log_verbose() ? "" : " (run with -v to see the verifier's log)");
		return err;
	}
	find_mutex(c);
	if (log_verbose()) {
		bpfload_report("BPF", c->skel->obj, bpfload_seconds_since(&t0));
		pr_notice("BPF: per-cgroup maps %s, %d entries", c->prealloc ?
			  "preallocated" : "allocated as cgroups come", c->max_cgroups);
		if (!c->skel->bss->cgroup_mutex_addr)
			pr_notice("BPF: the kernel gives no address for cgroup_mutex (a kernel "
				  "without CONFIG_KALLSYMS_ALL, or no CAP_SYSLOG): a switch inside a "
				  "task's move to another cgroup charges the new one");
	}
	return map_arrays(c);
}

/*
 * collector_setup.noise: each possible CPU's SMT sibling (the first other CPU its core's
 * thread_siblings_list names; a core of more threads shares with that one only), for the
 * BPF side to read the sibling's cgroup. A CPU whose topology is not there (offline, or a
 * kernel without it) has none. 0 or -errno, said.
 */
static int set_siblings(struct collector *c)
{
	int fd = bpf_map__fd(c->skel->maps.noise_cpus);
	bool *set = calloc(c->nr_cpus, sizeof(*set));
	char path[128];
	int err = 0;

	if (!set)
		return -ENOMEM;
	for (__u32 cpu = 0; cpu < (__u32)c->nr_cpus && !err; cpu++) {
		struct cgtma_noise_cpu v = { .sibling = CGTMA_NO_SIBLING };

		snprintf(path, sizeof(path),
			 "/sys/devices/system/cpu/cpu%u/topology/thread_siblings_list", cpu);
		memset(set, 0, c->nr_cpus * sizeof(*set));
		if (!cpulist_read(path, set, c->nr_cpus))
			for (int o = 0; o < c->nr_cpus; o++)
				if (set[o] && o != (int)cpu) {
					v.sibling = o;
					c->smt = true;
					break;
				}
		if (bpf_map_update_elem(fd, &cpu, &v, BPF_ANY)) {
			err = -errno;
			pr_err("cannot set CPU %u's SMT sibling for the noise: %s", cpu,
			       strerror(-err));
		}
	}
	free(set);
	return err;
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
static int attach(struct collector *c)
{
	int err;

	perfev_raise_fd_limit(c->nr_cpus * (c->nr_events + 1) + 256);
	if ((c->su.noise && (err = set_siblings(c))) ||
	    (err = perfev__open_events(c->pe, bpf_map__fd(c->skel->maps.events))) ||
	    (err = switch_hooks_attach(&c->sw)) ||
	    (err = irq_hooks_attach(c->skel)) ||
	    (err = attach_cgroup_hooks(c)) ||
	    (err = collector__flush(c)))
		return err;
	if (env.bpf_stats) {
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

int collector__open(const struct collector_setup *su, struct collector **cp)
{
	struct collector *c = NULL;
	int err;

	err = check_kernel(su);
	if (err)
		return err;
	libbpf_set_print(libbpf_print);

	err = collector_new(su, &c);
	if (err)
		goto cleanup;
	c->skel = cgtma__open();
	if (!c->skel) {
		err = -errno;
		pr_err("cannot open the BPF object: %s", strerror(-err));
		goto cleanup;
	}
	err = configure(c);
	if (err)
		goto cleanup;
	err = load(c);
	if (err)
		goto cleanup;
	err = attach(c);
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
	free(c->noise_keys);
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

int collector__sample_layout(const struct collector *c, struct cgtma_layout *l)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts);
	int err;

	err = bpf_prog_test_run_opts(bpf_program__fd(c->skel->progs.find_layout), &opts);
	if (err) {
		pr_err("--sample: cannot read the kernel's layout (find_layout): %s",
		       strerror(-err));
		return err;
	}
	if (opts.retval) {
		pr_err("--sample: this kernel's cgroup, kernfs_node or mm_struct fields are not "
		       "of the sizes the sampler reads");
		return -EOPNOTSUPP;
	}
	*l = c->skel->bss->layout;
	return 0;
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
	switch_hooks_flushed(&c->sw, tp_attached);
	return 0;
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
