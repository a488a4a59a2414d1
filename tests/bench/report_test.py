#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""tests/bench/report_test.py: report.py's parsers against outputs as the
tools print them (tabs, warnings between header and figures, units)."""

import json
import os
import shutil
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in the tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import breakdown  # noqa: E402
import compare  # noqa: E402
import report  # noqa: E402
import scale  # noqa: E402

LAT = """ #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec] 
Conflicting CPU frequency values detected: 1000.005000 != 1304.752000. CPU Frequency is not max.
 64      2000          14294.61        30446.56      23909.65  \t       23437.69     \t1270.20\t\t27248.36 \t\t29639.07
---------------------------------------------------------------------------------------
"""
BW = """ #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]
 4194304    50               11.94              9.07   \t\t   0.000002
"""
BW0 = BW.replace("11.94", "0.00").replace("9.07 ", "0.00 ")
FIO = """fio: some warning first
{"fio version": "fio-3.33", "jobs": [{"error": 0,
  "read": {"io_bytes": 4096000, "iops": 381.5, "bw": 1526,
           "lat_ns": {"percentile": {"50.000000": 4014080, "99.000000": 11993088,
                                     "99.900000": 16056320}}},
  "write": {"io_bytes": 0, "iops": 0, "bw": 0}}]}
"""


def check(name, got, want):
    for k, v in want.items():
        if k not in got or abs(got[k] - v) > 1e-6 * max(1.0, abs(v)):
            print("not ok - parse %s: %s: got %r, want %r" % (name, k, got.get(k), v))
            return 1
    print("ok - parse %s" % name)
    return 0


def fails(name, fn, text):
    try:
        fn(text)
    except ValueError:
        print("ok - parse %s refused" % name)
        return 0
    print("not ok - parse %s refused" % name)
    return 1


def fio_json(rw, iops=0.0, bw_kib=0.0, p50_ns=0):
    """fio's JSON for one job, with only what report.py reads."""
    d = {"io_bytes": 4096000, "iops": iops, "bw": bw_kib,
         "lat_ns": {"percentile": {"50.000000": p50_ns, "99.000000": p50_ns * 2,
                                   "99.900000": p50_ns * 3}}}
    none = {"io_bytes": 0, "iops": 0, "bw": 0}
    job = {"error": 0, "read": d if rw == "read" else none, "write": d if rw == "write" else none}
    return json.dumps({"fio version": "fio-3.33", "jobs": [job]})


def fake_run(rdmx):
    """A run directory as tests/bench/run leaves it: node 2's manifest and
    raw outputs of the block cases and the raw transport the block targets
    use. rdmx: its figures, or a string, the reason it could not run."""
    d = tempfile.mkdtemp(prefix="rdmx-report-test.")
    raw = os.path.join(d, "vm", "node2", "bench", "raw")
    os.makedirs(raw)
    with open(os.path.join(d, "meta.json"), "w") as f:
        json.dump({"mode": "quick", "only": ".", "repeats": 1}, f)
    lines = []

    def add(cid, kind, text):
        name = cid.replace("/", "_") + "-1.txt"
        with open(os.path.join(raw, name), "w") as f:
            f.write(text)
        lines.append("%s\t1\t%s\tok\t/rdmx/out/bench/raw/%s\n" % (cid, kind, name))

    figures = {"nvme-rdma": (354, 51118, 3.97, 4.47), "rnbd": (480, 51118, 2.78, 3.92)}
    if isinstance(rdmx, tuple):
        figures["rdmx"] = rdmx
    for c, (iops, p50_us, rd, wr) in figures.items():
        add("block/%s/randread-4k-qd32" % c, "fio", fio_json("read", iops=iops))
        add("block/%s/randread-4k-qd1" % c, "fio", fio_json("read", p50_ns=p50_us * 1000))
        add("block/%s/read-128k" % c, "fio", fio_json("read", bw_kib=rd * 1024))
        add("block/%s/write-128k" % c, "fio", fio_json("write", bw_kib=wr * 1024))
    if not isinstance(rdmx, tuple):
        for j in ("randread-4k-qd32", "randread-4k-qd1", "read-128k", "write-128k"):
            lines.append("block/rdmx/%s\t1\tfio\tunavailable\t%s\n" % (j, rdmx))
    add("raw/ib_read_bw-128k", "perftest-bw", BW.replace("9.07", "4.29"))
    add("raw/ib_write_bw-128k", "perftest-bw", BW.replace("9.07", "4.55"))
    with open(os.path.join(d, "vm", "node2", "bench", "manifest.tsv"), "w") as f:
        f.writelines(lines)
    return d


