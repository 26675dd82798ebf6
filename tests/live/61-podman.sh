#!/bin/bash
# Real containers: Debian's podman (rootful, crun), run from busybox root filesystems made
# here (tests/live/podman.sh; no image registry is reachable). Counting
# syscalls:sys_enter_getppid (exact), with the static workload copied into the containers:
#   host     cgtma on the host tracks a running container by its cgroup (from podman
#            inspect's pid: /libpod_parent/libpod-<id> with the cgroupfs manager here), and
#            one started after cgtma by a glob on that parent; exact counts made inside both.
#   engine   cgtma in a privileged container started exactly as crucible's engine starts
#            tools: --privileged --pid=host --net=host, podman's default cgroup namespace, no
#            cgroup mount added: the same exact counts for a host cgroup and for another
#            container, by their host paths. podman's default cgroup namespace is private on
#            cgroup v2 (where podman mounts the namespace's cgroup2 in the container: cgtma
#            opens the host's root by file handle) but the host's where podman sees cgroup v1
#            (a hybrid layout: /sys/fs/cgroup is a tmpfs), with no cgroup2 mount in the
#            container: cgtma reads PID 1's (the host's, pid=host) through /proc/1/root, or
#            where PID 1 cannot be read (this sandbox's PID 1 is no init) mounts cgroup2
#            itself, attached nowhere (user/cgview.h). The test says which.
#   private  the same with --cgroupns=private (the v2 default): on a hybrid host no cgroup2
#            mount either, and paths are still the host's.
#   private-mounted  --cgroupns=private with cgroup2 mounted in the container's namespace
#            (showing only its subtree), as podman does on v2: the root by file handle.
#   private-nopidhost  the same without --pid=host: the file handle does not need it.
# cgtma in a container: its root filesystem gets the cgtma binary and every shared library
# ldd lists, at the same paths (the dynamic loader included), so it runs exactly what was
# built here whatever the container's distribution; nothing of the host is mounted but
# /io (where it writes its output).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/podman.sh"

EV=syscalls:sys_enter_getppid
STATIC=${CGTMA_BUILD:-build}/tests/workload-static
N_A=70000 N_B=40000 N_HOST=50000 N_C=60000

[ -x "$STATIC" ] || fail "no $STATIC: build first (make $STATIC)"
podman_ready
podman_rootfs "$TMP/root" "$STATIC"
# In the containers' namespace the helper is /bin/workload-static.
W=/bin/workload-static

# sum FILE CGROUP: its count summed over the interval lines.
sum() { cgroup_sum "$1" "$2" "$EV"; }

# --- cgtma on the host ----------------------------------------------------------------
A=cgtma-test-$$-a B=cgtma-test-$$-b
podman_run $A -d -- /bin/sleep 1000 >/dev/null || fail "cannot start container $A"
CG_A=$(podman_cgroup $A)
[ -d "$CG_ROOT$CG_A" ] || fail "container $A's cgroup $CG_A is not under $CG_ROOT"
echo "host: container $A in $CG_A"
out=$TMP/out-host
cgtma_start "$out" 1 -e "$EV" -I 200 --json -G "$CG_A" -G "$(dirname "$CG_A")/libpod-*"
podman exec $A $W getppid $N_A 40 || fail "the workload in $A failed"
# Started after cgtma: its init is the workload, counted from the container's first slice.
podman_run $B -d -- $W getppid $N_B 40 >/dev/null || fail "cannot start container $B"
[ "$(podman wait $B)" = 0 ] || fail "the workload in $B failed"
CG_B=$(dirname "$CG_A")/libpod-$(podman_id $B)
cgtma_more "$out"
cgtma_signal INT host
sa=$(sum "$out" "$CG_A") sb=$(sum "$out" "$CG_B")
echo "host: $A $sa, $B $sb (want $N_A $N_B)"
[ "$sa" = $N_A ] || fail "host: container $A ($CG_A) counted $sa, want $N_A"
[ "$sb" = $N_B ] || fail "host: container $B ($CG_B), started later, counted $sb, want $N_B"

# --- cgtma in a container, as crucible's engine runs it ---------------------------------
podman_rootfs "$TMP/tool" "$STATIC"
cp "$CGTMA" "$TMP/tool/bin/cgtma" || fail "cannot copy $CGTMA"
for lib in $(ldd "$CGTMA" | grep -o '/[^ ]*'); do
	mkdir -p "$TMP/tool$(dirname "$lib")" && cp -L "$lib" "$TMP/tool$lib" ||
		fail "cannot copy $lib into the tool's root filesystem"
done
mkdir -p "$TMP/io"

ns_of() { readlink "/proc/$(podman_pid "$1")/ns/cgroup"; }
P=cgtma-test-$$-probe
podman_run $P -d --privileged --pid=host --net=host -- /bin/sleep 1000 >/dev/null ||
	fail "cannot start a privileged container"
