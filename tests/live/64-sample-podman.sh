#!/bin/bash
# --sample inside a podman container whose binary exists only in the container's root
# (/bin/spinfn-static there, nowhere on the host's /bin): the container's samples must be at
# least 90 % in its spinning function, named through the process's own root, and the folded
# stacks' scope is the container's name, as the terminal shows it. A second container of the
# same binary spinning in another function is untracked: none of its samples are there.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/podman.sh"

STATIC=${CGTMA_BUILD:-build}/tests/spinfn-static
[ -x "$STATIC" ] || fail "no $STATIC: build first (make $STATIC)"
podman_ready
podman_rootfs "$TMP/root" "$STATIC"
[ ! -e /bin/spinfn-static ] || skip "the host has a /bin/spinfn-static: not only in the container"

A=cgtma-test-$$-spin-a B=cgtma-test-$$-spin-b
podman_run $A -d -- /bin/spinfn-static gamma 60000 >/dev/null || fail "cannot start container $A"
podman_run $B -d -- /bin/spinfn-static alpha 60000 >/dev/null || fail "cannot start container $B"
"$CGTMA" -G container:$A -e cpu-clock --sample -F 999 --folded "$TMP/folded" -d 3 -I 1000 >"$TMP/term" 2>"$TMP/err" ||
	fail "cgtma: $(cat "$TMP/err")"

awk -v scope=$A '{ n = $NF; sub(/ [0-9]+$/, ""); k = split($0, f, ";")
	if (f[1] == scope) { all += n; if (f[k] == "spin_gamma") own += n }
	if (f[k] == "spin_alpha") other += n }
	END { printf "%d %d %d\n", all, own, other }' "$TMP/folded" >"$TMP/sums"
read -r all own other <"$TMP/sums"
[ "$all" -gt 100 ] || fail "container $A: $all samples, want over 100 in 3 s (999 a second): $(head -3 "$TMP/folded")"
[ $((own * 100)) -ge $((all * 90)) ] ||
	fail "container $A: $own of $all samples in spin_gamma: $(sort -k2 -n "$TMP/folded" | tail -3)"
[ "$other" = 0 ] || fail "the untracked container's function spin_alpha has $other samples"
grep -Eq '^ +[0-9.]+ %  spin_gamma$' "$TMP/term" || fail "no top function in the terminal: $(cat "$TMP/term")"
echo "container $A: $all samples, $own in spin_gamma"
