#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Hostile peers, between two guests: node 1 serves, node 2 attacks it with
# crafted clients that send what rdmx's own client never would, in races
# driven in loops. Afterwards node 1 must have no queue, connection or
# reference left behind: its exports go, rdmx unloads, kmemleak is quiet,
# and the harness finds no splat (KASAN, lockdep, list debugging).
#
#   0. a secure export (the default) refuses a crafted client's OPEN from
#      an unreserved port (EACCES, logged) and serves rdmxctl map; the
#      crafted clients below use exports added --insecure (and
#      --shared, as many of their connections write at once);
#   1. rdmx-blkcraft -R: two OPENs of one export sent back to back, many
#      times over (the server runs commands side by side, so a queue must
#      not be bound twice), and two commands with one tag; rdmx-blkcraft
#      -B: command batches (RDMX_BLK_OPEN_CMD_BATCH), valid ones answered
#      command by command (inline READs with their data, one past the end
#      with ERANGE, the queue kept) and malformed ones refused whole (on a
#      queue that did not ask, a length not of whole commands, 17
#      commands, an OPEN or an inline WRITE among them, a tag twice or
#      in flight: the connection ends, nothing answered); rdmx-blkcraft
#      -T: the staging area (RDMX_BLK_OPEN_STAGE), staged WRITEs written
#      by one RDMA WRITE answered and read back, malformed staged
#      commands disconnected, and the area neither readable nor
#      writable through another queue; then a map
#      through a listener that user nobody's endpoint made (port 7483)
#      must be refused: exports are served through administrators'
#      listeners only, and one where user nobody listens on an address
#      under an administrator's any-address must be served;
#   2. a local unprivileged user, on both hosts of a live session, finds
#      nothing in /sys/kernel/rdmx that would continue it (its uuid);
#   3. a local unprivileged user listening for root's service on the other
#      address family's any-address is refused, and root's endpoint gets
#      its channels; 3b. listeners come and go on a port under connection
#      requests (rdmx never holds two rdma_cm ids on one port);
#   4. rdmx-msgcraft, a hostile peer of the message protocol: empty DATA
#      segments with MORE (a message that grows without growing), a flood
#      of OPENs acknowledging nothing (granting no credits, and granting
#      them: the server's queue of answers must stop at its bound), DATA
#      whose sequence number no retransmission can have (more than 4096
#      behind, 2^31 away, ahead: the connection ends), a peer that posts
#      no receive yet grants credits and keeps sending heartbeats (the
#      server's device fails its refused SENDs, and so its connection,
#      within the loss timeout, and the server's orderly close, its CLOSE
#      queued behind, too), a peer that asks for receiver-not-ready
#      retries without end (refused; and, as a listener on node 2 itself,
#      a server that asks for them: rdmx's session and block clients
#      disconnect unused),
#      and 1000 echo channels whose echoes
#      the peer never acknowledges; meanwhile another session's ping must
#      get its echoes (no shared worker waits on the stalled peer);
#   5. limits: with max_sessions_per_host at 2, four hostile sessions at
#      once from node 2 get two admitted and two refused, counted in
#      sessions_refused;
#   6. pinned memory is charged to the user: under a small RLIMIT_MEMLOCK
#      an unprivileged user's one-sided read of 1 MiB is refused (ENOMEM),
#      one of 64 KiB is not, and root's (CAP_IPC_LOCK) is not either;
#   7. export del --force under writes to a slow export returns once no
#      I/O of it runs, its device no longer claimed: it exports again;
#   8. user nobody holds at most 256 of a session's channels, root more;
#   9. a process in another network namespace is refused (EOPNOTSUPP);
#  10. a write of a map's replaced connection, held by a frozen store, is
#      fenced: the reconnected map's OPEN waits for it, and its own write
#      of the same block is what stays; the same for a block device
#      export, whose writes are bios (a null_blk that completes each
#      after 20 s holds the write); on that export, a command batch that
#      reuses the tag of a READ still in flight ends the connection
#      (rdmx-blkcraft -S);
#  11. a RAM export deleted under a mapped disk and added again: the
#      client's I/O fails, and never reads zeroes as its data;
#  12. queues the server drops by itself (rdmx-blkcraft -K): one that
#      never OPENs, and one whose client's QP stops answering (as when a
#      client vanishes and its DREQ is lost) after a keepalive reached
#      it; the export is then not busy;
#  13. access: one map at a time writes an export (a second read-write
#      map gets EBUSY, a read-only one gets in, export show names both),
#      several write one added --shared;
#  14. (last) the RDMA device removed under a mapped disk and a session
#      while the link is down: the removal waits for no port; both come
#      back.
#
# and, in 1 and 4, the wire fuzz of both protocols (rdmx-blkcraft and
# rdmx-msgcraft -F: mutated frames, reconnecting as the server drops them,
# then the server must still serve a well-formed client), FUZZ_SECS each,
# JOBS fuzzers of each protocol side by side (default 1).
#
# Usage (tests/check's guest-hostile; make fuzz runs it with a long
# FUZZ_SECS and 4 JOBS):
#   tests/vm/run --nodes 2 --kernel debug --rdma rxe tests/integration/hostile.sh \
#       [ROUNDS [FUZZ_SECS [SEED [JOBS]]]]
set -u
. "$RDMX_REPO/tests/vm/lib.sh"

rounds=${1:-200}
# The wire fuzz: how long each of the two runs, and its seed.
fuzz_secs=${2:-60}
seed=${3:-$(date +%s)}
# Wire fuzzers of each protocol side by side (make fuzz runs several).
jobs=${4:-1}
srv=$RDMX_ADDR_1
port=7471
MT="$RDMX_REPO/tests/integration/rdmx-msgtest"

