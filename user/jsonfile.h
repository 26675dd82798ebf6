/* SPDX-License-Identifier: GPL-2.0 */
/*
 * JSON documents read whole and parsed strictly, as model files and `cgtma compute`'s counts
 * are: json-c's JSON_TOKENER_STRICT, no NUL byte, one value (not null) with nothing after it
 * but whitespace. Nothing is printed here: callers name the file in their own messages.
 */
#ifndef CGTMA_JSONFILE_H
#define CGTMA_JSONFILE_H

#include <stddef.h>
#include <stdio.h>

#include <json-c/json.h>

/* Where and why a text is not one strict JSON value. */
struct json_parse_error {
	int line;		/* from 1 */
	char what[160];		/* "unexpected end of the file", "invalid JSON: ...", ... */
};

/*
 * Reads f from where it is to its end: 0 with *text (NUL-terminated; the caller frees it)
 * and *len; -EFBIG when it holds more than max bytes; -errno (-EIO when errno does not say)
 * when reading fails; -ENOMEM. f stays open.
 */
int json_read(FILE *f, size_t max, char **text, size_t *len);

/*
 * What an input file (a model file, compute's counts) that could not be used means, from the
 * -errno its loader returned: -EINVAL, bad input (exitstatus.h), for anything about the file
 * itself (missing, unreadable, not a regular file, too large, not valid JSON, bad values);
 * err itself when reading failed on the way (-EIO) or memory ran out.
 */
int json_input_error(int err);

/*
 * Parses text[0..len): 0 with *out (the caller puts it); -EINVAL with *e saying where and
 * why when it is not one strict JSON value; -ENOMEM.
 */
int json_parse_strict(const char *text, size_t len, json_object **out,
		      struct json_parse_error *e);

#endif
