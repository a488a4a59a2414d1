#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Message-service figures for Documentation/benchmarks.rst, side by side
# with their peers on the same link in the same run (node 1 serves, node 2
# measures): 64 B round trips through /dev/rdmx (rdmxctl ping) against
# ib_send_lat and qperf tcp_lat, and 4 MiB message throughput (rdmxctl msg
# send) against ib_send_bw. Run on the perf kernel:
#   tests/vm/run --nodes 2 --kernel perf --rdma rxe tests/bench/msg-guest.sh
# A first cut of what issue 6's `make bench` will run; numbers are only
# meaningful as ratios within one run.
set -u
. "$RDMX_REPO/tests/vm/lib.sh"

peer=$RDMX_ADDR_1
res=$RDMX_OUT/bench.txt
rdmx_barrier up

# perftest: latency and bandwidth of SENDs over the same device.
rdmx_perftest_pair ib_send_lat "$RDMX_OUT/ib_send_lat.txt" -s 64 -n 2000
rdmx_perftest_pair ib_send_bw "$RDMX_OUT/ib_send_bw.txt" -s 4194304 -n 50

# qperf: TCP on the same link.
if [ "$RDMX_NODE" = 1 ]; then
	qperf >/dev/null 2>&1 &
	q=$!
	sleep 1
	rdmx_barrier qperf-up
	rdmx_barrier qperf-done
	kill "$q"
else
	rdmx_barrier qperf-up
	qperf -m 64 -t 10 "$peer" tcp_lat >"$RDMX_OUT/qperf.txt" 2>&1
	rdmx_barrier qperf-done
fi

# rdmx: ping (64 B round trips) and 4 MiB messages.
if [ "$RDMX_NODE" = 1 ]; then
	rdmxctl listen
	mkdir -p "$RDMX_OUT/in"
	rdmxctl msg recv bench --count 32 --dir "$RDMX_OUT/in" >/dev/null &
	r=$!
	sleep 1
	rdmx_barrier rdmx-up
	wait "$r"
	rdmx_barrier rdmx-done
else
	rdmx_barrier rdmx-up
	rdmxctl ping -c 2000 -s 64 "$peer" >"$RDMX_OUT/rdmx_ping.txt"
	head -c 4194304 /dev/urandom >/tmp/m4
	files=()
	for i in $(seq 32); do files+=(/tmp/m4); done
	start=$(date +%s%N)
	rdmxctl msg send "$peer" bench "${files[@]}" >/dev/null
	end=$(date +%s%N)
	echo "rdmx 4MiB x32: $(( (end - start) / 1000000 )) ms" >"$RDMX_OUT/rdmx_bw.txt"
	rdmx_barrier rdmx-done
	{
		echo "== ib_send_lat 64 B"; grep -E '^ *#bytes|^ *64 ' "$RDMX_OUT/ib_send_lat.txt"
		echo "== rdmxctl ping 64 B"; cat "$RDMX_OUT/rdmx_ping.txt"
		echo "== qperf tcp_lat 64 B"; cat "$RDMX_OUT/qperf.txt"
		echo "== ib_send_bw 4 MiB"; grep -E '^ *#bytes|^ *4194304 ' "$RDMX_OUT/ib_send_bw.txt"
		echo "== rdmx 4 MiB messages"; cat "$RDMX_OUT/rdmx_bw.txt"
	} | tee "$res"
fi
rdmx_done
