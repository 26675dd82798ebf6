// SPDX-License-Identifier: GPL-2.0
/*
 * cgtma compute: the Top-Down tree of a model from counts given as JSON, without a PMU.
 * It is the offline twin of a live interval (the same plan, the same tma_compute), for
 * checking a model against toplev and for recomputing counts recorded elsewhere.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "commands.h"
#include "exitstatus.h"
#include "jsonfile.h"
#include "log.h"
#include "options.h"
#include "output.h"

#define COUNTS_MAX_SIZE (64 << 20)

static void usage(FILE *f)
{
	fprintf(f,
"Usage: cgtma compute (--model NAME | --model-file FILE) [-l N]\n"
"                     [--perf-metrics|--no-perf-metrics] [--smt|--no-smt]\n"
"                     [--nmi-watchdog|--no-nmi-watchdog] [--slots N] [--interval S]\n"
"                     [--cpu-time S] [-m | --metrics LIST] [--json] COUNTS.json\n"
"\n"
"Computes the Top-Down tree of a model from event counts, offline. COUNTS.json is one\n"
"JSON object, event name -> count, with the model's event names; '-' reads stdin.\n"
"\n"
"  -M, --model NAME    a built-in model (cgtma --list-models)\n"
"  --model-file FILE   a model file (with --model too, its name must be NAME)\n"
"  -l, --level N       report nodes of levels 1..N (1 to 6, default 1; beyond the model's\n"
"                      depth, every level it has)\n"
"  --perf-metrics      use the perf-metrics formulas (topdown_use_fixed); default: when\n"
"                      the model has them and the counts hold all their events\n"
"  --no-perf-metrics   use the generic-counter formulas\n"
"  --smt, --no-smt     smt_enabled for the formulas (default --no-smt)\n"
"  --nmi-watchdog, --no-nmi-watchdog\n"
"                      group the events as a run would with the NMI watchdog holding a\n"
"                      counter, or not (default --no-nmi-watchdog): it decides which\n"
"                      nodes are split\n"
"  --slots N           slots per cycle, perf's #slots on Arm (default: the model's width)\n"
"  --interval S        the interval's length in seconds, for rates (default 1)\n"
"  --cpu-time S        the scope's busy CPU time in seconds, cpu_s in expressions (GHz's\n"
"                      divisor; default: --interval's, one CPU busy throughout)\n"
"  -m, --metrics[=LIST]\n"
"                      every flat metric of the model, beside the default ones (IPC, CPI,\n"
"                      GHz); --metrics LIST only those whose name or group is in LIST\n"
"  -j, --json          print {\"model\": ..., \"nodes\": [...], \"metrics\": [...]}\n"
"\n"
"The tree is printed as a live run prints a scope's with -v: every node, '<' on one below\n"
"its threshold, '<==' on the bottleneck, [split] on one whose events a run puts in several\n"
"groups. Counts are finite and not negative. Exit status: 0 success, 2 bad usage or bad\n"
"input (a file missing, too large or malformed, an event without a count), 1 other\n"
"failures.\n"
"\n"
"Examples:\n"
"  cgtma compute -M spr -l 3 counts.json\n"
"  cgtma compute --model zen4 -l 2 --smt --json - < counts.json\n"
"  cgtma compute --model-file my-model.json --no-perf-metrics counts.json\n"
"  cgtma compute -M spr --interval 2 --cpu-time 1.5 -m counts.json\n");
}

struct compute_args {
	struct measure_opts mo;		/* the model options, as the live run takes them */
	const char *counts;
	double interval_s;
	double cpu_s;			/* 0: interval_s */
	bool json;
	bool help;
};

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* One line, and -EINVAL: bad usage. */
static int usage_error(const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	pr_err("compute: %s (see 'cgtma compute --help')", msg);
	return -EINVAL;
}

