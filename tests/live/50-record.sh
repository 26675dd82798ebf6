#!/bin/bash
# --record and `cgtma report`. A live run with --json and --record on a test cgroup running a
# workload; `cgtma report FILE --json` must print exactly what the live run printed: every
# interval and the summary, every count, multiplex fraction, node and metric (the record
# keeps the raw sums and the run's doubles bit for bit, so nothing may differ, not even the
# last digit). Three runs: the default model with --per-cpu, -e events (no model), and the
# default model with -x, (toplev's CSV, byte for byte too). Then the file cut short and with
# a byte flipped: the intervals before the damage are printed, then "FILE: record N at byte
# B: truncated|bad checksum", exit 1. An unwritable --record path fails before the first
# interval, naming the path and the reason. A disk that fills mid-run and frees again: the
# run goes on, says what it could not write and exits 1; report prints every interval that
# was written as live and warns how many are missing.
. "$(dirname "$0")/lib.sh"

cg_make rec
CG=$(cg_path rec)

# record NAME CGTMA-ARGS...: a live run of the workload in $CG, recorded; prints into
# $TMP/NAME.live (stdout) and $TMP/NAME.cgtma.
record() {
	local name=$1
	shift
	"$CGTMA" -G "$CG" -I 250 --record "$TMP/$name.cgtma" "$@" -- \
		"$WORKLOAD" cgexec "$CG_ROOT/$CG_BASE/rec" sh -c \
		"'$WORKLOAD' getppid 200000 40 & '$WORKLOAD' spin 1200; wait" \
		>"$TMP/$name.live" 2>"$TMP/$name.err" ||
		fail "live run $name failed (exit $?): $(cat "$TMP/$name.err")"
}

# same NAME: report --json equals the live output, and the comparison is not vacuous.
same() {
	local name=$1 lines
	"$CGTMA" report "$TMP/$name.cgtma" --json >"$TMP/$name.report" 2>"$TMP/$name.rerr" ||
		fail "report $name failed (exit $?): $(cat "$TMP/$name.rerr")"
	lines=$(wc -l <"$TMP/$name.live")
	[ "$lines" -ge 4 ] || fail "$name: only $lines lines from the live run"
	jq -e 'select(.summary == true)' "$TMP/$name.live" >/dev/null ||
		fail "$name: the live run printed no summary"
	jq -e --arg cg "$CG" 'select(.summary == true) | .rows[] |
		select(.scope == "cgroup" and .cgroup == $cg and .cpu == null) |
		.counts["cpu-clock"] > 100000000' "$TMP/$name.live" >/dev/null ||
		fail "$name: the cgroup's summary has no cpu-clock worth comparing"
	if ! cmp -s "$TMP/$name.live" "$TMP/$name.report"; then
		# Say which values differ, path by path.
		paste -d '\n' "$TMP/$name.live" "$TMP/$name.report" | jq -c -s '
			[range(0; length; 2) as $i | [.[$i], .[$i + 1]] as [$a, $b] |
			 ([$a | paths(scalars)] | unique)[] as $p |
			 select(($a | getpath($p)) != ($b | getpath($p))) |
			 {line: ($i / 2 + 1), path: $p, live: ($a | getpath($p)),
			  report: ($b | getpath($p))}] | .[:10][]' >&2
		fail "$name: report --json differs from the live --json ($lines lines)"
	fi
}

record model --json -A
same model
# The report's other views work on it too.
"$CGTMA" report "$TMP/model.cgtma" >"$TMP/model.text" 2>"$TMP/model.terr" ||
	fail "report (text) failed: $(cat "$TMP/model.terr")"
grep -qF "$CG" "$TMP/model.text" || fail "report (text) does not show $CG"

record events --json -e cpu-clock,syscalls:sys_enter_getppid
same events
got=$(jq -s --arg cg "$CG" '[.[] | select(.summary == true) | .rows[] |
	select(.scope == "cgroup" and .cgroup == $cg) | .counts["syscalls:sys_enter_getppid"]] |
	first' "$TMP/events.report")
