#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The block service between two guests: node 1 exports, node 2 maps. Run as
#   tests/vm/run --nodes 2 --cpus 2 --kernel debug --rdma rxe|siw \
#       tests/integration/blk.sh
# (tests/check's groups guest-blk-rxe and guest-blk-siw). Arguments: MAX,
# the largest fio run in MiB (default 8; each export is 64 MiB), and MODE:
# full (the default) runs everything below; quick (make check's
# guest-blk-quick) runs 1 with fewer block sizes and without 1c and 1d,
# 2, 2b with the client checking the RAM export alone, 2c and 2d, and leaves
# sections 3 to 6 (tests/integration/blk-full.sh, sourced in full mode).
#
# Node 1 listens and exports: ram:64M, a 64 MiB file on a tmpfs, a 64 MiB
# memory-backed null_blk made through configfs, a RAM export with 4 KiB
# blocks, a slow 16 MiB null_blk (section 1c), and small RAM exports for
# the read-only, allow-list and busy cases. Node 2 maps them and checks:
#   1. size and logical block size; fio randrw with crc32c verification at
#      512 B, 4 KiB, 64 KiB and 1 MiB on the ram export and two of those
#      sizes on each other, fio's exit status and the error count in its
#      JSON; with several CPUs (tests/vm/run --cpus), a queue per CPU and a
#      pinned fio job per CPU, each queue carrying I/O; 1c. a slow export
#      (a null_blk that serves one request at a time, 500 ms each) under
#      ten requests in flight and a 2 s I/O timeout: the requests that
#      reach the timeout wait on (counted in slow), the disk does not
#      reconnect, fio sees no error; 1d. with a 1 s I/O timeout and twelve
#      reads in flight, requests outlive even that and every reconnect
#      sends them behind the server's backlog again: with the loss
#      timeout at 3 s they fail (EIO) in the end, the disk stays live and
#      then reads again;
#   2. ext4 on the ram export: files written with checksums, unmounted,
#      remounted from a cold cache, checked; e2fsck -fn clean;
#   2b. a block device already exported refused (EBUSY: claimed); a RAM
#      and a file export grown under the client's idle maps (export
#      resize): the disks grow at once, with no I/O (the server's event),
#      the new blocks take data, the old data is intact; shrinking and a
#      size for a file refused;
#   2c. identity: a loop device's export, exported again after the loop
#      devices were set up the other way round (renamed), keeps its uuid,
#      and the client's disk reconnects with its data; other storage
#      under the name gets another uuid and the disk fails its I/O at
#      once; a file moved keeps its uuid, a new file at its path and RAM
#      exported again get new ones, --uuid sets one;
#   2d. configuration: node 2's "config apply --client --retry" waits
#      for node 1's "config apply --server"; applying again changes
#      nothing; both save, take it down, reload rdmx and apply what they
#      saved, and find the listener, exports, tunables and map back, with
#      the map's data;
#   3. a read-only export refused without --ro (EACCES), readable with it,
#      writes failing; an allow-list without node 2 refused (EACCES), one
#      with it accepted; a missing export (ENOENT) and a port without a
#      listener (ECONNREFUSED) refused;
#   3b. a crafted client (rdmx-blkcraft) on exports of its own: bad extents
#      and writes to read-only exports answered with errors, malformed
#      commands disconnected, foreign connects rejected; node 1 logged
#      them, kept no queue, and still serves;
#   4. unmap of an open disk refused (EBUSY), export del of a mapped export
#      refused on node 1 (EBUSY); unmap --force then fails the I/O a reader
#      has pending, which ends, and the disk goes once closed;
#   5. the link down for 5 s, then up, under a verifying fio run: no verify
#      error, no I/O error, the disk reconnected;
#   6. a server restart (rdmx unloaded and loaded again, the exports added
#      again) under a verifying fio run on the file export: no error, every
#      disk reconnected;
#   7. with tests/vm/run --restart 1: a server guest restart, a power cut
#      of node 1 under a verifying fio run on its disk export (/dev/vda,
#      a disk that outlives the guest); node 1 boots again and exports the
#      disk again; the client held the I/O, reconnected, and fio saw no
#      error;
# and, on node 1 alone, loopback: its own export mapped over its own rxe
# device, fio-verified;
# then everything unmapped and deleted, and rmmod clean on both.
set -u
. "$RDMX_REPO/tests/vm/lib.sh"

max=${1:-8}
mode=${2:-full}
case "$mode" in
full|quick) ;;
*) rdmx_fail "blk.sh: MODE is full or quick, not '$mode'"; rdmx_done ;;
esac
srv=$RDMX_ADDR_1
port=7471
sys=/sys/kernel/rdmx
mib=$((1024 * 1024))
# Long enough for a link flap and a slow debug kernel, short enough that a
# disk that never comes back fails the run rather than the harness timeout.
loss_ms=60000
# The client's sections take long under TCG: its barriers wait this long.
long=1800

rdmx_barrier up || rdmx_fail "peer came up"

# Heartbeats find a dead link fast (as msg.sh sets them).
echo 500 >$sys/hb_interval_ms
echo 3 >$sys/hb_miss_max
echo 1000 >$sys/reconnect_max_ms

# ---------------------------------------------------------------- helpers

# disk_json DEV EXPR: on node 2, EXPR over disk DEV's JSON (as j).
# shellcheck disable=SC2317  # called through rdmx_check
disk_json() {
	rdmxctl -j map show "$1" | rdmx_json "len(j) == 1 and ($2)" 2>/dev/null
}

# export_io NAME: on node 1, the reads and writes export NAME has served.
export_io() {
	rdmxctl -j export show "$1" | python3 -S -c 'import json,sys; e=json.load(sys.stdin)[0]; print((e["reads"] or 0) + (e["writes"] or 0))'
}

# wait_export_io NAME FROM: on node 1, wait (up to 60 s) until export NAME
# has served 200 requests more than FROM: a client's fio reaches it.
wait_export_io() {
	rdmx_poll 60 rdmx_export_json "$1" "j[0]['reads'] + j[0]['writes'] > ${2:-0} + 200"
}

# wait_live DEV: on node 2, disk DEV is live within 60 s.
# shellcheck disable=SC2317  # called through rdmx_check
wait_live() {
	rdmx_poll 60 disk_json "$1" "j[0]['state'] == 'live'" || {
		rdmxctl map show "$1"
		return 1
	}
}

# disk_reconnects DEV: on node 2, how often disk DEV has reconnected.
disk_reconnects() {
	rdmxctl -j map show "$1" | python3 -S -c 'import json,sys; print(json.load(sys.stdin)[0]["reconnects"] or 0)'
}

# export_del_retry NAME: on node 1, export del NAME, tried again for up to
# 60 s while it is refused as busy.
# shellcheck disable=SC2317  # called through rdmx_check
export_del_retry() {
	local _

	for _ in $(seq 120); do
		rdmxctl export del "$1" 2>"$RDMX_OUT/del-$1.err" && return 0
		grep -q busy "$RDMX_OUT/del-$1.err" || break
		sleep 0.5
	done
	cat "$RDMX_OUT/del-$1.err"
	return 1
}

# map_dev NAME [ARGS...]: map export NAME of node 1; prints the device.
map_dev() {
	local name=$1
	shift
	rdmxctl map -p "$port" "$srv" "$name" --loss-timeout "${loss_ms}ms" "$@"
}

