// SPDX-License-Identifier: GPL-2.0
/* Which cgroups a run counts (selection.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "alloc.h"
#include "cgroups.h"
#include "collector.h"
#include "containers.h"
#include "exitstatus.h"
#include "log.h"
#include "selection.h"
#include "smallfile.h"
#include "suggest.h"
#include "tracker.h"

/*
 * A container's cgroup, born since the last interval and counted from birth, whose runtime
 * has not written its name yet: kept counted for a few intervals until a selector can say.
 */
struct pending {
	__u64 id;
	int age;
};

#define PENDING_INTERVALS 5

/*
 * A -p process and the cgroup it was last seen in: that cgroup is a pattern (a path), so
 * walks keep it; one it moves to is added, and the one it left keeps its rows.
 */
struct pid_cgroup {
	int pid;
	unsigned long long start;	/* /proc/PID/stat's starttime: a reused pid differs */
	char *path;		/* canonical, in the view */
	bool exited;		/* said once */
};


/* "did you mean ...?" for a -G path or glob that matches nothing, or "". */
static void path_suggestions(const struct selection *sel, const char *pattern, char *buf,
			     size_t len)
{
	struct suggest sg;

	buf[0] = '\0';
	suggest_init(&sg, pattern);
	if (cgroup_suggest(sel->view.root, pattern, &sg) == 0 && suggest_found(&sg))
		suggest_format(&sg, buf, len);
	suggest_release(&sg);
}

bool selection_opts_any(const struct selection_opts *o)
{
	return o->nr_cgroups || o->all_cgroups || o->all_containers || o->nr_pids;
}

/* Adds path (canonical) to the patterns, once. 0 or -ENOMEM. */
static int add_pattern(struct selection *sel, const char *path)
{
	char **patterns;
	bool *matched;

	for (int i = 0; i < sel->nr_patterns; i++)
		if (!strcmp(sel->patterns[i], path))
			return 0;
	patterns = realloc(sel->patterns, (sel->nr_patterns + 1) * sizeof(*patterns));
	if (!patterns)
		return -ENOMEM;
	sel->patterns = patterns;
	matched = realloc(sel->pattern_matched, (sel->nr_patterns + 1) * sizeof(*matched));
	if (!matched)
		return -ENOMEM;
	sel->pattern_matched = matched;
	sel->patterns[sel->nr_patterns] = strdup(path);
	if (!sel->patterns[sel->nr_patterns])
		return -ENOMEM;
	sel->pattern_matched[sel->nr_patterns++] = false;
	return 0;
}

/* The cgroup pid is in, as a canonical path of the view. 0, -ESRCH, or another -errno. */
static int pid_cgroup_path(const struct selection *sel, int pid, char *out, size_t len)
{
	char file[64], cg[4096];
	int err;

	snprintf(file, sizeof(file), "/proc/%d/cgroup", pid);
	err = cgroup_read_proc(file, cg, sizeof(cg));
	if (err)
		return err == -ENOENT && access(file, F_OK) ? -ESRCH : err;
	/* In a private cgroup namespace: "/../../x/y" climbs from its root. */
	return cgroup_resolve(sel->view.ns_root, cg, out, len);
}

/*
 * The process's start time (/proc/PID/stat's 22nd field, in clock ticks since boot), which
 * tells a pid the kernel gave to another process since apart from the one -p named.
 */
static int pid_start_time(int pid, unsigned long long *start)
{
	char file[64], buf[1024], *p;
	int err, field;

	snprintf(file, sizeof(file), "/proc/%d/stat", pid);
	err = smallfile_read(file, buf, sizeof(buf));
	if (err)
		return err == -ENOENT ? -ESRCH : err;
	/* comm, field 2, may hold spaces and parentheses: count from its last ')'. */
	p = strrchr(buf, ')');
	if (!p)
		return -EINVAL;
	for (field = 2; field < 22 && p; field++)
		p = strchr(p + 1, ' ');
	if (!p || sscanf(p + 1, "%llu", start) != 1)
		return -EINVAL;
	return 0;
}

