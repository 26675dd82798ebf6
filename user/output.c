// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "outfile.h"
#include "output.h"
#include "strbuf.h"

/* The view's file, and its name in messages ("'PATH'") in the same allocation. */
struct view_file {
	struct outfile of;	/* first: output_close_lost() frees it as the whole */
	char name[];
};

/* -o's file, made or emptied: its descriptor, or -errno, said. */
static int out_file_open(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666), err;

	if (fd >= 0)
		return fd;
	err = -errno;
	pr_err("cannot open output file '%s': %s", path, strerror(-err));
	return err;
}

int output_file_open(struct output_opts *oo)
{
	int fd;

	if (!oo->out_file || oo->no_stdout || oo->out_open)
		return 0;
	fd = out_file_open(oo->out_file);
	if (fd < 0)
		return fd;
	oo->out_fd = fd;
	oo->out_open = true;
	return 0;
}

/* The file the view on stdout writes to: stdout, or -o's. 0 or -errno, said. */
static int view_file_open(const struct output_opts *oo, struct outfile **ofp)
{
	const char *path = oo->out_file;
	struct view_file *vf = malloc(sizeof(*vf) + (path ? strlen(path) + 3 : 0));
	int fd = STDOUT_FILENO;

	if (!vf)
		return -ENOMEM;
	if (path) {
		fd = oo->out_open ? oo->out_fd : out_file_open(path);
		if (fd < 0) {
			free(vf);
			return fd;
		}
		sprintf(vf->name, "'%s'", path);
	}
	outfile_init(&vf->of, fd, path ? vf->name : "standard output", "what was written stays");
	*ofp = &vf->of;
	return 0;
}

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
			err = output_text_open(stdout, oo->top, &o);
		if (!err && (err = view_file_open(oo, &o->file)))
			output_close(o);
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

/*
 * Calls one callback of a sink (begin when iv is NULL). A sink with a file writes into
 * memory, and the record goes out whole: a failure there is the file's to say and count
 * (outfile.h), and makes the sink lost; a closed reader returns -EPIPE, unsaid.
 */
static int call_sink(struct output *o, const struct run *run, const struct interval *iv)
{
	const struct output_ops *ops = o->ops;
	int (*fn)(struct output *, const struct run *, const struct interval *) =
		iv ? (iv->summary ? ops->summary : ops->interval) : NULL;
	char *buf = NULL;
	size_t len = 0;
	int err;

	if (iv ? !fn : !ops->begin)
		return 0;
	if (o->file) {
		if (o->file->closed)
			return -EPIPE;
		o->f = open_memstream(&buf, &len);
		if (!o->f)
			return -ENOMEM;
	}
	err = iv ? fn(o, run, iv) : ops->begin(o, run);
	if (!o->file)
		return err;
	if (fclose(o->f) && !err)
		err = -ENOMEM;
	o->f = NULL;
	if (!err && len) {
		err = outfile_append(o->file, buf, len);
		if (err && err != -EPIPE) {
			o->lost = true;
			err = 0;
		}
	}
	free(buf);
	return err;
}

static int call_sinks(struct output **outs, int n, const struct run *run,
		      const struct interval *iv)
{
	int first = 0;

	for (int i = 0; i < n; i++) {
		int err = call_sink(outs[i], run, iv);

		/* A closed reader is no failure of the sink: outputs_stdout_closed() tells. */
		if (err && err != -EPIPE) {
			pr_err("output %s: %s", outs[i]->name, strerror(-err));
			first = first ? first : err;
		}
	}
	return first;
}

int outputs_begin(struct output **outs, int n, const struct run *run)
{
	return call_sinks(outs, n, run, NULL);
}

int outputs_emit(struct output **outs, int n, const struct run *run, const struct interval *iv)
{
	return call_sinks(outs, n, run, iv);
}

int outputs_profile(struct output **outs, int n, const struct profile *p)
{
	int ret = 0;

	for (int i = 0; i < n; i++) {
		int err = outs[i]->ops->profile ? outs[i]->ops->profile(outs[i], p) : 0;

		ret = ret ?: err;
	}
	return ret;
}

bool outputs_stdout_closed(struct output **outs, int n)
{
	for (int i = 0; i < n; i++)
		if (outs[i]->file && outs[i]->file->closed)
			return true;
	return false;
}

void output_lost(struct output *o, const char *fmt, ...)
{
	char text[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	if (!o->lost_text)
		pr_warn("%s", text);
	else if (o->lost_text->len)
		strbuf_addf(o->lost_text, "; and %s", text);
	else
		strbuf_addstr(o->lost_text, text);
}

void output_close_lost(struct output *o, struct strbuf *lost)
{
	if (!o)
		return;
	o->lost_text = lost;
	if (o->ops->close)
		o->ops->close(o);
	if (o->file && o->file->lost)
		output_lost(o, "%s: %ld interval(s) could not be written; it holds the rest whole",
			    o->file->name, o->file->lost);
	/* -o's file: what close reports (a quota on NFS) is lost too. */
	if (o->file && o->file->fd != STDOUT_FILENO && close(o->file->fd)) {
		o->lost = true;
		output_lost(o, "%s: %s", o->file->name, strerror(errno));
	}
	free(o->file);
	free(o);
}

void output_close(struct output *o)
{
	output_close_lost(o, NULL);
}
