// SPDX-License-Identifier: GPL-2.0
/*
 * --json: one object per interval, on one line:
 *   {"time": T, "interval": S, "model": M, "rows": [ROW, ...]}
 *   ROW: {"scope": "system"|"cpu"|"cgroup", ["cgroup": P,] ["cpu": N,]
 *         "counts": {EVENT: N|null}, "multiplex": {EVENT: F|null}
 *         [, "nodes": {NODE: F|null}, "bottleneck": NODE|null] [, "metrics": {NAME: F|null}]}
 * The summary at the end of a run is the same object with "summary": true.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>

#include "output.h"

static json_object *number_or_null(double v)
{
	return isfinite(v) ? json_object_new_double(v) : NULL;
}

/*
 * A scaled count as a whole number. A heavily multiplexed event can scale past what an int64
 * holds (llround is undefined there): such a count is the int64's limit.
 */
static json_object *count_json(double v)
{
	if (!isfinite(v))
		return NULL;
	if (v >= 0x1p63)
		return json_object_new_int64(INT64_MAX);
	if (v < -0x1p63)
		return json_object_new_int64(INT64_MIN);
	return json_object_new_int64(llround(v));
}

static json_object *scope_json(const struct run *run, const struct scope *s)
{
	json_object *row = json_object_new_object();
	json_object *counts = json_object_new_object();
	json_object *mux = json_object_new_object();

	json_object_object_add(row, "scope", json_object_new_string(scope_kind_name(s->kind)));
	if (s->kind == SCOPE_CGROUP)
		json_object_object_add(row, "cgroup", json_object_new_string(s->cgroup));
	if (s->cpu >= 0)
		json_object_object_add(row, "cpu", json_object_new_int(s->cpu));
	/* The cgroup's last row: it is gone, and the next intervals do not name it. */
	if (s->removed)
		json_object_object_add(row, "removed", json_object_new_boolean(1));
	for (int i = 0; i < run->nr_events; i++) {
		json_object *c = NULL;

		if (s->state[i] != COUNT_NOT_COUNTED)
			c = count_json(s->count[i]);
		json_object_object_add(counts, run->event_names[i], c);
		json_object_object_add(mux, run->event_names[i], number_or_null(s->multiplex[i]));
	}
	json_object_object_add(row, "counts", counts);
	json_object_object_add(row, "multiplex", mux);

	if (run->plan && run->plan->nr_nodes) {
		json_object *nodes = json_object_new_object();
		int bn = s->tma.bottleneck;

		for (int i = 0; i < run->plan->nr_nodes; i++)
			json_object_object_add(nodes, run->plan->nodes[i].full_name,
					       s->tma.counted[i] ? number_or_null(s->tma.value[i]) : NULL);
		json_object_object_add(row, "nodes", nodes);
		json_object_object_add(row, "bottleneck",
				       bn >= 0 ? json_object_new_string(run->plan->nodes[bn].full_name) :
						 NULL);
	}
	if (run->plan && run->plan->nr_metrics) {
		json_object *metrics = json_object_new_object();

		for (int i = 0; i < run->plan->nr_metrics; i++)
			json_object_object_add(metrics, run->plan->metrics[i].name,
					       s->tma.metric_counted[i] ?
						       number_or_null(s->tma.metric[i]) : NULL);
		json_object_object_add(row, "metrics", metrics);
	}
	return row;
}

static int write_record(struct output *o, const struct run *run, const struct interval *iv)
{
	json_object *root = json_object_new_object();
	json_object *rows = json_object_new_array();
	const char *text;
	int err = 0;

	if (!root || !rows) {
		json_object_put(root);
		json_object_put(rows);
		return -ENOMEM;
	}
	json_object_object_add(root, "time", json_object_new_double(iv->time));
	json_object_object_add(root, "interval", json_object_new_double(iv->interval_s));
	json_object_object_add(root, "model", json_object_new_string(run->model));
	if (iv->summary)
		json_object_object_add(root, "summary", json_object_new_boolean(1));
	for (int i = 0; i < iv->nr_scopes; i++)
		json_object_array_add(rows, scope_json(run, &iv->scopes[i]));
	json_object_object_add(root, "rows", rows);

	text = json_object_to_json_string_ext(root, JSON_C_TO_STRING_PLAIN |
						    JSON_C_TO_STRING_NOSLASHESCAPE);
	/* One write per line, then flush: a reader never sees half an object. */
	if (!text)
		err = -ENOMEM;
	else if (fprintf(o->f, "%s\n", text) < 0 || fflush(o->f))
		err = errno ? -errno : -EIO;
	json_object_put(root);
	return err;
}

static int json_summary(struct output *o, const struct run *run, const struct interval *total)
{
	return write_record(o, run, total);
}

static const struct output_ops json_ops = {
	.interval = write_record,
	.summary = json_summary,
};

int output_json_open(FILE *f, struct output **op)
{
	struct output *o = calloc(1, sizeof(*o));

	if (!o)
		return -ENOMEM;
	o->ops = &json_ops;
	o->name = "json";
	o->f = f;
	*op = o;
	return 0;
}
