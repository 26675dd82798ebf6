#!/bin/bash
# The two switch hooks. Where the kernel has the cgroup-switches event (5.13+) and the
# perf_event controller is on the v2 hierarchy, auto picks the perf-event hook: BPF runs at
# switches between cgroups and not at switches inside one. Elsewhere auto picks the
# sched_switch tracepoint, and --switch-hook=perf-event says why it cannot (exit 1).
#
# On each hook that this kernel has:
#   - exact counts: getppid() calls in A (two tasks) and B, with a cross-cgroup ping-pong on
#     every CPU, and a same-cgroup one;
#   - what runs per switch (the kernel's BPF statistics, through the ping-pong's -p): the
#     perf-event program runs at no more than a tenth of the switches of 20,000 same-cgroup
#     round trips (other work's, on a loaded machine), and
#     once per switch over cross-cgroup ones; the tracepoint program at every switch.
# On a fully preemptible kernel (PREEMPT_RT, preempt=full) auto must pick the tracepoint and
# the perf-event hook is refused: there the kernel skips the event's program at a switch that
# preempts a BPF map operation (4 % of A's calls went elsewhere on 6.1-rt).
# Auto takes the perf-event hook wherever the kernel has it, whether or not the kernel
# drops samples of switch events (its fallback is 37-busy-start's); asked for by name on a
# kernel that drops them (see switch_samples_dropped()), it runs with a warning, exact here.
# Then, where the controller can be moved: a v1 perf_event hierarchy mounted for the test
# makes the event compare v1 cgroups, which would hide v2 switches inside one v1 cgroup:
# auto must fall back to the tracepoint and say so. Unmounting moves it back.
. "$(dirname "$0")/lib.sh"

EV=syscalls:sys_enter_getppid
PINGPONG=${CGTMA_BUILD:-build}/tests/pingpong
[ -x "$PINGPONG" ] || fail "no $PINGPONG: build first (make $PINGPONG)"
N1=60000 N2=40000 M=50000 LOOPS=20000

cg_make A B S
A=$(cg_path A) B=$(cg_path B) S=$(cg_path S)

# hook_of ARGS...: the hook cgtma -v reports for these arguments ("" if it did not start).
hook_of() {
	timeout 30 "$CGTMA" -v -e cpu-clock -I 100 -d 0.2 "$@" 2>&1 >/dev/null |
		sed -n 's/^cgtma: switch hook: \([a-z-]*\) .*/\1/p' | head -n1
}
# prog_id NAME: the id of the BPF program NAME held by process $cgtma_pid.
prog_id() {
	local fd
	for fd in /proc/$cgtma_pid/fdinfo/*; do
		awk '$1 == "prog_id:" { print $2 }' "$fd" 2>/dev/null
	done | while read -r id; do
		[ "$(bpftool prog show id "$id" --json 2>/dev/null | jq -r .name)" = "$1" ] &&
			echo "$id" && break
	done
}
sum() { cgroup_sum "$2" "$1" "$EV"; }
# runs PINGPONG-ARGS...: the BPF program's runs over the ping-pong's timed loops.
runs() {
	"$PINGPONG" -c 0 -n $LOOPS -w 1000 -s -p "$id" "$@" | sed -n 's/.*run_cnt=\([0-9]*\).*/\1/p'
}

check_hook() {
	local hook=$1 prog=$2 out=$TMP/out-$1 got same cross
	cgtma_start "$out" 1 -v --switch-hook "$hook" -e "$EV" -I 100 --json -G "$A" -G "$B" -G "$S"
	grep -q "^cgtma: switch hook: $hook " "$TMP/err" ||
		fail "$hook: -v does not name the hook: $(cat "$TMP/err")"
	cg_start A "$WORKLOAD" getppid $N1 30
	cg_start A "$WORKLOAD" getppid $N2 30
	cg_start B "$WORKLOAD" getppid $M 30
	"$PINGPONG" -c 1 -n 200000 -w 0 -A "$CG_ROOT/$CG_BASE/A" -B "$CG_ROOT/$CG_BASE/B" \
		>/dev/null || fail "$hook: the cross-cgroup ping-pong failed"
	cg_wait
	if command -v bpftool >/dev/null; then
		id=$(prog_id "$prog")
		[ -n "$id" ] || fail "$hook: cgtma holds no BPF program $prog"
		same=$(runs -A "$CG_ROOT/$CG_BASE/S" -B "$CG_ROOT/$CG_BASE/S")
		cross=$(runs -A "$CG_ROOT/$CG_BASE/A" -B "$CG_ROOT/$CG_BASE/B")
		echo "$hook: $prog ran $same times over $LOOPS same-cgroup round trips," \
			"$cross over $LOOPS cross-cgroup ones"
		[ "$cross" -ge $((2 * LOOPS)) ] ||
			fail "$hook: $prog ran $cross times over $LOOPS cross-cgroup round trips, want >= $((2 * LOOPS))"
		if [ "$hook" = perf-event ]; then
			# Other work on that CPU (a loaded machine's) crosses cgroups with the
			# ping-pong's tasks: a tenth of its switches, not all of them.
			[ "$same" -le $((2 * LOOPS / 10)) ] ||
				fail "perf-event: $prog ran $same times over $LOOPS same-cgroup round trips: it should not run inside a cgroup"
		else
			[ "$same" -ge $((2 * LOOPS)) ] ||
				fail "tracepoint: $prog ran $same times over $LOOPS same-cgroup round trips, want >= $((2 * LOOPS))"
		fi
	else
		not_checked "$hook: the run counts" "bpftool is not installed"
	fi
	cgtma_more "$out"
	cgtma_signal INT "$hook"
	got=$(sum "$A" "$out")
	[ "$got" = $((N1 + N2)) ] || fail "$hook: A counted $got getppid calls, want exactly $((N1 + N2))"
	got=$(sum "$B" "$out")
	[ "$got" = $M ] || fail "$hook: B counted $got getppid calls, want exactly $M"
	got=$(sum "$S" "$out")
	[ "$got" = 0 ] || fail "$hook: S counted $got getppid calls, want 0"
	echo "$hook: exact: A $((N1 + N2)), B $M, S 0"
}

