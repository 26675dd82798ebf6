#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The switch hooks' cost as users run cgtma (make bench): tests/bench/floor-table.sh BUILD_DIR
#
# A ping-pong (tests/helpers/pingpong -c any: perf bench sched pipe's shape, unpinned, on
# every CPU the scheduler picks) passes a byte between two tasks, in one cgroup ("same") and
# in two ("across"), while a profiler counts 4 software events (cpu-clock,
# context-switches, cpu-migrations, page-faults):
#   none        no profiler: the baseline of each round
#   count       perf stat -a (the events counted, no cgroups: the floor of any profiler)
#   perf        perf stat -a --for-each-cgroup (the ping-pong's cgroups)
#   empty       an empty sched_switch program with the events open (tests/bench/hookfloor.bpf.c's
#               floor_empty): what any tracepoint hook costs before it does anything
#   reads       floor_reads: that program reading the events at each switch between cgroups
#               (bpf_perf_event_read_value()) and nothing more: the floor of an exact hook
#   tracepoint, perf-event, auto   cgtma -G (both cgroups) with that --switch-hook
# Every round runs every configuration once, in an order that rotates from round to round;
# each figure is the median over the rounds of the ratio of the configuration's time per
# round trip to that round's baseline ("x1.042": 4.2 % slower), with the range. The goals
# (issue 35): in one cgroup, auto at most counting alone + 1 point; across cgroups, at most
# half of perf --for-each-cgroup's overhead; the two floors' share of that overhead says how
# much room the tracepoint hook has under the second goal. Then the BPF run time per switch (the kernel's
# BPF statistics) of cgtma's two programs, with the noise between cgroups (the default) and
# without (--no-noise), and of an empty sched_switch program (the tracepoint's floor:
# tests/bench/hookfloor.bpf.c's floor_empty), over the same ping-pong: inside one cgroup the
# perf-event hook's program does not run at all.
#
# CGTMA_BENCH_FLOOR_ROUNDS (7) and CGTMA_BENCH_FLOOR_LOOPS (100000 round trips a run) set the
# size; CGTMA_BENCH_FLOOR_CPU=N pins the ping-pong's two tasks to CPU N (default any: as
# users run it). CGTMA_BENCH_FLOOR_AGAINST=PATH adds another cgtma binary's auto (an older
# build) to the same rounds: "against" in the table. Prints figures; never fails on timing
# (exit 1 only when something could not run).
set -u
cd "$(dirname "$0")/../.." || exit 1
BUILD=${1:-build}
CGTMA=$BUILD/cgtma PINGPONG=$BUILD/tests/pingpong FLOOR=$BUILD/tests/hookfloor
ROUNDS=${CGTMA_BENCH_FLOOR_ROUNDS:-7} LOOPS=${CGTMA_BENCH_FLOOR_LOOPS:-100000}
PIN=${CGTMA_BENCH_FLOOR_CPU:-any} AGAINST=${CGTMA_BENCH_FLOOR_AGAINST:-}
EV=cpu-clock,context-switches,cpu-migrations,page-faults
die() { echo "floor-table: $*" >&2; exit 1; }
skip() { echo "floor-table: SKIP: $*"; exit 0; }
[ "$(id -u)" = 0 ] || skip "needs root"
for t in "$CGTMA" "$PINGPONG" "$FLOOR" ${AGAINST:+"$AGAINST"}; do [ -x "$t" ] || die "no $t: make bench builds it"; done
for c in perf bpftool jq; do command -v $c >/dev/null || die "$c is not installed"; done
CG_ROOT=$(awk '$(NF-2) == "cgroup2" && $4 == "/" { print $5; exit }' /proc/self/mountinfo)
[ -n "$CG_ROOT" ] || skip "cgroup v2 is not mounted"
# perf's --for-each-cgroup names cgroups relative to a v1 perf_event hierarchy where there is
# one, else to the v2 mount; cgtma counts v2. With a v1 one the tasks join both.
PERF_V1=$(awk '$3 == "cgroup" && $4 ~ /(^|,)perf_event(,|$)/ { print $2; exit }' /proc/mounts)
BASE=cgtma-floor-$$-$RANDOM
TMP=$(mktemp -d /tmp/cgtma-floor.XXXXXX) || die "no scratch directory"
STATS_WAS=$(cat /proc/sys/kernel/bpf_stats_enabled)
. tests/bench/floor.sh
FLOOR_PID=""
cleanup() {
	[ -n "$FLOOR_PID" ] && kill "$FLOOR_PID" 2>/dev/null && wait "$FLOOR_PID" 2>/dev/null
	echo "$STATS_WAS" >/proc/sys/kernel/bpf_stats_enabled
	for root in "$CG_ROOT" ${PERF_V1:+"$PERF_V1"}; do
		[ -d "$root/$BASE" ] && find "$root/$BASE" -depth -type d -exec rmdir {} + 2>/dev/null
	done
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
for root in "$CG_ROOT" ${PERF_V1:+"$PERF_V1"}; do
	mkdir -p "$root/$BASE/a" "$root/$BASE/b" || die "cannot make cgroups under $root"
done
# The ping-pong's tasks: both in a, or one in a and one in b (each in v1 too where perf uses it).
where_args() {
	local a=$CG_ROOT/$BASE/a b=$CG_ROOT/$BASE/$([ "$1" = same ] && echo a || echo b)
	[ -n "$PERF_V1" ] && a=$a,$PERF_V1/$BASE/a b=$b,$PERF_V1/$BASE/$(basename "$b")
	echo "-A $a -B $b"
}
field() { sed -n "s/.*\b$2=\([0-9.e+-]*\).*/\1/p" "$1"; }

# run PROFILER WHERE: one ping-pong under PROFILER; prints its usec_per_op.
run() {
	local prof=$1 where=$2 out=$TMP/pp pp
	# shellcheck disable=SC2046 # the cgroup options
	pp=("$PINGPONG" -c "$PIN" -n "$LOOPS" $(where_args "$where"))
	# shellcheck disable=SC2016 # expanded by that sh
	local inner=(sh -c 'out=$1; shift; exec "$@" >"$out"' sh "$out" "${pp[@]}")
	case $prof in
	none) "${pp[@]}" >"$out" 2>"$TMP/err" ;;
	count) perf stat -a -e "$EV" -x, -o /dev/null -- "${inner[@]}" 2>"$TMP/err" ;;
	perf) perf stat -a --for-each-cgroup "$BASE/a,$BASE/b" -e "$EV" -x, -o /dev/null -- \
		"${inner[@]}" 2>"$TMP/err" ;;
	against) "$AGAINST" -e "$EV" -G "$BASE/a" -G "$BASE/b" -I 1000000 -j -- \
		"${inner[@]}" >/dev/null 2>"$TMP/err" ;;
	empty | reads)
		floor_start "$prof" "$EV"
		"${pp[@]}" >"$out" 2>"$TMP/pp-err"
		local rc=$?
		floor_stop || die "hookfloor -p $prof -e $EV failed: $(cat "$TMP/err")"
		((rc == 0)) || die "pingpong under hookfloor -p $prof failed: $(cat "$TMP/pp-err")" ;;
	*) "$CGTMA" --switch-hook "$prof" -e "$EV" -G "$BASE/a" -G "$BASE/b" -I 1000000 -j -- \
		"${inner[@]}" >/dev/null 2>"$TMP/err" ;;
	esac || die "$prof ($where) failed: $(cat "$TMP/err")"
	field "$out" usec_per_op
}

