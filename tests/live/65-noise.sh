#!/bin/bash
# Noise from the kernel's own accounting (docs/noise.md): a cgroup's run-queue wait must be
# what /proc/PID/schedstat's run_delay says of its task over the same intervals, within 5 %
# of a second per second. A and B each run a CPU-bound task pinned to CPU 0: each waits
# about half the time. C runs one alone on CPU 1 (with two CPUs or more): it waits about
# nothing, unless other work on this machine takes CPU 1 (then only the agreement with
# run_delay is checked, and the test says so). cpu.pressure's "some" is there where the file
# is, above 0.3 for A and B; cpu.stat's throttling is there exactly where the file has it.
#
# Then, where the cpu controller can be enabled (cpu.max exists), cgroup T with cpu.max
# "20000 100000" spins: its throttled time must be cpu.stat's throttled_usec growth over the
# same intervals within 5 %, and its nr_throttled the growth of nr_throttled.
. "$(dirname "$0")/lib.sh"

commands_or_skip taskset
I_MS=500
K=8	# intervals compared with the kernel's figures, after the first

cg_make A
cg_make B
cg_make C
A=$(cg_path A) B=$(cg_path B) C=$(cg_path C)
alone=$(($(nproc) > 1))

# spin REL CPU: a CPU-bound task pinned to CPU in cgroup REL, until the test ends; $spun its
# PID (cgexec and taskset exec it).
spin() {
	"$WORKLOAD" cgexec "$CG_ROOT/$CG_BASE/$1" taskset -c "$2" "$WORKLOAD" spin 600000 &
	spun=$!
	on_exit "kill $spun"
}
# Read with builtins: on a busy machine each process started would wait for a CPU, and the
# readings would lag behind cgtma's intervals.
run_delay() {
	local run delay
	read -r run delay _ <"/proc/$1/schedstat"
	echo "$delay"
}

# measure OUT ARGS...: cgtma --json -I $I_MS ARGS; the kernel's figures (by read_all) taken
# after its first interval and after K more, in $TMP/before and $TMP/after.
measure() {
	local out=$1
	shift
	cgtma_start "$out" 0 -e cpu-clock --json -I $I_MS -d $(((K + 3) * I_MS / 1000 + 1)) "$@"
	wait_lines "$out" 1 60	# loading BPF takes long under emulation
	read_all >"$TMP/before"
	wait_lines "$out" $((K + 1)) 30
	read_all >"$TMP/after"
	cgtma_status 0 "cgtma $*"
}
# kernel KEY: the growth of KEY between the two readings, per second.
kernel() {
	awk -v k="$1" '$1 == "time" { t[FILENAME] = $2 } $1 == k { v[FILENAME] = $2 }
		END { f = ARGV[1]; g = ARGV[2]; printf "%.6f\n", (v[g] - v[f]) / 1e9 / (t[g] - t[f]) }' \
		"$TMP/before" "$TMP/after"
}
# noise OUT CGROUP FIELD: FIELD's mean over intervals 2..K+1, weighted by their lengths;
# "absent" where no interval has it.
noise() {
	jq -rs --arg c "$2" --arg f "$3" --argjson k $K '[.[1:$k + 1][] | .interval as $s |
		.rows[] | select(.scope == "cgroup" and .cgroup == $c and .cpu == null) |
		select(.noise[$f] != null) | [.noise[$f] * $s, $s]] |
		if length < $k then "absent" else
			((map(.[0]) | add) / (map(.[1]) | add)) end' "$1"
}
# anywhere OUT CGROUP FIELD: whether any row of CGROUP has FIELD, the summary's included.
anywhere() {
	jq -e -s --arg c "$2" --arg f "$3" 'any(.[].rows[]; .scope == "cgroup" and
		.cgroup == $c and (.noise // {} | has($f)))' "$1" >/dev/null
}
# close WANT GOT: |GOT - WANT| <= 0.05 s/s (5 % of a second per second).
close() { awk -v w="$1" -v g="$2" 'BEGIN { d = g - w; exit !(d <= 0.05 && d >= -0.05) }'; }

spin A 0
pa=$spun
spin B 0
pb=$spun
if [ $alone = 1 ]; then
	spin C 1
	pc=$spun
fi
read_all() {
	echo "time $EPOCHREALTIME"
	echo "a $(run_delay $pa)"
	echo "b $(run_delay $pb)"
	[ -z "${pc:-}" ] || echo "c $(run_delay $pc)"
}
out=$TMP/noise.json
measure "$out" -G "$A" -G "$B" -G "$C"
for p in a b c; do
	[ "$p" = c ] && [ $alone = 0 ] && continue
	cg=$(eval echo "\$$(echo $p | tr a-z A-Z)")
	want=$(kernel $p)
	got=$(noise "$out" "$cg" wait)
	echo "$cg: wait $got s/s, run_delay says $want s/s"
	[ "$got" != absent ] || fail "$cg has no wait"
	close "$want" "$got" || fail "$cg: wait $got s/s, /proc/PID/schedstat says $want s/s"
	if [ $p = c ]; then
		if awk -v w="$want" 'BEGIN { exit !(w < 0.05) }'; then
			awk -v g="$got" 'BEGIN { exit !(g < 0.05) }' ||
				fail "$cg, alone on CPU 1, waited $got s/s"
		else
			echo "note: other work on this machine kept $cg waiting $want s/s on CPU 1:" \
				"its wait is checked against run_delay only"
		fi
	else
		awk -v g="$got" 'BEGIN { exit !(g > 0.3) }' ||
			fail "$cg, sharing CPU 0, waited only $got s/s"
	fi
	f=$CG_ROOT/$CG_BASE/$(echo $p | tr a-z A-Z)
	if [ -r "$f/cpu.pressure" ] && [ $p != c ]; then
		got=$(noise "$out" "$cg" pressure_some)
		echo "$cg: pressure some $got"
		awk -v g="$got" 'BEGIN { exit !(g > 0.3) }' ||
			fail "$cg: pressure_some $got, want above 0.3"
	elif [ ! -r "$f/cpu.pressure" ]; then
		! anywhere "$out" "$cg" pressure_some || fail "$cg: pressure_some without cpu.pressure"
	fi
	if grep -q '^throttled_usec ' "$f/cpu.stat"; then
		[ "$(noise "$out" "$cg" throttled)" = 0 ] ||
			fail "$cg: throttled $(noise "$out" "$cg" throttled), want 0 (no cpu.max)"
	else
		! anywhere "$out" "$cg" throttled || fail "$cg: throttled without cpu.stat's"
		! anywhere "$out" "$cg" nr_throttled || fail "$cg: nr_throttled without cpu.stat's"
	fi
done
jq -e -s --arg c "$A" '.[-1].summary and any(.[-1].rows[]; .cgroup == $c and
	.noise.wait > 0.3)' "$out" >/dev/null || fail "the summary has no wait for $A"
