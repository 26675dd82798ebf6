#!/bin/bash
# Noise from the kernel's own accounting (docs/noise.md). A and B each run a CPU-bound task
# pinned to CPU 0, C one alone on CPU 1 (with two CPUs or more). The tasks are stopped
# (SIGSTOP) but for a window of RUN_S seconds inside cgtma's intervals: all their waiting
# falls in intervals cgtma reports, whatever lag its readings or the test's have, so the
# seconds each cgroup's "wait" adds up to (wait times interval, over the intervals) must be
# the growth of /proc/PID/schedstat's run_delay over the window, within 0.05 s per second of
# the window (5 %). A and B wait about half the window each (above 0.3 s/s); C about
# nothing, unless other work on this machine takes CPU 1 (then only the agreement with
# run_delay is checked, and the test says so). cpu.pressure's "some" is there where the file
# is, above 0.3 s/s of the window for A and B; cpu.stat's throttling exactly where the file
# has it, at 0 without cpu.max.
#
# Preemptions: each involuntary switch of A's, B's and C's one task (nonvoluntary_ctxt_switches)
# is one by another cgroup, within 2 % + 2; A and B name each other as antagonists, whose
# slices took no more than they ran (on a quiet machine, at least half). SMT sharing: see
# below.
#
# Then, where the cpu controller can be enabled (cpu.max exists: not on a hybrid host),
# cgroup T with cpu.max "20000 100000" spins in the window (on CPU 1 where there is one, away
# from cgtma): its throttled seconds must be cpu.stat's throttled_usec growth within 5 %, and
# its nr_throttled the growth of nr_throttled, exactly, the file read once T's throttling
# has ended (unthrottled, below).
. "$(dirname "$0")/lib.sh"

commands_or_skip taskset
RUN_S=3

cg_make A
cg_make B
cg_make C
A=$(cg_path A) B=$(cg_path B) C=$(cg_path C)
alone=$(($(nproc) > 1))

# spin REL CPU: a CPU-bound task pinned to CPU in cgroup REL, stopped until the window, and
# killed when the test ends; $spun its PID (cgexec and taskset exec it).
spun_all=()
spin() {
	"$WORKLOAD" cgexec "$CG_ROOT/$CG_BASE/$1" taskset -c "$2" "$WORKLOAD" spin 600000 &
	spun=$!
	disown $spun	# killed by the test: no "Killed" from the shell
	spun_all+=($spun)
	# Stopped once in its cgroup (a thread moved in counts from its second reading there)
	# and pinned: stopped before taskset's pinning, it would run taskset on any CPU in the
	# window, for tenths of a second under emulation.
	wait_for 30 grep -qx $spun "$CG_ROOT/$CG_BASE/$1/cgroup.procs" || fail "$1: no spinner"
	wait_for 30 grep -qx "Cpus_allowed_list:[[:space:]]*$2" /proc/$spun/status ||
		fail "$1: its spinner was not pinned to CPU $2"
	kill -STOP $spun
	on_exit "kill -9 $spun"
}
run_delay() {
	local run delay
	read -r run delay _ <"/proc/$1/schedstat"
	echo "$delay"
}