def targets(name, rdmx, want):
    """report.py's verdict on each block target of a fake run:
    want maps a target's text to (met, ratio or reason text)."""
    d = fake_run(rdmx)
    try:
        js = report.report(d)
        with open(os.path.join(d, "results.md")) as f:
            md = f.read()
    finally:
        shutil.rmtree(d)
    got = {t["target"]: t for t in js["targets"] if t["service"] == "block"}
    bad = []
    for text, (met, r) in want.items():
        t = got.get(text)
        if t is None:
            bad.append("%s: missing" % text)
        elif t["met"] is not met:
            bad.append("%s: met %r, want %r" % (text, t["met"], met))
        elif isinstance(r, str) and r not in (t["reason"] or ""):
            bad.append("%s: reason %r, want %r in it" % (text, t["reason"], r))
        elif not isinstance(r, str) and abs(t["ratio"] - r) > 0.005:
            bad.append("%s: ratio %r, want %r" % (text, t["ratio"], r))
        # The table says the same as the JSON.
        elif ("| block | %s |" % text) not in md:
            bad.append("%s: not in results.md" % text)
    if len(got) != 9:
        bad.append("%d block targets, want 9" % len(got))
    for b in bad:
        print("# " + b)
    print("%s - block targets: %s" % ("not ok" if bad else "ok", name))
    return 1 if bad else 0


