#!/bin/bash
# Standard output as users point it, closed and full:
#   - `cgtma --json | head -n 1`: with standard output the only output, cgtma ends at once,
#     of SIGPIPE and without a message, as Unix filters do;
#   - the same with --cdm and --prometheus beside it: one message, the CDM files get every
#     interval, the page is served throughout, and the run exits 1 at its end;
#   - standard output on a full disk (a small tmpfs filled and freed twice while it runs):
#     one message when writing starts failing, one when it resumes (with the intervals lost
#     meanwhile), each episode; every line whole (each one valid JSON: a failed write is cut
#     back to the last whole line); the count of lost intervals, their sum, in the one line
#     that ends the run, exit 1;
#   - -o FILE: the same view in the file, nothing on standard output, the summary last after
#     SIGINT; on a full disk the same messages, naming the file, and exit 1;
#   - a command run under cgtma does not inherit cgtma's ignored SIGPIPE.
. "$(dirname "$0")/lib.sh"

EV=syscalls:sys_enter_getppid

# --- closed, alone -----------------------------------------------------------------------
start=$(date +%s.%N)
"$CGTMA" -e "$EV" -I 100 --json 2>"$TMP/err" | head -n 1 >"$TMP/first"
rc=${PIPESTATUS[0]}
took=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
[ $rc -eq 141 ] || fail "cgtma --json | head -n 1: exit $rc, want 141 (SIGPIPE): $(cat "$TMP/err")"
stderr_said "$TMP/err" && fail "cgtma --json | head -n 1 said something: $(cat "$TMP/err")"
jq -e .interval "$TMP/first" >/dev/null || fail "the first line is not an interval: $(cat "$TMP/first")"
awk -v t="$took" 'BEGIN { exit !(t < 5) }' || fail "cgtma took $took s to end after head did"
echo "closed, alone: exit 141 after $took s, nothing said"

# --- closed, beside --cdm and --prometheus ------------------------------------------------
commands_or_skip curl ss
port=$(free_port)
"$CGTMA" -e "$EV" -I 100 -d 3 --json --cdm "$TMP/cdm" --prometheus "$port" \
	2>"$TMP/err" | head -n 1 >/dev/null &
pipeline=$!
# Until the page has an interval's series: the load takes over a second under an emulator.
metrics_wait 3 $port "$TMP/page" '^cgtma_' ||
	fail "the Prometheus page serves no cgtma series: $(cat "$TMP/err")"
# Then some intervals later, when cgtma has found standard output closed (head left after
# the first line), the page is still served.
sleep 0.5
metrics_scrape $port "$TMP/page" && grep -q '^cgtma_' "$TMP/page" ||
	fail "the Prometheus page is not served after standard output closed: $(cat "$TMP/err")"
wait $pipeline
"$CGTMA" -e "$EV" -I 100 -d 1.5 --json --cdm "$TMP/cdm" 2>"$TMP/err" | head -n 1 >/dev/null
rc=${PIPESTATUS[0]}
[ $rc -eq 1 ] || fail "closed beside --cdm: exit $rc, want 1: $(cat "$TMP/err")"
[ "$(grep -c "standard output is closed" "$TMP/err")" = 1 ] &&
	tail -n1 "$TMP/err" | grep -q "some output could not be written" ||
	fail "closed beside --cdm: stderr: $(cat "$TMP/err")"
# Every interval in the CSV: 15 of 100 ms in 1.5 s, less one for timing. Under emulation
# (a guest of 240 possible CPUs) an interval's work outlasts 100 ms and the intervals
# stretch (11 in 1.5 s): there, the CSV's first and last interval ends span the run (1.4 s
# when the first ends on time; 1.3 s is asked).
n=$(cut -d, -f3 "$TMP/cdm/metric-data-cgtma.csv" | sort -u | wc -l)
span=$(cut -d, -f3 "$TMP/cdm/metric-data-cgtma.csv" | sort -n | sed -n '1p;$p' | paste -sd' ' |
	awk '{ print $2 - $1 }')
if [ -n "${CGTMA_EMULATION:-}" ]; then
	[ "$span" -ge 1300 ] ||
		fail "closed beside --cdm: the CSV's $n interval ends span $span ms, want the run's 1.4 s (1.3 at least)"
else
	[ "$n" -ge 14 ] || fail "closed beside --cdm: the CSV holds $n interval ends, want >= 14"
fi
echo "closed beside --cdm: one message, $n intervals in the CSV, exit 1"

# --- full --------------------------------------------------------------------------------
tmpfs_or_skip "$TMP/small" size=64k
cgtma_start "$TMP/small/out" 0 -e "$EV" -I 20 --json
wait_lines "$TMP/small/out" 1 30
# Fill what is left; cgtma's writes fail until the filler goes. Each step waits for cgtma to
# say so, not for a fixed time: under an emulator beside another guest (6.1-rt in the
# kernel matrix) half a second once passed without an interval's write.
# Twice: a disk freed can fill up again, and that is said too.
for episode in 1 2; do
	dd if=/dev/zero of="$TMP/small/fill" bs=4k count=64 2>/dev/null
	wait_for 60 eval '[ "$(grep -c "cannot write standard output" "$TMP/err")" -ge $episode ]' ||
		fail "full disk ($episode): no write failed in 60 s: $(cat "$TMP/err")"
	rm "$TMP/small/fill"
	wait_for 60 eval '[ "$(grep -c "standard output is written again" "$TMP/err")" -ge $episode ]' ||
		fail "full disk ($episode): writing did not resume in 60 s: $(cat "$TMP/err")"
