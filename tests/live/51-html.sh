#!/bin/bash
# cgtma report --html. (a) A synthetic record (tests/helpers/mkrecord: real spr counts from
# tests/vectors, mixed differently over 40 intervals in 4 cgroups, one multiplexed, one idle
# for a while, one created and removed midway) becomes one page: exactly one chart per
# cgroup and one for the system, each an <svg class="cgtma-chart"> naming its scope, with
# level 1, level 2 and the bottleneck; nothing fetched (no http:// or https://, no script,
# no external url()). Rendered by headless Chromium, the screenshot must not be blank: many
# colors, a good share of non-background pixels, and the level-1 colors of the charts in
# quantity. (b) A live recording with this machine's model (here the software model: flat
# metrics) renders too: one chart for its cgroup. (c) A -T recording: one chart per thread
# the text report lists, after its cgroup's, and the header counts them apart.
. "$(dirname "$0")/lib.sh"

MKRECORD=${CGTMA_BUILD:-build}/tests/mkrecord
[ -x "$MKRECORD" ] || fail "no $MKRECORD: build first (make $MKRECORD)"

# check_page HTML KIND:SCOPE...: the page's charts are exactly these, and it is self-contained.
check_page() {
	local html=$1 want got
	shift
	want=$(printf '%s\n' "$@" | sort)
	got=$(grep -o '<svg class="cgtma-chart" data-kind="[a-z]*" data-scope="[^"]*"' "$html" |
		sed 's/.*data-kind="\([a-z]*\)" data-scope="\([^"]*\)"/\1:\2/' | sort)
	[ "$got" = "$want" ] || fail "$html: charts $(echo $got), want $(echo $want)"
	[ "$(grep -c '<svg class="cgtma-chart"' "$html")" -eq $# ] ||
		fail "$html: a chart is not on a line of its own"
	! grep -qiE 'https?://' "$html" ||
		fail "$html: refers to $(grep -oiE 'https?://[^" ]*' "$html" | head -1)"
	! grep -qiE '<script|<link|<img|<iframe|@import' "$html" || fail "$html: loads something"
	! grep -oE 'url\([^)]*\)' "$html" | grep -qv '^url(#' || fail "$html: an external url()"
}

commands_or_skip chromium

# shoot HTML PNG: a 1200x2000 screenshot by headless Chromium, offline.
shoot() {
	timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-background-networking \
		--disable-component-update --disable-sync --no-first-run \
		--user-data-dir="$TMP/chr" --screenshot="$2" --window-size=1200,2000 \
		"file://$1" >"$TMP/chromium.log" 2>&1
	[ -s "$2" ] || fail "chromium made no screenshot of $1: $(tail -n 5 "$TMP/chromium.log")"
}

