#!/bin/bash
# cgtma in a private cgroup namespace, as in a container. A shell moves into the test's
# cgroup ns/ and runs cgtma under `unshare --cgroup --mount`, so the namespace's root is
# ns/, not the host's root. Three views (user/cgview.h):
#   kept     the namespace kept the host's cgroup2 mount (which then shows the hierarchy's
#            root, as "/../.." in mountinfo): host paths through it;
#   remount  cgroup2 is mounted afresh in the namespace, as a container runtime does (it
#            shows ns/ only): cgtma opens the host's root by file handle; host paths;
#   subtree  the same without CAP_DAC_READ_SEARCH (capsh drops it): only ns/ is visible and
#            paths are relative to it, which cgtma says in one line.
#   own      no cgroup2 mount at all in cgtma's mount namespace (all unmounted), as in a
#            pid=host container in the host's cgroup namespace on a hybrid host (podman's
#            default there, as crucible's engine runs tools): PID 1's mount through
#            /proc/1/root where PID 1 can be read, else (this sandbox's PID 1 cannot) a
#            cgroup2 mount of cgtma's own, attached nowhere; host paths. own-hostns: the same
#            in the host's cgroup namespace.
#   pid1     the same with PID 1 a shell of the test's (a PID namespace's init) in a mount
#            namespace that has the cgroup2 mount: PID 1's mount, through /proc/1/root.
# -T in the kept and own views: /proc shows threads' cgroups relative to the namespace's
# root ("/in", "/../out"); two threads in ns/in and one in out, with exact counts, each
# alive until it ends (one row marked exited, the last). --all-cgroups --depth 3 in the kept
# view: out (outside the namespace's subtree) and ns/in by their host paths, exact.
# Counting syscalls:sys_enter_getppid (exact), with workloads in ns/in (inside the
# namespace's subtree, started from inside it through its own mount), in out (a host cgroup
# outside it, started from the host), and in ns/new1, created after cgtma started (the mkdir
# hook records its host path, which the subtree view translates by id). In the subtree view
# a decoy out/new2 is made after the start next to the view's own /new2: same relative name,
# other id, its calls must not count for /new2.
. "$(dirname "$0")/lib.sh"

EV=syscalls:sys_enter_getppid
N_IN=60000 N_OUT=45000 N_NEW=30000 N_NEW2=20000 N_DECOY=25000

commands_or_skip unshare
unshare --cgroup --mount true 2>/dev/null || skip "cannot unshare cgroup and mount namespaces"

# sums FILE CGROUP...: their counts summed over the interval lines, on one line (one jq).
sums() {
	local f=$1
	shift
	cgroup_sums "$f" "$EV" "$@" | paste -sd' '
}

# Every cgroup2 mount of this mount namespace, unmounted (deepest first).
UMOUNT_V2='awk "\$(NF-2) == \"cgroup2\" { print \$5 }" /proc/self/mountinfo | sort -r |
	while read -r m; do umount -l "$m" || exit 1; done'

# start_ns MODE OUT CGTMA-ARGS...: cgtma in a new cgroup namespace rooted at ns/.
start_ns() {
	local mode=$1 out=$2 mnt=$CG_ROOT inner ns=--cgroup
	shift 2
	case $mode in
	kept) inner='exec "$@"' ;;
	own | pid1) inner="$UMOUNT_V2"' && exec "$@"' ;;
	own-hostns) inner="$UMOUNT_V2"' && exec "$@"' ns= ;;
	remount) inner='umount "$M" && mount -t cgroup2 none "$M" && exec "$@"' ;;
	subtree) inner='umount "$M" && mount -t cgroup2 none "$M" &&
		exec capsh --drop=cap_dac_read_search -- -c '\''exec "$@"'\'' capsh "$@"' ;;
	esac
	: >"$out"
	(
		echo $BASHPID >"$CG_ROOT/$CG_BASE/ns/cgroup.procs" || exit 1
		if [ $mode = pid1 ]; then
			# PID 1 of a PID namespace is a shell in a mount namespace that has the
			# cgroup2 mount; cgtma runs in another, without one, as its child.
			exec unshare --pid --fork --mount-proc bash -c \
				'unshare --cgroup --mount bash -c "$0" bash "$@"; exit $?' "$inner" \
				"$CGTMA" -v -e "$EV" -I 200 --json "$@" >"$out" 2>"$TMP/err"
		fi
		M=$mnt exec unshare $ns --mount bash -c "$inner" bash \
			"$CGTMA" -v -e "$EV" -I 200 --json "$@" >"$out" 2>"$TMP/err"
	) &
	cgtma_started "$out" 1
}

