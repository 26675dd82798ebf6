#!/bin/bash
# --sample: call stacks per tracked cgroup, attributed exactly. Three cgroups spin at once in
# three different functions of one binary (tests/helpers/spinfn); each cgroup's samples must
# be at least 90 % in its own function (of those once main() runs) and never in another's,
# and its sample count must be its CPU time (cpu.stat) times the frequency within 20 % (999
# Hz: enough samples for that tolerance in 3 s on a busy machine). An untracked cgroup
# spinning beside them has no samples (the BPF program drops them). A process that exits 1.5 s
# before the interval ends (E) still resolves (its maps were read when it announced them). --folded writes what
# flamegraph.pl reads; --record keeps the samples (report's --folded is the live one, byte for
# byte); go tool pprof reads --pprof's file, and focused on C's label puts C's function on
# top; the terminal shows each cgroup's top functions.
# The hardware path: where cgtma can open a hardware event (the kernel matrix's arm64 rows:
# QEMU's emulated PMUv3) the samples are of cycles, with every check the same; elsewhere
# (no PMU) of cpu-clock.
. "$(dirname "$0")/lib.sh"

SPINFN=${CGTMA_BUILD:-build}/tests/spinfn
[ -x "$SPINFN" ] || fail "no $SPINFN: build first (make $SPINFN)"
HZ=999
if "$CGTMA" -e cycles -I 100 -d 0.1 >/dev/null 2>&1; then
	SAMPLED=cycles
else
	SAMPLED=cpu-clock
fi
echo "sampling $SAMPLED"

cg_make A
cg_make B
cg_make C
cg_make E
cg_make U

rate0=$(cat /proc/sys/kernel/perf_event_max_sample_rate)
# It waits for the first interval to end: from then on, sampling is on.
cgtma_start "$TMP/out" 1 -G "$(cg_path A)" -G "$(cg_path B)" -G "$(cg_path C)" -G "$(cg_path E)" \
	-e cpu-clock --sample=$SAMPLED -F $HZ --folded "$TMP/folded" --pprof "$TMP/pb.gz" \
	--record "$TMP/rec" -I 2500 -j

for c in A B C E U; do eval "u0_$c=$(usage_usec $c)"; done
cg_start A "$SPINFN" alpha 3000
cg_start B "$SPINFN" beta 3000
cg_start C "$SPINFN" gamma 3000
cg_start U "$SPINFN" alpha 3000
# E spins 1 s: its exec and dynamic loading cost a fixed 150 samples under the kernel matrix's
# TCG guests, half of a 600 ms spinner's on a guest CPU shared by five spinners.
cg_start E "$SPINFN" beta 1000
cg_wait
for c in A B C E U; do eval "u1_$c=$(usage_usec $c)"; done
# The interval the spinners ran in has ended (E exited long before its end).
wait_lines "$TMP/out" 3
cgtma_stop

