#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# cgtma's overhead figures (make bench): tests/bench/run-bench.sh BUILD_DIR
#
# cgtma has two switch hooks, and each figure below is given for both: tracepoint (on_switch
# on sched_switch: BPF runs at every context switch) and perf-event (on_cgroup_switch on a
# per-CPU cgroup-switches software event, Linux 5.13+: BPF runs only at switches between
# cgroups; what auto picks where the kernel has it). Where cgtma cannot use the perf-event
# hook (cgtma -v says tracepoint under auto, or --switch-hook perf-event fails), the bench
# measures the tracepoint alone and says why.
#
#  1. Hook cost per context switch: run_time_ns / run_cnt of cgtma's switch program (the
#     kernel's BPF statistics, on only while timing) over a pinned ping-pong, for 1, 4 and 8
#     events, same-cgroup and cross-cgroup switches, and 10 versus N (5000) tracked cgroups.
#     The perf-event hook's program runs (almost) never in same-cgroup runs: there the
#     figure is its runs per ping-pong switch (about 0), its ns/switch "-"; its ns/switch
#     across cgroups is the BPF run time per cgroup switch. Both figures are BPF run time
#     only: the tracepoint's trampoline and the perf event's delivery to its program are
#     left out (the ping-pong's slowdown below has them).
#     To keep the bench's time near what the tracepoint alone took, the perf-event hook
#     skips the 1-event pair (unless CGTMA_BENCH_EVENTS is 1: its program reads the events
#     as on_switch does, so the tracepoint's 1, 4 and 8 show the scaling), and a hook-cost
#     run is 50000 round trips, no longer 100000 (still 100000 switches to average over).
#     On a 2-CPU VM the rounds then take about 1.5 times what the tracepoint alone took
#     (1.7 times with 100000), the whole bench about 1.2 times (some 3 minutes).
#     The tracepoint hook's floor, timed the same way (cross-cgroup, 4 and 8 events): an
#     empty sched_switch program (the cgroup comparison on_switch does first, then nothing)
#     and one that only reads the events as on_switch does (tests/bench/hookfloor.bpf.c,
#     loaded by build/tests/hookfloor), with on_switch's ratio to the reads alone: of the
#     medians, and the median of each round's ratio (both ran in that round), by which the
#     target is judged, as a virtual machine's speed drifts from round to round.
#  2. Overhead on the pinned ping-pong (tests/helpers/pingpong: perf bench sched pipe with
#     each task in a cgroup of our choosing), with its two tasks in two tracked cgroups and in
#     one: time per round trip under cgtma with either hook and under perf stat -a
#     --for-each-cgroup counting the same events for the same cgroups, as a ratio to no
#     profiler in the same round; and under perf stat -a counting the same events for the
#     whole system, no cgroups: what counting them costs the switches at all (the kernel
#     counts context-switches, say, at every switch), the floor of any profiler of them.
#     The configurations (none, cgtma with each hook, perf per cgroup, perf counting only;
#     in two cgroups and in one) alternate within every round, their order rotating from
#     round to round; figures are medians over the rounds with their min..max.
# 2b. The same in one cgroup, in more and shorter rounds (the 1 % target is smaller than this
#     VM's drift between rounds): no profiler, cgtma with the perf-event hook (the
#     tracepoint where that hook is missing), cgtma under auto (where it has the perf-event
#     hook to pick: it adds the tracepoint's program, which ends the switches out of idle
#     and returns at once at every other switch, and takes over where the event misses a
#     switch; its runs with and without such a fallback are counted apart, as their costs
#     differ) and perf stat -a counting the same events, for
#     cpu-clock alone, which the kernel counts at no switch (as CPU-wide hardware counters):
#     cgtma's own cost; and for the overhead runs' set, which adds what counting its events
#     costs every switch. Figures: medians of the rounds' ratios to no profiler, and cgtma's
#     to perf stat -a's.
# 2c. The same in one cgroup, timed at the same moment as its baseline: a ping-pong on each of
#     two CPUs at once, the profiler counting one of them only (cgtma -C X, perf stat -a -C
#     X) from that CPU itself (taskset), so that its whole cost lands there. Each round times
#     every configuration twice, counting either CPU in turn; a run's figure is the counted
#     CPU's time per round trip over the other's, and the round's the geometric mean of the
#     two, in which the CPUs' own difference cancels out. The host's drift, which both CPUs
#     share, cancels too. The same with no profiler is the method's null: how far from 0
#     the figure is when nothing counts. cgtma only with the perf-event hook: the
#     tracepoint's program runs on the CPU left out too (it reads nothing there) and would
#     slow the baseline.
#  3. cgtma's own CPU time per interval (flush, map reads, glob rescan, computing, printing),
#     tracking 10 and N cgroups, with the hook auto picks.
#  4. -T's cost: the tracepoint hook with -T (every switch ends a slice and charges the
#     thread too) against the tracepoint without it, per switch (same and cross cgroup, set
#     SET, 10 cgroups) and on the ping-pong (its slowdown over no profiler; "tracepoint+T" in
#     the configurations).
#  5. The targets, met or not: in one cgroup, at most +1 % over no profiler with the
#     perf-event hook and +2 % with the tracepoint (and with the perf-event hook, in 2c);
#     across cgroups, the perf-event hook no slower than the tracepoint (the median of the
#     rounds' ratios), and either below perf's per-cgroup mode; each hook's cost
#     with N tracked cgroups within 10 % of its cost with 10; the tracepoint hook at most
#     1.2 times the reads alone, with 4 and 8 events. Then the figures as Markdown
#     tables for docs/performance.md, each column naming the hook that produced it.
#
# Prints figures and never fails on timing: exit 1 only when something could not run; a
# machine that cannot run it at all (not root, no cgroup v2, no BTF) prints SKIP, exit 0.
#
# Environment (defaults in brackets):
#   CGTMA_BENCH_ROUNDS       rounds [5]
#   CGTMA_BENCH_LOOPS        round trips per overhead run [200000]
#   CGTMA_BENCH_HOOK_LOOPS   round trips per hook-cost run [50000]
#   CGTMA_BENCH_SAME_ROUNDS  short rounds of the one-cgroup runs (2b) [15]
#   CGTMA_BENCH_SAME_LOOPS   round trips per run of those [100000]
#   CGTMA_BENCH_SIM_ROUNDS   rounds of the runs on two CPUs at once (2c) [15]
#   CGTMA_BENCH_SIM_LOOPS    round trips per ping-pong of those [50000]
#   CGTMA_BENCH_CGROUPS      tracked cgroups of the large case [5000]
#   CGTMA_BENCH_EVENTS       event set (1, 4 or 8) of the overhead runs and 10-vs-N [4]
#   CGTMA_BENCH_CPU          the CPU the ping-pong runs on [the last online one]; the
#                            profilers' own processes are kept off it when there is another
set -u

BUILD=${1:-build}
CGTMA=$BUILD/cgtma
PINGPONG=$BUILD/tests/pingpong
FLOOR=$BUILD/tests/hookfloor
HOOK_RUN=$(cd "$(dirname "$0")" && pwd)/hook-run.sh
ROUNDS=${CGTMA_BENCH_ROUNDS:-5}
LOOPS=${CGTMA_BENCH_LOOPS:-200000}
SAME_ROUNDS=${CGTMA_BENCH_SAME_ROUNDS:-15}
SAME_LOOPS=${CGTMA_BENCH_SAME_LOOPS:-100000}
SIM_ROUNDS=${CGTMA_BENCH_SIM_ROUNDS:-15}
SIM_LOOPS=${CGTMA_BENCH_SIM_LOOPS:-50000}
HOOK_LOOPS=${CGTMA_BENCH_HOOK_LOOPS:-50000}
NR_LARGE=${CGTMA_BENCH_CGROUPS:-5000}
SET=${CGTMA_BENCH_EVENTS:-4}
MAX_CGROUPS=8192
HOOK_TRIES=4	# hook-cost runs disturbed by other switches are redone up to this often
LONG_INTERVAL=1000000	# ms: one interval spans any run, so user space sleeps throughout

die() { echo "run-bench: $*" >&2; exit 1; }
. "$(dirname "$0")/floor.sh"
# Like the live tests: a machine that cannot run it says so and is not an error.
skip() { echo "SKIP bench: $*"; exit 0; }

for v in ROUNDS LOOPS HOOK_LOOPS NR_LARGE SAME_ROUNDS SAME_LOOPS SIM_ROUNDS SIM_LOOPS; do
	[[ ${!v} =~ ^[1-9][0-9]*$ ]] || die "CGTMA_BENCH_$v='${!v}' is not a positive number"
done
[[ $SET =~ ^(1|4|8)$ ]] || die "CGTMA_BENCH_EVENTS='$SET': use 1, 4 or 8"
((NR_LARGE >= 10 && NR_LARGE < MAX_CGROUPS)) ||
	die "CGTMA_BENCH_CGROUPS=$NR_LARGE: use 10 to $((MAX_CGROUPS - 1))"
