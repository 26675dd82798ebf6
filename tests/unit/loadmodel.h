/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A model from JSON text, as the tests write them: the model (NULL when the loader refused
 * it) and, in *msg, what the loader printed (the caller frees it).
 */
#ifndef CGTMA_TEST_LOADMODEL_H
#define CGTMA_TEST_LOADMODEL_H

#include <string.h>

#include "capture.h"
#include "model.h"
#include "test.h"

static inline struct model *load_model_text(const char *json, char **msg)
{
	struct model *m = NULL;
	struct capture c;
	int err;

	*msg = NULL;
	if (capture_begin(&c, 2))
		return NULL;
	err = model_load_string("t.json", json, strlen(json), &m);
	*msg = capture_end(&c);
	CHECK((err == 0) == (m != NULL), "error %d with model %p", err, (void *)m);
	return m;
}

#endif
