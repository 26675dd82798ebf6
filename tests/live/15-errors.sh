#!/bin/bash
# Bad input and missing privileges: one clear line on stderr ("cgtma: ..." naming the
# subject) and exit status 2 for bad usage, 1 for a failure at run time; under --json the
# error is also a JSON line on stdout. --help exits 0 with examples. A glob matching nothing
# only warns and keeps watching (exit 0 at the end of -d).
# A kernel without BTF is shown to cgtma by a mount namespace whose /sys/kernel/btf is empty.
. "$(dirname "$0")/lib.sh"

cg_make A
HEADER=$(dirname "$0")/../../bpf/cgtma.h
# limit NAME: a #define of bpf/cgtma.h, the limits' one source.
limit() {
	local v
	v=$(awk -v n="$1" '$1 == "#define" && $2 == n { print $3 }' "$HEADER")
	[[ $v =~ ^[0-9]+$ ]] || fail "cannot read $1 from $HEADER"
	echo "$v"
}

# expect RC REGEX ARGS...: cgtma ARGS exits RC and writes exactly one line to stderr,
# starting "cgtma: " and matching REGEX (extended, case-sensitive).
expect() {
	local want=$1 re=$2 rc
	shift 2
	timeout 30 "$CGTMA" "$@" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	[ $rc -eq "$want" ] || fail "cgtma $*: exit $rc, want $want; stderr: $(cat "$TMP/err")"
	[ "$(wc -l <"$TMP/err")" = 1 ] ||
		fail "cgtma $*: want one line on stderr, got: $(cat "$TMP/err")"
	grep -qE "^cgtma: .*$re" "$TMP/err" ||
		fail "cgtma $*: stderr '$(cat "$TMP/err")' does not match '$re'"
	local cmd="$*"
	[ ${#cmd} -le 160 ] || cmd="${cmd:0:160}..."
	echo "exit $rc: cgtma $cmd: $(cat "$TMP/err")"
}

# --- bad usage: 2 ---------------------------------------------------------------------------
expect 2 "cannot open cgroup '$CG_ROOT/$CG_BASE/nope': No such file or directory" \
	-e cpu-clock -d 1 -G "$CG_BASE/nope"
expect 2 "cannot open cgroup '$CG_ROOT/$CG_BASE/nope': No such file or directory" \
	-e cpu-clock -d 1 -G "$CG_ROOT/$CG_BASE/nope"
expect 2 "Not a directory" -e cpu-clock -d 1 -G "$CG_BASE/cgroup.procs"
expect 2 "'\.' and '\.\.' are not allowed" -e cpu-clock -d 1 -G "$CG_BASE/../x"
# Model files that cannot be used are bad input, whatever is wrong with them.
truncate -s 200M "$TMP/big.json"
expect 2 "cannot read model file '$TMP/big.json': File too large" --model-file "$TMP/big.json" -d 1
printf '{"name": "t", "description": "d", "vendor": "generic", "source": "s", "match": [],
 "pmu": {"generic_counters": 4}, "constants": {"W": -4}, "events": []}' >"$TMP/neg.json"
expect 2 "model '$TMP/neg.json': constants: 'W' is negative \\(-4\\)" --model-file "$TMP/neg.json" -d 1
expect 2 "cannot open model file '$TMP/none.json': No such file or directory" \
	--model-file "$TMP/none.json" -d 1
rm -f "$TMP/big.json"
# A path of the v1 hierarchies (a hybrid host's /sys/fs/cgroup/cpu) is said to be one, not
# looked for under the v2 mount; and so is the directory that holds the v2 mount.
v1=$(awk '$(NF-2) == "cgroup" { print $5; exit }' /proc/self/mountinfo)
if [ -n "$v1" ]; then
	expect 2 "cgroup '$v1' is not on cgroup v2 \(it is in a cgroup v1 hierarchy\).*under $CG_ROOT" \
		-e cpu-clock -d 1 -G "$v1"
	expect 2 "cgroup '$v1/\*' is not on cgroup v2 \(it is in a cgroup v1" -e cpu-clock -d 1 \
		-G "$v1/*"
fi
if [ "$(dirname "$CG_ROOT")" != / ]; then
	expect 2 "cgroup '$(dirname "$CG_ROOT")' is not on cgroup v2 \(it holds the v2 mount\)" \
		-e cpu-clock -d 1 -G "$(dirname "$CG_ROOT")"
fi
# Malformed globs name the pattern instead of waiting for a cgroup that cannot match.
expect 2 "cgroup '$CG_BASE/\[': '\[' is not closed by '\]' within its level" \
	-e cpu-clock -d 1 -G "$CG_BASE/["
expect 2 "cgroup '$CG_BASE/\*\*': '\*\*' is not supported" -e cpu-clock -d 1 -G "$CG_BASE/**"
max_level=$(limit CGTMA_MAX_LEVEL)
deep=$(printf 'l%d/' $(seq 0 "$max_level"))
expect 2 "$((max_level + 1)) levels deep.*$max_level" -e cpu-clock -d 1 -G "${deep%/}"
# Without -e, too: the error alone, without the model's notice before it.
expect 2 "cannot open cgroup '$CG_ROOT/$CG_BASE/nope': No such file or directory" \
	-d 1 -G "$CG_BASE/nope"

expect 2 "event 'no-such-event': not a perf event name" -e no-such-event -d 1
# A typo: the close names are offered, as git offers commands.
expect 2 "event 'cycels': not a perf event name.*; did you mean 'cycles'\?$" -e cycels -d 1
expect 2 "event 'sched:sched_swtich': no tracepoint.*; did you mean 'sched:sched_switch'\?$" \
	-e sched:sched_swtich -d 1
expect 2 "event 'cpu/bogus=1/': unknown term 'bogus'" -e cpu/bogus=1/ -d 1
expect 2 "event 'cpu/event=0x1000/': value 0x1000 does not fit" -e cpu/event=0x1000/ -d 1
expect 2 "event 'cycles:q': unknown modifier 'q'" -e cycles:q -d 1
expect 2 "empty event" -e cpu-clock,,cs -d 1
expect 2 "no built-in model 'nope'" -M nope -d 1
expect 2 "no built-in model 'skylake': did you mean 'skx'\?" -M skylake -d 1

expect 2 "--interval '?9'?.*10" -e cpu-clock -I 9 -d 1
expect 2 "--interval '?0'?.*10" -e cpu-clock -I 0 -d 1
expect 2 "--interval '?-5'?.*10" -e cpu-clock -I -5 -d 1
expect 2 "--interval '?abc'?" -e cpu-clock -I abc -d 1
expect 2 "--duration '?0'?" -e cpu-clock -d 0
expect 2 "--duration '?x'?" -e cpu-clock -d x
expect 2 "--depth '?0'?" --all-cgroups --depth 0 -e cpu-clock -d 1
expect 2 "--max-cgroups '?0'?" --max-cgroups 0 -e cpu-clock -d 1
expect 2 "-C '0-x': expected CPU numbers and ranges" -C 0-x -e cpu-clock -d 1
expect 2 "-C '0,': expected CPU numbers and ranges" -C 0, -e cpu-clock -d 1
possible=$(($(sed 's/.*-//' /sys/devices/system/cpu/possible) + 1))
expect 2 "-C '0,$possible': there is no CPU $possible \\(this machine's CPUs are 0-$((possible - 1))\\)" \
	-C "0,$possible" -e cpu-clock -d 1
expect 2 "(-e|--events).*(-M|--model)" -e cpu-clock -M sw -d 1
expect 2 "--json.*-x|-x.*--json" -e cpu-clock --json -x , -d 1
# The same event twice would be one JSON key and two clashing Prometheus series.
expect 2 "'cpu-clock' is given twice" -e cpu-clock,context-switches,cpu-clock -d 1

# --- an output that cannot be written: profiling goes on, the run fails ---------------------
timeout 30 "$CGTMA" -e cpu-clock -I 200 -d 0.5 --json >/dev/full 2>"$TMP/err"
rc=$?
[ $rc -eq 1 ] || fail "cgtma --json >/dev/full: exit $rc, want 1; stderr: $(cat "$TMP/err")"
# Said once, not every interval; the count of what was lost at the end (19-stdout has more).
[ "$(grep -c "cannot write standard output: No space left on device" "$TMP/err")" = 1 ] ||
	fail "cgtma --json >/dev/full: want one error naming standard output: $(cat "$TMP/err")"
grep -qE "standard output: ([3-9]|[1-9][0-9]+) interval\(s\) could not be written" "$TMP/err" ||
	fail "cgtma --json >/dev/full stopped at the first failure: $(cat "$TMP/err")"
tail -n1 "$TMP/err" | grep -q "some output could not be written" ||
	fail "cgtma --json >/dev/full: no final error line: $(cat "$TMP/err")"
echo "exit 1: cgtma --json >/dev/full: $(tail -n1 "$TMP/err")"

# Too many events: one more than CGTMA_MAX_EVENTS is refused; exactly that many run.
max=$(limit CGTMA_MAX_EVENTS)
tps=$(ls "$(awk '$(NF-2) == "tracefs" { print $5; exit }' /proc/self/mountinfo)/events/syscalls" \
	2>/dev/null | grep '^sys_enter_' | head -n "$max" | sed 's/^/syscalls:/' | paste -sd,)
if [ "$(echo "$tps" | tr , '\n' | grep -c .)" = "$max" ]; then
	expect 2 "$((max + 1)) events; cgtma counts at most $max" -e "$tps,cpu-clock" -d 1
	timeout 60 "$CGTMA" -e "$tps" -I 100 -d 0.3 --json >"$TMP/out" 2>"$TMP/err" ||
		fail "$max events: exit $?: $(cat "$TMP/err")"
	[ "$(tail -n1 "$TMP/out" | jq '.rows[0].counts | length')" = "$max" ] ||
		fail "$max events: not $max counts: $(tail -n1 "$TMP/out" | cut -c1-300)"
else
	echo "fewer than $max syscall tracepoints: the event limit is not tested"
fi

# Unknown options: getopt's line, then where to look (two lines), exit 2.
timeout 30 "$CGTMA" --bogus >/dev/null 2>"$TMP/err"
rc=$?
[ $rc -eq 2 ] || fail "cgtma --bogus: exit $rc, want 2"
grep -qx "cgtma: unrecognized option '--bogus'" "$TMP/err" && grep -q "cgtma --help" "$TMP/err" ||
	fail "cgtma --bogus: $(cat "$TMP/err")"
# A near miss is offered, and the message names cgtma, not the path it was run by.
timeout 30 "$CGTMA" --jsno >/dev/null 2>"$TMP/err"
rc=$?
[ $rc -eq 2 ] && grep -qx "cgtma: unrecognized option '--jsno'; did you mean '--json'?" "$TMP/err" ||
	fail "cgtma --jsno: exit $rc: $(cat "$TMP/err")"

# Under --json the error is a JSON line on stdout as well.
expect 2 "cannot open cgroup" --json -e cpu-clock -d 1 -G "$CG_BASE/nope"
jq -e 'has("error") and (.error | test("cannot open cgroup"))' "$TMP/out" >/dev/null ||
	fail "--json: the error is not a JSON line on stdout: $(cat "$TMP/out")"
# With -o FILE the JSON goes to FILE, its error line too, and nothing to stdout.
rm -f "$TMP/o.json"
expect 2 "cannot open cgroup" --json -o "$TMP/o.json" -e cpu-clock -d 1 -G "$CG_BASE/nope"
[ ! -s "$TMP/out" ] || fail "--json -o: stdout has $(cat "$TMP/out")"
jq -e 'has("error") and (.error | test("cannot open cgroup"))' "$TMP/o.json" >/dev/null ||
	fail "--json -o: the error is not a JSON line in the file: $(cat "$TMP/o.json" 2>&1)"

# --- failures at run time: 1 ----------------------------------------------------------------
# A command that cannot be run: the shell's 127 (not found) and 126 (found, not run).
expect 127 "cannot run '/nonexistent/command': No such file or directory" \
	-e cpu-clock -I 100 -- /nonexistent/command
expect 127 "cannot run 'cgtma-no-such-command': No such file or directory" \
	-e cpu-clock -I 100 -- cgtma-no-such-command
printf 'not a program\n' >"$TMP/not-exec"
chmod 644 "$TMP/not-exec"
expect 126 "cannot run '$TMP/not-exec': Permission denied" -e cpu-clock -I 100 -- "$TMP/not-exec"
expect 126 "cannot run '$TMP': Permission denied" -e cpu-clock -I 100 -- "$TMP"

# No cgroup v2 mounted, as on a v1-only machine: a mount namespace of its own without the
# cgroup2 mounts, in the v2 root cgroup, and a PID namespace where cgtma is PID 1 (else PID
# 1's mount namespace, the host's, would give the view: 60-cgroupns). The whole machine is
# still counted; -G and --all-cgroups need v2.
if unshare --mount --propagation private --pid --fork --mount-proc true 2>/dev/null; then
	# nov2 HOW CGTMA-ARGS...: HOW is exec (cgtma is PID 1) or child (PID 1 is a shell in
	# the same namespace, cgtma in another mount namespace of its own, with none either).
	nov2() {
		local how=$1
		shift
		# In the v2 root cgroup, as every process of a machine on cgroup v1 only is
		# (elsewhere cgtma would mount cgroup2 itself: user/cgview.h).
		R=$CG_ROOT unshare --mount --propagation private --pid --fork --mount-proc sh -c '
			echo $$ >"$R/cgroup.procs" || exit 1
			awk "\$(NF-2) == \"cgroup2\" { print \$5 }" /proc/self/mountinfo | sort -r |
				while read -r m; do umount -l "$m" || exit 1; done
			how=$1
			shift
			[ "$how" = exec ] && exec "$@"
			unshare --mount --propagation private "$@"
			rc=$?
			exit $rc' sh "$how" "$CGTMA" "$@" >"$TMP/out" 2>"$TMP/err"
	}
	# nov2_refused HOW WHY: -G / exits 1 with one line, cgroup v2 not mounted (WHY).
	nov2_refused() {
		nov2 "$1" -e cpu-clock -I 100 -d 0.3 -G /
		rc=$?
		[ $rc -eq 1 ] && [ "$(wc -l <"$TMP/err")" = 1 ] &&
			grep -qF "cgtma: cgroup v2 is not mounted ($2): -G and --all-cgroups need it" "$TMP/err" ||
			fail "without cgroup v2 ($1), -G /: exit $rc, want 1, and one line: $(cat "$TMP/err")"
		echo "exit $rc: without cgroup v2 ($1): cgtma -G /: $(cat "$TMP/err")"
	}
	nov2_refused exec "no cgroup2 entry in /proc/self/mountinfo"
	nov2 exec -e cpu-clock -I 100 -d 0.3 --json
	rc=$?
	[ $rc -eq 0 ] && [ "$(tail -n1 "$TMP/out" | jq .summary)" = true ] ||
		fail "without cgroup v2, the whole machine: exit $rc, want 0: $(cat "$TMP/err")"
	nov2_refused child "no cgroup2 entry in /proc/self/mountinfo, nor in PID 1's, in another mount namespace (/proc/1/mountinfo)"
	# No BTF: the kernel's own (/sys/kernel/btf) hidden under an empty tmpfs.
	unshare --mount --propagation private sh -c \
		'mount -t tmpfs none /sys/kernel/btf && exec "$@"' sh "$CGTMA" -e cpu-clock -d 0.3 \
		>"$TMP/out" 2>"$TMP/err"
	rc=$?
	[ $rc -eq 1 ] && [ "$(wc -l <"$TMP/err")" = 1 ] &&
		grep -q "^cgtma: this kernel has no BTF (/sys/kernel/btf/vmlinux): cgtma needs a kernel built with CONFIG_DEBUG_INFO_BTF=y, which Linux 5.5 and later export there$" "$TMP/err" ||
		fail "without BTF: exit $rc, want 1, and one line naming BTF: $(cat "$TMP/err")"
	echo "exit $rc: without BTF: $(cat "$TMP/err")"
else
	echo "unshare --mount --pid does not work here: the cases without cgroup v2 and BTF are not run"
fi

# Not root: as nobody, no capabilities. The binary must be reachable by nobody.
commands_or_skip setpriv
pub=$(mktemp -d /tmp/cgtma-nobody.XXXXXX)
on_exit "rm -rf $pub"
chmod 755 "$pub"
install -m 755 "$CGTMA" "$pub/cgtma"
# expect_as RC REGEX CAPS ARGS...: as expect, run as nobody with CAPS (ambient) or none;
# an empty REGEX: anything on stderr.
expect_as() {
	local want=$1 re=$2 caps=$3 rc
	shift 3
	timeout 30 setpriv --reuid=65534 --regid=65534 --clear-groups \
		${caps:+--inh-caps=$caps --ambient-caps=$caps} "$pub/cgtma" "$@" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	[ $rc -eq "$want" ] ||
		fail "as nobody${caps:+ with $caps}: cgtma $*: exit $rc, want $want: $(cat "$TMP/err")"
	if [ -n "$re" ]; then
		[ "$(wc -l <"$TMP/err")" = 1 ] && grep -qE "^cgtma: .*$re" "$TMP/err" ||
			fail "as nobody${caps:+ with $caps}: cgtma $*: stderr: $(cat "$TMP/err")"
	fi
	echo "exit $rc: as nobody${caps:+ with $caps}: cgtma $*: $(cat "$TMP/err")"
}
expect_as 1 "not permitted: needs root, or CAP_PERFMON and CAP_BPF" "" -e cpu-clock -d 0.3
# With the default model, too: the privileges are checked before the PMU is probed (whose
# answer would be "Permission denied"), and said alone.
expect_as 1 "not permitted: needs root, or CAP_PERFMON and CAP_BPF" "" -d 0.3
expect_as 1 "not permitted" "" -e cpu-clock -d 0.3 -G "$CG_BASE/A"
# CAP_PERFMON alone is not enough; with CAP_BPF too it runs, where the kernel lets it:
# - before 5.11 BPF maps count against RLIMIT_MEMLOCK (64 KiB for a user by default), and
#   raising it needs CAP_SYS_RESOURCE;
# - Debian's kernels default to kernel.perf_event_paranoid=3, at which (a Debian patch) only
#   CAP_SYS_ADMIN opens perf events; at 2, CAP_PERFMON suffices.
# Each case is run as the kernel is, then with the limit lifted, so every kernel runs both
# the message and the success.
caps_runs() {
	expect_as 0 "" +bpf,+perfmon -e cpu-clock -I 100 -d 0.3 --json
	[ "$(tail -n1 "$TMP/out" | jq .summary)" = true ] ||
		fail "as nobody with CAP_BPF and CAP_PERFMON: no summary: $(cat "$TMP/out")"
}
caps_at_paranoid() {
	local paranoid
	paranoid=$(cat /proc/sys/kernel/perf_event_paranoid)
	if [ "$paranoid" -gt 2 ]; then
		expect_as 1 "cannot open event 'cpu-clock' on CPU [0-9]+: Permission denied \\(kernel.perf_event_paranoid is above 2, where Debian's kernels let only CAP_SYS_ADMIN open perf events" \
			+bpf,+perfmon -e cpu-clock -I 100 -d 0.3
		echo 2 >/proc/sys/kernel/perf_event_paranoid ||
			fail "cannot set kernel.perf_event_paranoid to 2"
		caps_runs
		echo "$paranoid" >/proc/sys/kernel/perf_event_paranoid
	else
		caps_runs
	fi
}
on_exit "echo $(cat /proc/sys/kernel/perf_event_paranoid) >/proc/sys/kernel/perf_event_paranoid"
if setpriv --inh-caps=+perfmon true 2>/dev/null; then
	expect_as 1 "not permitted" +perfmon -e cpu-clock -d 0.3
	if ! kernel_at_least 5 11 && [ "$(ulimit -l)" != unlimited ]; then
		expect_as 1 "cannot load the BPF program: Operation not permitted \\(before Linux 5.11 BPF maps count against RLIMIT_MEMLOCK.*; the BPF maps ask for [0-9]+\\.[0-9] MB of kernel memory at load, with 1 event and [0-9]+ possible CPUs; fewer events \\(-e, -l\\) lower it, as --max-cgroups does \\(1024, preallocated before Linux 6\\.1\\)\\)" \
			+bpf,+perfmon -e cpu-clock -I 100 -d 0.3
		( ulimit -l unlimited && caps_at_paranoid ) || exit $?
	else
		caps_at_paranoid
	fi
else
	echo "setpriv does not know CAP_PERFMON: capability cases not run"
fi

# --- success ----------------------------------------------------------------------------------
# A glob matching nothing: a warning, then it keeps watching until -d ends; as it never
# matched, exit 3 (--no-match-status chooses another).
timeout 30 "$CGTMA" -e cpu-clock -I 100 -d 0.5 --json -G "$CG_BASE/none-*" >"$TMP/out" 2>"$TMP/err"
rc=$?
[ $rc -eq 3 ] || fail "a glob matching nothing: exit $rc, want 3: $(cat "$TMP/err")"
# Said at the start, and again at the end as it never matched (and a switch hook's fallback,
# where this kernel makes one, besides).
sed -i '/^cgtma: warning: switch hook: the perf-event hook missed a switch/d' "$TMP/err"
[ "$(wc -l <"$TMP/err")" = 2 ] &&
	head -n1 "$TMP/err" | grep -qx "cgtma: warning: '/$CG_BASE/none-\*' matches no cgroup yet; watching for it" &&
	tail -n1 "$TMP/err" | grep -qx "cgtma: warning: '/$CG_BASE/none-\*' never matched a cgroup during the run" ||
	fail "a glob matching nothing: stderr: $(cat "$TMP/err")"
jq -e -R 'fromjson | type == "object"' "$TMP/out" >/dev/null || fail "a glob matching nothing: bad JSON"
[ "$(tail -n1 "$TMP/out" | jq .summary)" = true ] || fail "a glob matching nothing: no summary"
[ "$(jq -s '[.[] | select(.summary != true)] | length' "$TMP/out")" -ge 4 ] ||
	fail "a glob matching nothing: it did not keep running for -d"
[ "$(jq -s '[.[].rows[] | select(.scope == "cgroup")] | length' "$TMP/out")" = 0 ] ||
	fail "a glob matching nothing: cgroup rows"
for st in 0 42; do
	timeout 30 "$CGTMA" -e cpu-clock -I 100 -d 0.2 -G "$CG_BASE/none-*" --no-match-status $st \
		>/dev/null 2>"$TMP/err"
	rc=$?
	[ $rc -eq $st ] || fail "--no-match-status $st: exit $rc: $(cat "$TMP/err")"
done
# A glob that matches late, a cgroup made after the first interval: it matched, exit 0.
cgtma_start "$TMP/late" 1 -e cpu-clock -I 100 -d 2 --json -G "$CG_BASE/late-*"
grep -q "'/$CG_BASE/late-\*' matches no cgroup yet" "$TMP/err" ||
	fail "a glob that matches late: it matched at the start: $(cat "$TMP/err")"
cg_make late-1
cgtma_exited "a glob that matched mid-run"
jq -e -s --arg c "/$CG_BASE/late-1" 'any(.[].rows[]; .cgroup == $c)' "$TMP/late" >/dev/null ||
	fail "a glob that matches late: no row of the cgroup made mid-run"

# Three digits are too few for a container id's prefix: said with the warning (and, as it
# never matched, exit 3).
timeout 30 "$CGTMA" -e cpu-clock -I 100 -d 0.3 -G container:eee >/dev/null 2>"$TMP/err"
rc=$?
[ $rc -eq 3 ] || fail "container:eee: exit $rc, want 3: $(cat "$TMP/err")"
[ "$(grep -c "container:eee' .*; an id prefix needs 4 or more digits$" "$TMP/err")" = 2 ] ||
	fail "container:eee: no hint that an id prefix needs 4 digits: $(cat "$TMP/err")"

# A typo: the close cgroups at the level where it stops matching, at the start and the end.
cg_make iperf-client
cg_make iperf-server
timeout 30 "$CGTMA" -e cpu-clock -I 100 -d 0.3 -G "$CG_BASE/iperf-clinet*" >/dev/null 2>"$TMP/err"
rc=$?
[ $rc -eq 3 ] || fail "a glob with a typo: exit $rc, want 3: $(cat "$TMP/err")"
[ "$(grep -c "'/$CG_BASE/iperf-clinet\*' .*; did you mean '/$CG_BASE/iperf-client'?$" "$TMP/err")" = 2 ] ||
	fail "a glob with a typo: not offered the close name twice: $(cat "$TMP/err")"
expect 2 "cannot open cgroup '$CG_ROOT/$CG_BASE/iperf-srever': No such file or directory; did you mean '/$CG_BASE/iperf-server'\?$" \
	-e cpu-clock -d 1 -G "$CG_BASE/iperf-srever"

# --help: exit 0, usage and examples on stdout, nothing on stderr.
"$CGTMA" --help >"$TMP/out" 2>"$TMP/err"
rc=$?
[ $rc -eq 0 ] || fail "--help: exit $rc"
[ -s "$TMP/err" ] && fail "--help wrote to stderr: $(cat "$TMP/err")"
grep -q '^Usage: cgtma' "$TMP/out" || fail "--help: no usage line"
grep -q '^Examples:' "$TMP/out" || fail "--help: no examples"
[ "$(sed -n '/^Examples:/,/^$/p' "$TMP/out" | grep -c '^  cgtma ')" -ge 3 ] ||
	fail "--help: fewer than 3 example command lines"
grep -q -- '--interval' "$TMP/out" && grep -q -- '--json' "$TMP/out" ||
	fail "--help does not list --interval and --json"
"$CGTMA" -h >"$TMP/out2" 2>&1 && cmp -s "$TMP/out" "$TMP/out2" || fail "-h differs from --help"
"$CGTMA" --version >"$TMP/out" 2>&1 && grep -q '^cgtma ' "$TMP/out" || fail "--version"
echo ok
