#!/bin/bash
# Real containers: Debian's podman (rootful, crun), run from busybox root filesystems made
# here (tests/live/podman.sh; no image registry is reachable). Counting
# syscalls:sys_enter_getppid (exact), with the static workload copied into the containers:
#   host     cgtma on the host tracks a running container by its cgroup (from podman
#            inspect's pid: /libpod_parent/libpod-<id> with the cgroupfs manager here), and
#            one started after cgtma by a glob on that parent; exact counts made inside both.
#   inside   cgtma in a privileged container with --pid=host --net=host, as crucible's engine
#            runs tools, in a private cgroup namespace: the same exact counts for a host
#            cgroup and for another container, by their host paths. podman's default cgroup
#            namespace is private on cgroup v2 (crucible's case) but the host's where podman
#            sees cgroup v1 (a hybrid layout: /sys/fs/cgroup is a tmpfs): the test checks what
#            the default gives and passes --cgroupns=private when it is the host's, and says
#            so. podman mounts cgroup2 in the container on v2 only; on a hybrid host the
#            container mounts it itself, in its namespace (showing only its subtree), as
#            podman would on v2. cgtma reaches the host's hierarchy through the file handle
#            of its root (user/cgview.h).
#   inside-nopidhost  the same without --pid=host: the file handle does not need it.
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

sum() {
	jq -s --arg cg "$2" --arg ev "$EV" \
		'[.[] | select(.summary != true) | .rows[] |
		  select(.scope == "cgroup" and .cgroup == $cg and .cpu == null) | .counts[$ev]] |
		 add // 0' "$1"
}
summary_cgroups() {
	jq -r 'select(.summary == true) | [.rows[] | select(.scope == "cgroup") | .cgroup] |
	       sort | join(" ")' "$1"
}

# --- cgtma on the host ----------------------------------------------------------------
A=cgtma-test-$$-a B=cgtma-test-$$-b
podman_run $A -d -- /bin/sleep 1000 >/dev/null || fail "cannot start container $A"
CG_A=$(podman_cgroup $A)
[ -d "$CG_ROOT$CG_A" ] || fail "container $A's cgroup $CG_A is not under $CG_ROOT"
echo "host: container $A in $CG_A"
out=$TMP/out-host
: >"$out"
"$CGTMA" -e "$EV" -I 200 --json -G "$CG_A" -G "$(dirname "$CG_A")/libpod-*" \
	>"$out" 2>"$TMP/err" &
cgtma_pid=$!
on_exit "kill -9 $cgtma_pid"
wait_lines "$out" 1
podman exec $A $W getppid $N_A 40 || fail "the workload in $A failed"
# Started after cgtma: its init is the workload, counted from the container's first slice.
podman_run $B -d -- $W getppid $N_B 40 >/dev/null || fail "cannot start container $B"
[ "$(podman wait $B)" = 0 ] || fail "the workload in $B failed"
CG_B=$(dirname "$CG_A")/libpod-$(podman_id $B)
wait_lines "$out" $(($(wc -l <"$out") + 1))
kill -INT $cgtma_pid
wait $cgtma_pid || fail "host: cgtma exited $?: $(cat "$TMP/err")"
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
cgns=()
if [ "$(ns_of $P)" = "$(readlink /proc/self/ns/cgroup)" ]; then
	echo "inside: podman's default cgroup namespace here is the host's (it sees cgroup v1:" \
		"$(podman info --format '{{.Host.CgroupsVersion}}')); passing --cgroupns=private," \
		"which is its default on v2, where crucible's engine gets a private one"
	cgns=(--cgroupns=private)
fi
podman rm -f -t 0 $P >/dev/null

C=cgtma-test-$$-c
podman_run $C -d -- /bin/sleep 1000 >/dev/null || fail "cannot start container $C"
CG_C=$(podman_cgroup $C)
cg_make host
HOST=$(cg_path host)
# cgroup2 where podman mounted none (cgroup v1 in its eyes), in the container's namespace.
script='grep -q " - cgroup2 " /proc/self/mountinfo ||
	{ mkdir -p /sys/fs/cgroup/unified && mount -t cgroup2 none /sys/fs/cgroup/unified; } ||
	exit 3
exec /bin/cgtma -v -e '"$EV"' -I 200 --json "$@" >/io/out 2>/io/err'

# tool CASE PODMAN-ARGS...: cgtma in a privileged container tracks the host cgroup and $C.
tool() {
	local name=$1 T=cgtma-test-$$-tool-$1 out=$TMP/io/out i n rc
	shift
	rm -f "$TMP/io/out" "$TMP/io/err"
	PODMAN_ROOTFS=$TMP/tool podman_run $T -d --privileged --net=host "${cgns[@]}" "$@" \
		-v "$TMP/io:/io" -- /bin/sh -c "$script" sh -G "$HOST" -G "$CG_C" >/dev/null ||
		fail "$name: cannot start the tool's container"
	[ "$(ns_of $T)" != "$(readlink /proc/self/ns/cgroup)" ] ||
		fail "$name: the tool's container shares the host's cgroup namespace"
	echo "$name: the tool's container has a private cgroup namespace ($(ns_of $T)," \
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
	grep -q "^cgtma: cgroup view: the host's hierarchy" "$TMP/io/err" ||
		fail "$name: -v does not say the host's view: $(grep 'cgroup view' "$TMP/io/err")"
	local got want sh sc
	got=$(summary_cgroups "$out")
	want=$(printf '%s\n' "$HOST" "$CG_C" | sort | paste -sd' ')
	[ "$got" = "$want" ] || fail "$name: cgroups '$got', want the host paths '$want'"
	sh=$(sum "$out" "$HOST") sc=$(sum "$out" "$CG_C")
	echo "$name: host cgroup $sh, container $C $sc (want $N_HOST $N_C)"
	[ "$sh" = $N_HOST ] || fail "$name: the host cgroup $HOST counted $sh, want $N_HOST"
	[ "$sc" = $N_C ] || fail "$name: container $C ($CG_C) counted $sc, want $N_C"
}
# As crucible's engine runs it.
tool inside --pid=host
# The file handle needs no pid=host: the same without it.
tool inside-nopidhost
echo ok
