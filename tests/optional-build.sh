#!/bin/sh
# cgtma built without its optional libraries: `make NO_LIBDW=1 NO_LIBMICROHTTPD=1` into
# BUILD_DIR/optional (its own objects, at -O0 to be quick). It links neither library; its
# --version says so; --prometheus and --sample are usage errors (exit 2) that name the
# library missing; and what needs neither, list-events and report (text, JSON, a record's
# sampled stacks, named when recorded), prints what BUILD_DIR/cgtma prints, byte for byte.
# Usage: tests/optional-build.sh BUILD_DIR (make optional-test runs it). Needs no root.
set -u
cd "$(dirname "$0")/.." || exit 1
full=$(readlink -f "${1:?usage: $0 BUILD_DIR}")
out=$full/optional
cgtma=$out/cgtma
failed=0
fail() { echo "FAIL optional: $*" >&2; failed=$((failed + 1)); }

tmp=$(mktemp -d /tmp/cgtma-optional.XXXXXX) || exit 1
trap 'rm -rf "$tmp"' EXIT

if ! make --no-print-directory OUTPUT="$out" NO_LIBDW=1 NO_LIBMICROHTTPD=1 CFLAGS=-O0 \
		"$cgtma" >"$tmp/build.log" 2>&1; then
	echo "FAIL optional: make NO_LIBDW=1 NO_LIBMICROHTTPD=1 failed: $(tail -n 15 "$tmp/build.log")"
	exit 1
fi
readelf -d "$cgtma" >"$tmp/dynamic" || fail "readelf -d $cgtma failed"
for lib in libdw libmicrohttpd; do
	! grep -q "NEEDED.*\[$lib\." "$tmp/dynamic" || fail "$cgtma needs $lib"
done

"$cgtma" --version >"$tmp/version" 2>&1 || fail "--version exits $?"
grep -qx 'features: -libdw -libmicrohttpd' "$tmp/version" ||
	fail "--version: want 'features: -libdw -libmicrohttpd' in '$(cat "$tmp/version")'"

# usage WANT_STDERR ARGS...: exit 2, that line alone on stderr, nothing on stdout.
usage() {
	want=$1
	shift
	"$cgtma" "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	[ $rc -eq 2 ] || fail "cgtma $*: exit $rc, want 2 (stderr: $(cat "$tmp/err"))"
	[ "$(cat "$tmp/err")" = "$want" ] ||
		fail "cgtma $*: stderr '$(cat "$tmp/err")', want '$want'"
	[ ! -s "$tmp/out" ] || fail "cgtma $*: printed on stdout: $(head -c 200 "$tmp/out")"
}
see="was missing when cgtma was built (cgtma --version lists what a build has)"
prom="cgtma: --prometheus: this build has no Prometheus endpoint: libmicrohttpd, which serves"
prom="$prom it, $see"
sample="cgtma: --sample: this build cannot sample call stacks: libdw, which names their frames,"
sample="$sample $see"
usage "$prom" --prometheus 9464 -G /
usage "$prom" -d 1 --prometheus=127.0.0.1:9464
usage "$sample" -G / --sample
usage "$sample" -G / --sample=cycles -F 49 -- true

# same NAME ARGS...: stdout and the exit status of both builds the same.
same() {
	name=$1
	shift
	"$full/cgtma" "$@" >"$tmp/want" 2>/dev/null
	want=$?
	"$cgtma" "$@" >"$tmp/got" 2>"$tmp/err"
	got=$?
	[ $got -eq $want ] || fail "$name: exit $got, the full build's $want ($(cat "$tmp/err"))"
	[ -s "$tmp/want" ] || fail "$name: the full build printed nothing"
	cmp -s "$tmp/want" "$tmp/got" ||
		fail "$name differs from the full build's: $(diff "$tmp/want" "$tmp/got" | head -n 5)"
}
records=tests/fuzz/corpus/fuzz_record
same "list-events" list-events
same "list-events --json" list-events --json
same "report" report $records/sw-2-intervals.cgtma
same "report --json" report $records/sw-2-intervals.cgtma --json
same "report of samples" report $records/samples-2-profiles-v5.cgtma
"$full/cgtma" report $records/samples-2-profiles-v5.cgtma --folded "$tmp/want.folded" 2>/dev/null
"$cgtma" report $records/samples-2-profiles-v5.cgtma --folded "$tmp/got.folded" 2>"$tmp/err" ||
	fail "report --folded: $(cat "$tmp/err")"
[ -s "$tmp/want.folded" ] && cmp -s "$tmp/want.folded" "$tmp/got.folded" ||
	fail "report --folded differs from the full build's"

[ $failed -eq 0 ] || exit 1
echo "ok optional: without libdw and libmicrohttpd, --prometheus and --sample exit 2 naming" \
	"the library; list-events and report as the full build"
