#!/bin/bash
# Containers by name, with Debian's podman (cgroupfs manager here: /libpod_parent/libpod-<id>).
# A container WEB, running before cgtma starts, makes exactly N1 getppid() calls once told to
# (a file in its root filesystem); a container LATE is started only after cgtma has begun and
# makes N2 at once as it starts (plus one: its shell's, at its start). cgtma -G container:WEB -G 'container:PREFIX-late-*' (a glob
# that matches nothing at the start) must count exactly N1 and N2 for their cgroups, LATE's
# from its first slice (its cgroup is found again as it appears, its name read from podman's
# state), put "container": NAME next to "cgroup" on their JSON rows and container="NAME" on
# their Prometheus series, and show the names instead of the paths on the terminal (-v: the
# names and short ids, as podman ps shows them). Also: bad selectors exit 2, --all-containers
# finds WEB, a container cgroup without runtime state keeps its path and -v says why once, a
# typo in a name is said with the close name, and -T's thread rows (--all-containers -T too)
# are named by their container in JSON, CSV and the HTML report.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/podman.sh"

commands_or_skip jq curl ss
STATIC=${CGTMA_BUILD:-build}/tests/workload-static
[ -x "$STATIC" ] || fail "no $STATIC: build first (make $STATIC)"

EV=syscalls:sys_enter_getppid
N1=150000 N2=90000
WEB=cgtma-test-$$-web LATE=cgtma-test-$$-late-1

# Bad selectors: usage errors, said in one line, before anything is loaded.
for bad in container: pod:default pod:/x nosuch:thing; do
	"$CGTMA" -e "$EV" -G "$bad" -d 1 >/dev/null 2>"$TMP/bad"
	rc=$?
	[ $rc -eq 2 ] || fail "-G '$bad' exited $rc, want 2: $(cat "$TMP/bad")"
	[ "$(wc -l <"$TMP/bad")" = 1 ] && grep -q -- "-G '$bad'" "$TMP/bad" ||
		fail "-G '$bad': not one line naming it: $(cat "$TMP/bad")"
done

# A container cgroup whose runtime's state cannot be read: tracked by its id, it keeps its
# path (no "container" on its rows), and -v says why, once, however many intervals.
FAKE=$(printf 'ab%.0s' $(seq 32))
cg_make "docker-$FAKE.scope"
CGTMA_RUNTIME_ROOT=$TMP/nothing "$CGTMA" -e "$EV" -I 100 -d 0.6 -v --json \
	-G "container:${FAKE:0:12}" >"$TMP/fake" 2>"$TMP/fake-err" ||
	fail "the run on a container without state failed: $(cat "$TMP/fake-err")"
jq -e -s --arg p "$(cg_path "docker-$FAKE.scope")" \
	'([.[].rows[] | select(.scope == "cgroup")] | length) >= 5 and
	 all(.[].rows[] | select(.scope == "cgroup"); .cgroup == $p and (has("container") | not))' \
	"$TMP/fake" >/dev/null || fail "docker-$FAKE.scope not tracked by id, or named: $(head -n1 "$TMP/fake")"
why="container cgroup '$(cg_path "docker-$FAKE.scope")' keeps its path: cannot open"
why="$why $TMP/nothing/var/lib/docker/containers/$FAKE/config.v2.json"
[ "$(grep -cF "$why" "$TMP/fake-err")" = 1 ] ||
	fail "-v does not say once why it keeps its path: $(cat "$TMP/fake-err")"

podman_ready
podman_rootfs "$TMP/rootfs" "$STATIC"
R=$PODMAN_ROOTFS

# sh waits for /tmp/go-NAME (no getppid in that loop: busybox sh calls it once, at its start),
# then the exact work; the container lives on so that its series stay on the page: WEB spins
# in the shell (no system calls) from /tmp/spin on, to be shown on the terminal (idle rows
# are not, without -v).
script() {
	echo "while [ ! -e /tmp/go-$1 ]; do sleep 0.05; done; workload-static getppid $2 40 &&" \
		"touch /tmp/done-$1; while [ ! -e /tmp/spin-$1 ]; do sleep 0.05; done;" \
		"while :; do :; done"
}

podman_run "$WEB" -d -- /bin/sh -c "$(script web $N1)" >/dev/null || fail "cannot start $WEB"
WEB_CG=$(podman_cgroup "$WEB")
WEB_ID=$(podman_id "$WEB")
case $WEB_CG in */libpod-$WEB_ID*) ;; *) fail "$WEB's cgroup $WEB_CG does not name its id" ;; esac

