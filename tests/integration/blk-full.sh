#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Sections 3 to 6 of tests/integration/blk.sh (see its top), which sources
# this file when its MODE is full: the refusals, the crafted client, busy
# disks and exports, a link flap and a server restart (rdmx reloaded). The helpers, $dev and the rest are blk.sh's.
# shellcheck shell=bash disable=SC2154  # $dev, $max, $srv... are blk.sh's

if [ "$RDMX_NODE" = 2 ]; then
	# 3. Read-only, allow-lists, missing exports and listeners.
	map_dev ro >/dev/null 2>"$RDMX_OUT/map-ro.err"
	rdmx_check "map ro without --ro is refused (EACCES: read-only export)" \
		refused $? "refused export ro: read-only export" "$RDMX_OUT/map-ro.err"
	if d=$(map_dev ro --ro); then
		rdmx_pass "map ro --ro: $d"
		rdmx_check "ro: the disk is read-only" test "$(blockdev --getro "$d")" -eq 1
		rdmx_check "ro: map list says read_only" disk_json "$d" "j[0]['read_only'] is True"
		rdmx_check "ro: 16 MiB read back, zeros" sh -c \
			"dd if=$d of=/tmp/ro.img bs=1M iflag=direct status=none && [ \$(stat -c %s /tmp/ro.img) -eq $((16 * mib)) ] && cmp -n $((16 * mib)) /tmp/ro.img /dev/zero"
		rdmx_check_fails "ro: a write fails" \
			dd if=/dev/zero of="$d" bs=4k count=1 oflag=direct status=none
		rdmx_check "unmap $d" rdmxctl unmap "$d"
	else
		rdmx_fail "map ro --ro"
	fi
	map_dev deny >/dev/null 2>"$RDMX_OUT/map-deny.err"
	rdmx_check "map deny (allow-list without this host) is refused (EACCES)" \
		refused $? "refused export deny" "$RDMX_OUT/map-deny.err"
	if d=$(map_dev allowed); then
		rdmx_pass "map allowed (allow-list 198.18.0.0/24): $d"
		rdmx_check "allowed: 4 MiB written and read back" sh -c \
			"head -c $((4 * mib)) /dev/urandom >/tmp/a && dd if=/tmp/a of=$d bs=1M oflag=direct status=none && dd if=$d bs=1M iflag=direct status=none | cmp -s - /tmp/a"
		rdmx_check "unmap $d" rdmxctl unmap "$d"
	else
		rdmx_fail "map allowed (allow-list 198.18.0.0/24)"
	fi
	map_dev nosuch >/dev/null 2>"$RDMX_OUT/map-nosuch.err"
	rdmx_check "map of a missing export fails (ENOENT)" \
		refused $? "no export nosuch" "$RDMX_OUT/map-nosuch.err"
	rdmxctl map -p 7999 "$srv" ram >/dev/null 2>"$RDMX_OUT/map-noport.err"
	rdmx_check "map to a port without a listener fails (ECONNREFUSED)" \
		refused $? "no listener an administrator added on port 7999" "$RDMX_OUT/map-noport.err"
	rdmxctl map list

	# 3b. A crafted client (rdmx-blkcraft) against exports of its own:
	# bad extents and writes to read-only exports answered with an error,
	# malformed commands disconnected, a foreign connect rejected. Its
	# result lines become this script's; a mapped disk is undisturbed.
	rdmx_barrier craft-up "$long"
	"$RDMX_REPO/tests/integration/rdmx-blkcraft" -p "$port" "$srv" craft craftro \
		>"$RDMX_OUT/blkcraft.txt" 2>&1
	rc=$?
	rdmx_tap_absorb "blkcraft: " "$RDMX_OUT/blkcraft.txt"
	rdmx_check "rdmx-blkcraft exits 0" test "$rc" -eq 0
	if [ -n "${dev[ram]}" ]; then
		rdmx_check "ram: the mapped disk still reads after the crafted client" \
			dd if="${dev[ram]}" of=/dev/null bs=64k count=16 iflag=direct status=none
	fi
	rdmx_barrier craft-done "$long"

	# 4. Busy disks and exports.
	if d=$(map_dev busy); then
		rdmx_pass "map busy: $d"
		exec 3<"$d"
		rdmxctl unmap "$d" 2>"$RDMX_OUT/unmap-busy.err"
		rdmx_check "unmap of an open disk fails (EBUSY)" \
			refused $? "busy: open by a user" "$RDMX_OUT/unmap-busy.err"
		rdmx_check "... and the disk is still there" test -b "$d"
	else
		rdmx_fail "map busy"
		d=""
	fi
	rdmx_barrier busy-held
	rdmx_barrier busy-del-tried
	if [ -n "$d" ]; then
		# A reader with I/O in flight, then a forced unmap under it.
		fio --name=busy --filename="$d" --direct=1 --ioengine=libaio \
			--iodepth=16 --rw=randread --bs=64k --time_based --runtime=300 \
			--output="$RDMX_OUT/fio-busy.txt" >/dev/null 2>&1 &
		rd=$!
		sleep 5
		rdmx_check "fio reads the busy disk" kill -0 "$rd"
		rdmx_check "unmap --force of an open disk" rdmxctl unmap --force "$d"
		rdmx_check "the reader ends within 30 s of the forced unmap" \
			rdmx_poll 30 eval "! kill -0 $rd 2>/dev/null"
		kill -9 "$rd" 2>/dev/null
		wait "$rd"
		rdmx_check "... with an error (its I/O failed)" test $? -ne 0
		rdmx_check_fails "reads of the open, forced-out disk fail" \
			dd if="$d" of=/dev/null bs=4k count=1 iflag=direct status=none
		exec 3<&-
		rdmx_check "the disk goes once closed" wait_gone "${d#/dev/}"
		rdmx_check "map list no longer shows it" \
			sh -c "! rdmxctl map list | grep -q '^${d#/dev/}:'"
	fi
	rdmx_barrier busy-done
