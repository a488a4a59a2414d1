#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The guest half of `make bench` (tests/bench/run starts it through
# tests/vm/run on the perf kernel):
#
#   guest.sh [--quick|--tiny] [--repeats N] [--only REGEX] [--profile[=REGEX]]
#
# With two guests node 1 serves (null_blk, the block targets, perftest,
# qperf and rdmx servers) and node 2 measures; with one guest (loopback)
# node 1 does both, over its own soft-RDMA device. Every case runs once per
# repetition, repetitions outermost, so the contenders alternate and a slow
# patch of the host spreads over all of them.
#
# Nothing is parsed here. The measuring node records one line a case and
# repetition in $RDMX_OUT/bench/manifest.tsv:
#   CASE <TAB> REP <TAB> KIND <TAB> STATUS <TAB> FILE-OR-REASON
# KIND says how tests/bench/report.py reads FILE (fio, perftest-bw,
# perftest-lat, qperf, rdmx-ping, msg-send); STATUS is ok, failed (exit
# status; FILE holds the output) or unavailable (the reason, when a
# contender cannot run at all). The script exits 0 unless the harness
# itself breaks: a contender failing is a result, not an error.
#
# --profile (one guest only): after the repetitions, the cases of the
# instruction breakdown run once more under perf's sampling (see "profile"
# below), one line each in $RDMX_OUT/bench/profile.tsv; --profile=REGEX,
# only those of them whose id matches REGEX.

# shellcheck disable=SC2317  # setup steps are called through try
set -u
# shellcheck source=tests/vm/lib.sh
. "$RDMX_REPO/tests/vm/lib.sh"

mode=full repeats="" only=. profile=0 profile_only=.
while [ $# -gt 0 ]; do
	case "$1" in
	--profile) profile=1; shift ;;
	--profile=*) profile=1 profile_only=${1#--profile=}; shift ;;
	--quick) mode=quick; shift ;;
	--tiny) mode=tiny; shift ;;
	--repeats) repeats=$2; shift 2 ;;
	--only) only=$2; shift 2 ;;
	*) echo "guest.sh: unknown argument $1" >&2; exit 2 ;;
	esac
done

# Sizes of each case by mode: iterations of the latency tests, of the
# bandwidth tests, fio's ramp and run time (s), qperf's time (s), 4 MiB
# messages sent, null_blk size (MiB), round trips of a profiled message
# case. One 64 B round trip's time has a standard deviation of about
# 11 % under --icount, so a latency's median wants many: over 10,000 it
# moved 0.13 % between two runs, over 1,000 1.2 %.
case "$mode" in
full)  reps=3 lat_n=10000 bw_n=500 bw4m_n=40 ramp=2 rt=10 qt=10 msgs=32 dev_mb=512 prof_n=20000 ;;
quick) reps=1 lat_n=1000 bw_n=100 bw4m_n=16 ramp=1 rt=3 qt=3 msgs=8 dev_mb=256 prof_n=2000 ;;
tiny)  reps=1 lat_n=10 bw_n=20 bw4m_n=5 ramp=0 rt=1 qt=1 msgs=2 dev_mb=64 prof_n=200 ;;
esac
# Message sizes of the throughput sweep (sweep/...): rdmx, ib_send_bw and
# RDS at each (RDS up to its largest message, 1 MiB).
case "$mode" in
full)  sweep_sizes="64 1024 16384 262144 1048576 4194304" ;;
quick) sweep_sizes="64 65536 1048576" ;;
tiny)  sweep_sizes="" ;;
esac
reps=${repeats:-$reps}
# The cost cases: idle sessions held at once (each to a port of its own:
# a session is a peer address and port), and the maps of the memory one.
case "$mode" in
full)  cost_sessions=100 ;;
quick) cost_sessions=100 ;;
tiny)  cost_sessions=4 ;;
esac
cost_port=7600

loopback=0
[ "$RDMX_NODES" = 1 ] && loopback=1
# Between two guests a round trip crosses the host in real time (tens of
# ms under TCG) and its noise is the host's: a tenth of the round trips
# (--tiny's few stay).
[ "$loopback" = 1 ] || [ "$lat_n" -lt 100 ] || lat_n=$((lat_n / 10))
is_server=0 is_client=0
[ "$RDMX_NODE" = 1 ] && is_server=1
[ "$RDMX_NODE" = "$RDMX_NODES" ] && is_client=1
peer=$RDMX_ADDR_1
dev=$RDMX_RDMA_DEV
B=$RDMX_OUT/bench
# One guest (loopback) is where -icount makes a run repeatable, as long as
# nothing in it waits on the host: the raw outputs and the progress lines
# stay in guest memory (a tmpfs over $B; the console shows the progress)
# and go to the host over 9p at the end, when nothing is measured any more
# (the script's output is a pipe to a writer on 9p). With two guests their
# link is the host's anyway.
mkdir -p "$B"
log() { echo "bench: $*"; }
if [ "$loopback" = 1 ]; then
	mkdir -p /run/bench-host
	if mount --bind "$B" /run/bench-host &&
	   mount -t tmpfs -o size=1g,mode=0755 tmpfs "$B"; then
		: >/run/bench.log
		log() { echo "bench: $*" | tee -a /run/bench.log >/dev/console; }
		# shellcheck disable=SC2317 # run by the EXIT trap
		to_host() {
			cp -a "$B/." /run/bench-host/ ||
				echo "bench: the results could not be copied to the host"
			cat /run/bench.log
		}
		trap to_host EXIT
	else
		umount /run/bench-host 2>/dev/null
		log "raw outputs go to the host as they are written (no tmpfs over $B)"
	fi
