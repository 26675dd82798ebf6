# Sourced by the live tests that run real containers, after lib.sh. Debian 12's podman (rootful,
# crun), containers from a local root filesystem: no image registry is reachable. Gives:
#
#   podman_ready        skips (exit 77, saying why) unless podman can run a container here.
#                       On a hybrid layout where hugetlb is bound to the v2 hierarchy crun
#                       refuses ("cgroups in hybrid mode not supported"): it then mounts a v1
#                       hugetlb hierarchy, which moves hugetlb off v2, says so, and unmounts it
#                       when the test exits (after every container it started is removed).
#                       Call it once, before anything else here.
#   podman_rootfs DIR [FILE...]
#                       makes DIR a root filesystem: /bin/busybox (busybox-static) with all its
#                       applet links (sh, cat, sleep, ...), /proc /sys /dev /tmp /etc, and each
#                       FILE copied into DIR/bin under its own name (a static helper binary:
#                       nothing else is there to link against). Sets PODMAN_ROOTFS=DIR.
#   podman_run NAME [PODMAN-ARGS...] -- CMD...
#                       podman run --name NAME PODMAN-ARGS --rootfs $PODMAN_ROOTFS CMD, with
#                       --ulimit nofile=4096:4096 --ulimit nproc=4096:4096 always (this sandbox
#                       lacks CAP_SYS_RESOURCE: podman's default rlimits for root fail) and
#                       --rm never (so `podman inspect` works after it ends). In the foreground
#                       unless PODMAN-ARGS has -d (podman then prints the id: redirect it);
#                       returns podman's exit status. Call it in the test's own shell, not in
#                       $(...) or a pipeline, where the cleanup list it adds to is lost (or
#                       add the name to _podman_names yourself, as podman_ready does). NAME
#                       is used as given: make it unique (e.g. cgtma-test-$$-web). The
#                       container is removed (podman rm -f) when the test exits, however it
#                       exits.
#                       PODMAN_ROOTFS=DIR podman_run ... uses another root filesystem.
#   podman_cgroup NAME  the container's cgroup v2 path, as cgtma shows it (relative to the v2
#                       mount): from `podman inspect`'s pid and that pid's /proc/PID/cgroup,
#                       so it is the real one with any cgroup manager (cgroupfs here:
#                       /libpod_parent/libpod-<id>; systemd: /machine.slice/libpod-<id>.scope).
#                       The container must be running.
#   podman_pid NAME     its init's host pid (running containers only).
#   podman_id NAME      its full 64-hex id.
#   standin_pod DIR NS POD CONTAINER
#                       a Kubernetes pod's container without a kubelet: a cgroup named as the
#                       kubelet's systemd driver names one (cg_make; its name relative to the
#                       test's cgroup in STANDIN_CG, for cg_run), and DIR a runtime root for
#                       CGTMA_RUNTIME_ROOT=DIR holding containerd's task bundle for it (its CRI
#                       annotations: CONTAINER of pod NS/POD) and a link to the host's podman
#                       state (symlinks are followed), so that podman's containers keep their
#                       names under it.

_podman_names=()

_podman_cleanup() {
	local n
	for n in "${_podman_names[@]}"; do podman rm -f -t 0 "$n"; done
}

# The v1 hugetlb hierarchy outlives its umount while it has cgroups (podman made
# libpod_parent/ there), and hugetlb then stays off v2: remove them, wait until the kernel has
# freed them (/proc/cgroups counts them), then unmount, and check that hugetlb is back on v2.
_podman_hugetlb_undo() {
	local hp=$1 made=$2 i
	for ((i = 0; i < 100; i++)); do
		find "$hp" -mindepth 1 -depth -type d -exec rmdir {} + 2>/dev/null
		[ "$(awk '$1 == "hugetlb" { print $3 }' /proc/cgroups)" = 1 ] && break
		sleep 0.05
	done
	umount "$hp"
	[ -n "$made" ] && rmdir "$hp"
	for ((i = 0; i < 100; i++)); do
		grep -qw hugetlb "$_podman_v2/cgroup.controllers" && return 0
		sleep 0.05
	done
	echo "podman: hugetlb is not back on $_podman_v2 after the v1 hierarchy's umount" >&2
}

