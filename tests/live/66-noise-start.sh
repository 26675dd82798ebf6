#!/bin/bash
# Noise between cgroups counts from the run's start, not from the attach of its BPF programs
# (docs/noise.md). A and B each spin on the same CPU, so that each preempts the other at
# every time slice and one of them always waits: the time their antagonists took adds up
# to at most one CPU, 1 s a second of each interval. cgtma waits 0.5 s between its attach
# and the run's start (CGTMA_TEST_START_DELAY, as a loaded machine can take seconds there),
# then counts two intervals of 0.2 s: the pairs of that wait, kept in the epoch half the
# first interval closes again, would give it some 3.5 s a second.
. "$(dirname "$0")/lib.sh"

commands_or_skip taskset jq
cpus_or_skip 2 "cgtma on a CPU of its own, away from the two spinners"
CPU=1

cg_make A B
A=$(cg_path A) B=$(cg_path B)
for c in A B; do
	"$WORKLOAD" cgexec "$CG_ROOT/$CG_BASE/$c" taskset -c $CPU "$WORKLOAD" spin 600000 &
	pid=$!
	disown $pid
	on_exit "kill -9 $pid"
	wait_for 30 grep -qx "Cpus_allowed_list:[[:space:]]*$CPU" /proc/$pid/status ||
		fail "$c: its spinner was not pinned to CPU $CPU"
done

out=$TMP/start.json
CGTMA_TEST_START_DELAY=500 taskset -c 0 "$CGTMA" -e cpu-clock --json -I 200 -d 0.4 \
	-G "$A" -G "$B" >"$out" 2>"$TMP/err" || fail "cgtma: $(cat "$TMP/err")"
grep -q "CGTMA_TEST_START_DELAY: 500 ms" "$TMP/err" || fail "no start delay: $(cat "$TMP/err")"

# Per interval: the seconds a second that A's and B's antagonists took, summed.
took=$(jq -r 'select(.summary != true) | [.rows[] | select(.scope == "cgroup" and
	.cpu == null) | .noise.antagonists // [] | .[] | .took // 0] | add // 0' "$out")
echo "took, A and B, s/s per interval: $(echo $took)"
[ "$(wc -w <<<"$took")" -ge 2 ] || fail "fewer than 2 intervals: $(cat "$out")"
for t in $took; do
	awk -v t="$t" 'BEGIN { exit !(t <= 1.05) }' ||
		fail "A's and B's antagonists took $t s a second of one CPU: counted before the start"
	awk -v t="$t" 'BEGIN { exit !(t >= 0.5) }' ||
		fail "A's and B's antagonists took $t s a second, with one of them always waiting"
done
echo ok
