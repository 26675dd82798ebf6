# Sourced by the live tests. Gives:
#   $CGTMA        the binary under test;  $WORKLOAD  tests/helpers/workload
#   $CG_ROOT      the cgroup v2 mount (from mountinfo);  $CG_BASE  this test's own cgroup,
#                 relative to $CG_ROOT, removed with everything below it when the test exits
#   $TMP          a scratch directory, removed on exit
#   $TRACEFS      the tracing directory; tracepoint_or_skip EVENT (as syscalls/sys_enter_x)
#                 skips the test where the kernel has no such tracepoint
#   skip MSG      ends the test as skipped (exit 77) saying why ("SKIP MSG": tests/run-live.sh
#                 and the kernel matrix show MSG); every skip goes through it
#   not_checked WHAT WHY   says that a part of the test (WHAT) is not run here, and why; the
#                 rest of the test goes on
#   commands_or_skip CMD...   skips the test unless every CMD is installed (tools/install-deps.sh
#                 test installs them all; tests/check-deps.sh checks that)
#   cpus_or_skip N WHY   skips the test unless N CPUs are online (WHY: what needs them)
#   sample_rate_or_skip HZ   skips the test unless perf_event_max_sample_rate allows HZ
#   syscall_events_or_skip N EV   $syscall_events: EV and N - 1 other syscall entry
#                 tracepoints (by name), comma-separated; skips where there are fewer
#   veth_or_skip NS_A DEV_A IP_A NS_B DEV_B IP_B   two network namespaces joined by a veth
#                 pair, DEV_A in NS_A with IP_A/30 and DEV_B in NS_B with IP_B/30, up, loopback
#                 up too; removed when the test exits; skips where they cannot be made
#   tmpfs_or_skip DIR OPTS [WHAT]   mounts a tmpfs with OPTS (as size=64k) on DIR (made),
#                 unmounted when the test exits; skips where it cannot (WHAT: what for)
#   fail MSG      ends the test as failed
#   kernel_at_least MAJOR MINOR   whether the running kernel is Linux MAJOR.MINOR or later
#   cg_make REL...   creates $CG_ROOT/$CG_BASE/REL (one mkdir for them all: a process costs
#                 0.1 s under emulation);  cg_path REL  its canonical cgroup path
#   cg_remove REL removes it, retried while an exited workload is still being released
#   cg_run REL CMD...   runs CMD inside that cgroup (waits for it)
#   cg_start REL CMD... the same in the background; cg_wait waits for all of them, each must
#                 succeed
#   cg_spawn REL CMD... CMD in that cgroup in the background, $! CMD itself: a kill of $!
#                 ends it (cg_start's $! is a subshell, whose kill leaves CMD running)
#   cgroup_sum FILE CGROUP EVENT [CPU]   a cgroup's count over --json FILE's intervals
#   cgroup_sums FILE EVENT CGROUP...   theirs, a line each, in one pass over FILE (jq reads a
#                 large FILE for seconds under emulation, and starts in 0.3 s)
#   task_sums FILE EVENT CGROUP TID [CGROUP TID...]   threads' counts (-T), a line each, in
#                 one pass;  summary_cgroups FILE  the cgroups summed up
#   cpu_rows_add_up FILE EVENT   whether --per-cpu output's CPU rows add up to their totals
#   exact_or_marked GOT WANT FILE   whether a count is exact, or off by little in a run
#                 cgtma marked not exact
#   cgtma_start OUT N ARGS...   runs $CGTMA ARGS in the background, stdout to OUT (emptied
#                 first), stderr to $TMP/err; then cgtma_started OUT N
#   cgtma_started [OUT N]   the background job just started ($!) is cgtma, or becomes it
#                 by exec (a test that starts it its own way: in a namespace, a chroot):
#                 $cgtma_pid, killed when the test exits; waits until OUT has N lines (none
#                 given, or 0: does not wait)
#   cgtma_more OUT [N [S]]   waits until cgtma's OUT has N (1) more lines, the next
#                 interval, S (10) seconds at most
#   cgtma_status RC [WHAT]  waits for cgtma to end; it must exit RC (WHAT names the case)
#   cgtma_exited [WHAT]  cgtma_status 0
#   cgtma_signal SIG [WHAT [RC]]  sends cgtma SIG (INT, as a user's Ctrl-C), then
#                 cgtma_status RC (0)
#   cgtma_quiet [WHAT]   fails if cgtma's stderr says more than stderr_said lets pass
#   cgtma_stop [WHAT]    cgtma_signal INT, then cgtma_quiet
#   spinner_running REL FN   spinfn spins FN in cgroup REL (until spinner_stop), once it runs
#   hw_pmu_or_skip   skips the test where there is no hardware PMU, saying why
#   icount_exact  whether instruction counts are exact (QEMU -icount, ASLR off); then CPU 0
#                 alone stays online until the test ends
#   group_refused MODEL N REL   cgtma with a model of one group of N hardware events (more
#                 than the counters) on cgroup REL exits 1 saying so, with no rows
#   loops_setup   two CPU-bound cgroups on CPU 0 for the hardware-counter tests: A runs
#                 `workload-static loop $N1`, B `loop $N2` (or $WL_A, $WL_B: other
#                 workload-static commands); makes A and B ($A, $B their paths)
#   loops_measure NAME together|alone ARGS...   cgtma ARGS while the loops run; JSON in
#                 $TMP/NAME.json
#   within X Y PCT   whether |X - Y| <= PCT % of Y
#   loops_scaled NAME EXACT EVENT...   each cgroup's scaled EVENTs within 3 % of its exact
#                 instructions:u (run EXACT), multiplexed (fraction above 0, below 1)
#   loops_multiplexed NAME EXACT ARGS...   loops_measure and loops_scaled, with the remedy
#                 for the rotation in phase with the switches where needed; $mux_run
#   wait_lines FILE N [S]   until FILE has N lines; fails when cgtma ($cgtma_pid, its stderr
#                 in $TMP/err) exits first, or after S (10) s times $patience
#   on_exit CMD   runs CMD when the test exits (before the cgroups are removed)
#   pingpong_start REL_A REL_B  a ping-pong between two of the test's cgroups on every CPU, in
#                 the background (cross-cgroup switches by the hundred thousand);
#                 pingpong_stop ends them (the test's end does too)
#   free_port     a TCP port nothing uses, listening or not (needs ss)
#   metrics_scrape PORT [FILE]   cgtma's Prometheus page on 127.0.0.1:PORT, to FILE (else
#                 stdout); fails (curl's status) where it cannot be fetched
#   metric_value FILE SERIES [PART...]   the value of SERIES (name{labels} as the page writes
#                 them) on the page in FILE ("-": stdin), nothing where it is not there; with
#                 PARTs, of the series that starts with SERIES and holds every PART
#   scrape_value PORT SERIES [PART...]   metric_value on the page cgtma serves now
#   metrics_wait S PORT FILE [-F] PATTERN...   scrapes the page into FILE every 0.2 s until
#                 it has a line matching each PATTERN (grep's; -F: fixed strings), S seconds
#                 at most; 1 if never
#   wait_for S CMD...   runs CMD every 0.2 s until it succeeds, S seconds at most (times
#                 $patience); 1 if never
#   nap S         sleeps S seconds (fractions too) without a process of its own
#   lines FILE    how many whole lines FILE has (wc -l), without a process of its own
#   patience      what the waits' limits are multiplied by: 2, or 5 under emulation (a TCG
#                 guest runs a process start or a BPF load 10 to 20 times slower). Limits
#                 that catch a hang, not measures: the polls' own processes once stretched
#                 them about so much, on a loaded machine or in a guest
#   task_ends_once FILE TID   whether --json FILE has exactly one row of thread TID marked
#                 exited and none after it (-T: a thread alive until it ends); else prints
#                 what is wrong
#   watch_perf_cgroup_sessions   skips now if another perf session counts per-cgroup events
#                 (they distort cpu-clock: kernel behaviour), and notes any that starts later;
#                 perf_seen then skips a failing check if one ran meanwhile
#   stderr_said FILE   whether cgtma's stderr FILE says more than the switch hook's fallback
#                 (said once where the kernel drops the perf-event hook's samples) and -v's
#                 marks (lines 'cgtma: mark: ')
#   usage_usec REL   the cgroup's cpu.stat usage_usec;  steal_usec [CPU]  /proc/stat's steal so
#                 far (all CPUs, or CPU's)
#   agree WHAT CGTMA_USEC CPUSTAT_USEC STEAL_USEC [WHY]   fails unless cgtma's cpu-clock is
#                 within 3 % of cpu.stat's usage (plus the time stolen, plus $slack us)
set -u
CGTMA=${CGTMA_BUILD:-build}/cgtma
WORKLOAD=${CGTMA_BUILD:-build}/tests/workload

