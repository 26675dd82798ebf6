#!/bin/bash
# Boots one kernel of the matrix under QEMU and runs live tests in it against the binaries
# built here; the quick way to try one test on one kernel while developing.
#
#   tests/vm/run-kernel.sh [-b BUILD_DIR] KERNEL [TEST...]
#
#   KERNEL  5.10, 5.10-rt (PREEMPT_RT), 6.1, 6.1-full (preempt=full), 6.1-rt (PREEMPT_RT),
#           6.1-hybrid (cgroup v1 beside cgroup2 at /sys/fs/cgroup/unified), 6.1-nocgroup2
#           (v1 only: one check, no live tests), 6.12, 6.18, 6.18-voluntary
#           (preempt=voluntary), arm64-6.1, arm64-6.12 (Debian's arm64 kernels under
#           qemu-system-aarch64 with an emulated PMU, -icount shift=0, ASLR off), or host (no
#           VM: the suite on this machine)
#   TEST    a live test, as 12, 12-cpu-stat or tests/live/12-cpu-stat.sh; default all
#   -b      the build directory, inside this checkout (default build); an arm64 row runs
#           the cross build's binaries, build-arm64 (make ARCH=arm64 all helpers)
#
# e.g.  tests/vm/run-kernel.sh 6.1-full 12-cpu-stat
#       CGTMA_VMTEST_ACCEL=tcg tests/vm/run-kernel.sh 5.10 10 15
#
# Shows the guest's console as it comes, then the row's table. The console log and what the
# guest wrote stay in $CGTMA_VMTEST_CACHE/results/KERNEL/ (default /var/cache/cgtma-vmtest).
# The first run downloads the kernel and builds the root image (tests/vm/lib.sh says what
# the cache holds); later ones boot in seconds. Environment: CGTMA_VMTEST_ARM64_CPU (QEMU's
# -cpu for the arm64 rows, default max,pauth-impdef=on; neoverse-n1 gives a Neoverse MIDR),
# CGTMA_VMTEST_CACHE,
# CGTMA_VMTEST_TIMEOUT (seconds per boot, default 2700), CGTMA_VMTEST_ACCEL (kvm or tcg:
# skip the KVM probe), CGTMA_VMTEST_REFRESH=1 (ask the archive for newer kernels),
# CGTMA_VMTEST_MIRROR and CGTMA_VMTEST_SECURITY_MIRROR (instead of this machine's apt's).
#
# Exit status: 0 every check passed, 1 one failed (or the set-up did), 2 bad usage.
set -u
. "$(dirname "$0")/lib.sh"

usage() { echo "usage: $0 [-b BUILD_DIR] KERNEL [TEST...]  (KERNEL: $ALL_ROWS)" >&2; exit 2; }
build=build
while getopts b:h o; do
	case $o in
	b) build=$OPTARG ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] || usage
row=$1
shift
row_def "$row" || { vm_err "kernel '$row': unknown (one of: $ALL_ROWS)"; exit 2; }
[ "$R_MODE" = nocgroup2 ] && [ $# -gt 0 ] &&
	{ vm_err "$row runs one fixed check, not live tests: name no test"; exit 2; }
resolve_tests "$@" || exit 2
row_builds "$build" "$row" || exit 2
[ "$(id -u)" = 0 ] || { vm_err "needs root (QEMU's 9p shares, debootstrap, BPF in the host row)"; exit 1; }

vm_lock || exit 1
snapshot_tree "${ROW_BUILDS[@]}" || exit 1
prepare_row "$row" || exit 1
if [ "$R_FAMILY" != host ] && [ "$R_ARCH" = amd64 ]; then
	choose_accel "$K_IMAGE" || exit
	vm_say "accelerator: $ACCEL ($ACCEL_WHY)"
fi
run_row "$row" 1 "$build" "${TEST_FILES[@]}"
vm_report "$row"
