#!/bin/bash
# A fleet: tools/container/Containerfile, tools/k8s/cgtma-daemonset.yaml and
# tools/grafana/cgtma-dashboard.json, as far as they can be tried without a cluster.
#
# 1. The manifest parses (python3's yaml) and says what cgtma needs: a DaemonSet, privileged,
#    hostPID, the host's /sys/fs/cgroup mounted, Prometheus scrape annotations whose port is
#    the container port and the port of the --prometheus argument, which listens on all
#    addresses; CGTMA_RUNTIME_ROOT=DIR, and read-only mounts at DIR of the host's runtime
#    state directories that hold every state path user/containers.c reads (from its source).
# 2. The dashboard parses, and every query it makes finds series: cgtma --prometheus (a
#    software model file shaped like a Top-Down tree stands in for a PMU: it runs without one)
#    tracking a busy plain cgroup, a podman container WEB by name and a Kubernetes pod's
#    container (a kubelet-named cgroup with a containerd bundle written here: its container,
#    pod and namespace labels), scraped by a real Prometheus; each panel's expression and
#    each variable's label_values() is asked of Prometheus with the variables set (namespace,
#    pod and container once as All, All, WEB, once as the pod's), and must return data, and
#    every cgtma_* family they name is on cgtma's page.
# 3. The image builds with podman from local files: a debootstrap'd bookworm imported as
#    debian:12 stands in for the registry's image (tools/container/import-debian12.sh, kept
#    in $CGTMA_FLEET_CACHE, default /var/cache/cgtma-fleet); apt inside the build reaches
#    Debian's mirror over the host's network. It holds the static cgtma alone: its --version
#    names this tree's release and commit (the build argument) and says "build: static".
# 4. The image runs as the DaemonSet runs it: privileged, pid=host, a private cgroup
#    namespace (podman's default on cgroup v2; asked for explicitly, as a hybrid host needs),
#    the host's /sys/fs/cgroup mounted read-only. It counts exactly the getppid calls made in
#    a host cgroup outside its own, by that cgroup's host path, and, with the manifest's
#    runtime state mounts and CGTMA_RUNTIME_ROOT, those made in WEB by -G container:WEB, its
#    rows carrying "container": WEB; and with the manifest's own arguments it serves /metrics.
# 5. crucible's engine: a debian:12 container (any distribution's engine image will do) with
#    the static cgtma where rickshaw.json copies the tool's binary (/usr/bin/cgtma), started
#    as crucible's remotehosts engine starts its profiler, the tool's cgtma-start and
#    cgtma-stop run in it as the engine runs them, the
#    post-process here: exact getppid counts for a host cgroup, and its series published;
#    with the DaemonSet's runtime state mounts, --container=WEB: WEB's exact counts, and a
#    published series named container WEB (pod "none") whose rates add up to them (1 %).
# Skips: no podman/busybox (podman.sh), no python3 yaml, no prometheus, no base image (no
# debootstrap or no mirror). A failing build or run fails.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/podman.sh"
. "$(dirname "$0")/cdm.sh"

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
MANIFEST=$ROOT/tools/k8s/cgtma-daemonset.yaml
DASH=$ROOT/tools/grafana/cgtma-dashboard.json
IMAGE=localhost/cgtma:fleet-test
BASE=docker.io/library/debian:12
CGTMA_STATIC=${CGTMA_BUILD:-build}/cgtma-static
[ -x "$CGTMA_STATIC" ] || fail "no $CGTMA_STATIC: build first (make static)"
CGTMA_STATIC=$(readlink -f "$CGTMA_STATIC")
commands_or_skip python3 jq curl ss prometheus
python3 -c 'import yaml' 2>/dev/null || skip "python3's yaml module is missing (python3-yaml)"

# --- 1. the manifest -----------------------------------------------------------------------
# The state paths user/containers.c reads (each under $CGTMA_RUNTIME_ROOT), from its source.
grep -o '"%s/\(var\|run\)/[^"%]*' "$ROOT/user/containers.c" | sed 's/^"%s//' >"$TMP/state-paths"
[ "$(wc -l <"$TMP/state-paths")" -ge 6 ] || fail "cannot find containers.c's state paths"
python3 - "$MANIFEST" "$TMP/state-paths" "$TMP/ds-mounts" >"$TMP/ds-args" <<'EOF' || fail "$MANIFEST: $(cat "$TMP/ds-args")"
import sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
def need(ok, what):
    if not ok:
        print(what)
        sys.exit(1)
