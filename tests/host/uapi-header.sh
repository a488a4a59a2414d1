#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The uapi header must compile alone in userspace: C90 pedantic, C99, C++,
# with no CONFIG_ symbol and the syscall-note SPDX line; its structs keep
# the sizes the ABI published.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
hdr=$repo/uapi/linux/rdmx.h
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

head -n1 "$hdr" | grep -q 'SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note'
! grep -n 'CONFIG_' "$hdr"
echo '#include <linux/rdmx.h>' >"$tmp/a.c"
gcc -std=c90 -pedantic -Wall -Wextra -Werror -I"$repo/uapi" -fsyntax-only "$tmp/a.c"
gcc -std=c99 -pedantic -Wall -Wextra -Werror -I"$repo/uapi" -fsyntax-only "$tmp/a.c"
cp "$tmp/a.c" "$tmp/a.cc"
g++ -std=c++11 -pedantic -Wall -Wextra -Werror -I"$repo/uapi" -fsyntax-only "$tmp/a.cc"
cat >"$tmp/sizes.c" <<'C'
#include <stddef.h>
#include <linux/rdmx.h>
typedef char a[sizeof(struct rdmx_info) == RDMX_INFO_SIZE_VER0 ? 1 : -1];
typedef char b[sizeof(struct rdmx_device_info) == RDMX_DEVICE_INFO_SIZE_VER0 ? 1 : -1];
typedef char c[sizeof(struct rdmx_list_devices) == RDMX_LIST_DEVICES_SIZE_VER0 ? 1 : -1];
typedef char d[offsetof(struct rdmx_device_info, max_mr_size) % 8 == 0 ? 1 : -1];
typedef char e[offsetof(struct rdmx_list_devices, devices) % 8 == 0 ? 1 : -1];
C
# Every struct with a published size (RDMX_FOO_SIZE_VER0 for struct
# rdmx_foo, RDMX_FOO_SIZE_VER1 when it grew) has its newest one, on 64-bit
# and 32-bit userspace alike, and each newer size is larger.
n=0
while read -r _ m; do
	base=${m%_SIZE_VER0}
	st=$(echo "$base" | tr '[:upper:]' '[:lower:]')
	grep -q "^struct $st {" "$hdr" || { echo "$m: no struct $st" >&2; exit 1; }
	v=0
	while grep -q "^#define ${base}_SIZE_VER$((v + 1))\b" "$hdr"; do
		echo "typedef char g${n}_$v[${base}_SIZE_VER$((v + 1)) > ${base}_SIZE_VER$v ? 1 : -1];" >>"$tmp/sizes.c"
		v=$((v + 1))
	done
	n=$((n + 1))
	echo "typedef char s${n}[sizeof(struct $st) == ${base}_SIZE_VER$v ? 1 : -1];" >>"$tmp/sizes.c"
done < <(grep -o '^#define RDMX_[A-Z0-9_]*_SIZE_VER0' "$hdr")
[ "$n" -ge 20 ] || { echo "only $n published sizes found" >&2; exit 1; }
gcc -std=c99 -Wall -Werror -Wno-unused-local-typedefs -I"$repo/uapi" -fsyntax-only "$tmp/sizes.c"
# 32-bit userspace sees the same layout (compat ioctls pass through with
# compat_ptr_ioctl): needs gcc-multilib, which tests/deps.sh installs.
gcc -m32 -std=c99 -Wall -Werror -Wno-unused-local-typedefs -I"$repo/uapi" -fsyntax-only "$tmp/sizes.c"
echo "32-bit layout ok"
echo "uapi header ok ($n struct sizes)"