# measure OUT ARGS...: cgtma --json -I 500 ARGS, with the spinners running for RUN_S
# seconds after its first interval; the kernel's figures (read_all) before and after that
# window in $TMP/before and $TMP/after, the window's length in $window. cgtma ends after
# two more intervals.
measure() {
	local out=$1 t0
	shift
	cgtma_start "$out" 0 -e cpu-clock --json -I 500 "$@"
	# Its work on CPU 0, beside A and B, whose waits run_delay sees all the same: C's
	# CPU 1 is then its own but for this machine's other work.
	taskset -a -p -c 0 $cgtma_pid >/dev/null || fail "cannot pin cgtma to CPU 0"
	wait_lines "$out" 1 60	# loading BPF takes long under emulation
	read_all >"$TMP/before"
	t0=$EPOCHREALTIME
	kill -CONT "${spun_all[@]}"
	sleep $RUN_S
	kill -STOP "${spun_all[@]}"
	window=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { print b - a }')
	settle
	read_all >"$TMP/after"
	cgtma_more "$out" 2 30
	cgtma_signal INT "cgtma $*"
}
# settle: waits until the spinners have stopped (each when it next runs) and the kernel's
# figures of the window are in the files read_all reads.
settle() { sleep 0.2; }
# kernel KEY [SCALE]: KEY's growth over the window, divided by SCALE (1e9: ns to s).
kernel() {
	awk -v k="$1" -v s="${2:-1e9}" '$1 == k { v[FILENAME] = $2 }
		END { printf "%.6f\n", (v[ARGV[2]] - v[ARGV[1]]) / s }' "$TMP/before" "$TMP/after"
}
# noise OUT CGROUP FIELD: FIELD times the interval, summed over the intervals after the first
# (the summary's left out): seconds for a rate, times for nr_throttled; "absent" where an
# interval lacks it.
noise() {
	jq -rs --arg c "$2" --arg f "$3" '[.[1:][] | select(.summary != true) | .interval as $s |
		.rows[] | select(.scope == "cgroup" and .cgroup == $c and .cpu == null) |
		.noise[$f] as $v | if $v == null then null elif $f == "nr_throttled" then $v
		else $v * $s end] | if any(. == null) or length == 0 then "absent" else add end' "$1"
}
# anywhere OUT CGROUP FIELD: whether any row of CGROUP has FIELD, the summary's included.
anywhere() {
	jq -e -s --arg c "$2" --arg f "$3" 'any(.[].rows[]; .scope == "cgroup" and
		.cgroup == $c and (.noise // {} | has($f)))' "$1" >/dev/null
}
# near GOT WANT: |GOT - WANT| <= 0.05 s per second of the window.
near() { awk -v g="$1" -v w="$2" -v t="$window" 'BEGIN { d = g - w; exit !(d * d <= (0.05 * t) ^ 2) }'; }
# count_near GOT WANT: |GOT - WANT| <= 2 % of WANT + 2 (a count of preemptions).
count_near() { awk -v g="$1" -v w="$2" 'BEGIN { d = g - w; exit !(d * d <= (0.02 * w + 2) ^ 2) }'; }
# rate_above X R: whether X seconds are above R per second of the window.
rate_above() { awk -v x="$1" -v r="$2" -v t="$window" 'BEGIN { exit !(x > r * t) }'; }

spin A 0
pa=$spun
spin B 0
pb=$spun
if [ $alone = 1 ]; then
	spin C 1
	pc=$spun
fi
# nivcsw PID: the task's involuntary switches, each one a preemption.
nivcsw() { awk '$1 == "nonvoluntary_ctxt_switches:" { print $2 }' "/proc/$1/status"; }
read_all() {
	echo "a $(run_delay $pa)"
	echo "b $(run_delay $pb)"
	echo "pa $(nivcsw $pa)"
	echo "pb $(nivcsw $pb)"
	echo "ra $(awk '{ print $1 }' /proc/$pa/schedstat)"
	echo "rb $(awk '{ print $1 }' /proc/$pb/schedstat)"
	[ -z "${pc:-}" ] || echo "c $(run_delay $pc)"
	[ -z "${pc:-}" ] || echo "pc $(nivcsw $pc)"
}
# took OUT CGROUP OTHER FIELD: the seconds (times, for preempt) of FIELD of OTHER in
# CGROUP's antagonists, over the intervals after the first (0 where it is not listed).
took() {
	jq -rs --arg c "$2" --arg o "$3" --arg f "$4" '[.[1:][] | select(.summary != true) |
		.interval as $s | .rows[] | select(.scope == "cgroup" and .cgroup == $c and
		.cpu == null) | .noise.antagonists // [] | .[] | select(.cgroup == $o) |
		.[$f] * $s] | add // 0' "$1"
}
out=$TMP/noise.json
measure "$out" -G "$A" -G "$B" -G "$C"
echo "window: $window s"
for p in a b c; do
	[ "$p" = c ] && [ $alone = 0 ] && continue
	rel=$(echo $p | tr a-z A-Z)
	cg=$(cg_path "$rel")
	f=$CG_ROOT/$CG_BASE/$rel
	want=$(kernel $p)
	got=$(noise "$out" "$cg" wait)
	echo "$cg: waited $got s, run_delay says $want s"
	[ "$got" != absent ] || fail "$cg has no wait in some interval"
	near "$got" "$want" || fail "$cg: waited $got s, /proc/PID/schedstat says $want s"
	if [ $p = c ]; then
		# Below 0.04 s/s by run_delay, below 0.05 by cgtma: no flip at the bound.
		if ! rate_above "$want" 0.04; then
			! rate_above "$got" 0.05 || fail "$cg, alone on CPU 1, waited $got s"
		else
			echo "note: other work on this machine kept $cg waiting $want s on CPU 1:" \
				"its wait is checked against run_delay only"
		fi
	else
		rate_above "$got" 0.3 || fail "$cg, sharing CPU 0, waited only $got s"
	fi
	# Each involuntary switch of the cgroup's one task is a preemption by another cgroup.
	want=$(kernel p$p 1)
	got=$(noise "$out" "$cg" preempted)
	echo "$cg: preempted $got times, its task's nonvoluntary_ctxt_switches $want"
	[ "$got" != absent ] || fail "$cg has no preempted in some interval"
	count_near "$got" "$want" || fail "$cg: preempted $got times, its task was preempted $want times"
	if [ -r "$f/cpu.pressure" ]; then
		got=$(noise "$out" "$cg" pressure_some)
		echo "$cg: pressure some for $got s"
		[ "$got" != absent ] || fail "$cg has no pressure_some in some interval"
		[ $p = c ] || rate_above "$got" 0.3 || fail "$cg: pressure_some $got s"
	else
		! anywhere "$out" "$cg" pressure_some || fail "$cg: pressure_some without cpu.pressure"
	fi
	if grep -q '^throttled_usec ' "$f/cpu.stat"; then
		[ "$(noise "$out" "$cg" throttled)" = 0 ] ||
			fail "$cg: throttled $(noise "$out" "$cg" throttled) s, want 0 (no cpu.max)"
	else
		! anywhere "$out" "$cg" throttled || fail "$cg: throttled without cpu.stat's"
		! anywhere "$out" "$cg" nr_throttled || fail "$cg: nr_throttled without cpu.stat's"
	fi
