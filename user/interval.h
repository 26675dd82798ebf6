/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What one interval measured, as every output sees it: per scope (the system, a CPU, a
 * cgroup, a cgroup on one CPU) the raw sums of counter, enabled and running per event, and
 * what derives from them (scaled counts, multiplexing, the Top-Down tree). Live runs and
 * `cgtma report` build the same structures, so every output works on both.
 */
#ifndef CGTMA_INTERVAL_H
#define CGTMA_INTERVAL_H

#include <stdbool.h>

#include "bpf/cgtma.h"
#include "scale.h"
#include "tma.h"

struct profile;

enum scope_kind {
	SCOPE_SYSTEM,
	SCOPE_CPU,
	SCOPE_CGROUP,
	SCOPE_TASK,			/* -T: one thread inside a cgroup (cgroup, pid, tid) */
	SCOPE_IRQ,			/* --irq: one interrupt scope, named in irq */
};

/* A cgroup's container and Kubernetes pod (containers.h); each NULL where it is none. */
struct cgroup_names {
	char *container;
	char *pod;
	char *namespace;
};

/*
 * The row of the root cgroup's own tasks, those in no child of it (--all-cgroups: the system
 * less the level-1 cgroups): a cgroup row by this name, which is no path.
 */
#define CGROUP_ROOT_OWN "/ (own tasks)"

/* Replaces dst with copies of the three (any may be NULL): 0, or -ENOMEM with dst unchanged. */
int cgroup_names_set(struct cgroup_names *dst, const char *container, const char *pod,
		     const char *namespace);
void cgroup_names_release(struct cgroup_names *n);
/* Whether a and b name the same (both NULL is the same). */
bool cgroup_names_equal(const struct cgroup_names *a, const char *container, const char *pod,
			const char *namespace);

/*
 * What the kernel's own accounting says a cgroup's tasks met besides their work (noise.h),
 * over an interval (the run, for a summary). Each field is there where its bit is in has:
 * the kernel gives it for this cgroup; one it does not give is absent, never 0.
 */
enum {
	NOISE_WAIT = 1 << 0,		/* wait */
	NOISE_THROTTLED = 1 << 1,	/* throttled and nr_throttled */
	NOISE_PRESSURE_SOME = 1 << 2,	/* pressure_some */
	NOISE_PRESSURE_FULL = 1 << 3,	/* pressure_full */
	NOISE_PREEMPTED = 1 << 4,	/* preempted, and the antagonists' preempt and took
					 * (the switch hook saw the run) */
	NOISE_SMT = 1 << 5,		/* smt_shared and the antagonists' smt (a machine
					 * with SMT siblings) */
};

/* The most antagonists a cgroup's noise lists (the busiest). */
#define NOISE_ANTAGONISTS_MAX 5

/*
 * Another cgroup that took this one's CPU or shared its core: who preempted its tasks (a
 * task of it left a CPU still runnable, for a task of the other) and how often, the CPU time
 * of the slices that did, and the time it ran on the sibling hardware thread while this one
 * ran. The same units as struct noise's.
 */
struct antagonist {
	char cgroup[256];		/* canonical path ("/" the root's own tasks), cut
					 * short where longer */
	char container[64];		/* its container or pod (containers.h); "" if none */
	double preempt;			/* times/s */
	double took;			/* s/s */
	double smt;			/* s/s */
};

struct noise {
	unsigned has;			/* NOISE_* */
	double wait;			/* run-queue wait of its threads: s/s */
	double throttled;		/* cpu.max throttling (cpu.stat throttled_usec): s/s */
	__u64 nr_throttled;		/* how many times (cpu.stat nr_throttled) */
	double pressure_some;		/* cpu.pressure: fraction of the time */
	double pressure_full;
	double preempted;		/* its tasks preempted by other cgroups': times/s */
	double smt_shared;		/* time it ran while its core's other thread ran another
					 * cgroup: s/s */
	/* The other cgroups, the busiest first: by took + smt, then preempt. */
	int nr_antagonists;
	struct antagonist antagonists[NOISE_ANTAGONISTS_MAX];
};

