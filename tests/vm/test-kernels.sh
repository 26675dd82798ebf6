#!/bin/bash
# The kernel matrix (`make test-kernels`): the live tests on Debian's distribution kernels,
# each booted under QEMU against the binaries built here, and on this machine's own kernel;
# then one table, kernel x test.
#
#   tests/vm/test-kernels.sh [-b BUILD_DIR] [-t "TEST..."] [-j JOBS] [-p PARTS] [KERNEL...]
#   make test-kernels [KERNELS="5.10 6.1"] [TESTS="10 12"] [JOBS=2]
#
#   KERNEL  host (this machine, no VM), 5.10 (bullseye), 5.10-rt (its PREEMPT_RT), 6.1
#           (bookworm), 6.1-full (the same with preempt=full), 6.1-rt (PREEMPT_RT), 6.1-hybrid
#           (v1 hierarchies beside cgroup2 at /sys/fs/cgroup/unified), 6.1-nocgroup2 (v1
#           only: instead of the suite, `cgtma -e cpu-clock -I 100 -d 1 -G /` must exit 1
#           naming cgroup v2), 6.12 (trixie), 6.18 (trixie-backports; lazy preemption),
#           6.18-voluntary (the same with preempt=voluntary), arm64-6.1 (bookworm's arm64
#           kernel under qemu-system-aarch64: an emulated PMU, -icount shift=0, ASLR off;
#           the cross build's binaries, build-arm64), arm64-6.12 (trixie's); default all but
#           the 6.18 and arm64 rows, in that order
#   -t      only these live tests (as run-kernel.sh takes them)
#   -j      guests booted at once (default 1, or CGTMA_VMTEST_JOBS). Single-threaded TCG
#           keeps a guest on one host CPU, so on a machine of N CPUs up to N guests run
#           side by side about as fast as one alone. The host row always runs alone: its
#           timing tests measure this machine.
#   -p      guests per row (default 1, or CGTMA_VMTEST_PARTS): each boots the row's kernel
#           and runs every PARTS-th test, and the row's results are theirs together (its
#           time their times added up). With three rows on two CPUs, two parts each keep
#           both CPUs busy to the end, where whole rows leave one idle for a row's length.
#
# First everything is fetched and built (the newest kernel package of each family through a
# private apt configuration, a debootstrap'd root image, an initramfs per kernel; once, in
# the cache: see tests/vm/lib.sh), then KVM is probed, then the rows run, JOBS guests at a
# time, in the order given (each row's parts one after the other; under TCG a row takes 8 to
# 15 minutes). One row:
# tests/vm/run-kernel.sh.
#
# Exit status: 0 when every kernel passed every check that applies to it, 1 otherwise,
# 2 bad usage.
set -u
. "$(dirname "$0")/lib.sh"

usage() {
	echo "usage: $0 [-b BUILD_DIR] [-t \"TEST...\"] [-j JOBS] [-p PARTS] [KERNEL...]  (KERNEL: $ALL_ROWS)" >&2
	exit 2
}
build=build tests='' jobs=${CGTMA_VMTEST_JOBS:-1} parts=${CGTMA_VMTEST_PARTS:-1}
while getopts b:t:j:p:h o; do
	case $o in
	b) build=$OPTARG ;;
	t) tests=$OPTARG ;;
	j) jobs=$OPTARG ;;
	p) parts=$OPTARG ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