need(len(docs) == 1 and docs[0].get("kind") == "DaemonSet" and
     docs[0].get("apiVersion") == "apps/v1", "not one apps/v1 DaemonSet")
spec = docs[0]["spec"]
tmpl = spec["template"]
need(spec["selector"]["matchLabels"].items() <= tmpl["metadata"]["labels"].items(),
     "the selector does not match the pod's labels")
pod = tmpl["spec"]
need(pod.get("hostPID") is True, "no hostPID: true")
need(not pod.get("hostNetwork"), "hostNetwork: Prometheus scrapes the pod's own IP")
c = pod["containers"]
need(len(c) == 1, "not one container")
c = c[0]
need(c.get("securityContext", {}).get("privileged") is True, "the container is not privileged")
args = c.get("command", [])[1:] + c.get("args", [])
need(c.get("command", [""])[0] == "/usr/sbin/cgtma", "the command is not /usr/sbin/cgtma")
need("--prometheus" in args, "no --prometheus argument")
listen = args[args.index("--prometheus") + 1]
need(listen.startswith("0.0.0.0:"), "--prometheus %s does not listen on the pod's IP" % listen)
port = int(listen.split(":")[1])
need([p["containerPort"] for p in c["ports"]] == [port], "containerPort is not %d" % port)
ann = tmpl["metadata"]["annotations"]
need(ann.get("prometheus.io/scrape") == "true" and ann.get("prometheus.io/port") == str(port)
     and ann.get("prometheus.io/path") == "/metrics", "scrape annotations: %r" % ann)
vols = {v["name"]: v for v in pod["volumes"]}
mounts = [m for m in c["volumeMounts"] if m["mountPath"] == "/sys/fs/cgroup"]
need(len(mounts) == 1 and mounts[0].get("readOnly") is True, "no read-only /sys/fs/cgroup mount")
need(vols[mounts[0]["name"]].get("hostPath", {}).get("path") == "/sys/fs/cgroup",
     "/sys/fs/cgroup is not the host's")
# Names: the runtimes' state, read-only under CGTMA_RUNTIME_ROOT from the host's own paths,
# covering every path containers.c reads.
env = {e["name"]: e.get("value") for e in c.get("env", [])}
root = env.get("CGTMA_RUNTIME_ROOT")
need(root and root.startswith("/") and root != "/", "no CGTMA_RUNTIME_ROOT=/DIR: %r" % env)
state = []
for m in c["volumeMounts"]:
    if not m["mountPath"].startswith(root + "/"):
        continue
    hp = vols[m["name"]].get("hostPath", {}).get("path")
    need(m.get("readOnly") is True, "%s is not read-only" % m["mountPath"])
    need(hp and m["mountPath"] == root + hp, "%s is not the host's %s" % (m["mountPath"], hp))
    state.append(hp)
for p in open(sys.argv[2]).read().split():
    need(any(p.startswith(h.rstrip("/") + "/") for h in state),
         "containers.c reads %s, which no mount under %s holds" % (p, root))
with open(sys.argv[3], "w") as f:
    f.write("CGTMA_RUNTIME_ROOT=%s\n" % root)
    for h in state:
        f.write("%s:%s%s:ro\n" % (h, root, h))
for a in args:
    print(a)
EOF
grep -qx -- --prometheus "$TMP/ds-args" || fail "the manifest's arguments: $(cat "$TMP/ds-args")"

# --- 2. the dashboard, against cgtma's page and a real Prometheus ------------------------------
jq -e '.panels | length > 0' "$DASH" >/dev/null || fail "$DASH does not parse, or has no panels"
jq -r '[.. | objects | .expr? | strings] | .[]' "$DASH" >"$TMP/exprs"
jq -r '.templating.list[] | select(.type == "query") | .query.query' "$DASH" >"$TMP/vars"
[ "$(wc -l <"$TMP/exprs")" -ge 5 ] || fail "the dashboard has only $(wc -l <"$TMP/exprs") queries"
grep -q 'cgtma_topdown_ratio.*level="1"' "$TMP/exprs" || fail "no Top-Down level-1 panel"
grep -q 'cgtma_metric.*metric="IPC"' "$TMP/exprs" || fail "no IPC panel"

