#!/bin/sh
# Installs the Debian packages cgtma needs, and only the missing ones.
#
#   tools/install-deps.sh build   what `make` needs (compilers, libbpf, libpfm4, json-c, ...)
#   tools/install-deps.sh static  the above, plus what `make static` needs
#   tools/install-deps.sh test    the above, plus what `make test` and `make bench` run
#   tools/install-deps.sh vm      the above, plus what `make test-kernels` boots guests with
#   tools/install-deps.sh --list SET   prints SET's packages, one a line, and installs nothing
#
# A second argument, the target architecture (x86 or arm64; default this machine's), adds a
# cross compiler and the target's libraries when it is not this machine's (`make ARCH=arm64`
# on x86): Debian's multiarch installs them beside the native ones once dpkg knows the
# architecture (dpkg --add-architecture, done here).
#
# Debian 12 (bookworm) is the reference; package names are Debian's. Without root, it lists
# what is missing and the command to install it, and fails.
set -eu

list=false
if [ "${1:-}" = --list ]; then
	list=true
	shift
fi
what=${1:-build}
host_arch=$(uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')
arch=${2:-$host_arch}
case $arch in
x86 | x86_64) arch=x86 deb_arch=amd64 cross=x86-64 ;;
arm64 | aarch64) arch=arm64 deb_arch=arm64 cross=aarch64 ;;
*) echo "$0: architecture '$arch': expected x86 or arm64" >&2; exit 2 ;;
esac

build_pkgs="make gcc clang llvm pkg-config bpftool libbpf-dev libelf-dev libdw-dev zlib1g-dev
	libpfm4-dev libjson-c-dev libmicrohttpd-dev"
# scdoc builds the man pages (docs/man/*.8.scd).
build_pkgs="$build_pkgs scdoc"
# make static links Debian's own static archives (libbpf.a, libelf.a, libz.a, libpfm.a,
# libjson-c.a and glibc's libc.a come with the build packages) and builds libmicrohttpd from
# Debian's source package without TLS (tools/build-static-mhd.sh): dpkg-source unpacks it,
# xz its tarballs; `file` tells the tests the binary is static; libdw.a (libdw-dev) needs the
# static bzip2 and xz decompressors.
static_pkgs="dpkg-dev xz-utils file libbz2-dev liblzma-dev"
# jq reads JSON in the shell tests; linux-perf gives `perf bench` and the perf comparison;
# prometheus is the real scraper of the exporter test; chromium renders the HTML report;
# iproute2, procps, util-linux and curl are what the tests drive workloads with; iperf3 is the
# network stream of the interrupt tests and benchmark; podman (with Debian's crun) runs the
# container tests from a busybox-static root file system, as no image registry is needed;
# capsh (libcap2-bin) drops a capability for the cgroup-namespace test's subtree view;
# python3 runs crucible's post-process and, with python3-yaml, reads the DaemonSet manifest
# in the fleet test, and debootstrap (with the archive's keyring, which it only recommends)
# makes the debian:12 base image its container build starts from
# (tools/container/import-debian12.sh). uperf is not in Debian 12: 25-uperf skips unless
# tools/build-uperf.sh built it from its source. tests/check-deps.sh checks this list.
test_pkgs="jq iproute2 procps util-linux curl xz-utils linux-perf prometheus chromium
	fonts-dejavu-core iperf3 podman busybox-static libcap2-bin python3 python3-yaml
	debootstrap debian-archive-keyring"
# groff checks the man pages (tests/docs/check-man.sh: groff -man -ww -z).
test_pkgs="$test_pkgs groff-base"
# go tool pprof (golang-go) reads report's --pprof file (tests/tools/check-pprof.sh).
test_pkgs="$test_pkgs golang-go"
# gdb stops cgtma in its option parsing to send it a signal there (tests/live/14-signals.sh).
test_pkgs="$test_pkgs gdb"
# The kernel matrix (tests/vm/): QEMU runs the guests, debootstrap builds their root file
# system; the keyring checks the other suites' kernel packages; depmod (kmod), busybox-static
# and cpio make each kernel's initramfs, mkfs.ext4 (e2fsprogs) the root image.
vm_pkgs="qemu-system-x86 debootstrap debian-archive-keyring kmod busybox-static cpio e2fsprogs"
# Its arm64 rows: qemu-system-aarch64 (qemu-system-arm), and debootstrap of an arm64 root
# runs the packages' scripts through qemu-user-static registered with binfmt_misc.
vm_pkgs="$vm_pkgs qemu-system-arm qemu-user-static binfmt-support"
# The cross build's compiler and the target's libraries (Debian multiarch).
cross_pkgs=""
if [ "$arch" != "$host_arch" ]; then
	cross_pkgs="gcc-$cross-linux-gnu"
	for p in libbpf-dev libelf-dev libdw-dev zlib1g-dev libpfm4-dev libjson-c-dev libmicrohttpd-dev; do
		cross_pkgs="$cross_pkgs $p:$deb_arch"
	done
fi

case "$what" in
build) pkgs="$build_pkgs $cross_pkgs" ;;
static) pkgs="$build_pkgs $static_pkgs" ;;
# The live tests run the static binary too (tests/live/36-static.sh).
test) pkgs="$build_pkgs $cross_pkgs $static_pkgs $test_pkgs" ;;
# The host's own row of the matrix is the live suite: the test packages too.
vm) pkgs="$build_pkgs $cross_pkgs $static_pkgs $test_pkgs $vm_pkgs" ;;
*) echo "usage: $0 [--list] build|static|test|vm [x86|arm64]" >&2; exit 2 ;;
esac
if $list; then
	# shellcheck disable=SC2086
	printf '%s\n' $pkgs
	exit 0
fi

missing=""
for p in $pkgs; do
	dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing="$missing $p"
done

# clang's sanitizer and libFuzzer runtimes come in a package named after clang's major
# version (14 on Debian 12, whose clang is installed above when missing).
major=14
command -v clang >/dev/null 2>&1 && major=$(clang -dumpversion | cut -d. -f1)
dpkg-query -W -f='${Status}\n' "libclang-rt-$major-dev" 2>/dev/null | grep -q "install ok installed" ||
	missing="$missing libclang-rt-$major-dev"

[ -z "$missing" ] && exit 0

if [ "$(id -u)" != 0 ]; then
	echo "cgtma: missing packages:$missing" >&2
	echo "cgtma: install them with: sudo apt-get install$missing" >&2
	exit 1
fi

echo "cgtma: installing$missing" >&2
export DEBIAN_FRONTEND=noninteractive
# The target's libraries come from its architecture's package lists.
if [ -n "$cross_pkgs" ] && ! dpkg --print-foreign-architectures | grep -qx "$deb_arch"; then
	dpkg --add-architecture "$deb_arch"
fi
# Installing a server package (prometheus) must not start it as a system service: the tests
# run their own instance on a free loopback port. policy-rc.d is Debian's switch for that.
policy=/usr/sbin/policy-rc.d
if [ ! -e "$policy" ]; then
	printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod 755 "$policy"
	trap 'rm -f "$policy"' EXIT INT TERM
fi
# A fresh machine has no package lists; an old list may name versions no longer served.
apt-get -o DPkg::Lock::Timeout=900 update -q >/dev/null
# shellcheck disable=SC2086
apt-get -o DPkg::Lock::Timeout=900 install -y -q --no-install-recommends $missing >/dev/null
