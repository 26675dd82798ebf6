#!/bin/bash
# uperf, for real: a TCP stream (the profile written below: two threads, each writing 64 KiB
# messages for 4 s) from a uperf master in cgroup C and network namespace A to a uperf slave
# in cgroup S and namespace B, the namespaces joined by a veth pair with a private /30 on its
# two ends only. Profiled with -G / -G C -G S, -T, and --irq when this cgtma has it (it
# arrives with the interrupt scopes; `cgtma --help` says). The rows a user reads:
# - uperf's threads in C's task rows, comm "uperf", at least the two stream threads with
#   cpu-clock over 10 ms each over the run, and uperf threads in S's rows too;
# - each of C and S: its cgroup row equals the sum of its task rows, every interval, exactly
#   (each slice charged to the cgroup is charged to one of its threads);
# - conservation: without --irq the root row equals the system row, every interval,
#   exactly; with --irq, system = root + the irq scopes within 0.1 % every interval, and
#   the NET_RX and HRTIMER scopes ran.
# uperf is not in Debian: tools/build-uperf.sh builds it from its source.
. "$(dirname "$0")/lib.sh"

command -v uperf >/dev/null ||
	skip "uperf is not installed (tools/build-uperf.sh SRC_DIR builds it from https://github.com/uperf/uperf)"
watch_perf_cgroup_sessions

NS_A=cgtma-ua-$$ NS_B=cgtma-ub-$$
# A /30 out of 10.0.0.0/8 picked from the pid, on the veth ends only: nothing routes it.
net=$((($$ % 250) + 1)) sub=$(((RANDOM % 60) * 4))
IP_A=10.$net.$sub.1 IP_B=10.$net.$sub.2
veth_or_skip $NS_A ua$$ $IP_A $NS_B ub$$ $IP_B

cat >"$TMP/stream.xml" <<XML
<?xml version="1.0"?>
<profile name="cgtma-stream">
  <group nthreads="2">
    <transaction iterations="1">
      <flowop type="connect" options="remotehost=$IP_B protocol=tcp"/>
    </transaction>
    <transaction duration="4s">
      <flowop type="write" options="size=64k"/>
    </transaction>
    <transaction iterations="1">
      <flowop type="disconnect"/>
    </transaction>
  </group>
</profile>
XML

cg_make C
cg_make S
C=$(cg_path C) S=$(cg_path S)
irq=()
"$CGTMA" --help | grep -q -- '--irq' && irq=(--irq)
echo "cgtma ${irq[*]:-without --irq (this build has none)}; uperf $(uperf -V 2>&1 | head -n1)"

out=$TMP/out
cgtma_start "$out" 1 -e cpu-clock -I 500 --json -G / -G "$C" -G "$S" -T "${irq[@]}"
# Into the cgroup first, then into the network namespace.
cg_run S nsenter --net=/run/netns/$NS_B -- uperf -s -P 20000 \
	>"$TMP/slave" 2>&1 &
slave=$!
on_exit "kill $slave"
sleep 0.5
cg_run C nsenter --net=/run/netns/$NS_A -- uperf -m "$TMP/stream.xml" -P 20000 >"$TMP/master" 2>&1 || fail "uperf's master failed: $(tail -n 20 "$TMP/master")"
cgtma_more "$out" 2
cgtma_signal INT
grep -E '^Total|Run Statistics' -A2 "$TMP/master" | head -n 4

# uperf's threads, by their comm, with their cpu-clock over the run (the summary).
threads() {
	jq -r --arg cg "$1" 'select(.summary == true) | .rows[] |
		select(.scope == "task" and .cgroup == $cg and .comm == "uperf") |
		"\(.tid) \(.counts["cpu-clock"])"' "$out"
}
threads "$C" >"$TMP/c-threads"
threads "$S" >"$TMP/s-threads"
echo "C's uperf threads (tid cpu-clock ns): $(tr '\n' ' ' <"$TMP/c-threads")"
echo "S's uperf threads: $(tr '\n' ' ' <"$TMP/s-threads")"
busy=$(awk '$2 > 10000000' "$TMP/c-threads" | wc -l)
[ "$busy" -ge 2 ] || fail "C has $busy uperf threads with over 10 ms of cpu-clock, want >= 2"
[ -s "$TMP/s-threads" ] || fail "S's task rows have no uperf thread"
awk '$2 <= 0 { exit 1 }' "$TMP/s-threads" || fail "an uperf thread in S has no cpu-clock"

# A cgroup's row is the sum of its threads' rows, every interval.
for cg in "$C" "$S"; do
	jq -e -s --arg cg "$cg" 'all(.[]; .rows as $r |
		([$r[] | select(.scope == "cgroup" and .cgroup == $cg) | .counts["cpu-clock"]] |
		 add // 0) ==
		([$r[] | select(.scope == "task" and .cgroup == $cg) | .counts["cpu-clock"]] |
		 add // 0))' "$out" >/dev/null ||
		{ perf_seen; fail "$cg: its row is not the sum of its task rows in some interval"; }
done

if [ ${#irq[@]} = 0 ]; then
	jq -e -s 'all(.[]; .rows as $r |
		[$r[] | select(.scope == "system") | .counts["cpu-clock"]] ==
		[$r[] | select(.scope == "cgroup" and .cgroup == "/") | .counts["cpu-clock"]])' \
		"$out" >/dev/null || { perf_seen; fail "the root row is not the system row"; }
	echo "conservation: system == root every interval (no --irq in this build)"
else
	for v in NET_RX HRTIMER; do
		n=$(jq --arg v "$v" 'select(.summary == true) | .rows[] |
			select(.scope == "irq" and .irq == $v and .cpu == null) |
			.counts["cpu-clock"]' "$out")
		echo "irq:$v cpu-clock over the run: ${n:-none}"
		[ -n "$n" ] && [ "$n" -gt 0 ] || fail "no $v scope with cpu-clock in the summary"
	done
	jq -e -s 'all(.[]; .rows as $r |
		([$r[] | select(.scope == "system") | .counts["cpu-clock"]] | add) as $sys |
		(([$r[] | select(.scope == "cgroup" and .cgroup == "/") | .counts["cpu-clock"]] |
		  add) + ([$r[] | select(.scope == "irq" and .cpu == null) |
		  .counts["cpu-clock"]] | add // 0)) as $parts |
		($sys - $parts | fabs) <= $sys * 0.001)' "$out" >/dev/null ||
		{ perf_seen; fail "system != root + irq scopes within 0.1 % in some interval"; }
	echo "conservation: system == root + irq scopes within 0.1 % every interval"
fi
echo "ok"
