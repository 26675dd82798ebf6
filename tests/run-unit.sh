#!/bin/sh
# Runs unit-test binaries (no root needed) and fails when any of them fails. Of one that
# passes, it shows the checks it skipped, with their reasons, and its summary line.
# The tests find their data (vectors, model files) relative to the repository root.
cd "$(dirname "$0")/.." || exit 1
failed=0
for t in "$@"; do
	out=$("$t" 2>&1)
	rc=$?
	if [ $rc -ne 0 ]; then
		printf '%s\n' "$out"
		echo "FAIL $t (exit $rc)"
		failed=$((failed + 1))
	else
		printf '%s\n' "$out" | grep '^skip - '
		printf '%s\n' "$out" | tail -n 1
	fi
done
[ $failed -eq 0 ] || { echo "$failed unit test program(s) failed"; exit 1; }