cat >"$TMP/tree.json" <<'EOF'
{
  "name": "fleet_sw_tree",
  "description": "Test stand-in: a tree shaped like Top-Down over software events (not a Top-Down model)",
  "vendor": "generic", "source": "tests/live/63-fleet.sh", "match": [],
  "pmu": {"software": true}, "constants": {},
  "events": [{"name": "cpu-clock", "encoding": "cpu-clock"},
             {"name": "context-switches", "encoding": "context-switches"}],
  "aux": [],
  "nodes": [
    {"name": "Frontend_Bound", "parent": null, "level": 1, "domain": "Slots", "area": "FE",
     "expr": "(1 - Retiring) * 0.5", "thresh": "val > 0.2", "maxval": null, "siblings": [], "desc": "d"},
    {"name": "Bad_Speculation", "parent": null, "level": 1, "domain": "Slots", "area": "BAD",
     "expr": "(1 - Retiring) * 0.2", "thresh": "val > 0.2", "maxval": null, "siblings": [], "desc": "d"},
    {"name": "Backend_Bound", "parent": null, "level": 1, "domain": "Slots", "area": "BE",
     "expr": "(1 - Retiring) * 0.3", "thresh": "val > 0.2", "maxval": null, "siblings": [], "desc": "d"},
    {"name": "Retiring", "parent": null, "level": 1, "domain": "Slots", "area": "RET",
     "expr": "d_ratio(\"cpu-clock\", \"cpu-clock\" + 1000000 * \"context-switches\")",
     "thresh": "val > 0.7", "maxval": null, "siblings": [], "desc": "d"},
    {"name": "Memory_Bound", "parent": "Backend_Bound", "level": 2, "domain": "Slots",
     "area": "BE/Mem", "expr": "Backend_Bound * 0.6", "thresh": "val > 0.1", "maxval": null,
     "siblings": [], "desc": "d"},
    {"name": "Core_Bound", "parent": "Backend_Bound", "level": 2, "domain": "Slots",
     "area": "BE/Core", "expr": "Backend_Bound * 0.4", "thresh": "val > 0.1", "maxval": null,
     "siblings": [], "desc": "d"}
  ],
  "metrics": [
    {"name": "IPC", "expr": "\"context-switches\" / (\"cpu-clock\" / 1e6)", "unit": "",
     "desc": "stand-in for the IPC panel's query", "default": true},
    {"name": "GHz", "expr": "\"cpu-clock\" / cpu_s / 1e9", "unit": "GHz",
     "desc": "stand-in for the frequency panel's query", "default": true}
  ]
}
EOF
# A podman container next to the plain cgroup, for the container label's queries (and, in
# 4 and 5, to be named from inside containers): WEB spins in its shell until told to make
# getppid calls (files in its root filesystem), then makes N1 at /tmp/go-1, M2 at /tmp/go-2.
STATIC=${CGTMA_BUILD:-build}/tests/workload-static
[ -x "$STATIC" ] || fail "no $STATIC: build first (make $STATIC)"
podman_ready
podman_rootfs "$TMP/rootfs" "$STATIC"
WR=$PODMAN_ROOTFS
WEB=cgtma-fleet-$$-web
N1=4321 M2=2345
podman_run "$WEB" -d -- /bin/sh -c "while [ ! -e /tmp/spun ]; do :; done;
	while [ ! -e /tmp/go-1 ]; do sleep 0.05; done; workload-static getppid $N1 && touch /tmp/done-1;
	while [ ! -e /tmp/go-2 ]; do sleep 0.05; done; workload-static getppid $M2 && touch /tmp/done-2;
	exec sleep 100000" >/dev/null || fail "cannot start container $WEB"
WEB_CG=$(podman_cgroup "$WEB")
PODMAN_ROOTFS=
# go N: WEB makes its calls, and this waits for them.
go() {
	local i
	touch "$WR/tmp/go-$1"
	for ((i = 0; i < 400; i++)); do [ -e "$WR/tmp/done-$1" ] && return 0; sleep 0.05; done
	fail "the workload in $WEB did not finish in 20 s"
}
# And a Kubernetes pod's container, for the pod and namespace labels (podman.sh's
# standin_pod: no kubelet here).
KNS=shop KPOD=cart-7d4b9 KCT=app
standin_pod "$TMP/state" $KNS $KPOD $KCT
KCG=$STANDIN_CG
cg_make busy
BUSY=$(cg_path busy)
PORT=$(free_port)
PPORT=$(free_port)
[ "$PORT" != "$PPORT" ] || PPORT=$(free_port)
CGTMA_RUNTIME_ROOT=$TMP/state cgtma_start /dev/null 0 --model-file "$TMP/tree.json" -l 2 \
	-G "$BUSY" -G "container:$WEB" -G "container:$KCT" -I 500 --prometheus "127.0.0.1:$PORT"
