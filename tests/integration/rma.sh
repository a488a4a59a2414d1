#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# One-sided access between two guests: node 1 holds memory, node 2 reads,
# writes and updates it. Run by tests/check as
#   tests/vm/run --nodes 2 --rdma rxe tests/integration/rma.sh
# Arguments: ROUNDS (default 200), the WRITE_IMM rounds, ATOMICS (default
# 2000), the fetch-and-adds each side makes on the shared word, and MODE:
# full (the default) or quick (make check without FULL=1: the pattern
# case stops at 1 MiB; rdmxctl bench runs each test in one mode and leaves
# the size sweep and -D out).
#
# Each case is one run of tests/integration/rdmx-rmatest, "owner" on node 1
# and "user" on node 2 (see the comment at its top); each node checks its
# own side's exit status and JSON. Over siw (no atomics) the atomic cases
# are skipped, after checking that the kernel answers EOPNOTSUPP. Then
# rdmxctl mr serve and rdmxctl rma, by hand as an operator would; last,
# rdmxctl bench, every test in both modes, with the numbers checked.
set -u
. "$RDMX_REPO/tests/vm/lib.sh"

RT="$RDMX_REPO/tests/integration/rdmx-rmatest"
rounds=${1:-200}
nat=${2:-2000}
mode=${3:-full}
owner=$RDMX_ADDR_1
dev=$RDMX_RDMA_DEV
sys=/sys/kernel/rdmx
atomics=yes iwarp=no refused='"EINVAL", "EACCES", "EIO", "ECONNRESET"'
# iWARP: no atomics, and a WRITE completes once sent, so a refused one can
# report success (SENT) before the peer resets the connection.
[ "$RDMX_RDMA" = siw ] && atomics=no iwarp=yes refused="$refused, \"SENT\""
# siw under TCG with the debug kernel moves about 200 KB/s: a 16 MiB
# operation takes minutes, and the pattern case as a whole ten or more.
idle=120
if [ "$RDMX_RDMA" = siw ]; then
	idle=900
	export RDMX_PAIR_TIMEOUT=1800
fi
role=user
[ "$RDMX_NODE" = 1 ] && role=owner

# A stale token may cost a reconnect: make it quick. Heartbeats stay
# slow: under TCG with the debug kernel a 16 MiB transfer takes seconds,
# and the peer's answer to a probe can queue behind it.
echo 5000 >$sys/hb_interval_ms
echo 3 >$sys/hb_miss_max
echo 20000 >$sys/loss_timeout_ms
echo 1000 >$sys/reconnect_max_ms

rdmx_barrier up || rdmx_fail "peer came up"

# 0. The module offers one-sided access; the device has atomics or not, as
# the transport says (the expectations below follow from it).
rdmxctl -j version >"$RDMX_OUT/version.json"
rdmx_check "rdmxctl version lists the rma feature (RDMX_FEATURE_RMA)" rdmx_json \
	"'rma' in j['module']['features']" <"$RDMX_OUT/version.json"
rdmxctl -j dev >"$RDMX_OUT/dev.json"
if [ "$atomics" = yes ]; then
	rdmx_check "$dev has atomics (rdmxctl dev)" rdmx_json \
		"any(d['name'] == '$dev' and d['atomics'] != 'none' for d in j)" <"$RDMX_OUT/dev.json"
else
	rdmx_check "$dev has no atomics (rdmxctl dev)" rdmx_json \
		"any(d['name'] == '$dev' and d['atomics'] == 'none' for d in j)" <"$RDMX_OUT/dev.json"
fi

# json_check NAME EXPR: this node's JSON of case NAME satisfies EXPR (as j)
json_check() {
	rdmx_check "$1 ($dev): $role: $3" rdmx_json "$2" <"$RDMX_OUT/$1-$role.json"
}