def main():
    bad = 0
    bad += check("perftest latency", report.parse_perftest_lat(LAT),
                 {"typical_us": 23909.65, "p99_us": 27248.36, "p99_9_us": 29639.07})
    bad += check("perftest bandwidth", report.parse_perftest_bw(BW), {"bw_mibs": 9.07})
    bad += fails("perftest bandwidth of 0", report.parse_perftest_bw, BW0)
    bad += fails("perftest without figures", report.parse_perftest_lat, LAT.splitlines()[0])
    bad += check("fio", report.parse_fio(FIO),
                 {"iops": 381.5, "bw_mibs": 1526 / 1024.0, "p50_us": 4014.08,
                  "p99_9_us": 16056.32})
    bad += check("qperf latency, ms", report.parse_qperf("tcp_lat:\n    latency  =  1.5 ms\n"),
                 {"lat_us": 1500.0})
    bad += check("qperf bandwidth, GB/sec",
                 report.parse_qperf("tcp_bw:\n    bw  =  1.2 GB/sec\n"),
                 {"bw_mibs": 1.2e9 / 1048576})
    bad += check("qperf rds_lat, us", report.parse_qperf("rds_lat:\n    latency  =  210 us\n"),
                 {"lat_us": 210.0})
    bad += check("timed msg send",
                 report.parse_msg_send("messages 8 bytes 4194304 ns 2000000000\n"),
                 {"bw_mibs": 16.0})
    # rdmx's figures: QD32 IOPS, QD1 p50 (us), 128 KiB read and write (MiB/s).
    # The fake run has no randwrite cases: those targets have no verdict.
    bad += targets("met and not met", (500, 50000, 4.0, 3.0), {
        "4 KiB randread QD32 IOPS >= 1.3 x nvme-rdma": (True, 500 / 354.0),
        "4 KiB randread QD32 IOPS >= 1.1 x RNBD": (False, 500 / 480.0),
        "128 KiB seq read bandwidth >= 0.9 x ib_read_bw": (True, 4.0 / 4.29),
        "128 KiB seq write bandwidth >= 0.9 x ib_write_bw": (False, 3.0 / 4.55),
        "128 KiB seq read bandwidth >= 1.1 x nvme-rdma": (False, 4.0 / 3.97),
        "128 KiB seq write bandwidth >= 1.1 x nvme-rdma": (False, 3.0 / 4.47),
        "4 KiB randread QD1 p50 <= 0.8 x nvme-rdma": (False, 50000 / 51118.0),
        "4 KiB randwrite QD1 p50 <= 0.8 x nvme-rdma": (None, "no result recorded"),
    })
    bad += targets("latency at 0.78 x nvme-rdma's is met", (500, 40000, 4.0, 3.0), {
        "4 KiB randread QD1 p50 <= 0.8 x nvme-rdma": (True, 40000 / 51118.0),
    })
    why = "rdmx export: the block service is not in this build of rdmx"
    bad += targets("rdmx unavailable: no verdict, its reason", why, {
        "4 KiB randread QD32 IOPS >= 1.3 x nvme-rdma": (None, why),
        "4 KiB randread QD32 IOPS >= 1.1 x RNBD": (None, why),
        "128 KiB seq read bandwidth >= 0.9 x ib_read_bw": (None, why),
        "128 KiB seq write bandwidth >= 0.9 x ib_write_bw": (None, why),
        "128 KiB seq read bandwidth >= 1.1 x nvme-rdma": (None, why),
        "4 KiB randread QD1 p50 <= 0.8 x nvme-rdma": (None, why),
    })
    bad += compare_check()
    bad += sweep_check()
    bad += breakdown_check()
    bad += counters_check()
    bad += growth_check()
    bad += scale_check()
    return 1 if bad else 0


def sweep_check():
    """The sweep table: a row a size, rdmx over each peer, RDS absent past
    1 MiB."""
    def case(v):
        return {"samples": {"bw_mibs": [v]}}
    cases = {"sweep/rdmx-bench-send-bw-64": case(2.0), "sweep/ib_send_bw-64": case(1.0),
             "sweep/qperf-rds_bw-64": case(4.0),
             "sweep/rdmx-bench-send-bw-4194304": case(9.0),
             "sweep/ib_send_bw-4194304": case(10.0), "block/rdmx/randread-4k-qd1": case(1.0)}
    js = {"metrics": []}
    doc = report.sweep_section(cases, js)
    table = [b for b in doc if b[0] == "table"]
    want = [["64 B", "2.00", "1.00", "4.00", "2.00 x", "0.50 x"],
            ["4 MiB", "9.00", "10.0", "-", "0.90 x", "-"]]
    bad = (not table or table[0][2] != want or
           [e["size"] for e in js["sweep"]] != [64, 4194304] or
           # Each value is a metric too, which compare.py sets side by side.
           sorted(m["case"] for m in js["metrics"]) != sorted(
               c for c in cases if c.startswith("sweep/")))
    if bad:
        print("# got %r" % (table[0][2] if table else doc))
    print("%s - sweep: a row a size, ratios, RDS only up to 1 MiB" % ("not ok" if bad else "ok"))
    return 1 if bad else 0


