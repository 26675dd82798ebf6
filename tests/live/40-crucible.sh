#!/bin/bash
# cgtma as a crucible tool, and --cdm's files against every rule of crucible's Common Data
# Model (docs/crucible.md, "The Common Data Model's rules").
#
# 1. The harness's sequence: tools/crucible/cgtma-start in a tool directory with a cgroup
#    glob as its param (--arg=value, as rickshaw renders params), a workload in that cgroup,
#    cgtma-stop, then, as rickshaw-post-process-tools does, postprocess/ and metric-data-* at
#    the root deleted, postprocess/ made again and cgtma-post-process run there. The published
#    pair must pass every rule and hold the workload's cgroup and the system, published as
#    toolbox's CDMMetrics does: postprocess/metric-data-cgtma.json.xz and .csv.xz, no
#    series zero throughout, no row repeating its predecessor's value.
# 2. A killed run (kill -9 mid-run): the files must still pass and hold every interval that
#    was printed before the kill (bar one it may have died writing).
# 3. Faults: a read-only --cdm directory and a path under a file end cgtma with exit 1, the
#    path and the reason, before any interval; a full disk (a 64k tmpfs) mid-run does not:
#    cgtma goes on with its other output to the end, says once what it could not write (and
#    at the end how much), exits 1 as data was lost, and the files keep whole rows only.
# 4. When `cgtma report` works: a --record replayed with --cdm passes the same rules.
# 5. Failures are seen where crucible shows them (it ignores start's and stop's exit
#    status): a bad parameter, an unknown option, and a cgtma that dies mid-run each leave
#    the reason in cgtma-failed.txt; cgtma-post-process prints it, exits 1 and publishes no
#    metric file. So does a run where a cgroup glob matched nothing from start to end.
# 6. --container=GLOB and --pod=NS/GLOB reach cgtma as -G container:GLOB and -G pod:NS/GLOB,
#    --metrics as -m and --metrics=LIST as the same (a stand-in cgtma records its command
#    line); a --metrics list cgtma refuses leaves its reason in cgtma-failed.txt.
# 7. --irq through the wrapper, with the root and a cgroup making exactly N getppid calls
#    tracked: every series has "cgroup" and "irq"; the system is {all, all}, the root
#    {/, none}, the cgroup {PATH, none} and each interrupt scope that took interrupts (an
#    idle one has no rows) {none, NAME}, one series each (no "irq:NAME" cgroup); in every
#    interval the system's cpu-clock is the root's plus
#    the irq scopes' (so it is no longer the root's); cgtma-post-process accepts the irq key
#    and the published series of the cgroup adds up to N calls within 1 % (tests/live/cdm.sh).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/cdm.sh"

TOOLS=$(cd "$(dirname "$0")/../../tools/crucible" && pwd)
commands_or_skip python3
grep -qw tmpfs /proc/filesystems || skip "no tmpfs"

cg_make W/w1
cg_make W/w2
W=$(cg_path W)

# The name keys CDM's metric_desc index knows, as listed in the reference (the harness
# adds cstype, csid, hostname, engine-* and the like itself: a tool must not).
NAME_KEYS='["cgroup","container","pod","cpu","core","package","die","thread","node","socket",
	"pid","tid","cmd","id","type","level","domain","num","irq"]'

