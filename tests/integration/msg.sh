#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The message service between two guests (node 1 receives, node 2 sends),
# over the soft-RDMA device the harness brought up. Run by tests/check as
#   tests/vm/run --nodes 2 --rdma rxe tests/integration/msg.sh
# Arguments: COUNT (default 10000) and MAX (default 64K) size the
# random-size stream; a short run of messages up to RDMX_MSG_MAX (4 MiB)
# follows it.
set -u
. "$RDMX_REPO/tests/vm/lib.sh"

MT="$RDMX_REPO/tests/integration/rdmx-msgtest"
count=${1:-10000}
max=${2:-64K}
peer=$RDMX_ADDR_2
[ "$RDMX_NODE" = 2 ] && peer=$RDMX_ADDR_1
dev=$RDMX_RDMA_DEV
sys=/sys/kernel/rdmx

# Fast failure detection for the tests below.
echo 500 >$sys/hb_interval_ms
echo 3 >$sys/hb_miss_max
echo 20000 >$sys/loss_timeout_ms
echo 1000 >$sys/reconnect_max_ms

rdmx_barrier up || rdmx_fail "peer came up"

# 1. count messages of random sizes, 0 B to max, checksummed: none lost,
# duplicated, reordered or corrupt.
rdmx_pair_run stream 7471 "$RDMX_OUT/stream.txt" \
	"$MT" recv -S msgtest -n "$count" --max-size "$max" --poll \
		--json "$RDMX_OUT/stream-recv.json" -- \
	"$MT" send -S msgtest -n "$count" --max-size "$max" --batch 8 \
		--json "$RDMX_OUT/stream-send.json" "$peer"
rdmx_check "$count messages (0 B to $max, random sizes) over $dev: exactly once, in order" \
	test $? -eq 0
tail -n 2 "$RDMX_OUT/stream.txt"

# 1a. The same over IPv6 (a unique local address on the link).
ip -6 addr add "fd00:198:18::$RDMX_NODE/64" dev eth0 nodad
peer6=fd00:198:18::1
rdmx_pair_run v6 7471 "$RDMX_OUT/v6.txt" \
	"$MT" recv -a :: -S v6 -n 200 --max-size 64K \
		--json "$RDMX_OUT/v6-recv.json" -- \
	"$MT" send -S v6 -n 200 --max-size 64K --wait 20 \
		--json "$RDMX_OUT/v6-send.json" "$peer6"
rdmx_check "200 messages over IPv6 ($dev): exactly once, in order" \
	test $? -eq 0
tail -n 1 "$RDMX_OUT/v6.txt"

# 1b. The largest messages: 4 MiB exactly (message 4), and up to it.
rdmx_pair_run big 7471 "$RDMX_OUT/big.txt" \
	"$MT" recv -S big -n 12 --max-size 4M \
		--json "$RDMX_OUT/big-recv.json" -- \
	"$MT" send -S big -n 12 --max-size 4M \
		--json "$RDMX_OUT/big-send.json" "$peer"
rdmx_check "12 messages up to 4 MiB (one of exactly 4 MiB) over $dev" \
	test $? -eq 0
tail -n 2 "$RDMX_OUT/big.txt"

