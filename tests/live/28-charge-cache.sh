#!/bin/bash
# The BPF side's charge cache (bpf/charge.bpf.h: each CPU keeps the counts of the cgroups it
# charged lately, added to the maps at the flush) where it could go wrong:
#  1. Busy before cgtma: ping-pongs between cgroups A and B run on every CPU before cgtma
#     starts, so its hooks charge A and B (finding them untracked) before user space tracks
#     them. Then N getppid() calls in A, M in B, spread over both CPUs, must count exactly
#     N and M: tracking moves the generation, and every CPU looks A and B up again.
#  2. More cgroups than a CPU's entries (CGTMA_CHARGE_CACHE, 32) at once: 48 cgroups, each
#     with its own number of calls, all running together. Each must count exactly its own,
#     in the intervals and in the summary, with the CPU rows adding up to each total (-A).
#  3. Two cgroups whose ids share an entry, taking turns on one CPU: in every interval the
#     one charged first holds the entry, and the other is charged in the map directly (-v
#     must say that happened). Each must count exactly its own.
#  4. More cgroups charged on one CPU in one interval than its list of charged cgroups holds
#     (CGTMA_CHARGED_MAX, 511): one process visits 600, making 3 calls in each. Every one
#     must count exactly 3 (user space must see the list overflowed and read them all).
# Cases 2 to 4 also track NR_IDLE idle cgroups (case 4 NR_IDLE_TOUR more), so that user
# space reads only the cgroups the lists name (it reads all of them when over a quarter of
# those tracked ran, which would hide a list cut short in case 4); -v must say it did.
# live: both-hooks
. "$(dirname "$0")/lib.sh"

EV=syscalls:sys_enter_getppid
N=60000 M=40000
NR_MANY=48
NR_IDLE=150
NR_IDLE_TOUR=1500
NR_TOUR=600

# sum FILE CGROUP [CPU]: a cgroup's getppid() calls over the interval lines.
sum() { cgroup_sum "$1" "$2" "$EV" "${3:-}"; }
# slot_of NAME: the charge cache entry of cgroup many/NAME (its id's low bits are the inode).
slot_of() { echo $(($(stat -c %i "$CG_ROOT/$CG_BASE/many/$1") % 32)); }
# stop OUT [now]: one more interval (not with now), then Ctrl-C; cgtma must exit 0 and say
# nothing but -v's lines.
stop() {
	[ "${2:-}" = now ] || cgtma_more "$1"
	cgtma_signal INT
	grep -v '^cgtma: \(BPF\|switch hook\|cgroup view\|mark\|warning: switch hook: the perf-event hook missed\)' \
		"$TMP/err" | grep -q . &&
		fail "cgtma wrote to stderr: $(cat "$TMP/err")"
	return 0
}

# --- 1. cgroups busy before cgtma starts ------------------------------------------------
cg_make A
cg_make B
A=$(cg_path A) B=$(cg_path B)
pingpong_start A B
sleep 0.5
out=$TMP/busy
cgtma_start "$out" 2 -e "$EV" -I 200 --json -A -G "$A" -G "$B"
last=$(($(nproc) - 1))
cg_start A taskset -c 0 "$WORKLOAD" getppid $((N / 2)) 20
cg_start A taskset -c $last "$WORKLOAD" getppid $((N - N / 2)) 30
cg_start B taskset -c $last "$WORKLOAD" getppid $M 20
cg_wait
stop "$out"
pingpong_stop
# A's and B's totals over the intervals, then their CPU rows added up, in one jq (each
# reads this -A output for a second under emulation).
read -r got_a got_b cpus_a cpus_b <<<"$(jq -r -s --arg a "$A" --arg b "$B" --arg ev "$EV" \
	--argjson n "$(nproc)" '[.[] | select(.summary != true) | .rows[] |
	select(.scope == "cgroup")] as $r |
	def s($c; f): [$r[] | select(.cgroup == $c) | select(f) | .counts[$ev]] | add // 0;
	[s($a; .cpu == null), s($b; .cpu == null),
	 s($a; .cpu != null and .cpu < $n), s($b; .cpu != null and .cpu < $n)] |
	map(tostring) | join(" ")' "$out")"
