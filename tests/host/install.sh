#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# `make install` staged into a DESTDIR puts every piece where a host wants
# it, and nothing outside DESTDIR.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
kdir=$("$repo/tests/vm/build-kernel" debug)/obj
kver=$(cat "$kdir/include/config/kernel.release")
tree=$(mktemp -d "${TMPDIR:-/tmp}/rdmx-install.XXXXXX")
dest=$tree/dest
trap 'rm -rf "$tree"' EXIT
# A copy of the sources, so the in-place build leaves the checkout alone.
(cd "$repo" && git ls-files -z | xargs -0 cp -a --parents -t "$tree/")
make -s -C "$tree" install KDIR="$kdir" DESTDIR="$dest" PREFIX=/usr
for f in "lib/modules/$kver/extra/rdmx.ko" usr/sbin/rdmxctl \
	 usr/share/man/man8/rdmxctl.8 usr/share/man/man8/rdmxctl-dev.8 \
	 usr/share/man/man8/rdmxctl-doctor.8 usr/share/man/man8/rdmxctl-msg.8 \
	 usr/share/man/man8/rdmxctl-listen.8 usr/share/man/man8/rdmxctl-session.8 \
	 usr/share/man/man8/rdmxctl-ping.8 usr/share/man/man8/rdmxctl-mr.8 \
	 usr/share/man/man8/rdmxctl-rma.8 usr/share/man/man8/rdmxctl-export.8 \
	 usr/share/man/man8/rdmxctl-map.8 usr/share/man/man8/rdmxctl-unmap.8 \
	 usr/include/linux/rdmx.h etc/udev/rules.d/60-rdmx.rules; do
	[ -s "$dest/$f" ] || { echo "missing: $f"; exit 1; }
	echo "installed: $f"
done
[ -x "$dest/usr/sbin/rdmxctl" ] || { echo "rdmxctl not executable"; exit 1; }
modinfo -F version "$dest/lib/modules/$kver/extra/rdmx.ko" | grep -qx 0.1.0
[ ! -e "$dest/lib/modules/$kver/extra/rdmx_test.ko" ] || { echo "test module installed"; exit 1; }
cmp "$repo/uapi/linux/rdmx.h" "$dest/usr/include/linux/rdmx.h"
echo "install ok"
