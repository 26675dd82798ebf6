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



# figures FILE ROWS: what the checks below read of cgtma's output FILE, in one jq (each
# costs 0.3 s to start under emulation), separated by '|' (a tab would let read drop an
# empty field): what is wrong with the stream as a
# whole ("ok" if nothing), whether every line has one system row and exactly the cgroup
# rows ROWS (a jq array of $a, $a1, $b), the intervals A/A1 counted in, the intervals' sums
# of A, A/A1, B and the system, the summary line's counts of A/A1, A, B and the system, the
# first line's CPU rows, and A/A1's CPU rows added up over the intervals.
figures() {
	jq -R -r -s --arg a "$A" --arg a1 "$A1" --arg b "$B" --arg ev "$EV" '
		(rtrimstr("\n") | split("\n") | map(try fromjson catch "not JSON")) as $l |
		(if any($l[]; type != "object") then "a line is not JSON"
		elif $l[-1].summary != true then "the last line is not the summary"
		elif ([$l[] | select(.summary == true)] | length) != 1 then "not exactly one summary line"
		else "ok" end) as $why |
		if $why != "ok" then $why else
		[$l[] | select(.summary != true)] as $iv | $l[-1] as $s |
		def cg($c): select(.scope == "cgroup" and .cgroup == $c and .cpu == null);
		def sum($c): [$iv[].rows[] | cg($c) | .counts[$ev]] | add // 0;
		def summary($c): [$s.rows[] | cg($c) | .counts[$ev]] | first;
		([$l[0].rows[] | select(.scope == "cpu")] | length) as $ncpu |
		["ok", all($l[]; [.rows[] | select(.scope == "cgroup" and .cpu == null) | .cgroup] ==
			  '"$2"' and ([.rows[] | select(.scope == "system")] | length) == 1),
		 ([$iv[] | select(any(.rows[]; cg($a1) | .counts[$ev] > 0))] | length),
		 sum($a), sum($a1), sum($b),
		 ([$iv[].rows[] | select(.scope == "system") | .counts[$ev]] | add),
		 summary($a1), summary($a), summary($b),
		 ([$s.rows[] | select(.scope == "system") | .counts[$ev]] | first),
		 $ncpu,
		 ([$iv[].rows[] | select(.scope == "cgroup" and .cgroup == $a1 and .cpu != null and
			.cpu < $ncpu) | .counts[$ev]] | add // 0)] |
		map(if . == null then "" else tostring end) | join("|") end' "$1"
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

	local why rows_ok busy sa sa1 sb ssys sum_a1 sum_a sum_b sum_sys ncpu s0
	IFS='|' read -r why rows_ok busy sa sa1 sb ssys sum_a1 sum_a sum_b sum_sys ncpu s0 \
		<<<"$(figures "$out" "$rows")"
	[ "$why" = ok ] || fail "${why:-jq cannot read $out}"

	# Every interval line: one system row, exactly the tracked cgroups, nothing else.
	[ "$rows_ok" = true ] || fail "$name: rows other than system and $rows: $(head -n1 "$out")"

	# The work spans several intervals.
	[ "$busy" -ge 3 ] || fail "A/A1 counted in $busy intervals, want >= 3 (-I 200)"

	echo "$name: A/A1 $sa1 A $sa B $sb system $ssys (want A/A1 $N, A $N and B $M where" \
		"tracked, system >= $((N + M)))"
	exact_or_marked "$sa1" $N "$out" || fail "$name: A/A1 counted $sa1 getppid calls over the intervals, want $N"
	[ "$ssys" -ge $((N + M)) ] || fail "$name: the system counted $ssys, want >= $((N + M))"
	exact_or_marked "$sum_a1" $N "$out" || fail "$name: summary A/A1: $sum_a1"
	if [ -z "$one_level" ]; then
		exact_or_marked "$sa" $N "$out" || fail "$name: A counted $sa getppid calls over the intervals, want $N"
		exact_or_marked "$sb" $M "$out" || fail "$name: B counted $sb getppid calls over the intervals, want $M"
		exact_or_marked "$sum_a" $N "$out" || fail "$name: summary A: $sum_a"
		exact_or_marked "$sum_b" $M "$out" || fail "$name: summary B: $sum_b"
	fi
	[ "$sum_sys" = "$ssys" ] || fail "$name: summary system $sum_sys, intervals $ssys"

	if [ -n "$per_cpu" ]; then
		# Per interval and scope: the CPU rows add up to the total row, exactly.
		cpu_rows_add_up "$out" "$EV" ||
			fail "$name: per-CPU rows do not add up to their totals"
		[ "$ncpu" = "$(getconf _NPROCESSORS_ONLN)" ] ||
			fail "$name: $ncpu cpu rows, $(getconf _NPROCESSORS_ONLN) CPUs online"
		exact_or_marked "$s0" $N "$out" || fail "$name: A/A1's CPU rows add up to $s0, want $N"
	fi
}

run_case totals ""
run_case percpu --per-cpu
run_case one-level --per-cpu one-level
echo "ok"