int selection_setup(struct selection *sel, const struct selection_opts *o, bool per_task,
		    __u64 *levels, __u32 *max_level)
{
	char path[4096], err[256];
	int ret;

	sel->o = o;

	*levels = 0;
	*max_level = 0;
	if (!selection_opts_any(o))
		return 0;
	ret = cgview__open(&sel->view, NULL);
	if (ret == -ENOENT) {
		pr_err("cgroup v2 is not mounted (%s): -G and --all-cgroups need it; mount it "
		       "(mount -t cgroup2 none DIR) or boot with systemd.unified_cgroup_hierarchy=1",
		       sel->view.why);
		return ret;
	}
	if (ret) {
		pr_err("cannot find the cgroup v2 mount in /proc/self/mountinfo: %s",
		       strerror(-ret));
		return not_usage(ret);	/* the system's, not the user's */
	}
	/* Counts would be right either way; paths relative to a subtree must be said. */
	if (sel->view.kind == CGVIEW_SUBTREE || log_verbose())
		pr_notice("cgroup view: %s", sel->view.why);
	/* -T and -p read cgroups from /proc, relative to this cgroup namespace's root. */
	if ((per_task || o->nr_pids) && sel->view.private_ns) {
		ret = cgview__find_ns_root(&sel->view, NULL, 0);
		if (ret)
			pr_warn("cannot find this cgroup namespace's root in the view (%s): "
				"cgroups in /proc are taken as if it were the view's root",
				strerror(-ret));
		else if (log_verbose())
			pr_notice("cgroup namespace root: %s%s (-T reads threads' cgroups relative "
				  "to it)", sel->view.shown, strcmp(sel->view.ns_root, "/") ?
				  sel->view.ns_root : "");
	}
	sel->patterns = calloc(o->nr_cgroups + 1, sizeof(*sel->patterns));
	sel->pattern_matched = calloc(o->nr_cgroups + 1, sizeof(*sel->pattern_matched));
	sel->pids = calloc(o->nr_pids + 1, sizeof(*sel->pids));
	sel->selectors = calloc(o->nr_cgroups + 1, sizeof(*sel->selectors));
	sel->selector_args = calloc(o->nr_cgroups + 1, sizeof(*sel->selector_args));
	sel->selector_matched = calloc(o->nr_cgroups + 1, sizeof(*sel->selector_matched));
	if (!sel->patterns || !sel->pattern_matched || !sel->pids || !sel->selectors ||
	    !sel->selector_args || !sel->selector_matched ||
	    containers_new(sel->view.root, &sel->containers)) {
		pr_err("out of memory");
		return -ENOMEM;
	}
	if (o->all_containers)
		sel->selectors[sel->nr_selectors++].kind = SELECT_ALL_CONTAINERS;
	for (int i = 0; i < o->nr_cgroups; i++) {
		const char *why;
		__u64 id;
		int level;

		ret = container_selector_parse(o->cgroups[i], &sel->selectors[sel->nr_selectors], err,
					       sizeof(err));
		if (ret < 0) {
			pr_err("-G '%s': %s", o->cgroups[i], err);
			return -EINVAL;
		}
		if (ret) {
			sel->selector_args[sel->nr_selectors++] = o->cgroups[i];
			continue;
		}
		ret = cgroup_normalize(sel->view.mount, o->cgroups[i], path, sizeof(path), err, sizeof(err));
		if (ret) {
			pr_err("cgroup '%s': %s", o->cgroups[i],
			       ret == -EINVAL ? err : strerror(-ret));
			return -EINVAL;
		}
		level = cgroup_level(path);
		if (level > CGTMA_MAX_LEVEL) {
			pr_err("cgroup '%s' is %d levels deep; cgtma tracks up to %d", path, level,
			       CGTMA_MAX_LEVEL);
			return -EINVAL;
		}
		/* A glob finds nothing in v2 there; a path is looked for in v2 first. */
		ret = cgroup_is_pattern(path) ? 0 : cgroup_id(sel->view.root, path, &id);
		why = ret || cgroup_is_pattern(path) ?
		      cgroup_arg_not_v2(sel->view.mount, o->cgroups[i]) : NULL;
		if (why) {
			pr_err("cgroup '%s' is not on cgroup v2 (%s): cgtma tracks v2 cgroups, "
			       "under %s here (-G takes a path under it, or relative to it; '/' is "
			       "its root)", o->cgroups[i], why, sel->view.mount);
			return -EINVAL;
		}
		if (ret) {
			char close[SUGGEST_LEN];

			path_suggestions(sel, path, close, sizeof(close));
			pr_err("cannot open cgroup '%s%s': %s%s%s", sel->view.shown,
			       strcmp(path, "/") ? path : "", strerror(-ret), *close ? "; " : "",
			       close);
			return -EINVAL;
		}
		sel->patterns[sel->nr_patterns] = strdup(path);
		if (!sel->patterns[sel->nr_patterns]) {
			pr_err("out of memory");
			return -ENOMEM;
		}
		sel->nr_patterns++;
		*levels |= 1ULL << level;
		if ((__u32)level > *max_level)
			*max_level = level;
	}
	for (int i = 0; i < o->nr_pids; i++) {
		struct pid_cgroup *pc = &sel->pids[i];

		pc->pid = o->pids[i];
		ret = pid_start_time(pc->pid, &pc->start);
		if (ret && ret != -ESRCH) {
			pr_err("-p %d: cannot read /proc/%d/stat: %s", pc->pid, pc->pid,
			       strerror(-ret));
			return not_usage(ret);
		}
		if (!ret)
			ret = pid_cgroup_path(sel, pc->pid, path, sizeof(path));
		if (ret == -ESRCH) {
			pr_err("-p %d: no such process", pc->pid);
			return -EINVAL;
		}
		if (ret) {
			pr_err("-p %d: cannot find its cgroup v2 in /proc/%d/cgroup: %s", pc->pid,
			       pc->pid, ret == -ENOENT ? "no v2 line" : strerror(-ret));
			return not_usage(ret);
		}
		pc->path = strdup(path);
		if (!pc->path || add_pattern(sel, path)) {
			pr_err("out of memory");
			return -ENOMEM;
		}
	}
	sel->nr_pids = o->nr_pids;
	/*
	 * Containers and pods are at any level the runtimes and drivers choose (never the
	 * root); a process may be in any, the root's included, and move to any.
	 */
	if (sel->nr_selectors || sel->nr_pids) {
		*levels |= ((2ULL << CGTMA_MAX_LEVEL) - 1) & (sel->nr_pids ? ~0ULL : ~1ULL);
		*max_level = CGTMA_MAX_LEVEL;
	}
	if (o->all_cgroups) {
		for (int l = 1; l <= o->depth; l++)
			*levels |= 1ULL << l;
		if ((__u32)o->depth > *max_level)
			*max_level = o->depth;
	}
	if (sel->view.kind == CGVIEW_SUBTREE) {
		/*
		 * The BPF side's levels are the host's, and how deep the view's root lies is not
		 * known: every level may hold a tracked cgroup, every new one is recorded (the
		 * hook still takes levels up to CGTMA_MAX_LEVEL; deeper ones are found by the
		 * next rescan).
		 */
		*levels = ~0ULL;
		*max_level = 63;
	}
	return 0;
}

