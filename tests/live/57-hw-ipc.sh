#!/bin/bash
# IPC per cgroup on a hardware PMU: each cgroup's IPC (a model's default metric, the JSON
# rows' "metrics") is its own instructions over its own cycles. Runs where an arm64 hardware
# PMU is (the kernel matrix's arm64 rows: QEMU's emulated PMUv3), and skips elsewhere saying
# why.
#
# Cgroup A runs `workload-static loop N1` (a user-space loop), B `getppid N2` (system calls:
# kernel work), both on CPU 0 (lib.sh's loops_*), measured with a Neoverse model (IPC =
# INST_RETIRED / CPU_CYCLES, perf's ipc) and then with `-e instructions,cycles`:
#  - its own counts: in every interval and in the summary, each cgroup's IPC is the
#    INST_RETIRED / CPU_CYCLES of its own row, exactly (the same doubles) where neither was
#    multiplexed; where they were (a PMU with fewer counters), within 1e-6 (the row prints
#    each scaled count rounded, and IPC reads the two of its group, one scaling); CPI is
#    CPU_CYCLES / INST_RETIRED the same way. With neoverse-n1, whose tree and default
#    metrics are one group (the cycle counter and 3 of 6 counters), no row is multiplexed
#    under QEMU: every one must be exact there.
#  - against -e: each cgroup's IPC over the run (the summary row's) is its
#    instructions / cycles in a run of `-e instructions,cycles` on the same workloads,
#    within 1 % under QEMU's -icount (there the cycle counter is the virtual clock, one
#    nanosecond a cycle, each instruction one nanosecond: IPC is 1 for every workload, so
#    the check is of attribution and arithmetic, not of a microarchitecture), within 5 %
#    on a real PMU (two runs of the same loops); for neoverse-n1 and neoverse-n2 (whose tree
#    fills the PMU: its IPC is a group of its own, counted half of the time, which a run
#    counts with --metrics only: without it IPC and CPI are left out so as not to multiplex
#    the tree).
#  - with -m (neoverse-n1, perf's 30 metrics beside the defaults: 8 groups, multiplexed):
#    each row has the model's 33 metrics, IPC and CPI still its own counts (within 1e-6);
#    under QEMU, whose PMU reads STALL_FRONTEND and STALL_BACKEND as 0, the stall rates are
#    null on every row and the warning says that metrics read them.
. "$(dirname "$0")/lib.sh"

N1=100000000 N2=100000
WL_B="getppid $N2"
loops_setup

hw_pmu_or_skip
[ "$(uname -m)" = aarch64 ] ||
	skip "the Neoverse models' IPC is checked on arm64 (this is $(uname -m))"
tol=5 exact=
if icount_exact; then
	tol=1 exact=1
else
	echo "a real PMU (or QEMU without -icount): IPC against -e within $tol %"
fi

loops_measure events together -e instructions,cycles

