#!/bin/bash
# make bench: cgtma's own CPU time per interval and the kernel memory it adds, against
# possible CPUs and events, in one table. tests/live/32-kernel-memory.sh measures them (its
# "bench:" line) on this machine and in the kernel matrix's guests of 2 online CPUs and 64
# or 240 possible (QEMU's -smp 2,maxcpus=N: per-CPU maps and their reads cover every
# possible CPU), once with 4 events and once with 62 (an Intel level-3 model's count), each
# in a fresh boot: the kernel's percpu allocator keeps what a run populated, so only a first
# run shows the fixed part whole. Per row and events: cgtma's CPU per interval at -I 300
# tracking 8 and 208 cgroups (user + system, the BPF load left out), the fixed kernel memory
# (what it adds whatever it tracks: the per-CPU maps, the perf events, the program) and the
# memory per tracked cgroup. Under TCG the guests' times are the emulator's: compare them
# with each other, not with this machine's. Prints the figures, and never fails on them.
#   tests/bench/kmem.sh BUILD_DIR
#   CGTMA_BENCH_KMEM_ROWS   host (this machine, the live test run here) and the matrix's
#                           rows (tests/vm/lib.sh)
#                           [host 6.1-cpus64 6.1-cpus240 5.10-cpus240]
build=${1:-build}
src=$(cd "$(dirname "$0")/../.." && pwd)
rows=${CGTMA_BENCH_KMEM_ROWS-host 6.1-cpus64 6.1-cpus240 5.10-cpus240}
cache=${CGTMA_VMTEST_CACHE:-/var/cache/cgtma-vmtest}
log_all=$(mktemp) && log_host=$(mktemp) || exit 1
trap 'rm -f "$log_all" "$log_host"' EXIT
lines=()
for ev in 4 62; do
	guests=${rows//host/}
	if [ -n "${guests// /}" ]; then
		# shellcheck disable=SC2086 # the rows are words
		CGTMA_KMEM_EVENTS=$ev "$src/tests/vm/test-kernels.sh" -b "$build" -t 32 $guests \
			>"$log_all" 2>&1
	fi
	for row in $rows; do
		log=$cache/results/$row/out/tests/32-kernel-memory.log
		if [ "$row" = host ]; then
			log=$log_host
			CGTMA_BUILD=$build CGTMA_KMEM_EVENTS=$ev bash "$src/tests/live/32-kernel-memory.sh" \
				>"$log" 2>&1
		fi
		if line=$(grep -h '^bench: ' "$log" 2>/dev/null); then
			lines+=("row=$row ${line#bench: }")
		else
			lines+=("row=$row events=$ev not measured: $(tail -n 1 "$log" 2>/dev/null ||
				tail -n 1 "$log_all")")
		fi
	done
done
echo "cgtma's CPU per interval (-I 300) and kernel memory, by possible CPUs and events"
echo "(tests/live/32-kernel-memory.sh; 2 CPUs online in the guests):"
fmt='| %-12s | %-8s | %-6s | %-16s | %-18s | %-10s | %-18s |\n'
# shellcheck disable=SC2059 # the format is ours
printf "$fmt" row possible events "CPU, 8 tracked" "CPU, 208 tracked" fixed "per tracked cgroup"
echo "|--------------|----------|--------|------------------|--------------------|------------|--------------------|"
printf '%s\n' "${lines[@]}" | awk -v fmt="$fmt" '
	function f(k) { return (k in v) ? v[k] : "?" }
	{
		delete v
		for (i = 1; i <= NF; i++) if (split($i, kv, "=") == 2) v[kv[1]] = kv[2]
		if (/ not measured: /) {
			sub(/^.* not measured: /, "")
			printf "| %-12s | %-8s | %-6s | not measured: %s\n", v["row"], "", v["events"], $0
			next
		}
		printf fmt, v["row"], f("possible"),
			f("events"), f("ucpu_few_ms") " ms", f("ucpu_all_ms") " ms",
			sprintf("%.1f MB", f("fixed_kb") / 1000), f("per_cgroup_kb") " kB"
	}' | sort -t'|' -k3,3n -k2,2 -k4,4n
