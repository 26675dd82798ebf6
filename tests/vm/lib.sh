# Sourced by tests/vm/run-kernel.sh and tests/vm/test-kernels.sh: the kernel matrix's
# cache, Debian packages, root image, initramfs, QEMU and the report.
#
# Everything lives under one cache directory outside the clone, $CGTMA_VMTEST_CACHE
# (default /var/cache/cgtma-vmtest):
#   apt/SUITE/        a private apt configuration per suite (sources.list, lists, cache);
#                     apt/SUITE-arm64/ the same for the arm64 packages
#   debs/             the kernel packages as downloaded (and arm64's busybox-static)
#   kernels/FAMILY.pkg  the package chosen for a family (5.10, 5.10-rt, 6.1, 6.1-rt, 6.12, 6.18,
#                     arm64-6.1, arm64-6.12)
#   kernels/PKG/      the package extracted, depmod run, and its initramfs
#   busybox-arm64/    arm64's busybox, for the arm64 kernels' initramfs
#   rootfs/           the guests' root images, one per architecture (built once, booted with
#                     snapshot=on)
#   results/ROW/      the last run of each row: console.log, meta, out/ (what the guest wrote)
#   tree/             the copy of the checkout the last run shared with its guests
# A second run downloads and builds nothing; CGTMA_VMTEST_REFRESH=1 asks the archive again
# for the newest kernel of each family.
set -u

VM_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SRC=$(cd "$VM_DIR/../.." && pwd)
CACHE=${CGTMA_VMTEST_CACHE:-/var/cache/cgtma-vmtest}
# Host-side limit of one boot: the live suite takes 8 to 15 minutes under TCG alone, up to
# 24 two at a time (6.1-hybrid and 6.12, 1 December 2026); a guest still running after 45
# has hung.
VM_TIMEOUT=${CGTMA_VMTEST_TIMEOUT:-2700}
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg

# The rows, in the order they run and are shown. A plain `make test-kernels` runs the
# default ones: the kernels users run most, every one of which must pass. Debian's 6.18
# from backports is there to be asked for by name: under TCG its lazy row runs out of time
# in 17, 22 and 27 (docs/kernels.md). The rows of other CPU counts are asked
# for by name too: 5.10-cpus240 and 6.1-cpus240 (2 CPUs online of 240 possible, as cloud VMs
# and 2-socket servers have: per-CPU maps take memory for every possible CPU; run
# 32-kernel-memory there), 6.1-cpus64 (2 online of 64 possible: the middle of make bench's
# table, tests/bench/kmem.sh), 6.1-cpus8 (8 online: single-threaded TCG runs them one at a time,
# so a row takes about 4 times as long), 6.1-smt (4 online, two cores of two hardware threads:
# SMT sharing in 65-noise). The arm64 rows (Debian's arm64 kernels under
# qemu-system-aarch64, an emulated PMU: hardware counters) are asked for by name too.
DEFAULT_ROWS="host 5.10 5.10-rt 6.1 6.1-full 6.1-rt 6.1-hybrid 6.1-nocgroup2 6.12"
ALL_ROWS="$DEFAULT_ROWS 6.18 6.18-voluntary 5.10-cpus240 6.1-cpus240 6.1-cpus64 6.1-cpus8 6.1-smt arm64-6.1 arm64-6.12"

# The guests' root: what cgtma links (libdw1: --sample's symbols), what the live tests run
# (tests/live/*.sh), python3 for crucible's post-process (40-crucible) and prometheus
# (30-prometheus; a 19 MB download).
# Not chromium (hundreds of MB; 51-html says so and skips). perf only in the arm64 root: its
# hardware counters are the oracle of 35-hw-counters (x86 guests have no PMU).
ROOTFS_SUITE=bookworm
ROOTFS_PKGS="libbpf1 libelf1 libdw1 zlib1g libpfm4 libjson-c5 libmicrohttpd12 jq iproute2 procps
	util-linux curl xz-utils kmod bash python3 prometheus"
ROOTFS_PKGS_arm64="linux-perf"
# Raised when the image's content changes in a way the package list does not show.
ROOTFS_REV=1

# Modules the initramfs loads, with what modules.dep says they need: the PCI transport, the
# root disk, ext4 and the checksum it asks the crypto API for at mount time (metadata_csum),
# 9p over virtio for the shared trees, and an entropy source so that early getrandom()
# callers do not wait. Built-in ones (modules.builtin) are left out.
INITRD_MODULES="virtio_pci virtio_blk crc32c_generic crc32c_intel ext4 9pnet_virtio 9p virtio_rng"
# Of those, the boot cannot go on without these.
INITRD_REQUIRED="virtio_pci virtio_blk ext4 9pnet_virtio 9p"

vm_err() { echo "cgtma vm: $*" >&2; }
vm_say() { echo "vm: $*"; }

# 75s, 3m05s
vm_dur() {
	local s=$1
	if [ "$s" -lt 60 ]; then echo "${s}s"; else printf '%dm%02ds\n' $((s / 60)) $((s % 60)); fi
}

# row_def ROW: R_FAMILY (a kernel family, or host), R_CMDLINE (added to the kernel's command
# line), R_LAYOUT (v2, hybrid or v1: the cgroup mounts), R_MODE (suite: the live tests;
# nocgroup2: the one check of a machine without cgroup v2), R_SMP (QEMU's -smp), R_CPU (its
# x86 -cpu under TCG), R_ARCH (the guest's Debian architecture: amd64 or arm64). Fails on an unknown row.
# The arm64 rows boot with ASLR off (norandmaps) and, on QEMU's side, -icount shift=0: user
# space's instruction counts are then exact, run after run (35-hw-counters).
row_def() {
	R_FAMILY='' R_CMDLINE='' R_LAYOUT=v2 R_MODE=suite R_SMP=2 R_ARCH=amd64 R_CPU=max
	case $1 in
	host) R_FAMILY=host R_LAYOUT=host ;;
	5.10) R_FAMILY=5.10 ;;
	5.10-rt) R_FAMILY=5.10-rt ;;
	6.1) R_FAMILY=6.1 ;;
	6.1-full) R_FAMILY=6.1 R_CMDLINE=preempt=full ;;
	6.1-rt) R_FAMILY=6.1-rt ;;
	6.1-hybrid) R_FAMILY=6.1 R_LAYOUT=hybrid ;;
	6.1-nocgroup2) R_FAMILY=6.1 R_LAYOUT=v1 R_MODE=nocgroup2 ;;
	6.12) R_FAMILY=6.12 ;;
	6.18) R_FAMILY=6.18 ;;
	6.18-voluntary) R_FAMILY=6.18 R_CMDLINE=preempt=voluntary ;;
	5.10-cpus240) R_FAMILY=5.10 R_SMP=2,maxcpus=240 ;;
	6.1-cpus240) R_FAMILY=6.1 R_SMP=2,maxcpus=240 ;;
	6.1-cpus64) R_FAMILY=6.1 R_SMP=2,maxcpus=64 ;;
	6.1-cpus8) R_FAMILY=6.1 R_SMP=8 ;;
	# An Intel vendor: Linux reads SMT siblings of AMD CPUs from topoext, which TCG lacks.
	6.1-smt) R_FAMILY=6.1 R_SMP=4,sockets=1,cores=2,threads=2 R_CPU=max,vendor=GenuineIntel ;;
	arm64-6.1) R_FAMILY=arm64-6.1 R_ARCH=arm64 R_CMDLINE=norandmaps ;;
	arm64-6.12) R_FAMILY=arm64-6.12 R_ARCH=arm64 R_CMDLINE=norandmaps ;;
	*) return 1 ;;
	esac
}