[ "$(id -u)" = 0 ] || skip "needs root (BPF, perf events, cgroups)"
[ -r /sys/kernel/btf/vmlinux ] || skip "the kernel has no BTF (/sys/kernel/btf/vmlinux)"
for t in "$CGTMA" "$PINGPONG" "$FLOOR"; do
	[ -x "$t" ] || die "no $t: build it first (make bench does)"
done
for c in perf bpftool jq taskset; do
	command -v "$c" >/dev/null || die "$c is not installed (tools/install-deps.sh test)"
done

CG_ROOT=$(awk '$(NF-2) == "cgroup2" && $4 == "/" { print $5; exit }' /proc/self/mountinfo)
[ -n "$CG_ROOT" ] || skip "cgroup v2 is not mounted"

# --- the machine --------------------------------------------------------------------------

# Online CPUs, one per line.
online_cpus() {
	tr ',' '\n' </sys/devices/system/cpu/online |
		awk -F- 'NF { hi = NF > 1 ? $2 : $1; for (c = $1; c <= hi; c++) print c }'
}
CPU=${CGTMA_BENCH_CPU:-$(online_cpus | tail -n 1)}
online_cpus | grep -qx "$CPU" || die "CGTMA_BENCH_CPU=$CPU is not an online CPU"
OTHERS=$(online_cpus | grep -vx "$CPU" | paste -sd, -)
# The profilers' user space (and perf's sh wrapper) runs off the ping-pong's CPU.
if [ -n "$OTHERS" ]; then
	OFF_CPU=(taskset -c "$OTHERS")
else
	OFF_CPU=()
fi

# Event sets: software events, plus two syscall tracepoints in the largest when tracefs has
# them (both count through the same perf read path), else two more software events.
TRACEFS=$(awk '$3 == "tracefs" { print $2; exit }' /proc/mounts)
TRACEFS=${TRACEFS:-/sys/kernel/tracing}
# shellcheck disable=SC2034 # read through events_of
EVENTS_1=cpu-clock
EVENTS_4=cpu-clock,context-switches,cpu-migrations,page-faults
if [ -e "$TRACEFS/events/syscalls/sys_enter_read/id" ] &&
   [ -e "$TRACEFS/events/syscalls/sys_enter_write/id" ]; then
	# shellcheck disable=SC2034
	EVENTS_8=$EVENTS_4,minor-faults,major-faults,syscalls:sys_enter_read,syscalls:sys_enter_write
else
	# shellcheck disable=SC2034
	EVENTS_8=$EVENTS_4,minor-faults,major-faults,alignment-faults,emulation-faults
fi
events_of() { local v=EVENTS_$1; echo "${!v}"; }

# perf's --for-each-cgroup names cgroups relative to a v1 hierarchy with perf_event when
# there is one, else to the v2 mount (tools/lib/api/fs/cgroup.c); cgtma always counts v2.
# With a v1 perf_event hierarchy, the tasks join the same-named cgroup in both.
PERF_V1=$(awk '$3 == "cgroup" && $4 ~ /(^|,)perf_event(,|$)/ { print $2; exit }' /proc/mounts)

BASE=cgtma-bench-$$-$RANDOM
TMP=$(mktemp -d /tmp/cgtma-bench.XXXXXX) || die "cannot create a scratch directory"
STATS_WAS=$(cat /proc/sys/kernel/bpf_stats_enabled 2>/dev/null || echo 0)
FLOOR_PID=""	# a hookfloor running (run_floor)

# shellcheck disable=SC2317 # run by the trap
cleanup() {
	local rc=$? root
	trap - EXIT INT TERM
	[ -n "$FLOOR_PID" ] && kill "$FLOOR_PID" 2>/dev/null && wait "$FLOOR_PID" 2>/dev/null
	for root in "$CG_ROOT" ${PERF_V1:+"$PERF_V1"}; do
		[ -d "$root/$BASE" ] || continue
		# Whatever is left in our cgroups (a ping-pong cut short) dies first.
		# shellcheck disable=SC2038 # pids, not file names
		find "$root/$BASE" -name cgroup.procs -exec cat {} + 2>/dev/null |
			xargs -r kill -9 2>/dev/null
		sleep 0.1
		find "$root/$BASE" -depth -type d -exec rmdir {} + 2>/dev/null
		[ -d "$root/$BASE" ] && echo "run-bench: could not remove $root/$BASE" >&2
	done
	rm -rf "$TMP"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The switch hooks to measure: both where cgtma can use the perf-event one, which auto then
# picks (cgtma -v names the hook in use and, for the tracepoint, why) unless the kernel drops
# samples of switch events, else the tracepoint alone, and NO_PERF_HOOK says why. Every cgtma below names its hook: a CGTMA_SWITCH_HOOK in
# the environment changes nothing.
NO_PERF_HOOK=""
"$CGTMA" -v --switch-hook auto -e cpu-clock -- true >/dev/null 2>"$TMP/err" ||
	die "cgtma -v -e cpu-clock -- true failed: $(cat "$TMP/err")"
auto=$(sed -n 's/^cgtma: switch hook: //p' "$TMP/err" | head -n 1)
case $auto in
perf-event*)
	if ! "$CGTMA" -v --switch-hook perf-event -e cpu-clock -- true >/dev/null 2>"$TMP/err"
	then
		NO_PERF_HOOK="cgtma --switch-hook perf-event fails: $(head -n 1 "$TMP/err")"
	fi
	;;
tracepoint*)
	why=$(sed -n 's/^tracepoint ([^)]*): *//p' <<<"$auto")
	case $why in
	# Its numbers would be off, its cost is not: asked for by name it runs, warning.
	"the kernel drops samples"*)
		echo "note: auto picks the tracepoint here ($why); the perf-event hook is measured" \
			"all the same"
		;;
	*) NO_PERF_HOOK="cgtma -v picks the tracepoint under auto: ${why:-it gives no reason}" ;;
	esac
	;;
*)
	die "cgtma -v did not name its switch hook: $(head -n 1 "$TMP/err")"
	;;
esac
if [ -n "$NO_PERF_HOOK" ]; then
	HOOKS=(tracepoint)
else
	HOOKS=(tracepoint perf-event)
fi
AUTO_HOOK=${auto%% *}
# The switch program each hook runs, as hook-run.sh names it.
prog_of() {
	case $1 in
	perf-event) echo on_cgroup_switch ;;
	floor-*) echo "floor_${1#floor-}" ;;
	*) echo on_switch ;;
	esac
}
has_perf_hook() { [ -z "$NO_PERF_HOOK" ]; }

# small: 10 cgroups, large: NR_LARGE; the tasks run in a and b of either.
mkdir -p "$CG_ROOT/$BASE/small" "$CG_ROOT/$BASE/large" || die "cannot create cgroups in $CG_ROOT"
(
	cd "$CG_ROOT/$BASE" || exit 1
	dirs=(small/a small/b large/a large/b)
	for ((i = 2; i < 10; i++)); do dirs+=("$(printf 'small/c%02d' "$i")"); done
	for ((i = 2; i < NR_LARGE; i++)); do dirs+=("$(printf 'large/c%05d' "$i")"); done
	printf '%s\0' "${dirs[@]}" | xargs -0 mkdir
) || die "cannot create $NR_LARGE cgroups under $CG_ROOT/$BASE"
if [ -n "$PERF_V1" ]; then
	mkdir -p "$PERF_V1/$BASE/small/a" "$PERF_V1/$BASE/small/b" ||
		die "cannot create cgroups in $PERF_V1"
fi

# Cgroup directories a task joins for placement "a" or "b" of group small or large.
join_dirs() {
	local d="$CG_ROOT/$BASE/$1/$2"
	[ -n "$PERF_V1" ] && [ "$1" = small ] && d="$d,$PERF_V1/$BASE/$1/$2"
	echo "$d"
}
# Sets PL to pingpong's placement arguments for GROUP: cross (a | b) or same (a | a).
placement() {
	local second=b
	[ "$2" = same ] && second=a
	PL=(-A "$(join_dirs "$1" a)" -B "$(join_dirs "$1" "$second")")
}

field() { tr ' ' '\n' <"$1" | sed -n "s/^$2=//p"; }

# Count of event EV for cgroup CG in cgtma's JSON summary, or in perf's CSV.
cgtma_count() {
	tail -n 1 "$1" | jq -r --arg cg "/$BASE/$2" --arg ev "$3" \
		'.rows[] | select(.scope == "cgroup" and .cgroup == $cg) | .counts[$ev] // 0'
}
perf_count() {
	awk -F, -v cg="$BASE/$2" -v ev="$3" '$3 == ev && $4 == cg { printf "%d\n", $1; exit }' "$1"
}
# Count of event EV in perf's CSV without cgroups.
perf_total() { awk -F, -v ev="$2" '$3 == ev { printf "%d\n", $1; exit }' "$1"; }

