#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""tests/bench/report.py DIR: the tables, JSON and chart of a `make bench` run.

DIR is a run's results directory (tests/bench/run): DIR/meta.json and the
guests' files under DIR/vm/nodeN/. Reads each node's bench/manifest.tsv and
the raw outputs it names, and writes DIR/results.md, DIR/results.rst (the
same for Documentation/benchmarks.rst), DIR/results.json and DIR/chart.svg
(gnuplot; DIR/chart.gp and chart.dat are kept). Every case is in the
output: one that could not run says why.

    report.py --parse KIND FILE   prints what one raw output parses to
"""

import json
import os
import re
import shutil
import statistics
import subprocess
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the tree
import breakdown  # noqa: E402

MIB = 1048576.0

# ----------------------------------------------------------------- parsers
#
# Each returns a dict of metrics (latencies in microseconds, bandwidths in
# MiB/s, rates in IO/s) or raises ValueError with a short reason.

LAT_COLS = r"#bytes|#iterations|t_min|t_max|t_typical|t_avg|t_stdev|99\.9%|99%"
BW_COLS = r"#bytes|#iterations|BW peak|BW average|MsgRate"
NUM = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"


def _columns(text, pattern, need):
    """perftest-style output: a header line naming the columns, then a line
    of numbers. Returns {column: value} of the first complete data line."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        names = re.findall(pattern, line)
        if need not in names:
            continue
        for data in lines[i + 1:i + 4]:
            vals = data.split()
            if len(vals) < len(names):
                continue
            try:
                nums = [float(v) for v in vals[:len(names)]]
            except ValueError:
                continue
            return dict(zip(names, nums))
    raise ValueError("no '%s' line in the output" % need)


def parse_perftest_lat(text):
    c = _columns(text, LAT_COLS, "t_typical")
    out = {"typical_us": c["t_typical"]}
    for k, name in (("t_min", "min_us"), ("t_avg", "avg_us"), ("t_max", "max_us"),
                    ("99%", "p99_us"), ("99.9%", "p99_9_us")):
        if k in c:
            out[name] = c[k]
    return out


def parse_perftest_bw(text):
    c = _columns(text, BW_COLS, "BW average")
    if c["BW average"] <= 0:
        raise ValueError("the tool reported 0 MB/s")
    return {"bw_mibs": c["BW average"], "peak_mibs": c.get("BW peak", 0.0)}


def parse_fio(text):
    try:
        j = json.loads(text[text.index("{"):])
        job = j["jobs"][0]
    except (ValueError, KeyError, IndexError) as e:
        raise ValueError("no fio JSON (%s)" % e) from None
    if job.get("error"):
        raise ValueError("fio error %s" % job["error"])
    d = job["read"] if job["read"]["io_bytes"] else job["write"]
    if not d["io_bytes"]:
        raise ValueError("no I/O done")
    out = {"iops": d["iops"], "bw_mibs": d["bw"] / 1024.0}
    for src in ("lat_ns", "clat_ns"):
        pct = d.get(src, {}).get("percentile")
        if pct:
            for key, name in (("50.000000", "p50_us"), ("99.000000", "p99_us"),
                              ("99.900000", "p99_9_us")):
                if key in pct:
                    out[name] = pct[key] / 1000.0
            break
    return out


QPERF_TIME = {"ns": 1e-3, "us": 1.0, "ms": 1e3, "sec": 1e6, "s": 1e6}
QPERF_BW = {"bytes/sec": 1.0, "KB/sec": 1e3, "MB/sec": 1e6, "GB/sec": 1e9}


def parse_qperf(text):
    m = re.search(r"latency\s*=\s*(%s)\s*(\S+)" % NUM, text)
    if m and m.group(2) in QPERF_TIME:
        return {"lat_us": float(m.group(1)) * QPERF_TIME[m.group(2)]}
    m = re.search(r"\bbw\s*=\s*(%s)\s*(\S+)" % NUM, text)
    if m and m.group(2) in QPERF_BW:
        return {"bw_mibs": float(m.group(1)) * QPERF_BW[m.group(2)] / MIB}
    raise ValueError("no qperf latency or bw line")


def parse_msg_send(text):
    m = re.search(r"messages (\d+) bytes (\d+) ns (\d+)", text)
    if not m:
        raise ValueError("no timing line")
    n, size, ns = (int(g) for g in m.groups())
    return {"bw_mibs": n * size / MIB / (ns / 1e9)}


def parse_cost(text):
    """The cost cases' "key value" lines (tests/bench/guest.sh), divided out."""
    kv = dict(re.findall(r"^(\w+) (%s)$" % NUM, text, re.M))
    try:
        v = {k: float(x) for k, x in kv.items()}
        if "sessions" in v:
            return {"kib_per_session": (v["kib_before"] - v["kib_held"]) / v["sessions"],
                    "sessions_per_s": v["sessions"] / v["seconds"]}
        if "maps" in v:
            return {"kib_per_map": (v["kib_before"] - v["kib_held"]) / v["maps"]}
        if "depth_lo" in v:
            return {"bytes_per_request": (v["kib_lo"] - v["kib_hi"]) * 1024.0 /
                    (v["depth_hi"] - v["depth_lo"])}
    except (KeyError, ZeroDivisionError) as e:
        raise ValueError("incomplete cost output (%s)" % e) from None
    raise ValueError("no cost figures")