# validate DIR: the pair in DIR passes every CDM rule; prints what breaks one. Desc keys
# are exactly source, class, type: CDM's v8dev index rejects default-aggregation (and
# aborts the run's indexing); class is throughput (count means a running total).
validate() {
	local dir=$1 json=$1/metric-data-cgtma.json csv=$1/metric-data-cgtma.csv errs
	[ -f "$json" ] && [ -f "$csv" ] || fail "$dir: no metric-data-cgtma.json and .csv pair"
	jq -e --argjson keys "$NAME_KEYS" '
		type == "array" and
		([.[].idx] | length == (unique | length)) and
		all(.[];
			(keys == ["desc", "idx", "names"]) and
			(.idx | type == "number" and . == floor and . >= 0) and
			(.desc | type == "object" and
				(keys == ["class", "source", "type"]) and
				all(.[]; type == "string" and length > 0) and
				.class == "throughput") and
			(.names | type == "object" and (keys - $keys == []) and
				all(.[]; type == "string" and length > 0)))
	' "$json" >/dev/null || fail "$json breaks the JSON rules: $(head -c 600 "$json")"
	[ ! -s "$csv" ] || [ -z "$(tail -c 1 "$csv")" ] || fail "$csv: its last row is cut"
	errs=$(jq -Rnr --slurpfile j "$json" '
		($j[0] | map(.idx)) as $ids |
		[inputs] | to_entries | map(
			.key as $n | .value | split(",") as $f |
			if ($f | length) != 4 then "line \($n + 1): \($f | length) fields: \(.)"
			elif ($f[0:3] | all(test("^[0-9]+$")) | not) then "line \($n + 1): not integers: \(.)"
			elif ($f[3] | test("^-?[0-9]+(\\.[0-9]+)?$") | not) then "line \($n + 1): value \($f[3])"
			else {n: ($n + 1), idx: ($f[0] | tonumber), b: ($f[1] | tonumber),
			      e: ($f[2] | tonumber)} end) |
		(.[] | strings),
		(map(objects) |
			(.[] | select(.b > .e) | "line \(.n): begin \(.b) after end \(.e)"),
			(.[] | select(.idx | IN($ids[]) | not) | "line \(.n): idx \(.idx) not in the JSON"),
			(group_by(.idx)[] | sort_by(.n) | . as $r |
				range(1; length) | select($r[.].b != $r[. - 1].e + 1) |
				"line \($r[.].n): idx \($r[.].idx) begins at \($r[.].b), not \($r[. - 1].e + 1)"))
	' "$csv")
	[ -z "$errs" ] || fail "$csv breaks the CSV rules: $(echo "$errs" | head -5)"
}

# series_idx DIR TYPE CGROUP: the idx of that series, or nothing.
series_idx() {
	jq -r --arg t "$2" --arg c "$3" \
		'.[] | select(.desc.type == $t and .names.cgroup == $c) | .idx' "$1/metric-data-cgtma.json"
}

# A series every model has: busy CPUs (sw) or the level-1 retiring share.
main_type() {
	if jq -e 'any(.[]; .desc.type == "cpu-utilization")' "$1/metric-data-cgtma.json" >/dev/null; then
		echo cpu-utilization
	else
		echo retiring
	fi
}

# --- 1. the harness's sequence -------------------------------------------------------------
tool=$TMP/run/tool-data/profiler-1/profiler-1-cgtma-1/cgtma
mkdir -p "$tool"
cd "$tool" || fail "cd $tool"
CGTMA=$(readlink -f "$CGTMA") "$TOOLS/cgtma-start" "--cgroup=$W/w*" --interval=0.2 --level=1 ||
	fail "cgtma-start failed: $(cat cgtma-start-stderrout.txt)"
pid=$(cat cgtma-pid.txt)
kill -0 "$pid" 2>/dev/null || fail "cgtma is not running after cgtma-start"
usage() { awk '$1 == "usage_usec" { print $2 }' "$CG_ROOT/$CG_BASE/W/w1/cpu.stat"; }
u0=$(usage)
t0=$(date +%s%3N)
cg_run W/w1 "$WORKLOAD" spin 1200 || fail "workload"
t1=$(date +%s%3N)
u1=$(usage)
sleep 0.3
"$TOOLS/cgtma-stop" "--cgroup=$W/w*" --interval=0.2 --level=1 ||
	fail "cgtma-stop failed: $(cat cgtma-stop-stderrout.txt)"
# (A zombie its reaper has not collected yet has stopped.)
! grep -qv '^[^)]*) Z' "/proc/$pid/stat" 2>/dev/null || fail "cgtma still runs after cgtma-stop"
grep -q "summary" <(xz -dc cgtma-stdout.jsonl.xz 2>/dev/null || cat cgtma-stdout.jsonl) ||
	fail "cgtma did not end with its summary (stopped cleanly?)"
validate "$tool/cgtma-data"

# What rickshaw-post-process-tools does before it runs the script.
mkdir -p postprocess && touch postprocess/stale metric-data-stale.json metric-data-stale.csv
rm -rf postprocess && mkdir postprocess && rm -f metric-data-* post-process-output.txt
(cd "$tool" && "$TOOLS/cgtma-post-process" >postprocess/post-process-output.txt 2>&1) ||
	fail "cgtma-post-process failed: $(cat postprocess/post-process-output.txt)"
# Published as toolbox publishes: the .xz pair and nothing else next to the output.
[ "$(cd postprocess && ls -A | sort | tr '\n' ' ')" = \
	"metric-data-cgtma.csv.xz metric-data-cgtma.json.xz post-process-output.txt " ] ||
	fail "postprocess/ holds $(ls -A postprocess | tr '\n' ' '), not the .xz pair and the output"
pp=$TMP/pp
mkdir "$pp"
for f in json csv; do
	xz -t "postprocess/metric-data-cgtma.$f.xz" || fail "postprocess/metric-data-cgtma.$f.xz is not xz"
	xz -dc "postprocess/metric-data-cgtma.$f.xz" >"$pp/metric-data-cgtma.$f"
done
validate "$pp"
# Merged and dropped as toolbox's CDMMetrics does.
jq -Rne '[inputs | split(",") | {i: .[0], v: (.[3] | tonumber)}] | group_by(.i) |
	all(.[]; any(.[]; .v != 0)) and
	all(.[]; . as $r | all(range(1; length); $r[.].v != $r[. - 1].v))' \
	"$pp/metric-data-cgtma.csv" >/dev/null ||
	fail "a published series is zero throughout or repeats a value in adjacent rows"
[ "$(jq length "$pp/metric-data-cgtma.json")" -gt 0 ] || fail "no series published"
jq -e 'all(.[]; .desc.source == "cgtma" and (.desc.type | test("^[a-z0-9]+(-[a-z0-9]+)*$")))' \
	"$pp/metric-data-cgtma.json" >/dev/null || fail "source or type style"
type=$(main_type "$pp")
sys=$(series_idx "$pp" "$type" /)
w1=$(series_idx "$pp" "$type" "$W/w1")
[ -n "$sys" ] || fail "no $type series for the system (cgroup /)"
[ -n "$w1" ] || fail "no $type series for $W/w1: $(jq -c '[.[].names] | unique' "$pp/metric-data-cgtma.json")"
# The system's series spans the workload; every published idx has rows.
jq -Rne --argjson i "$sys" --argjson t0 "$t0" --argjson t1 "$t1" '
	[inputs | split(",") | map(tonumber) | select(.[0] == $i)] |
	(.[0][1] <= $t0) and (.[-1][2] >= $t1)' "$pp/metric-data-cgtma.csv" >/dev/null ||
	fail "the system's $type rows do not span the workload ($t0..$t1 ms)"
jq -Rne --slurpfile j "$pp/metric-data-cgtma.json" \
	'[inputs | split(",")[0] | tonumber] | unique == ($j[0] | map(.idx) | sort)' \
	"$pp/metric-data-cgtma.csv" >/dev/null || fail "published series without rows"
if [ "$type" = cpu-utilization ] && [ -n "$u0" ] && [ -n "$u1" ]; then
	# w1's busy CPUs over time add up to the CPU time the kernel charged it (cpu.stat).
	cpu_s=$(jq -Rnr --argjson i "$w1" '[inputs | split(",") | map(tonumber) | select(.[0] == $i) |
		.[3] * (.[2] - .[1] + 1) / 1000] | add' "$pp/metric-data-cgtma.csv")
	awk -v got="$cpu_s" -v want="$(((u1 - u0)))" 'BEGIN {
		want /= 1e6; d = got - want; if (d < 0) d = -d; exit !(want > 0.05 && d <= 0.2 * want + 0.02) }' ||
		fail "$W/w1: the CDM rows say $cpu_s CPU-seconds, cpu.stat $(((u1 - u0))) us"
