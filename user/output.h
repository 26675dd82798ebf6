/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Output sinks. A run feeds every interval (and, at the end, the summary over the whole run)
 * to each open sink. Sinks write whole records: a JSON line or a table is never cut by a
 * signal, since signals are taken synchronously between intervals.
 */
#ifndef CGTMA_OUTPUT_H
#define CGTMA_OUTPUT_H

#include <stdbool.h>
#include <stdio.h>

#include "feature.h"
#include "interval.h"

struct output;

struct output_ops {
	/* Any of these may be NULL. Return 0 or -errno (the run reports it and goes on). */
	int (*begin)(struct output *o, const struct run *run);
	int (*interval)(struct output *o, const struct run *run, const struct interval *iv);
	int (*summary)(struct output *o, const struct run *run, const struct interval *total);
	/* Sampled stacks (--sample) for the sink to keep or draw (outputs_profile()). */
	int (*profile)(struct output *o, const struct profile *p);
	void (*close)(struct output *o);
};

struct outfile;
struct profile;
struct strbuf;

struct output {
	const struct output_ops *ops;
	const char *name;	/* for messages: "json", "cdm /path" */
	FILE *f;
	void *priv;
	bool lost;		/* set by the sink: it could not write everything it was given */
	/*
	 * Set for the view on standard output: each callback then writes into memory (f), and
	 * what it wrote goes out whole through this (outfile.h), or not at all.
	 */
	struct outfile *file;
	/*
	 * Where, closing, the sink says what it could not write (output_lost()): the run's
	 * closing error when set (output_close_lost()), else a warning of its own.
	 */
	struct strbuf *lost_text;
};

/* Which sinks a run (or `cgtma report`) writes to. */
struct output_opts {
	bool json;		/* --json on stdout */
	const char *out_file;	/* -o FILE: what goes to stdout goes to FILE instead */
	const char *csv_sep;	/* -x SEP: toplev's CSV on stdout */
	const char *cdm_dir;	/* --cdm DIR: crucible metric files */
	const char *prometheus;	/* --prometheus [ADDR:]PORT */
	const char *record;	/* --record FILE */
	const char *html;	/* report --html FILE */
	int top;		/* --top N: the terminal's busiest N cgroups; 0 for all */
	bool no_stdout;		/* no view on stdout, not even the terminal's (report --html
				 * alone); --json and -x are then ignored */
	bool out_open;		/* out_file is open already, as out_fd (output_file_open()) */
	int out_fd;
};

/*
 * Makes or empties -o's file now, before the run's setup can fail, so that a run under
 * --json writes its errors there too (log.h); outputs_open() writes the view to it. 0 when
 * there is no such file or it is open, or -errno, said.
 */
int output_file_open(struct output_opts *oo);

#define OUTPUTS_MAX 6

/*
 * Opens the sinks the options ask for: the terminal view unless --json or -x takes stdout
 * (or no_stdout leaves it empty), on stdout or in out_file (made or emptied, as perf stat -o
 * does), plus any files or servers. Prints what failed (naming the
 * path or port) and returns -errno; on success *n sinks are in outs.
 */
int outputs_open(const struct output_opts *oo, struct output **outs, int *n);
void output_close(struct output *o);
/*
 * The same, with what the sink could not write (if anything) appended to lost, to be said
 * in the run's one closing error line instead of a line of its own.
 */
void output_close_lost(struct output *o, struct strbuf *lost);
/* For a sink's close: says what it lost, as output_close_lost() or output_close() wants. */
void output_lost(struct output *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * Calls every sink's begin, or its interval or summary callback (iv->summary says which).
 * A failing sink is printed, naming it and the reason, and the others still get the
 * interval. Returns 0, or the first error: the run goes on, and fails at its end.
 */
int outputs_begin(struct output **outs, int n, const struct run *run);
int outputs_emit(struct output **outs, int n, const struct run *run, const struct interval *iv);

/*
 * Whether standard output's reader went away (a closed pipe): its view gets nothing more.
 * Needs SIGPIPE ignored.
 */
bool outputs_stdout_closed(struct output **outs, int n);

/*
 * The terminal view: a table of counts or metrics, or the Top-Down tree per scope; top
 * above 0 shows only the top busiest tracked cgroups and a row for the rest (--top, top.h).
 */
int output_text_open(FILE *f, int top, struct output **o);
/*
 * The terminal view of one interval's scopes, without the header above them: each scope's
 * tree (every node with run->verbose, '<' on those below threshold), or the table of
 * metrics or counts. `cgtma compute` prints its counts' one scope with it. 0 or -ENOMEM.
 */
int output_text_scopes(FILE *f, const struct run *run, const struct interval *iv);
/* One JSON object per line per interval. */
int output_json_open(FILE *f, struct output **o);
/* -x SEP: toplev's CSV (user/output_csv.c says how each column is filled). */
int output_csv_open(FILE *f, const char *sep, struct output **o);
/*
 * --cdm DIR: crucible's metric-data-cgtma.json and .csv in DIR (created when missing),
 * opened here: a path that cannot be written fails now, printed naming it.
 */
int output_cdm_open(const char *dir, struct output **o);
/*
 * --prometheus [ADDR:]PORT: serves /metrics (Prometheus text format) on ADDR, 127.0.0.1 unless
 * given, from a server thread; the page is rebuilt at each interval. -EINVAL (printed) when
 * listen is not [ADDR:]PORT; another -errno, printed naming ADDR:PORT, when it cannot serve.
 * A build without libmicrohttpd has no output_prometheus.c: -EOPNOTSUPP, said.
 */
#if CGTMA_HAVE_LIBMICROHTTPD
int output_prometheus_open(const char *listen, struct output **o);
/* The page a Prometheus sink serves now, NUL-terminated; the caller frees it (for tests). */
char *output_prometheus_page(struct output *o);
#else
static inline int output_prometheus_open(const char *listen, struct output **o)
{
	return feature_require(FEATURE_LIBMICROHTTPD);
}
#endif

/*
 * --record FILE: creates FILE (printing why it cannot), writes the header at begin, then one
 * record per interval and the summary (format: record.h).
 */
int output_record_open(const char *path, struct output **o);
/* report --html FILE: collects the intervals and writes one page at the end. */
int output_html_open(const char *path, struct output **o);
/*
 * Gives the sinks that take sampled stacks the profile p: --record writes it as a record of
 * its own, ahead of the interval it belongs to (before the summary: after it, -EINVAL; a
 * record cut back by a full disk is said and counted as intervals are); --html keeps p (NULL:
 * none; it must outlive the sink) to draw a flame graph per cgroup from when its page is
 * written. 0, or the first error.
 */
int outputs_profile(struct output **outs, int n, const struct profile *p);

#endif
