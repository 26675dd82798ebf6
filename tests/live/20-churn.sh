#!/bin/bash
# Weeks as an exporter: memory follows the cgroups that exist, not those that ever did.
# cgtma --all-cgroups --depth 3 -A --prometheus watches 10,000 cgroups come and go, 1,000 at a time
# (each batch lives for two intervals, so each cgroup is tracked, reported and removed).
# After a warm-up of two batches:
#   - VmRSS grows by less than 50 kB per 1,000 removed cgroups: a leak adds to every batch, so
#     the figure is the median of the batches' increments; a one-time step (seen in full
#     suites on 6.1 under TCG: 2 MiB once, after the third or fourth batch, then flat, in
#     3 of 8 runs, never in a run of this test alone) is shown, split into anonymous and
#     file memory, and more than one step of over 1 MiB fails;
#   - the Prometheus page has as many series as at the start (removed cgroups leave it);
#   - the BPF map of tracked cgroups holds the live ones only;
#   - the summary names TRACKER_REMOVED_KEPT removed cgroups and folds the rest into one
#     row that says how many.
# live: both-hooks
. "$(dirname "$0")/lib.sh"

BATCHES=10 PER=1000 WARM=2 KEPT=1000
commands_or_skip curl ss

cg_make churn
port=$(free_port)
out=$TMP/out
cgtma_start "$out" 2 -e cpu-clock -I 200 -A --all-cgroups --depth 3 --json --prometheus "$port"