case $jobs in
'' | *[!0-9]* | 0*) vm_err "jobs '$jobs': expected a whole number of guests, 1 or more"; exit 2 ;;
esac
case $parts in
'' | *[!0-9]* | 0*) vm_err "parts '$parts': expected a whole number of guests per row, 1 or more"; exit 2 ;;
esac
rows=("$@")
[ ${#rows[@]} -gt 0 ] || read -ra rows <<<"$DEFAULT_ROWS"
for r in "${rows[@]}"; do
	row_def "$r" || { vm_err "kernel '$r': unknown (one of: $ALL_ROWS)"; exit 2; }
done
# shellcheck disable=SC2086
resolve_tests $tests || exit 2
row_builds "$build" "${rows[@]}" || exit 2
[ "$(id -u)" = 0 ] || { vm_err "needs root (QEMU's 9p shares, debootstrap, BPF in the host row)"; exit 1; }
vm_lock || exit 1

t0=$SECONDS
vm_say "kernel matrix: ${rows[*]}; cache $CACHE"
snapshot_tree "${ROW_BUILDS[@]}" || exit 1
# A row whose set-up fails is reported as such; the others still run.
setup_failed=()
first_image=
for r in "${rows[@]}"; do
	if prepare_row "$r"; then
		# KVM is probed with an x86 guest; the arm64 rows are always emulated.
		[ "$R_FAMILY" != host ] && [ "$R_ARCH" = amd64 ] && [ -z "$first_image" ] &&
			first_image=$K_IMAGE
	else
		setup_failed+=("$r")
	fi
done
vm_say "set-up: $(vm_dur $((SECONDS - t0)))"
if [ -n "$first_image" ]; then
	choose_accel "$first_image" || exit
	vm_say "accelerator: $ACCEL ($ACCEL_WHY)"
fi

# one_row ROW [PART N]: runs ROW (its part PART of N) and says how long it took; its
# results are in the cache.
one_row() {
	local what=$1${2:+ part $2/${3:-}} files=("${TEST_FILES[@]}")
	[ -n "${2:-}" ] && mapfile -t files < <(part_tests "$2" "$3" "${TEST_FILES[@]}")
	vm_say "== $what"
	ROW_PART=${2:-} run_row "$1" 0 "$build" "${files[@]}"
	# shellcheck source=/dev/null
	vm_say "== $what: $(. "$CACHE/results/$1${2:+/part$2}/meta"
		echo "$(vm_dur "$WALL")${GUEST_CPU:+, QEMU CPU $(vm_dur "$GUEST_CPU")}")"
}

# Guest rows run in subshells (run_row's state is global), at most $jobs at a time, a row
# of several parts as that many; a host row waits for them all and runs alone.
running=0 split=()
for r in "${rows[@]}"; do
	if printf '%s\n' "${setup_failed[@]}" | grep -qxF -- "$r"; then
		rm -rf "$CACHE/results/$r" && mkdir -p "$CACHE/results/$r/out"
		row_setup_failed "$r" 0
		continue
	fi
	row_def "$r"
	if [ "$R_FAMILY" = host ]; then
		wait
		running=0
		one_row "$r"
		continue
	fi
	n=$parts
	# A part per test at most; the nocgroup2 row's one check is one guest.
	[ "$R_MODE" = nocgroup2 ] || [ "${#TEST_FILES[@]}" -lt 2 ] && n=1
	[ "$n" -gt "${#TEST_FILES[@]}" ] && n=${#TEST_FILES[@]}
	if [ "$n" -gt 1 ]; then
		rm -rf "$CACHE/results/$r" && mkdir -p "$CACHE/results/$r" || exit 1
		split+=("$r:$n")
	fi
	for ((p = 1; p <= n; p++)); do
		while [ "$running" -ge "$jobs" ]; do
			wait -n
			running=$((running - 1))
		done
		if [ "$n" -gt 1 ]; then one_row "$r" $p $n & else one_row "$r" & fi
		running=$((running + 1))
	done
done
wait
for rp in "${split[@]}"; do
	merge_parts "${rp%:*}" "${rp##*:}" || vm_err "${rp%:*}: cannot merge its parts' results"
done
# The table also stays in the cache, beside the rows' logs.
vm_report "${rows[@]}" | tee "$CACHE/results/report.txt"
rc=${PIPESTATUS[0]}
vm_say "total: $(vm_dur $((SECONDS - t0)))"
exit $rc
