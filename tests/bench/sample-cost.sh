#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# --sample's cost (make bench): tests/bench/sample-cost.sh BUILD_DIR
#
# A tracked cgroup spins on every CPU in three functions (tests/helpers/spinfn), while cgtma
# counts it with the software model, without sampling and with --sample at 99 and 999 Hz
# per CPU. Printed per configuration, over SECS seconds: the BPF sampling program's run
# time (run_time_ns of sample*, kernel.bpf_stats_enabled on only while timing, restored
# after) and cgtma's own CPU time (/proc/PID/stat), each as a percentage of one CPU; the
# difference of cgtma's CPU with and without --sample is the reading and symbolization,
# reported apart. The sample interrupts' own cost (the perf event's hrtimer) is not in these.
# Never fails on timing.
set -u
cd "$(dirname "$0")/../.." || exit 1
build=${1:-build}
export CGTMA_BUILD=$build
command -v bpftool >/dev/null || { echo "sample-cost: no bpftool; skipped"; exit 0; }
[ -x "$build/tests/spinfn" ] || { echo "sample-cost: no $build/tests/spinfn; skipped"; exit 0; }
[ "$(id -u)" = 0 ] || { echo "sample-cost: needs root; skipped"; exit 0; }
. tests/live/lib.sh

SECS=${CGTMA_BENCH_SECS:-5}
NCPU=$(getconf _NPROCESSORS_ONLN)
TCK=$(getconf CLK_TCK)
cg_make bench
old_stats=$(sysctl -n kernel.bpf_stats_enabled)
on_exit "sysctl -q kernel.bpf_stats_enabled=$old_stats"

bpf_ns() {
	bpftool prog show --json 2>/dev/null |
		jq '[.[] | select(.name | test("^sample[0-7]$")) | .run_time_ns // 0] | add // 0'
}
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

# run ARGS...: cgtma with ARGS over the spinners; prints "bpf_ns cgtma_ticks".
run() {
	local pid b0 b1 t0 t1 fns=(alpha beta gamma)
	for ((i = 0; i < NCPU; i++)); do
		cg_start bench "$build/tests/spinfn" "${fns[i % 3]}" $(((SECS + 4) * 1000))
	done
	"$CGTMA" -G "$(cg_path bench)" -I 1000 "$@" >/dev/null 2>"$TMP/err" &
	pid=$!
	sleep 2
	sysctl -q kernel.bpf_stats_enabled=1
	b0=$(bpf_ns) t0=$(cpu_ticks $pid)
	sleep "$SECS"
	b1=$(bpf_ns) t1=$(cpu_ticks $pid)
	sysctl -q kernel.bpf_stats_enabled="$old_stats"
	kill -INT $pid && wait $pid
	cg_wait
	echo "$((b1 - b0)) $((t1 - t0))"
}

pct() { awk -v v="$1" -v d="$2" 'BEGIN { printf "%.3f", 100 * v / d }'; }
read -r _ base <<<"$(run)"
echo "sample-cost: $NCPU CPUs spinning in one tracked cgroup, $SECS s each"
echo "  without --sample: cgtma $(pct "$base" $((TCK * SECS))) % of one CPU"
for hz in 99 999; do
	read -r ns ticks <<<"$(run --sample -F $hz)"
	echo "  --sample -F $hz: BPF $(pct "$ns" $((SECS * 1000000000))) % of one CPU," \
		"cgtma $(pct "$ticks" $((TCK * SECS))) %, of which reading and symbolization" \
		"$(pct $((ticks - base)) $((TCK * SECS))) %"
done
