#!/bin/bash
# The two layouts of the per-cgroup maps, and why the older one is the rule before 6.1.
# CGTMA_MAP_ALLOC=prealloc (the layout cgtma picks before Linux 6.1) counts exactly N
# getppid() calls in cgroup A on every kernel, and -v says which layout and size are in use.
# CGTMA_MAP_ALLOC=runtime then shows the kernel's rule: before 6.1 a PREEMPT_RT kernel's
# verifier refuses run-time allocated maps in the raw tracepoint program (cgtma exits 1 and
# says why; -v shows the verifier's line), a non-RT kernel before 6.1 loads them but logs its
# "uses run-time allocation" WARNING (checked only with CGTMA_PROVOKE_WARNING=1: the kernel
# matrix fails a kernel that logs a WARNING); from 6.1 on, runtime is the default and counts
# exactly.
. "$(dirname "$0")/lib.sh"

EV=syscalls:sys_enter_getppid
N=50000
cg_make A
A=$(cg_path A)

# count_case ALLOC: cgtma with CGTMA_MAP_ALLOC=ALLOC must count exactly N for A; its -v
# lines are left in $TMP/err.
count_case() {
	local alloc=$1 out=$TMP/out-$1 got
	CGTMA_MAP_ALLOC=$alloc cgtma_start "$out" 1 -v -e "$EV" -I 200 --json -G "$A" \
		--switch-hook tracepoint
	cg_run A "$WORKLOAD" getppid $N 20 || fail "the workload failed"
	cgtma_more "$out"
	cgtma_signal INT "$alloc"
	got=$(cgroup_sum "$out" "$A" "$EV")
	[ "$got" = "$N" ] || fail "$alloc: A counted $got getppid calls, want exactly $N"
	echo "ok: CGTMA_MAP_ALLOC=$alloc counts exactly $N"
}

count_case prealloc
grep -q '^cgtma: BPF: per-cgroup maps preallocated, 1024 entries$' "$TMP/err" ||
	fail "-v does not say the maps are preallocated: $(grep 'per-cgroup maps' "$TMP/err")"

release=$(uname -r)
rt=0
[ "$(cat /sys/kernel/realtime 2>/dev/null)" = 1 ] && rt=1
if kernel_at_least 6 1; then
	count_case runtime
	grep -q '^cgtma: BPF: per-cgroup maps allocated as cgroups come, 16384 entries$' \
		"$TMP/err" || fail "-v does not say the maps are allocated at run time"
	echo "ok: Linux $release (6.1+): both layouts count exactly"
elif [ $rt = 1 ]; then
	CGTMA_MAP_ALLOC=runtime "$CGTMA" -v -e "$EV" -d 0.2 --switch-hook tracepoint \
		>/dev/null 2>"$TMP/err-runtime"
	rc=$?
	[ $rc -eq 1 ] || fail "runtime maps on $release (PREEMPT_RT): exit $rc, want 1"
	grep -q 'trace type programs can only use preallocated hash map' "$TMP/err-runtime" ||
		fail "the verifier's log does not name the rule: $(tail -n 5 "$TMP/err-runtime")"
	grep -q 'before Linux 6.1, PREEMPT_RT kernels and perf-event programs accept only preallocated' \
		"$TMP/err-runtime" || fail "cgtma's message does not say why: $(tail -n1 "$TMP/err-runtime")"
	echo "ok: Linux $release (PREEMPT_RT before 6.1) refuses run-time allocated maps, and cgtma says why"
elif [ -n "${CGTMA_PROVOKE_WARNING:-}" ]; then
	count_case runtime
	dmesg | grep -q 'trace type BPF program uses run-time allocation' ||
		fail "Linux $release (before 6.1): no 'uses run-time allocation' warning in dmesg"
	echo "ok: Linux $release (before 6.1) warns about run-time allocated maps: preallocated is the rule"
else
	# The kernel's answer is a WARNING in its log, which the kernel matrix (rightly) counts
	# as trouble: shown once (docs/kernels.md, "Maps"), and again only when asked for.
	echo "ok: Linux $release (before 6.1, not RT): run-time allocated maps not tried, as they" \
		"log a kernel WARNING (CGTMA_PROVOKE_WARNING=1 tries them)"
fi