[ "$got_a" = $N ] && [ "$got_b" = $M ] ||
	fail "busy before cgtma: A counted $got_a (want $N), B $got_b (want $M)"
[ "$cpus_a" = "$got_a" ] ||
	fail "busy before cgtma: $A's CPU rows add up to $cpus_a, its total to $got_a"
[ "$cpus_b" = "$got_b" ] ||
	fail "busy before cgtma: $B's CPU rows add up to $cpus_b, its total to $got_b"
echo "busy before cgtma: A $got_a, B $got_b, exact"

# listed: the intervals that read only the cgroups listed, as -v says.
listed() {
	sed -n 's/^cgtma: BPF maps: \([0-9]*\) intervals read only.*/\1/p' "$TMP/err"
}
check_listed() {
	local n
	n=$(listed)
	[ -n "$n" ] || fail "$1: -v did not say how the cgroups were read: $(cat "$TMP/err")"
	((n > 0)) || fail "$1: no interval read only the cgroups listed: $(grep 'BPF maps' "$TMP/err")"
}

# --- 2. more cgroups than entries ---------------------------------------------------------
out=$TMP/many
many=()
for ((i = 0; i < NR_MANY; i++)); do many+=("many/c$i"); done
cg_make "${many[@]}"
# make_idle DIR N: N idle cgroups under DIR.
make_idle() {
	mkdir -p "$CG_ROOT/$CG_BASE/$1" || fail "cannot create cgroup $1"
	(cd "$CG_ROOT/$CG_BASE/$1" && seq -f 'c%g' 0 $(($2 - 1)) | xargs mkdir) ||
		fail "cannot create the idle cgroups under $1"
}
make_idle idle $NR_IDLE
cgtma_start "$out" 1 -v -e "$EV" -I 200 --json -A -G "$(cg_path many)/*" -G "$(cg_path idle)/*" \
	--max-cgroups 4096
# Cgroup i makes 1000 + 37 i calls, in ten bursts 20 ms apart.
for ((i = 0; i < NR_MANY; i++)); do
	cg_start "many/c$i" "$WORKLOAD" getppid $((1000 + 37 * i)) 20
done
cg_wait
stop "$out"
# Entries shared by two or more of them.
shared=$(for ((i = 0; i < NR_MANY; i++)); do slot_of "c$i"; done | sort | uniq -d | wc -l)
# Every cgroup's count in one pass (a jq per cgroup took minutes under emulation): its
# intervals' sum, its summary, and its CPU rows' sum.
jq -r -s --arg ev "$EV" '
	(map(select(.summary != true) | .rows[] | select(.scope == "cgroup")) |
	 group_by(.cgroup)[] | [.[0].cgroup, (map(select(.cpu == null) | .counts[$ev]) | add),
		(map(select(.cpu != null) | .counts[$ev]) | add)]) as $r |
	$r + [first(.[] | select(.summary == true) | .rows[] |
		select(.scope == "cgroup" and .cgroup == $r[0] and .cpu == null) | .counts[$ev])] |
	map(tostring) | join(" ")' "$out" >"$TMP/many-counts" ||
	fail "jq could not read cgtma's output: $(tail -c 300 "$out")"
for ((i = 0; i < NR_MANY; i++)); do
	cg=$(cg_path "many/c$i") want=$((1000 + 37 * i))
	read -r _ got per_cpu in_summary < <(awk -v cg="$cg" '$1 == cg' "$TMP/many-counts")
	[ "${got:-}" = $want ] || fail "$cg counted ${got:-nothing} in its intervals, want $want"
	[ "$in_summary" = $want ] || fail "$cg counted $in_summary in the summary, want $want"
	[ "$per_cpu" = $want ] || fail "$cg's CPU rows add up to $per_cpu, want $want"
