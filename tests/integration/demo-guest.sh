#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# What each guest shows in `make demo`: rdmx loaded beside soft-RoCE, the
# devices it sees, the doctor's view, and RDMA traffic crossing the link.
set -u
. "$RDMX_REPO/tests/vm/lib.sh"

section() { printf '\n--- %s\n' "$*"; }

echo "node $RDMX_NODE of $RDMX_NODES: $(uname -r), $RDMX_ADDR on eth0, $RDMX_RDMA_DEV"
section "rdmxctl version"
rdmxctl version
section "rdmxctl dev"
rdmxctl dev
section "rdmxctl doctor"
rdmxctl doctor
section "dmesg | grep 'rdmx:'"
dmesg | grep 'rdmx:'

rdmx_barrier up
section "RDMA READ/WRITE between the guests (rping over $RDMX_RDMA_DEV, 5 x 64 B, validated)"
rdmx_pair_run "demo-rping" 7174 "$RDMX_OUT/rping.txt" \
	rping -s -v -V -C 5 -S 64 -a "$RDMX_ADDR_1" -- \
	rping -c -v -V -C 5 -S 64 -a "$RDMX_ADDR_1"
rc=$?
cat "$RDMX_OUT/rping.txt"

section "RDMA WRITE bandwidth between the guests (ib_write_bw, 64 KiB messages)"
if rdmx_perftest_pair ib_write_bw "$RDMX_OUT/perftest.txt" -s 65536 -n 200 --report_gbits; then
	grep -E '^ *#bytes|^ *65536' "$RDMX_OUT/perftest.txt"
else
	echo "(perftest gave no report: it calibrates the CPU clock and refuses on a"
	echo " noisy emulated CPU; the rping above is the functional check)"
fi
exit "$rc"