# A profiler that counted nothing would make any overhead figure meaningless.
check_counted() {
	local what=$1 n=$2 want=$3
	if ! [[ $n =~ ^[0-9]+$ ]] || ((n < want)); then
		die "$what counted ${n:-nothing}, expected at least $want: the figures would be void"
	fi
}

# --- one run of each kind -----------------------------------------------------------------

# run_floor OUT floor-empty|floor-reads SET GROUP WHERE: the ping-pong under one of the floor
# programs (tests/bench/hookfloor.bpf.c) with the events of SET, timed as run_hook times
# cgtma's: OUT gets prog=NAME and the ping-pong's line with the program's run_cnt and
# run_time_ns.
run_floor() {
	local out=$1 kind=${2#floor-} ev id rc
	ev=$(events_of "$3")
	placement "$4" "$5"
	floor_start "$kind" "$ev" "${OFF_CPU[@]}"
	id=$FLOOR_ID
	printf 'prog=floor_%s ' "$kind" >"$out"
	"$PINGPONG" -c "$CPU" -n "$HOOK_LOOPS" "${PL[@]}" -s -p "$id" >>"$out" 2>"$TMP/pp-err"
	rc=$?
	# It exits 0 at SIGTERM; dead before, it failed.
	floor_stop || die "hookfloor -p $kind -e $ev failed (exit $?): $(cat "$TMP/err")"
	((rc == 0)) || die "pingpong under hookfloor -p $kind failed: $(cat "$TMP/pp-err")"
}

# run_hook OUT HOOK SET GROUP WHERE: cgtma with switch hook HOOK tracking every cgroup of
# GROUP, hook statistics on. A start that fails for want of memory is retried (see the note
# it leaves).
run_hook() {
	local out=$1 hook=$2 ev pat try pt=()
	case $hook in floor-*) run_floor "$@"; return ;; esac
	# tracepoint+T: the tracepoint hook with -T.
	[[ $hook == *+T ]] && hook=${hook%+T} pt=(-T)
	ev=$(events_of "$3")
	pat="$BASE/$4/*"
	placement "$4" "$5"
	for try in 1 2 3; do
		"${OFF_CPU[@]}" "$CGTMA" --switch-hook "$hook" "${pt[@]}" -e "$ev" -G "$pat" \
			--max-cgroups "$MAX_CGROUPS" -I "$LONG_INTERVAL" -j -- "$HOOK_RUN" "$out" \
			"$PINGPONG" -c "$CPU" -n "$HOOK_LOOPS" "${PL[@]}" \
			>"$TMP/cgtma.json" 2>"$TMP/err" && break
		if ! grep -q 'Cannot allocate memory' "$TMP/err" || ((try == 3)); then
			die "cgtma --switch-hook $hook -e $ev -G '$pat' failed: $(cat "$TMP/err")"
		fi
		echo "cgtma ($hook hook, $3 events, -G '$pat') failed to start, try $try of 3:" \
			"$(head -n 1 "$TMP/err")" >>"$TMP/notes"
		sleep 1
	done
	[ "$(field "$out" prog)" = "$(prog_of "$hook")" ] ||
		die "cgtma --switch-hook $hook ran $(field "$out" prog), not $(prog_of "$hook")"
	check_counted "cgtma ($hook hook run, $4/a, ${ev%%,*})" \
		"$(cgtma_count "$TMP/cgtma.json" "$4/a" "${ev%%,*}")" 1
	return 0
}

# run_overhead OUT PROFILER WHERE [SET [LOOPS]]: PROFILER none, tracepoint, perf-event or
# auto (cgtma with that switch hook; for auto, whether it fell back to the tracepoint during
# the run is in $AUTO_FELL: 1 or 0), perf (per cgroup) or count (perf stat -a, no cgroups);
# event set SET [$SET], LOOPS round trips [$LOOPS], group small.
run_overhead() {
	local out=$1 prof=$2 where=$3 set=${4:-$SET} loops=${5:-$LOOPS} ev pp pt=()
	local check_ev=cpu-clock check_min=1
	[[ $prof == *+T ]] && prof=${prof%+T} pt=(-T)
	ev=$(events_of "$set")
	# What proves a profiler counted: a context switch per ping-pong round trip in cgroup
	# a, or without that event (set 1, cpu-clock alone) some cpu-clock.
	[[ ,$ev, == *,context-switches,* ]] && check_ev=context-switches check_min=$loops
	placement small "$where"
	pp=("$PINGPONG" -c "$CPU" -n "$loops" "${PL[@]}")
	# shellcheck disable=SC2016 # expanded by that sh
	case $prof in
	none)
		"${pp[@]}" >"$out" 2>"$TMP/err" || die "pingpong failed: $(cat "$TMP/err")"
		;;
	tracepoint | perf-event | auto)
		"${OFF_CPU[@]}" "$CGTMA" -v --switch-hook "$prof" "${pt[@]}" -e "$ev" \
			-G "$BASE/small/a" -G "$BASE/small/b" -I "$LONG_INTERVAL" -j -- \
			sh -c 'out=$1; shift; exec "$@" >"$out"' sh "$out" "${pp[@]}" \
			>"$TMP/cgtma.json" 2>"$TMP/err" ||
			die "cgtma --switch-hook $prof failed: $(cat "$TMP/err")"
		check_counted "cgtma ($prof hook, $where, small/a, $check_ev)" \
			"$(cgtma_count "$TMP/cgtma.json" small/a "$check_ev")" "$check_min"
		AUTO_FELL=0
		grep -q '^cgtma: warning: switch hook: the perf-event hook missed' "$TMP/err" &&
			AUTO_FELL=1
		;;
	perf)
		"${OFF_CPU[@]}" perf stat -a --for-each-cgroup "$BASE/small/a,$BASE/small/b" \
			-e "$ev" -x, -o "$TMP/perf.csv" -- sh -c 'out=$1; shift; exec "$@" >"$out"' \
			sh "$out" "${pp[@]}" >/dev/null 2>"$TMP/err" ||
			die "perf stat failed: $(cat "$TMP/err")"
		check_counted "perf stat ($where, small/a, $check_ev)" \
			"$(perf_count "$TMP/perf.csv" small/a "$check_ev")" "$check_min"
		;;
	count)
		"${OFF_CPU[@]}" perf stat -a -e "$ev" -x, -o "$TMP/count.csv" -- \
			sh -c 'out=$1; shift; exec "$@" >"$out"' sh "$out" "${pp[@]}" >/dev/null \
			2>"$TMP/err" || die "perf stat -a failed: $(cat "$TMP/err")"
		check_counted "perf stat -a ($where, $check_ev)" \
			"$(perf_total "$TMP/count.csv" "$check_ev")" "$check_min"
		;;
	esac
}

# run_sim PROFILER SET X: the one-cgroup ping-pong on CPU and on SIM_CPU at once, PROFILER
# (none; perf-event: cgtma -C X with that hook; count: perf stat -a -C X) counting the events
# of SET on CPU X only, from X; prints X's CPU time per round trip over the other CPU's.
run_sim() {
	local prof=$1 ev y=$CPU check_ev=cpu-clock check_min=1 run=()
	local x=$3 ox=$TMP/sim-x oy=$TMP/sim-y
	ev=$(events_of "$2")
	[ "$x" = "$CPU" ] && y=$SIM_CPU
	[[ ,$ev, == *,context-switches,* ]] && check_ev=context-switches check_min=$SIM_LOOPS
	placement small same
	# Both ping-pongs from one shell, which the profiler starts and waits for; each pins
	# itself to its CPU.
	# shellcheck disable=SC2016 # expanded by that sh
	run=(sh -c 'pp=$1 x=$2 y=$3 n=$4 a=$5 b=$6 ox=$7 oy=$8
		"$pp" -c "$x" -n "$n" -A "$a" -B "$b" >"$ox" & p=$!
		"$pp" -c "$y" -n "$n" -A "$a" -B "$b" >"$oy" || exit 1
		wait $p' sh "$PINGPONG" "$x" "$y" "$SIM_LOOPS" "${PL[1]}" "${PL[3]}" "$ox" "$oy")
	case $prof in
	none)
		"${run[@]}" 2>"$TMP/err" || die "pingpongs on CPUs $x and $y failed: $(cat "$TMP/err")"
		;;
	perf-event)
		taskset -c "$x" "$CGTMA" --switch-hook perf-event -C "$x" -e "$ev" \
			-G "$BASE/small/a" -I "$LONG_INTERVAL" -j -- "${run[@]}" \
			>"$TMP/cgtma.json" 2>"$TMP/err" ||
			die "cgtma -C $x failed: $(cat "$TMP/err")"
		check_counted "cgtma -C $x (small/a, $check_ev)" \
			"$(cgtma_count "$TMP/cgtma.json" small/a "$check_ev")" "$check_min"
		;;
	count)
		taskset -c "$x" perf stat -a -C "$x" -e "$ev" -x, -o "$TMP/count.csv" -- \
			"${run[@]}" >/dev/null 2>"$TMP/err" ||
			die "perf stat -a -C $x failed: $(cat "$TMP/err")"
		check_counted "perf stat -a -C $x ($check_ev)" \
			"$(perf_total "$TMP/count.csv" "$check_ev")" "$check_min"
		;;
	esac
	awk -v a="$(field "$ox" cpu_usec_per_op)" -v b="$(field "$oy" cpu_usec_per_op)" \
		'BEGIN { if (a > 0 && b > 0) print a / b; else exit 1 }' ||
		die "pingpongs on CPUs $x and $y gave no CPU time: $(cat "$ox" "$oy")"
}