HOOKS=(tracepoint)
"$CGTMA" -v -e cpu-clock -I 100 -d 0.1 2>&1 >/dev/null | grep -q '^cgtma: switch hook: perf-event' &&
	HOOKS+=(perf-event)
CONFIGS=(count perf empty reads "${HOOKS[@]}" auto)
[ -n "$AGAINST" ] && CONFIGS+=(against)
echo "floor-table: ping-pong $([ "$PIN" = any ] && echo unpinned || echo pinned) (-c $PIN," \
	"$(nproc) CPUs), $LOOPS round trips a run," \
	"$ROUNDS rounds; events $EV"
for ((r = 0; r < ROUNDS; r++)); do
	for where in same across; do
		n=${#CONFIGS[@]}
		for ((k = 0; k < n; k++)); do
			c=${CONFIGS[$(((k + r) % n))]}
			base=$(run none "$where")
			t=$(run "$c" "$where")
			awk -v c="$c" -v w="$where" -v t="$t" -v b="$base" \
				'BEGIN { printf "%s %s %.6f\n", c, w, t / b }' >>"$TMP/ratios"
		done
	done
done
# median min max of a configuration's ratios
stats() {
	awk -v c="$1" -v w="$2" '$1 == c && $2 == w { print $3 }' "$TMP/ratios" | sort -g |
		awk '{ v[NR] = $1 }
		END {
			if (!NR) { printf "-"; exit }
			m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
			printf "x%.3f (x%.3f..x%.3f)", m, v[1], v[NR]
		}'
}
median() { stats "$1" "$2" | sed 's/^x\([0-9.]*\).*/\1/'; }
printf '\n| | same cgroup | across two cgroups |\n|---|---|---|\n'
declare -A name=([count]="perf stat -a (counting alone, no cgroups)"
	[perf]="perf stat -a --for-each-cgroup"
	[empty]="an empty sched_switch program (the events open)"
	[reads]="the reads alone (that program reading the events between cgroups)"
	[tracepoint]="cgtma --switch-hook tracepoint"
	[perf-event]="cgtma --switch-hook perf-event" [auto]="cgtma, auto (what it picks)"
	[against]="$AGAINST, auto")
for c in "${CONFIGS[@]}"; do
	echo "| ${name[$c]} | $(stats "$c" same) | $(stats "$c" across) |"
done
a=$(median auto same) c=$(median count same) x=$(median auto across) p=$(median perf across)
awk -v a="$a" -v c="$c" 'BEGIN { d = (a - c) * 100
	printf "\ngoal, same cgroup: auto %+.1f points over counting alone (at most +1.0): %s\n",
		d, (d <= 1.0) ? "met" : "not met" }'
