// SPDX-License-Identifier: GPL-2.0
#include <stdlib.h>

#include "output.h"

int outputs_open(const struct output_opts *oo, struct output **outs, int *n)
{
	struct output *o;
	int err;

	*n = 0;
	/* stdout takes one view: JSON lines, toplev's CSV or the terminal's. */
	if (oo->json)
		err = output_json_open(stdout, &o);
	else if (oo->csv_sep)
		err = output_csv_open(stdout, oo->csv_sep, &o);
	else
		err = output_text_open(stdout, &o);
	if (!err)
		outs[(*n)++] = o;
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

void output_close(struct output *o)
{
	if (!o)
		return;
	if (o->ops->close)
		o->ops->close(o);
	free(o);
}
