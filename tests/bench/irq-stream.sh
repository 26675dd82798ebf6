#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# --irq's cost on a network stream (make bench): tests/bench/irq-stream.sh BUILD_DIR
#
# iperf3 over a veth pair between two network namespaces (a private /30 on the veth ends),
# server pinned to the last CPU, client to the first, both in one cgroup. Four
# configurations in each of ROUNDS rounds, in turn: no profiler, cgtma -G CGROUP with 4
# software events, the same with --irq (every scope), and --irq's floor: programs that only
# read the 4 events at every softirq's entry and exit (tests/bench/hookfloor -p softirq),
# what carving softirqs out cannot do without. Printed: the stream's throughput
# (median over rounds), its ratio to no profiler, the softirqs per second per CPU
# (/proc/softirqs), the BPF CPU time per second of cgtma's programs or the floor's (their
# run_time_ns, kernel.bpf_stats_enabled on only while timing, restored after) as a
# percentage of one CPU, and the run time of the programs on the interrupt tracepoints per
# softirq. Never fails on timing.
set -u
cd "$(dirname "$0")/../.." || exit 1
build=${1:-build}
export CGTMA_BUILD=$build
command -v iperf3 >/dev/null || { echo "irq-stream: no iperf3; skipped"; exit 0; }
command -v bpftool >/dev/null || { echo "irq-stream: no bpftool; skipped"; exit 0; }
[ -x "$build/tests/hookfloor" ] || { echo "irq-stream: no $build/tests/hookfloor; skipped"; exit 0; }
[ "$(id -u)" = 0 ] || { echo "irq-stream: needs root; skipped"; exit 0; }
. tests/live/lib.sh

ROUNDS=${CGTMA_BENCH_ROUNDS:-3}
SECS=${CGTMA_BENCH_SECS:-5}
EVS=cpu-clock,task-clock,context-switches,page-faults
LAST=$(($(getconf _NPROCESSORS_ONLN) - 1))
NSA=cgtma-bench-$$-a NSB=cgtma-bench-$$-b
ip netns add $NSA && on_exit "ip netns del $NSA"
ip netns add $NSB && on_exit "ip netns del $NSB"
ip link add cgb$$a netns $NSA type veth peer name cgb$$b netns $NSB ||
	{ echo "irq-stream: cannot create a veth pair; skipped"; exit 0; }
nsenter --net=/run/netns/$NSA ip addr add 10.254.24.1/30 dev cgb$$a
nsenter --net=/run/netns/$NSB ip addr add 10.254.24.2/30 dev cgb$$b
nsenter --net=/run/netns/$NSA ip link set cgb$$a up
nsenter --net=/run/netns/$NSB ip link set cgb$$b up
cg_make bench
old_stats=$(sysctl -n kernel.bpf_stats_enabled)
on_exit "sysctl -q kernel.bpf_stats_enabled=$old_stats"

cg_run bench nsenter --net=/run/netns/$NSB -- taskset -c $LAST iperf3 -s -1 -D -p 5311 >/dev/null 2>&1

# BPF run time so far (ns) of cgtma's programs and the floor's, and of their interrupt
# programs alone: "ALL IRQ".
IRQ_PROGS='on_softirq_|on_hardirq_|raw_softirq_|raw_hardirq_|floor_softirq_'
bpf_ns() {
	bpftool prog show --json 2>/dev/null | jq -r --arg all "^(on_switch|on_cgroup_|flush_slice|$IRQ_PROGS)" \
		--arg irq "^($IRQ_PROGS)" '[.[] | select(.name | test($all))] |
		"\([.[].run_time_ns // 0] | add // 0) \([.[] | select(.name | test($irq)) |
		.run_time_ns // 0] | add // 0)"'
}
softirqs() { awk 'NR > 1 { for (i = 2; i <= NF; i++) s += $i } END { print s }' /proc/softirqs; }