# --- rounds -------------------------------------------------------------------------------

# HOOK EVENTS GROUP WHERE. The perf-event hook skips the 1-event pair (see the header) but
# for SET, whose cross-cgroup figure is the 10 of the 10-vs-N target.
HOOK_CONFIGS=()
for hook in "${HOOKS[@]}"; do
	for s in 1 4 8; do
		[ "$hook" = perf-event ] && [ "$s" = 1 ] && [ "$SET" != 1 ] && continue
		HOOK_CONFIGS+=("$hook $s small same" "$hook $s small cross")
	done
	HOOK_CONFIGS+=("$hook $SET large cross")
done
HOOK_CONFIGS+=("tracepoint+T $SET small same" "tracepoint+T $SET small cross")
# The tracepoint hook's floor: the empty program (it reads nothing: set 1's events are open,
# unread) and the reads alone, for 4 and 8 events.
FLOOR_SETS="4 8"
HOOK_CONFIGS+=("floor-empty 1 small same" "floor-empty 1 small cross")
for s in $FLOOR_SETS; do HOOK_CONFIGS+=("floor-reads $s small cross"); done
# PROFILER WHERE
OVH_CONFIGS=()
for where in cross same; do
	for prof in none "${HOOKS[@]}" tracepoint+T perf count; do OVH_CONFIGS+=("$prof $where"); done
done

# Rotates the argument list by $1 places: each round starts with another configuration.
rotate() {
	local k=$1; shift
	local a=("$@") n=$# i
	for ((i = 0; i < n; i++)); do echo "${a[(i + k) % n]}"; done
}

perf_version=$(perf --version 2>/dev/null | awk '{ print $3 }')
echo "cgtma bench: Linux $(uname -r), $(online_cpus | wc -l) online CPUs, ping-pong on CPU" \
	"$CPU${OTHERS:+ (profilers on $OTHERS)}, perf $perf_version"
echo "  $ROUNDS rounds; $LOOPS round trips per overhead run, $HOOK_LOOPS per hook-cost run" \
	"(2 context switches each); CGTMA_BENCH_ROUNDS, _LOOPS, _HOOK_LOOPS, _CGROUPS, _EVENTS, _CPU"
echo "  events (software and tracepoint counting events, no hardware PMU used):"
for s in 1 4 8; do echo "    $s: $(events_of "$s")"; done
if [ -n "$PERF_V1" ]; then
	echo "  perf --for-each-cgroup: v1 perf_event hierarchy $PERF_V1; the tasks join the" \
		"same-named cgroup there and in v2 ($CG_ROOT), so both tools see the same split"
else
	echo "  perf --for-each-cgroup: cgroup v2 ($CG_ROOT; perf_event is bound to no v1" \
		"hierarchy), the very cgroups cgtma tracks"
fi
if has_perf_hook; then
	echo "  switch hooks: tracepoint (on_switch, every switch) and perf-event" \
		"(on_cgroup_switch, switches between cgroups only); auto picks $AUTO_HOOK here"
else
	echo "  switch hooks: the tracepoint only, as $NO_PERF_HOOK"
fi
if [ "$STATS_WAS" != 0 ]; then
	echo "  warning: kernel.bpf_stats_enabled is already 1: every BPF program is timed in" \
		"the overhead runs too, which inflates cgtma's figures"
fi
# (on_cgroup_switc: the kernel's 15 characters, as an older bpftool prints them)
others=$(bpftool prog show --json 2>/dev/null | jq '[.[] | select(.name | IN("on_switch",
	"on_cgroup_switch", "on_cgroup_switc"))] | length')
if [ "${others:-0}" != 0 ]; then
	echo "  warning: $others other switch program(s) attached (another cgtma?): they add" \
		"to every configuration, the baseline included"
fi
echo

: >"$TMP/hook"
: >"$TMP/ovh"
: >"$TMP/notes"
start=$SECONDS
for ((r = 1; r <= ROUNDS; r++)); do
	[ -t 2 ] && printf '\r  round %d/%d ...' "$r" "$ROUNDS" >&2
	while read -r hook s group where; do
		# The hook runs on every CPU: switches of other work (on any CPU; for the
		# perf-event hook, those between cgroups) land in the figure too. Above 2 % of
		# them, try again and keep the cleanest run.
		best=""
		for ((try = 1; try <= HOOK_TRIES; try++)); do
			run_hook "$TMP/pp" "$hook" "$s" "$group" "$where" </dev/null
			cnt=$(field "$TMP/pp" run_cnt)
			ns=$(field "$TMP/pp" run_time_ns)
			[[ $cnt =~ ^[0-9]+$ && $ns =~ ^[0-9]+$ ]] ||
				die "pingpong gave no run_cnt and run_time_ns: $(cat "$TMP/pp")"
			# Only the perf-event hook in one cgroup may not run at all.
			if ((cnt == 0)) && { [ "$hook" = tracepoint ] || [ "$where" = cross ]; }; then
				die "$(prog_of "$hook") did not run during the $where-cgroup ping-pong"
			fi
			# "ns/run runs-per-ping-pong-switch"; ns/run is "-" when the program ran at
			# under 1 % of the ping-pong's switches: those runs were other work's, and
			# their cost says nothing of this configuration.
			line=$(awk -v n="$ns" -v c="$cnt" -v l="$HOOK_LOOPS" 'BEGIN { r = c / (2 * l)
				if (r < 0.01) printf "- %.4f", r; else printf "%.2f %.4f", n / c, r }')
			if [ -z "$best" ] || awk -v a="${line#* }" -v b="${best#* }" \
				'BEGIN { exit !(a < b) }'; then
				best=$line
			fi
			awk -v x="${best#* }" 'BEGIN { exit !(x <= 1.02) }' && break
		done
		echo "$hook $s $group $where $r $best" >>"$TMP/hook"
	done < <(rotate "$r" "${HOOK_CONFIGS[@]}")
	while read -r prof where; do
		run_overhead "$TMP/pp" "$prof" "$where" </dev/null
		echo "$prof $where $r $(field "$TMP/pp" cpu_usec_per_op)" \
			"$(field "$TMP/pp" usec_per_op)" >>"$TMP/ovh"
	done < <(rotate "$r" "${OVH_CONFIGS[@]}")
done
[ -t 2 ] && printf '\r%40s\r' '' >&2
elapsed=$((SECONDS - start))

# --- one cgroup, more rounds ----------------------------------------------------------------
# The same-cgroup target is one percent, and a virtual machine's runs drift by more than that from
# round to round: many short rounds instead, each alternating no profiler, cgtma with the
# hook that runs no BPF at these switches (perf-event, where there is one) and perf stat -a
# counting the same events. With cpu-clock alone, which the kernel counts at no switch (as
# hardware counters are not touched at a switch between tasks in CPU-wide mode), what is
# left is cgtma's own cost; with SET, also what counting those events costs each switch,
# whoever counts them.
SAME_HOOK=tracepoint
has_perf_hook && SAME_HOOK=perf-event
SAME_SETS=(1)
[ "$SET" != 1 ] && SAME_SETS+=("$SET")
SAME_CONFIGS=()
for s in "${SAME_SETS[@]}"; do
	for prof in none "$SAME_HOOK" count; do SAME_CONFIGS+=("$prof $s"); done
	has_perf_hook && SAME_CONFIGS+=("auto $s")
done
: >"$TMP/same"
start=$SECONDS
for ((r = 1; r <= SAME_ROUNDS; r++)); do
	[ -t 2 ] && printf '\r  one cgroup, round %d/%d ...' "$r" "$SAME_ROUNDS" >&2
	while read -r prof s; do
		run_overhead "$TMP/pp" "$prof" same "$s" "$SAME_LOOPS" </dev/null
		# auto's runs by what it did: auto-kept (the perf-event hook throughout) or
		# auto-fell (the tracepoint took over).
		[ "$prof" = auto ] && prof=auto-$( ((AUTO_FELL)) && echo fell || echo kept)
		echo "$prof $s $r $(field "$TMP/pp" cpu_usec_per_op)" >>"$TMP/same"
	done < <(rotate "$r" "${SAME_CONFIGS[@]}")
done
[ -t 2 ] && printf '\r%40s\r' '' >&2
same_elapsed=$((SECONDS - start))

