#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make bench: what reading the events costs at a switch between cgroups, as a function of the
# number of events read per slice (tests/bench/read-cost.sh BUILD_DIR).
#
# The read floor of tests/bench/hookfloor.bpf.c (floor_reads: at a switch between cgroups,
# bpf_perf_event_read_value() on each of this CPU's N events, nothing else) over the pinned
# ping-pong between two cgroups (tests/helpers/pingpong), timed by the kernel's BPF statistics
# (run_time_ns / run_cnt); N = 0 is the empty floor (the cgroup comparison alone). Two kinds of
# software event: context-switches, whose read does nothing in the kernel (the helper's own
# cost per event), and cpu-clock, whose read updates the count from the clock. The slope of a
# least-squares line through the medians is the cost of one more event per slice.
#
# What this cannot measure: a hardware event's read is the PMU driver's. For Intel's
# perf-metrics events (the slots leader and the topdown metrics) the driver's read runs the
# topdown update of arch/x86/events/intel/core.c per event read: 2 RDPMC and 4 WRMSR (see
# docs/performance.md), which no machine here has.
#
# Prints figures and never fails on timing: exit 1 only when something could not run; a
# machine that cannot run it (not root, no cgroup v2, no BTF) prints SKIP, exit 0.
#
# Environment (defaults in brackets):
#   CGTMA_BENCH_ROUNDS     rounds, the configurations alternating within each [5]
#   CGTMA_BENCH_READ_LOOPS round trips per run [20000]
#   CGTMA_BENCH_CPU        the CPU the ping-pong runs on [the last online one]
set -u
BUILD=${1:-build}
PINGPONG=$BUILD/tests/pingpong
FLOOR=$BUILD/tests/hookfloor
ROUNDS=${CGTMA_BENCH_ROUNDS:-5}
LOOPS=${CGTMA_BENCH_READ_LOOPS:-20000}
COUNTS="0 1 2 4 8 16 32"
KINDS="context-switches cpu-clock"

die() { echo "read-cost: $*" >&2; exit 1; }
. "$(dirname "$0")/floor.sh"
skip() { echo "SKIP read cost: $*"; exit 0; }
for v in ROUNDS LOOPS; do
	[[ ${!v} =~ ^[1-9][0-9]*$ ]] || die "CGTMA_BENCH_$v='${!v}' is not a positive number"
done
[ "$(id -u)" = 0 ] || skip "needs root (BPF, perf events, cgroups)"
[ -r /sys/kernel/btf/vmlinux ] || skip "the kernel has no BTF (/sys/kernel/btf/vmlinux)"
for t in "$PINGPONG" "$FLOOR"; do
	[ -x "$t" ] || die "no $t: build it first (make bench does)"
done
CG_ROOT=$(awk '$(NF-2) == "cgroup2" && $4 == "/" { print $5; exit }' /proc/self/mountinfo)
[ -n "$CG_ROOT" ] || skip "cgroup v2 is not mounted"
CPU=${CGTMA_BENCH_CPU:-$(tr ',' '\n' </sys/devices/system/cpu/online | tail -n 1 | sed 's/.*-//')}

BASE=$CG_ROOT/cgtma-readcost-$$-$RANDOM
TMP=$(mktemp -d /tmp/cgtma-readcost.XXXXXX) || die "cannot create a scratch directory"
FLOOR_PID=""
# shellcheck disable=SC2317 # run by the trap
cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	[ -n "$FLOOR_PID" ] && kill "$FLOOR_PID" 2>/dev/null && wait "$FLOOR_PID" 2>/dev/null
	# shellcheck disable=SC2038 # pids, not file names
	find "$BASE" -name cgroup.procs -exec cat {} + 2>/dev/null | xargs -r kill -9 2>/dev/null
	sleep 0.1
	rmdir "$BASE/a" "$BASE/b" "$BASE" 2>/dev/null
	rm -rf "$TMP"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
