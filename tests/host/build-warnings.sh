#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Build the module from scratch against the debug test kernel with W=1 and
# sparse (C=1); any compiler or sparse diagnostic fails.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
kdir=$("$repo/tests/vm/build-kernel" debug)
command -v sparse >/dev/null || { echo "sparse not installed"; exit 1; }
tree=$(mktemp -d "${TMPDIR:-/tmp}/rdmx-w1.XXXXXX")
trap 'rm -rf "$tree"' EXIT
(cd "$repo" && cp -a --parents Kbuild kmod uapi tests/kunit tests/vm/selftest "$tree/")
make -C "$kdir/obj" M="$tree" RDMX_TESTS=1 W=1 C=1 modules >"$tree/build.log" 2>&1 ||
	{ cat "$tree/build.log"; exit 1; }
cat "$tree/build.log"
# Lines kbuild prints itself start with two spaces (CC, CHECK, LD, ...);
# anything else from the compiler or sparse is a diagnostic.
diag=$(grep -vE '^  [A-Z]|^make(\[[0-9]+\])?: (Entering|Leaving)' "$tree/build.log" || true)
if [ -n "$diag" ]; then
	echo "diagnostics:"
	echo "$diag"
	exit 1
fi
grep -q 'CHECK.*kmod/main.c' "$tree/build.log" || { echo "sparse did not run"; exit 1; }
echo "W=1 C=1 clean"