cg_start busy "$WORKLOAD" spin 60000
cg_start "$KCG" "$WORKLOAD" spin 60000
metrics_wait 20 $PORT "$TMP/page.txt" -F "cgroup=\"$BUSY\"" \
	"cgroup=\"$WEB_CG\",container=\"$WEB\"" \
	"cgroup=\"$(cg_path "$KCG")\",container=\"$KCT\",pod=\"$KPOD\",namespace=\"$KNS\"" ||
	fail "cgtma's page never showed $BUSY, $WEB and $KNS/$KPOD's $KCT: $(cat "$TMP/err")"
metrics_scrape $PORT "$TMP/page.txt"
for m in $(grep -oh 'cgtma_[a-z0-9_]*' "$TMP/exprs" "$TMP/vars" | sort -u); do
	grep -q "^# TYPE $m " "$TMP/page.txt" || fail "the dashboard queries $m, which is not on cgtma's page"
done

cat >"$TMP/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: cgtma
    static_configs:
      - targets: ['127.0.0.1:$PORT']
EOF
prometheus --config.file="$TMP/prometheus.yml" --storage.tsdb.path="$TMP/tsdb" \
	--web.listen-address="127.0.0.1:$PPORT" --log.level=warn >"$TMP/prometheus.log" 2>&1 &