fi

# 3b. on node 1: the crafted client's exports, then what it left in the log.
if [ "$RDMX_NODE" = 1 ]; then
	rdmx_check "export craft: ram:16M --insecure --shared" \
		rdmxctl export add craft ram:16M --insecure --shared
	rdmx_check "export craftro: ram:16M --ro --insecure" rdmxctl export add craftro ram:16M --ro --insecure
	rdmx_barrier craft-up "$long"
	since=$(dmesg | wc -l)
	rdmx_barrier craft-done "$long"
	dmesg | tail -n +$((since + 1)) >"$RDMX_OUT/dmesg-craft.txt"
	rdmx_check "crafted client: bad commands logged as refused" \
		grep -q "rdmx: export craft: .*: command .* refused: -" "$RDMX_OUT/dmesg-craft.txt"
	rdmx_check "crafted client: malformed commands logged, disconnected" \
		grep -q "rdmx: block queue 0 from .*; disconnecting" "$RDMX_OUT/dmesg-craft.txt"
	rdmx_check "crafted client: foreign connect requests logged as refused" \
		grep -q "rdmx: refused a connection from .*: " "$RDMX_OUT/dmesg-craft.txt"
	rdmx_poll 30 rdmx_export_json craft "j[0]['clients'] == 0"
	rdmx_check "crafted client: no queue left on craft, errors counted" \
		rdmx_export_json craft "j[0]['clients'] == 0 and j[0]['errors'] > 0"
	rdmx_check "crafted client: no write reached craftro" \
		rdmx_export_json craftro "j[0]['clients'] == 0 and j[0]['writes'] == 0"
	rdmx_check "export del craft" rdmxctl export del craft
	rdmx_check "export del craftro" rdmxctl export del craftro
fi