# family_def FAMILY: F_SUITE (the Debian release that ships it), F_ARCH (its Debian
# architecture) and F_RE (the package names that qualify; the newest version among them wins).
family_def() {
	F_ARCH=amd64
	case $1 in
	5.10) F_SUITE=bullseye F_RE='^linux-image-5\.10\.0-[0-9]+-amd64$' ;;
	5.10-rt) F_SUITE=bullseye F_RE='^linux-image-5\.10\.0-[0-9]+-rt-amd64$' ;;
	6.1) F_SUITE=bookworm F_RE='^linux-image-6\.1\.0-[0-9]+-amd64$' ;;
	6.1-rt) F_SUITE=bookworm F_RE='^linux-image-6\.1\.0-[0-9]+-rt-amd64$' ;;
	6.12) F_SUITE=trixie F_RE='^linux-image-6\.12\.[0-9]+[^-]*-amd64$' ;;
	6.18) F_SUITE=trixie-backports F_RE='^linux-image-6\.18\.[0-9]+[^-]*-amd64$' ;;
	arm64-6.1) F_SUITE=bookworm F_ARCH=arm64 F_RE='^linux-image-6\.1\.0-[0-9]+-arm64$' ;;
	arm64-6.12) F_SUITE=trixie F_ARCH=arm64 F_RE='^linux-image-6\.12\.[0-9]+[^-]*-arm64$' ;;
	*) return 1 ;;
	esac
}

