// SPDX-License-Identifier: GPL-2.0
/*
 * The sampler (sampler.h): sample events, the BPF program that counts their stacks per
 * tracked cgroup, and the reads that turn those counts into profiles.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "alloc.h"
#include "bpfload.h"
#include "env.h"
#include "events.h"
#include "hashmap.h"
#include "log.h"
#include "perfev.h"
#include "profile.h"
#include "sample.skel.h"
#include "sampler.h"
#include "symbolize.h"

struct sampler {
	struct sample *skel;
	const struct sample_events *ev;
	const bool *cpus;		/* sampler_opts' */
	int nr_cpus;
	bool *wanted;			/* per possible CPU: online and selected */
	bool *sampled;			/* per possible CPU: its events are open */
	/*
	 * A slot is a program (sample0 ..) and its event's fds; a slot whose event was refused
	 * is not used again (sampler__add_event() says why).
	 */
	struct perfev_progs events[SAMPLE_MAX_EVENTS];	/* per slot: on every sampled CPU */
	int slot_event[SAMPLE_MAX_EVENTS];	/* per slot: its index in ev, or -1 */
	int nr_slots;
	struct symbolizer *sym;
	struct ring_buffer *rb;		/* new processes, read by the thread below */
	pthread_t thread;
	bool thread_started;
	volatile bool stop;
	__u64 stats_read[SAMPLE_STAT_MAX];	/* sampler__stats() at the last read */
	int nr_events;			/* the programs loaded: the slots it may use */
	__u64 naming_ns;		/* CPU time the symbolizer took, both threads */
};

/* --- events ----------------------------------------------------------------------------- */

/* "NAME/period=N/" -> NAME and N; anything else is the name, with no period. */
static int split_period(const char *spec, char **name, uint64_t *period)
{
	const char *p = NULL, *q = spec;
	size_t n = strlen(spec);
	char *end;

	while ((q = strstr(q, "/period=")))
		p = q++;
	*period = 0;
	if (p && spec[n - 1] == '/' && !memchr(p + 8, '/', spec + n - 1 - (p + 8))) {
		errno = 0;
		*period = strtoull(p + 8, &end, 10);
		if (errno || end != spec + n - 1 || !*period || p[8] == '-') {
			pr_err("--sample '%s': the period is not a positive number", spec);
			return -EINVAL;
		}
		*name = strndup(spec, p - spec);
	} else {
		*name = strdup(spec);
	}
	return *name ? 0 : -ENOMEM;
}

/* The kernel's perf_event_max_sample_rate, or 0 when it cannot be read. */
static long max_sample_rate(void)
{
	FILE *f = fopen("/proc/sys/kernel/perf_event_max_sample_rate", "re");
	long rate = 0;

	if (f) {
		if (fscanf(f, "%ld", &rate) != 1)
			rate = 0;
		fclose(f);
	}
	return rate;
}

int sample_events_parse(const char *list, const char *dflt, int hz, struct sample_events *ev)
{
	char **specs = NULL, err[EVENT_ERR_LEN];
	long max_rate = max_sample_rate();
	int n, ret = 0;

	*ev = (struct sample_events){ .hz = hz };
	if (max_rate > 0 && hz > max_rate) {
		pr_err("-F %d: above the kernel's perf_event_max_sample_rate (%ld, "
		       "/proc/sys/kernel/perf_event_max_sample_rate)", hz, max_rate);
		return -EINVAL;
	}
	n = event_list_split(list && *list ? list : dflt, &specs);
	if (n < 0) {
		if (n == -EINVAL)
			pr_err("--sample '%s': an empty event in the list", list);
		return n;
	}
	if (n > SAMPLE_MAX_EVENTS) {
		pr_err("--sample '%s': %d events, at most %d", list, n, SAMPLE_MAX_EVENTS);
		ret = -EINVAL;
	}
	for (int i = 0; !ret && i < n; i++) {
		struct perf_event_attr *a = &ev->attrs[i];

		ret = split_period(specs[i], &ev->names[i], &ev->periods[i]);
		if (ret)
			break;
		ev->nr++;
		ret = event_parse(ev->names[i], a, err, sizeof(err));
		if (ret) {
			pr_err("--sample: event '%s': %s", ev->names[i], err);
			ret = ret == -ENOMEM ? ret : -EINVAL;
			break;
		}
		if (ev->periods[i]) {
			a->sample_period = ev->periods[i];
		} else {
			a->freq = 1;
			a->sample_freq = hz;
		}
	}
	event_list_free(specs, n);
	if (ret)
		sample_events_release(ev);
	return ret;
}