# png_stats PNG [#RRGGBB...]: "WIDTH HEIGHT COLORS NONBG_PERMILLE COUNT..." where COLORS is the
# number of distinct colors, NONBG_PERMILLE the share of pixels unlike the most common one,
# and COUNT the pixels of each given color (exactly). Decodes the PNG with zlib only.
png_stats() {
	python3 - "$@" <<'EOF'
import struct, sys, zlib
from collections import Counter
data = open(sys.argv[1], 'rb').read()
assert data[:8] == b'\x89PNG\r\n\x1a\n', 'not a PNG'
pos, idat = 8, b''
while pos < len(data):
    n, kind = struct.unpack('>I4s', data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + n]
    pos += 12 + n
    if kind == b'IHDR':
        w, h, depth, ctype, _, _, interlace = struct.unpack('>IIBBBBB', body)
        assert depth == 8 and ctype in (2, 6) and not interlace, 'unexpected PNG format'
    elif kind == b'IDAT':
        idat += body
raw = zlib.decompress(idat)
bpp = 3 if ctype == 2 else 4
stride = w * bpp
prev = bytearray(stride)
colors = Counter()
for y in range(h):
    f = raw[y * (stride + 1)]
    line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
    if f == 1:
        for x in range(bpp, stride): line[x] = (line[x] + line[x - bpp]) & 255
    elif f == 2:
        line = bytearray((a + b) & 255 for a, b in zip(line, prev))
    elif f == 3:
        for x in range(stride):
            line[x] = (line[x] + ((line[x - bpp] if x >= bpp else 0) + prev[x]) // 2) & 255
    elif f == 4:
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b, c = prev[x], prev[x - bpp] if x >= bpp else 0
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    colors.update(bytes(line[x:x + 3]) for x in range(0, stride, bpp))
    prev = line
bg = colors.most_common(1)[0][1]
out = [w, h, len(colors), (w * h - bg) * 1000 // (w * h)]
out += [colors[bytes.fromhex(c.lstrip('#'))] for c in sys.argv[2:]]
print(*out)
EOF
}

# --- (a) a synthetic spr record, four cgroups -------------------------------------------
jq -r '. as $v | $v[0].counts | keys[] as $k | [$k] + [$v[] | .counts[$k]] |
	map(tostring) | join(" ")' tests/vectors/spr-generic.json >"$TMP/counts" ||
	fail "cannot read tests/vectors/spr-generic.json"
cgs=(/synth/batch /synth/db /synth/web "/synth/cron<&>")
"$MKRECORD" "$TMP/syn.cgtma" spr user/models/spr.json 3 "$TMP/counts" 40 "${cgs[@]}" ||
	fail "mkrecord failed"
"$CGTMA" report "$TMP/syn.cgtma" --html "$TMP/syn.html" >"$TMP/syn.out" 2>"$TMP/syn.err" ||
	fail "report --html failed (exit $?): $(cat "$TMP/syn.err")"
[ -s "$TMP/syn.out" ] && fail "report --html alone printed: $(head -3 "$TMP/syn.out")"
check_page "$TMP/syn.html" system:system cgroup:/synth/batch cgroup:/synth/db \
	cgroup:/synth/web "cgroup:/synth/cron&lt;&amp;&gt;"
for part in '>Level 1 <' '>Level 2, ' '>Bottleneck</text>' '>Counted <' Memory_Bound \
	'spr, level 3'; do
	grep -qF "$part" "$TMP/syn.html" || fail "the page has no '$part'"
done

shoot "$TMP/syn.html" "$TMP/syn.png"
# Frontend, Bad Speculation, Backend and Retiring as the level-1 areas draw them.
read -r w h ncolors nonbg fe bs be re < <(png_stats "$TMP/syn.png" '#4e79a7' '#e15759' \
	'#f28e2b' '#59a14f') || fail "cannot decode the screenshot"
[ "$w" -eq 1200 ] && [ "$h" -eq 2000 ] || fail "screenshot is ${w}x${h}, want 1200x2000"
[ "$ncolors" -ge 50 ] || fail "screenshot has $ncolors colors: blank?"
[ "$nonbg" -ge 150 ] || fail "screenshot is $nonbg/1000 non-background: blank?"
for c in "$fe" "$bs" "$be" "$re"; do
	[ "$c" -ge 300 ] || fail "a level-1 color covers only $c pixels ($fe $bs $be $re)"
done

# --- (b) a live recording on this machine -----------------------------------------------
cg_make live
CG=$(cg_path live)
"$CGTMA" -G "$CG" -I 250 --record "$TMP/live.cgtma" -- "$WORKLOAD" cgexec \
	"$CG_ROOT/$CG_BASE/live" "$WORKLOAD" spin 1500 >"$TMP/live.out" 2>"$TMP/live.err" ||
	fail "live run failed (exit $?): $(cat "$TMP/live.err")"
"$CGTMA" report "$TMP/live.cgtma" --html "$TMP/live.html" 2>"$TMP/live.rerr" ||
	fail "report --html of the live record failed: $(cat "$TMP/live.rerr")"
check_page "$TMP/live.html" system:system "cgroup:$CG"
shoot "$TMP/live.html" "$TMP/live.png"
read -r w h ncolors nonbg < <(png_stats "$TMP/live.png") || fail "cannot decode the screenshot"
[ "$ncolors" -ge 20 ] || fail "live screenshot has $ncolors colors: blank?"
[ "$nonbg" -ge 100 ] || fail "live screenshot is $nonbg/1000 non-background: blank?"

# --- (c) a -T recording: its threads are charted after their cgroup, as the text lists them
"$CGTMA" -G "$CG" -T -I 250 --record "$TMP/task.cgtma" -- "$WORKLOAD" cgexec \
	"$CG_ROOT/$CG_BASE/live" "$WORKLOAD" spin 600 >"$TMP/task.out" 2>"$TMP/task.err" ||
	fail "-T run failed (exit $?): $(cat "$TMP/task.err")"
"$CGTMA" report "$TMP/task.cgtma" --html "$TMP/task.html" 2>"$TMP/task.rerr" ||
	fail "report --html of the -T record failed: $(cat "$TMP/task.rerr")"
"$CGTMA" report "$TMP/task.cgtma" >"$TMP/task.txt" 2>"$TMP/task.rerr" ||
	fail "report of the -T record failed: $(cat "$TMP/task.rerr")"
tids=$(sed -n 's/^  [^ ]*:\([0-9][0-9]*\) .*/\1/p' "$TMP/task.txt" | sort -un)
[ -n "$tids" ] || fail "the text report of the -T record has no thread: $(cat "$TMP/task.txt")"
charts=("system:system" "cgroup:$CG")
for t in $tids; do charts+=("task:$CG:$t"); done
check_page "$TMP/task.html" "${charts[@]}"
# In page order: the cgroup's chart, then its threads'.
grep -o 'data-kind="[a-z]*"' "$TMP/task.html" | sed -n 2,3p | tr '\n' ' ' |
	grep -q '^data-kind="cgroup" data-kind="task" $' || fail "the threads do not follow their cgroup"
n=$(echo "$tids" | wc -l)
grep -qF "the system, 1 cgroup and $n thread" "$TMP/task.html" ||
	fail "the header does not count $n thread(s): $(grep -o 'the system[^<]*' "$TMP/task.html")"
exit 0