# Resident memory at rest: the least of ten looks over one interval, so that a look taken
# while an interval's rows are allocated (before cgtma frees them and trims the heap) does
# not count as growth; a leak raises this floor.
# Prints "VMRSS ANON FILE" (kB) of that look.
rss() {
	local i v min='' at
	for ((i = 0; i < 10; i++)); do
		v=$(awk '$1 == "VmRSS:" { r = $2 } $1 == "RssAnon:" { a = $2 } $1 == "RssFile:" { f = $2 }
			END { print r, a, f }' "/proc/$cgtma_pid/status")
		[ -z "$min" ] || [ "${v%% *}" -lt "$min" ] && min=${v%% *} at=$v
		sleep 0.02
	done
	echo "$at"
}
# This test's series: other cgroups that come and go meanwhile have theirs too.
series() { metrics_scrape $port | grep -c "^cgtma_.*cgroup=\"/$CG_BASE[/\"]"; }
# The entries of cgtma's map of tracked cgroups (cgroup_counts), by its fds.
map_entries() {
	local fd id
	command -v bpftool >/dev/null || return 0
	for fd in /proc/$cgtma_pid/fdinfo/*; do
		id=$(awk '$1 == "map_id:" { print $2 }' "$fd" 2>/dev/null)
		[ -n "$id" ] || continue
		[ "$(bpftool map show id "$id" --json 2>/dev/null | jq -r .name)" = cgroup_counts ] || continue
		bpftool map dump id "$id" --json 2>/dev/null | jq length
		return
	done
}

series0=$(series)
# The cgroups --depth 3 takes in, the whole machine's: others may come meanwhile.
cgroups_now() { find "$CG_ROOT" -mindepth 1 -maxdepth 3 -type d 2>/dev/null | wc -l; }
entries0=$(map_entries) cgroups0=$(cgroups_now)
dir=$CG_ROOT/$CG_BASE/churn
start=$SECONDS
for ((b = 1; b <= BATCHES; b++)); do
	mkdir "$dir"/b$b-{1..1000} || fail "cannot create batch $b"
	cgtma_more "$out" 2
	rmdir "$dir"/b$b-{1..1000} || fail "cannot remove batch $b"
	cgtma_more "$out" 2
	read -r r a f < <(rss)
	trail+=" $r" parts+=" $a/$f"
	[ $b -eq $WARM ] && rss_warm=$r
done
rss_end=$r
series_end=$(series)
entries_end=$(map_entries) cgroups_end=$(cgroups_now)
cgtma_signal INT

# The increments after the warm-up, per 1,000 removed cgroups: their median, and the steps.
incr=$(echo "$trail" | awk -v w=$WARM -v per=$PER \
	'{ for (i = w + 1; i <= NF; i++) print int(($i - $(i - 1)) * 1000 / per) }' | sort -n)
growth=$(echo "$incr" | awk '{ d[NR] = $1 }
	END { print NR % 2 ? d[(NR + 1) / 2] : int((d[NR / 2] + d[NR / 2 + 1]) / 2) }')
steps=$(echo "$incr" | awk '$1 > 1024 { n++ } END { print n + 0 }')
echo "$((BATCHES * PER)) cgroups churned in $((SECONDS - start)) s; VmRSS $rss_warm kB after" \
	"$((WARM * PER)), $rss_end kB after $((BATCHES * PER)): $growth kB per 1,000 removed" \
	"(the median batch), $steps step(s) of over 1 MiB"
echo "VmRSS after each batch (kB):$trail"
echo "RssAnon/RssFile after each batch (kB):$parts"
[ "$growth" -lt 50 ] || fail "VmRSS grew $growth kB per 1,000 removed cgroups, want < 50"
[ "$steps" -le 1 ] || fail "VmRSS rose by over 1 MiB in $steps batches after the warm-up"
echo "Prometheus series with a cgroup label: $series0 at the start, $series_end at the end"
[ "$series_end" -le "$series0" ] || fail "the page grew from $series0 to $series_end series"
if [ -n "$entries0" ]; then
	echo "tracked cgroups in the BPF map: $entries0 at the start, $entries_end at the end;" \
		"cgroups in reach: $cgroups0 and $cgroups_end"
	[ -n "$entries_end" ] &&
		((entries_end - entries0 <= (cgroups_end > cgroups0 ? cgroups_end - cgroups0 : 0))) ||
		fail "the BPF map holds $entries_end entries, at the start $entries0, with" \
			"$((cgroups_end - cgroups0)) more cgroups: removed cgroups stay"
else
	echo "bpftool is not installed: the BPF map's entries are not counted"
fi

# Every batch was seen: each cgroup has a last row marked removed.
seen=$(jq -s --arg p "/$CG_BASE/churn/b" '[.[] | select(.summary != true) | .rows[] |
	select(.scope == "cgroup" and .cpu == null and .removed == true and
	       (.cgroup | startswith($p)))] | length' "$out")
[ "$seen" = $((BATCHES * PER)) ] || fail "$seen removed cgroups reported, want $((BATCHES * PER))"
summary=$(tail -n1 "$out")
kept=$(jq --arg p "/$CG_BASE/churn/b" '[.rows[] | select(.scope == "cgroup" and .cpu == null and
	(.cgroup | startswith($p)))] | length' <<<"$summary")
folded=$(jq -r '[.rows[] | select(.scope == "cgroup" and (.cgroup | startswith("(removed:")))] |
	.[0].cgroup // ""' <<<"$summary")
# --all-cgroups watches the whole machine: a cgroup that anything else makes and removes
# meanwhile (a container's, another test's) is removed too, and the summary keeps the last
# KEPT of all of them by name. So the count is of every removed cgroup the intervals showed.
jq -s -c '[.[] | select(.summary != true) | .rows[] |
	select(.scope == "cgroup" and .cpu == null and .removed == true) | .cgroup] | unique' \
	"$out" >"$TMP/removed"
removed_all=$(jq length "$TMP/removed")
kept_all=$(jq --slurpfile r "$TMP/removed" '($r[0] | map({(.): 1}) | add // {}) as $set |
	[.rows[] | select(.scope == "cgroup" and .cpu == null and $set[.cgroup] != null)] |
	length' <<<"$summary")
echo "summary: $kept_all removed cgroups by name ($kept of this test's), and '$folded';" \
	"$removed_all removed in all"
[ "$kept_all" = $KEPT ] || fail "the summary names $kept_all removed cgroups, want $KEPT"
((kept > KEPT - (removed_all - BATCHES * PER) - 1)) ||
	fail "the summary names $kept of this test's removed cgroups, want $KEPT less the others'"
[ "$folded" = "(removed: $((removed_all - KEPT)) more cgroups)" ] ||
	fail "the summary's folded row is '$folded', want $((removed_all - KEPT)) more"
echo ok
