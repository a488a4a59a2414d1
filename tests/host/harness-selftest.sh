#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The harness must fail a run whose KUnit case fails and whose kernel
# WARNs: boot a guest that does both and check each was caught (its kernel
# log read once at the end, tests/vm/run --klog end; the kill path below
# streams it, the default). Then the
# kill path (rdmx_kill_node): two guests, node 2 has node 1's QEMU killed;
# node 1 counts as killed on request, not as a guest that died, but what
# it reported before the kill (a failing result, a WARN_ON) still fails
# the run.
set -uo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-$(mktemp -d "${TMPDIR:-/tmp}/rdmx-selftest.XXXXXX")}
mkdir -p "$out"
fail=0
bad() { echo "$*"; fail=1; }

# The two runs go side by side: three vCPUs on a 2-core host, and neither
# depends on timing.
k="$out/kill"
mkdir -p "$k"
"$repo/tests/vm/run" --nodes 2 --kernel debug --timeout 600 --out "$k" \
	"$repo/tests/vm/selftest/kill.sh" >"$k/run.log" 2>&1 &
kill_pid=$!
"$repo/tests/vm/run" --nodes 1 --kernel debug --timeout 600 --klog end --out "$out" \
	"$repo/tests/vm/selftest/selftest.sh" >"$out/run.log" 2>&1
rc=$?
cat "$out/run.log"
[ "$rc" = 1 ] || bad "harness exited $rc, expected 1"
grep -q 'kernel splat' "$out/run.log" || bad "WARN_ON not reported as a splat"
grep -q 'WARNING:' "$out/node1/dmesg.txt" || bad "--klog end: the WARN_ON not in dmesg.txt"
grep -q '^not ok - kunit rdmx_selftest.rdmx_selftest_fail' "$out/node1/results.tap" ||
	bad "failing KUnit case not reported"
grep -q '^ok - kunit rdmx_selftest.rdmx_selftest_pass' "$out/node1/results.tap" ||
	bad "passing KUnit case not reported"

wait "$kill_pid"
rc=$?
cat "$k/run.log"
[ "$rc" = 1 ] || bad "kill: harness exited $rc, expected 1"
[ -e "$k/node1/killed" ] || bad "kill: node 1's kill not recorded"
[ ! -e "$k/node1/rc" ] || bad "kill: node 1 finished its script: not killed"
grep -q '^vm: node1: QEMU killed (SIGKILL) at node 2.s request' "$k/run.log" ||
	bad "kill: the kill not logged"
grep -q '^vm: node1: killed at node 2.s request, after failing:' "$k/run.log" ||
	bad "kill: node 1's failure before the kill not reported"
grep -q '^vm: node1: kernel splat' "$k/run.log" ||
	bad "kill: node 1's WARN_ON before the kill not reported"
grep -q '^vm: node1: script exit status' "$k/run.log" &&
	bad "kill: node 1 counted as a guest that died, not as killed on request"
grep -q '^vm: node2: ' "$k/run.log" && bad "kill: node 2 reported as failing"
grep -q '^not ok' "$k/node2/results.tap" && bad "kill: node 2 has failing results"
[ "$(grep -c '^ok - selftest: ' "$k/node2/results.tap")" = 5 ] ||
	bad "kill: node 2 did not report all its results"

[ "$fail" = 0 ] && echo "harness self-test: failures were caught; the kill path works"
exit "$fail"
