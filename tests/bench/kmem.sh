#!/bin/bash
# make bench: kernel memory per tracked cgroup on this machine, as tests/live/32-kernel-memory.sh
# measures it (Percpu + SUnreclaim + VmallocUsed of /proc/meminfo that cgtma adds, tracking 8
# and then 208 cgroups; the slope is per tracked cgroup), with 4 and with 62 events. Prints
# the figures, and never fails on them. Beside them, cgtma's own CPU time per interval in the
# same runs (user + system; the "ucpu:" lines). For many possible CPUs, run that test in the
# kernel matrix's rows with maxcpus=240 (tests/vm/lib.sh): make test-kernels
# KERNELS="5.10-cpus240 6.1-cpus240" TESTS=32 (62 events: the guests do not take
# CGTMA_KMEM_EVENTS).
#   tests/bench/kmem.sh BUILD_DIR
build=${1:-build}
live=$(cd "$(dirname "$0")/../live" && pwd)
echo "Kernel memory per tracked cgroup (tests/live/32-kernel-memory.sh; possible CPUs" \
	"$(cat /sys/devices/system/cpu/possible)):"
for ev in 4 62; do
	out=$(CGTMA_BUILD=$build CGTMA_KMEM_EVENTS=$ev bash "$live/32-kernel-memory.sh" 2>&1)
	if line=$(grep '^kmem:' <<<"$out"); then
		echo "  ${line#kmem: }"
		line=$(grep '^ucpu:' <<<"$out") && echo "  ${line#ucpu: }"
	else
		echo "  $ev events: not measured: $(tail -n 1 <<<"$out")"
	fi
done