# fuzz_par NAME TOOL ARGS...: $jobs wire fuzzers side by side, TOOL -F
# SEED ARGS with seeds $seed, $seed + 1, ...; each must exit 0, and its TAP
# lines become results named "NAME: ..." ("NAME-I: ..." past the first).
fuzz_par() {
	local name=$1 tool=$2 i n rc
	local -a pids=()

	shift 2
	for ((i = 0; i < jobs; i++)); do
		"$tool" -F $((seed + i)) "$@" >"$RDMX_OUT/$name-$i.txt" 2>&1 &
		pids+=($!)
	done
	for ((i = 0; i < jobs; i++)); do
		wait "${pids[i]}"
		rc=$?
		n=$name
		[ "$i" = 0 ] || n=$name-$i
		rdmx_check "$n exits 0" test "$rc" -eq 0
		rdmx_tap_absorb "$n: " "$RDMX_OUT/$name-$i.txt"
		grep 'fuzz seed' "$RDMX_OUT/$name-$i.txt"
	done
}

# run_tap NAME CMD...: CMD's TAP lines become results named "NAME: ...",
# and CMD must exit 0.
run_tap() {
	local name=$1

	shift
	"$@" >"$RDMX_OUT/$name.txt" 2>&1
	rdmx_check "$name exits 0" test "$?" -eq 0
	rdmx_tap_absorb "$name: " "$RDMX_OUT/$name.txt"
}

if [ "$RDMX_NODE" = 1 ]; then
	rdmx_check "listen on $srv:$port" rdmxctl listen add -a "$srv" -p "$port"
	# The crafted client connects from ports rdma_cm picks, above 1023.
	rdmx_check "export craft: ram:16M --insecure --shared" \
		rdmxctl export add craft ram:16M --insecure --shared
	rdmx_check "export craftro: ram:16M --ro --insecure" \
		rdmxctl export add craftro ram:16M --ro --insecure
	rdmx_check "export craftsec: ram:4M (secure, the default)" \
		rdmxctl export add craftsec ram:4M
	rdmx_check "export show: craftsec is secure" \
		rdmx_export_json craftsec "j[0]['secure'] is True"
	rdmx_check "export show: craft is not" \
		rdmx_export_json craft "j[0]['secure'] is False"
	rdmx_check "user nobody cannot read an export's path or allow-list" \
		setpriv --reuid=65534 --regid=65534 --clear-groups -- \
		sh -c '! cat /sys/kernel/rdmx/exports/craft/path && ! cat /sys/kernel/rdmx/exports/craft/allow'
	rdmx_check "user nobody reads an export's size" \
		setpriv --reuid=65534 --regid=65534 --clear-groups -- \
		cat /sys/kernel/rdmx/exports/craft/size
	rdmx_barrier up || rdmx_fail "peer came up"
	# It must outlive node 2's wire fuzz, which comes before the map.
	timeout $((600 + fuzz_secs)) setpriv --reuid=65534 --regid=65534 --clear-groups -- \
		"$MT" recv -p 7483 -S lure -n 1 --idle-timeout 0 >"$RDMX_OUT/lure.txt" 2>&1 &
	lure=$!
	rdmx_wait_cm_listen 7483 || rdmx_fail "user nobody listens on port 7483"
	# And the other way round: where an administrator listens on the
	# any-address, an endpoint's listener on one address under it does
	# not shut the block service out of that address.
	rdmx_check "listen on any IPv4 address, port 7486" rdmxctl listen add -p 7486
	timeout $((600 + fuzz_secs)) setpriv --reuid=65534 --regid=65534 --clear-groups -- \
		"$MT" recv -a "$srv" -p 7486 -S squat -n 1 --idle-timeout 0 \
		>"$RDMX_OUT/squat.txt" 2>&1 &
	squat=$!
	rdmx_check "user nobody listens on $srv:7486, under it" \
		rdmx_poll 60 sh -c "grep -qs '^$srv:7486\$' /sys/kernel/rdmx/listeners/*/addr"
	rdmx_barrier lure-up $((1800 + fuzz_secs))
	rdmx_barrier blk-done 1800
	kill "$lure" "$squat" 2>/dev/null
	wait "$lure" "$squat"
	rdmx_check "listen del -p 7486" rdmxctl listen del -p 7486
	rdmx_check "the map through user nobody's listener is logged as refused" \
		sh -c "dmesg | grep -q 'rdmx: refused a block queue from .*was not added by an administrator'"
	rdmx_poll 30 rdmx_export_json craft "j[0]['clients'] == 0"
	rdmx_check "no queue left on craft" rdmx_export_json craft "j[0]['clients'] == 0"
	rdmx_check "OPEN races logged as malformed" \
		sh -c "dmesg | grep -q 'rdmx: block queue 0 from .*: malformed OPEN; disconnecting'"
	rdmx_check "command batches refused whole are logged as malformed" \
		sh -c "dmesg | grep -q 'rdmx: block queue 0 from .*: malformed command batch'"
	rdmx_check "an OPEN of craftsec from an unreserved port is logged as refused" \
		sh -c "dmesg | grep -q 'rdmx: export craftsec: .* connected from an unprivileged port; refused'"
	rdmx_check "export del craft" rdmxctl export del craft
	rdmx_check "export del craftro" rdmxctl export del craftro
	rdmx_check "export del craftsec" rdmx_poll 30 rdmxctl export del craftsec