fi
mkdir -p "$B/raw"
# Where one node leaves word for the other (why a contender cannot run, a
# client done): the shared 9p directory with two guests, memory with one.
S=$RDMX_SYNC
if [ "$loopback" = 1 ]; then
	S=/run/bench-sync
	mkdir -p "$S"
fi
manifest=$B/manifest.tsv
: >"$manifest"

# A barrier that waits long enough for the other node's whole share of a
# repetition (block cases run on the client alone).
sync_point() { [ "$loopback" = 1 ] || rdmx_barrier "$1" 7200; }

# record CASE REP KIND STATUS FILE-OR-REASON
record() { printf '%s\t%s\t%s\t%s\t%s\n' "$@" >>"$manifest"; }

selected() { [[ $1 =~ $only ]]; }
profiled() { selected "$1" && [[ $1 =~ $profile_only ]]; }

# ---------------------------------------------------------------- cases
#
# The case list is the same on both nodes, so both walk it in step.
# id|kind|what. Block ids are block/CONTENDER/JOB.
# rdmx-rw is rdmx with inline reads off: every read's data comes by RDMA
# WRITE into a buffer registered for it (the alternative data path).
block_contenders="rdmx rdmx-rw nvme-rdma rnbd nbd"
block_jobs="randread-4k-qd1 randwrite-4k-qd1 randread-4k-qd32 randwrite-4k-qd32 read-128k write-128k"

# fio_args JOB: fio's job options for one block job.
fio_args() {
	case "$1" in
	randread-4k-qd*) echo "--rw=randread --bs=4k --iodepth=${1##*-qd}" ;;
	randwrite-4k-qd*) echo "--rw=randwrite --bs=4k --iodepth=${1##*-qd}" ;;
	read-128k) echo "--rw=read --bs=128k --iodepth=8" ;;
	write-128k) echo "--rw=write --bs=128k --iodepth=8" ;;
	esac
}

# How IOPS grow with the queue depth: 4 KiB random reads at each depth,
# rdmx and nvme-rdma (case ids scale/CONTENDER/randread-4k-qdN).
case "$mode" in
full)  scale_depths="1 2 4 8 16 32 64 128" ;;
quick) scale_depths="1 8 32 128" ;;
tiny)  scale_depths="" ;;
esac
scale_contenders="rdmx nvme-rdma"

# perftest cases: id, tool, options.
# Every perftest runs with perftest_flags: the exchange between the ends
# over rdma_cm (-z; its listener is what the client waits for) and the
# test's QPs connected by perftest itself. Not -R (rdma_cm connects the
# QPs too): then the server listens a second time only after the first
# exchange, and a client quicker than that is rejected (IB CM reason 8,
# no listener); Debian 12's perftest (4.5-0.17) then retries on freed
# state and crashes (exit status 139). In one guest that happened to
# ib_send_lat whenever the scheduler ran its client first. -u 17 is the
# ACK timeout rdma_cm gives a RoCE QP (4.096 us x 2^17, about 0.5 s), as
# -R had: perftest's own, 14 (67 ms), can be shorter than a 128 KiB WRITE
# takes between two guests under TCG, and the retransmissions ended
# ib_write_bw there with a remote invalid request error.
perftest_flags="-z -F -u 17"
perftest_cases=(
	"raw/ib_write_bw-128k|ib_write_bw|-s 131072 -n $bw_n"
	"raw/ib_read_bw-128k|ib_read_bw|-s 131072 -n $bw_n"
	"raw/ib_send_bw-4m|ib_send_bw|-s 4194304 -n $bw4m_n"
	"raw/ib_send_lat-64|ib_send_lat|-s 64 -n $lat_n"
	"raw/ib_atomic_lat-8|ib_atomic_lat|-A FETCH_AND_ADD -n $lat_n"
)

# rdmxctl bench cases: id, kind, options (the client's, HOST appended).
rbench_cases=(
	"msg/rdmx-bench-send-lat-64|perftest-lat|-t send -m lat -s 64 -n $lat_n"
	"msg/rdmx-bench-send-bw-4m|perftest-bw|-t send -m bw -s 4194304 -n $bw4m_n"
	"rma/rdmx-bench-write-bw-128k|perftest-bw|-t write -m bw -s 131072 -n $bw_n"
	"rma/rdmx-bench-read-bw-128k|perftest-bw|-t read -m bw -s 131072 -n $bw_n"
	"rma/rdmx-bench-fadd-lat-8|perftest-lat|-t fadd -m lat -s 8 -n $lat_n"
)

# qperf cases: test, options, id (default msg/qperf-TEST). RDS takes at
# most 1 MiB a message, and socket buffers of twice its size.
rds_max=$((1 << 20))
rds_buf=$((4 << 20))
qperf_cases=(
	"tcp_lat|-m 64|" "tcp_bw|-m 65536|" "rds_lat|-m 64|"
	"rds_bw|-m $rds_max -sb $rds_buf|"
)

# The throughput sweep's cases, a size each for ib_send_bw, rdmxctl bench
# and (up to its largest message) RDS.
for size in $sweep_sizes; do
	n=$bw_n
	[ "$size" -ge $((1 << 20)) ] && n=$bw4m_n
	perftest_cases+=("sweep/ib_send_bw-$size|ib_send_bw|-s $size -n $n")
	rbench_cases+=("sweep/rdmx-bench-send-bw-$size|perftest-bw|-t send -m bw -s $size -n $n")
	[ "$size" -le "$rds_max" ] &&
		qperf_cases+=("rds_bw|-m $size -sb $rds_buf|sweep/qperf-rds_bw-$size")
done

# ---------------------------------------------------------------- setup

# Block contenders: why each cannot run, once set up (empty: it can).
declare -A why bdev