# fio_ok JSON: fio's JSON shows no error, and every job did both reads and
# writes.
# shellcheck disable=SC2317  # called through rdmx_check
fio_ok() {
	python3 -S - "$1" <<'EOF'
import json, sys
t = open(sys.argv[1]).read()
d = json.loads(t[t.index("{"):])	# past warnings fio writes first
ok = len(d["jobs"]) > 0
for j in d["jobs"]:
    ok = ok and (j["error"] == 0 and j.get("total_err", 0) == 0 and
                 j["read"]["total_ios"] > 0 and j["write"]["total_ios"] > 0)
    print("%s: error %d, reads %d, writes %d" % (j["jobname"], j["error"],
          j["read"]["total_ios"], j["write"]["total_ios"]))
sys.exit(0 if ok else 1)
EOF
}

# fio_verify TAG DEV BS MIB [FIO-ARGS...]: randrw over the first MIB MiB of
# DEV in blocks of BS, each write's crc32c verified; fails on fio's exit
# status, a verify error (fatal) or an I/O error in its JSON.
# shellcheck disable=SC2317  # called through rdmx_check
fio_verify() {
	local tag=$1 dev=$2 bs=$3 size=$4 out rc
	shift 4
	# Eight at a time, 1 MiB requests included: 8 MiB in flight once
	# outlived the 30 s request timeout over rxe under TCG, again after
	# each reconnect, for ever. A queue that still answers now gives its
	# slow requests more time (the disk's "slow" counter) instead.
	out=$RDMX_OUT/fio-$tag-$bs
	fio --name="$tag" --filename="$dev" --direct=1 --ioengine=libaio \
		--iodepth=8 --rw=randrw --bs="$bs" --size="${size}M" \
		--verify=crc32c --do_verify=1 --verify_fatal=1 \
		--randrepeat=0 --output-format=json --output="$out.json" "$@" \
		>"$out.txt" 2>&1
	rc=$?
	[ "$rc" -eq 0 ] || { tail -n 5 "$out.txt"; return "$rc"; }
	fio_ok "$out.json"
}

# fio_mib BS: how much of the disk a run at BS covers: MAX, less for small
# blocks, so that they do not take forever under TCG.
fio_mib() {
	case "$1" in
	512) echo 1 ;;
	4k) echo 2 ;;
	# At least 16 operations: with 4 (MAX 4 at 1 MiB) all four were
	# reads once, and fio_ok wants both kinds.
	1M) echo $((max > 16 ? max : 16)) ;;
	*) echo "$max" ;;
	esac
}

# fio_start TAG DEV RUNTIME: in the background, a verifying randrw fio run
# of RUNTIME s over the first MAX MiB of DEV (16 KiB blocks, queue depth
# 16, writes read back and checked as it goes); its pid in $fio_pid.
fio_start() {
	fio --name="$1" --filename="$2" --direct=1 --ioengine=libaio \
		--iodepth=16 --rw=randrw --bs=16k --size="${max}M" \
		--time_based --runtime="$3" --verify=crc32c --do_verify=1 \
		--verify_fatal=1 --verify_backlog=256 --randrepeat=0 \
		--output-format=json --output="$RDMX_OUT/fio-$1.json" \
		>"$RDMX_OUT/fio-$1.txt" 2>&1 &
	fio_pid=$!
}

# fio_end TAG DEV CASE: wait for fio_start's run; it exited 0, its JSON
# shows no error, and the kernel logged no I/O error for DEV.
fio_end() {
	local rc=0

	wait "$fio_pid" || rc=$?
	rdmx_check "$3: fio exits 0 (no verify or I/O error)" test "$rc" -eq 0
	tail -n 5 "$RDMX_OUT/fio-$1.txt"
	rdmx_check "$3: fio's JSON has no error" fio_ok "$RDMX_OUT/fio-$1.json"
	rdmx_check "$3: no I/O error in the kernel log" no_io_errors "$2"
}

# no_io_errors DEV: the kernel logged no I/O error for DEV since it was
# mapped (an unmapped disk's name is used again: 1d's has errors).
# shellcheck disable=SC2317  # called through rdmx_check
no_io_errors() {
	local n=${1#/dev/}

	! dmesg | awk -v m="rdmx: $n: .* bytes, [0-9]+ queues of" \
		'$0 ~ m { buf = ""; next } { buf = buf $0 "\n" } END { printf "%s", buf }' |
		grep -E "I/O error, dev $n\b|Buffer I/O error on dev $n\b"
}

# refused STATUS TEXT ERRFILE: an rdmxctl command failed as it should: exit
# status 1 (a runtime failure, not a usage error) and TEXT in its stderr.
# shellcheck disable=SC2317  # called through rdmx_check
refused() {
	cat "$3"
	[ "$1" -eq 1 ] && grep -qF -- "$2" "$3"
}

# wait_gone DISK: /sys/block/DISK goes within 30 s.
# shellcheck disable=SC2317  # called through rdmx_check
wait_gone() {
	rdmx_poll 30 test ! -e "/sys/block/$1"
}

rdmxctl -j version >"$RDMX_OUT/version.json"
if ! rdmx_json "'block' in j['module']['features']" <"$RDMX_OUT/version.json"; then
	rdmx_fail "rdmxctl version lists the block feature (RDMX_FEATURE_BLOCK)"
	rdmx_done  # nothing below can work
fi
rdmx_pass "rdmxctl version lists the block feature (RDMX_FEATURE_BLOCK)"

# ------------------------------------- 7, node 1's second boot (see below)

if [ "${RDMX_BOOT:-1}" = 2 ]; then
	rdmx_check "guest restart: node 1 up again: rdmxctl listen add -p $port" \
		rdmxctl listen add -p "$port"
	rdmx_check "guest restart: export disk: /dev/vda again" \
		rdmxctl export add disk /dev/vda
	rdmxctl export show disk
	rdmx_barrier reboot-done "$long"
	rdmx_check "guest restart: the disk export served node 2 again" \
		rdmx_export_json disk "j[0]['reads'] + j[0]['writes'] > 0"
	rdmx_check "export del disk" rdmxctl export del disk
	rdmx_barrier unload 300
	rdmx_check "rmmod rdmx" rmmod rdmx
	rdmx_done
fi

# ----------------------------------------------------------- node 1: exports

# readd_exports: after a restart, node 1's exports as they were.
# shellcheck disable=SC2317  # called through rdmx_check
readd_exports() {
	rdmxctl listen add -p "$port" &&
	rdmxctl export add ram ram:64M &&
	rdmxctl export add file /mnt/blk/disk.img &&
	rdmxctl export add nullb /dev/nullb0 &&
	rdmxctl export add lbs4k ram:16M --lbs 4096 &&
	rdmxctl export add ro ram:16M --ro &&
	rdmxctl export add deny ram:4M --allow "$srv" &&
	rdmxctl export add allowed ram:4M --allow 198.18.0.0/24 --allow fd00::/64
}

if [ "$RDMX_NODE" = 1 ]; then
	rdmx_check "rdmxctl listen add -p $port" rdmxctl listen add -p "$port"
	rdmx_check "export ram: ram:64M" rdmxctl export add ram ram:64M
	mkdir -p /mnt/blk && mount -t tmpfs -o size=80m tmpfs /mnt/blk &&
		truncate -s 64M /mnt/blk/disk.img
	rdmx_check "export file: a 64 MiB file on tmpfs" \
		rdmxctl export add file /mnt/blk/disk.img
	if rdmx_nullb 0 64; then
		rdmx_check "export nullb: /dev/nullb0 (memory_backed, via configfs)" \
			rdmxctl export add nullb /dev/nullb0
	else
		rdmx_fail "null_blk nullb0 made through configfs"
	fi
	# Section 1c's slow device: one request at a time, 500 ms each.
	if rdmx_nullb 1 16 irqmode=2 completion_nsec=500000000 \
		hw_queue_depth=1 submit_queues=1; then
		rdmx_check "export slow: /dev/nullb1 (one request at a time, 500 ms each)" \
			rdmxctl export add slow /dev/nullb1
	else
		rdmx_fail "null_blk nullb1 (slow) made through configfs"
	fi
	rdmx_check "export lbs4k: ram:16M --lbs 4096" \
		rdmxctl export add lbs4k ram:16M --lbs 4096
	rdmx_check "export ro: ram:16M --ro" rdmxctl export add ro ram:16M --ro
	rdmx_check "export deny: ram:4M --allow $srv (node 1 only)" \
		rdmxctl export add deny ram:4M --allow "$srv"
	rdmx_check "export allowed: ram:4M --allow 198.18.0.0/24 --allow fd00::/64" \
		rdmxctl export add allowed ram:4M --allow 198.18.0.0/24 --allow fd00::/64
	rdmx_check "export busy: ram:16M" rdmxctl export add busy ram:16M
	rdmx_check_fails "export add of a taken name fails (EEXIST)" \
		rdmxctl export add ram ram:4M
	rdmx_check_fails "export add of ram:4097 is a usage error" \
		rdmxctl export add odd ram:4097
	rdmxctl export list
	rdmxctl -j export list >"$RDMX_OUT/exports.json"
	rdmx_check "export list: the nine exports, sizes and flags" rdmx_json \
		"{e['name']: (e['size'], e['logical_block_size'], e['read_only']) for e in j} == {
		 'ram': ($((64 * mib)), 512, False), 'file': ($((64 * mib)), 512, False),
		 'nullb': ($((64 * mib)), 512, False), 'lbs4k': ($((16 * mib)), 4096, False),
		 'ro': ($((16 * mib)), 512, True), 'deny': ($((4 * mib)), 512, False),
		 'allowed': ($((4 * mib)), 512, False), 'busy': ($((16 * mib)), 512, False),
		 'slow': ($((16 * mib)), 512, False)}" \
		<"$RDMX_OUT/exports.json"
	rdmx_check "export list: paths and allow-lists" rdmx_json \
		"{e['name']: (e['path'], e['allow']) for e in j if e['name'] in ('ram', 'file', 'nullb', 'deny', 'allowed')} == {
		 'ram': ('ram:$((64 * mib))', []), 'file': ('/mnt/blk/disk.img', []),
		 'nullb': ('/dev/nullb0', []), 'deny': ('ram:$((4 * mib))', ['$srv/32']),
		 'allowed': ('ram:$((4 * mib))', ['198.18.0.0/24', 'fd00::/64'])}" \
		<"$RDMX_OUT/exports.json"
	# Loopback: this host's own export, over its own device.
	if d=$(rdmxctl map -p "$port" "$srv" lbs4k 2>"$RDMX_OUT/map-loop.err"); then
		rdmx_pass "loopback: map lbs4k from this host: $d"
		rdmx_check "loopback: no I/O scheduler by default (mq-deadline built in)" \
			grep -q '\[none\]' "/sys/block/${d#/dev/}/queue/scheduler"
		rdmx_check "loopback: fio randrw bs=64k over 2 MiB, crc32c verified" \
			fio_verify loop "$d" 64k 2
		rdmx_check "loopback: unmap $d" rdmxctl unmap "$d"
	else
		rdmx_fail "loopback: map lbs4k from this host" "$(cat "$RDMX_OUT/map-loop.err")"
	fi
	rdmx_barrier exports-up
	rdmx_barrier slow-done "$long"
	# 1d left the slow device a backlog of reads from connections the
	# client has dropped; their queues hold the export (EBUSY) until
	# those end, at 500 ms each.
	rdmx_check "export del slow, once its old queues have drained (60 s)" \
		export_del_retry slow
