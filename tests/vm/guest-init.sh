#!/bin/bash
# PID 1 of a test guest (tests/vm/initramfs-init starts it from the shared checkout at
# /cgtma). Sets the machine up as a systemd-less Debian would be at boot, with the cgroup
# layout this row asks for, runs the live tests (or the one check of a machine without
# cgroup v2), writes what happened to /results and powers off.
#
# /results/guest.conf (written by the host) gives ROW, LAYOUT (v2, hybrid, v1), MODE (suite
# or nocgroup2), BUILD (the build directory, relative to the checkout), TESTS (test
# scripts, relative; empty for all), EMULATION (tcg; tcg-icount on the arm64 rows, QEMU run
# with -icount shift=0; or empty under KVM), ATTACH_ROUNDS (CGTMA_ATTACH_ROUNDS for
# 27-attach-churn), KMEM_EVENTS (CGTMA_KMEM_EVENTS for 32-kernel-memory), LOADED_RUNS
# (CGTMA_LOADED_RUNS for 52-loaded), LIVE_TIMEOUT (CGTMA_LIVE_TIMEOUT) and LIVE_TRACE
# (CGTMA_LIVE_TRACE: each test's timed trace beside its log), empty for their defaults.
#
# What it writes: uname, uname-v, preempt, paranoid, memlock, live.log (tests/run-live.sh's
# output), tests/NAME.log (each test's whole output; NAME.trace with LIVE_TRACE) and rc, or
# check.cmd/.out/.err/.rc; dmesg; error when the set-up failed; done last.
# Left alone on purpose: kernel.perf_event_paranoid (Debian's kernels default it to 3, the
# tests check the permission messages) and the resource limits (the kernel's defaults:
# 64 KiB of locked memory, which pre-5.11 kernels charge BPF maps to).
set -u
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8
R=/results
cd /

say() { echo "cgtma guest: $*"; }
# A set-up failure: say it on the console and in $R/error, and end the boot without tests.
setup_failed() {
	say "$*"
	echo "$*" >>$R/error
	finish
}
finish() {
	dmesg >$R/dmesg 2>&1
	echo 'done' >$R/done
	sync
	umount $R 2>/dev/null
	echo o >/proc/sysrq-trigger
	sleep 30
	exit 1
}

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mountpoint -q /dev || mount -t devtmpfs devtmpfs /dev
# systemd makes these; bash's process substitution needs /dev/fd.
ln -sfn /proc/self/fd /dev/fd
ln -sfn /proc/self/fd/0 /dev/stdin
ln -sfn /proc/self/fd/1 /dev/stdout
ln -sfn /proc/self/fd/2 /dev/stderr
mkdir -p /dev/pts /dev/shm
mount -t devpts -o gid=5,mode=620,ptmxmode=000 devpts /dev/pts
mount -t tmpfs -o mode=1777 tmpfs /dev/shm
mount -t tmpfs -o mode=755 tmpfs /run
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
mount -t debugfs debugfs /sys/kernel/debug
mount -t bpf -o mode=700 bpf /sys/fs/bpf

[ -r $R/guest.conf ] || setup_failed "no $R/guest.conf from the host"
. $R/guest.conf

echo "cgtma-${ROW//./-}" >/proc/sys/kernel/hostname
ip link set lo up || setup_failed "cannot bring the loopback interface up"

# The cgroup mounts. v2: cgroup2 at /sys/fs/cgroup with every controller on at the root,
# as systemd leaves it. hybrid: systemd's hybrid mode, as on the dev VM: a tmpfs there,
# cgroup2 at unified/, v1 hierarchies beside it (cpu and cpuacct as links to the joint
# one). v1: the same without cgroup2 at all.
CG=/sys/fs/cgroup
v1_hierarchies() {
	mount -t tmpfs -o mode=755 tmpfs $CG || setup_failed "cannot mount a tmpfs at $CG"
	local h
	for h in cpu,cpuacct memory pids; do
		mkdir -p $CG/$h && mount -t cgroup -o $h cgroup $CG/$h ||
			setup_failed "cannot mount the cgroup v1 hierarchy $h"
	done
	ln -s cpu,cpuacct $CG/cpu && ln -s cpu,cpuacct $CG/cpuacct
	mkdir -p $CG/systemd && mount -t cgroup -o none,name=systemd cgroup $CG/systemd ||
		setup_failed "cannot mount the named cgroup v1 hierarchy systemd"
}
case $LAYOUT in
v2)
	mount -t cgroup2 -o nsdelegate cgroup2 $CG || setup_failed "cannot mount cgroup2 at $CG"
	for c in $(cat $CG/cgroup.controllers); do
		echo "+$c" >$CG/cgroup.subtree_control 2>/dev/null || say "controller $c: cannot enable it"
	done
	;;