int sample_events_add(struct sample_events *ev, const char *name, const char *encoding,
		      int precise)
{
	struct perf_event_attr *a = &ev->attrs[ev->nr];
	char err[EVENT_ERR_LEN];
	int ret;

	if (ev->nr == SAMPLE_MAX_EVENTS)
		return -E2BIG;
	ret = event_parse(encoding, a, err, sizeof(err));
	if (ret) {
		pr_err("--sample: event '%s' (%s): %s", name, encoding, err);
		return ret;
	}
	ev->names[ev->nr] = strdup(name);
	if (!ev->names[ev->nr])
		return -ENOMEM;
	ev->periods[ev->nr] = 0;
	a->freq = 1;
	a->sample_freq = ev->hz;
	/*
	 * A precise (PEBS) event's stacks come from the sample's own callchain: the kernel
	 * refuses a program that walks stacks on a precise event without one (-EPROTO).
	 */
	a->precise_ip = precise;
	if (precise)
		a->sample_type |= PERF_SAMPLE_CALLCHAIN;
	ev->nr++;
	return 0;
}

void sample_events_pop(struct sample_events *ev)
{
	if (ev->nr)
		free(ev->names[--ev->nr]);
}

void sample_events_release(struct sample_events *ev)
{
	for (int i = 0; i < ev->nr; i++)
		free(ev->names[i]);
	ev->nr = 0;
}

/* --- lifecycle ------------------------------------------------------------------------- */

/* The calling thread's CPU time, in ns. */
static __u64 thread_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (__u64)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* What the symbolizer took since t0 (thread_ns()), added to naming_ns from either thread. */
static void naming_took(struct sampler *s, __u64 t0)
{
	__atomic_fetch_add(&s->naming_ns, thread_ns() - t0, __ATOMIC_RELAXED);
}

static int on_new_pid(void *ctx, void *data, size_t len)
{
	struct sampler *s = ctx;
	__u64 t0 = thread_ns();
	__u32 pid;

	if (len < sizeof(pid))
		return 0;
	memcpy(&pid, data, sizeof(pid));
	/* Gone already, or out of memory: its frames are then named by what is left. */
	symbolizer_note_pid(s->sym, (int)pid);
	naming_took(s, t0);
	return 0;
}

/* Reads new processes' maps as they are announced, so that short-lived ones resolve too. */
static void *pid_thread(void *arg)
{
	struct sampler *s = arg;

	while (!s->stop) {
		int n = ring_buffer__poll(s->rb, 100);

		if (n < 0 && n != -EINTR)
			break;
	}
	return NULL;
}

/* The program of slot i (sample0 .. sample7). */
static struct bpf_program *slot_prog(struct sampler *s, int i)
{
	static const char *const names[SAMPLE_MAX_EVENTS] = {
		"sample0", "sample1", "sample2", "sample3",
		"sample4", "sample5", "sample6", "sample7",
	};

	return bpf_object__find_program_by_name(s->skel->obj, names[i]);
}

/*
 * Opens slot i's event on cpu with its program attached: 0, or -errno, said when say (a CPU
 * tried again each interval says its failure once).
 */
static int open_one(struct sampler *s, int i, int cpu, bool say)
{
	int e = s->slot_event[i];
	const char *name = s->ev->names[e];
	int err = perfev_progs__open(&s->events[i], &s->ev->attrs[e], cpu);

	if (err) {
		if (say)
			pr_err("--sample: cannot open event '%s' on CPU %d: %s", name, cpu,
			       strerror(-err));
		return err;
	}
	err = perfev_progs__attach(&s->events[i], slot_prog(s, i), cpu);
	if (err && say)
		pr_err("--sample: cannot attach to event '%s' on CPU %d: %s", name, cpu,
		       strerror(-err));
	return err;
}

static void close_events(struct sampler *s, int cpu)
{
	for (int i = 0; i < s->nr_slots; i++)
		perfev_progs__close(&s->events[i], cpu);
	s->sampled[cpu] = false;
}

static int open_events(struct sampler *s, int cpu, bool say)
{
	int err = 0;

	/* Events left from before the CPU went offline would not sample again. */
	close_events(s, cpu);
	for (int i = 0; !err && i < s->nr_slots; i++)
		if (s->slot_event[i] >= 0)
			err = open_one(s, i, cpu, say);
	if (err)
		close_events(s, cpu);
	else
		s->sampled[cpu] = true;
	return err;
}

