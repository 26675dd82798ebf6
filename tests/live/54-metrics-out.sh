#!/bin/bash
# The flat metrics in the machine outputs, and --top, on the software model (every machine
# has it, PMU or not). Asserts that
#   - Prometheus: while three tracked cgroups spin, the page has cgtma_metric for each of
#     them, every metric of the model (CPU_Utilization with unit "CPUs", the rates with
#     "/s"), and each cgroup's whole value is the sum of its per-CPU ones (-A) to 1e-6;
#   - --top 1 with three cgroups: every interval shows the system, one cgroup and
#     "+ 2 others", never two cgroups; in the summary the cgroup shown is the one with the
#     most cpu-clock in `report --json` of the same run's record (which keeps every row),
#     and the others' CPU_Utilization is the other two's summed, to the printed digits;
#     `report --top 1` prints what the live run printed;
#   - --top 0, --top with --json, and --top without tracked cgroups are usage errors (2).
. "$(dirname "$0")/lib.sh"

commands_or_skip curl ss

cg_make a
cg_make b
cg_make c
A=$(cg_path a)
B=$(cg_path b)
C=$(cg_path c)

# --- Prometheus: cgtma_metric per tracked cgroup ----------------------------------------
PORT=$(free_port)
# Once it counts (its first interval printed), the spinners start.
cgtma_start "$TMP/prom.out" 1 -M sw -A --prometheus "127.0.0.1:$PORT" -G "$A" -G "$B" \
	-G "$C" -I 500
for x in a b c; do cg_start $x "$WORKLOAD" spin 8000; done
# One scrape where all three ran in the interval (each has gauges only then).
all_there() {
	metrics_scrape $PORT "$TMP/page.txt" || return 1
	for cg in "$A" "$B" "$C"; do
		grep -qF "cgtma_metric{scope=\"cgroup\",cgroup=\"$cg\",metric=\"CPU_Utilization\"" \
			"$TMP/page.txt" || return 1
	done
}
wait_for 15 all_there || fail "the page never had cgtma_metric for all three cgroups: \
$(grep '^cgtma_metric{scope="cgroup"' "$TMP/page.txt" | head -5)"
grep -qx '# TYPE cgtma_metric gauge' "$TMP/page.txt" || fail "no TYPE line for cgtma_metric"
grep -q '^# HELP cgtma_metric ' "$TMP/page.txt" || fail "no HELP line for cgtma_metric"
cpus=$(grep -c '^cgtma_metric{scope="cpu",cpu="[0-9]*",metric="CPU_Utilization"' \
	"$TMP/page.txt")
[ "$cpus" -ge 1 ] || fail "no per-CPU CPU_Utilization on the page"
for cg in "$A" "$B" "$C"; do
	for m in CPU_Utilization:CPUs Context_Switches:/s CPU_Migrations:/s Page_Faults:/s; do
		name=${m%%:*} unit=${m#*:}
		lab="metric=\"$name\",unit=\"$unit\""
		k="cgtma_metric{scope=\"cgroup\",cgroup=\"$cg\",$lab}"
		whole=$(metric_value "$TMP/page.txt" "$k")
		[ -n "$whole" ] || fail "no $k on the page"
		parts=$(grep -F "cgtma_metric{scope=\"cgroup\",cgroup=\"$cg\",cpu=\"" \
			"$TMP/page.txt" | grep -F ",$lab} " |
			awk '{ s += $2 } END { printf "%.10g\n", s }')
		awk -v w="$whole" -v p="$parts" 'BEGIN { d = w - p; if (d < 0) d = -d;
			exit !(d <= 1e-6 * (w > 1 ? w : 1)) }' ||
			fail "$cg: $name is $whole, its per-CPU series add up to $parts"
	done
	util=$(metric_value "$TMP/page.txt" "cgtma_metric{scope=\"cgroup\",cgroup=\"$cg\",\
metric=\"CPU_Utilization\",unit=\"CPUs\"}")
	awk -v u="$util" 'BEGIN { exit !(u > 0 && u <= 1.05) }' ||
		fail "$cg (one spinning thread) used $util CPUs"
done
cgtma_signal INT "prometheus"
cg_wait