static int parse_args(int argc, char **argv, struct compute_args *a)
{
	enum { OPT_INTERVAL = OPT_COMMAND_FIRST, OPT_CPU_TIME };
	static const struct option long_options[] = {
		MODEL_LONG_OPTIONS,
		METRICS_LONG_OPTION,
		{ "interval", required_argument, NULL, OPT_INTERVAL },
		{ "cpu-time", required_argument, NULL, OPT_CPU_TIME },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	char *end;
	int c, ret;

	a->mo = (struct measure_opts){ .perf_metrics = -1, .smt = -1, .nmi_watchdog = -1 };
	a->interval_s = 1;
	optind = 1;
	opterr = 0;	/* option_error() says them */
	while ((c = getopt_long(argc, argv, ":M:l:mjh", long_options, NULL)) != -1) {
		ret = model_opt(&a->mo, c, optarg);
		if (!ret)
			ret = metrics_opt(&a->mo, c, argc, argv);
		if (ret < 0)
			return -EINVAL;
		if (ret)
			continue;
		switch (c) {
		case OPT_INTERVAL:
		case OPT_CPU_TIME: {
			double *v = c == OPT_INTERVAL ? &a->interval_s : &a->cpu_s;

			errno = 0;
			*v = strtod(optarg, &end);
			if (errno || end == optarg || *end || !isfinite(*v) || *v <= 0)
				return usage_error("bad %s '%s' (seconds, more than 0)",
						   c == OPT_INTERVAL ? "interval" : "CPU time",
						   optarg);
			break;
		}
		case 'j':
			a->json = true;
			log_set_json(true);
			break;
		case 'h':
			a->help = true;
			return 0;
		default:
			option_error("compute", long_options, c, argv);
			return -EINVAL;
		}
	}
	if (optind + 1 < argc)
		return usage_error("more than one counts file ('%s')", argv[optind + 1]);
	a->counts = optind < argc ? argv[optind] : NULL;
	if (!a->mo.model && !a->mo.model_file)
		return usage_error("no model: give --model NAME or --model-file FILE");
	if (!a->counts)
		return usage_error("no counts file (give a file, or '-' for stdin)");
	return 0;
}

/* The counts file ('-': stdin): one JSON object of event name -> number. */
static int read_counts(const char *path, json_object **out)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "r") : stdin;
	struct json_parse_error e;
	json_object *obj = NULL;
	size_t len = 0;
	char *buf;
	int err;

	*out = NULL;
	if (!f) {
		err = -errno;
		pr_err("compute: cannot open '%s': %s", path, strerror(-err));
		return err;
	}
	err = json_read(f, COUNTS_MAX_SIZE, &buf, &len);
	if (f != stdin)
		fclose(f);
	if (err) {
		pr_err("compute: cannot read '%s': %s", path, strerror(-err));
		return err;
	}
	err = json_parse_strict(buf, len, &obj, &e);
	free(buf);
	if (err == -EINVAL) {
		pr_err("compute: '%s' is not valid JSON (line %d: %s)", path, e.line, e.what);
	} else if (err) {
		pr_err("compute: cannot parse '%s': %s", path, strerror(-err));
	} else if (!json_object_is_type(obj, json_type_object)) {
		pr_err("compute: '%s' must hold one JSON object (event name -> count)", path);
		err = -EINVAL;
	} else {
		json_object_object_foreach(obj, key, val) {
			double d;

			if (!json_object_is_type(val, json_type_int) &&
			    !json_object_is_type(val, json_type_double)) {
				pr_err("compute: '%s': the count of '%s' is not a number", path, key);
				err = -EINVAL;
				break;
			}
			/* json-c reads 1e400 as infinity: no counter holds that, or less than 0. */
			d = json_object_get_double(val);
			if (!isfinite(d) || d < 0) {
				pr_err("compute: '%s': the count of '%s' is %s (%s): counts are finite "
				       "and not negative", path, key, d < 0 ? "negative" : "not finite",
				       json_object_to_json_string(val));
				err = -EINVAL;
				break;
			}
		}
	}
	if (err) {
		json_object_put(obj);
		return err;
	}
	*out = obj;
	return 0;
}

static int load_model(const struct measure_opts *mo, struct model **mp)
{
	int err;

	if (!mo->model_file)
		return model_load_builtin(mo->model, mp);
	err = model_load_file(mo->model_file, mp);
	if (err)
		return err;
	if (mo->model && strcmp(mo->model, model_name(*mp))) {
		pr_err("compute: model file '%s' holds model '%s', not '%s'", mo->model_file,
		       model_name(*mp), mo->model);
		model_free(*mp);
		*mp = NULL;
		return -EINVAL;
	}
	return 0;
}