# 2. A link that goes down and up in mid-stream: the session reconnects
# and every message arrives exactly once.
if [ "$RDMX_NODE" = 1 ]; then
	"$MT" recv -p 7472 -S flap -n 2000 --max-size 16K --idle-timeout 120 \
		--json "$RDMX_OUT/flap-recv.json" >"$RDMX_OUT/flap.txt" 2>&1 &
	srv=$!
	rdmx_wait_cm_listen 7472
	rdmx_barrier flap-up
	rdmx_barrier flap-sending
	# Wait until the stream runs, then cut the link under it.
	for i in $(seq 300); do
		s=$(grep -l ':7472$' $sys/sessions/*/local 2>/dev/null | head -n 1)
		[ -n "$s" ] && [ "$(cat "${s%/local}/msgs_rx")" -ge 100 ] && break
		sleep 0.2
	done
	ip link set eth0 down
	sleep 3
	ip link set eth0 up
	wait "$srv"
	rc=$?
else
	rdmx_barrier flap-up
	"$MT" send -p 7472 -S flap -n 2000 --max-size 16K --pace-us 5000 \
		--idle-timeout 120 --json "$RDMX_OUT/flap-send.json" "$peer" \
		>"$RDMX_OUT/flap.txt" 2>&1 &
	cli=$!
	rdmx_barrier flap-sending
	wait "$cli"
	rc=$?
fi
rdmx_check "link down 3 s then up mid-stream over $dev: every message exactly once" \
	test "$rc" -eq 0
tail -n 2 "$RDMX_OUT/flap.txt"
grep -H . $sys/sessions/*/reconnects $sys/sessions/*/retransmits 2>/dev/null
if [ "$RDMX_NODE" = 2 ]; then
	rdmx_check "the session reconnected during the link flap" \
		sh -c "dmesg | grep -q 'reconnected to $peer:7472'"
fi
rdmx_barrier flap-done

# 3. rdmxctl: a listener, ping through its built-in echo service, and files
# sent as messages (each file one message, in order) and written back out.
if [ "$RDMX_NODE" = 1 ]; then
	rdmxctl listen -p 7473
	rdmx_check "rdmxctl listen -p 7473" test $? -eq 0
	rdmxctl -j listen list >"$RDMX_OUT/listeners.json"
	rdmx_check "rdmxctl listen list shows it" rdmx_json \
		"any(l['addr'].endswith(':7473') for l in j)" <"$RDMX_OUT/listeners.json"
	mkdir -p "$RDMX_OUT/files"
	rdmxctl msg recv -p 7473 files --count 3 --dir "$RDMX_OUT/files" \
		>"$RDMX_OUT/msg-recv.txt" 2>&1 &
	rcv=$!
	sleep 3
	rdmx_barrier files-up
	rdmx_barrier files-sent
	wait "$rcv"
	rdmx_check "rdmxctl msg recv got 3 messages" test $? -eq 0
	(cd "$RDMX_OUT/files" && sha256sum 000001 000002 000003) >"$RDMX_SYNC/files.recv"
	rdmx_barrier files-summed
else
	head -c 0 /dev/zero >/tmp/f1
	head -c 1000 /dev/urandom >/tmp/f2
	head -c 1048576 /dev/urandom >/tmp/f3
	(cd /tmp && sha256sum f1 f2 f3 | sed 's/f\([123]\)$/00000\1/') >"$RDMX_SYNC/files.sent"
	rdmx_barrier files-up
	rdmxctl -j ping -c 200 -p 7473 "$peer" >"$RDMX_OUT/ping.json"
	rdmx_check "rdmxctl ping -c 200 $peer (built-in echo)" test $? -eq 0
	rdmx_check "ping reports min <= p50 <= p99 <= max" rdmx_json \
		"j['min'] <= j['p50'] <= j['p99'] <= j['max']" <"$RDMX_OUT/ping.json"
	rdmxctl ping -c 50 -s 4096 -p 7473 "$peer"
	rdmxctl msg send -p 7473 "$peer" files /tmp/f1 /tmp/f2 /tmp/f3
	rdmx_check "rdmxctl msg send: 3 files (0 B, 1000 B, 1 MiB)" test $? -eq 0
	rdmxctl session list
	rdmx_barrier files-sent
	rdmx_barrier files-summed
	rdmx_check "the files arrived intact and in order" \
		diff "$RDMX_SYNC/files.sent" "$RDMX_SYNC/files.recv"
fi

# 4. A peer that disappears for good (its link cut mid-stream): the
# sender's next SEND or RECV fails with ETIMEDOUT or ECONNRESET once the
# heartbeats (0.5 s x 3) and the loss timeout (5 s) have run out, plus at
# most one connection attempt (8 s).
echo 5000 >$sys/loss_timeout_ms
# siw connects with a blocking TCP connect inside rdma_connect(): to a dead
# peer it holds the CM (and the session's teardown) for the SYN timeout,
# about two minutes by default. Real iWARP NICs connect asynchronously.
[ "$RDMX_RDMA" = siw ] && sysctl -qw net.ipv4.tcp_syn_retries=2
if [ "$RDMX_NODE" = 1 ]; then
	"$MT" recv -p 7474 -S dead -n 1000000 --max-size 1K --idle-timeout 60 \
		>"$RDMX_OUT/dead.txt" 2>&1 &
	rcv=$!
	rdmx_wait_cm_listen 7474
	rdmx_barrier dead-up
	rdmx_barrier dead-streaming
	sleep 2
	ip link set eth0 down
	rdmx_barrier dead-cut
	rdmx_barrier dead-detected 120
	ip link set eth0 up
	kill "$rcv" 2>/dev/null
	wait "$rcv" 2>/dev/null
else
	rdmx_barrier dead-up
	"$MT" stream -p 7474 -S dead --pace-us 5000 \
		--json "$RDMX_OUT/dead.json" "$peer" >"$RDMX_OUT/dead.txt" 2>&1 &
	cli=$!
	sleep 1
	rdmx_barrier dead-streaming
	rdmx_barrier dead-cut
	kill -USR1 "$cli"
	# While its channel is open, rdmx cannot be unloaded.
	rdmx_check_fails "rmmod rdmx refused while an endpoint is open" rmmod rdmx
	wait "$cli"
	rc=$?
	cat "$RDMX_OUT/dead.txt"
	rdmx_check "dead peer: the stream fails with ETIMEDOUT or ECONNRESET" \
		test "$rc" -eq 0
	rdmx_check "dead peer: detected within 20 s of the cut" rdmx_json \
		"j['detect_ms'] <= 20000" <"$RDMX_OUT/dead.json"
	rdmx_barrier dead-detected
fi
ip link set eth0 up
rdmx_wait_port "$dev"
rdmx_barrier all-done

dmesg | grep "rdmx: session" | tail -n 20

# 5. Unload with sessions, a persistent listener and sysfs directories
# still there: clean (the kmemleak scan after the script checks).
rdmx_check "rmmod rdmx with idle sessions and listeners" rmmod rdmx
rdmx_check "nothing of rdmx left in sysfs" test ! -e $sys
rdmx_done