done
cgtma_signal INT "full disk" 1
[ "$(grep -c "cannot write standard output: No space left on device" "$TMP/err")" = 1 ] &&
	[ "$(grep -c "cannot write standard output again: No space left on device" "$TMP/err")" = 1 ] ||
	fail "full disk: want one failure message per episode: $(cat "$TMP/err")"
[ "$(grep -c "standard output is written again" "$TMP/err")" = 2 ] ||
	fail "full disk: want one message on resuming per episode: $(cat "$TMP/err")"
# The end is one line, the run's error with the count: the episodes' counts add up to it.
lost=$(tail -n1 "$TMP/err" | sed -n 's/^cgtma: some output could not be written: standard output: \([0-9]*\) interval(s) could not be written; it holds the rest whole$/\1/p')
[ -n "$lost" ] && [ "$lost" -ge 2 ] ||
	fail "full disk: the last line is not the count of lost intervals: $(cat "$TMP/err")"
[ "$(grep -c "could not be written" "$TMP/err")" = 1 ] ||
	fail "full disk: the end takes more than one line: $(cat "$TMP/err")"
said=$(sed -n 's/.*standard output is written again (\([0-9]*\) interval(s) could not be).*/\1/p' \
	"$TMP/err" | awk '{ n += $1 } END { print n }')
[ "$said" = "$lost" ] || fail "full disk: the episodes lost $said intervals, the end says $lost"
jq -e -R 'fromjson | type == "object"' "$TMP/small/out" >/dev/null ||
	fail "full disk: a line is not whole JSON: $(grep -v '^{.*}$' "$TMP/small/out" | head -c 200)"
lines=$(wc -l <"$TMP/small/out")
# Under --json the run's verdict is a JSON line too, after the summary.
[ "$(tail -n2 "$TMP/small/out" | head -n1 | jq .summary)" = true ] &&
	tail -n1 "$TMP/small/out" | jq -e '.error | test("some output could not be written")' >/dev/null ||
	fail "full disk: the summary and the error are not the last lines: $(tail -n2 "$TMP/small/out")"
echo "full disk: $lost interval(s) lost in two episodes, $lines whole lines, one message each way, exit 1"

# --- -o FILE -----------------------------------------------------------------------------
# What would go to standard output goes to the file (made, or emptied first), nothing to
# standard output; stopped by SIGINT, the file ends with the summary, every line whole.
echo stale >"$TMP/o.json"
cgtma_start "$TMP/stdout" 0 -e "$EV" -I 100 --json -o "$TMP/o.json"
wait_for 10 eval '[ "$(grep -c "^{" "$TMP/o.json")" -ge 2 ]' ||
	fail "-o: no interval in the file: $(cat "$TMP/err")"
cgtma_signal INT "-o FILE, SIGINT"
[ -s "$TMP/stdout" ] && fail "-o: standard output got: $(head -c 200 "$TMP/stdout")"
grep -q stale "$TMP/o.json" && fail "-o: the file was not emptied first"
jq -e -R 'fromjson | type == "object"' "$TMP/o.json" >/dev/null || fail "-o: a line is not whole JSON"
[ "$(tail -n1 "$TMP/o.json" | jq .summary)" = true ] || fail "-o: the last line is not the summary"
# A file on a full disk: said with its name, the intervals lost counted, exit 1.
dd if=/dev/zero of="$TMP/small/fill" bs=4k count=64 2>/dev/null
"$CGTMA" -e "$EV" -I 100 -d 0.5 -x, -o "$TMP/small/o.csv" >"$TMP/stdout" 2>"$TMP/err"
rc=$?
rm -f "$TMP/small/fill"
[ $rc -eq 1 ] || fail "-o on a full disk: exit $rc, want 1: $(cat "$TMP/err")"
grep -q "cannot write '$TMP/small/o.csv': No space left on device" "$TMP/err" &&
	tail -n1 "$TMP/err" | grep -q "some output could not be written: '$TMP/small/o.csv': [0-9]* interval(s)" ||
	fail "-o on a full disk: stderr: $(cat "$TMP/err")"
"$CGTMA" -e "$EV" -d 0.1 -o "$TMP/no/such/dir/out" 2>"$TMP/err"
rc=$?
[ $rc -eq 1 ] && grep -qx "cgtma: cannot open output file '$TMP/no/such/dir/out': No such file or directory" "$TMP/err" ||
	fail "-o in a missing directory: exit $rc: $(cat "$TMP/err")"
echo "-o FILE: the file has the run, stdout nothing; a full disk is said, exit 1"

# --- the command gets the default SIGPIPE -------------------------------------------------
"$CGTMA" -e "$EV" -I 100 -- sh -c 'grep SigIgn /proc/self/status' >"$TMP/out" 2>"$TMP/err" ||
	fail "cgtma -- sh failed: $(cat "$TMP/err")"
ign=$(awk '/^SigIgn:/ { print $2 }' "$TMP/out")
(( (0x$ign >> 12) & 1 )) && fail "the command inherited an ignored SIGPIPE (SigIgn $ign)"
echo "the command's SIGPIPE is the default (SigIgn $ign)"
echo ok
