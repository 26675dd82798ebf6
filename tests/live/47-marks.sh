#!/bin/bash
# Marks that say what was missed. A slice the switch hook did not see begin is marked in its
# interval, with what ran unseen and how much of the slice may be another cgroup's; runs of
# the perf-event hook's program that the kernel skipped are found by the flush's check of
# the event's count. Two misses are made to happen here (CGTMA_TEST_DROP_SWITCH, a test
# knob of the perf-event hook's program) while a ping-pong switches between cgroups A and B
# by the hundred thousand:
# - skip:N, every N-th run and the next left as if the kernel had not run the program (a
#   slice there and back, which no switch shows): the count check marks them ("skipped",
#   once each: a skipped run that a switch found is marked "switch" alone); under auto it
#   says the fallback once, and the tracepoint takes over;
# - miss:N, runs that see no switch (forced perf-event, kept): the slice that ends in B
#   though it began in A is marked "switch", naming the ping-pong task it began with, its
#   cgroup, the cgroup charged, and a bound no larger than the slice.
# Where no switch is missed nothing is marked: in the kernel matrix's guests (Debian's
# kernels report every switch), CPU-bound tasks in A, B and the root cgroup, more than the
# CPUs, under each hook and with --sample: no interval marked, and A's getppid() calls
# exact. This VM's kernel misses switches away from its init agent's threads (marks are
# real here), so that part runs in the guests only.
. "$(dirname "$0")/lib.sh"

EV=syscalls:sys_enter_getppid
tracepoint_or_skip syscalls/sys_enter_getppid
unset CGTMA_SWITCH_HOOK CGTMA_TEST_DROP_SWITCH

cg_make A
cg_make B
A=$(cg_path A) B=$(cg_path B)
pe=false
"$CGTMA" -v -e cpu-clock -I 100 -d 0.1 2>&1 >/dev/null |
	grep -q '^cgtma: switch hook: perf-event' && pe=true

# The marks of a --json output, one a line: [kind, charged cgroup, began's cgroup, comm,
# slice_ns, max_ns, run_ns].
marks() {
	jq -c 'select(.summary != true) | .marks // [] | .[] | [.kind, .charged.cgroup,
		.began.cgroup, .began.comm, .slice_ns, .max_ns, .began.run_ns]' "$1"
}

if $pe; then
	# Forced, the hook is kept: every interval with skipped runs is marked.
	pingpong_start A B
	CGTMA_TEST_DROP_SWITCH=skip:50 cgtma_start "$TMP/skip.json" 3 -v -I 200 --json \
		--switch-hook perf-event -e cpu-clock -G "$A" -G "$B"
	cgtma_signal INT "skip:50"
	pingpong_stop
	skipped=$(marks "$TMP/skip.json" | grep -c '^\["skipped"')
	echo "skip:50: $skipped marks of skipped runs; $(marks "$TMP/skip.json" | wc -l) in all"
	[ "$skipped" -ge 2 ] || fail "skip:50: $skipped marks of skipped runs: $(cat "$TMP/err")"
	grep -q "^cgtma: mark: CPU [0-9]*: the kernel did not run the perf-event hook's program" \
		"$TMP/err" || fail "skip:50: -v did not list the skipped runs: $(cat "$TMP/err")"
	jq -e -s 'all(.[] | select(.summary != true and (.marks // [] |
		any(.kind == "skipped"))); .exact == false and .missed_unbounded >= 1)' \
		"$TMP/skip.json" >/dev/null || fail "skip:50: an interval with skipped runs not marked"
	# Under auto the tracepoint takes over, said once (at the first miss, which the next
	# switch may find before the flush does, and before the first interval begins); in the
	# guests, where nothing else is missed, the knob then runs no more: the marks end.
	pingpong_start A B
	CGTMA_TEST_DROP_SWITCH=skip:50 cgtma_start "$TMP/auto.json" 3 -v -I 200 --json \
		-e cpu-clock -G "$A" -G "$B"
	cgtma_signal INT "skip:50, auto"
	pingpong_stop
	[ "$(grep -c 'the perf-event hook missed a switch on CPU' "$TMP/err")" = 1 ] ||
		fail "skip:50, auto: the fallback was not said once: $(cat "$TMP/err")"
	if [ -n "${CGTMA_EMULATION:-}" ]; then
		n=$(jq -s '[.[] | select(.summary != true and .exact == false)] | length' \
			"$TMP/auto.json")
		[ "$n" -le 2 ] || fail "skip:50, auto: $n intervals marked, want the fallback's only"
	fi

	pingpong_start A B
	CGTMA_TEST_DROP_SWITCH=miss:7 cgtma_start "$TMP/miss.json" 3 -v -I 200 --json \
		--switch-hook perf-event -e cpu-clock -G "$A" -G "$B"
	cgtma_signal INT "miss:7"
	pingpong_stop
	marks "$TMP/miss.json" | head -n 3
	# Slices the ping-pong began in one of A and B and ended in the other.
	n=$(marks "$TMP/miss.json" | jq -s --arg a "$A" --arg b "$B" '[.[] |
		select(.[0] == "switch" and (.[1] == $a or .[1] == $b) and
		       (.[2] == $a or .[2] == $b) and .[1] != .[2] and .[3] == "pingpong")] | length')
	echo "miss:7: $n marks of switches between A and B"
	[ "$n" -ge 1 ] || fail "miss:7: no mark names the ping-pong: $(marks "$TMP/miss.json")"
	# The charged task's own run since it came on its CPU bounds the slice's error: some
	# mark's bound is below its slice, and names how long the task it began with ran.
	marks "$TMP/miss.json" | jq -e -s 'any(.[] | select(.[0] == "switch"); .[5] < .[4] and
		.[6] != null)' >/dev/null ||
		fail "miss:7: no switch mark bounded below its slice: $(marks "$TMP/miss.json")"
	grep -q "^cgtma: warning: --switch-hook=perf-event: it missed a switch" "$TMP/err" ||
		fail "miss:7: the miss was not said: $(cat "$TMP/err")"
	grep -q "takes over" "$TMP/err" && fail "miss:7: the forced hook fell back"
	grep -q "^cgtma: mark: CPU [0-9]*: switch: a slice of .* began in .* with pingpong" \
		"$TMP/err" || fail "miss:7: -v did not list the missed switches: $(cat "$TMP/err")"
	# The terminal says how much it may matter: spinners in A and B share CPU 0, switched
	# at the tick, some switches missed.
	CGTMA_TEST_DROP_SWITCH=miss:3 cgtma_start "$TMP/text" 1 --switch-hook perf-event \
		-e cpu-clock -G "$A" -G "$B" -I 200
	cg_run A taskset -c 0 "$WORKLOAD" spin 500 &
	a=$!
	cg_run B taskset -c 0 "$WORKLOAD" spin 500 &
	wait $a $!
	cgtma_more "$TMP/text" 1
	cgtma_signal INT "miss:3, the terminal"
	grep -q "^# NOT EXACT: .* at most [0-9.]* ms of" "$TMP/text" ||
		fail "miss:3: the terminal did not say what was missed: $(cat "$TMP/text")"
