#!/bin/bash
# -p PID: the cgroup a process is in is tracked, found again each interval, as perf's -p
# follows a process. A process in A makes calls (counted in A's rows); moved to B, B is
# tracked too (said once) and counts the calls made there, A keeps its row; once it exits
# that is said once and its last cgroup stays tracked until the end, even when its pid is
# given to another process at once (in C: not followed). A process in the root cgroup has
# its calls counted in "/". A process that does not exist is bad usage.
. "$(dirname "$0")/lib.sh"

EV=syscalls:sys_enter_getppid
tracepoint_or_skip syscalls/sys_enter_getppid
cg_make A
cg_make B
cg_make C
A=$(cg_path A)
B=$(cg_path B)
C=$(cg_path C)

# A process that makes N calls each time it is told (SIGUSR1), from the cgroup it is in,
# then touches $TMP/done.K for the K-th time.
N=5000
bash -c "k=0; trap '\"$WORKLOAD\" getppid $N; k=\$((k + 1)); : >$TMP/done.\$k' USR1
	while :; do sleep 0.05; done" &
proc=$!
on_exit "kill $proc"
echo $proc >"$CG_ROOT/$CG_BASE/A/cgroup.procs" || fail "cannot move the process into A"

out=$TMP/out
cgtma_start "$out" 1 -e "$EV" -I 200 --json -p $proc
kill -USR1 $proc
wait_for 60 test -e "$TMP/done.1" || fail "the calls in A did not end"
cgtma_more "$out" 2
echo $proc >"$CG_ROOT/$CG_BASE/B/cgroup.procs" || fail "cannot move the process into B"
wait_for 10 grep -q -- "-p $proc moved to cgroup '$B': tracking it too" "$TMP/err" ||
	fail "the move to B is not said: $(cat "$TMP/err")"
cgtma_more "$out" 1
kill -USR1 $proc
wait_for 60 test -e "$TMP/done.2" || fail "the calls in B did not end"
cgtma_more "$out" 2
kill $proc
wait $proc 2>/dev/null
# Its pid, given at once to a process in C (the kernel's next pid set to it), is not it.
echo $((proc - 1)) >/proc/sys/kernel/ns_last_pid
sh -c "echo \$\$ >$CG_ROOT/$CG_BASE/C/cgroup.procs; exec sleep 30" &
reused=$!
on_exit "kill $reused"
[ "$reused" = "$proc" ] || not_checked "a pid given again" "pid $proc was not given again ($reused)"
wait_for 10 grep -q -- "-p $proc: the process exited; its last cgroup '$B' stays tracked" "$TMP/err" ||
	fail "the exit is not said: $(cat "$TMP/err")"
cgtma_more "$out" 2
cgtma_signal INT "-p"
[ "$(grep -c "moved to cgroup" "$TMP/err")" = 1 ] && [ "$(grep -c "exited" "$TMP/err")" = 1 ] ||
	fail "want one line each for the move and the exit: $(cat "$TMP/err")"
! grep -qF "'$C'" "$TMP/err" || fail "the pid given again was followed into C: $(cat "$TMP/err")"
# Each cgroup counted the calls made while the process was in it: N each.
got=$(tail -n1 "$out" | jq --arg a "$A" --arg b "$B" --arg ev "$EV" -r '
	[.rows[] | select(.cgroup == $a or .cgroup == $b) | "\(.cgroup)=\(.counts[$ev])"] | sort | join(" ")')
[ "$got" = "$A=$N $B=$N" ] || fail "the summary's counts: '$got', want '$A=$N $B=$N'"
# B has a row in every interval after the move, A in every interval: both were named.
jq -e -s --arg a "$A" '[.[] | select(.summary != true) | [.rows[] | select(.cgroup == $a)] |
	length == 1] | all' "$out" >/dev/null || fail "A lacks a row in some interval"
echo "-p: $got, the move and the exit said once"

# A process in the root cgroup: its calls are in "/" (which holds every task no tracked
# cgroup below holds, so at least N).
bash -c "trap '\"$WORKLOAD\" getppid $N; : >$TMP/done.root' USR1; while :; do sleep 0.05; done" &
rootproc=$!
on_exit "kill $rootproc"
echo $rootproc >"$CG_ROOT/cgroup.procs" || fail "cannot move the process into the root"
cgtma_start "$out" 1 -e "$EV" -I 200 --json -p $rootproc
kill -USR1 $rootproc
wait_for 60 test -e "$TMP/done.root" || fail "the calls in the root did not end"
cgtma_more "$out" 1
cgtma_signal INT "-p (root)"
root=$(tail -n1 "$out" | jq --arg ev "$EV" '[.rows[] | select(.cgroup == "/") | .counts[$ev]] | first')
[ "$root" != null ] && [ "$root" -ge $N ] || fail "-p of a process in the root: '/' counted $root, want at least $N"
echo "-p of a process in the root: '/' counted $root calls"

"$CGTMA" -e "$EV" -d 0.2 -p 2147483647 >/dev/null 2>"$TMP/err"
rc=$?
[ $rc -eq 2 ] && grep -qx "cgtma: -p 2147483647: no such process" "$TMP/err" ||
	fail "-p of no process: exit $rc: $(cat "$TMP/err")"
echo ok