PARSERS = {
    "fio": parse_fio,
    "perftest-lat": parse_perftest_lat,
    "rdmx-ping": parse_perftest_lat,
    "perftest-bw": parse_perftest_bw,
    "qperf": parse_qperf,
    "msg-send": parse_msg_send,
    "cost": parse_cost,
}

# The cost cases: case, metric, label, unit.
COST_METRICS = [
    ("cost/sessions", "kib_per_session", "memory per idle session", "KiB"),
    ("cost/sessions", "sessions_per_s", "session connect rate", "sessions/s"),
    ("cost/maps", "kib_per_map", "memory per map (one queue of 128)", "KiB"),
    ("cost/requests", "bytes_per_request", "memory per outstanding request (queue depth)",
     "bytes"),
]

# ----------------------------------------------------------------- what is reported

# rdmx-rw: rdmx with inline reads off, the alternative data path
BLOCK_CONTENDERS = ["rdmx", "rdmx-rw", "nvme-rdma", "rnbd", "nbd"]
BLOCK_PEERS = ["rdmx-rw", "nvme-rdma", "rnbd", "nbd"]
# job, metric, label, unit, higher is better
BLOCK_METRICS = [
    ("randread-4k-qd1", "p50_us", "4 KiB randread QD1 p50", "us", False),
    ("randread-4k-qd1", "p99_us", "4 KiB randread QD1 p99", "us", False),
    ("randread-4k-qd1", "p99_9_us", "4 KiB randread QD1 p99.9", "us", False),
    ("randwrite-4k-qd1", "p50_us", "4 KiB randwrite QD1 p50", "us", False),
    ("randwrite-4k-qd1", "p99_us", "4 KiB randwrite QD1 p99", "us", False),
    ("randwrite-4k-qd1", "p99_9_us", "4 KiB randwrite QD1 p99.9", "us", False),
    ("randread-4k-qd32", "iops", "4 KiB randread QD32", "IOPS", True),
    ("randwrite-4k-qd32", "iops", "4 KiB randwrite QD32", "IOPS", True),
    ("read-128k", "bw_mibs", "128 KiB seq read QD8", "MiB/s", True),
    ("write-128k", "bw_mibs", "128 KiB seq write QD8", "MiB/s", True),
]
# case, metric, label, unit, higher is better
RAW_METRICS = [
    ("raw/ib_write_bw-128k", "bw_mibs", "ib_write_bw 128 KiB", "MiB/s", True),
    ("raw/ib_read_bw-128k", "bw_mibs", "ib_read_bw 128 KiB", "MiB/s", True),
    ("raw/ib_send_bw-4m", "bw_mibs", "ib_send_bw 4 MiB", "MiB/s", True),
    ("raw/ib_send_lat-64", "typical_us", "ib_send_lat 64 B typical (one way)", "us", False),
    ("raw/ib_atomic_lat-8", "typical_us", "ib_atomic_lat 8 B fetch-add typical", "us", False),
]
MSG_METRICS = [
    ("msg/rdmx-ping-64", "typical_us", "rdmxctl ping 64 B p50 RTT", "us", False),
    ("msg/rdmx-ping-64", "p99_us", "rdmxctl ping 64 B p99 RTT", "us", False),
    ("msg/rdmx-ping-64", "p99_9_us", "rdmxctl ping 64 B p99.9 RTT", "us", False),
    ("msg/rdmx-bench-send-lat-64", "typical_us", "rdmxctl bench send 64 B typical RTT", "us",
     False),
    ("msg/rdmx-bench-send-bw-4m", "bw_mibs", "rdmxctl bench send 4 MiB", "MiB/s", True),
    ("msg/rdmx-msg-send-4m", "bw_mibs", "rdmxctl msg send, 4 MiB messages, timed", "MiB/s", True),
    ("rma/rdmx-bench-write-bw-128k", "bw_mibs", "rdmxctl bench write 128 KiB", "MiB/s", True),
    ("rma/rdmx-bench-read-bw-128k", "bw_mibs", "rdmxctl bench read 128 KiB", "MiB/s", True),
    ("rma/rdmx-bench-fadd-lat-8", "typical_us", "rdmxctl bench fetch-add 8 B typical", "us", False),
    ("msg/qperf-tcp_lat", "lat_us", "qperf tcp_lat 64 B (one way)", "us", False),
    ("msg/qperf-tcp_bw", "bw_mibs", "qperf tcp_bw 64 KiB", "MiB/s", True),
    ("msg/qperf-rds_lat", "lat_us", "qperf rds_lat 64 B (one way)", "us", False),
    ("msg/qperf-rds_bw", "bw_mibs", "qperf rds_bw 1 MiB", "MiB/s", True),
]