# --- one cgroup, two CPUs at once -----------------------------------------------------------
# The same target timed against a baseline that runs at the same moment (see 2c above): the
# host's drift from round to round, larger than 1 %, falls out of each round's figure.
SIM_CPU=$(cut -d, -f1 <<<"$OTHERS")
SIM_WHY=""
if [ -z "$SIM_CPU" ]; then
	SIM_WHY="one online CPU: the runs at once need two"
elif ! has_perf_hook; then
	SIM_WHY="no perf-event hook here ($NO_PERF_HOOK), and the tracepoint's program would run on the baseline's CPU too"
fi
SIM_CONFIGS=()
for s in "${SAME_SETS[@]}"; do
	for prof in none perf-event count; do SIM_CONFIGS+=("$prof $s"); done
done
: >"$TMP/sim"
start=$SECONDS
for ((r = 1; r <= SIM_ROUNDS && ${#SIM_WHY} == 0; r++)); do
	[ -t 2 ] && printf '\r  two CPUs at once, round %d/%d ...' "$r" "$SIM_ROUNDS" >&2
	while read -r prof s; do
		# Either CPU counted first, by turns.
		if ((r % 2)); then
			on_cpu=$(run_sim "$prof" "$s" "$CPU") &&
				on_sim=$(run_sim "$prof" "$s" "$SIM_CPU")
		else
			on_sim=$(run_sim "$prof" "$s" "$SIM_CPU") &&
				on_cpu=$(run_sim "$prof" "$s" "$CPU")
		fi || exit 1
		echo "$prof $s $r $(awk -v a="$on_cpu" -v b="$on_sim" 'BEGIN { print sqrt(a * b) }')" \
			"$on_cpu $on_sim" \
			>>"$TMP/sim"
	done < <(rotate "$r" "${SIM_CONFIGS[@]}")
done
[ -t 2 ] && printf '\r%40s\r' '' >&2
sim_elapsed=$((SECONDS - start))

# --- cgtma's own cost per interval ----------------------------------------------------------
# CPU time (user + system, from bash's `time`) of cgtma in a short and a long run, tracking
# US_SIZES cgroups through a glob (every one a row of every interval) and writing JSON lines
# to /dev/null; the difference over the extra intervals is the cost of one, with the start-up
# (BPF load and verification) left out. The cgroups are idle: what an interval costs per
# cgroup tracked, whether it ran or not. The hook is auto's: the intervals' work is the same
# with either.
US_INTERVAL=200 US_SHORT=2 US_LONG=6 US_SIZES="10 1000 10000" US_MAX=16384
(
	cd "$CG_ROOT/$BASE" || exit 1
	for n in $US_SIZES; do
		mkdir "us$n" || exit 1
		seq -f "us$n/c%05g" 1 "$n" | xargs mkdir
	done
) || die "cannot create the cgroups of the interval-cost runs under $CG_ROOT/$BASE"
us_cpu() {
	local TIMEFORMAT='%U %S' t
	t=$({ time "$CGTMA" --switch-hook "$AUTO_HOOK" -e cpu-clock -G "$BASE/us$1/*" \
		--max-cgroups "$US_MAX" -I $US_INTERVAL -d "$2" -j >/dev/null \
		2>"$TMP/err" </dev/null; } 2>&1) ||
		die "cgtma -G '$BASE/us$1/*' -d $2 failed: $(cat "$TMP/err")"
	awk '{ print $1 + $2 }' <<<"$t"
}
for ((r = 1; r <= ROUNDS; r++)); do
	for n in $US_SIZES; do
		short=$(us_cpu "$n" $US_SHORT)
		long=$(us_cpu "$n" $US_LONG)
		awk -v g="$n" -v a="$short" -v b="$long" \
			-v n=$(((US_LONG - US_SHORT) * 1000 / US_INTERVAL)) \
			'BEGIN { printf "%s %.3f\n", g, (b - a) * 1000 / n }' >>"$TMP/us"
	done
done

# --- figures ------------------------------------------------------------------------------

# Numbers on stdin -> "median min max".
stats() {
	sort -g | awk '{ v[NR] = $1 }
		END { if (!NR) { print "nan nan nan"; exit }
		      m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		      print m, v[1], v[NR] }'
}
# Over the rounds of hook configuration HOOK EVENTS GROUP WHERE: ns per run (the runs that
# gave one) and runs per ping-pong switch.
hook_stats() { awk -v c="$1 $2 $3 $4" '$1 " " $2 " " $3 " " $4 == c && $6 != "-" { print $6 }' \
	"$TMP/hook" | stats; }
hook_runs() { awk -v c="$1 $2 $3 $4" '$1 " " $2 " " $3 " " $4 == c { print $7 }' "$TMP/hook" |
	stats | cut -d' ' -f1; }
# ratio_stats PROFILER WHERE [COLUMN [BASE [FILE]]]: per round, time per op under PROFILER
# over BASE's (none: without a profiler), same placement; then over rounds. FILE's lines
# (the overhead runs' by default; the short rounds' have the event set for WHERE) are
# "PROFILER WHERE ROUND CPU-TIME [WALL-TIME]": COLUMN 4 is CPU time per op, 5 wall time.
ratio_stats() {
	awk -v p="$1" -v w="$2" -v f="${3:-4}" -v b="${4:-none}" '$2 == w { t[$1, $3] = $f; r[$3] = 1 }
		END { for (i in r) if ((p, i) in t && t[b, i] > 0) print t[p, i] / t[b, i] }' \
		"${5:-$TMP/ovh}" | stats
}
added_ns_stats() {
	awk -v p="$1" -v w="$2" '$2 == w { t[$1, $3] = $4; r[$3] = 1 }
		END { for (i in r) print (t[p, i] - t["none", i]) * 1000 / 2 }' "$TMP/ovh" | stats
}
pct() { awk -v x="$1" 'BEGIN { printf "%+.1f %%", (x - 1) * 100 }'; }
# Half the range MIN..MAX, in percent of MEDIAN: how far runs of one kind spread.
spread() { awk -v m="$1" -v lo="$2" -v hi="$3" 'BEGIN { printf "%.1f", (hi - lo) / 2 / m * 100 }'; }
# A figure with one decimal, or "-" where there is none.
num() { case $1 in nan | - | '') echo - ;; *) printf '%.1f' "$1" ;; esac; }
verdict() { if [ "$1" = 1 ]; then echo met; else echo "NOT MET"; fi; }
# 1 when A <= B, or A < B; for verdict.
le() { awk -v a="$1" -v b="$2" 'BEGIN { print (a <= b) }'; }
lt() { awk -v a="$1" -v b="$2" 'BEGIN { print (a < b) }'; }
tracked_of() { if [ "$1" = large ]; then echo "$NR_LARGE"; else echo 10; fi; }

# The rows of the hook-cost table, each with every hook that ran it.
HOOK_ROWS=()
for s in 1 4 8; do HOOK_ROWS+=("$s small same" "$s small cross"); done
HOOK_ROWS+=("$SET large cross")
declare -A RAN
for c in "${HOOK_CONFIGS[@]}"; do RAN[$c]=1; done

echo "Hook cost per context switch: run_time_ns / run_cnt of the switch program (kernel BPF" \
	"statistics, on only while timing), median of $ROUNDS [min .. max]"
printf '  %-11s %-7s %-8s %-13s %9s  %-20s %s\n' hook events tracked switches ns/switch \
	"[min .. max]" "hook runs per ping-pong switch (above 1: other work's)"
declare -A HOOK HRUNS
for row in "${HOOK_ROWS[@]}"; do
	read -r s group where <<<"$row"
	for hook in "${HOOKS[@]}"; do
		c="$hook $row"
		[ -n "${RAN[$c]:-}" ] || continue
		read -r med lo hi < <(hook_stats "$hook" "$s" "$group" "$where")
		runs=$(hook_runs "$hook" "$s" "$group" "$where")
		# Too few runs for a cost: the program (almost) never ran at these switches.
		if awk -v r="$runs" 'BEGIN { exit !(r < 0.01) }'; then
			med=- lo=- hi=-
		fi
		HOOK[$c]=$med
		HRUNS[$c]=$runs
		range="[$(num "$lo") .. $(num "$hi")]"
		[ "$lo" = - ] && range=-
		printf '  %-11s %-7s %-8s %-13s %9s  %-20s %.3f\n' "$hook" "$s" \
			"$(tracked_of "$group")" "$where-cgroup" "$(num "$med")" "$range" "$runs"
	done
done
echo "  (same-cgroup: the tracepoint's on_switch compares the two tasks' cgroups and returns;"
if has_perf_hook; then
	echo "  the perf-event hook's on_cgroup_switch does not run at the ping-pong's switches: \"-\""
	echo "  where it ran at under 1 % of them (those runs were other work's). Cross-cgroup:"
	echo "  either reads every event, updates the CPU total and the tracked cgroup's counts;"
	echo "  on_cgroup_switch also finds the next task through the run queue, and its figure is"
	echo "  the BPF run time per cgroup switch."
	[ "$SET" != 1 ] && echo "  The perf-event hook skips the 1-event pair, to keep the bench short."
else
	echo "  cross-cgroup: it reads every event, updates the CPU total and the tracked cgroup's"
	echo "  counts."
fi
echo "  Each figure includes the statistics' own two clock reads per run, as any empty"
echo "  program's, and leaves out how the program is reached: the tracepoint's trampoline, the"
echo "  perf event's overflow path; the slowdowns below have them)"
echo

# on_switch over the reads alone for SET, round by round: both ran in the same round, so a
# machine that is slower in one round than in another (a 2-CPU guest was, by up to a third) slows
# both; "median min max" over the rounds.
floor_ratio_stats() {
	awk -v s="$1" '$3 == "small" && $4 == "cross" && $2 == s && $6 != "-" {
			if ($1 == "tracepoint") hook[$5] = $6; else if ($1 == "floor-reads") reads[$5] = $6 }
		END { for (r in hook) if (r in reads && reads[r] > 0) print hook[r] / reads[r] }' \
		"$TMP/hook" | stats
}

