#!/bin/bash
# Event groups on a hardware PMU: what the planner's groups become once the kernel places
# them on real counters. Runs wherever a hardware PMU exists (the kernel matrix's arm64
# rows: QEMU's emulated PMUv3, 6 programmable counters and a cycle counter), and skips
# elsewhere saying why.
#
# Cgroups A and B each run `workload-static loop N` (2 N user instructions and a short
# start), A with N1 turns, B with N2, both on CPU 0, released together while cgtma counts:
# two CPU-bound cgroups taking turns on one CPU, switching on the scheduler tick.
#  - refused: a group of seven instruction events (a model that claims seven programmable
#    counters where there are six; the cycle counter takes only cycles) makes cgtma exit 1
#    naming the group and its size, and print no row of zeros.
#  - one group per node: a model of two nodes, P = ia / ib and Q = ic / id, where ia, ib,
#    ic and id all count instructions:u, each node with four more events that fill the six
#    counters: two groups of six, which never fit the counters together, so the kernel
#    alternates them. `list-events --json` puts P in group 0 and Q in group 1 and splits
#    none; live, no row names a split node, ia and ic ran part of the time (multiplex
#    below 1), and each cgroup's P and Q over the run are 1 within 1e-3 (a node's two
#    events counted over the same windows).
#  - rotation in phase with switches: the kernel rotates the two groups on its multiplexing
#    timer (perf_event_mux_interval_ms, 4 ms at HZ=250) and the scheduler switches A and B
#    on the tick (4 ms too); both timers run on multiples of their period since boot, so
#    the rotation can fall on every switch, and each cgroup see one group only. Each
#    cgroup's scaled ia and ic must be within 3 % of its exact instructions:u (cgtma -e
#    instructions:u, nothing multiplexed, the same loops together; exact under QEMU's
#    -icount shift=0 with ASLR off, as tests/live/35-hw-counters.sh checks). Where they are
#    not, the test says so and applies the remedy docs/groups.md gives (the PMU's
#    perf_event_mux_interval_ms at 5, no multiple of the tick), with which they must be
#    (lib.sh's loops_multiplexed, which 35-hw-counters shares).
. "$(dirname "$0")/lib.sh"

N1=100000000 N2=150000000
loops_setup

hw_pmu_or_skip
for f in /sys/bus/event_source/devices/*/perf_event_mux_interval_ms; do
	[ -r "$f" ] && echo "$(basename "$(dirname "$f")"): perf_event_mux_interval_ms $(cat "$f")"
done
icount_exact || echo "a real PMU (or QEMU without -icount): the exact count is cgtma's own, unmultiplexed"

# model FILE NAME COUNTERS EVENTS NODES: a model file; EVENTS "name=encoding ...", NODES
# "name=expr ..." (level-1 nodes; an expression without spaces).
model() {
	local sep='' e n
	{
		echo "{\"name\": \"$2\", \"description\": \"test\", \"vendor\": \"generic\","
		echo " \"source\": \"tests/live/38-hw-groups.sh\", \"match\": [],"
		echo " \"pmu\": {\"generic_counters\": $3, \"generic_counters_smt\": $3, \"fixed\": []},"
		echo ' "constants": {}, "aux": [], "metrics": [], "events": ['
		for e in $4; do
			printf '%s{"name": "%s", "encoding": "%s"}\n' "$sep" "${e%%=*}" "${e#*=}"
			sep=,
		done
		echo '], "nodes": ['
		sep=''
		for n in $5; do
			printf '%s{"name": "%s", "parent": null, "level": 1, "domain": "Slots", "area": "FE",
			  "expr": "%s", "thresh": "True", "maxval": null, "siblings": [], "desc": "%s"}\n' \
				"$sep" "${n%%=*}" "${n#*=}" "${n%%=*}"
			sep=,
		done
		echo ']}'
	} >"$1"
}

# --- a group larger than the counters ---
model "$TMP/big.json" big 7 "i1=instructions:u i2=instructions:u i3=instructions:u
	i4=instructions:u i5=instructions:u i6=instructions:u i7=instructions:u" \
	"S=d_ratio(i1+i2+i3,i4+i5+i6+i7)"
group_refused "$TMP/big.json" 7 A

# --- two groups of six, one node each ---
model "$TMP/model.json" hwgroups 6 "ia=instructions:u ib=instructions:u ic=instructions:u
	id=instructions:u z1=r1b z2=r23 z3=r24 z4=r03 z5=r04 z6=r10 z7=r12 z8=r13" \
	"P=d_ratio(ia,ib)+0*(z1+z2+z3+z4) Q=d_ratio(ic,id)+0*(z5+z6+z7+z8)"
"$CGTMA" list-events --model-file "$TMP/model.json" --json >"$TMP/plan.json" ||
	fail "list-events of the test's model: $(cat "$TMP/plan.json")"
jq -e 'length == 2 and ([.[].events | length] == [6, 6]) and .[0].nodes == ["P"] and
	.[1].nodes == ["Q"] and all(.[]; .split_nodes == [])' "$TMP/plan.json" >/dev/null ||
	fail "the test's model is not two groups of six with one node each: $(cat "$TMP/plan.json")"

# nodes NAME: whether, in run NAME, each cgroup's P and Q over the whole run (the summary)
# are 1 within 1e-3: a node's two events counted over the same windows. Not exactly 1: each
# event's enabled and running times are read a few ns apart, which shows most in the
# slices where the group ran briefly. Says the largest deviation of any interval.
nodes() {
	local cg dev
	why=''
	for cg in "$A" "$B"; do
		dev=$(jq -s --arg cg "$cg" '[.[] | select(.summary != true) | .rows[] |
			select(.scope == "cgroup" and .cgroup == $cg) | .nodes[] | select(. != null and . != 0) |
			. - 1 | fabs] | max' "$TMP/$1.json")
		echo "$1: $cg: P and Q at most $dev from 1 in an interval (0 where a group ran only in the kernel)"
		jq -e -s --arg cg "$cg" 'any(.[] | select(.summary == true) | .rows[];
			.scope == "cgroup" and .cgroup == $cg and
			all(.nodes[]; . != null and (. - 1 | fabs) < 1e-3))' "$TMP/$1.json" >/dev/null ||
			why+="$cg: the summary's P and Q are not 1 within 1e-3: $(jq -c -s --arg cg "$cg" \
				'[.[] | select(.summary == true) | .rows[] | select(.cgroup == $cg) | .nodes]' \
				"$TMP/$1.json"); "
	done
	[ -z "$why" ]
}

loops_measure exact together -e instructions:u
for cg in "$A" "$B"; do
	exact=$(cgroup_sum "$TMP/exact.json" "$cg" instructions:u)
	[ "$exact" -gt $((2 * N1)) ] || fail "$cg: exact instructions:u $exact, not above 2 x $N1"
done
loops_multiplexed groups exact ia,ic --model-file "$TMP/model.json"
jq -e -s 'all(.[]; has("split_nodes") | not)' "$TMP/$mux_run.json" >/dev/null ||
	fail "a row says split nodes: $(grep -m1 split_nodes "$TMP/$mux_run.json")"
nodes $mux_run || fail "$why"
echo "event groups on hardware counters: refused when too large, one per node, scaled within 3 %"