# rma_case NAME PORT [USER-ARGS...]: case NAME, owner on node 1 (listening on
# PORT and PORT + 100), user on node 2; each node checks its side: exit
# status 0, and a JSON that says every check passed and some ran.
rma_case() {
	local name=$1 port=$2 rc
	shift 2
	rm -f "$RDMX_OUT/$name-$role.json"
	rdmx_pair_run "rma-$name" "$port" "$RDMX_OUT/$name.txt" \
		"$RT" owner -p "$port" -P $((port + 100)) -S "rma-$name" --idle-timeout "$idle" \
			--json "$RDMX_OUT/$name-owner.json" -- \
		"$RT" user -p "$port" -P $((port + 100)) -S "rma-$name" --idle-timeout "$idle" \
			--atomics "$atomics" --iwarp "$iwarp" --json "$RDMX_OUT/$name-user.json" \
			"$@" "$owner" "$name"
	rc=$?
	grep -E 'FAIL|HANG|: ok:' "$RDMX_OUT/$name.txt" | tail -n 12
	rdmx_check "$name ($dev): $role exits 0" test "$rc" -eq 0
	json_check "$name" 'j["ok"] and j["errors"] == 0 and j["checks"] > 0' \
		"every check passed"
}

# dump_is K: the region of rdmxctl mr serve's channel K (section 7) holds
# what the operation on it should have left
# shellcheck disable=SC2317  # called through rdmx_check
dump_is() {
	python3 -S - "$RDMX_SYNC" "$RDMX_OUT/mr-dump" "$1" "$atomics" <<'EOF'
import struct, sys
sync, dump, k, atomics = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
base = open(sync + "/mr.bin", "rb").read()
w = open(sync + "/w.bin", "rb").read()
w4 = open(sync + "/w4.bin", "rb").read()
old = struct.unpack("<Q", base[8:16])[0]
want = {
    1: base,
    2: base[:17] + w + base[17 + len(w):],
    3: base[:8] + struct.pack("<Q", (old + 5) % 2**64) + base[16:] if atomics == "yes" else base,
    4: w4 + base[len(w4):],
    5: base,
}[k]
sys.exit(0 if open("%s.%d" % (dump, k), "rb").read() == want else 1)
EOF
}

# 1. WRITE then READ back, 1 B to 16 MiB, unaligned; the owner checks its
# whole region after each write. Quick: up to 1 MiB (the 16 MiB WRITE and
# READ are two thirds of the data and of the time).
if [ "$mode" = quick ]; then
	rma_case pattern 7481 --max-len $((1 << 20))
	[ "$role" = user ] &&
		json_check pattern 'j["ops"] >= 250 and j["bytes"] >= 10 << 20' \
			"at least 250 operations and 10 MiB moved"
else
	rma_case pattern 7481
	[ "$role" = user ] &&
		json_check pattern 'j["ops"] >= 250 and j["bytes"] >= 40 << 20' \
			"at least 250 operations and 40 MiB moved"
fi

# 2. WRITE_IMM: the round's writes are in memory when its immediate comes.
rma_case imm 7482 -n "$rounds"
json_check imm "j['imms'] == $rounds" "$rounds immediates, in order"

