#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# tests/bench/smoke.sh DIR: the bench-smoke group of tests/check. One tiny
# `make bench` (one guest in loopback, the debug kernel the other tests
# already built, a handful of cases with a few iterations each), so the
# benchmark's scripts cannot rot: the guest half, the block setup, the
# parsers (also alone, tests/bench/report_test.py), the report and the
# chart. Prints a result line a check.
# shellcheck disable=SC2317  # checks run through check()
set -uo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:?usage: smoke.sh DIR}
rm -rf "$out"
mkdir -p "$out"

fails=0
# The parsers first, on the host, against outputs as the tools print them.
python3 "$repo/tests/bench/report_test.py" || fails=1

only='^(raw/ib_send_lat-64|msg/rdmx-ping-64|msg/qperf-tcp_lat|msg/qperf-rds_lat|block/(rdmx|rdmx-rw|nvme-rdma)/randread-4k-qd1|msg/rdmx-bench-send-lat-64)$'
t0=$(date +%s)
"$repo/tests/bench/run" --tiny --loopback --profile="^block/rdmx/" --kernel debug --only "$only" --out "$out" \
	>"$out/run.log" 2>&1
rc=$?
echo "# tiny benchmark: $(($(date +%s) - t0)) s, status $rc"

check() { # NAME CMD...
	local name=$1
	shift
	if "$@" >>"$out/checks.log" 2>&1; then
		echo "ok - $name"
	else
		echo "not ok - $name"
		fails=1
	fi
}

# has CASE METRIC: a value (one sample at least) in results.json.
has() {
	python3 - "$out/results.json" "$1" "$2" <<-'EOF'
	import json, sys
	j = json.load(open(sys.argv[1]))
	m = [x for x in j["metrics"] if x["case"] == sys.argv[2] and x["metric"] == sys.argv[3]]
	print(m)
	sys.exit(0 if m and m[0].get("n", 0) >= 1 and m[0]["median"] >= 0 else 1)
	EOF
}

# reason CASE METRIC TEXT: no value, and a reason that contains TEXT.
reason() {
	python3 - "$out/results.json" "$1" "$2" "$3" <<-'EOF'
	import json, sys
	j = json.load(open(sys.argv[1]))
	m = [x for x in j["metrics"] if x["case"] == sys.argv[2] and x["metric"] == sys.argv[3]]
	print(m)
	sys.exit(0 if m and sys.argv[4] in m[0].get("reason", "") else 1)
	EOF
}

check "bench: the guest run exits cleanly, no kernel splat" test "$rc" = 0
check "bench: results.md, results.json and chart.svg written" \
	test -s "$out/results.md" -a -s "$out/results.json" -a -s "$out/chart.svg"
check "bench: ib_send_lat measured" has raw/ib_send_lat-64 typical_us
check "bench: rdmxctl ping measured" has msg/rdmx-ping-64 typical_us
check "bench: qperf tcp_lat measured" has msg/qperf-tcp_lat lat_us
check "bench: nvme-rdma 4 KiB randread QD1 measured" has block/nvme-rdma/randread-4k-qd1 p50_us
check "bench: rdmx block 4 KiB randread QD1 measured (export, map, fio)" \
	has block/rdmx/randread-4k-qd1 p50_us
# The rdmx row is fio on the mapped disk, not on another device.
rdmx_dev() {
	grep -q '"filename" *: *"/dev/rdmxb[0-9]*"' \
		"$out/vm/node1/bench/raw/block_rdmx_randread-4k-qd1-1.txt"
}
check "bench: rdmx's fio ran on /dev/rdmxbN" rdmx_dev
check "bench: rdmx with inline reads off measured (a second map)" \
	has block/rdmx-rw/randread-4k-qd1 p50_us
rdmx_gone() {
	test -e "$out/vm/node1/bench/raw/teardown-rdmx-unmap.txt" &&
		test -e "$out/vm/node1/bench/raw/teardown-rdmx-export.txt" &&
		! grep -q '^bench: block: rdmxctl .* failed' "$out/vm/node1/script.log"
}
check "bench: rdmx disk unmapped and export deleted after the run" rdmx_gone
if "$repo/userspace-tools/rdmxctl/rdmxctl" bench --help >/dev/null 2>&1; then
	check "bench: rdmxctl bench send latency measured" has msg/rdmx-bench-send-lat-64 typical_us
else
	check "bench: rdmxctl bench absent, shown with its reason" \
		reason msg/rdmx-bench-send-lat-64 typical_us "not available in this build"
fi
# The block service's listener must not take the echo listener's port.
check "bench: rdmxctl listen (the message cases' listener) added" \
	sh -c "! grep -q failed '$out/vm/node1/bench/raw/rdmx-listen.txt'"
check "bench: a case left out says so" reason raw/ib_write_bw-128k bw_mibs "not selected"
# The debug kernel has no RDS: its rows say why.
check "bench: RDS absent from the debug kernel, shown with its reason" \
	reason msg/qperf-rds_lat lat_us "RDS:"
# --profile: perf sampled the profiled cases and the samples were shared
# out to layers (soft-RoCE carries every rdmx I/O here; rdmx's own share of
# a tiny run can be too small to be sampled).
profiled() {
	python3 - "$out/results.json" <<-'EOF'
	import json, sys
	b = json.load(open(sys.argv[1])).get("breakdown", {})
	p = b.get("block/rdmx/randread-4k-qd1", {})
	lay = p.get("layers", {})
	print(p)
	sys.exit(0 if p.get("total", 0) > 0 and len(lay) >= 3 and
	         lay.get("soft-RoCE (rdma_rxe)", 0) > 0 else 1)
	EOF
}
check "bench: --profile: rdmx's 4 KiB read shared out by layer" profiled
mapped() {
	grep -qP '^blk_mq_submit_bio\tblock/blk-mq\.o$' "$out/symbols.tsv" &&
		grep -qP '\tkmod/blk/blk_clt\.o$' "$out/symbols.tsv"
}
check "bench: --profile mapped the kernel's and rdmx's functions to objects" mapped
ntargets=$(cd "$repo/tests/bench" && python3 -c 'import report; print(len(report.TARGETS))')
all_targets() {
	[ "$(grep -Ec '^\| (messages|one-sided|block) \|' "$out/results.md")" = "$ntargets" ]
}
check "bench: all $ntargets targets are in the table" all_targets
[ "$fails" = 0 ] || tail -n 20 "$out/run.log" | sed 's/^/# /'
exit "$fails"
