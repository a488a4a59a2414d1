#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""tests/bench/compare.py [--tolerance PCT] RUN_A RUN_B

Sets two `make bench` runs side by side: every measure both have (the
median of its repetitions, from each run's results.json), B's value, and
B / A. With --tolerance PCT (default 1) it is the repeatability check of
the deterministic instrument: two runs of the same tree under --icount
--loopback must agree within PCT % on every measure. Prints a Markdown
table and a verdict line; exits 0 when every common measure is within the
tolerance, 1 when one is not or when the runs share no measure, 2 for
usage errors.
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


def compare(a, b, tolerance):
    """Rows (case, metric, A, B, B/A, within) for the measures both runs
    have, and whether every one is within tolerance percent."""
    rows, ok = [], True
    for key in sorted(set(a) & set(b)):
        va, vb = a[key], b[key]
        if va == vb:
            r = 1.0
        elif va == 0:
            r = float("inf")
        else:
            r = vb / va
        within = abs(r - 1.0) * 100.0 <= tolerance
        ok = ok and within
        rows.append((key[0], key[1], va, vb, r, within))
    return rows, ok and bool(rows)


def main(argv):
    tolerance = 1.0
    args = argv[1:]
    if len(args) >= 2 and args[0] == "--tolerance":
        try:
            tolerance = float(args[1])
        except ValueError:
            print(__doc__.strip(), file=sys.stderr)
            return 2
        args = args[2:]
    if len(args) != 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    a, b = medians(args[0]), medians(args[1])
    rows, ok = compare(a, b, tolerance)
    print("| case | measure | A | B | B / A |")
    print("|---|---|---|---|---|")
    for case, metric, va, vb, r, within in rows:
        print("| %s | %s | %.4g | %.4g | %.4f%s |" % (case, metric, va, vb, r,
                                                   "" if within else " **off**"))
    worst = max((abs(r[4] - 1.0) * 100.0 for r in rows), default=0.0)
    only = len(set(a) ^ set(b))
    print("\n%d measures in both runs (%d in one only); largest difference %.2f %%; "
          "tolerance %.2f %%: %s" % (len(rows), only, worst, tolerance,
                                     "repeatable" if ok else "NOT repeatable"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
