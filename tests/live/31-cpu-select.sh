#!/bin/bash
# -C: only the CPUs it names are counted. Pinned workloads make exact getppid() calls: in
# cgroup A, N0 on CPU 0 and N1 on the last CPU; in B, M on the last CPU (A's and B's tasks
# switch there, so slices end at switches between cgroups). With -C LAST, A must count exactly
# N1 and B exactly M, the system at least N1 + M and less than N0 more, and --per-cpu must
# show rows of LAST alone, adding up to the totals. With -C 0, A counts exactly N0 and B none.
# Both cases on each switch hook the kernel has (the perf-event one from 5.13): on a CPU left
# out there is no cgroup-switches event, and the tracepoint reads nothing there.
. "$(dirname "$0")/lib.sh"

EV=syscalls:sys_enter_getppid
N0=90000 N1=60000 M=40000
cpus_or_skip 2 "-C needs two, one counted and one not"
last=$(($(nproc) - 1))
taskset -c 0,$last true 2>/dev/null || skip "this shell may not run on CPUs 0 and $last"

cg_make A
cg_make B
A=$(cg_path A) B=$(cg_path B)

# sum FILE CGROUP [CPU]: a cgroup's getppid() calls over the interval lines.
sum() { cgroup_sum "$1" "$2" "$EV" "${3:-}"; }
system_sum() {
	jq -s --arg ev "$EV" '[.[] | select(.summary != true) | .rows[] |
		select(.scope == "system") | .counts[$ev]] | add' "$1"
}

# run_case HOOK CPU: cgtma -C CPU on HOOK while the workloads run; checks the counts.
run_case() {
	local hook=$1 cpu=$2 name="$1, -C $2" out=$TMP/out-$1-$2
	local want_a want_b other
	cgtma_start "$out" 1 --switch-hook "$hook" -C "$cpu" -e "$EV" -I 200 --json --per-cpu \
		-G "$A" -G "$B"
	cg_start A taskset -c 0 "$WORKLOAD" getppid $N0 40
	cg_start A taskset -c $last "$WORKLOAD" getppid $N1 50
	cg_start B taskset -c $last "$WORKLOAD" getppid $M 30
	cg_wait
	cgtma_more "$out"
	cgtma_signal INT "$name"
	# The perf-event hook asked for by name warns where the kernel drops samples (18).
	grep -v 'warning: --switch-hook=perf-event' "$TMP/err" | grep . &&
		fail "$name: cgtma wrote to stderr: $(cat "$TMP/err")"

	local sa=$(sum "$out" "$A") sb=$(sum "$out" "$B") ssys=$(system_sum "$out")
	if [ "$cpu" = 0 ]; then
		want_a=$N0 want_b=0 other=$((N1 + M))
	else
		want_a=$N1 want_b=$M other=$N0
	fi
	echo "$name: A $sa B $sb system $ssys (want A $want_a, B $want_b, system from" \
		"$((want_a + want_b)) to less than $((want_a + want_b + other)))"
	exact_or_marked "$sa" $want_a "$out" || fail "$name: A counted $sa getppid calls, want $want_a"
	exact_or_marked "$sb" $want_b "$out" || fail "$name: B counted $sb getppid calls, want $want_b"
	[ "$ssys" -ge $((want_a + want_b)) ] && [ "$ssys" -lt $((want_a + want_b + other)) ] ||
		fail "$name: the system counted $ssys: CPUs outside -C were counted, or too little"

	# Rows of the selected CPU alone, adding up to their totals in every interval.
	jq -e -s --argjson c "$cpu" 'all(.[]; all(.rows[]; .cpu == null or .cpu == $c))' \
		"$out" >/dev/null || fail "$name: rows of CPUs other than $cpu: $(head -n1 "$out")"
	cpu_rows_add_up "$out" "$EV" ||
		fail "$name: the CPU rows do not add up to their totals"
	exact_or_marked "$(sum "$out" "$A" "$cpu")" $want_a "$out" || fail "$name: A's row of CPU $cpu is not $want_a"
}

hooks=(tracepoint)
if "$CGTMA" --switch-hook perf-event -e cpu-clock -I 100 -d 0.1 >/dev/null 2>"$TMP/err"; then
	hooks+=(perf-event)
else
	echo "perf-event hook not run: $(tail -n1 "$TMP/err")"
fi
for hook in "${hooks[@]}"; do
	run_case "$hook" "$last"
	run_case "$hook" 0
done
echo "ok"