skip() { echo "SKIP $*"; exit 77; }
not_checked() { echo "not checked: $1: $2"; }
fail() { echo "FAIL: $*" >&2; exit 1; }
# The release's first two numbers ("5.10.0-46-amd64", "6.18.44-fc-v1272", "6.1-rc3").
kernel_at_least() {
	local maj min
	IFS=. read -r maj min _ <<<"$(uname -r)"
	min=${min%%[!0-9]*}
	((maj > $1 || (maj == $1 && ${min:-0} >= $2)))
}

[ -x "$CGTMA" ] || fail "no $CGTMA: build first"
[ -x "$WORKLOAD" ] || fail "no $WORKLOAD: build first (make $WORKLOAD)"
command -v jq >/dev/null || skip "jq is not installed (tools/install-deps.sh test installs it)"
[ -r /sys/kernel/btf/vmlinux ] || skip "the kernel has no BTF (/sys/kernel/btf/vmlinux)"

# _mount_of FSTYPE: mnt, the first mount point of FSTYPE that mounts its root; 1 if none.
# Read by the shell, as every test starts here (a process costs 0.1 s under emulation).
_mount_of() {
	local - f
	set +x
	mnt=''
	while read -ra f; do
		[ "${f[-3]}" = "$1" ] && [ "${f[3]}" = / ] && { mnt=${f[4]}; return 0; }
	done </proc/self/mountinfo
	return 1
}
_mount_of cgroup2 || skip "cgroup v2 is not mounted"
CG_ROOT=$mnt
CG_BASE="cgtma-test-$$-$RANDOM"
# Where nothing has mounted tracefs yet (a fresh machine), mounted as cgtma mounts it for a
# tracepoint event: a test must not skip for what cgtma does itself.
_mount_of tracefs
TRACEFS=$mnt
if [ -z "$TRACEFS" ]; then
	_mount_of debugfs && TRACEFS=$mnt/tracing
	[ -n "$TRACEFS" ] && [ -d "$TRACEFS/events" ] ||
		{ TRACEFS=/sys/kernel/tracing; mount -t tracefs nodev $TRACEFS 2>/dev/null; }
