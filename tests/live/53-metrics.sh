#!/bin/bash
# Flat metrics in a live run, with software events (any machine, PMU or not):
#   - the sw model: its metrics are its default ones, a table with no metrics line under it;
#     -m adds nothing and says so; -m with -e, and a --metrics group the model lacks, are
#     usage errors (exit 2), the latter with what is close;
#   - cpu_s, the scope's busy CPU time: with a model file of the test's own (a software tree
#     and metrics), a spinning cgroup's cpu-clock over cpu_s is 1 (its tasks ran all its
#     slices' time), and the system's cpu_s over the interval is the CPUs counted;
#   - the terminal: the default metrics on one line under each scope's tree; -m's block;
#     JSON's "metrics" on every row, --metrics GROUP (case ignored) adding that group's.
. "$(dirname "$0")/lib.sh"

cg_make A
A=$(cg_path A)
cpus=$(nproc)

# --- the sw model -------------------------------------------------------------------------
"$CGTMA" -M sw -G "$A" -I 500 -- "$WORKLOAD" cgexec "$CG_ROOT/$CG_BASE/A" "$WORKLOAD" spin 1000 \
	>"$TMP/sw" 2>"$TMP/err" || fail "cgtma -M sw: $(cat "$TMP/err")"
grep -q '^scope  *CPU_Utilization  *Context_Switches' "$TMP/sw" ||
	fail "sw: no table of its metrics: $(cat "$TMP/sw")"
grep -q '^  IPC\|^  metrics' "$TMP/sw" &&
	fail "sw: a metrics line under its table: $(cat "$TMP/sw")"
"$CGTMA" -M sw -m -G "$A" -I 500 -d 0.5 >"$TMP/swm" 2>"$TMP/err" ||
	fail "cgtma -M sw -m: $(cat "$TMP/err")"
grep -q "^cgtma: -m: model 'sw' has no metrics beyond those it shows by default$" "$TMP/err" ||
	fail "sw -m: stderr: $(cat "$TMP/err")"
[ "$(grep -c '^scope  *CPU_Utilization  *Context_Switches  *CPU_Migrations  *Page_Faults$' \
	"$TMP/swm")" -ge 1 ] || fail "sw -m: not the same columns: $(cat "$TMP/swm")"
echo "sw: its metrics in the table, -m adds nothing and says so"

"$CGTMA" -m -e cpu-clock -d 1 >"$TMP/out" 2>"$TMP/err"
rc=$?
want="cgtma: -m adds a model's metrics, and -e counts plain events without a model:"
want="$want give one of them"
[ $rc -eq 2 ] && [ "$(cat "$TMP/err")" = "$want" ] ||
	fail "-m -e: exit $rc, stderr: $(cat "$TMP/err")"
"$CGTMA" -M sw --metrics cpu_utilisation,Bogus -d 1 >"$TMP/out" 2>"$TMP/err"
rc=$?
[ $rc -eq 2 ] && [ ! -s "$TMP/out" ] &&
	grep -q "^cgtma: --metrics: model sw has no metric or metric group 'cpu_utilisation': $(
		)did you mean 'CPU_Utilization'?" "$TMP/err" ||
	fail "--metrics cpu_utilisation: exit $rc, stderr: $(cat "$TMP/err")"
echo "errors: -m with -e, an unknown group with a suggestion: exit 2"

# --- cpu_s, the default line and -m's block, with a software model of the test's own ------
cat >"$TMP/model.json" <<'EOF'
{
  "name": "swtree", "description": "test", "vendor": "generic",
  "source": "tests/live/53-metrics.sh",
  "match": [], "pmu": {"software": true},
  "events": [{"name": "cpu-clock", "encoding": "cpu-clock"},
             {"name": "context-switches", "encoding": "context-switches"}],
  "nodes": [{"name": "Busy", "parent": null, "level": 1, "domain": "Time", "area": "BE",
             "expr": "\"cpu-clock\" / (interval_s * 1e9)", "thresh": "val > 0", "maxval": null,
             "siblings": [], "desc": "CPU time per second"}],
  "metrics": [
    {"name": "Ran", "expr": "\"cpu-clock\" / (cpu_s * 1e9)", "unit": "", "default": true,
     "desc": "cpu-clock over the busy CPU time"},
    {"name": "CPUs", "expr": "cpu_s / interval_s", "unit": "CPUs", "default": true,
     "desc": "busy CPU time per second"},
    {"name": "Switches_per_Busy_Second", "expr": "\"context-switches\" / cpu_s", "unit": "/s",
     "groups": ["Sched"], "desc": "context switches per second of busy CPU time"}
  ]
}
EOF
# The spinner starts once counting has (cgtma's command), in A, and ends the run.
"$CGTMA" --model-file "$TMP/model.json" -G "$A" -I 500 -j -- \
	"$WORKLOAD" cgexec "$CG_ROOT/$CG_BASE/A" "$WORKLOAD" spin 2000 >"$TMP/json" 2>"$TMP/err" ||
	fail "cgtma --model-file -j: $(cat "$TMP/err")"