# own_counts NAME: prints "ROWS EXACT WRONG FIRST_WRONG": of the cgroup rows of A and B in run
# NAME (the summary's included) with instructions and cycles, how many were unmultiplexed,
# and how many have an IPC or CPI that is not from their own INST_RETIRED and CPU_CYCLES.
own_counts() {
	jq -r -s --arg a "$A" --arg b "$B" '
		def rel(x; y): if y == 0 then (x - y) else ((x - y) / y) end | fabs;
		[.[] | .rows[] | select(.scope == "cgroup" and (.cgroup == $a or .cgroup == $b)) |
		 select((.counts.CPU_CYCLES // 0) > 0 and (.counts.INST_RETIRED // 0) > 0) |
		 (.counts.INST_RETIRED / .counts.CPU_CYCLES) as $ipc |
		 (.counts.CPU_CYCLES / .counts.INST_RETIRED) as $cpi |
		 (.multiplex.INST_RETIRED == 1 and .multiplex.CPU_CYCLES == 1) as $whole |
		 {cg: .cgroup, ipc: .metrics.IPC, cpi: .metrics.CPI, want: $ipc, whole: $whole,
		  ok: (if $whole then .metrics.IPC == $ipc and .metrics.CPI == $cpi
		       else rel(.metrics.IPC; $ipc) <= 1e-6 and rel(.metrics.CPI; $cpi) <= 1e-6
		       end)}] as $r |
		"\($r | length) \([$r[] | select(.whole)] | length) \([$r[] | select(.ok | not)] |
		 length) \([$r[] | select(.ok | not)] | first)"' \
		"$TMP/$1.json"
}
# summary_ipc NAME CGROUP: the cgroup's IPC on run NAME's summary line.
summary_ipc() {
	jq -r --arg cg "$2" 'select(.summary == true) | .rows[] |
		select(.scope == "cgroup" and .cgroup == $cg and .cpu == null) | .metrics.IPC' \
		"$TMP/$1.json"
}

for model in neoverse-n1 neoverse-n2; do
	metrics=()
	[ $model = neoverse-n1 ] || metrics=(--metrics IPC)
	loops_measure "$model" together -M "$model" "${metrics[@]}"
	jq -e -s --arg m "$model" 'all(.[]; .model == $m)' "$TMP/$model.json" >/dev/null ||
		fail "-M $model: not model $model: $(head -c 300 "$TMP/$model.json")"
	if [ $model = neoverse-n1 ]; then
		read -r rows whole wrong first <<<"$(own_counts $model)"
		echo "$model: IPC and CPI from each row's own counts: $rows rows, $whole of them" \
			"unmultiplexed, $wrong wrong"
		[ "$rows" -gt 0 ] || fail "$model: no row of A or B with instructions and cycles"
		[ "$wrong" = 0 ] ||
			fail "$model: IPC or CPI not the row's own INST_RETIRED and CPU_CYCLES: $first"
		[ -z "$exact" ] || [ "$whole" = "$rows" ] ||
			fail "$model under QEMU: $((rows - whole)) of $rows rows multiplexed (one group)"
	fi
	for cg in "$A" "$B"; do
		i=$(cgroup_sum "$TMP/events.json" "$cg" instructions)
		c=$(cgroup_sum "$TMP/events.json" "$cg" cycles)
		ipc=$(summary_ipc $model "$cg")
		want=$(awk -v i="$i" -v c="$c" 'BEGIN { if (c > 0) printf "%.9f", i / c }')
		echo "$model: $cg: IPC $ipc; -e: instructions $i / cycles $c = $want"
		case $ipc in '' | null) fail "$model: $cg has no IPC on the summary line" ;; esac
		[ -n "$want" ] || fail "-e instructions,cycles: $cg has no cycles"
		within "$ipc" "$want" $tol || fail "$model: $cg's IPC $ipc, not $want within $tol %"
	done
done

loops_measure n1m together -M neoverse-n1 -m
read -r rows whole wrong first <<<"$(own_counts n1m)"
echo "neoverse-n1 -m: IPC and CPI from each row's own counts: $rows rows, $whole of them" \
	"unmultiplexed, $wrong wrong"
[ "$rows" -gt 0 ] && [ "$wrong" = 0 ] ||
	fail "neoverse-n1 -m: IPC or CPI not the row's own counts ($rows rows): $first"
jq -e -s '[.[] | .rows[] | .metrics // empty | length] | length > 0 and all(. == 33)' \
	"$TMP/n1m.json" >/dev/null ||
	fail "neoverse-n1 -m: not 33 metrics on every row: $(head -c 300 "$TMP/n1m.json")"
if [ -n "${CGTMA_EMULATION:-}" ]; then
	bad=$(jq -c -s '[.[] | .summary as $s | .rows[] | select(.metrics != null) |
		select(.metrics.frontend_stalled_cycles != null or
		       .metrics.backend_stalled_cycles != null) |
		{summary: $s, scope, cgroup, fe: .metrics.frontend_stalled_cycles,
		 be: .metrics.backend_stalled_cycles, ipc: .metrics.IPC,
		 counts: (.counts | {STALL_FRONTEND, STALL_BACKEND}),
		 multiplex: (.multiplex | {STALL_FRONTEND, STALL_BACKEND})}] | .[:3]' \
		"$TMP/n1m.json")
	[ "$bad" = '[]' ] || fail "neoverse-n1 -m on the emulated PMU: stall rates counted: $bad"
	grep -q 'STALL_FRONTEND, STALL_BACKEND all read 0: .* nodes and metrics that read them' \
		"$TMP/n1m.err" || fail "neoverse-n1 -m: no warning naming metrics: $(cat "$TMP/n1m.err")"
	echo "neoverse-n1 -m: the stall rates are null on every row, with the warning"
fi
echo "IPC per cgroup: each its own instructions over its own cycles"
