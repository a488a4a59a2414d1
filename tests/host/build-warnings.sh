#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# tests/host/build-warnings.sh [KERNEL]: build the module from scratch with
# W=1 and sparse (C=1) against one kernel; any compiler or sparse
# diagnostic fails. KERNEL is
#   debug            the project's debug test kernel (default; the KUnit and
#                    self-test modules are built too)
#   LINE-debug       the debug test kernel of another line, 6.1 or newest
#                    (tests/vm/build-kernel --linux LINE debug), the same
#   LINE-headers     what a Debian user builds against, LINE being 6.1,
#                    6.12 or newest (tests/vm/build-kernel --linux LINE
#                    headers)
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
kernel=${1:-debug}
tests=()
case "$kernel" in
debug) kdir=$("$repo/tests/vm/build-kernel" debug)/obj; tests=(RDMX_TESTS=1) ;;
6.1-debug|newest-debug)
	kdir=$("$repo/tests/vm/build-kernel" --linux "${kernel%-debug}" debug)/obj
	tests=(RDMX_TESTS=1) ;;
*-headers) kdir=$("$repo/tests/vm/build-kernel" --linux "${kernel%-headers}" headers)/obj ;;
*) echo "build-warnings: unknown kernel '$kernel'" >&2; exit 2 ;;
esac
ksrc=$kdir
[ -d "$kdir/source" ] && ksrc=$(readlink -f "$kdir/source")
sparse=$("$repo/tests/host/sparse.sh" "$ksrc")
tree=$(mktemp -d "${TMPDIR:-/tmp}/rdmx-w1.XXXXXX")
trap 'rm -rf "$tree"' EXIT
(cd "$repo" && cp -a --parents Kbuild kmod uapi tests/kunit tests/vm/selftest "$tree/")
echo "kernel: $kernel ($(cut -d'"' -f2 "$kdir/include/generated/utsrelease.h")), sparse: $sparse"
make -j"$(nproc)" -C "$kdir" M="$tree" "${tests[@]}" W=1 C=1 CHECK="$sparse" modules \
	>"$tree/build.log" 2>&1 ||
	{ cat "$tree/build.log"; exit 1; }
cat "$tree/build.log"
# Lines kbuild prints itself start with two spaces (CC, CHECK, LD, ...);
# anything else from the compiler or sparse is a diagnostic. Two notes
# about the toolchain, not the code, are let through: a distribution's
# headers without vmlinux (no BTF for modules) and a pahole newer or older
# than the kernel's.
diag=$(grep -vE '^  [A-Z]|^make(\[[0-9]+\])?: (Entering|Leaving)' "$tree/build.log" |
	grep -vE '^Skipping BTF generation for .* due to unavailability of vmlinux$|^warning: pahole version differs from the one used to build the kernel$' ||
	true)
if [ -n "$diag" ]; then
	echo "diagnostics:"
	echo "$diag"
	exit 1
fi
grep -q 'CHECK.*kmod/module.c' "$tree/build.log" || { echo "sparse did not run"; exit 1; }
modinfo -F vermagic "$tree/rdmx.ko"
echo "W=1 C=1 clean"
"$repo/tests/host/layering.sh" "$tree"
