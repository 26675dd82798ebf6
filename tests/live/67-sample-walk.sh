#!/bin/bash
# --sample's user stacks, walked by frame pointers. spinfn deep spins in user space under 40
# calls of descend(), spinfn deepsys calls getppid() in a loop under them (most of its
# samples are taken in the kernel, where the user stack starts at the registers the syscall
# saved): every sample with descend() in its stack must have main() and then exactly those
# 40 frames.
# On x86 the sampling program walks the user stack itself (sample.bpf.c's walk_user(): from
# the context's registers, or in the kernel from bpf_task_pt_regs(), Linux 5.15+), and ends
# where the next frame pointer is 0 or lies below the last frame; the kernel's own walk reads
# the frame its last pointer names whatever it holds, and faults, at every sample. The
# kernel's page faults are counted per cgroup in the same run (exceptions:page_fault_kernel):
# a spinner that runs already faults in the kernel seldom, so at most a tenth of its samples
# may come with one, where the kernel's walk brings one each. Kernel frames are named by the
# kernel (bpf_snprintf()'s %ps, 5.13+), not from /proc/kallsyms. And -v says what loading the
# sampling program cost.
. "$(dirname "$0")/lib.sh"

SPINFN=${CGTMA_BUILD:-build}/tests/spinfn
[ -x "$SPINFN" ] || fail "no $SPINFN: build first (make $SPINFN)"
HZ=999
DEPTH=40
sample_rate_or_skip $HZ

x86=
if [ "$(uname -m)" = x86_64 ] && [ -d "$TRACEFS/events/exceptions/page_fault_kernel" ]; then
	x86=1
fi

# run MODE [-v]: cgtma samples a cgroup of its own for three intervals of 1 s while spinfn MODE
# spins in it; JSON in $TMP/MODE, --folded in $TMP/MODE.folded, stderr in $TMP/MODE.err
# (nothing but marks without -v). The spinner runs before
# cgtma starts and until it has stopped: a frame-pointer walk misses a frame in a function's
# prologue and epilogue (the frame pointer not yet, or no longer, its own), and the descent
# into descend() and the return from it are not sampled that way (one sample in a few runs
# on the 6.12 guest had 39 frames, taken where the spinner entered or left spin_deep()). Its
# exec is not either, nor its page faults.
run() {
	local mode=$1 verbose=${2:-} events=cpu-clock
	[ -n "$x86" ] && events=cpu-clock,exceptions:page_fault_kernel
	cg_make "$mode"
	spinner_running "$mode" "$mode"
	cgtma_start "$TMP/$mode" 3 -G "$(cg_path "$mode")" -e $events --sample=cpu-clock \
		-F $HZ --folded "$TMP/$mode.folded" -I 1000 -j $verbose
	if [ -n "$verbose" ]; then
		cgtma_signal INT "$mode"
	else
		cgtma_stop "$mode"
	fi
	cp "$TMP/err" "$TMP/$mode.err"
	spinner_stop
}
# samples MODE [whole|kernel]: the cgroup's samples with descend() in their stack; with
# "whole", those whose frames after main() are exactly DEPTH x descend (and then what the
# spinner is in: its own frame, libc's syscall(), the vDSO's clock, the kernel's frames);
# with "kernel", those taken in a syscall (do_syscall_64: x86's); with "broken", prints the
# stacks that have descend() without the whole chain, each after its count.
samples() {
	awk -v scope="$(cg_path "$1")" -v depth=$DEPTH -v only="${2:-}" '{
		n = $NF; sub(/ [0-9]+$/, ""); k = split($0, f, ";")
		if (f[1] != scope) next
		for (m = 2; m <= k && f[m] != "main"; m++) ;
		for (d = 0; m + d + 1 <= k && f[m + d + 1] == "descend"; d++) ;
		has = 0
		for (i = 2; i <= k; i++) has = has || f[i] == "descend"
		if (!has) next
		if (only == "whole" && (m > k || d != depth)) next
		if (only == "broken") { if (m <= k && d == depth) next; print n " " $0; next }
		if (only == "kernel") {
			sys = 0
			for (i = 2; i <= k; i++) sys = sys || f[i] == "do_syscall_64"
			if (!sys) next
		}
		c += n
	} END { if (only != "broken") print c + 0 }' "$TMP/$1.folded"
}
# check MODE: every sample in descend() has its whole chain; on x86, few page faults.
check() {
	local mode=$1 all whole faults
	all=$(samples "$mode") whole=$(samples "$mode" whole)
	[ "$all" -gt 0 ] || fail "$mode: no sample in descend(): $(head -c 600 "$TMP/$mode.folded")"
	[ "$whole" = "$all" ] ||
		fail "$mode: $((all - whole)) of $all samples in descend() lack main() and $DEPTH descend() frames: $(samples "$mode" broken | head -5)"
	echo "$mode: $all samples in descend(), each with main() and $DEPTH descend() frames"
	[ -n "$x86" ] || return 0
	faults=$(cgroup_sum "$TMP/$mode" "$(cg_path "$mode")" exceptions:page_fault_kernel)
	if [ "$mode" = deepsys ] && ! kernel_at_least 5 15; then
		not_checked "$mode: the page faults of its walks" "$faults for $all samples: before Linux 5.15 (no bpf_task_pt_regs()) the kernel walks the user stack of a sample taken in the kernel"
		return 0
	fi
	[ $((faults * 10)) -le "$all" ] ||
		fail "$mode: $faults page faults in the kernel for $all samples: the user stack's walk reads past its last frame"
	echo "$mode: $faults page faults in the kernel (the kernel's walk: one a sample)"
}

run deep
check deep
run deepsys -v
check deepsys
if [ -n "$x86" ]; then
	in_kernel=$(samples deepsys kernel)
	[ "$in_kernel" -gt 0 ] ||
		fail "deepsys: no sample taken in a syscall: $(sort -k2 -nr "$TMP/deepsys.folded" | head -3)"
	echo "deepsys: $in_kernel samples taken in a syscall"
fi

# Its kernel frames (named above: do_syscall_64) were named by the kernel itself where it has
# bpf_snprintf() (Linux 5.13+), each address once, without reading /proc/kallsyms whole;
# before, from /proc/kallsyms. -v says which, and how many.
said=$(sed -n 's/.*--sample: naming frames .*; kernel frames: //p' "$TMP/deepsys.err")
if kernel_at_least 5 13; then
	want='addresses named by the kernel'
else
	want='symbols read from /proc/kallsyms'
fi
[[ "$said" =~ ^[1-9][0-9]*\ "$want"$ ]] ||
	fail "deepsys: -v said \"kernel frames: $said\", want N $want"
echo "deepsys: kernel frames: $said"

# -v says what the sampler's load cost, as it says the counting programs'.
"$CGTMA" -v -G "$(cg_path deep)" --sample=cpu-clock -I 200 -d 0.2 2>&1 >/dev/null |
	grep -q '^cgtma: --sample: BPF: loaded in [0-9.]* s; verified instructions: sample0' ||
	fail "-v did not say the sampling program's load"
