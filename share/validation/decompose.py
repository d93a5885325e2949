#!/usr/bin/env python3
"""Splits measured iteration times, and phaze's errors on them, into what each transformer block
costs per micro-batch, what the rest of a stage costs per micro-batch (the LM head, the loss, the
embedding, per-micro-batch overheads) and what the iteration costs once (optimizer, reductions).

A 1F1B pipeline of p even stages of L/p blocks, m micro-batches per pipeline, whose last stage
also holds the head, takes

    T = m·(L/p·block + rest) + (p − 1)·L/p·block + once

(the last stage runs all m micro-batches; each other stage adds its own load once for the fill
and drain, phaze's `bubble: stages`). Within one class of runs — the same t, hidden size, heads,
sequence and micro-batch, where a block, the head and the loss do the same work on every GPU —
block, rest and once are three numbers shared by every run of the class, and linear least squares
on the class's runs finds them:

  measured   runs with p = 1 of one class and one d: T = m·(L·block + rest) + once, from the
             measured times alone (at least two layer counts and two values of m);
  residuals  runs of one class with at least two pipeline depths: the same model fitted to
             measured − predicted, i.e. how much phaze's block, rest and once are off.
             A class whose error vanishes under its three corrections has its error in those
             terms, not in the pipeline's structure.

  share/validation/decompose.py [--csv vtrain-single-node.csv] [--residuals residuals.csv]
      [--report DIR]

--csv: measured runs in vTrain's eleven columns (validate.py's format); --residuals: validate.py
--residuals' output for the same runs (matched on GPUs, t, p, d, micro-batch and the measured
time). --report DIR writes decomposition.md. Standard library only.
"""
import argparse
import collections
import csv
import os
import sys

import validate

HERE = os.path.dirname(os.path.abspath(__file__))


def solve(a_rows, y):
    """Least squares: x minimising |A x − y| by the normal equations (A has full column rank;
    None when it has not)."""
    n = len(a_rows[0])
    m = [[sum(a[i] * a[j] for a in a_rows) for j in range(n)] for i in range(n)]
    b = [sum(a[i] * v for a, v in zip(a_rows, y)) for i in range(n)]
    for c in range(n):
        pivot = max(range(c, n), key=lambda r: abs(m[r][c]))
        if abs(m[pivot][c]) < 1e-9 * max(1.0, max(abs(v) for row in m for v in row)):
            return None
        m[c], m[pivot] = m[pivot], m[c]
        b[c], b[pivot] = b[pivot], b[c]
        for r in range(n):
            if r != c:
                f = m[r][c] / m[c][c]
                m[r] = [x - f * z for x, z in zip(m[r], m[c])]
                b[r] -= f * b[c]
    return [b[i] / m[i][i] for i in range(n)]


def pipeline_terms(run):
    """The coefficients of (block, rest, once) in T for one run (module docstring)."""
    p, layers, m = run["p"], run["layers"], run["m"]
    return [m * layers / p + (p - 1) * layers / p, m, 1.0]


def fitted(row, x):
    """The model's value for a run whose pipeline_terms are `row`, at costs x."""
    return sum(c * v for c, v in zip(row, x))


def mean_abs(values):
    return sum(abs(v) for v in values) / len(values) if values else 0.0


