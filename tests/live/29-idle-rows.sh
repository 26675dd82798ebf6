#!/bin/bash
# Interval rows follow the cgroups that ran. Of the cgroups a glob finds, one has a row in an
# interval only where it ran, and in its first interval and its last (the one that sees it
# removed); a cgroup named by -G has a row every interval; the summary has every one. The
# Prometheus page keeps an idle cgroup's counters all the same.
#   grp/busy    makes N getppid() calls over several intervals: exactly N in its rows
#   grp/idle    runs nothing: one interval row (the first), and on the page at 0
#   grp/gone    runs nothing and is removed mid-run: its first row and its removed one
#   grp/named   runs nothing, named by -G as well: a row of zeros in every interval
# live: both-hooks
. "$(dirname "$0")/lib.sh"

EV=syscalls:sys_enter_getppid
N=30000

cg_make grp/busy grp/idle grp/gone grp/named
G=$(cg_path grp)
port=$(free_port)
out=$TMP/out
cgtma_start "$out" 2 -e "$EV" -I 200 --json -G "$G/*" -G "$G/named" --prometheus "127.0.0.1:$port"
cg_start grp/busy "$WORKLOAD" getppid $N 60
rmdir "$CG_ROOT/$CG_BASE/grp/gone" || fail "cannot remove grp/gone"
cg_wait
cgtma_more "$out" 3
page=$(metrics_scrape $port) || fail "cannot scrape the page"
cgtma_signal INT

# What the checks below read, from one jq (each costs 0.3 s to start under emulation), as
# shell assignments: the intervals; per interval line whether each cgroup has a row (1/0),
# as one string (rows_busy...); busy's count; whether every row of busy after its first has
# its event enabled, gone's second row is marked removed, named counted nothing; and which
# of the four have a row on the summary line (the last).
eval "$(jq -r -s --arg g "$G" --arg ev "$EV" '[.[] | select(.summary != true)] as $iv |
	.[-1] as $last |
	def cg($c): .scope == "cgroup" and .cgroup == ($g + "/" + $c);
	def r($c): [$iv[].rows[] | select(cg($c))];
	def rows($c): [$iv[] | if any(.rows[]; cg($c)) then "1" else "0" end] | join("");
	"nr_iv=\($iv | length)",
	(("busy", "idle", "gone", "named") as $c | "rows_\($c)=\(rows($c))"),
	"got=\([r("busy")[] | select(.cpu == null) | .counts[$ev]] | add // 0)",
	"busy_ran=\(r("busy") | .[1:] | all(.multiplex[$ev] != null))",
	"gone_removed=\(r("gone") | .[1].removed == true)",
	"named_zero=\([r("named")[] | .counts[$ev]] | all(. == 0))",
	"in_summary=\([("busy", "idle", "gone", "named") as $c |
		select($last.summary == true and any($last.rows[]; cg($c))) | $c] | join(" ") | @sh)"' \
	"$out")" || fail "jq cannot read $out"
echo "$nr_iv intervals; rows per interval: busy $rows_busy, idle $rows_idle," \
	"gone $rows_gone, named $rows_named"
[ "$nr_iv" -ge 5 ] || fail "only $nr_iv intervals"

[ "$got" = $N ] || fail "grp/busy counted $got, want $N"
# Every row of busy after its first is one where it ran: its event was enabled there (a
# multiplex fraction), whether or not a call fell in it (its exit, say, may be alone).
[ "$busy_ran" = true ] || fail "grp/busy has a row where it did not run"

[ "$rows_idle" = "1$(printf '0%.0s' $(seq 2 "$nr_iv"))" ] ||
	fail "grp/idle's rows by interval: $rows_idle, want its first alone"

r=$rows_gone
[ "${r:0:1}" = 1 ] && [ "$(tr -cd 1 <<<"$r" | wc -c)" = 2 ] ||
	fail "grp/gone's rows by interval: $r, want its first and the one it went in"
[ "$gone_removed" = true ] || fail "grp/gone's last row is not marked removed"

[ "$rows_named" = "$(printf '1%.0s' $(seq "$nr_iv"))" ] ||
	fail "grp/named (-G) lacks a row in some interval: $rows_named"
[ "$named_zero" = true ] || fail "grp/named counted something"

for c in busy idle gone named; do
	[[ " $in_summary " == *" $c "* ]] || fail "the summary has no row for grp/$c"
done

# The page, scraped after several intervals without a row of grp/idle.
line() { [ "$(metric_value - "cgtma_events_total{scope=\"cgroup\",cgroup=\"$G/$1\",event=\"$EV\"}" \
	<<<"$page")" = "$2" ]; }
line busy $N || fail "the page has no count $N for grp/busy"
line idle 0 || fail "the page lost grp/idle: $(grep -F "$G/" <<<"$page")"
grep -qF "cgroup=\"$G/gone\"" <<<"$page" && fail "the page still has grp/gone"
echo "rows follow the cgroups that ran; named, summary and page rows are all there"
