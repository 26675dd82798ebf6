// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <string.h>

#include "jsonfile.h"
#include "strbuf.h"

int json_read(FILE *f, size_t max, char **text, size_t *len)
{
	struct strbuf sb = STRBUF_INIT;
	int err = strbuf_fread(&sb, f, max);

	*text = NULL;
	if (err) {
		strbuf_release(&sb);
		return err;
	}
	*text = strbuf_detach(&sb, len);
	return *text ? 0 : -ENOMEM;
}

int json_input_error(int err)
{
	return err == -EIO || err == -ENOMEM ? err : -EINVAL;
}

static int line_of(const char *text, size_t offset)
{
	int line = 1;

	for (size_t i = 0; i < offset; i++)
		line += text[i] == '\n';
	return line;
}

static int parse_error(struct json_parse_error *e, const char *text, size_t offset,
		       const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static int parse_error(struct json_parse_error *e, const char *text, size_t offset,
		       const char *fmt, ...)
{
	va_list ap;

	e->line = line_of(text, offset);
	va_start(ap, fmt);
	vsnprintf(e->what, sizeof(e->what), fmt, ap);
	va_end(ap);
	return -EINVAL;
}

int json_parse_strict(const char *text, size_t len, json_object **out,
		      struct json_parse_error *e)
{
	const char *nul = len ? memchr(text, 0, len) : NULL;
	struct json_tokener *tok;
	enum json_tokener_error jerr;
	json_object *obj;
	size_t end;

	*out = NULL;
	if (!len)
		return parse_error(e, text, 0, "unexpected end of the file");
	if (nul)
		return parse_error(e, text, nul - text, "NUL byte in the file");
	/* json-c takes an int length. */
	if (len > INT_MAX)
		return parse_error(e, text, 0, "larger than %d bytes", INT_MAX);
	tok = json_tokener_new();
	if (!tok)
		return -ENOMEM;
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	obj = json_tokener_parse_ex(tok, text, (int)len);
	jerr = json_tokener_get_error(tok);
	end = json_tokener_get_parse_end(tok);
	json_tokener_free(tok);
	if (!obj) {
		if (jerr == json_tokener_success)
			return parse_error(e, text, end, "the JSON value is null");
		if (jerr == json_tokener_continue)
			return parse_error(e, text, len, "unexpected end of the file");
		return parse_error(e, text, end, "invalid JSON: %s", json_tokener_error_desc(jerr));
	}
	for (; end < len; end++) {
		if (!strchr(" \t\n\r", text[end])) {
			json_object_put(obj);
			return parse_error(e, text, end, "unexpected data after the JSON object");
		}
	}
	*out = obj;
	return 0;
}
