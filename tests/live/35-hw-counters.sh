#!/bin/bash
# Hardware counters, the path every real run takes: counters per CPU, charged to cgroups at
# their switches, scaled by each slice's enabled and running time when multiplexed. Runs
# wherever a hardware PMU exists (the kernel matrix's arm64 rows: QEMU's emulated PMUv3, 6
# counters and a cycle counter), and skips elsewhere saying why.
#
# Cgroups A and B each run `workload-static loop N` (N turns of a two-instruction loop, in
# user space: 2 N instructions plus a static binary's short fixed start), A with N1 turns, B
# with N2. Each is started in its cgroup before cgtma, waiting on a named pipe (`workload
# gate`), and released during the measurement: no task moves between cgroups while cgtma
# counts (a move's own slice goes to the new cgroup where the kernel hides cgroup_mutex's
# address, as Debian's arm64 6.1 does: no CONFIG_KALLSYMS_ALL).
#  - exact: with two hardware events (fewer than any PMU's counters), each cgroup's
#    instructions:u is the same with the two loops run together as with each run alone, and
#    B's less A's is exactly 2 (N2 - N1). With perf in the machine, each cgroup's count is
#    perf stat's count of the loop run alone plus one constant, the same for both loops
#    (what the gate runs once released, up to its exec, less what the loop's start does
#    with perf's larger environment: -811 on arm64-6.1).
#    Exact where QEMU runs the guest with -icount shift=0 and ASLR is off (the matrix's
#    arm64 rows: CGTMA_EMULATION=tcg-icount, kernel.randomize_va_space 0), on one CPU: the
#    emulated instruction counter is QEMU's instruction count of all vCPUs together (its
#    virtual clock), so every CPU but 0 goes offline for the test; elsewhere (a real PMU)
#    within 0.1 %.
#  - cycles: under -icount the cycle counter ticks at 1 GHz of virtual time, so each
#    cgroup's cycles equal its cpu-clock (ns) within 1 % (not checked on a real PMU, where
#    cycles follow the clock frequency).
#  - multiplexed: twelve hardware events (cycles, instructions, stalled-cycles-frontend and
#    -backend, each plain, :u and :k), more than the counters: each cgroup's scaled
#    instructions:u within 3 % of its exact count, and its multiplex fraction in the JSON
#    below 1.
#  - a group larger than the counters (a model whose one metric reads those twelve events,
#    and which claims 32 counters) is refused: cgtma exits 1 naming the group and its size,
#    and prints no row of zeros.
. "$(dirname "$0")/lib.sh"

N1=100000000 N2=150000000
WS=$(readlink -f "${CGTMA_BUILD:-build}/tests/workload-static")
[ -x "$WS" ] || fail "no $WS: build first (make $WS)"
LOOP=("$WS" loop)
cg_make A
cg_make B
A=$(cg_path A) B=$(cg_path B)

hw_pmu_or_skip
exact=
if icount_exact; then
	exact=1
else
	echo "a real PMU (or QEMU without -icount): instruction counts within 0.1 %, no cycles check"
fi

# measure NAME EVENTS together|alone: cgtma counting EVENTS in A and B while A runs N1 turns
# and B N2, together or one after the other; its JSON in $TMP/NAME.json.
measure() {
	local out=$TMP/$1.json rc
	rm -f "$TMP/gate-a" "$TMP/gate-b" && mkfifo "$TMP/gate-a" "$TMP/gate-b" || fail "mkfifo"
	cg_start A "$WS" gate "$TMP/gate-a" "${LOOP[@]}" $N1
	cg_start B "$WS" gate "$TMP/gate-b" "${LOOP[@]}" $N2
	"$CGTMA" -e "$2" -I 200 --json -G "$A" -G "$B" >"$out" 2>"$TMP/err" &
	cgtma_pid=$!
	on_exit "kill -9 $cgtma_pid"
	wait_lines "$out" 1 60
	# Opening the pipe for writing waits for its gate, and lets it go.
	if [ "$3" = together ]; then
		: >"$TMP/gate-a" && : >"$TMP/gate-b"
	else
		: >"$TMP/gate-a"
		wait_for 120 test ! -s "$CG_ROOT/$CG_BASE/A/cgroup.procs" || fail "A's loop did not end"
		: >"$TMP/gate-b"
	fi
	cg_wait
	# The interval that holds the loops' ends is complete, then stop.
	wait_lines "$out" $(($(wc -l <"$out") + 1)) 60
	kill -INT $cgtma_pid
	wait $cgtma_pid
	rc=$?
	[ $rc -eq 0 ] || fail "cgtma -e $2 exited $rc: $(cat "$TMP/err")"
}
# sum NAME CGROUP EVENT: the cgroup's count over the intervals of run NAME.
sum() { cgroup_sum "$TMP/$1.json" "$2" "$3"; }
# same X Y: exactly equal, or within 0.1 % on a real PMU.
same() {
	if [ -n "$exact" ]; then
		[ "$1" = "$2" ]
	else
		awk -v x="$1" -v y="$2" 'BEGIN { d = x - y; if (d < 0) d = -d; exit !(y > 0 && d <= y / 1000) }'
	fi
}
# within X Y PCT: |X - Y| <= PCT % of Y.
within() {
	awk -v x="$1" -v y="$2" -v p="$3" 'BEGIN { d = x - y; if (d < 0) d = -d; exit !(y > 0 && d <= y * p / 100) }'
}