void sampler__close_cpu(struct sampler *s, int cpu)
{
	s->wanted[cpu] = false;
	close_events(s, cpu);
}

int sampler__open_cpu(struct sampler *s, int cpu)
{
	s->wanted[cpu] = true;
	return open_events(s, cpu, true);
}

/*
 * A CPU that came online but could not be sampled then (sampler__open_cpu() said why: the
 * kernel lowered perf_event_max_sample_rate meanwhile, its PMU was not ready) is tried again
 * at each read, as the collector tries its own CPUs again.
 */
static void retry_cpus(struct sampler *s)
{
	for (int cpu = 0; cpu < s->nr_cpus; cpu++)
		if (s->wanted[cpu] && !s->sampled[cpu] && open_events(s, cpu, false) == 0)
			pr_notice("--sample: CPU %d is sampled from now", cpu);
}

int sampler__add_event(struct sampler *s, int e)
{
	int i = s->nr_slots, err = 0;

	if (i >= s->nr_events) {
		pr_err("--sample: event '%s': the sampler was loaded for %d events, none is left",
		       s->ev->names[e], s->nr_events);
		return -ENOSPC;
	}
	s->slot_event[i] = e;
	s->nr_slots++;
	for (int cpu = 0; !err && cpu < s->nr_cpus; cpu++)
		if (s->sampled[cpu])
			err = open_one(s, i, cpu, true);
	if (err) {
		/*
		 * The slot stays used: what its event sampled on the CPUs that opened it, in
		 * the moment before the failure, is dropped when read, not counted as the
		 * next event's.
		 */
		for (int cpu = 0; cpu < s->nr_cpus; cpu++)
			perfev_progs__close(&s->events[i], cpu);
		s->slot_event[i] = -1;
	}
	return err;
}

/* The kernel's names of ips[0..n) (ksyms.h's namer), by a test run of name_ksyms. */
static int name_ksyms(void *ctx, const uint64_t *ips, int n, const char **texts)
{
	struct sampler *s = ctx;
	struct sample__bss *b = s->skel->bss;
	LIBBPF_OPTS(bpf_test_run_opts, opts);
	int err;

	_Static_assert(KSYMS_NAMER_BATCH <= SAMPLE_KSYM_BATCH, "a namer's batch fits the program's");
	if (n > SAMPLE_KSYM_BATCH)
		return -EINVAL;
	memcpy(b->ksym_addrs, ips, (size_t)n * sizeof(*ips));
	b->ksym_nr = n;
	err = bpf_prog_test_run_opts(bpf_program__fd(s->skel->progs.name_ksyms), &opts);
	if (err)
		return err;
	for (int i = 0; i < n; i++)
		texts[i] = b->ksym_lens[i] > 0 && b->ksym_lens[i] <= SAMPLE_KSYM_LEN ?
			   b->ksym_texts[i] : NULL;
	return 0;
}

