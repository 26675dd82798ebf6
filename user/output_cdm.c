// SPDX-License-Identifier: GPL-2.0
/*
 * --cdm DIR: crucible's Common Data Model metric files, DIR/metric-data-cgtma.json and
 * DIR/metric-data-cgtma.csv (the rules: docs/crucible.md, "The Common Data Model's rules").
 *
 * The JSON is an array with one entry per series:
 *   {"idx": N, "desc": {"source": "cgtma", "class": "throughput", "type": T},
 *    "names": {"cgroup": P [, "irq": I] [, "container": NAME, "pod": NS/NAME]
 *              [, "cpu": "N"|"all"]}}
 * No "default-aggregation": CDM's v8dev index definitions, which crucible still serves,
 * reject the key and abort the whole run's indexing. Class is "throughput" for every series:
 * crucible's docs define "count" as accumulative (a running total), which none of cgtma's
 * values is, and its own tools label utilisation shares (mpstat Busy-CPU, iostat util,
 * nvidia-smi util) and rates "throughput".
 * The CSV has one row per series and interval, "idx,begin,end,value", no header.
 *
 * Series:
 * - every reported Top-Down node (levels 1..-l), type the node's name in lower-case
 *   kebab style as crucible's toplev integration named them (Frontend_Bound is
 *   frontend-bound, Memory_Bound memory-bound, L1_Bound l1-bound), value in percent (a share
 *   of the pipeline's slots: a utilisation);
 * - every flat metric the plan computes (IPC is ipc, CPI cpi, GHz ghz; sw's CPU_Utilization
 *   cpu-utilization, Context_Switches context-switches), value in the metric's unit (per
 *   cycle, GHz, CPUs, per second);
 * - with -e, every event as a rate: count per second, type the event's name in the same
 *   style;
 * - a cgroup's noise (interval.h's struct noise, docs/noise.md; over all CPUs), a series per
 *   field the kernel or the switch hook gave: "run-wait" (its threads' run-queue wait, s/s),
 *   "preempted" (times its tasks were preempted by another cgroup's, per second),
 *   "smt-shared" (time it ran beside another cgroup on its core, s/s) and "throttled"
 *   (cpu.max throttling, s/s); an interval where the field is absent writes no row for it.
 *   A thread's (-T) has task-run-wait and task-preempted (every preemption of it, by any
 *   task), as the threads' other types.
 * A type that would repeat another (a model file whose short names collide) uses the full
 * name (backend-bound-memory-bound-l1-bound).
 *
 * Names: "cgroup" holds the cgroup path; with -G, --all-cgroups, --all-containers or --irq
 * every series but a thread's (below) also has "container" (the container's name) and "pod"
 * ("NAMESPACE/NAME"), "none" where the cgroup is no container's or pod's (the system, a plain
 * cgroup, an interrupt). Without --irq the system is the root cgroup "/", which holds every
 * task and the interrupt work done in them: the root tracked explicitly (-G /) is the same
 * series, written once. With --irq (a run whose intervals hold irq scopes, from the first)
 * every series but a thread's also has "irq", and the three kinds of work are told apart by
 * the pair: an interrupt scope is {"cgroup": "none", "irq": "NET_RX"}, a cgroup (the root "/"
 * too, which then holds no interrupt work) {"cgroup": P, "irq": "none"}, and the system,
 * which is the root cgroup plus every irq scope, {"cgroup": "all", "irq": "all"}: a breakout
 * by either key never adds the system to the root cgroup. No path is "none" or "all" (paths
 * begin with "/"). These keys are ones CDM's index knows, and giving every series the same
 * keys keeps "cgroup" (and "irq", "cpu", "container", "pod") a breakout dimension for all
 * series of a type: CDM offers breakouts only on names every matching series has. With
 * --per-cpu every series also has "cpu": the CPU's number, or "all" for a scope summed over
 * CPUs.
 *
 * Threads (-T): each thread's series have the type of the cgroup's with "task-" before it
 * (task-cpu-clock, task-frontend-bound), so that no query of a cgroup type sums them with
 * the cgroup's, and the names "cgroup", "pid", "tid" and "cmd" (keys CDM's index knows; with
 * --per-cpu also "cpu": "all"): every series of a task- type has the same keys. "cmd" is the
 * name the thread had at its latest row: a thread that names itself after its first row
 * gets the JSON written again with its new name.
 *
 * Not exact (a slice began with a switch or move the hook did not see: cgtma(8), Exactness):
 * from the first interval with such a slice, one more series, type "missed-slices", names
 * the system's (as above), value the number of such slices in each interval, 0 in an exact
 * one. Its first row is 0 from the run's start up to that interval, so that the series
 * covers the whole run; a run whose intervals are all exact has no such series, and every
 * interval without a row of it is exact.
 *
 * Times are integer milliseconds since the Unix epoch, both ends inclusive. An interval
 * begins one millisecond after the previous one ended (the first one after the run's start)
 * and ends at its end. A series' first row begins where its interval begins; every later row
 * begins one millisecond after that series' previous row ended, so that each series covers
 * its time without gaps or overlaps, as CDM's queries need. An interval where a series has
 * no value (a node not counted: a cgroup that did not run, an event that never got a
 * counter) writes no row for it; the series' next row then covers that time too, as
 * toolbox's CDMMetrics does. An event's rate is known where its scope did not run: 0.
 * A scope that has no row at all in such intervals (a cgroup found by a glob, a thread)
 * gets that span of zero written before its next row, or at the run's end while it is
 * not gone (idle_gap()). Values are never NaN or Inf: such a value is skipped alike.
 * A rate is per second of its interval's row (end - begin + 1 milliseconds), so that rate
 * times row is the interval's count and a series adds up to the run's; the counts' own
 * span, which the other outputs divide by, strays from the row's by a few milliseconds.
 *
 * Writing: at begin (counting has started), an empty CSV and "[]", so that the pair is
 * valid from then on. Each
 * interval's rows are appended with one write as the interval ends (a killed run keeps what
 * it had). When an interval brings new series, the JSON is written whole to a temporary
 * file and renamed over the old one before their rows are appended: every idx of the CSV is
 * always in the JSON. A failed write (a full disk) does not stop the run: the CSV is cut
 * back to its last whole interval, the error is printed once naming the file, the next
 * intervals try again, and at the end cgtma says how many intervals were not written.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <json-c/json.h>

#include "alloc.h"
#include "hashmap.h"
#include "log.h"
#include "outfile.h"
#include "output.h"
#include "strbuf.h"

#define CDM_SOURCE "cgtma"
#define CDM_CLASS "throughput"
#define CDM_JSON "metric-data-cgtma.json"
#define CDM_CSV "metric-data-cgtma.csv"
#define CDM_TMP ".metric-data-cgtma.json.tmp"

enum what { W_NODE, W_METRIC, W_EVENT, W_MISSED, W_NOISE };

struct series {
	enum what what;
	int index;			/* node, metric or event */
	int type;			/* its entry in types */
	int place;			/* its scope's number in places */
	char *cgroup;
	const char *irq;		/* static: "NET_RX", "none", "all"; NULL: no "irq" name */
	char *container, *pod;		/* names; NULL: not a container's or pod's */
	int cpu;			/* >= 0; CPU_ALL; CPU_NONE (no "cpu" name) */
	int pid, tid;			/* a thread's series (-T); tid -1 otherwise */
	char cmd[16];
	long long last_end;		/* of its last row written */
	bool has_row;
	long seen;			/* the interval that last gave it a value */
};

