// SPDX-License-Identifier: GPL-2.0
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "output.h"

int outputs_open(const struct output_opts *oo, struct output **outs, int *n)
{
	struct output *o;
	int err = 0;

	*n = 0;
	/* stdout takes one view: JSON lines, toplev's CSV or the terminal's; or none. */
	if (!oo->no_stdout) {
		if (oo->json)
			err = output_json_open(stdout, &o);
		else if (oo->csv_sep)
			err = output_csv_open(stdout, oo->csv_sep, &o);
		else
			err = output_text_open(stdout, &o);
		if (!err)
			outs[(*n)++] = o;
	}
	if (!err && oo->cdm_dir && !(err = output_cdm_open(oo->cdm_dir, &o)))
		outs[(*n)++] = o;
	if (!err && oo->prometheus && !(err = output_prometheus_open(oo->prometheus, &o)))
		outs[(*n)++] = o;
	if (!err && oo->record && !(err = output_record_open(oo->record, &o)))
		outs[(*n)++] = o;
	if (!err && oo->html && !(err = output_html_open(oo->html, &o)))
		outs[(*n)++] = o;
	if (err)
		while (*n > 0)
			output_close(outs[--(*n)]);
	return err;
}

int outputs_begin(struct output **outs, int n, const struct run *run)
{
	int first = 0;

	for (int i = 0; i < n; i++) {
		int err = outs[i]->ops->begin ? outs[i]->ops->begin(outs[i], run) : 0;

		if (err) {
			pr_err("output %s: %s", outs[i]->name, strerror(-err));
			first = first ? first : err;
		}
	}
	return first;
}

int outputs_emit(struct output **outs, int n, const struct run *run, const struct interval *iv)
{
	int first = 0;

	for (int i = 0; i < n; i++) {
		const struct output_ops *ops = outs[i]->ops;
		int (*fn)(struct output *, const struct run *, const struct interval *) =
			iv->summary ? ops->summary : ops->interval;
		int err = fn ? fn(outs[i], run, iv) : 0;

		if (err) {
			pr_err("output %s: %s", outs[i]->name, strerror(-err));
			first = first ? first : err;
		}
	}
	return first;
}

void output_close(struct output *o)
{
	if (!o)
		return;
	if (o->ops->close)
		o->ops->close(o);
	free(o);
}
