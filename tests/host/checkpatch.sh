#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# checkpatch --strict over the project's kernel sources, with the
# checkpatch.pl of the unpacked test-kernel source.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
kdir=$("$repo/tests/vm/build-kernel" debug)
src=$(readlink -f "$kdir/obj/source")
cd "$repo"
files=$(git ls-files -co --exclude-standard -- 'kmod/*.[ch]' 'uapi/*.h' 'tests/kunit/*.c' 'tests/vm/selftest/*.c' 'tests/integration/*.c')
# shellcheck disable=SC2086
perl "$src/scripts/checkpatch.pl" --no-tree --strict --terse --show-types \
	-f $files | tee /dev/stderr |
	{ ! grep -E ': (ERROR|WARNING|CHECK):'; }
echo "checkpatch clean"