struct scope {
	enum scope_kind kind;
	const char *key;		/* which scope this is: scope_key() */
	const char *cgroup;		/* SCOPE_CGROUP, SCOPE_TASK: canonical path ("/" is
					 * the root); in key's allocation */
	__u64 cgroup_id;		/* SCOPE_CGROUP, SCOPE_TASK: the cgroup's v2 id (its
					 * directory's inode number), which tells a cgroup
					 * made again under its path from the one before;
					 * 0 where unknown (a record before version 6) */
	int pid, tid;			/* SCOPE_TASK */
	char comm[16];			/* SCOPE_TASK: NUL-terminated */
	struct cgroup_names names;	/* SCOPE_CGROUP: its container or pod, if it is one;
					 * SCOPE_TASK: its cgroup's */
	const char *irq;		/* SCOPE_IRQ: "NET_RX", "hardirq" (irqscope.h) */
	int cpu;			/* SCOPE_CPU, or a cgroup or irq on one CPU; else -1 */
	bool removed;			/* the cgroup is gone (the thread exited or left the
					 * cgroup): its last report */
	bool others;			/* --top's "+ K others" row (top.h): no tracked
					 * cgroup, the sum of those the view left out */
	struct noise noise;		/* SCOPE_CGROUP over all CPUs and SCOPE_TASK, live
					 * runs: has 0 where none */
	struct cgtma_count *sum;	/* per event */

	/* Derived by interval_derive(). */
	double *count;			/* scaled; 0 when idle, NAN when not counted */
	double *multiplex;		/* running / enabled; NAN when idle */
	enum count_state *state;
	bool ran;			/* some event was enabled: the scope ran at all */
	bool has_tma;
	struct tma_result tma;
};

/*
 * A slice charged though the switch hook did not see where it began (cgtma.h's struct
 * cgtma_miss), with its cgroups named: live runs list them (each CPU at most
 * CGTMA_MISSES_MAX an interval); recordings and summaries keep only the totals.
 */
struct mark {
	int cpu;
	struct cgtma_miss m;
	char ran[512];		/* the cgroup the slice began in ("" where not known) */
	char charged[512];	/* the cgroup that took it */
};

/* A mark's kind, as the outputs name it ("switch", "skipped", "moved", "move"). */
const char *mark_kind_name(__u32 kind);

struct interval {
	double time;			/* Unix time at the end */
	double interval_s;		/* its length (the whole run for a summary) */
	bool summary;			/* totals over the run, not one interval */
	/* cgtma's own cost so far: the sched_switch hook's cumulative run time and runs
	 * (kernel BPF statistics); has_bpf_stats is false where they are not collected. */
	bool has_bpf_stats;
	__u64 bpf_run_time_ns;
	__u64 bpf_run_cnt;
	/*
	 * Slices charged in it though the switch hook did not see where they began (marks):
	 * not 0, and its counts are not exact (such a slice may hold another cgroup's time).
	 * Of those with a bound, the most time that may be another cgroup's (missed_max_ns);
	 * the perf-event hook's skipped runs have none (missed_unbounded). marks lists those
	 * a live run has (nr_marks of them), owned by the interval.
	 */
	__u64 missed_slices;
	__u64 missed_max_ns;
	__u64 missed_unbounded;
	int nr_marks;
	struct mark *marks;
	int nr_scopes;
	int cap_scopes;
	struct scope *scopes;
	/* --sample: the samples of the interval (of the run, for a summary), or NULL. */
	const struct profile *profile;
};

/*
 * What an interval's marks mean, in one line for the text outputs (terminal, CSV comments):
 * how many slices, the most of their time that may be another cgroup's, the skipped runs
 * with no bound. buf is returned.
 */
const char *interval_marks_text(const struct interval *iv, char *buf, size_t len);

