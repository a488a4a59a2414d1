#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""tests/bench/report_test.py: report.py's parsers against outputs as the
tools print them (tabs, warnings between header and figures, units)."""

import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import report  # noqa: E402

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
    bad += check("timed msg send",
                 report.parse_msg_send("messages 8 bytes 4194304 ns 2000000000\n"),
                 {"bw_mibs": 16.0})
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