fi
cd "$TMP" || fail "cd"

# --- 2. a killed run ------------------------------------------------------------------------
cgtma_start "$TMP/killed.jsonl" 0 -G "$W/w1" -G "$W/w2" -I 100 --cdm "$TMP/killed" --json
cg_spawn W/w2 "$WORKLOAD" spin 3000
spin=$!
wait_lines "$TMP/killed.jsonl" 8
cgtma_signal KILL "a killed run" 137 2>/dev/null
kill "$spin" 2>/dev/null
wait "$spin" 2>/dev/null
validate "$TMP/killed"
n_json=$(grep -c '"rows"' "$TMP/killed.jsonl")
type=$(main_type "$TMP/killed")
sys=$(series_idx "$TMP/killed" "$type" /)
[ -n "$sys" ] || fail "killed run: no system series"
# The interval ends the CSV holds, against the times of the JSON lines printed first.
ends=$(jq -Rnr --argjson i "$sys" '[inputs | split(",") | select(.[0] == ($i | tostring)) | .[2]] | join(" ")' \
	"$TMP/killed/metric-data-cgtma.csv")
times=$(jq -r 'select(.rows) | .time * 1000 | round' "$TMP/killed.jsonl" | tr '\n' ' ')
n_cdm=$(wc -w <<<"$ends")
[ "$n_cdm" -ge $((n_json - 1)) ] && [ "$n_cdm" -le "$n_json" ] && [ "$n_cdm" -ge 7 ] ||
	fail "killed run: $n_cdm intervals in the CSV, $n_json printed"