else
	rdmx_barrier up || rdmx_fail "peer came up"
	run_tap blkcraft \
		"$RDMX_REPO/tests/integration/rdmx-blkcraft" -R -r "$rounds" \
		-p "$port" "$srv" craft craftro
	run_tap blkcraft-batch timeout 600 \
		"$RDMX_REPO/tests/integration/rdmx-blkcraft" -B \
		-p "$port" "$srv" craft craftro
	run_tap blkcraft-stage timeout 600 \
		"$RDMX_REPO/tests/integration/rdmx-blkcraft" -T \
		-p "$port" "$srv" craft craftro
	fuzz_par blkcraft-fuzz "$RDMX_REPO/tests/integration/rdmx-blkcraft" \
		-n 100000 -d "$fuzz_secs" -p "$port" "$srv" craft craftro
	# A secure export: a client on a port any process may bind is
	# refused; rdmx's client, on a reserved port, is served.
	run_tap blkcraft-secure \
		"$RDMX_REPO/tests/integration/rdmx-blkcraft" -O EACCES \
		-p "$port" "$srv" craftsec craftro
	if d=$(rdmxctl map -p "$port" "$srv" craftsec); then
		rdmx_check "rdmxctl map of the secure export craftsec reads" \
			dd if="$d" of=/dev/null bs=4k count=4 iflag=direct
		rdmx_check "unmap $d" rdmxctl unmap "$d"
	else
		rdmx_fail "rdmxctl map of the secure export craftsec"
	fi
	rdmx_barrier lure-up $((1800 + fuzz_secs))
	if d=$(rdmxctl map -p 7483 --timeout 30s "$srv" craft 2>"$RDMX_OUT/map-lure.err"); then
		rdmx_fail "a map through user nobody's listener on port 7483 is refused (got $d)"
		rdmxctl unmap "$d"
	else
		rdmx_pass "a map through user nobody's listener on port 7483 is refused"
	fi
	if d=$(rdmxctl map -p 7486 --timeout 30s "$srv" craft 2>"$RDMX_OUT/map-squat.err"); then
		rdmx_check "a map to $srv:7486, where user nobody listens under an administrator's any-address, reads" \
			dd if="$d" of=/dev/null bs=4k count=4 iflag=direct
		rdmx_check "unmap $d" rdmxctl unmap "$d"
	else
		rdmx_fail "a map to $srv:7486, where user nobody listens under an administrator's any-address"
	fi
	rdmx_barrier blk-done 1800
fi

# 2. While node 2 pings node 1 (a session on both), user nobody reads every
# file under /sys/kernel/rdmx it can: none may hold a uuid, the credential
# a reconnect continues a session with. (Exports have uuids too, which are
# no secret: they are gone by now.)
# shellcheck disable=SC2317  # called through rdmx_check
no_uuid_for_nobody() {
	setpriv --reuid=65534 --regid=65534 --clear-groups -- \
		sh -c '! grep -rEqs "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-" /sys/kernel/rdmx'
}
rdmx_barrier ping-ready 600
if [ "$RDMX_NODE" = 2 ]; then
	rdmxctl ping -c 300 -i 100 "$srv" >"$RDMX_OUT/ping.txt" 2>&1 &
	ping_pid=$!
fi
rdmx_check "a session is up" rdmx_poll 60 sh -c 'ls /sys/kernel/rdmx/sessions | grep -q "^[0-9]"'
rdmx_check "user nobody finds no session uuid under /sys/kernel/rdmx" no_uuid_for_nobody
if [ "$RDMX_NODE" = 2 ]; then
	wait "$ping_pid"
	rdmx_check "the ping went on undisturbed" test "$?" -eq 0
fi

# 3. Root listens for service "steal" on IPv4's any-address, port 7481.
# User nobody's listen for the same name on IPv6's any-address is refused:
# rdmx holds one rdma_cm id per port, root's here. Node 2's channel, over
# IPv4, must reach root's endpoint.
if [ "$RDMX_NODE" = 1 ]; then
	timeout 300 "$MT" recv -p 7481 -S steal -n 50 --max-size 4K \
		>"$RDMX_OUT/steal-owner.txt" 2>&1 &
	owner=$!
	rdmx_wait_cm_listen 7481 || rdmx_fail "root listens on 7481"
	timeout 60 setpriv --reuid=65534 --regid=65534 --clear-groups -- \
		"$MT" recv -a :: -p 7481 -S steal -n 50 --max-size 4K \
		>"$RDMX_OUT/steal-thief.txt" 2>&1
	rdmx_check "user nobody's listen on [::]:7481 is refused (EADDRINUSE)" \
		grep -q "LISTEN on :: port 7481 service steal failed: Address already in use" \
		"$RDMX_OUT/steal-thief.txt"
	rdmx_check "the refusal is logged" \
		sh -c "dmesg | grep -q 'rdmx: refused to listen on \[::\]:7481: port 7481 is rdmx.s on 0.0.0.0'"
	rdmx_barrier steal-ready 600
	wait "$owner"
	rdmx_check "root's endpoint got its 50 messages" test "$?" -eq 0
	rdmx_barrier steal-sent 600
else
	rdmx_barrier steal-ready 600
	timeout 300 "$MT" send -p 7481 -S steal -n 50 --max-size 4K "$srv" \
		>"$RDMX_OUT/steal-send.txt" 2>&1
	rdmx_check "50 messages sent to service steal over IPv4" test "$?" -eq 0
	rdmx_barrier steal-sent 600
fi

# 3b. Listeners that come and go under connection requests, as user
# nobody. Node 1 gets a second address on the RDMA device's netdev. On
# port 7484, nobody listens on node 1's address and, for 15 s, on the
# second again and again: two rdma_cm ids listening on one port of one
# device would share an IB CM listen id, and rdma_cm frees one destroyed under a request it is
# handling; so the second is refused every time. On port 7485, nobody
# listens on the any-address, and the second address joins that id again
# and again. Meanwhile node 2 sends connection requests to the second
# address's ports, 16 at a time (ucmatose; rdmx refuses them).
addr2=198.18.0.101
churn_secs=15
# churn PORT: user nobody listens on $addr2:PORT and closes, 200 times a
# round, for $churn_secs; one line of counts a round.
churn() {
	local end=$((SECONDS + churn_secs))

	while [ "$SECONDS" -lt "$end" ]; do
		setpriv --reuid=65534 --regid=65534 --clear-groups -- \
			"$MT" churn -a "$addr2" -p "$1" -S churn2 -n 200 || return
	done
}
if [ "$RDMX_NODE" = 1 ]; then
	ip addr add "$addr2/24" dev eth0
	timeout 600 setpriv --reuid=65534 --regid=65534 --clear-groups -- \
		"$MT" recv -a "$srv" -p 7484 -S churn -n 1 --idle-timeout 0 \
		>"$RDMX_OUT/churn-held-7484.txt" 2>&1 &
	held1=$!
	timeout 600 setpriv --reuid=65534 --regid=65534 --clear-groups -- \
		"$MT" recv -p 7485 -S churn -n 1 --idle-timeout 0 \
		>"$RDMX_OUT/churn-held-7485.txt" 2>&1 &
	held2=$!
	rdmx_wait_cm_listen 7484 || rdmx_fail "nobody listens on 7484"
	rdmx_wait_cm_listen 7485 || rdmx_fail "nobody listens on 7485"
	rdmx_barrier churn-ready 600
	churn 7484 >"$RDMX_OUT/churn-7484.txt" 2>&1
	# shellcheck disable=SC2016  # awk's $0
	rdmx_check "a second address on port 7484: refused every time (EADDRINUSE), $(wc -l <"$RDMX_OUT/churn-7484.txt") x 200" \
		awk '$0 != "rdmx-msgtest: listened 0, refused 200 of 200; the first: EADDRINUSE" { exit 1 } END { exit !NR }' \
		"$RDMX_OUT/churn-7484.txt"
	churn 7485 >"$RDMX_OUT/churn-7485.txt" 2>&1
	# shellcheck disable=SC2016  # awk's $0
	rdmx_check "a second address under the any-address of port 7485: listened every time, $(wc -l <"$RDMX_OUT/churn-7485.txt") x 200" \
		awk '$0 != "rdmx-msgtest: listened 200, refused 0 of 200" { exit 1 } END { exit !NR }' \
		"$RDMX_OUT/churn-7485.txt"
	rdmx_barrier churn-done 1200
	kill "$held1" "$held2" 2>/dev/null
	wait "$held1" "$held2"
	ip addr del "$addr2/24" dev eth0
	rdmx_check "no listener is left on 7484 or 7485" \
		sh -c "! grep -qs ':748[45]\$' /sys/kernel/rdmx/listeners/*/addr"
