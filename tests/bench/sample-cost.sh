#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# --sample's cost (make bench): tests/bench/sample-cost.sh BUILD_DIR
#
# A tracked cgroup spins on every CPU in three functions (tests/helpers/spinfn), while cgtma
# counts it with the software model (-I 1000), without sampling and with --sample at 99 and
# 999 Hz per CPU. Printed per configuration:
# - start-up: cgtma's CPU time in its first WARM seconds (loading, the first intervals'
#   one-time work: /proc/kallsyms, opening the binaries), in ms;
# - steady state: over the SECS seconds after those, cgtma's own CPU time (all its threads,
#   /proc/PID/task/*/schedstat) and the BPF sampling program's run time (run_time_ns of
#   sample*, kernel.bpf_stats_enabled on only while timing, restored after), each as a
#   percentage of one CPU.
# The difference of cgtma's CPU with and without --sample is the reading and symbolization,
# reported apart; the symbolizer's own part of it (naming frames, reading processes' maps:
# what -v says at the end) over the whole run, start-up included, apart again. The sample
# interrupts' own cost (the perf event's hrtimer) is not in these.
#
# Then, against perf record (issue 35's goal): two tracked cgroups, each spinning on one CPU
# per two CPUs, under `cgtma --sample -F 99` and under `perf record -a -g -F 99 -e cpu-clock
# --all-cgroups -o /dev/null`, each for WARM + SECS seconds, alternating, CGTMA_BENCH_ROUNDS
# (default 3) rounds. Printed per round and as min/median/max: each profiler's whole CPU time
# (user + system, start-up included, all threads) as % of one CPU, their ratio within the
# round, and the sampling programs' run time per sample (run_time_ns / run_cnt of sample*,
# tracked or not: every sample the programs saw). CGTMA_BENCH_SAMPLE_AGAINST=PATH runs
# another cgtma binary (an older build) in the same rounds, "against" in the lines: a change's
# ratio from one run, where this VM's absolute figures move several-fold from hour to hour.
# CGTMA_BENCH_SECS (default 60) and CGTMA_BENCH_WARM (default 3) set the windows.
# Never fails on timing.
set -u
cd "$(dirname "$0")/../.." || exit 1
build=${1:-build}
export CGTMA_BUILD=$build
command -v bpftool >/dev/null || { echo "sample-cost: no bpftool; skipped"; exit 0; }
[ -x "$build/tests/spinfn" ] || { echo "sample-cost: no $build/tests/spinfn; skipped"; exit 0; }
[ "$(id -u)" = 0 ] || { echo "sample-cost: needs root; skipped"; exit 0; }
. tests/live/lib.sh

AGAINST=${CGTMA_BENCH_SAMPLE_AGAINST:-}
[ -z "$AGAINST" ] || [ -x "$AGAINST" ] || { echo "sample-cost: no $AGAINST" >&2; exit 1; }
SECS=${CGTMA_BENCH_SECS:-60}
WARM=${CGTMA_BENCH_WARM:-3}
NCPU=$(getconf _NPROCESSORS_ONLN)
cg_make bench
old_stats=$(sysctl -n kernel.bpf_stats_enabled)
on_exit "sysctl -q kernel.bpf_stats_enabled=$old_stats"

