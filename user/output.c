// SPDX-License-Identifier: GPL-2.0
#include <stdlib.h>

#include "output.h"

int outputs_open(const struct output_opts *oo, struct output **outs, int *n)
{
	struct output *o;
	int err;

	*n = 0;
	/* stdout takes one view: JSON lines or the terminal's. */
	if (oo->json)
		err = output_json_open(stdout, &o);
	else
		err = output_text_open(stdout, &o);
	if (!err)
		outs[(*n)++] = o;
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