PORT=$(free_port)

out=$TMP/out
cgtma_start "$out" 2 -e "$EV" -I 200 --json --prometheus "127.0.0.1:$PORT" -G "container:$WEB" \
	-G "container:cgtma-test-$$-late-*"

touch "$R/tmp/go-web" "$R/tmp/go-late"
podman_run "$LATE" -d -- /bin/sh -c "$(script late $N2)" >/dev/null || fail "cannot start $LATE"
LATE_CG=$(podman_cgroup "$LATE")
for ((i = 0; i < 600; i++)); do
	[ -e "$R/tmp/done-web" ] && [ -e "$R/tmp/done-late" ] && break
	sleep 0.05
done
[ -e "$R/tmp/done-web" ] && [ -e "$R/tmp/done-late" ] || fail "the workloads did not finish in 30 s"
# Two more intervals after the work.
cgtma_more "$out" 2
metrics_scrape $PORT "$TMP/page.txt" || fail "cannot fetch /metrics"
cgtma_signal INT

# sum NAME: the container's count over the interval lines, from rows naming it.
sum() {
	jq -s --arg n "$1" --arg ev "$EV" '[.[] | select(.summary != true) | .rows[] |
		select(.scope == "cgroup" and .container == $n) | .counts[$ev]] | add // 0' "$out"
}
summary() {
	jq --arg n "$1" --arg ev "$EV" 'select(.summary == true) | .rows[] |
		select(.scope == "cgroup" and .container == $n) | .counts[$ev]' "$out"
}
# LATE is counted from its birth: its busybox sh's own getppid() at start (for $PPID) too,
# one call milliseconds after crun made the cgroup. WEB's sh started before cgtma.
W2=$((N2 + 1))
s1=$(sum "$WEB") s2=$(sum "$LATE")
echo "container $WEB ($WEB_CG): $s1 getppid (want $N1); $LATE ($LATE_CG): $s2 (want $W2)"
[ "$s1" = $N1 ] || fail "$WEB counted $s1, want $N1"
[ "$s2" = $W2 ] || fail "$LATE (started after cgtma) counted $s2, want $W2 (N2 + its sh's one)"
[ "$(summary "$WEB")" = $N1 ] || fail "summary of $WEB: $(summary "$WEB"), want $N1"
[ "$(summary "$LATE")" = $W2 ] || fail "summary of $LATE: $(summary "$LATE"), want $W2"

# Each container's rows carry its own cgroup; no other cgroup was tracked.
jq -e -s --arg w "$WEB" --arg wc "$WEB_CG" --arg l "$LATE" --arg lc "$LATE_CG" \
	'all(.[].rows[] | select(.scope == "cgroup");
	     (.container == $w and .cgroup == $wc) or (.container == $l and .cgroup == $lc))' \
	"$out" >/dev/null || fail "rows with other cgroups or names: $(tail -n1 "$out")"