# Only the contenders with a selected case are set up.
any_block=0
declare -A want
for c in $block_contenders; do
	for j in $block_jobs; do
		selected "block/$c/$j" && any_block=1 want[$c]=1
	done
	[ "$c" = rdmx ] && selected 'cost/(maps|requests)' && any_block=1 want[$c]=1
	for d in $scale_depths; do
		[[ " $scale_contenders " == *" $c "* ]] || continue
		selected "scale/$c/randread-4k-qd$d" && any_block=1 want[$c]=1
	done
	[ -n "${want[$c]:-}" ] || why[$c]="not selected"
done

nullb=""
setup_nullb() { # server: one memory-backed null_blk device, prefilled
	# The disk takes the configfs directory's name.
	local d=/sys/kernel/config/nullb/nullb0

	modprobe null_blk nr_devices=0 || return 1
	mkdir "$d" || return 1
	echo "$dev_mb" >"$d/size" && echo 1 >"$d/memory_backed" &&
		echo 4096 >"$d/blocksize" && echo 1 >"$d/power" || return 1
	nullb=$(wait_blk '^nullb[0-9]+$') || return 1
	# Prefilled, so reads touch stored pages rather than a hole.
	dd if=/dev/zero of="$nullb" bs=1M count="$dev_mb" oflag=direct status=none
}

NQN=nqn.2026-11.org.rdmx:bench
setup_nvmet() {
	local s=/sys/kernel/config/nvmet

	modprobe nvmet-rdma || return 1
	mkdir "$s/subsystems/$NQN" || return 1
	echo 1 >"$s/subsystems/$NQN/attr_allow_any_host" || return 1
	mkdir "$s/subsystems/$NQN/namespaces/1" || return 1
	echo "$nullb" >"$s/subsystems/$NQN/namespaces/1/device_path" || return 1
	echo 1 >"$s/subsystems/$NQN/namespaces/1/enable" || return 1
	mkdir "$s/ports/1" || return 1
	echo rdma >"$s/ports/1/addr_trtype" && echo ipv4 >"$s/ports/1/addr_adrfam" &&
		echo "$peer" >"$s/ports/1/addr_traddr" &&
		echo 4420 >"$s/ports/1/addr_trsvcid" || return 1
	ln -s "$s/subsystems/$NQN" "$s/ports/1/subsystems/$NQN"
}

# rdmx's block service: a listener of its own, beside the one on the
# default port (7471) that the message cases add below, and the null_blk
# device exported.
RDMX_BLK_PORT=7472
RDMX_BLK_EXPORT=bench
setup_rdmx_server() {
	rdmxctl -j version | grep -q '"block"' || {
		echo "the block service is not in this build of rdmx"
		return 1
	}
	rdmxctl listen add -p "$RDMX_BLK_PORT" || return 1
	# --shared: rdmx-rw maps it a second time beside the first map.
	rdmxctl export add "$RDMX_BLK_EXPORT" "$nullb" --shared || return 1
	rdmxctl export show "$RDMX_BLK_EXPORT"
}

setup_rnbd_server() { modprobe rnbd-server; }

setup_nbd_server() {
	command -v nbd-server >/dev/null || {
		echo "nbd-server not installed on the host (tests/deps.sh)"
		return 1
	}
	cat >/tmp/nbd-bench.conf <<-EOF
	[generic]
	user = root
	group = root
	allowlist = false
	[bench]
	exportname = $nullb
	EOF
	nbd-server -C /tmp/nbd-bench.conf
}

# wait_blk PATTERN: the first block device in /sys/block matching the
# extended regular expression PATTERN, within 30 s.
wait_blk() {
	local b=""

	for _ in $(seq 150); do
		for b in /sys/block/*; do
			b=${b##*/}
			[[ $b =~ $1 ]] && break
			b=""
		done
		if [ -n "$b" ]; then
			udevadm settle 2>/dev/null
			[ -b "/dev/$b" ] || mknod "/dev/$b" b \
				"$(cut -d: -f1 "/sys/block/$b/dev")" "$(cut -d: -f2 "/sys/block/$b/dev")"
			echo "/dev/$b"
			return 0
		fi
		sleep 0.2
	done
	return 1
}

connect_nvme() {
	modprobe nvme-rdma || return 1
	nvme connect -t rdma -a "$peer" -s 4420 -n "$NQN" \
		--hostnqn="nqn.2014-08.org.nvmexpress:uuid:$(cat /proc/sys/kernel/random/uuid)" ||
		return 1
	wait_blk '^nvme[0-9]+n[0-9]+$'
}

# The disk's path is the last line of output, as for the others.
connect_rdmx() {
	local d

	d=$(rdmxctl map -p "$RDMX_BLK_PORT" "$peer" "$RDMX_BLK_EXPORT") || return 1
	rdmxctl map show "$d"
	[ -b "$d" ] || return 1
	echo "$d"
}

# The same export mapped again with /sys/kernel/rdmx/blk_inline_read_max 0.
connect_rdmx_rw() {
	local p=/sys/kernel/rdmx/blk_inline_read_max old rc=0

	[ -w "$p" ] || {
		echo "no $p in this build of rdmx"
		return 1
	}
	old=$(cat "$p")
	echo 0 >"$p"
	connect_rdmx || rc=$?
	echo "$old" >"$p"
	return "$rc"
}

connect_rnbd() {
	modprobe rnbd-client || return 1
	echo "sessname=bench path=ip:$peer device_path=$nullb" \
		>/sys/devices/virtual/rnbd-client/ctl/map_device || return 1
	wait_blk '^rnbd[0-9]+$'
}

