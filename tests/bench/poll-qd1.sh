#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# tests/bench/poll-qd1.sh: does busy polling pay at QD1 on this instrument?
# A guest script, for one guest of one vCPU on the perf kernel under
# -icount, as the reference instrument runs (Documentation/benchmarks.rst):
#
#   tests/vm/run --nodes 1 --kernel perf --icount shift=2,sleep=off \
#       --klog end --out DIR -- tests/bench/poll-qd1.sh
#
# nvme-rdma over the guest's own soft-RoCE device, to a memory-backed
# null_blk: 4 KiB random reads and writes at QD1 through libaio and
# io_uring on a controller without poll queues, then through io_uring with
# and without hipri on one with a poll queue (nvme connect
# --nr-poll-queues=1; hipri makes io_uring busy-poll it). Prints a line a
# job, and writes them and fio's JSON to DIR/node1/poll-qd1/. Under
# -icount, fio's latencies of polled I/O are not to be trusted (the guest's
# clock is read around a poll loop that the instruction clock charges
# unevenly): read the IOPS.
set -euo pipefail

rt=${POLL_QD1_RUNTIME:-20}
peer=$RDMX_ADDR_1
nqn=nqn.2026-11.org.rdmx:poll-qd1
out=/tmp/poll-qd1	# guest memory: nothing waits on the host while measured
mkdir -p "$out"

wait_dev() { # PATH: a block device node to appear (no udev in the guest)
	for _ in $(seq 100); do
		[ -b "$1" ] && return 0
		sleep 0.1
	done
	echo "poll-qd1: no $1" >&2
	return 1
}

nb=/sys/kernel/config/nullb/nullb0
modprobe null_blk nr_devices=0
mkdir "$nb"
echo 256 >"$nb/size"
echo 1 >"$nb/memory_backed"
echo 4096 >"$nb/blocksize"
echo 1 >"$nb/power"
wait_dev /dev/nullb0
dd if=/dev/zero of=/dev/nullb0 bs=1M count=256 oflag=direct status=none

t=/sys/kernel/config/nvmet
modprobe nvmet-rdma
mkdir "$t/subsystems/$nqn"
echo 1 >"$t/subsystems/$nqn/attr_allow_any_host"
mkdir "$t/subsystems/$nqn/namespaces/1"
echo /dev/nullb0 >"$t/subsystems/$nqn/namespaces/1/device_path"
echo 1 >"$t/subsystems/$nqn/namespaces/1/enable"
mkdir "$t/ports/1"
echo rdma >"$t/ports/1/addr_trtype"
echo ipv4 >"$t/ports/1/addr_adrfam"
echo "$peer" >"$t/ports/1/addr_traddr"
echo 4420 >"$t/ports/1/addr_trsvcid"
ln -s "$t/subsystems/$nqn" "$t/ports/1/subsystems/$nqn"
modprobe nvme-rdma

connect() { # nvme connect options
	nvme connect -t rdma -a "$peer" -s 4420 -n "$nqn" --nr-io-queues=1 "$@" \
		--hostnqn="nqn.2014-08.org.nvmexpress:uuid:$(cat /proc/sys/kernel/random/uuid)" \
		>/dev/null
	wait_dev /dev/nvme0n1
}

job() { # NAME RW ENGINE [fio options]
	local name=$1 rw=$2 engine=$3
	shift 3
	fio --name="$name" --filename=/dev/nvme0n1 --ioengine="$engine" --direct=1 \
		--rw="$rw" --bs=4k --iodepth=1 --numjobs=1 --time_based \
		--runtime="$rt" --ramp_time=2 --lat_percentiles=1 \
		--percentile_list=50 --output-format=json "$@" >"$out/$name.json"
	python3 - "$out/$name.json" "$name" <<'EOF' | tee -a "$out/summary.txt"
import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]
x = j["read"] if j["read"]["io_bytes"] else j["write"]
print("%-24s %9.1f IOPS  p50 %7.1f us" % (sys.argv[2], x["iops"],
      x["clat_ns"]["percentile"]["50.000000"] / 1000))
EOF
}

connect
for rw in randread randwrite; do
	job "irq-libaio-$rw" "$rw" libaio
	job "irq-uring-$rw" "$rw" io_uring
done
nvme disconnect -n "$nqn" >/dev/null
connect --nr-poll-queues=1
echo "io_poll: $(cat /sys/block/nvme0n1/queue/io_poll)" | tee -a "$out/summary.txt"
for rw in randread randwrite; do
	job "pollq-uring-$rw" "$rw" io_uring
	job "pollq-hipri-$rw" "$rw" io_uring --hipri=1
done
nvme disconnect -n "$nqn" >/dev/null
cp -r "$out" "$RDMX_OUT/"
