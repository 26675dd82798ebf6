#!/bin/bash
# Lifecycle of tracked cgroups, counting syscalls:sys_enter_getppid (exact) with -I 250:
#  - a glob that matches nothing at start ($CG_BASE/new-*) is only warned about;
#  - new-1, created after start, gets exactly its N1 calls, made at once after the mkdir,
#    before user space can have seen it (the BPF mkdir hook counts from birth);
#  - new-2 lives for less than an interval: created, its N2 calls, removed; it is reported
#    with exactly N2;
#  - other-1, created after start but matching nothing, is never reported;
#  - rm, tracked from the start, is removed mid-run after its workload ends: cgtma keeps
#    running, reports it with exactly its NR calls and in every interval until it is gone,
#    then stops reporting it (once gone, it is on the summary only);
#  - keep's workload spans the whole run, across the removals: exactly NK.
# live: both-hooks
. "$(dirname "$0")/lib.sh"

EV=syscalls:sys_enter_getppid
N1=30000 N2=20000 NO=25000 NR=40000 NK=60000

cg_make keep
cg_make rm
KEEP=$(cg_path keep) RM=$(cg_path rm) NEW1=$(cg_path new-1) NEW2=$(cg_path new-2)

now() { date +%s.%N; }
out=$TMP/out
cgtma_start "$out" 1 -e $EV -I 250 --json -G "$CG_BASE/new-*" -G "$KEEP" -G "$RM"
grep -q "matches no cgroup yet" "$TMP/err" ||
	fail "no warning about the glob matching nothing: $(cat "$TMP/err")"

cg_run keep "$WORKLOAD" getppid $NK 250 &	# about 2.5 s of work, in ten bursts
keep_pid=$!
cg_run rm "$WORKLOAD" getppid $NR 30 || fail "workload rm failed"
cgtma_more "$out" 2
t_rm=$(now)
cg_remove rm
t_rm_done=$(now)

# Born after start: the work starts right after the mkdir, well inside one interval.
cgtma_more "$out"
mkdir "$CG_ROOT/$CG_BASE/new-1" || fail "mkdir new-1"
cg_run new-1 "$WORKLOAD" getppid $N1 || fail "workload new-1 failed"
mkdir "$CG_ROOT/$CG_BASE/new-2" || fail "mkdir new-2"
cg_run new-2 "$WORKLOAD" getppid $N2 || fail "workload new-2 failed"
cg_remove new-2
mkdir "$CG_ROOT/$CG_BASE/other-1" || fail "mkdir other-1"
cg_run other-1 "$WORKLOAD" getppid $NO || fail "workload other-1 failed"

wait $keep_pid || fail "workload keep failed"
cgtma_more "$out" 2
kill -0 $cgtma_pid 2>/dev/null || fail "cgtma is gone after the removals: $(cat "$TMP/err")"
cgtma_signal INT
# The glob's warning, and the perf-event hook's fallback (stderr_said), are all it may say.
grep -v "matches no cgroup yet" "$TMP/err" >"$TMP/err-rest"
stderr_said "$TMP/err-rest" && fail "unexpected messages: $(cat "$TMP/err")"

jq -e -R 'fromjson | type == "object"' "$out" >/dev/null || fail "a line is not JSON"
[ "$(tail -n1 "$out" | jq .summary)" = true ] || fail "the last line is not the summary"

# Each cgroup's count summed over the intervals, and its count on the summary line: a line
# each, keep, rm, new-1 and new-2, from one jq (each costs 0.3 s to start under emulation).
mapfile -t counts < <(jq -r -s --arg ev $EV '[.[] | select(.summary != true) | .rows[]] as $r |
	[.[] | select(.summary == true) | .rows[]] as $s |
	def c($rows; $cg): [$rows[] | select(.scope == "cgroup" and .cgroup == $cg) | .counts[$ev]];
	$ARGS.positional[] as $cg |
	"\(c($r; $cg) | add // 0) \(c($s; $cg) | map(tostring) | join(" "))"' "$out" \
	--args "$KEEP" "$RM" "$NEW1" "$NEW2")
i=0
for c in "keep $KEEP $NK" "rm $RM $NR" "new-1 $NEW1 $N1" "new-2 $NEW2 $N2"; do
	set -- $c
	read -r s t <<<"${counts[i]:-}"
	i=$((i + 1))
	echo "$1: $s over the intervals, $t on the summary (want $3)"
	[ "$s" = "$3" ] || fail "$1 counted $s getppid calls over the intervals, want $3"
	[ "$t" = "$3" ] || fail "$1 has '$t' on the summary, want $3"
done

# Only the tracked cgroups ever appear: not other-1.
extra=$(jq -r -s --arg k "$KEEP" --arg r "$RM" --arg n1 "$NEW1" --arg n2 "$NEW2" \
	'[.[].rows[] | select(.scope == "cgroup") | .cgroup] | unique | .[] |
	 select(. != $k and . != $r and . != $n1 and . != $n2)' "$out")
[ -z "$extra" ] || fail "untracked cgroups reported: $extra"

# rm: in every interval from the first to its last, then in none; its last report is not
# from before the rmdir, and at most one comes from after it.
jq -e -s --arg r "$RM" '
	[.[] | select(.summary != true) | any(.rows[]; .cgroup == $r)] as $has |
	($has | index(false)) as $gone |
	$gone != null and ($has[$gone:] | all(. == false)) and
	($has | length) - $gone >= 2' "$out" >/dev/null ||
	fail "rm is not reported in every interval until its removal and then never"
last_rm=$(jq -s --arg r "$RM" '[.[] | select(.summary != true) |
	select(any(.rows[]; .cgroup == $r)) | .time] | max' "$out")
after=$(jq -s --arg r "$RM" --argjson t "$t_rm_done" '[.[] | select(.summary != true) |
	select(.time > $t and any(.rows[]; .cgroup == $r))] | length' "$out")
awk -v a="$last_rm" -v b="$t_rm" 'BEGIN { exit !(a >= b) }' ||
	fail "rm's last report ($last_rm) is from before the rmdir ($t_rm)"
[ "$after" -le 1 ] || fail "rm reported $after times after its removal, want at most once"

# keep: in every interval.
jq -e -s --arg k "$KEEP" 'all(.[]; any(.rows[]; .cgroup == $k))' "$out" >/dev/null ||
	fail "keep is missing from an interval"
# new-1 and new-2 are seen only from their birth: not on the first line.
jq -e -s --arg n "$NEW1" 'all(.[0].rows[]; .cgroup != $n)' "$out" >/dev/null ||
	fail "new-1 reported before it was created"
sys=$(jq -s --arg ev $EV '[.[] | select(.summary != true) | .rows[] |
	select(.scope == "system") | .counts[$ev]] | add' "$out")
want=$((NK + NR + N1 + N2 + NO))
[ "$sys" -ge $want ] || fail "the system counted $sys, want >= $want"
echo ok
