#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""tests/bench/compare.py [--tolerance PCT] [--tails] RUN_A RUN_B

Sets two `make bench` runs side by side: every measure both have (the
median of its repetitions, from each run's results.json), B's value, and
B / A. With --tolerance PCT (default 1) it is the repeatability check of
the deterministic instrument: two runs of the same tree under --icount
--loopback must agree within PCT % on every measure but the tail
percentiles (p99, p99.9), which are shown, not judged, unless --tails:
over a few hundred samples a tail is the value of the one to ten slowest,
those a timer tick happened to land in. Prints a Markdown table and a
verdict line; exits 0 when every judged measure is within the tolerance,
1 when one is not or when the runs share none, 2 for usage errors.
"""

import json
import os
import sys


def medians(run):
    """(case, metric) -> median, for the measures a run has a value for."""
    path = run if run.endswith(".json") else os.path.join(run, "results.json")
    with open(path) as f:
        js = json.load(f)
    return {(m["case"], m["metric"]): m["median"] for m in js["metrics"]
            if m.get("n", 0) >= 1 and m.get("median") is not None}


def is_tail(metric):
    """A tail percentile (p99_us, p99_9_us), not a median or a rate."""
    return metric.startswith("p99")


def compare(a, b, tolerance, tails=False):
    """Rows (case, metric, A, B, B/A, within, judged) for the measures both
    runs have, and whether every judged one is within tolerance percent
    (tail percentiles are judged only with tails)."""
    rows, ok, judged_any = [], True, False
    for key in sorted(set(a) & set(b)):
        va, vb = a[key], b[key]
        if va == vb:
            r = 1.0
        elif va == 0:
            r = float("inf")
        else:
            r = vb / va
        within = abs(r - 1.0) * 100.0 <= tolerance
        judged = tails or not is_tail(key[1])
        if judged:
            ok = ok and within
            judged_any = True
        rows.append((key[0], key[1], va, vb, r, within, judged))
    return rows, ok and judged_any


def main(argv):
    tolerance, tails = 1.0, False
    args = argv[1:]
    try:
        while args and args[0].startswith("--"):
            if args[0] == "--tails":
                tails, args = True, args[1:]
            elif args[0] == "--tolerance":
                tolerance, args = float(args[1]), args[2:]
            else:
                raise ValueError(args[0])
        if len(args) != 2:
            raise ValueError("two runs")
    except (ValueError, IndexError):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    a, b = medians(args[0]), medians(args[1])
    rows, ok = compare(a, b, tolerance, tails)
    print("| case | measure | A | B | B / A |")
    print("|---|---|---|---|---|")
    for case, metric, va, vb, r, within, judged in rows:
        mark = "" if within else (" **off**" if judged else " (tail, not judged)")
        print("| %s | %s | %.4g | %.4g | %.4f%s |" % (case, metric, va, vb, r, mark))
    judged = [x for x in rows if x[6]]
    worst = max((abs(x[4] - 1.0) * 100.0 for x in judged), default=0.0)
    only = len(set(a) ^ set(b))
    print("\n%d measures in both runs (%d in one only), %d judged%s; largest difference "
          "%.2f %%; tolerance %.2f %%: %s" % (
              len(rows), only, len(judged), "" if tails else " (tails not)", worst,
              tolerance, "repeatable" if ok else "NOT repeatable"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