kill $pa $pb ${pc:-} 2>/dev/null

# cpu.max: the cpu controller for the test's cgroups, where the hierarchy has it.
if grep -qw cpu "$CG_ROOT/cgroup.controllers" 2>/dev/null; then
	grep -qw cpu "$CG_ROOT/cgroup.subtree_control" || echo +cpu >"$CG_ROOT/cgroup.subtree_control"
	echo +cpu >"$CG_ROOT/$CG_BASE/cgroup.subtree_control" 2>/dev/null
fi
cg_make T
T=$(cg_path T)
[ -e "$CG_ROOT/$CG_BASE/T/cpu.max" ] || { echo "no cpu.max here: throttling not checked"; exit 0; }
echo "20000 100000" >"$CG_ROOT/$CG_BASE/T/cpu.max" || fail "cannot set T's cpu.max"
spin T 0
read_all() {
	local k v
	echo "time $EPOCHREALTIME"
	# usec as ns, for kernel(); nr_throttled as it is.
	while read -r k v; do
		[ "$k" = throttled_usec ] && echo "t ${v}000"
		[ "$k" = nr_throttled ] && echo "n $v"
	done <"$CG_ROOT/$CG_BASE/T/cpu.stat"
}
out=$TMP/throttled.json
measure "$out" -G "$T"
want=$(kernel t)
got=$(noise "$out" "$T" throttled)
echo "$T: throttled $got s/s, cpu.stat says $want s/s"
[ "$got" != absent ] || fail "$T has no throttled time"
within "$got" "$want" 5 || fail "$T: throttled $got s/s, cpu.stat says $want s/s"
awk -v w="$want" 'BEGIN { exit !(w > 0.3) }' || fail "$T was throttled only $want s/s"
# As rates: the readings' span and cgtma's intervals differ by a few milliseconds, and a
# period of 100 ms may fall on either side; two periods at most.
n_want=$(awk '$1 == "time" { t[FILENAME] = $2 } $1 == "n" { v[FILENAME] = $2 }
	END { f = ARGV[1]; g = ARGV[2]; printf "%.3f %.3f\n", v[g] - v[f], t[g] - t[f] }' \
	"$TMP/before" "$TMP/after")
n_got=$(jq -rs --argjson k $K '[.[1:$k + 1][] | .interval as $s | .rows[] |
	select(.scope == "cgroup" and .cpu == null) | [.noise.nr_throttled, $s]] |
	"\(map(.[0]) | add) \(map(.[1]) | add)"' "$out")
echo "$T: throttled $n_got (times, seconds), cpu.stat says $n_want"
awk -v g="$n_got" -v w="$n_want" 'BEGIN { split(g, a, " "); split(w, b, " ");
	d = a[1] / a[2] - b[1] / b[2]; if (d < 0) d = -d; exit !(b[1] > 0 && d <= 2 / b[2]) }' ||
	fail "$T: nr_throttled $n_got (times, seconds), cpu.stat says $n_want"
