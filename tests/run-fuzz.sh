#!/bin/sh
# Builds each libFuzzer target and runs it briefly (FUZZ_SECONDS in all, default 18),
# seeded with the built-in model files:
#
#   tests/run-fuzz.sh BUILD_DIR tests/fuzz/fuzz_*.c
#
# Without clang's libFuzzer runtime it says so in one line and skips (exit 0). A crash, a
# leak or a timeout fails; the input that did it is left as BUILD_DIR/fuzz/NAME-crash-*.
cd "$(dirname "$0")/.." || exit 1
out=${1:?usage: $0 BUILD_DIR tests/fuzz/fuzz_*.c}
shift
[ $# -gt 0 ] || { echo "fuzz: no targets"; exit 0; }
clang=${CLANG:-clang}

tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM

printf 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return 0; }\n' >"$tmp/probe.c"
if ! "$clang" -fsanitize=fuzzer "$tmp/probe.c" -o "$tmp/probe" >/dev/null 2>&1; then
	echo "fuzz: skipped, clang's libFuzzer runtime is missing (Debian: libclang-rt-N-dev)"
	exit 0
fi

total=${FUZZ_SECONDS:-18}
per=$((total / $#))
[ "$per" -ge 2 ] || per=2
failed=0
for src in "$@"; do
	name=$(basename "$src" .c)
	bin=$out/fuzz/$name
	if ! make --no-print-directory OUTPUT="$out" "$bin"; then
		echo "FAIL fuzz $name: does not build"
		failed=$((failed + 1))
		continue
	fi
	corpus=$tmp/corpus-$name
	mkdir -p "$corpus"
	cp user/models/*.json "$corpus/" 2>/dev/null
	[ -d "tests/fuzz/corpus/$name" ] && cp "tests/fuzz/corpus/$name"/* "$corpus/"
	set --
	[ -f "tests/fuzz/$name.dict" ] && set -- "-dict=tests/fuzz/$name.dict"
	# -close_fd_mask=3: the target's own messages (every rejected model prints one) are
	# dropped; libFuzzer and the sanitizers keep writing their reports to the log.
	if "$bin" "$@" -max_total_time="$per" -timeout=10 -rss_limit_mb=2048 -close_fd_mask=3 \
		-print_final_stats=1 -artifact_prefix="$out/fuzz/$name-" "$corpus" \
		>"$tmp/$name.log" 2>&1; then
		runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$tmp/$name.log")
		echo "ok fuzz $name: ${runs:-?} inputs in ${per}s"
	else
		tail -n 40 "$tmp/$name.log"
		echo "FAIL fuzz $name (inputs that fail: $out/fuzz/$name-*)"
		failed=$((failed + 1))
	fi
done
[ $failed -eq 0 ] || { echo "$failed fuzz target(s) failed"; exit 1; }