[ -s "$TMP/folded" ] || fail "--folded wrote nothing"
# The kernel lowers perf_event_max_sample_rate when sample interrupts take too long (an
# emulator's guest) and then throttles the events: fewer samples than asked, by design.
rate1=$(cat /proc/sys/kernel/perf_event_max_sample_rate)
throttled=$([ "$rate1" -lt "$rate0" ] && echo "$rate0 -> $rate1")
# samples SCOPE [FN]: the samples of a cgroup in the folded file, those whose stack has FN
# (the spinning function is the user leaf; the kernel's frames of an interrupt or a fault
# may be above it).
samples() {
	awk -v scope="$1" -v fn="${2:-}" '{
		n = $NF; sub(/ [0-9]+$/, ""); k = split($0, f, ";"); has = fn == ""
		for (i = 2; i <= k; i++) has = has || f[i] == fn
		if (f[1] == scope && has) s += n
	} END { print s + 0 }' "$TMP/folded"
}
# without_main SCOPE: a cgroup's stacks that lack main(), biggest first.
without_main() {
	awk -v scope="$1" '{
		n = $NF; line = $0; sub(/ [0-9]+$/, ""); k = split($0, f, ";"); has = 0
		for (i = 2; i <= k; i++) has = has || f[i] == "main"
		if (f[1] == scope && !has) print n, line
	}' "$TMP/folded" | sort -k1,1nr | cut -d" " -f2-
}
check() {
	local rel=$1 fn=$2 others=$3 count=${4:-count} scope all own cpu_us want
	scope=$(cg_path "$rel")
	all=$(samples "$scope")
	# The share is of the samples once main() runs: before it, exec and the dynamic loader
	# (page faults, relocations) run no function of the program, and under an emulator (the
	# kernel matrix's TCG guests) they take a tenth of a spinner's life.
	in_main=$(samples "$scope" main)
	own=$(samples "$scope" "spin_$fn")
	[ "$all" -gt 0 ] || fail "$rel: no samples ($(head -3 "$TMP/folded"))"
	[ $((own * 100)) -ge $((in_main * 90)) ] && [ $((in_main * 100)) -ge $((all * 50)) ] ||
		fail "$rel: $own of $in_main samples in main() ($all in all) in spin_$fn, want >= 90 %; its biggest stacks without main():
$(without_main "$scope" | head -12)
grouped by their outermost frame's module:
$(without_main "$scope" | awk '{ n = $NF; sub(/ [0-9]+$/, ""); k = split($0, f, ";")
	m = k < 2 ? "(no frame)" : f[2]; sub(/\+0x[0-9a-f]+$/, "", m); s[m] += n }
	END { for (m in s) print s[m], m }' | sort -nr | head -8)"
	for o in $others; do
		[ "$(samples "$scope" "spin_$o")" = 0 ] || fail "$rel: samples in spin_$o (another cgroup's)"
	done
	[ "$count" = count ] || { echo "$rel: $all samples ($own in spin_$fn)"; return; }
	cpu_us=$(cpu_of "$rel")
	want=$((cpu_us * HZ / 1000000))
	if [ -n "${CGTMA_EMULATION:-}" ]; then
		# Under an emulator (tests/vm sets CGTMA_EMULATION) the guest's cpu-clock timer fires
		# late whenever the host is busy, and the periods it missed are skipped: 38 to 80 %
		# of CPU time x frequency came, for every cgroup at once. What stays is each
		# cgroup's share: of A's, B's and C's samples, its share of their CPU time, within 20 %.
		# So it is when the kernel throttles the events (cycles sampled on the arm64 rows'
		# emulated PMU): every CPU loses samples alike.
		[ $((all * abc_cpu * 100)) -ge $((cpu_us * abc_samples * 80)) ] &&
			[ $((all * abc_cpu * 100)) -le $((cpu_us * abc_samples * 120)) ] ||
			fail "$rel: $all of $abc_samples samples, for $cpu_us of $abc_cpu us of CPU time: not its share within 20 %"
		echo "$rel: $all of $abc_samples samples ($own in spin_$fn), CPU time $cpu_us of $abc_cpu us (under emulation: the share is checked; $want at $HZ Hz${throttled:+; throttled: perf_event_max_sample_rate $throttled})"
		return
	fi
	[ -z "$throttled" ] ||
		{ echo "$rel: $all samples ($own in spin_$fn); count not checked: the kernel throttled sampling (perf_event_max_sample_rate $throttled)"; return; }
	[ $((all * 100)) -ge $((want * 80)) ] && [ $((all * 100)) -le $((want * 120)) ] ||
		fail "$rel: $all samples, want $want (CPU time $cpu_us us x $HZ Hz) within 20 %"
	echo "$rel: $all samples ($own in spin_$fn), CPU time $cpu_us us: $want expected"
}
cpu_of() { echo $(( $(eval echo "\$u1_$1") - $(eval echo "\$u0_$1") )); }
# What each cgroup's samples outside main() are, for the log (the rule below is about them).
for c in A B C E; do
	echo "$c: $(samples "$(cg_path $c)") samples, $(samples "$(cg_path $c)" main) in main(); without main(), by outermost frame:" \
		"$(without_main "$(cg_path $c)" | awk '{ n = $NF; sub(/ [0-9]+$/, ""); k = split($0, f, ";")
		m = k < 2 ? "(no frame)" : f[2]; sub(/\+0x[0-9a-f]+$/, "", m); s[m] += n }
		END { for (m in s) print s[m], m }' | sort -nr | head -6 | paste -sd,)"
done
abc_samples=$(( $(samples "$(cg_path A)") + $(samples "$(cg_path B)") + $(samples "$(cg_path C)") ))
abc_cpu=$(( $(cpu_of A) + $(cpu_of B) + $(cpu_of C) ))
check A alpha "beta gamma"
check B beta "alpha gamma"
check C gamma "alpha beta"
# The process gone 1.5 s before its interval was read: resolved all the same (too few samples
# for the count's tolerance). Its maps are read when its first samples announce it, which
# races with its exit: under an emulator (four spinners on two slow vCPUs starving cgtma's
# reader) E lost that race outright in one run of the 6.1 row, every frame of it unnamed.
# There it is reported, not checked; docs/sampling.md says the limit.
if [ -n "${CGTMA_EMULATION:-}" ]; then
	echo "E (exited): $(samples "$(cg_path E)") samples, $(samples "$(cg_path E)" main) in main(), $(samples "$(cg_path E)" spin_beta) in spin_beta (under emulation: not checked)"
	[ "$(samples "$(cg_path E)" spin_alpha)$(samples "$(cg_path E)" spin_gamma)" = 00 ] ||
		fail "E: samples in another cgroup's function"