# stop OUT WHAT: one more interval, then SIGINT to cgtma itself (in ns/; under unshare --fork
# it is not $cgtma_pid).
stop() {
	local p exe
	cgtma_more "$1"
	exe=$(readlink -f "$CGTMA")
	for p in $(cat "$CG_ROOT/$CG_BASE/ns/cgroup.procs"); do
		[ "$(readlink "/proc/$p/exe")" = "$exe" ] && kill -INT "$p"
	done
	cgtma_exited "$2"
}

# view MODE TEXT: the -v line says which view is in use.
view() {
	grep -q "^cgtma: cgroup view: $2" "$TMP/err" ||
		fail "$1: -v does not say '$2': $(grep 'cgroup view' "$TMP/err")"
	echo "$1: $(grep '^cgtma: cgroup view' "$TMP/err")"
}

host_case() {
	local mode=$1 out=$TMP/out-$1 IN OUT NEW
	IN=$(cg_path ns/in) OUT=$(cg_path out) NEW=$(cg_path ns/new1)
	start_ns "$mode" "$out" -G "$IN" -G "$CG_ROOT$OUT" -G "/$CG_BASE/ns/new*"
	# Inside: started by a process of the namespace, joining ns/in by its namespace path.
	( echo $BASHPID >"$CG_ROOT/$CG_BASE/ns/cgroup.procs" &&
		exec unshare --cgroup --mount bash -c \
			'umount "$1" && mount -t cgroup2 none "$1" && exec "$2" cgexec "$1/in" "$2" getppid "$3" 40' \
			bash "$CG_ROOT" "$WORKLOAD" $N_IN ) & _started+=($!)
	cg_start out "$WORKLOAD" getppid $N_OUT 40
	cg_make ns/new1
	cg_start ns/new1 "$WORKLOAD" getppid $N_NEW 40
	cg_wait
	stop "$out" "$mode"
	[ "$mode" = kept ] && view $mode "the host's hierarchy at $CG_ROOT"
	[ "$mode" = remount ] && view $mode "the host's hierarchy, its root opened by file handle"
	[ "$mode" = pid1 ] &&
		view $mode "the host's hierarchy at $CG_ROOT in PID 1's mount namespace, through /proc/1/root (this one has no cgroup2 mount) (this cgroup namespace is private"
	# PID 1's where it can be read (a host's init), else a mount of cgtma's own.
	[ "${mode#own}" != "$mode" ] && view $mode "the host's hierarchy"
	local got want
	got=$(summary_cgroups "$out")
	want=$(printf '%s\n' "$IN" "$NEW" "$OUT" | sort | paste -sd' ')
	[ "$got" = "$want" ] || fail "$mode: cgroups '$got', want the host paths '$want'"
	local si so sn
	read -r si so sn <<<"$(sums "$out" "$IN" "$OUT" "$NEW")"
	echo "$mode: inside $si outside $so new $sn (want $N_IN $N_OUT $N_NEW)"
	[ "$si" = $N_IN ] || fail "$mode: $IN (inside) counted $si, want $N_IN"
	[ "$so" = $N_OUT ] || fail "$mode: $OUT (outside) counted $so, want $N_OUT"
	[ "$sn" = $N_NEW ] || fail "$mode: $NEW (made after the start) counted $sn, want $N_NEW"
	rmdir "$CG_ROOT/$CG_BASE/ns/new1" || fail "cannot remove ns/new1"
}

