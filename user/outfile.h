/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A file an output appends whole records to (standard output, --record's file, --cdm's CSV),
 * and what a user sees when it cannot be written, the same for every one of them:
 *   - a record is written whole or not at all: a write that fails on a regular file (a full
 *     disk) is cut back to the last whole record; on a pipe or terminal nothing is cut;
 *   - one message when writing starts failing, naming the file and the reason, and one when
 *     it is written again (OUTFILE_RESUMED records in a row: a nearly full disk that takes a
 *     small record now and then is still failing), saying how many records were lost
 *     meanwhile: for each episode (a disk full, freed, and full again), up to
 *     OUTFILE_EPISODES_SAID of them;
 *   - the count of lost records, for the sink's closing message and the run's exit status;
 *   - a reader that went away (EPIPE: a closed pipe) is no failure to report here: the file
 *     is marked closed, and the run decides what that means.
 * SIGPIPE must be ignored for EPIPE to reach here.
 */
#ifndef CGTMA_OUTFILE_H
#define CGTMA_OUTFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct outfile {
	int fd;
	const char *name;	/* in messages: "'PATH'" or "standard output" */
	const char *keeps;	/* in the failure message: "the record keeps what was written" */
	off_t size;		/* where the last whole record ends (regular files) */
	bool regular;		/* a regular file: failed writes are cut back */
	bool broken;		/* a cut write could not be undone: nothing more goes in */
	bool closed;		/* the reader went away: nothing more goes in */
	bool failing;		/* in an episode of failures: not OUTFILE_RESUMED records
				 * written in a row since the last that failed */
	int resumed;		/* records written in a row in the episode */
	int episodes;		/* times writing started failing */
	long lost;		/* records that could not be written */
	long lost_said;		/* of them, those said when writing resumed */
};

/* Episodes of failures said; a file that keeps failing and recovering says no more. */
#define OUTFILE_EPISODES_SAID 5
/* Records written in a row that end an episode. */
#define OUTFILE_RESUMED 2

/*
 * Takes fd (not owned: the caller closes it) for appending, from where it is now. name and
 * keeps must outlive the outfile.
 */
void outfile_init(struct outfile *of, int fd, const char *name, const char *keeps);

/*
 * Appends one record: 0 when it is written; -EPIPE when the reader went away (now or before);
 * -EIO when a cut write stayed and nothing more can go in; otherwise the write's -errno, the
 * record counted lost and the failure said (once). Interrupted and short writes are resumed.
 */
int outfile_append(struct outfile *of, const void *buf, size_t len);

/*
 * Writes buf whole (or, on a regular file, cut back to size: nothing of it) without counting
 * or saying anything: for what a sink cannot do without, its header. 0 or -errno.
 */
int outfile_write_whole(struct outfile *of, const void *buf, size_t len);

/*
 * What append does around outfile_write_whole(), for a sink whose record is more than one
 * write (CDM's JSON file and CSV rows): outfile_failed() says a failure of the file name
 * (once an episode), outfile_written() that a record was written whole (the episode ends at
 * OUTFILE_RESUMED in a row, said with how many were lost in it). Neither counts lost
 * records: the sink adds to lost what it lost.
 */
void outfile_failed(struct outfile *of, const char *name, int err);
void outfile_written(struct outfile *of);

#endif
