#!/bin/bash
# Kernel memory per tracked cgroup does not grow with the CPUs (bpf/charge.bpf.h: one value
# per cgroup in cgroup_counts, added to atomically; per CPU only with -A). With 62 events (an
# Intel level-3 model's count; syscall tracepoints stand in) cgtma runs three times over the
# same 208 cgroups: tracking all 208, then 8 of them, then all 208 again. The kernel memory
# it adds is Percpu + SUnreclaim + VmallocUsed of /proc/meminfo while it runs, less the same
# just before it started. Then:
#  - with 208, the first run: at most 64 MB in all. The kernel's percpu allocator keeps the
#    pages it populated for a run (for the next one), so only a first run shows the per-CPU
#    maps' whole cost: in a freshly booted machine (the kernel matrix's rows, this test
#    alone), the figure is all of it; after other runs, less;
#  - per tracked cgroup, the slope between the two later runs, (with 208 - with 8) / 200, at
#    most 16 kB (both find the same pages populated);
#  - every run counts exactly: N getppid() calls in the first cgroup, and in the runs of 208
#    M more in the last one.
# The fixed part, what cgtma adds whatever it tracks (the per-CPU maps sized by the events,
# the perf events, the program), is the first run's figure less 208 times the slope.
# The bounds are made for machines of many possible CPUs (the kernel matrix's rows with
# maxcpus=240: 2 CPUs online, 240 possible); they hold on any. The figures are printed as
# "kmem: ..." lines (make bench prints them), and beside them cgtma's own CPU time per
# interval in each run (the time its threads ran, /proc/PID/task/*/schedstat), "ucpu: ..."
# lines: over the intervals between its second line and its last before the stop (at least
# 3 s), so that the BPF load is left out. tests/bench/kmem.sh tabulates the "bench:" line.
# /proc/meminfo is the whole machine's: whatever else runs moves it too (a build beside the
# test moved it by 14 MB, 70 kB per cgroup over 200). From Linux 6.4 the kernel says what each
# BPF map uses (fdinfo's memlock, bpf_map_memory_usage(): entries as they come), so there
# the slope is also taken from cgtma's own maps, which nothing else moves, and the bound
# applies to that one; before 6.4 memlock is the maps' full size whatever they hold, and the
# bound applies to meminfo's slope (the matrix's guests run nothing else).
#   CGTMA_KMEM_EVENTS   events [62]
. "$(dirname "$0")/lib.sh"

NR_EV=${CGTMA_KMEM_EVENTS:-62}
NR_CG=208 NR_FEW=8
N=20000 M=30000
MAX_SLOPE_KB=16 MAX_TOTAL_MB=64

tracepoint_or_skip syscalls/sys_enter_getppid
EV=syscalls:sys_enter_getppid
# cpu-clock, getppid, and as many other syscall entries as make NR_EV.
syscall_events_or_skip $((NR_EV - 1)) $EV
EVENTS=cpu-clock,$syscall_events

cgs=()
for ((i = 0; i < NR_CG; i++)); do printf -v c 'c%03d' $i && cgs+=("$c"); done
cg_make "${cgs[@]}"
FIRST=$(cg_path c000) LAST=$(cg_path "$(printf 'c%03d' $((NR_CG - 1)))")

# kmem: Percpu + SUnreclaim + VmallocUsed in kB.
kmem() { awk '/^(Percpu|SUnreclaim|VmallocUsed):/ { s += $2 } END { print s }' /proc/meminfo; }

# maps_kb PID: what the BPF maps PID holds use, in kB (fdinfo's memlock). Read by the shell:
# cgtma holds some 150 fds, and a grep and an awk for each took a minute under emulation.
maps_kb() {
	local f b=0 k v map m

	for f in /proc/"$1"/fdinfo/*; do
		map=0 m=0
		while read -r k v _; do
			case $k in
			map_type:) map=1 ;;
			memlock:) m=$v ;;
			esac
		done 2>/dev/null <"$f"
		((map)) && b=$((b + m))
	done
	echo $((b / 1024))
}
own_maps=0
kernel_at_least 6 4 && own_maps=1

# cpu_ms PID: the time the process's threads have run so far, in ms.
cpu_ms() { cat /proc/"$1"/task/*/schedstat | awk '{ s += $1 } END { print s / 1000000 }'; }