[ "$ends" = "$(cut -d' ' -f1-"$n_cdm" <<<"$times" | sed 's/ *$//')" ] ||
	fail "killed run: CSV ends '$ends' are not the printed intervals '$times'"

# --- 3. faults -------------------------------------------------------------------------------
tmpfs_or_skip "$TMP/ro" ro,size=64k
touch "$TMP/afile"
for bad in "$TMP/ro" "$TMP/ro/sub" "$TMP/afile/sub"; do
	"$CGTMA" -I 100 -d 2 --cdm "$bad" --json >"$TMP/bad.out" 2>"$TMP/bad.err"
	rc=$?
	[ $rc -eq 1 ] || fail "--cdm $bad: exit $rc, not 1"
	grep -q "$bad" "$TMP/bad.err" || fail "--cdm $bad: the message does not name it: $(cat "$TMP/bad.err")"
	grep -qE "Read-only file system|Not a directory" "$TMP/bad.err" ||
		fail "--cdm $bad: no reason: $(cat "$TMP/bad.err")"
	! grep -q '"rows"' "$TMP/bad.out" || fail "--cdm $bad: intervals were printed before failing"
done

tmpfs_or_skip "$TMP/full" size=64k
# Leave about 16k: it fills within the first second or so.
head -c 48k /dev/zero >"$TMP/full/filler" || fail "cannot fill the tmpfs"
cg_spawn W/w1 "$WORKLOAD" spin 4000
spin=$!
"$CGTMA" -G "$W/w1" -G "$W/w2" -A -I 20 -d 3 --cdm "$TMP/full/cdm" --json \
	>"$TMP/full.jsonl" 2>"$TMP/full.err"
rc=$?
kill "$spin" 2>/dev/null
wait "$spin" 2>/dev/null
[ $rc -eq 1 ] || fail "full disk: exit $rc, want 1 (data was lost): $(cat "$TMP/full.err")"
tail -n1 "$TMP/full.err" | grep -q "some output could not be written" ||
	fail "full disk: the run's last word is not the failure: $(cat "$TMP/full.err")"
csv=$TMP/full/cdm/metric-data-cgtma.csv
n=$(grep -c '"rows"' "$TMP/full.jsonl")
[ "$n" -ge 50 ] || fail "full disk: only $n intervals printed (cgtma stopped profiling?)"
jq -se 'map(select(.summary == true)) | length == 1' "$TMP/full.jsonl" >/dev/null ||
	fail "full disk: no summary"
[ "$(grep -c "cannot write" "$TMP/full.err")" -eq 1 ] ||
	fail "full disk: not exactly one error: $(cat "$TMP/full.err")"
grep -q "cannot write '$csv': No space left on device" "$TMP/full.err" ||
	grep -q "cannot write '$TMP/full/cdm/metric-data-cgtma.json': No space left on device" "$TMP/full.err" ||
	fail "full disk: the error does not name the file and the reason: $(cat "$TMP/full.err")"
grep -qE "[0-9]+ interval\(s\) and [0-9]+ new series could not be written" "$TMP/full.err" ||
	fail "full disk: no report of what was not written: $(cat "$TMP/full.err")"
validate "$TMP/full/cdm"
written=$(jq -Rn '[inputs | split(",")[2]] | unique | length' "$csv")
[ "$written" -ge 1 ] && [ "$written" -lt "$n" ] ||
	fail "full disk: $written of $n intervals in the CSV (the disk never filled?)"