# The mirrors this machine's apt uses, read now (never written into the tree): MIRROR for
# the releases, SEC_MIRROR for their -security suites. deb822 .sources files and one-line
# sources.list both count; CGTMA_VMTEST_MIRROR and CGTMA_VMTEST_SECURITY_MIRROR override.
host_mirrors() {
	[ -n "${MIRROR:-}" ] && return 0
	local found
	found=$(
		for f in /etc/apt/sources.list.d/*.sources; do
			[ -r "$f" ] || continue
			# One stanza per paragraph; Types must name deb, Enabled must not be no.
			awk 'function flush() {
					if (types ~ /(^| )deb( |$)/ && enabled != "no")
						for (i = 1; i <= nu; i++)
							print (suites ~ /-security/ ? "sec" : "main"), u[i]
					types = suites = enabled = ""; nu = 0
				}
				/^[ \t]*$/ { flush(); next }
				/^Types:/ { types = substr($0, 7) }
				/^Suites:/ { suites = substr($0, 8) }
				/^Enabled:/ { enabled = $2 }
				/^URIs:/ { for (i = 2; i <= NF; i++) u[++nu] = $i }
				END { flush() }' "$f"
		done
		cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
			sed -e 's/\[[^]]*\]//' |
			awk '$1 == "deb" { print ($3 ~ /-security/ ? "sec" : "main"), $2 }'
	)
	MIRROR=${CGTMA_VMTEST_MIRROR:-$(awk '$1 == "main" { print $2; exit }' <<<"$found")}
	SEC_MIRROR=${CGTMA_VMTEST_SECURITY_MIRROR:-$(awk '$1 == "sec" { print $2; exit }' <<<"$found")}
	MIRROR=${MIRROR%/} SEC_MIRROR=${SEC_MIRROR%/}
	if [ -z "$MIRROR" ]; then
		vm_err "no Debian mirror: /etc/apt/sources.list{,.d/*} name none; set CGTMA_VMTEST_MIRROR"
		return 1
	fi
}

# apt_dir SUITE [ARCH]: the private apt directory of SUITE's packages for ARCH (default
# amd64).
apt_dir() {
	if [ "${2:-amd64}" = amd64 ]; then echo "$CACHE/apt/$1"; else echo "$CACHE/apt/$1-$2"; fi
}

# apt_setup SUITE [ARCH]: APT=(options) for apt-get and apt-cache that read only this suite
# and its -security suite, for ARCH (default amd64), from this directory: the machine's own
# sources stay untouched.
apt_setup() {
	local suite=$1 arch=${2:-amd64} d
	d=$(apt_dir "$1" "$arch")
	host_mirrors || return 1
	mkdir -p "$d/lists/partial" "$d/cache/archives/partial" || return 1
	{
		echo "deb [signed-by=$KEYRING] $MIRROR $suite main"
		# Backports have no -security suite of their own.
		[ -n "$SEC_MIRROR" ] && [ "${suite%-backports}" = "$suite" ] &&
			echo "deb [signed-by=$KEYRING] $SEC_MIRROR $suite-security main"
	} >"$d/sources.list"
	# Sandbox::User=root: the cache belongs to root, not to _apt.
	APT=(-o "Dir::Etc::sourcelist=$d/sources.list" -o Dir::Etc::sourceparts=-
		-o "Dir::State::Lists=$d/lists" -o "Dir::Cache=$d/cache"
		-o "APT::Architecture=$arch" -o "APT::Architectures=$arch" -o APT::Sandbox::User=root)
}

# apt_update SUITE [ARCH]: fetches the suite's package lists for ARCH (default amd64), once
# per run and only when asked to or when there are none yet.
apt_update() {
	local suite=$1 arch=${2:-amd64} d log
	d=$(apt_dir "$1" "$arch")
	apt_setup "$suite" "$arch" || return 1
	[ -e "$d/updated" ] && [ -z "${CGTMA_VMTEST_REFRESH:-}" ] && return 0
	case " ${APT_UPDATED:-} " in *" $suite/$arch "*) return 0 ;; esac
	vm_say "apt: package lists of $suite (+security, $arch) from $MIRROR${SEC_MIRROR:+ and $SEC_MIRROR}"
	if ! log=$(apt-get "${APT[@]}" -q update 2>&1); then
		vm_err "apt-get update for $suite failed:"
		printf '%s\n' "$log" | tail -n 5 >&2
		return 1
	fi
	touch "$d/updated"
	APT_UPDATED="${APT_UPDATED:-} $suite/$arch"
}

# resolve_kernel FAMILY: K_CANDIDATES, the family's packages newest first, and K_PKG, the
# first of them. The package fetch_kernel settles on is kept in kernels/FAMILY.pkg, so that
# a later run asks nobody.
resolve_kernel() {
	local fam=$1 f=$CACHE/kernels/$1.pkg names
	family_def "$fam" || { vm_err "kernel family '$fam': unknown"; return 2; }
	if [ -s "$f" ] && [ -z "${CGTMA_VMTEST_REFRESH:-}" ]; then
		K_PKG=$(cat "$f")
		K_CANDIDATES=("$K_PKG")
		return 0
	fi
	apt_update "$F_SUITE" "$F_ARCH" || return 1
	names=$(apt-cache "${APT[@]}" pkgnames linux-image- | grep -E "$F_RE")
	# One "NAME VERSION" line per package (its candidate version), in one apt-cache call,
	# sorted by Debian's version order, newest first.
	K_CANDIDATES=()
	[ -n "$names" ] &&
		mapfile -t K_CANDIDATES < <(apt-cache "${APT[@]}" show --no-all-versions $names 2>/dev/null |
			awk '/^Package:/ { p = $2 } /^Version:/ { print p, $2 }' |
			while read -r n v; do printf '%s %s\n' "$v" "$n"; done |
			sort -r -V | awk '{ print $2 }')
	if [ ${#K_CANDIDATES[@]} -eq 0 ]; then
		vm_err "kernel $fam: no package matching $F_RE in $F_SUITE or $F_SUITE-security"
		return 1
	fi
	K_PKG=${K_CANDIDATES[0]}
	vm_say "kernel $fam: $K_PKG (newest of ${#K_CANDIDATES[@]})"
}

# download_kernel FAMILY: the newest of K_CANDIDATES that the registry serves, into
# $CACHE/debs (an index can name a package its pool no longer has: then the next newest).
# Sets K_PKG.
download_kernel() {
	local fam=$1 tmp log pkg
	family_def "$fam"
	apt_update "$F_SUITE" "$F_ARCH" || return 1
	mkdir -p "$CACHE/debs" "$CACHE/kernels" || return 1
	for pkg in "${K_CANDIDATES[@]}"; do
		tmp=$CACHE/debs/tmp.$$
		rm -rf "$tmp" && mkdir -p "$tmp" || return 1
		vm_say "apt: downloading $pkg"
		if log=$(cd "$tmp" && apt-get "${APT[@]}" -q download "$pkg" 2>&1); then
			mv "$tmp"/*.deb "$CACHE/debs/" && rm -rf "$tmp" || return 1
			K_PKG=$pkg
			return 0
		fi
		vm_err "downloading $pkg failed:"
		printf '%s\n' "$log" | tail -n 5 >&2
		rm -rf "$tmp"
	done
	vm_err "kernel $fam: none of ${K_CANDIDATES[*]} could be downloaded"
	return 1
}

# fetch_kernel FAMILY: the family's package downloaded and extracted, with depmod run (the
# package leaves that to its postinst). Sets K_PKG, K_DEBVER, K_VER (uname -r), K_IMAGE,
# K_MODDIR, K_CONFIG.
fetch_kernel() {
	local fam=$1 dir deb tmp log base
	resolve_kernel "$fam" || return
	dir=$CACHE/kernels/$K_PKG
	if [ ! -e "$dir/kernel.env" ]; then
		deb=$(ls "$CACHE/debs/${K_PKG}_"*.deb 2>/dev/null | tail -n1)
		if [ -z "$deb" ]; then
			download_kernel "$fam" || return 1
			dir=$CACHE/kernels/$K_PKG
			deb=$(ls "$CACHE/debs/${K_PKG}_"*.deb | tail -n1)
		fi
		tmp=$dir.tmp.$$
		rm -rf "$tmp" && mkdir -p "$tmp/root" || return 1
		dpkg-deb -x "$deb" "$tmp/root" || { vm_err "$deb: dpkg-deb -x failed"; rm -rf "$tmp"; return 1; }
		# bookworm's packages put modules in /lib/modules, trixie's in /usr/lib/modules.
		K_MODDIR=$(ls -d "$tmp"/root/lib/modules/* "$tmp"/root/usr/lib/modules/* 2>/dev/null | head -n1)
		K_VER=${K_MODDIR##*/}
		K_IMAGE=$tmp/root/boot/vmlinuz-$K_VER
		if [ -z "$K_MODDIR" ] || [ ! -f "$K_IMAGE" ]; then
			vm_err "$deb: no boot/vmlinuz-VERSION and lib/modules/VERSION in the package"
			rm -rf "$tmp"
			return 1
		fi
		base=${K_MODDIR%/lib/modules/*}
		depmod -b "$base" "$K_VER" || { vm_err "$K_PKG: depmod failed"; rm -rf "$tmp"; return 1; }
		K_DEBVER=$(dpkg-deb -f "$deb" Version)
		{
			printf 'K_VER=%q\nK_DEBVER=%q\n' "$K_VER" "$K_DEBVER"
			printf 'K_IMAGE=%q\n' "$dir/root/boot/vmlinuz-$K_VER"
			printf 'K_MODDIR=%q\n' "$dir/${K_MODDIR#"$tmp"/}"
			printf 'K_CONFIG=%q\n' "$dir/root/boot/config-$K_VER"
		} >"$tmp/kernel.env"
		rm -rf "$dir" && mv "$tmp" "$dir" || return 1
	fi
	# Written whole (a file beside it, renamed), and only when it changes: rows of one
	# family run side by side, and one read this file empty while another rewrote it.
	if [ "$(cat "$CACHE/kernels/$fam.pkg" 2>/dev/null)" != "$K_PKG" ]; then
		echo "$K_PKG" >"$CACHE/kernels/$fam.pkg.$BASHPID" &&
			mv -f "$CACHE/kernels/$fam.pkg.$BASHPID" "$CACHE/kernels/$fam.pkg" || return 1
	fi
	. "$dir/kernel.env"
}

# host_deb_arch: this machine's Debian architecture (amd64, arm64).
host_deb_arch() { dpkg --print-architecture; }

# guest_busybox: BUSYBOX, a static busybox for R_ARCH's guests: this machine's own when the
# architectures match (busybox-static, which tools/install-deps.sh vm installs), else
# Debian's busybox-static of ROOTFS_SUITE for R_ARCH, downloaded and extracted once.
guest_busybox() {
	local d=$CACHE/busybox-$R_ARCH tmp log
	if [ "$R_ARCH" = "$(host_deb_arch)" ]; then
		BUSYBOX=/bin/busybox
		[ -x /bin/busybox ] && /bin/busybox --list | grep -qx switch_root && return 0
		vm_err "/bin/busybox: missing or without switch_root (tools/install-deps.sh vm installs busybox-static)"
		return 1
	fi
	BUSYBOX=$d/busybox
	[ -s "$BUSYBOX" ] && return 0
	apt_update "$ROOTFS_SUITE" "$R_ARCH" || return 1
	tmp=$d.tmp.$$
	rm -rf "$tmp" && mkdir -p "$tmp" || return 1
	vm_say "apt: downloading busybox-static ($R_ARCH)"
	if ! log=$(cd "$tmp" && apt-get "${APT[@]}" -q download busybox-static 2>&1) ||
		! dpkg-deb -x "$tmp"/busybox-static_*.deb "$tmp/root" || [ ! -s "$tmp/root/bin/busybox" ]; then
		vm_err "busybox-static for $R_ARCH: cannot download or extract it:"
		printf '%s\n' "$log" | tail -n 5 >&2
		rm -rf "$tmp"
		return 1
	fi
	rm -rf "$d" && mkdir -p "$d" && mv "$tmp/root/bin/busybox" "$BUSYBOX" && rm -rf "$tmp"
}

# build_initrd: K_INITRD, the initramfs of the kernel fetch_kernel set up: busybox, the
# modules of INITRD_MODULES and what they need, decompressed (busybox's insmod reads plain
# ELF) and numbered in load order, and tests/vm/initramfs-init as /init. Named after a hash
# of what goes in, so an edit of the init script or the list makes a new one.
build_initrd() {
	local kdir=$CACHE/kernels/$K_PKG key tmp m p n=0 order
	guest_busybox || return 1
	key=$({ cat "$VM_DIR/initramfs-init"; echo "$INITRD_MODULES"; sha256sum "$BUSYBOX"; } |
		sha256sum | cut -c1-12)
	K_INITRD=$kdir/initrd-$key.cpio.gz
	[ -s "$K_INITRD" ] && return 0
	order=$(modules_in_order "$K_MODDIR" $INITRD_MODULES) || return 1
	tmp=$kdir/initrd.tmp.$$
	rm -rf "$tmp" && mkdir -p "$tmp/bin" "$tmp/modules" || return 1
	cp "$BUSYBOX" "$tmp/bin/busybox" && cp "$VM_DIR/initramfs-init" "$tmp/init" && chmod 755 "$tmp/init" ||
		return 1
	for p in $order; do
		n=$((n + 1))
		m=$(printf '%02d-%s.ko' $n "$(basename "${p%%.ko*}")")
		case $p in
		*.ko) cp "$K_MODDIR/$p" "$tmp/modules/$m" ;;
		*.ko.xz) xz -dc "$K_MODDIR/$p" >"$tmp/modules/$m" ;;
		*.ko.zst) zstd -qdc "$K_MODDIR/$p" >"$tmp/modules/$m" ;;
		*.ko.gz) gzip -dc "$K_MODDIR/$p" >"$tmp/modules/$m" ;;
		*) false ;;
		esac || { vm_err "$K_MODDIR/$p: cannot copy or decompress it"; return 1; }
	done
	(cd "$tmp" && find . | LC_ALL=C sort | cpio -o -H newc --quiet | gzip -1) >"$K_INITRD.tmp" &&
		mv "$K_INITRD.tmp" "$K_INITRD" && rm -rf "$tmp"
}

# modules_in_order MODDIR NAME...: the module files (relative to MODDIR) to load for NAMEs,
# each after what it needs (modules.dep lists every dependency: a depth-first walk gives
# the order). Built-in modules are skipped; a missing one fails only if INITRD_REQUIRED
# names it.
modules_in_order() {
	local moddir=$1
	shift
	awk -v want="$*" -v required="$INITRD_REQUIRED" -v dir="$moddir" '
		function norm(p) { sub(/.*\//, "", p); sub(/\.ko.*/, "", p); gsub(/-/, "_", p); return p }
		function visit(p,   i, n, d) {
			if (p in seen) return
			seen[p] = 1
			n = split(deps[p], d, " ")
			for (i = 1; i <= n; i++) visit(d[i])
			print p
		}
		FILENAME ~ /modules.builtin$/ { builtin[norm($1)] = 1; next }
		{ p = $1; sub(/:$/, "", p); path[norm(p)] = p; $1 = ""; deps[p] = $0 }
		END {
			n = split(want, w, " ")
			for (i = 1; i <= n; i++) {
				if (w[i] in builtin) continue
				if (!(w[i] in path)) {
					if ((" " required " ") ~ (" " w[i] " ")) {
						print "cgtma vm: " dir ": module " w[i] " is neither built in nor in modules.dep" > "/dev/stderr"
						bad = 1
					}
					continue
				}
				visit(path[w[i]])
			}
			exit bad
		}' "$moddir/modules.builtin" "$moddir/modules.dep"
}