# --- exact: two hardware events, nothing multiplexed ---
EV=instructions:u,cycles,cpu-clock
measure alone "$EV" alone
measure together "$EV" together
a=$(sum together "$A" instructions:u) b=$(sum together "$B" instructions:u)
a1=$(sum alone "$A" instructions:u) b1=$(sum alone "$B" instructions:u)
echo "instructions:u: A $a (alone $a1), B $b (alone $b1); B - A = $((b - a)), want $((2 * (N2 - N1)))"
same "$a" "$a1" || fail "A's instructions:u: $a with B running, $a1 alone"
same "$b" "$b1" || fail "B's instructions:u: $b with A running, $b1 alone"
same $((b - a)) $((2 * (N2 - N1))) || fail "B's instructions:u less A's is $((b - a)), not 2 x $((N2 - N1))"
# Each loop is 2 N instructions and a start of well under a million.
for x in "A $a $N1" "B $b $N2"; do
	set -- $x
	[ "$2" -ge $((2 * $3)) ] && [ "$2" -lt $((2 * $3 + 1000000)) ] ||
		fail "$1's instructions:u $2: not 2 x $3 plus a process's start"
done

if command -v perf >/dev/null; then
	# perf counts the loop from its exec; cgtma also counts the gate's few instructions
	# before it, and the loop's start differs with perf's environment: a constant.
	p1=$(perf stat -x, -e instructions:u -- "${LOOP[@]}" $N1 2>&1 >/dev/null | awk -F, '/instructions/ { print $1 }')
	p2=$(perf stat -x, -e instructions:u -- "${LOOP[@]}" $N2 2>&1 >/dev/null | awk -F, '/instructions/ { print $1 }')
	echo "perf stat -e instructions:u: loop $N1: $p1, loop $N2: $p2; cgtma less perf: A $((a - p1)), B $((b - p2))"
	case $p1$p2 in *[!0-9]* | '') fail "perf stat gave no counts: '$p1' '$p2'" ;; esac
	same $((p2 - p1)) $((2 * (N2 - N1))) || fail "perf's counts differ by $((p2 - p1)), not 2 x $((N2 - N1))"
	if [ -n "$exact" ]; then
		[ $((a - p1)) = $((b - p2)) ] && [ $((a - p1)) -gt -100000 ] && [ $((a - p1)) -lt 100000 ] ||
			fail "cgtma less perf is $((a - p1)) for A and $((b - p2)) for B: want one small constant"
	fi
else
	echo "note: no perf here: the comparison with perf stat is left out"
fi

if [ -n "$exact" ]; then
	for cg in "$A" "$B"; do
		c=$(sum together "$cg" cycles) t=$(sum together "$cg" cpu-clock)
		echo "$cg: cycles $c, cpu-clock $t ns"
		within "$c" "$t" 1 || fail "$cg: cycles $c, not its cpu-clock $t within 1 %"
	done
fi