else
	not_checked "the knobs of the perf-event hook's program" "no perf-event hook here"
fi

[ -n "${CGTMA_EMULATION:-}" ] ||
	{ echo "note: no-mark runs only in the guests: this kernel misses switches itself"; exit 0; }

N=200000
spin_root() {
	# A CPU-bound task in the root cgroup itself.
	sh -c 'echo $$ > "'"$CG_ROOT"'/cgroup.procs" && exec "'"$WORKLOAD"'" spin 60000' &
	_spinners+=($!)
}
for how in auto tracepoint perf-event sample; do
	args=()
	case $how in
	tracepoint | perf-event) args=(--switch-hook "$how") ;;
	sample) args=(--sample) ;;
	esac
	[ "$how" = perf-event ] && ! $pe && continue
	_spinners=()
	for ((i = 0; i < $(nproc); i++)); do
		spin_root
		cg_spawn B "$WORKLOAD" spin 60000
		_spinners+=($!)
	done
	cgtma_start "$TMP/$how.json" 1 -I 200 --json -e "$EV,cpu-clock" -G "$A" -G "$B" "${args[@]}"
	cg_run A "$WORKLOAD" getppid $N 1
	cgtma_more "$TMP/$how.json"
	cgtma_signal INT "$how"
	kill "${_spinners[@]}" 2>/dev/null
	wait "${_spinners[@]}" 2>/dev/null
	# One mark is by design: a task moving itself into A or the root cgroup from this
	# script's cgroup (untracked, charged to "/"), with the perf-event hook, where a task of
	# this script's cgroup (its polling) ran on the CPU during the move's slice. The hook
	# sees no switch inside a cgroup, so it cannot tell that run from the mover's: the slice
	# is the old cgroup's either way, and A's count stays exact. Any other mark fails.
	marked=$(jq -s '[.[] | select(.summary != true and .exact == false and
		((.missed_unbounded // 0) > 0 or (.marks // [] | length) == 0 or
		 (.marks | any(.kind != "move" or .charged.cgroup != "/"))))] | length' \
		"$TMP/$how.json")
	got=$(cgroup_sum "$TMP/$how.json" "$A" "$EV")
	echo "$how: $marked intervals marked, $got getppid calls in A"
	[ "$marked" = 0 ] || fail "$how: $marked intervals marked: $(marks "$TMP/$how.json")"
	[ "$got" = $N ] || fail "$how: $got getppid calls in A, want $N"
done
echo ok