else
	check E beta "alpha gamma" nocount
fi
[ "$(samples "$(cg_path U)")" = 0 ] || fail "the untracked cgroup U has samples"
grep -q "$(cg_path U)" "$TMP/folded" && fail "the untracked cgroup U is in the folded file"

# The record keeps each interval's samples: report's folded stacks are the live run's.
"$CGTMA" report "$TMP/rec" --folded "$TMP/folded2" 2>"$TMP/e0" || fail "report --folded: $(cat "$TMP/e0")"
cmp -s "$TMP/folded" "$TMP/folded2" ||
	fail "report --folded differs from the live --folded: $(diff "$TMP/folded" "$TMP/folded2" | head -5)"
# --pprof, read by a real consumer: focused on C's label, C's function is on top.
if command -v go >/dev/null; then
	top=$(go tool pprof -top -symbolize=none -tagfocus="cgroup=^$(cg_path C)\$" "$TMP/pb.gz" \
		2>/dev/null | awk '$1 ~ /^[0-9]+$/ && $2 ~ /%$/ { print $NF; exit }')
	[ "$top" = spin_gamma ] || fail "go tool pprof -tagfocus on C: top function '$top', want spin_gamma"
	# --pprof carries source lines (DWARF, read for the outputs that carry them alone).
	top=$(go tool pprof -top -lines -symbolize=none -tagfocus="cgroup=^$(cg_path C)\$" \
		"$TMP/pb.gz" 2>/dev/null | awk '$1 ~ /^[0-9]+$/ && $2 ~ /%$/ { print $NF; exit }')
	[[ "$top" = */spinfn.c:[0-9]* ]] ||
		fail "go tool pprof -lines on C: top line '$top', want spinfn.c:LINE"
else
	echo "go tool pprof not run: go is not installed (make test-deps installs golang-go)"
fi

# Nested tracked cgroups: a sample in N/I is N's too, as its counts are. N runs nothing of its
# own, so its stacks are I's, line for line and count for count (both are counted at the same
# sample, in the kernel).
# Each run below starts its spinners once sampling is on (its first interval has ended), and
# ends after them.
cg_make N/I
# Where the kernel throttled the first run's events, -F above its new limit is refused.
rate=$(cat /proc/sys/kernel/perf_event_max_sample_rate)
[ "$rate" -ge $HZ ] || HZ=$rate
cgtma_start "$TMP/nout" 1 -G "$(cg_path N)" -G "$(cg_path N/I)" -e cpu-clock --sample -F $HZ \
	-I 500 -j --folded "$TMP/nested"
cg_start N/I "$SPINFN" alpha 1500
cg_wait
cgtma_more "$TMP/nout"
cgtma_signal INT "nested run"
inner=$(grep -c "^$(cg_path N/I);" "$TMP/nested")
[ "$inner" -gt 0 ] || fail "nested: no samples in N/I: $(head -3 "$TMP/nested")"
diff <(grep "^$(cg_path N/I);" "$TMP/nested" | sed "s|^$(cg_path N/I);||" | sort) \
	<(grep "^$(cg_path N);" "$TMP/nested" | sed "s|^$(cg_path N);||" | sort) >"$TMP/ndiff" ||
	fail "nested: N's stacks are not N/I's: $(head -6 "$TMP/ndiff")"
echo "nested: N/I's $inner stacks ($(grep "^$(cg_path N/I);" "$TMP/nested" | awk '{ s += $NF } END { print s }') samples) are N's too"

# A full counts map: with room for one entry per interval, two spinning processes are two
# entries, and the samples of the second are lost. Said on stderr once, with the run's count,
# and in each interval's JSON where it happened, summing to it; the samples kept and those
# lost are the spinners' CPU time times the frequency, within 20 %.
cgtma_start "$TMP/full" 1 -G "$(cg_path A)" -G "$(cg_path B)" -e cpu-clock --sample \
	--sample-max 1 -F $HZ -I 500 -j --folded "$TMP/ffull"