/*
 * Whether the outputs give scope s's noise: a cgroup's row over all CPUs (not one per CPU),
 * or a thread's (-T: its wait and preemptions, noise.h's struct noise_task).
 */
static inline bool scope_has_noise(const struct scope *s)
{
	return (s->kind == SCOPE_CGROUP && s->cpu < 0) || s->kind == SCOPE_TASK;
}

/*
 * Whether noise n says the scope's tasks were kept from a CPU: they waited in a run queue,
 * were throttled or stalled (CPU pressure), or another cgroup's preempted them or took the
 * CPU they waited for. A cgroup starved all interval long runs nothing, and this is what
 * tells it from an idle one.
 */
bool noise_kept_off_cpu(const struct noise *n);

/*
 * A noise's fields in words, as the text outputs (terminal, HTML) say them: "wait 0.48 s/s,
 * pressure some 52 % full 0 %, throttled 0.20 s/s (12 times), preempted 35.5/s, SMT shared
 * 0.06 s/s", the fields it has; each value between em[0] and em[1] (HTML's "<b>", "</b>"),
 * or bare with em NULL. buf is returned ("" for a noise with none of them).
 */
const char *noise_text(const struct noise *n, const char *const em[2], char *buf, size_t len);
/* What antagonist a took of a cgroup of noise n: "took 0.38 s/s, SMT 0.03 s/s", by its bits. */
const char *antagonist_text(const struct noise *n, const struct antagonist *a,
			    const char *const em[2], char *buf, size_t len);

/* What stays the same for a whole run: what was measured and how. */
struct run {
	const char *model;		/* model name, or "events" with -e */
	const char *model_source;	/* the model's JSON text (for --record), or NULL */
	const struct plan *plan;	/* NULL with -e */
	int nr_events;
	const char *const *event_names;	/* as given on the command line or by the model */
	int level;			/* reported node levels 1..level */
	bool perf_metrics;
	bool smt;
	bool verbose;			/* show nodes below threshold */
	bool per_cpu;
	bool cgroups;			/* -G or --all-cgroups: cgroup rows may come */
	bool prometheus_tasks;		/* --prometheus-tasks: Prometheus exports them */
	double start_time;		/* Unix time */
	int interval_ms;
	const char *hostname;
	const char *kernel;
	const char *cpu;		/* model name from /proc/cpuinfo */
	const char *sample_events;	/* --sample: the events sampled, ';' between; or NULL */
};

/*
 * Replaces a scope's per-event arrays with ones for n events holding these sums (count,
 * multiplex and state zeroed, for interval_derive()). 0 or -ENOMEM.
 */
int scope_set_sums(struct scope *s, const struct cgtma_count *sums, int n);

/*
 * Whether outputs that list events by name show event i: a plan counts an event once in
 * every group whose nodes read it, and lists show its first copy only.
 */
static inline bool run_lists_event(const struct run *run, int i)
{
	return !run->plan || !run->plan->events || !run->plan->events[i].duplicate;
}

/*
 * Appends a scope with zeroed sums, and its key: name is a cgroup scope's path (copied), an
 * interrupt scope's name (irq_scope_name(): kept, not copied), NULL for the system and a
 * CPU; cpu is -1 but for a CPU or a cgroup's or irq's row on one CPU. Threads come from
 * interval_add_task(). Returns the scope, or NULL on allocation failure (and for
 * SCOPE_TASK).
 */
struct scope *interval_add_scope(struct interval *iv, const struct run *run,
				 enum scope_kind kind, const char *name, int cpu);
/* A thread's scope (-T): tid in cgroup (copied); comm is the caller's to fill. */
struct scope *interval_add_task(struct interval *iv, const struct run *run, const char *cgroup,
				int pid, int tid);

