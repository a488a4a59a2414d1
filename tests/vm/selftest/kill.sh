#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Guest side of the harness self-test's kill case (two nodes, see
# tests/host/harness-selftest.sh): node 2 has the host kill node 1's QEMU
# (rdmx_kill_node). Before it is killed, node 1 reports a failing result and
# issues a WARN_ON: the harness must count node 1 as killed on request, not
# as a guest that died, and must still fail the run for both. Node 2 must
# pass.
set -u
. "$RDMX_REPO/tests/vm/lib.sh"

if [ "$RDMX_NODE" = 1 ]; then
	rdmx_fail "selftest: a failure before the kill" "deliberate"
	insmod "$(dirname "$RDMX_KO")/rdmx_selftest.ko" warn=1
	# The kill stops the kernel log's stream to the host where it is: let
	# the WARN reach the host first.
	for _ in $(seq 150); do
		grep -q 'WARNING:' "$RDMX_OUT/dmesg.txt" && break
		sleep 0.2
	done
	rdmx_barrier ready
	rdmx_check "selftest: killed at node 2's request" rdmx_await_kill 120
else
	rdmx_check_fails "selftest: rdmx_kill_node refuses this node" rdmx_kill_node 2
	rdmx_check_fails "selftest: rdmx_kill_node refuses a node not in the run" \
		rdmx_kill_node 3
	rdmx_barrier ready
	rdmx_check "selftest: rdmx_kill_node 1" rdmx_kill_node 1
	rdmx_check "selftest: a second rdmx_kill_node 1 finds it killed" \
		rdmx_kill_node 1 5
	# Node 1 never reaches this barrier: it must not be waited for.
	rdmx_check "selftest: a barrier does not wait for a killed node" \
		rdmx_barrier after-kill 30
fi
rdmx_done
