/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Record files: `cgtma --record FILE` keeps what every interval measured, raw, and `cgtma
 * report FILE` recomputes every output from it, on any machine (no BPF, no PMU needed).
 *
 * The format is binary, little-endian, version 8 (1 to 7 are read too):
 *
 *   file     := "CGTMAREC" u32:version u32:0  record*
 *   record   := tag[4] u32:len u32:head-crc payload[len] u32:crc
 *               tag: "CGRH" header (first), "CGRI" interval, "CGRS" summary (last),
 *                    "CGRG" gap (before the first interval written after a failed write),
 *                    "CGRP" profile (sampled stacks; from version 4 on)
 *               head-crc: CRC-32 (zlib's) of tag and len; crc: CRC-32 of the payload
 *   str      := u32:len bytes[len]                     (no NUL; len 0 is "none")
 *   header   := str:cgtma-version str:host str:kernel str:cpu f64:start-time u32:interval-ms
 *               str:model str:model-json u32:level u8:perf-metrics u8:smt u8:per-cpu
 *               u8:cgroups u8:has-plan u32:reserved-counters u32:nr-events
 *               (str:name str:encoding u32:group u8:fixed){nr-events}
 *               [u32:nr-metrics str:metric{nr-metrics}]
 *               the metrics (from version 7 on): the flat metrics the plan computed, by
 *               name, in its order (the model's default ones and those -m added); none
 *               for an -e run
 *   interval := u32:seq f64:time f64:interval-s u8:has-bpf-stats u64:bpf-run-time-ns
 *               u64:bpf-run-cnt [u64:missed-slices] [u64:missed-max-ns u64:missed-unbounded
 *               u32:nr-marks mark{nr-marks}] u32:nr-events u32:nr-scopes scope{nr-scopes}
 *               missed-slices (from version 3 on): slices charged though the switch hook
 *               did not see where they began, 0 where the interval is exact; from version
 *               6 on, the most of their time that may be another cgroup's and, of them,
 *               those with no bound, and the marks listed (report.h's struct interval)
 *   mark     := i32:cpu u32:kind u32:count u64:ran-cgroup u64:charged-cgroup u64:slice-ns
 *               u64:max-ns u64:unseen-ns u32:pid u32:charged-pid str:comm str:ran
 *               str:charged   (bpf/cgtma.h's struct cgtma_miss, and the cgroups' paths)
 *   scope    := u8:kind u8:removed i32:cpu str:cgroup [u64:cgroup-id]
 *               [u32:pid u32:tid str:comm] [str:container str:pod str:namespace [noise]]
 *               (u64:counter u64:enabled u64:running){nr-events}
 *               cgroup-id (from version 6 on, cgroup and task scopes): the cgroup's v2 id,
 *               which tells a cgroup made again under its path from the one before (the
 *               summary's rows of both have removed set on the one gone); 0 for none
 *               kind 0 system, 1 cpu, 2 cgroup, 3 task (-T: pid, tid and comm follow the
 *               cgroup; removed means the thread exited), 4 irq (--irq: str:cgroup holds
 *               the interrupt scope's name, "NET_RX"). Task and irq scopes came after the
 *               first files of version 1; a reader older than them reports a file that
 *               has one as damaged there. The names (a cgroup scope's container, pod and
 *               namespace, len 0 where it has none) from version 2 on.
 *   noise    := u32:has [f64:wait] [f64:throttled u64:nr-throttled] [f64:pressure-some]
 *               [f64:pressure-full] [f64:preempted] [f64:smt-shared]
 *               [u32:nr-antagonists (str:cgroup str:container [f64:preempt f64:took]
 *                [f64:smt]){nr-antagonists}]
 *               a cgroup scope's noise (from version 8 on; report.h's struct noise): has
 *               is its NOISE_* bits, and each field is there where its bit is (wait
 *               NOISE_WAIT, throttled and nr-throttled NOISE_THROTTLED, the pressures
 *               theirs, preempted and each antagonist's preempt and took NOISE_PREEMPTED,
 *               smt-shared and each antagonist's smt NOISE_SMT); the antagonists only
 *               where has holds NOISE_PREEMPTED or NOISE_SMT, NOISE_ANTAGONISTS_MAX at
 *               most, each with its path (never empty) and its container's name (len 0
 *               for none). Unknown bits are damage. A scope of an older file has none
 *               (has 0).
 *   gap      := u32:first-seq u32:count   (intervals that could not be written: disk full)
 *               Gap records came after the first files of version 1; a reader older than
 *               them reports a file that has one as damaged at the gap.
 *   profile  := u64:start-ns u64:duration-ns u32:nr-strings str{nr-strings}
 *               u32:nr-types (ref:event u64:period){nr-types}
 *               u32:nr-scopes (ref:name ref:cgroup ref:container ref:pod){nr-scopes}
 *               u32:nr-mappings (u64:start u64:limit u64:file-offset ref:file
 *                                ref:build-id){nr-mappings}
 *               u32:nr-locations (u64:addr i32:mapping ref:function ref:source-file
 *                                 u32:line){nr-locations}
 *               u32:nr-samples (u32:scope [u32:pid ref:comm] u32:nr-frames
 *                               u32:location{nr-frames} u64:count{nr-types}){nr-samples}
 *               [u64:samples-lost u64:user-stacks-lost u64:kernel-stacks-lost]
 *               the losses (from version 5 on): profile.h's struct profile_lost; a
 *               sample's process (tgid, 0 for none) and thread name (from version 6 on)
 *               ref: u32, 0 for none, else 1 + an index into the strings; mapping -1 for
 *               none; frames leaf first (profile.h says what each field is). A profile
 *               record holds the samples of its own span: any number of them come between
 *               the header and the summary (never between a gap and its interval), and a
 *               reader sums them. Readers of versions 1 to 3 refuse a version 4 file by its
 *               version, readers of version 4 a version 5 file, readers of version 5 a
 *               version 6 file, readers of version 6 a version 7 file, and readers of
 *               version 7 a version 8 file.
 *
 * f64 is the IEEE-754 bit pattern: times and sums come back bit for bit, so report_derive()
 * gives a replay exactly what it gave the live run. Each record is one write(): a killed run
 * leaves every earlier record intact, and a reader finds a cut or damaged record by its
 * length and checksums and still returns everything before it. The head's own checksum
 * tells a damaged length from a file cut short.
 */
#ifndef CGTMA_RECORD_H
#define CGTMA_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "output.h"
#include "profile.h"
#include "report.h"

#define RECORD_MAGIC "CGTMAREC"
#define RECORD_VERSION 8
#define RECORD_VERSION_OLDEST 1
#define RECORD_FILE_HEAD 16		/* magic, version, reserved */
#define RECORD_HEAD 12			/* tag, len, head-crc */
#define RECORD_MAX (1u << 30)		/* a larger len is damage, not data */


/* zlib's CRC-32 (crc32(0, ...), chained as zlib chains it): the one the format specifies. */
uint32_t record_crc32(uint32_t crc, const void *buf, size_t len);

/*
 * What a record's header says. run is the run as it was measured, as the live run's
 * outputs saw it (the writer wrote its struct run), for `report` to describe its own with:
 * its strings are the reader's (hostname, kernel and cpu "" where the record has none),
 * its event_names the recorded events; plan is NULL and verbose false, which are report's
 * to decide. The rest is what report needs to plan the recorded model again.
 */
struct record_header {
	unsigned int version;
	char *cgtma_version;
	struct run run;
	size_t model_source_len;	/* run.model_source's; 0 when not recorded */
	bool has_plan;			/* false for an -e run */
	bool nmi_watchdog;		/* the plan's option (a u32: once a counter count) */
	char **encodings;		/* per recorded event */
	int *group;
	bool *fixed;
	/*
	 * The flat metrics the run computed, by name, in its plan's order (version 7 on);
	 * has_metrics false for an older record, which did not say.
	 */
	bool has_metrics;
	int nr_metrics;
	char **metrics;
};

/* Where and why reading stopped before the end. */
struct record_error {
	long index;			/* record number: 0 the header, 1 the first interval */
	long long offset;		/* byte offset of that record in the file */
	char what[160];			/* "truncated", "bad checksum", ... */
};

struct record_reader;

/*
 * Opens path and reads its header. Returns 0; -EBADMSG when the file is not a record or its
 * header is damaged (e says how); or -errno when it cannot be read.
 */
int record_reader__open(const char *path, struct record_reader **rp, struct record_error *e);
const struct record_header *record_reader__header(const struct record_reader *r);
/*
 * The next interval (or, last, the summary: iv->summary) into iv, cleared first: scopes with
 * sums per recorded event, nothing derived. Returns 1 with one, 0 at the end of a complete
 * file (after the summary), -EBADMSG at damage (e says where: nothing after it is read) or
 * -errno (-ENOMEM, a read error).
 */
int record_reader__next(struct record_reader *r, struct interval *iv, struct record_error *e);
/*
 * The sampled stacks of the profile records read so far, summed (complete once next has
 * returned 0); NULL when there has been none (a run without sampling, or a version before 4).
 */
const struct profile *record_reader__profile(const struct record_reader *r);
/*
 * Reads the whole record at path for its profile: *p gets the sum of its profile records
 * (empty, nr_types 0, when it has none), the caller releases it. 0; -EBADMSG at damage (e
 * says where; *p holds what came before it), or -errno.
 */
int record_read_profile(const char *path, struct profile *p, struct record_error *e);
/* How many intervals the gap records read so far say are missing (the writer failed). */
long record_reader__missing(const struct record_reader *r);
void record_reader__close(struct record_reader *r);

#endif
