#!/usr/bin/env python3
"""The network model against NCCL collectives measured on real nodes, and its fit.

    python3 share/validation/collectives/collectives.py [--phaze build/phaze] [--system dgx-a100]
        [--csv share/validation/collectives/vtrain-a100-all-reduce.csv] [--fit] [--report DIR]

Every row of the CSV (a collective — all_reduce when the column is absent —, gpus, bytes, and
nccl-tests' out-of-place and in-place time of one call on that many GPUs of one node, or the one
of the two a source publishes) is costed by `phaze estimate --collective KIND,BYTES,GPUS` on the
system's levels (framework/include/phaze/network/network.hpp: on one level a call's fixed cost and
a ring, γ + 2(n−1)·α + 2(n−1)/n·B/β for an all-reduce, γ + (n−1)·α + (n−1)/n·B/β for the others)
and compared with the mean of the measured times. Errors are printed as predicted / measured − 1:
for the all-reduce rows (all, up to 16 MiB — tensor parallelism's all-reduces of a micro-batch's
activations —, above, per GPU count), then per other collective.

--fit fits the innermost level's latency per call γ, per ring step α and its bandwidth β on the
all-reduce rows up to --fit-max-mib (default: all, 1 GiB) in closed form: least squares of the
relative error, which is linear in (γ, α, 1/β) — minimise Σ (ring(γ, α, β) / T − 1)². It then
costs every row again with phaze at the fitted values (the other collectives unfitted): the
script's formula and phaze's network model are two implementations of the same rings, and the
two must agree.

Python 3 standard library (and python3-yaml through ../yaml_files.py); needs build/phaze (or
PHAZE).
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
PHAZE = os.environ.get("PHAZE", os.path.join(ROOT, "build", "phaze"))
sys.path.insert(0, os.path.dirname(HERE))
import commented_csv  # noqa: E402
import yaml_files  # noqa: E402

MIB = 1 << 20
# A collective's ring on one level (network.hpp): steps × α + share × B/β, per GPU count n.
KINDS = {"all_reduce": (lambda n: 2.0 * (n - 1), lambda n: 2.0 * (n - 1) / n),
         "all_gather": (lambda n: n - 1.0, lambda n: (n - 1.0) / n),
         "reduce_scatter": (lambda n: n - 1.0, lambda n: (n - 1.0) / n),
         "all_to_all": (lambda n: n - 1.0, lambda n: (n - 1.0) / n)}


def ring(r, gamma, alpha, beta):
    """The formula phaze's network model must give for row R on one level."""
    steps, share = KINDS[r["kind"]]
    return gamma + steps(r["gpus"]) * alpha + share(r["gpus"]) * r["bytes"] / beta


def load(path):
    """The CSV's comment lines (its source) and rows, each with `seconds` the measured time: the
    mean of the out-of-place and in-place times, or the one of them a source publishes."""
    comments, table = commented_csv.read(path)
    rows = []
    for r in table:
        times = [float(r[k]) for k in ("out_of_place_ns", "in_place_ns") if r.get(k)]
        if not times:
            sys.exit("%s: %s GPUs, %s bytes: no measured time" % (path, r["gpus"], r["bytes"]))
        kind = r.get("collective") or "all_reduce"
        if kind not in KINDS:
            sys.exit("%s: collective '%s': expected one of %s" % (path, kind, ", ".join(KINDS)))
        rows.append({"kind": kind, "gpus": int(r["gpus"]), "bytes": int(r["bytes"]),
                     "seconds": sum(times) / len(times) / 1e9})
    return comments, rows


def system_levels(system):
    path = system if os.path.exists(system) else os.path.join(ROOT, "share", "systems", system + ".yaml")
    return yaml_files.load(path)["levels"]