connect_nbd() {
	command -v nbd-client >/dev/null || {
		echo "nbd-client not installed on the host (tests/deps.sh)"
		return 1
	}
	modprobe nbd nbds_max=2 || return 1
	nbd-client -N bench -b 4096 "$peer" /dev/nbd0 >&2 || return 1
	echo /dev/nbd0
}

# try NAME CMD...: run a setup step, its output in raw/setup-NAME.txt;
# prints the last line of output on failure.
try() {
	local f=$B/raw/setup-$1.txt
	shift
	local rc=0
	"$@" >"$f" 2>&1 || rc=$?
	[ "$rc" = 0 ] && return 0
	echo "$(grep -v '^$' "$f" | tail -n 1 | cut -c1-120) (exit $rc)"
	return 1
}

if [ "$any_block" = 1 ]; then
	if [ "$is_server" = 1 ]; then
		log "block: null_blk and targets"
		# The device node name is needed by both nodes (rnbd's device_path).
		if r=$(try nullb setup_nullb); then
			nullb=$(wait_blk '^nullb[0-9]+$')
			echo "$nullb" >"$S/nullb"
			if [ -n "${want[rdmx]:-}${want[rdmx-rw]:-}" ] &&
			   ! r=$(try rdmx-export setup_rdmx_server); then
				echo "rdmx export: $r" >"$S/why-rdmx"
				echo "rdmx export: $r" >"$S/why-rdmx-rw"
			fi
			if [ -n "${want[nvme-rdma]:-}" ]; then
				r=$(try nvmet setup_nvmet) || echo "nvmet-rdma target: $r" >"$S/why-nvme-rdma"
			fi
			if [ -n "${want[rnbd]:-}" ]; then
				r=$(try rnbd-server setup_rnbd_server) || echo "rnbd-server: $r" >"$S/why-rnbd"
			fi
			if [ -n "${want[nbd]:-}" ]; then
				r=$(try nbd-server setup_nbd_server) || echo "nbd-server: $r" >"$S/why-nbd"
			fi
		else
			for c in $block_contenders; do
				echo "null_blk: $r" >"$S/why-$c"
			done
		fi
	fi
	sync_point block-targets
	if [ "$is_client" = 1 ]; then
		nullb=$(cat "$S/nullb" 2>/dev/null)
		for c in $block_contenders; do
			[ -e "$S/why-$c" ] && why[$c]=$(cat "$S/why-$c")
		done
		log "block: connecting the initiators"
		if [ -z "${why[rdmx]:-}" ]; then
			if r=$(try rdmx-map connect_rdmx); then
				bdev[rdmx]=$(tail -n 1 "$B/raw/setup-rdmx-map.txt")
			else
				why[rdmx]="rdmxctl map: $r"
			fi
		fi
		if [ -n "${want[rdmx-rw]:-}" ] && [ -z "${why[rdmx-rw]:-}" ]; then
			if r=$(try rdmx-rw-map connect_rdmx_rw); then
				bdev[rdmx-rw]=$(tail -n 1 "$B/raw/setup-rdmx-rw-map.txt")
			else
				why[rdmx-rw]="rdmxctl map, inline reads off: $r"
			fi
		fi
		if [ -z "${why[nvme-rdma]:-}" ]; then
			if r=$(try nvme-connect connect_nvme); then
				bdev[nvme-rdma]=$(tail -n 1 "$B/raw/setup-nvme-connect.txt")
			else
				why[nvme-rdma]="nvme connect: $r"
			fi
		fi
		if [ -z "${why[rnbd]:-}" ]; then
			if r=$(try rnbd-map connect_rnbd); then
				bdev[rnbd]=$(tail -n 1 "$B/raw/setup-rnbd-map.txt")
			else
				why[rnbd]="rnbd map_device: $r"
			fi
		fi
		if [ -z "${why[nbd]:-}" ]; then
			if r=$(try nbd-client connect_nbd); then
				bdev[nbd]=$(tail -n 1 "$B/raw/setup-nbd-client.txt")
			else
				why[nbd]="nbd-client: $r"
			fi
		fi
		for c in $block_contenders; do
			[ -n "${want[$c]:-}" ] || continue
			log "block: $c: ${bdev[$c]:-${why[$c]}}"
		done
	fi
fi

# RDS over RDMA, on every node: qperf's rds_lat and rds_bw. rds_rdma serves
# InfiniBand and RoCE devices only (soft-RoCE, not soft-iWARP), and binds to
# an address of one. Its largest message, 1 MiB, needs socket buffers past
# the default limits. The client runs with connect-retry.so preloaded
# (tests/bench/connect-retry.c, built by tests/bench/run): qperf's server
# listens for an RDS test's side TCP connection only after it has sent the
# client its port, and a client run at once was refused.
rds_why=""
rds_shim=$RDMX_REPO/.build/bench/connect-retry.so
rds_qperf=(qperf)
setup_rds() {
	case "$RDMX_RDMA" in
	rxe) ;;
	*) echo "RDS over RDMA serves InfiniBand and RoCE devices, not $RDMX_RDMA"; return 1 ;;
	esac
	modprobe rds_rdma || return 1
	echo "$rds_buf" >/proc/sys/net/core/wmem_max &&
		echo "$rds_buf" >/proc/sys/net/core/rmem_max || return 1
	if [ -r "$rds_shim" ]; then
		echo "qperf's RDS client preloads $rds_shim"
	else
		echo "no $rds_shim: qperf's RDS client may be refused (\"connect failed\")"
	fi
}
for q in "${qperf_cases[@]}"; do
	IFS='|' read -r test _ id <<<"$q"
	case "$test" in rds_*) ;; *) continue ;; esac
	selected "${id:-msg/qperf-$test}" || continue
	r=$(try rds setup_rds) || rds_why="RDS: $r"
	[ -r "$rds_shim" ] && rds_qperf=(env "LD_PRELOAD=$rds_shim" qperf)
	break
