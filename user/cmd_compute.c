// SPDX-License-Identifier: GPL-2.0
/*
 * cgtma compute: the Top-Down tree of a model from counts given as JSON, without a PMU.
 * It is the offline twin of a live interval (the same plan, the same tma__compute), for
 * checking a model against toplev and for recomputing counts recorded elsewhere.
 */
#include <errno.h>
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
#include "model_internal.h"

#define COUNTS_MAX_SIZE (64 << 20)

static const char usage_text[] =
	"usage: cgtma compute (--model NAME | --model-file FILE) [-l N] [--perf-metrics|--no-perf-metrics]\n"
	"                     [--smt|--no-smt] [--slots N] [--interval S] [--json] COUNTS.json\n"
	"\n"
	"Computes the Top-Down tree of a model from event counts, offline. COUNTS.json is one\n"
	"JSON object, event name -> count, with the model's event names; '-' reads stdin.\n"
	"\n"
	"  --model NAME        a built-in model (cgtma --list-models)\n"
	"  --model-file FILE   a model file (with --model too, its name must be NAME)\n"
	"  -l, --level N       report nodes of levels 1..N (default 1; at most the model's depth)\n"
	"  --perf-metrics      use the perf-metrics formulas (topdown_use_fixed); default: when\n"
	"                      the model has them and the counts hold all their events\n"
	"  --no-perf-metrics   use the generic-counter formulas\n"
	"  --smt, --no-smt     smt_enabled for the formulas (default --no-smt)\n"	"  --slots N           slots per cycle, perf's #slots on Arm (default: the model's width)\n"
	"  --interval S        the interval's length in seconds, for rates (default 1)\n"
	"  --json              print {\"model\": ..., \"nodes\": [...], \"metrics\": [...]}\n"
	"\n"
	"A node is shown with '<' when below its threshold, '<==' marks the bottleneck.\n"
	"Counts are finite and not negative. Exit status: 0 success, 2 bad usage or bad input\n"
	"(a file missing, too large or malformed, an event without a count), 1 other failures.\n"
	"\n"
	"examples:\n"
	"  cgtma compute --model spr -l 3 counts.json\n"
	"  cgtma compute --model zen4 -l 2 --smt --json - < counts.json\n"
	"  cgtma compute --model-file my-model.json --no-perf-metrics counts.json\n";