static bool selected(const struct selection *sel, const struct container_info *info)
{
	for (int i = 0; i < sel->nr_selectors; i++)
		if (container_selector_match(&sel->selectors[i], info))
			return true;
	return false;
}

static bool wanted(const struct selection *sel, __u64 id, const char *path)
{
	/* As the walk of the rescan will find it (or not). */
	if (sel->o->all_cgroups && cgroup_level(path) <= sel->o->depth && strcmp(path, "/") != 0 &&
	    !cgroup_is_hidden(path))
		return true;
	for (int i = 0; i < sel->nr_patterns; i++)
		if (cgroup_match(sel->patterns[i], path))
			return true;
	return sel->nr_selectors && selected(sel, containers_lookup(sel->containers, id, path));
}

/* A tracked cgroup's names, as its runtime's state says now (a name can come late). */
static int name_tracked(struct selection *sel, int i)
{
	struct tracked *tr = &sel->tk->tracked[i];
	const struct container_info *info = containers_lookup(sel->containers, tr->id, tr->path);
	const char *name = info ? info->name : NULL, *pod = info ? info->pod : NULL;
	const char *ns = info ? info->namespace : NULL;

	if (cgroup_names_equal(&tr->names, name, pod, ns))
		return 0;
	return cgroup_names_set(&tr->names, name, pod, ns);
}

