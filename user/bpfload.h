/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What loading a BPF object cost, for -v: its time and what the verifier did with each of
 * its programs. The counting programs' object and the sampler's both say it, each under its
 * own prefix.
 */
#ifndef CGTMA_BPFLOAD_H
#define CGTMA_BPFLOAD_H

#include <time.h>

struct bpf_object;

/* The time since *t0 (CLOCK_MONOTONIC), in seconds. */
double bpfload_seconds_since(const struct timespec *t0);

/*
 * "PREFIX: loaded in S s; verified instructions: PROG N, ..." (-v's notice). verified_insns
 * is there from Linux 5.16; before it, the load time is all there is to show how hard the
 * verifier worked.
 */
void bpfload_report(const char *prefix, const struct bpf_object *obj, double load_s);

#endif