def growth_check():
    """How cost grows: IOPS by depth in order with the ratio, the cost
    cases divided out, a failed one with its reason."""
    def case(metric, v):
        return {"samples": {metric: [v]}, "failures": [], "unavailable": None}
    cases = {"scale/rdmx/randread-4k-qd32": case("iops", 3000.0),
             "scale/nvme-rdma/randread-4k-qd32": case("iops", 2000.0),
             "scale/rdmx/randread-4k-qd1": case("iops", 1000.0),
             "cost/sessions": report.PARSERS["cost"]("sessions 100\nkib_before 500000\n"
                                                     "kib_held 400000\nseconds 4\n"),
             "cost/maps": {"samples": {}, "failures": ["rep 1: exit status 1"],
                           "unavailable": None}}
    cases["cost/sessions"] = {"samples": {k: [v] for k, v in cases["cost/sessions"].items()},
                              "failures": [], "unavailable": None}
    js = {"metrics": []}
    doc = report.growth_section(cases, js)
    tables = [b[2] for b in doc if b[0] == "table"]
    want_depth = [["1", "1,000", "-", "-"], ["32", "3,000", "2,000", "1.50 x"]]
    want_cost = [["memory per idle session", "1,000", "KiB"],
                 ["session connect rate", "25.0", "sessions/s"],
                 ["memory per map (one queue of 128)", "n/a: failed: rep 1: exit status 1", ""]]
    bad = tables != [want_depth, want_cost] or [e["depth"] for e in js["depth"]] != [1, 32]
    if bad:
        print("# got %r" % tables)
    print("%s - growth: IOPS by depth, memory and connect rate" % ("not ok" if bad else "ok"))
    return 1 if bad else 0


def scale_check():
    """scale.py: runs ordered by vCPUs, rdmx over nvme-rdma (IOPS at QD32,
    p50 at QD1), a missing value."""
    d = tempfile.mkdtemp()
    bad = 0
    try:
        for cpus, r, n in ((2, 3000.0, 2000.0), (1, 1500.0, None)):
            rd = os.path.join(d, "run%d" % cpus)
            os.makedirs(rd)
            ms = [{"case": "block/rdmx/randread-4k-qd32", "metric": "iops", "median": r},
                  {"case": "block/rdmx/randread-4k-qd1", "metric": "p50_us", "median": 400.0},
                  {"case": "block/rdmx/randread-4k-qd1", "metric": "p99_us", "median": 900.0}]
            if n:
                ms.append({"case": "block/nvme-rdma/randread-4k-qd32", "metric": "iops",
                           "median": n})
                ms.append({"case": "block/nvme-rdma/randread-4k-qd1", "metric": "p50_us",
                           "median": 500.0})
            with open(os.path.join(rd, "results.json"), "w") as f:
                json.dump({"meta": {"cpus": cpus}, "metrics": ms}, f)
        out = os.path.join(d, "out")
        with open(os.devnull, "w") as null:
            saved, sys.stdout = sys.stdout, null
            try:
                scale.main(["scale.py", out, os.path.join(d, "run2"), os.path.join(d, "run1")])
            finally:
                sys.stdout = saved
        text = open(os.path.join(out, "scale.md")).read()
        for want in ("| randread-4k-qd32 | IOPS | 1 | 1,500 | - | - |",
                     "| randread-4k-qd32 | IOPS | 2 | 3,000 | 2,000 | 1.50 x |",
                     "| randread-4k-qd1 | p50 us | 2 | 400 | 500 | 0.80 x |"):
            if want not in text:
                print("# no %r in:\n%s" % (want, text))
                bad = 1
        if text.index("| randread-4k-qd32 | IOPS | 1 |") > \
                text.index("| randread-4k-qd32 | IOPS | 2 |"):
            print("# runs not ordered by vCPUs")
            bad = 1
    finally:
        shutil.rmtree(d)
    print("%s - scale: runs by vCPUs, ratio, missing values" % ("not ok" if bad else "ok"))
    return bad


