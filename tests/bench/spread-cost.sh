#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make bench: the cost of switches inside one cgroup as a user's workload has them, its tasks
# on every CPU rather than pinned to one (tests/bench/spread-cost.sh BUILD_DIR).
#
# The ping-pong of run-bench.sh (tests/helpers/pingpong) with both tasks in one cgroup and
# neither pinned (-c any): the scheduler places them from one pass to the next, on one CPU or
# on two, with switches to and from idle between. Each round times, in turn (the order
# rotating from round to round), the ping-pong with:
#   none        no profiler;
#   perf -a     perf stat -a counting the same four events, no cgroups: what counting them
#               costs the switches at all, the floor of any profiler of them;
#   empty+ev    the same events open and an empty program on sched_switch (hookfloor -p empty,
#               tests/bench/floor.sh): the floor of any tracepoint hook;
#   tracepoint, perf-event, auto
#               cgtma -G the cgroup with that --switch-hook (auto: whichever it takes here,
#               said with the figures, and whether it fell back to the tracepoint).
# Each figure is the ping-pong's time per round trip over the same round's run without a
# profiler, median of the rounds' ratios [min .. max]: ratios within one round, never
# absolute times, as this VM's speed drifts between rounds. Wall time leads (what the
# user waits; across CPUs a pass also waits for the other CPU to wake); the two tasks' CPU
# time follows.
#
# Prints figures and never fails on timing: exit 1 only when something could not run; a
# machine that cannot run it (not root, no cgroup v2, no BTF) prints SKIP, exit 0.
#
# Environment (defaults in brackets):
#   CGTMA_BENCH_SPREAD_ROUNDS  rounds, the configurations alternating within each [7]
#   CGTMA_BENCH_SPREAD_LOOPS   round trips per run [100000]
set -u
BUILD=${1:-build}
CGTMA=$BUILD/cgtma
PINGPONG=$BUILD/tests/pingpong
FLOOR=$BUILD/tests/hookfloor
ROUNDS=${CGTMA_BENCH_SPREAD_ROUNDS:-7}
LOOPS=${CGTMA_BENCH_SPREAD_LOOPS:-100000}
EVENTS=cpu-clock,context-switches,cpu-migrations,page-faults
CONFIGS=(none count empty tracepoint perf-event auto)
LONG_INTERVAL=1000000	# ms: one interval spans any run, so user space sleeps throughout

die() { echo "spread-cost: $*" >&2; exit 1; }
. "$(dirname "$0")/floor.sh"
skip() { echo "SKIP same-cgroup cost across CPUs: $*"; exit 0; }
for v in ROUNDS LOOPS; do
	[[ ${!v} =~ ^[1-9][0-9]*$ ]] || die "CGTMA_BENCH_SPREAD_$v='${!v}' is not a positive number"
done
[ "$(id -u)" = 0 ] || skip "needs root (BPF, perf events, cgroups)"
[ -r /sys/kernel/btf/vmlinux ] || skip "the kernel has no BTF (/sys/kernel/btf/vmlinux)"
for t in "$CGTMA" "$PINGPONG" "$FLOOR"; do
	[ -x "$t" ] || die "no $t: build it first (make bench does)"
done
for c in perf jq; do
	command -v "$c" >/dev/null || die "$c is not installed (tools/install-deps.sh test)"
done
CG_ROOT=$(awk '$(NF-2) == "cgroup2" && $4 == "/" { print $5; exit }' /proc/self/mountinfo)
[ -n "$CG_ROOT" ] || skip "cgroup v2 is not mounted"

NAME=cgtma-spread-$$-$RANDOM
CG=$CG_ROOT/$NAME
TMP=$(mktemp -d /tmp/cgtma-spread.XXXXXX) || die "cannot create a scratch directory"
FLOOR_PID=""
# shellcheck disable=SC2317 # run by the trap
cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	[ -n "$FLOOR_PID" ] && kill "$FLOOR_PID" 2>/dev/null && wait "$FLOOR_PID" 2>/dev/null
	xargs -r kill -9 <"$CG/cgroup.procs" 2>/dev/null
	sleep 0.1
	rmdir "$CG" 2>/dev/null
	rm -rf "$TMP"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
mkdir "$CG" || die "cannot create a cgroup under $CG_ROOT"

# The perf-event hook needs 5.13+ and v2's perf_event: where cgtma cannot use it, only the
# tracepoint and auto are timed.
if ! "$CGTMA" --switch-hook perf-event -e cpu-clock -- true >/dev/null 2>"$TMP/err"; then
	echo "note: no perf-event hook here ($(head -n 1 "$TMP/err")): not timed"
	CONFIGS=(none count empty tracepoint auto)
fi

field() { tr ' ' '\n' <"$1" | sed -n "s/^$2=//p"; }
PP=("$PINGPONG" -c any -n "$LOOPS" -A "$CG" -B "$CG")

