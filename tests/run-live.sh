#!/bin/bash
# Runs the live tests (tests/live/[0-9]*.sh) against a build directory. They need root and
# BPF; each says why when it skips. Usage: tests/run-live.sh BUILD_DIR [TEST...]
# With CGTMA_LIVE_LOG_DIR set, every test's whole output is kept there as NAME.log (the
# kernel matrix keeps them per kernel: the verifier's figures of 16-largest, for one).
# CGTMA_LIVE_TIMEOUT (300) is each test's limit in seconds (longer runs of 52-loaded).
# With CGTMA_LIVE_TRACE=1 as well, each test's shell trace goes to NAME.trace there, every
# command with the seconds since the epoch it started at and the shell that ran it ($BASHPID):
# where a test's time goes.
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
# run_test FILE NAME [VAR=VALUE...]: one test, its verdict as a line.
run_test() {
	local t=$1 name=$2 out rc s=$SECONDS limit=${CGTMA_LIVE_TIMEOUT:-300}
	shift 2
	if [ -n "${CGTMA_LIVE_TRACE:-}" ] && [ -n "${CGTMA_LIVE_LOG_DIR:-}" ]; then
		mkdir -p "$CGTMA_LIVE_LOG_DIR"
		# The test sourced as $0 itself, its trace on a descriptor of its own.
		out=$(env "$@" CGTMA_BUILD="$build" timeout "$limit" bash -c 'exec 19>"$1"; set --
			BASH_XTRACEFD=19 PS4="+ \$EPOCHREALTIME \$BASHPID "; set -x; . "$0"' \
			"$t" "$CGTMA_LIVE_LOG_DIR/$name.trace" 2>&1)
	else
		out=$(env "$@" CGTMA_BUILD="$build" timeout "$limit" bash "$t" 2>&1)
	fi
	rc=$?
	s=$((SECONDS - s))
	[ -n "${CGTMA_LIVE_LOG_DIR:-}" ] && mkdir -p "$CGTMA_LIVE_LOG_DIR" &&
		printf '%s\n' "$out" >"$CGTMA_LIVE_LOG_DIR/$name.log"
	case $rc in
	0) pass=$((pass + 1)); echo "ok   $name ($s s)" ;;
	77) skip=$((skip + 1)); echo "SKIP $name ($s s): $(printf '%s\n' "$out" | grep '^SKIP' | tail -n1 | cut -c6-)" ;;
	*) fail=$((fail + 1)); failed+=("$name"); printf '%s\n' "$out" | tail -n 40; echo "FAIL $name (exit $rc, $s s)" ;;
	esac
}
for t in "${tests[@]}"; do
	run_test "$t" "$(basename "$t" .sh)"
done

# The tests above run the switch hook cgtma picks (auto). Where that is the perf-event hook,
# every test whose numbers come through the switch hook (it says so with a line
# "# live: both-hooks") runs once more on the tracepoint, which the same kernel uses when the
# perf_event controller is on a v1 hierarchy or the per-task view needs every switch.
# CGTMA_LIVE_RERUN (names, as 10-attribution) narrows that set: the kernel matrix reruns a
# few, as TCG is slow.
hook_dependent() { grep -q '^# live: both-hooks$' "$1"; }
if "$build/cgtma" -v -e cpu-clock -I 100 -d 0.1 2>&1 >/dev/null | grep -q '^cgtma: switch hook: perf-event'; then
	for t in "${tests[@]}"; do
		name=$(basename "$t" .sh)
		hook_dependent "$t" || continue
		if [ -n "${CGTMA_LIVE_RERUN+set}" ]; then
			case " $CGTMA_LIVE_RERUN " in *" $name "*) ;; *) continue ;; esac
		fi
		run_test "$t" "$name@tracepoint" CGTMA_SWITCH_HOOK=tracepoint
	done
fi
echo "live tests: $pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ]