# A quantity the ratios and targets use: (case, metric, factor). The
# factor turns one-way latencies into round trips where a round trip is
# compared: ib_send_lat, qperf tcp_lat and rds_lat report half a round trip;
# rdmxctl ping, rdmxctl bench's send latency (a ping-pong), ib_atomic_lat
# and rdmxctl bench's atomics a whole one.
Q = {
    "ping_rtt": ("msg/rdmx-ping-64", "typical_us", 1),
    "ib_send_lat_rtt": ("raw/ib_send_lat-64", "typical_us", 2),
    "tcp_rtt": ("msg/qperf-tcp_lat", "lat_us", 2),
    "tcp_bw": ("msg/qperf-tcp_bw", "bw_mibs", 1),
    "rds_rtt": ("msg/qperf-rds_lat", "lat_us", 2),
    "rds_bw": ("msg/qperf-rds_bw", "bw_mibs", 1),
    "bench_send_lat": ("msg/rdmx-bench-send-lat-64", "typical_us", 1),
    "bench_send_bw": ("msg/rdmx-bench-send-bw-4m", "bw_mibs", 1),
    "msg_send_bw": ("msg/rdmx-msg-send-4m", "bw_mibs", 1),
    "ib_send_bw": ("raw/ib_send_bw-4m", "bw_mibs", 1),
    "bench_write_bw": ("rma/rdmx-bench-write-bw-128k", "bw_mibs", 1),
    "bench_read_bw": ("rma/rdmx-bench-read-bw-128k", "bw_mibs", 1),
    "ib_write_bw": ("raw/ib_write_bw-128k", "bw_mibs", 1),
    "ib_read_bw": ("raw/ib_read_bw-128k", "bw_mibs", 1),
    "bench_fadd_lat": ("rma/rdmx-bench-fadd-lat-8", "typical_us", 1),
    "ib_atomic_lat": ("raw/ib_atomic_lat-8", "typical_us", 1),
}
for _job, _metric, _label, _unit, _hib in BLOCK_METRICS:
    for _c in BLOCK_CONTENDERS:
        Q["%s:%s:%s" % (_c, _job, _metric)] = ("block/%s/%s" % (_c, _job), _metric, 1)

# Ratios beside the message and one-sided rows: label, numerator, denominator.
MSG_RATIOS = [
    ("rdmx ping p50 RTT / ib_send_lat RTT (2 x typical)", "ping_rtt", "ib_send_lat_rtt"),
    ("rdmx ping p50 RTT / TCP RTT (2 x qperf tcp_lat)", "ping_rtt", "tcp_rtt"),
    ("rdmx ping p50 RTT / RDS RTT (2 x qperf rds_lat)", "ping_rtt", "rds_rtt"),
    ("rdmxctl bench send 64 B RTT / RDS RTT (2 x qperf rds_lat)", "bench_send_lat", "rds_rtt"),
    ("rdmxctl bench send 64 B RTT / ib_send_lat RTT (2 x typical)", "bench_send_lat",
     "ib_send_lat_rtt"),
    ("rdmxctl bench send 4 MiB / ib_send_bw", "bench_send_bw", "ib_send_bw"),
    ("rdmxctl msg send 4 MiB / ib_send_bw", "msg_send_bw", "ib_send_bw"),
    ("rdmxctl msg send 4 MiB / qperf tcp_bw", "msg_send_bw", "tcp_bw"),
    ("rdmxctl bench send 4 MiB / qperf rds_bw 1 MiB", "bench_send_bw", "rds_bw"),
    ("rdmxctl msg send 4 MiB / qperf rds_bw 1 MiB", "msg_send_bw", "rds_bw"),
    ("rdmxctl bench write 128 KiB / ib_write_bw", "bench_write_bw", "ib_write_bw"),
    ("rdmxctl bench read 128 KiB / ib_read_bw", "bench_read_bw", "ib_read_bw"),
    ("rdmxctl bench fetch-add 8 B / ib_atomic_lat", "bench_fadd_lat", "ib_atomic_lat"),
]