# foreign_exec ARCH: whether this machine runs ARCH's binaries (debootstrap runs the
# packages' scripts in the new root): qemu-user-static registered with binfmt_misc, which
# this mounts and enables when it is not yet (a machine without systemd does neither).
foreign_exec() {
	local q
	case $1 in
	arm64) q=qemu-aarch64 ;;
	amd64) q=qemu-x86_64 ;;
	esac
	[ -e "/proc/sys/fs/binfmt_misc/$q" ] && return 0
	mountpoint -q /proc/sys/fs/binfmt_misc ||
		mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc 2>/dev/null
	command -v update-binfmts >/dev/null && update-binfmts --enable "$q" >/dev/null 2>&1
	[ -e "/proc/sys/fs/binfmt_misc/$q" ] && return 0
	vm_err "cannot run $1 binaries here: no binfmt_misc entry $q (tools/install-deps.sh vm installs qemu-user-static and binfmt-support)"
	return 1
}

# build_rootfs: ROOTFS, the guests' root image for R_ARCH: debootstrap --variant=minbase of
# ROOTFS_SUITE with ROOTFS_PKGS (and the architecture's ROOTFS_PKGS_ARCH), made into an ext4
# image with room to spare (the guest's writes go to QEMU's snapshot, the image itself never
# changes).
build_rootfs() {
	local key tmp mb t0=$SECONDS pkgs=$ROOTFS_PKGS name=$ROOTFS_SUITE extra
	if [ "$R_ARCH" = amd64 ]; then
		key=$(echo "$ROOTFS_SUITE $ROOTFS_PKGS $ROOTFS_REV" | sha256sum | cut -c1-12)
	else
		extra=ROOTFS_PKGS_$R_ARCH
		pkgs="$pkgs ${!extra:-}" name=$ROOTFS_SUITE-$R_ARCH
		key=$(echo "$ROOTFS_SUITE $R_ARCH $pkgs $ROOTFS_REV" | sha256sum | cut -c1-12)
	fi
	ROOTFS=$CACHE/rootfs/$name-$key.img
	[ -s "$ROOTFS" ] && return 0
	command -v debootstrap >/dev/null && command -v mkfs.ext4 >/dev/null || {
		vm_err "debootstrap or mkfs.ext4 missing (tools/install-deps.sh vm installs them)"
		return 1
	}
	host_mirrors || return 1
	[ "$R_ARCH" = "$(host_deb_arch)" ] || foreign_exec "$R_ARCH" || return 1
	tmp=$CACHE/rootfs/tmp.$$
	rm -rf "$tmp" && mkdir -p "$tmp" || return 1
	vm_say "rootfs: debootstrap $ROOTFS_SUITE $R_ARCH (minbase + $(echo $pkgs | wc -w) packages) from $MIRROR"
	if ! debootstrap --arch="$R_ARCH" --variant=minbase --include="$(echo $pkgs | tr ' ' ,)" \
		"$ROOTFS_SUITE" "$tmp/root" "$MIRROR" >"$tmp/debootstrap.log" 2>&1; then
		vm_err "debootstrap $ROOTFS_SUITE failed (log: $tmp/debootstrap.log):"
		tail -n 8 "$tmp/debootstrap.log" >&2
		return 1
	fi
	# Mount points for the shared trees; no package lists or .debs in the image.
	mkdir -p "$tmp/root/cgtma" "$tmp/root/results" &&
		rm -rf "$tmp"/root/var/cache/apt/archives/*.deb "$tmp"/root/var/lib/apt/lists/* &&
		echo cgtma-vm >"$tmp/root/etc/hostname" || return 1
	mb=$(du -sm "$tmp/root" | cut -f1)
	truncate -s $((mb + 1536))M "$tmp/root.img" &&
		mkfs.ext4 -q -F -L cgtma-root -d "$tmp/root" "$tmp/root.img" || {
		vm_err "mkfs.ext4 of $tmp/root.img failed"
		return 1
	}
	mkdir -p "$CACHE/rootfs" && mv "$tmp/root.img" "$ROOTFS" && rm -rf "$tmp" || return 1
	vm_say "rootfs: $ROOTFS ($((mb))M of files, $(vm_dur $((SECONDS - t0))))"
}

# choose_accel KERNEL_IMAGE: ACCEL (kvm or tcg), ACCEL_ARGS and ACCEL_WHY. KVM only if a
# tiny guest (this kernel, an initramfs that prints a line and powers off) reaches user
# space under it within 20 s: /dev/kvm may be a software hypervisor that cannot boot a stock
# kernel (docs/kernels.md, "Known issues"), and one that boots slower than that is no faster
# than TCG, which reaches user space in 6 to 7 s. CGTMA_VMTEST_ACCEL=kvm|tcg decides without
# a probe; tcg-multi is multi-threaded TCG, for the experiment docs/kernels.md describes
# only.
choose_accel() {
	local image=$1 d=$CACHE/probe rc out
	case ${CGTMA_VMTEST_ACCEL:-} in
	kvm | tcg | tcg-multi) ACCEL=$CGTMA_VMTEST_ACCEL ACCEL_WHY="CGTMA_VMTEST_ACCEL=$ACCEL, no probe" ;;
	'')
		if [ ! -w /dev/kvm ]; then
			ACCEL=tcg ACCEL_WHY="no writable /dev/kvm"
		else
			if [ ! -s "$d/probe.cpio.gz" ]; then
				mkdir -p "$d/root/bin" && cp /bin/busybox "$d/root/bin/" &&
					printf '#!/bin/busybox sh\n/bin/busybox echo cgtma-probe: user space\n/bin/busybox poweroff -f\n' \
						>"$d/root/init" && chmod 755 "$d/root/init" &&
					(cd "$d/root" && find . | cpio -o -H newc --quiet | gzip -1) >"$d/probe.cpio.tmp" &&
					mv "$d/probe.cpio.tmp" "$d/probe.cpio.gz" && rm -rf "$d/root" || return 1
			fi
			rm -f "$d/console.log"
			out=$(timeout -k 5 20 qemu-system-x86_64 -accel kvm -cpu host -m 256 -smp 1 \
				-nographic -monitor none -no-reboot -serial "file:$d/console.log" \
				-kernel "$image" -initrd "$d/probe.cpio.gz" \
				-append "console=ttyS0 panic=-1 loglevel=3" </dev/null 2>&1)
			rc=$?
			if grep -q 'cgtma-probe: user space' "$d/console.log" 2>/dev/null; then
				ACCEL=kvm ACCEL_WHY="a probe guest reached user space under KVM"
			elif [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
				ACCEL=tcg ACCEL_WHY="the KVM probe guest did not reach user space in 20 s"
			else
				ACCEL=tcg
				ACCEL_WHY="the KVM probe failed, qemu exit $rc: $(printf '%s' "$out" | grep -v '^$' | head -n1)"
			fi
		fi
		;;
	*) vm_err "CGTMA_VMTEST_ACCEL='$CGTMA_VMTEST_ACCEL': expected kvm, tcg or tcg-multi"; return 2 ;;
	esac
	if [ "$ACCEL" = kvm ]; then
		ACCEL_ARGS=(-accel kvm -cpu host)
	elif [ "$ACCEL" = tcg-multi ]; then
		# shellcheck disable=SC2054 # tcg,thread=multi is one option's value
		ACCEL_ARGS=(-accel tcg,thread=multi)
	else
		# thread=single: multi-threaded TCG hung with soft lockups while a BPF program
		# attached (QEMU misses the kernel's live code patching; docs/kernels.md).
		# shellcheck disable=SC2054 # tcg,thread=single is one option's value
		ACCEL_ARGS=(-accel tcg,thread=single)
	fi
}

# Kernel messages that mean the kernel is in trouble, whoever caused it.
KLOG_RE='BUG: |WARNING: |Oops|Kernel panic|general protection fault|hard LOCKUP|soft lockup|detected stall|self-detected stall|blocked for more than|segfault at|Kernel BUG'

# klog_scan FILE...: the kernel's messages in FILEs (dmesg, or the console, which carries
# them even when the guest hangs before its dmesg is saved) that match KLOG_RE, each once.
# Only what follows a kernel timestamp counts: the console also carries the tests' output,
# and a kernel line may start in the middle of one of its lines.
klog_scan() {
	cat "$@" 2>/dev/null | tr -d '\r' | grep -E "\[ *[0-9]+\.[0-9]+\] .*($KLOG_RE)" |
		sed 's/^.*\[ *[0-9]*\.[0-9]*\] //' | awk '!seen[$0]++'
}

# resolve_tests [TEST...]: TEST_FILES, the paths (relative to the checkout) of the live
# tests named (12, 12-cpu-stat, 12-cpu-stat.sh or tests/live/12-cpu-stat.sh); all of
# them when none is named. Fails (status 2) on a name that is no test.
resolve_tests() {
	local t m
	TEST_FILES=()
	[ $# -gt 0 ] || set -- "$SRC"/tests/live/[0-9]*.sh
	for t in "$@"; do
		t=${t##*/}
		t=${t%.sh}
		m=$(cd "$SRC" && ls -d tests/live/"$t".sh tests/live/"$t"-*.sh 2>/dev/null)
		if [ "$(printf '%s' "$m" | grep -c .)" != 1 ]; then
			vm_err "live test '$t': ${m:+ambiguous ($(echo $m))}${m:-no tests/live/$t.sh}"
			return 2
		fi
		TEST_FILES+=("$m")
	done
}