# 3. Atomics hammered from both sides: node 1's user reaches its own memory
# over a loopback session (its own address), on which the owner registers
# the same word again; node 2's over the link.
if [ "$atomics" = yes ]; then
	port=7486
	total=$((2 * (nat + nat / 4)))
	if [ "$RDMX_NODE" = 1 ]; then
		timeout 300 "$RT" owner -p $port -S rma-atomic --channels 2 \
			--json "$RDMX_OUT/atomic-owner.json" >"$RDMX_OUT/atomic-owner.txt" 2>&1 &
		srv=$!
		rdmx_wait_cm_listen $port ||
			echo "owner not listening on $port after 60 s" >>"$RDMX_OUT/atomic-owner.txt"
		rdmx_barrier atomic-up
		timeout 300 "$RT" user -p $port -S rma-atomic --atomics yes -n "$nat" \
			--slot 1 --peers 2 --json "$RDMX_OUT/atomic-loopback.json" \
			"$RDMX_ADDR_1" atomic >"$RDMX_OUT/atomic-loopback.txt" 2>&1
		urc=$?
		wait "$srv"
		orc=$?
		tail -n 3 "$RDMX_OUT/atomic-owner.txt" "$RDMX_OUT/atomic-loopback.txt"
		rdmx_check "atomic ($dev): owner exits 0" test "$orc" -eq 0
		json_check atomic "j['ok'] and j['errors'] == 0 and j['atomic_total'] == $total" \
			"the word went up exactly $total times, each old value seen once"
		rdmx_check "atomic ($dev): the loopback user exits 0" test "$urc" -eq 0
		rdmx_check "atomic ($dev): the loopback user made $((nat + nat / 4)) increments" \
			rdmx_json "j['ok'] and j['atomic_mine'] == $((nat + nat / 4))" \
			<"$RDMX_OUT/atomic-loopback.json"
		rdmx_check "atomic ($dev): node 1's user ran over a session to its own address" \
			rdmx_json "j['peer'] == '$RDMX_ADDR_1:$port' and j['local'].startswith('$RDMX_ADDR_1:')" \
			<"$RDMX_OUT/atomic-loopback.json"
	else
		rdmx_barrier atomic-up
		timeout 300 "$RT" user -p $port -S rma-atomic --atomics yes -n "$nat" \
			--slot 2 --peers 2 --json "$RDMX_OUT/atomic-user.json" \
			"$owner" atomic >"$RDMX_OUT/atomic-user.txt" 2>&1
		urc=$?
		tail -n 3 "$RDMX_OUT/atomic-user.txt"
		rdmx_check "atomic ($dev): user exits 0" test "$urc" -eq 0
		json_check atomic "j['ok'] and j['errors'] == 0 and j['atomic_mine'] == $((nat + nat / 4))" \
			"$((nat + nat / 4)) increments, carries, byte order, rights"
	fi
	rdmx_barrier atomic-done
else
	# siw: first make sure the kernel refuses atomics (EOPNOTSUPP), then skip.
	rma_case atomic-none 7487
	if [ "$role" = user ]; then
		if rdmx_json 'j["ok"] and j["eopnotsupp"] == 4' <"$RDMX_OUT/atomic-none-user.json"; then
			rdmx_skip "atomic ($dev): atomics hammered from both sides" \
				"$dev has no atomics: MR_REG with the atomic right and every atomic answered EOPNOTSUPP (checked)"
		else
			rdmx_fail "atomic ($dev): the kernel refuses atomics with EOPNOTSUPP, before skipping"
		fi
	fi
fi

# 4. Out of bounds, bad fields and rights, corrupt, foreign and stale
# tokens: each its errno, nothing written, a fresh token works after.
rma_case errors 7483
[ "$role" = user ] &&
	json_check errors "len(j['stale']) == 5 and set(j['stale']) <= {$refused}" \
		"another session's and stale tokens refused"

# 5. DEREG and close, on either side, with operations in flight.
rma_case inflight 7484
if [ "$role" = user ]; then
	json_check inflight 'j["inflight_done"] + j["inflight_failed"] == 64 and j["events"] == 64' \
		"every operation in flight accounted for once"
	python3 -S -c 'import json, sys; j = json.load(sys.stdin); print("inflight: %d operations done, %d failed" % (j["inflight_done"], j["inflight_failed"]))' \
		<"$RDMX_OUT/inflight-user.json"
fi

# 6. Asynchronous batches, events, poll() and EPOLLPRI.
rma_case async 7485
[ "$role" = user ] &&
	json_check async 'j["events"] == 256 + 2 + 32' "each of 290 operations reported once"

