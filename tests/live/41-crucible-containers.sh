#!/bin/bash
# crucible's --container and --pod params for real (tests/live/40-crucible.sh checks that they
# reach cgtma as -G container:GLOB and -G pod:NS/GLOB; 63-fleet runs --container in an
# engine container). On the host, as rickshaw runs a tool: cgtma-start --container=WEB
# --pod=NS/POD in a tool directory, getppid calls made in a running podman container WEB
# (Debian's podman, a busybox root filesystem: tests/live/podman.sh) and in a Kubernetes
# pod's container (podman.sh's standin_pod: a kubelet-named cgroup, containerd's bundle
# written here, under CGTMA_RUNTIME_ROOT), cgtma-stop, cgtma-post-process. cgtma's rows
# must carry the names and count exactly; cgtma-post-process must accept the name keys cgtma
# writes (container, pod) and publish WEB's series named container WEB (pod "none") and the
# pod's named pod NS/POD, whose rates add up to the calls within 1 % (tests/live/cdm.sh).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/podman.sh"
. "$(dirname "$0")/cdm.sh"

TOOLS=$(cd "$(dirname "$0")/../../tools/crucible" && pwd)
commands_or_skip python3 jq xz
STATIC=${CGTMA_BUILD:-build}/tests/workload-static
[ -x "$STATIC" ] || fail "no $STATIC: build first (make $STATIC)"
EV=syscalls:sys_enter_getppid
TYPE=syscalls-sys-enter-getppid
N=5432 K=3210
WEB=cgtma-test-$$-web KNS=shop KPOD=cart-7d4b9 KCT=app

podman_ready
podman_rootfs "$TMP/rootfs" "$STATIC"
R=$PODMAN_ROOTFS
podman_run "$WEB" -d -- /bin/sh -c "while [ ! -e /tmp/go ]; do sleep 0.05; done;
	workload-static getppid $N && touch /tmp/done; exec sleep 100000" >/dev/null ||
	fail "cannot start container $WEB"
WEB_CG=$(podman_cgroup "$WEB")
standin_pod "$TMP/state" $KNS $KPOD $KCT
POD_CG=$(dirname "$(cg_path "$STANDIN_CG")")

tool=$TMP/run/tool-data/profiler-1/profiler-1-cgtma-1/cgtma
mkdir -p "$tool"
cd "$tool" || fail "cd $tool"
params=("--container=$WEB" "--pod=$KNS/$KPOD" "--events=$EV" --interval=0.2)
CGTMA_RUNTIME_ROOT=$TMP/state CGTMA=$(readlink -f "$CGTMA") "$TOOLS/cgtma-start" "${params[@]}" ||
	fail "cgtma-start failed: $(cat cgtma-start-stderrout.txt)"
cgtma_pid=$(cat cgtma-pid.txt)
cp cgtma-start-stderrout.txt "$TMP/err"
wait_lines "$tool/cgtma-stdout.jsonl" 1
touch "$R/tmp/go"
cg_run "$STANDIN_CG" "$WORKLOAD" getppid $K || fail "the workload in the pod failed"
for ((i = 0; i < 400; i++)); do [ -e "$R/tmp/done" ] && break; sleep 0.05; done
[ -e "$R/tmp/done" ] || fail "the workload in $WEB did not finish in 20 s"
sleep 0.5
"$TOOLS/cgtma-stop" "${params[@]}" || fail "cgtma-stop failed: $(cat cgtma-stop-stderrout.txt)"
rm -rf postprocess && mkdir postprocess
"$TOOLS/cgtma-post-process" >postprocess/post-process-output.txt 2>&1 ||
	fail "cgtma-post-process failed: $(cat postprocess/post-process-output.txt)"

jsonl=$tool/cgtma-stdout.jsonl
[ -e "$jsonl.xz" ] && xz -dc "$jsonl.xz" >"$TMP/out.jsonl" && jsonl=$TMP/out.jsonl
# count FILTER: the calls over the interval lines in rows FILTER selects.
count() {
	jq -s --arg ev "$EV" --arg n "$WEB" --arg p "$KPOD" --arg ns "$KNS" "[.[] | select(.summary != true) |
		.rows[] | select(.scope == \"cgroup\") | select($1) | .counts[\$ev]] | add // 0" "$jsonl"
}
cw=$(count '.container == $n and .cgroup == "'"$WEB_CG"'"')
cp=$(count '.pod == $p and .namespace == $ns and .cgroup == "'"$POD_CG"'"')
echo "cgtma-start --container=$WEB: $cw getppid calls (want $N); --pod=$KNS/$KPOD ($POD_CG): $cp (want $K)"
[ "$cw" = $N ] || fail "$WEB counted $cw, want $N"
[ "$cp" = $K ] || fail "pod $KNS/$KPOD counted $cp, want $K"

xz -dc postprocess/metric-data-cgtma.json.xz >"$TMP/cdm.json" &&
	xz -dc postprocess/metric-data-cgtma.csv.xz >"$TMP/cdm.csv" || fail "no published metric files"
raw=cgtma-data/metric-data-cgtma.csv
[ -e $raw.xz ] && xz -dc $raw.xz >"$TMP/raw.csv" && raw=$TMP/raw.csv
# published SELECT: the calls the one series SELECT picks adds up to.
published() {
	local idx
	idx=$(jq --arg t $TYPE "[.[] | select(.desc.type == \$t and $1) | .idx] |
		if length == 1 then .[0] else empty end" "$TMP/cdm.json")
	[ -n "$idx" ] || fail "no one published $TYPE series with $1: $(jq -c '[.[].names] | unique' "$TMP/cdm.json")"
	cdm_sum "$raw" "$TMP/cdm.csv" "$idx"
}
pw=$(published ".names.container == \"$WEB\" and .names.pod == \"none\" and .names.cgroup == \"$WEB_CG\"")
pp=$(published ".names.pod == \"$KNS/$KPOD\" and .names.cgroup == \"$POD_CG\"")
echo "published: container $WEB $pw calls (want $N), pod $KNS/$KPOD $pp (want $K)"
cdm_near "$pw" $N || fail "the published series of $WEB adds up to $pw calls, want $N (1 %)"
cdm_near "$pp" $K || fail "the published series of pod $KNS/$KPOD adds up to $pp calls, want $K (1 %)"
echo ok