static bool has_glob(const char *s)
{
	return strpbrk(s, "*?[") != NULL;
}

/*
 * Whether the user named this cgroup (-G PATH, or -G container:NAME / pod:NS/NAME without a
 * glob), rather than a glob or --all-* finding it: a named cgroup has a row every interval,
 * the others only in intervals where they ran (session.c).
 */
static bool named(const struct selection *sel, __u64 id, const char *path)
{
	const struct container_info *info;

	for (int i = 0; i < sel->nr_patterns; i++)
		if (!cgroup_is_pattern(sel->patterns[i]) && !strcmp(sel->patterns[i], path))
			return true;
	if (!sel->nr_selectors)
		return false;
	info = containers_lookup(sel->containers, id, path);
	for (int i = 0; i < sel->nr_selectors; i++) {
		const struct container_selector *cs = &sel->selectors[i];

		if (cs->kind != SELECT_ALL_CONTAINERS && !has_glob(cs->name) &&
		    !has_glob(cs->namespace) && container_selector_match(cs, info))
			return true;
	}
	return false;
}

/* Which selectors found a cgroup now tracked: those are not said to match nothing. */
static void mark_matched(struct selection *sel, __u64 id, const char *path)
{
	const struct container_info *info;

	for (int i = 0; i < sel->nr_patterns; i++)
		sel->pattern_matched[i] |= cgroup_match(sel->patterns[i], path);
	if (!sel->nr_selectors)
		return;
	info = containers_lookup(sel->containers, id, path);
	for (int i = 0; i < sel->nr_selectors; i++)
		sel->selector_matched[i] |= container_selector_match(&sel->selectors[i], info);
}

/*
 * Starts tracking id. The mkdir hook has usually put it in the map already (EEXIST is fine);
 * inserting anyway covers the hook's insert having failed.
 */
static int track(struct selection *sel, __u64 id, const char *path)
{
	bool refused = false;
	int err;

	err = collector__track(sel->col, id);
	if (err == -E2BIG) {
		/* Remembered as refused, so that the next rescan does not warn again. */
		pr_warn("cannot track cgroup '%s': the maps are full (see --max-cgroups)", path);
		refused = true;
	} else if (err) {
		pr_err("cannot track cgroup '%s': %s", path, strerror(-err));
		return err;
	}
	err = tracker_add(sel->tk, id, path, refused);
	if (err)
		return err;
	mark_matched(sel, id, path);
	err = name_tracked(sel, sel->tk->nr - 1);
	sel->tk->tracked[sel->tk->nr - 1].named = named(sel, id, path);
	return err;
}

static int rescan_cb(const char *path, __u64 id, void *ctx)
{
	struct selection *sel = ctx;
	int i = tracker_find(sel->tk, id);
	int err;

	if (i < 0)
		return track(sel, id, path);
	sel->tk->tracked[i].present = true;
	/* The same id under another path (v2 has no rename: a path seen through another
	 * cgroup namespace or mount, say). */
	if (strcmp(sel->tk->tracked[i].path, path) != 0) {
		err = tracker_rename(sel->tk, i, path);
		if (err)
			return err;
	}
	return sel->tk->tracked[i].names.container || sel->tk->tracked[i].names.pod ? 0 :
	       name_tracked(sel, i);
}

/* The walk for the selectors: every container and pod cgroup, matched by name. */
static int select_cb(const char *path, __u64 id, void *ctx)
{
	struct selection *sel = ctx;

	if (!selected(sel, containers_lookup(sel->containers, id, path)))
		return 0;
	return rescan_cb(path, id, ctx);
}

