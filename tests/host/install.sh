#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# `make install` staged into a DESTDIR puts every piece where a host wants
# it, and nothing outside DESTDIR: against the debug test kernel and
# against Debian 12's 6.1 headers, whose kbuild guesses another release
# (6.1.N) than the one the module is for (6.1.0-N-amd64). Plain `make`
# builds the module and rdmxctl only: nothing that needs librdmacm.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
tree=$(mktemp -d "${TMPDIR:-/tmp}/rdmx-install.XXXXXX")
trap 'rm -rf "$tree"' EXIT

# install_into KDIR: stage an install from a fresh copy of the sources.
install_into() {
	local kdir=$1 kver src dest f
	kver=$(sed -n 's/^#define UTS_RELEASE "\(.*\)"$/\1/p' "$kdir/include/generated/utsrelease.h")
	src=$tree/src-$kver dest=$tree/dest-$kver
	mkdir -p "$src"
	# A copy of the sources, so the in-place build leaves the checkout alone.
	(cd "$repo" && git ls-files -z | xargs -0 cp -a --parents -t "$src/")
	if make -s -C "$src" -n all KDIR="$kdir" | grep -q -- '-lrdmacm\|-libverbs'; then
		echo "make (all) would link librdmacm or libibverbs"
		return 1
	fi
	make -s -j"$(nproc)" -C "$src" install KDIR="$kdir" DESTDIR="$dest" PREFIX=/usr
	for f in "lib/modules/$kver/extra/rdmx.ko" usr/sbin/rdmxctl \
		 usr/share/man/man8/rdmxctl.8 usr/share/man/man8/rdmxctl-dev.8 \
		 usr/share/man/man8/rdmxctl-doctor.8 usr/share/man/man8/rdmxctl-msg.8 \
		 usr/share/man/man8/rdmxctl-listen.8 usr/share/man/man8/rdmxctl-session.8 \
		 usr/share/man/man8/rdmxctl-ping.8 usr/share/man/man8/rdmxctl-mr.8 \
		 usr/share/man/man8/rdmxctl-rma.8 usr/share/man/man8/rdmxctl-export.8 \
		 usr/share/man/man8/rdmxctl-map.8 usr/share/man/man8/rdmxctl-unmap.8 \
		 usr/share/man/man8/rdmxctl-config.8 \
		 usr/lib/systemd/system/rdmx-server.service \
		 usr/share/bash-completion/completions/rdmxctl \
		 usr/lib/systemd/system/rdmx-client.service \
		 usr/include/linux/rdmx.h etc/udev/rules.d/60-rdmx.rules; do
		[ -s "$dest/$f" ] || { echo "missing: $f"; return 1; }
		echo "installed: $f"
	done
	[ "$(find "$dest/lib/modules" -mindepth 1 -maxdepth 1)" = "$dest/lib/modules/$kver" ] ||
		{ echo "modules installed elsewhere than lib/modules/$kver:"; ls "$dest/lib/modules"; return 1; }
	[ -x "$dest/usr/sbin/rdmxctl" ] || { echo "rdmxctl not executable"; return 1; }
	modinfo -F version "$dest/lib/modules/$kver/extra/rdmx.ko" | grep -qx 0.1.0
	[ ! -e "$dest/lib/modules/$kver/extra/rdmx_test.ko" ] || { echo "test module installed"; return 1; }
	cmp "$repo/uapi/linux/rdmx.h" "$dest/usr/include/linux/rdmx.h"
	# Without DESTDIR, depmod runs for the same release (KVER).
	[ "$(make -s -C "$src" kernelrelease KDIR="$kdir" 2>/dev/null | tail -n1)" = "$kver" ] ||
		{ echo "make kernelrelease does not say $kver"; return 1; }
	echo "install ok for $kver"
}

install_into "$("$repo/tests/vm/build-kernel" debug)/obj"
install_into "$("$repo/tests/vm/build-kernel" --linux 6.1 headers)/obj"
