#!/bin/bash
# A cgroup removed and made again under its path (a container restarted between a
# benchmark's iterations) is a new cgroup, with a new id: each gets its own identity in
# every output. ctr counts exactly N1 getppid calls, is removed, made again and counts N2:
#  - JSON: every cgroup row has its cgroup_id (the directory's inode number); the summary
#    has two ctr rows, the old one's with "removed": true and N1, the new one's with N2;
#  - a record of the run, reported: the same ids and marks; the terminal summary tells the
#    two rows apart ("(removed id OLD)", "(id NEW)"), and so does toplev's CSV.
# live: both-hooks
. "$(dirname "$0")/lib.sh"

EV=syscalls:sys_enter_getppid
N1=30000 N2=20000
tracepoint_or_skip syscalls/sys_enter_getppid

cg_make ctr
CTR=$(cg_path ctr)
old_id=$(stat -c %i "$CG_ROOT/$CG_BASE/ctr")

out=$TMP/out
cgtma_start "$out" 1 -e $EV -I 250 --json -G "$CG_BASE/ctr*" --record "$TMP/run.cgtma"
cg_run ctr "$WORKLOAD" getppid $N1 || fail "workload ctr (first) failed"
cgtma_more "$out" 2
cg_remove ctr
cg_make ctr
new_id=$(stat -c %i "$CG_ROOT/$CG_BASE/ctr")
[ "$new_id" != "$old_id" ] || skip "the cgroup made again has the id of the one before"
cg_run ctr "$WORKLOAD" getppid $N2 || fail "workload ctr (second) failed"
cgtma_more "$out" 2
cgtma_stop

# summary_row ID FILE: the summary's row of ctr with that id, compact.
summary_row() {
	jq -c --arg cg "$CTR" --argjson id "$1" 'select(.summary == true) | .rows[] |
		select(.scope == "cgroup" and .cgroup == $cg and .cgroup_id == $id) |
		{removed: (.removed // false), n: .counts["'$EV'"]}' "$2"
}
# interval_sum ID FILE: what ctr with that id counted over the intervals.
interval_sum() {
	jq -s --arg cg "$CTR" --argjson id "$1" '[.[] | select(.summary != true) | .rows[] |
		select(.scope == "cgroup" and .cgroup == $cg and .cgroup_id == $id) |
		.counts["'$EV'"]] | add // 0' "$2"
}
check_json() {
	local what=$1 file=$2
	jq -e -s 'all(.[].rows[]; .scope != "cgroup" or .cgroup_id > 0)' \
		"$file" >/dev/null || fail "$what: a cgroup row without its cgroup_id"
	[ "$(jq -s --arg cg "$CTR" '[.[] | select(.summary == true) | .rows[] |
		select(.cgroup == $cg)] | length' "$file")" = 2 ] ||
		fail "$what: the summary does not have two rows of ctr"
	[ "$(summary_row "$old_id" "$file")" = "{\"removed\":true,\"n\":$N1}" ] ||
		fail "$what: the old ctr's summary row is '$(summary_row "$old_id" "$file")'," \
			"want removed with $N1"
	[ "$(summary_row "$new_id" "$file")" = "{\"removed\":false,\"n\":$N2}" ] ||
		fail "$what: the new ctr's summary row is '$(summary_row "$new_id" "$file")'," \
			"want live with $N2"
	[ "$(interval_sum "$old_id" "$file")" = $N1 ] &&
		[ "$(interval_sum "$new_id" "$file")" = $N2 ] ||
		fail "$what: the intervals' rows of ctr by id add up to" \
			"$(interval_sum "$old_id" "$file") and $(interval_sum "$new_id" "$file")," \
			"want $N1 and $N2"
}
check_json "live --json" "$out"
"$CGTMA" report "$TMP/run.cgtma" --json >"$TMP/report.json" 2>"$TMP/err" ||
	fail "report --json: $(cat "$TMP/err")"
check_json "report --json" "$TMP/report.json"

"$CGTMA" report "$TMP/run.cgtma" >"$TMP/report.txt" 2>"$TMP/err" ||
	fail "report: $(cat "$TMP/err")"
sed -n '/^# summary/,$p' "$TMP/report.txt" >"$TMP/summary.txt"
grep -qE "^$CTR +[0-9 ,]+  \(removed id $old_id\)\$" "$TMP/summary.txt" &&
	grep -qE "^$CTR +[0-9 ,]+  \(id $new_id\)\$" "$TMP/summary.txt" ||
	fail "the terminal summary does not tell ctr's two rows apart: $(cat "$TMP/summary.txt")"

"$CGTMA" report "$TMP/run.cgtma" -x, >"$TMP/report.csv" 2>"$TMP/err" ||
	fail "report -x,: $(cat "$TMP/err")"
grep -q "^SUMMARY,$CTR (removed id $old_id),$EV," "$TMP/report.csv" &&
	grep -q "^SUMMARY,$CTR (id $new_id),$EV," "$TMP/report.csv" ||
	fail "toplev's CSV does not tell ctr's two rows apart: $(grep SUMMARY "$TMP/report.csv")"
echo ok