podman_ready() {
	command -v podman >/dev/null ||
		skip "podman is not installed (tools/install-deps.sh test installs it)"
	command -v busybox >/dev/null && busybox --list >/dev/null 2>&1 ||
		skip "busybox is not installed (tools/install-deps.sh test installs busybox-static)"
	! ldd "$(command -v busybox)" >/dev/null 2>&1 ||
		skip "$(command -v busybox) is not static (install busybox-static)"
	on_exit _podman_cleanup
	local v2 hp=/sys/fs/cgroup/hugetlb
	_podman_v2=$(awk '$(NF-2) == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
	v2=$_podman_v2
	if [ -n "$v2" ] && [ "$v2" != /sys/fs/cgroup ] &&
		grep -qw hugetlb "$v2/cgroup.controllers" 2>/dev/null &&
		! awk '$(NF-2) == "cgroup" && $NF ~ /(^|,)hugetlb(,|$)/ { f = 1 } END { exit !f }' \
			/proc/self/mountinfo; then
		echo "podman: hybrid layout with hugetlb on the v2 hierarchy ($v2), which crun" \
			"refuses: mounting a v1 hugetlb hierarchy on $hp for this test"
		local made=
		[ -d $hp ] || { mkdir $hp && made=1; } || skip "cannot create $hp"
		mount -t cgroup -o hugetlb cgroup $hp || {
			[ -n "$made" ] && rmdir $hp
			skip "cannot mount a v1 hugetlb hierarchy on $hp"
		}
		# on_exit runs in order: this comes after the containers' removal above.
		on_exit "_podman_hugetlb_undo $hp '$made'"
	fi
	local r=$TMP/podman-probe out
	podman_rootfs "$r"
	# In $(...), podman_run cannot note the name for the cleanup: note it here.
	_podman_names+=("cgtma-probe-$$")
	out=$(podman_run "cgtma-probe-$$" -- /bin/true 2>&1) ||
		skip "podman cannot run a container here: $(printf '%s\n' "$out" | tail -n1)"
	PODMAN_ROOTFS=
}

podman_rootfs() {
	local dir=$1 a f
	shift
	mkdir -p "$dir/bin" "$dir/proc" "$dir/sys" "$dir/dev" "$dir/tmp" "$dir/etc" ||
		fail "cannot make a root filesystem in $dir"
	cp "$(command -v busybox)" "$dir/bin/busybox" || fail "cannot copy busybox into $dir"
	for a in $(busybox --list); do
		# busybox lists itself: a link to itself would hide the binary.
		[ "$a" = busybox ] || ln -sf busybox "$dir/bin/$a"
	done
	for f in "$@"; do
		cp "$f" "$dir/bin/" || fail "cannot copy $f into $dir/bin"
	done
	PODMAN_ROOTFS=$dir
}

podman_run() {
	local name=$1 args=()
	shift
	while [ $# -gt 0 ] && [ "$1" != -- ]; do args+=("$1"); shift; done
	[ "${1:-}" = -- ] || fail "podman_run $name: no -- before the command"
	shift
	[ -n "${PODMAN_ROOTFS:-}" ] && [ -x "$PODMAN_ROOTFS/bin/busybox" ] ||
		fail "podman_run $name: no root filesystem (podman_rootfs DIR first)"
	_podman_names+=("$name")
	podman run --name "$name" --ulimit nofile=4096:4096 --ulimit nproc=4096:4096 \
		"${args[@]}" --rootfs "$PODMAN_ROOTFS" "$@"
}

podman_pid() { podman inspect -f '{{.State.Pid}}' "$1"; }
podman_id() { podman inspect -f '{{.Id}}' "$1"; }
podman_cgroup() {
	local pid
	pid=$(podman_pid "$1") && [ "${pid:-0}" -gt 0 ] || fail "container $1 is not running"
	sed -n 's/^0:://p' "/proc/$pid/cgroup"
}

standin_pod() {
	local dir=$1 ns=$2 pod=$3 ct=$4 uid id task
	uid=6f1c2d3e-4a5b-4c6d-8e7f-$(printf '%012x' $$)
	id=$(printf 'c%.0s' $(seq 64))
	STANDIN_CG=kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod${uid//-/_}.slice
	STANDIN_CG=$STANDIN_CG/cri-containerd-$id.scope
	cg_make "$STANDIN_CG"
	task=$dir/run/containerd/io.containerd.runtime.v2.task/k8s.io/$id
	mkdir -p "$dir/var/lib/containers" "$task" &&
		ln -s /var/lib/containers/storage "$dir/var/lib/containers/storage" &&
		cat >"$task/config.json" <<EOF || fail "cannot write a stand-in pod's state in $dir"
{"ociVersion": "1.1.0", "annotations": {
  "io.kubernetes.cri.container-type": "container",
  "io.kubernetes.cri.container-name": "$ct",
  "io.kubernetes.cri.sandbox-name": "$pod",
  "io.kubernetes.cri.sandbox-namespace": "$ns",
  "io.kubernetes.cri.sandbox-uid": "$uid"}}
EOF
}
