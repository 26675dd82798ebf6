# Sourced by live tests that add up a published CDM series (after lib.sh). Gives:
#
#   cdm_sum RAW_CSV CSV IDX
#                       the count that series IDX of CSV (cgtma-post-process's published
#                       rows: rates per second, adjacent equal ones merged) stands for: each
#                       interval the series has a row for in RAW_CSV (the unmerged rows cgtma
#                       wrote; every row end is an interval's end, the system's series has one
#                       in each) counts the published row's value covering it times that
#                       interval's length. Not a row's own span: a series with no value in an
#                       interval (its cgroup did not run) has no row there, and its next row
#                       covers that time too (user/output_cdm.c), at the next interval's rate.
#   cdm_near GOT WANT   true when GOT is within 1 % of WANT (interval ends are whole
#                       milliseconds: rates times them miss a count by a few per mille).

cdm_sum() {
	jq -Rnr --argjson i "$3" --rawfile raw "$1" '
		[$raw | split("\n")[] | select(length > 0) | split(",") | map(tonumber)] as $r |
		([$r[][2]] | unique) as $ends |
		([$r[][1]] | min - 1) as $start |
		[$r[] | select(.[0] == $i) | .[2] as $e |
		 {e: $e, len: ($e - ([$start] + [$ends[] | select(. < $e)] | max))}] as $mine |
		[inputs | split(",") | map(tonumber) | select(.[0] == $i) | . as $p |
		 $mine[] | select(.e >= $p[1] and .e <= $p[2]) | $p[3] * .len / 1000] | add // 0' "$2"
}

cdm_near() { awk -v g="$1" -v w="$2" 'BEGIN { d = g - w; if (d < 0) d = -d; exit !(d <= 0.01 * w) }'; }
