#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The bash completion (tools/completion/cgtma), driven as bash drives it:
# tests/docs/check-completion.sh BUILD_DIR
#
# Each case sets COMP_LINE, COMP_POINT, COMP_WORDS and COMP_CWORD as bash does for a line
# typed up to the cursor (COMP_WORDS split at blanks and at COMP_WORDBREAKS' '=' and ':'),
# calls _cgtma, and compares COMPREPLY with what it must be. What cgtma lists (models,
# events, options) is asked of BUILD_DIR/cgtma; container names come from the unit tests'
# runtime state fixtures (CGTMA_RUNTIME_ROOT=tests/data/containers); cgroups from this
# machine's cgroup v2 mount, when it has one. Needs no root. Exit 1 on any failure.
set -u
cd "$(dirname "$0")/../.." || exit 1
build=${1:-build}
cgtma=$build/cgtma
[ -x "$cgtma" ] || { echo "FAIL: no $cgtma (run make)"; exit 1; }
# shellcheck source=tools/completion/cgtma
. tools/completion/cgtma
status=0
COMP_WORDBREAKS=${COMP_WORDBREAKS:-$' \t\n"\'><=;|&(:'}

# complete_line LINE: COMPREPLY for LINE completed at its end, sorted, one per line.
complete_line() {
	local line=$1 w parts
	COMP_LINE=$line
	COMP_POINT=${#line}
	COMP_WORDS=()
	read -ra parts <<<"$line"
	[[ $line == *" " ]] && parts+=("")
	for w in "${parts[@]}"; do
		# bash makes '=' and ':' words of their own, and the text around them too
		while [[ $w =~ ^([^=:]*)([=:])(.*)$ ]]; do
			[ -n "${BASH_REMATCH[1]}" ] && COMP_WORDS+=("${BASH_REMATCH[1]}")
			COMP_WORDS+=("${BASH_REMATCH[2]}")
			w=${BASH_REMATCH[3]}
		done
		[[ -n $w || ${#COMP_WORDS[@]} -eq 0 || ${COMP_WORDS[-1]} != [=:] ]] && COMP_WORDS+=("$w")
	done
	COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
	COMPREPLY=()
	_cgtma
	[ ${#COMPREPLY[@]} -gt 0 ] && printf '%s\n' "${COMPREPLY[@]}" | sort
}

# expect LINE WANT...: COMPREPLY for LINE is exactly WANT (in any order).
expect() {
	local line=$1 got want
	shift
	got=$(complete_line "$line" | xargs)
	want=$(for w in "$@"; do printf '%s\n' "$w"; done | sort | xargs)
	if [ "$got" = "$want" ]; then
		echo "ok: '$line' -> ${got:-(nothing)}"
	else
		echo "FAIL: '$line' -> '$got', want '$want'"
		status=1
	fi
}

# expect_has LINE WORD...: COMPREPLY for LINE holds each WORD.
expect_has() {
	local line=$1 got w
	shift
	got=$(complete_line "$line")
	for w in "$@"; do
		grep -qxF -- "$w" <<<"$got" || { echo "FAIL: '$line' does not offer '$w'"; status=1; return; }
	done
	echo "ok: '$line' offers $*"
}

c=$cgtma
# Models, as --list-models names them.
mapfile -t s_models < <("$cgtma" --list-models | awk '$1 ~ /^s/ { print $1 }')
expect_has "$c -M s" spr skx sw
expect "$c -M s" "${s_models[@]}"
expect "$c --model=z" zen4 zen5
expect "$c compute --model z" zen4 zen5

# Subcommands and options, from --help.
expect "$c " compute list-events report
expect "$c re" report
expect "$c --sw" --switch-hook
expect "$c --per-" --per-cpu --per-task
expect_has "$c --" --cgroup --irq --record --prometheus-tasks --all-containers
expect_has "$c -" -G -T -e -M -j
expect "$c report --h" --help --html
expect "$c report --f" --folded --folded-pid
expect "$c --folded-" --folded-pid
expect "$c report --pp" --pprof
# report's output files: file names (tests/docs/ holds the checks' own scripts).
expect "$c report x.cgtma --pprof tests/docs/check-c" tests/docs/check-completion.sh
expect "$c list-events --j" --json
expect "$c -I " 
expect "$c --switch-hook " auto perf-event tracepoint

# Events, from list-events: the model's, the software model's and the generic one's.
expect "$c -M sw -e cpu-" cpu-clock cpu-migrations
expect "$c -M sw -e cpu-clock,con" cpu-clock,context-switches
expect_has "$c -M spr -e TOPDOWN.S" TOPDOWN.SLOTS
expect_has "$c -e cyc" cycles

# --metrics' names and groups, from list-events -m, after '='.
expect "$c -M sw --metrics=CPU_" CPU_Migrations CPU_Utilization
expect "$c -M sw --metrics=Page_Faults,Con" Page_Faults,Context_Switches

# --irq's scopes, after '=' (bash completes the part after it).
expect "$c --irq=NET_R" NET_RX
expect "$c --irq=NET_RX,HR" NET_RX,HRTIMER

# Containers and pods, from the runtimes' state files.
export CGTMA_RUNTIME_ROOT=tests/data/containers
expect "$c -G container:" app db job nginx redis web worker
expect "$c -G container:w" web worker
expect "$c -G pod:" data/cache-0 jobs/batch-x1 prod/api-5c6d shop/frontend-7d4b9
# Where there is no line, COMP_WORDS' words are taken whole, and so are the answers.
unset COMP_LINE COMP_POINT
COMP_WORDS=("$c" -G container:w)
COMP_CWORD=2
COMPREPLY=()
_cgtma
if [ "${COMPREPLY[*]}" = "container:web container:worker" ]; then
	echo "ok: COMP_WORDS ($c -G container:w) alone -> ${COMPREPLY[*]}"
else
	echo "FAIL: COMP_WORDS ($c -G container:w) alone -> '${COMPREPLY[*]}', want 'container:web container:worker'"
	status=1
fi
unset CGTMA_RUNTIME_ROOT

# cgroups under the v2 mount, as -G takes them. Other cgroups may come and go meanwhile:
# exact answers only for a cgroup of the test's own (as root), else that each is one.
mnt=$(awk '{ for (i = 7; i < NF; i++) if ($i == "-") { if ($(i + 1) == "cgroup2") { print $5; exit } break } }' \
	/proc/self/mountinfo)
own=cgtma-comp-$$
if [ -z "$mnt" ]; then
	echo "skip: no cgroup v2 mount here: -G's paths not checked"
elif mkdir "$mnt/$own" 2>/dev/null; then
	trap 'rmdir "$mnt/$own/child" "$mnt/$own" 2>/dev/null' EXIT
	mkdir "$mnt/$own/child" || { echo "FAIL: cannot make $mnt/$own/child"; status=1; }
	expect "$c -G cgtma-comp-$$" "$own/"
	expect "$c -G $own/" "$own/child/"
	expect "$c -G /$own/ch" "/$own/child/"
	expect_has "$c -G " container: pod: "$own/"
else
	while read -r d; do
		[ -d "$mnt/$d" ] || { echo "FAIL: '$c -G ' offers '$d', not a cgroup"; status=1; }
	done < <(complete_line "$c -G " | grep -v ':$')
	echo "ok: '$c -G ' offers cgroups of $mnt only (not root: none made to look for)"
fi

# After "--": the command to run.
expect_has "$c -G / -- ech" echo
exit $status
