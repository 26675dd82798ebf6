#!/bin/bash
# -p PID: the cgroup a process is in is tracked, found again each interval, as perf's -p
# follows a process. A process in A makes calls (counted in A's rows); moved to B, B is
# tracked too (said once) and counts the calls made there, A keeps its row; once it exits
# that is said once and its last cgroup stays tracked until the end. A process that does
# not exist is bad usage.
. "$(dirname "$0")/lib.sh"

EV=syscalls:sys_enter_getppid
tracepoint_or_skip syscalls/sys_enter_getppid
cg_make A
cg_make B
A=$(cg_path A)
B=$(cg_path B)

# A process that makes N calls each time it is told (SIGUSR1), from the cgroup it is in.
N=5000
bash -c "trap '\"$WORKLOAD\" getppid $N' USR1; while :; do sleep 0.05; done" &
proc=$!
on_exit "kill $proc"
echo $proc >"$CG_ROOT/$CG_BASE/A/cgroup.procs" || fail "cannot move the process into A"

out=$TMP/out
cgtma_start "$out" 1 -e "$EV" -I 200 --json -p $proc
kill -USR1 $proc
cgtma_more "$out" 2
echo $proc >"$CG_ROOT/$CG_BASE/B/cgroup.procs" || fail "cannot move the process into B"
wait_for 10 grep -q -- "-p $proc moved to cgroup '$B': tracking it too" "$TMP/err" ||
	fail "the move to B is not said: $(cat "$TMP/err")"
cgtma_more "$out" 1
kill -USR1 $proc
cgtma_more "$out" 2
kill $proc
wait $proc 2>/dev/null
wait_for 10 grep -q -- "-p $proc: the process exited; its last cgroup '$B' stays tracked" "$TMP/err" ||
	fail "the exit is not said: $(cat "$TMP/err")"
cgtma_more "$out" 2
cgtma_signal INT "-p"
[ "$(grep -c "moved to cgroup" "$TMP/err")" = 1 ] && [ "$(grep -c "exited" "$TMP/err")" = 1 ] ||
	fail "want one line each for the move and the exit: $(cat "$TMP/err")"
# Each cgroup counted the calls made while the process was in it: N each.
got=$(tail -n1 "$out" | jq --arg a "$A" --arg b "$B" --arg ev "$EV" -r '
	[.rows[] | select(.cgroup == $a or .cgroup == $b) | "\(.cgroup)=\(.counts[$ev])"] | sort | join(" ")')
[ "$got" = "$A=$N $B=$N" ] || fail "the summary's counts: '$got', want '$A=$N $B=$N'"
# B has a row in every interval after the move, A in every interval: both were named.
jq -e -s --arg a "$A" '[.[] | select(.summary != true) | [.rows[] | select(.cgroup == $a)] |
	length == 1] | all' "$out" >/dev/null || fail "A lacks a row in some interval"
echo "-p: $got, the move and the exit said once"

"$CGTMA" -e "$EV" -d 0.2 -p 2147483647 >/dev/null 2>"$TMP/err"
rc=$?
[ $rc -eq 2 ] && grep -qx "cgtma: -p 2147483647: no such process" "$TMP/err" ||
	fail "-p of no process: exit $rc: $(cat "$TMP/err")"
echo ok
