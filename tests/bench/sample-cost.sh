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

SECS=${CGTMA_BENCH_SECS:-60}
WARM=${CGTMA_BENCH_WARM:-3}
NCPU=$(getconf _NPROCESSORS_ONLN)
cg_make bench
old_stats=$(sysctl -n kernel.bpf_stats_enabled)
on_exit "sysctl -q kernel.bpf_stats_enabled=$old_stats"

bpf_ns() {
	bpftool prog show --json 2>/dev/null |
		jq '[.[] | select(.name | test("^sample[0-7]$")) | .run_time_ns // 0] | add // 0'
}
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
	b0=$(bpf_ns) t0=$(cpu_ns $pid)
	sleep "$SECS"
	b1=$(bpf_ns) t1=$(cpu_ns $pid)
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
