#!/bin/sh
# Run by cgtma as its command: cgtma ... -- tests/bench/hook-run.sh OUT PINGPONG [ARGS...]
#
# Finds the sched_switch program (on_switch) of the cgtma that started it, by the program
# ids in that process's fdinfo (other cgtma instances may be running: a name alone is not
# enough), and runs PINGPONG with the kernel's BPF statistics on (-s) and that program's id
# (-p), so that its run_cnt and run_time_ns cover exactly the timed round trips. PINGPONG's
# line goes to OUT; cgtma's own output stays where cgtma sends it.
set -eu

out=$1
shift
id=""
for f in /proc/"$PPID"/fdinfo/*; do
	p=$(sed -n 's/^prog_id:[[:space:]]*//p' "$f" 2>/dev/null) || continue
	[ -n "$p" ] || continue
	name=$(bpftool prog show id "$p" --json 2>/dev/null | jq -r '.name // empty') || continue
	if [ "$name" = on_switch ]; then
		id=$p
		break
	fi
done
if [ -z "$id" ]; then
	echo "hook-run: no on_switch program held by process $PPID (is it cgtma?)" >&2
	exit 1
fi
exec "$@" -s -p "$id" >"$out"
