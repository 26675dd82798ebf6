#!/bin/bash
# The largest configuration cgtma accepts must load and count exactly on every kernel: the
# verifier's limits differ between 5.10 and 6.18, and this is where a level-3 model with deep
# cgroups would first fail on a user's machine. 128 events (tracepoints stand in for PMU
# events: the BPF side reads them the same way), cgroups tracked at every level down to 15
# (a chain of explicit paths, a glob matching at the deepest level, and --all-cgroups
# --depth 15 over all of them), and -v, which must print the verifier's work per program
# (verified_insns from 5.16, the load time before), once with each switch hook.
#
# Exact check: a workload at level 15 makes N getppid() calls; every tracked cgroup on its
# path, root included, counts exactly N of them, and a sibling chain counts none.
# live: both-hooks
. "$(dirname "$0")/lib.sh"

EV=syscalls:sys_enter_getppid
N=30000
MAX_EVENTS=128

tracepoint_or_skip syscalls/sys_enter_getppid

# 127 more tracepoints from the syscall entries, the one that is checked first.
syscall_events_or_skip $MAX_EVENTS $EV
events=$syscall_events

# CG_BASE is level 1: a chain of 14 below it reaches level 15, the deepest cgtma tracks.
chain="" sib=""
args=(-G "$(cg_path)")
for ((l = 2; l <= 15; l++)); do
	chain+="${chain:+/}L$l"
	args+=(-G "$(cg_path "$chain")")
done
sib=${chain%/*}/S15
cg_make "$chain"
cg_make "$sib"
deep=$(cg_path "$chain")
args+=(-G "$(cg_path "${chain%/*}")/*")

# run HOOK: one run with that switch hook; the checks below read $out.
run() {
	out=$TMP/out-$1
	# The verifier's work on the largest program takes 20 s and more in an emulated 6.1
	# guest: its first interval waits for that, not the usual 10 s.
	cgtma_start "$out" 0 -v --switch-hook "$1" -e "$events" -I 200 --json --all-cgroups \
		--depth 15 "${args[@]}"
	wait_lines "$out" 1 90
	cg_run "$chain" "$WORKLOAD" getppid $N 50 || fail "the workload failed"
	cgtma_more "$out"
	cgtma_signal INT "$1"
	hook=$(sed -n 's/^cgtma: switch hook: \([a-z-]*\).*/\1/p' "$TMP/err")
	verified=$(grep '^cgtma: BPF: loaded in' "$TMP/err") ||
		fail "-v did not say what the verifier did: $(cat "$TMP/err")"
	echo "$1 ($hook): $verified"
	echo "$verified" | grep -qE ' on_(cgroup_)?switch ([0-9]+|\(kernel before 5\.16\))' ||
		fail "no verifier figure for the switch hook: $verified"
}
# check HOOK: the counts in $out. The output is large (128 events, 15 levels): jq reads it
# once for the sums and once for the rest, each a few seconds under emulation.
check() {
	local p=$chain cgs=() sums i nev deep_rows
	while :; do
		cgs+=("$(cg_path "$p")")
		[ "$p" = "${p%/*}" ] && break
		p=${p%/*}
	done
	cgs+=("$(cg_path)" "$(cg_path "$sib")")
	read -r nev deep_rows <<<"$(jq -r -s --arg cg "$deep" '[.[] | select(.summary != true)] |
		[(.[0].rows[0].counts | length),
		 ([.[].rows[] | select(.scope == "cgroup" and .cgroup == $cg)] | length)] | @tsv' "$out")"
	[ "$nev" = $MAX_EVENTS ] || fail "$1: the rows do not have $MAX_EVENTS events"
	mapfile -t sums < <(cgroup_sums "$out" "$EV" "${cgs[@]}")
	# The path's cgroups, the root's, then the sibling's.
	for ((i = 0; i < ${#cgs[@]} - 1; i++)); do
		exact_or_marked "${sums[i]}" $N "$out" ||
			fail "$1: ${cgs[i]}: ${sums[i]} getppid calls counted, want exactly $N"
	done
	[ "${sums[i]}" = 0 ] || fail "$1: ${cgs[i]} (the sibling): ${sums[i]} getppid calls, want 0"
	[ "$deep_rows" -gt 0 ] || fail "$1: the level-15 cgroup has no rows"
}
for h in tracepoint auto; do
	run $h
	check $h
done
echo "$MAX_EVENTS events, 15 levels: exactly $N at each of the 15 cgroups on the path, 0 beside it"
echo ok
