#!/bin/bash
# CPU hotplug under a running cgtma. The last CPU is taken offline before cgtma starts, then
# brought online: it is counted from then on (-v says so), with the events opened there on
# the fly. A task pinned to it makes exactly N getppid() calls in cgroup A: A's row for that
# CPU and A's total say N. Then it goes offline again while cgtma runs: its rows end (-v says
# so), and once more online it counts again (M more calls, exactly). Every interval, the
# system row is the sum of the CPU rows shown. -C naming only the offline CPU fails (exit 1),
# saying why. --sample follows the CPU the same way: started while it is offline, a spinner
# pinned to it after it came online, and again after it went offline and came back, has its
# samples (its CPU time times the frequency, within 20 %); one whose sample events the kernel
# refuses is tried again until it takes them. --irq=TIMER across the same: system = root +
# TIMER, exactly, over the intervals. Needs a CPU that can go offline
# (/sys/devices/system/cpu/cpuN/online); the CPU is brought back online whatever happens.
# live: both-hooks
. "$(dirname "$0")/lib.sh"

EV=syscalls:sys_enter_getppid
N=40000 M=25000
last=$(($(getconf _NPROCESSORS_CONF) - 1))
ctl=/sys/devices/system/cpu/cpu$last/online
[ $last -ge 1 ] || skip "one CPU: none can go offline"
[ -w "$ctl" ] || skip "CPU $last cannot be taken offline here (no writable $ctl)"
[ "$(cat "$ctl")" = 1 ] || skip "CPU $last is offline already"
on_exit "echo 1 >$ctl"
set_cpu() { echo "$1" >"$ctl" || fail "cannot set CPU $last online=$1"; }

cg_make A
A=$(cg_path A)
set_cpu 0
# -C naming only the offline CPU has nothing to count: a failure (1), said.
timeout 30 "$CGTMA" -C $last -e cpu-clock -d 0.2 >/dev/null 2>"$TMP/err"
rc=$?
[ $rc = 1 ] && grep -q "^cgtma: -C: none of the CPUs it names is online" "$TMP/err" ||
	fail "cgtma -C $last, CPU $last offline: exit $rc, stderr: $(cat "$TMP/err")"
out=$TMP/out
cgtma_start "$out" 2 -v -A -e "$EV,cpu-clock" -I 200 --json -G "$A"
set_cpu 1
cgtma_more "$out" 2
cg_run A taskset -c $last "$WORKLOAD" getppid $N || fail "the workload on CPU $last failed"
cgtma_more "$out"
set_cpu 0
cgtma_more "$out" 2
offline_from=$(wc -l <"$out")
cgtma_more "$out"
set_cpu 1
cgtma_more "$out" 2
cg_run A taskset -c $last "$WORKLOAD" getppid $M || fail "the second workload on CPU $last failed"
cgtma_more "$out"
cgtma_signal INT

[ "$(grep -c "^cgtma: CPU $last came online: counted from now" "$TMP/err")" = 2 ] ||
	fail "-v did not say twice that CPU $last came online: $(cat "$TMP/err")"
grep -q "^cgtma: CPU $last went offline" "$TMP/err" ||
	fail "-v did not say that CPU $last went offline: $(cat "$TMP/err")"
grep -q "event reads failed" "$TMP/err" && fail "reads failed: $(cat "$TMP/err")"

sum() {
	jq -s --arg cg "$A" --arg ev "$EV" --argjson cpu "$1" '[.[] | select(.summary != true) |
		.rows[] | select(.scope == "cgroup" and .cgroup == $cg and .cpu == $cpu) |
		.counts[$ev]] | add // 0' "$out"
}
got=$(sum $last)
[ "$got" = $((N + M)) ] || fail "A on CPU $last: $got getppid calls, want exactly $((N + M))"
got=$(sum null)
[ "$got" = $((N + M)) ] || fail "A: $got getppid calls, want exactly $((N + M))"
# No row for the CPU in intervals while it was offline (the one it went offline in excepted).
rows_off=$(sed -n "$((offline_from + 1))p" "$out" | jq --argjson c $last \
	'[.rows[] | select(.scope == "cpu" and .cpu == $c)] | length')