else
	rdmx_barrier churn-ready 600
	(
		while :; do
			for p in 7484 7485; do
				timeout 30 ucmatose -s "$addr2" -p "$p" -c 16 \
					>/dev/null 2>&1
				echo x
			done
		done >"$RDMX_OUT/churn-connects.txt"
	) &
	connects=$!
	rdmx_barrier churn-done 1200
	kill "$connects"
	wait "$connects" 2>/dev/null
	rdmx_check "connection requests went to node 1 meanwhile" \
		test -s "$RDMX_OUT/churn-connects.txt"
	echo "# ucmatose runs of 16 requests: $(wc -l <"$RDMX_OUT/churn-connects.txt")"
fi

# 4. The hostile message peer, from node 2; node 1 only serves.

# KIND WHAT LOG CMD...: rdmx-msgcraft listen-rnr-endless on node 2's own
# address, port 7499, accepts one connection of CMD (a client of KIND)
# asking for RNR retries without end: CMD must fail (WHAT), the crafted
# listener see the connection end unused, and the kernel log say LOG.
listen_rnr_endless() {
	local kind=$1 what=$2 log=$3 out listener

	shift 3
	out="$RDMX_OUT/msgcraft-listen-rnr-endless-$kind.txt"
	"$MC" -p 7499 -n 1 -t 60 listen-rnr-endless "$RDMX_ADDR_2" >"$out" 2>&1 &
	listener=$!
	if rdmx_poll 30 grep -q "^# listening on" "$out"; then
		"$@" >"$out.cmd" 2>&1
		rdmx_check "$what against a server asking for RNR retries without end" \
			test "$?" -ne 0
	else
		rdmx_fail "listen-rnr-endless ($kind): listening on $RDMX_ADDR_2:7499"
	fi
	wait "$listener"
	rdmx_check "msgcraft-listen-rnr-endless ($kind) exits 0" test "$?" -eq 0
	rdmx_tap_absorb "msgcraft-listen-rnr-endless ($kind): " "$out"
	rdmx_check "the $kind client's refusal is logged" \
		sh -c "dmesg | grep -q '$log for receiver-not-ready retries without end'"
}

MC="$RDMX_REPO/tests/integration/rdmx-msgcraft"
if [ "$RDMX_NODE" = 2 ]; then
	run_tap msgcraft-silent "$MC" -t 30 silent "$srv"
	run_tap msgcraft-zero-segs "$MC" -n 20000 -t 20 zero-segs "$srv"
	run_tap msgcraft-open-flood "$MC" -n 10000 -t 10 open-flood "$srv"
	run_tap msgcraft-open-noack "$MC" -n 3000 -t 10 open-noack "$srv"
	run_tap msgcraft-seq-far "$MC" seq-far "$srv"
	run_tap msgcraft-rnr-stall "$MC" -t 90 rnr-stall "$srv"
	run_tap msgcraft-rnr-close "$MC" -t 90 rnr-close "$srv"
	run_tap msgcraft-rnr-endless "$MC" rnr-endless "$srv"
	# A server asking for RNR retries without end, on this node's own
	# address: rdmx's clients must end each connection before using it.
	listen_rnr_endless session "rdmxctl ping gets no echo" \
		"rdmx: session [0-9]*: $RDMX_ADDR_2:7499 accepted asking" \
		rdmxctl ping -c 1 -p 7499 --timeout 10 "$RDMX_ADDR_2"
	listen_rnr_endless block "rdmxctl map fails" \
		"rdmx: rdmxb[0-9]*: $RDMX_ADDR_2:7499 accepted queue 0 asking" \
		rdmxctl map -p 7499 --timeout 10s "$RDMX_ADDR_2" craft
	"$MC" -n 1000 -t 90 echo-stall "$srv" >"$RDMX_OUT/msgcraft-echo-stall.txt" 2>&1 &
	stall=$!
	if rdmx_poll 600 grep -q "^ok .* - DATA of" "$RDMX_OUT/msgcraft-echo-stall.txt"; then
		rdmxctl ping -c 5 --timeout 20 "$srv" >"$RDMX_OUT/ping-stalled.txt" 2>&1
		rdmx_check "while 1000 echo channels stall: another session's ping gets its echoes" \
			test "$?" -eq 0
	else
		rdmx_fail "echo-stall: its channels opened and sent"
	fi
	wait "$stall"
	rdmx_check "msgcraft-echo-stall exits 0" test "$?" -eq 0
	rdmx_tap_absorb "msgcraft-echo-stall: " "$RDMX_OUT/msgcraft-echo-stall.txt"
	fuzz_par msgcraft-fuzz "$MC" -n 100000 -d "$fuzz_secs" "$srv"
