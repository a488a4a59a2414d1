#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The /dev/rdmx ioctl fuzzer (rdmx-ioctlfuzz), in one guest: as root, then
# as user nobody, SECS seconds each with THREADS racing threads (16; most
# calls wait for a peer or a timeout: more threads make more calls, up to
# what the guest's CPUs can run: make fuzz gives 2 vCPUs and 32 threads). Each run must
# end by itself with no broken invariant and no hang; the harness then
# scans the kernel log for splats (KASAN, lockdep, UBSAN) and kmemleak
# after rdmx unloads. Run as
#   tests/vm/run --nodes 1 --kernel debug --rdma rxe \
#       tests/integration/ioctl-fuzz.sh [SECS [SEED [THREADS]]]
# by tests/integration/basic.sh (a short pass in make check) and by
# make fuzz (DURATION=SECS).
set -u
. "$RDMX_REPO/tests/vm/lib.sh"

secs=${1:-60}
seed=${2:-$(date +%s)}
threads=${3:-16}
fuzz=$RDMX_REPO/tests/integration/rdmx-ioctlfuzz

lsmod | grep -q '^rdmx ' || insmod "$RDMX_KO" || rdmx_fail "rdmx loads"

# fuzz_as WHO SEED [PREFIX...]: one run; its summary is WHO's JSON.
fuzz_as() {
	local who=$1 s=$2 rc out=$RDMX_OUT/ioctlfuzz-$1

	shift 2
	timeout -k 30 $((secs + 300)) "$@" "$fuzz" -s "$s" -n 1000000000 \
		-d "$secs" -t "$threads" -j >"$out.json" 2>"$out.txt"
	rc=$?
	tail -n 20 "$out.txt"
	cat "$out.json"
	rdmx_check "ioctl fuzz as $who, seed $s, $secs s: no broken invariant, no hang (exit $rc)" \
		test "$rc" -eq 0
	rdmx_check "ioctl fuzz as $who: calls were made" \
		rdmx_json "j['calls'] > 0" <"$out.json"
}

fuzz_as root "$seed"
fuzz_as nobody $((seed + 1)) setpriv --reuid=65534 --regid=65534 --clear-groups --
python3 -S -c 'import json,sys
n = [json.load(open(f))["calls"] for f in sys.argv[1:]]
print("ioctl fuzz: %d calls in all" % sum(n))' "$RDMX_OUT"/ioctlfuzz-*.json
rdmx_check "rdmx unloads after the fuzz" rmmod rdmx
rdmx_kmemleak_check ioctl-fuzz
rdmx_check "rdmx loads again" insmod "$RDMX_KO"
rdmx_done