/*
 * Finds what the patterns match now. A tracked cgroup that no longer matches is gone. The
 * root ("-G /") is never gone.
 */
static void rescan(struct selection *sel)
{
	int err = 0;

	for (int i = 0; i < sel->tk->nr; i++)
		sel->tk->tracked[i].present = false;
	for (int i = 0; i < sel->nr_patterns && !err; i++)
		err = cgroup_expand(sel->view.root, sel->patterns[i], rescan_cb, sel);
	if (!err && sel->o->all_cgroups)
		err = cgroup_walk(sel->view.root, sel->o->depth, rescan_cb, sel);
	if (!err && sel->nr_selectors) {
		containers_sweep_begin(sel->containers);
		err = cgroup_walk(sel->view.root, CGTMA_MAX_LEVEL, select_cb, sel);
		if (!err)
			containers_sweep_end(sel->containers);
	}
	if (err) {
		/* Do not mistake a failed scan for removals. */
		for (int i = 0; i < sel->tk->nr; i++)
			sel->tk->tracked[i].present = true;
		pr_warn("cannot rescan cgroups under %s: %s", sel->view.shown, strerror(-err));
	}
}

/*
 * Whether a new cgroup that no selector matches (yet) may still be a container being named:
 * then it stays counted, for a few intervals (pending).
 */
static bool await_name(struct selection *sel, __u64 id, const char *path)
{
	const struct container_info *info;

	if (!sel->nr_selectors)
		return false;
	info = containers_lookup(sel->containers, id, path);
	if (!info || (info->ref.is_pod ? info->pod != NULL : info->name != NULL))
		return false;	/* no container, or named and not selected */
	if (ALLOC_GROW(sel->pending, sel->nr_pending + 1, sel->cap_pending))
		return false;
	sel->pending[sel->nr_pending++] = (struct pending){ .id = id };
	return true;
}

/*
 * After a rescan: a pending cgroup tracked now was found by a selector (counted from its
 * birth); one that waited long enough, or is gone, is no longer counted.
 */
static void settle_pending(struct selection *sel)
{
	for (int i = sel->nr_pending - 1; i >= 0; i--) {
		struct pending *p = &sel->pending[i];

		if (tracker_find(sel->tk, p->id) < 0 && ++p->age < PENDING_INTERVALS)
			continue;
		if (tracker_find(sel->tk, p->id) < 0) {
			collector__untrack(sel->col, p->id);
			containers_forget(sel->containers, p->id);
		}
		*p = sel->pending[--sel->nr_pending];
	}
}

/* Cgroups born since the last interval, counted by the BPF side since their mkdir. */
static int adopt_new_cgroups(struct selection *sel)
{
	struct cgtma_new_cgroup n;
	char path[sizeof(n.path)];
	int err;

	while (collector__pop_new_cgroup(sel->col, &n) == 0) {
		n.path[sizeof(n.path) - 1] = '\0';
		if (tracker_find(sel->tk, n.id) >= 0)
			continue;
		/* The hook records host paths; outside the view (or gone): not ours. */
		if (cgview_translate(sel->view.kind, sel->view.root, n.path, n.id, path,
				     sizeof(path))) {
			err = collector__untrack(sel->col, n.id);
			if (err)
				return err;
			continue;
		}
		if (!wanted(sel, n.id, path)) {
			if (await_name(sel, n.id, path))
				continue;
			containers_forget(sel->containers, n.id);
			err = collector__untrack(sel->col, n.id);
			if (err)
				return err;
			continue;
		}
		err = track(sel, n.id, path);
		if (err)
			return err;
	}
	return 0;
}

static int initial_scan_cb(const char *path, __u64 id, void *ctx)
{
	struct selection *sel = ctx;

	return tracker_find(sel->tk, id) >= 0 ? 0 : track(sel, id, path);
}

