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
section "dmesg | grep rdmx"
dmesg | grep rdmx

rdmx_barrier up
section "RDMA WRITE between the guests (ib_write_bw over $RDMX_RDMA_DEV)"
rdmx_perftest_pair ib_write_bw "$RDMX_OUT/perftest.txt" -s 65536 -n 200 --report_gbits
rc=$?
grep -E '^ *#bytes|^ *65536' "$RDMX_OUT/perftest.txt" || cat "$RDMX_OUT/perftest.txt"
exit "$rc"
