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
section "rdmx messages between the guests (rdmxctl over $RDMX_RDMA_DEV)"
if [ "$RDMX_NODE" = 1 ]; then
	rdmxctl listen
	mkdir -p "$RDMX_OUT/inbox"
	rdmxctl msg recv demo --count 2 --dir "$RDMX_OUT/inbox" &
	rcv=$!
	sleep 2
	rdmx_barrier demo-msg-up
	wait "$rcv" || rc=1
	echo "node 1 received:"
	for f in "$RDMX_OUT"/inbox/*; do
		printf '  %s: %s\n' "${f##*/}" "$(cat "$f")"
	done
	rdmx_barrier demo-msg-done
else
	rdmx_barrier demo-msg-up
	echo "hello from node 2 over rdmx" >/tmp/m1
	uname -a >/tmp/m2
	rdmxctl msg send "$RDMX_ADDR_1" demo /tmp/m1 /tmp/m2 || rc=1
	rdmxctl ping -c 100 "$RDMX_ADDR_1" || rc=1
	rdmxctl session list
	rdmx_barrier demo-msg-done
fi
exit "$rc"