def compare_check():
    """compare.py: within and past the tolerance, and measures in one run
    only left out of the verdict."""
    a = {("block/rdmx/randread-4k-qd32", "iops"): 2000.0, ("msg/rdmx-ping-64", "typical_us"): 300.0,
         ("raw/ib_send_bw-4m", "bw_mibs"): 7.0}
    b = {("block/rdmx/randread-4k-qd32", "iops"): 2010.0, ("msg/rdmx-ping-64", "typical_us"): 300.0}
    bad = 0
    rows, ok = compare.compare(a, b, 1.0)
    if not ok or len(rows) != 2:
        print("not ok - compare: 0.5 %% apart is within 1 %% (%r, %r)" % (rows, ok))
        bad = 1
    rows, ok = compare.compare(a, b, 0.25)
    if ok or [r[5] for r in rows] != [False, True]:
        print("not ok - compare: 0.5 %% apart is past 0.25 %% (%r, %r)" % (rows, ok))
        bad = 1
    if compare.compare(a, {}, 1.0)[1]:
        print("not ok - compare: runs sharing no measure are not repeatable")
        bad = 1
    # A tail 20 % apart is shown but judged only with tails.
    ta = {**a, ("msg/rdmx-ping-64", "p99_9_us"): 500.0}
    tb = {**b, ("msg/rdmx-ping-64", "p99_9_us"): 400.0}
    rows, ok = compare.compare(ta, tb, 1.0)
    if not ok or len(rows) != 3 or [r[6] for r in rows] != [True, False, True]:
        print("not ok - compare: a tail is not judged by default (%r, %r)" % (rows, ok))
        bad = 1
    if compare.compare(ta, tb, 1.0, tails=True)[1]:
        print("not ok - compare: with tails, a tail 20 % apart fails")
        bad = 1
    only_tails = {("msg/rdmx-ping-64", "p99_us"): 400.0}
    if compare.compare(only_tails, only_tails, 1.0)[1]:
        print("not ok - compare: runs sharing only tails have nothing judged")
        bad = 1
    print("%s - compare: tolerance, tails shown not judged, and measures in one run only" %
          ("not ok" if bad else "ok"))
    return bad


STAT = """    40.00%  [rdma_rxe]         [k] rxe_requester
    10.00%  [rdmx]             [k] rdmx_disk_queue_rq
    10.00%  [rdmx]             [k] rdmx_srvq_recv_done.isra.0
    20.00%  [kernel.kallsyms]  [k] blk_mq_submit_bio.constprop.0
     4.00%  [null_blk]         [k] null_handle_cmd
     6.00%  [kernel.kallsyms]  [k] default_idle
     5.00%  fio                [.] td_io_queue
     3.00%  [kernel.kallsyms]  [k] mystery_fn
     2.00%  [JIT] tid 10924    [.] 0x00007f6faf99a483
"""


# The same samples as perf report -n --show-total-period gives them: their
# periods add up to 980,000 ns. And the kernel image named as perf names it
# when it finds the vmlinux (the perf kernel's guests do).
STAT_PERIODS = "".join(
    "%s %8d %10d  %s\n" % (line[:11], round(float(line[:10].strip(" %")) * 10),
                            round(float(line[:10].strip(" %")) * 9800), line[11:].strip())
    for line in STAT.splitlines()).replace("[kernel.kallsyms]", "[kernel.vmlinux]")


