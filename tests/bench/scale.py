#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""tests/bench/scale.py OUT RUN... : how IOPS grow with vCPUs and queues.

Each RUN is a `make bench` results directory (tests/bench/run --cpus N;
its meta.json says N). For every block contender, its 4 KiB random read
and write IOPS at QD32 and p50 latency at QD1 (a fio job per vCPU, a disk
queue per vCPU) are set side by side by vCPUs, with rdmx over nvme-rdma,
in OUT/scale.md and OUT/scale.svg (gnuplot).
"""

import json
import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the tree
import report  # noqa: E402

# Each job and the measure it is set side by side by: IOPS at QD32, the
# median latency at QD1 (fio reports no IOPS for the latency jobs).
JOBS = [("randread-4k-qd32", "iops", "IOPS"), ("randwrite-4k-qd32", "iops", "IOPS"),
        ("randread-4k-qd1", "p50_us", "p50 us"), ("randwrite-4k-qd1", "p50_us", "p50 us")]


def load(rundir):
    with open(os.path.join(rundir, "results.json")) as f:
        js = json.load(f)
    vals = {}
    for m in js["metrics"]:
        if m.get("median") is not None:
            vals[(m["case"], m.get("metric"))] = m["median"]
    return js["meta"].get("cpus", 1), vals


def main(argv):
    if len(argv) < 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    out = argv[1]
    runs = sorted(load(r) for r in argv[2:])
    os.makedirs(out, exist_ok=True)
    rows = []
    for job, metric, label in JOBS:
        for cpus, vals in runs:
            cells = [job, label, str(cpus)]
            for c in report.SCALE_CONTENDERS:
                v = vals.get(("block/%s/%s" % (c, job), metric))
                cells.append(report.fmt(v) if v is not None else "-")
            r = vals.get(("block/rdmx/" + job, metric))
            n = vals.get(("block/nvme-rdma/" + job, metric))
            cells.append(report.fmt_ratio(r / n) if r and n else "-")
            rows.append(cells)
    doc = [("title", "rdmx benchmark: IOPS by vCPUs"),
           ("p", "Each row from the run with that many vCPUs (a fio job and a disk queue "
            "per vCPU): %s." % ", ".join(argv[2:])),
           ("table", ["job", "measure", "vCPUs"] + report.SCALE_CONTENDERS + ["rdmx / nvme-rdma"],
            rows)]
    with open(os.path.join(out, "scale.md"), "w") as f:
        f.write(report.render(doc, report.MARKDOWN))
    report.line_chart(out, "scale", "4 KiB random read IOPS at QD32 by vCPUs",
                      ("vCPUs (a queue and a fio job each)", "IOPS", "set logscale x 2"),
                      report.SCALE_CONTENDERS,
                      [(cpus, [vals.get(("block/%s/randread-4k-qd32" % c, "iops"))
                               for c in report.SCALE_CONTENDERS]) for cpus, vals in runs])
    print(open(os.path.join(out, "scale.md")).read())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