# The tracepoint hook against its floor, per set: "empty reads hook ratio paired" (ratio: the
# medians' ratio; paired: the median of the rounds' ratios, which the 1.2x target is judged
# by), and the verdict.
declare -A FLOOR_ROW T_FLOOR
read -r f_empty f_elo f_ehi < <(hook_stats floor-empty 1 small cross)
read -r f_same _ < <(hook_stats floor-empty 1 small same)
echo "The tracepoint hook against its floor, cross-cgroup, 10 tracked cgroups: ns/switch as" \
	"above, median of $ROUNDS [min .. max]"
printf '  %-7s %-24s %-24s %-24s %-9s %s\n' events "empty program" "reads only" \
	"on_switch (tracepoint)" "ratio" "per round (target: at most 1.2x)"
for s in $FLOOR_SETS; do
	read -r f_reads f_rlo f_rhi < <(hook_stats floor-reads "$s" small cross)
	read -r f_hook f_hlo f_hhi < <(hook_stats tracepoint "$s" small cross)
	read -r paired p_lo p_hi < <(floor_ratio_stats "$s")
	ratio=$(awk -v a="$f_hook" -v b="$f_reads" 'BEGIN { printf "%.2f", a / b }')
	paired=$(awk -v x="$paired" 'BEGIN { printf "%.2f", x }')
	FLOOR_ROW[$s]="$f_empty $f_reads $f_hook $ratio $paired"
	T_FLOOR[$s]=$(le "$paired" 1.2)
	printf '  %-7s %-24s %-24s %-24s %-9s %s\n' "$s" \
		"$(num "$f_empty") [$(num "$f_elo")..$(num "$f_ehi")]" \
		"$(num "$f_reads") [$(num "$f_rlo")..$(num "$f_rhi")]" \
		"$(num "$f_hook") [$(num "$f_hlo")..$(num "$f_hhi")]" "${ratio}x" \
		"$(printf '%sx [%.2f..%.2f]' "$paired" "$p_lo" "$p_hi")  $(verdict "${T_FLOOR[$s]}")"
done
echo "  (empty: a sched_switch program comparing the two tasks' cgroups as on_switch does"
echo "  first, then nothing; reads only: the same, then at a switch between cgroups the N"
echo "  bpf_perf_event_read_value() calls of on_switch on the same events, nothing else"
echo "  (tests/bench/hookfloor.bpf.c). ratio: of the medians; per round: on_switch over the"
echo "  reads in each round, median [min..max], by which the target is judged. Same-cgroup"
echo "  switches: empty $(num "$f_same"), on_switch"
echo "  $(num "$(hook_stats tracepoint "$SET" small same | cut -d' ' -f1)" ) ns with $SET events)"
echo

echo "Overhead on the pinned ping-pong, events '$(events_of "$SET")': time per round trip" \
	"over the same round's run without a profiler, median of $ROUNDS [min .. max]."
echo "  CPU time of the two tasks (what the switches cost them; time the CPU gave to other" \
	"work is left out) leads; wall time follows, for reference."
printf '  %-13s %-35s %9s  %-20s %9s  %-20s %s\n' tasks profiler "CPU time" "[min .. max]" \
	wall "[min .. max]" "added ns/switch"
declare -A OVH
for where in cross same; do
	for prof in "${HOOKS[@]}" perf count; do
		read -r med lo hi < <(ratio_stats "$prof" "$where")
		read -r wmed wlo whi < <(ratio_stats "$prof" "$where" 5)
		read -r ns _ < <(added_ns_stats "$prof" "$where")
		OVH[$prof $where]=$med
		name="cgtma -G a -G b, $prof hook"
		[ "$prof" = perf ] && name="perf stat -a --for-each-cgroup a,b"
		[ "$prof" = count ] && name="perf stat -a (the events, no cgroups)"
		printf '  %-13s %-35s %9s  %-20s %9s  %-20s %.0f\n' "$where-cgroup" "$name" \
			"$(pct "$med")" "[$(pct "$lo") .. $(pct "$hi")]" \
			"$(pct "$wmed")" "[$(pct "$wlo") .. $(pct "$whi")]" "$ns"
	done
done
read -r base_cpu _ < <(awk '$1 == "none" && $2 == "cross" { print $4 }' "$TMP/ovh" | stats)
read -r base_wall _ < <(awk '$1 == "none" && $2 == "cross" { print $5 }' "$TMP/ovh" | stats)
echo "  (without a profiler, cross-cgroup: $base_cpu us CPU, $base_wall us wall per round trip," \
	"medians; every profiler is timed by the command it starts: its start-up is excluded)"
# Wall over CPU time without a profiler: above 1, the ping-pong's CPU also ran other work.
read -r shared _ < <(awk '$1 == "none" && $4 > 0 { print $5 / $4 }' "$TMP/ovh" | stats)
if awk -v x="$shared" 'BEGIN { exit !(x > 1.1) }'; then
	echo "  warning: the ping-pong's CPU was shared with other work (wall / CPU time" \
		"$(printf '%.2f' "$shared") without a profiler; load average now $(cut -d' ' -f1-3 \
		/proc/loadavg)): the slowdowns are noisy, rerun on an idle machine"
fi
echo

# Over the short rounds of event set SET: PROFILER's CPU time per op over BASE's [none].
same_stats() { ratio_stats "$1" "$2" 4 "${3:-none}" "$TMP/same"; }
echo "One cgroup, $SAME_ROUNDS short rounds ($SAME_LOOPS round trips each; no profiler, cgtma" \
	"with the $SAME_HOOK hook$(has_perf_hook && echo ", cgtma under auto") and perf stat -a" \
	"alternating): CPU time per round trip over" \
	"the same round's run without a profiler, median of the rounds' ratios [min .. max]"
printf '  %-58s %9s  %-20s %9s  %-20s %s\n' events cgtma "[min .. max]" "perf -a" \
	"[min .. max]" "cgtma over perf -a"
declare -A SAME
for s in "${SAME_SETS[@]}"; do
	read -r med lo hi < <(same_stats "$SAME_HOOK" "$s")
	read -r cmed clo chi < <(same_stats count "$s")
	read -r over _ < <(same_stats "$SAME_HOOK" "$s" count)
	SAME[$s]="$med $cmed $over"
	printf '  %-58s %9s  %-20s %9s  %-20s %s\n' "$s: $(events_of "$s")" "$(pct "$med")" \
		"[$(pct "$lo") .. $(pct "$hi")]" "$(pct "$cmed")" "[$(pct "$clo") .. $(pct "$chi")]" \
		"$(pct "$over")"
done
# auto's runs, by what it did in each: "runs median min max" of those kept and those fell.
auto_runs() {
	local n
	n=$(awk -v p="auto-$1" -v s="$2" '$1 == p && $2 == s' "$TMP/same" | wc -l)
	echo "$n $(same_stats "auto-$1" "$2")"
}
declare -A SAME_AUTO
if has_perf_hook; then
	for s in "${SAME_SETS[@]}"; do
		read -r kn kmed klo khi < <(auto_runs kept "$s")
		read -r fn fmed flo fhi < <(auto_runs fell "$s")
		SAME_AUTO[$s]="$kn $kmed $fn $fmed"
		line="  auto, set $s: kept the perf-event hook in $kn of $SAME_ROUNDS runs"
		((kn)) && line+=": $(pct "$kmed") [$(pct "$klo") .. $(pct "$khi")]"
		line+="; the tracepoint took over in $fn"
		((fn)) && line+=": $(pct "$fmed") [$(pct "$flo") .. $(pct "$fhi")]"
		echo "$line"
	done
fi
read -r snmed snlo snhi < <(awk '$1 == "none" { print $4 }' "$TMP/same" | stats)
echo "  (cpu-clock is counted at no switch, as CPU-wide hardware counters: what is left is" \
	"cgtma's own; perf -a: perf stat -a counting the same events, no cgroups, the floor of"