fi
rdmx_barrier msgcraft-done $((1800 + fuzz_secs))
if [ "$RDMX_NODE" = 1 ]; then
	rdmx_check "the half-open connection is logged" \
		sh -c "dmesg | grep -q 'rdmx: session [0-9]*: nothing received from $RDMX_ADDR_2'"
	rdmx_check "unacknowledged OPEN_REPs stop at the lane's bound, logged" \
		sh -c "dmesg | grep -q 'rdmx: session [0-9]*: $RDMX_ADDR_2:[0-9]* acknowledges nothing: [0-9]* messages queued, no more'"
	rdmx_check "a peer that takes none of the SENDs it granted credits for loses its connection, logged" \
		sh -c "dmesg | grep -q 'rdmx: session [0-9]*: $RDMX_ADDR_2:[0-9]* took none of the SENDs on lane 0: receiver not ready 7 times'"
	rdmx_check "a peer asking for RNR retries without end is refused, logged" \
		sh -c "dmesg | grep -q 'rdmx: refused a connection from $RDMX_ADDR_2:[0-9]*: it asks for receiver-not-ready retries without end'"
fi
rdmx_check "node 1 still answers a ping" \
	rdmxctl ping -c 3 --timeout 20 "$srv"

# 5. Server sessions per peer host. Node 1 first lets node 2's earlier
# sessions go (a short loss timeout), then admits two at most.
# shellcheck disable=SC2317  # called through rdmx_poll
sessions_from() { # ADDR: node 1's server sessions of that peer host
	local d n=0
	for d in /sys/kernel/rdmx/sessions/[0-9]*; do
		[ -e "$d/role" ] || continue
		[ "$(cat "$d/role")" = server ] || continue
		case "$(cat "$d/peer" 2>/dev/null)" in "$1":*) n=$((n + 1)) ;; esac
	done
	echo "$n"
}
if [ "$RDMX_NODE" = 1 ]; then
	echo 1000 >/sys/kernel/rdmx/loss_timeout_ms
	rdmx_check "node 2's earlier sessions are gone" \
		rdmx_poll 120 sh -c "[ \"\$(ls /sys/kernel/rdmx/sessions | wc -l)\" = 0 ]"
	refused0=$(cat /sys/kernel/rdmx/sessions_refused)
	echo 2 >/sys/kernel/rdmx/max_sessions_per_host
	rdmx_barrier limits-set 600
	most=0
	for _ in $(seq 60); do
		n=$(sessions_from "$RDMX_ADDR_2")
		[ "$n" -gt "$most" ] && most=$n
		sleep 0.5
	done
	rdmx_barrier limits-tried 600
	rdmx_check "never more than 2 sessions of node 2 at once (saw $most)" test "$most" -le 2
	rdmx_check "sessions_refused counted the refusals" \
		test "$(cat /sys/kernel/rdmx/sessions_refused)" -ge $((refused0 + 2))
	rdmx_check "the refusals are logged" \
		sh -c "dmesg | grep -q 'rdmx: refused a session from .*: over max_sessions'"
	echo 64 >/sys/kernel/rdmx/max_sessions_per_host
	echo 30000 >/sys/kernel/rdmx/loss_timeout_ms
else
	rdmx_barrier limits-set 600
	pids=()
	for i in 1 2 3 4; do
		"$MC" -n 1 -t 20 echo-stall "$srv" >"$RDMX_OUT/limit-$i.txt" 2>&1 &
		pids+=("$!")
	done
	admitted=0
	for p in "${pids[@]}"; do
		wait "$p" && admitted=$((admitted + 1))
	done
	rdmx_check "of 4 hostile sessions at once, 2 admitted (got $admitted)" test "$admitted" -eq 2
	rdmx_barrier limits-tried 600
fi

# 6. Pinned memory is charged to the user: an unprivileged user under a
# 256 KiB RLIMIT_MEMLOCK reads 64 KiB of node 1's memory but not 1 MiB
# (the local buffer of a one-sided operation is pinned for it); root,
# with CAP_IPC_LOCK, reads 1 MiB under the same limit.
if [ "$RDMX_NODE" = 1 ]; then
	timeout 300 rdmxctl mr serve -p 7492 --size 4M --count 3 \
		>"$RDMX_OUT/memlock-serve.txt" 2>&1 &
	mrsrv=$!
	rdmx_wait_cm_listen 7492 || rdmx_fail "rdmxctl mr serve listens on 7492"
	rdmx_barrier memlock-up 600
	rdmx_barrier memlock-done 600
	wait "$mrsrv"
	rdmx_check "rdmxctl mr serve: 3 channels served" test $? -eq 0
else
	rdmx_barrier memlock-up 600
	as_nobody_memlock() { # KIB CMD...
		local kib=$1

		shift
		sh -c 'ulimit -l "$0" && exec setpriv --reuid=65534 --regid=65534 --clear-groups -- "$@"' \
			"$kib" "$@"
	}
	as_nobody_memlock 256 timeout 120 rdmxctl rma -p 7492 "$srv" read 0 1048576 -o /tmp/memlock.bin \
		>"$RDMX_OUT/memlock-1m.txt" 2>&1
	rc=$?
	cat "$RDMX_OUT/memlock-1m.txt"
	rdmx_check "user nobody, 256 KiB RLIMIT_MEMLOCK: a 1 MiB read is refused (exit $rc)" \
		test "$rc" -ne 0 -a "$rc" -ne 124
	rdmx_check "user nobody: the refusal says out of memory (ENOMEM)" \
		grep -qi 'cannot allocate memory\|ENOMEM' "$RDMX_OUT/memlock-1m.txt"
	rdmx_check "the refusal is logged: over RLIMIT_MEMLOCK" \
		sh -c "dmesg | grep -q 'rdmx: pid [0-9]*: pinning [0-9]* pages goes over RLIMIT_MEMLOCK'"
	rdmx_check "user nobody, 256 KiB RLIMIT_MEMLOCK: a 64 KiB read" \
		as_nobody_memlock 256 timeout 120 rdmxctl rma -p 7492 "$srv" read 0 65536 -o /tmp/memlock.bin
	rdmx_check "root (CAP_IPC_LOCK), 256 KiB RLIMIT_MEMLOCK: a 1 MiB read" \
		sh -c 'ulimit -l 256 && exec timeout 120 rdmxctl rma -p 7492 "$0" read 0 1048576 -o /tmp/memlock-root.bin' "$srv"
	rdmx_barrier memlock-done 600
