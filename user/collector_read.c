// SPDX-License-Identifier: GPL-2.0
/* The collector's reads: what the BPF side counted in the half the last flush closed. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "alloc.h"
#include "collector_internal.h"
#include "collector_read.h"
#include "log.h"
#include "scale.h"
#include "cgtma.skel.h"

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

/* The BPF side's own counters, summed over CPUs; a stat that cannot be read reads 0. */
static int read_stats(struct collector *c, __u64 out[CGTMA_STAT_MAX])
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

bool collector__noise(const struct collector *c)
{
	return c->su.noise;
}

bool collector__smt(const struct collector *c)
{
	return c->smt;
}

/* The keys of the closed half in noise_pairs, into c->noise_keys: how many, or -errno. */
static int closed_noise_keys(struct collector *c)
{
	int fd = bpf_map__fd(c->skel->maps.noise_pairs), n = 0;
	struct cgtma_noise_key key, next;
	bool first = true;

	while (!bpf_map_get_next_key(fd, first ? NULL : &key, &next)) {
		first = false;
		key = next;
		if (next.half != c->closed_epoch)
			continue;
		if (ALLOC_GROW(c->noise_keys, n + 1, c->cap_noise_keys))
			return -ENOMEM;
		c->noise_keys[n++] = next;
	}
	return errno == ENOENT ? n : -errno;
}

int collector__read_noise(struct collector *c, collector_noise_cb cb, void *ctx)
{
	int fd = bpf_map__fd(c->skel->maps.noise_pairs), n;
	struct cgtma_noise_pair pair;

	if (!c->su.noise)
		return 0;
	n = closed_noise_keys(c);
	if (n < 0)
		return n;
	/* Nothing writes the closed half: read, then deleted, nothing is lost between. */
	for (int i = 0; i < n; i++) {
		if (bpf_map_lookup_elem(fd, &c->noise_keys[i], &pair))
			continue;
		cb(&c->noise_keys[i], &pair, ctx);
		bpf_map_delete_elem(fd, &c->noise_keys[i]);
	}
	return 0;
}

void collector__say_stats(struct collector *c, bool cgroups)
{
	bool per_task = c->skel->rodata->per_task;
	bool verbose = log_verbose();
	__u64 st[CGTMA_STAT_MAX];

	if (read_stats(c, st))
		return;
	if (verbose)
		pr_notice("BPF: %llu slices charged at switches %s; %llu slices "
			  "(at switches or flushes) began with a switch the switch hook "
			  "did not see",
			  (unsigned long long)st[CGTMA_STAT_SLICES],
			  per_task ? "(-T: every switch)" : "between cgroups",
			  (unsigned long long)st[CGTMA_STAT_UNSEEN]);
	if (verbose && (st[CGTMA_STAT_HOOK_MISSED] || st[CGTMA_STAT_HOOK_SKIPPED]))
		pr_notice("BPF: the perf-event hook missed %llu switches, %llu of them runs of its "
			  "program the kernel skipped",
			  (unsigned long long)st[CGTMA_STAT_HOOK_MISSED],
			  (unsigned long long)st[CGTMA_STAT_HOOK_SKIPPED]);
	if (verbose)
		pr_notice("BPF: %llu charges went past a CPU's charge cache (the entry held "
			  "another cgroup's counts)",
			  (unsigned long long)st[CGTMA_STAT_CACHE_PASSED]);
	if (verbose && cgroups) {
		long listed, all;

		listed = c->reads_listed;
		all = c->reads_all;
		pr_notice("BPF maps: %ld intervals read only the cgroups the CPUs charged, %ld "
			  "read every tracked cgroup", listed, all);
	}
	if (verbose && c->irq_mask)
		pr_notice("BPF: --irq: %llu interrupt entries coalesced with the exit before them "
			  "(no reading); %llu interrupts came during an update and stayed with "
			  "what they interrupted; %llu exits without their entry or nested too deep",
			  (unsigned long long)st[CGTMA_STAT_IRQ_COALESCED],
			  (unsigned long long)st[CGTMA_STAT_IRQ_SKIPPED],
			  (unsigned long long)st[CGTMA_STAT_IRQ_UNMATCHED]);
	if (st[CGTMA_STAT_READ_ERRORS])
		pr_warn("%llu event reads failed in the kernel; each gap went to the next slice",
			(unsigned long long)st[CGTMA_STAT_READ_ERRORS]);
	if (st[CGTMA_STAT_TASKS_DROPPED])
		pr_warn("%llu slices were not counted per thread: the kernel's thread map was full "
			"(raise --max-tasks); the cgroups counted them",
			(unsigned long long)st[CGTMA_STAT_TASKS_DROPPED]);
	if (st[CGTMA_STAT_TASKS_FAILED])
		pr_warn("%llu slices were not counted per thread: the kernel could not add the "
			"thread's row then, with room in the map (the last error: %s); the cgroups "
			"counted them", (unsigned long long)st[CGTMA_STAT_TASKS_FAILED],
			strerror((int)-__atomic_load_n(&c->skel->bss->task_insert_error, __ATOMIC_RELAXED)));
	if (st[CGTMA_STAT_NEW_DROPPED])
		pr_warn("%llu new cgroups were not counted from birth (the maps were full: raise "
			"--max-cgroups); they were counted from the next interval on",
			(unsigned long long)st[CGTMA_STAT_NEW_DROPPED]);
	if (st[CGTMA_STAT_NOISE_DROPPED])
		pr_warn("%llu preemptions or SMT stretches between cgroups were not counted: more "
			"than %d pairs of cgroups met in an interval; the noise lines' preemptions, "
			"antagonists and SMT sharing are short by those",
			(unsigned long long)st[CGTMA_STAT_NOISE_DROPPED], CGTMA_NOISE_PAIRS);
}