done
# A and B take CPU 0 from each other: each names the other, which took something, and no
# more than it ran (cgtma, on CPU 0 too, takes part of the rest). Where fewer than 5 are
# listed, the antagonists' preemptions add up to the cgroup's.
for pair in "A B b" "B A a"; do
	set -- $pair
	cg=$(cg_path $1) other=$(cg_path $2)
	n=$(took "$out" "$cg" "$other" preempt)
	t=$(took "$out" "$cg" "$other" took)
	ran=$(kernel r$3)
	echo "$cg: $other preempted it $n times and took $t s (it ran $ran s)"
	awk -v n="$n" 'BEGIN { exit !(n >= 1) }' || fail "$cg: $other is not an antagonist"
	awk -v t="$t" 'BEGIN { exit !(t > 0) }' || fail "$cg: $other took nothing"
	jq -e -s --arg c "$cg" '[.[1:][] | select(.summary != true) | .rows[] |
		select(.scope == "cgroup" and .cgroup == $c and .cpu == null) | .noise |
		(.antagonists // []) as $l | select($l | length < 5) |
		([$l[].preempt] | add // 0) - .preempted | fabs] | all(. < 1e-3)' "$out" >/dev/null ||
		fail "$cg: its antagonists' preemptions do not add up to its own"
	! rate_above "$(awk -v t="$t" -v r="$ran" 'BEGIN { print t - r }')" 0.05 ||
		fail "$cg: $other took $t s, more than the $ran s it ran"
done
jq -e -s --arg c "$A" '.[-1].summary and any(.[-1].rows[]; .cgroup == $c and
	.noise.wait > 0 and .noise.preempted > 0 and (.noise.antagonists | length) > 0)' \
	"$out" >/dev/null || fail "the summary has no wait or antagonists for $A"
# No SMT siblings here: no SMT sharing at all, never 0.
if ! grep -q , /sys/devices/system/cpu/cpu0/topology/thread_siblings_list 2>/dev/null &&
   ! grep -q - /sys/devices/system/cpu/cpu0/topology/thread_siblings_list 2>/dev/null; then
	! anywhere "$out" "$A" smt_shared || fail "smt_shared on a machine without SMT"
fi

# -T: each spinner's thread row has its own wait and preemptions, over the intervals it
# ran in: the growth of that thread's run_delay (within 5 %) and nonvoluntary_ctxt_switches
# (within 2 % + 2). Alone in their cgroups, the threads have what the cgroups have.
# task_noise OUT TID FIELD: as noise, over the thread's rows.
task_noise() {
	jq -rs --argjson t "$2" --arg f "$3" '[.[1:][] | select(.summary != true) |
		.interval as $s | .rows[] | select(.scope == "task" and .tid == $t) |
		.noise[$f] as $v | if $v == null then null else $v * $s end] |
		if any(. == null) or length == 0 then "absent" else add end' "$1"
}
out=$TMP/tasks.json
measure "$out" -T -G "$A" -G "$B"
for p in a b; do
	pid=$(eval echo "\$p$p")
	want=$(kernel $p)
	got=$(task_noise "$out" "$pid" wait)
	echo "thread $pid: waited $got s, run_delay says $want s"
	[ "$got" != absent ] || fail "thread $pid has no wait in some interval"
	near "$got" "$want" || fail "thread $pid: waited $got s, its schedstat says $want s" \
		"(its cgroup's rows: $(noise "$out" "$(cg_path "${p^^}")" wait) s; per interval," \
		"the thread's and the cgroup's s/s: $(jq -cs --argjson t "$pid" '[.[] |
		select(.summary != true) | [.interval, ([.rows[] | select(.tid == $t) |
		.noise.wait][0]), ([.rows[] | select(.scope == "cgroup" and .cpu == null and
		(.cgroup | endswith("/'"${p^^}"'"))) | .noise.wait][0])]]' "$out"))"
	want=$(kernel p$p 1)
	got=$(task_noise "$out" "$pid" preempted)
	echo "thread $pid: preempted $got times, nonvoluntary_ctxt_switches $want"
	[ "$got" != absent ] || fail "thread $pid has no preempted in some interval"
	count_near "$got" "$want" || fail "thread $pid: preempted $got times, it was preempted $want times"
