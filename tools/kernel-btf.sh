#!/bin/sh
# Writes a kernel's BTF, raw, for `bpftool btf dump file` (make vmlinux uses it when the
# kernel is not the running one, e.g. the arm64 vmlinux.h on an x86 host):
#
#   tools/kernel-btf.sh IMAGE OUT
#
# IMAGE is an uncompressed kernel Image (arm64 Debian packages ship /boot/vmlinuz-* as one),
# a gzip-compressed one, or an ELF vmlinux. A kernel built with DEBUG_INFO_BTF carries its
# .BTF section inside the Image as it is loaded, so the raw BTF is found by its header:
# magic 0xeb9f, version 1, flags 0, a 24-byte header, types from offset 0 and strings right
# after them (what the kernel itself writes). bpftool then checks the whole of it.
set -eu

[ $# -eq 2 ] || { echo "usage: $0 IMAGE OUT" >&2; exit 2; }
image=$1 out=$2
[ -r "$image" ] || { echo "kernel-btf: $image: cannot read it" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

case $(od -An -tx1 -N4 "$image" | tr -d ' \n') in
7f454c46)	# ELF: bpftool reads its .BTF section itself
	cp "$image" "$out"
	exit 0 ;;
1f8b*)	gzip -dc "$image" >"$tmp/image"; image=$tmp/image ;;
esac

# The header's first 8 bytes, little-endian (arm64 and x86 kernels both are).
for off in $(LC_ALL=C grep -obUaP '\x9f\xeb\x01\x00\x18\x00\x00\x00' "$image" | cut -d: -f1); do
	# shellcheck disable=SC2046
	set -- $(od -An -tu4 -v -j $((off + 4)) -N 20 "$image")
	hdr_len=$1 type_off=$2 type_len=$3 str_off=$4 str_len=$5
	[ "$type_off" = 0 ] && [ "$str_off" = "$type_len" ] && [ "$str_len" -gt 0 ] || continue
	tail -c +$((off + 1)) "$image" | head -c $((hdr_len + str_off + str_len)) >"$tmp/btf"
	if bpftool btf dump file "$tmp/btf" >/dev/null 2>&1; then
		mv "$tmp/btf" "$out"
		exit 0
	fi
done
echo "kernel-btf: $1: no BTF in it (a kernel built without CONFIG_DEBUG_INFO_BTF?)" >&2
exit 1