awk -v x="$x" -v p="$p" 'BEGIN { s = p > 1 ? (x - 1) / (p - 1) * 100 : 0
	printf "goal, across cgroups: auto at %.0f %% of perf --for-each-cgroup\047s overhead", s
	printf " (at most 50 %%): %s\n", (p > 1 && s <= 50) ? "met" : "not met" }'
awk -v e="$(median empty across)" -v r="$(median reads across)" -v p="$p" 'BEGIN {
	if (p <= 1) exit
	printf "floors across cgroups: the empty program at %.0f %%, the reads alone at %.0f %%", \
		(e - 1) / (p - 1) * 100, (r - 1) / (p - 1) * 100
	printf " of perf --for-each-cgroup\047s overhead\n" }'

# BPF ns per switch: the kernel's statistics on while a pinned ping-pong runs.
# prog_ids NAME: the ids of the programs named NAME loaded now.
prog_ids() { bpftool prog show --json | jq --arg n "$1" '.[] | select(.name == $n) | .id'; }
# pid_progs PID: the ids of the BPF programs process PID holds (its descriptors' fdinfo): of
# the programs by one name, those of this cgtma, not another's running beside it.
pid_progs() { awk '$1 == "prog_id:" { print $2 }' /proc/"$1"/fdinfo/* 2>/dev/null; }
# bpf_ns ID WHERE: run_time_ns / run_cnt of program ID over a pinned ping-pong, and runs per
# round trip.
bpf_ns() {
	# shellcheck disable=SC2046
	"$PINGPONG" -c 0 -n "$LOOPS" -s -p "$1" $(where_args "$2") >"$TMP/pp" 2>"$TMP/err" ||
		die "pingpong -p $1 failed: $(cat "$TMP/err")"
	awk -v c="$(field "$TMP/pp" run_cnt)" -v t="$(field "$TMP/pp" run_time_ns)" -v n="$LOOPS" \
		'BEGIN { if (c / n >= 0.01) printf "%.0f ns (%.2f runs a round trip)", t / c, c / n;
			 else printf "- (%.3f runs a round trip)", c / n }'
}
echo
for prog in on_switch:tracepoint on_cgroup_switch:perf-event \
	    on_switch:tracepoint:--no-noise on_cgroup_switch:perf-event:--no-noise; do
	IFS=: read -r p hook noise <<<"$prog"
	[ "$hook" = perf-event ] && [ "${#HOOKS[@]}" -lt 2 ] && continue
	# shellcheck disable=SC2086 # $noise: no option, or one
	"$CGTMA" --switch-hook "$hook" $noise -e "$EV" -G "$BASE/a" -G "$BASE/b" -I 1000000 -j \
		>/dev/null 2>"$TMP/err" &
	pid=$!
	for _ in $(seq 100); do
		id=$(prog_ids "$p" | grep -xF -f <(pid_progs $pid; echo none) | tail -n 1)
		[ -n "$id" ] && break
		sleep 0.1
	done
	[ -n "$id" ] || die "cgtma --switch-hook $hook: no program $p: $(cat "$TMP/err")"
	echo "BPF per switch, $hook hook ($p${noise:+, $noise}): same cgroup" \
		"$(bpf_ns "$id" same); across $(bpf_ns "$id" across)"
	kill -INT $pid
	wait $pid
done
floor_start empty "$EV"
echo "BPF per switch, an empty sched_switch program (floor_empty): same cgroup" \
	"$(bpf_ns "$FLOOR_ID" same); across $(bpf_ns "$FLOOR_ID" across)"
floor_stop || die "hookfloor -p empty -e $EV failed: $(cat "$TMP/err")"
