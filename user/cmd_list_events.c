// SPDX-License-Identifier: GPL-2.0
/*
 * cgtma list-events: the groups and final encodings a run would program, like toplev's
 * --print. Works anywhere: encodings need no PMU (LIBPFM_FORCE_PMU picks libpfm4's tables).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>

#include "commands.h"
#include "log.h"
#include "measurement.h"
#include "options.h"

static void usage(FILE *f)
{
	fprintf(f,
"Usage: cgtma list-events [--model M | --model-file F] [-l N]\n"
"                         [--perf-metrics|--no-perf-metrics] [--smt|--no-smt]\n"
"                         [--nmi-watchdog|--no-nmi-watchdog] [--slots N]\n"
"                         [-m | --metrics LIST] [--json]\n"
"\n"
"Prints the event groups and the perf_event_attr encodings (type, config, config1) a run\n"
"with these options would open on every CPU, and the nodes and flat metrics computed from\n"
"each group's counts; a node or metric whose events cannot fit one group is \"split\" (its\n"
"ratios mix counts multiplexed at different times). Then the metrics: the default ones,\n"
"and with -m every other with the groups --metrics picks it by. Without --model, the\n"
"model is the one a run would detect here.\n"
"\n"
"  -m, --metrics[=LIST]  the model's other metrics too (all, or those whose name or group\n"
"                        is in LIST), as a run with the same option counts them\n"
"\n"
"Examples:\n"
"  cgtma list-events --model spr -l 2\n"
"  cgtma list-events --model spr -m\n"
"  cgtma list-events --model zen4 --metrics PipelineL1\n"
"  cgtma list-events --model zen4 -l 2 --json\n"
"  LIBPFM_FORCE_PMU=icx cgtma list-events --model icx -l 3 --no-perf-metrics\n");
}

/* Whether group k holds one of node n's (metric n's) events. */
static bool holds_part(const struct plan *p, bool metric, int n, int k)
{
	const int *ev;
	int ne = metric ? plan_metric_events(p, n, &ev) : plan_node_events(p, n, &ev);

	for (int j = 0; j < ne; j++)
		if (p->events[ev[j]].group == k)
			return true;
	return false;
}

/*
 * Whether node (metric) n is computed from group k's counts: all of them (1), or a part,
 * being split over several groups (2); 0 when none. Software models group no unit (each
 * event alone, never multiplexed): a unit is computed from each group of its events.
 */
static int unit_in_group(const struct plan *p, bool metric, int n, int k, const char **name)
{
	int group = metric ? p->metrics[n].group : p->nodes[n].group;
	bool split = metric ? p->metrics[n].split : p->nodes[n].split;

	*name = metric ? p->metrics[n].name : p->nodes[n].full_name;
	if (group >= 0)
		return group == k;
	return holds_part(p, metric, n, k) ? 1 + split : 0;
}

/*
 * The nodes (metrics) computed from group k's counts, then those split over it and other
 * groups; each after what, comma-separated, on one line, none when there is none.
 */
static void print_group_units(const struct plan *p, bool metric, int k)
{
	const char *sep = metric ? "  metrics:" : "  nodes:", *name;
	int nr = metric ? p->nr_metrics : p->nr_nodes;
	bool any = false;

	for (int pass = 1; pass <= 2; pass++)
		for (int n = 0; n < nr; n++) {
			if (unit_in_group(p, metric, n, k, &name) != pass)
				continue;
			printf("%s %s%s", any ? "," : sep, name, pass == 2 ? " (split)" : "");
			any = true;
		}
	if (any)
		printf("\n");
}

/*
 * The metrics the run computes, each with its unit, "default" for the default ones, the
 * groups --metrics picks it by, and what it is: what -m adds, and which --metrics takes.
 */
static void print_metrics(const struct plan *p)
{
	int w = 0;

	for (int n = 0; n < p->nr_metrics; n++)
		if ((int)strlen(p->metrics[n].name) > w)
			w = (int)strlen(p->metrics[n].name);
	if (p->nr_metrics)
		printf("metrics:\n");
	for (int n = 0; n < p->nr_metrics; n++) {
		const struct plan_metric *mt = &p->metrics[n];

		printf("  %-*s  %s", w, mt->name, mt->is_default ? "default" : "groups");
		for (int g = 0; !mt->is_default && g < mt->nr_groups; g++)
			printf("%s%s", g ? ", " : " ", mt->groups[g]);
		if (!mt->is_default && !mt->nr_groups)
			printf(" (none)");
		if (mt->unit && *mt->unit)
			printf("; unit %s", mt->unit);
		printf(": %s\n", mt->desc ? mt->desc : "");
	}
}

