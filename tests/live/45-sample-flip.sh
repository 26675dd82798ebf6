#!/bin/bash
# --sample's reads, where a sample counted in nested tracked cgroups must read the same in
# each. Two ways it did not:
# - User space flips `half` and reads the closed half while a sample that read `half` just
#   before may still be counting on another CPU, in its deepest tracked cgroup first, then in
#   each tracked ancestor. Read between the two, it showed in the deepest, and the
#   ancestors' count stayed in the map, read a turn later with the stack ids of a half
#   refilled since (39's nested part failed so on the 5.10 row: a stack in N/I that N
#   lacked, one in N that N/I lacked). The read now waits for the samples in flight first.
# - One stack, in one process, is one key per cgroup, and was named once per key: the
#   process's maps, read again between two keys, named a frame in one cgroup and not in the
#   other (the exec'd spinner's samples from before its exec, under the 5.10 row's emulation).
#   A read now names each stack of a process once.
# It also found the spinner never named on the 6.1 rows (its maps read after its exit: the
# thread that reads them waited for the symbolizer's lock), hence the check that its stacks
# are there.
# Eight nested tracked cgroups, a spinner in the deepest on each CPU but one, reads every
# 10 ms, the kernel's fastest rate up to 4 kHz: every level's stacks must be the deepest's,
# line for line and count for count. The spinner is stripped and spins through 65536 nops,
# so that nearly every sample is a --folded line of its own (spinfn-stripped+OFFSET), where a
# sample counted with another's stack shows.
. "$(dirname "$0")/lib.sh"

SPINFN=${CGTMA_BUILD:-build}/tests/spinfn-stripped
[ -x "$SPINFN" ] || fail "no $SPINFN: build first (make $SPINFN)"
HZ=$(cat /proc/sys/kernel/perf_event_max_sample_rate)
[ "$HZ" -le 4000 ] || HZ=4000
sample_rate_or_skip 250
MS=4000

levels=() rel=
for i in 1 2 3 4 5 6 7 8; do
	rel=${rel:+$rel/}L$i
	levels+=("$rel")
done
cg_make "$rel"
args=()
for r in "${levels[@]}"; do args+=(-G "$(cg_path "$r")"); done
# Room for every distinct stack of a stalled read (the 8 levels count each sample 8 times).
cgtma_start "$TMP/out" 1 "${args[@]}" -e cpu-clock --sample -F "$HZ" --sample-max 262144 \
	-I 10 -j --folded "$TMP/folded"
# A spinner on every CPU but one: cgtma reads on that one, as often as it can, while the
# others' samples are counted.
spinners=$(($(nproc) - 1))
[ $spinners -ge 1 ] || spinners=1
for _ in $(seq $spinners); do cg_start "$rel" "$SPINFN" wide "$MS"; done
cg_wait
cgtma_more "$TMP/out" 2
cgtma_signal INT
# A sample the counts map had no room for is lost in some levels and not others; a stack
# without frames (a stalled read fills the stack maps) is the same bare stack in all.
lost=$(tail -1 "$TMP/out" | jq -r ".samples_lost // 0")
[ "$lost" = 0 ] || fail "$lost samples lost: the counts map was full (the check needs none)"
# stacks CGROUP: its --folded lines without it, the bare ones (no frames) as "- COUNT".
stacks() { sed -n "s|^$1;||p; s|^$1 |- |p" "$TMP/folded" | sort; }
stacks "$(cg_path "$rel")" >"$TMP/deep"
n=$(wc -l <"$TMP/deep")
samples=$(awk '{ s += $NF } END { print s + 0 }' "$TMP/deep")
said="$samples samples in $n stacks at $HZ Hz, $(($(wc -l <"$TMP/out") - 1)) reads, \
$(awk '$1 == "-" { n = $2 } END { print n + 0 }' "$TMP/deep") without frames"
grep -q "spinfn-stripped+0x" "$TMP/deep" ||
	fail "no spinner stack in $rel ($said): $(grep -v "^- " "$TMP/deep" | head -3)"
for r in "${levels[@]::7}"; do
	stacks "$(cg_path "$r")" | diff "$TMP/deep" - >"$TMP/diff" ||
		fail "$r's stacks are not $rel's ($said): $(head -6 "$TMP/diff")"
done
echo "$said: alike in all eight levels"