done
check_listed "$NR_MANY cgroups"
echo "$NR_MANY cgroups at once ($shared cache slots shared by two or more): each exact;" \
	"$(listed) intervals read only those listed"

# --- 3. two cgroups sharing an entry, on one CPU ------------------------------------------
# The cgroup of many/ whose id shares c0's entry.
pair=""
for ((i = 1; i < NR_MANY; i++)); do
	[ "$(slot_of "c$i")" = "$(slot_of c0)" ] && { pair=c$i; break; }
done
[ -n "$pair" ] || fail "no cgroup of $NR_MANY shares c0's entry: their ids are not what was thought"
out=$TMP/pair
cgtma_start "$out" 1 -v -e "$EV" -I 200 --json -G "$(cg_path many/c0)" -G "$(cg_path many/$pair)" \
	-G "$(cg_path idle)/*" --max-cgroups 4096
cg_start many/c0 taskset -c $last "$WORKLOAD" getppid $N 30
cg_start "many/$pair" taskset -c $last "$WORKLOAD" getppid $M 30
cg_wait
stop "$out"
passed=$(sed -n 's/^cgtma: BPF: \([0-9]*\) charges went past a CPU.s charge cache.*/\1/p' \
	"$TMP/err")
[ -n "$passed" ] || fail "-v did not say how many charges went past the cache: $(cat "$TMP/err")"
((passed > 0)) || fail "no charge went past the cache: the case tests nothing"
got_a=$(sum "$out" "$(cg_path many/c0)") got_b=$(sum "$out" "$(cg_path "many/$pair")")
[ "$got_a" = $N ] && [ "$got_b" = $M ] ||
	fail "sharing an entry: c0 counted $got_a (want $N), $pair $got_b (want $M)"
check_listed "sharing an entry"
echo "c0 and $pair share an entry: $got_a and $got_b, exact ($passed charges past the cache," \
	"$(listed) intervals read only the cgroups listed)"

# --- 4. more cgroups charged on one CPU than its list holds -------------------------------
out=$TMP/tour
make_idle tour $NR_TOUR
make_idle idle-tour $NR_IDLE_TOUR
# Long enough that the tour (some 600 moves) fits in one interval, under emulation too.
iv=2000
[ -n "${CGTMA_EMULATION:-}" ] && iv=10000
cgtma_start "$out" 0 -v -e "$EV" -I $iv --json -G "$(cg_path tour)/*" -G "$(cg_path idle)/*" \
	-G "$(cg_path idle-tour)/*" --max-cgroups 4096
wait_lines "$out" 1 $((iv / 1000 + 10))
dirs=()
for ((i = 0; i < NR_TOUR; i++)); do dirs+=("$CG_ROOT/$CG_BASE/tour/c$i"); done
taskset -c 0 "$WORKLOAD" tour 3 "${dirs[@]}" || fail "the tour failed"
stop "$out" now
wrong=$(jq -r -s --arg ev "$EV" '[.[] | select(.summary != true) | .rows[] |
	select(.scope == "cgroup" and (.cgroup | contains("/tour/")))] | group_by(.cgroup)[] |
	select((map(.counts[$ev]) | add) != 3) | .[0].cgroup' "$out")
seen=$(jq -s '[.[] | select(.summary != true) | .rows[] |
	select(.scope == "cgroup" and (.cgroup | contains("/tour/"))) | .cgroup] | unique |
	length' "$out")
[ -z "$wrong" ] && [ "$seen" = $NR_TOUR ] ||
	fail "$seen of $NR_TOUR cgroups seen; these did not count 3: $(head -c 300 <<<"$wrong")"
all=$(sed -n 's/^cgtma: BPF maps: .*, \([0-9]*\) read every tracked cgroup/\1/p' "$TMP/err")
((${all:-0} > 0)) || fail "no interval read every cgroup: no list overflowed, the case" \
	"tests nothing ($(grep 'BPF maps' "$TMP/err"))"
echo "$NR_TOUR cgroups charged on CPU 0 at once: each exactly 3 ($all intervals read every one)"
echo PASS