done

# Persistent servers: qperf, the rdmx echo listener, rdmxctl bench.
rbench=1
rdmxctl bench --help >/dev/null 2>&1 || rbench=0
if [ "$is_server" = 1 ]; then
	# qperf's server ends after an RDS test: it is started again.
	(while :; do
		qperf
		echo "qperf server exited ($?); started again"
		sleep 0.5
	done) >"$B/raw/qperf-server.txt" 2>&1 &
	rdmxctl listen add >"$B/raw/rdmx-listen.txt" 2>&1 ||
		echo "rdmxctl listen failed" >>"$B/raw/rdmx-listen.txt"
	if [ "$rbench" = 1 ]; then
		rdmxctl bench >"$B/raw/rdmx-bench-server.txt" 2>&1 &
	fi
	mkdir -p /tmp/msg-in
	# One receiver a repetition (msg recv takes one channel).
	(for _ in $(seq "$reps"); do
		rdmxctl msg recv bench --count "$msgs" --dir /tmp/msg-in >/dev/null
		rm -f /tmp/msg-in/*
	done) >"$B/raw/msg-recv.txt" 2>&1 &
	sleep 1
fi
sync_point servers-up

# ---------------------------------------------------------------- runners

# run_perftest ID TOOL OPTS REP: server on node 1, client on node 2 (both
# in loopback), the client once the server's rdma_cm listener exists.
run_perftest() {
	local id=$1 tool=$2 opts=$3 rep=$4 tag f kind=perftest-bw srv="" rc
	tag=$(echo "$id-$rep" | tr '/' '_')
	f=$B/raw/$tag.txt
	case "$tool" in *_lat) kind=perftest-lat ;; esac
	# The server starts once the client gets here (it may be busy with
	# the block cases for a while), so that its timeout is its own.
	sync_point "$tag-ready"
	# shellcheck disable=SC2086 # opts are words
	if [ "$is_server" = 1 ]; then
		timeout 900 "$tool" $perftest_flags -d "$dev" $opts >"$f.server" 2>&1 &
		srv=$!
		rdmx_wait_cm_listen 18515 ||
			echo "server not listening on 18515 after 60 s" >>"$f.server"
	fi
	sync_point "$tag-up"
	if [ "$is_client" = 1 ]; then
		# shellcheck disable=SC2086
		timeout 900 "$tool" $perftest_flags -d "$dev" $opts "$peer" >"$f" 2>&1
		rc=$?
		if [ "$rc" = 0 ]; then
			record "$id" "$rep" "$kind" ok "$f"
		else
			echo "exit status $rc" >>"$f"
			record "$id" "$rep" "$kind" failed "$f"
		fi
		: >"$S/$tag.client-done"
	fi
	if [ -n "$srv" ]; then
		# A server whose client died may wait for it forever: it gets
		# 30 s once the client is done.
		while kill -0 "$srv" 2>/dev/null && [ ! -e "$S/$tag.client-done" ]; do
			sleep 1
		done
		for _ in $(seq 30); do
			kill -0 "$srv" 2>/dev/null || break
			sleep 1
		done
		kill "$srv" 2>/dev/null
		wait "$srv"
	fi
	sync_point "$tag-done"
}

# client_case ID REP KIND CMD...: run CMD on the measuring node into the
# case's raw file and record it.
client_case() {
	local id=$1 rep=$2 kind=$3 f t=(timeout 900)
	shift 3
	f=$B/raw/$(echo "$id-$rep" | tr '/' '_').txt
	# Functions of this script bound their own commands.
	declare -F "$1" >/dev/null && t=()
	if "${t[@]}" "$@" >"$f" 2>&1; then
		record "$id" "$rep" "$kind" ok "$f"
	else
		echo "exit status $?" >>"$f"
		record "$id" "$rep" "$kind" failed "$f"
	fi
}

run_fio() { # CONTENDER JOB REP [ID-PREFIX, default block]
	local c=$1 j=$2 rep=$3 id=${4:-block}/$1/$2 f
	if [ -n "${why[$c]:-}" ]; then
		record "$id" "$rep" fio unavailable "${why[$c]}"
		return
	fi
	# nbd-server writes through the page cache: what an earlier job left
	# dirty is written back now, not inside this job's measurement.
	sync
	# The device's counters around the job (as client_case names its
	# output): a loss or a retransmission behind a slow run shows there.
	f=$B/raw/$(echo "$id-$rep" | tr '/' '_').txt
	rdma statistic show link "$RDMX_RDMA_DEV/1" >"$f.counters-before" 2>&1
	# shellcheck disable=SC2046 # fio_args gives words
	client_case "$id" "$rep" fio fio --name="${c}_$j" --filename="${bdev[$c]}" \
		--ioengine=libaio --direct=1 $(fio_args "$j") --numjobs="$(nproc)" --group_reporting \
		--time_based --runtime="$rt" --ramp_time="$ramp" \
		--lat_percentiles=1 --percentile_list=50:99:99.9 \
		--output-format=json
	rdma statistic show link "$RDMX_RDMA_DEV/1" >"$f.counters-after" 2>&1
}

# msg_send REP: rdmxctl msg send of $msgs messages of 4 MiB, timed from the
# start of the command (connect included) to the receiver's end of stream.
msg_send() {
	local files=() t0 t1
	[ -e /tmp/m4 ] || head -c 4194304 /dev/urandom >/tmp/m4
	for _ in $(seq "$msgs"); do files+=(/tmp/m4); done
	t0=$(date +%s%N)
	timeout 900 rdmxctl msg send "$peer" bench "${files[@]}" || return 1
	t1=$(date +%s%N)
	echo "messages $msgs bytes 4194304 ns $((t1 - t0))"
}

# ---------------------------------------------------------------- the run

log "mode $mode, $reps repetition(s), loopback $loopback, only '$only'"
for rep in $(seq "$reps"); do
	log "repetition $rep of $reps"
	# Block: every contender for one job before the next job.
	if [ "$is_client" = 1 ]; then
		for j in $block_jobs; do
			for c in $block_contenders; do
				selected "block/$c/$j" || continue
				log "$rep block/$c/$j"
				run_fio "$c" "$j" "$rep"
			done
		done
		for d in $scale_depths; do
			for c in $scale_contenders; do
				selected "scale/$c/randread-4k-qd$d" || continue
				log "$rep scale/$c/randread-4k-qd$d"
				run_fio "$c" "randread-4k-qd$d" "$rep" scale
			done
		done
	fi
	# Raw transport (perftest), then rdmx against it, TCP and RDS.
	for pc in "${perftest_cases[@]}"; do
		IFS='|' read -r id tool opts <<<"$pc"
		selected "$id" || continue
		[ "$is_client" = 1 ] && log "$rep $id"
		run_perftest "$id" "$tool" "$opts" "$rep"
	done
	[ "$is_client" = 1 ] || continue
	id=msg/rdmx-ping-64
	if selected "$id"; then
		log "$rep $id"
		client_case "$id" "$rep" rdmx-ping rdmxctl ping -c "$lat_n" -s 64 "$peer"
	fi
	id=msg/rdmx-msg-send-4m
	if selected "$id"; then
		log "$rep $id"
		client_case "$id" "$rep" msg-send msg_send
	fi
	for bc in "${rbench_cases[@]}"; do
		IFS='|' read -r id kind opts <<<"$bc"
		selected "$id" || continue
		if [ "$rbench" = 0 ]; then
			record "$id" "$rep" "$kind" unavailable "rdmxctl bench not available in this build"
			continue
		fi
		log "$rep $id"
		# shellcheck disable=SC2086
		client_case "$id" "$rep" "$kind" rdmxctl bench $opts "$peer"
	done
	for q in "${qperf_cases[@]}"; do
		IFS='|' read -r test opts id <<<"$q"
		id=${id:-msg/qperf-$test}
		selected "$id" || continue
		if [ "${test#rds_}" != "$test" ] && [ -n "$rds_why" ]; then
			record "$id" "$rep" qperf unavailable "$rds_why"
			continue
		fi
		log "$rep $id"
		qp=(qperf)
		[ "${test#rds_}" != "$test" ] && qp=("${rds_qperf[@]}")
		# shellcheck disable=SC2086
		client_case "$id" "$rep" qperf "${qp[@]}" -ws 10 $opts -t "$qt" "$peer" "$test"
	done
done

# ---------------------------------------------------------------- cost
#
# How memory grows, on the measuring node (in loopback, both ends): free
# memory (MemFree, after dropping the caches) before and while COUNT
# things are held. Each case's raw file has "key value" lines that
# report.py divides out:
#   cost/sessions   idle sessions (rdmx-msgtest hold, a channel each to
#                   the echo service on its own port): sessions, kib_before,
#                   kib_held, seconds (to open them all: the connect rate)
#   cost/maps       maps of the bench export (one queue of 128 each): maps,
#                   kib_before, kib_held
#   cost/requests   one map of one queue at depth 32, then at 1024:
#                   depth_lo, depth_hi, kib_lo, kib_hi (a request's share)
mem_free() {
	sync
	echo 3 >/proc/sys/vm/drop_caches
	awk '/^MemFree:/ { print $2 }' /proc/meminfo
}

cost_sessions_run() {
	local before held t hold_out=/tmp/cost-hold.txt pid

	before=$(mem_free)
	"$RDMX_REPO/tests/integration/rdmx-msgtest" hold -S rdmx.echo -n "$cost_sessions" -p "$cost_port" \
		--ports "$cost_sessions" --linger 30 "$peer" >"$hold_out" 2>&1 &
	pid=$!
	for _ in $(seq 600); do
		grep -q 'channels open' "$hold_out" && break
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.5
	done
	held=$(mem_free)
	cat "$hold_out"
	echo "session_list_lines $(rdmxctl session list | wc -l)"
	kill "$pid" 2>/dev/null
	wait "$pid"
	t=$(sed -n 's/.* channels open in \([0-9.]*\) s.*/\1/p' "$hold_out")
	grep -q "$cost_sessions of $cost_sessions channels open" "$hold_out" || return 1
	echo "sessions $cost_sessions"
	echo "kib_before $before"
	echo "kib_held $held"
	echo "seconds $t"
}

