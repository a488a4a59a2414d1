#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# tests/deps.sh [--check]: install the Debian packages rdmx's build, tests,
# demo and benchmarks need (only those missing). With --check, list the
# missing ones and exit 1 if any.
set -euo pipefail

pkgs=(
	# test kernel build
	build-essential bc bison flex libelf-dev libssl-dev cpio xz-utils kmod
	ccache dpkg-dev perl git
	# module checks (gcc-multilib: the uapi header's 32-bit layout)
	sparse groff-base man-db gcc-multilib
	# guests
	qemu-system-x86 iproute2 iputils-ping procps util-linux python3
	# RDMA userspace used inside the guests
	rdma-core ibverbs-utils ibverbs-providers rdmacm-utils perftest
	# rdmx-blkcraft's build
	libibverbs-dev librdmacm-dev
	# storage and benchmark peers
	fio nvme-cli qperf e2fsprogs gnuplot-nox nbd-server nbd-client
	# Debian packages (debian/, make deb) and tests/host/deb.sh: their
	# build, lintian, DKMS builds against Debian's headers (dwarves: pahole,
	# for the BTF of a module built against 6.12's)
	debhelper dh-dkms dkms lintian fakeroot dwarves
	# systemd-analyze, for tests/host/units.sh
	systemd
)

missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
		missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "${1:-}" = --check ]; then
	echo "missing packages: ${missing[*]}"
	exit 1
fi
if [ "$(id -u)" != 0 ]; then
	echo "deps: missing packages: ${missing[*]}; run as root or install them" >&2
	exit 1
fi
echo "deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -q >&2
apt-get install -y -q --no-install-recommends "${missing[@]}" >&2
