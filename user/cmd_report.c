// SPDX-License-Identifier: GPL-2.0
/*
 * cgtma report FILE: every output of a live run, recomputed from a --record file. The model
 * is the one recorded (its JSON text travels in the file), planned again at the level asked
 * for; each recorded interval goes through interval_derive() and the same sinks a live run
 * feeds, so `report --json` prints what the live `--json` printed. Needs no BPF and no PMU.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "commands.h"
#include "exitstatus.h"
#include "interval.h"
#include "log.h"
#include "options.h"
#include "output.h"
#include "record.h"
#include "stackfiles.h"
#include "strbuf.h"

static void usage(FILE *f)
{
	fprintf(f,
"Usage: cgtma report FILE [--json | -x SEP | --top N] [-l N] [--cdm DIR] [--html OUT.html]\n"
"                         [--folded OUT [--folded-pid]] [--pprof OUT.pb.gz] [-v]\n"
"\n"
"Recomputes the intervals and the summary of a run recorded with `cgtma --record FILE`,\n"
"from its raw counts and the model it recorded; on any machine, without BPF or a PMU.\n"
"\n"
"  -j, --json          one JSON object per interval and line, as the live --json\n"
"  -x, --csv SEP       toplev's CSV, as the live -x\n"
"      --cdm DIR       crucible (Common Data Model) metric files in DIR\n"
"      --html FILE     one self-contained page: charts per cgroup over time, and a flame\n"
"                      graph per cgroup when the run sampled (--sample)\n"
"      --folded FILE   the sampled stacks of the first sampled event, folded: a line\n"
"                      'CGROUP;outer;...;leaf COUNT' per stack (flamegraph.pl, speedscope)\n"
"      --folded-pid    --folded: each stack's thread name and process after the cgroup,\n"
"                      'CGROUP;COMM-PID;outer;...' (stackcollapse-perf.pl --pid's frame)\n"
"      --pprof FILE    the sampled stacks as a gzipped pprof profile, every event, labelled\n"
"                      by cgroup, pid and comm (go tool pprof, Pyroscope, Parca, Grafana)\n"
"                      --html, --folded and --pprof alone print nothing else\n"
"      --top N         the terminal shows the N busiest cgroups of each interval (by CPU\n"
"                      time) and one row summing the rest, as the live --top\n"
"  -l, --level N       Top-Down levels (default: as recorded); deeper than recorded needs\n"
"                      events the run did not count\n"
"  -v, --verbose       show nodes below threshold and idle cgroups\n"
"  -h, --help          this help\n"
"\n"
"A cut or damaged file is reported up to the damage, then the error; the exit status is 1.\n"
"--folded and --pprof need a record with samples, and write their file whole or not at all.\n"
"Intervals the live run could not write (a full disk) are missing, with a warning\n"
"saying where.\n"
"Exit status: 0 success, 1 failure (or a damaged file), 2 bad usage.\n"
"\n"
"Examples:\n"
"  cgtma -G /bench -d 60 --record bench.cgtma && cgtma report bench.cgtma -l 1\n"
"  cgtma report bench.cgtma --json | jq .rows[0].nodes\n"
"  cgtma report bench.cgtma --html bench.html\n"
"  cgtma report bench.cgtma --folded bench.folded && flamegraph.pl bench.folded > fg.svg\n"
"  cgtma report bench.cgtma --pprof bench.pb.gz && go tool pprof -top bench.pb.gz\n");
}

struct report_args {
	const char *file;
	struct output_opts out;
	const char *folded;	/* --folded FILE */
	bool folded_pid;	/* --folded-pid */
	const char *pprof;	/* --pprof FILE */
	int level;		/* 0: as recorded */
	bool verbose;
	bool help;
};