echo "  any profiler of them; the runs without a profiler spread by" \
	"+-$(spread "$snmed" "$snlo" "$snhi") %" \
	"among themselves, medians hold better; $same_elapsed s)"
echo

# Over the rounds of 2c, configuration PROFILER SET: "median min max" of the rounds' figures.
sim_stats() { awk -v p="$1" -v s="$2" '$1 == p && $2 == s { print $4 }' "$TMP/sim" | stats; }
declare -A SIM
if [ -n "$SIM_WHY" ]; then
	echo "One cgroup, two CPUs at once: not run ($SIM_WHY)"
else
	echo "One cgroup, two CPUs at once ($SIM_ROUNDS rounds; a ping-pong of $SIM_LOOPS round" \
		"trips on CPUs $CPU and $SIM_CPU together, the profiler counting one of them from it):" \
		"the counted CPU's time per round trip over the other's, both ways, geometric mean;"
	echo "  median of the rounds [min .. max]. No profiler gives the method's own error."
	printf '  %-58s %9s  %-20s %9s  %-20s %9s  %s\n' events "none" "[min .. max]" cgtma \
		"[min .. max]" "perf -a -C" "cgtma over perf"
	for s in "${SAME_SETS[@]}"; do
		read -r nmed nlo nhi < <(sim_stats none "$s")
		read -r med lo hi < <(sim_stats perf-event "$s")
		read -r cmed _ < <(sim_stats count "$s")
		read -r over _ < <(ratio_stats perf-event "$s" 4 count "$TMP/sim")
		SIM[$s]="$nmed $med $cmed $over"
		printf '  %-58s %9s  %-20s %9s  %-20s %9s  %s\n' "$s: $(events_of "$s")" \
			"$(pct "$nmed")" "[$(pct "$nlo") .. $(pct "$nhi")]" "$(pct "$med")" \
			"[$(pct "$lo") .. $(pct "$hi")]" "$(pct "$cmed")" "$(pct "$over")"
	done
	echo "  (cgtma: -C X --switch-hook perf-event, run on X; perf -a -C: perf stat -a -C X" \
		"counting the same events; $sim_elapsed s)"
fi
echo

echo "-T's cost: the tracepoint hook with -T against it without, events '$(events_of "$SET")'," \
	"10 tracked cgroups, medians of $ROUNDS [min .. max]"
printf '  %-13s %14s %14s %9s  %14s %14s\n' tasks "ns/switch" "ns/switch -T" ratio \
	"ping-pong" "ping-pong -T"
for where in same cross; do
	read -r h0 _ < <(hook_stats tracepoint "$SET" small "$where")
	read -r h1 lo1 hi1 < <(hook_stats tracepoint+T "$SET" small "$where")
	read -r o0 _ < <(ratio_stats tracepoint "$where")
	read -r o1 olo1 ohi1 < <(ratio_stats tracepoint+T "$where")
	printf '  %-13s %14s %14s %9s  %14s %14s\n' "$where-cgroup" "$(num "$h0")" \
		"$(num "$h1")" "$(awk -v a="$h1" -v b="$h0" 'BEGIN { if (b > 0) printf "%.2fx", a / b
		else print "-" }')" "$(pct "$o0")" "$(pct "$o1")"
done
echo "  (same-cgroup: without -T on_switch compares the cgroups and returns; with -T it reads"
echo "  every event and charges the cgroup and the thread, as at a cross-cgroup switch. Cross:"
echo "  -T adds the thread's map update. Ping-pong: CPU time per round trip over no profiler)"
echo

echo "cgtma's own CPU time per interval (user + system; a long run's over a short one's," \
	"so start-up is left out), -e cpu-clock -I $US_INTERVAL --json, $AUTO_HOOK hook," \
	"median of $ROUNDS [min .. max]"
declare -A US
for n in $US_SIZES; do
	read -r med lo hi < <(awk -v g="$n" '$1 == g { print $2 }' "$TMP/us" | stats)
	US[$n]=$med
	printf '  %5s tracked cgroups  %7.2f ms  [%.2f .. %.2f]  (%.1f %% of one CPU)\n' \
		"$n" "$med" "$lo" "$hi" "$(awk -v m="$med" -v i=$US_INTERVAL \
		'BEGIN { print m / i * 100 }')"
done
echo "  (each interval: flush every CPU, read the maps, compute, print a row per cgroup; the"
echo "  hierarchy is walked again only after a cgroup was made or removed)"
echo

target() { printf '  %-62s %-32s %s\n' "$1" "$2" "$(verdict "$3")"; }
tp_same=${OVH[tracepoint same]}
tp_cross=${OVH[tracepoint cross]}
perf_cross=${OVH[perf cross]}
t_tp_same=$(le "$tp_same" 1.02)
t_tp_perf=$(lt "$tp_cross" "$perf_cross")
if has_perf_hook; then
	pe_same=${OVH[perf-event same]}
	pe_cross=${OVH[perf-event cross]}
	t_pe_same=$(le "$pe_same" 1.01)
	# Judged, as the floor, by the rounds' own ratios: both ran in each round.
	read -r pe_tp pe_tp_lo pe_tp_hi < <(ratio_stats perf-event cross 4 tracepoint)
	t_pe_tp=$(le "$pe_tp" 1)
	t_pe_perf=$(lt "$pe_cross" "$perf_cross")
fi
# 10 versus NR_LARGE tracked cgroups, per hook: the N figure over the 10 one, verdict.
declare -A HR T_N
for hook in "${HOOKS[@]}"; do
	HR[$hook]=$(awk -v a="${HOOK[$hook $SET large cross]}" -v b="${HOOK[$hook $SET small cross]}" \
		'BEGIN { print a / b }')
	T_N[$hook]=$(le "${HR[$hook]}" 1.10)
done
echo "Targets"
if has_perf_hook; then
	target "same-cgroup, perf-event hook: at most +1 % over no profiler" "$(pct "$pe_same")" \
		"$t_pe_same"
fi
target "same-cgroup, tracepoint hook: at most +2 % over no profiler" "$(pct "$tp_same")" \
	"$t_tp_same"
read -r same1 _ <<<"${SAME[1]}"
t_same1=$(le "$same1" 1.01)
target "same-cgroup, $SAME_HOOK hook, cpu-clock, $SAME_ROUNDS rounds: at most +1 %" \
	"$(pct "$same1")" "$t_same1"
if [ -z "$SIM_WHY" ]; then
	read -r sim_null sim1 _ <<<"${SIM[1]}"
	t_sim1=$(le "$sim1" 1.01)
	target "same-cgroup, perf-event hook, 2 CPUs at once: at most +1 %" \
		"$(pct "$sim1") (cpu-clock; none: $(pct "$sim_null"))" "$t_sim1"
fi
# The floor of any profiler of these events, for reading the two above: counting them.
echo "  (same-cgroup, counting the events alone with perf stat -a: $(pct "${OVH[count same]}");" \
	"each hook over it, by the medians:$(for hook in "${HOOKS[@]}"; do printf ' %s %s' "$hook" \
	"$(pct "$(awk -v a="${OVH[$hook same]}" -v b="${OVH[count same]}" 'BEGIN { print a / b }')")"
	done))"
if has_perf_hook; then
	target "cross-cgroup, perf-event hook: no slower than the tracepoint" \
		"$(printf '%s [%s..%s] per round (%s vs %s)' "$(pct "$pe_tp")" "$(pct "$pe_tp_lo")" \
			"$(pct "$pe_tp_hi")" "$(pct "$pe_cross")" "$(pct "$tp_cross")")" "$t_pe_tp"
	target "cross-cgroup, perf-event hook: below perf's per-cgroup mode" \
		"$(pct "$pe_cross") vs perf $(pct "$perf_cross")" "$t_pe_perf"
fi
target "cross-cgroup, tracepoint hook: below perf's per-cgroup mode" \
	"$(pct "$tp_cross") vs perf $(pct "$perf_cross")" "$t_tp_perf"
target "CPU time per interval, 10000 idle cgroups: under 20 ms" "$(printf '%.2f ms' \
	"${US[10000]}")" "$(lt "${US[10000]}" 20)"
for hook in "${HOOKS[@]}"; do
	target "hook cost, $hook: $NR_LARGE tracked cgroups within 10 % of 10" \
		"$(printf '%s vs %s ns (%s)' "$(num "${HOOK[$hook $SET large cross]}")" \
		"$(num "${HOOK[$hook $SET small cross]}")" "$(pct "${HR[$hook]}")")" "${T_N[$hook]}"
done
for s in $FLOOR_SETS; do
	read -r _ f_reads f_hook ratio paired <<<"${FLOOR_ROW[$s]}"
	target "hook cost, tracepoint, $s events: at most 1.2x the reads alone" \
		"$(printf '%sx per round (%s vs %s ns: %sx)' "$paired" "$(num "$f_hook")" \
			"$(num "$f_reads")" "$ratio")" "${T_FLOOR[$s]}"