int sampler__open(const struct sampler_opts *o, struct sampler **sp)
{
	const struct sample_events *ev = o->events;
	struct timespec t0;
	struct sampler *s;
	bool *online = NULL;
	int err;

	s = calloc(1, sizeof(*s));
	if (!s) {
		pr_err("--sample: out of memory");
		return -ENOMEM;
	}
	s->ev = ev;
	s->cpus = o->cpus;
	s->nr_events = o->max_events > ev->nr ? o->max_events : ev->nr;
	s->nr_cpus = libbpf_num_possible_cpus();
	if (s->nr_cpus <= 0) {
		err = s->nr_cpus ? s->nr_cpus : -EIO;
		pr_err("--sample: cannot count possible CPUs: %s", strerror(-err));
		goto cleanup;
	}
	online = calloc(s->nr_cpus, sizeof(*online));
	s->wanted = calloc(s->nr_cpus, sizeof(*s->wanted));
	s->sampled = calloc(s->nr_cpus, sizeof(*s->sampled));
	err = online && s->wanted && s->sampled ? symbolizer_new(&s->sym, o->lines) : -ENOMEM;
	for (int i = 0; !err && i < s->nr_events; i++)
		err = perfev_progs__init(&s->events[i], s->nr_cpus);
	if (err) {
		pr_err("--sample: the events of %d CPUs: out of memory", s->nr_cpus);
		goto cleanup;
	}
	err = perfev_read_online_cpus(o->cpus, online, s->nr_cpus);
	if (err) {
		pr_err("--sample: cannot read /sys/devices/system/cpu/online: %s", strerror(-err));
		goto cleanup;
	}

	s->skel = sample__open();
	if (!s->skel) {
		err = -errno;
		pr_err("--sample: cannot open the sampling BPF object: %s", strerror(-err));
		goto cleanup;
	}
	err = bpf_map__reuse_fd(s->skel->maps.tracked, o->tracked_fd);
	if (err) {
		pr_err("--sample: cannot share the tracked cgroups' map: %s", strerror(-err));
		goto cleanup;
	}
	err = bpf_map__reuse_fd(s->skel->maps.rodata_levels, o->levels_fd);
	if (err) {
		pr_err("--sample: cannot share the tracked levels' map: %s", strerror(-err));
		goto cleanup;
	}
	s->skel->rodata->layout = o->layout;
	if (env.sample_max) {
		err = bpf_map__set_max_entries(s->skel->maps.counts0, env.sample_max);
		err = err ?: bpf_map__set_max_entries(s->skel->maps.counts1, env.sample_max);
		if (err) {
			pr_err("--sample-max %d: cannot size the counts maps: %s", env.sample_max,
			       strerror(-err));
			goto cleanup;
		}
	}
	for (int i = s->nr_events; i < SAMPLE_MAX_EVENTS; i++)
		bpf_program__set_autoload(slot_prog(s, i), false);
	/* Without bpf_snprintf() (before 5.13), kernel frames are named from /proc/kallsyms. */
	bpf_program__set_autoload(s->skel->progs.name_ksyms,
				  libbpf_probe_bpf_helper(BPF_PROG_TYPE_RAW_TRACEPOINT,
							  BPF_FUNC_snprintf, NULL) == 1);
	for (int e = 0; e < ev->nr; e++)
		s->slot_event[s->nr_slots++] = e;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	err = sample__load(s->skel);
	if (err) {
		pr_err("--sample: cannot load the sampling BPF program: %s", strerror(-err));
		goto cleanup;
	}
	if (log_verbose())
		bpfload_report("--sample: BPF", s->skel->obj, bpfload_seconds_since(&t0));
	if (bpf_program__fd(s->skel->progs.name_ksyms) >= 0)
		symbolizer_set_kernel_namer(s->sym, name_ksyms, s);

	for (int cpu = 0; cpu < s->nr_cpus; cpu++) {
		if (!online[cpu])
			continue;
		err = sampler__open_cpu(s, cpu);
		if (err)
			goto cleanup;
	}

	s->rb = ring_buffer__new(bpf_map__fd(s->skel->maps.new_pids), on_new_pid, s, NULL);
	if (!s->rb) {
		err = -errno;
		pr_err("--sample: cannot read the new processes' ring buffer: %s", strerror(-err));
		goto cleanup;
	}
	err = -pthread_create(&s->thread, NULL, pid_thread, s);
	if (err) {
		pr_err("--sample: cannot start the thread that reads new processes: %s",
		       strerror(-err));
		goto cleanup;
	}
	s->thread_started = true;
	free(online);
	*sp = s;
	return 0;
cleanup:
	free(online);
	sampler__destroy(s);
	return err;
}

void sampler__destroy(struct sampler *s)
{
	if (!s)
		return;
	if (s->thread_started) {
		s->stop = true;
		pthread_join(s->thread, NULL);
	}
	ring_buffer__free(s->rb);
	for (int e = 0; e < SAMPLE_MAX_EVENTS; e++)
		perfev_progs__release(&s->events[e]);
	free(s->wanted);
	free(s->sampled);
	sample__destroy(s->skel);
	symbolizer_free(s->sym);
	free(s);
}

/* --- reading --------------------------------------------------------------------------- */

/* A half's stack maps: where its stacks are, and those refused there (SAMPLE_STACK_SPILL). */
struct stack_fds {
	int stacks, spill;
};

/* A stack's addresses from the half's maps: how many (0 when id < 0 or not there). */
static int read_stack(const struct stack_fds *fds, __s32 id, uint64_t *ips)
{
	struct sample_stack spilled;
	__u32 key = id & ~SAMPLE_STACK_SPILL;
	int n = 0;

	if (id < 0)
		return 0;
	if (id & SAMPLE_STACK_SPILL) {
		if (bpf_map_lookup_elem(fds->spill, &key, &spilled))
			return 0;
		memcpy(ips, spilled.ips, sizeof(spilled.ips));
	} else if (bpf_map_lookup_elem(fds->stacks, &key, ips)) {
		return 0;
	}
	while (n < SAMPLE_MAX_DEPTH && ips[n])
		n++;
	return n;
}