# The speed targets of the message service, one-sided access and the block
# service: service, text, short name (the chart's), numerator, denominator,
# op, limit. RDS carries at most 1 MiB a message: its rds_bw at that size
# stands for its 4 MiB throughput.
TARGETS = [
    ("messages", "64 B ping-pong p50 RTT <= 0.8 x RDS (2 x qperf rds_lat)",
     "msg: ping RTT / RDS", "ping_rtt", "rds_rtt", "<=", 0.8),
    ("messages", "64 B ping-pong p50 RTT <= 1.5 x ib_send_lat", "msg: ping RTT / ib_send_lat",
     "ping_rtt", "ib_send_lat_rtt", "<=", 1.5),
    ("messages", "4 MiB message throughput >= 1.2 x RDS (qperf rds_bw)", "msg: 4 MiB msgs / RDS",
     "bench_send_bw|msg_send_bw", "rds_bw", ">=", 1.2),
    ("messages", "4 MiB message throughput >= 0.9 x ib_send_bw", "msg: 4 MiB msgs / ib_send_bw",
     "bench_send_bw|msg_send_bw", "ib_send_bw", ">=", 0.9),
    ("one-sided", "write bandwidth, 128 KiB, within 10 % of ib_write_bw",
     "rma: write bw / ib_write_bw", "bench_write_bw", "ib_write_bw", ">=", 0.9),
    ("one-sided", "read bandwidth, 128 KiB, within 10 % of ib_read_bw",
     "rma: read bw / ib_read_bw", "bench_read_bw", "ib_read_bw", ">=", 0.9),
    ("one-sided", "8 B atomic latency <= ib_atomic_lat", "rma: fetch-add / ib_atomic_lat",
     "bench_fadd_lat", "ib_atomic_lat", "<=", 1.0),
    ("block", "4 KiB randread QD32 IOPS >= 1.3 x nvme-rdma", "blk: QD32 read IOPS / nvme-rdma",
     "rdmx:randread-4k-qd32:iops", "nvme-rdma:randread-4k-qd32:iops", ">=", 1.3),
    ("block", "4 KiB randwrite QD32 IOPS >= 1.3 x nvme-rdma", "blk: QD32 write IOPS / nvme-rdma",
     "rdmx:randwrite-4k-qd32:iops", "nvme-rdma:randwrite-4k-qd32:iops", ">=", 1.3),
    ("block", "4 KiB randread QD32 IOPS >= 1.1 x RNBD", "blk: QD32 read IOPS / RNBD",
     "rdmx:randread-4k-qd32:iops", "rnbd:randread-4k-qd32:iops", ">=", 1.1),
    ("block", "4 KiB randread QD1 p50 <= 0.8 x nvme-rdma", "blk: QD1 read p50 / nvme-rdma",
     "rdmx:randread-4k-qd1:p50_us", "nvme-rdma:randread-4k-qd1:p50_us", "<=", 0.8),
    ("block", "4 KiB randwrite QD1 p50 <= 0.8 x nvme-rdma", "blk: QD1 write p50 / nvme-rdma",
     "rdmx:randwrite-4k-qd1:p50_us", "nvme-rdma:randwrite-4k-qd1:p50_us", "<=", 0.8),
    ("block", "128 KiB seq read bandwidth >= 1.1 x nvme-rdma", "blk: seq read / nvme-rdma",
     "rdmx:read-128k:bw_mibs", "nvme-rdma:read-128k:bw_mibs", ">=", 1.1),
    ("block", "128 KiB seq write bandwidth >= 1.1 x nvme-rdma", "blk: seq write / nvme-rdma",
     "rdmx:write-128k:bw_mibs", "nvme-rdma:write-128k:bw_mibs", ">=", 1.1),
    ("block", "128 KiB seq read bandwidth >= 0.9 x ib_read_bw", "blk: seq read / ib_read_bw",
     "rdmx:read-128k:bw_mibs", "ib_read_bw", ">=", 0.9),
    ("block", "128 KiB seq write bandwidth >= 0.9 x ib_write_bw", "blk: seq write / ib_write_bw",
     "rdmx:write-128k:bw_mibs", "ib_write_bw", ">=", 0.9),
]

# ----------------------------------------------------------------- collecting


def failure(text):
    """The gist of a failed case's output: its last line with words in it
    (tables' rules left out), with the exit status the guest appended."""
    lines = [ln.strip() for ln in text.splitlines() if re.search(r"[A-Za-z]", ln)]
    status = ""
    if lines and re.match(r"exit status \d+$", lines[-1]):
        status = lines.pop()
    if not lines:
        return status or "failed"
    return lines[-1][:100] + (" (%s)" % status if status else "")


def load(rundir):
    meta = {}
    try:
        with open(os.path.join(rundir, "meta.json")) as f:
            meta = json.load(f)
    except (OSError, ValueError):
        pass
    cases = {}
    for base, parts in breakdown.node_rows(rundir, "manifest.tsv", 5):
        cid, rep, kind, status, ref = parts
        c = cases.setdefault(cid, {"id": cid, "kind": kind, "samples": {},
                                   "failures": [], "unavailable": None})
        if status == "unavailable":
            c["unavailable"] = ref
            continue
        path = ref.replace("/rdmx/out/", base + "/", 1)
        try:
            with open(path, errors="replace") as rf:
                text = rf.read()
        except OSError as e:
            c["failures"].append("rep %s: %s" % (rep, e.strerror))
            continue
        if status != "ok":
            c["failures"].append("rep %s: %s" % (rep, failure(text)))
            continue
        try:
            vals = PARSERS[kind](text)
        except (ValueError, KeyError, TypeError) as e:
            c["failures"].append("rep %s: unparsable: %s" % (rep, e))
            continue
        for k, v in vals.items():
            c["samples"].setdefault(k, []).append(v)
    return meta, cases


def summary(vals):
    if not vals:
        return None
    return {"median": statistics.median(vals), "min": min(vals), "max": max(vals), "n": len(vals)}


