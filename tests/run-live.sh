#!/bin/bash
# Runs the live tests (tests/live/[0-9]*.sh) against a build directory. They need root and
# BPF; each says why when it skips. Usage: tests/run-live.sh BUILD_DIR [TEST...]
set -u
cd "$(dirname "$0")/.." || exit 1
build=$(readlink -f "${1:-build}")
shift || true
tests=("$@")
[ ${#tests[@]} -gt 0 ] || tests=(tests/live/[0-9]*.sh)

if [ "$(id -u)" != 0 ]; then
	echo "SKIP live tests: they need root (BPF programs and perf events); run 'sudo make test'"
	exit 0
fi

pass=0 fail=0 skip=0 failed=()
for t in "${tests[@]}"; do
	name=$(basename "$t" .sh)
	out=$(CGTMA_BUILD="$build" timeout 300 bash "$t" 2>&1)
	rc=$?
	case $rc in
	0) pass=$((pass + 1)); echo "ok   $name" ;;
	77) skip=$((skip + 1)); echo "SKIP $name: $(printf '%s\n' "$out" | grep '^SKIP' | tail -n1 | cut -c6-)" ;;
	*) fail=$((fail + 1)); failed+=("$name"); printf '%s\n' "$out" | tail -n 40; echo "FAIL $name (exit $rc)" ;;
	esac
done
echo "live tests: $pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ]
