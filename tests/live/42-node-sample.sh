#!/bin/bash
# --sample without a list, with a model's tree: cycles (here cpu-clock: the model below is a
# software one, so that the test runs without a PMU), then, after the first interval, the
# sample events of the nodes at or over their threshold in a tracked cgroup's tree, from
# then on. A model file with two nodes: Busy (the cgroup's CPU use, over its threshold while
# a spinner runs: its threshold is low, 5 % of a CPU, so that a loaded machine where the
# spinner gets a third of a CPU crosses it in the first interval too) names task-clock;
# Faulting (page faults, far below) names page-faults.
# With -v, cgtma says it samples task-clock for Busy, and never page-faults; the terminal
# shows the spinner's function among task-clock samples in the later intervals and not in
# the first; the CSV's Sample column names each node's own events (toplev's form) on its row.
# On an arm64 PMU (the arm64 rows) the same with hardware events: cycles, then INST_RETIRED.
. "$(dirname "$0")/lib.sh"

cat >"$TMP/model.json" <<'JSON'
{
  "name": "nodesample-test",
  "description": "two nodes naming sample events, for tests/live/42-node-sample.sh",
  "vendor": "generic",
  "source": "tests/live/42-node-sample.sh",
  "match": [],
  "pmu": {"software": true},
  "constants": {},
  "events": [
    {"name": "cpu-clock", "encoding": "cpu-clock"},
    {"name": "task-clock", "encoding": "task-clock"},
    {"name": "page-faults", "encoding": "page-faults"}
  ],
  "aux": [],
  "nodes": [
    {"name": "Busy", "parent": null, "level": 1, "domain": "Clocks", "area": "RET",
     "expr": "\"cpu-clock\" / (interval_s * 1e9)", "thresh": "val > 0.05", "maxval": null,
     "siblings": [], "sample": ["task-clock"], "desc": "CPU use"},
    {"name": "Faulting", "parent": null, "level": 1, "domain": "Clocks", "area": "BE",
     "expr": "\"page-faults\" / (interval_s * 1e9)", "thresh": "val > 0.5", "maxval": null,
     "siblings": [], "sample": ["page-faults"], "desc": "page faults per ns"}
  ],
  "metrics": []
}
JSON

cg_make A
spinner_running A alpha
# Until an interval shows task-clock samples, 60 s at most: the event is added once the first
# interval's tree is out, which under emulation (a guest of 240 possible CPUs beside another)
# took 3.4 s, past a fixed -d 3.2.
cgtma_start "$TMP/term" 0 --model-file "$TMP/model.json" -G "$(cg_path A)" --sample -v -I 1000
wait_for 60 grep -q "task-clock samples" "$TMP/term"
cgtma_signal INT "terminal run"
grep -q -- "--sample: sampling task-clock from now on: Busy is at or over its threshold" "$TMP/err" ||
	fail "-v does not say that task-clock is added for Busy: $(cat "$TMP/err")"
grep -q "page-faults from now on" "$TMP/err" && fail "page-faults added, for a node under its threshold"
# The intervals: the first samples cpu-clock alone; the later ones task-clock too, with the
# spinner's function in them.
awk '/^# / { n++ } /top functions of [0-9]+ task-clock samples/ { print n }' "$TMP/term" >"$TMP/tc"
[ -s "$TMP/tc" ] || fail "no task-clock samples in the terminal: $(cat "$TMP/term")"
[ "$(head -1 "$TMP/tc")" -ge 2 ] || fail "task-clock samples in the first interval, before any tree"
awk '/top functions of [0-9]+ task-clock samples/ { on = 1; next } /top functions of/ { on = 0 }
	on && /spin_alpha$/ { found = 1 } END { exit !found }' "$TMP/term" ||
	fail "spin_alpha is not among the task-clock samples: $(cat "$TMP/term")"

"$CGTMA" --model-file "$TMP/model.json" -G "$(cg_path A)" --sample -x, -d 1.2 -I 1000 \
	>"$TMP/csv" 2>"$TMP/err2" || fail "CSV run: $(cat "$TMP/err2")"
awk -F, -v a="$(cg_path A)" '$2 == a && $3 == "Busy" { print $7; exit }' "$TMP/csv" >"$TMP/col"
[ "$(cat "$TMP/col")" = task-clock ] ||
	fail "Busy's Sample column in the CSV: '$(cat "$TMP/col")', want task-clock: $(head -5 "$TMP/csv")"

# The hardware path, where there is an arm64 PMU (the kernel matrix's arm64 rows, QEMU's
# PMUv3): a node over its threshold on cycles (the spinner's CPU use) names INST_RETIRED,
# which QEMU counts under -icount; cgtma samples cycles, then INST_RETIRED too.
if [ "$(uname -m)" = aarch64 ] && "$CGTMA" -e cycles -I 100 -d 0.1 >/dev/null 2>&1; then
	cat >"$TMP/hw.json" <<'JSON'
{
  "name": "nodesample-hw-test",
  "description": "a node naming a hardware sample event, for tests/live/42-node-sample.sh",
  "vendor": "arm",
  "source": "tests/live/42-node-sample.sh; event numbers: Arm's common events",
  "match": [],
  "pmu": {"generic_counters": 6, "fixed": ["CPU_CYCLES"], "nmi_watchdog": "CPU_CYCLES"},
  "constants": {},
  "events": [
    {"name": "CPU_CYCLES", "encoding": "r11"},
    {"name": "INST_RETIRED", "encoding": "r8"}
  ],
  "aux": [],
  "nodes": [
    {"name": "Busy", "parent": null, "level": 1, "domain": "Clocks", "area": "RET",
     "expr": "CPU_CYCLES / (interval_s * 1e9)", "thresh": "val > 0.05", "maxval": null,
     "siblings": [], "sample": ["INST_RETIRED"], "desc": "cycles per ns"}
  ],
  "metrics": []
}
JSON
	cgtma_start "$TMP/hwterm" 0 --model-file "$TMP/hw.json" -G "$(cg_path A)" --sample -v \
		-I 1000
	wait_for 60 grep -q "INST_RETIRED samples" "$TMP/hwterm"
	cgtma_signal INT "hardware run"
	cp "$TMP/err" "$TMP/hwerr"
	grep -q -- "--sample: sampling INST_RETIRED from now on: Busy" "$TMP/hwerr" ||
		fail "-v does not say that INST_RETIRED is added for Busy: $(cat "$TMP/hwerr") $(cat "$TMP/hwterm")"
	awk '/top functions of [0-9]+ INST_RETIRED samples/ { on = 1; next } /top functions of/ { on = 0 }
		on && /spin_alpha$/ { found = 1 } END { exit !found }' "$TMP/hwterm" ||
		fail "spin_alpha is not among the INST_RETIRED samples: $(cat "$TMP/hwterm")"
	grep -Eq "top functions of [0-9]+ cycles samples" "$TMP/hwterm" ||
		fail "no cycles samples: $(cat "$TMP/hwterm")"
	echo "hardware: cycles, then INST_RETIRED for Busy"
fi
spinner_stop
echo "ok: $(cat "$TMP/tc" | wc -l) interval(s) with task-clock samples"