static int parse_args(int argc, char **argv, struct report_args *a)
{
	enum { OPT_HTML = OPT_COMMAND_FIRST, OPT_FOLDED, OPT_FOLDED_PID, OPT_PPROF, OPT_TOP };
	static const struct option long_options[] = {
		OUTPUT_LONG_OPTIONS,
		{ "html", required_argument, NULL, OPT_HTML },
		{ "folded", required_argument, NULL, OPT_FOLDED },
		{ "folded-pid", no_argument, NULL, OPT_FOLDED_PID },
		{ "pprof", required_argument, NULL, OPT_PPROF },
		{ "top", required_argument, NULL, OPT_TOP },
		{ "level", required_argument, NULL, 'l' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	int c;

	optind = 1;
	opterr = 0;	/* option_error() says them */
	while ((c = getopt_long(argc, argv, ":jx:l:vh", long_options, NULL)) != -1) {
		if (output_opt(&a->out, c, optarg))
			continue;
		switch (c) {
		case OPT_HTML:
			a->out.html = optarg;
			break;
		case OPT_FOLDED:
			a->folded = optarg;
			break;
		case OPT_FOLDED_PID:
			a->folded_pid = true;
			break;
		case OPT_PPROF:
			a->pprof = optarg;
			break;
		case OPT_TOP:
			if (opt_int("--top", optarg, 1, INT_MAX, "", &a->out.top))
				return -EINVAL;
			break;
		case 'l':
			if (opt_int("--level", optarg, 1, LEVEL_MAX, "", &a->level))
				return -EINVAL;
			break;
		case 'v':
			a->verbose = true;
			break;
		case 'h':
			a->help = true;
			return 0;
		default:
			option_error("report", long_options, c, argv);
			return -EINVAL;
		}
	}
	if (a->folded_pid && !a->folded) {
		pr_err("report: --folded-pid shapes the --folded file: add --folded FILE");
		return -EINVAL;
	}
	if (optind >= argc) {
		pr_err("report: no record file (see 'cgtma report --help')");
		return -EINVAL;
	}
	if (optind + 1 < argc) {
		pr_err("report: one record file, not '%s' too", argv[optind + 1]);
		return -EINVAL;
	}
	a->file = argv[optind];
	return output_opts_check(&a->out);
}

struct replay {
	const char *file;
	struct record_reader *reader;
	const struct record_header *h;
	struct model *model;
	struct plan *plan;
	char *metrics;			/* the plan's --metrics: the recorded ones' names */
	int *map;			/* run event -> recorded event */
	struct cgtma_count *sums;	/* one scope's sums, while they are reordered */
	const char **names;
	struct run run;
	struct output *outputs[OUTPUTS_MAX];
	int nr_outputs;
};

static void print_damage(const char *file, const struct record_error *e)
{
	if (e->offset < RECORD_FILE_HEAD)
		pr_err("%s: %s", file, e->what);
	else
		pr_err("%s: record %ld at byte %lld: %s", file, e->index, e->offset, e->what);
}

static int load_model(struct replay *rp)
{
	const struct record_header *h = rp->h;
	char origin[4200];
	int err;

	if (h->run.model_source) {
		snprintf(origin, sizeof(origin), "%s (the recorded model '%s')", rp->file,
			 h->run.model);
		err = model_load_string(origin, h->run.model_source, h->model_source_len,
					 &rp->model);
		/* The record's own text: a damaged record, not the user's input. */
		return not_usage(err);
	}
	/* Written by a cgtma that did not record the model's text: the built-in one. */
	err = model_load_builtin(h->run.model, &rp->model);
	if (err) {
		pr_err("%s: the record has no model text and '%s' is not a built-in model",
		       rp->file, h->run.model);
		return not_usage(err);
	}
	pr_warn("%s: the record has no model text: using this cgtma's built-in model '%s'",
		rp->file, h->run.model);
	return 0;
}

/* Which recorded event each of the plan's events is; names the ones never counted. */
static int map_events(struct replay *rp, int level)
{
	const struct record_header *h = rp->h;
	const struct plan *p = rp->plan;
	char missing[1024] = "";
	int nr_missing = 0;

	rp->map = calloc(p->nr_events, sizeof(*rp->map));
	rp->names = calloc(p->nr_events, sizeof(*rp->names));
	rp->sums = calloc(p->nr_events, sizeof(*rp->sums));
	if (!rp->map || !rp->names || !rp->sums) {
		pr_err("out of memory");
		return -ENOMEM;
	}
	/*
	 * The plan's n-th copy of an event reads the record's n-th copy (the same group when
	 * the plans match), or its first when the record has fewer (another level's plan, or
	 * one made before events were counted again per group).
	 */
	for (int i = 0; i < p->nr_events; i++) {
		int copy = 0, seen = 0;

		for (int j = 0; j < i; j++)
			copy += !strcmp(p->events[j].name, p->events[i].name);
		rp->names[i] = p->events[i].name;
		rp->map[i] = -1;
		for (int k = 0; k < h->run.nr_events; k++) {
			if (strcmp(h->run.event_names[k], p->events[i].name))
				continue;
			if (!seen || seen == copy)
				rp->map[i] = k;
			if (seen++ == copy)
				break;
		}
		if (rp->map[i] >= 0)
			continue;
		if (nr_missing < 8)
			snprintf(missing + strlen(missing), sizeof(missing) - strlen(missing),
				 "%s%s", nr_missing ? ", " : "", p->events[i].name);
		nr_missing++;
	}
	if (!nr_missing)
		return 0;
	if (nr_missing > 8)
		snprintf(missing + strlen(missing), sizeof(missing) - strlen(missing),
			 " and %d more", nr_missing - 8);
	pr_err("%s: level %d needs events the run did not count (it recorded level %d): %s",
	       rp->file, level, h->run.level, missing);
	return -EINVAL;		/* -l asked for more than was recorded */
}

/* ", NAME" for each of a's names not in b, 8 at most, into buf; how many there are. */
static int names_missing(const char *const *a, int na, const char *const *b, int nb, char *buf,
			 size_t len)
{
	int n = 0;

	buf[0] = '\0';
	for (int i = 0; i < na; i++) {
		int k = 0;

		while (k < nb && strcmp(a[i], b[k]))
			k++;
		if (k < nb)
			continue;
		if (n++ < 8)
			snprintf(buf + strlen(buf), len - strlen(buf), ", %s", a[i]);
	}
	if (n > 8)
		snprintf(buf + strlen(buf), len - strlen(buf), " and %d more", n - 8);
	return n;
}

/*
 * The plan computes the metrics the run computed, those the record names (version 7 on):
 * the outputs then show what the live run's showed, or report says why it cannot. Metrics
 * the model has gained since (a record made before, or by a tool that computed none) are
 * computed too; only one the run computed and the plan lacks stops the report.
 */
static int check_metrics(const struct replay *rp, bool say)
{
	const struct record_header *h = rp->h;
	const struct plan *p = rp->plan;
	const char **planned = calloc(p->nr_metrics + 1, sizeof(*planned));
	char lacks[512], extra[512];
	int nl, ne;

	if (!planned) {
		pr_err("out of memory");
		return -ENOMEM;
	}
	for (int i = 0; i < p->nr_metrics; i++)
		planned[i] = p->metrics[i].name;
	nl = names_missing((const char *const *)h->metrics, h->nr_metrics, planned,
			   p->nr_metrics, lacks, sizeof(lacks));
	ne = names_missing(planned, p->nr_metrics, (const char *const *)h->metrics,
			   h->nr_metrics, extra, sizeof(extra));
	free(planned);
	if (nl && say)
		pr_err("%s: the run computed metrics this cgtma does not plan from the recorded "
		       "model: %s", rp->file, lacks + 2);
	if (nl && ne && say)
		pr_err("%s: this cgtma plans metrics the run did not compute: %s", rp->file,
		       extra + 2);
	return nl ? -EIO : 0;
}

/* Whether every metric the run computed is a default one of the model (it had no -m). */
static bool only_defaults(const struct model *m, const struct record_header *h)
{
	for (int i = 0; i < h->nr_metrics; i++)
		if (!model_metric_is_default(m, h->metrics[i]))
			return false;
	return true;
}

/* The recorded metrics' names, comma-separated (malloc'd), or NULL when out of memory. */
static char *metrics_list(const struct record_header *h)
{
	struct strbuf b = STRBUF_INIT;

	for (int i = 0; i < h->nr_metrics; i++) {
		if (i)
			strbuf_addstr(&b, ",");
		strbuf_addstr(&b, h->metrics[i]);
	}
	return strbuf_detach(&b, NULL);
}

/* level: the one asked for, and then the one shown (a model's depth at most). */
static int setup_plan(struct replay *rp, int *level)
{
	const struct record_header *h = rp->h;
	struct model_options mo = {};
	char notice[128];
	int err;

	err = load_model(rp);
	if (err)
		return err;
	*level = model_level(rp->model, *level, notice, sizeof(notice));
	if (*notice)
		pr_notice("%s", notice);
	mo.level = model_max_level(rp->model) ? *level : 1;
	mo.perf_metrics = h->run.perf_metrics;
	mo.smt = h->run.smt;
	mo.nmi_watchdog = h->nmi_watchdog;
	mo.spare_tree = true;
	mo.metrics_by_name = true;
	/*
	 * The metrics the run computed, by name (--metrics takes names), where it had -m; a run
	 * without computed default metrics only, those that spared the tree.
	 */
	if (h->nr_metrics && !(rp->metrics = metrics_list(h))) {
		pr_err("out of memory");
		return -ENOMEM;
	}
	if (!only_defaults(rp->model, h))
		mo.metrics = rp->metrics;
	err = plan_new(rp->model, &mo, &rp->plan);
	if (!err && !mo.metrics && h->has_metrics && check_metrics(rp, false)) {
		/* a record of a run that counted every default metric beside the tree */
		plan_free(rp->plan);
		mo.metrics = rp->metrics;
		err = plan_new(rp->model, &mo, &rp->plan);
	}
	if (err)
		return -EIO;	/* as recorded, the plan was made once: a damaged record */
	if (h->has_metrics && (err = check_metrics(rp, true)))
		return err;
	return map_events(rp, *level);
}

/* The run as recorded, but for what report's own options change: the level, its plan, -v. */
static int setup_run(struct replay *rp, const struct report_args *a)
{
	const struct record_header *h = rp->h;
	struct run *run = &rp->run;
	int level = a->level ? a->level : h->run.level;
	int err;

	*run = h->run;
	run->level = level;
	run->verbose = a->verbose;
	if (h->has_plan) {
		err = setup_plan(rp, &run->level);
		if (err)
			return err;
		run->plan = rp->plan;
		run->nr_events = rp->plan->nr_events;
		run->event_names = rp->names;
	} else if (a->level) {
		pr_err("-l: %s recorded events (-e), not a Top-Down model", rp->file);
		return -EINVAL;
	}
	return 0;
}

static int open_outputs(struct replay *rp, struct report_args *a)
{
	struct output_opts *oo = &a->out;
	int err;

	/* Files to write, not a reason to print the intervals too. */
	oo->no_stdout = (oo->html || a->folded || a->pprof) && !oo->json && !oo->csv_sep &&
			!oo->cdm_dir;
	/* -EINVAL: an output's argument is malformed, as in a live run. */
	err = outputs_open(oo, rp->outputs, &rp->nr_outputs);
	if (err)
		return err;
	/* A sink that cannot start would only fail at every interval: stop here. */
	return outputs_begin(rp->outputs, rp->nr_outputs, &rp->run) ? -EIO : 0;
}

/*
 * The recorded interval as a live one of the plan: each scope's sums reordered into the
 * plan's events, in place when the plan has no more events than were recorded, then derived.
 */
static int replay_interval(struct replay *rp, struct interval *rec)
{
	int n = rp->run.nr_events;

	for (int i = 0; rp->map && i < rec->nr_scopes; i++) {
		struct scope *s = &rec->scopes[i];

		for (int k = 0; k < n; k++)
			rp->sums[k] = s->sum[rp->map[k]];
		if (n <= rp->h->run.nr_events)
			memcpy(s->sum, rp->sums, n * sizeof(*s->sum));
		else if (scope_set_sums(s, rp->sums, n))
			return -ENOMEM;
	}
	return interval_derive(&rp->run, rec);
}

static int replay_all(struct replay *rp)
{
	struct interval rec = {};
	struct record_error e;
	long index = 0, missing = 0, now_missing;
	int ret = 0, err;

	while ((err = record_reader__next(rp->reader, &rec, &e)) > 0) {
		index++;
		/* Said where they are missing, as the outputs go on past the gap. */
		now_missing = record_reader__missing(rp->reader);
		if (now_missing > missing) {
			char when[32];
			time_t t = (time_t)rec.time;

			strftime(when, sizeof(when), "%H:%M:%S", localtime(&t));
			pr_warn("%s: %ld interval(s) missing before the one ending at %s: the live "
				"run could not write them", rp->file, now_missing - missing, when);
			missing = now_missing;
		}
		err = replay_interval(rp, &rec);
		if (err) {
			pr_err("%s: interval %ld in the file: cannot compute it: %s", rp->file,
			       index, strerror(-err));
			ret = not_usage(err);
			break;
		}
		/* Before the summary (the page is drawn then), every profile record is read. */
		outputs_profile(rp->outputs, rp->nr_outputs, record_reader__profile(rp->reader));
		if (outputs_emit(rp->outputs, rp->nr_outputs, &rp->run, &rec))
			ret = -EIO;	/* each sink has said what it could not write */
	}
	if (missing)
		pr_warn("%s: %ld interval(s) are not in the record: the live run could not write "
			"them and went on", rp->file, missing);
	if (err == -EBADMSG) {
		print_damage(rp->file, &e);
		ret = err;
	} else if (err < 0 && ret == 0) {
		pr_err("cannot read record '%s': %s", rp->file, strerror(-err));
		ret = not_usage(err);
	}
	interval_free(&rec);
	return ret;
}

/* What the live run's sampling lost, said as the live run said it at its end. */
static void report_lost(const struct replay *rp)
{
	const struct profile *p = record_reader__profile(rp->reader);
	char lost[256];

	if (p && profile_lost_any(&p->lost))
		pr_warn("%s: --sample: %s", rp->file, profile_lost_text(&p->lost, lost,
									   sizeof(lost)));
}

/* --folded and --pprof, from the samples read (all of them, or those before damage). */
static int write_samples(const struct replay *rp, const struct report_args *a)
{
	const struct profile *p = record_reader__profile(rp->reader);

	if (!a->folded && !a->pprof)
		return 0;
	if (!p || !p->nr_samples) {
		pr_err("%s: %s: nothing for %s", rp->file,
		       p ? "the run sampled no stack in a tracked cgroup" :
			   "no samples (the run was not recorded with --sample)",
		       a->folded && a->pprof ? "--folded and --pprof" :
		       a->folded ? "--folded" : "--pprof");
		return -ENODATA;
	}
	return not_usage(stackfiles_write(p, a->folded, a->folded_pid, a->pprof));
}

static int report(int argc, char **argv)
{
	struct report_args a = {};
	struct replay rp = {};
	struct record_error e;
	int err;

	err = parse_args(argc, argv, &a);
	if (err || a.help) {
		if (a.help)
			usage(stdout);
		return exit_status(err);
	}
	rp.file = a.file;
	if (stackfiles_check(a.folded, a.pprof))
		return EXIT_FAILURE;
	err = record_reader__open(a.file, &rp.reader, &e);
	if (err == -EBADMSG) {
		print_damage(a.file, &e);
		return EXIT_FAILURE;
	}
	if (err) {
		pr_err("cannot open record '%s': %s", a.file, strerror(-err));
		return EXIT_FAILURE;
	}
	rp.h = record_reader__header(rp.reader);
	err = setup_run(&rp, &a);
	if (!err)
		err = open_outputs(&rp, &a);
	if (!err) {
		err = replay_all(&rp);
		/*
		 * What was read before damage is still written, and the status says the
		 * damage; with no sample before it, the damage alone is said.
		 */
		if (!err || record_reader__profile(rp.reader)) {
			int werr = write_samples(&rp, &a);

			err = err ?: werr;
		}
		report_lost(&rp);
	}

	for (int i = 0; i < rp.nr_outputs; i++)
		output_close(rp.outputs[i]);
	free(rp.map);
	free(rp.sums);
	free(rp.names);
	plan_free(rp.plan);
	free(rp.metrics);
	model_free(rp.model);
	record_reader__close(rp.reader);
	return exit_status(err);
}

int cmd_report(int argc, char **argv)
{
	int ret = report(argc, argv);

	/* --json made errors JSON lines for this command only. */
	log_set_json(false);
	return ret;
}
