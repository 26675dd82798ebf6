#!/bin/sh
# The release tarball builds without git: unpacked where no repository is (a temporary
# directory, GIT_DIR pointing nowhere so no git command can find one), `make` builds cgtma,
# and its --version names the release and the commit from the tarball's VERSION file.
# Usage: tests/dist.sh TARBALL VERSION (make dist-test runs it). Needs no root.
set -eu
tarball=$(readlink -f "$1")
version=$2
fail() { echo "FAIL dist: $*" >&2; exit 1; }

tmp=$(mktemp -d /tmp/cgtma-dist.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
tar -xzf "$tarball" -C "$tmp" || fail "cannot unpack $tarball"
top=$tmp/cgtma-$version
[ -d "$top" ] || fail "$tarball has no cgtma-$version/ at the top: $(ls "$tmp")"
[ ! -e "$top/.git" ] || fail "$tarball holds a .git"
[ -s "$top/VERSION" ] || fail "$tarball has no VERSION file"
commit=$(cat "$top/VERSION")
# Every file of HEAD (what make dist archives), and nothing of build/.
git ls-tree -r --name-only HEAD | sort >"$tmp/want" || fail "git ls-tree HEAD failed"
(cd "$top" && find . -type f ! -name VERSION | sed 's|^\./||' | sort) >"$tmp/got"
cmp -s "$tmp/want" "$tmp/got" ||
	fail "its files are not the repository's: $(diff "$tmp/want" "$tmp/got" | head -n 5)"

GIT_DIR=/nonexistent make -C "$top" -j"$(nproc)" >"$tmp/build.log" 2>&1 ||
	fail "make in the unpacked tarball failed: $(tail -n 15 "$tmp/build.log")"
"$top/build/cgtma" --version >"$tmp/version" || fail "its cgtma --version failed"
head -n 2 "$tmp/version" >"$tmp/got-version"
printf 'cgtma %s\ncommit: %s\n' "$version" "$commit" >"$tmp/want-version"
cmp -s "$tmp/want-version" "$tmp/got-version" ||
	fail "--version says '$(cat "$tmp/version")', want the release $version and commit $commit"
echo "ok dist: $(basename "$tarball") builds without git; --version: $(tr '\n' ' ' <"$tmp/version")"
