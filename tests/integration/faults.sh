#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Allocation failures on rdmx's live paths, between two guests. Both nodes
# make failslab and fail_page_alloc fail a share of the allocations that
# have rdmx's code on the call stack (require-start/require-end over the
# module's text), in every task and context: ioctls, rdma_cm handlers,
# rdmx's workers, completions. While they do, for SECS seconds:
#
#   node 2 (client) pings node 1 (message connect, accept, echo), closes
#   its sessions so that the next ping connects again, maps an export,
#   writes and reads it (the data path; lost queues reconnect), unmaps it,
#   and reads node 1's memory one-sided;
#   node 1 (server) serves them, and adds and deletes an export and a
#   listener over and over.
#
# Every command must end by itself (an error is fine: a failed allocation
# gives the caller an errno); none may hang. Faults must have fired on
# both nodes. Then, with injection off, everything must work again (a
# ping, a map with verified data), rdmx must unload, kmemleak must be
# quiet, and the harness finds no splat (KASAN, lockdep, UBSAN, list
# debugging).
#
# Needs CONFIG_FAULT_INJECTION_STACKTRACE_FILTER (the primary debug
# kernel has it); skipped elsewhere.
#
#   tests/vm/run --nodes 2 --cpus 2 --kernel debug --rdma rxe \
#       tests/integration/faults.sh [SECS [PERCENT]]
#
# PERCENT (default 3) is failslab's probability; fail_page_alloc's is a
# third of it, at least 1. Every 8 s the rate steps down (one eligible
# allocation in 1, 4, 16, 64) and up again, so that connections also get
# through and their data path meets faults.
set -u
. "$RDMX_REPO/tests/vm/lib.sh"

secs=${1:-90}
pct=${2:-3}
srv=$RDMX_ADDR_1
port=7471
mport=7492
dbg=/sys/kernel/debug
# The budget of injected failures per node, read back to count them.
budget=1000000