# vm_lock: this cache is used by one run at a time (its results/ and the files it builds),
# held until this process exits. What an interrupted run left half-built goes.
vm_lock() {
	mkdir -p "$CACHE" || { vm_err "cannot create the cache directory $CACHE"; return 1; }
	exec 9>"$CACHE/lock"
	flock -n 9 || { vm_err "$CACHE: another run holds $CACHE/lock"; return 1; }
	rm -rf "$CACHE"/rootfs/tmp.* "$CACHE"/debs/tmp.* "$CACHE"/kernels/*.tmp.* \
		"$CACHE"/kernels/*/initrd.tmp.* "$CACHE"/kernels/*/*.cpio.gz.tmp "$CACHE"/tree.tmp.*
}

# prepare_row ROW: what booting ROW needs, fetched or built once: the root image, the
# kernel, its initramfs.
prepare_row() {
	row_def "$1" || { vm_err "kernel '$1': unknown (one of: $ALL_ROWS)"; return 2; }
	[ "$R_FAMILY" = host ] && return 0
	build_rootfs && fetch_kernel "$R_FAMILY" && build_initrd
}

# A QEMU option value: commas doubled.
qarg() { printf '%s' "${1//,/,,}"; }

# console_text: a console log as text: no carriage returns, no terminal control sequences
# (SeaBIOS clears the screen).
console_text() { sed -e 's/\r//g' -e 's/\x1b\[[0-9;?]*[A-Za-z]//g' -e 's/\x1b[A-Za-z]//g'; }

# show_new FILE: prints the lines FILE gained since the last call (complete lines only);
# SHOWN holds how many were shown, SHOW_FILTER the command that prints them.
show_new() {
	local total
	[ -f "$1" ] || return 0
	total=$(wc -l <"$1")
	[ "$total" -gt "$SHOWN" ] || return 0
	sed -n "$((SHOWN + 1)),${total}p" "$1" | console_text | $SHOW_FILTER
	SHOWN=$total
}
show_all() { sed 's/^/  | /'; }
show_results() { grep -E '^(ok   |SKIP |FAIL )' | sed "s/^/  [$ROW] /"; }

# row_setup_failed ROW SECONDS: ROW's results (ROW_PART's) say that fetching or building
# what its kernel needs failed (the messages before say what), after SECONDS.
row_setup_failed() {
	local res=$CACHE/results/$1${ROW_PART:+/part$ROW_PART}
	mkdir -p "$res/fail" || return 1
	echo "setup FAIL" >"$res/cells"
	echo "fetching or building what this kernel needs failed (see the messages above)" \
		>"$res/fail/setup"
	printf 'ROW=%q\nWALL=%q\nMODE_TEXT=%q\n' "$1" "$2" "set-up failed" >"$res/meta"
}

# run_row ROW VERBOSE BUILD [TEST_FILE...]: one row of the matrix, start to end, into
# $CACHE/results/ROW (with ROW_PART=P set, one part of a row split by merge_parts: into
# $CACHE/results/ROW/partP): boots the kernel (or, for host, runs the suite here), then writes
# cells ("COLUMN STATUS" lines: boot, klog, each test, nocg2), skip/TEST, fail/COLUMN and
# meta (a kernel, initrd or root that fails to come: row_setup_failed's). VERBOSE=1 shows
# the guest's console as it comes, 0 only the test results. Returns
# 1 if a cell is FAIL.
run_row() {
	ROW=$1
	local verbose=$2 build=$3 res=$CACHE/results/$1${ROW_PART:+/part$ROW_PART} t0=$SECONDS
	shift 3
	row_def "$ROW" || return 2
	build=$(row_build "$build")
	rm -rf "$res" && mkdir -p "$res/out" "$res/skip" "$res/fail" || return 1
	BOOT_WHY='' BOOT_CMDLINE=''
	SHOWN=0
	if [ "$verbose" = 1 ]; then SHOW_FILTER=show_all; else SHOW_FILTER=show_results; fi
	if [ "$R_FAMILY" = host ]; then
		host_suite "$res" "$build" "$@"
	elif ! guest_boot "$res" "$verbose" "$build" "$@"; then
		row_setup_failed "$ROW" $((SECONDS - t0))
		return 1
	fi
	collect_row "$res" "$BOOT_WHY" "$@"
	{
		printf 'ROW=%q\nWALL=%q\nCMDLINE=%q\n' "$ROW" $((SECONDS - t0)) "$BOOT_CMDLINE"
		[ "$R_FAMILY" != host ] &&
			printf 'PKG=%q\nDEBVER=%q\nACCEL=%q\nGUEST_CPU=%q\n' "$K_PKG" "$K_DEBVER" \
				"$ACCEL" "${GUEST_CPU:-}"
		printf 'MODE_TEXT=%q\n' "$(row_mode_text)"
	} >"$res/meta"
	! grep -q ' FAIL$' "$res/cells"
}

# host_suite RES BUILD [TEST_FILE...]: the host row: the suite run here, into RES/out as a
# guest would have written it.
host_suite() {
	local res=$1 build=$2 up0 pid
	shift 2
	up0=$(cut -d' ' -f1 /proc/uptime)
	(cd "$TREE" && CGTMA_LIVE_LOG_DIR=$res/out/tests exec tests/run-live.sh "$TREE/$build" "$@") \
		>"$res/out/live.log" 2>&1 &
	pid=$!
	while kill -0 $pid 2>/dev/null; do show_new "$res/out/live.log"; sleep 2; done
	wait $pid
	echo $? >"$res/out/rc"
	show_new "$res/out/live.log"
	uname -r >"$res/out/uname"
	uname -v >"$res/out/uname-v"
	cat /sys/kernel/debug/sched/preempt >"$res/out/preempt" 2>/dev/null || rm -f "$res/out/preempt"
	# The kernel's messages since the suite started.
	dmesg | awk -v t="$up0" '{ s = $0; sub(/^\[ */, "", s); split(s, a, "]"); if (a[1] + 0 >= t) print }' \
		>"$res/out/dmesg"
	echo 'done' >"$res/out/done"
}

# children_cpu: CHILDREN_CPU, the CPU seconds this shell's children that ended took
# (/proc's cutime and cstime: QEMU's own, through the timeout that waits for it).
children_cpu() {
	local s
	read -ra s </proc/$BASHPID/stat || return 1
	CHILDREN_CPU=$(((s[15] + s[16]) / $(getconf CLK_TCK)))
}

