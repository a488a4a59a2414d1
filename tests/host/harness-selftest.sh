#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The harness must fail a run whose KUnit case fails and whose kernel
# WARNs: boot a guest that does both and check each was caught.
set -uo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-$(mktemp -d "${TMPDIR:-/tmp}/rdmx-selftest.XXXXXX")}
mkdir -p "$out"
"$repo/tests/vm/run" --nodes 1 --kernel debug --timeout 600 --out "$out" \
	"$repo/tests/vm/selftest/selftest.sh" >"$out/run.log" 2>&1
rc=$?
cat "$out/run.log"
fail=0
[ "$rc" = 1 ] || { echo "harness exited $rc, expected 1"; fail=1; }
grep -q 'kernel splat' "$out/run.log" || { echo "WARN_ON not reported as a splat"; fail=1; }
grep -q '^not ok - kunit rdmx_selftest.rdmx_selftest_fail' "$out/node1/results.tap" ||
	{ echo "failing KUnit case not reported"; fail=1; }
grep -q '^ok - kunit rdmx_selftest.rdmx_selftest_pass' "$out/node1/results.tap" ||
	{ echo "passing KUnit case not reported"; fail=1; }
[ "$fail" = 0 ] && echo "harness self-test: failures were caught"
exit "$fail"