# --- 4. cgtma report --cdm (when record/replay is there) -----------------------------------
if "$CGTMA" report --help >/dev/null 2>&1 && "$CGTMA" --help 2>&1 | grep -q -- --record; then
	if "$CGTMA" -G "$W/w1" -I 100 -d 1 --record "$TMP/rec.cgtma" >/dev/null 2>"$TMP/rec.err"; then
		"$CGTMA" report "$TMP/rec.cgtma" --cdm "$TMP/replayed" >/dev/null 2>"$TMP/rep.err" ||
			fail "cgtma report --cdm failed: $(cat "$TMP/rep.err")"
		validate "$TMP/replayed"
		[ "$(jq length "$TMP/replayed/metric-data-cgtma.json")" -gt 0 ] ||
			fail "cgtma report --cdm: no series"
	else
		not_checked "the report of a record" "--record failed: $(cat "$TMP/rec.err")"
	fi
fi
# --- 5. failures, as crucible shows them -----------------------------------------------------
# post_process_fails DIR WHAT PATTERN: in tool directory DIR, rickshaw's post-process step
# exits nonzero, its output says PATTERN, and nothing but the output is in postprocess/.
post_process_fails() {
	local dir=$1 what=$2 pattern=$3 out
	rm -rf "$dir/postprocess" && mkdir "$dir/postprocess"
	if (cd "$dir" && "$TOOLS/cgtma-post-process" >postprocess/post-process-output.txt 2>&1); then
		fail "$what: cgtma-post-process exited 0: $(cat "$dir/postprocess/post-process-output.txt")"
	fi
	out=$(cat "$dir/postprocess/post-process-output.txt")
	grep -qF -- "$pattern" <<<"$out" || fail "$what: the post-process output does not say '$pattern': $out"
	grep -q "no cgtma metrics published" <<<"$out" || fail "$what: the output does not say nothing was published: $out"
	[ "$(ls -A "$dir/postprocess")" = post-process-output.txt ] ||
		fail "$what: postprocess/ holds $(ls -A "$dir/postprocess" | tr '\n' ' ')"
	! ls "$dir"/metric-data-* >/dev/null 2>&1 || fail "$what: metric files at the tool directory's root"
}