# run CONFIG: one timed ping-pong under CONFIG; its line in $TMP/pp. cgtma's stderr (-v) is
# kept in $TMP/auto.err for auto.
run() {
	local hook
	# shellcheck disable=SC2016 # expanded by that sh
	local to_pp=(sh -c 'out=$1; shift; exec "$@" >"$out"' sh "$TMP/pp" "${PP[@]}")
	case $1 in
	none)
		"${PP[@]}" >"$TMP/pp" 2>"$TMP/err" || die "pingpong failed: $(cat "$TMP/err")"
		;;
	count)
		perf stat -a -e "$EVENTS" -x, -o "$TMP/count.csv" -- "${to_pp[@]}" >/dev/null \
			2>"$TMP/err" || die "perf stat -a failed: $(cat "$TMP/err")"
		;;
	empty)
		floor_start empty "$EVENTS"
		"${PP[@]}" >"$TMP/pp" 2>"$TMP/pp-err"
		local rc=$?
		floor_stop || die "hookfloor -p empty -e $EVENTS failed: $(cat "$TMP/err")"
		((rc == 0)) || die "pingpong under hookfloor failed: $(cat "$TMP/pp-err")"
		;;
	*)
		hook=$1
		"$CGTMA" -v --switch-hook "$hook" -e "$EVENTS" -G "$NAME" -I "$LONG_INTERVAL" -j \
			-- "${to_pp[@]}" >"$TMP/cgtma.json" 2>"$TMP/err" ||
			die "cgtma --switch-hook $hook failed: $(cat "$TMP/err")"
		[ "$hook" = auto ] && cat "$TMP/err" >>"$TMP/auto.err"
		# Every round trip blocks each task once: a profiler that counted fewer context
		# switches in the cgroup did not count this run.
		local n
		n=$(tail -n 1 "$TMP/cgtma.json" | jq -r --arg cg "/$NAME" \
			'.rows[] | select(.scope == "cgroup" and .cgroup == $cg) |
			 .counts["context-switches"] // 0')
		[[ $n =~ ^[0-9]+$ ]] && ((n >= LOOPS)) && return 0
		die "cgtma --switch-hook $hook counted ${n:-no} context switches in $NAME" \
			"for $LOOPS round trips"
		;;
	esac
}

rotate() {
	local k=$1; shift
	local a=("$@") n=$# i
	for ((i = 0; i < n; i++)); do echo "${a[(i + k) % n]}"; done
}

echo "One cgroup, its two tasks on any CPU (a ping-pong not pinned, $(nproc) CPUs): $ROUNDS" \
	"rounds of $LOOPS round trips, events $EVENTS"
: >"$TMP/runs"
: >"$TMP/auto.err"
t0=$SECONDS
for ((r = 1; r <= ROUNDS; r++)); do
	[ -t 2 ] && printf '\r  round %d/%d ...' "$r" "$ROUNDS" >&2
	while read -r c; do
		run "$c" </dev/null
		echo "$c $r $(field "$TMP/pp" usec_per_op) $(field "$TMP/pp" cpu_usec_per_op)" \
			>>"$TMP/runs"
	done < <(rotate "$r" "${CONFIGS[@]}")
done
[ -t 2 ] && printf '\r%40s\r' '' >&2

# ratios CONFIG COLUMN [BASE]: per round, CONFIG's time (column 3 wall, 4 CPU) over BASE's
# [none]; "median min max" over the rounds.
ratios() {
	awk -v c="$1" -v f="$2" -v b="${3:-none}" '{ t[$1, $2] = $f; r[$2] = 1 }
		END { for (i in r) if (t[b, i] > 0 && t[c, i] > 0) print t[c, i] / t[b, i] }' \
		"$TMP/runs" | sort -g | awk '{ v[NR] = $1 }
		END { if (!NR) { print "nan nan nan"; exit }
		      print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2), v[1], v[NR] }'
}
x() { printf 'x%.3f' "$1"; }

taken=$(sed -n 's/^cgtma: switch hook: //p' "$TMP/auto.err" | head -n 1 | cut -d' ' -f1)
fell=$(grep -c 'has taken over' "$TMP/auto.err")
declare -A NAMES=([none]="no profiler" [count]="perf stat -a, the events, no cgroups"
	[empty]="empty sched_switch program + the events"
	[tracepoint]="cgtma --switch-hook tracepoint" [perf-event]="cgtma --switch-hook perf-event"
	[auto]="cgtma (auto: $taken$( ((fell)) && echo ", fell back to the tracepoint in $fell of $ROUNDS runs"))")
printf '  %-66s %-24s %s\n' "" "wall [min .. max]" "CPU [min .. max]"
for c in "${CONFIGS[@]}"; do
	[ "$c" = none ] && continue
	read -r w wl wh < <(ratios "$c" 3)
	read -r u ul uh < <(ratios "$c" 4)
	printf '  %-66s %-24s %s\n' "${NAMES[$c]}" "$(x "$w") [$(x "$wl") .. $(x "$wh")]" \
		"$(x "$u") [$(x "$ul") .. $(x "$uh")]"
done
read -r f _ < <(ratios empty 3 count)
echo "  (ratios of time per round trip to the same round's run without a profiler, median of" \
	"the rounds; the empty program over perf -a: $(x "$f"); $((SECONDS - t0)) s)"
echo
echo "docs/performance.md table (Markdown):"
echo
echo "| | wall | CPU time |"
echo "|---|---|---|"
for c in "${CONFIGS[@]}"; do
	[ "$c" = none ] && continue
	read -r w _ < <(ratios "$c" 3)
	read -r u _ < <(ratios "$c" 4)
	printf '| %s | %s | %s |\n' "${NAMES[$c]}" "$(x "$w")" "$(x "$u")"
done
echo
echo "Linux $(uname -r), $(nproc) CPUs, load average before the runs' end $(cut -d' ' -f1-3 \
	/proc/loadavg)."
