#!/bin/bash
# import-debian12.sh: gives podman a local `debian:12` image where no image registry is
# reachable (this project's test machines): debootstrap --variant=minbase of bookworm from
# the machine's Debian mirror, packed into a tarball that is kept, and `podman import`ed as
# docker.io/library/debian:12, the name the Containerfile's FROM resolves to.
#
#   tools/container/import-debian12.sh [CACHE_DIR]
#
# CACHE_DIR (default $CGTMA_FLEET_CACHE, then /var/cache/cgtma-fleet) keeps
# debian12-minbase.tar; a second run only imports it (seconds), and nothing happens when
# podman already has the image. Needs root, debootstrap and the mirror (about 90 s here).
# Exit status: 0 done, 1 failed (the reason on stderr).
# (The kernel matrix's root, tests/vm/, is no stand-in: an ext4 image with the guests'
# runtime packages and mount points added, where debian:12 is a plain minbase.)
set -u

cache=${1:-${CGTMA_FLEET_CACHE:-/var/cache/cgtma-fleet}}
tar=$cache/debian12-minbase.tar
image=docker.io/library/debian:12

err() { echo "import-debian12: $*" >&2; exit 1; }

podman image exists "$image" 2>/dev/null && exit 0
if [ ! -s "$tar" ]; then
	command -v debootstrap >/dev/null || err "debootstrap is not installed (tools/install-deps.sh test)"
	# The mirror the machine's apt uses (deb822 sources first, then sources.list).
	mirror=${CGTMA_FLEET_MIRROR:-$(
		{
			awk '/^URIs:/ && !/security/ { print $2 }' /etc/apt/sources.list.d/*.sources 2>/dev/null
			sed -e 's/\[[^]]*\]//' /etc/apt/sources.list 2>/dev/null |
				awk '$1 == "deb" && $3 !~ /-security/ { print $2 }'
		} | head -n1
	)}
	[ -n "$mirror" ] || err "no Debian mirror in /etc/apt/sources.list{,.d/*}: set CGTMA_FLEET_MIRROR"
	mkdir -p "$cache" || err "cannot make $cache"
	tmp=$(mktemp -d "$cache/tmp.XXXXXX") || err "cannot make a directory in $cache"
	trap 'rm -rf "$tmp"' EXIT
	echo "import-debian12: debootstrap --variant=minbase bookworm from $mirror" >&2
	debootstrap --variant=minbase bookworm "$tmp/root" "$mirror" >"$tmp/log" 2>&1 ||
		err "debootstrap failed: $(tail -n 3 "$tmp/log")"
	# As Debian's own image: no package lists or downloaded packages, and the security
	# suite in the sources (debootstrap writes only the main suite).
	rm -rf "$tmp"/root/var/lib/apt/lists/* "$tmp"/root/var/cache/apt/archives/*.deb
	sec=${mirror%/}
	sec=${sec%/debian}/debian-security
	echo "deb $sec bookworm-security main" >>"$tmp/root/etc/apt/sources.list"
	tar -C "$tmp/root" --numeric-owner -cf "$tmp/root.tar" . || err "cannot pack the root"
	mv "$tmp/root.tar" "$tar" || err "cannot keep $tar"
fi
podman import --change 'CMD ["bash"]' "$tar" "$image" >/dev/null ||
	err "podman import $tar failed"
echo "import-debian12: $image from $tar" >&2