# stream CONFIG: one iperf3 run; prints "Gbit/s bpf_ns softirqs irq_bpf_ns".
stream() {
	local cfg=$1 pid=0 b0 b1 s0 s1 gbps
	case $cfg in
	plain) "$CGTMA" -e $EVS -G "$(cg_path bench)" -I 1000 >/dev/null 2>&1 & pid=$! ;;
	irq) "$CGTMA" -e $EVS -G "$(cg_path bench)" -I 1000 --irq >/dev/null 2>&1 & pid=$! ;;
	floor) "$build/tests/hookfloor" -p softirq -e $EVS >/dev/null 2>&1 & pid=$! ;;
	esac
	[ $pid -ne 0 ] && sleep 1.5
	sysctl -q kernel.bpf_stats_enabled=1
	read -ra b0 <<<"$(bpf_ns)"
	s0=$(softirqs)
	gbps=$(cg_run bench nsenter --net=/run/netns/$NSA -- taskset -c 0 iperf3 -c 10.254.24.2 -p 5311 \
		-t "$SECS" -J 2>/dev/null | jq '.end.sum_received.bits_per_second / 1e9')
	read -ra b1 <<<"$(bpf_ns)"
	s1=$(softirqs)
	sysctl -q kernel.bpf_stats_enabled="$old_stats"
	[ $pid -ne 0 ] && kill -INT $pid && wait $pid
	echo "$gbps $((b1[0] - b0[0])) $((s1 - s0)) $((b1[1] - b0[1]))"
	# the server ends with each client (-1): start the next one
	cg_run bench nsenter --net=/run/netns/$NSB -- taskset -c $LAST iperf3 -s -1 -D -p 5311 >/dev/null 2>&1
	sleep 0.3
}

declare -A R
for ((r = 0; r < ROUNDS; r++)); do
	for cfg in none plain irq floor; do R[$cfg]+="$(stream $cfg)"$'\n'; done
done
median() { sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
col() { printf '%s' "${R[$1]}" | awk -v c="$2" 'NF { print $c }' | median; }
NCPU=$(getconf _NPROCESSORS_ONLN)
echo
echo "--irq on a TCP stream (iperf3 over veth between two namespaces, pinned; $EVS;" \
	"median of $ROUNDS x $SECS s):"
echo
echo "| | no profiler | cgtma | cgtma --irq | reads only (floor) |"
echo "|---|---|---|---|---|"
none=$(col none 1) plain=$(col plain 1) irq=$(col irq 1) floor=$(col floor 1)
printf '| Throughput | %.2f Gbit/s | %.2f Gbit/s (%.3f) | %.2f Gbit/s (%.3f) | %.2f Gbit/s (%.3f) |\n' \
	"$none" "$plain" "$(echo "$plain / $none" | bc -l)" "$irq" "$(echo "$irq / $none" | bc -l)" \
	"$floor" "$(echo "$floor / $none" | bc -l)"
printf '| Softirqs per second per CPU | %.0f | %.0f | %.0f | %.0f |\n' \
	"$(echo "$(col none 3) / $SECS / $NCPU" | bc -l)" \
	"$(echo "$(col plain 3) / $SECS / $NCPU" | bc -l)" \
	"$(echo "$(col irq 3) / $SECS / $NCPU" | bc -l)" \
	"$(echo "$(col floor 3) / $SECS / $NCPU" | bc -l)"
printf '| BPF CPU time | - | %.2f %% of a CPU | %.2f %% of a CPU | %.2f %% of a CPU |\n' \
	"$(echo "$(col plain 2) / $SECS / 10000000" | bc -l)" \
	"$(echo "$(col irq 2) / $SECS / 10000000" | bc -l)" \
	"$(echo "$(col floor 2) / $SECS / 10000000" | bc -l)"
printf '| Interrupt programs per softirq | | | %.0f ns | %.0f ns |\n' \
	"$(echo "$(col irq 4) / $(col irq 3)" | bc -l)" "$(echo "$(col floor 4) / $(col floor 3)" | bc -l)"
printf '| --irq throughput / without | | | %.3f | |\n' "$(echo "$irq / $plain" | bc -l)"
echo
echo "Linux $(uname -r), $NCPU CPUs; target: --irq under 3 % of one CPU with 4 events. Per"
echo "softirq: the run time of the programs on the interrupt tracepoints (cgtma's or the"
echo "floor's) over the softirqs counted in /proc/softirqs."
exit 0