default_ns=private
if [ "$(ns_of $P)" = "$(readlink /proc/self/ns/cgroup)" ]; then
	default_ns=host
	echo "engine: podman's default cgroup namespace here is the host's (it sees cgroup v1:" \
		"$(podman info --format '{{.Host.CgroupsVersion}}')); on v2 it is a private one"
fi
podman rm -f -t 0 $P >/dev/null

C=cgtma-test-$$-c
podman_run $C -d -- /bin/sleep 1000 >/dev/null || fail "cannot start container $C"
CG_C=$(podman_cgroup $C)
cg_make host
HOST=$(cg_path host)
run='exec /bin/cgtma -v -e '"$EV"' -I 200 --json "$@" >/io/out 2>/io/err'
# cgroup2 where podman mounted none (cgroup v1 in its eyes), in the container's namespace.
mount_v2='grep -q " - cgroup2 " /proc/self/mountinfo ||
	{ mkdir -p /sys/fs/cgroup/unified && mount -t cgroup2 none /sys/fs/cgroup/unified; } ||
	exit 3'

# tool CASE SCRIPT VIEW PODMAN-ARGS...: cgtma in a privileged container (started by SCRIPT)
# tracks the host cgroup and $C; its -v line must start with VIEW.
tool() {
	local name=$1 script=$2 want_view=$3 T=cgtma-test-$$-tool-$1 out=$TMP/io/out i n rc ns
	shift 3
	rm -f "$TMP/io/out" "$TMP/io/err"
	PODMAN_ROOTFS=$TMP/tool podman_run $T -d --privileged --net=host "$@" \
		-v "$TMP/io:/io" -- /bin/sh -c "$script" sh -G "$HOST" -G "$CG_C" >/dev/null ||
		fail "$name: cannot start the tool's container"
	ns=private
	[ "$(ns_of $T)" = "$(readlink /proc/self/ns/cgroup)" ] && ns=host
	case " $* " in
	*" --cgroupns=private "*) [ $ns = private ] ||
		fail "$name: the tool's container shares the host's cgroup namespace" ;;
	*) [ $ns = $default_ns ] || fail "$name: the tool's cgroup namespace is $ns, podman's" \
		"default here $default_ns" ;;
	esac
	echo "$name: the tool's container has the $ns cgroup namespace ($(ns_of $T)," \
		"the host's $(readlink /proc/self/ns/cgroup)); its cgroup $(podman_cgroup $T)"
	for ((i = 0; i < 200; i++)); do
		[ -s "$out" ] && break
		[ "$(podman inspect -f '{{.State.Running}}' $T)" = true ] ||
			fail "$name: cgtma ended early: $(cat "$TMP/io/err" 2>/dev/null)"
		sleep 0.05
	done
	[ -s "$out" ] || fail "$name: cgtma wrote nothing in 10 s: $(cat "$TMP/io/err")"
	cg_start host "$WORKLOAD" getppid $N_HOST 40
	podman exec $C $W getppid $N_C 40 || fail "the workload in $C failed"
	cg_wait
	# One more interval after the work, then stop mid-interval.
	n=$(wc -l <"$out")
	for ((i = 0; i < 200; i++)); do
		[ "$(wc -l <"$out")" -gt "$n" ] && break
		sleep 0.05
	done
	podman kill --signal INT $T >/dev/null
	rc=$(podman wait $T)
	[ "$rc" = 0 ] || fail "$name: cgtma exited $rc: $(cat "$TMP/io/err")"
	grep '^cgtma: cgroup view' "$TMP/io/err" | sed "s/^/$name: /"
	grep -q "^cgtma: cgroup view: $want_view" "$TMP/io/err" ||
		fail "$name: -v does not say '$want_view': $(grep 'cgroup view' "$TMP/io/err")"
	local got want sh sc
	got=$(summary_cgroups "$out")
	want=$(printf '%s\n' "$HOST" "$CG_C" | sort | paste -sd' ')
	[ "$got" = "$want" ] || fail "$name: cgroups '$got', want the host paths '$want'"
	sh=$(sum "$out" "$HOST") sc=$(sum "$out" "$CG_C")
	echo "$name: host cgroup $sh, container $C $sc (want $N_HOST $N_C)"
	[ "$sh" = $N_HOST ] || fail "$name: the host cgroup $HOST counted $sh, want $N_HOST"
	[ "$sc" = $N_C ] || fail "$name: container $C ($CG_C) counted $sc, want $N_C"
}
# Without a cgroup2 mount in the container (podman's where it sees v1): PID 1's, or where
# PID 1 cannot be read (this sandbox's) a mount of cgtma's own; -v says which.
engine_view="the host's hierarchy"
handle_view="the host's hierarchy, its root opened by file handle"
# As crucible's engine runs it: nothing added.
tool engine "$run" "$engine_view" --pid=host
tool private "$run" "$engine_view" --pid=host --cgroupns=private
tool private-mounted "$mount_v2
$run" "$handle_view" --pid=host --cgroupns=private
# The file handle needs no pid=host: the same without it.
tool private-nopidhost "$mount_v2
$run" "$handle_view" --cgroupns=private
echo ok