PROM_PID=$!
on_exit "kill $PROM_PID; wait $PROM_PID"
PROM=http://127.0.0.1:$PPORT
ready() { curl -sf "$PROM/-/ready" >/dev/null; }
wait_for 60 ready || fail "Prometheus did not start: $(tail -n 5 "$TMP/prometheus.log")"
# The variables as Grafana sets them: "All" is .*, the (no container's) cgroup the tracked
# one; two picks of namespace, pod and container: all, all and podman's WEB; the pod's.
subst() {
	sed -e 's/\$instance/.*/g' -e "s|\\\$cgroup|$BUSY|g" -e "s|\\\$container|$C_V|g" \
		-e "s|\\\$namespace|$NS_V|g" -e "s|\\\$pod|$POD_V|g" -e 's/\$node/Backend_Bound/g' \
		-e 's/\$__rate_interval/5s/g' <<<"$1"
}
n_result() {
	curl -sfG --data-urlencode "query=$1" "$PROM/api/v1/query" | jq -r '.data.result | length'
}
# Two scrapes at least, for rate().
has_rate() { [ "$(n_result 'count_over_time(up[1m])' 2>/dev/null)" -gt 0 ] &&
	[ "$(curl -sfG --data-urlencode 'query=count_over_time(up[1m])' "$PROM/api/v1/query" |
		jq -r '.data.result[0].value[1]')" -ge 3 ]; }
wait_for 30 has_rate || fail "Prometheus scraped cgtma fewer than 3 times in 30 s"
for pick in ".* .* $WEB" "$KNS $KPOD $KCT"; do
read -r NS_V POD_V C_V <<<"$pick"
echo "namespace=$NS_V pod=$POD_V container=$C_V:"
while read -r e; do
	q=$(subst "$e")
	n=$(n_result "$q")
	[ "${n:-0}" -gt 0 ] || fail "the dashboard's query returns nothing: $q"
	echo "panel query: $n series: $q"
done <"$TMP/exprs"
while read -r v; do
	q=$(subst "$v")
	[[ $q =~ ^label_values\((.*),\ *([a-z_]+)\)$ ]] || fail "variable query not label_values(SEL, LABEL): $v"
	sel=${BASH_REMATCH[1]} label=${BASH_REMATCH[2]}
	vals=$(curl -sfG --data-urlencode "match[]=$sel" "$PROM/api/v1/series" |
		jq -r --arg l "$label" '[.data[][$l] | strings] | unique | join(" ")')
	[ -n "$vals" ] || fail "the dashboard's variable finds no $label: $v"
	echo "variable $label: $vals"
done <"$TMP/vars"
done
kill "$PROM_PID" "$cgtma_pid"
wait "$PROM_PID" "$cgtma_pid" 2>/dev/null
xargs -r kill <"$CG_ROOT/$CG_BASE/busy/cgroup.procs"
xargs -r kill <"$CG_ROOT/$CG_BASE/$KCG/cgroup.procs"
touch "$WR/tmp/spun"
wait "${_started[@]}" 2>/dev/null
_started=()

# --- 3. the image ----------------------------------------------------------------------------
out=$("$ROOT/tools/container/import-debian12.sh" 2>&1) ||
	skip "no debian:12 base image: $(tail -n 2 <<<"$out")"
t0=$SECONDS
# Host network: the build's apt reaches the mirror as the host does (no bridge set up here).
commit=$(cd "$ROOT" && git describe --always --dirty 2>/dev/null || echo unknown)
podman build --network=host --build-arg CGTMA_COMMIT="$commit" \
	-f "$ROOT/tools/container/Containerfile" -t "$IMAGE" "$ROOT" \
	>"$TMP/build.log" 2>&1 || fail "podman build failed: $(tail -n 15 "$TMP/build.log")"
echo "image built in $((SECONDS - t0)) s (cached layers reused): $(podman image inspect -f '{{.Size}}' "$IMAGE") bytes"
on_exit "podman rmi -f $IMAGE >/dev/null 2>&1"
podman run --rm --ulimit nofile=4096:4096 --ulimit nproc=4096:4096 "$IMAGE" --version \
	>"$TMP/image-version" 2>&1 ||
	fail "cgtma --version in the image: $(cat "$TMP/image-version")"
{ "$CGTMA" --version | head -n 1; echo "commit: $commit"; } >"$TMP/want-version"
head -n 2 "$TMP/image-version" | cmp -s - "$TMP/want-version" && grep -qx 'build: static' "$TMP/image-version" ||
	fail "the image's cgtma --version says '$(cat "$TMP/image-version")', want $(cat "$TMP/want-version") and a static build"

# --- 4. run as the DaemonSet runs it ---------------------------------------------------------
# The DaemonSet's settings, and this sandbox's rlimits (no CAP_SYS_RESOURCE: podman.sh).
DS_OPTS=(--privileged --pid=host --cgroupns=private -v /sys/fs/cgroup:/sys/fs/cgroup:ro
	--ulimit nofile=4096:4096 --ulimit nproc=4096:4096)
# And its runtime state mounts, with CGTMA_RUNTIME_ROOT: the host paths this host has (a
# node's kubelet makes the others, empty: DirectoryOrCreate).
STATE_OPTS=(-e "$(head -n1 "$TMP/ds-mounts")")
while IFS=: read -r hp mp ro; do
	[ -d "$hp" ] && STATE_OPTS+=(-v "$hp:$mp:$ro")
done < <(tail -n +2 "$TMP/ds-mounts")
echo "the DaemonSet's runtime state here: ${STATE_OPTS[*]}"
cg_make host
HOST=$(cg_path host)
N=4321
name=cgtma-fleet-$$
on_exit "podman rm -f -t 0 $name >/dev/null 2>&1"
podman run --name "$name" "${DS_OPTS[@]}" "${STATE_OPTS[@]}" "$IMAGE" \
	-e syscalls:sys_enter_getppid -G "$HOST" -G "container:$WEB" -I 200 --json -v \
	>"$TMP/in.jsonl" 2>"$TMP/err" &
# podman's client, not cgtma: it ends when cgtma does, with its exit status.
cgtma_started "$TMP/in.jsonl" 1
if [ "$(podman inspect -f '{{.State.Running}}' "$name")" != true ]; then
	wait $cgtma_pid
	fail "cgtma in the container exited $? at start: $(cat "$TMP/err")"
fi
# Its own cgroup namespace really is private, and not the host's.
pid1=$(podman inspect -f '{{.State.Pid}}' "$name")
ns_in=$(readlink "/proc/$pid1/ns/cgroup") && ns_here=$(readlink /proc/self/ns/cgroup) ||
	fail "cannot read the cgroup namespaces of $pid1 and this shell"
[ "$ns_in" != "$ns_here" ] ||
	fail "the container shares this shell's cgroup namespace ($ns_here): not the DaemonSet's setting"
echo "the container's cgroup namespace $ns_in, this shell's $ns_here"
cg_run host "$WORKLOAD" getppid $N || fail "the workload failed"
go 1
wait_lines "$TMP/in.jsonl" $(($(wc -l <"$TMP/in.jsonl") + 2))
podman kill -s INT "$name" >/dev/null
cgtma_exited "cgtma in the container"
got=$(jq -s --arg cg "$HOST" '[.[] | select(.summary != true) | .rows[] |
	select(.scope == "cgroup" and .cgroup == $cg) | .counts["syscalls:sys_enter_getppid"]] | add' \
	"$TMP/in.jsonl")
echo "in the image with the DaemonSet's settings: $HOST counted $got getppid calls (want $N)"
[ "$got" = $N ] || fail "cgtma in the container counted $got getppid calls in $HOST, want $N: $(cat "$TMP/err")"
# The other container, by its name, from the host's podman state mounted as the DaemonSet does.
got=$(jq -s --arg n "$WEB" '[.[] | select(.summary != true) | .rows[] |
	select(.scope == "cgroup" and .container == $n) | .counts["syscalls:sys_enter_getppid"]] |
	add' "$TMP/in.jsonl")
echo "in the image with the DaemonSet's settings: container $WEB counted $got getppid calls (want $N1)"
[ "$got" = $N1 ] || fail "cgtma in the container counted $got getppid calls in $WEB, want $N1: $(cat "$TMP/err")"
jq -e -s --arg n "$WEB" --arg c "$WEB_CG" --arg h "$HOST" 'all(.[].rows[] | select(.scope == "cgroup");
	(.cgroup == $c and .container == $n) or (.cgroup == $h and (has("container") | not)))' \
	"$TMP/in.jsonl" >/dev/null || fail "rows not named as they should be: $(tail -n1 "$TMP/in.jsonl")"