first_late=$(jq -s --arg l "$LATE" 'map(select(any(.rows[]; .container == $l))) | length' "$out")
[ "$first_late" -ge 1 ] || fail "$LATE never had a row"
[ "$(jq -s --arg w "$WEB" 'map(select(.summary != true and any(.rows[]; .container == $w))) |
	length' "$out")" = "$(jq -s 'map(select(.summary != true)) | length' "$out")" ] ||
	fail "$WEB missing from some interval"

# Prometheus: the container label, next to the cgroup's.
grep -F "cgtma_events_total{scope=\"cgroup\",cgroup=\"$WEB_CG\",container=\"$WEB\"," \
	"$TMP/page.txt" | grep -q "} $N1\$" ||
	fail "no cgtma_events_total with container=\"$WEB\" at $N1: $(grep -F "$WEB" "$TMP/page.txt" | head -3)"
grep -qF "container=\"$LATE\"" "$TMP/page.txt" || fail "no series with container=\"$LATE\""

# The terminal shows the name, -v the name and the short id; --all-containers finds WEB.
touch "$R/tmp/spin-web"
"$CGTMA" -e "$EV" -G "container:$WEB" -d 0.5 >"$TMP/term" 2>&1 || fail "terminal run failed"
grep -qF "$WEB" "$TMP/term" && ! grep -qF "$WEB_CG" "$TMP/term" ||
	fail "the terminal does not show $WEB by name: $(cat "$TMP/term")"
"$CGTMA" -e "$EV" -G "container:${WEB_ID:0:12}" -d 0.5 -v >"$TMP/term-v" 2>&1 ||
	fail "-v run failed"
# (-v's marks and antagonists name the cgroups they involve, other containers' by path too:
# not the view.)
grep -qF "$WEB (${WEB_ID:0:12})" "$TMP/term-v" &&
	! grep -v -e '^cgtma: mark: ' -e '^ *antagonist ' "$TMP/term-v" |
		grep -v 'noise: .*top antagonist' | grep -qF "libpod" ||
	fail "-v does not show '$WEB (${WEB_ID:0:12})', as podman ps does: $(cat "$TMP/term-v")"
"$CGTMA" -e "$EV" --all-containers -d 0.5 --json >"$TMP/all" 2>"$TMP/err" ||
	fail "--all-containers failed: $(cat "$TMP/err")"
jq -e -s --arg w "$WEB" 'any(.[].rows[]; .container == $w)' "$TMP/all" >/dev/null ||
	fail "--all-containers did not find $WEB"

# A typo in a container's name: it may be a container still to come, so the run goes on;
# said with the close name that exists, at the start and again at the end, and the exit
# status is 3: what was asked for was not measured.
typo=${WEB%web}wbe
"$CGTMA" -e "$EV" -G "container:$typo" -I 100 -d 0.5 >/dev/null 2>"$TMP/typo"
rc=$?
[ $rc -eq 3 ] || fail "a typo in a container's name: exit $rc, want 3: $(cat "$TMP/typo")"
[ "$(grep -c -- "-G 'container:$typo' matches no container yet; watching for it; did you mean 'container:$WEB'?$" "$TMP/typo")" = 1 ] &&
	[ "$(grep -c -- "-G 'container:$typo' never matched a container during the run; did you mean 'container:$WEB'?$" "$TMP/typo")" = 1 ] ||
	fail "a typo in a container's name: not said with the close name: $(cat "$TMP/typo")"

# -T: --all-containers -T runs as -G 'container:*' -T does; a thread's rows carry its
# container's names (JSON) and are named by it (CSV), as its cgroup's row.
"$CGTMA" -e "$EV" --all-containers -T -I 100 -d 0.5 --json >"$TMP/task" 2>"$TMP/err" ||
	fail "--all-containers -T: exit $?: $(cat "$TMP/err")"
jq -e -s --arg w "$WEB" --arg wc "$WEB_CG" 'any(.[].rows[];
	.scope == "task" and .cgroup == $wc and .container == $w and .comm == "sh")' \
	"$TMP/task" >/dev/null || fail "--all-containers -T: no thread row of $WEB naming it"
# (cpu-clock: WEB's shell spins without system calls, and rows of zeros are not printed.)
"$CGTMA" -e cpu-clock -G "container:$WEB" -T -I 100 -d 0.5 -x, >"$TMP/task.csv" 2>"$TMP/err" ||
	fail "-T -x,: exit $?: $(cat "$TMP/err")"
# (Its antagonists' rows give their paths in Description: other containers' too.)
grep -qE "^[^,]*,$WEB:[0-9]+\(sh\)," "$TMP/task.csv" &&
	! grep -v ',Noise\.antagonist' "$TMP/task.csv" | grep -q libpod ||
	fail "-T -x,: the thread is not named by its container: $(head -5 "$TMP/task.csv")"
# The HTML report of a -T record: charts titled by the container's name.
"$CGTMA" -e cpu-clock -G "container:$WEB" -T -I 100 -d 0.5 --record "$TMP/task.cgtma" \
	>/dev/null 2>"$TMP/err" || fail "-T --record: exit $?: $(cat "$TMP/err")"
"$CGTMA" report "$TMP/task.cgtma" --html "$TMP/task.html" 2>"$TMP/err" ||
	fail "report --html: exit $?: $(cat "$TMP/err")"
grep -qF "<h2>$WEB</h2>" "$TMP/task.html" && grep -qE "<h2>sh:[0-9]+ in $WEB</h2>" "$TMP/task.html" &&
	! grep -q '<h2>[^<]*libpod' "$TMP/task.html" ||
	fail "report --html: charts not titled by $WEB: $(grep -o '<h2>[^<]*</h2>' "$TMP/task.html")"
echo "PASS: containers by name (podman): exact counts, names in JSON, Prometheus, terminal, typos, threads, HTML"