# --- a Neoverse model's tree: QEMU's PMU opens the STALL_* events and reads 0 from them ---
# (arm64 only.) The model is the one the MIDR gives (-cpu neoverse-n1: neoverse-n1), else
# neoverse-n2 named. On the emulated PMU every node must be not counted (null), with the
# warning; on real Neoverse hardware the slot events count and the nodes have values.
if [ "$(uname -m)" = aarch64 ]; then
	model=$("$CGTMA" list-events 2>/dev/null | awk 'NR == 1 { sub(",", "", $2); print $2 }')
	mopt=()
	case $model in neoverse-*) ;; *) model=neoverse-n2 mopt=(-M neoverse-n2) ;; esac
	"$CGTMA" "${mopt[@]}" -v -I 200 -d 0.6 --json >"$TMP/tma.json" 2>"$TMP/tma.err" ||
		fail "cgtma ${mopt[*]} (model $model): $(cat "$TMP/tma.err")"
	nodes=$(jq -s -c '[.[] | .rows[] | select(.scope == "system") | .nodes | to_entries[] |
		.value] | unique' "$TMP/tma.json")
	echo "model $model on this PMU: system nodes $nodes; $(grep -c 'all read 0' "$TMP/tma.err") warning(s)"
	grep -q 'slots per cycle' "$TMP/tma.err" || [ "$model" = neoverse-n1 ] ||
		fail "-v does not say where the slots per cycle came from: $(cat "$TMP/tma.err")"
	if [ -n "${CGTMA_EMULATION:-}" ]; then
		[ "$nodes" = '[null]' ] ||
			fail "$model on the emulated PMU: system nodes $nodes, want all null (not counted)"
		grep -q 'STALL_.* all read 0: .* not a measurement' "$TMP/tma.err" ||
			fail "$model on the emulated PMU: no warning: $(cat "$TMP/tma.err")"
	elif grep -q 'all read 0' "$TMP/tma.err"; then
		fail "$model: the slot events read 0 outside an emulator: $(cat "$TMP/tma.err")"
	fi
fi

# --- multiplexed: twelve hardware events ---
EV12=instructions:u
for e in cycles instructions stalled-cycles-frontend stalled-cycles-backend; do
	for m in '' :u :k; do
		[ "$e$m" = instructions:u ] || EV12="$EV12,$e$m"
	done
done
if ! "$CGTMA" -e "$EV12" -I 100 -d 0.1 >/dev/null 2>"$TMP/probe12"; then
	grep -q 'does not support this event' "$TMP/probe12" ||
		fail "cgtma -e $EV12: $(cat "$TMP/probe12")"
	skip "the multiplexed and group cases need twelve hardware events this PMU has: $(head -n1 "$TMP/probe12")"
fi
measure mux "$EV12" together
for x in "$A $a" "$B $b"; do
	set -- $x
	s=$(sum mux "$1" instructions:u)
	mux=$(jq -s --arg cg "$1" '[.[] | select(.summary != true) | .rows[] |
		select(.scope == "cgroup" and .cgroup == $cg and .counts["instructions:u"] > 0) |
		.multiplex["instructions:u"]] | max' "$TMP/mux.json")
	echo "$1 multiplexed: instructions:u $s (exact $2), multiplex fraction at most $mux"
	within "$s" "$2" 3 || fail "$1: multiplexed instructions:u $s, not within 3 % of $2"
	awk -v m="$mux" 'BEGIN { exit !(m + 0 > 0 && m + 0 < 1) }' ||
		fail "$1: multiplex fraction $mux: want above 0 and below 1 with twelve events"
done

# --- a group larger than the counters ---
{
	echo '{"name": "toobig", "description": "one metric of twelve hardware events",'
	echo ' "vendor": "generic", "source": "tests/live/35-hw-counters.sh", "match": [],'
	echo ' "pmu": {"generic_counters": 32, "generic_counters_smt": 32, "fixed": []},'
	echo ' "constants": {}, "aux": [], "nodes": [], "events": ['
	i=0 sep='' expr=''
	for e in ${EV12//,/ }; do
		printf '%s{"name": "e%d", "encoding": "%s"}\n' "$sep" $i "$e"
		expr="$expr${expr:+ + }e$i" sep=, i=$((i + 1))
	done
	echo '], "metrics": [{"name": "Sum", "expr": "'"$expr"'", "unit": "", "desc": "all"}]}'
} >"$TMP/toobig.json"
group_refused "$TMP/toobig.json" 12 A
echo "hardware counters: exact, multiplexed and grouped as expected"