# rdmx_text_range: "START END" of rdmx's loaded code, from the kernel's
# symbol table (the last function's end is taken a page past its start).
rdmx_text_range() {
	local a

	a=$(awk '$4 == "[rdmx]" && ($2 == "t" || $2 == "T") { print $1 }' /proc/kallsyms |
		sort | sed -n '1p;$p')
	set -- $a
	[ $# -eq 2 ] || return 1
	printf '0x%s 0x%x\n' "$1" $((16#$2 + 4096))
}

# sym_range NAME: "START END" of kernel function NAME (END: the next
# symbol's address), or nothing.
sym_range() {
	awk '{ print $1, $3 }' /proc/kallsyms | sort |
		awk -v n="$1" 'f { print "0x" s, "0x" $1; exit } $2 == n { s = $1; f = 1 }'
}

# faults_on: failslab at $pct %, fail_page_alloc at a third of it, for
# allocations with rdmx on the stack, sleeping or not, in any task.
faults_on() {
	local lo hi f p

	set -- $(rdmx_text_range)
	[ $# -eq 2 ] || return 1
	lo=$1 hi=$2
	# The slab allocator's sysfs registration (a cache that blk-mq's
	# bioset creates for a new disk) leaks its kobject's name when that
	# fails (6.12's sysfs_slab_add() has no kobject_put()): not rdmx's
	# leak, so no failure is made there.
	set -- $(sym_range sysfs_slab_add)
	for f in failslab fail_page_alloc; do
		echo 0 >"$dbg/$f/probability"
		echo N >"$dbg/$f/task-filter"
		echo N >"$dbg/$f/ignore-gfp-wait"
		echo 0 >"$dbg/$f/verbose"
		echo 1 >"$dbg/$f/interval"
		echo 0 >"$dbg/$f/space"
		echo 32 >"$dbg/$f/stacktrace-depth"
		echo "$lo" >"$dbg/$f/require-start"
		echo "$hi" >"$dbg/$f/require-end"
		if [ $# -eq 2 ]; then
			echo "$1" >"$dbg/$f/reject-start"
			echo "$2" >"$dbg/$f/reject-end"
		fi
		echo "$budget" >"$dbg/$f/times"
	done
	echo N >"$dbg/failslab/cache-filter"
	echo N >"$dbg/fail_page_alloc/ignore-gfp-highmem"
	echo 0 >"$dbg/fail_page_alloc/min-order"
	p=$((pct / 3))
	[ "$p" -ge 1 ] || p=1
	echo "$p" >"$dbg/fail_page_alloc/probability"
	echo "$pct" >"$dbg/failslab/probability"
	echo "fault injection on: rdmx text $lo-$hi${1:+, not in sysfs_slab_add $1-$2}, failslab $pct %, fail_page_alloc $p %"
}

# rotate: step the fault rate down and up again, every 8 s (failing one
# eligible allocation in 1, 4, 16 or 64 tries, at the probability), so
# that some connections get through and their data path meets faults too.
rotate() {
	local i

	while :; do
		for i in 1 4 16 64; do
			echo "$i" >"$dbg/failslab/interval"
			echo "$i" >"$dbg/fail_page_alloc/interval"
			sleep 8
		done
	done
}

# faults_off: stop injecting; prints how many failures each kind forced.
faults_off() {
	local f

	for f in failslab fail_page_alloc; do
		echo 0 >"$dbg/$f/probability"
		echo 1 >"$dbg/$f/interval"
		echo "$f $((budget - $(cat "$dbg/$f/times")))"
		echo -1 >"$dbg/$f/times"
		echo 0 >"$dbg/$f/require-start"
		echo -1 >"$dbg/$f/require-end"
		echo 0 >"$dbg/$f/reject-start"
		echo 0 >"$dbg/$f/reject-end"
		echo Y >"$dbg/$f/ignore-gfp-wait"
	done
}

# tally NAME RC: count one command's outcome; a command killed by its
# timeout (124, or 137 after the grace) is a hang.
tally() {
	local name=$1 rc=$2

	case "$rc" in
	0) echo "$name ok" ;;
	124|137) echo "$name HANG" ;;
	*) echo "$name failed $rc" ;;
	esac >>"$RDMX_OUT/outcomes.txt"
}

# run NAME SECS CMD...: CMD under a timeout, its outcome tallied and its
# errors kept.
run() {
	local name=$1 t=$2 rc

	shift 2
	timeout -k 20 "$t" "$@" >>"$RDMX_OUT/cmd-$name.txt" 2>&1
	rc=$?
	tally "$name" "$rc"
	return "$rc"
}

# forced FILE KIND: the failures of KIND that faults_off reported.
forced() {
	awk -v k="$2" '$1 == k { print $2 }' "$1"
}

# phase_begin [CMD...]: once both nodes are set up (and CMD ran), injection
# on, rotating; sets $end, when the phase ends, and $rot, the rotation's
# pid.
phase_begin() {
	rdmx_barrier setup 600 || rdmx_fail "peer came up"
	"$@"
	rdmx_barrier premapped 600
	faults_on >"$RDMX_OUT/faults-on.txt" || rdmx_fail "fault injection set up"
	cat "$RDMX_OUT/faults-on.txt"
	rdmx_barrier faults-on 600
	rotate &
	rot=$!
	end=$((SECONDS + secs))
}

# phase_end: once both nodes are done, injection off; faults must have
# fired, and no command hung.
phase_end() {
	local n

	rdmx_barrier faults-done 900
	kill "$rot"
	wait "$rot" 2>/dev/null
	faults_off >"$RDMX_OUT/faults-off.txt"
	cat "$RDMX_OUT/faults-off.txt"
	n=$(forced "$RDMX_OUT/faults-off.txt" failslab)
	rdmx_check "faults were forced on node $RDMX_NODE (failslab: $n)" test "$n" -gt 0
	sort "$RDMX_OUT/outcomes.txt" | uniq -c | sed 's/^/    # /'
	rdmx_check "fault phase on node $RDMX_NODE: no command hung" \
		sh -c "! grep -q HANG '$RDMX_OUT/outcomes.txt'"
}

if [ ! -e "$dbg/failslab/require-start" ]; then
	rdmx_skip "fault injection on live paths" "kernel without FAULT_INJECTION_STACKTRACE_FILTER"
	rdmx_done
fi
: >"$RDMX_OUT/outcomes.txt"
lsmod | grep -q '^rdmx ' || insmod "$RDMX_KO" || rdmx_fail "rdmx loads"

if [ "$RDMX_NODE" = 1 ]; then
	rdmx_check "listen on $srv:$port" rdmxctl listen add -a "$srv" -p "$port"
	# --shared: node 2 maps it again while its first map writes it.
	rdmx_check "export fx: ram:16M --shared" rdmxctl export add fx ram:16M --shared
	phase_begin
	while [ "$SECONDS" -lt "$end" ]; do
		# The memory served for one-sided reads; it serves until
		# the phase ends or a fault ends it.
		if [ -z "${mrsrv:-}" ] || ! kill -0 "$mrsrv" 2>/dev/null; then
			[ -n "${mrsrv:-}" ] && { wait "$mrsrv"; tally mr-serve $?; }
			timeout -k 20 $((end - SECONDS + 30)) rdmxctl mr serve -a "$srv" \
				-p "$mport" --size 1M --count 1000000 \
				>>"$RDMX_OUT/cmd-mr-serve.txt" 2>&1 &
			mrsrv=$!
		fi
		run export-add 60 rdmxctl export add fy ram:4M &&
			run export-del 120 rdmxctl export del fy --force
		run listen 60 rdmxctl listen add -a "$srv" -p 7473 &&
			run listen-del 60 rdmxctl listen del -a "$srv" -p 7473
		sleep 1
	done
	kill "$mrsrv" 2>/dev/null
	wait "$mrsrv"
	phase_end
	rdmx_barrier clean-up 600
	rdmx_barrier clean-done 900
	rdmxctl listen del -a "$srv" -p 7473 2>/dev/null
	rdmxctl export del fy 2>/dev/null
	# A client whose DREQ was lost to an injected failure left an idle
	# server queue behind: the keepalive finds its QP gone and drops it.
	rdmx_check "export del fx: no server queue outlives its client" \
		rdmx_poll 90 rdmxctl export del fx
else
	# A disk mapped before the faults: the data path (and the queues'
	# reconnects) meet them whether or not new maps get through.
	premap() {
		pdev=$(rdmxctl map -p "$port" "$srv" fx --loss-timeout 5s) ||
			rdmx_fail "map fx before the faults"
	}
	phase_begin premap
	while [ "$SECONDS" -lt "$end" ]; do
		run ping 60 rdmxctl ping -c 3 --timeout 10 "$srv"
		run rma-read 60 rdmxctl rma -p "$mport" --timeout 10 "$srv" read 0 65536 -o /dev/null
		if [ -n "$pdev" ]; then
			run pwrite 120 dd if=/dev/urandom of="$pdev" bs=64k count=16 oflag=direct
			run pread 120 dd if="$pdev" of=/dev/null bs=64k count=16 iflag=direct
		fi
		if dev=$(timeout -k 20 120 rdmxctl map -p "$port" "$srv" fx \
				--loss-timeout 3s 2>>"$RDMX_OUT/cmd-map.txt"); then
			tally map 0
			run write 120 dd if=/dev/urandom of="$dev" bs=64k count=16 oflag=direct
			run read 120 dd if="$dev" of=/dev/null bs=64k count=16 iflag=direct
			run unmap 120 rdmxctl unmap --force "$dev"
		else
			tally map $?
		fi
		for id in $(rdmxctl -j session list 2>/dev/null |
			    python3 -S -c 'import json,sys; print(" ".join(str(s["id"]) for s in json.load(sys.stdin)))' 2>/dev/null); do
			run session-close 60 rdmxctl session close "$id"
		done
	done
	phase_end
	n=$(grep -c '^pwrite ok' "$RDMX_OUT/outcomes.txt")
	rdmx_check "the data path ran under injection: writes to a mapped disk ($n of them succeeded)" \
		grep -q '^pwrite ' "$RDMX_OUT/outcomes.txt"
	echo "    # maps made under injection: $(grep -c '^map ok' "$RDMX_OUT/outcomes.txt")"
	rdmx_barrier clean-up 600
	# Everything works again: a ping, and a map whose data reads back.
	rdmx_check "after the faults: ping" \
		rdmx_poll 120 rdmxctl ping -c 3 --timeout 10 "$srv"
	head -c 1M /dev/urandom >/tmp/fx.bin
	if dev=$(rdmx_poll 120 rdmxctl map -p "$port" "$srv" fx); then
		rdmx_check "after the faults: map, write and read back 1 MiB" \
			sh -c "dd if=/tmp/fx.bin of=$dev bs=64k oflag=direct 2>/dev/null &&
			       cmp -n 1048576 /tmp/fx.bin $dev"
		rdmx_check "after the faults: unmap" rdmxctl unmap "$dev"
	else
		rdmx_fail "after the faults: map fx"
	fi
	for d in /dev/rdmxb*; do
		[ -b "$d" ] && rdmxctl unmap --force "$d"
	done
	rdmx_barrier clean-done 900
fi
rdmx_check "rdmx unloads after the faults" rdmx_poll 60 rmmod rdmx
rdmx_kmemleak_check faults
rdmx_done
