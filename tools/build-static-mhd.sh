#!/bin/sh
# build-static-mhd.sh: libmicrohttpd as a static archive without TLS, for `make static`.
#
#   tools/build-static-mhd.sh DIR
#
# Debian's libmicrohttpd.a needs GnuTLS, whose own static form needs p11-kit, which Debian
# ships shared only; cgtma serves /metrics over plain HTTP and never uses TLS. So this
# fetches Debian's source package of libmicrohttpd (the same bookworm sources, patches
# applied by dpkg-source) and builds it with HTTPS off, installing DIR/lib/libmicrohttpd.a
# and DIR/include/microhttpd.h. apt-get source needs deb-src lines, which a machine rarely
# has: a private apt configuration under DIR/apt names the machine's own Debian mirrors as
# deb-src, signed by Debian's archive keyring, and leaves the system's apt untouched. The
# downloaded source is kept in DIR/src: a second run only builds. Needs the mirror, dpkg-dev
# (dpkg-source) and a C compiler; no root. Exit status 0 done, 1 failed (the reason on stderr).
#
# CGTMA_MHD_CACHE=CACHE keeps what it built in CACHE, outside the build directory, under a
# key of the source version apt offers, the compiler and this script, and takes it from
# there next time: .ci/run sets it, so that CI's fresh clones build it once per machine
# (45 s a run otherwise, most of it configure and the download).
set -eu

dir=$(mkdir -p "$1" && cd "$1" && pwd)
err() { echo "build-static-mhd: $*" >&2; exit 1; }

cache=''
if [ -n "${CGTMA_MHD_CACHE:-}" ]; then
	ver=$(apt-cache show --no-all-versions libmicrohttpd12 2>/dev/null |
		sed -n 's/^Version: //p' | head -n1)
	key=$({ cat "$0"; echo "$ver"; "${CC:-gcc}" --version | head -n1; } | sha256sum | cut -c1-16)
	cache=$CGTMA_MHD_CACHE/$key
	if [ -f "$cache/lib/libmicrohttpd.a" ] && [ -f "$cache/include/microhttpd.h" ]; then
		rm -rf "$dir/lib" "$dir/include"
		mkdir -p "$dir/lib" "$dir/include"
		cp "$cache/lib/libmicrohttpd.a" "$dir/lib/" &&
			cp "$cache/include/microhttpd.h" "$dir/include/" && exit 0
		err "cannot copy libmicrohttpd from $cache"
	fi
fi
command -v dpkg-source >/dev/null || err "dpkg-source is missing (tools/install-deps.sh static installs dpkg-dev)"

src=$(ls -d "$dir"/src/libmicrohttpd-*/ 2>/dev/null | head -n1)
if [ -z "$src" ]; then
	apt=$dir/apt
	rm -rf "$apt" "$dir/src"
	mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$apt/parts" "$dir/src"
	# The machine's Debian mirrors (deb822 sources first, then sources.list) with the suites
	# of its release, as deb-src; other vendors' sources are left out.
	codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
	[ -n "$codename" ] || err "no VERSION_CODENAME in /etc/os-release: which Debian release is this?"
	{
		awk '/^URIs:/ { u = $2 } /^Suites:/ { for (i = 2; i <= NF; i++) print u, $i }' \
			/etc/apt/sources.list.d/*.sources 2>/dev/null || true
		sed -e 's/\[[^]]*\]//' /etc/apt/sources.list 2>/dev/null |
			awk '$1 == "deb" { print $2, $3 }' || true
	} | awk -v c="$codename" '$2 == c || $2 == c "-updates" || $2 == c "-security"' | sort -u |
		while read -r uri suite; do
			echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $uri $suite main"
		done >"$apt/sources.list"
	[ -s "$apt/sources.list" ] || err "no Debian mirror in /etc/apt/sources.list{,.d/*.sources}"
	set -- -o Dir::Etc::SourceList="$apt/sources.list" -o Dir::Etc::SourceParts="$apt/parts" \
		-o Dir::State::Lists="$apt/lists" -o Dir::Cache="$apt/cache" \
		-o Acquire::Languages=none -o APT::Sandbox::User="$(id -un)"
	apt-get -q "$@" update >"$apt/log" 2>&1 || err "apt-get update of the deb-src lists failed: $(tail -n 3 "$apt/log")"
	(cd "$dir/src" && apt-get -q "$@" source libmicrohttpd) >>"$apt/log" 2>&1 ||
		err "apt-get source libmicrohttpd failed: $(tail -n 3 "$apt/log")"
	rm -rf "$apt"
	src=$(ls -d "$dir"/src/libmicrohttpd-*/ 2>/dev/null | head -n1)
	[ -n "$src" ] || err "apt-get source unpacked no libmicrohttpd-*/ in $dir/src"
fi

# Out of the source tree, so that a failed build starts again from clean sources. Only what
# cgtma calls: a daemon answering GET with a buffer; no TLS, no authentication, no POST
# parsing, no upgrade.
rm -rf "$dir/obj" "$dir/lib" "$dir/include"
mkdir -p "$dir/obj"
cd "$dir/obj"
"${src}configure" --prefix="$dir" --disable-shared --enable-static --disable-https \
	--without-gnutls --disable-doc --disable-examples --disable-curl --disable-postprocessor \
	--disable-dauth --disable-bauth --disable-httpupgrade --disable-nls \
	CC="${CC:-gcc}" CFLAGS="-O2" >configure.log 2>&1 ||
	err "configure failed: $(tail -n 5 configure.log)"
make -j"$(nproc)" -C src/microhttpd install-libLTLIBRARIES >make.log 2>&1 &&
	make -C src/include install >>make.log 2>&1 || err "make failed: $(tail -n 10 make.log)"
[ -f "$dir/lib/libmicrohttpd.a" ] && [ -f "$dir/include/microhttpd.h" ] ||
	err "no $dir/lib/libmicrohttpd.a and $dir/include/microhttpd.h after make install"
# Into the cache whole or not at all (a directory renamed into place); a cache it cannot
# write fails nothing.
if [ -n "$cache" ]; then
	tmp=$cache.tmp.$$
	mkdir -p "$tmp/lib" "$tmp/include" 2>/dev/null &&
		cp "$dir/lib/libmicrohttpd.a" "$tmp/lib/" &&
		cp "$dir/include/microhttpd.h" "$tmp/include/" &&
		mv -T "$tmp" "$cache" 2>/dev/null || rm -rf "$tmp"
fi