fi

# 7. A forced export delete waits for the backing store: node 2 writes to
# a slow export (a null_blk that takes 500 ms a request); node 1 deletes it
# with --force under that I/O, and can export the device again at once
# (its claim went with the delete, not after the writes in flight).
if [ "$RDMX_NODE" = 1 ]; then
	if rdmx_nullb 0 16 irqmode=2 completion_nsec=500000000 \
		hw_queue_depth=1 submit_queues=1; then
		rdmx_check "export slowdel: /dev/nullb0 (500 ms a request)" \
			rdmxctl export add slowdel /dev/nullb0
	else
		rdmx_fail "null_blk nullb0 made through configfs"
	fi
	rdmx_barrier slowdel-up 600
	rdmx_barrier slowdel-writing 600
	rdmx_poll 30 rdmx_export_json slowdel "j[0]['writes'] >= 1"
	rdmx_check "export del --force slowdel under I/O" rdmxctl export del --force slowdel
	rdmx_check "the device exports again at once (no claim left)" \
		rdmxctl export add slowdel2 /dev/nullb0
	rdmx_check "export del slowdel2" rdmxctl export del slowdel2
	rdmx_barrier slowdel-done 600
else
	rdmx_barrier slowdel-up 600
	if d=$(rdmxctl map -p "$port" --loss-timeout 3s "$srv" slowdel); then
		rdmx_pass "map slowdel: $d"
		dd if=/dev/zero of="$d" bs=4k count=40 oflag=direct \
			>"$RDMX_OUT/slowdel-dd.txt" 2>&1 &
		ddp=$!
	else
		rdmx_fail "map slowdel"
		d=
	fi
	rdmx_barrier slowdel-writing 600
	rdmx_barrier slowdel-done 600
	if [ -n "$d" ]; then
		wait "$ddp"
		rdmx_check "unmap $d" rdmxctl unmap --force "$d"
	fi
fi

# 8. A session is shared by every user of the two hosts: user nobody may
# hold 256 of its 1024 channels, root (CAP_NET_ADMIN) more.
if [ "$RDMX_NODE" = 2 ]; then
	setpriv --reuid=65534 --regid=65534 --clear-groups -- \
		timeout 300 "$MT" hold -p "$port" -S rdmx.echo -n 300 "$srv" \
		>"$RDMX_OUT/hold-nobody.txt" 2>&1
	cat "$RDMX_OUT/hold-nobody.txt"
	rdmx_check "user nobody holds 256 channels of the session, not more (EBUSY)" \
		grep -q '^rdmx-msgtest: 256 of 300 channels open in [0-9.]* s; the next: Device or resource busy' \
		"$RDMX_OUT/hold-nobody.txt"
	rdmx_check "root holds 300 channels of the session" \
		timeout 300 "$MT" hold -p "$port" -S rdmx.echo -n 300 "$srv"
fi

# 9. Another network namespace: rdmx's ids live in the initial one, so a
# process elsewhere is refused every call that takes an address.
if [ "$RDMX_NODE" = 2 ]; then
	unshare -n timeout 60 rdmxctl ping -c 1 "$srv" >"$RDMX_OUT/netns.txt" 2>&1
	rc=$?
	cat "$RDMX_OUT/netns.txt"
	rdmx_check "from another network namespace, rdmxctl ping fails (exit $rc)" \
		test "$rc" -ne 0 -a "$rc" -ne 124
	rdmx_check "from another network namespace: Operation not supported (EOPNOTSUPP)" \
		grep -qi 'not supported' "$RDMX_OUT/netns.txt"
	rdmx_check "the refusal is logged" \
		sh -c "dmesg | grep -q 'rdmx: pid [0-9]*: refused an address from another network namespace'"
	rdmx_check "from the initial namespace, rdmxctl ping works" \
		timeout 60 rdmxctl ping -c 1 "$srv"
fi

# 10. Fencing: a write of a map's replaced connection, held by a frozen
# store, must not land after the map reconnected. rdmx-blkcraft -X plays
# both incarnations of one map against a file export on a frozen ext4;
# the store thaws when the tool says so.
thaw=$RDMX_SYNC/fence-thaw
if [ "$RDMX_NODE" = 1 ]; then
	fz=/mnt/fz
	if rdmx_nullb 4 64 && mkfs.ext4 -q -F /dev/nullb4 && mkdir -p "$fz" &&
	   mount /dev/nullb4 "$fz" && truncate -s 8M "$fz/disk.img"; then
		rdmx_check "export fence: a file on ext4" \
			rdmxctl export add fence "$fz/disk.img" --insecure
	else
		rdmx_fail "ext4 on null_blk for the fence"
	fi
	rdmx_barrier fence-up 600
	rdmx_check "fsfreeze $fz" fsfreeze -f "$fz"
	rdmx_barrier fence-frozen 600
	rdmx_poll 180 test -e "$thaw" || rdmx_fail "rdmx-blkcraft -X asked for the thaw"
	rdmx_check "fsfreeze -u $fz" fsfreeze -u "$fz"
	rdmx_barrier fence-done 600
	rdmx_check "the file holds the reconnected map's block 0" \
		python3 -S -c "import sys; b = open('$fz/disk.img', 'rb').read(512); sys.exit(b != bytes([2]) * 512)"
	rdmx_check "export del fence" rdmx_poll 60 rdmxctl export del fence
	umount "$fz"
else
	rdmx_barrier fence-up 600
	rdmx_barrier fence-frozen 600
	run_tap blkcraft-fence timeout 300 \
		"$RDMX_REPO/tests/integration/rdmx-blkcraft" -X "$thaw" "$srv" fence craftro
	touch "$thaw"
	rdmx_barrier fence-done 600