if [ "$RDMX_NODE" = 1 ]; then
	rdmx_barrier busy-held "$long"
	rdmx_check "export ram counted the client's I/O" rdmx_export_json ram \
		"j[0]['reads'] > 0 and j[0]['writes'] > 0 and j[0]['errors'] == 0"
	rdmx_check "export ro: no write reached it" rdmx_export_json ro "j[0]['writes'] == 0"
	rdmx_check "export busy has a client" rdmx_export_json busy "j[0]['clients'] > 0"
	rdmxctl export del busy 2>"$RDMX_OUT/del-busy.err"
	rdmx_check "export del of a mapped export fails (EBUSY)" \
		refused $? "export busy busy: mapped by a client, or queues of a client" \
		"$RDMX_OUT/del-busy.err"
	rdmx_check "... and the export is still there" rdmx_export_json busy "True"
	rdmx_barrier busy-del-tried
	rdmx_barrier busy-done 300
	rdmx_check "export del busy once unmapped" rdmxctl export del busy
fi

# ----------------------------------------------------- 5. a link flap

if [ "$RDMX_NODE" = 2 ]; then
	rdmx_barrier flap-ready
	d=${dev[nullb]:-}
	if [ -n "$d" ]; then
		rc0=$(disk_reconnects "$d")
		fio_start flap "$d" 60
		rdmx_barrier flap-running
		fio_end flap "$d" "link flap"
		if [ "$RDMX_RDMA" = siw ]; then
			# iWARP runs over TCP, which retransmits across a 5 s
			# outage: the connection may live through it.
			rdmx_check "link flap: the disk is live, no errors (reconnected or rode it out over TCP)" \
				disk_json "$d" "j[0]['state'] == 'live' and j[0]['errors'] == 0"
		else
			rdmx_check "link flap: the disk reconnected, is live, no errors" disk_json "$d" \
				"j[0]['reconnects'] > ${rc0:-0} and j[0]['state'] == 'live' and j[0]['errors'] == 0"
		fi
		rdmxctl map show "$d"
	else
		rdmx_barrier flap-running
		rdmx_fail "link flap" "nullb not mapped"
	fi
	rdmx_barrier flap-done "$long"
else
	io=$(export_io nullb)
	rdmx_barrier flap-ready
	rdmx_barrier flap-running
	# Wait until fio's I/O reaches the export, then cut the link under it.
	wait_export_io nullb "$io"
	rdmxctl export show nullb
	ip link set eth0 down
	sleep 5
	ip link set eth0 up
	rdmx_pass "link down 5 s, then up, under the client's fio"
	rdmx_barrier flap-done "$long"
fi

# ----------------------------------------------- 6. a server restart

if [ "$RDMX_NODE" = 2 ]; then
	rdmx_barrier restart-ready
	d=${dev[file]:-}
	if [ -n "$d" ]; then
		rc0=$(disk_reconnects "$d")
		fio_start restart "$d" 60
		rdmx_barrier restart-running
		fio_end restart "$d" "server restart"
		rdmx_check "server restart: the disk reconnected, is live, no errors" disk_json "$d" \
			"j[0]['reconnects'] > ${rc0:-0} and j[0]['state'] == 'live' and j[0]['errors'] == 0"
	else
		rdmx_barrier restart-running
		rdmx_fail "server restart" "file not mapped"
	fi
	rdmx_barrier restart-done "$long"
	# A block device export is the same storage again; a RAM export added
	# again is new, empty storage with a new uuid: its maps fail rather
	# than go on over zeroes (Documentation/block.rst, Identity).
	if [ -n "${dev[nullb]}" ]; then
		rdmx_check "server restart: nullb reconnected too" disk_json "${dev[nullb]}" \
			"j[0]['state'] == 'live'"
	fi
	for e in ram lbs4k; do
		[ -n "${dev[$e]}" ] || continue
		rdmx_check "server restart: RAM export $e is other storage: its map is dead" \
			rdmx_poll 30 disk_json "${dev[$e]}" "j[0]['state'] == 'dead'"
	done
else
	io=$(export_io file)
	rdmx_barrier restart-ready
	rdmx_barrier restart-running
	wait_export_io file "$io"
	rdmx_check "server restart: rmmod rdmx under the client's I/O" rmmod rdmx
	sleep 3
	rdmx_check "server restart: insmod rdmx" insmod "$RDMX_KO"
	rdmx_check "server restart: the listener and exports added again" readd_exports
	rdmx_barrier restart-done "$long"
fi