# guest_boot RES VERBOSE BUILD [TEST_FILE...]: boots ROW's kernel with the root image and
# three 9p shares (the checkout's copy, RES/out, the kernel's modules) and waits for it to
# power off. BOOT_WHY: why the boot failed (a hang, a panic, a set-up error), empty if it
# did not; BOOT_CMDLINE: the kernel's command line; GUEST_CPU: the CPU seconds QEMU took
# (under TCG the guest's work whatever else the machine ran: its time depends on that).
guest_boot() {
	local res=$1 verbose=$2 build=$3 pid rc watched done_at='' p
	shift 3
	local qemu=qemu-system-x86_64 args=("${ACCEL_ARGS[@]}") console=ttyS0,115200
	# TCG's CPU is the row's (R_CPU); KVM's the host's.
	[ "$ACCEL" = kvm ] || args+=(-cpu "$R_CPU")
	fetch_kernel "$R_FAMILY" && build_initrd && build_rootfs || return 1
	if [ "$R_ARCH" = arm64 ]; then
		# TCG on any host; -icount shift=0 makes the virtual clock the instruction count
		# (1 GHz) and the emulated PMU's instructions exact. pauth-impdef: -cpu max's
		# architected pointer authentication is about 5 times slower to emulate.
		ACCEL=tcg-icount qemu=qemu-system-aarch64 console=ttyAMA0
		# shellcheck disable=SC2054 # commas inside one option's value
		args=(-M virt -accel tcg,thread=single -icount shift=0
			-cpu "${CGTMA_VMTEST_ARM64_CPU:-max,pauth-impdef=on}")
	fi
	{
		printf 'ROW=%q\nLAYOUT=%q\nMODE=%q\nBUILD=%q\n' "$ROW" "$R_LAYOUT" "$R_MODE" "$build"
		printf 'TESTS=%q\n' "$*"
		printf 'EMULATION=%q\n' "$([ "$ACCEL" != kvm ] && echo "$ACCEL")"
		printf 'ATTACH_ROUNDS=%q\n' "${CGTMA_ATTACH_ROUNDS:-}"
		printf 'KMEM_EVENTS=%q\n' "${CGTMA_KMEM_EVENTS:-}"
		printf 'LOADED_RUNS=%q\n' "${CGTMA_LOADED_RUNS:-}"
		printf 'LIVE_TIMEOUT=%q\n' "${CGTMA_LIVE_TIMEOUT:-}"
		printf 'LIVE_TRACE=%q\n' "${CGTMA_LIVE_TRACE:-}"
	} >"$res/out/guest.conf"
	children_cpu
	local cpu0=$CHILDREN_CPU
	BOOT_CMDLINE="console=$console loglevel=5 panic=1"
	[ "$R_ARCH" = amd64 ] && [ "$ACCEL" != kvm ] && BOOT_CMDLINE="$BOOT_CMDLINE tsc=reliable"
	BOOT_CMDLINE="$BOOT_CMDLINE${R_CMDLINE:+ $R_CMDLINE}"
	timeout -k 10 "$VM_TIMEOUT" "$qemu" "${args[@]}" -m 2048 -smp "$R_SMP" \
		-nographic -monitor none -no-reboot -nic none \
		-serial "file:$(qarg "$res/console.log")" \
		-kernel "$(qarg "$K_IMAGE")" -initrd "$(qarg "$K_INITRD")" -append "$BOOT_CMDLINE" \
		-drive "file=$(qarg "$ROOTFS"),if=virtio,format=raw,snapshot=on" \
		-fsdev "local,id=src,path=$(qarg "$TREE"),security_model=none,readonly=on,multidevs=remap" \
		-device virtio-9p-pci,fsdev=src,mount_tag=src \
		-fsdev "local,id=res,path=$(qarg "$res/out"),security_model=none" \
		-device virtio-9p-pci,fsdev=res,mount_tag=results \
		-fsdev "local,id=mod,path=$(qarg "$K_MODDIR"),security_model=none,readonly=on" \
		-device virtio-9p-pci,fsdev=mod,mount_tag=modules \
		-device virtio-rng-pci </dev/null >"$res/qemu.log" 2>&1 &
	pid=$!
	vm_say "$ROW: booting $K_VER under $ACCEL ($BOOT_CMDLINE), console: $res/console.log"
	# The console carries the guest's whole story; the results only the tests' lines.
	if [ "$verbose" = 1 ]; then watched=$res/console.log; else watched=$res/out/live.log; fi
	while kill -0 $pid 2>/dev/null; do
		show_new "$watched"
		# A guest that wrote its results powers off at once; one that does not within a
		# minute hangs in its shutdown.
		if [ -e "$res/out/done" ]; then
			: "${done_at:=$SECONDS}"
			if [ $((SECONDS - done_at)) -gt 60 ]; then
				BOOT_WHY="the guest finished but did not power off within 60 s"
				kill $pid
			fi
		fi
		sleep 2
	done
	wait $pid
	rc=$?
	children_cpu
	GUEST_CPU=$((CHILDREN_CPU - cpu0))
	show_new "$watched"
	if [ -n "$BOOT_WHY" ]; then
		:
	elif [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
		BOOT_WHY="hung: no power-off within $VM_TIMEOUT s (CGTMA_VMTEST_TIMEOUT)"
	elif [ -s "$res/out/error" ]; then
		BOOT_WHY="the guest's set-up failed: $(head -n1 "$res/out/error")"
	elif [ ! -e "$res/out/done" ]; then
		BOOT_WHY="the guest stopped before the end (qemu exit $rc)"
		p=$(tr -d '\r' <"$res/console.log" | grep -m1 -E 'Kernel panic|cgtma initramfs:')
		[ -n "$p" ] && BOOT_WHY="$BOOT_WHY: $p"
		[ -s "$res/qemu.log" ] && BOOT_WHY="$BOOT_WHY; qemu: $(head -n1 "$res/qemu.log")"
	fi
	return 0
}

# collect_row RES WHY [TEST_FILE...]: RES/cells and the details behind each cell, from what
# the row left in RES (WHY: why the boot failed, empty when it did not).
collect_row() {
	local res=$1 why=$2 t n st where
	shift 2
	: >"$res/cells"
	if [ "$R_FAMILY" != host ]; then
		if [ -z "$why" ]; then
			echo "boot ok" >>"$res/cells"
		else
			echo "boot FAIL" >>"$res/cells"
			{ echo "$why"; echo "last console lines ($res/console.log):"
				console_text <"$res/console.log" 2>/dev/null | tail -n 30; } >"$res/fail/boot"
		fi
	fi
	klog_scan "$res/out/dmesg" "$res/console.log" >"$res/klog"
	if [ -s "$res/klog" ]; then
		echo "klog FAIL" >>"$res/cells"
		{ echo "the kernel reported trouble (full log: $res/out/dmesg, console: $res/console.log):"
			head -n 30 "$res/klog"; } >"$res/fail/klog"
	else
		echo "klog ok" >>"$res/cells"
	fi
	if [ "$R_MODE" = nocgroup2 ]; then
		collect_nocgroup2 "$res" "$why"
		return
	fi
	# run-live.sh prints "ok   NAME (S s)", "SKIP NAME (S s): REASON", or a failing test's
	# last 40 lines and then "FAIL NAME (exit N, S s)".
	where=
	[ -f "$res/console.log" ] && where="; console: $res/console.log"
	[ -f "$res/out/live.log" ] && awk -v dir="$res" -v where="$where" '
		/^ok   [^ ]+ \([0-9]+ s\)$/ { print $2, "ok"; nb = 0; next }
		/^SKIP [^ ]+ \([0-9]+ s\): / {
			name = $2; why = $0; sub(/^SKIP [^ ]+ \([0-9]+ s\): /, "", why)
			print name, "skip"; print why > (dir "/skip/" name); close(dir "/skip/" name)
			nb = 0; next
		}
		/^FAIL [^ ]+ \(exit [0-9]+, [0-9]+ s\)$/ {
			f = dir "/fail/" $2; print $2, "FAIL"
			print "(its whole output: " dir "/out/tests/" $2 ".log" where ")" > f
			for (i = (nb > 30 ? nb - 30 : 0) + 1; i <= nb; i++) print b[i] > f
			print > f; close(f); nb = 0; next
		}
		/^live tests: / { next }
		{ b[++nb] = $0 }' "$res/out/live.log" >"$res/tests.cells"
	for t in "$@"; do
		n=$(basename "$t" .sh)
		st=$(awk -v n="$n" '$1 == n { print $2 }' "$res/tests.cells" 2>/dev/null | tail -n1)
		if [ -z "$st" ] && [ -n "$why" ]; then
			st=n/r
		elif [ -z "$st" ]; then
			st=FAIL
			echo "no result line for $n in $res/out/live.log" >"$res/fail/$n"
		fi
		echo "$n $st" >>"$res/cells"
	done
	# And what run-live.sh ran on its own: a test again in a variant (NAME@VARIANT).
	[ -f "$res/tests.cells" ] &&
		awk 'NR == FNR { have[$1] = 1; next } !($1 in have) { print; have[$1] = 1 }' \
			"$res/cells" "$res/tests.cells" >"$res/more.cells" &&
		cat "$res/more.cells" >>"$res/cells"
	# run-live.sh itself must end with its summary, failing only with a test that failed
	# (a broken run-live.sh once ended early, every line before it ok).
	if [ -z "$why" ]; then
		local rc bad=''
		rc=$(cat "$res/out/rc" 2>/dev/null)
		if ! grep -q '^live tests: ' "$res/out/live.log" 2>/dev/null; then
			bad="tests/run-live.sh ended (exit ${rc:-?}) without its summary line"
		elif [ "$rc" != 0 ] && ! grep -q ' FAIL$' "$res/cells"; then
			bad="tests/run-live.sh exited $rc, and no test failed"
		fi
		if [ -n "$bad" ]; then
			echo "suite FAIL" >>"$res/cells"
			{ echo "$bad; its last lines:"; tail -n 30 "$res/out/live.log" 2>/dev/null; } >"$res/fail/suite"
		fi
	fi
}

# part_tests PART PARTS TEST_FILE...: the tests of part PART (from 1) of PARTS: every
# PARTS-th, from the PART-th on, so that each part has long and short tests alike.
part_tests() {
	local p=$1 n=$2 i=0 t
	shift 2
	for t in "$@"; do
		[ $((i % n + 1)) = "$p" ] && echo "$t"
		i=$((i + 1))
	done
}

# merge_parts ROW PARTS: ROW's results from those of its PARTS parts (a row split over as
# many guests, run side by side: tests/vm/test-kernels.sh -p), as if one guest had run
# them: a cell per column, the worst a part gave (FAIL, n/r, skip, ok); each part's skips
# and failures, a boot, klog or suite failure said per part; the time of the parts added
# up (and QEMU's CPU); the kernel's name and mode from the first part that booted. Each part's logs stay in
# ROW/partP/.
merge_parts() {
	local row=$1 n=$2 res=$CACHE/results/$1 p d f wall=0 cpu=0 first=''
	rm -rf "$res/skip" "$res/fail" "$res/out" "$res/cells" "$res/meta" "$res/klog"
	mkdir -p "$res/skip" "$res/fail" "$res/out" || return 1
	for ((p = 1; p <= n; p++)); do
		d=$res/part$p
		if [ ! -f "$d/meta" ]; then
			echo "boot FAIL" >>"$res/cells.all"
			echo "part $p: no result" >>"$res/fail/boot"
			continue
		fi
		cat "$d/cells" >>"$res/cells.all"
		cat "$d/klog" >>"$res/klog" 2>/dev/null
		for f in "$d"/skip/*; do [ -f "$f" ] && cp "$f" "$res/skip/"; done
		for f in "$d"/fail/*; do
			[ -f "$f" ] || continue
			case ${f##*/} in
			setup | boot | klog | suite) { echo "part $p:"; cat "$f"; } >>"$res/fail/${f##*/}" ;;
			*) cp "$f" "$res/fail/" ;;
			esac
		done
		wall=$((wall + $(. "$d/meta"; echo "$WALL")))
		cpu=$((cpu + $(. "$d/meta"; echo "${GUEST_CPU:-0}")))
		[ -z "$first" ] && [ -f "$d/out/uname" ] && first=$d
	done
	awk 'function rank(s) { return s == "FAIL" ? 4 : s == "n/r" ? 3 : s == "skip" ? 2 : s == "ok" ? 1 : 0 }
		!($1 in st) { order[++k] = $1; st[$1] = $2; next }
		rank($2) > rank(st[$1]) { st[$1] = $2 }
		END { for (i = 1; i <= k; i++) print order[i], st[order[i]] }' \
		"$res/cells.all" >"$res/cells"
	rm -f "$res/cells.all"
	[ -n "$first" ] || first=$res/part1
	cp "$first"/out/uname* "$first"/out/preempt "$res/out/" 2>/dev/null
	{
		grep -v '^WALL=\|^GUEST_CPU=' "$first/meta" 2>/dev/null || printf 'ROW=%q\n' "$row"
		printf 'WALL=%q\nGUEST_CPU=%q\n' "$wall" "$cpu"
	} >"$res/meta"
}

