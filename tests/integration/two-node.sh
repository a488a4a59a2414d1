#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Two guests joined by one link, over soft-iWARP and then soft-RoCE: the
# harness brings up one soft-RDMA device; after testing it, this script
# replaces it with the other kind on the same netdev. (Not side by side:
# rdma_cm resolves an IP address to one device, so two soft devices on one
# netdev and address would race for the connection.) For each device, each
# guest's rdmx tracks it with its port ACTIVE, and RDMA READ and WRITE of a
# validated pattern cross the link (rping over rdma_cm). Run by tests/check
# through
#   tests/vm/run --nodes 2 --rdma siw tests/integration/two-node.sh
set -u
. "$RDMX_REPO/tests/vm/lib.sh"

peer=$RDMX_ADDR_2
[ "$RDMX_NODE" = 2 ] && peer=$RDMX_ADDR_1

rdmxctl doctor >"$RDMX_OUT/doctor.txt" 2>&1
rdmx_check "rdmxctl doctor finds nothing wrong" test $? -eq 0
rdmx_barrier up || rdmx_fail "peer came up"
rdmx_check "IP reaches the peer ($peer)" ping -c 3 -W 5 "$peer"

# test_device TYPE: traffic between the guests over TYPE0.
test_device() {
	local dev=${1}0

	rdmxctl -j dev show "$dev" >"$RDMX_OUT/dev-$dev.json"
	rdmx_check "rdmx tracks $dev, port ACTIVE" rdmx_json \
		"j[0]['name'] == '$dev' and j[0]['state'] == 'ACTIVE'" <"$RDMX_OUT/dev-$dev.json"
	RDMX_RDMA_DEV=$dev rdmx_rping_pair "$RDMX_OUT/rping-$dev.txt" 50 4096
	rdmx_check "rping (50 x 4 KiB, validated) between the guests over $dev" \
		test $? -eq 0
	tail -n 3 "$RDMX_OUT/rping-$dev.txt"
}

test_device "$RDMX_RDMA"

case "$RDMX_RDMA" in
rxe) other=siw driver=siw ;;
*) other=rxe driver=rdma_rxe ;;
esac
rdma link del "$RDMX_RDMA_DEV"
modprobe "$driver"
rdma link add "${other}0" type "$other" netdev eth0
rdmx_wait_port "${other}0" || rdmx_fail "${other}0 port ACTIVE"
rdmx_barrier "${other}-up" || rdmx_fail "peer brought up ${other}0"
test_device "$other"
rdmx_done