def case_reason(cases, cid, meta):
    """Why a case has no value."""
    c = cases.get(cid)
    if c is None:
        only = meta.get("only", ".")
        if only not in (".", "") and not re.search(only, cid):
            return "not selected (--only)"
        return "no result recorded (the guest run ended early? see vm/nodeN/script.log)"
    if c["unavailable"]:
        return c["unavailable"]
    if c["failures"]:
        return "failed: " + "; ".join(c["failures"][:2])
    return "no value"


def value(cases, name, meta):
    """(value, None) of a quantity of Q, or (None, reason)."""
    cid, metric, factor = Q[name]
    c = cases.get(cid)
    vals = c["samples"].get(metric) if c else None
    if vals:
        return statistics.median(vals) * factor, None
    return None, "%s: %s" % (cid, case_reason(cases, cid, meta))


def ratio(cases, num, den, meta):
    """(ratio, None, which numerator) or (None, reason, None). num may list
    alternatives separated by '|', the first with a value wins."""
    reason = None
    for n in num.split("|"):
        a, why = value(cases, n, meta)
        if a is not None:
            b, why = value(cases, den, meta)
            if b is None:
                return None, why, None
            if b == 0:
                return None, "%s is 0" % den, None
            return a / b, None, n
        reason = reason or why
    return None, reason, None


# ----------------------------------------------------------------- output


def fmt(v):
    if v is None:
        return "-"
    if v >= 1000:
        return "{:,.0f}".format(v)
    if v >= 100:
        return "%.0f" % v
    if v >= 10:
        return "%.1f" % v
    return "%.2f" % v


def fmt_ratio(r):
    return "-" if r is None else ("%.2f x" % r if r < 100 else "%.0f x" % r)


# A report is a list of blocks, written out as Markdown (results.md) and as
# reStructuredText (results.rst, for Documentation/benchmarks.rst):
# ("h", title), ("p", text), ("table", header, rows), ("list", items).


def metric_table(cases, rows, meta, out_json):
    header = ["case", "median", "spread (min .. max)", "n", "unit", "note"]
    out = []
    for cid, metric, label, unit, hib in rows:
        c = cases.get(cid)
        s = summary(c["samples"].get(metric, [])) if c else None
        rec = {"case": cid, "metric": metric, "label": label, "unit": unit,
               "higher_is_better": hib, "samples": c["samples"].get(metric, []) if c else []}
        if s:
            rec.update(s)
            note = ""
            if c["failures"]:
                note = "%d failed repetition(s)" % len(c["failures"])
            spread = "%s .. %s" % (fmt(s["min"]), fmt(s["max"]))
            if s["median"]:
                spread += " (%.0f %%)" % (100.0 * (s["max"] - s["min"]) / s["median"])
            out.append([label, fmt(s["median"]), spread, str(s["n"]), unit, note])
        else:
            rec["reason"] = case_reason(cases, cid, meta)
            out.append([label, "-", "-", "0", unit, rec["reason"]])
        out_json.append(rec)
    return [("table", header, out)]


def cell(s):
    """median (min .. max) of a summary."""
    if s["n"] == 1:
        return fmt(s["median"])
    return "%s (%s .. %s)" % (fmt(s["median"]), fmt(s["min"]), fmt(s["max"]))


def block_matrix(cases, meta, out_json):
    """Block figures as one row a measure, one column a contender; cells are
    median (min .. max); what could not run is listed under the table."""
    rows = []
    reasons = {}
    for job, metric, label, unit, hib in BLOCK_METRICS:
        cells = []
        for c in BLOCK_CONTENDERS:
            cid = "block/%s/%s" % (c, job)
            case = cases.get(cid)
            vals = case["samples"].get(metric, []) if case else []
            s = summary(vals)
            rec = {"case": cid, "metric": metric, "label": "%s, %s" % (label, c),
                   "unit": unit, "higher_is_better": hib, "samples": vals}
            if s:
                rec.update(s)
                cells.append(cell(s))
            else:
                rec["reason"] = case_reason(cases, cid, meta)
                reasons.setdefault(c, []).append(rec["reason"])
                cells.append("n/a")
            out_json.append(rec)
        rows.append([label, unit] + cells)
    blocks = [("table", ["measure", "unit"] + BLOCK_CONTENDERS, rows)]
    if reasons:
        items = []
        for c in BLOCK_CONTENDERS:
            if c in reasons:
                uniq = list(dict.fromkeys(reasons[c]))
                items.append("%s: %s" % (c, "; ".join(uniq[:3])))
        blocks += [("p", "n/a:"), ("list", items)]
    return blocks