done
jq -e -s --argjson t "$pa" '.[-1].summary and any(.[-1].rows[]; .scope == "task" and
	.tid == $t and .noise.wait > 0 and .noise.preempted > 0)' "$out" >/dev/null ||
	fail "the summary has no wait or preemptions for thread $pa"

# stop_spinners: ends every spinner, for the next measurement's own.
stop_spinners() {
	kill -9 "${spun_all[@]}"
	wait_for 10 eval '! kill -0 ${spun_all[*]} 2>/dev/null' || fail "the spinners did not end"
	spun_all=()
}
stop_spinners

# SMT, where CPU 0 has a sibling hardware thread (the 6.1-smt row: -smp
# 4,sockets=1,cores=2,threads=2): A on CPU 0 and B on its sibling share their core for
# about all the window, each naming the other; B on another core shares nothing with A, nor
# do the root's kernel threads on A's sibling.
cpus_of() { awk -F, '{ for (i = 1; i <= NF; i++) { n = split($i, r, "-");
	for (c = r[1]; c <= r[n]; c++) print c } }' "$1"; }
siblings=/sys/devices/system/cpu/cpu0/topology/thread_siblings_list
sib=$( [ -r $siblings ] && cpus_of $siblings | grep -vx 0 | head -1)
far=$(cpus_of /sys/devices/system/cpu/online | grep -vxF -f <(cpus_of $siblings 2>/dev/null ||
	echo 0) | head -1)
if [ -z "$sib" ]; then
	echo "CPU 0 has no SMT sibling here: SMT sharing checked as absent only"
	for cg in "$A" "$B"; do
		! anywhere "$out" "$cg" smt_shared || fail "$cg: smt_shared without SMT"
	done
elif [ -z "$far" ]; then
	fail "CPU 0 has sibling $sib but no CPU is on another core"
else
	read_all() {
		echo "ra $(awk '{ print $1 }' /proc/$pa/schedstat)"
		echo "rb $(awk '{ print $1 }' /proc/$pb/schedstat)"
	}
	# spin_ab CPU: A on CPU 0 and B on CPU, their PIDs in pa and pb.
	spin_ab() {
		spin A 0
		pa=$spun
		spin B "$1"
		pb=$spun
	}
	spin_ab "$sib"
	out=$TMP/smt.json
	measure "$out" -G "$A" -G "$B"
	# Each shares its core for about all the time both ran (the less of their run times:
	# each runs whenever the other does not hold its CPU, but A shares CPU 0 with cgtma,
	# whose root cgroup's tasks share with nobody), with the other alone, the same time.
	for pair in "A B a" "B A b"; do
		set -- $pair
		cg=$(cg_path $1) other=$(cg_path $2)
		got=$(noise "$out" "$cg" smt_shared)
		t=$(took "$out" "$cg" "$other" smt)
		ran=$(kernel r$3)
		echo "$cg on CPU 0's core: shared it $got s, $t s with $other (it ran $ran s)"
		[ "$got" != absent ] || fail "$cg has no smt_shared in some interval"
		eval "got_$1=$got with_$1=$t ran_$1=$ran"
	done
	both=$(awk -v a="$ran_A" -v b="$ran_B" 'BEGIN { print a < b ? a : b }')
	for c in A B; do
		eval "got=\$got_$c with=\$with_$c"
		within "$got" "$both" 10 || fail "$(cg_path $c) shared its core $got s, both ran $both s"
		within "$with" "$got" 2 || fail "$(cg_path $c) shared $got s, but $with s with the other"
	done
	within "$with_A" "$with_B" 2 || fail "$A shared $with_A s with $B, $B $with_B s with $A"
	stop_spinners
	spin_ab "$far"
	out=$TMP/apart.json
	measure "$out" -G "$A" -G "$B"
	t=$(took "$out" "$A" "$B" smt)
	echo "$A on CPU 0, $B on CPU $far: shared $t s"
	[ "$t" = 0 ] || fail "$A shared $t s with $B on another core"
	# Its sibling idles, but for kernel threads, whose switches to the idle task no hook
	# sees: none of that is sharing with the root's tasks.
	t=$(took "$out" "$A" / smt)
	echo "$A on CPU 0, its sibling about idle: shared $t s with /"
	[ "$t" = 0 ] || fail "$A shared $t s with the root's own tasks beside an idle sibling"
	stop_spinners