static int initial_select_cb(const char *path, __u64 id, void *ctx)
{
	struct selection *sel = ctx;

	if (!selected(sel, containers_lookup(sel->containers, id, path)))
		return 0;
	return initial_scan_cb(path, id, ctx);
}

/* The container or pod names close to what a selector asks for (suggest.h). */
struct named_suggest {
	struct selection *sel;
	const struct container_selector *cs;
	struct suggest *sg;
};

static int suggest_name_cb(const char *path, __u64 id, void *ctx)
{
	struct named_suggest *ns = ctx;
	const struct container_info *info = containers_lookup(ns->sel->containers, id, path);
	char name[600];

	if (!info)
		return 0;
	if (ns->cs->kind == SELECT_POD && info->pod)
		snprintf(name, sizeof(name), "pod:%s/%s", info->namespace ? info->namespace : "",
			 info->pod);
	else if (ns->cs->kind == SELECT_CONTAINER && info->name)
		snprintf(name, sizeof(name), "container:%s", info->name);
	else
		return 0;
	return suggest_add(ns->sg, name);
}

static void selector_suggestions(struct selection *sel, int i, char *buf, size_t len)
{
	struct suggest sg;
	struct named_suggest ns = { sel, &sel->selectors[i], &sg };

	buf[0] = '\0';
	suggest_init(&sg, sel->selector_args[i]);
	if (cgroup_walk(sel->view.root, CGTMA_MAX_LEVEL, suggest_name_cb, &ns) == 0 &&
	    suggest_found(&sg))
		suggest_format(&sg, buf, len);
	suggest_release(&sg);
}

/*
 * Each selector that matched nothing (yet, or at_end: during the whole run), with the close
 * names that exist now: a glob or a container's name; a path named by -G exists (else the
 * run did not start) and stays tracked.
 */
static int say_unmatched(struct selection *sel, bool at_end)
{
	char close[SUGGEST_LEN];
	int n = 0;
	const char *hint;

	for (int i = 0; i < sel->nr_patterns; i++) {
		if (sel->pattern_matched[i] || !cgroup_is_pattern(sel->patterns[i]))
			continue;
		n++;
		path_suggestions(sel, sel->patterns[i], close, sizeof(close));
		if (at_end)
			pr_warn("'%s' never matched a cgroup during the run%s%s", sel->patterns[i],
				*close ? "; " : "", close);
		else
			pr_warn("'%s' matches no cgroup yet; watching for it%s%s", sel->patterns[i],
				*close ? "; " : "", close);
	}
	for (int i = 0; i < sel->nr_selectors; i++) {
		const char *what = sel->selectors[i].kind == SELECT_POD ? "pod" : "container";

		if (sel->selector_matched[i])
			continue;
		n++;
		if (!sel->selector_args[i]) {
			pr_warn("no container or pod %s --all-containers%s", at_end ?
				"was found by" : "matches", at_end ? " during the run" :
				" yet; watching for one");
			continue;
		}
		selector_suggestions(sel, i, close, sizeof(close));
		hint = container_selector_hint(&sel->selectors[i]);
		if (hint)
			snprintf(close + strlen(close), sizeof(close) - strlen(close), "%s%s",
				 *close ? "; " : "", hint);
		if (at_end)
			pr_warn("-G '%s' never matched a %s during the run%s%s",
				sel->selector_args[i], what, *close ? "; " : "", close);
		else
			pr_warn("-G '%s' matches no %s yet; watching for it%s%s",
				sel->selector_args[i], what, *close ? "; " : "", close);
	}
	return n;
}

int selection_unmatched(struct selection *sel)
{
	return sel->tk ? say_unmatched(sel, true) : 0;
}