def report(rundir):
    meta, cases = load(rundir)
    js = {"meta": meta, "metrics": [], "ratios": [], "targets": []}
    doc = [("title", "rdmx benchmark, %s" % meta.get("date", "?"))]
    doc.append(("p", "%s mode, %s of %d vCPU(s), %s kernel %s, %s, %s repetition(s) per "
                "case%s. Medians, with the spread over the repetitions; latencies in "
                "microseconds, bandwidths in MiB/s. rdmx %s, git %s." % (
                    meta.get("mode", "?"),
                    "loopback (one guest)" if meta.get("loopback") else "two guests",
                    meta.get("cpus", 1),
                    meta.get("kernel", "?"), meta.get("kver", "?"), meta.get("rdma", "?"),
                    meta.get("repeats", "?"),
                    ", QEMU -icount %s" % meta["icount"] if meta.get("icount") else "",
                    meta.get("version", "?"), meta.get("git", "?"))))
    doc.append(("h", "Block (fio --direct=1, one null_blk memory_backed=1 device)"))
    doc += block_matrix(cases, meta, js["metrics"])
    doc.append(("h", "Raw transport (perftest)"))
    doc += metric_table(cases, RAW_METRICS, meta, js["metrics"])
    doc.append(("h", "Messages and one-sided access"))
    doc += metric_table(cases, MSG_METRICS, meta, js["metrics"])

    doc += sweep_section(cases, js)
    doc += growth_section(cases, js)
    doc += breakdown.breakdown_section(rundir, meta, js)

    doc.append(("h", "Ratios"))
    doc.append(("p", "Block: rdmx / each peer and rdmx / the raw transport (throughput: "
                "higher is better; latency: lower is better). rdmx-rw is rdmx with "
                "inline reads off (blk_inline_read_max 0)."))
    raw_for = {"read-128k": "ib_read_bw", "write-128k": "ib_write_bw"}
    rows = []
    for job, metric, label, unit, hib in BLOCK_METRICS:
        num = "rdmx:%s:%s" % (job, metric)
        cells = []
        dens = ["%s:%s:%s" % (p, job, metric) for p in BLOCK_PEERS] + [raw_for.get(job)]
        for den in dens:
            if den is None:
                cells.append("")
                continue
            r, why, _ = ratio(cases, num, den, meta)
            js["ratios"].append({"label": "%s, rdmx / %s" % (label, den.split(":")[0]),
                                 "numerator": num, "denominator": den, "ratio": r,
                                 "reason": why})
            cells.append(fmt_ratio(r) if r is not None else "n/a")
        rows.append(["%s (%s)" % (label, unit)] + cells)
    doc.append(("table", ["measure"] + ["/ " + p for p in BLOCK_PEERS] + ["/ raw"], rows))
    if not (cases.get("block/rdmx/randread-4k-qd32") or {}).get("samples"):
        doc.append(("p", "n/a: rdmx block: %s." %
                    case_reason(cases, "block/rdmx/randread-4k-qd32", meta)))

    doc.append(("p", "Messages and one-sided access:"))
    rows = []
    for label, num, den in MSG_RATIOS:
        r, why, _ = ratio(cases, num, den, meta)
        js["ratios"].append({"label": label, "numerator": num, "denominator": den,
                             "ratio": r, "reason": why})
        rows.append([label, fmt_ratio(r), why or ""])
    doc.append(("table", ["ratio", "value", "note"], rows))

    doc.append(("h", "Targets"))
    rows = []
    for service, text, short, num, den, op, limit in TARGETS:
        r, why, used = ratio(cases, num, den, meta)
        if r is None:
            met = "n/a: %s" % why
        else:
            ok = r <= limit if op == "<=" else r >= limit
            met = "yes" if ok else "**no**"
            if used and "|" in num and used != num.split("|")[0]:
                met += " (from %s)" % Q[used][0]
        js["targets"].append({"service": service, "target": text, "short": short,
                              "op": op, "limit": limit,
                              "numerator": num, "denominator": den, "ratio": r,
                              "met": None if r is None else met.startswith("yes"),
                              "reason": why})
        rows.append([service, text, fmt_ratio(r), met])
    doc.append(("table", ["service", "target", "measured", "met"], rows))
    doc.append(("p", "Chart: chart.svg (each target's measured ratio beside its limit)."))

    with open(os.path.join(rundir, "results.md"), "w") as f:
        f.write(render(doc, MARKDOWN))
    with open(os.path.join(rundir, "results.rst"), "w") as f:
        f.write(render(doc, REST))
    with open(os.path.join(rundir, "results.json"), "w") as f:
        json.dump(js, f, indent=1, sort_keys=True)
        f.write("\n")
    chart(rundir, js, meta)
    sweep_chart(rundir, js)
    depth_chart(rundir, js)
    return js


# The message throughput sweep: contender, case id prefix (the size in
# bytes follows).
SWEEP = [("rdmx", "sweep/rdmx-bench-send-bw-"), ("ib_send_bw", "sweep/ib_send_bw-"),
         ("RDS", "sweep/qperf-rds_bw-")]