cpus_or_skip 2 "the ping-pongs need two"
check_hook tracepoint on_switch

# Whether the perf-event hook is exact here: 5.13+, perf_event on the v2 hierarchy.
perf_v1=$(awk '$1 == "perf_event" { print $2 }' /proc/cgroups)
hook_of -G "$A" >"$TMP/auto"
auto=$(cat "$TMP/auto")
# perf_event_refused WHERE WHY: on this kernel (WHERE), auto must pick the tracepoint, and
# --switch-hook perf-event must exit 1 saying WHY; then the test is done.
perf_event_refused() {
	local rc
	[ "$auto" = tracepoint ] || fail "auto picked '$auto' $1, want tracepoint"
	timeout 30 "$CGTMA" --switch-hook perf-event -e cpu-clock -d 0.2 >/dev/null 2>"$TMP/err"
	rc=$?
	[ $rc -eq 1 ] && awk -v m="cgtma: --switch-hook=perf-event: $2" \
		'index($0, m) == 1 { found = 1 } END { exit !found }' "$TMP/err" ||
		fail "--switch-hook=perf-event $1: exit $rc, want 1: $(cat "$TMP/err")"
	echo "$1: auto is tracepoint; perf-event: $(cat "$TMP/err")"
	echo ok
	exit 0
}
kernel_at_least 5 13 ||
	perf_event_refused "before 5.13" "the kernel has no cgroup-switches event (Linux 5.13+)"
# A fully preemptible kernel can preempt a BPF map operation, during which the kernel skips
# perf events' programs: auto must not pick the perf-event hook there, nor may it be forced.
preempt=""
case "$(uname -v)" in *PREEMPT_RT*) preempt=PREEMPT_RT ;; esac
if [ -z "$preempt" ] && { grep -qE '\((full|lazy)\)' /sys/kernel/debug/sched/preempt 2>/dev/null ||
	grep -qE 'preempt=(full|lazy)' /proc/cmdline; }; then
	preempt=preempt=full
fi
[ -n "$preempt" ] &&
	perf_event_refused "on a $preempt kernel" "the kernel is fully preemptible ($preempt)"
if [ "$perf_v1" != 0 ]; then
	[ "$auto" = tracepoint ] ||
		fail "auto picked '$auto' with perf_event on v1 hierarchy $perf_v1, want tracepoint"
	not_checked "perf-event" "perf_event is bound to v1 hierarchy $perf_v1: auto is tracepoint"
	echo ok
	exit 0
fi
[ "$auto" = perf-event ] || fail "auto picked '$auto' on $(uname -r) with perf_event on v2, want perf-event"
check_hook perf-event on_cgroup_switch
# A kernel that drops the samples of switch events (a 6.18 build does, on one CPU, for
# switches out of idle): the hook asked for by name says so where the probe can tell,
# and the counts of its check stay exact, as a slice begun by a missed switch out of idle
# holds nothing but idle time and the work of the task that ran next.
grep '^cgtma: warning: --switch-hook=perf-event: the kernel drops samples' "$TMP/err" || true

# A v1 perf_event hierarchy, for this test only: the implicit v2 controller can move there
# while v2 has cgroups, and back when it is unmounted.
v1=$TMP/perf_event-v1
mkdir -p "$v1"
if mount -t cgroup -o perf_event cgtma-test "$v1" 2>"$TMP/mount-err"; then
	on_exit "umount $v1"
	auto=$(hook_of -G "$A")
	msg=$(timeout 30 "$CGTMA" -v -e cpu-clock -d 0.2 2>&1 >/dev/null | grep '^cgtma: switch hook')
	umount "$v1" || fail "cannot unmount the v1 perf_event hierarchy"
	[ "$auto" = tracepoint ] || fail "auto picked '$auto' with perf_event on v1, want tracepoint"
	echo "$msg" | grep -q "the perf_event controller is bound to cgroup v1 hierarchy" ||
		fail "with perf_event on v1, -v does not say why: $msg"
	echo "perf_event on v1: $msg"
	# The hierarchy goes when its root's last reference does, a moment after the unmount.
	for ((i = 0; i < 100; i++)); do
		[ "$(awk '$1 == "perf_event" { print $2 }' /proc/cgroups)" = 0 ] && break
		sleep 0.05
	done
	[ "$(hook_of -G "$A")" = perf-event ] || fail "perf_event back on v2: auto is not perf-event"
else
	not_checked "the fallback" \
		"cannot mount a v1 perf_event hierarchy ($(cat "$TMP/mount-err"))"
fi
echo ok