fi

# 10b. The same on a block device export, whose WRITEs are bios submitted
# from their receive's completion and ended in the bio's: the device holds
# the write (each request completes after 20 s, within an I/O timeout of
# 60 s) rather than a frozen file system, so the tool's thaw changes
# nothing and its OPEN is answered once the old write is done. The tool
# watches for 3 s, connects again and watches 5 s more: 20 s leaves a
# slow host 12 s to connect before the write ends by itself.
if [ "$RDMX_NODE" = 1 ]; then
	if rdmx_nullb 5 16 irqmode=2 completion_nsec=20000000000 &&
	   echo 60000 >/sys/block/nullb5/queue/io_timeout; then
		rdmx_check "export fenceb: /dev/nullb5 (every request takes 20 s)" \
			rdmxctl export add fenceb /dev/nullb5 --insecure
	else
		rdmx_fail "a slow null_blk for the block device fence"
	fi
	rdmx_barrier fenceb-up 600
	rdmx_barrier fenceb-done 600
	rdmx_check "nullb5 holds the reconnected map's block 0" \
		python3 -S -c "import os, sys; f = os.open('/dev/nullb5', os.O_RDONLY); b = os.read(f, 512); sys.exit(b != bytes([2]) * 512)"
	rdmx_check "export del fenceb" rdmx_poll 60 rdmxctl export del fenceb
else
	rdmx_barrier fenceb-up 600
	run_tap blkcraft-fenceb timeout 300 \
		"$RDMX_REPO/tests/integration/rdmx-blkcraft" -X "$RDMX_SYNC/fenceb-thaw" \
		"$srv" fenceb craftro
	# A batch reusing the tag of a READ that the slow device holds.
	run_tap blkcraft-batch-busy timeout 300 \
		"$RDMX_REPO/tests/integration/rdmx-blkcraft" -S fenceb \
		-p "$port" "$srv" craft craftro
	rdmx_barrier fenceb-done 600
fi

# 11. A RAM export deleted under a mapped disk and added again under the
# same name holds zeroes, not the disk's data: it has a new identity, so
# the client refuses it and its I/O fails after the loss timeout; it must
# never read zeroes as its data.
if [ "$RDMX_NODE" = 1 ]; then
	rdmx_check "export ramid: ram:4M" rdmxctl export add ramid ram:4M
	rdmx_barrier ramid-up 600
	rdmx_barrier ramid-written 600
	rdmx_check "export del ramid --force, then add it again" \
		sh -c 'rdmxctl export del ramid --force && rdmxctl export add ramid ram:4M'
	rdmx_barrier ramid-readded 600
	rdmx_barrier ramid-done 600
	rdmx_check "export del ramid" rdmx_poll 60 rdmxctl export del ramid --force
else
	rdmx_barrier ramid-up 600
	if d=$(rdmxctl map -p "$port" "$srv" ramid --loss-timeout 60s); then
		rdmx_pass "map ramid: $d"
		head -c 4096 /dev/urandom >/tmp/ramid.bin
		rdmx_check "write a block of ramid" \
			dd if=/tmp/ramid.bin of="$d" bs=4096 count=1 oflag=direct
	else
		rdmx_fail "map ramid"
		d=
	fi
	rdmx_barrier ramid-written 600
	rdmx_barrier ramid-readded 600
	if [ -n "$d" ]; then
		start=$SECONDS
		timeout 120 dd if="$d" of=/tmp/ramid.got bs=4096 count=1 iflag=direct \
			>"$RDMX_OUT/ramid-dd.txt" 2>&1
		rc=$? took=$((SECONDS - start))
		rdmx_check "a read after ramid came back fails (exit $rc) in $took s, within the 60 s loss timeout: never zeroes" \
			test "$rc" -ne 0 -a "$rc" -ne 124 -a "$took" -lt 40
		rdmx_check "the client logs the export as not the one mapped, and fails its I/O" \
			sh -c "dmesg | grep -q 'export ramid on .* is not the one mapped' && dmesg | grep -q 'export ramid on .* is other storage now: failing I/O'"
		rdmx_check "unmap $d" rdmxctl unmap --force "$d"
	fi
	rdmx_barrier ramid-done 600
fi

# 12. Queues the server must drop by itself, with keepalives every second:
# a half-open one, and one whose client's QP went silent after a keepalive
# reached it. The export is then not busy: it deletes without --force.
if [ "$RDMX_NODE" = 1 ]; then
	ka=/sys/kernel/rdmx/blk_keepalive_ms
	old_ka=$(cat "$ka")
	echo 1000 >"$ka"
	rdmx_check "export ka: ram:4M" rdmxctl export add ka ram:4M --insecure
	rdmx_barrier ka-up 600
	rdmx_barrier ka-done 600
	rdmx_check "export del ka without --force: its silent client's queue went" \
		rdmx_poll 30 rdmxctl export del ka
	rdmx_check "logged: a queue not bound in time" \
		sh -c "dmesg | grep -q 'not bound to an export in time; disconnecting'"
	rdmx_check "logged: a keepalive unanswered or not delivered" \
		sh -c "dmesg | grep -Eq 'keepalive unanswered; disconnecting|event \(keepalive\) not delivered'"
	echo "$old_ka" >"$ka"
else
	rdmx_barrier ka-up 600
	run_tap blkcraft-keepalive timeout 300 \
		"$RDMX_REPO/tests/integration/rdmx-blkcraft" -K "$srv" ka craftro
	rdmx_barrier ka-done 600
fi