# 7. rdmxctl: serve a file, read it back, write, fetch-and-add, write with an
# immediate, and one read past the end; each channel's region is dumped.
access=rw
[ "$atomics" = yes ] && access=rwa
if [ "$RDMX_NODE" = 1 ]; then
	head -c 1000003 /dev/urandom >"$RDMX_SYNC/mr.bin"
	timeout 300 rdmxctl -j mr serve -p 7490 --fill "$RDMX_SYNC/mr.bin" --access $access \
		--count 5 --dump "$RDMX_OUT/mr-dump" >"$RDMX_OUT/mr-serve.json" \
		2>"$RDMX_OUT/mr-serve.err" &
	srv=$!
	rdmx_wait_cm_listen 7490
	rdmx_barrier mr-up
	wait "$srv"
	rdmx_check "rdmxctl mr serve: 5 channels served" test $? -eq 0
	cat "$RDMX_OUT/mr-serve.err"
	rdmx_check "rdmxctl mr serve: each region as asked" rdmx_json \
		"len(j) == 5 and all(c['length'] == 1000003 and c['token_len'] > 0 and c['ended'] and c['access'] == ['read', 'write'] + (['atomic'] if '$access' == 'rwa' else []) for c in j)" \
		<"$RDMX_OUT/mr-serve.json"
	rdmx_check "rdmxctl mr serve: the immediate of writeimm" rdmx_json \
		"j[3]['immediates'] == [42] and sum(c['immediates_received'] for c in j) == 1" \
		<"$RDMX_OUT/mr-serve.json"
	rdmx_barrier mr-done
	rdmx_check "rdmxctl mr serve --dump: read left the region as it was" dump_is 1
	rdmx_check "rdmxctl mr serve --dump: write put 4096 bytes at offset 17" dump_is 2
	if [ "$atomics" = yes ]; then
		rdmx_check "rdmxctl mr serve --dump: fadd added 5 to the word at 8" dump_is 3
	else
		rdmx_check "rdmxctl mr serve --dump: the refused fadd changed nothing" dump_is 3
	fi
	rdmx_check "rdmxctl mr serve --dump: writeimm put 100 bytes at 0" dump_is 4
	rdmx_check "rdmxctl mr serve --dump: the refused read changed nothing" dump_is 5
else
	rdmx_barrier mr-up
	rdmxctl rma -p 7490 "$owner" read 0 1000003 -o "$RDMX_OUT/back.bin"
	rdmx_check "rdmxctl rma read of the served file" test $? -eq 0
	rdmx_check "rdmxctl rma read: the same bytes (sha256)" \
		test "$(sha256sum <"$RDMX_OUT/back.bin")" = "$(sha256sum <"$RDMX_SYNC/mr.bin")"
	head -c 4096 /dev/urandom >"$RDMX_SYNC/w.bin"
	rdmxctl -j rma -p 7490 "$owner" write 17 "$RDMX_SYNC/w.bin" >"$RDMX_OUT/rma-write.json"
	rdmx_check "rdmxctl rma write of 4096 bytes" rdmx_json \
		"j['op'] == 'write' and j['bytes'] == 4096 and j['offset'] == 17" <"$RDMX_OUT/rma-write.json"
	old=$(python3 -S -c 'import struct, sys; print(struct.unpack("<Q", open(sys.argv[1], "rb").read()[8:16])[0])' \
		"$RDMX_SYNC/mr.bin")
	if [ "$atomics" = yes ]; then
		rdmxctl -j rma -p 7490 "$owner" fadd 8 5 >"$RDMX_OUT/rma-fadd.json"
		rdmx_check "rdmxctl rma fadd returns the word's old value" rdmx_json \
			"j['op'] == 'fadd' and j['old'] == $old and j['new'] == ($old + 5) % 2**64" \
			<"$RDMX_OUT/rma-fadd.json"
	else
		rdmxctl rma -p 7490 "$owner" fadd 8 5 2>"$RDMX_OUT/rma-fadd.err"
		rc=$?
		cat "$RDMX_OUT/rma-fadd.err"
		rdmx_check "rdmxctl rma fadd over $dev fails with EOPNOTSUPP" \
			sh -c "[ $rc -eq 1 ] && grep -q 'Operation not supported' '$RDMX_OUT/rma-fadd.err'"
	fi
	head -c 100 /dev/urandom >"$RDMX_SYNC/w4.bin"
	rdmxctl -j rma -p 7490 "$owner" writeimm 0 "$RDMX_SYNC/w4.bin" 42 >"$RDMX_OUT/rma-imm.json"
	rdmx_check "rdmxctl rma writeimm" rdmx_json \
		"j['op'] == 'writeimm' and j['imm'] == 42 and j['bytes'] == 100" <"$RDMX_OUT/rma-imm.json"
	rdmxctl rma -p 7490 "$owner" read 1000000 4 2>"$RDMX_OUT/rma-oob.err"
	rc=$?
	cat "$RDMX_OUT/rma-oob.err"
	rdmx_check "rdmxctl rma read past the end fails with ERANGE" \
		sh -c "[ $rc -eq 1 ] && grep -q 'Numerical result out of range' '$RDMX_OUT/rma-oob.err'"
	rdmx_barrier mr-done
