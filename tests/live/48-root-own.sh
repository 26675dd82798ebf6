#!/bin/bash
# The root cgroup's own tasks, those in no child of it, have a row of their own with
# --all-cgroups: "cgroup": "/ (own tasks)", "own_tasks": true, the system less the level-1
# cgroups. A process moved into the root itself makes N getppid() calls, one in this test's
# cgroup (level 1) M, and a spinner keeps this test's cgroup busy meanwhile. The run's own
# row must count N (and the few that other tasks in the root make), the test's cgroup
# exactly M; every interval has the row; the summary's row is the system less the level-1
# rows, cpu-clock included, exactly; with -A the CPUs' own rows add up to N too.
. "$(dirname "$0")/lib.sh"

EV=syscalls:sys_enter_getppid
N=40000 M=25000
OWN="/ (own tasks)"

tracepoint_or_skip syscalls/sys_enter_getppid

cg_make ""
# In the root itself: the shell moves itself there, then becomes the workload.
in_root() {
	sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' sh "$CG_ROOT" "$@"
}

for per_cpu in "" -A; do
	out=$TMP/own$per_cpu.json
	cgtma_start "$out" 2 --all-cgroups --depth 1 -e "cpu-clock,$EV" -I 200 --json $per_cpu
	cg_start "" "$WORKLOAD" spin 1500
	in_root "$WORKLOAD" getppid $N 20 || fail "the workload in the root failed"
	cg_run "" "$WORKLOAD" getppid $M 20 || fail "the workload in $(cg_path) failed"
	cgtma_more "$out" 2
	cgtma_stop
	cg_wait

	# Every interval has the row; no other row is marked.
	jq -e -s --arg own "$OWN" 'map(select(.summary != true)) | length > 3 and
		all(.[]; [.rows[] | select(.own_tasks == true and .cpu == null)] | length == 1) and
		all(.[].rows[] | select(.own_tasks == true); .cgroup == $own and .scope == "cgroup")' \
		"$out" >/dev/null || fail "$per_cpu: intervals without one own-tasks row: $(head -n1 "$out")"
	own=$(jq --arg ev "$EV" 'select(.summary == true) | .rows[] |
		select(.own_tasks == true and .cpu == null) | .counts[$ev]' "$out")
	mine=$(jq --arg ev "$EV" --arg cg "$(cg_path)" 'select(.summary == true) | .rows[] |
		select(.cgroup == $cg and .cpu == null) | .counts[$ev]' "$out")
	echo "$per_cpu: the root's own tasks: $own getppid (want $N); $(cg_path): $mine (want $M)"
	# Other tasks in the root may make a few: a shell's at its start (dash's $PPID), those
	# of this host's processes outside any cgroup.
	[ "$own" -ge $N ] && [ "$own" -le $((N + 100)) ] ||
		fail "$per_cpu: the root's own tasks counted $own, want $N (to $((N + 100)))"
	exact_or_marked "$mine" $M "$out" || fail "$per_cpu: $(cg_path) counted $mine, want $M"

	# The summary's row is the system less the level-1 cgroups, every event (a removed
	# cgroup's row is in the summary too).
	jq -e -s 'map(select(.summary == true))[0].rows as $r |
		($r[] | select(.scope == "system") | .counts) as $sys |
		($r[] | select(.own_tasks == true and .cpu == null) | .counts) as $own |
		[$r[] | select(.scope == "cgroup" and .cpu == null and (.own_tasks | not) and
			       (.cgroup | test("^/[^/]+$")))] as $l1 |
		all($sys | keys[]; . as $e | $own[$e] == $sys[$e] - ([$l1[].counts[$e]] | add))' \
		"$out" >/dev/null || fail "$per_cpu: the own row is not the system less the level-1 rows"
	if [ "$per_cpu" = -A ]; then
		cpus=$(jq --arg ev "$EV" -s 'map(select(.summary == true))[0] | [.rows[] |
			select(.own_tasks == true and .cpu != null) | .counts[$ev]] | add' "$out")
		[ "$cpus" = "$own" ] || fail "-A: the CPUs' own rows add up to $cpus, the row $own"
	fi
done

# The terminal names the row so.
"$CGTMA" --all-cgroups --depth 1 -e "$EV" -d 0.3 >"$TMP/term" 2>&1 || fail "terminal run failed"
grep -q "^/ (own tasks) " "$TMP/term" || fail "the terminal has no own-tasks row: $(cat "$TMP/term")"
echo "PASS: the root's own tasks: a row of their own, exact, per CPU too"
