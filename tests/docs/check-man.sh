#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The man pages against the commands: tests/docs/check-man.sh BUILD_DIR
#
# For cgtma and each subcommand, every long option its --help shows must appear in its man
# page (BUILD_DIR/man/*.8, built from docs/man/*.8.scd), as a whole word: --model is not
# found in --model-file. And groff, warning about everything (-ww), must have nothing to say
# about any page. Needs no root. Exit 1 on any failure, each one named.
set -u
build=${1:-build}
cgtma=$build/cgtma
status=0

fail() {
	echo "FAIL: $*"
	status=1
}

# missing_options HELP PAGE: the long options in the text HELP that PAGE (roff) lacks.
missing_options() {
	local opt
	grep -oE -- '--[a-z][a-z0-9-]*' <<<"$1" | sort -u | while read -r opt; do
		grep -qE -- "$opt([^a-z0-9-]|\$)" "$2" || echo "$opt"
	done
}

# check_page PAGE [SUBCOMMAND]: PAGE documents every long option of cgtma [SUBCOMMAND] --help.
check_page() {
	local page=$build/man/$1.8 help missing n
	shift
	[ -s "$page" ] || { fail "$page: missing or empty (make builds it)"; return; }
	help=$("$cgtma" "$@" --help) || { fail "cgtma ${*:+$* }--help exited $?"; return; }
	n=$(grep -oE -- '--[a-z][a-z0-9-]*' <<<"$help" | sort -u | wc -l)
	[ "$n" -gt 0 ] || { fail "cgtma ${*:+$* }--help shows no long option"; return; }
	missing=$(missing_options "$help" "$page")
	if [ -n "$missing" ]; then
		fail "$page lacks what cgtma ${*:+$* }--help shows:" "${missing//$'\n'/ }"
	else
		echo "ok: $page has the $n long options of cgtma ${*:+$* }--help"
	fi
}

[ -x "$cgtma" ] || { echo "FAIL: no $cgtma (run make)"; exit 1; }

# The check itself must see a missing option, and must not take --model-file for --model.
tmp=$(mktemp -d /tmp/cgtma-check-man.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
printf '.TH t 8\n\\fB--model-file\\fR \\fIFILE\\fR\n--json,\n' >"$tmp/t.8"
got=$(missing_options "  --model NAME  --model-file FILE  --json  --absent-option" "$tmp/t.8" | xargs)
[ "$got" = "--absent-option --model" ] ||
	fail "missing_options found '$got' missing, want '--absent-option --model'"

check_page cgtma
check_page cgtma-report report
check_page cgtma-compute compute
check_page cgtma-list-events list-events

# One --prometheus port in every example a user may copy (--help, README, docs, man pages,
# the image and the DaemonSet): the OpenTelemetry exporter's 9464, not node_exporter's 9100.
ports=$( { "$cgtma" --help; cat README.md docs/*.md docs/man/*.scd tools/container/Containerfile \
	tools/k8s/*.yaml; } | grep -oE -- '--prometheus"?,? +"?([0-9.]*:)?[0-9]+' |
	grep -oE '[0-9]+$' | sort -u | xargs)
if [ "$ports" = 9464 ]; then
	echo "ok: every --prometheus example serves port 9464"
else
	fail "the --prometheus examples serve ports '$ports', want 9464 alone"
fi

for page in "$build"/man/*.8; do
	warnings=$(groff -man -ww -z "$page" 2>&1)
	if [ -n "$warnings" ]; then
		fail "groff -man -ww -z $page: $warnings"
	else
		echo "ok: groff -man -ww -z $page: no warning"
	fi
done
exit $status