u0=$(($(usage_usec A) + $(usage_usec B)))
cg_start A "$SPINFN" alpha 1500
cg_start B "$SPINFN" beta 1500
cg_wait
u1=$(($(usage_usec A) + $(usage_usec B)))
cgtma_more "$TMP/full"
cgtma_signal INT "full-map run"
cp "$TMP/err" "$TMP/efull"
lost=$(sed -n 's/.*--sample: \([0-9]*\) samples lost: the kernel.s counts map was full.*/\1/p' "$TMP/efull")
[ -n "$lost" ] && [ "$(grep -c "samples lost" "$TMP/efull")" = 1 ] ||
	fail "full map: no (or more than one) loss on stderr: $(cat "$TMP/efull")"
json_lost=$(jq -s '[.[] | select(.summary | not) | .samples_lost // 0] | add' "$TMP/full")
summary_lost=$(jq -s '[.[] | select(.summary) | .samples_lost] | add' "$TMP/full")
[ "$json_lost" = "$lost" ] && [ "$summary_lost" = "$lost" ] ||
	fail "full map: intervals' JSON say $json_lost lost, the summary $summary_lost, stderr $lost"
kept=$(awk '{ n += $NF } END { print n + 0 }' "$TMP/ffull")
want=$(((u1 - u0) * HZ / 1000000))
if [ -z "${CGTMA_EMULATION:-}" ] && [ -z "$throttled" ]; then
	[ $(((kept + lost) * 100)) -ge $((want * 80)) ] &&
		[ $(((kept + lost) * 100)) -le $((want * 120)) ] ||
		fail "full map: $kept samples kept and $lost lost, want $want in all within 20 %"
fi
[ $((lost * 10)) -ge $((kept + lost)) ] ||
	fail "full map: $lost samples lost of $((kept + lost)), want a tenth at least"
echo "full map (--sample-max 1): $kept samples kept, $lost lost (said on stderr and in the JSON), $want expected"

# Bad input: an unknown event and a frequency above the kernel's limit are usage errors.
"$CGTMA" -G "$(cg_path A)" -e cpu-clock --sample=no-such-event -d 1 >/dev/null 2>"$TMP/e1"
rc=$?
[ $rc = 2 ] && grep -q "no-such-event" "$TMP/e1" || fail "unknown event: rc $rc, $(cat "$TMP/e1")"
max=$(cat /proc/sys/kernel/perf_event_max_sample_rate)
"$CGTMA" -G "$(cg_path A)" -e cpu-clock --sample -F $((max + 1)) -d 1 >/dev/null 2>"$TMP/e2"
rc=$?
[ $rc = 2 ] && grep -q "perf_event_max_sample_rate" "$TMP/e2" || fail "-F too high: rc $rc, $(cat "$TMP/e2")"
"$CGTMA" -G "$(cg_path A)" -e cpu-clock --sample --folded /nonexistent/dir/f -d 1 >/dev/null 2>"$TMP/e3"
rc=$?
[ $rc = 1 ] && grep -q "/nonexistent/dir/f" "$TMP/e3" || fail "unwritable --folded: rc $rc, $(cat "$TMP/e3")"
"$CGTMA" -G "$(cg_path A)" -e cpu-clock --sample --pprof /nonexistent/dir/p -d 1 >/dev/null 2>"$TMP/e4"
rc=$?
[ $rc = 1 ] && grep -q "/nonexistent/dir/p" "$TMP/e4" || fail "unwritable --pprof: rc $rc, $(cat "$TMP/e4")"

# The terminal: the cgroup's top functions under its row. cgtma starts once the spinner has
# run 0.2 s in A (under the kernel matrix's TCG guests, on a loaded host, its exec alone took
# over a second), and the spinner outlives cgtma's start-up and two intervals: it spins until
# cgtma is done (an arm64 guest sampling cycles started cgtma after more than 8 s).
spinner_running A alpha
"$CGTMA" -G "$(cg_path A)" -e cpu-clock --sample=$SAMPLED -d 2.2 -I 1000 >"$TMP/term" 2>"$TMP/err2" || fail "terminal run: $(cat "$TMP/err2")"
spinner_stop
grep -Eq '^ +[0-9.]+ %  spin_alpha$' "$TMP/term" || fail "no top function in the terminal: $(cat "$TMP/term")"
grep -Eq "top functions of [0-9]+ $SAMPLED samples" "$TMP/term" ||
	fail "the terminal does not say $SAMPLED samples: $(cat "$TMP/term")"
echo "ok"