# Through the host's cgroup filesystem the DaemonSet mounts (docs/containers.md, "cgtma in a
# container").
grep -q "cgroup view: the host's hierarchy at /sys/fs/cgroup" "$TMP/err" ||
	fail "cgtma in the container does not read the host's hierarchy through the mount: $(cat "$TMP/err")"

# The manifest's own arguments (its port moved to a free one), on the host's network to be
# scraped from here.
PORT=$(free_port)
mapfile -t args < <(sed "s/^0\.0\.0\.0:[0-9]*$/0.0.0.0:$PORT/" "$TMP/ds-args")
podman run --name "$name-ds" --network=host "${DS_OPTS[@]}" --entrypoint /usr/sbin/cgtma \
	"$IMAGE" "${args[@]}" >"$TMP/ds.out" 2>&1 &
on_exit "podman rm -f -t 0 $name-ds >/dev/null 2>&1"
metrics_wait 40 $PORT "$TMP/ds-page.txt" '^cgtma_events_total{scope="system"' ||
	fail "the DaemonSet's cgtma serves no /metrics on :$PORT: $(tail -n 5 "$TMP/ds.out")"
podman rm -f -t 0 "$name-ds" >/dev/null 2>&1

# --- 5. crucible's engine ---------------------------------------------------------------------
# The tool's own scripts in a container started as crucible's remotehosts engine starts its
# profiler: --privileged --pid=host --net=host, podman's default cgroup namespace (private on
# cgroup v2; the host's on this hybrid VM, where podman sees v1 and mounts no cgroup2 in the
# container: cgtma reads PID 1's through /proc/1/root) and no host cgroup mount. debian:12
# stands in for the engine image (crucible's are CentOS Stream and UBI: the static binary
# needs none of their packages), the static cgtma at /usr/bin/cgtma as rickshaw.json's
# files-from-controller puts the tool directory's; start and stop run as the engine runs them (cd tool-data/<tool-id> && cgtma-start --arg=val ...), the
# post-process on the "controller", this shell.
cg_make engine
ENGINE=$(cg_path engine)
M=2345
tool=$TMP/engine/tool-data/profiler-1/cgtma
mkdir -p "$tool"
podman run -d --name "$name-engine" --privileged --pid=host --net=host \
	--ulimit nofile=4096:4096 --ulimit nproc=4096:4096 "${STATE_OPTS[@]}" \
	-v "$ROOT/tools/crucible:/opt/cgtma-tool:ro" -v "$TMP/engine:/var/lib/crucible" \
	-v "$CGTMA_STATIC:/usr/bin/cgtma:ro" "$BASE" sleep infinity >/dev/null ||
	fail "cannot start the engine container"
