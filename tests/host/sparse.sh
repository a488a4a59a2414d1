#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# tests/host/sparse.sh KSRC: prints the path of a sparse that the kernel
# source tree KSRC accepts (its scripts/checker-valid.sh). The installed
# one when it does; else Debian's newest sparse source package (from
# unstable, through the mirror this machine's apt sources already name,
# with a private apt list), built once into the cache: newer kernels use
# C constructs (__typeof_unqual__) that bookworm's sparse 0.6.4 lacks.
# Nothing is installed into the system.
set -euo pipefail
ksrc=${1:?usage: sparse.sh KSRC}
cache=${RDMX_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rdmx}

valid() { # $1 = sparse binary
	[ ! -x "$ksrc/scripts/checker-valid.sh" ] && return 0
	[ "$("$ksrc/scripts/checker-valid.sh" "$1" --arch=x86_64 -m64 2>/dev/null)" = 1 ]
}

sys=$(command -v sparse || true)
if [ -n "$sys" ] && valid "$sys"; then
	echo "$sys"
	exit 0
fi

dir="$cache/tools/sparse"
if [ -x "$dir/sparse" ] && valid "$dir/sparse"; then
	echo "$dir/sparse"
	exit 0
fi

mkdir -p "$cache/tools/apt/lists/partial"
exec 9>"$cache/tools/.lock-sparse"
flock 9
uri=$(awk '/^URIs:/ && $2 !~ /security/ { print $2; exit }' \
	/etc/apt/sources.list.d/*.sources 2>/dev/null || true)
[ -n "$uri" ] || uri=$(sed -n 's/^deb \(\[[^]]*\] \)\{0,1\}\([^ ]*\) bookworm .*/\2/p' \
	/etc/apt/sources.list 2>/dev/null | head -n1)
[ -n "$uri" ] || { echo "sparse.sh: no Debian mirror in this machine's apt sources" >&2; exit 1; }
echo "deb-src $uri sid main" >"$cache/tools/apt/sources.list"
apt_sid() {
	apt-get -q -o Dir::Etc::SourceList="$cache/tools/apt/sources.list" \
		-o Dir::Etc::SourceParts=/dev/null \
		-o Dir::State::Lists="$cache/tools/apt/lists" \
		-o APT::Sandbox::User=root "$@"
}
work=$(mktemp -d "${TMPDIR:-/tmp}/rdmx-sparse.XXXXXX")
trap 'rm -rf "$work"' EXIT
apt_sid update >/dev/null 2>&1
(cd "$work" && apt_sid source --download-only sparse >/dev/null 2>&1) ||
	{ echo "sparse.sh: cannot fetch Debian's sparse source package" >&2; exit 1; }
tar -C "$work" -xf "$(ls "$work"/sparse_*.orig.tar.* | head -n1)"
src=$(find "$work" -mindepth 1 -maxdepth 1 -type d -name 'sparse*' | head -n1)
make -C "$src" -j"$(nproc)" sparse >"$work/build.log" 2>&1 ||
	{ tail -n 20 "$work/build.log" >&2; exit 1; }
rm -rf "$dir"
mkdir -p "$dir"
cp "$src/sparse" "$dir/sparse"
valid "$dir/sparse" || { echo "sparse.sh: Debian's newest sparse does not suit $ksrc either" >&2; exit 1; }
echo "$dir/sparse"