int selection_start(struct selection *sel, struct collector *col, struct tracker *tk)
{
	int err = 0;

	sel->col = col;
	sel->tk = tk;
	collector__cgroups_changed(sel->col, &sel->changes_seen);
	for (int i = 0; i < sel->nr_patterns && !err; i++)
		err = cgroup_expand(sel->view.root, sel->patterns[i], initial_scan_cb, sel);
	if (!err && sel->o->all_cgroups)
		err = cgroup_walk(sel->view.root, sel->o->depth, initial_scan_cb, sel);
	if (!err && sel->nr_selectors)
		err = cgroup_walk(sel->view.root, CGTMA_MAX_LEVEL, initial_select_cb, sel);
	if (err) {
		pr_err("cannot list cgroups under %s: %s", sel->view.shown, strerror(-err));
		return err;
	}
	/* Matching nothing yet is fine: containers come and go. A typo is said. */
	say_unmatched(sel, false);
	return 0;
}

bool selection_active(const struct selection *sel)
{
	return sel->nr_patterns || sel->o->all_cgroups || sel->nr_selectors;
}

/*
 * -p's processes, each interval: one that moved has its new cgroup tracked from now on (the
 * one it left keeps its rows); one that exited is said once, and its last cgroup stays.
 */
static int follow_pids(struct selection *sel)
{
	char path[4096];
	__u64 id;
	int err;

	for (int i = 0; i < sel->nr_pids; i++) {
		struct pid_cgroup *pc = &sel->pids[i];
		char *dup;

		unsigned long long start;

		if (pc->exited)
			continue;
		err = pid_start_time(pc->pid, &start);
		if (!err && start != pc->start)
			err = -ESRCH;	/* the pid is another process's now */
		if (!err)
			err = pid_cgroup_path(sel, pc->pid, path, sizeof(path));
		if (err == -ESRCH || err == -ENOENT) {
			pr_notice("-p %d: the process exited; its last cgroup '%s' stays tracked",
				  pc->pid, pc->path);
			pc->exited = true;
			continue;
		}
		if (err || !strcmp(path, pc->path))
			continue;	/* unreadable now: it is looked at again next interval */
		dup = strdup(path);
		if (!dup || add_pattern(sel, path)) {
			free(dup);
			return -ENOMEM;
		}
		pr_notice("-p %d moved to cgroup '%s': tracking it too", pc->pid, path);
		free(pc->path);
		pc->path = dup;
		if (cgroup_id(sel->view.root, path, &id) == 0 && tracker_find(sel->tk, id) < 0) {
			err = track(sel, id, path);
			if (err)
				return err;
		}
	}
	return 0;
}

int selection_update(struct selection *sel)
{
	int err;

	if (!selection_active(sel))
		return 0;
	err = adopt_new_cgroups(sel);
	if (!err)
		err = follow_pids(sel);
	if (err)
		return err;
	/*
	 * With thousands of cgroups, a walk is most of an interval's cost; a container waiting
	 * for its name is looked for again all the same.
	 */
	if (collector__cgroups_changed(sel->col, &sel->changes_seen) || sel->nr_pending)
		rescan(sel);
	settle_pending(sel);
	return 0;
}

void selection_retire(struct selection *sel)
{
	/*
	 * Gone cgroups were reported once; stop counting them, and keep only what the summary
	 * needs. Backwards: retiring moves the last one into the hole.
	 */
	for (int t = sel->tk ? sel->tk->nr - 1 : -1; t >= 0; t--) {
		if (sel->tk->tracked[t].present)
			continue;
		collector__untrack(sel->col, sel->tk->tracked[t].id);
		containers_forget(sel->containers, sel->tk->tracked[t].id);
		if (tracker_retire(sel->tk, t))
			pr_warn("out of memory: a removed cgroup's totals are folded into the "
				"summary's '(removed)' row");
	}
}

void selection_release(struct selection *sel)
{
	cgview__close(&sel->view);
	for (int i = 0; i < sel->nr_patterns; i++)
		free(sel->patterns[i]);
	free(sel->patterns);
	free(sel->pattern_matched);
	free(sel->selectors);
	free(sel->selector_args);
	free(sel->selector_matched);
	free(sel->pending);
	for (int i = 0; sel->pids && i < sel->o->nr_pids; i++)
		free(sel->pids[i].path);	/* those set before a failed setup too */
	free(sel->pids);
	containers_free(sel->containers);
	memset(sel, 0, sizeof(*sel));
	sel->view.fd = -1;
}
