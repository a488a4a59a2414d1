#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Hostile peers, between two guests: node 1 serves, node 2 attacks it with
# crafted clients that send what rdmx's own client never would, in races
# driven in loops. Afterwards node 1 must have no queue, connection or
# reference left behind: its exports go, rdmx unloads, kmemleak is quiet,
# and the harness finds no splat (KASAN, lockdep, list debugging).
#
#   1. rdmx-blkcraft -R: two OPENs of one export sent back to back, many
#      times over (the server runs commands side by side, so a queue must
#      not be bound twice), and two commands with one tag; then a map
#      through a listener that user nobody's endpoint made (port 7483)
#      must be refused: exports are served through administrators'
#      listeners only;
#   2. a local unprivileged user, on both hosts of a live session, finds
#      nothing in /sys/kernel/rdmx that would continue it (its uuid);
#   3. a local unprivileged user listening for root's service on the other
#      address family's any-address gets none of its channels;
#   4. rdmx-msgcraft, a hostile peer of the message protocol: empty DATA
#      segments with MORE (a message that grows without growing), a flood
#      of OPENs acknowledging nothing, and 1000 echo channels whose echoes
#      the peer never acknowledges; meanwhile another session's ping must
#      get its echoes (no shared worker waits on the stalled peer);
#   5. limits: with max_sessions_per_host at 2, four hostile sessions at
#      once from node 2 get two admitted and two refused, counted in
#      sessions_refused.
#
# Usage (tests/check's guest-hostile):
#   tests/vm/run --nodes 2 --kernel debug --rdma rxe tests/integration/hostile.sh [ROUNDS]
set -u
. "$RDMX_REPO/tests/vm/lib.sh"

rounds=${1:-200}
srv=$RDMX_ADDR_1
port=7471
MT="$RDMX_REPO/tests/integration/rdmx-msgtest"

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
	rdmx_check "listen on $srv:$port" rdmxctl listen -a "$srv" -p "$port"
	rdmx_check "export craft: ram:16M" rdmxctl export add craft ram:16M
	rdmx_check "export craftro: ram:16M --ro" rdmxctl export add craftro ram:16M --ro
	rdmx_barrier up || rdmx_fail "peer came up"
	timeout 600 setpriv --reuid=65534 --regid=65534 --clear-groups -- \
		"$MT" recv -p 7483 -S lure -n 1 >"$RDMX_OUT/lure.txt" 2>&1 &
	lure=$!
	rdmx_wait_cm_listen 7483 || rdmx_fail "user nobody listens on port 7483"
	rdmx_barrier lure-up 1800
	rdmx_barrier blk-done 1800
	kill "$lure" 2>/dev/null
	wait "$lure"
	rdmx_check "the map through user nobody's listener is logged as refused" \
		sh -c "dmesg | grep -q 'rdmx: refused a block queue from .*was not added by an administrator'"
	rdmx_poll 30 rdmx_export_json craft "j[0]['clients'] == 0"
	rdmx_check "no queue left on craft" rdmx_export_json craft "j[0]['clients'] == 0"
	rdmx_check "OPEN races logged as malformed" \
		sh -c "dmesg | grep -q 'rdmx: block queue 0 from .*: malformed OPEN; disconnecting'"
	rdmx_check "export del craft" rdmxctl export del craft
	rdmx_check "export del craftro" rdmxctl export del craftro
else
	rdmx_barrier up || rdmx_fail "peer came up"
	run_tap blkcraft \
		"$RDMX_REPO/tests/integration/rdmx-blkcraft" -R -r "$rounds" \
		-p "$port" "$srv" craft craftro
	rdmx_barrier lure-up 1800
	if d=$(rdmxctl map -p 7483 --timeout 30000 "$srv" craft 2>"$RDMX_OUT/map-lure.err"); then
		rdmx_fail "a map through user nobody's listener on port 7483 is refused (got $d)"
		rdmxctl unmap "$d"
	else
		rdmx_pass "a map through user nobody's listener on port 7483 is refused"
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

# 3. Root listens for service "steal" on IPv4's any-address; user nobody
# then listens for the same name on IPv6's, port 7481. Node 2's channel,
# over IPv4, must reach root's endpoint.
if [ "$RDMX_NODE" = 1 ]; then
	timeout 300 "$MT" recv -p 7481 -S steal -n 50 --max-size 4K \
		>"$RDMX_OUT/steal-owner.txt" 2>&1 &
	owner=$!
	rdmx_wait_cm_listen 7481 || rdmx_fail "root listens on 7481"
	timeout 300 setpriv --reuid=65534 --regid=65534 --clear-groups -- \
		"$MT" recv -a :: -p 7481 -S steal -n 50 --max-size 4K \
		>"$RDMX_OUT/steal-thief.txt" 2>&1 &
	thief=$!
	rdmx_check "user nobody listens on [::]:7481" \
		rdmx_poll 60 sh -c "grep -qs '^\[::\]:7481\$' /sys/kernel/rdmx/listeners/*/addr"
	rdmx_barrier steal-ready 600
	wait "$owner"
	rdmx_check "root's endpoint got its 50 messages" test "$?" -eq 0
	rdmx_barrier steal-sent 600
	kill "$thief" 2>/dev/null
	wait "$thief"
else
	rdmx_barrier steal-ready 600
	timeout 300 "$MT" send -p 7481 -S steal -n 50 --max-size 4K "$srv" \
		>"$RDMX_OUT/steal-send.txt" 2>&1
	rdmx_check "50 messages sent to service steal over IPv4" test "$?" -eq 0
	rdmx_barrier steal-sent 600
fi

# 4. The hostile message peer, from node 2; node 1 only serves.
MC="$RDMX_REPO/tests/integration/rdmx-msgcraft"
if [ "$RDMX_NODE" = 2 ]; then
	run_tap msgcraft-zero-segs "$MC" -n 20000 -t 20 zero-segs "$srv"
	run_tap msgcraft-open-flood "$MC" -n 10000 -t 10 open-flood "$srv"
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
fi
rdmx_barrier msgcraft-done 1800
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
rdmx_barrier checked 600
rdmx_check "rdmx unloads" rmmod rdmx
rdmx_kmemleak_check hostile
rdmx_done