# cost_map_set N DEPTH: N maps of one queue of DEPTH; prints the free KiB
# while they are held, then unmaps them.
cost_map_set() {
	local n=$1 depth=$2 d maps=() held rc=0

	for _ in $(seq "$n"); do
		d=$(rdmxctl map -p "$RDMX_BLK_PORT" "$peer" "$RDMX_BLK_EXPORT" \
			--queues 1 --depth "$depth") || { rc=1; break; }
		maps+=("$d")
	done
	held=$(mem_free)
	for d in "${maps[@]}"; do
		rdmxctl unmap "$d" >&2 || rc=1
	done
	[ "$rc" = 0 ] && echo "$held"
}

cost_maps_run() {
	local before held n=4

	before=$(mem_free)
	held=$(cost_map_set "$n" 128) || return 1
	echo "maps $n"
	echo "kib_before $before"
	echo "kib_held $held"
}

cost_requests_run() {
	local lo hi

	lo=$(cost_map_set 1 32) || return 1
	hi=$(cost_map_set 1 1024) || return 1
	echo "depth_lo 32"
	echo "depth_hi 1024"
	echo "kib_lo $lo"
	echo "kib_hi $hi"
}

# The sessions' listeners, a port each, and room for them all from one
# host: only for this case, so that the measured cases ran without them.
if [ "$is_server" = 1 ] && selected cost/sessions; then
	echo $((2 * cost_sessions + 64)) >/sys/kernel/rdmx/max_sessions_per_host
	for p in $(seq "$cost_port" $((cost_port + cost_sessions - 1))); do
		rdmxctl listen add -p "$p" || break
	done >"$B/raw/cost-listen.txt" 2>&1
