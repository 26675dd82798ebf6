#!/bin/bash
# --prometheus: a real Prometheus server (Debian's) scrapes cgtma on loopback every second.
# Asserts that
#   - the page passes `promtool check metrics`; cgtma_run_info has no level for the
#     software model (no Top-Down tree);
#   - Prometheus holds the test cgroup's cpu-clock counter: after a spinning workload, the
#     value cgtma serves, to the nanosecond, which lies between the cgroup's CPU time
#     (cpu.stat usage_usec) and the workload's wall time; the cgroup's CPU_Utilization gauge
#     rose while it spun;
#   - a removed cgroup's series leave the page at once and Prometheus stops returning them;
#   - a port in use and an address not on this host fail with one line naming ADDR:PORT and
#     exit 1 before any interval; a malformed [ADDR:]PORT exits 2.
# live: both-hooks
. "$(dirname "$0")/lib.sh"

commands_or_skip prometheus promtool curl ss

logs() {
	for f in "$TMP"/*.log "$TMP/err"; do echo "--- $f"; tail -n 15 "$f"; done >&2
}
die() { logs; fail "$*"; }

PORT=$(free_port)
PPORT=$(free_port)
[ "$PORT" != "$PPORT" ] || PPORT=$(free_port)
METRICS="http://127.0.0.1:$PORT/metrics"
PROM="http://127.0.0.1:$PPORT"

cg_make spin
cg_make gone
SPIN=$(cg_path spin)
GONE=$(cg_path gone)

# The software model: the same metrics on every machine, PMU or not. Per CPU (-A): each
# cgroup's series come once whole (no cpu label) and once per CPU.
cgtma_start "$TMP/cgtma.log" 0 -M sw -A --prometheus "127.0.0.1:$PORT" -G "$SPIN" -G "$GONE" \
	-I 1000

metrics_wait 20 $PORT "$TMP/page.txt" -F "cgroup=\"$SPIN\"" ||
	die "cgtma's page never showed cgroup $SPIN"

# --- the exposition format -----------------------------------------------------------
metrics_scrape $PORT "$TMP/page.txt" || die "cannot fetch $METRICS"
promtool check metrics <"$TMP/page.txt" >"$TMP/promtool.log" 2>&1 ||
	die "promtool check metrics fails on the page: $(cat "$TMP/promtool.log")"
grep -q '^# TYPE cgtma_events_total counter$' "$TMP/page.txt" ||
	die "no cgtma_events_total family"
grep -qF "cgtma_events_total{scope=\"cgroup\",cgroup=\"$SPIN\",event=\"cpu-clock\"} " \
	"$TMP/page.txt" || die "no cpu-clock counter for $SPIN"
curl -sfI "$METRICS" | grep -qi '^content-type: text/plain; version=0.0.4' ||
	die "/metrics is not served as text/plain; version=0.0.4"
# The software model has no Top-Down tree: no level label in cgtma_run_info.
grep -q '^cgtma_run_info{model="sw",cpu_model=".*",kernel=".*"} 1$' "$TMP/page.txt" &&
	! grep -q '^cgtma_run_info{.*level=' "$TMP/page.txt" ||
	die "cgtma_run_info: $(grep '^cgtma_run_info' "$TMP/page.txt")"

# --- Prometheus scrapes it -------------------------------------------------------------
cat >"$TMP/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: cgtma
    static_configs:
      - targets: ['127.0.0.1:$PORT']
EOF
promtool check config "$TMP/prometheus.yml" >"$TMP/promtool.log" 2>&1 ||
	die "bad test config: $(cat "$TMP/promtool.log")"
prometheus --config.file="$TMP/prometheus.yml" --storage.tsdb.path="$TMP/tsdb" \
	--web.listen-address="127.0.0.1:$PPORT" --log.level=warn >"$TMP/prometheus.log" 2>&1 &
PROM_PID=$!
on_exit "kill $PROM_PID; wait $PROM_PID"

ready() { kill -0 $PROM_PID 2>/dev/null && curl -sf "$PROM/-/ready" >/dev/null; }
wait_for 60 ready || die "Prometheus did not become ready on $PROM"

query() { curl -sfG --data-urlencode "query=$1" "$PROM/api/v1/query"; }
# The first result's value, or nothing.
value() { query "$1" | jq -r '.data.result[0].value[1] // empty'; }
count() { query "$1" | jq -r '.data.result | length'; }
has_series() { [ "$(count "$1")" -gt 0 ] 2>/dev/null; }

# The whole cgroup's series: no cpu label.
SEL="job=\"cgtma\",scope=\"cgroup\",cgroup=\"$SPIN\",cpu=\"\""
CPU_CLOCK="cgtma_events_total{$SEL,event=\"cpu-clock\"}"
wait_for 20 has_series "$CPU_CLOCK" || die "Prometheus has no $CPU_CLOCK"
[ "$(query 'up{job="cgtma"}' | jq -r '.data.result[0].value[1]')" = 1 ] ||
	die "Prometheus says the cgtma target is not up"

# --- a counter Prometheus holds: the cgroup's CPU time -----------------------------------
t0=$(date +%s%N)
cg_run spin "$WORKLOAD" spin 3000 || die "the workload failed"
wall_ns=$(($(date +%s%N) - t0))
usage_ns=$(awk '$1 == "usage_usec" { printf "%.0f", $2 * 1000 }' \
	"$CG_ROOT/$CG_BASE/spin/cpu.stat")
[ "${usage_ns:-0}" -gt 500000000 ] || die "the workload used only ${usage_ns:-0} ns of CPU"
# The value on cgtma's page; once the interval after the exit is read, it stays put.
page_value() {
	scrape_value $PORT \
		"cgtma_events_total{scope=\"cgroup\",cgroup=\"$SPIN\",event=\"cpu-clock\"}"
}
# Two readings an interval apart that agree: the last interval of the workload is in.
stable() { local a; a=$(page_value); sleep 1.1; v=$(page_value); [ -n "$v" ] && [ "$a" = "$v" ]; }
wait_for 2 stable || die "cgtma's cpu-clock counter for $SPIN is '${v:-}' and still moving"
# At least the CPU time the kernel charged the cgroup, at most the workload's wall time (one
# thread); the two agree within a few percent on an idle machine.
[ "$v" -ge $((usage_ns * 9 / 10)) ] && [ "$v" -le $((wall_ns * 21 / 20)) ] ||
	die "cgtma counted $v ns of cpu-clock for $SPIN; it used $usage_ns ns in $wall_ns ns"
# Prometheus stored what cgtma served, to the nanosecond.
same() { [ "$(value "$CPU_CLOCK")" = "$v" ]; }
wait_for 10 same || die "Prometheus has $CPU_CLOCK = $(value "$CPU_CLOCK"), cgtma serves $v"
# The cgroup's per-CPU series add up to the whole.
per_cpu=$(value "sum(cgtma_events_total{cgroup=\"$SPIN\",cpu!=\"\",event=\"cpu-clock\"})")
[ "$per_cpu" = "$v" ] || die "the per-CPU cpu-clock series of $SPIN add up to '$per_cpu', not $v"
# While it spun, CPU_Utilization of the cgroup rose to what it got of one CPU.
UTIL="cgtma_metric{$SEL,metric=\"CPU_Utilization\",unit=\"CPUs\"}"
peak=$(value "max_over_time($UTIL[1m])")
awk -v p="${peak:-0}" -v u="$usage_ns" -v w="$wall_ns" \
	'BEGIN { exit !(p >= 0.5 * u / w && p <= 1.1) }' ||
	die "CPU_Utilization of $SPIN peaked at '$peak'; it used $usage_ns ns in $wall_ns ns"

# --- a removed cgroup leaves the page and Prometheus ------------------------------------
GONE_Q="cgtma_events_total{job=\"cgtma\",cgroup=\"$GONE\"}"
wait_for 10 has_series "$GONE_Q" || die "Prometheus never had $GONE"
rmdir "$CG_ROOT/$CG_BASE/gone" || die "cannot remove $GONE"
page_lacks() { metrics_scrape $PORT "$TMP/page.txt" && ! grep -qF "\"$GONE\"" "$TMP/page.txt"; }
wait_for 5 page_lacks || die "$GONE is still on the page after it was removed"
gone_from_prom() { [ "$(count "$GONE_Q")" = 0 ]; }
wait_for 10 gone_from_prom || die "Prometheus still returns $GONE_Q after it left the page"
metrics_scrape $PORT | grep -qF "cgroup=\"$SPIN\"" || die "$SPIN left the page with $GONE"

# --- errors --------------------------------------------------------------------------
# cannot_serve WHAT ADDR REASON: --prometheus ADDR:$PORT exits 1, saying only that it cannot
# serve there and REASON, before any interval.
cannot_serve() {
	local out rc
	out=$(timeout 20 "$CGTMA" -M sw --prometheus "$2:$PORT" -d 3 2>"$TMP/err.log")
	rc=$?
	[ $rc -eq 1 ] || die "$1: exit $rc, want 1"
	[ "$(cat "$TMP/err.log")" = "cgtma: cannot serve Prometheus on $2:$PORT: $3" ] ||
		die "$1: stderr is '$(cat "$TMP/err.log")'"
	[ -z "$out" ] || die "$1: it profiled anyway: '$out'"
}
# The port cgtma serves on is in use.
cannot_serve "port in use" 127.0.0.1 "Address already in use"
# An address this host does not have (TEST-NET-1).
cannot_serve "foreign address" 192.0.2.1 "Cannot assign requested address"

# Not [ADDR:]PORT at all: bad usage.
for bad in "127.0.0.1:" "localhost" "70000" "::1:$PORT"; do
	timeout 20 "$CGTMA" -M sw --prometheus "$bad" -d 3 >/dev/null 2>"$TMP/err.log"
	rc=$?
	[ $rc -eq 2 ] || die "--prometheus '$bad': exit $rc, want 2 ($(cat "$TMP/err.log"))"
	grep -qF -- "--prometheus '$bad': expected [ADDR:]PORT" "$TMP/err.log" ||
		die "--prometheus '$bad': stderr is '$(cat "$TMP/err.log")'"
done

# cgtma itself still serves: the failed runs took nothing from it.
kill -0 $cgtma_pid 2>/dev/null || die "cgtma exited"
metrics_scrape $PORT | promtool check metrics >/dev/null 2>&1 ||
	die "the page no longer passes promtool"
echo "ok: Prometheus on $PROM scraped cgtma on 127.0.0.1:$PORT"