static void print_text(const struct measurement *m)
{
	const struct plan *p = m->plan;

	printf("model %s, level %d, %s, SMT %s: %d events in %d groups\n",
	       model_name(m->model), m->level,
	       m->perf_metrics ? "perf-metrics" : "generic counters", m->smt ? "on" : "off",
	       p->nr_events, p->nr_groups);
	for (int i = 0; i < p->nr_events; i++) {
		const struct perf_event_attr *a = &m->attrs[i];

		if (i == 0 || p->events[i].group != p->events[i - 1].group) {
			printf("group %d:\n", p->events[i].group);
			print_group_units(p, false, p->events[i].group);
			print_group_units(p, true, p->events[i].group);
		}
		printf("  %-52s type %u config 0x%llx config1 0x%llx%s\n", p->events[i].name,
		       a->type, (unsigned long long)a->config, (unsigned long long)a->config1,
		       p->events[i].fixed ? "  (fixed counter)" : "");
	}
	for (int n = 0; n < p->nr_nodes; n++)
		if (p->nodes[n].split)
			printf("split: %s: its events are in several groups, counted at different "
			       "times: %s\n", p->nodes[n].full_name, p->nodes[n].split_reason);
	for (int n = 0; n < p->nr_metrics; n++)
		if (p->metrics[n].split)
			printf("split: metric %s: its events are in several groups, counted at "
			       "different times: %s\n", p->metrics[n].name,
			       p->metrics[n].split_reason);
	print_metrics(p);
}

static json_object *group_units_json(const struct plan *p, bool metric, int k, bool split)
{
	json_object *a = json_object_new_array();
	int nr = metric ? p->nr_metrics : p->nr_nodes;
	const char *name;

	for (int n = 0; n < nr; n++)
		if (unit_in_group(p, metric, n, k, &name) == 1 + split)
			json_object_array_add(a, json_object_new_string(name));
	return a;
}

static void print_json(const struct measurement *m)
{
	const struct plan *p = m->plan;
	json_object *groups = json_object_new_array(), *g = NULL, *events = NULL;
	char hex[32];

	for (int i = 0; i < p->nr_events; i++) {
		const struct perf_event_attr *a = &m->attrs[i];
		json_object *e = json_object_new_object();

		if (i == 0 || p->events[i].group != p->events[i - 1].group) {
			g = json_object_new_object();
			events = json_object_new_array();
			json_object_object_add(g, "group", json_object_new_int(p->events[i].group));
			json_object_object_add(g, "events", events);
			json_object_object_add(g, "nodes",
					       group_units_json(p, false, p->events[i].group, false));
			json_object_object_add(g, "split_nodes",
					       group_units_json(p, false, p->events[i].group, true));
			json_object_object_add(g, "metrics",
					       group_units_json(p, true, p->events[i].group, false));
			json_object_object_add(g, "split_metrics",
					       group_units_json(p, true, p->events[i].group, true));
			json_object_array_add(groups, g);
		}
		json_object_object_add(e, "name", json_object_new_string(p->events[i].name));
		json_object_object_add(e, "type", json_object_new_int64(a->type));
		snprintf(hex, sizeof(hex), "0x%llx", (unsigned long long)a->config);
		json_object_object_add(e, "config", json_object_new_string(hex));
		snprintf(hex, sizeof(hex), "0x%llx", (unsigned long long)a->config1);
		json_object_object_add(e, "config1", json_object_new_string(hex));
		json_object_array_add(events, e);
	}
	printf("%s\n", json_object_to_json_string_ext(groups, JSON_C_TO_STRING_PLAIN |
								   JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(groups);
}

int cmd_list_events(int argc, char **argv)
{
	static const struct option long_options[] = {
		MODEL_LONG_OPTIONS,
		METRICS_LONG_OPTION,
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	struct measure_opts mo = { .perf_metrics = -1, .smt = -1, .nmi_watchdog = -1 };
	struct measurement m = {};
	bool json = false;
	int c, ret;

	optind = 1;
	opterr = 0;	/* option_error() says them */
	while ((c = getopt_long(argc, argv, ":M:l:mjh", long_options, NULL)) != -1) {
		ret = model_opt(&mo, c, optarg);
		if (!ret)
			ret = metrics_opt(&mo, c, argc, argv);
		if (ret < 0)
			return EXIT_USAGE;
		if (ret)
			continue;
		switch (c) {
		case 'j':
			json = true;
			log_set_json(true);
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			option_error("list-events", long_options, c, argv);
			return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		pr_err("list-events: unexpected argument '%s'", argv[optind]);
		return EXIT_USAGE;
	}
	if (mo.model && mo.model_file) {
		pr_err("--model and --model-file: give one");
		return EXIT_USAGE;
	}
	ret = exit_status(measurement_setup(&mo, &m));
	if (!ret) {
		measurement_notices(&m);
		if (json)
			print_json(&m);
		else
			print_text(&m);
	}
	measurement_release(&m);
	return ret;
}