def load_runs(csv_path, residuals_path):
    """Measured runs with m = batch / (d · micro-batch) and, where residuals_path has the run,
    phaze's predicted seconds."""
    predicted = collections.defaultdict(list)  # (GPUs, t, p, d, micro-batch) → [(measured, predicted)]
    if residuals_path:
        with open(residuals_path, newline="") as f:
            for r in csv.DictReader(f):
                key = (int(r["gpus"]), int(r["t"]), int(r["p"]), int(r["d"]), int(r["micro_batch"]))
                predicted[key].append((float(r["measured_s"]), float(r["predicted_s"])))
    runs = []
    for row in validate.load_rows(csv_path):
        run = dict(row, m=row["batch"] // (row["d"] * row["micro"]), predicted_s=None)
        key = (row["gpus"], row["t"], row["p"], row["d"], row["micro"])
        for measured, seconds in predicted.get(key, []):
            if abs(measured - row["measured_s"]) <= 1e-5 * row["measured_s"]:  # written as %.6g
                run["predicted_s"] = seconds
        runs.append(run)
    return runs


def measured_classes(runs):
    """(t, hidden, heads, sequence, micro-batch, d) → (block, rest, once, n, mean |fit error|) in
    seconds, from the p = 1 runs."""
    groups = collections.defaultdict(list)
    for r in runs:
        if r["p"] == 1:
            groups[(r["t"], r["hidden"], r["heads"], r["seq"], r["micro"], r["d"])].append(r)
    out = {}
    for key, rs in sorted(groups.items()):
        if len({r["layers"] for r in rs}) < 2 or len({r["m"] for r in rs}) < 2:
            continue
        a = [pipeline_terms(r) for r in rs]
        x = solve(a, [r["measured_s"] for r in rs])
        if x is None:
            continue
        fit = mean_abs([fitted(row, x) / r["measured_s"] - 1 for row, r in zip(a, rs)])
        out[key] = (x[0], x[1], x[2], len(rs), fit)
    return out


def residual_classes(runs):
    """(t, hidden, heads, sequence, micro-batch) → (Δblock, Δrest, Δonce, n, mean |error| before,
    after) in seconds, over the runs phaze predicted, for classes with at least two pipeline
    depths."""
    groups = collections.defaultdict(list)
    for r in runs:
        if r["predicted_s"] is not None:
            groups[(r["t"], r["hidden"], r["heads"], r["seq"], r["micro"])].append(r)
    out = {}
    for key, rs in sorted(groups.items()):
        if len({r["p"] for r in rs}) < 2:
            continue
        a = [pipeline_terms(r) for r in rs]
        x = solve(a, [r["measured_s"] - r["predicted_s"] for r in rs])
        if x is None:
            continue
        before = mean_abs([r["predicted_s"] / r["measured_s"] - 1 for r in rs])
        after = mean_abs([(r["predicted_s"] + fitted(row, x)) / r["measured_s"] - 1
                          for row, r in zip(a, rs)])
        out[key] = (x[0], x[1], x[2], len(rs), before, after)
    return out


def report(measured, residuals):
    lines = ["# Measured runs, decomposed", "",
             "`share/validation/decompose.py` (module docstring: the model and the fits). Times in",
             "ms per micro-batch (block, rest) and per iteration (once).", "",
             "## Measured, p = 1", "",
             "| t | hidden | heads | sequence | micro-batch | d | runs | block | rest | once | fit |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for (t, h, a, seq, mb, d), (block, rest, once, n, fit) in measured.items():
        lines.append("| %d | %d | %d | %d | %d | %d | %d | %.2f | %.2f | %.1f | %.2f%% |" %
                     (t, h, a, seq, mb, d, n, 1e3 * block, 1e3 * rest, 1e3 * once, 100 * fit))
    lines += ["", "## phaze's error, measured − predicted", "",
              "| t | hidden | heads | sequence | micro-batch | runs | Δblock | Δrest | Δonce | "
              "mean \\|error\\| | with the three corrections |",
              "|---|---|---|---|---|---|---|---|---|---|---|"]
    for (t, h, a, seq, mb), (db, dr, do, n, before, after) in residuals.items():
        lines.append("| %d | %d | %d | %d | %d | %d | %+.2f | %+.2f | %+.1f | %.1f%% | %.1f%% |" %
                     (t, h, a, seq, mb, n, 1e3 * db, 1e3 * dr, 1e3 * do, 100 * before,
                      100 * after))
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--csv", default=os.path.join(HERE, "vtrain-single-node.csv"))
    ap.add_argument("--residuals", default=os.path.join(HERE, "residuals.csv"))
    ap.add_argument("--report", help="directory for decomposition.md")
    args = ap.parse_args()
    runs = load_runs(args.csv, args.residuals)
    unmatched = sum(r["predicted_s"] is None for r in runs)
    if unmatched:
        sys.stderr.write("%d of %d runs have no prediction in %s (left out of the residual fits)\n"
                         % (unmatched, len(runs), args.residuals))
    text = report(measured_classes(runs), residual_classes(runs))
    sys.stdout.write(text)
    if args.report:
        os.makedirs(args.report, exist_ok=True)
        with open(os.path.join(args.report, "decomposition.md"), "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