on_exit "podman rm -f -t 0 $name-engine >/dev/null 2>&1"
params=("--cgroup=$ENGINE" "--container=$WEB" --events=syscalls:sys_enter_getppid --interval=0.2)
podman exec "$name-engine" bash -c 'cd /var/lib/crucible/tool-data/profiler-1/cgtma &&
	exec /opt/cgtma-tool/cgtma-start "$@"' - "${params[@]}" ||
	fail "cgtma-start in the engine: $(cat "$tool/cgtma-start-stderrout.txt")"
cg_run engine "$WORKLOAD" getppid $M || fail "the workload failed"
go 2
sleep 0.5
podman exec "$name-engine" bash -c 'cd /var/lib/crucible/tool-data/profiler-1/cgtma &&
	exec /opt/cgtma-tool/cgtma-stop "$@"' - "${params[@]}" ||
	fail "cgtma-stop in the engine: $(cat "$tool/cgtma-stop-stderrout.txt")"
mkdir "$tool/postprocess"
(cd "$tool" && "$ROOT/tools/crucible/cgtma-post-process" >postprocess/post-process-output.txt 2>&1) ||
	fail "cgtma-post-process: $(cat "$tool/postprocess/post-process-output.txt")"
jsonl=$tool/cgtma-stdout.jsonl
[ -e "$jsonl.xz" ] && xz -dc "$jsonl.xz" >"$TMP/engine.jsonl" && jsonl=$TMP/engine.jsonl
got=$(jq -s --arg cg "$ENGINE" '[.[] | select(.summary != true) | .rows[] |
	select(.scope == "cgroup" and .cgroup == $cg) | .counts["syscalls:sys_enter_getppid"]] | add' \
	"$jsonl")
echo "crucible's engine: $ENGINE counted $got getppid calls (want $M)"
[ "$got" = $M ] || fail "cgtma in the engine counted $got getppid calls in $ENGINE, want $M"
xz -dc "$tool/postprocess/metric-data-cgtma.json.xz" | jq -e --arg cg "$ENGINE" \
	'any(.[]; .desc.type == "syscalls-sys-enter-getppid" and .names.cgroup == $cg)' >/dev/null ||
	fail "no published getppid series for $ENGINE: $(cat "$tool/postprocess/post-process-output.txt")"
# --container=NAME: its rows named, its calls exact; its published series carries the name
# (and pod "none": no Kubernetes pod), its rates add up to the calls within 1 % (cdm.sh).
got=$(jq -s --arg n "$WEB" '[.[] | select(.summary != true) | .rows[] |
	select(.scope == "cgroup" and .container == $n) | .counts["syscalls:sys_enter_getppid"]] | add' \
	"$jsonl")
echo "crucible's engine, --container=$WEB: $got getppid calls (want $M2)"
[ "$got" = $M2 ] || fail "cgtma in the engine counted $got getppid calls in $WEB, want $M2"
xz -dc "$tool/postprocess/metric-data-cgtma.json.xz" >"$TMP/engine-cdm.json"
xz -dc "$tool/postprocess/metric-data-cgtma.csv.xz" >"$TMP/engine-cdm.csv"
idx=$(jq --arg n "$WEB" --arg c "$WEB_CG" '[.[] | select(.desc.type == "syscalls-sys-enter-getppid" and
	.names.container == $n and .names.cgroup == $c and .names.pod == "none") | .idx] |
	if length == 1 then .[0] else empty end' "$TMP/engine-cdm.json")
[ -n "$idx" ] || fail "no one published getppid series named container $WEB: $(jq -c '[.[].names] | unique' "$TMP/engine-cdm.json")"
raw=$tool/cgtma-data/metric-data-cgtma.csv
[ -e "$raw.xz" ] && xz -dc "$raw.xz" >"$TMP/engine-raw.csv" && raw=$TMP/engine-raw.csv
cdm=$(cdm_sum "$raw" "$TMP/engine-cdm.csv" "$idx")
echo "crucible's engine: the published series of $WEB adds up to $cdm calls (want $M2)"
cdm_near "$cdm" $M2 ||
	fail "the published series of $WEB adds up to $cdm calls, want $M2 (1 %)"
echo "ok"