done
# How far apart the runs without a profiler were (same tasks): a slowdown smaller than
# that cannot be told from noise.
read -r nmed nlo nhi < <(awk '$1 == "none" && $2 == "same" { print $4 }' "$TMP/ovh" | stats)
noise=$(spread "$nmed" "$nlo" "$nhi")
if has_perf_hook && awk -v n="$noise" 'BEGIN { exit !(n > 2) }'; then
	beyond="the 1 % and 2 % targets, so those verdicts are"
elif has_perf_hook && awk -v n="$noise" 'BEGIN { exit !(n > 1) }'; then
	beyond="the perf-event hook's 1 % target, so that verdict is"
elif awk -v n="$noise" 'BEGIN { exit !(n > 2) }'; then
	beyond="the 2 % target, so that verdict is"
else
	beyond=""
fi
if [ -n "$beyond" ]; then
	echo "  (the same-cgroup runs without a profiler varied by +-$noise % among themselves:" \
		"more than $beyond not conclusive here; the hook cost above is the steadier figure)"
fi
echo "  (timing never fails the bench; $elapsed s for the rounds)"
echo

if [ -s "$TMP/notes" ]; then
	echo "Notes"
	sed 's/^/  /' "$TMP/notes"
	echo "  (the kernel gives a non-preallocated per-CPU hash its values from caches it refills"
	echo "  asynchronously: a burst of inserts at start can fail although memory is free)"
	echo
fi

# The same figures, ready for docs/performance.md; every column names the hook that produced it.
echo "docs/performance.md tables (Markdown):"
echo
if has_perf_hook; then
	echo "Hook cost per context switch, ns (median of $ROUNDS; run_time_ns / run_cnt of" \
		"on_switch for the tracepoint hook, of on_cgroup_switch for the perf-event hook;" \
		"-: the program did not run at those switches):"
else
	echo "Hook cost per context switch, ns (median of $ROUNDS; run_time_ns / run_cnt of" \
		"on_switch, the tracepoint hook; the perf-event hook was not measured, as" \
		"$NO_PERF_HOOK):"
fi
echo
line="| Events |" rule="|---|"
for col in "Same cgroup" "Two cgroups, 10 tracked" "Two cgroups, $NR_LARGE tracked"; do
	for hook in "${HOOKS[@]}"; do line+=" $col, $hook |" rule+="---|"; done
done
echo "$line"
echo "$rule"
for s in 1 4 8; do
	line="| $s: $(events_of "$s" | sed 's/,/, /g') |"
	for row in "$s small same" "$s small cross" "$s large cross"; do
		for hook in "${HOOKS[@]}"; do
			c="$hook $row"
			if [ -z "${RAN[$c]:-}" ]; then
				# The large case runs with SET only; the perf-event hook skips set 1.
				case ${row#* } in
				large*) cell="" ;;
				*) cell="not run" ;;
				esac
			elif [ "${HOOK[$c]}" = - ]; then
				cell=$(printf -- '- (%.3f runs per switch)' "${HRUNS[$c]}")
			elif [ "${row#* }" = "large cross" ]; then
				cell=$(printf '%.0f (%s vs 10; target within 10 %%: %s)' "${HOOK[$c]}" \
					"$(pct "${HR[$hook]}")" "$(verdict "${T_N[$hook]}")")
			else
				cell=$(printf '%.0f' "${HOOK[$c]}")
			fi
			line+=" $cell |"
		done
	done
	echo "$line"
done
echo
echo "The tracepoint hook against its floor (ns per cross-cgroup switch, median of $ROUNDS;" \
	"run_time_ns / run_cnt of each program; 10 tracked cgroups for on_switch):"
echo
echo "| Events | Empty program | Reads only | on_switch (tracepoint hook) | Ratio of the medians | Median of the rounds' ratios (target at most 1.2x) |"
echo "|---|---|---|---|---|---|"
for s in $FLOOR_SETS; do
	read -r f_empty f_reads f_hook ratio paired <<<"${FLOOR_ROW[$s]}"
	printf '| %s | %.0f | %.0f | %.0f | %sx | %sx: %s |\n' "$s" "$f_empty" "$f_reads" \
		"$f_hook" "$ratio" "$paired" "$(verdict "${T_FLOOR[$s]}")"
done
echo
echo "Slowdown of a pinned ping-pong (2 tasks, 1 CPU; CPU time per round trip against no" \
	"profiler; median of $ROUNDS), events $(events_of "$SET" | sed 's/,/, /g'):"
echo
line="| Tasks |" rule="|---|"
for hook in "${HOOKS[@]}"; do line+=" cgtma, $hook hook |" rule+="---|"; done
echo "$line perf stat -a --for-each-cgroup | perf stat -a, no cgroups (counting only) | Targets |"
echo "$rule---|---|---|"
for where in same cross; do
	if [ "$where" = same ]; then
		line="| Same cgroup |" goals=""
		has_perf_hook && goals="perf-event at most +1 %: $(verdict "$t_pe_same"); "
		goals+="tracepoint at most +2 %: $(verdict "$t_tp_same")"
	else
		line="| Two cgroups (every switch crosses) |" goals=""
		has_perf_hook && goals="perf-event no slower than tracepoint: $(verdict "$t_pe_tp");"
		has_perf_hook && goals+=" perf-event below perf: $(verdict "$t_pe_perf"); "
		goals+="tracepoint below perf: $(verdict "$t_tp_perf")"
	fi
	for hook in "${HOOKS[@]}"; do line+=" $(pct "${OVH[$hook $where]}") |"; done
	echo "$line $(pct "${OVH[perf $where]}") | $(pct "${OVH[count $where]}") | $goals |"
done
echo
echo "One cgroup, $SAME_ROUNDS short rounds (CPU time per round trip against no profiler," \
	"median of the rounds' ratios; cgtma with the $SAME_HOOK hook):"
echo
auto_col="" auto_rule=""
has_perf_hook && auto_col=" cgtma under auto: runs that kept the perf-event hook / that fell back |" \
	auto_rule="---|"
echo "| Events | cgtma | perf stat -a, no cgroups (counting only) | cgtma over perf stat -a |$auto_col Target |"
echo "|---|---|---|---|$auto_rule---|"
# "N runs: +x %", "1 run: +x %" or "no run".
runs_cell() {
	case $1 in
	0) echo "no run" ;;
	1) echo "1 run: $(pct "$2")" ;;
	*) echo "$1 runs: $(pct "$2")" ;;
	esac
}
for s in "${SAME_SETS[@]}"; do
	read -r med cmed over <<<"${SAME[$s]}"
	goal="" auto=""
	[ "$s" = 1 ] && goal="at most +1 %: $(verdict "$t_same1")"
	if has_perf_hook; then
		read -r kn kmed fn fmed <<<"${SAME_AUTO[$s]}"
		auto=" $(runs_cell "$kn" "$kmed") / $(runs_cell "$fn" "$fmed") |"
	fi
	printf '| %s | %s | %s | %s |%s %s |\n' "$(events_of "$s" | sed 's/,/, /g')" "$(pct "$med")" \
		"$(pct "$cmed")" "$(pct "$over")" "$auto" "$goal"
done
echo
if [ -z "$SIM_WHY" ]; then
	echo "One cgroup, two CPUs at once ($SIM_ROUNDS rounds: a ping-pong on each of CPUs" \
		"$CPU and $SIM_CPU together, the profiler counting one, from it; the counted CPU's" \
		"CPU time per round trip over the other's, geometric mean of both ways; median of" \
		"the rounds; cgtma -C with the perf-event hook):"
	echo
	echo "| Events | No profiler (the method's null) | cgtma | perf stat -a -C | cgtma over perf stat | Target |"
	echo "|---|---|---|---|---|---|"
	for s in "${SAME_SETS[@]}"; do
		read -r nmed med cmed over <<<"${SIM[$s]}"
		goal=""
		[ "$s" = 1 ] && goal="at most +1 %: $(verdict "$t_sim1")"
		printf '| %s | %s | %s | %s | %s | %s |\n' "$(events_of "$s" | sed 's/,/, /g')" \
			"$(pct "$nmed")" "$(pct "$med")" "$(pct "$cmed")" "$(pct "$over")" "$goal"
	done
	echo
fi
echo "cgtma's own CPU time per interval (-e cpu-clock -I $US_INTERVAL --json, $AUTO_HOOK" \
	"hook; median of $ROUNDS):"
echo
line="| Tracked cgroups |" rule="|---|" cells="| CPU time per interval |"
for n in $US_SIZES; do line+=" $n |" rule+="---|" cells+=" $(printf '%.2f' "${US[$n]}") ms |"; done
printf '%s\n%s\n%s\n' "$line" "$rule" "$cells"
echo
if has_perf_hook; then
	hooks_line="both switch hooks (tracepoint, perf-event)"
else
	hooks_line="the tracepoint switch hook only"
fi
echo "Linux $(uname -r), $(online_cpus | wc -l) CPUs, perf $perf_version; software and" \
	"tracepoint events only; $hooks_line."
exit 0