/*
 * One read's user stacks, each named once per process. A sample is counted in every tracked
 * cgroup its task is in (nested ones), under one stack id: named once, its frames read the
 * same in all of them, though the process's maps may be read again between two of its keys
 * (by the thread that reads announced processes, or for an address outside them).
 */
struct named_stacks {
	struct hashmap index;		/* pid << 32 | stack id -> its entry in locs */
	int *locs;			/* entries: the frame count, then the frames */
	size_t nr_locs, cap_locs;
};

static void named_stacks_release(struct named_stacks *ns)
{
	hashmap_clear(&ns->index);
	free(ns->locs);
}

/* The user frames of k's stack, leaf first, as locations of p, into locs: how many or -errno. */
static int user_frames(struct sampler *s, struct profile *p, struct named_stacks *ns,
		       const struct stack_fds *fds, const struct sample_key *k, int *locs)
{
	uint64_t ips[SAMPLE_MAX_DEPTH], id = (uint64_t)k->pid << 32 | (__u32)k->ustack;
	int at = k->ustack >= 0 ? hashmap_get_u64(&ns->index, id) : -1;
	int n;

	if (at >= 0) {
		n = ns->locs[at];
		memcpy(locs, &ns->locs[at + 1], (size_t)n * sizeof(*locs));
		return n;
	}
	n = read_stack(fds, k->ustack, ips);
	for (int i = 0; i < n; i++) {
		int l = symbolizer_user(s->sym, p, (int)k->pid, ips[i]);

		if (l < 0)
			return l;
		locs[i] = l;
	}
	if (k->ustack < 0)
		return n;
	if (ns->nr_locs + n + 1 > INT_MAX ||
	    ALLOC_GROW(ns->locs, ns->nr_locs + n + 1, ns->cap_locs) ||
	    hashmap_put_u64(&ns->index, id, (int)ns->nr_locs))
		return -ENOMEM;
	ns->locs[ns->nr_locs] = n;
	memcpy(&ns->locs[ns->nr_locs + 1], locs, (size_t)n * sizeof(*locs));
	ns->nr_locs += n + 1;
	return n;
}

/* The frames of one key, leaf first (kernel, then user), as locations of p. */
static int frames(struct sampler *s, struct profile *p, struct named_stacks *ns,
		  const struct stack_fds *fds, const struct sample_key *k, int *locs)
{
	uint64_t kips[SAMPLE_MAX_DEPTH];
	int nk = read_stack(fds, k->kstack, kips), nu;

	nk = symbolizer_kernel(s->sym, p, kips, nk, locs);
	if (nk < 0)
		return nk;
	nu = user_frames(s, p, ns, fds, k, locs + nk);
	return nu < 0 ? nu : nk + nu;
}

static int add_key(struct sampler *s, struct profile *p, sampler_scope_cb scope, void *ctx,
		   const struct stack_fds *fds, struct named_stacks *ns,
		   const struct sample_key *k, __u64 count)
{
	int locs[2 * SAMPLE_MAX_DEPTH];
	char comm[SAMPLE_COMM_LEN + 1];
	int e, sc, t, n;
	__u64 t0;

	if (k->event >= (__u32)s->nr_slots || (e = s->slot_event[k->event]) < 0)
		return 0;
	sc = scope(k->cgroup, p, ctx);
	if (sc == -1)
		return 0;
	if (sc < 0)
		return sc;
	t = profile_type(p, s->ev->names[e], s->ev->periods[e]);
	if (t < 0)
		return t;
	t0 = thread_ns();
	n = frames(s, p, ns, fds, k, locs);
	naming_took(s, t0);
	if (n < 0)
		return n;
	memcpy(comm, k->comm, sizeof(k->comm));
	comm[sizeof(k->comm)] = '\0';
	return profile_add_task(p, sc, k->pid, comm, locs, n, t, count);
}

/* Every key of map fd, into *keys (allocated): how many, or -errno. */
static int map_keys(int fd, size_t key_size, void **keys)
{
	char *buf = NULL, *prev = NULL;
	size_t cap = 0;
	int n = 0;

	for (;;) {
		if (ALLOC_GROW(buf, (size_t)(n + 1) * key_size, cap)) {
			free(buf);
			return -ENOMEM;
		}
		prev = n ? buf + (size_t)(n - 1) * key_size : NULL;
		if (bpf_map_get_next_key(fd, prev, buf + (size_t)n * key_size))
			break;
		n++;
	}
	*keys = buf;
	return n;
}

