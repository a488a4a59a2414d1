#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Two guests joined by one link: each sees its soft-RDMA device through
# rdmx, the link carries IP, and RDMA traffic flows between the guests over
# the same device (perftest over rdma_cm). Run by tests/check through
#   tests/vm/run --nodes 2 [--rdma rxe|siw] tests/integration/two-node.sh
set -u
. "$RDMX_REPO/tests/vm/lib.sh"

dev=$RDMX_RDMA_DEV
peer=$RDMX_ADDR_2
[ "$RDMX_NODE" = 2 ] && peer=$RDMX_ADDR_1

rdmxctl -j dev >"$RDMX_OUT/dev.json"
rdmx_check "rdmx tracks $dev, port ACTIVE" rdmx_json \
	"any(d['name'] == '$dev' and d['state'] == 'ACTIVE' for d in j)" <"$RDMX_OUT/dev.json"
rdmx_check "rdmxctl doctor finds nothing wrong" rdmxctl doctor

rdmx_barrier up || rdmx_fail "peer came up"
rdmx_check "IP reaches the peer ($peer)" ping -c 3 -W 5 "$peer"

# RDMA WRITE traffic across the link on the device rdmx tracks.
rdmx_perftest_pair ib_write_bw "$RDMX_OUT/perftest.txt" -s 16384 -n 100 --report_gbits
rdmx_check "ib_write_bw between the guests completed" test $? -eq 0
cat "$RDMX_OUT/perftest.txt"
rdmx_done