#define CPU_NONE (-1)
#define CPU_ALL (-2)

struct cdm {
	char *dir, *json_path, *csv_path, *tmp_path;
	char *json_quoted, *csv_quoted;	/* "'PATH'", for messages */
	struct outfile csv;		/* fd -1 until created; lost: intervals not written */

	int nr_types;			/* per node, then metric, then event */
	char **types;
	int node0, metric0, event0;	/* offsets into types */
	int missed_type;		/* "missed-slices", then "missed-max-seconds", after them */
	int noise_type;			/* noise_types[]'s, after those */

	struct series *series;
	int nr_series, cap_series;
	/*
	 * A series is found by its scope, numbered in places on first sight, and its type: the
	 * key is place << 32 | type.
	 */
	struct hashmap places;		/* scope_key() -> number (find_place()) */
	int nr_places;
	/*
	 * Per place: the end of the last interval it had rows in (written), -1 before its
	 * first; and whether its scope is gone (a removed cgroup, an exited thread).
	 */
	struct place_state {
		long long last_end;
		bool gone;
	} *place_st;
	int cap_place_st;
	struct hashmap index;		/* key -> series */
	struct strbuf json;		/* the entries, without the brackets */

	bool started;			/* begin() gave the run's start */
	bool named;			/* cgroups tracked: series name containers and pods */
	bool irq;			/* --irq: series name their interrupt (see the top) */
	long long prev_end;		/* the last interval's end */
	long long run_begin;		/* the first interval's begin */
	long long missed_from;		/* the begin of the first interval not exact; -1 */
	long nr_intervals;

	long lost_series;		/* new series whose JSON entry could not be written */
	bool renamed;			/* a thread's series took a new cmd: the JSON is due */
};

/* --- small helpers --------------------------------------------------------------------- */