# collect_nocgroup2 RES WHY: the check of a machine without cgroup v2 passes iff cgtma
# exited 1 and said "cgroup v2" on stderr; its stderr is kept verbatim for the report.
collect_nocgroup2() {
	local res=$1 why=$2 rc err
	if [ ! -e "$res/out/check.rc" ]; then
		[ -n "$why" ] && echo "nocg2 n/r" >>"$res/cells" && return
		echo "nocg2 FAIL" >>"$res/cells"
		echo "the guest wrote no check.rc" >"$res/fail/nocg2"
		return
	fi
	rc=$(cat "$res/out/check.rc")
	err=$(cat "$res/out/check.err")
	printf '%s, no cgroup2 mounted: exit %s, stderr:\n%s\n' \
		"$(cat "$res/out/check.cmd" 2>/dev/null || echo cgtma)" "$rc" "${err:-(empty)}" >"$res/note"
	if [ "$rc" = 1 ] && grep -qF "cgroup v2" "$res/out/check.err"; then
		echo "nocg2 ok" >>"$res/cells"
	else
		echo "nocg2 FAIL" >>"$res/cells"
		{ echo "want exit 1 and \"cgroup v2\" on stderr (above); got exit $rc and on stdout"
			echo "($res/out/check.out):"; head -n 6 "$res/out/check.out"; } >"$res/fail/nocg2"
	fi
}

# row_mode_text: how ROW's kernel ran: the preemption mode in force (from debugfs on a
# PREEMPT_DYNAMIC kernel, else the kernel's version string and configuration) and the
# cgroup layout.
row_mode_text() {
	local res=$CACHE/results/$ROW${ROW_PART:+/part$ROW_PART} p='' layout
	[ -s "$res/out/preempt" ] && p=$(sed -n 's/.*(\([a-z]*\)).*/\1/p' "$res/out/preempt")
	if [ -z "$p" ]; then
		if grep -q PREEMPT_RT "$res/out/uname-v" 2>/dev/null; then
			p=rt
		elif [ "$R_FAMILY" != host ] && [ -r "${K_CONFIG:-}" ]; then
			p=$(awk -F'[_=]' '/^CONFIG_PREEMPT_(NONE|VOLUNTARY|RT)=y$|^CONFIG_PREEMPT=y$/ {
				print ($3 == "y" ? "full" : tolower($3)) }' "$K_CONFIG" | tail -n1)
		fi
	fi
	case $R_LAYOUT in
	v2) layout=cgroup2 ;;
	hybrid) layout="hybrid cgroups" ;;
	v1) layout="cgroup v1 only" ;;
	host)
		case $(awk '$(NF-2) == "cgroup2" { print $5; exit }' /proc/self/mountinfo) in
		/sys/fs/cgroup) layout=cgroup2 ;;
		'') layout="cgroup v1 only" ;;
		*) layout="hybrid cgroups" ;;
		esac
		;;
	esac
	echo "${p:+preempt=$p, }$layout"
}

# col_short COLUMN: its header: a test's number, and the first letter of its variant
# (10-attribution@tracepoint is 10@t).
col_short() {
	case $1 in
	[0-9]*@*) local v=${1#*@}; echo "${1%%-*}@${v:0:1}" ;;
	[0-9]*) echo "${1%%-*}" ;;
	*) echo "$1" ;;
	esac
}