# The workload's calls, and the shell's own few.
[ "$got" -ge 200000 ] && [ "$got" -lt 200100 ] ||
	fail "replayed getppid count of $CG: $got, want 200000 and a few"

record csv -x ,
"$CGTMA" report "$TMP/csv.cgtma" -x , >"$TMP/csv.report" 2>"$TMP/csv.rerr" ||
	fail "report -x failed (exit $?): $(cat "$TMP/csv.rerr")"
[ "$(grep -cF ",$CG," "$TMP/csv.live")" -ge 4 ] || fail "-x: few rows of $CG: $(head "$TMP/csv.live")"
cmp -s "$TMP/csv.live" "$TMP/csv.report" ||
	fail "report -x differs from the live -x: $(diff "$TMP/csv.live" "$TMP/csv.report" | head -5)"

# --- damage -----------------------------------------------------------------------------
F=$TMP/model.cgtma
size=$(stat -c %s "$F")
# Record offsets, from each record's length field (little-endian u32 at +4).
offs=()
pos=16
while [ "$pos" -lt "$size" ]; do
	offs+=("$pos")
	len=$(od -An -tu4 -j $((pos + 4)) -N4 "$F" | tr -d ' ')
	pos=$((pos + 12 + len + 4))
done
[ "$pos" -eq "$size" ] || fail "records do not end at the end of the file ($pos, $size)"
nrec=${#offs[@]}
nlive=$(wc -l <"$TMP/model.live")
# The header, every interval and the summary.
[ "$nrec" -eq $((nlive + 1)) ] || fail "$nrec records for $nlive live lines"

# damaged FILE RECORD WHAT: report prints the records before RECORD, then the error, exit 1.
damaged() {
	local file=$1 rec=$2 what=$3 rc=0
	"$CGTMA" report "$file" --json >"$TMP/d.out" 2>"$TMP/d.err" || rc=$?
	[ "$rc" -eq 1 ] || fail "report of a damaged file: exit $rc, want 1"
	grep -qF "cgtma: $file: record $rec at byte ${offs[$rec]}: $what" "$TMP/d.err" ||
		fail "report of a damaged file said: $(cat "$TMP/d.err")"
	# Under --json the error is also the stream's last line.
	[ "$(tail -n1 "$TMP/d.out" | jq -r .error)" != null ] ||
		fail "no JSON error line at the end: $(tail -n1 "$TMP/d.out")"
	head -n -1 "$TMP/d.out" >"$TMP/d.rows"
	head -n $((rec - 1)) "$TMP/model.live" >"$TMP/d.want"
	cmp -s "$TMP/d.rows" "$TMP/d.want" ||
		fail "the $((rec - 1)) intervals before the damage were not printed as live"
}

# Cut inside the summary (the last record).
head -c $((size - 10)) "$F" >"$TMP/cut.cgtma"
damaged "$TMP/cut.cgtma" $((nrec - 1)) "truncated"
# Cut exactly before the summary: a run that never finished.
head -c "${offs[$((nrec - 1))]}" "$F" >"$TMP/cut2.cgtma"
damaged "$TMP/cut2.cgtma" $((nrec - 1)) "the file ends before the summary"
# A byte flipped in the payload of the second interval.
cp "$F" "$TMP/bad.cgtma"
at=$((offs[2] + 12 + 30))
byte=$(od -An -tu1 -j "$at" -N1 "$F" | tr -d ' ')
printf "$(printf '\\%03o' $((byte ^ 0x55)))" |
	dd of="$TMP/bad.cgtma" bs=1 seek="$at" conv=notrunc status=none
cmp -s "$F" "$TMP/bad.cgtma" && fail "the byte was not flipped"
damaged "$TMP/bad.cgtma" 2 "bad checksum"

# --- an unwritable --record path ------------------------------------------------------
rc=0
"$CGTMA" -G "$CG" -I 1000 -d 3 --json --record "$TMP/no-such-dir/x.cgtma" \
	>"$TMP/u.out" 2>"$TMP/u.err" || rc=$?
[ "$rc" -eq 1 ] || fail "unwritable --record: exit $rc, want 1"
grep -qF "$TMP/no-such-dir/x.cgtma" "$TMP/u.err" && grep -q "No such file or directory" \
	"$TMP/u.err" || fail "unwritable --record said: $(cat "$TMP/u.err")"
jq -e 'select(.rows)' "$TMP/u.out" >/dev/null 2>&1 &&
	fail "unwritable --record: intervals were printed before failing"

# --- a full disk mid-run ------------------------------------------------------------------
# A tmpfs of 16 pages with one left: the record fills it within half a second (4k pages).
# When cgtma says so, a few intervals later, the filler goes.
page=$(getconf PAGESIZE)
tmpfs_or_skip "$TMP/full" size=$((16 * page)) "for the full-disk check (the rest passed)"
head -c $((15 * page)) /dev/zero >"$TMP/full/filler" || fail "cannot fill the tmpfs"
R=$TMP/full/r.cgtma
cgtma_start "$TMP/full.out" 0 -G "$CG" -e cpu-clock -I 20 -d 4 --json --record "$R"
wait_for 5 grep -q "cannot write" "$TMP/err" ||
	fail "the record never filled the disk: $(cat "$TMP/err")"
sleep 0.3
rm "$TMP/full/filler"
cgtma_status 1 "full disk (intervals were lost)"
[ "$(grep -c "cannot write" "$TMP/err")" -eq 1 ] &&
	grep -qF "cannot write '$R': No space left on device" "$TMP/err" ||
	fail "full disk: not one error naming the file and the reason: $(cat "$TMP/err")"
grep -qF "'$R' is written again" "$TMP/err" ||
	fail "full disk: no word that writing resumed: $(cat "$TMP/err")"
lost=$(sed -n "s|.*$R: \([0-9]*\) interval(s) could not be written.*|\1|p" "$TMP/err")
[ -n "$lost" ] && [ "$lost" -ge 5 ] || fail "full disk: lost '$lost' intervals: $(cat "$TMP/err")"
tail -n1 "$TMP/err" | grep -q "some output could not be written" ||
	fail "full disk: the run's last word is not the failure: $(cat "$TMP/err")"

rc=0
"$CGTMA" report "$R" --json >"$TMP/full.report" 2>"$TMP/full.rerr" || rc=$?
[ $rc -eq 0 ] || fail "report of the resumed record: exit $rc: $(cat "$TMP/full.rerr")"
grep -qF "$R: $lost interval(s) are not in the record" "$TMP/full.rerr" &&
	grep -qF "$R: $lost interval(s) missing before the one ending at" "$TMP/full.rerr" ||
	fail "report does not say that and where $lost intervals are missing: $(cat "$TMP/full.rerr")"
# The live stream also carries the errors as JSON lines; the intervals are those with rows.
grep '"rows"' "$TMP/full.out" >"$TMP/full.live"
nlive=$(grep -c . "$TMP/full.live") nrep=$(grep -c . "$TMP/full.report")
[ "$nrep" -eq $((nlive - lost)) ] ||
	fail "report printed $nrep lines; the live run $nlive, of which $lost were not written"
grep -Fxvf "$TMP/full.live" "$TMP/full.report" >"$TMP/full.extra"
[ -s "$TMP/full.extra" ] && fail "report lines the live run did not print: $(head -c 300 "$TMP/full.extra")"
[ "$(tail -n1 "$TMP/full.report")" = "$(tail -n1 "$TMP/full.live")" ] ||
	fail "the replayed summary differs from the live one"
exit 0
