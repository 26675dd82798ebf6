#!/bin/bash
# After `tools/install-deps.sh test` (make test-deps): every program a live test skips
# without (`commands_or_skip NAME...`, `command -v NAME || skip`, also in the helper scripts
# under tools/container/ that the tests run, and in the tool checks under tests/tools/) is
# installed, from a package that script installs, so that `make test` on a fresh machine
# runs every test that can run there. uperf is the one exception: Debian 12 has no package
# of it (25-uperf says how to build it).
set -u
cd "$(dirname "$0")/.." || exit 1

files=(tests/live/*.sh tools/container/*.sh tests/tools/*.sh)
names=$(
	grep -ho 'command -v [a-z][a-z0-9_.+-]*' "${files[@]}" | awk '{ print $3 }'
	# lib.sh's commands_or_skip NAME... (its own definition names none)
	grep -ho '^[[:space:]]*commands_or_skip [a-z][a-z0-9_.+ -]*' "${files[@]}" |
		awk '{ for (i = 2; i <= NF; i++) print $i }'
	# for t in a b c; do command -v $t ...
	grep -l 'command -v \$t' "${files[@]}" | xargs -r grep -h '^[[:space:]]*for t in .*; do' |
		sed 's/.*for t in \(.*\); do.*/\1/' | tr ' ' '\n'
)
list=$(tools/install-deps.sh --list test)
# The packages listed, and those they depend on directly (python3 has python3-minimal's
# /usr/bin/python3).
# shellcheck disable=SC2086
pkgs=" $(echo $list) $(dpkg-query -W -f='${Depends}, ${Pre-Depends}\n' $list 2>/dev/null |
	tr ',|' '\n\n' | awk '{ print $1 }' | sed 's/:any$//' | sort -u | tr '\n' ' ') "
bad=0
for n in $(printf '%s\n' $names | sort -u); do
	[ "$n" = uperf ] && continue
	path=$(command -v "$n") || {
		echo "check-deps: '$n' is not installed: no package tools/install-deps.sh test installs has it"
		bad=1
		continue
	}
	# The package of the command as tests call it (python3's, not python3.11's), as dpkg
	# names the path: merged /usr makes /usr/bin/ip dpkg's /bin/ip; a shim (pyenv) in PATH
	# stands for the system's program.
	pkg=
	for f in "$path" "$(readlink -f "$path")" {/usr,}/{bin,sbin}/"$n"; do
		# dpkg -S names diversions too (linux-perf diverts /usr/bin/perf): the owner's line.
		pkg=$(dpkg -S "$f" 2>/dev/null | grep -v '^diversion by' | head -n 1) &&
			[ -n "$pkg" ] && break
	done
	pkg=${pkg%%:*}
	# Essential packages (coreutils' chroot) are on every Debian machine.
	[ -n "$pkg" ] && [ "$(dpkg-query -W -f='${Essential}' "$pkg" 2>/dev/null)" = yes ] && continue
	case $pkg in
	'') echo "check-deps: '$n' ($path) is in no Debian package"; bad=1 ;;
	*) case $pkgs in
	   *" $pkg "*) ;;
	   *) echo "check-deps: '$n' comes from package $pkg, which tools/install-deps.sh test does not install"
	      bad=1 ;;
	   esac ;;
	esac
done
[ $bad = 0 ] && echo "check-deps: every program the live tests need comes from tools/install-deps.sh test"
exit $bad