fi

# ------------------------------------------------- node 2: data and errors

if [ "$RDMX_NODE" = 2 ]; then
	rdmx_barrier exports-up "$long"
	declare -A dev
	for e in ram file nullb lbs4k; do
		# ram's queues ask for no staging area: their small writes'
		# data goes alone after the commands, or with its own command.
		[ "$e" = ram ] && echo 0 >/sys/kernel/rdmx/blk_stage_writes
		if dev[$e]=$(map_dev "$e" 2>"$RDMX_OUT/map-$e.err"); then
			rdmx_pass "map $e: ${dev[$e]}"
		else
			rdmx_fail "map $e" "$(cat "$RDMX_OUT/map-$e.err")"
			dev[$e]=""
		fi
		echo 1 >/sys/kernel/rdmx/blk_stage_writes
	done
	rdmxctl map list
	for e in ram file nullb lbs4k; do
		d=${dev[$e]}
		[ -n "$d" ] || continue
		# Every size on ram; a small and a large one elsewhere (TCG is
		# slow). Quick: one size each, 512 B to 256 KiB across them.
		lbs=512 size=$((64 * mib))
		case "$mode.$e" in
		full.ram) bss="512 4k 64k 1M" ;;
		full.file) bss="4k 256k" ;;
		full.nullb) bss="64k" ;;
		full.lbs4k) bss="4k 1M" ;;
		quick.ram) bss="512" ;;
		quick.file) bss="256k" ;;
		quick.nullb) bss="4k" ;;
		quick.lbs4k) bss="64k" ;;
		esac
		[ "$e" = lbs4k ] && lbs=4096 size=$((16 * mib))
		rdmx_check "$e: $d is a block device" test -b "$d"
		rdmx_check "$e: size $size" test "$(blockdev --getsize64 "$d")" -eq "$size"
		rdmx_check "$e: logical block size $lbs" test "$(blockdev --getss "$d")" -eq "$lbs"
		rdmx_check "$e: map list shows it live, from $srv:$port" disk_json "$d" \
			"j[0]['state'] == 'live' and j[0]['export'] == '$e' and j[0]['server'] == '$srv:$port' and j[0]['size'] == $size and j[0]['read_only'] is False"
		for bs in $bss; do
			mb=$(fio_mib "$bs")
			[ "$e" = lbs4k ] && [ "$mb" -gt 16 ] && mb=16
			rdmx_check "$e: fio randrw bs=$bs over ${mb} MiB, crc32c verified, no error" \
				fio_verify "$e" "$d" "$bs" "$mb"
		done
		rdmx_check "$e: no I/O error in the kernel log" no_io_errors "$d"
		rdmx_check "$e: the disk counted reads and writes, no errors" disk_json "$d" \
			"j[0]['reads'] > 0 and j[0]['writes'] > 0 and j[0]['errors'] == 0 and j[0]['in_flight'] == 0"
		# Reads of up to 4 KiB come in the response; larger ones by
		# RDMA WRITE into a buffer registered for them.
		case " $bss " in
		*" 512 "*|*" 4k "*)
			rdmx_check "$e: reads of up to 4 KiB came inline in the response" \
				disk_json "$d" "j[0]['inline_reads'] > 0"
			# Eight at a time: some wait for a command SEND and go
			# several in one (RDMX_BLK_OPEN_CMD_BATCH).
			rdmx_check "$e: commands without data went several in one SEND" \
				disk_json "$d" "j[0]['cmd_batched'] > j[0]['cmd_batches'] > 0"
			# Writes of up to 4 KiB among them: their data before,
			# into the server's staging area; without one (ram),
			# alone after, the tag as immediate data, which iWARP
			# has not.
			if [ "$e" != ram ]; then
				rdmx_check "$e: writes of up to 4 KiB went with the commands, their data staged" \
					disk_json "$d" "j[0]['staged_writes'] > 0 and j[0]['imm_writes'] == 0"
			elif [ "$RDMX_RDMA" = siw ]; then
				rdmx_check "$e: no write's data went alone (iWARP), none staged (not asked)" \
					disk_json "$d" "j[0]['imm_writes'] == 0 and j[0]['staged_writes'] == 0"
			else
				rdmx_check "$e: writes of up to 4 KiB went with the commands, their data alone (no staging area asked)" \
					disk_json "$d" "j[0]['imm_writes'] > 0 and j[0]['staged_writes'] == 0"
			fi ;;
		esac
		case " $bss " in
		*" 64k "*|*" 256k "*|*" 1M "*)
			rdmx_check "$e: larger reads went by RDMA WRITE" \
				disk_json "$d" "j[0]['reads'] > j[0]['inline_reads']" ;;
		esac
	done

	# 1b. One hardware queue per CPU, each its own connection: a verifying
	# job pinned to each CPU, and every queue carried reads and writes.
	d=${dev[ram]}
	ncpu=$(nproc)
	if [ -z "$d" ]; then
		:
	elif [ "$ncpu" -lt 2 ]; then
		rdmx_skip "ram: a queue per CPU" "the guest has one CPU (tests/vm/run --cpus)"
	else
		s=/sys/block/${d#/dev/}/rdmx
		rdmx_check "ram: $ncpu queues, one per CPU" test "$(cat "$s/nr_queues")" -eq "$ncpu"
		rdmx_check "ram: $ncpu jobs, one pinned to each CPU, crc32c verified" \
			fio_verify ram-mq "$d" 4k 2 --numjobs="$ncpu" \
			--cpus_allowed="0-$((ncpu - 1))" --cpus_allowed_policy=split \
			--offset_increment=8M
		for q in $(seq 0 $((ncpu - 1))); do
			rdmx_check "ram: queue $q carried reads and writes" \
				test "$(cat "$s/queues/$q/reads")" -gt 0 -a \
				"$(cat "$s/queues/$q/writes")" -gt 0
		done
	fi

	# 1c. A slow server is not a lost one. The slow export serves one
	# request at a time, 500 ms each; with the disk's I/O timeout at 2 s
	# and ten requests in flight, each waits 5 s, so all of them reach the
	# timeout while their queue is answering one every 500 ms. They must
	# wait on (counted in slow), not make the disk reconnect, which would
	# requeue all of them to time out again, for ever.
	# The map's loss timeout is 3 s, for 1d.
	# Both take about 80 s: full mode only.
	if [ "$mode" != full ]; then
		rdmx_skip "slow: a slow export, stuck requests" "full mode only"
	elif d=$(rdmxctl map -p "$port" "$srv" slow --queues 1 --loss-timeout 3s \
		2>"$RDMX_OUT/map-slow.err"); then
		rdmx_pass "slow: map slow (one queue, loss timeout 3 s): $d"
		s=/sys/block/${d#/dev/}
		echo 2000 >"$s/queue/io_timeout"
		rdmx_check "slow: I/O timeout set to 2000 ms" \
			test "$(cat "$s/queue/io_timeout")" -eq 2000
		rdmx_check "slow: fio randrw bs=4k, 10 in flight for 20 s, crc32c verified" \
			fio_verify slow "$d" 4k 1 --iodepth=10 --time_based --runtime=20 \
			--verify_backlog=16
		cat "$s/rdmx/timeouts" "$s/rdmx/slow" "$s/rdmx/reconnects"
		rdmx_check "slow: requests reached the timeout and waited on (slow > 0)" \
			test "$(cat "$s/rdmx/slow")" -gt 0
		rdmx_check "slow: none timed out for good, no reconnect" \
			test "$(cat "$s/rdmx/timeouts")" -eq 0 -a \
			"$(cat "$s/rdmx/reconnects")" -eq 0
		rdmx_check "slow: no I/O error in the kernel log" no_io_errors "$d"

		# 1d. Requests that can never complete fail in the end. With
		# a 1 s I/O timeout, twelve reads in flight wait up to 6 s,
		# past the four timeouts a slow request may wait: the disk
		# reconnects, and the reads sent again wait behind those the
		# server still has queued, so it happens again and again.
		# Every reconnect succeeds, so the loss timeout (3 s) never
		# runs out; a read taken back twice already and first sent
		# more than 3 s ago must fail (EIO) instead of cycling for
		# ever, and the disk stays live.
		echo 1000 >"$s/queue/io_timeout"
		timeout 300 fio --name=stuck --filename="$d" --direct=1 \
			--ioengine=libaio --iodepth=12 --rw=randread --bs=4k \
			--size=1M --number_ios=48 >"$RDMX_OUT/fio-stuck.txt" 2>&1
		rc=$?
		tail -n 5 "$RDMX_OUT/fio-stuck.txt"
		cat "$s/rdmx/timeouts" "$s/rdmx/reconnects" "$s/rdmx/errors"
		echo "fio's exit status: $rc (124: killed after 300 s)"
		rdmx_check "stuck: fio ended within 300 s, with an error" \
			test "$rc" -ne 0 -a "$rc" -ne 124
		rdmx_check "stuck: fio saw EIO" \
			grep -q 'Input/output error' "$RDMX_OUT/fio-stuck.txt"
		rdmx_check "stuck: requests timed out, the disk reconnected, requests failed" \
			test "$(cat "$s/rdmx/timeouts")" -gt 0 -a \
			"$(cat "$s/rdmx/reconnects")" -gt 0 -a \
			"$(cat "$s/rdmx/errors")" -gt 0
		rdmx_check "stuck: the failure is logged" \
			sh -c "dmesg | grep -q '${d#/dev/}: a request at sector .* never completed: failing it'"
		# fio sees the EIO while the disk is still reconnecting.
		rdmx_check "stuck: the disk is live again within 60 s" wait_live "$d"
		# The server works off what it still has queued first.
		echo 120000 >"$s/queue/io_timeout"
		rdmx_check "stuck: a read then succeeds" \
			timeout 300 dd if="$d" of=/dev/null bs=4k count=1 iflag=direct
		rdmx_check "slow: unmap $d" rdmxctl unmap "$d"
	else
		rdmx_fail "slow: map slow" "$(cat "$RDMX_OUT/map-slow.err")"
	fi
	rdmx_barrier slow-done

	# 2. A filesystem on the ram export, checked across a remount.
	d=${dev[ram]}
	# Quick mode writes about 2 MiB rather than 13 (through a debug
	# kernel under TCG, each MiB costs seconds).
	nfiles=16 big=8
	[ "$mode" = full ] || nfiles=8 big=1
	if [ -n "$d" ]; then
		mkdir -p /mnt/r
		rdmx_check "mkfs.ext4 on $d" mkfs.ext4 -q -F "$d"
		if mount "$d" /mnt/r; then
			for i in $(seq "$nfiles"); do
				head -c $((i * 37 * 1024 + i)) /dev/urandom >"/mnt/r/f$i"
			done
			mkdir /mnt/r/dir
			head -c $((big * mib)) /dev/urandom >/mnt/r/dir/big
			(cd /mnt/r && sha256sum f* dir/big) >/tmp/ext4.sums
			sync
			rdmx_check "umount $d" umount /mnt/r
			blockdev --flushbufs "$d"
			echo 3 >/proc/sys/vm/drop_caches
			rdmx_check "mount $d again" mount "$d" /mnt/r
			rdmx_check "ext4: $((nfiles + 1)) files read back with their checksums" \
				sh -c 'cd /mnt/r && sha256sum -c --quiet /tmp/ext4.sums'
			rdmx_check "umount $d again" umount /mnt/r
			rdmx_check "e2fsck -fn $d: clean" e2fsck -fn "$d"
		else
			rdmx_fail "mount ext4 on $d"
		fi
	fi
fi

# ---------------------------------------------------------- 2b. resize
# Node 1 grows a RAM export, a file export and a block device export (a
# loop device whose file grows) under node 2's maps; node 2's idle disks
# grow at once (the server's event), take data in the new blocks, and
# their old data is intact. Shrinking, and a size for a file, are refused.

if [ "$RDMX_NODE" = 1 ]; then
	# A block device is claimed by its export alone (O_EXCL).
	rdmxctl export add nullb2 /dev/nullb0 2>"$RDMX_OUT/excl.err"
	rdmx_check "export add of an exported block device fails (EBUSY)" \
		refused $? "/dev/nullb0 is busy: in use exclusively" "$RDMX_OUT/excl.err"
	truncate -s 16M /mnt/blk/grow.img /mnt/blk/growb.img
	rdmx_check "export grow: ram:16M" rdmxctl export add grow ram:16M
	rdmx_check "export growf: a 16 MiB file" rdmxctl export add growf /mnt/blk/grow.img
	modprobe loop 2>/dev/null
	loopdev=$(losetup -f --show /mnt/blk/growb.img 2>"$RDMX_OUT/losetup.err") || loopdev=""
	rdmx_check "a loop device over a 16 MiB file" test -b "$loopdev"
	rdmx_check "export growb: the loop device" rdmxctl export add growb "$loopdev"
	rdmx_barrier resize-up
	rdmx_barrier resize-mapped "$long"
	rdmxctl -j export resize grow 32M >"$RDMX_OUT/resize-grow.json"
	rdmx_check "export resize grow 32M" rdmx_json \
		"j['name'] == 'grow' and j['old_size'] == $((16 * mib)) and j['size'] == $((32 * mib))" \
		<"$RDMX_OUT/resize-grow.json"
	truncate -s 32M /mnt/blk/grow.img
	rdmxctl -j export resize growf >"$RDMX_OUT/resize-growf.json"
	rdmx_check "export resize growf: the file's new size" rdmx_json \
		"j['name'] == 'growf' and j['old_size'] == $((16 * mib)) and j['size'] == $((32 * mib))" \
		<"$RDMX_OUT/resize-growf.json"
	# A block device grows under the export; the export takes its size.
	truncate -s 32M /mnt/blk/growb.img
	rdmx_check "losetup -c: $loopdev has 32 MiB" sh -c \
		"losetup -c '$loopdev' && test \$(blockdev --getsize64 '$loopdev') -eq $((32 * mib))"
	rdmxctl -j export resize growb >"$RDMX_OUT/resize-growb.json"
	rdmx_check "export resize growb: the block device's new size" rdmx_json \
		"j['name'] == 'growb' and j['old_size'] == $((16 * mib)) and j['size'] == $((32 * mib))" \
		<"$RDMX_OUT/resize-growb.json"
	for e in grow growf growb; do
		rdmx_check "export show $e: 32 MiB" rdmx_export_json "$e" "j[0]['size'] == $((32 * mib))"
	done
	rdmxctl export resize grow 16M 2>"$RDMX_OUT/shrink.err"
	rdmx_check "export resize to a smaller size fails (EINVAL)" test $? -eq 1
	rdmxctl export resize growf 64M 2>"$RDMX_OUT/resize-file.err"
	rdmx_check "export resize of a file with a size fails (EINVAL)" test $? -eq 1
	rdmx_check "the refusal is logged" sh -c \
		"dmesg | grep -q 'rdmx: export grow: cannot resize from $((32 * mib)) to $((16 * mib)) bytes'"
	rdmx_check "... and export grow keeps 32 MiB" rdmx_export_json grow "j[0]['size'] == $((32 * mib))"
	rdmx_barrier resized "$long"
	rdmx_barrier resize-done "$long"
	rdmx_check "export del grow" rdmxctl export del grow
	rdmx_check "export del growf" rdmxctl export del growf
	rdmx_check "export del growb" rdmxctl export del growb
	[ -n "$loopdev" ] && losetup -d "$loopdev"
fi

# grown DEV BYTES: DEV's size reached BYTES within 10 s, with no I/O on it.
# shellcheck disable=SC2317  # called through rdmx_check
grown() {
	rdmx_poll 10 size_is "$1" "$2" || {
		blockdev --getsize64 "$1"
		return 1
	}
}

# size_is DEV BYTES: DEV has BYTES.
# shellcheck disable=SC2317  # called through rdmx_poll
size_is() {
	[ "$(blockdev --getsize64 "$1")" -eq "$2" ]
}

# Quick mode checks the RAM export's growth from the client; full mode all
# three.
resized_maps=grow
[ "$mode" = full ] && resized_maps="grow growf growb"
if [ "$RDMX_NODE" = 2 ]; then
	rdmx_barrier resize-up "$long"
	for e in $resized_maps; do
		d=$(map_dev "$e" 2>"$RDMX_OUT/map-$e.err") || d=""
		if [ -z "$d" ]; then
			rdmx_fail "map $e" "$(cat "$RDMX_OUT/map-$e.err")"
			continue
		fi
		eval "dev_$e=$d"
		head -c $((4 * mib)) /dev/urandom >"/tmp/$e-old"
		rdmx_check "$e: 4 MiB written at its start" \
			dd if="/tmp/$e-old" of="$d" bs=1M oflag=direct status=none
	done
	rdmx_barrier resize-mapped "$long"
	rdmx_barrier resized "$long"
	for e in $resized_maps; do
		d=$(eval "echo \${dev_$e:-}")
		[ -n "$d" ] || continue
		rdmx_check "$e: idle $d grew to 32 MiB (the server's event)" grown "$d" $((32 * mib))
		rdmx_check "$e: the client logged the resize" sh -c \
			"dmesg | grep -q '${d#/dev/}: export $e resized from $((16 * mib)) to $((32 * mib)) bytes'"
		rdmx_check "$e: map show says 32 MiB" disk_json "$d" "j[0]['size'] == $((32 * mib))"
		# Inline reads, the first since the growth: its answer
		# carries the new size before the data, the others the data
		# alone where the fabric has immediate data.
		rdmx_check "$e: 4 KiB reads after the growth read the old data" sh -c \
			"dd if=$d bs=4k count=16 iflag=direct status=none | cmp -n 65536 - /tmp/$e-old"
		head -c $((4 * mib)) /dev/urandom >"/tmp/$e-new"
		rdmx_check "$e: 4 MiB written past the old end (at 24 MiB)" \
			dd if="/tmp/$e-new" of="$d" bs=1M seek=24 oflag=direct status=none
		rdmx_check "$e: ... read back intact" sh -c \
			"dd if=$d bs=1M skip=24 count=4 iflag=direct status=none | cmp - /tmp/$e-new"
		rdmx_check "$e: the old data intact" sh -c \
			"dd if=$d bs=1M count=4 iflag=direct status=none | cmp - /tmp/$e-old"
		rdmx_check "$e: unmap $d" rdmxctl unmap "$d"
	done
	rdmx_barrier resize-done "$long"
fi

# ------------------------------------------------------- 2c. identity
# An export's uuid follows its storage. Node 1 exports a loop device, then
# sets the loop devices up again the other way round (the devices renamed,
# as disks are after a reboot) and exports the same storage again under
# its new name: the uuid is the same, and node 2's disk reconnects with
# its data. Then other storage under the export's name: the uuid differs,
# and node 2's disk fails its I/O at once (its loss timeout is a minute)
# rather than read someone else's data. A file moved keeps its uuid, a new
# file in its place gets another, and RAM gets a new one each time.

# export_uuid NAME PATH [OPTION...]: on node 1, export add NAME PATH; prints
# the uuid it got and where it came from.
export_uuid() {
	rdmxctl -j export add "$@" | python3 -S -c 'import json,sys; j=json.load(sys.stdin); print(j["uuid"], j["identity"])'
}

if [ "$RDMX_NODE" = 1 ]; then
	truncate -s 8M /mnt/blk/ida.img /mnt/blk/idb.img
	la=$(losetup -f --show /mnt/blk/ida.img)
	lb=$(losetup -f --show /mnt/blk/idb.img)
	read -r u1 src <<<"$(export_uuid ident "$la")"
	echo "ident on $la: $u1 from $src"
	rdmx_check "identity: a loop device's uuid comes from its backing file" \
		test "$src" = "loop/backing_file=/mnt/blk/ida.img"
	rdmx_check "identity: export show has the uuid" \
		rdmx_export_json ident "j[0]['uuid'] == '$u1'"
	rdmx_barrier ident-up
	rdmx_barrier ident-mapped "$long"
	rdmxctl export del --force ident
	losetup -d "$la" "$lb"
	lb2=$(losetup -f --show /mnt/blk/idb.img)
	la2=$(losetup -f --show /mnt/blk/ida.img)
	echo "ida.img now on $la2, idb.img on $lb2"
	rdmx_check "identity: the loop devices renamed ($la is idb.img's now)" \
		test "$la2" != "$la" -a "$lb2" = "$la"
	read -r u2 src <<<"$(export_uuid ident "$la2")"
	rdmx_check "identity: the same storage under its new name keeps the uuid ($u2)" \
		test "$u2" = "$u1"
	rdmx_barrier ident-back
	rdmx_barrier ident-checked "$long"
	rdmxctl export del --force ident
	read -r u3 src <<<"$(export_uuid ident "$lb2")"
	rdmx_check "identity: other storage under the name gets another uuid ($u3)" \
		test -n "$u3" -a "$u3" != "$u1"
	rdmx_barrier ident-other
	rdmx_barrier ident-failed "$long"
	rdmx_check "export del ident" rdmxctl export del ident
	losetup -d "$la2" "$lb2"

	# Files and RAM, on node 1 alone.
	truncate -s 4M /mnt/blk/idf.img
	read -r f1 src <<<"$(export_uuid idf /mnt/blk/idf.img)"
	rdmx_check "identity: a file's uuid comes from its filesystem and inode" \
		test "$src" = "its filesystem and inode"
	rdmxctl export del idf
	mv /mnt/blk/idf.img /mnt/blk/idf-moved.img
	read -r f2 src <<<"$(export_uuid idf /mnt/blk/idf-moved.img)"
	rdmx_check "identity: a file moved keeps its uuid" test "$f2" = "$f1"
	rdmxctl export del idf
	truncate -s 4M /mnt/blk/idf.img
	read -r f3 src <<<"$(export_uuid idf /mnt/blk/idf.img)"
	rdmx_check "identity: a new file at the old path gets another" \
		test -n "$f3" -a "$f3" != "$f1"
	rdmxctl export del idf
	read -r f4 src <<<"$(export_uuid idf /mnt/blk/idf.img --uuid 6f1e9a52-3c4d-4e5f-8a9b-0c1d2e3f4a5b)"
	rdmx_check "identity: --uuid sets it" \
		test "$f4 $src" = "6f1e9a52-3c4d-4e5f-8a9b-0c1d2e3f4a5b --uuid"
	rdmxctl export del idf
	rm -f /mnt/blk/idf.img /mnt/blk/idf-moved.img /mnt/blk/ida.img /mnt/blk/idb.img
	read -r r1 src <<<"$(export_uuid idr ram:1M)"
	rdmxctl export del idr
	read -r r2 src <<<"$(export_uuid idr ram:1M)"
	rdmxctl export del idr
	rdmx_check "identity: RAM gets a new uuid each time" test -n "$r1" -a "$r2" != "$r1"
fi

# wwid DEV: the serial disk DEV shows udev.
wwid() { cat "/sys/block/${1#/dev/}/wwid"; }

if [ "$RDMX_NODE" = 2 ]; then
	rdmx_barrier ident-up "$long"
	if d=$(map_dev ident 2>"$RDMX_OUT/map-ident.err"); then
		rdmx_pass "identity: map ident: $d"
		w1=$(wwid "$d")
		rdmx_check "identity: the disk's wwid is rdmx.UUID ($w1)" \
			sh -c "echo '$w1' | grep -qE '^rdmx\.[0-9a-f-]{36}\$'"
		head -c $((2 * mib)) /dev/urandom >/tmp/ident.bin
		rdmx_check "identity: 2 MiB written" \
			dd if=/tmp/ident.bin of="$d" bs=1M oflag=direct status=none
	else
		rdmx_fail "identity: map ident" "$(cat "$RDMX_OUT/map-ident.err")"
	fi
	rdmx_barrier ident-mapped
	rdmx_barrier ident-back "$long"
	if [ -n "$d" ]; then
		rdmx_check "identity: renamed storage: the disk reconnected" wait_live "$d"
		rdmx_check "identity: renamed storage: the data read back" sh -c \
			"dd if=$d bs=1M count=2 iflag=direct status=none | cmp - /tmp/ident.bin"
		rdmx_check "identity: renamed storage: the same wwid" \
			test "$(wwid "$d")" = "$w1"
		rdmx_check "identity: renamed storage: reconnected, no error" \
			disk_json "$d" "j[0]['errors'] == 0 and j[0]['reconnects'] > 0"
	fi
	rdmx_barrier ident-checked
	rdmx_barrier ident-other "$long"
	if [ -n "$d" ]; then
		start=$SECONDS
		timeout 120 dd if="$d" of=/dev/null bs=4k count=1 iflag=direct \
			>"$RDMX_OUT/ident-dd.txt" 2>&1
		rc=$? took=$((SECONDS - start))
		rdmx_check "identity: other storage: a read fails (exit $rc) in $took s, well within the 60 s loss timeout" \
			test "$rc" -ne 0 -a "$rc" -ne 124 -a "$took" -lt 40
		rdmx_check "identity: other storage: the disk is dead" \
			disk_json "$d" "j[0]['state'] == 'dead'"
		rdmx_check "identity: other storage: the client logged it" sh -c \
			"dmesg | grep -q '${d#/dev/}: export ident on .* is other storage now: failing I/O'"
		rdmx_check "identity: unmap $d" rdmxctl unmap "$d"
	fi
	rdmx_barrier ident-failed
fi

# Sections 3 to 6, in full mode only.
if [ "$mode" = full ]; then
	# shellcheck source=tests/integration/blk-full.sh
	. "$RDMX_REPO/tests/integration/blk-full.sh"
fi

# ---------------------------------------------------------------- the end

if [ "$RDMX_NODE" = 2 ]; then
	for e in ram file nullb lbs4k; do
		d=${dev[$e]}
		[ -n "$d" ] || continue
		rdmx_check "unmap $d ($e)" rdmxctl unmap "$d"
		rdmx_check "$d is gone" wait_gone "${d#/dev/}"
	done
	rdmxctl -j map list >"$RDMX_OUT/maps-end.json"
	rdmx_check "map list is empty" rdmx_json "j == []" <"$RDMX_OUT/maps-end.json"
	rdmx_barrier unmapped
else
	rdmx_barrier unmapped 300
	exps="ram file nullb lbs4k ro deny allowed"
	# Section 4 (full mode) deletes busy.
	[ "$mode" = full ] || exps="$exps busy"
	for e in $exps; do
		rdmx_check "export del $e" rdmxctl export del "$e"
	done
	rdmxctl -j export list >"$RDMX_OUT/exports-end.json"
	rdmx_check "export list is empty" rdmx_json "j == []" <"$RDMX_OUT/exports-end.json"
	umount /mnt/blk
fi

# ---------------------------------------- 2d. configuration (rdmx.conf)
# What the boot units run: node 2's "config apply --client --retry" starts
# before node 1's server is up and maps once it is; both apply again and
# nothing changes; both save what runs; both take it down and reload rdmx
# (all of it gone), apply what they saved, and find everything back: the
# listener, the exports (the file's under its saved uuid), the tunables,
# the maps with their data. One export is a disk named by
# /dev/disk/by-id; while rdmx is down on node 1 the disks are renamed, as
# a reboot may do, and the by-id name follows its disk (udev's work: the
# guests have no udev, so the test moves the link): the export comes back
# from the same storage with the same uuid, and node 2's map of it
# reconnects with its data.

cfg_port=7490
if [ "$RDMX_NODE" = 1 ]; then
	mkdir -p /mnt/cfg && mount -t tmpfs -o size=16m tmpfs /mnt/cfg &&
		truncate -s 8M /mnt/cfg/f.img /mnt/cfg/p.img /mnt/cfg/d1.img /mnt/cfg/d2.img
	d1=$(losetup -f --show /mnt/cfg/d1.img)
	d2=$(losetup -f --show /mnt/cfg/d2.img)
	byid=/dev/disk/by-id/rdmx-test-d1
	mkdir -p /dev/disk/by-id && ln -sfn "$d1" "$byid"
	upin=2f0b3c4d-5e6f-4a1b-8c2d-3e4f5a6b7c8d
	printf '%s\n' '# node 1: the server' 'set blk_keepalive_ms 4000' \
		"listen -a $srv -p $cfg_port" 'export cfgram ram:8M' \
		'export cfgfile /mnt/cfg/f.img --allow 198.18.0.0/24' \
		"export cfgpin /mnt/cfg/p.img --uuid $upin" \
		"export cfgdisk $byid" >/tmp/rdmx.conf
	rdmx_barrier cfg-client-waits "$long"
	sleep 6
	rdmxctl config apply --server -f /tmp/rdmx.conf >"$RDMX_OUT/cfg-apply1.txt" 2>&1
	rdmx_check "config: apply --server exits 0" test $? -eq 0
	cat "$RDMX_OUT/cfg-apply1.txt"
	rdmx_check "config: the tunable, listener and exports are up" sh -c \
		"[ \$(cat $sys/blk_keepalive_ms) = 4000 ] && rdmxctl -j listen list | grep -q '$srv:$cfg_port' && rdmxctl export show cfgram >/dev/null && rdmxctl export show cfgfile >/dev/null"
	rdmx_check "config: where each uuid came from: RAM new, the file's, the one given" sh -c \
		"[ \$(cat $sys/exports/cfgram/identity) = new ] && [ \$(cat $sys/exports/cfgfile/identity) = file ] && [ \$(cat $sys/exports/cfgpin/identity) = given ] && [ \$(cat $sys/exports/cfgpin/uuid) = $upin ]"
	rdmxctl config apply --server -f /tmp/rdmx.conf >"$RDMX_OUT/cfg-apply2.txt" 2>&1
	rdmx_check "config: apply again: exits 0, changes nothing" \
		sh -c "[ \$? -eq 0 ] && [ ! -s '$RDMX_OUT/cfg-apply2.txt' ]"
	ucfg=$(rdmxctl -j export show cfgfile | python3 -S -c 'import json,sys; print(json.load(sys.stdin)[0]["uuid"])')
	udisk=$(cat $sys/exports/cfgdisk/uuid)
	rdmx_check "config: save" rdmxctl config save -f /tmp/saved.conf
	cat /tmp/saved.conf
	rdmx_check "config: saved: the tunable, listener, exports (only the given uuid pinned)" sh -c \
		"grep -qx 'set blk_keepalive_ms 4000' /tmp/saved.conf && grep -qx 'listen -a $srv -p $cfg_port' /tmp/saved.conf && grep -qx 'export cfgram ram:8388608 --lbs 512' /tmp/saved.conf && grep -qx 'export cfgfile /mnt/cfg/f.img --lbs 512 --allow 198.18.0.0/24' /tmp/saved.conf && grep -qx 'export cfgpin /mnt/cfg/p.img --lbs 512 --uuid $upin' /tmp/saved.conf && grep -qx 'export cfgdisk $byid --lbs 512' /tmp/saved.conf"
	rdmx_barrier cfg-up "$long"
	rdmx_check "config: down --server" rdmxctl config down --server -f /tmp/saved.conf
	rdmx_check "config: rmmod rdmx" rmmod rdmx
	old_d1=$d1
	losetup -d "$d1" "$d2"
	d2=$(losetup -f --show /mnt/cfg/d2.img)
	d1=$(losetup -f --show /mnt/cfg/d1.img)
	ln -sfn "$d1" "$byid"
	rdmx_check "config: the disks renamed ($old_d1 is d2.img's now, d1.img's is $d1), $byid follows d1.img" \
		sh -c "[ $d2 = $old_d1 ] && [ \$(cat /sys/block/${d1#/dev/}/loop/backing_file) = /mnt/cfg/d1.img ] && [ \$(readlink -f $byid) = $d1 ]"
	rdmx_check "config: insmod rdmx again" insmod "$RDMX_KO"
	rdmx_check "config: nothing left after the reload" sh -c \
		"[ \$(cat $sys/blk_keepalive_ms) != 4000 ] && ! rdmxctl export show cfgfile 2>/dev/null"
	rdmx_check "config: apply the saved file" rdmxctl config apply --server -f /tmp/saved.conf
	rdmx_check "config: back: the tunable, listener, exports, the file's uuid derived again, the given one" sh -c \
		"[ \$(cat $sys/blk_keepalive_ms) = 4000 ] && rdmxctl -j listen list | grep -q '$srv:$cfg_port' && rdmxctl export show cfgram >/dev/null && rdmxctl -j export show cfgfile | grep -q '$ucfg' && [ \$(cat $sys/exports/cfgpin/uuid) = $upin ]"
	rdmx_check "config: the renamed disk exported again by its by-id name, same uuid" \
		sh -c "[ \$(cat $sys/exports/cfgdisk/uuid) = $udisk ]"
	rdmxctl doctor >"$RDMX_OUT/cfg-doctor.txt" 2>&1
	rdmx_check "config: doctor: the listener is on the RDMA netdev; exports with and without an allow-list" sh -c \
		"grep -Eq '^ok +listener: listener $srv:$cfg_port on ' '$RDMX_OUT/cfg-doctor.txt' && grep -Eq '^ok +export: export cfgfile \\(/mnt/cfg/f.img\\): allow 198.18.0.0/24$' '$RDMX_OUT/cfg-doctor.txt' && grep -Eq '^warn +export: export cfgpin .*no --allow' '$RDMX_OUT/cfg-doctor.txt'"
	rdmx_barrier cfg-back
	rdmx_barrier cfg-done "$long"
	rdmx_check "config: export del cfgram, cfgfile, cfgpin, cfgdisk; listen del" sh -c \
		"rdmxctl export del cfgram && rdmxctl export del cfgfile && rdmxctl export del cfgpin && rdmxctl export del cfgdisk && rdmxctl listen del -a $srv -p $cfg_port"
	losetup -d "$d1" "$d2"
	rm -f "$byid"
	umount /mnt/cfg
else
	printf '%s\n' '# node 2: the client' 'set reconnect_max_ms 1500' \
		"map -p $cfg_port $srv cfgfile --queues 1 --loss-timeout forever" >/tmp/rdmx.conf
	rdmxctl config apply --client --retry 3m -f /tmp/rdmx.conf \
		>"$RDMX_OUT/cfg-apply1.txt" 2>"$RDMX_OUT/cfg-apply1.err" &
	apply_pid=$!
	rdmx_barrier cfg-client-waits
	wait "$apply_pid"
	rc=$?
	cat "$RDMX_OUT/cfg-apply1.txt" "$RDMX_OUT/cfg-apply1.err"
	rdmx_check "config: apply --client --retry: waited for the server, exits 0 (exit $rc)" \
		sh -c "[ $rc -eq 0 ] && grep -q 'not up: trying again' '$RDMX_OUT/cfg-apply1.err'"
	d=$(grep -o '/dev/rdmxb[0-9]*' "$RDMX_OUT/cfg-apply1.txt" | head -n 1)
	rdmx_check "config: the map is up ($d), for ever, the tunable set" sh -c \
		"[ -b '$d' ] && [ \$(cat $sys/reconnect_max_ms) = 1500 ]" &&
		rdmx_check "config: the map waits for ever" \
			disk_json "$d" "j[0]['loss_timeout_ms'] == 4294967295 and j[0]['export'] == 'cfgfile'"
	head -c $((1 * mib)) /dev/urandom >/tmp/cfg.bin
	rdmx_check "config: 1 MiB written" dd if=/tmp/cfg.bin of="$d" bs=1M oflag=direct status=none
	rdmxctl config apply --client -f /tmp/rdmx.conf >"$RDMX_OUT/cfg-apply2.txt" 2>&1
	rdmx_check "config: apply again: exits 0, changes nothing, one disk" \
		sh -c "[ \$? -eq 0 ] && [ ! -s '$RDMX_OUT/cfg-apply2.txt' ] && [ \$(rdmxctl -j map list | python3 -S -c 'import json,sys; print(len(json.load(sys.stdin)))') -eq 1 ]"
	rdmx_check "config: save" rdmxctl config save -f /tmp/saved.conf
	cat /tmp/saved.conf
	rdmx_check "config: saved: the tunable and the map" sh -c \
		"grep -qx 'set reconnect_max_ms 1500' /tmp/saved.conf && grep -qx 'map -p $cfg_port $srv cfgfile --queues 1 --depth [0-9]* --loss-timeout forever' /tmp/saved.conf"
	# The by-id disk, mapped across node 1's restart.
	if cdisk=$(rdmxctl map -p "$cfg_port" "$srv" cfgdisk --queues 1 --loss-timeout forever \
		2>"$RDMX_OUT/map-cfgdisk.err"); then
		rdmx_pass "config: map cfgdisk: $cdisk"
		head -c $((1 * mib)) /dev/urandom >/tmp/cfgd.bin
		rdmx_check "config: 1 MiB written to cfgdisk" \
			dd if=/tmp/cfgd.bin of="$cdisk" bs=1M oflag=direct status=none
	else
		rdmx_fail "config: map cfgdisk" "$(cat "$RDMX_OUT/map-cfgdisk.err")"
	fi
	rdmx_barrier cfg-up "$long"
	rdmx_barrier cfg-back "$long"
	if [ -n "$cdisk" ]; then
		rdmx_check "config: after node 1's restart with its disks renamed, cfgdisk's map reconnected" \
			wait_live "$cdisk"
		rdmx_check "config: cfgdisk's data read back" sh -c \
			"dd if='$cdisk' bs=1M count=1 iflag=direct status=none | cmp - /tmp/cfgd.bin"
		rdmx_check "config: cfgdisk reconnected, no error" \
			disk_json "$cdisk" "j[0]['reconnects'] >= 1 and j[0]['errors'] == 0"
		rdmx_check "config: unmap $cdisk" rdmxctl unmap "$cdisk"
	fi
	rdmx_check "config: the file's map reconnected too" wait_live "$d"
	rdmx_check "config: down --client unmaps" rdmxctl config down --client -f /tmp/saved.conf
	rdmx_check "config: rmmod rdmx, insmod again" sh -c "rmmod rdmx && insmod '$RDMX_KO'"
	rdmxctl config apply --client --retry 1m -f /tmp/saved.conf >"$RDMX_OUT/cfg-apply3.txt" 2>&1
	rdmx_check "config: apply the saved file" test $? -eq 0
	d=$(grep -o '/dev/rdmxb[0-9]*' "$RDMX_OUT/cfg-apply3.txt" | head -n 1)
	rdmx_check "config: back: the tunable, and the map ($d) with its data" sh -c \
		"[ \$(cat $sys/reconnect_max_ms) = 1500 ] && [ -b '$d' ] && dd if='$d' bs=1M count=1 iflag=direct status=none | cmp - /tmp/cfg.bin"
	rdmx_check "config: down --client again" rdmxctl config down --client -f /tmp/saved.conf
	rdmx_barrier cfg-done
fi

# ---------------------------------------------- 7. a server guest restart
# Last: node 1's first boot ends here.

# Node 1 exports its disk; node 2 maps it and runs a verifying fio; with
# the I/O under way node 2 has the host kill node 1's QEMU (SIGKILL: no
# shutdown, no disconnect) and boot it again (tests/vm/run --restart 1).
# Node 1's second boot runs this script again: the branch at the top
# listens and exports the disk again. The writes the server had answered
# are on the disk, which outlives the QEMU; those it had not are still
# held by the client, which reissues them once it has reconnected. The
# client's loss timeout covers the whole restart.
reboot_loss_ms=600000
if [ "${RDMX_RESTART:-}" != 1 ]; then
	rdmx_skip "server guest restart" "needs tests/vm/run --restart 1"
elif [ "$RDMX_NODE" = 2 ]; then
	rdmx_barrier reboot-ready "$long"
	if d=$(loss_ms=$reboot_loss_ms map_dev disk 2>"$RDMX_OUT/map-disk.err"); then
		rdmx_pass "guest restart: map disk (node 1's /dev/vda): $d"
		fio_start reboot "$d" 150
		rdmx_poll 60 disk_json "$d" "j[0]['reads'] + j[0]['writes'] > 200"
		rdmx_check "guest restart: node 1's QEMU killed and booted again under the I/O" \
			rdmx_restart_node 1 60
		fio_end reboot "$d" "guest restart"
		rdmx_check "guest restart: the disk reconnected, is live, no errors" disk_json "$d" \
			"j[0]['reconnects'] > 0 and j[0]['state'] == 'live' and j[0]['errors'] == 0"
		rdmx_barrier reboot-done "$long"
		rdmx_check "unmap $d (disk)" rdmxctl unmap "$d"
		rdmx_check "$d is gone" wait_gone "${d#/dev/}"
	else
		rdmx_fail "guest restart: map disk" "$(cat "$RDMX_OUT/map-disk.err")"
		rdmx_restart_node 1 60 || true
		rdmx_barrier reboot-done "$long"
	fi
else
	rdmx_check "guest restart: export disk: /dev/vda" rdmxctl export add disk /dev/vda
	# The first boot never reaches the harness's scan: one now.
	rdmx_kmemleak_check reboot
	rdmx_barrier reboot-ready
	rdmx_await_kill 900 || rdmx_fail "guest restart: node 1 killed"
	rdmx_done
fi

rdmx_barrier unload 300
rdmx_check "rmmod rdmx" rmmod rdmx
rdmx_check "nothing of rdmx left in sysfs" test ! -e $sys
rdmx_done