struct compute_args {
	const char *model;
	const char *model_file;
	const char *counts;
	int level;
	int perf_metrics;	/* -1: decide from the counts */
	bool smt;
	int slots;		/* --slots, 0: the model's width */
	bool json;
	bool help;
	double interval_s;
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

/* Matches --name, --name=VALUE and --name VALUE; *value is NULL for a flag. */
static bool match_opt(char **argv, int *i, const char *name, bool takes_value, const char **value,
		      int *err)
{
	const char *a = argv[*i];
	size_t n = strlen(name);

	if (strncmp(a, name, n))
		return false;
	if (a[n] == '=' && takes_value) {
		*value = a + n + 1;
		return true;
	}
	if (a[n])
		return false;
	if (!takes_value)
		return true;
	if (!argv[*i + 1]) {
		*err = usage_error("option '%s' needs an argument", name);
		return true;
	}
	*value = argv[++*i];
	return true;
}

static int parse_args(int argc, char **argv, struct compute_args *a)
{
	bool only_operands = false;
	int i, err = 0;

	a->level = 1;
	a->perf_metrics = -1;
	a->interval_s = 1;
	for (i = 1; i < argc; i++) {
		const char *arg = argv[i], *v = NULL;
		char *end;

		if (only_operands || arg[0] != '-' || !strcmp(arg, "-")) {
			if (a->counts)
				return usage_error("more than one counts file ('%s')", arg);
			a->counts = arg;
			continue;
		}
		if (!strcmp(arg, "--")) {
			only_operands = true;
		} else if (!strcmp(arg, "--help") || !strcmp(arg, "-h")) {
			a->help = true;
			return 0;
		} else if (match_opt(argv, &i, "--model", true, &v, &err)) {
			a->model = v;
		} else if (match_opt(argv, &i, "--model-file", true, &v, &err)) {
			a->model_file = v;
		} else if (match_opt(argv, &i, "--level", true, &v, &err) ||
			   match_opt(argv, &i, "-l", true, &v, &err) ||
			   (!strncmp(arg, "-l", 2) && (v = arg + 2))) {
			long l;

			if (err)
				return err;
			errno = 0;
			l = strtol(v, &end, 10);
			if (errno || end == v || *end || l < 0 || l > 64)
				return usage_error("bad level '%s' (a number from 0 to 64)", v);
			a->level = (int)l;
		} else if (match_opt(argv, &i, "--interval", true, &v, &err)) {
			if (err)
				return err;
			errno = 0;
			a->interval_s = strtod(v, &end);
			if (errno || end == v || *end || !isfinite(a->interval_s) || a->interval_s <= 0)
				return usage_error("bad interval '%s' (seconds, more than 0)", v);
		} else if (match_opt(argv, &i, "--perf-metrics", false, &v, &err)) {
			a->perf_metrics = 1;
		} else if (match_opt(argv, &i, "--no-perf-metrics", false, &v, &err)) {
			a->perf_metrics = 0;
		} else if (match_opt(argv, &i, "--smt", false, &v, &err)) {
			a->smt = true;
		} else if (match_opt(argv, &i, "--no-smt", false, &v, &err)) {
			a->smt = false;
		} else if (match_opt(argv, &i, "--slots", true, &v, &err)) {
			if (err)
				return err;
			errno = 0;
			a->slots = (int)strtol(v, &end, 10);
			if (errno || end == v || *end || a->slots < 1 || a->slots > 255)
				return usage_error("bad slots '%s' (a number from 1 to 255)", v);
		} else if (match_opt(argv, &i, "--json", false, &v, &err)) {
			a->json = true;
			log_set_json(true);
		} else {
			return usage_error("unknown option '%s'", arg);
		}
		if (err)
			return err;
	}
	if (!a->model && !a->model_file)
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

static int load_model(const struct compute_args *a, struct model **mp)
{
	int err;

	if (!a->model_file)
		return model__load_builtin(a->model, mp);
	err = model__load_file(a->model_file, mp);
	if (err)
		return err;
	if (a->model && strcmp(a->model, model__name(*mp))) {
		pr_err("compute: model file '%s' holds model '%s', not '%s'", a->model_file,
		       model__name(*mp), a->model);
		model__free(*mp);
		*mp = NULL;
		return -EINVAL;
	}
	return 0;
}

/* With neither option, perf-metrics is on when the counts hold its leader and all its events. */
static bool counts_have_perf_metrics(const struct model *m, json_object *counts)
{
	int i;

	if (!model__has_perf_metrics(m) ||
	    !json_object_object_get_ex(counts, m->events[m->pmu.pm_leader].name, NULL))
		return false;
	for (i = 0; i < m->pmu.nr_pm_events; i++) {
		if (!json_object_object_get_ex(counts, m->events[m->pmu.pm_events[i]].name, NULL))
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
	json_object_object_add(root, "model", json_object_new_string(model__name(p->model)));
	json_object_object_add(root, "nodes", nodes);
	for (i = 0; i < p->nr_nodes; i++) {
		o = json_object_new_object();
		if (!o || json_object_array_add(nodes, o)) {
			json_object_put(o);
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
		o = json_object_new_object();
		if (!o || json_object_array_add(metrics, o)) {
			json_object_put(o);
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

/* toplev's look: the value in percent of the node's domain ("% Slots"), then the marks. */
static void print_table(const struct plan *p, const struct tma_result *r)
{
	int i, width = 24, dwidth = 0;

	for (i = 0; i < p->nr_nodes; i++) {
		int w = 2 * (p->nodes[i].level - 1) + (int)strlen(p->nodes[i].name);

		if (w > width)
			width = w;
		if ((int)strlen(p->nodes[i].domain) > dwidth)
			dwidth = strlen(p->nodes[i].domain);
	}
	for (i = 0; i < p->nr_metrics; i++) {
		if ((int)strlen(p->metrics[i].name) > width)
			width = strlen(p->metrics[i].name);
	}
	printf("model %s: level %d, perf-metrics %s, SMT %s\n", model__name(p->model),
	       p->opts.level, p->opts.perf_metrics ? "on" : "off", p->opts.smt ? "on" : "off");
	for (i = 0; i < p->nr_nodes; i++) {
		int indent = 2 * (p->nodes[i].level - 1);
		const char *mark = i == r->bottleneck ? "  <==" : r->above[i] ? "" : "  <";

		printf("%*s%-*s ", indent, "", width - indent, p->nodes[i].name);
		if (r->counted[i] && *mark)
			printf("%6.1f %% %-*s%s\n", 100 * r->value[i], dwidth, p->nodes[i].domain,
			       mark);
		else if (r->counted[i])
			printf("%6.1f %% %s\n", 100 * r->value[i], p->nodes[i].domain);
		else
			printf("%6s %% %s  (not counted)\n", "-", p->nodes[i].domain);
	}
	for (i = 0; i < p->nr_metrics; i++) {
		printf("%-*s ", width, p->metrics[i].name);
		if (r->metric_counted[i])
			printf("%12.4g %s\n", r->metric[i], p->metrics[i].unit);
		else
			printf("%12s %s  (not counted)\n", "-", p->metrics[i].unit);
	}
}

static int compute(const struct compute_args *a)
{
	struct model_options o = { .smt = a->smt, .slots = a->slots };
	struct tma_input in = { .interval_s = a->interval_s };
	struct tma_result r = { .bottleneck = -1 };
	json_object *counts = NULL;
	struct model *m = NULL;
	struct plan *p = NULL;
	double *values = NULL;
	bool *counted = NULL;
	int i, err;

	err = load_model(a, &m);
	if (!err)
		err = read_counts(a->counts, &counts);
	if (err) {
		err = json_input_error(err);
		goto out;
	}
	if (a->perf_metrics == 1 && !model__has_perf_metrics(m)) {
		err = usage_error("model '%s' has no perf-metrics path", model__name(m));
		goto out;
	}
	o.perf_metrics = a->perf_metrics >= 0 ? a->perf_metrics : counts_have_perf_metrics(m, counts);
	o.level = a->level < model__max_level(m) ? a->level : model__max_level(m);
	err = plan__new(m, &o, &p);
	if (err) {
		err = not_usage(err);	/* a model that plans wrong: a failure */
		goto out;
	}

	values = calloc(p->nr_events + 1, sizeof(*values));
	counted = calloc(p->nr_events + 1, sizeof(*counted));
	if (!values || !counted) {
		pr_err("compute: out of memory");
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < p->nr_events; i++) {
		json_object *v;

		if (!json_object_object_get_ex(counts, p->events[i].name, &v)) {
			pr_err("compute: '%s' has no count for event '%s' (model %s, level %d, "
			       "perf-metrics %s)",
			       a->counts, p->events[i].name, model__name(m), o.level,
			       o.perf_metrics ? "on" : "off");
			err = -EINVAL;
			goto out;
		}
		values[i] = json_object_get_double(v);
		counted[i] = true;
	}
	in.counts = values;
	in.counted = counted;
	err = tma_result__init(&r, p);
	if (!err)
		err = tma__compute(p, &in, &r);
	if (!err && r.uncounted)
		plan__warn_uncounted(p);
	if (err) {
		pr_err("compute: %s", strerror(-err));
		err = not_usage(err);
		goto out;
	}
	if (a->json) {
		err = print_json(p, &r);
		if (err) {
			pr_err("compute: cannot print the result: %s", strerror(-err));
			err = not_usage(err);
			goto out;
		}
	} else {
		print_table(p, &r);
	}
out:
	tma_result__release(&r);
	free(values);
	free(counted);
	plan__free(p);
	model__free(m);
	json_object_put(counts);
	return err;
}

int cmd_compute(int argc, char **argv)
{
	struct compute_args a = { 0 };
	int err;

	err = parse_args(argc, argv, &a);
	if (!err && a.help)
		fputs(usage_text, stdout);
	else if (!err)
		err = compute(&a);
	log_set_json(false);
	return exit_status(err);
}