[ "$rows_off" = 0 ] || fail "CPU $last has a row in an interval while it was offline"
bad=$(jq -c --arg ev cpu-clock 'select(.summary != true) |
	select(([.rows[] | select(.scope == "system")][0].counts[$ev]) !=
	       ([.rows[] | select(.scope == "cpu") | .counts[$ev]] | add)) | .time' "$out" | head -n1)
[ -z "$bad" ] || fail "an interval's system row is not the sum of its CPU rows (time $bad)"
echo "CPU $last: counted after coming online twice, exactly $((N + M)) calls; rows while offline: 0"

# --irq across hotplug, summed over the CPUs (no -A): the reads skip an offline CPU's counts,
# which stand still, and keep them in the scope's sum. Over the intervals, the system's timers
# (timer:timer_expire_entry, from the CPU totals) are the root cgroup's plus the TIMER
# scope's, exactly, and no interval's TIMER count is over that total. (Not every interval: a
# CPU's counts since its last flush reach its total when it is back online.) A sum that
# dropped the offline CPU's counts makes an interval wrap to 2^64, and its return cancel it
# in the summary only.
TEV=timer:timer_expire_entry
cgtma_start "$out" 2 -e "$TEV,cpu-clock" --irq=TIMER -I 200 --json -G /
for on in 0 1 0 1; do
	set_cpu $on
	cgtma_more "$out" 2
done
cgtma_signal INT
# "sys root timer top", or "bad: ..." when they do not add up (jq's numbers: a wrapped count
# would overflow the shell's).
got=$(jq -r -s --arg ev "$TEV" '
	def c(s): [.rows[] | select(s) | .counts[$ev]] | add // 0;
	[.[] | select(.summary != true) | [c(.scope == "system"),
		c(.scope == "cgroup" and .cgroup == "/"),
		c(.scope == "irq" and .irq == "TIMER" and .cpu == null)]] |
	[(map(.[0]) | add), (map(.[1]) | add), (map(.[2]) | add), (map(.[2]) | max)] |
	if .[0] == .[1] + .[2] and .[3] <= .[0] and .[2] > 0 then map(tostring) | join(" ")
	else "bad: system \(.[0]) timers, root \(.[1]) + TIMER \(.[2]) (an interval: \(.[3]))"
	end' "$out")
case $got in
bad:* | "") fail "--irq=TIMER across hotplug: ${got:-jq failed}" ;;
esac
read -r sys root timer _ <<<"$got"
echo "--irq=TIMER across hotplug: system $sys timers = root $root + TIMER $timer"

SPINFN=${CGTMA_BUILD:-build}/tests/spinfn
[ -x "$SPINFN" ] || fail "no $SPINFN: build first (make $SPINFN)"
HZ=999
cg_make S
set_cpu 0
cgtma_start "$out" 2 -v -e cpu-clock -I 200 --json -G "$(cg_path S)" --sample -F $HZ \
	--folded "$TMP/folded"
set_cpu 1
cgtma_more "$out" 2
u0=$(usage_usec S)
cg_run S taskset -c $last "$SPINFN" alpha 1000 || fail "the spinner on CPU $last failed"
set_cpu 0
cgtma_more "$out" 2
set_cpu 1
cgtma_more "$out" 2
cg_run S taskset -c $last "$SPINFN" alpha 1000 || fail "the second spinner on CPU $last failed"
u1=$(usage_usec S)
cgtma_more "$out" 2
cgtma_signal INT
[ "$(grep -c "^cgtma: --sample: CPU $last came online: sampled from now" "$TMP/err")" = 2 ] ||
	fail "-v did not say twice that CPU $last is sampled: $(cat "$TMP/err")"
# S's samples in FOLDED against its CPU time from U0 to U1 times the frequency, within 20 %;
# sets got and want.
check_samples() {
	got=$(awk -v s="$(cg_path S)" 'index($0, s ";") == 1 { n += $NF } END { print n + 0 }' "$1")
	want=$((($3 - $2) * HZ / 1000000))
	if [ -n "${CGTMA_EMULATION:-}" ]; then
		# An emulator's guest timer skips periods when the host is busy (39-sample.sh
		# says more): there, half of them at least.
		[ $((got * 100)) -ge $((want * 50)) ] ||
			fail "S on CPU $last: $got samples, want at least half of $want under emulation"
	else
		[ $((got * 100)) -ge $((want * 80)) ] && [ $((got * 100)) -le $((want * 120)) ] ||
			fail "S on CPU $last: $got samples, want $want (CPU time x $HZ Hz) within 20 %"
	fi
}
check_samples "$TMP/folded" "$u0" "$u1"
echo "CPU $last: sampled after coming online twice: $got samples for $want expected"

# A CPU whose sample events the kernel refuses when it comes online (here -F above a
# perf_event_max_sample_rate lowered meanwhile, as the kernel lowers it itself when sample
# interrupts take too long) is said so once, tried again each interval, and sampled once
# the kernel takes its events again: then a spinner pinned to it has its samples.
rate_ctl=/proc/sys/kernel/perf_event_max_sample_rate
rate0=$(cat $rate_ctl)
if [ "$rate0" -lt $HZ ]; then
	not_checked "a refused CPU" "the kernel lowered perf_event_max_sample_rate to $rate0"
	echo ok
	exit 0
fi
on_exit "echo $rate0 >$rate_ctl"
set_rate() { echo "$1" >$rate_ctl || fail "cannot set perf_event_max_sample_rate to $1"; }
set_cpu 0
cgtma_start "$out" 2 -e cpu-clock -I 200 --json -G "$(cg_path S)" --sample -F $HZ \
	--folded "$TMP/folded2"
set_rate $((HZ - 1))
set_cpu 1
cgtma_more "$out" 3
grep -q "^cgtma: --sample: cannot open event 'cpu-clock' on CPU $last: Invalid argument" \
	"$TMP/err" &&
	grep -q "^cgtma: warning: --sample: CPU $last came online but is not sampled: tried" \
		"$TMP/err" ||
	fail "a refused CPU was not said: $(cat "$TMP/err")"
[ "$(grep -c "cannot open event" "$TMP/err")" = 1 ] ||
	fail "the refused CPU was said more than once: $(cat "$TMP/err")"
set_rate "$rate0"
cgtma_more "$out" 2
grep -q "^cgtma: --sample: CPU $last is sampled from now" "$TMP/err" ||
	fail "the refused CPU was not sampled once it could be: $(cat "$TMP/err")"
u0=$(usage_usec S)
cg_run S taskset -c $last "$SPINFN" alpha 1000 || fail "the third spinner on CPU $last failed"
u1=$(usage_usec S)
cgtma_more "$out" 2
cgtma_signal INT
check_samples "$TMP/folded2" "$u0" "$u1"
echo "CPU $last: refused at -F $HZ, said once, sampled once it could be: $got samples for $want expected"
echo ok
