#!/bin/bash
# Tasks moving themselves into a cgroup where another of its tasks runs, on one CPU: a
# spinner in T makes N getppid() calls pinned to CPU 0, while processes pinned there too move
# themselves into T again and again (cgexec) and make none. A move's slice is its old
# cgroup's until the move's tracepoint; where the mover sleeps after its css_set moved (in a
# controller's attach callback: cpuset's takes a per-CPU rwsem on 5.10) the spinner runs, a
# switch inside T. That switch must end the slice: else the spinner's run went to the
# mover's old cgroup at the tracepoint, unmarked (5,000 calls of a burst lost in
# 37-busy-start on 5.10 under load). T's count must be N exactly, or off by a few calls
# in a run cgtma marked not exact (tests/live/lib.sh, exact_or_marked). Each move gives the
# case a chance; it needs the mover to leave the CPU inside the move, which a quiet guest
# rarely does (code without the fix passed one 15-move run on 5.10): 37 under load is
# where it was seen.
# live: both-hooks
. "$(dirname "$0")/lib.sh"

EV=syscalls:sys_enter_getppid
# The spinner's calls outlast MOVES moves (a guest under emulation makes ~250,000 a second).
N=${CGTMA_MOVE_CALLS:-2000000} MOVES=100
tracepoint_or_skip syscalls/sys_enter_getppid
commands_or_skip taskset

watch_perf_cgroup_sessions
cg_make T
T=$(cg_path T)
# Where the kernel lets the test cgroups have cpuset (a v2 hierarchy with it), each move
# runs its attach callback, which may sleep: the case above. Without it the case is rarer.
echo +cpuset >"$CG_ROOT/$CG_BASE/cgroup.subtree_control" 2>/dev/null &&
	echo "note: cpuset enabled below the test's cgroup: each move runs its attach callback"

out=$TMP/out
cgtma_start "$out" 1 -v -I 200 --json -e "$EV,cpu-clock" -G "$T"
cg_run T taskset -c 0 "$WORKLOAD" getppid $N &
spinner=$!
moves=0
while kill -0 $spinner 2>/dev/null && [ $moves -lt $MOVES ]; do
	taskset -c 0 "$WORKLOAD" cgexec "$CG_ROOT/$CG_BASE/T" "$WORKLOAD" getppid 0 ||
		fail "a mover failed"
	moves=$((moves + 1))
done
wait $spinner || fail "the spinner failed"
cgtma_more "$out"
cgtma_signal INT
echo "$moves moves into T while the spinner ran"
got=$(cgroup_sum "$out" "$T" "$EV")
echo "$got getppid calls in T, $(jq -s '[.[] | select(.summary != true) | .missed_slices // 0] |
	add' "$out") slices marked not exact"
exact_or_marked "$got" "$N" "$out" || {
	jq -c --arg cg "$T" --arg ev "$EV" 'select(.summary != true) | [.interval,
		(.rows[] | select(.scope == "cgroup" and .cgroup == $cg and .cpu == null) |
		 .counts[$ev]), (.rows[] | select(.scope == "system") | .counts[$ev]),
		(.missed_slices // 0)]' "$out"
	cat "$TMP/err"
	fail "$got getppid calls in T, want $N"
}
echo ok
