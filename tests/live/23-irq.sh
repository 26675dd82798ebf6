#!/bin/bash
# --irq: interrupt work as its own scopes, checked with exact tracepoint counts. Two network
# namespaces joined by a veth pair (a private /30 on the veth ends only), a sender in cgroup
# A sending exactly N UDP datagrams (tests/helpers/udp.c) to a receiver in cgroup B,
# counting syscalls:sys_enter_sendto, net:netif_receive_skb and cpu-clock:
# - without --irq (today's rule: work is charged to the task it ran in): A's
#   sys_enter_sendto is exactly N, and A holds most receives (veth raises NET_RX on the
#   sender's CPU, and the sender's own local_bh_enable runs it); system = root as below;
# - with --irq: A's sys_enter_sendto is exactly N; A's and B's netif_receive_skb are 0; the
#   NET_RX scope holds every receive of the system (at least N); every interval, for every
#   event, system = root + the irq scopes (cpu-clock within 0.1 %, the tracepoints exactly).
# The same at -I 10 through a stream without pauses (flushes inside softirqs), over
# loopback in one namespace, and with a CPU-bound noise cgroup on every CPU:
# noise's netif_receive_skb is 0 with --irq. Then the outputs: per-CPU rows with -A, the
# terminal's irq: rows, --record and `report`, idle scopes without rows (but with -v), and a
# bad --irq name (exit 2).
# An interrupt that comes while cgtma's flush of its own CPU is updating the slice stays with
# what it interrupted, and its interval is marked: every interval that lost receives from
# NET_RX must carry such a mark, and one is made to happen (CGTMA_TEST_IRQ_IN_UPDATE).
# irq:softirq_entry is not used as a reference: its order against cgtma's program on the
# same tracepoint is not defined.
# live: both-hooks
. "$(dirname "$0")/lib.sh"

UDP=${CGTMA_BUILD:-build}/tests/udp
[ -x "$UDP" ] || fail "no $UDP: build first (make $UDP)"
commands_or_skip ip
tracepoint_or_skip syscalls/sys_enter_sendto

EVS=syscalls:sys_enter_sendto,net:netif_receive_skb,cpu-clock
N=4000
NCPU=$(getconf _NPROCESSORS_ONLN)
NSA=cgtma-irq-$$-a NSB=cgtma-irq-$$-b
veth_or_skip $NSA cgtma$$a 10.254.23.1 $NSB cgtma$$b 10.254.23.2

cg_make A
cg_make B
cg_make noise
A=$(cg_path A) B=$(cg_path B) NOISE=$(cg_path noise)

# run NAME NS-RECV ADDR NOISE CGTMA-ARGS...: cgtma with -G / A B noise; after its first
# line, a receiver in B (in NS-RECV), N datagrams from A (in $NSA) to ADDR (in bursts of
# N/10, PAUSE ms apart), and with NOISE=1 a spinner per CPU in noise.
PAUSE=100
run() {
	local name=$1 nsr=$2 addr=$3 noise=$4 out=$TMP/out-$1 got
	shift 4
	cgtma_start "$out" 1 -e $EVS --json -I 250 -G / -G "$A" -G "$B" -G "$NOISE" "$@"
	cg_run B nsenter --net=/run/netns/"$nsr" -- "$UDP" recv 5301 $N 3 >"$TMP/got" &
	local recv=$!
	if [ "$noise" = 1 ]; then
		for ((c = 0; c < NCPU; c++)); do cg_start noise "$WORKLOAD" spin 1500; done
	fi
	sleep 0.2
	cg_run A nsenter --net=/run/netns/$NSA -- "$UDP" send "$addr" 5301 $N $PAUSE ||
		fail "$name: the sender failed"
	wait $recv || fail "$name: the receiver failed"
	cg_wait
	sleep 0.3
	cgtma_stop "$name"
	got=$(cat "$TMP/got")
	echo "$name: the receiver got $got of $N datagrams"
}