# The sampling programs' run time in ns and runs so far: "NS CNT"; with a PID, only those
# that process holds (another cgtma sampling beside the bench has programs of the same names).
bpf_stats() {
	local ids=null
	[ -n "${1:-}" ] && ids=$(awk '$1 == "prog_id:" { print $2 }' /proc/"$1"/fdinfo/* 2>/dev/null |
		jq -s -c .)
	bpftool prog show --json 2>/dev/null |
		jq -r --argjson ids "$ids" '[.[] | select(.name | test("^sample[0-7]$")) |
			select($ids == null or (.id as $i | $ids | index($i)))] |
			"\(map(.run_time_ns // 0) | add // 0) \(map(.run_cnt // 0) | add // 0)"'
}
bpf_ns() { bpf_stats "$1" | cut -d' ' -f1; }
# A process's CPU time in ns, all its threads (schedstat's first field: time on a CPU).
cpu_ns() { cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{ s += $1 } END { print s + 0 }'; }

# run ARGS...: cgtma with ARGS over the spinners; prints "startup_ns steady_ns bpf_ns
# naming_ms" (naming_ms: -v's figure, 0 without it).
run() {
	local pid b0 b1 t0 t1 fns=(alpha beta gamma)
	for ((i = 0; i < NCPU; i++)); do
		cg_start bench "$build/tests/spinfn" "${fns[i % 3]}" $(((WARM + SECS + 3) * 1000))
	done
	"$CGTMA" -G "$(cg_path bench)" -I 1000 "$@" >/dev/null 2>"$TMP/err" &
	pid=$!
	sleep "$WARM"
	sysctl -q kernel.bpf_stats_enabled=1
	b0=$(bpf_ns $pid) t0=$(cpu_ns $pid)
	sleep "$SECS"
	b1=$(bpf_ns $pid) t1=$(cpu_ns $pid)
	sysctl -q kernel.bpf_stats_enabled="$old_stats"
	kill -INT $pid && wait $pid
	cg_wait
	echo "$t0 $((t1 - t0)) $((b1 - b0))" \
		"$(sed -n 's/.*naming frames.* took \([0-9.]*\) ms of CPU.*/\1/p' "$TMP/err" | tail -n 1)"
}

ms() { awk -v v="$1" 'BEGIN { printf "%.0f", v / 1e6 }'; }
pct() { awk -v v="$1" -v s="$SECS" 'BEGIN { printf "%.3f", 100 * v / (s * 1e9) }'; }
read -r start0 steady0 _ <<<"$(run)"
echo "sample-cost: $NCPU CPUs spinning in one tracked cgroup; start-up: cgtma's CPU in its" \
	"first $WARM s; steady: over the $SECS s after, as % of one CPU"
echo "  without --sample: start-up $(ms "$start0") ms, steady $(pct "$steady0") %"
for hz in 99 999; do
	read -r start steady ns naming <<<"$(run --sample -F $hz -v)"
	echo "  --sample -F $hz: start-up $(ms "$start") ms, steady $(pct "$steady") %;" \
		"reading and symbolization: start-up $(ms $((start - start0))) ms," \
		"steady $(pct $((steady - steady0))) %; BPF program $(pct "$ns") %;" \
		"the symbolizer alone, over the whole run with its start-up, ${naming:-?} ms" \
		"($(awk -v m="${naming:-0}" -v s=$((WARM + SECS)) 'BEGIN { printf "%.3f", m / (10 * s) }') %)"
done

# Against perf record, over two cgroups, whole runs.
ROUNDS=${CGTMA_BENCH_ROUNDS:-3}
cg_make a
cg_make b
# spinners MS: one spinfn per CPU, alternating between the two cgroups.
spinners() {
	local fns=(alpha beta gamma) cgs=(a b)
	for ((i = 0; i < NCPU; i++)); do
		cg_start "${cgs[i % 2]}" "$build/tests/spinfn" "${fns[i % 3]}" "$1"
	done
}
# whole_cgtma BIN: "cpu_ns bpf_ns bpf_cnt" of one BIN --sample -F 99 run of WARM + SECS s.
whole_cgtma() {
	local pid t b0 c0 b1 c1
	spinners $(((WARM + SECS + 3) * 1000))
	sysctl -q kernel.bpf_stats_enabled=1
	"$1" -G "$(cg_path a)" -G "$(cg_path b)" --sample -F 99 >/dev/null 2>"$TMP/err" &
	pid=$!
	sleep 1
	read -r b0 c0 <<<"$(bpf_stats $pid)"
	sleep $((WARM + SECS - 1))
	read -r b1 c1 <<<"$(bpf_stats $pid)"
	t=$(cpu_ns $pid)
	sysctl -q kernel.bpf_stats_enabled="$old_stats"
	kill -INT $pid && wait $pid
	cg_wait
	echo "$t $((b1 - b0)) $((c1 - c0))"
}
# whole_perf: perf record's user + system CPU in ns over the same run, or "-" without perf.
whole_perf() {
	local tf=$TMP/perf-time
	command -v perf >/dev/null || { echo -; return; }
	spinners $(((WARM + SECS + 3) * 1000))
	sleep 1
	/usr/bin/env TIMEFORMAT='%3U %3S' bash -c "time perf record -a -g -F 99 -e cpu-clock \
		--all-cgroups -o /dev/null -- sleep $((WARM + SECS - 1)) >/dev/null 2>&1" 2>"$tf"
	cg_wait
	awk '{ printf "%.0f", ($1 + $2) * 1e9 }' "$tf"
}
stats3() {
	sort -g | awk '{ v[NR] = $1 } END { printf "%.2f/%.2f/%.2f", v[1], v[int((NR + 1) / 2)], v[NR] }'
}
echo "sample-cost: against perf record, two cgroups spinning on $NCPU CPUs, -F 99, whole" \
	"runs of $((WARM + SECS)) s, $ROUNDS rounds (CPU as % of one CPU, start-up included)"
: >"$TMP/rounds"
for ((r = 1; r <= ROUNDS; r++)); do
	read -r cns bns bcnt <<<"$(whole_cgtma "$CGTMA")"
	pns=$(whole_perf)
	ans=- abns=0 abcnt=0
	[ -n "$AGAINST" ] && read -r ans abns abcnt <<<"$(whole_cgtma "$AGAINST")"
	awk -v c="$cns" -v p="$pns" -v b="$bns" -v n="$bcnt" -v a="$ans" -v ab="$abns" \
		-v an="$abcnt" -v s=$((WARM + SECS)) -v r=$r 'BEGIN {
		cp = 100 * c / (s * 1e9); pp = p == "-" ? 0 : 100 * p / (s * 1e9)
		us = n ? b / n / 1000 : 0
		ap = a == "-" ? 0 : 100 * a / (s * 1e9); aus = an ? ab / an / 1000 : 0
		printf "  round %d: cgtma %.2f %%, perf record %s, ratio %s; BPF %.2f us per sample " \
			"(%d samples)", r, cp, p == "-" ? "-" : sprintf("%.2f %%", pp),
			p == "-" || !p ? "-" : sprintf("%.2f", c / p), us, n
		if (a != "-")
			printf "; against %.2f %%, BPF %.2f us per sample", ap, aus
		printf "\n"
		printf "%f %f %s %f %f %f\n", cp, pp, p == "-" || !p ? 0 : c / p, us, ap, aus \
			> "/dev/stderr"
	}' 2>>"$TMP/rounds"
done
echo "  min/median/max: cgtma $(cut -d' ' -f1 "$TMP/rounds" | stats3) %," \
	"perf record $(cut -d' ' -f2 "$TMP/rounds" | stats3) %," \
	"ratio $(cut -d' ' -f3 "$TMP/rounds" | stats3)," \
	"BPF $(cut -d' ' -f4 "$TMP/rounds" | stats3) us per sample"
[ -z "$AGAINST" ] ||
	echo "  against ($AGAINST): $(cut -d' ' -f5 "$TMP/rounds" | stats3) %," \
		"BPF $(cut -d' ' -f6 "$TMP/rounds" | stats3) us per sample"