# measure NAME -G...: kernel memory cgtma adds tracking those cgroups (kB, in $added), with
# exact counts; cgtma's CPU time per interval meanwhile (ms, in $ucpu).
measure() {
	local name=$1 out=$TMP/out-$1 before after got c0 l0 c1 l1
	shift
	# What the last run freed is given back by deferred work (RCU, the percpu allocator).
	sleep 2
	before=$(kmem)
	cgtma_start "$out" 0 -e "$EVENTS" -I 300 --json --switch-hook tracepoint "$@"
	wait_lines "$out" 2 60
	c0=$(cpu_ms $cgtma_pid) l0=$(wc -l <"$out")
	# The 3 s at least of the CPU figure go by while the workloads run (seconds under
	# emulation), not before them.
	sleep 3 &
	local three=$!
	cg_run c000 "$WORKLOAD" getppid $N 20 || fail "the workload failed"
	[ "$name" = all ] &&
		{ cg_run "${LAST##*/}" "$WORKLOAD" getppid $M 20 || fail "the workload failed"; }
	wait $three
	cgtma_more "$out" 2 60
	c1=$(cpu_ms $cgtma_pid) l1=$(wc -l <"$out")
	ucpu=$(awk -v a="$c0" -v b="$c1" -v n=$((l1 - l0)) 'BEGIN { printf "%.2f ms per interval (%d intervals)", (b - a) / n, n }')
	after=$(kmem) maps=$(maps_kb $cgtma_pid)
	cgtma_signal INT "$name"
	added=$((after - before))
	got=$(cgroup_sum "$out" "$FIRST" "$EV")
	[ "$got" = "$N" ] || fail "$name: $FIRST counted $got getppid calls, want exactly $N"
	if [ "$name" = all ]; then
		got=$(cgroup_sum "$out" "$LAST" "$EV")
		[ "$got" = "$M" ] || fail "$name: $LAST counted $got getppid calls, want exactly $M"
	fi
}

few=()
for ((i = 0; i < NR_FEW; i++)); do few+=(-G "$(cg_path "$(printf 'c%03d' $i)")"); done
measure all -G "/$CG_BASE/c*"
first_kb=$added
measure few "${few[@]}"
few_kb=$added few_ucpu=$ucpu few_maps=$maps
measure all -G "/$CG_BASE/c*"
all_kb=$added all_ucpu=$ucpu all_maps=$maps
slope=$(awk -v a="$all_kb" -v f="$few_kb" -v n=$((NR_CG - NR_FEW)) 'BEGIN { printf "%.1f", (a - f) / n }')
maps_slope=$(awk -v a="$all_maps" -v f="$few_maps" -v n=$((NR_CG - NR_FEW)) 'BEGIN { printf "%.1f", (a - f) / n }')
fixed_kb=$(awk -v a="$first_kb" -v s="$slope" -v n=$NR_CG 'BEGIN { printf "%.0f", a - n * s }')
cpus=$(cat /sys/devices/system/cpu/possible)
# ncpus FILE: how many CPUs a list of ranges (0-1,4) names.
ncpus() { tr ',' '\n' <"$1" | awk -F- '{ n += ($2 == "" ? 1 : $2 - $1 + 1) } END { print n }'; }
echo "kmem: $NR_EV events, possible CPUs $cpus, Linux $(uname -r):" \
	"$first_kb kB with $NR_CG cgroups (the first run); then $few_kb kB with $NR_FEW," \
	"$all_kb kB with $NR_CG: $slope kB per tracked cgroup; fixed part $fixed_kb kB"
echo "bench: possible=$(ncpus /sys/devices/system/cpu/possible)" \
	"online=$(ncpus /sys/devices/system/cpu/online) linux=$(uname -r) events=$NR_EV" \
	"fixed_kb=$fixed_kb per_cgroup_kb=$slope first_kb=$first_kb" \
	"ucpu_few_ms=${few_ucpu%% *} ucpu_all_ms=${all_ucpu%% *}"
echo "ucpu: $NR_EV events, possible CPUs $cpus, -I 300: cgtma's CPU $few_ucpu tracking" \
	"$NR_FEW cgroups, $all_ucpu tracking $NR_CG"
echo "maps: $few_maps kB in cgtma's BPF maps with $NR_FEW, $all_maps kB with $NR_CG:" \
	"$maps_slope kB per tracked cgroup ($( ((own_maps)) && echo "as used, Linux 6.4+" ||
		echo "their full size, before Linux 6.4"))"
if ((own_maps)); then
	awk -v s="$maps_slope" -v m=$MAX_SLOPE_KB 'BEGIN { exit !(s <= m) }' ||
		fail "$maps_slope kB more in cgtma's BPF maps per tracked cgroup, want at most $MAX_SLOPE_KB"
	slope=$maps_slope
else
	awk -v s="$slope" -v m=$MAX_SLOPE_KB 'BEGIN { exit !(s <= m) }' ||
		fail "$slope kB more kernel memory per tracked cgroup, want at most $MAX_SLOPE_KB"
fi
((first_kb <= MAX_TOTAL_MB * 1000)) ||
	fail "$first_kb kB of kernel memory with $NR_CG cgroups, want at most $MAX_TOTAL_MB MB"
echo "ok: exact counts; per tracked cgroup $slope kB (<= $MAX_SLOPE_KB), with $NR_CG" \
	"$first_kb kB (<= $MAX_TOTAL_MB MB)"