# sums NAME "EVENT SELECT"...: each EVENT summed over the interval lines of run NAME, rows
# picked by the jq filter SELECT; on one line, in one jq (each costs 0.5 s under emulation).
sums() {
	local name=$1 e prog=''
	shift
	for e in "$@"; do prog+="${prog:+, }s(\"${e%% *}\"; ${e#* })"; done
	jq -r -s "[.[] | select(.summary != true) | .rows[]] as \$r |
		def s(\$ev; f): [\$r[] | select(f) | .counts[\$ev]] | add // 0;
		[$prog] | map(tostring) | join(\" \")" "$TMP/out-$name"
}
cg() { echo ".scope == \"cgroup\" and .cgroup == \"$1\" and .cpu == null"; }
SYS='.scope == "system"'
SENDTO=syscalls:sys_enter_sendto RX=net:netif_receive_skb
NETRX='.scope == "irq" and .irq == "NET_RX" and .cpu == null'

# conserved NAME: system = root + irq scopes every interval: tracepoints exactly, cpu-clock
# within 0.1 %.
conserved() {
	local bad
	bad=$(jq -c 'select(.summary != true) |
		def c(s; $e): [.rows[] | select(s) | .counts[$e]] | add // 0;
		. as $l | [ "syscalls:sys_enter_sendto", "net:netif_receive_skb", "cpu-clock" ][] |
		. as $e |
		{ e: $e, sys: ($l | c(.scope == "system"; $e)),
		  parts: ($l | c((.scope == "cgroup" and .cgroup == "/" and .cpu == null) or
				 (.scope == "irq" and .cpu == null); $e)) } |
		select(if .e == "cpu-clock" then ((.sys - .parts) | fabs) > 0.001 * .sys
		       else .sys != .parts end)' "$TMP/out-$1") || fail "$1: jq failed"
	[ -z "$bad" ] || fail "$1: system != root + irq scopes: ${bad%%$'\n'*}"
}

# irq_marked NAME: the intervals of run NAME with a mark of an interrupt that came during an
# update (its work went to the slice's owner), and those where receives went outside NET_RX
# without one, as "MARKED UNMARKED-TIMES...".
irq_marked() {
	jq -r -s --arg rx "$RX" '[.[] | select(.summary != true) |
		def c(s): [.rows[] | select(s) | .counts[$rx]] | add // 0;
		{ t: .time, marked: ([.marks[]? | select(.kind == "interrupt")] | length > 0),
		  off: (c(.scope == "system") != c(.scope == "irq" and .irq == "NET_RX" and
						 .cpu == null)) }] |
		[([.[] | select(.marked)] | length)] + [.[] | select(.off and (.marked | not)) |
		.t] | map(tostring) | join(" ")' "$TMP/out-$1"
}

# check_irq NAME: every receive in NET_RX, exactly, but in an interval marked for an
# interrupt that came while a program updated the CPU's slice (a flush run in cgtma's own
# task can be interrupted): there its receives went to the slice's owner, and the mark says
# so.
check_irq() {
	local name=$1 sent rx_a rx_b rx_sys rx_net rx_noise marked unmarked
	read -r sent rx_a rx_b rx_noise rx_sys rx_net <<<"$(sums "$name" \
		"$SENDTO $(cg "$A")" "$RX $(cg "$A")" "$RX $(cg "$B")" "$RX $(cg "$NOISE")" \
		"$RX $SYS" "$RX $NETRX")"
	[ "$sent" -eq $N ] || fail "$name: A's sys_enter_sendto is $sent, want exactly $N"
	echo "$name: receives: system $rx_sys, NET_RX $rx_net, A $rx_a, B $rx_b, noise $rx_noise"
	read -r marked unmarked <<<"$(irq_marked "$name")"
	[ -z "$unmarked" ] ||
		fail "$name: receives outside NET_RX in an interval without a mark (time $unmarked)"
	conserved "$name"
	if [ "$marked" -gt 0 ]; then
		echo "$name: $marked intervals marked for interrupts during an update"
		return
	fi
	[ "$rx_a" -eq 0 ] && [ "$rx_b" -eq 0 ] ||
		fail "$name: with --irq A and B hold receives (A $rx_a, B $rx_b), want 0"
	[ "$rx_noise" -eq 0 ] || fail "$name: noise holds $rx_noise receives with --irq, want 0"
	[ "$rx_net" -eq "$rx_sys" ] || fail "$name: NET_RX holds $rx_net of $rx_sys receives"
	[ "$rx_net" -ge $N ] || fail "$name: NET_RX holds $rx_net receives, want >= $N"
}

# Today's rule, without --irq.
run plain $NSB 10.254.23.2 0
read -r sent rx_a rx_sys <<<"$(sums plain "$SENDTO $(cg "$A")" "$RX $(cg "$A")" "$RX $SYS")"
[ "$sent" -eq $N ] || fail "plain: A's sys_enter_sendto is $sent, want exactly $N"
echo "plain: A holds $rx_a of $rx_sys receives"
[ $((2 * rx_a)) -gt "$rx_sys" ] || fail "plain: A holds $rx_a of $rx_sys receives, want most"
[ "$(jq -s '[.[].rows[] | select(.scope == "irq")] | length' "$TMP/out-plain")" -eq 0 ] ||
	fail "plain: irq rows without --irq"
conserved plain

run veth $NSB 10.254.23.2 0 --irq
check_irq veth
# An interrupt during an update, made to happen (every third interrupt entry on a CPU taken
# as one): its receives go to what ran, the sender's cgroup A most of all, and every
# interval that lost receives from NET_RX says so with its mark.
CGTMA_TEST_IRQ_IN_UPDATE=3 run in-update $NSB 10.254.23.2 0 --irq
read -r marked unmarked <<<"$(irq_marked in-update)"
read -r rx_sys rx_net <<<"$(sums in-update "$RX $SYS" "$RX $NETRX")"
echo "in-update: receives: system $rx_sys, NET_RX $rx_net; $marked intervals marked"
[ -z "$unmarked" ] ||
	fail "in-update: receives outside NET_RX in an interval without a mark (time $unmarked)"
[ "$marked" -gt 0 ] && [ "$rx_net" -lt "$rx_sys" ] ||
	fail "in-update: want receives outside NET_RX, in marked intervals (NET_RX $rx_net of" \
		"$rx_sys, $marked marked)"
conserved in-update
# Flushes inside softirqs: the shortest interval through a stream without pauses, where the
# sender's CPU spends much of its time in NET_RX run from the sender's own system calls. A
# flush's IPI there charges NET_RX's part to NET_RX and the sender's parts before it to A,
# in that interval: conservation every interval, and A's sendto calls exactly N.
N=20000 PAUSE=0
run flush $NSB 10.254.23.2 0 --irq -I 10
check_irq flush
N=4000 PAUSE=100
run loopback $NSA 127.0.0.1 0 --irq=NET_RX,NET_TX,hardirq,TIMER
check_irq loopback
# Rows of the selected scopes only, of those that took interrupts (NET_RX did); an idle one
# has none.
jq -e -s '[.[].rows[] | select(.scope == "irq") | .irq] | unique |
	(. - ["NET_RX", "NET_TX", "TIMER", "hardirq"]) == [] and index("NET_RX") != null' \
	"$TMP/out-loopback" >/dev/null ||
	fail "loopback: the irq rows are not of the four selected scopes: $(jq -s -c \
		'[.[].rows[] | select(.scope == "irq") | .irq] | unique' "$TMP/out-loopback")"
run noise $NSB 10.254.23.2 1 --irq -A
check_irq noise
# -A: every irq scope has one row per online CPU, which add up to its total row.
bad=$(jq -c --argjson ncpu "$NCPU" 'select(.summary != true) | . as $l |
	[.rows[] | select(.scope == "irq" and .cpu == null)][] | . as $t |
	[$l.rows[] | select(.scope == "irq" and .irq == $t.irq and .cpu != null)] |
	select(length != $ncpu or
	       (map(.counts["net:netif_receive_skb"]) | add) != $t.counts["net:netif_receive_skb"]) |
	$t.irq' "$TMP/out-noise")
[ -z "$bad" ] || fail "noise: -A irq rows missing or not adding up: ${bad%%$'\n'*}"

# The other outputs name them: the terminal's irq: rows, and a record replayed by report.
# -v: NET_RX may be idle here, and idle scopes have rows only with -v.
"$CGTMA" -e cpu-clock --irq=NET_RX,hardirq -I 200 -d 0.5 -v --record "$TMP/r.cgtma" \
	>"$TMP/text" 2>"$TMP/err" || fail "record: cgtma failed: $(cat "$TMP/err")"
grep -q '^irq:NET_RX' "$TMP/text" && grep -q '^irq:hardirq' "$TMP/text" ||
	fail "terminal: no irq:NET_RX or irq:hardirq row: $(head -20 "$TMP/text")"
"$CGTMA" report "$TMP/r.cgtma" --json >"$TMP/replay" 2>"$TMP/err" ||
	fail "report failed: $(cat "$TMP/err")"
[ "$(jq -s '[.[-1].rows[] | select(.scope == "irq") | .irq] | sort | join(",")' \
	"$TMP/replay")" = '"NET_RX,hardirq"' ] || fail "report: the record lost the irq rows"

# Idle scopes have no rows, as idle cgroups, but with -v: without it, every irq row of an
# interval (or the summary) took interrupts (cpu-clock enabled: multiplex not null), and some
# scope of the eleven is idle in some interval; with -v every scope has a row every interval.
"$CGTMA" -e cpu-clock --irq -I 100 -d 0.6 --json >"$TMP/quiet" 2>"$TMP/err" ||
	fail "--irq: cgtma failed: $(cat "$TMP/err")"
jq -e -s 'all(.[].rows[] | select(.scope == "irq"); .multiplex["cpu-clock"] != null)' \
	"$TMP/quiet" >/dev/null || fail "--irq: an idle interrupt scope has a row without -v"
jq -e -s 'any(.[]; ([.rows[] | select(.scope == "irq")] | length) < 11)' "$TMP/quiet" \
	>/dev/null || fail "--irq: every scope took interrupts in every interval: nothing hidden"
"$CGTMA" -e cpu-clock --irq -I 100 -d 0.6 --json -v >"$TMP/loud" 2>"$TMP/err" ||
	fail "--irq -v: cgtma failed: $(cat "$TMP/err")"
jq -e -s 'all(.[]; ([.rows[] | select(.scope == "irq")] | length) == 11)' "$TMP/loud" \
	>/dev/null || fail "--irq -v: not every scope has a row every interval"
# The terminal: the same rows as --json.
"$CGTMA" -e cpu-clock --irq -I 100 -d 0.3 >"$TMP/text" 2>"$TMP/err" ||
	fail "--irq (terminal): cgtma failed: $(cat "$TMP/err")"
[ "$(grep -c '^irq:' "$TMP/text")" -lt "$(( $(grep -c '^# ' "$TMP/text") * 11 ))" ] ||
	fail "--irq (terminal): every scope has a row every interval: $(head -20 "$TMP/text")"

# A bad name: exit 2, naming it and the valid ones.
"$CGTMA" -e cpu-clock --irq=NET_RX,BOGUS -d 0.1 >/dev/null 2>"$TMP/err"
rc=$?
[ $rc -eq 2 ] || fail "--irq=NET_RX,BOGUS exited $rc, want 2"
grep -q "BOGUS" "$TMP/err" && grep -q "HRTIMER" "$TMP/err" ||
	fail "--irq=NET_RX,BOGUS: the message names neither it nor the valid names: $(cat "$TMP/err")"
echo ok