# tasks_case MODE: -T; two threads in ns/in (/in in the namespace), one in out (/../out).
tasks_case() {
	local mode=$1 out=$TMP/out-tasks-$1 IN OUT t1 t2 t3 s1 s2 s3 t why
	IN=$(cg_path ns/in) OUT=$(cg_path out)
	start_ns "$mode" "$out" -G "$IN" -G "$OUT" -T
	cg_run ns/in "$WORKLOAD" threads 100 $N_T1 $N_T2 >"$TMP/tids-in" & local pi=$!
	cg_run out "$WORKLOAD" threads 100 $N_T3 >"$TMP/tids-out" & local po=$!
	wait $pi || fail "$mode -T: the workload in ns/in failed"
	wait $po || fail "$mode -T: the workload in out failed"
	# Two more intervals: a thread gone is reported once more, then dropped.
	cgtma_more "$out" 3
	stop "$out" "$mode -T"
	grep -q "^cgtma: cgroup namespace root: .*/$CG_BASE/ns " "$TMP/err" ||
		fail "$mode -T: -v does not say the namespace's root is ns/: $(cat "$TMP/err")"
	t1=$(awk 'NR == 1 { print $1 }' "$TMP/tids-in")
	t2=$(awk 'NR == 2 { print $1 }' "$TMP/tids-in")
	t3=$(awk 'NR == 1 { print $1 }' "$TMP/tids-out")
	read -r s1 s2 s3 <<<"$(task_sums "$out" "$EV" "$IN" "$t1" "$IN" "$t2" "$OUT" "$t3" |
		paste -sd' ')"
	echo "$mode -T: ns/in threads $s1 $s2, out thread $s3 (want $N_T1 $N_T2 $N_T3)"
	[ "$s1" = $N_T1 ] || fail "$mode -T: thread $t1 in $IN counted $s1, want $N_T1"
	[ "$s2" = $N_T2 ] || fail "$mode -T: thread $t2 in $IN counted $s2, want $N_T2"
	[ "$s3" = $N_T3 ] || fail "$mode -T: thread $t3 in $OUT counted $s3, want $N_T3"
	# Alive until they end: one row marked exited each, and none after it.
	for t in "$t1" "$t2" "$t3"; do
		why=$(task_ends_once "$out" "$t") || fail "$mode -T: $why (found gone while it ran?)"
	done
}

cg_make ns/in
cg_make out
host_case kept
host_case remount
host_case pid1
host_case own
host_case own-hostns
N_T1=60000 N_T2=40000 N_T3=30000
tasks_case kept
tasks_case own

# --all-cgroups inside the namespace: host cgroups outside its subtree by their host paths.
out=$TMP/out-all
IN=$(cg_path ns/in) OUT=$(cg_path out)
start_ns kept "$out" --all-cgroups --depth 3
cg_start ns/in "$WORKLOAD" getppid $N_IN 40
cg_start out "$WORKLOAD" getppid $N_OUT 40
cg_wait
stop "$out" "--all-cgroups"
read -r si so <<<"$(sums "$out" "$IN" "$OUT")"
echo "--all-cgroups --depth 3: $IN $si, $OUT $so (want $N_IN $N_OUT)"
[ "$si" = $N_IN ] || fail "--all-cgroups: $IN (inside) counted $si, want $N_IN"
[ "$so" = $N_OUT ] || fail "--all-cgroups: $OUT (outside the namespace) counted $so, want $N_OUT"
summary_cgroups "$out" | tr ' ' '\n' | grep -qx "/$CG_BASE/ns" ||
	fail "--all-cgroups: no row for the namespace's root by its host path"

command -v capsh >/dev/null ||
	skip "no capsh (libcap2-bin): the subtree view is untested"
cg_make ns/new2
out=$TMP/out-subtree
start_ns subtree "$out" -G /in -G "/new*"
cg_start ns/in "$WORKLOAD" getppid $N_IN 40
cg_start out "$WORKLOAD" getppid $N_OUT 40
cg_make ns/new1
cg_start ns/new1 "$WORKLOAD" getppid $N_NEW 40
cg_start ns/new2 "$WORKLOAD" getppid $N_NEW2 40
cg_make out/new2
cg_start out/new2 "$WORKLOAD" getppid $N_DECOY 40
cg_wait
stop "$out" subtree
view subtree "only this cgroup namespace's subtree is visible"
[ "$(grep -c 'cgroup view' "$TMP/err")" = 1 ] || fail "subtree: not one line on the view"
got=$(summary_cgroups "$out")
[ "$got" = "/in /new1 /new2" ] || fail "subtree: cgroups '$got', want '/in /new1 /new2'"
read -r si sn sn2 <<<"$(sums "$out" /in /new1 /new2)"
echo "subtree: /in $si /new1 $sn /new2 $sn2 (want $N_IN $N_NEW $N_NEW2; out/new2's $N_DECOY not)"
[ "$si" = $N_IN ] || fail "subtree: /in counted $si, want $N_IN"
[ "$sn" = $N_NEW ] || fail "subtree: /new1 (made after the start) counted $sn, want $N_NEW"
[ "$sn2" = $N_NEW2 ] || fail "subtree: /new2 counted $sn2, want $N_NEW2 (out/new2 is not it)"
echo ok