fi
commands_or_skip() {
	local c
	for c in "$@"; do
		command -v "$c" >/dev/null ||
			skip "$c is not installed (tools/install-deps.sh test installs it)"
	done
}
tmpfs_or_skip() {
	mkdir -p "$1" && mount -t tmpfs -o "$2" cgtma-test "$1" ||
		skip "cannot mount a tmpfs${3:+ $3}"
	on_exit "umount -l $1"
}
cpus_or_skip() {
	local n
	n=$(getconf _NPROCESSORS_ONLN)
	[ "$n" -ge "$1" ] || skip "$n CPU(s) online, $1 needed: $2"
}
sample_rate_or_skip() {
	local r
	r=$(cat /proc/sys/kernel/perf_event_max_sample_rate)
	[ "$r" -ge "$1" ] || skip "perf_event_max_sample_rate is $r, below $1"
}
syscall_events_or_skip() {
	local n=1 d
	syscall_events=$2
	for d in "$TRACEFS"/events/syscalls/sys_enter_*; do
		[ "syscalls:${d##*/}" != "$2" ] && [ -r "$d/id" ] || continue
		[ $n -lt "$1" ] || break
		syscall_events+=",syscalls:${d##*/}"
		n=$((n + 1))
	done
	[ $n -eq "$1" ] ||
		skip "only $n syscall tracepoints under $TRACEFS/events/syscalls, $1 needed"
}
veth_or_skip() {
	commands_or_skip ip nsenter
	ip netns add "$1" || skip "cannot create a network namespace"
	on_exit "ip netns del $1"
	ip netns add "$4" || fail "cannot create a second network namespace"
	on_exit "ip netns del $4"
	ip link add "$2" netns "$1" type veth peer name "$5" netns "$4" ||
		skip "cannot create a veth pair"
	_veth_up "$1" "$2" "$3" && _veth_up "$4" "$5" "$6" || fail "cannot set up the veth pair"
}
_veth_up() {
	nsenter --net="/run/netns/$1" ip addr add "$3/30" dev "$2" &&
		nsenter --net="/run/netns/$1" ip link set "$2" up &&
		nsenter --net="/run/netns/$1" ip link set lo up
}
tracepoint_or_skip() {
	[ -d "$TRACEFS/events/$1" ] ||
		skip "the kernel has no $1 tracepoint (under $TRACEFS/events; CONFIG_FTRACE_SYSCALLS)"
}
TMP=$(mktemp -d /tmp/cgtma-test.XXXXXX)
# The polls below run many times a second: under a TCG guest a process started to sleep or
# to count lines costs 0.1 s of the guest's one host CPU, taken from the cgtma being waited
# for. A read that times out on a FIFO nobody writes sleeps without one.
mkfifo "$TMP/nap" && exec {_nap_fd}<>"$TMP/nap" || fail "cannot make $TMP/nap"
# The polls leave no shell trace of their own (CGTMA_LIVE_TRACE): written through a guest's
# 9p share line by line, it would cost more than the polls do.
nap() {
	local -
	set +x
	read -r -t "$1" -u "$_nap_fd" _ || :
}
# _lines FILE: nlines, FILE's whole lines (wc -l's count: a last line not yet ended is not
# one); set, not printed: a command substitution would fork.
_lines() {
	local - l=()
	set +x
	nlines=0
	mapfile l <"$1" || return
	[ ${#l[@]} -gt 0 ] && [ "${l[-1]: -1}" != $'\n' ] && unset 'l[-1]'
	nlines=${#l[@]}
}
lines() { _lines "$1" && echo $nlines; }
patience=2
[ -n "${CGTMA_EMULATION:-}" ] && patience=5
_exit_cmds=()
_started=()

on_exit() { _exit_cmds+=("$*"); }

_cleanup() {
	local rc=$?
	for c in "${_exit_cmds[@]}"; do eval "$c" >/dev/null 2>&1; done
	# Children first: kill what is left in our cgroups, then rmdir bottom-up.
	if [ -d "$CG_ROOT/$CG_BASE" ]; then
		find "$CG_ROOT/$CG_BASE" -name cgroup.procs -exec cat {} + 2>/dev/null |
			xargs -r kill -9 2>/dev/null
		sleep 0.1
		find "$CG_ROOT/$CG_BASE" -depth -type d -exec rmdir {} + 2>/dev/null
	fi
	rm -rf "$TMP"
	exit $rc
}
trap _cleanup EXIT
trap 'exit 130' INT TERM

wait_for() {
	local end=$((SECONDS + $1 * patience))
	shift
	while :; do
		"$@" && return 0
		[ $SECONDS -lt $end ] || return 1
		nap 0.2
	done
}

task_ends_once() {
	local why
	why=$(jq -r -s --argjson t "$2" '[.[] | select(.summary != true)] as $iv |
		def gone: .scope == "task" and .tid == $t and .exited == true;
		([$iv[].rows[] | select(gone)] | length) as $ex |
		if $ex != 1 then "thread \($t) has \($ex) rows marked exited, want 1"
		elif ($iv | (map(any(.rows[]; gone)) | index(true)) as $i | .[$i + 1:] |
		      all(all(.rows[]; .scope != "task" or .tid != $t)))
		then "ok" else "thread \($t) has rows after the one marked exited" end' "$1")
	[ "$why" = ok ] || { echo "${why:-$1: jq cannot read it}"; return 1; }
}

cg_make() {
	local r p=()
	for r in "$@"; do p+=("$CG_ROOT/$CG_BASE/$r"); done
	mkdir -p "${p[@]}" || fail "cannot create cgroup(s) $*"
}
cg_remove() {
	local i
	for ((i = 0; i < 50; i++)); do
		rmdir "$CG_ROOT/$CG_BASE/$1" 2>/dev/null && return 0
		sleep 0.02
	done
	fail "cannot remove cgroup $1: $(rmdir "$CG_ROOT/$CG_BASE/$1" 2>&1)"
}
cg_path() { echo "/$CG_BASE${1:+/$1}"; }
cg_run() { local rel=$1; shift; "$WORKLOAD" cgexec "$CG_ROOT/$CG_BASE/$rel" "$@"; }
cg_start() { cg_run "$@" & _started+=($!); }
cg_spawn() {
	local rel=$1
	shift
	"$WORKLOAD" cgexec "$CG_ROOT/$CG_BASE/$rel" "$@" &
}
_pingpongs=()
pingpong_start() {
	local cpu pp=${CGTMA_BUILD:-build}/tests/pingpong
	[ -x "$pp" ] || fail "no $pp: build first (make $pp)"
	for ((cpu = 0; cpu < $(nproc); cpu++)); do
		"$pp" -c $cpu -n 100000000 -w 0 -A "$CG_ROOT/$CG_BASE/$1" -B "$CG_ROOT/$CG_BASE/$2" \
			>/dev/null 2>&1 &
		_pingpongs+=($!)
	done
	on_exit "kill ${_pingpongs[*]}"
}
pingpong_stop() { kill "${_pingpongs[@]}" 2>/dev/null; _pingpongs=(); }
cg_wait() {
	local p
	for p in "${_started[@]}"; do
		wait "$p" || fail "a workload failed (exit $?)"
	done
	_started=()
}
# spinner_running REL FN: tests/helpers/spinfn spins FN in cgroup REL until spinner_stop (or
# the test's end), and this returns once it has run 0.2 s there (under the kernel matrix's
# TCG guests its exec alone can take seconds).
spinner_running() {
	local spinfn=${CGTMA_BUILD:-build}/tests/spinfn u i
	[ -x "$spinfn" ] || fail "no $spinfn: build first (make $spinfn)"
	cg_spawn "$1" "$spinfn" "$2" 600000
	_spinner=$!
	on_exit "kill $_spinner 2>/dev/null"
	u=$(usage_usec "$1")
	for ((i = 0; i < 100; i++)); do
		[ $(($(usage_usec "$1") - u)) -ge 200000 ] && break
		sleep 0.1
	done
}
spinner_stop() { kill "$_spinner" 2>/dev/null; wait "$_spinner" 2>/dev/null; }
# hw_pmu_or_skip: skips the test, saying why, where cgtma cannot open a hardware event.
hw_pmu_or_skip() {
	"$CGTMA" -e instructions:u -I 100 -d 0.1 >/dev/null 2>"$TMP/probe" && return 0
	grep -q 'is there a hardware PMU' "$TMP/probe" && skip "no hardware PMU: $(head -n1 "$TMP/probe")"
	fail "cgtma -e instructions:u: $(cat "$TMP/probe")"
}
# icount_exact: whether instruction counts are exact here (QEMU's -icount shift=0, ASLR off:
# the matrix's arm64 rows); then every CPU but 0 goes offline until the test ends, since the
# emulated instruction counter counts all vCPUs together.
icount_exact() {
	local c
	[ "${CGTMA_EMULATION:-}" = tcg-icount ] &&
		[ "$(cat /proc/sys/kernel/randomize_va_space)" = 0 ] || return 1
	echo "exact: QEMU's -icount shift=0 and ASLR off; CPU 0 alone online"
	for c in /sys/devices/system/cpu/cpu[1-9]*/online; do
		[ "$(cat "$c")" = 1 ] || continue
		echo 0 >"$c" || fail "cannot take ${c%/online} offline"
		on_exit "echo 1 >$c"
	done
}
# group_refused MODEL_FILE N REL: the model is one group of N hardware events, more than
# the PMU can hold at once: cgtma counting cgroup REL with it must exit 1 saying that it
# cannot schedule a group of N events, and print no row (of zeros or anything else).
group_refused() {
	local out=$TMP/refused.out err=$TMP/refused.err rc
	"$CGTMA" list-events --model-file "$1" | grep -q "^model .*: $2 events in 1 groups" ||
		fail "$1 is not one group of $2: $("$CGTMA" list-events --model-file "$1" 2>&1 | head -n 3)"
	"$CGTMA" --model-file "$1" -G "$(cg_path "$3")" -I 100 -d 0.3 --json >"$out" 2>"$err"
	rc=$?
	echo "a group of $2: exit $rc, $(head -n1 "$err")"
	[ $rc = 1 ] || fail "a group larger than the counters: exit $rc, want 1 (stdout: $(head -c 300 "$out"))"
	grep -q "cannot schedule its group of $2 events" "$err" ||
		fail "a group larger than the counters: the message does not say so: $(cat "$err")"
	# --json reports the error as a line of its own; no line has rows.
	jq -e -s 'all(.[]; has("rows") | not)' "$out" >/dev/null ||
		fail "a refused group still printed rows: $(head -c 300 "$out")"
}
# cgroup_sum FILE CGROUP EVENT [CPU]: the cgroup's count of EVENT summed over the interval
# lines of cgtma --json output FILE (its rows of CPU, with -A), 0 where it has none.
cgroup_sum() {
	jq -s --arg cg "$2" --arg ev "$3" --argjson cpu "${4:-null}" \
		'[.[] | select(.summary != true) | .rows[] |
		  select(.scope == "cgroup" and .cgroup == $cg and .cpu == $cpu) | .counts[$ev]] |
		 add // 0' "$1"
}
cgroup_sums() {
	local f=$1 ev=$2
	shift 2
	jq -n --arg ev "$ev" '[inputs | select(.summary != true) | .rows[] |
		select(.scope == "cgroup" and .cpu == null)] as $r |
		$ARGS.positional[] as $cg | [$r[] | select(.cgroup == $cg) | .counts[$ev]] | add // 0' \
		"$f" --args "$@"
}
# task_sums FILE EVENT CGROUP TID...: each thread's count of EVENT in its CGROUP summed over
# the interval lines of cgtma --json -T output FILE (0 where it has none), a line each.
task_sums() {
	local f=$1 ev=$2
	shift 2
	jq -n --arg ev "$ev" '[inputs | select(.summary != true) | .rows[] |
		select(.scope == "task")] as $r | $ARGS.positional as $a |
		range(0; $a | length; 2) as $i |
		[$r[] | select(.cgroup == $a[$i] and .tid == ($a[$i + 1] | tonumber)) |
		 .counts[$ev]] | add // 0' "$f" --args "$@"
}
# summary_cgroups FILE: the cgroup rows' names on the summary line of --json FILE, sorted, on
# one line.
summary_cgroups() {
	jq -r 'select(.summary == true) | [.rows[] | select(.scope == "cgroup") | .cgroup] |
	       sort | join(" ")' "$1"
}
# exact_or_marked GOT WANT FILE: whether a count GOT is WANT, or cgtma said it might not be:
# its --json FILE has intervals marked not exact (missed_slices: slices that began with a
# switch or move the hook did not see, which go whole to the cgroup that ran at their end,
# with what ran before the unseen switch: a shell starting its command makes a few getppid()
# calls), and GOT is within 100 calls per such slice. A workload's slice lost or counted
# twice (thousands of calls) still fails; an unmarked difference always does. Says so when a
# difference passes.
exact_or_marked() {
	local got=$1 want=$2 missed diff
	[ "$got" = "$want" ] && return 0
	missed=$(jq -s '[.[] | select(.summary != true) | .missed_slices // 0] | add // 0' "$3")
	diff=$((got > want ? got - want : want - got))
	[ "$missed" -gt 0 ] && [ "$diff" -le $((100 * missed)) ] || return 1
	echo "note: $got for $want, in a run with $missed slices marked not exact"
}
# cpu_rows_add_up FILE EVENT: whether, in every line of cgtma --json --per-cpu output FILE,
# each total row's EVENT equals the sum of its CPU rows (the system's: the cpu rows).
cpu_rows_add_up() {
	jq -e -s --arg ev "$2" 'all(.[]; .rows as $r |
		all($r[] | select(.cpu == null);
		    . as $t | $t.counts[$ev] ==
		    ([$r[] | select(.cpu != null and
			(if $t.scope == "system" then .scope == "cpu"
			 else .scope == "cgroup" and .cgroup == $t.cgroup end)) |
		      .counts[$ev]] | add // 0)))' "$1" >/dev/null
}
# wait_lines FILE N [SECONDS]: until cgtma's output FILE has N lines (10 s at most).
wait_lines() { _wait_lines "$1" "$2" "${3:-10}" 0; }
# _wait_lines FILE N SECONDS MORE: until FILE has N whole lines, or N more than now with
# MORE=1 (a line being written counts once its newline is). FILE is read once, on a
# descriptor that goes on from where it was: an output of --all-cgroups -A grows to
# megabytes, and counting it whole at every poll took half of 20-churn's time under
# emulation.
_wait_lines() {
	local - file=$1 want=$2 end fd n=0 _l
	set +x
	end=$((SECONDS + $3 * patience))
	# Made by a redirection of a command started in the background, it may not be there
	# yet: no lines so far.
	while [ ! -e "$file" ]; do
		[ $SECONDS -lt $end ] || fail "no $file in $(($3 * patience)) s"
		nap 0.05
	done
	exec {fd}<"$file" || fail "cannot read $file"
	if (($4)); then
		while read -r -u $fd _l; do n=$((n + 1)); done
		want=$((n + want))
	fi
	while :; do
		while [ $n -lt "$want" ] && read -r -u $fd _l; do n=$((n + 1)); done
		[ $n -ge "$want" ] && break
		[ $SECONDS -lt $end ] || fail "cgtma wrote fewer than $want lines in $(($3 * patience)) s"
		kill -0 "$cgtma_pid" 2>/dev/null || fail "cgtma exited early: $(cat "$TMP/err")"
		nap 0.05
	done
	exec {fd}<&-
}
cgtma_start() {
	local out=$1 n=$2
	shift 2
	: >"$out"
	"$CGTMA" "$@" >"$out" 2>"$TMP/err" &
	cgtma_started "$out" "$n"
}
cgtma_started() {
	cgtma_pid=$!
	on_exit "kill -9 $cgtma_pid"
	[ "${2:-0}" -eq 0 ] || wait_lines "$1" "$2"
}
cgtma_more() { _wait_lines "$1" "${2:-1}" "${3:-10}" 1; }
cgtma_status() {
	local rc
	wait $cgtma_pid
	rc=$?
	[ $rc -eq "$1" ] || fail "${2:+$2: }cgtma exited $rc, want $1: $(cat "$TMP/err")"
}
cgtma_exited() { cgtma_status 0 "$@"; }
cgtma_signal() {
	kill -"$1" $cgtma_pid
	cgtma_status "${3:-0}" "${2:-}"
}
cgtma_quiet() {
	! stderr_said "$TMP/err" || fail "${1:+$1: }cgtma wrote to stderr: $(cat "$TMP/err")"
}
cgtma_stop() {
	cgtma_signal INT "$@"
	cgtma_quiet "$@"
}
# A loopback port nothing uses, listening or not.
free_port() {
	local p
	for _ in $(seq 100); do
		p=$((20000 + RANDOM % 30000))
		[ -z "$(ss -Htan "( sport = :$p )")" ] && { echo $p; return; }
	done
	fail "no free loopback port found"
}
metrics_scrape() {
	if [ $# -ge 2 ]; then
		curl -sf "http://127.0.0.1:$1/metrics" >"$2"
	else
		curl -sf "http://127.0.0.1:$1/metrics"
	fi
}
metric_value() {
	local f=$1 k=$2
	shift 2
	awk -v k="$k" -v parts="$(printf '%s\034' "$@")" -v n=$# 'BEGIN { split(parts, p, "\034") }
		(n ? index($0, k) == 1 : index($0, k " ") == 1) {
			s = substr($0, 1, length($0) - length($NF))
			for (i = 1; i <= n; i++) if (!index(s, p[i])) next
			v = $NF
		}
		END { if (v != "") print v }' "$f"
}
scrape_value() {
	local port=$1
	shift
	metrics_scrape "$port" | metric_value - "$@"
}
metrics_wait() {
	local s=$1 port=$2 file=$3 f=()
	shift 3
	[ "$1" = -F ] && f=(-F) && shift
	# shellcheck disable=SC2317 # called through wait_for
	_page_has() {
		local p
		metrics_scrape "$port" "$file" || return 1
		for p in "$@"; do grep -q "${f[@]}" -e "$p" "$file" || return 1; done
	}
	wait_for "$s" _page_has "$@"
}
# perf_cgroup_users: "PID COMMAND" of each perf session counting per cgroup (as pgrep -a -f
# says them); 1 if none. The watch below runs it ten times a second: read by the shell
# itself, not by a pgrep that takes 0.2 s of a TCG guest's one host CPU each time.
perf_cgroup_users() {
	local - f a found=1
	set +x
	local re='(^|/)perf[^ ]* (stat|record|top|trace) .*(-G|--cgroup|--for-each-cgroup)'
	for f in /proc/[0-9]*/cmdline; do
		mapfile -d '' -t a 2>/dev/null <"$f" || continue
		[[ "${a[*]}" =~ $re ]] || continue
		f=${f#/proc/}
		echo "${f%/cmdline} ${a[*]}"
		found=0
	done
	return $found
}
# Under emulation once a second: a guest runs nothing but the test, and a look at every
# process costs the guest's CPU there.
watch_perf_cgroup_sessions() {
	local p every=0.1
	p=$(perf_cgroup_users) && skip "another perf session counts per-cgroup events: $p"
	[ -n "${CGTMA_EMULATION:-}" ] && every=1
	while :; do perf_cgroup_users; nap $every; done >"$TMP/perf-seen" 2>/dev/null &
	on_exit "kill $!"
}
perf_seen() {
	[ -s "$TMP/perf-seen" ] &&
		skip "another perf session counted per-cgroup events meanwhile: $(head -n1 "$TMP/perf-seen")"
}
usage_usec() { awk '$1 == "usage_usec" { print $2 }' "$CG_ROOT/$CG_BASE/$1/cpu.stat"; }
# steal_usec [CPU]: CPU time a hypervisor took from this machine so far (all CPUs, or CPU's
# alone). cpu-clock runs on through it; the scheduler's clock, and so cpu.stat, leaves it out.
# /proc/stat counts it per CPU in whole ticks of 1/CLK_TCK s, so a difference of two readings
# is short by up to one tick per CPU: steal_tick_usec (all CPUs).
steal_usec() {
	awk -v hz="$(getconf CLK_TCK)" -v c="cpu${1:-}" '$1 == c { print int($9 * 1000000 / hz) }' \
		/proc/stat
}
# agree WHAT CGTMA_USEC CPUSTAT_USEC STEAL_USEC [WHY]: within 3 %, plus the time stolen
# meanwhile (and what its ticks hide), which cpu-clock may hold and cpu.stat does not, plus
# $slack us either way (0 unless the test sets it).
agree() {
	local steal_tick_usec=$(($(nproc) * 1000000 / $(getconf CLK_TCK)))
	echo "$1: cpu-clock $2 us, cpu.stat usage_usec grew $3 us (steal $4 us)"
	[ "$3" -ge 100000 ] || fail "$1: only $3 us of CPU time: the workload did not run"
	awk -v a="$2" -v b="$3" -v st="$4" \
		-v sl="${slack:-0}" -v tick=$steal_tick_usec \
		'BEGIN { exit !(a - b <= 0.03 * b + st + tick + sl && b - a <= 0.03 * b + sl) }' && return 0
	perf_seen
	fail "$1: cpu-clock $2 us is not within 3 % of cpu.stat's $3 us" \
		"($(awk -v a="$2" -v b="$3" 'BEGIN { printf "%+.1f %%", (a - b) * 100 / b }'))${5:-}"
}
# stderr_said FILE: whether cgtma's stderr said more than its marks, the perf-event hook's
# hand-over and the notices of the test knobs a test set (CGTMA_TEST_*). Read by the shell:
# every stop of cgtma asks, and two greps cost 0.25 s under emulation.
stderr_said() {
	local - l
	set +x
	while IFS= read -r l || [ -n "$l" ]; do
		case $l in
		'cgtma: mark: '* | 'cgtma: CGTMA_TEST_'* | \
			'cgtma: warning: switch hook: the perf-event hook missed a switch'*) ;;
		*) return 0 ;;
		esac
	done <"$1"
	return 1
}

# --- Two CPU-bound cgroups on one CPU (35-hw-counters, 38-hw-groups) ---
# A runs `workload-static loop $N1` and B `loop $N2` (2 N user instructions each and a
# static binary's short start), both on CPU 0. Each starts in its cgroup before cgtma and
# waits at a gate (a named pipe, `workload-static gate`) until cgtma has written its first
# line: no task moves between cgroups while cgtma counts (a move's own slice goes to the
# new cgroup where the kernel hides cgroup_mutex's address, as Debian's arm64 6.1 does).
loops_setup() {
	WS=$(readlink -f "${CGTMA_BUILD:-build}/tests/workload-static")
	[ -x "$WS" ] || fail "no $WS: build first (make $WS)"
	commands_or_skip taskset
	cg_make A
	cg_make B
	A=$(cg_path A) B=$(cg_path B)
}
# loops_measure NAME together|alone ARGS...: cgtma ARGS -I 200 --json -G $A -G $B while the
# loops run together (taking turns on CPU 0, switched on the scheduler's tick), or B's once
# A's has ended; its JSON in $TMP/NAME.json, its stderr in $TMP/NAME.err. Once the loops
# end, it waits for the interval that holds their end, then stops cgtma (INT, exit 0).
loops_measure() {
	local name=$1 how=$2 out=$TMP/$1.json
	shift 2
	rm -f "$TMP/gate-a" "$TMP/gate-b" && mkfifo "$TMP/gate-a" "$TMP/gate-b" || fail "mkfifo"
	cg_start A taskset -c 0 "$WS" gate "$TMP/gate-a" "$WS" ${WL_A:-loop $N1}
	cg_start B taskset -c 0 "$WS" gate "$TMP/gate-b" "$WS" ${WL_B:-loop $N2}
	cgtma_start "$out" 0 "$@" -I 200 --json -G "$A" -G "$B"
	wait_lines "$out" 1 60	# loading BPF takes long under emulation
	# Opening a pipe for writing waits for its gate, and lets it go.
	if [ "$how" = together ]; then
		: >"$TMP/gate-a" && : >"$TMP/gate-b"
	else
		: >"$TMP/gate-a"
		wait_for 120 test ! -s "$CG_ROOT/$CG_BASE/A/cgroup.procs" || fail "A's loop did not end"
		: >"$TMP/gate-b"
	fi
	cg_wait
	cgtma_more "$out" 1 60
	cgtma_signal INT "cgtma $* ($name)"
	cp "$TMP/err" "$TMP/$name.err"
}
# within X Y PCT: whether |X - Y| <= PCT % of Y (Y above 0).
within() {
	awk -v x="$1" -v y="$2" -v p="$3" 'BEGIN { d = x - y; if (d < 0) d = -d; exit !(y > 0 && d <= y * p / 100) }'
}
# loops_scaled NAME EXACT EVENT...: whether, in run NAME, each cgroup's EVENTs (each a copy of
# instructions:u, multiplexed) scaled are within 3 % of its instructions:u in run EXACT (not
# multiplexed), and each EVENT ran part of the time: its multiplex fraction over the run
# above 0 and below 1, and below 1 in every interval that holds a tenth of the count or
# more (a smaller share, the tail of a loop, may fit in one period of the rotation). Says
# the figures, and what is wrong in $why.
loops_scaled() {
	local name=$1 exact_run=$2 cg ev s exact mux
	shift 2
	why=''
	for cg in "$A" "$B"; do
		exact=$(cgroup_sum "$TMP/$exact_run.json" "$cg" instructions:u)
		for ev in "$@"; do
			s=$(cgroup_sum "$TMP/$name.json" "$cg" "$ev")
			read -r mux <<<"$(jq -r -s --arg cg "$cg" --arg ev "$ev" --argjson s "$s" '
				def row: .rows[] | select(.scope == "cgroup" and .cgroup == $cg);
				([.[] | select(.summary == true) | row | .multiplex[$ev]] | first // 0) as $run |
				([.[] | select(.summary != true) | row |
				  select((.counts[$ev] // 0) * 10 >= $s) | .multiplex[$ev]] | max // 0) as $most |
				"\($run) \($most)"' "$TMP/$name.json")"
			echo "$name: $cg: $ev $s (exact $exact), multiplex fraction over the run and" \
				"at most in an interval: $mux"
			awk -v r="${mux% *}" -v m="${mux#* }" \
				'BEGIN { exit !(r + 0 > 0 && r + 0 < 1 && m + 0 < 1) }' ||
				why+="$cg: $ev's multiplex fraction $mux, not between 0 and 1; "
			within "$s" "$exact" 3 || why+="$cg: scaled $ev $s, not within 3 % of $exact; "
		done
	done
	[ -z "$why" ]
}
# loops_multiplexed NAME EXACT EVENTS ARGS...: loops_measure NAME together ARGS, then
# loops_scaled NAME EXACT on the comma-separated EVENTS. Where that fails, the kernel's
# rotation of the event groups ran in phase with the switches (docs/groups.md: both on
# multiples of the tick since boot, so each cgroup's slices see mostly one group): the
# remedy docs/groups.md gives, the PMU's perf_event_mux_interval_ms at 5 (no multiple of
# the tick; restored when the test ends), and the run again as NAME5, which must pass
# without cgtma's warning of a rotation in phase. $mux_run names the run that passed.
in_phase_said='rotation of the event groups falls on its switches'
loops_multiplexed() {
	local name=$1 exact_run=$2 evs=${3//,/ } f mi='' was
	shift 3
	mux_run=$name
	loops_measure "$name" together "$@"
	loops_scaled "$name" "$exact_run" $evs && return 0
	echo "in phase: $why"
	# cgtma says so itself where a cgroup had one group nearly all of an interval and
	# another hardly (session.c's warn_in_phase, over 50 ms of its time at least: under
	# -icount a quarter of a loop's count is 50 ms), and never once the rotation moves
	# through the slices.
	if grep -q "$in_phase_said" "$TMP/$name.err"; then
		echo "cgtma warned: $(grep -m1 "$in_phase_said" "$TMP/$name.err")"
	elif [ "${CGTMA_EMULATION:-}" = tcg-icount ] && jq -e -s --arg evs "$evs" '
		(.[] | select(.summary == true) | .rows) as $sum | [.[] | select(.summary != true) |
		.rows[] | select(.scope == "cgroup") | . as $r |
		([$r.multiplex[] | values] | min // 1) <= 0.01 and
		([$evs | split(" ")[] | . as $ev |
		  ($sum[] | select(.scope == "cgroup" and .cgroup == $r.cgroup) | .counts[$ev]) as $t |
		  ($r.counts[$ev] // 0) * 4 >= $t and ($r.multiplex[$ev] // 0) >= 0.99] | any)] |
		any' "$TMP/$name.json" >/dev/null; then
		fail "a cgroup had one group 99 % of an interval and another 1 % at most, and cgtma did not warn: $(cat "$TMP/$name.err")"
	else
		echo "cgtma did not warn (no interval with one group nearly all of it and another hardly)"
	fi
	for f in /sys/bus/event_source/devices/*/perf_event_mux_interval_ms; do
		case $f in */software/* | */tracepoint/* | *probe/* | */breakpoint/*) continue ;; esac
		[ -e "$f" ] && mi=$f && break
	done
	[ -n "$mi" ] && [ -w "$mi" ] || fail "$why(and no PMU's perf_event_mux_interval_ms to change)"
	was=$(cat "$mi")
	on_exit "echo $was >$mi"
	echo 5 >"$mi" || fail "cannot write $mi"
	mux_run=${name}5
	loops_measure "$mux_run" together "$@"
	loops_scaled "$mux_run" "$exact_run" $evs || fail "with perf_event_mux_interval_ms 5 too: $why"
	! grep -q "$in_phase_said" "$TMP/$mux_run.err" ||
		fail "with perf_event_mux_interval_ms 5 cgtma still warned: $(cat "$TMP/$mux_run.err")"
	echo "remedy: $mi 5 (was $was): within 3 %"
}
