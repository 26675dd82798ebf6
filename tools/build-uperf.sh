#!/bin/sh
# Builds uperf (the network benchmark tests/live/25-uperf.sh runs) from its source, which
# Debian does not package.
#
#   tools/build-uperf.sh SRC_DIR [PREFIX]
#
#   SRC_DIR  a checkout or release tarball of https://github.com/uperf/uperf (git clone
#            https://github.com/uperf/uperf, or a release's "Source code" archive, unpacked)
#   PREFIX   where `make install` puts it (default /usr/local: the binary is then
#            /usr/local/bin/uperf, on the PATH the tests use)
#
# Installs the Debian packages the build needs, only those missing (apt-get; needs root
# then), runs autoreconf, configure and make in SRC_DIR, installs, and prints where the
# binary went. Nothing of uperf's source is part of cgtma. Exit status: 0 built, 1 the build
# failed, 2 bad usage.
set -eu

usage() { echo "usage: $0 SRC_DIR [PREFIX]" >&2; exit 2; }
[ $# -ge 1 ] && [ $# -le 2 ] || usage
src=$1
prefix=${2:-/usr/local}
if [ ! -f "$src/configure.ac" ] || [ ! -d "$src/src" ]; then
	echo "$0: $src is not uperf's source (no configure.ac and src/ there); get it from" \
		"https://github.com/uperf/uperf" >&2
	exit 2
fi

# autoreconf's tools, the compiler, and the libraries configure finds for SCTP and SSL.
pkgs="autoconf automake libtool make gcc pkg-config libsctp-dev libssl-dev"
missing=""
for p in $pkgs; do
	dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing="$missing $p"
done
if [ -n "$missing" ]; then
	if [ "$(id -u)" != 0 ]; then
		echo "$0: missing packages:$missing; install them with: sudo apt-get install" \
			"$missing" >&2
		exit 1
	fi
	echo "installing:$missing"
	# shellcheck disable=SC2086
	DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $missing ||
		{ echo "$0: apt-get install$missing failed" >&2; exit 1; }
fi

cd "$src"
jobs=$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1)
autoreconf --install >autoreconf.log 2>&1 ||
	{ tail -n 20 autoreconf.log >&2; echo "$0: autoreconf failed ($src/autoreconf.log)" >&2; exit 1; }
./configure --prefix="$prefix" >configure.log 2>&1 ||
	{ tail -n 20 configure.log >&2; echo "$0: configure failed ($src/configure.log)" >&2; exit 1; }
make -j"$jobs" >make.log 2>&1 ||
	{ tail -n 20 make.log >&2; echo "$0: make failed ($src/make.log)" >&2; exit 1; }
make install >install.log 2>&1 ||
	{ tail -n 20 install.log >&2; echo "$0: make install failed ($src/install.log)" >&2; exit 1; }
"$prefix/bin/uperf" -V >/dev/null 2>&1 || [ -x "$prefix/bin/uperf" ] ||
	{ echo "$0: no $prefix/bin/uperf after make install" >&2; exit 1; }
echo "uperf: $prefix/bin/uperf"