# --- --top 1 with three cgroups -----------------------------------------------------------
# a spins longest: the busiest in the summary on any machine; b and c spin less.
"$CGTMA" -M sw -G "$A" -G "$B" -G "$C" -I 500 --top 1 --record "$TMP/top.cgtma" -- \
	sh -c "'$WORKLOAD' cgexec '$CG_ROOT/$CG_BASE/a' '$WORKLOAD' spin 1500 &
	       '$WORKLOAD' cgexec '$CG_ROOT/$CG_BASE/b' '$WORKLOAD' spin 500 &
	       '$WORKLOAD' cgexec '$CG_ROOT/$CG_BASE/c' '$WORKLOAD' spin 300 & wait" \
	>"$TMP/top.live" 2>"$TMP/top.err" || fail "--top 1 run failed: $(cat "$TMP/top.err")"
# The checks below are of the rows: the shown cgroup's noise lines go, and the report is
# compared with the whole output, noise included (top.whole).
cp "$TMP/top.live" "$TMP/top.whole"
grep -v '^  [^ ]*: noise: ' "$TMP/top.live" >"$TMP/top.rows" && mv "$TMP/top.rows" "$TMP/top.live"
# Each block: its cgroup rows (a path of this test's) and its "+ K others" rows.
awk -v base="/$CG_BASE/" '
	/^# / { if (n > 1) bad = bad " " NR ":" n; n = 0; next }
	index($1, base) == 1 { n++ }
	END { if (n > 1) bad = bad " end:" n; if (bad) { print bad; exit 1 } }' "$TMP/top.live" ||
	fail "--top 1 showed more than one cgroup in a block: $(cat "$TMP/top.live")"
grep -q '^+ 2 others ' "$TMP/top.live" ||
	fail "--top 1 never showed '+ 2 others': $(cat "$TMP/top.live")"
sed -n '/^# summary/,$p' "$TMP/top.live" >"$TMP/top.summary"
"$CGTMA" report "$TMP/top.cgtma" --json >"$TMP/top.json" 2>"$TMP/rep.err" ||
	fail "report --json failed: $(cat "$TMP/rep.err")"
busiest=$(tail -n1 "$TMP/top.json" | jq -r '[.rows[] | select(.scope == "cgroup")] |
	max_by(.counts["cpu-clock"]) | .cgroup')
[ "$busiest" = "$A" ] || fail "the busiest cgroup of the summary is $busiest, not $A"
shown=$(awk -v base="/$CG_BASE/" 'index($1, base) == 1 { print $1 }' "$TMP/top.summary")
[ "$shown" = "$busiest" ] || fail "the summary shows '$shown', the busiest is $busiest"
rest=$(tail -n1 "$TMP/top.json" | jq --arg a "$A" '[.rows[] |
	select(.scope == "cgroup" and .cgroup != $a) | .metrics.CPU_Utilization] | add')
printed=$(awk '$1 == "+" && $3 == "others" { print $4 }' "$TMP/top.summary")
awk -v r="$rest" -v p="$printed" 'BEGIN { d = r - p; if (d < 0) d = -d; exit !(d <= 0.0015) }' ||
	fail "'+ 2 others' used $printed CPUs; b and c $rest: $(cat "$TMP/top.summary")"
# The record replayed under --top: what the live terminal printed.
"$CGTMA" report "$TMP/top.cgtma" --top 1 >"$TMP/top.report" 2>"$TMP/rep.err" ||
	fail "report --top 1 failed: $(cat "$TMP/rep.err")"
diff "$TMP/top.whole" "$TMP/top.report" >"$TMP/top.diff" ||
	fail "report --top 1 differs from the live run: $(head -20 "$TMP/top.diff")"
echo "--top 1: $A shown, the others $printed CPUs (b and c: $rest)"

# --- usage errors -----------------------------------------------------------------------
usage() {
	local rc=0
	"$CGTMA" "$@" >"$TMP/u.out" 2>"$TMP/u.err" || rc=$?
	[ $rc -eq 2 ] || fail "cgtma $*: exit $rc, want 2: $(cat "$TMP/u.err")"
}
usage -G "$A" --top 0 -d 1
grep -qx "cgtma: --top 0: the minimum is 1" "$TMP/u.err" || fail "--top 0 said: $(cat "$TMP/u.err")"
usage -G "$A" --top x -d 1
grep -qF "cgtma: --top 'x': expected an integer from 1 to" "$TMP/u.err" ||
	fail "--top x said: $(cat "$TMP/u.err")"
usage -G "$A" --top 2 --json -d 1
grep -qF -- "--top N shapes the terminal's view, which --json and -x replace" "$TMP/u.err" ||
	fail "--top with --json said: $(cat "$TMP/u.err")"
usage --top 2 -d 1
grep -qF -- "--top N picks among tracked cgroups" "$TMP/u.err" ||
	fail "--top without cgroups said: $(cat "$TMP/u.err")"
exit 0
