#!/bin/bash
# build/cgtma-static (make static) in an empty root: a directory holding the binary and the
# mount points /proc and /sys alone, chrooted into, with a fresh proc and the host's /sys
# (recursively: cgroup2, tracefs, the kernel's BTF) mounted in a mount namespace of its own,
# so the mounts go when its last process does, however the test ends. No shared library,
# model file, BPF object or NSS module is there to be read:
#   --version       the release and commit of the dynamic build of the same tree, "build:
#                   static", a libbpf 1.x
#   list-events --model spr -l 3   exactly what the dynamic build prints (the models inside)
#   -e cpu-clock -G / -d 1 --json  the system's cpu-clock is the online CPUs times the
#                   interval (2 %: idle counts too), the root cgroup's equals it
#   --prometheus 127.0.0.1:PORT    /metrics served (libmicrohttpd built without TLS, a numeric
#                   address looked up without NSS) and scraped from outside
# Skips when there is no static build.
. "$(dirname "$0")/lib.sh"

BIN=${CGTMA_BUILD:-build}/cgtma-static
[ -x "$BIN" ] || skip "no $BIN: make static builds it (tools/install-deps.sh static installs what it needs)"
commands_or_skip unshare chroot curl
# The empty root is entered through a private mount namespace, which a chroot whose root is
# no mount point (a fresh-machine check in a debootstrap directory) cannot make.
unshare --mount --propagation private true 2>"$TMP/err" ||
	skip "cannot make a private mount namespace here: $(cat "$TMP/err")"
# Where `file` is (the kernel matrix's guests lack it), it must say so; running in the empty
# root, where no dynamic loader is, proves it anyway.
if command -v file >/dev/null; then
	file -L "$BIN" | grep -q 'statically linked' || fail "$BIN is not statically linked: $(file -L "$BIN")"
fi

ROOT=$TMP/root
mkdir -p "$ROOT/proc" "$ROOT/sys" && cp "$BIN" "$ROOT/cgtma" || fail "cannot make $ROOT"
# "${IN_ROOT[@]}" ARGS...: /cgtma ARGS in the empty root. A command, not a function: run in
# the background, it becomes cgtma by exec (unshare, sh, chroot), which SIGINT then reaches (a
# function would run in a subshell, and bash ignores SIGINT in its background subshells).
IN_ROOT=(unshare --mount --propagation private sh -c
	'mount -t proc proc "$0/proc" && mount --rbind /sys "$0/sys" && exec chroot "$0" /cgtma "$@"'
	"$ROOT")
[ "$(cd "$ROOT" && find . | sort | tr '\n' ' ')" = ". ./cgtma ./proc ./sys " ] ||
	fail "the root holds more than the binary: $(cd "$ROOT" && find .)"

# --- --version -------------------------------------------------------------------------------
"${IN_ROOT[@]}" --version >"$TMP/version" 2>"$TMP/err" ||
	fail "--version in the empty root: $(cat "$TMP/err")"
"$CGTMA" --version | head -n 2 >"$TMP/want"
head -n 2 "$TMP/version" | cmp -s - "$TMP/want" ||
	fail "--version says '$(cat "$TMP/version")', the dynamic build '$(cat "$TMP/want")'"
grep -qx 'build: static' "$TMP/version" || fail "--version does not say 'build: static': $(cat "$TMP/version")"
grep -Eqx 'libbpf: [1-9][0-9]*\.[0-9]+' "$TMP/version" || fail "--version names no libbpf: $(cat "$TMP/version")"
echo "--version in the empty root: $(tr '\n' ' ' <"$TMP/version")"

# --- the built-in models ---------------------------------------------------------------------
"${IN_ROOT[@]}" list-events --model spr -l 3 >"$TMP/events" 2>"$TMP/err" ||
	fail "list-events in the empty root: $(cat "$TMP/err")"
"$CGTMA" list-events --model spr -l 3 >"$TMP/want" || fail "list-events of the dynamic build failed"
[ -s "$TMP/want" ] && cmp -s "$TMP/events" "$TMP/want" ||
	fail "list-events --model spr -l 3 differs from the dynamic build's: $(diff "$TMP/want" "$TMP/events" | head -n 5)"
echo "list-events --model spr -l 3: $(head -n 1 "$TMP/events")"

# --- counting ----------------------------------------------------------------------------------
ncpu=$(getconf _NPROCESSORS_ONLN)
"${IN_ROOT[@]}" -e cpu-clock -G / -d 1 --json >"$TMP/count.jsonl" 2>"$TMP/err" ||
	fail "the counting run in the empty root: $(cat "$TMP/err")"
jq -e -s --argjson n "$ncpu" '[.[] | select(.summary != true)] | length >= 1 and all(.[];
	(.rows[] | select(.scope == "system") | .counts["cpu-clock"]) as $s |
	(.rows[] | select(.scope == "cgroup" and .cgroup == "/") | .counts["cpu-clock"]) as $r |
	$s > 0 and ($s / ($n * .interval * 1e9) - 1 | fabs) < 0.02 and $r == $s)' \
	"$TMP/count.jsonl" >/dev/null ||
	fail "cpu-clock is not $ncpu CPUs times the interval (2 %) on the system row, or the root's differs: $(head -n 1 "$TMP/count.jsonl")"
echo "counting in the empty root: $(jq -c 'select(.summary != true) | {interval, system: (.rows[] |
	select(.scope == "system") | .counts)}' "$TMP/count.jsonl")"

# --- /metrics ----------------------------------------------------------------------------------
PORT=$(free_port)
"${IN_ROOT[@]}" -e cpu-clock -I 200 -d 5 --prometheus "127.0.0.1:$PORT" >/dev/null 2>"$TMP/err" &
cgtma_started
metrics_wait 5 $PORT "$TMP/page" '^cgtma_events_total{scope="system",.*event="cpu-clock"' ||
	fail "no cpu-clock on /metrics from the empty root:" \
		"$(cat "$TMP/err"; head -c 300 "$TMP/page" 2>/dev/null)"
cgtma_signal INT "cgtma --prometheus in the empty root"
echo "/metrics from the empty root: $(grep -c '^cgtma_' "$TMP/page") series"
echo ok