def sweep_section(cases, js):
    """Message throughput by size: a table (MiB/s, and rdmx over each peer)
    and js["sweep"], one entry a size, for sweep.svg."""
    sizes = sorted({int(cid.rsplit("-", 1)[1]) for cid in cases
                    if any(cid.startswith(p) for _, p in SWEEP)})
    if not sizes:
        return []
    rows = []
    for size in sizes:
        ent = {"size": size}
        for name, prefix in SWEEP:
            c = cases.get(prefix + str(size))
            s = summary(c["samples"].get("bw_mibs", [])) if c else None
            ent[name] = s["median"] if s else None
            if s:
                js["metrics"].append(dict(s, case=prefix + str(size), metric="bw_mibs",
                                          label="%s %s" % (name, size_name(size)),
                                          unit="MiB/s", higher_is_better=True,
                                          samples=c["samples"]["bw_mibs"]))
        js.setdefault("sweep", []).append(ent)
        cells = [fmt(ent[n]) if ent[n] is not None else "-" for n, _ in SWEEP]
        for peer in ("ib_send_bw", "RDS"):
            ok = ent["rdmx"] is not None and ent[peer]
            cells.append(fmt_ratio(ent["rdmx"] / ent[peer]) if ok else "-")
        rows.append([size_name(size)] + cells)
    return [("h", "Message throughput by size (MiB/s)"),
            ("p", "rdmxctl bench -t send -m bw, ib_send_bw and qperf rds_bw at each message "
             "size (RDS up to its largest message, 1 MiB); chart: sweep.svg."),
            ("table", ["size"] + [n for n, _ in SWEEP] + ["rdmx / ib_send_bw", "rdmx / RDS"],
             rows)]


SCALE_CONTENDERS = ["rdmx", "nvme-rdma"]


def growth_section(cases, js):
    """How cost grows: IOPS by queue depth (js["depth"], for depth.svg), and
    memory per session, map and request with the session connect rate."""
    doc = []
    depths = sorted({int(cid.rsplit("qd", 1)[1]) for cid in cases if cid.startswith("scale/")})
    if depths:
        rows = []
        for d in depths:
            ent = {"depth": d}
            for c in SCALE_CONTENDERS:
                cid = "scale/%s/randread-4k-qd%d" % (c, d)
                k = cases.get(cid)
                s = summary(k["samples"].get("iops", [])) if k else None
                ent[c] = s["median"] if s else None
                if s:
                    js["metrics"].append(dict(s, case=cid, metric="iops",
                                              label="%s 4 KiB randread QD%d" % (c, d),
                                              unit="IO/s", higher_is_better=True,
                                              samples=k["samples"]["iops"]))
            js.setdefault("depth", []).append(ent)
            ok = ent["rdmx"] is not None and ent["nvme-rdma"]
            rows.append([str(d)] + [fmt(ent[c]) if ent[c] is not None else "-"
                                    for c in SCALE_CONTENDERS] +
                        [fmt_ratio(ent["rdmx"] / ent["nvme-rdma"]) if ok else "-"])
        doc += [("h", "How cost grows"),
                ("p", "4 KiB random read IOPS by queue depth (fio --iodepth=N, one job); "
                 "chart: depth.svg."),
                ("table", ["queue depth"] + SCALE_CONTENDERS + ["rdmx / nvme-rdma"], rows)]
    rows = []
    for cid, metric, label, unit in COST_METRICS:
        c = cases.get(cid)
        s = summary(c["samples"].get(metric, [])) if c else None
        if s:
            js["metrics"].append(dict(s, case=cid, metric=metric, label=label, unit=unit,
                                      higher_is_better=metric == "sessions_per_s",
                                      samples=c["samples"][metric]))
            rows.append([label, fmt(s["median"]), unit])
        elif c:
            rows.append([label, "n/a: " + case_reason(cases, cid, {}), ""])
    if rows:
        if not depths:
            doc.append(("h", "How cost grows"))
        doc += [("p", "rdmx's memory (free memory before and while they are held, caches "
                 "dropped; in loopback both ends count) and how fast sessions connect:"),
                ("table", ["measure", "value", "unit"], rows)]
    return doc


def size_name(size):
    for unit, shift in (("MiB", 20), ("KiB", 10)):
        if size >= 1 << shift and size % (1 << shift) == 0:
            return "%d %s" % (size >> shift, unit)
    return "%d B" % size


def md_table(header, rows):
    return (["| " + " | ".join(header) + " |", "|" + "---|" * len(header)] +
            ["| " + " | ".join(r) + " |" for r in rows])


def rst_table(header, rows):
    out = [".. list-table::", "   :header-rows: 1", ""]
    for r in [header] + rows:
        out.append("   * - " + (r[0] or r"\ "))
        out += ["     - " + (c or r"\ ") for c in r[1:]]
    return out


# Markdown, and reStructuredText with its sections one level below the
# document's (underlined with '-') and list-tables.
MARKDOWN = {"title": lambda t: ["# " + t], "h": lambda t: ["## " + t], "table": md_table}
REST = {"title": lambda t: [], "h": lambda t: [t, "-" * len(t)], "table": rst_table}


def render(doc, how):
    out = []
    for b in doc:
        if b[0] == "p":
            lines = [b[1]]
        elif b[0] == "list":
            lines = ["- " + i for i in b[1]]
        elif b[0] == "table":
            lines = how["table"](b[1], b[2])
        else:
            lines = how[b[0]](b[1])
        if lines:
            out += lines + [""]
    return "\n".join(out)


