#!/usr/bin/env python3
"""How two searches of the same space rank the architectures: Spearman's rank correlation of the
common score and of every model's throughput over the configs both explored, and the winners of
each (issue 38: the device model against the old `analytic` one).

  share/runs/compare_estimators.py A/explored.csv B/explored.csv [--names device,analytic]

Each argument is the explored.csv of a `phaze search` (one row per config and model). Standard
library only; ties get their average rank.
"""
import argparse
import csv
import sys


def load(path):
    """{architecture: {"common": score, model: throughput}}, and the common and model winners."""
    configs, winners = {}, {}
    with open(path) as f:
        for r in csv.DictReader(f):
            c = configs.setdefault(r["architecture"], {})
            if r["common_score"] != "":
                c["common"] = float(r["common_score"])
            c[r["model"]] = float(r["throughput_samples_per_s"] or 0)
            if r["common_winner"] == "true":
                winners["common"] = r["architecture"]
            if r["model_winner"] == "true":
                winners[r["model"]] = r["architecture"]
    return configs, winners


def ranks(values):
    order = sorted(range(len(values)), key=lambda i: values[i])
    out = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            out[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return out


def spearman(x, y):
    rx, ry = ranks(x), ranks(y)
    n = len(x)
    mx, my = sum(rx) / n, sum(ry) / n
    cov = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    vx = sum((a - mx) ** 2 for a in rx) ** 0.5
    vy = sum((b - my) ** 2 for b in ry) ** 0.5
    return cov / (vx * vy) if vx > 0 and vy > 0 else float("nan")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("a")
    p.add_argument("b")
    p.add_argument("--names", default="A,B")
    args = p.parse_args()
    na, nb = args.names.split(",")
    a, wa = load(args.a)
    b, wb = load(args.b)
    both = sorted(set(a) & set(b))
    keys = ["common"] + sorted({k for c in a.values() for k in c if k != "common"})
    print("configs explored: %s %d, %s %d, both %d" % (na, len(a), nb, len(b), len(both)))
    print("| score | Spearman ρ over the configs both explored | %s winner | %s winner | "
          "%s's winner ranked by %s |" % (na, nb, na, nb))
    print("|---|---|---|---|---|")
    for k in keys:
        rows = [c for c in both if k in a[c] and k in b[c]]
        rho = spearman([a[c][k] for c in rows], [b[c][k] for c in rows]) if len(rows) > 2 else float("nan")
        where = "—"
        if wa.get(k) in b and k in b[wa[k]]:
            order = sorted((c for c in b if k in b[c]), key=lambda c: -b[c][k])
            where = "%d of %d" % (order.index(wa[k]) + 1, len(order))
        print("| %s | %.3f (n %d) | %s | %s | %s |" % (k, rho, len(rows), wa.get(k, "—"),
                                                      wb.get(k, "—"), where))
    return 0


if __name__ == "__main__":
    sys.exit(main())
