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
#      not be bound twice), and two commands with one tag.
#
# Usage (tests/check's guest-hostile):
#   tests/vm/run --nodes 2 --kernel debug --rdma rxe tests/integration/hostile.sh [ROUNDS]
set -u
. "$RDMX_REPO/tests/vm/lib.sh"

rounds=${1:-200}
srv=$RDMX_ADDR_1
port=7471

# export_json NAME EXPR: EXPR over export NAME's JSON (as j).
# shellcheck disable=SC2317  # called through rdmx_check and poll
export_json() {
	rdmxctl -j export show "$1" | rdmx_json "len(j) == 1 and ($2)" 2>/dev/null
}

# poll SECS CMD...: CMD succeeds within SECS seconds.
poll() {
	local n=$(($1 * 5))

	shift
	while [ "$n" -gt 0 ]; do
		"$@" && return 0
		n=$((n - 1))
		sleep 0.2
	done
	return 1
}

# run_tap TOOL PREFIX CMD...: CMD's "ok"/"not ok" lines become results.
run_tap() {
	local name=$1 prefix=$2 out rc l

	shift 2
	out="$RDMX_OUT/$name.txt"
	"$@" >"$out" 2>&1
	rc=$?
	while IFS= read -r l; do
		case "$l" in
		"not ok "*) rdmx_fail "$prefix: ${l#not ok * - }" ;;
		"ok "*"# SKIP"*) l=${l#ok * - }; rdmx_skip "$prefix: ${l%% # SKIP*}" "${l#* # SKIP }" ;;
		"ok "*) rdmx_pass "$prefix: ${l#ok * - }" ;;
		esac
	done <"$out"
	rdmx_check "$name exits 0" test "$rc" -eq 0
}

if [ "$RDMX_NODE" = 1 ]; then
	rdmx_check "listen on $srv:$port" rdmxctl listen -a "$srv" -p "$port"
	rdmx_check "export craft: ram:16M" rdmxctl export add craft ram:16M
	rdmx_check "export craftro: ram:16M --ro" rdmxctl export add craftro ram:16M --ro
	rdmx_barrier up || rdmx_fail "peer came up"
	rdmx_barrier blk-done 1800
	poll 30 export_json craft "j[0]['clients'] == 0"
	rdmx_check "no queue left on craft" export_json craft "j[0]['clients'] == 0"
	rdmx_check "OPEN races logged as malformed" \
		sh -c "dmesg | grep -q 'rdmx: block queue 0 from .*: malformed OPEN; disconnecting'"
	rdmx_check "export del craft" rdmxctl export del craft
	rdmx_check "export del craftro" rdmxctl export del craftro
else
	rdmx_barrier up || rdmx_fail "peer came up"
	run_tap blkcraft blkcraft \
		"$RDMX_REPO/tests/integration/rdmx-blkcraft" -R -r "$rounds" \
		-p "$port" "$srv" craft craftro
	rdmx_barrier blk-done 1800
fi
rdmx_barrier checked 600
rdmx_check "rdmx unloads" rmmod rdmx
rdmx_kmemleak_check hostile
rdmx_done