CGTMA_ABS=$(readlink -f "$CGTMA")
for bad in "--model=no-such-model|no built-in model 'no-such-model'" \
	"--level=1 --bogus=1|unrecognized option" \
	"--interval=soon|--interval 'soon': seconds expected" \
	"--pod=nonamespace|--pod 'nonamespace': NAMESPACE/NAME expected"; do
	params=${bad%%|*} pattern=${bad#*|}
	d=$TMP/bad-$RANDOM
	mkdir "$d"
	# shellcheck disable=SC2086 # the params are separate words, as rickshaw passes them
	(cd "$d" && CGTMA=$CGTMA_ABS "$TOOLS/cgtma-start" $params) &&
		fail "cgtma-start $params: exit 0"
	[ -s "$d/cgtma-failed.txt" ] || fail "cgtma-start $params: no cgtma-failed.txt"
	# shellcheck disable=SC2086
	(cd "$d" && "$TOOLS/cgtma-stop" $params) && fail "cgtma-stop after a failed start: exit 0"
	post_process_fails "$d" "cgtma-start $params" "$pattern"
done

# A cgtma that dies mid-run: its files are valid so far, but not the run's.
d=$TMP/died
mkdir "$d"
(cd "$d" && CGTMA=$CGTMA_ABS "$TOOLS/cgtma-start" --interval=0.1) ||
	fail "cgtma-start: $(cat "$d/cgtma-start-stderrout.txt")"
sleep 0.5
kill -9 "$(cat "$d/cgtma-pid.txt")"
sleep 0.2
(cd "$d" && "$TOOLS/cgtma-stop" --interval=0.1) && fail "cgtma-stop of a dead cgtma: exit 0"
post_process_fails "$d" "a cgtma killed mid-run" "was not running at stop: it ended before the run did"

# A selector that matched nothing for the whole run (a typo): cgtma ran to the end, but not
# what was asked for; the post-process says which, with the close name.
d=$TMP/typo
mkdir "$d"
(cd "$d" && CGTMA=$CGTMA_ABS "$TOOLS/cgtma-start" "--cgroup=$W/w1,$W/x*" --interval=0.1) ||
	fail "cgtma-start with a typo: $(cat "$d/cgtma-start-stderrout.txt")"
sleep 0.5
(cd "$d" && "$TOOLS/cgtma-stop") && fail "cgtma-stop of a run whose selector never matched: exit 0"
grep -qF "'$W/x*' never matched a cgroup during the run" "$d/cgtma-failed.txt" ||
	fail "a selector that never matched: cgtma-failed.txt: $(cat "$d/cgtma-failed.txt")"
post_process_fails "$d" "a selector that never matched" \
	"a selector matched nothing for the whole run"

# --- 6. container and pod params -------------------------------------------------------------
d=$TMP/names
mkdir "$d"
# (Python, not bash: a background job starts with SIGINT ignored, which bash cannot trap.)
cat >"$TMP/fake-cgtma" <<'EOF'
#!/usr/bin/env python3
# Stands in for cgtma: records its arguments, one a line, then "counts" until SIGINT and
# ends with a summary, as cgtma --json does.
import os, signal, sys
open("fake-args.txt", "w").write("".join(a + "\n" for a in sys.argv[1:]))
os.makedirs("cgtma-data", exist_ok=True)
open("cgtma-data/metric-data-cgtma.json", "w").write("[]\n")
signal.signal(signal.SIGINT, lambda *_: (print('{"summary":true}', flush=True), os._exit(0)))
while True:
    signal.pause()
EOF
chmod +x "$TMP/fake-cgtma"
(cd "$d" && "$TOOLS/cgtma-start" "--cgtma=$TMP/fake-cgtma" "--container=web-*,db" \
	"--pod=prod/api-*,kube-system/coredns-*" "--cgroup=/system.slice" "--container=3f2a") ||
	fail "cgtma-start with container and pod params: $(cat "$d/cgtma-start-stderrout.txt")"
(cd "$d" && "$TOOLS/cgtma-stop") || fail "cgtma-stop of the stand-in: $(cat "$d/cgtma-stop-stderrout.txt")"
got=$(grep -A1 -x -- -G "$d/fake-args.txt" | grep -vx -- -G | grep -vx -- -- | tr '\n' ' ')
[ "$got" = "container:web-* container:db pod:prod/api-* pod:kube-system/coredns-* /system.slice container:3f2a " ] ||
	fail "the -G selectors cgtma got: '$got'"
for m in "--metrics -m" "--metrics=IPC,Info.System --metrics=IPC,Info.System" "--metrics=no "; do
	read -r param want <<<"$m"
	(cd "$d" && "$TOOLS/cgtma-start" "--cgtma=$TMP/fake-cgtma" "$param") ||
		fail "cgtma-start $param: $(cat "$d/cgtma-start-stderrout.txt")"
	(cd "$d" && "$TOOLS/cgtma-stop") || fail "cgtma-stop after $param"
	got=$(grep -E -x -- '-m|--metrics.*' "$d/fake-args.txt" | tr '\n' ' ')
	[ "$got" = "${want:+$want }" ] || fail "cgtma-start $param: cgtma got '$got', want '$want'"
done
d=$TMP/metrics-bad
mkdir "$d"
(cd "$d" && CGTMA=$CGTMA_ABS "$TOOLS/cgtma-start" "--cgroup=$W/w1" --metrics=NoSuchMetric) &&
	fail "cgtma-start --metrics=NoSuchMetric: started"
grep -q "NoSuchMetric" "$d/cgtma-failed.txt" ||
	fail "--metrics=NoSuchMetric: cgtma-failed.txt does not say why: $(cat "$d/cgtma-failed.txt")"

# --- 7. --irq: interrupt scopes and the system by their own names ---------------------------
d=$TMP/irq
N=30000
mkdir "$d"
(cd "$d" && CGTMA=$CGTMA_ABS "$TOOLS/cgtma-start" "--cgroup=$W/w1,/" --irq --interval=0.2 \
	--events=syscalls:sys_enter_getppid,cpu-clock) ||
	fail "cgtma-start --irq: $(cat "$d/cgtma-start-stderrout.txt")"
cg_run W/w1 "$WORKLOAD" getppid $N 100 || fail "the getppid workload failed"
sleep 0.5
(cd "$d" && "$TOOLS/cgtma-stop") || fail "cgtma-stop --irq: $(cat "$d/cgtma-stop-stderrout.txt")"
validate "$d/cgtma-data"
raw_json=$d/cgtma-data/metric-data-cgtma.json raw_csv=$d/cgtma-data/metric-data-cgtma.csv
want_irq='["BLOCK","HI","HRTIMER","IRQ_POLL","NET_RX","NET_TX","RCU","SCHED","TASKLET","TIMER","hardirq"]'
# An interrupt scope idle the whole run has no rows, hence no series (as in every output).
jq -e --arg w "$W/w1" --argjson q "$want_irq" '
	. as $all | all(.[]; .names | has("cgroup") and has("irq")) and
	all(["syscalls-sys-enter-getppid", "cpu-clock"][]; . as $t |
		[$all[] | select(.desc.type == $t) | .names | [.cgroup, .irq]] |
		(map(select(.[0] != "none")) | sort ==
		 ([["all", "all"], ["/", "none"], [$w, "none"]] | sort)) and
		(map(select(.[0] == "none") | .[1]) | length > 0 and length == (unique | length) and
		 all(.[]; IN($q[]))))' \
	"$raw_json" >/dev/null ||
	fail "--irq: the series are not named {all, all}, {/, none}, {$W/w1, none} and {none, IRQ} once for some IRQs: $(jq -c '[.[].names] | unique' "$raw_json")"
# In every interval: system = root + the irq scopes (cpu-clock rates, 6 decimals each).
bad=$(jq -Rnr --slurpfile j "$raw_json" '
	($j[0] | map(select(.desc.type == "cpu-clock"))) as $s |
	($s | map(select(.names.cgroup == "all"))[0].idx) as $sys |
	($s | map(select(.names.cgroup == "/"))[0].idx) as $root |
	[$s[] | select(.names.cgroup == "none") | .idx] as $irqs |
	[inputs | split(",") | map(tonumber)] | group_by(.[2])[] | . as $rows |
	($rows | map(select(.[0] == $sys))[0][3]) as $a |
	([$rows[] | select(.[0] == $root or (.[0] | IN($irqs[]))) | .[3]] | add) as $b |
	select($a == null or (($a - $b) | fabs) > 1e-6 * $a + 1e-5) |
	"interval ending \(.[0][2]): system \($a), root + irq scopes \($b)"' "$raw_csv")
[ -z "$bad" ] || fail "--irq: the system is not the root plus the irq scopes: ${bad%%$'\n'*}"
irq_ns=$(jq -Rnr --slurpfile j "$raw_json" '
	[$j[0][] | select(.desc.type == "cpu-clock" and .names.cgroup == "none") | .idx] as $q |
	[inputs | split(",") | map(tonumber) | select(.[0] | IN($q[])) | .[3]] | add' "$raw_csv")
awk -v v="$irq_ns" 'BEGIN { exit !(v > 0) }' ||
	fail "--irq: the irq scopes ran for no cpu-clock at all ($irq_ns), nothing told the system from the root"
mkdir "$d/postprocess"
(cd "$d" && "$TOOLS/cgtma-post-process" >postprocess/post-process-output.txt 2>&1) ||
	fail "cgtma-post-process --irq: $(cat "$d/postprocess/post-process-output.txt")"
xz -dc "$d/postprocess/metric-data-cgtma.json.xz" >"$d/pub.json" &&
	xz -dc "$d/postprocess/metric-data-cgtma.csv.xz" >"$d/pub.csv" || fail "--irq: nothing published"
idx=$(jq -r --arg w "$W/w1" '.[] | select(.desc.type == "syscalls-sys-enter-getppid" and
	.names.cgroup == $w and .names.irq == "none") | .idx' "$d/pub.json")
[ -n "$idx" ] || fail "--irq: no published getppid series of $W/w1"
got=$(cdm_sum "$raw_csv" "$d/pub.csv" "$idx")
cdm_near "$got" $N || fail "--irq: the published getppid series of $W/w1 adds up to $got, want $N (1 %)"
echo "irq: $W/w1 published $got of $N getppid calls; irq scopes $irq_ns ns/s summed over the rows"

echo "ok"
