// SPDX-License-Identifier: GPL-2.0
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>
#include <json-c/json.h>

#include "log.h"

static bool json_errors;
static int json_fd = STDOUT_FILENO;
static enum log_level level;

void log_set_json(bool on)
{
	json_errors = on;
}

void log_set_json_fd(int fd)
{
	json_fd = fd;
}

void log_set_level(enum log_level l)
{
	level = l;
}

bool log_verbose(void)
{
	return level >= LOG_VERBOSE;
}

static void vmessage(const char *prefix, const char *fmt, va_list ap)
{
	fprintf(stderr, "cgtma: %s", prefix);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void pr_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmessage("", fmt, ap);
	va_end(ap);
	if (json_errors) {
		char msg[1024];
		json_object *o = json_object_new_object();
		const char *line;

		va_start(ap, fmt);
		vsnprintf(msg, sizeof(msg), fmt, ap);
		va_end(ap);
		json_object_object_add(o, "error", json_object_new_string(msg));
		/* '/' as itself, as every JSON cgtma writes has it (json-c would write "\/") */
		line = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
							 JSON_C_TO_STRING_NOSLASHESCAPE);
		if (json_fd == STDOUT_FILENO) {
			printf("%s\n", line);
			fflush(stdout);
		} else {
			dprintf(json_fd, "%s\n", line);
		}
		json_object_put(o);
	}
}

void pr_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmessage("warning: ", fmt, ap);
	va_end(ap);
}

void pr_notice(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmessage("", fmt, ap);
	va_end(ap);
}