fi
sync_point cost-listen
if [ "$is_client" = 1 ]; then
	if selected cost/sessions; then
		log "cost/sessions"
		client_case cost/sessions 1 cost cost_sessions_run
	fi
	for c in maps requests; do
		selected "cost/$c" || continue
		if [ -n "${why[rdmx]:-}" ] || [ -z "${bdev[rdmx]:-}" ]; then
			record "cost/$c" 1 cost unavailable "${why[rdmx]:-rdmx block not set up}"
			continue
		fi
		log "cost/$c"
		client_case "cost/$c" 1 cost "cost_${c}_run"
	done
fi
sync_point cost-done
if [ "$is_server" = 1 ] && selected cost/sessions; then
	for p in $(seq "$cost_port" $((cost_port + cost_sessions - 1))); do
		rdmxctl listen del -p "$p"
	done >>"$B/raw/cost-listen.txt" 2>&1
fi

# ---------------------------------------------------------------- profile
#
# The instruction breakdown: each case below once more, under perf's
# sampling of the whole system (perf record -a -e cpu-clock, PROF_HZ a
# second: a hrtimer, which needs no PMU). Under -icount with sleep=off time
# is instructions, so where the samples land is where the instructions
# go; a sample in the idle loop is time the CPU waited. In loopback the
# whole system is both sides of every contender. perf report's shares by
# object and symbol go to raw/prof-CASE.stat, the command's output to
# raw/prof-CASE.out; one line a case in profile.tsv:
#   CASE <TAB> KIND <TAB> EXIT STATUS <TAB> NS <TAB> CPUS <TAB> FILE-PREFIX
# KIND says how report.py counts the operations in the output: fio (its
# I/Os), ping or perftest-lat (round trips), qperf (messages received),
# perftest-bw and qperf-bw (KiB moved: the messages times their size, the
# bytes received).
# "local" is fio on the null_blk device itself: the backing device's own
# cost, part of every contender's.
profile_block="rdmx nvme-rdma local"
profile_jobs="randread-4k-qd1 randwrite-4k-qd1 randread-4k-qd32 randwrite-4k-qd32 read-128k write-128k"
prof_hz=250
# prof_n (above), the round trips of a profiled message case: enough that
# starting the program and connecting weigh little on each (breakdown.py
# wants 1000 at least).
ptsv=$B/profile.tsv

# prof_run ID KIND CMD...: CMD under perf's sampling.
prof_run() {
	local id=$1 kind=$2 f t0 t1 rc
	shift 2
	f=$B/raw/prof-$(echo "$id" | tr '/' '_')
	rm -f "$f.rc"
	# The device's counters around it (RNR NAKs, retries, sequence
	# errors: what would make the transport wait for a timer).
	rdma statistic show link "$RDMX_RDMA_DEV/1" >"$f.counters-before" 2>&1
	t0=$(date +%s%N)
	# shellcheck disable=SC2016 # the inner shell expands them
	perf record -q -e cpu-clock -F "$prof_hz" -a -o "$f.data" -- \
		sh -c 'timeout 900 "$@"; echo $? >"$0"' "$f.rc" "$@" >"$f.out" 2>"$f.perf.txt"
	t1=$(date +%s%N)
	rdma statistic show link "$RDMX_RDMA_DEV/1" >"$f.counters-after" 2>&1
	rc=$(cat "$f.rc" 2>/dev/null || echo 255)
	perf report -i "$f.data" --stdio -q -g none --sort dso,sym -n --show-total-period \
		--percent-limit 0 >"$f.stat" 2>>"$f.perf.txt"
	printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$id" "$kind" "$rc" "$((t1 - t0))" \
		"$(nproc)" "$f" >>"$ptsv"
}

# prof_case ID CASE...: prog (the case's second field) and opts (its
# options without their -n, which a profiled case sets) of case ID among
# the CASEs (ID|FIELD|OPTIONS); 1 when none is ID.
prof_case() {
	local want=$1 c id

	shift
	for c in "$@"; do
		IFS='|' read -r id prog opts <<<"$c"
		[ "$id" = "$want" ] || continue
		opts=${opts% -n *}
		return 0
	done
	return 1
}

prof_fio() { # CONTENDER JOB: the job without a ramp (every I/O is counted)
	local c=$1 j=$2 dev=${bdev[$1]:-}

	[ "$c" = local ] && dev=$nullb
	# shellcheck disable=SC2046 # fio_args gives words
	prof_run "block/$c/$j" fio fio --name="${c}_$j" --filename="$dev" \
		--ioengine=libaio --direct=1 $(fio_args "$j") --numjobs="$(nproc)" --group_reporting \
		--time_based --runtime="$rt" --output-format=json
}