# Every row has the default metrics and no other; intervals, not the summary.
jq -e -s '[.[] | .rows[] | .metrics | keys_unsorted == ["Ran", "CPUs"]] | all' "$TMP/json" \
	>/dev/null || fail "rows without the default metrics alone: $(head -c 600 "$TMP/json")"
n=$(jq -s --arg a "$A" '[.[] | select(.summary | not) | .rows[] |
	select(.scope == "cgroup" and .cgroup == $a and .counts["cpu-clock"] > 5e7)] | length' \
	"$TMP/json")
[ "$n" -ge 2 ] || fail "the spinning cgroup ran 50 ms in $n intervals, want 2 or more"
bad=$(jq -s --arg a "$A" '[.[] | select(.summary | not) | .rows[] |
	select(.scope == "cgroup" and .cgroup == $a and .counts["cpu-clock"] > 5e7) |
	select(.metrics.Ran < 0.98 or .metrics.Ran > 1.02) | .metrics.Ran]' "$TMP/json")
[ "$bad" = "[]" ] || fail "cgroup: cpu-clock over cpu_s off 1 by more than 2 %: $bad"
bad=$(jq -s --argjson c "$cpus" '[.[] | .rows[] | select(.scope == "system") |
	select(.metrics.CPUs < $c * 0.97 or .metrics.CPUs > $c * 1.03) | .metrics.CPUs]' \
	"$TMP/json")
[ "$bad" = "[]" ] || fail "system: cpu_s over the interval is not the $cpus CPUs: $bad"
echo "cpu_s: the cgroup's cpu-clock over it is 1 in $n intervals;" \
	"the system's is $cpus CPUs a second"

"$CGTMA" --model-file "$TMP/model.json" -G "$A" -v -I 500 -- \
	"$WORKLOAD" cgexec "$CG_ROOT/$CG_BASE/A" "$WORKLOAD" spin 1000 >"$TMP/text" 2>"$TMP/err" ||
	fail "cgtma --model-file: $(cat "$TMP/err")"
lines=$(grep -c '^  Ran [0-9.]*  CPUs [0-9.]*$' "$TMP/text")
scopes=$(grep -c '^  Busy ' "$TMP/text")
[ "$lines" -ge 2 ] && [ "$lines" = "$scopes" ] ||
	fail "terminal: $lines default metrics lines for $scopes trees: $(cat "$TMP/text")"
"$CGTMA" --model-file "$TMP/model.json" -G "$A" -m -I 500 -d 1 >"$TMP/text" 2>"$TMP/err" ||
	fail "cgtma --model-file -m: $(cat "$TMP/err")"
grep -q '^    Switches_per_Busy_Second  *[0-9.]* /s$' "$TMP/text" &&
	grep -q '^  metrics$' "$TMP/text" ||
	fail "terminal -m: no metrics block: $(cat "$TMP/text")"
stderr_said "$TMP/err" && fail "-m said: $(cat "$TMP/err")"
"$CGTMA" --model-file "$TMP/model.json" -G "$A" --metrics sched -j -I 500 -d 1 >"$TMP/json" \
	2>"$TMP/err" || fail "cgtma --metrics sched: $(cat "$TMP/err")"
jq -e -s '[.[] | .rows[] | .metrics |
	keys_unsorted == ["Ran", "CPUs", "Switches_per_Busy_Second"]] | all' \
	"$TMP/json" >/dev/null || fail "--metrics sched: $(head -c 600 "$TMP/json")"
echo "terminal: a default metrics line under each of $scopes trees, -m's block; --metrics sched"