# 13. Access modes. A second read-write map of an export that a map writes
# is refused (EBUSY), naming the writer in the server's log; a read-only
# map gets in; export show lists both maps. An export added --shared
# takes two writers. Once the writer unmaps, a new one gets in at once.
if [ "$RDMX_NODE" = 1 ]; then
	rdmx_check "export acc: ram:4M (exclusive, the default)" \
		rdmxctl export add acc ram:4M
	rdmx_check "export accs: ram:4M --shared" \
		rdmxctl export add accs ram:4M --shared
	rdmx_check "export show acc: exclusive" \
		rdmx_export_json acc "j[0]['access'] == 'exclusive'"
	rdmx_check "export show accs: shared" \
		rdmx_export_json accs "j[0]['access'] == 'shared'"
	rdmx_barrier acc-up 600
	rdmx_barrier acc-mapped 600
	rdmxctl export show acc
	rdmx_check "export show acc: one rw map and one ro map of node 2" \
		rdmx_export_json acc "sorted(m['mode'] for m in j[0]['maps']) == ['ro', 'rw'] and all(m['host'] == '$RDMX_ADDR_2' for m in j[0]['maps'])"
	rdmx_check "export show accs: two rw maps" \
		rdmx_export_json accs "[m['mode'] for m in j[0]['maps']] == ['rw', 'rw']"
	rdmx_check "user nobody cannot read who maps an export" \
		setpriv --reuid=65534 --regid=65534 --clear-groups -- \
		sh -c '! cat /sys/kernel/rdmx/exports/acc/maps'
	rdmx_check "logged: the second writer refused, the writer named" \
		sh -c "dmesg | grep -q 'export acc: $RDMX_ADDR_2 (map .*) asked to write; $RDMX_ADDR_2 (map .*) writes it; refused'"
	rdmx_barrier acc-checked 600
	rdmx_barrier acc-done 600
	rdmx_check "export del acc, accs" \
		rdmx_poll 60 sh -c 'rdmxctl export del acc && rdmxctl export del accs'
else
	rdmx_barrier acc-up 600
	a1=$(rdmxctl map -p "$port" "$srv" acc) || a1=
	rdmx_check "map acc read-write: $a1" test -n "$a1"
	rdmxctl map -p "$port" "$srv" acc >"$RDMX_OUT/acc-2.txt" 2>&1
	rc=$?
	cat "$RDMX_OUT/acc-2.txt"
	rdmx_check "a second read-write map of acc is refused (exit $rc), saying why" \
		sh -c "[ $rc -ne 0 ] && grep -q 'another map writes it' '$RDMX_OUT/acc-2.txt'"
	a2=$(rdmxctl map -p "$port" "$srv" acc --ro) || a2=
	rdmx_check "a read-only map of acc gets in: $a2" test -n "$a2"
	s1=$(rdmxctl map -p "$port" "$srv" accs) || s1=
	s2=$(rdmxctl map -p "$port" "$srv" accs) || s2=
	rdmx_check "two read-write maps of the shared accs: $s1 $s2" \
		test -n "$s1" -a -n "$s2"
	[ -z "$s1" ] || rdmx_check "write through $s1" \
		dd if=/dev/zero of="$s1" bs=4096 count=1 oflag=direct
	[ -z "$s2" ] || rdmx_check "write through $s2" \
		dd if=/dev/zero of="$s2" bs=4096 count=1 oflag=direct
	rdmx_barrier acc-mapped 600
	# Node 1 looks at the maps before the writer goes.
	rdmx_barrier acc-checked 600
	[ -z "$a1" ] || rdmx_check "unmap $a1 (the writer)" rdmxctl unmap "$a1"
	a3=$(rdmxctl map -p "$port" "$srv" acc) || a3=
	rdmx_check "with the writer gone, a new read-write map of acc: $a3" \
		test -n "$a3"
	for d in $a2 $a3 $s1 $s2; do
		rdmx_check "unmap $d" rdmxctl unmap "$d"
	done
	rdmx_barrier acc-done 600
fi

# 14. The RDMA device goes away under a mapped disk and a session whose
# link is down: its removal waits for their teardown, which must not wait
# for the port to come back (the loss timeouts here are 120 s). Both come
# back over the device added again. Last: node 2's link goes down.
if [ "$RDMX_NODE" = 1 ]; then
	rdmx_check "export removal: ram:16M" rdmxctl export add removal ram:16M
	rdmx_barrier removal-up 600
	rdmx_barrier removal-done 900
	rdmx_check "export del removal" rdmx_poll 60 rdmxctl export del removal
else
	rdmx_barrier removal-up 600
	sys=/sys/kernel/rdmx
	old_loss=$(cat "$sys/loss_timeout_ms")
	echo 120000 >"$sys/loss_timeout_ms"
	if d=$(rdmxctl map -p "$port" "$srv" removal --loss-timeout 2m); then
		rdmx_pass "map removal: $d"
	else
		rdmx_fail "map removal"
		d=
	fi
	# A session with messages in flight when the link goes: its
	# connection fails, and its teardown would wait for the port.
	rdmxctl ping -c 100000 -i 100 --timeout 600 "$srv" >"$RDMX_OUT/removal-ping.txt" 2>&1 &
	pingp=$!
	sleep 5
	ip link set eth0 down
	sleep 20
	t0=$SECONDS
	timeout 300 rdma link del "$RDMX_RDMA_DEV"
	took=$((SECONDS - t0))
	rdmx_check "with the link down, $RDMX_RDMA_DEV is removed within 30 s ($took s)" \
		test "$took" -lt 30
	kill -9 "$pingp" 2>/dev/null
	wait "$pingp"
	ip link set eth0 up
	rdmx_check "$RDMX_RDMA_DEV added again" \
		rdma link add "$RDMX_RDMA_DEV" type "$RDMX_RDMA" netdev eth0
	rdmx_wait_port "$RDMX_RDMA_DEV" || rdmx_fail "$RDMX_RDMA_DEV port active"
	if [ -n "$d" ]; then
		rdmx_check "the disk is back: it reads" \
			timeout 300 dd if="$d" of=/dev/null bs=4k count=16 iflag=direct
		rdmx_check "unmap $d" rdmxctl unmap --force "$d"
	fi
	rdmx_check "ping after the device came back" \
		rdmx_poll 120 timeout 60 rdmxctl ping -c 1 --timeout 10 "$srv"
	echo "$old_loss" >"$sys/loss_timeout_ms"
	rdmx_barrier removal-done 900
fi

rdmx_barrier checked 900
rdmx_check "rdmx unloads" rmmod rdmx
rdmx_kmemleak_check hostile
rdmx_done