/*
 * Every scope has a key, made once as it is added: a NUL-terminated string that two scopes
 * share when they are the same scope, in any interval of a run, live or from a record (the
 * system; a CPU; a cgroup, over all CPUs or on one; a thread of a cgroup; an interrupt scope,
 * over all CPUs or on one), and that no two other scopes share. A cgroup removed and made
 * again under its path is the same scope (scope.cgroup_id tells the two apart: interval_sort()
 * puts them in the order of their ids); so are a removed cgroup's last row and its
 * summary's. Keys compare with strcmp() in interval_sort()'s order, so sinks find a scope
 * again by hashing its key and merge sorted scopes by comparing keys; what a key holds is
 * for this module alone to know.
 */
static inline const char *scope_key(const struct scope *s)
{
	return s->key;
}

/*
 * The key a scope of kind, name and cpu (tid for a thread, else ignored) has, malloc'd;
 * NULL when out of memory. For a sink that files a scope under another's key (CDM writes
 * the system as the root cgroup), not for finding a scope: scope_key() is that.
 */
char *scope_key_of(enum scope_kind kind, const char *name, int cpu, int tid);
/* Gives a cgroup's or a thread's scope copies of a cgroup's names: 0 or -ENOMEM. */
int scope_set_names(struct scope *s, const struct cgroup_names *n);
/* Scaled counts, multiplexing and (with a plan) the tree, for every scope. */
int interval_derive(const struct run *run, struct interval *iv);
/* Empties iv (scopes freed) for reuse. */
void interval_clear(struct interval *iv);
void interval_free(struct interval *iv);

/* Orders scopes for printing: system, CPUs, cgroups by path (and CPU), then threads by
 * cgroup and tid; scopes of one key by cgroup id (a cgroup made again after the one
 * before: v2 ids only grow), then removed before live. */
void interval_sort(struct interval *iv);

/* Whether another of iv's scopes (sorted) has scope k's key: a cgroup made again under its
 * path, both in one interval or summary. */
bool interval_key_shared(const struct interval *iv, int k);
/*
 * A cgroup scope's mark, what tells it from another with its key: "removed", "removed id N",
 * "id N" (N its cgroup id, where known and interval_key_shared()), or "" (none needed).
 * Other kinds get "".
 */
const char *scope_incarnation(const struct interval *iv, int k, char *buf, size_t len);

/*
 * The smallest fraction of its enabled time that any of these events ran in the scope (all
 * events when events is NULL); events that were never enabled there do not count. NAN when
 * none was enabled. An event enabled but never running gives 0.
 */
double scope_multiplex(const struct scope *s, const struct run *run, const int *events, int nr);

/*
 * The scope's busy CPU time in seconds, expressions' `cpu_s`: the most time any of its
 * events was enabled in it. Events are enabled while the scope's slices run, so that is the
 * time its tasks ran (a cgroup, a thread), its interrupts ran (an interrupt scope), or, for a
 * CPU and the system, the whole time of their CPUs, idle included: the idle task runs in the
 * root cgroup, so cgtma does not tell idle time apart (docs/topdown.md, "Metrics").
 */
double scope_cpu_s(const struct scope *s, int nr_events);

/*
 * Whether a row has nothing to say, and the terminal hides it without -v: a tracked cgroup
 * that did not run and was neither removed nor kept off the CPU (idle, not starved:
 * noise_kept_off_cpu()), or a thread's empty last row (it exited). --top ranks the rows
 * this does not hide, so the two views agree on what is shown.
 */
bool scope_idle(const struct scope *s);

/* "system", "cpu", "cgroup", "task" or "irq", as JSON lines and Prometheus labels name the
 * kinds. */
const char *scope_kind_name(enum scope_kind kind);
/* Whether s is the row of the root's own tasks (CGROUP_ROOT_OWN). */
bool scope_is_root_own(const struct scope *s);

/*
 * A label for the scope: "system", "cpu3", "/a/b", "/a/b@cpu3", "/a/b:1234",
 * "irq:NET_RX@cpu3"; a container's or pod's cgroup by its name ("web", "ns/pod",
 * "ns/pod/web"), and its threads ("web:1234"), unless paths is set.
 */
const char *scope_label(const struct scope *s, bool paths, char *buf, size_t len);

#endif