/* Empties a stack or spill map (keys: __u32 ids) for its half's next turn: 0 or -errno. */
static int empty_stacks(int fd)
{
	__u32 *ids = NULL;
	int n = map_keys(fd, sizeof(*ids), (void **)&ids);

	for (int i = 0; i < n; i++)
		bpf_map_delete_elem(fd, &ids[i]);
	free(ids);
	return n < 0 ? n : 0;
}

/*
 * What the kernel lost since the last read, into *lost. (Counted as the samples come, not per
 * half: a loss of the half being written now is the next read's.)
 */
static int read_lost(struct sampler *s, struct profile_lost *lost)
{
	__u64 now[SAMPLE_STAT_MAX];
	int err = sampler__stats(s, now);

	if (err)
		return err;
	lost->samples += now[SAMPLE_STAT_MAP_FULL] - s->stats_read[SAMPLE_STAT_MAP_FULL];
	lost->user_stacks += now[SAMPLE_STAT_USTACK_LOST] - s->stats_read[SAMPLE_STAT_USTACK_LOST];
	lost->kernel_stacks += now[SAMPLE_STAT_KSTACK_LOST] -
			       s->stats_read[SAMPLE_STAT_KSTACK_LOST];
	memcpy(s->stats_read, now, sizeof(now));
	return 0;
}

int sampler__read(struct sampler *s, struct profile *p, sampler_scope_cb scope, void *ctx)
{
	__u32 closed = s->skel->bss->half & 1;
	int counts_fd = bpf_map__fd(closed ? s->skel->maps.counts1 : s->skel->maps.counts0);
	struct stack_fds fds = {
		.stacks = bpf_map__fd(closed ? s->skel->maps.stacks1 : s->skel->maps.stacks0),
		.spill = bpf_map__fd(closed ? s->skel->maps.spill1 : s->skel->maps.spill0),
	};
	int inner = bpf_map__fd(s->skel->maps.flip_inner);
	struct named_stacks ns = { .index = HASHMAP_INIT };
	struct sample_key *keys = NULL;
	int n, emptied, err = 0;
	__u32 zero = 0;
	__u64 t0;

	retry_cpus(s);
	/*
	 * From here the kernel writes the other half: this one is read, then emptied, once the
	 * samples that read `half` before the flip have counted (sample.bpf.c's flip_wait).
	 */
	__atomic_store_n(&s->skel->bss->half, closed ^ 1, __ATOMIC_SEQ_CST);
	if (bpf_map_update_elem(bpf_map__fd(s->skel->maps.flip_wait), &zero, &inner, BPF_ANY))
		return -errno;
	n = map_keys(counts_fd, sizeof(*keys), (void **)&keys);
	if (n < 0)
		return n;
	for (int i = 0; i < n && !err; i++) {
		__u64 count;

		if (bpf_map_lookup_elem(counts_fd, &keys[i], &count) == 0 && count)
			err = add_key(s, p, scope, ctx, &fds, &ns, &keys[i], count);
	}
	named_stacks_release(&ns);
	for (int i = 0; i < n; i++)
		bpf_map_delete_elem(counts_fd, &keys[i]);
	free(keys);
	emptied = empty_stacks(fds.stacks);
	emptied = empty_stacks(fds.spill) ?: emptied;
	t0 = thread_ns();
	symbolizer_after_read(s->sym);
	naming_took(s, t0);
	return err ?: emptied ?: read_lost(s, &p->lost);
}

__u64 sampler__naming_ns(struct sampler *s)
{
	return __atomic_load_n(&s->naming_ns, __ATOMIC_RELAXED);
}

int sampler__kernel_symbols(const struct sampler *s, bool *by_kernel)
{
	return symbolizer_nr_kernel_symbols(s->sym, by_kernel);
}

int sampler__stats(struct sampler *s, __u64 *out)
{
	__u64 *v = calloc(s->nr_cpus, sizeof(*v));

	if (!v)
		return -ENOMEM;
	for (__u32 k = 0; k < SAMPLE_STAT_MAX; k++) {
		out[k] = 0;
		if (bpf_map_lookup_elem(bpf_map__fd(s->skel->maps.stats), &k, v) == 0)
			for (int c = 0; c < s->nr_cpus; c++)
				out[k] += v[c];
	}
	free(v);
	return 0;
}