/* With neither option, perf-metrics is on when the counts hold its leader and all its events. */
static bool counts_have_perf_metrics(const struct model *m, json_object *counts)
{
	const char *name;

	if (!model_has_perf_metrics(m))
		return false;
	for (int i = 0; (name = model_perf_metrics_event(m, i)); i++) {
		if (!json_object_object_get_ex(counts, name, NULL))
			return false;
	}
	return true;
}

/*
 * Full precision, so that the value read back is the computed double: json-c's default
 * format is %.17g. JSON has no NaN.
 */
static json_object *number_or_null(double v, bool valid)
{
	return valid && isfinite(v) ? json_object_new_double(v) : NULL;
}

static json_object *string_or_null(const char *s)
{
	return s ? json_object_new_string(s) : NULL;
}

/* A new object at the end of array; NULL when out of memory. */
static json_object *append_object(json_object *array)
{
	json_object *o = json_object_new_object();

	if (o && json_object_array_add(array, o)) {
		json_object_put(o);
		o = NULL;
	}
	return o;
}

static int print_json(const struct plan *p, const struct tma_result *r)
{
	json_object *root = json_object_new_object(), *nodes = json_object_new_array();
	json_object *metrics = p->nr_metrics ? json_object_new_array() : NULL, *o;
	const char *text;
	int i, err = 0;

	if (!root || !nodes || (p->nr_metrics && !metrics)) {
		json_object_put(nodes);
		json_object_put(metrics);
		err = -ENOMEM;
		goto out;
	}
	json_object_object_add(root, "model", json_object_new_string(model_name(p->model)));
	json_object_object_add(root, "nodes", nodes);
	for (i = 0; i < p->nr_nodes; i++) {
		o = append_object(nodes);
		if (!o) {
			err = -ENOMEM;
			goto out;
		}
		json_object_object_add(o, "name", json_object_new_string(p->nodes[i].full_name));
		json_object_object_add(o, "value", number_or_null(r->value[i], r->counted[i]));
		json_object_object_add(o, "thresh", json_object_new_boolean(r->above[i]));
		json_object_object_add(o, "bottleneck", json_object_new_boolean(i == r->bottleneck));
		/* computed from counts of several groups, multiplexed apart (only when so) */
		if (p->nodes[i].split)
			json_object_object_add(o, "split", json_object_new_boolean(true));
	}
	if (metrics)
		json_object_object_add(root, "metrics", metrics);
	for (i = 0; i < p->nr_metrics; i++) {
		o = append_object(metrics);
		if (!o) {
			err = -ENOMEM;
			goto out;
		}
		json_object_object_add(o, "name", json_object_new_string(p->metrics[i].name));
		json_object_object_add(o, "value", number_or_null(r->metric[i],
								  r->metric_counted[i]));
		json_object_object_add(o, "unit", string_or_null(p->metrics[i].unit));
	}
	text = json_object_to_json_string_ext(root, JSON_C_TO_STRING_PLAIN |
						    JSON_C_TO_STRING_NOSLASHESCAPE);
	if (!text)
		err = -ENOMEM;
	else if (printf("%s\n", text) < 0 || fflush(stdout))
		err = errno ? -errno : -EIO;
out:
	json_object_put(root);
	return err;
}

/*
 * The counts as one scope of an interval, as a live run would have derived it from counters
 * that ran the whole time: the terminal view prints it as it prints a live scope.
 */
