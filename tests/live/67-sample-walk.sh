#!/bin/bash
# --sample's user stacks, walked by frame pointers. spinfn deep spins under 40 calls of
# descend(): every sample with spin_deep() in its stack must have main() and then exactly
# those 40 frames below it.
# On x86 the sampling program walks the stack of a sample taken in user mode itself
# (sample.bpf.c's walk_user()), and ends where the next frame pointer is 0 or lies below the
# last frame; the kernel's own walk reads the frame its last pointer names whatever it holds,
# and faults, at every sample. The kernel's page faults are counted per cgroup in the same run
# (exceptions:page_fault_kernel): a spinner faults in the kernel only while it starts (exec,
# the dynamic loader), so at most a tenth of its samples may come with one, where the
# kernel's walk brings one each. And -v says what loading the sampling program cost.
. "$(dirname "$0")/lib.sh"

SPINFN=${CGTMA_BUILD:-build}/tests/spinfn
[ -x "$SPINFN" ] || fail "no $SPINFN: build first (make $SPINFN)"
HZ=999
DEPTH=40
sample_rate_or_skip $HZ

events=cpu-clock
if [ "$(uname -m)" = x86_64 ] && [ -d "$TRACEFS/events/exceptions/page_fault_kernel" ]; then
	events=cpu-clock,exceptions:page_fault_kernel
fi

cg_make D
# It waits for the first interval to end: from then on, sampling is on.
cgtma_start "$TMP/out" 1 -G "$(cg_path D)" -e $events --sample=cpu-clock -F $HZ \
	--folded "$TMP/folded" -I 2500 -j
cg_start D "$SPINFN" deep 2000
cg_wait
# The interval the spinner ended in has been printed.
wait_lines "$TMP/out" 3
cgtma_stop

scope=$(cg_path D)
# deep [whole]: D's samples with spin_deep in their stack; with "whole", those whose frames
# from main() on are main, DEPTH x descend and spin_deep, and then only what spin_deep calls
# (clock_gettime in the vDSO) or the kernel's frames of an interrupt in it.
deep() {
	awk -v scope="$scope" -v depth=$DEPTH -v whole="${1:-}" '{
		n = $NF; sub(/ [0-9]+$/, ""); k = split($0, f, ";")
		if (f[1] != scope) next
		for (s = 2; s <= k && f[s] != "spin_deep"; s++) ;
		if (s > k) next
		if (whole == "") { c += n; next }
		if (s - depth - 1 < 2 || f[s - depth - 1] != "main") next
		for (i = s - depth; i < s; i++) if (f[i] != "descend") next
		c += n
	} END { print c + 0 }' "$TMP/folded"
}
all=$(deep) whole=$(deep whole)
[ "$all" -gt 0 ] || fail "no sample in spin_deep: $(head -c 600 "$TMP/folded")"
[ "$whole" = "$all" ] ||
	fail "$((all - whole)) of $all samples in spin_deep lack main() and $DEPTH descend() frames below it: $(grep spin_deep "$TMP/folded" | awk -F';' '{ print NF - 1 " frames: " substr($0, 1, 200) }' | sort | uniq -c | sort -nr | head -5)"
echo "$all samples in spin_deep, each with main() and $DEPTH descend() frames"

# -v says what the sampler's load cost, as it says the counting programs'.
"$CGTMA" -v -G "$scope" --sample=cpu-clock -I 200 -d 0.2 2>&1 >/dev/null |
	grep -q '^cgtma: --sample: BPF: loaded in [0-9.]* s; verified instructions: sample0' ||
	fail "-v did not say the sampling program's load"

if [ "$events" = cpu-clock ]; then
	not_checked "the kernel's page faults of the walk" "no exceptions:page_fault_kernel (not x86); the kernel walks the user stack here"
	exit 0
fi
samples=$(awk -v scope="$scope" -F';' '$1 == scope { n = $NF; sub(/.* /, "", n); c += n } END { print c + 0 }' "$TMP/folded")
faults=$(cgroup_sum "$TMP/out" "$scope" exceptions:page_fault_kernel)
[ $((faults * 10)) -le "$samples" ] ||
	fail "$faults page faults in the kernel for $samples samples: the user stack's walk reads past its last frame"
echo "$samples samples, $faults page faults in the kernel (the kernel's walk: one a sample)"