hybrid)
	v1_hierarchies
	mkdir -p $CG/unified && mount -t cgroup2 -o nsdelegate cgroup2 $CG/unified ||
		setup_failed "cannot mount cgroup2 at $CG/unified"
	;;
v1) v1_hierarchies ;;
*) setup_failed "LAYOUT '$LAYOUT': expected v2, hybrid or v1" ;;
esac

# The booted kernel's modules (the 9p share the initramfs mounted), for modprobe.
[ -r "/lib/modules/$(uname -r)/modules.dep" ] || say "no /lib/modules/$(uname -r)/modules.dep"
uname -r >$R/uname
uname -v >$R/uname-v
# The preemption mode in force: "none (voluntary) full" on a PREEMPT_DYNAMIC kernel.
[ -r /sys/kernel/debug/sched/preempt ] && cat /sys/kernel/debug/sched/preempt >$R/preempt
sysctl -n kernel.perf_event_paranoid >$R/paranoid
ulimit -l >$R/memlock
say "$(uname -r), $LAYOUT cgroups, paranoid $(cat $R/paranoid), memlock $(cat $R/memlock) KiB, preempt $(cat $R/preempt 2>/dev/null || echo n/a)"

[ -n "$EMULATION" ] && export CGTMA_EMULATION=$EMULATION
[ -n "${ATTACH_ROUNDS:-}" ] && export CGTMA_ATTACH_ROUNDS=$ATTACH_ROUNDS
[ -n "${KMEM_EVENTS:-}" ] && export CGTMA_KMEM_EVENTS=$KMEM_EVENTS
[ -n "${LOADED_RUNS:-}" ] && export CGTMA_LOADED_RUNS=$LOADED_RUNS
[ -n "${LIVE_TIMEOUT:-}" ] && export CGTMA_LIVE_TIMEOUT=$LIVE_TIMEOUT
[ -n "${LIVE_TRACE:-}" ] && export CGTMA_LIVE_TRACE=$LIVE_TRACE
cd /cgtma || setup_failed "no /cgtma"
case $MODE in
suite)
	say "tests/run-live.sh $BUILD ${TESTS:-(all)}"
	# shellcheck disable=SC2086
	# Under TCG a test takes minutes: the tracepoint reruns are the four exact tests of
	# attribution, moves and flushes (the host runs them all).
	CGTMA_LIVE_RERUN="10-attribution 12-cpu-stat 13-lifecycle 17-flush-nesting" \
		CGTMA_LIVE_LOG_DIR=$R/tests tests/run-live.sh "/cgtma/$BUILD" $TESTS 2>&1 | tee $R/live.log
	echo "${PIPESTATUS[0]}" >$R/rc
	;;
nocgroup2)
	# The whole machine is counted without cgroup v2; -G needs it, and must say so.
	check=("$BUILD/cgtma" -e cpu-clock -I 100 -d 1 -G /)
	echo "${check[*]}" >$R/check.cmd
	say "${check[*]} (no cgroup2 mounted)"
	timeout 60 "/cgtma/${check[0]}" "${check[@]:1}" >$R/check.out 2>$R/check.err
	echo $? >$R/check.rc
	say "exit $(cat $R/check.rc), stderr: $(cat $R/check.err)"
	;;
*) setup_failed "MODE '$MODE': expected suite or nocgroup2" ;;
esac
cd /
finish