static int counts_scope(const struct run *run, json_object *counts, const char *path,
			double interval_s, double cpu_s, struct interval *iv)
{
	const struct plan *p = run->plan;
	struct tma_input in = { .interval_s = interval_s, .cpu_s = cpu_s };
	bool *counted;
	struct scope *s;
	int err;

	s = interval_add_scope(iv, run, SCOPE_SYSTEM, NULL, -1);
	counted = calloc(p->nr_events + 1, sizeof(*counted));
	if (!s || !counted) {
		free(counted);
		pr_err("compute: out of memory");
		return -ENOMEM;
	}
	for (int i = 0; i < p->nr_events; i++) {
		json_object *v;

		if (!json_object_object_get_ex(counts, p->events[i].name, &v)) {
			pr_err("compute: '%s' has no count for event '%s' (model %s, level %d, "
			       "perf-metrics %s)", path, p->events[i].name, run->model,
			       p->opts.level, p->opts.perf_metrics ? "on" : "off");
			free(counted);
			return -EINVAL;
		}
		s->count[i] = json_object_get_double(v);
		s->multiplex[i] = 1;
		s->state[i] = COUNT_OK;
		counted[i] = true;
	}
	s->ran = true;
	in.counts = s->count;
	in.counted = counted;
	err = tma_result_init(&s->tma, p);
	if (!err) {
		s->has_tma = true;
		err = tma_compute(p, &in, &s->tma);
	}
	free(counted);
	if (err) {
		pr_err("compute: %s", strerror(-err));
		return not_usage(err);
	}
	return 0;
}

static int compute(const struct compute_args *a)
{
	const struct measure_opts *mo = &a->mo;
	struct model_options o = { .smt = mo->smt > 0, .nmi_watchdog = mo->nmi_watchdog > 0,
				   .slots = mo->slots };
	struct interval iv = { .interval_s = a->interval_s, .summary = true };
	struct run run = { .verbose = true };
	json_object *counts = NULL;
	const char **names = NULL;
	struct model *m = NULL;
	struct plan *p = NULL;
	char notice[128];
	int err;

	err = load_model(mo, &m);
	if (!err)
		err = read_counts(a->counts, &counts);
	if (err) {
		err = json_input_error(err);
		goto out;
	}
	if (mo->perf_metrics == 1 && !model_has_perf_metrics(m)) {
		err = usage_error("model '%s' has no perf-metrics path", model_name(m));
		goto out;
	}
	o.perf_metrics = mo->perf_metrics >= 0 ? mo->perf_metrics :
			 counts_have_perf_metrics(m, counts);
	if (mo->metrics && model_metrics_check(m, mo->metrics)) {
		err = -EINVAL;
		goto out;
	}
	o.metrics = mo->metrics;
	o.level = model_level(m, mo->level, notice, sizeof(notice));
	if (*notice)
		pr_notice("%s", notice);
	err = plan_new(m, &o, &p);
	if (err) {
		err = not_usage(err);	/* a model that plans wrong: a failure */
		goto out;
	}
	names = calloc(p->nr_events + 1, sizeof(*names));
	if (!names) {
		pr_err("compute: out of memory");
		err = -ENOMEM;
		goto out;
	}
	for (int i = 0; i < p->nr_events; i++)
		names[i] = p->events[i].name;
	run.model = model_name(m);
	run.plan = p;
	run.nr_events = p->nr_events;
	run.event_names = names;
	run.level = o.level;
	run.perf_metrics = o.perf_metrics;
	run.smt = o.smt;
	err = counts_scope(&run, counts, a->counts, a->interval_s,
			   a->cpu_s ? a->cpu_s : a->interval_s, &iv);
	if (err)
		goto out;
	if (iv.scopes[0].tma.uncounted)
		plan_warn_uncounted(p);
	if (a->json) {
		err = print_json(p, &iv.scopes[0].tma);
	} else {
		printf("model %s: level %d, perf-metrics %s, SMT %s\n", run.model, o.level,
		       o.perf_metrics ? "on" : "off", o.smt ? "on" : "off");
		err = output_text_scopes(stdout, &run, &iv);
		if (!err && fflush(stdout))
			err = -errno;
	}
	if (err) {
		pr_err("compute: cannot print the result: %s", strerror(-err));
		err = not_usage(err);
	}
out:
	interval_free(&iv);
	free(names);
	plan_free(p);
	model_free(m);
	json_object_put(counts);
	return err;
}

int cmd_compute(int argc, char **argv)
{
	struct compute_args a = {};
	int err;

	err = parse_args(argc, argv, &a);
	if (!err && a.help)
		usage(stdout);
	else if (!err)
		err = compute(&a);
	log_set_json(false);
	return exit_status(err);
}
