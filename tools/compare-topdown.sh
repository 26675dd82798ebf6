#!/bin/bash
# Compares cgtma's system-wide level-1 Top-Down with Linux perf's on a machine with a
# hardware PMU. The tools count one after another, each for the same seconds, on the same
# steady load (LOAD COMMAND, started first and kept running): counting at once, they would
# multiplex each other on the one slots/perf-metrics resource Intel has. The whole-run
# values are compared node by node.
#
#   tools/compare-topdown.sh [-b CGTMA] [-d SECONDS] [-m MODEL] [-- LOAD COMMAND...]
#
# perf's metric groups: TopdownL1 on Intel (tma_* metrics), PipelineL1 on AMD Zen 4/5.
# With pmu-tools' toplev on PATH (Intel), its level 1 is compared as well.
# Exit: 0 compared (differences are printed, not judged), 1 failure, 77 nothing to compare.
set -u
cgtma=build/cgtma seconds=10 model=""
while getopts "b:d:m:h" opt; do
	case $opt in
	b) cgtma=$OPTARG ;;
	d) seconds=$OPTARG ;;
	m) model=$OPTARG ;;
	*) sed -n '2,12p' "$0"; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ "${1:-}" = "--" ] && shift

for tool in perf jq; do
	command -v $tool >/dev/null || { echo "compare-topdown: needs $tool" >&2; exit 1; }
done
[ -x "$cgtma" ] || { echo "compare-topdown: no $cgtma (build it, or -b PATH)" >&2; exit 1; }
if ! perf stat -e cycles -x, true >/dev/null 2>&1 ||
	perf stat -e cycles -x, true 2>&1 | grep -q "not supported"; then
	echo "compare-topdown: no hardware PMU here (perf cannot count cycles): nothing to compare"
	exit 77
fi

tmp=$(mktemp -d)
load_pid=""
cleanup() {
	[ -n "$load_pid" ] && kill "$load_pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

vendor=$(awk -F': ' '/^vendor_id/ { print $2; exit }' /proc/cpuinfo)
if [ "$vendor" = AuthenticAMD ]; then
	group=PipelineL1
	# cgtma node -> perf metric
	map="Frontend_Bound=frontend_bound Bad_Speculation=bad_speculation
	     Backend_Bound=backend_bound Retiring=retiring SMT_Contention=smt_contention"
else
	group=TopdownL1
	map="Frontend_Bound=tma_frontend_bound Bad_Speculation=tma_bad_speculation
	     Backend_Bound=tma_backend_bound Retiring=tma_retiring"
fi

if [ $# -gt 0 ]; then
	"$@" >/dev/null 2>&1 &
	load_pid=$!
	sleep 1
fi

# One after another on the same load.
"$cgtma" ${model:+--model "$model"} -l 1 --json -I $((seconds * 1000)) -d "$seconds" \
	>"$tmp/cgtma.jsonl" 2>"$tmp/cgtma.err" || { cat "$tmp/cgtma.err" >&2; exit 1; }
perf stat -a -M "$group" -j -o "$tmp/perf.json" sleep "$seconds" 2>"$tmp/perf.err" ||
	{ cat "$tmp/perf.err" >&2; exit 1; }
toplev_ran=""
if command -v toplev >/dev/null && [ "$vendor" = GenuineIntel ]; then
	toplev -l1 -a -x, -o "$tmp/toplev.csv" sleep "$seconds" >/dev/null 2>&1 && toplev_ran=1
fi

summary=$(grep '"summary":true' "$tmp/cgtma.jsonl" | tail -n 1)
[ -n "$summary" ] || { echo "compare-topdown: cgtma printed no summary" >&2; exit 1; }
echo "model: $(jq -r .model <<<"$summary"), $seconds s, perf stat -M $group"
printf '%-18s %10s %10s %10s' node cgtma perf diff
[ -n "$toplev_ran" ] && printf ' %10s %10s' toplev diff
echo
for pair in $map; do
	node=${pair%%=*} metric=${pair#*=}
	ours=$(jq -r --arg n "$node" '.rows[] | select(.scope == "system") | .nodes[$n] // empty' \
		<<<"$summary")
	theirs=$(jq -r --arg m "$metric" 'select(."metric-unit"? // "" | test($m)) | ."metric-value"' \
		"$tmp/perf.json" 2>/dev/null | head -n 1)
	[ -n "$ours" ] || continue
	ours=$(awk -v v="$ours" 'BEGIN { printf "%.1f", v * 100 }')
	if [ -n "$theirs" ]; then
		diff=$(awk -v a="$ours" -v b="$theirs" 'BEGIN { printf "%+.1f", a - b }')
		printf '%-18s %9s%% %9.1f%% %10s' "$node" "$ours" "$theirs" "$diff"
	else
		printf '%-18s %9s%% %10s %10s' "$node" "$ours" "-" "-"
	fi
	if [ -n "$toplev_ran" ]; then
		# toplev -x, system-wide without -I: Area,Value,Unit,... (Area is the node name)
		tl=$(awk -F, -v n="$node" '$1 == n { print $2; exit }' "$tmp/toplev.csv")
		[ -n "$tl" ] && printf ' %9s%% %+10.1f' "$tl" "$(awk -v a="$ours" -v b="$tl" 'BEGIN { print a - b }')"
	fi
	echo
done