fi

# 8. rdmxctl bench: every test in both modes, against a server that keeps
# serving; a sweep in text; a duration; --once.
# bench_json EXPR NAME: the JSON of run NAME satisfies EXPR (j the rows,
# r the first)
# shellcheck disable=SC2317  # called through rdmx_check
bench_json() {
	rdmx_json "(lambda r: $1)(j[0])" <"$RDMX_OUT/bench-$2.json"
}
# (rdmx-abuse checks that the module advertises it; tests/host's fake
# module does not.)
if ! rdmx_json "'bench' in j['module']['features']" <"$RDMX_OUT/version.json"; then
	rdmx_skip "rdmxctl bench" "the module has no RDMX_FEATURE_BENCH"
else
	bench_port=7495
	if [ "$RDMX_NODE" = 1 ]; then
		rdmxctl bench -p $bench_port >"$RDMX_OUT/bench-server.txt" 2>&1 &
		bench_srv=$!
		rdmx_wait_cm_listen $bench_port || rdmx_fail "rdmxctl bench serves on $bench_port"
		rdmx_barrier bench-up
		rdmx_barrier bench-done 1200
		rdmx_check "rdmxctl bench: still serving after every client" kill $bench_srv
		wait $bench_srv
		cat "$RDMX_OUT/bench-server.txt"
		timeout 300 rdmxctl -j bench -p $((bench_port + 1)) --once \
			>"$RDMX_OUT/bench-once.json" 2>"$RDMX_OUT/bench-once.err" &
		bench_once=$!
		rdmx_wait_cm_listen $((bench_port + 1)) || rdmx_fail "rdmxctl bench --once serves"
		rdmx_barrier bench-once-up
		wait $bench_once
		rdmx_check "rdmxctl bench --once: exits 0 after its client" test $? -eq 0
		rdmx_check "rdmxctl bench --once: a JSON report of the client's send runs" rdmx_json \
			"len(j) == 1 and j[0]['send_runs'] == 1 and j[0]['messages'] == 10" <"$RDMX_OUT/bench-once.json"
	else
		rdmx_barrier bench-up
		iters=50
		# quick: each test once, the two modes taken in turn.
		pairs="send-bw send-lat write-bw write-lat read-bw read-lat cas-bw cas-lat fadd-bw fadd-lat"
		[ "$mode" = quick ] && pairs="send-bw write-lat read-bw cas-lat fadd-bw"
		for name in $pairs; do
			t=${name%-*} m=${name#*-}
			timeout 120 rdmxctl bench -j -p $bench_port -t $t -m $m -n $iters "$owner" \
				>"$RDMX_OUT/bench-$name.json" 2>"$RDMX_OUT/bench-$name.err"
			rc=$?
			cat "$RDMX_OUT/bench-$name.err"
			if [ "$atomics" = no ] && { [ $t = cas ] || [ $t = fadd ]; }; then
				rdmx_check "rdmxctl bench $name over $dev fails with EOPNOTSUPP" \
					sh -c "[ $rc -eq 1 ] && grep -q 'Operation not supported' '$RDMX_OUT/bench-$name.err'"
				continue
			fi
			rdmx_check "rdmxctl bench $name: exits 0" test $rc -eq 0
			rdmx_check "rdmxctl bench $name: one row of $iters iterations" bench_json \
				"len(j) == 1 and r['iterations'] == $iters and r['test'] == '$t' and r['mode'] == '$m' and r['samples'] == $iters" "$name"
			if [ $m = bw ]; then
				rdmx_check "rdmxctl bench $name: bandwidth and message rate" bench_json \
					"r['bw_avg'] > 0 and r['bw_peak'] >= r['bw_avg'] and r['elapsed_ns'] > 0 and abs(r['bw_avg'] * 2**20 - r['iterations'] * r['bytes'] * 1e9 / r['elapsed_ns']) <= r['bw_avg'] * 2**20 * 0.01 + 2**20 * 0.001 and abs(r['msg_rate'] * 1e6 * r['bytes'] - r['bw_avg'] * 2**20) <= r['bw_avg'] * 2**20 * 0.01 + 1e3 * r['bytes']" "$name"
			else
				rdmx_check "rdmxctl bench $name: ordered latencies" bench_json \
					"0 <= r['t_min'] <= r['t_typical'] <= r['p99'] <= r['p99_9'] <= r['t_max'] and r['t_min'] <= r['t_avg'] <= r['t_max'] and r['t_max'] > 0 and r['t_avg'] > 0 and r['t_stdev'] >= 0" "$name"
			fi
		done
		timeout 120 rdmxctl bench -p $bench_port -t read -m lat -n 50 "$owner" >"$RDMX_OUT/bench-lat.txt"
		rdmx_check "rdmxctl bench -m lat: perftest's latency heading" grep -qxF \
			" #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec]" "$RDMX_OUT/bench-lat.txt"
		# The size sweep and a duration (full mode).
		if [ "$mode" = full ]; then
			# A sweep, in text: perftest's heading, then a row per size, 2 B to 8 MiB.
			timeout 600 rdmxctl bench -p $bench_port -t write -a -n 1 "$owner" >"$RDMX_OUT/bench-sweep.txt"
			rdmx_check "rdmxctl bench -a: exits 0" test $? -eq 0
			cat "$RDMX_OUT/bench-sweep.txt"
			rdmx_check "rdmxctl bench -a: perftest's bandwidth heading" grep -qxF \
				" #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]" "$RDMX_OUT/bench-sweep.txt"
			rdmx_check "rdmxctl bench -a: 23 rows, 2 to 8388608 bytes, 1 iteration each" python3 -S -c "
import sys
rows = [l.split() for l in open('$RDMX_OUT/bench-sweep.txt') if l.split() and l.split()[0].isdigit()]
sys.exit(not ([int(r[0]) for r in rows] == [2**k for k in range(1, 24)] and
              all(len(r) == 5 and r[1] == '1' and min(map(float, r[2:])) >= 0 for r in rows) and
              float(rows[-1][3]) > 0))"
			timeout 120 rdmxctl bench -j -p $bench_port -t write -D 2 "$owner" >"$RDMX_OUT/bench-duration.json"
			rdmx_check "rdmxctl bench -D 2: about 2 s of writes" bench_json \
				"r['iterations'] > 0 and 1.99e9 <= r['elapsed_ns'] <= 60e9" duration
		fi
		rdmx_barrier bench-done 1200
		rdmx_barrier bench-once-up
		timeout 120 rdmxctl bench -j -p $((bench_port + 1)) -t send -m lat -n 10 "$owner" >"$RDMX_OUT/bench-once-client.json"
		rdmx_check "rdmxctl bench against --once: exits 0" test $? -eq 0
	fi
fi

rdmx_barrier all-done
dmesg | grep "rdmx: session" | tail -n 20

# 9. Unload with sessions left and every endpoint closed: clean (kmemleak
# scans follow), nothing pinned left behind.
rdmx_check "rmmod rdmx after one-sided access" rmmod rdmx
rdmx_check "nothing of rdmx left in sysfs" test ! -e $sys
rdmx_done