def breakdown_check():
    """breakdown.py: perf's samples to layers by module and object, shares of
    the CPU time per operation (the samples' periods when perf report gives
    them, not the command's wall time), -icount's 4 ns an instruction,
    perftest's iterations, and a case whose output has no count left out
    with its reason."""
    d = tempfile.mkdtemp()
    bad = 0
    try:
        raw = os.path.join(d, "vm", "node1", "bench", "raw")
        os.makedirs(raw)
        with open(os.path.join(d, "symbols.tsv"), "w") as f:
            # As nm names them: a clone by its own name.
            f.write("rdmx_disk_queue_rq\tkmod/blk/blk_clt.o\n"
                    "rdmx_srvq_recv_done.isra.0\tkmod/blk/blk_srv.o\n"
                    "blk_mq_submit_bio.constprop.0\tblock/blk-mq.o\n")
        for name in ("block_rdmx_randread-4k-qd1", "msg_rdmx-ping-64"):
            with open(os.path.join(raw, "prof-%s.stat" % name), "w") as f:
                f.write(STAT)
        with open(os.path.join(raw, "prof-block_rdmx_randwrite-4k-qd1.stat"), "w") as f:
            f.write(STAT_PERIODS)
        for name in ("block_rdmx_randread-4k-qd1", "block_rdmx_randwrite-4k-qd1"):
            with open(os.path.join(raw, "prof-%s.out" % name), "w") as f:
                f.write(json.dumps({"jobs": [{"read": {"total_ios": 1000},
                                              "write": {"total_ios": 0}}]}))
        with open(os.path.join(raw, "prof-msg_rdmx-ping-64.out"), "w") as f:
            f.write("no table here\n")
        with open(os.path.join(d, "vm", "node1", "bench", "profile.tsv"), "w") as f:
            # 0.98 ms of one CPU for 1000 I/Os: 980 ns, 245 instructions
            # each, shared out over the 98 % of the samples that are read.
            f.write("block/rdmx/randread-4k-qd1\tfio\t0\t980000\t1\t"
                    "/rdmx/out/bench/raw/prof-block_rdmx_randread-4k-qd1\n"
                    "msg/rdmx-ping-64\tping\t0\t980000\t1\t"
                    "/rdmx/out/bench/raw/prof-msg_rdmx-ping-64\n"
                    # 5 ms of wall time with perf's start and end, of
                    # which the samples cover 0.98 ms.
                    "block/rdmx/randwrite-4k-qd1\tfio\t0\t5000000\t1\t"
                    "/rdmx/out/bench/raw/prof-block_rdmx_randwrite-4k-qd1\n")
        js = {}
        doc = breakdown.breakdown_section(d, {"icount": "shift=2,sleep=off"}, js)
        want = {"soft-RoCE (rdma_rxe)": 100.0, "rdmx block client": 25.0,
                "rdmx block server": 25.0, "block layer": 50.0,
                "backing device (null_blk)": 10.0, "idle": 15.0, "other kernel": 7.5,
                breakdown.USER: 12.5}
        for cid in ("block/rdmx/randread-4k-qd1", "block/rdmx/randwrite-4k-qd1"):
            got = js.get("breakdown", {}).get(cid, {}).get("layers", {})
            for k, v in want.items():
                if abs(got.get(k, -1) - v) > 1e-6:
                    print("# %s %s: got %r, want %r" % (cid, k, got.get(k), v))
                    bad = 1
        text = report.render(doc, report.MARKDOWN)
        if "msg/rdmx-ping-64: no #iterations column" not in text:
            print("# no reason for the ping case in:\n" + text)
            bad = 1
        if "per operation |" in text.split("operations profiled", 1)[1]:
            print("# device counter rows without counter files:\n" + text)
            bad = 1
        if breakdown.parse_ops("ping", LAT) != 2000:
            print("# perftest's #iterations not read")
            bad = 1
        if breakdown.parse_ops("perftest-bw", BW) != 50 * 4096:
            print("# perftest's KiB moved not read")
            bad = 1
        qbw = ("rds_bw:\n    bw          =  18.7 MB/sec\n    send_bytes  =   182 MiB "
               "(190,840,832)\n    recv_bytes  =   178 MiB (186,646,528)\n")
        if breakdown.parse_ops("qperf-bw", qbw) != 186646528 // 1024:
            print("# qperf's KiB moved not read")
            bad = 1
    finally:
        shutil.rmtree(d)
    print("%s - breakdown: layers, instructions, iterations, a case without a count" %
          ("not ok" if bad else "ok"))
    return bad