/* Lower-case kebab style: "Backend_Bound.L1_Bound" -> "backend-bound-l1-bound". */
static char *kebab(const char *name)
{
	size_t n = strlen(name), o = 0;
	char *s = malloc(n + 1);

	if (!s)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		char ch = name[i];

		if (ch >= 'A' && ch <= 'Z')
			ch += 'a' - 'A';
		if (!((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9')))
			ch = '-';
		if (ch == '-' && (o == 0 || s[o - 1] == '-'))
			continue;
		s[o++] = ch;
	}
	while (o > 0 && s[o - 1] == '-')
		o--;
	s[o] = '\0';
	if (!o) {
		free(s);
		return strdup("unnamed");
	}
	return s;
}

/*
 * A value as CDM reads it: a plain decimal, no exponent, six decimals at most, trailing
 * zeros dropped ("24.318211", "0", "1520").
 */
static const char *fmt_value(double v, char *buf, size_t len)
{
	char *end;

	snprintf(buf, len, "%.6f", v);
	end = buf + strlen(buf) - 1;
	while (*end == '0')
		*end-- = '\0';
	if (*end == '.')
		*end = '\0';
	if (!strcmp(buf, "-0"))
		snprintf(buf, len, "0");
	return buf;
}

/* Said once a run: a disk that stays nearly full could otherwise fail every other interval. */
/* --- types ------------------------------------------------------------------------------ */

static bool type_used(const struct cdm *c, int upto, const char *t)
{
	for (int i = 0; i < upto; i++)
		if (c->types[i] && !strcmp(c->types[i], t))
			return true;
	return false;
}

/* A type for entry i: kebab(name), else kebab(full), else with a number appended. */
static int set_type(struct cdm *c, int i, const char *name, const char *full)
{
	char *t = kebab(name);

	if (t && type_used(c, i, t) && full) {
		free(t);
		t = kebab(full);
	}
	for (int k = 2; t && type_used(c, i, t); k++) {
		char *n;

		if (asprintf(&n, "%s-%d", t, k) < 0)
			n = NULL;
		free(t);
		t = n;
	}
	if (!t)
		return -ENOMEM;
	c->types[i] = t;
	return 0;
}

/* A cgroup's noise series (see the top): their types, by W_NOISE index, and fields. */
static const struct {
	const char *type;
	unsigned bit;
	size_t off;			/* a double in struct noise */
} noise_types[] = {
	{ "run-wait", NOISE_WAIT, offsetof(struct noise, wait) },
	{ "preempted", NOISE_PREEMPTED, offsetof(struct noise, preempted) },
	{ "smt-shared", NOISE_SMT, offsetof(struct noise, smt_shared) },
	{ "throttled", NOISE_THROTTLED, offsetof(struct noise, throttled) },
};

#define NR_NOISE_TYPES ((int)(sizeof(noise_types) / sizeof(noise_types[0])))

static int make_types(struct cdm *c, const struct run *run)
{
	const struct plan *p = run->plan;
	int nodes = p ? p->nr_nodes : 0, metrics = p ? p->nr_metrics : 0;
	int events = p ? 0 : run->nr_events;
	int err = 0;

	c->nr_types = nodes + metrics + events + 2 + NR_NOISE_TYPES;
	c->types = calloc(c->nr_types, sizeof(*c->types));
	if (!c->types)
		return -ENOMEM;
	c->node0 = 0;
	c->metric0 = nodes;
	c->event0 = nodes + metrics;
	c->missed_type = c->event0 + events;
	c->noise_type = c->missed_type + 2;
	for (int i = 0; i < nodes && !err; i++)
		err = set_type(c, c->node0 + i, p->nodes[i].name, p->nodes[i].full_name);
	for (int i = 0; i < metrics && !err; i++)
		err = set_type(c, c->metric0 + i, p->metrics[i].name, NULL);
	for (int i = 0; i < events && !err; i++)
		err = set_type(c, c->event0 + i, run->event_names[i], NULL);
	for (int i = 0; i < NR_NOISE_TYPES && !err; i++)
		err = set_type(c, c->noise_type + i, noise_types[i].type, NULL);
	return err ?: set_type(c, c->missed_type, "missed-slices", NULL) ?:
		      set_type(c, c->missed_type + 1, "missed-max-seconds", NULL);
}

static int type_of(const struct cdm *c, enum what w, int index)
{
	switch (w) {
	case W_NODE:
		return c->node0 + index;
	case W_METRIC:
		return c->metric0 + index;
	case W_MISSED:
		return c->missed_type + index;
	case W_NOISE:
		return c->noise_type + index;
	default:
		return c->event0 + index;
	}
}

/* --- series ----------------------------------------------------------------------------- */

static uint64_t series_key(int place, int type)
{
	return (uint64_t)place << 32 | (uint32_t)type;
}

/*
 * The number of a scope's place, given one on first sight; -ENOMEM. Scopes that the files
 * name alike share one (see the top): without --irq the system is the root cgroup "/" (and
 * a CPU the root on that CPU), and without --per-cpu nothing is on one CPU.
 */
static int find_place(struct cdm *c, const struct run *run, const struct scope *s)
{
	bool as_root = !c->irq && (s->kind == SCOPE_SYSTEM || s->kind == SCOPE_CPU);
	int cpu = run->per_cpu ? s->cpu : -1;
	const char *key = scope_key(s);
	char *alias = NULL;
	int place, err;

	if (as_root || cpu != s->cpu) {
		/* A CPU over all CPUs is the system. */
		alias = as_root ? scope_key_of(SCOPE_CGROUP, "/", cpu, 0) :
			scope_key_of(s->kind == SCOPE_CPU ? SCOPE_SYSTEM : s->kind,
				     s->kind == SCOPE_IRQ ? s->irq : s->cgroup, cpu, s->tid);
		if (!alias)
			return -ENOMEM;
		key = alias;
	}
	place = hashmap_get_str(&c->places, key);
	if (place < 0) {
		err = ALLOC_GROW(c->place_st, c->nr_places + 1, c->cap_place_st);
		if (!err)
			err = hashmap_put_str(&c->places, key, c->nr_places);
		if (!err)
			c->place_st[c->nr_places] = (struct place_state){ .last_end = -1 };
		place = err ? err : c->nr_places++;
	}
	free(alias);
	return place;
}

static void series_free_names(struct series *s)
{
	free(s->cgroup);
	free(s->container);
	free(s->pod);
}

/* "NAMESPACE/NAME": a pod's name is unique in its namespace only. */
static char *pod_name(const struct cgroup_names *n)
{
	struct strbuf b = STRBUF_INIT;

	if (!n->pod)
		return NULL;
	strbuf_addf(&b, "%s/%s", n->namespace ? n->namespace : "", n->pod);
	if (b.failed) {
		strbuf_release(&b);
		return NULL;
	}
	return b.buf;
}

static int add_series(struct cdm *c, enum what w, int index, int place, const char *cgroup,
		      const char *irq, int cpu, const struct scope *sc)
{
	const struct cgroup_names *names;
	struct series *s;

	if (ALLOC_GROW(c->series, c->nr_series + 1, c->cap_series))
		return -ENOMEM;
	s = &c->series[c->nr_series];
	memset(s, 0, sizeof(*s));
	s->what = w;
	s->index = index;
	s->type = type_of(c, w, index);
	s->place = place;
	s->cpu = cpu;
	s->irq = irq;
	s->tid = -1;
	if (sc->kind == SCOPE_TASK) {
		s->pid = sc->pid;
		s->tid = sc->tid;
		memcpy(s->cmd, sc->comm, sizeof(s->cmd));
	}
	s->seen = -1;
	names = sc->kind == SCOPE_CGROUP ? &sc->names : NULL;
	s->cgroup = strdup(cgroup);
	s->container = names && names->container ? strdup(names->container) : NULL;
	s->pod = names ? pod_name(names) : NULL;
	if (!s->cgroup || (names && names->container && !s->container) ||
	    (names && names->pod && !s->pod) ||
	    hashmap_put_u64(&c->index, series_key(place, s->type), c->nr_series)) {
		series_free_names(s);
		return -ENOMEM;
	}
	c->nr_series++;
	return 0;
}

/* Forgets the series from index nr on (their JSON could not be written). */
static void drop_series(struct cdm *c, int nr)
{
	while (c->nr_series > nr) {
		struct series *s = &c->series[--c->nr_series];

		hashmap_del_u64(&c->index, series_key(s->place, s->type));
		series_free_names(s);
	}
}

/* Appends series i's entry to b: a line of its own, after a comma unless it is the first. */
static int series_json(const struct cdm *c, int i, struct strbuf *b)
{
	const struct series *s = &c->series[i];
	json_object *entry = json_object_new_object();
	json_object *desc = json_object_new_object();
	json_object *names = json_object_new_object();
	const char *text = NULL;
	char cpu[32], type[300];

	/* A thread's series: task-TYPE (see the top). */
	snprintf(type, sizeof(type), "%s%s", s->tid >= 0 ? "task-" : "", c->types[s->type]);
	if (entry && desc && names) {
		json_object_object_add(entry, "idx", json_object_new_int(i));
		json_object_object_add(desc, "source", json_object_new_string(CDM_SOURCE));
		json_object_object_add(desc, "class", json_object_new_string(CDM_CLASS));
		json_object_object_add(desc, "type", json_object_new_string(type));
		json_object_object_add(names, "cgroup", json_object_new_string(s->cgroup));
		if (s->irq)
			json_object_object_add(names, "irq", json_object_new_string(s->irq));
		/* Every series has the same keys (see the top): "none" where it is no
		 * container's or pod's. */
		if (c->named && s->tid < 0) {
			json_object_object_add(names, "container",
					       json_object_new_string(s->container ? s->container :
								      "none"));
			json_object_object_add(names, "pod",
					       json_object_new_string(s->pod ? s->pod : "none"));
		}
		if (s->tid >= 0) {
			snprintf(cpu, sizeof(cpu), "%d", s->pid);
			json_object_object_add(names, "pid", json_object_new_string(cpu));
			snprintf(cpu, sizeof(cpu), "%d", s->tid);
			json_object_object_add(names, "tid", json_object_new_string(cpu));
			json_object_object_add(names, "cmd", json_object_new_string(s->cmd));
		}
		if (s->cpu != CPU_NONE) {
			if (s->cpu == CPU_ALL)
				snprintf(cpu, sizeof(cpu), "all");
			else
				snprintf(cpu, sizeof(cpu), "%d", s->cpu);
			json_object_object_add(names, "cpu", json_object_new_string(cpu));
		}
		json_object_object_add(entry, "desc", desc);
		json_object_object_add(entry, "names", names);
		desc = names = NULL;
		text = json_object_to_json_string_ext(entry, JSON_C_TO_STRING_PLAIN |
							     JSON_C_TO_STRING_NOSLASHESCAPE);
	}
	if (text) {
		strbuf_addstr(b, i ? ",\n" : "\n");
		strbuf_addstr(b, text);
	}
	json_object_put(entry);
	json_object_put(desc);
	json_object_put(names);
	return !text || b->failed ? -ENOMEM : 0;
}

/* --- files ------------------------------------------------------------------------------ */

static int write_all(int fd, const char *p, size_t n, off_t off)
{
	while (n) {
		ssize_t w = pwrite(fd, p, n, off);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (w == 0)
			return -EIO;
		p += w;
		n -= w;
		off += w;
	}
	return 0;
}

/* The JSON, written whole beside the old one and renamed over it. */
static int write_json(struct cdm *c, const char *entries, size_t len)
{
	int fd, err;

	fd = open(c->tmp_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	err = write_all(fd, "[", 1, 0);
	err = err ?: write_all(fd, entries, len, 1);
	err = err ?: write_all(fd, "\n]\n", 3, 1 + len);
	if (!err && fdatasync(fd))
		err = -errno;
	if (close(fd) && !err)
		err = -errno;
	if (!err && rename(c->tmp_path, c->json_path))
		err = -errno;
	if (err)
		unlink(c->tmp_path);
	return err;
}

/* --- the sink --------------------------------------------------------------------------- */

/* A scope's "cgroup" and "irq" names (NULL: none), as the top says. */
static void scope_names(const struct cdm *c, const struct scope *s, const char **cgroup,
			const char **irq)
{
	switch (s->kind) {
	case SCOPE_IRQ:
		*cgroup = "none";
		*irq = s->irq;
		break;
	case SCOPE_CGROUP:
		*cgroup = s->cgroup;
		*irq = c->irq ? "none" : NULL;
		break;
	case SCOPE_TASK:
		*cgroup = s->cgroup;
		*irq = NULL;
		break;
	default:		/* the system, a CPU */
		*cgroup = c->irq ? "all" : "/";
		*irq = c->irq ? "all" : NULL;
		break;
	}
}

static int scope_cpu(const struct run *run, const struct scope *s)
{
	if (!run->per_cpu)
		return CPU_NONE;
	return s->cpu >= 0 ? s->cpu : CPU_ALL;
}

struct pending {
	int series;
	double value;
};

/*
 * A cgroup's or thread's noise values that exist (W_NOISE, its noise_types[] index, value),
 * each a rate over the interval's span, times scale (scope_values()).
 */
static int noise_values(const struct scope *s, double scale,
			int (*fn)(void *, enum what, int, double), void *ctx)
{
	int err = 0;

	if (!scope_has_noise(s))
		return 0;
	for (int i = 0; i < NR_NOISE_TYPES && !err; i++) {
		double v;

		memcpy(&v, (const char *)&s->noise + noise_types[i].off, sizeof(v));
		v *= scale;
		if ((s->noise.has & noise_types[i].bit) && isfinite(v))
			err = fn(ctx, W_NOISE, i, v);
	}
	return err;
}

/*
 * The values of one scope that exist: (kind, index, value). Rates are per second of the
 * interval's row, row_s long (the counts and the noise rates cover interval_s): a rate
 * times its row's length is then the interval's count exactly, and a series adds up to the
 * run's, though an interval's wall-clock end, where its row ends, strays from the counts'
 * span by a few milliseconds.
 */
static int scope_values(const struct run *run, const struct scope *s, double interval_s,
			double row_s, int (*fn)(void *, enum what, int, double), void *ctx)
{
	const struct plan *p = run->plan;
	double noise_scale = interval_s / row_s;
	int err = 0;

	if (!p) {
		for (int i = 0; i < run->nr_events && !err; i++) {
			double v = s->count[i] / row_s;

			if (s->state[i] != COUNT_NOT_COUNTED && isfinite(v))
				err = fn(ctx, W_EVENT, i, v);
		}
		return err ?: noise_values(s, noise_scale, fn, ctx);
	}
	for (int i = 0; i < p->nr_nodes && !err; i++)
		if (s->tma.counted[i] && isfinite(s->tma.value[i] * 100))
			err = fn(ctx, W_NODE, i, s->tma.value[i] * 100);
	for (int i = 0; i < p->nr_metrics && !err; i++)
		if (s->tma.metric_counted[i] && isfinite(s->tma.metric[i]))
			err = fn(ctx, W_METRIC, i, s->tma.metric[i]);
	return err ?: noise_values(s, noise_scale, fn, ctx);
}

struct collect {
	struct cdm *c;
	const struct run *run;
	const struct scope *scope;
	const char *cgroup, *irq;
	int cpu;
	int place;			/* the scope's; -1 until a value needs it */
	struct pending *rows;
	int nr_rows, cap_rows;
};

static int collect_value(void *ctx, enum what w, int index, double v)
{
	struct collect *cl = ctx;
	struct cdm *c = cl->c;
	int i, err;

	if (cl->place < 0) {
		cl->place = find_place(c, cl->run, cl->scope);
		if (cl->place < 0)
			return cl->place;
		/* The last of a place's scopes decides: a cgroup made again is not gone. */
		c->place_st[cl->place].gone = cl->scope->removed;
	}
	i = hashmap_get_u64(&c->index, series_key(cl->place, type_of(c, w, index)));
	if (i < 0) {
		err = add_series(c, w, index, cl->place, cl->cgroup, cl->irq, cl->cpu, cl->scope);
		if (err)
			return err;
		i = c->nr_series - 1;
	} else if (cl->scope->kind == SCOPE_TASK &&
		   strncmp(c->series[i].cmd, cl->scope->comm, sizeof(c->series[i].cmd))) {
		/*
		 * A thread that named itself after its first row (a worker's prctl or
		 * pthread_setname_np just after its start): its series takes the name it has now.
		 */
		memcpy(c->series[i].cmd, cl->scope->comm, sizeof(c->series[i].cmd));
		c->renamed = true;
	}
	/* The same series twice in one interval (the root next to the system, without --irq):
	 * once. */
	if (c->series[i].seen == c->nr_intervals)
		return 0;
	c->series[i].seen = c->nr_intervals;
	if (ALLOC_GROW(cl->rows, cl->nr_rows + 1, cl->cap_rows))
		return -ENOMEM;
	cl->rows[cl->nr_rows].series = i;
	cl->rows[cl->nr_rows].value = v;
	cl->nr_rows++;
	return 0;
}

/*
 * Whether an event series has a span of zero to write before until (inclusive): its scope
 * had no row since the series' last one, because it did not run (a cgroup found by a glob,
 * a thread) and is not gone. An event rate is 0 there, and the next row must not cover that
 * time with its own rate. Nodes and metrics have no value where nothing ran: their series
 * keep such spans uncovered, as they always did. A series with no row at its scope's last
 * one (an event not counted) keeps its gap too.
 */
static bool idle_gap(const struct cdm *c, const struct series *s, long long until)
{
	const struct place_state *p = &c->place_st[s->place];

	return s->what == W_EVENT && s->has_row && p->last_end == s->last_end &&
	       s->last_end < until;
}

/* Adds the new series' entries to the JSON and writes it; on failure forgets them. */
static int publish_series(struct cdm *c, int old_nr)
{
	size_t old_len = c->json.len;
	int err = 0;

	for (int i = old_nr; i < c->nr_series && !err; i++)
		err = series_json(c, i, &c->json);
	if (!err)
		err = write_json(c, c->json.buf, c->json.len);
	if (err) {
		strbuf_setlen(&c->json, old_len);
		c->lost_series += c->nr_series - old_nr;
		drop_series(c, old_nr);
		if (err != -ENOMEM)
			outfile_failed(&c->csv, c->json_quoted, err);
	}
	return err;
}

/* Writes the JSON anew from every series, after a thread's series took a new name. */
static int republish_series(struct cdm *c)
{
	struct strbuf b = STRBUF_INIT;
	int err = 0;

	for (int i = 0; i < c->nr_series && !err; i++)
		err = series_json(c, i, &b);
	if (!err)
		err = write_json(c, b.buf, b.len);
	if (err) {
		strbuf_release(&b);
		if (err != -ENOMEM)
			outfile_failed(&c->csv, c->json_quoted, err);
		return err;
	}
	strbuf_release(&c->json);
	c->json = b;
	return 0;
}

/*
 * The interval's "missed-slices" row (see the top), from the first interval not exact on:
 * filed under the system's names, as the mark is the whole interval's.
 */
static int collect_missed(struct cdm *c, struct collect *cl, const struct interval *iv,
			  long long ibegin)
{
	struct scope sys = { .kind = SCOPE_SYSTEM, .cpu = -1 };
	char *key = scope_key_of(SCOPE_SYSTEM, NULL, -1, 0);
	int err;

	if (!key)
		return -ENOMEM;
	if (c->missed_from < 0)
		c->missed_from = ibegin;
	sys.key = key;
	cl->scope = &sys;
	scope_names(c, &sys, &cl->cgroup, &cl->irq);
	cl->cpu = scope_cpu(cl->run, &sys);
	cl->place = -1;
	/* The slices marked, and the most of their time that may be another cgroup's. */
	err = collect_value(cl, W_MISSED, 0, (double)iv->missed_slices) ?:
	      collect_value(cl, W_MISSED, 1, iv->missed_max_ns / 1e9);
	cl->scope = NULL;
	free(key);
	return err;
}

static int cdm_interval(struct output *o, const struct run *run, const struct interval *iv)
{
	struct cdm *c = o->priv;
	struct collect cl = { .c = c, .run = run };
	struct strbuf rows = STRBUF_INIT;
	long long end = llround(iv->time * 1000), ibegin;
	int old_nr = c->nr_series, err = 0;
	bool failed_now = false;

	if (!c->started) {
		c->prev_end = end - llround(iv->interval_s * 1000);
		c->run_begin = c->prev_end + 1;
		c->started = true;
	}
	ibegin = c->prev_end + 1;
	/* A last interval shorter than a millisecond, or the clock stepped back. */
	if (end < ibegin)
		end = ibegin;

	/* Before any series is named: a --irq run's first interval has its irq scopes. */
	for (int i = 0; i < iv->nr_scopes && !c->irq; i++)
		c->irq = iv->scopes[i].kind == SCOPE_IRQ;
	for (int i = 0; i < iv->nr_scopes && !err; i++) {
		cl.scope = &iv->scopes[i];
		scope_names(c, cl.scope, &cl.cgroup, &cl.irq);
		cl.cpu = scope_cpu(run, cl.scope);
		cl.place = -1;
		err = scope_values(run, cl.scope, iv->interval_s > 0 ? iv->interval_s : 1,
				   (end - ibegin + 1) / 1000.0, collect_value, &cl);
	}
	if (!err && (iv->missed_slices || c->missed_from >= 0))
		err = collect_missed(c, &cl, iv, ibegin);
	if (err)
		goto out;
	if (c->nr_series > old_nr && publish_series(c, old_nr)) {
		int k = 0;

		/* Their rows go with them. */
		failed_now = true;
		for (int i = 0; i < cl.nr_rows; i++)
			if (cl.rows[i].series < old_nr)
				cl.rows[k++] = cl.rows[i];
		cl.nr_rows = k;
	}
	/* Every series is in the JSON now: publish_series() forgets those it cannot write. */
	old_nr = c->nr_series;
	/* New names: the file again (and again at the next interval if that fails). */
	if (c->renamed && !republish_series(c))
		c->renamed = false;

	for (int i = 0; i < cl.nr_rows && !err; i++) {
		struct series *s = &c->series[cl.rows[i].series];
		bool gap = idle_gap(c, s, ibegin - 1);
		long long begin = gap || !s->has_row ? ibegin : s->last_end + 1;
		char num[400];		/* "%.6f" of the largest double */

		/* Not exact since missed_from only: exact before, from the run's start. */
		if (s->what == W_MISSED && !s->has_row) {
			begin = c->missed_from;
			if (begin > c->run_begin)
				err = strbuf_addf(&rows, "%d,%lld,%lld,0\n", cl.rows[i].series,
						  c->run_begin, begin - 1);
		}
		if (gap)
			err = strbuf_addf(&rows, "%d,%lld,%lld,0\n", cl.rows[i].series,
					  s->last_end + 1, ibegin - 1);
		if (!err)
			err = strbuf_addf(&rows, "%d,%lld,%lld,%s\n", cl.rows[i].series, begin, end,
					  fmt_value(cl.rows[i].value, num, sizeof(num)));
	}
	if (err)
		goto out;
	if (rows.len) {
		/* No half rows: a failed write is cut back to the last whole interval. */
		err = outfile_write_whole(&c->csv, rows.buf, rows.len);
		if (err) {
			c->csv.lost++;
			failed_now = true;
			outfile_failed(&c->csv, c->csv_quoted, err);
			err = 0;
		} else {
			for (int i = 0; i < cl.nr_rows; i++) {
				struct series *s = &c->series[cl.rows[i].series];

				c->place_st[s->place].last_end = end;
				s->last_end = end;
				s->has_row = true;
			}
		}
	}
	if (!err && !failed_now && rows.len)
		outfile_written(&c->csv);
out:
	/* Series found before a failure that kept them out of the JSON go, or rows would
	 * name them later. */
	if (c->nr_series > old_nr)
		drop_series(c, old_nr);
	c->prev_end = end;
	c->nr_intervals++;
	free(cl.rows);
	strbuf_release(&rows);
	/* Write failures are this sink's to report (once); the run goes on, and fails at its end. */
	if (c->csv.lost || c->lost_series)
		o->lost = true;
	return err == -ENOMEM ? err : 0;
}

/* An empty pair first: valid files from the start of counting. */
static int cdm_create(struct cdm *c)
{
	int fd, err = write_json(c, "", 0);

	if (err) {
		pr_err("--cdm: cannot write '%s': %s", c->json_path, strerror(-err));
		return err;
	}
	fd = open(c->csv_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		err = -errno;
		pr_err("--cdm: cannot write '%s': %s", c->csv_path, strerror(-err));
		return err;
	}
	outfile_init(&c->csv, fd, c->csv_quoted, "the CDM files keep what was written");
	return 0;
}

static int cdm_begin(struct output *o, const struct run *run)
{
	struct cdm *c = o->priv;
	int err = cdm_create(c);

	if (err)
		return err;
	/* The run's start is the end of nothing: the first interval begins after it, as long as
	 * it lasted, like every later one. */
	if (run->start_time > 0) {
		c->prev_end = llround(run->start_time * 1000);
		c->run_begin = c->prev_end + 1;
		c->started = true;
	}
	c->named = run->cgroups;
	return make_types(c, run);
}

/*
 * The run's end: event series of scopes that did not run since their last row and are not
 * gone get their span of zero up to the last interval's end (idle_gap()).
 */
static int cdm_summary(struct output *o, const struct run *run, const struct interval *total)
{
	struct cdm *c = o->priv;
	struct strbuf rows = STRBUF_INIT;
	int err = 0;

	(void)run;
	(void)total;
	for (int i = 0; i < c->nr_series && !err; i++) {
		const struct series *s = &c->series[i];

		if (!c->place_st[s->place].gone && idle_gap(c, s, c->prev_end))
			err = strbuf_addf(&rows, "%d,%lld,%lld,0\n", i, s->last_end + 1,
					  c->prev_end);
	}
	if (!err && rows.len) {
		err = outfile_write_whole(&c->csv, rows.buf, rows.len);
		if (err) {
			c->csv.lost++;
			o->lost = true;
			outfile_failed(&c->csv, c->csv_quoted, err);
			err = 0;
		}
	}
	strbuf_release(&rows);
	return err;
}

static void cdm_close(struct output *o)
{
	struct cdm *c = o->priv;

	if (!c)
		return;
	if (c->csv.lost || c->lost_series)
		output_lost(o, "%s: %ld interval(s) and %ld new series could not be written; the "
			    "files hold the rest", c->dir, c->csv.lost, c->lost_series);
	if (c->csv.fd >= 0)
		close(c->csv.fd);
	for (int i = 0; i < c->nr_series; i++)
		series_free_names(&c->series[i]);
	free(c->series);
	free(c->place_st);
	hashmap_clear(&c->places);
	hashmap_clear(&c->index);
	for (int i = 0; i < c->nr_types; i++)
		free(c->types[i]);
	free(c->types);
	strbuf_release(&c->json);
	free(c->dir);
	free(c->json_path);
	free(c->csv_path);
	free(c->tmp_path);
	free(c->json_quoted);
	free(c->csv_quoted);
	free(c);
	o->priv = NULL;
}

static const struct output_ops cdm_ops = {
	.begin = cdm_begin,
	.interval = cdm_interval,
	.summary = cdm_summary,
	.close = cdm_close,
};

static int cdm_files(struct cdm *c, const char *dir)
{
	struct stat st;
	int err, fd;

	if (mkdir(dir, 0755) && errno != EEXIST) {
		err = -errno;
		pr_err("--cdm: cannot create directory '%s': %s", dir, strerror(-err));
		return err;
	}
	if (stat(dir, &st)) {
		err = -errno;
		pr_err("--cdm: cannot use directory '%s': %s", dir, strerror(-err));
		return err;
	}
	if (!S_ISDIR(st.st_mode)) {
		pr_err("--cdm: cannot use directory '%s': %s", dir, strerror(ENOTDIR));
		return -ENOTDIR;
	}
	/*
	 * A directory that cannot be written fails now, before profiling starts; the files
	 * themselves appear only once counting has started (cdm_begin): tools that wait for
	 * them, as crucible's start script does, must not go ahead any earlier.
	 */
	fd = open(c->tmp_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		err = -errno;
		pr_err("--cdm: cannot write '%s': %s", c->json_path, strerror(-err));
		return err;
	}
	close(fd);
	unlink(c->tmp_path);
	return 0;
}

static char *path_join(const char *dir, const char *name)
{
	size_t n = strlen(dir) + strlen(name) + 2;
	char *p = malloc(n);

	if (p)
		snprintf(p, n, "%s/%s", dir, name);
	return p;
}

int output_cdm_open(const char *dir, struct output **op)
{
	struct output *o = calloc(1, sizeof(*o));
	struct cdm *c = calloc(1, sizeof(*c));
	int err;

	if (!o || !c) {
		free(o);
		free(c);
		return -ENOMEM;
	}
	c->csv.fd = -1;
	c->missed_from = -1;
	o->ops = &cdm_ops;
	o->name = "cdm";
	o->priv = c;
	c->dir = strdup(dir);
	c->json_path = path_join(dir, CDM_JSON);
	c->csv_path = path_join(dir, CDM_CSV);
	c->tmp_path = path_join(dir, CDM_TMP);
	if (asprintf(&c->json_quoted, "'%s'", c->json_path ? c->json_path : "") < 0)
		c->json_quoted = NULL;
	if (asprintf(&c->csv_quoted, "'%s'", c->csv_path ? c->csv_path : "") < 0)
		c->csv_quoted = NULL;
	err = c->dir && c->json_path && c->csv_path && c->tmp_path && c->json_quoted &&
	      c->csv_quoted ? cdm_files(c, dir) : -ENOMEM;
	if (err) {
		/* Freed here, not by output_close(): a sink does not call back into output.c. */
		cdm_close(o);
		free(o);
		return err;
	}
	*op = o;
	return 0;
}