if [ "$profile" = 1 ] && [ "$loopback" = 1 ]; then
	: >"$ptsv"
	if ! perf record -q -e cpu-clock -a -o /tmp/perf-probe.data -- true \
		>/tmp/perf-probe.txt 2>&1; then
		log "profile: perf cannot sample here: $(tail -n 1 /tmp/perf-probe.txt)"
		printf 'profile\tnone\t1\t0\t0\tperf cannot sample here: %s\n' \
			"$(tail -n 1 /tmp/perf-probe.txt)" >"$ptsv"
	else
		# perf reads a module's symbols from its file under /lib/modules:
		# rdmx's, loaded from the build tree, goes there too (into the
		# guest's overlay, not the host).
		if ! { mkdir -p "/lib/modules/$(uname -r)/extra" &&
		       cp "$RDMX_KO" "/lib/modules/$(uname -r)/extra/rdmx.ko"; }; then
			log "profile: rdmx's symbols will be missing"
		fi
		for j in $profile_jobs; do
			for c in $profile_block; do
				profiled "block/$c/$j" || continue
				[ "$c" = local ] || [ -z "${why[$c]:-}" ] || continue
				[ "$c" != local ] || [ -n "$nullb" ] || continue
				log "profile block/$c/$j"
				prof_fio "$c" "$j"
			done
		done
		if profiled msg/rdmx-ping-64; then
			log "profile msg/rdmx-ping-64"
			prof_run msg/rdmx-ping-64 ping rdmxctl ping -c "$prof_n" -s 64 "$peer"
		fi
		if profiled msg/qperf-rds_lat && [ -z "$rds_why" ]; then
			log "profile msg/qperf-rds_lat"
			prof_run msg/qperf-rds_lat qperf "${rds_qperf[@]}" -ws 10 -m 64 -t "$qt" -vvs \
				"$peer" rds_lat
		fi
		# Throughput per KiB moved: rdmx's 4 MiB messages and RDS's
		# largest, as the 4 MiB target compares them.
		if profiled msg/rdmx-bench-send-bw-4m && [ "$rbench" = 1 ] &&
		   prof_case msg/rdmx-bench-send-bw-4m "${rbench_cases[@]}"; then
			log "profile msg/rdmx-bench-send-bw-4m"
			# shellcheck disable=SC2086 # opts are words
			prof_run msg/rdmx-bench-send-bw-4m perftest-bw rdmxctl bench $opts \
				-n "$bw4m_n" "$peer"
		fi
		if profiled msg/qperf-rds_bw && [ -z "$rds_why" ]; then
			log "profile msg/qperf-rds_bw"
			prof_run msg/qperf-rds_bw qperf-bw "${rds_qperf[@]}" \
				-m "$rds_max" -sb "$rds_buf" -t "$qt" -vvs "$peer" rds_bw
		fi
		if profiled rma/rdmx-bench-fadd-lat-8 && [ "$rbench" = 1 ] &&
		   prof_case rma/rdmx-bench-fadd-lat-8 "${rbench_cases[@]}"; then
			log "profile rma/rdmx-bench-fadd-lat-8"
			# shellcheck disable=SC2086 # opts are words
			prof_run rma/rdmx-bench-fadd-lat-8 perftest-lat rdmxctl bench $opts \
				-n "$prof_n" "$peer"
		fi
		for id in raw/ib_send_lat-64 raw/ib_atomic_lat-8; do
			if ! profiled "$id" || ! prof_case "$id" "${perftest_cases[@]}"; then
				continue
			fi
			log "profile $id"
			# shellcheck disable=SC2086 # perftest_flags and opts are words
			timeout 900 "$prog" $perftest_flags -d "$dev" $opts -n "$prof_n" \
				>"$B/raw/prof-$prog-server.txt" 2>&1 &
			srv=$!
			rdmx_wait_cm_listen 18515
			# shellcheck disable=SC2086
			prof_run "$id" perftest-lat "$prog" $perftest_flags -d "$dev" $opts \
				-n "$prof_n" "$peer"
			wait "$srv"
		done
	fi
elif [ "$profile" = 1 ]; then
	log "profile: only in loopback (one guest), where one kernel runs both sides"
fi
sync_point bench-done

# Undo the block setup (the guest powers off anyway; this keeps the kernel
# log free of teardown noise of a forced shutdown).
if [ "$is_client" = 1 ] && [ "$any_block" = 1 ]; then
	[ -n "${bdev[nbd]:-}" ] && nbd-client -d /dev/nbd0 >/dev/null 2>&1
	[ -n "${bdev[nvme-rdma]:-}" ] && nvme disconnect -n "$NQN" >/dev/null 2>&1
	for c in rdmx rdmx-rw; do
		[ -n "${bdev[$c]:-}" ] || continue
		# The disk's counters (reconnects, requeues, errors) first.
		{ rdmxctl map show "${bdev[$c]}" && rdmxctl unmap "${bdev[$c]}"; } \
			>"$B/raw/teardown-$c-unmap.txt" 2>&1 ||
			log "block: rdmxctl unmap ${bdev[$c]} failed (raw/teardown-$c-unmap.txt)"
	done
	for s in /sys/block/rnbd*/rnbd/unmap_device; do
		[ -e "$s" ] && echo normal >"$s" 2>/dev/null
	done
fi
sync_point teardown
# The export goes once the client has unmapped it.
if [ "$is_server" = 1 ] && [ -n "${want[rdmx]:-}${want[rdmx-rw]:-}" ] &&
   rdmxctl export show "$RDMX_BLK_EXPORT" >/dev/null 2>&1; then
	rdmxctl export del "$RDMX_BLK_EXPORT" >"$B/raw/teardown-rdmx-export.txt" 2>&1 ||
		log "block: rdmxctl export del $RDMX_BLK_EXPORT failed (raw/teardown-rdmx-export.txt)"
fi
log "done: $(wc -l <"$manifest") records in $manifest"
exit 0