fi

# cpu.max: the cpu controller for the test's cgroups, where the hierarchy has it.
if grep -qw cpu "$CG_ROOT/cgroup.controllers" 2>/dev/null; then
	grep -qw cpu "$CG_ROOT/cgroup.subtree_control" || echo +cpu >"$CG_ROOT/cgroup.subtree_control"
	echo +cpu >"$CG_ROOT/$CG_BASE/cgroup.subtree_control" 2>/dev/null
fi
cg_make T
T=$(cg_path T)
[ -e "$CG_ROOT/$CG_BASE/T/cpu.max" ] || { echo "no cpu.max here: throttling not checked"; exit 0; }
echo "20000 100000" >"$CG_ROOT/$CG_BASE/T/cpu.max" || fail "cannot set T's cpu.max"
# periods: T's cpu.stat nr_throttled, set (no process started: see nap).
periods() {
	local k v
	while read -r k v; do [ "$k" = nr_throttled ] && periods=$v; done \
		<"$CG_ROOT/$CG_BASE/T/cpu.stat"
}
# still: whether T's nr_throttled stood still over 0.35 s, three periods and more.
still() {
	local n
	periods
	n=$periods
	nap 0.35
	periods
	[ "$periods" = "$n" ]
}
# stopped PID: whether the task has stopped (state T).
stopped() { local st; read -r _ _ st _ <"/proc/$1/stat" && [ "$st" = T ]; }
# unthrottled: waits until T's spinner has stopped and no throttling of T is under way. The
# kernel counts in cpu.stat a throttled period as it ends (nr_throttled), but the time
# throttled when the throttling ends (throttled_usec), and that can be seconds after the
# spinner's stop: a task stopped while throttled stops when it next runs, and T can overdraw
# its quota by far more than a period's (under emulation, a stall of the host while T runs
# is charged to T), repaying it 20 ms a period, throttled all the while. Read before it
# ends, the file lacks that time, and cgtma's later intervals count more periods than the
# window's. None is under way where nr_throttled stands still for three periods.
unthrottled() {
	wait_for 30 stopped $spun || fail "T's spinner did not stop"
	wait_for 60 still || fail "T still throttled, 60 s after its spinner stopped"
}
# T's quota taken on a CPU of its own where there are two: on cgtma's CPU 0, under
# emulation, it could get less than its 20 % and never be throttled.
spin T $alone
unthrottled
settle() { unthrottled; }
read_all() {
	local k v
	while read -r k v; do
		[ "$k" = throttled_usec ] && echo "t $v"
		[ "$k" = nr_throttled ] && echo "n $v"
	done <"$CG_ROOT/$CG_BASE/T/cpu.stat"
}
out=$TMP/throttled.json
measure "$out" -G "$T"
want=$(kernel t 1e6)
[ "$(noise "$out" "$T" throttled)" != absent ] || fail "$T has no throttled time in some interval"
# Over the summary: the run's rate times the run is cpu.stat's growth from the run's first
# reading to its last, which hold the window.
got=$(jq -rs --arg c "$T" '.[-1] | .interval as $s | .rows[] | select(.scope == "cgroup" and
	.cgroup == $c and .cpu == null) | .noise.throttled * $s' "$out")
echo "$T: throttled $got s, cpu.stat says $want s (window $window s)"
within "$got" "$want" 5 || fail "$T: throttled $got s, cpu.stat says $want s"
rate_above "$want" 0.3 || fail "$T was throttled only $want s"
want=$(kernel n 1)
got=$(noise "$out" "$T" nr_throttled)
echo "$T: throttled $got times, cpu.stat says $want"
awk -v g="$got" -v w="$want" 'BEGIN { exit !(g == w && w > 0) }' ||
	fail "$T: nr_throttled $got, cpu.stat says $want"