def costed(phaze, rows, levels, directory):
    """phaze's seconds for every row's all-reduce on a cluster of LEVELS."""
    config = os.path.join(directory, "run.yaml")
    with open(config, "w") as f:
        f.write("cluster:\n  levels:\n")
        for level in levels:
            f.write("    - %s\n" % yaml_files.flow_map(level))
    ops = os.path.join(directory, "ops.csv")
    with open(ops, "w") as f:
        for r in rows:
            f.write("collective,%s,%d,%d\n" % (r["kind"], r["bytes"], r["gpus"]))
    out = subprocess.run([phaze, "-q", "--config", config, "estimate", "--arch", "a100-sxm-80gb",
                          "--ops-file", ops], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit("phaze estimate failed: " + (out.stderr or out.stdout).strip())
    seconds = [float(m.group(1)) for m in
               re.finditer(r"^collective,\w+,\d+,\d+\s+(\S+) s$", out.stdout, re.M)]
    if len(seconds) != len(rows):
        sys.exit("phaze estimate printed %d collectives for %d rows" % (len(seconds), len(rows)))
    return seconds


def ring_fit(rows):
    """(γ, α, β) minimising Σ (ring(r, γ, α, β) / T − 1)² over ROWS: linear least squares in
    (γ, α, 1/β), solved from its 3 × 3 normal equations."""
    features = [[1.0, KINDS[r["kind"]][0](r["gpus"]), KINDS[r["kind"]][1](r["gpus"]) * r["bytes"]]
                for r in rows]
    a = [[sum(f[i] * f[j] / r["seconds"] ** 2 for f, r in zip(features, rows)) for j in range(3)]
         + [sum(f[i] / r["seconds"] for f, r in zip(features, rows))] for i in range(3)]
    for i in range(3):  # Gauss-Jordan; the matrix is symmetric positive definite
        pivot = a[i][i]
        a[i] = [v / pivot for v in a[i]]
        for k in range(3):
            if k != i:
                a[k] = [vk - a[k][i] * vi for vk, vi in zip(a[k], a[i])]
    gamma, alpha, inv_beta = (a[i][3] for i in range(3))
    return gamma, alpha, 1.0 / inv_beta


def mean_abs(errors):
    return sum(abs(e) for e in errors) / len(errors)


def stats(errors):
    if not errors:
        return "n 0"
    mean = mean_abs(errors)
    signed = sum(errors) / len(errors)
    worst = max(errors, key=abs)
    return "n %d, mean |error| %.1f%%, signed %+.1f%%, largest %+.1f%%" % (
        len(errors), 100 * mean, 100 * signed, 100 * worst)


def summary(rows, seconds):
    """Lines: all-reduce rows (every one, up to 16 MiB, above, per GPU count), then each other
    collective the CSV has (errors: predicted / measured − 1)."""
    err = [p / r["seconds"] - 1 for r, p in zip(rows, seconds)]
    ar = [(r, e) for r, e in zip(rows, err) if r["kind"] == "all_reduce"]
    lines = ["all-reduce, all rows: " + stats([e for _, e in ar]),
             "up to 16 MiB: " + stats([e for r, e in ar if r["bytes"] <= 16 * MIB]),
             "above 16 MiB: " + stats([e for r, e in ar if r["bytes"] > 16 * MIB])]
    for n in sorted({r["gpus"] for r, _ in ar}):
        lines.append("%d GPUs: " % n + stats([e for r, e in ar if r["gpus"] == n]))
    for kind in KINDS:
        of_kind = [(r, e) for r, e in zip(rows, err) if r["kind"] == kind]
        if kind == "all_reduce" or not of_kind:
            continue
        per_count = ", ".join("%d GPUs %.1f%%" % (n, 100 * mean_abs([e for r, e in of_kind
                                                                     if r["gpus"] == n]))
                              for n in sorted({r["gpus"] for r, _ in of_kind}))
        lines.append("%s: %s (%s)" % (kind.replace("_", "-"), stats([e for _, e in of_kind]),
                                      per_count))
    return lines, err


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--phaze", default=PHAZE)
    ap.add_argument("--csv", default=os.path.join(HERE, "vtrain-a100-all-reduce.csv"))
    ap.add_argument("--system", default="dgx-a100", help="share/systems name or file")
    ap.add_argument("--fit", action="store_true", help="fit the innermost level's γ, α and β")
    ap.add_argument("--fit-max-mib", type=float, default=1024)
    ap.add_argument("--report", help="directory for the report, named after the CSV (.md)")
    ap.add_argument("--max-mean-error", type=float,
                    help="exit 1 when the mean |error| up to 16 MiB is above this fraction")
    args = ap.parse_args()

    source, rows = load(args.csv)
    levels = system_levels(args.system)
    directory = tempfile.mkdtemp(prefix="phaze-collectives-")
    seconds = costed(args.phaze, rows, levels, directory)
    lines, err = summary(rows, seconds)
    inner = levels[0]
    title = "%s: %s at γ %.3g µs per call, α %.3g µs per ring step, β %.4g GB/s" % (
        os.path.basename(args.csv), args.system, 1e6 * inner.get("call_latency_s", 0),
        1e6 * inner["latency_s"], inner["bandwidth_bytes_per_s"] / 1e9)
    print(title)
    for line in lines:
        print("  " + line)
    report = ["# NCCL collectives against phaze's network model", "",
              "Generated by `share/validation/collectives/collectives.py`%s. The data: %s" % (
                  " --fit" if args.fit else "", " ".join(source)), "",
              "## " + title, ""] + ["- " + line for line in lines]

    if args.fit:
        fitting = [r for r in rows
                   if r["kind"] == "all_reduce" and r["bytes"] <= args.fit_max_mib * MIB]
        gamma, alpha, beta = ring_fit(fitting)
        fitted = [dict(level) for level in levels]
        fitted[0].update(call_latency_s=gamma, latency_s=alpha, bandwidth_bytes_per_s=beta)
        refit = costed(args.phaze, rows, fitted, directory)
        formula = [ring(r, gamma, alpha, beta) for r in rows]
        disagreement = max(abs(a / b - 1) for a, b in zip(refit, formula))
        fit_title = ("fitted on the %d all-reduce rows up to %g MiB: γ %.3g µs per call, α %.3g µs per ring "
                     "step, β %.4g GB/s" % (len(fitting), args.fit_max_mib, 1e6 * gamma,
                                            1e6 * alpha, beta / 1e9))
        fit_lines, _ = summary(rows, refit)
        print(fit_title)
        for line in fit_lines:
            print("  " + line)
        print("  phaze and the ring formula differ by at most %.2g (relative)" % disagreement)
        report += ["", "## " + fit_title, ""] + ["- " + line for line in fit_lines]
        if disagreement > 1e-5:  # phaze prints six significant digits
            sys.exit("phaze's all-reduce is not the ring formula at the fitted values")

    report += ["", "## Every row", "",
               "| collective | GPUs | MiB | measured (µs) | predicted (µs) | error |",
               "|---|---|---|---|---|---|"]
    for r, p, e in zip(rows, seconds, err):
        report.append("| %s | %d | %g | %.1f | %.1f | %+.1f%% |" % (
            r["kind"], r["gpus"], r["bytes"] / MIB, 1e6 * r["seconds"], 1e6 * p, 100 * e))
    if args.report:
        os.makedirs(args.report, exist_ok=True)
        name = os.path.splitext(os.path.basename(args.csv))[0] + ".md"
        with open(os.path.join(args.report, name), "w") as f:
            f.write("\n".join(report) + "\n")
    small = [abs(e) for r, e in zip(rows, err) if r["kind"] == "all_reduce" and r["bytes"] <= 16 * MIB]
    if args.max_mean_error is not None and sum(small) / len(small) > args.max_mean_error:
        print("mean |error| up to 16 MiB above %g" % args.max_mean_error)
        sys.exit(1)


if __name__ == "__main__":
    main()
