#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# cgtma report's --folded and --pprof from a record with samples, and a real consumer of the
# pprof file: tests/tools/check-pprof.sh BUILD_DIR
#
# The record is tests/helpers/mkprofile's (the profile of tests/unit/profile_fixture.h,
# recorded twice: every count doubled). `go tool pprof` (Debian's golang-go) must read the
# file, and focused on one cgroup's label (-tagfocus) put that cgroup's function on top;
# without go that part skips, saying so. Needs no root. Exit 1 on any failure.
set -u
cd "$(dirname "$0")/../.." || exit 1
build=${1:-build}
cgtma=$build/cgtma
mkprofile=$build/tests/mkprofile
for b in "$cgtma" "$mkprofile"; do
	[ -x "$b" ] || { echo "FAIL: no $b (run make $b)"; exit 1; }
done
tmp=$(mktemp -d /tmp/cgtma-check-pprof.XXXXXX) || exit 1
trap 'rm -rf "$tmp"' EXIT
status=0
fail() { echo "FAIL: $*"; status=1; }

"$mkprofile" "$tmp/rec.cgtma" || { echo "FAIL: mkprofile"; exit 1; }
"$cgtma" report "$tmp/rec.cgtma" --folded "$tmp/out.folded" --pprof "$tmp/out.pb.gz" \
	>"$tmp/out" 2>&1 || fail "report --folded --pprof exited $?: $(cat "$tmp/out")"
# The fixture's losses, recorded twice, said once; nothing else.
lost="cgtma: warning: $tmp/rec.cgtma: --sample: 6 samples lost: the kernel's counts map was full (raise --sample-max); 10 user and 4 kernel stacks kept without their frames: the stack maps had no room for them"
[ "$(cat "$tmp/out")" = "$lost" ] || fail "report --folded --pprof printed: $(cat "$tmp/out")"
want='/db;main;spin+0x1abc 2
/db;main;spin_db 4
web;main;spin_web 14
web;main;spin_web;asm_sysvec 2'
[ "$(cat "$tmp/out.folded" 2>/dev/null)" = "$want" ] ||
	fail "folded stacks: $(cat "$tmp/out.folded" 2>/dev/null)"
# --folded-pid: the thread's name and process after the cgroup, where known (not /db's).
"$cgtma" report "$tmp/rec.cgtma" --folded "$tmp/pid.folded" --folded-pid >/dev/null 2>&1 ||
	fail "report --folded --folded-pid exited $?"
want='/db;main;spin+0x1abc 2
/db;main;spin_db 4
web;web-gc-4242;main;spin_web;asm_sysvec 2
web;web-srv-4242;main;spin_web 14'
[ "$(cat "$tmp/pid.folded" 2>/dev/null)" = "$want" ] ||
	fail "folded stacks with --folded-pid: $(cat "$tmp/pid.folded" 2>/dev/null)"
[ "$(head -c 2 "$tmp/out.pb.gz" | od -An -tx1 | tr -d ' ')" = 1f8b ] ||
	fail "the pprof file is not gzip"

if ! command -v go >/dev/null; then
	echo "SKIP: go tool pprof: go is not installed (Debian's golang-go; make test-deps)"
	[ $status = 0 ] && echo "ok check-pprof: folded and pprof written (go tool pprof skipped)"
	exit $status
fi
# pprof keeps its settings under HOME; go wants a cache it can write.
export HOME=$tmp GOCACHE=$tmp/gocache

# top_of CGROUP: the function with the most samples of that cgroup (its first -top row).
top_of() {
	go tool pprof -symbolize=none -top -tagfocus="cgroup=^$1\$" "$tmp/out.pb.gz" \
		2>"$tmp/go.err" | awk 'rows { print $6; exit } /flat%/ { rows = 1 }'
}
got=$(top_of /web)
[ "$got" = spin_web ] || fail "go tool pprof -tagfocus=cgroup=/web: top is '$got': $(cat "$tmp/go.err")"
got=$(top_of /db)
[ "$got" = spin_db ] || fail "go tool pprof -tagfocus=cgroup=/db: top is '$got': $(cat "$tmp/go.err")"
# A thread's samples by its comm label: web-gc's one stack has asm_sysvec on top.
got=$(go tool pprof -symbolize=none -top -tagfocus='comm=^web-gc$' "$tmp/out.pb.gz" \
	2>"$tmp/go.err" | awk 'rows { print $6; exit } /flat%/ { rows = 1 }')
[ "$got" = asm_sysvec ] || fail "go tool pprof -tagfocus=comm=web-gc: top is '$got'"
# Every sample is counted: cpu-clock's 22, cycles' 6; labels by cgroup, container, pod, pid
# (a number) and comm.
go tool pprof -symbolize=none -top "$tmp/out.pb.gz" 2>/dev/null | grep -q 'Total samples = 22' ||
	fail "cpu-clock's total is not 22"
go tool pprof -symbolize=none -sample_index=cycles -top "$tmp/out.pb.gz" 2>/dev/null |
	grep -q 'Total samples = 6' || fail "cycles' total is not 6"
tags=$(go tool pprof -symbolize=none -tags "$tmp/out.pb.gz" 2>/dev/null)
for t in '16.0 (72.73%): /web' '6.0 (27.27%): /db' '16.0 (  100%): web' \
	'16.0 (  100%): shop/web-0' 'pid: Total 16.0' '16.0 (  100%): 4242' \
	'14.0 (87.50%): web-srv' '2.0 (12.50%): web-gc'; do
	grep -qF "$t" <<<"$tags" || fail "go tool pprof -tags lacks '$t': $tags"
done
[ $status = 0 ] && echo "ok check-pprof: folded stacks, and go tool pprof reads the profile"
exit $status
