#!/bin/sh
# Run by cgtma as its command: cgtma ... -- tests/bench/hook-run.sh OUT PINGPONG [ARGS...]
#
# Finds the switch program of the cgtma that started it, whichever hook that cgtma uses:
# on_switch (the tracepoint hook, on sched_switch) or on_cgroup_switch (the perf-event hook,
# on the cgroup-switches events; one program, attached on every CPU), by the program ids in
# that process's fdinfo (other cgtma instances may be running: a name alone is not enough).
# It runs PINGPONG with the kernel's BPF statistics on (-s) and that program's id (-p), so
# that its run_cnt and run_time_ns cover exactly the timed round trips. OUT gets prog=NAME
# (the program found, so that the bench can check it measured the hook it asked for) and
# PINGPONG's line; cgtma's own output stays where cgtma sends it.
set -eu

out=$1
shift
id=""
for f in /proc/"$PPID"/fdinfo/*; do
	p=$(sed -n 's/^prog_id:[[:space:]]*//p' "$f" 2>/dev/null) || continue
	[ -n "$p" ] || continue
	name=$(bpftool prog show id "$p" --json 2>/dev/null | jq -r '.name // empty') || continue
	# The kernel keeps 15 characters of a program's name: a bpftool that does not take the
	# full one from BTF says on_cgroup_switc.
	case $name in
	on_switch) ;;
	on_cgroup_switch | on_cgroup_switc) name=on_cgroup_switch ;;
	*) continue ;;
	esac
	id=$p
	break
done
if [ -z "$id" ]; then
	echo "hook-run: no on_switch or on_cgroup_switch program held by process $PPID" \
		"(is it cgtma?)" >&2
	exit 1
fi
printf 'prog=%s ' "$name" >"$out"
exec "$@" -s -p "$id" >>"$out"
