#!/bin/bash
# Exact attribution. Workloads make exactly N getppid() calls in cgroup A/A1 (three tasks,
# two of them calling, all three runnable at once on two CPUs: switches inside A1 take the
# same-cgroup path) and M in B, pausing so the calls span several 200 ms intervals. Counting
# syscalls:sys_enter_getppid (a tracepoint: exact per CPU) with A, A/A1 and B tracked, the
# sums over all intervals must be exactly N for A/A1, N for A (it contains A1) and M for B,
# at least N+M for the system; the summary line must say the same. Each workload moves
# itself into its cgroup as it starts, as cgexec and container runtimes do. Run twice: totals
# only, and --per-cpu, where each cgroup's CPU rows must add up to its total row exactly.
# Then once more with A/A1 alone tracked: one tracked level, where a switch adds the deltas
# straight into the charge cache as it reads them (warm_entry() in bpf/charge.bpf.h), while
# the other cases' three levels take the general path.
# live: both-hooks
. "$(dirname "$0")/lib.sh"

EV=syscalls:sys_enter_getppid
started=()
N1=120000 N2=80000 N=200000 M=70000

cg_make A/A1
cg_make B
A=$(cg_path A) A1=$(cg_path A/A1) B=$(cg_path B)



# sum FILE CGROUP [CPU]: a cgroup's getppid() calls over the interval lines.
sum() { cgroup_sum "$1" "$2" "$EV" "${3:-}"; }
# summary FILE CGROUP: its count on the summary line ("system" for the system row).
summary() {
	jq --arg cg "$2" --arg ev "$EV" \
		'select(.summary == true) | .rows[] |
		 select(if $cg == "system" then .scope == "system"
			else .scope == "cgroup" and .cgroup == $cg and .cpu == null end) |
		 .counts[$ev]' "$1"
}

# run_case NAME PER_CPU [one-level]
run_case() {
	local name=$1 per_cpu=$2 one_level=${3:-} out=$TMP/out-$1
	# B by its absolute path: cgtma strips the mount point.
	local track=(-G "$A" -G "$A1" -G "$CG_ROOT/$CG_BASE/B") rows='[$a, $a1, $b]'

	[ -n "$one_level" ] && track=(-G "$A1") rows='[$a1]'
	cgtma_start "$out" 1 -e "$EV" -I 200 --json $per_cpu "${track[@]}"
	cg_start A/A1 "$WORKLOAD" getppid $N1 40
	cg_start A/A1 "$WORKLOAD" getppid $N2 60
	cg_start A/A1 "$WORKLOAD" spin 700
	cg_start B "$WORKLOAD" getppid $M 50
	cg_wait
	# One more interval after the work, then stop mid-interval.
	cgtma_more "$out"
	cgtma_stop

	jq -e -R 'fromjson | type == "object"' "$out" >/dev/null || fail "a line is not JSON"
	[ "$(tail -n1 "$out" | jq '.summary')" = true ] || fail "the last line is not the summary"
	[ "$(jq -s '[.[] | select(.summary == true)] | length' "$out")" = 1 ] ||
		fail "not exactly one summary line"

	# Every interval line: one system row, exactly the tracked cgroups, nothing else.
	jq -e -s --arg a "$A" --arg a1 "$A1" --arg b "$B" \
		'all(.[]; [.rows[] | select(.scope == "cgroup" and .cpu == null) | .cgroup] ==
			  '"$rows"' and
			  ([.rows[] | select(.scope == "system")] | length) == 1)' "$out" >/dev/null ||
		fail "$name: rows other than system and $rows: $(head -n1 "$out")"

	# The work spans several intervals.
	local busy=$(jq -s --arg cg "$A1" --arg ev "$EV" \
		'[.[] | select(.summary != true) | select(any(.rows[];
		   .scope == "cgroup" and .cgroup == $cg and .cpu == null and .counts[$ev] > 0))] |
		 length' "$out")
	[ "$busy" -ge 3 ] || fail "A/A1 counted in $busy intervals, want >= 3 (-I 200)"

	local sa=$(sum "$out" "$A") sa1=$(sum "$out" "$A1") sb=$(sum "$out" "$B")
	local ssys=$(jq -s --arg ev "$EV" '[.[] | select(.summary != true) | .rows[] |
		select(.scope == "system") | .counts[$ev]] | add' "$out")
	echo "$name: A/A1 $sa1 A $sa B $sb system $ssys (want A/A1 $N, A $N and B $M where" \
		"tracked, system >= $((N + M)))"
	exact_or_marked "$sa1" $N "$out" || fail "$name: A/A1 counted $sa1 getppid calls over the intervals, want $N"
	[ "$ssys" -ge $((N + M)) ] || fail "$name: the system counted $ssys, want >= $((N + M))"
	exact_or_marked "$(summary "$out" "$A1")" $N "$out" || fail "$name: summary A/A1: $(summary "$out" "$A1")"
	if [ -z "$one_level" ]; then
		exact_or_marked "$sa" $N "$out" || fail "$name: A counted $sa getppid calls over the intervals, want $N"
		exact_or_marked "$sb" $M "$out" || fail "$name: B counted $sb getppid calls over the intervals, want $M"
		exact_or_marked "$(summary "$out" "$A")" $N "$out" || fail "$name: summary A: $(summary "$out" "$A")"
		exact_or_marked "$(summary "$out" "$B")" $M "$out" || fail "$name: summary B: $(summary "$out" "$B")"
	fi
	[ "$(summary "$out" system)" = "$ssys" ] ||
		fail "$name: summary system $(summary "$out" system), intervals $ssys"

	if [ -n "$per_cpu" ]; then
		# Per interval and scope: the CPU rows add up to the total row, exactly.
		cpu_rows_add_up "$out" "$EV" ||
			fail "$name: per-CPU rows do not add up to their totals"
		local ncpu=$(jq -s '[.[0].rows[] | select(.scope == "cpu")] | length' "$out")
		[ "$ncpu" = "$(getconf _NPROCESSORS_ONLN)" ] ||
			fail "$name: $ncpu cpu rows, $(getconf _NPROCESSORS_ONLN) CPUs online"
		local s0=0 c
		for c in $(seq 0 $((ncpu - 1))); do
			s0=$((s0 + $(sum "$out" "$A1" "$c")))
		done
		exact_or_marked "$s0" $N "$out" || fail "$name: A/A1's CPU rows add up to $s0, want $N"
	fi
}

run_case totals ""
run_case percpu --per-cpu
run_case one-level --per-cpu one-level
echo "ok"