# rdma statistic show link rxe0/1 as the guest saves it around a profiled
# case (prof-CASE.counters-before, -after): one line, a space at its end.
COUNTERS = ("link rxe0/1 sent_pkts 290026 rcvd_pkts 290026 duplicate_request 0 "
            "out_of_seq_request 0 rcvd_rnr_err 0 send_rnr_err 0 rcvd_seq_err 0 "
            "ack_deferred 78985 retry_exceeded_err 0 retry_rnr_exceeded_err 0 "
            "completer_retry_err 0 send_err 0 link_downed 0 rdma_sends 70475 "
            "rdma_recvs 70475 \n")


def counters_after(**grow):
    """COUNTERS with some counters grown: counters_after(sent_pkts=8)."""
    words = COUNTERS.split()
    for i in range(2, len(words) - 1, 2):
        words[i + 1] = str(int(words[i + 1]) + grow.pop(words[i], 0))
    assert not grow, grow
    return " ".join(words) + " \n"


def counters_check():
    """breakdown.py: rdma statistic's counters parsed, their growth over a
    profiled case per operation in the table and the JSON, a retry or
    sequence error in bold, and a case whose counters are missing or do
    not parse without the figures (the rest of the table as before)."""
    bad = 0
    got = breakdown.parse_counters(COUNTERS)
    want = {"sent_pkts": 290026, "rcvd_pkts": 290026, "ack_deferred": 78985,
            "rdma_sends": 70475, "completer_retry_err": 0, "link_downed": 0}
    if len(got) != 15 or any(got.get(k) != v for k, v in want.items()):
        print("# parse_counters: got %r" % got)
        bad = 1
    # A newer iproute2's optional counters after a word of its own.
    got = breakdown.parse_counters("link mlx5_0/1 rx_write_requests 12 optional-counters "
                                   "cc_rx_ce_pkts 3\n")
    if got != {"rx_write_requests": 12, "cc_rx_ce_pkts": 3}:
        print("# parse_counters, optional counters: got %r" % got)
        bad = 1
    for text in ("", "sh: 1: rdma: not found\n",
                 "Error: Failed to get statistics: Operation not supported\n",
                 "link siw0/1 \n"):
        try:
            breakdown.parse_counters(text)
            print("# parse_counters took %r" % text)
            bad = 1
        except ValueError:
            pass
    d = tempfile.mkdtemp()
    try:
        raw = os.path.join(d, "vm", "node1", "bench", "raw")
        os.makedirs(raw)
        # case, its I/Os, counters before and after (None: no file).
        cases = [
            # The real run's rdmx QD32 read: 51,778 packets each way over
            # 6,467 I/Os, 12,955 SENDs.
            ("block/rdmx/randread-4k-qd32", 6467, COUNTERS,
             counters_after(sent_pkts=51778, rcvd_pkts=51778, rdma_sends=12955,
                            rdma_recvs=12955, ack_deferred=12955)),
            # 9 packets an I/O, with 3 retries of the completer and 2
            # NAKs for a sequence error.
            ("block/nvme-rdma/randread-4k-qd32", 1000, COUNTERS,
             counters_after(sent_pkts=9000, rcvd_pkts=9000, rdma_sends=2000,
                            completer_retry_err=3, rcvd_seq_err=2)),
            # Taken before, not after (the guest stopped).
            ("block/rdmx/randwrite-4k-qd32", 1000, COUNTERS, None),
            # rdma failed after.
            ("block/nvme-rdma/randwrite-4k-qd32", 1000, COUNTERS,
             "Error: Failed to get statistics\n"),
        ]
        with open(os.path.join(d, "vm", "node1", "bench", "profile.tsv"), "w") as tsv:
            for cid, ops, before, after in cases:
                name = "prof-" + cid.replace("/", "_")
                with open(os.path.join(raw, name + ".stat"), "w") as f:
                    f.write(STAT)
                with open(os.path.join(raw, name + ".out"), "w") as f:
                    f.write(json.dumps({"jobs": [{"read": {"total_ios": ops},
                                                  "write": {"total_ios": 0}}]}))
                for when, text in (("before", before), ("after", after)):
                    if text is not None:
                        with open(os.path.join(raw, "%s.counters-%s" % (name, when)),
                                  "w") as f:
                            f.write(text)
                tsv.write("%s\tfio\t0\t980000\t1\t/rdmx/out/bench/raw/%s\n" % (cid, name))
        js = {}
        doc = breakdown.breakdown_section(d, {"icount": "shift=2,sleep=off"}, js)
        md = report.render(doc, report.MARKDOWN)
        rst = report.render(doc, report.REST)
        b = js.get("breakdown", {})
        if len(b) != 4:
            print("# %d cases in the breakdown, want 4 (a case without counters is "
                  "still profiled)" % len(b))
            bad = 1
        want = {"block/rdmx/randread-4k-qd32": {"sent_pkts": 51778 / 6467.0,
                                                "rcvd_pkts": 51778 / 6467.0,
                                                "rdma_sends": 12955 / 6467.0,
                                                "completer_retry_err": 0.0},
                "block/nvme-rdma/randread-4k-qd32": {"sent_pkts": 9.0, "rcvd_pkts": 9.0,
                                                     "rdma_sends": 2.0,
                                                     "completer_retry_err": 0.003,
                                                     "rcvd_seq_err": 0.002,
                                                     "ack_deferred": 0.0}}
        for cid, vals in want.items():
            got = (b.get(cid) or {}).get("counters_per_op") or {}
            for k, v in vals.items():
                if k not in got or abs(got[k] - v) > 1e-9:
                    print("# %s %s per op: got %r, want %r" % (cid, k, got.get(k), v))
                    bad = 1
        flags = [(cid, (b.get(cid) or {}).get("counters_flagged")) for cid, _, _, _ in cases]
        if flags != [("block/rdmx/randread-4k-qd32", []),
                     ("block/nvme-rdma/randread-4k-qd32",
                      [("rcvd_seq_err", 2), ("completer_retry_err", 3)]),
                     ("block/rdmx/randwrite-4k-qd32", []),
                     ("block/nvme-rdma/randwrite-4k-qd32", [])]:
            print("# flagged: got %r" % flags)
            bad = 1
        for cid in ("block/rdmx/randwrite-4k-qd32", "block/nvme-rdma/randwrite-4k-qd32"):
            if (b.get(cid) or {}).get("counters", 0) is not None:
                print("# %s: counters %r, want none" % (cid, b.get(cid)))
                bad = 1
        # The table's columns: rdmx read, nvme-rdma read, rdmx write,
        # nvme-rdma write (breakdown.CASES).
        for row in ("| operations profiled | 6467 | 1000 | 1000 | 1000 |",
                    "| packets sent per operation | 8.0 | 9.0 | - | - |",
                    "| packets received per operation | 8.0 | 9.0 | - | - |",
                    "| SEND messages per operation | 2.0 | 2.0 | - | - |",
                    "| loss, retransmission (device counters) | none | **rcvd_seq_err 2 "
                    "(0.002 per operation), completer_retry_err 3 (0.003 per operation)** "
                    "| - | - |",
                    # 0.98 ms over the I/Os, 4 ns an instruction.
                    "| total | 37.9 | 245 | 245 | 245 |"):
            if row not in md:
                print("# no row %r in:\n%s" % (row, md))
                bad = 1
        if "     - **rcvd_seq_err 2 (0.002 per operation)" not in rst:
            print("# no flagged counter in the rst:\n" + rst)
            bad = 1
        # Read by hand, per_op and flagged of a profile without counters.
        if breakdown.per_op({"ops": 5, "counters": None}) is not None or \
                breakdown.flagged({"ops": 5, "counters": None}) != []:
            print("# per_op or flagged of a profile without counters")
            bad = 1
    finally:
        shutil.rmtree(d)
    print("%s - counters: parsed, packets per operation, a retry flagged, missing files" %
          ("not ok" if bad else "ok"))
    return bad


if __name__ == "__main__":
    sys.exit(main())
