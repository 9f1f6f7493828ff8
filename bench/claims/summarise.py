#!/usr/bin/env python3
"""Median, min and max of some columns of a CSV table, per group of rows.

    summarise.py IN.csv OUT.csv --by k[,penalty] --values bleu,sentences_per_s [--where col=value]

Writes OUT.csv with the --by columns, then for each value column V: V (the median), V_min, V_max
and n (rows in the group); prints the same as an aligned table. Groups keep the order in which
they first appear. Standard library only: the claims scripts use it on any machine with python3.
"""
import argparse
import csv
import statistics
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("input")
    ap.add_argument("output")
    ap.add_argument("--by", required=True)
    ap.add_argument("--values", required=True)
    ap.add_argument("--where", action="append", default=[], help="col=value: keep only these rows")
    a = ap.parse_args()
    by, values = a.by.split(","), a.values.split(",")
    with open(a.input, newline="") as f:
        rows = list(csv.DictReader(f))
    for cond in a.where:
        col, _, want = cond.partition("=")
        rows = [r for r in rows if r.get(col) == want]
    for col in by + values:
        if rows and col not in rows[0]:
            sys.exit(f"{a.input}: no column {col!r} (has: {', '.join(rows[0])})")
    groups = {}
    for r in rows:
        groups.setdefault(tuple(r[c] for c in by), []).append(r)
    header = by + [x for v in values for x in (v, v + "_min", v + "_max")] + ["n"]
    table = []
    for key, members in groups.items():
        line = list(key)
        for v in values:
            nums = []
            for r in members:
                try:
                    nums.append(float(r[v]))
                except ValueError:
                    sys.exit(f"{a.input}: column {v!r}: not a number: {r[v]!r}")
            line += [f"{statistics.median(nums):.4g}", f"{min(nums):.4g}", f"{max(nums):.4g}"]
        table.append(line + [str(len(members))])
    with open(a.output, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(header)
        w.writerows(table)
    widths = [max(len(h), *(len(t[i]) for t in table)) if table else len(h) for i, h in enumerate(header)]
    for line in [header] + table:
        print("  ".join(x.rjust(wd) for x, wd in zip(line, widths)))


if __name__ == "__main__":
    main()