def chart(rundir, js, meta):
    """chart.svg: one bar per target, its measured ratio (log scale), and
    the target's limit as a mark; a target without a value shows n/a."""
    dat = os.path.join(rundir, "chart.dat")
    n = len(js["targets"])
    with open(dat, "w") as f:
        f.write("# x label ratio at-most-limit at-least-limit\n")
        for i, t in enumerate(js["targets"]):
            r = t["ratio"]
            label = t["short"] + ("" if r is not None else " (n/a)")
            hi = t["limit"] if t["op"] == "<=" else "NaN"
            lo = t["limit"] if t["op"] == ">=" else "NaN"
            f.write('%d "%s" %s %s %s\n' % (i, label, "%g" % r if r is not None else "NaN",
                                            hi, lo))
    gp = os.path.join(rundir, "chart.gp")
    title = "rdmx / reference against the speed targets, %s (%s, %s)" % (
        meta.get("date", ""), meta.get("mode", ""),
        "loopback" if meta.get("loopback") else "two guests")
    with open(gp, "w") as f:
        f.write("""set terminal svg size 1000,600 dynamic font "sans,11" noenhanced
set output "%s"
set title "%s"
set datafile missing "NaN"
set style fill solid 0.6 border -1
set boxwidth 0.6
set logscale y
set yrange [0.01:1000]
set xrange [-0.6:%d]
set ylabel "ratio (log scale)"
set xtics rotate by -40 left font ",10"
set bmargin 11
set rmargin 10
set grid ytics
set key top left
plot "%s" using 1:3:xtic(2) with boxes lc rgb "steelblue" title "measured (n/a: no value)", \\
     "" using 1:3:(sprintf("%%.2f", $3)) with labels offset 0,0.8 notitle, \\
     "" using 1:4 with points pt 11 ps 1.6 lc rgb "red" title "target: at most", \\
     "" using 1:5 with points pt 9 ps 1.6 lc rgb "dark-green" title "target: at least", \\
     1 with lines dt 2 lc rgb "gray" notitle
""" % (os.path.join(rundir, "chart.svg"), title, n, dat))
    gnuplot(gp, "chart.svg")


def gnuplot(gp, what):
    """Run gnuplot on the script gp, which makes what; a missing gnuplot or
    a failure is said, not fatal."""
    if not shutil.which("gnuplot"):
        print("report: gnuplot not installed (tests/deps.sh); no %s" % what, file=sys.stderr)
        return
    r = subprocess.run(["gnuplot", gp], capture_output=True, text=True)
    if r.returncode:
        print("report: gnuplot failed on %s: %s" % (what, r.stderr.strip()), file=sys.stderr)


def line_chart(rundir, name, title, axes, names, rows):
    """NAME.svg: a line a contender over rows of (x, [value or None a
    contender]); axes = (xlabel, ylabel, "set logscale ..." or "")."""
    dat = os.path.join(rundir, name + ".dat")
    with open(dat, "w") as f:
        f.write("# x " + " ".join(n.replace(" ", "_") for n in names) + "\n")
        for x, vals in rows:
            f.write("%g %s\n" % (x, " ".join("%g" % v if v is not None else "NaN"
                                            for v in vals)))
    gp = os.path.join(rundir, name + ".gp")
    plots = ", ".join('"%s" using 1:%d with linespoints title "%s"' % (dat, i + 2, n)
                      for i, n in enumerate(names))
    with open(gp, "w") as f:
        f.write("""set terminal svg size 800,500 dynamic font "sans,11" noenhanced
set output "%s"
set title "%s"
set datafile missing "NaN"
%s
set xlabel "%s"
set ylabel "%s"
set grid
set key top left
plot %s
""" % (os.path.join(rundir, name + ".svg"), title, axes[2], axes[0], axes[1], plots))
    gnuplot(gp, name + ".svg")


def sweep_chart(rundir, js):
    """sweep.svg: message throughput against message size, log-log, a line
    a contender; nothing when the run had no sweep."""
    if not js.get("sweep"):
        return
    line_chart(rundir, "sweep", "message throughput by size",
               ("message size (bytes)", "MiB/s", "set logscale xy"),
               [n for n, _ in SWEEP],
               [(e["size"], [e[n] for n, _ in SWEEP]) for e in js["sweep"]])


def depth_chart(rundir, js):
    """depth.svg: 4 KiB random read IOPS against the queue depth."""
    if not js.get("depth"):
        return
    line_chart(rundir, "depth", "4 KiB random read IOPS by queue depth",
               ("queue depth", "IOPS", "set logscale x 2"), SCALE_CONTENDERS,
               [(e["depth"], [e[c] for c in SCALE_CONTENDERS]) for e in js["depth"]])


def main(argv):
    if len(argv) == 4 and argv[1] == "--parse":
        with open(argv[3], errors="replace") as f:
            print(json.dumps(PARSERS[argv[2]](f.read()), sort_keys=True))
        return 0
    if len(argv) != 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    report(argv[1])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