# vm_report ROW...: the table (a row per kernel, a column per check), then every skip's
# reason, the nocgroup2 check's stderr, and each failure's last lines. Returns 1 if any cell
# is FAIL.
vm_report() {
	local row res cols=() c line cell failed=0 total=0
	local -A seen=()
	for row in "$@"; do
		[ -f "$CACHE/results/$row/cells" ] || continue
		while read -r c _; do
			[ -n "${seen[$c]:-}" ] || { seen[$c]=1; cols+=("$c"); }
		done <"$CACHE/results/$row/cells"
	done
	# The machine's checks first, the tests in their order, the nocgroup2 check last.
	mapfile -t cols < <(printf '%s\n' "${cols[@]}" | awk '
		{ k = $0 == "setup" ? 0 : $0 == "boot" ? 1 : $0 == "klog" ? 2 : $0 == "suite" ? 3 : $0 == "nocg2" ? 5 : 4
		  print k, $0 }' |
		sort -k1,1n -k2,2 | cut -d' ' -f2)
	echo
	# Tab-separated first, then padded to the widest cell of each column.
	{
		printf 'kernel\tuname -r\tmode\ttime'
		for c in "${cols[@]}"; do printf '\t%s' "$(col_short "$c")"; done
		echo
		for row in "$@"; do
			res=$CACHE/results/$row
			[ -f "$res/meta" ] || { printf '%s\t(no result)\n' "$row"; continue; }
			(
				. "$res/meta"
				printf '%s\t%s\t%s\t%s' "$row" "$(cat "$res/out/uname" 2>/dev/null || echo '?')" \
					"$MODE_TEXT" "$(vm_dur "$WALL")"
				for c in "${cols[@]}"; do
					cell=$(awk -v c="$c" '$1 == c { print $2 }' "$res/cells")
					printf '\t%s' "${cell:--}"
				done
				echo
			)
		done
	} | awk -F'\t' '{ for (i = 1; i <= NF; i++) { c[NR, i] = $i; if (length($i) > w[i]) w[i] = length($i) }
			n[NR] = NF }
		END { for (r = 1; r <= NR; r++) { line = ""
				for (i = 1; i <= n[r]; i++) line = line sprintf(i == 4 ? "%" w[i] "s  " : "%-" w[i] "s  ", c[r, i])
				sub(/ +$/, "", line); print line } }'
	for row in "$@"; do
		res=$CACHE/results/$row
		[ -f "$res/meta" ] && ! grep -q ' FAIL$' "$res/cells" || failed=1
		[ -f "$res/meta" ] && total=$((total + $(. "$res/meta"; echo "$WALL")))
	done
	echo
	line=
	for c in "${cols[@]}"; do
		case $c in
		setup) line="$line setup=its kernel and root image were fetched and built;" ;;
		boot) line="$line boot=the guest booted, ran and powered off;" ;;
		klog) line="$line klog=no BUG/WARNING/Oops/lockup/stall/segfault in the kernel's log;" ;;
		suite) line="$line suite=tests/run-live.sh ended with its summary and a fair exit status;" ;;
		nocg2) line="$line nocg2=cgtma -G / without cgroup2 exits 1 naming cgroup v2;" ;;
		*) line="$line $(col_short "$c")=$c;" ;;
		esac
	done
	echo "columns:${line%;}"
	echo "cells: ok, FAIL, skip, n/r (not reached: the boot failed first), - (does not apply)"
	# Each skip reason once, with the rows that gave it.
	local skips
	skips=$(for row in "$@"; do
		for f in "$CACHE/results/$row"/skip/*; do
			[ -f "$f" ] && printf '%s\t%s\t%s\n' "${f##*/}" "$(head -n1 "$f")" "$row"
		done
	done | awk -F'\t' '{ k = $1 ": " $2; if (!(k in rows)) order[++n] = k; rows[k] = rows[k] " " $3 }
		END { for (i = 1; i <= n; i++) print "  " order[i] "  [" substr(rows[order[i]], 2) "]" }')
	[ -n "$skips" ] && printf '\nskipped:\n%s\n' "$skips"
	for row in "$@"; do
		res=$CACHE/results/$row
		[ -s "$res/note" ] && { printf '\n%s: ' "$row"; cat "$res/note"; }
	done
	for row in "$@"; do
		res=$CACHE/results/$row
		for f in "$res"/fail/*; do
			[ -f "$f" ] || continue
			printf '\nFAIL %s %s\n' "$row" "${f##*/}"
			sed 's/^/    /' "$f"
		done
	done
	echo
	echo "the rows' times, added up: $(vm_dur $total); results and logs in $CACHE/results/KERNEL/"
	return $failed
}

# row_build BUILD: where ROW's binaries are: BUILD (this machine's), or for a guest of
# another architecture the cross build's directory (make ARCH=arm64: build-arm64).
row_build() {
	if [ "$R_FAMILY" = host ] || [ "$R_ARCH" = "$(host_deb_arch)" ]; then
		echo "$1"
	else
		echo "build-${R_ARCH/amd64/x86}"
	fi
}

# vm_build_dir DIR: DIR relative to the checkout (the guests see the checkout only), after
# checking that it holds the binaries.
vm_build_dir() {
	local abs rel
	abs=$(cd "$SRC" && readlink -f "$1") && rel=$(realpath --relative-to="$SRC" "$abs") || return 2
	case $rel in
	../* | ..) vm_err "build directory $1: outside the checkout $SRC, which is all the guests see"; return 2 ;;
	esac
	[ -x "$abs/cgtma" ] && [ -x "$abs/tests/workload" ] || {
		vm_err "build directory $1: no cgtma or tests/workload (make${2:+ ARCH=$2} all helpers)"
		return 2
	}
	echo "$rel"
}

# snapshot_tree BUILD...: TREE, a copy of the checkout (what git tracks or would, as it is in
# the working tree) and of each BUILD's binaries, taken once per run and shared with every guest
# (the host row runs it too). The checkout itself may change meanwhile: a script rewritten
# while bash reads it, or a binary relinked while a guest runs it, fails for no fault of
# cgtma's (both seen while another engineer worked in the same checkout).
snapshot_tree() {
	local build tmp=$CACHE/tree.tmp.$$ f
	rm -rf "$tmp" && mkdir -p "$tmp" || return 1
	if git -C "$SRC" rev-parse --git-dir >/dev/null 2>&1; then
		(cd "$SRC" && git ls-files -z -co --exclude-standard | tar --null --ignore-failed-read -T - -cf -)
	else
		tar -C "$SRC" --exclude=./.git --exclude='./build*' -cf - .
	fi | tar -C "$tmp" -xf - || { vm_err "cannot copy $SRC to $tmp"; return 1; }
	for build in "$@"; do
		mkdir -p "$tmp/$build/tests" && cp -p "$SRC/$build/cgtma" "$tmp/$build/" || return 1
		# make static's, where built: tests/live/36-static.sh runs it, else skips.
		if [ -f "$SRC/$build/cgtma-static" ]; then
			cp -p "$SRC/$build/cgtma-static" "$tmp/$build/" || return 1
		fi
		for f in "$SRC/$build"/tests/*; do
			[ -f "$f" ] && [ -x "$f" ] && { cp -p "$f" "$tmp/$build/tests/" || return 1; }
		done
	done
	rm -rf "$CACHE/tree" && mv "$tmp" "$CACHE/tree" || return 1
	TREE=$CACHE/tree
	for build in "$@"; do
		vm_say "checkout copied to $TREE ($build/cgtma sha256 $(sha256sum <"$TREE/$build/cgtma" | cut -c1-16))"
	done
}

# row_builds BUILD ROW...: ROW_BUILDS, the build directories the rows need (checked, each
# once, relative to the checkout).
row_builds() {
	local build=$1 r b
	shift
	ROW_BUILDS=()
	for r in "$@"; do
		row_def "$r" || return 2
		b=$(row_build "$build")
		printf '%s\n' "${ROW_BUILDS[@]}" | grep -qxF -- "$b" && continue
		b=$(vm_build_dir "$b" "$([ "$b" != "$build" ] && echo "${R_ARCH/amd64/x86}")") || return 2
		ROW_BUILDS+=("$b")
	done
}
