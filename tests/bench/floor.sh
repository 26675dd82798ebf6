# Sourced by the benchmarks that run tests/bench/hookfloor (run-bench.sh, read-cost.sh,
# spread-cost.sh, floor-table.sh).
#
# floor_start PROG EVENTS [PREFIX...]: starts $FLOOR -p PROG -e EVENTS in the background
# (behind PREFIX, e.g. taskset), as $FLOOR_PID, and sets FLOOR_ID to the id of the program it
# attached, once it says so; dies (the caller's die) when it does not start. Its output is in
# $TMP/floor, its errors in $TMP/err.
floor_start() {
	local prog=$1 ev=$2 i
	shift 2
	# Emptied here, not by the redirection below, which the loop could outrun and find the
	# last run's id.
	: >"$TMP/floor"
	"$@" "$FLOOR" -p "$prog" -e "$ev" >>"$TMP/floor" 2>"$TMP/err" &
	FLOOR_PID=$!
	FLOOR_ID=""
	for ((i = 0; i < 400; i++)); do
		FLOOR_ID=$(sed -n 's/^prog_id=//p' "$TMP/floor")
		[ -n "$FLOOR_ID" ] && break
		kill -0 "$FLOOR_PID" 2>/dev/null || break
		sleep 0.05
	done
	[ -n "$FLOOR_ID" ] || die "hookfloor -p $prog -e $ev did not start: $(cat "$TMP/err")"
}

# floor_stop: stops the hookfloor floor_start started (it exits 0 at SIGTERM); false where it
# had failed before, its errors then in $TMP/err.
floor_stop() {
	local rc
	kill "$FLOOR_PID" 2>/dev/null
	wait "$FLOOR_PID"
	rc=$?
	FLOOR_PID=""
	return $rc
}