mkdir -p "$BASE/a" "$BASE/b" || die "cannot create cgroups under $CG_ROOT"

# run KIND N: ns per cross-cgroup switch of the floor reading N events of KIND (N = 0: the
# empty floor), on stdout.
run() {
	local prog=reads ev id line
	[ "$2" = 0 ] && prog=empty
	ev=$(printf "$1%.0s," $(seq "$(($2 > 0 ? $2 : 1))"))
	floor_start $prog "${ev%,}"
	id=$FLOOR_ID
	line=$("$PINGPONG" -c "$CPU" -n "$LOOPS" -A "$BASE/a" -B "$BASE/b" -s -p "$id" 2>"$TMP/pp-err") ||
		die "pingpong under hookfloor failed: $(cat "$TMP/pp-err")"
	floor_stop || die "hookfloor -p $prog -e $ev failed: $(cat "$TMP/err")"
	# Two switches per round trip, both between the cgroups: the program ran at each.
	awk '{ for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] } }
	     END { if (v["run_cnt"] < 2 * v["loops"]) exit 1; printf "%.1f\n", v["run_time_ns"] / v["run_cnt"] }' \
		<<<"$line" || die "the floor ran at fewer switches than the ping-pong made: $line"
}
median() { sort -g | awk '{ v[NR] = $1 } END { print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

t0=$SECONDS
for ((r = 0; r < ROUNDS; r++)); do
	for kind in $KINDS; do
		for n in $COUNTS; do
			# The empty floor reads nothing: once per round.
			[ "$n" = 0 ] && [ "$kind" != "${KINDS%% *}" ] && continue
			echo "$kind $n $(run "$kind" "$n")" >>"$TMP/runs"
		done
	done
done

echo "Reading the events at a switch between cgroups (bpf_perf_event_read_value per event," \
	"tests/bench/hookfloor.bpf.c's floor_reads; ns per switch, median of $ROUNDS rounds of" \
	"$LOOPS round trips; N = 0: the empty floor):"
printf '  %-18s' events
for n in $COUNTS; do printf ' %8s' "N=$n"; done
printf '  %s\n' "per event (slope)"
empty=$(awk '$2 == 0 { print $3 }' "$TMP/runs" | median)
for kind in $KINDS; do
	printf '  %-18s' "$kind"
	: >"$TMP/fit"
	for n in $COUNTS; do
		if [ "$n" = 0 ]; then m=$empty; else m=$(awk -v k="$kind" -v n="$n" '$1 == k && $2 == n { print $3 }' "$TMP/runs" | median); fi
		printf ' %8.0f' "$m"
		echo "$n $m" >>"$TMP/fit"
	done
	slope=$(awk '{ sx += $1; sy += $2; sxx += $1 * $1; sxy += $1 * $2; k++ }
		END { printf "%.1f", (k * sxy - sx * sy) / (k * sxx - sx * sx) }' "$TMP/fit")
	printf '  %s ns\n' "$slope"
	eval "SLOPE_${kind//-/_}=$slope"
done
echo "  (context-switches: the kernel's read does nothing, so its slope is the helper's own" \
	"cost per event; cpu-clock adds a clock read; $((SECONDS - t0)) s)"
echo "Intel perf-metrics, by the kernel's code (not measured: no PMU here): each read of the" \
	"slots leader or a topdown metric adds 2 RDPMC and 4 WRMSR to the helper's cost:"
echo "  level 1: slots + 4 metrics = 5 reads, 20 WRMSR per switch between cgroups;" \
	"levels 2-3 (8 metrics): 9 reads, 36 WRMSR; the helper part at the slope above:" \
	"$(awk -v s="${SLOPE_context_switches:-0}" 'BEGIN { printf "%.0f and %.0f ns", 5 * s, 9 * s }')"
echo "Linux $(uname -r), $(nproc) CPUs, ping-pong on CPU $CPU."
