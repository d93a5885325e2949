#!/usr/bin/env python3
"""The LM head's GEMMs on silicon, padded and unpadded, and the fit of unaligned_gemm_efficiency.

    python3 share/validation/kernels/lmhead.py [--arch h200-sxm-141gb] [--report DIR]

Reads measure.py's lmhead section (share/validation/kernels/h200-sxm-141gb-lmhead.csv: FP16 head
GEMMs at vocabularies 50,304, 50,257 — GPT-2's unpadded, odd —, 25,216 and 12,672, hidden 1,024
and 2,048, 1,024 and 4,096 tokens, forward, input gradient and weight gradient) and costs each
GEMM with `phaze estimate` on the preset. DeviceTechnology::unaligned_gemm_efficiency, the share
of the tensor peak a weight GEMM with an odd n or k reaches, is fitted on every other unpadded
row (a grid, minimising the mean |log(predicted / measured)|); the rest are held out. The padded
rows are the preset's own calibration, unfitted here. `--report DIR` writes
DIR/h200-sxm-141gb-lmhead.md. Python 3 standard library; needs build/phaze (or PHAZE).
"""
import argparse
import json
import math
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
PHAZE = os.environ.get("PHAZE", os.path.join(ROOT, "build", "phaze"))
sys.path.insert(0, os.path.dirname(HERE))
import commented_csv  # noqa: E402


def estimate(arch, rows, value, work):
    ops = os.path.join(work, "ops.csv")
    config = os.path.join(work, "run.yaml")
    out = os.path.join(work, "estimate.json")
    with open(ops, "w") as f:
        f.write("\n".join("gemm,1,%s,%s,%s" % (r["m"], r["n"], r["k"]) for r in rows) + "\n")
    with open(config, "w") as f:
        f.write("estimator: {name: device, params: {unaligned_gemm_efficiency: %r}}\n" % value)
    subprocess.run([PHAZE, "-q", "--config", config, "-o", out, "estimate", "--arch", arch,
                    "--ops-file", ops], check=True, capture_output=True, text=True)
    with open(out) as f:
        return [r["all_cores_s"] for r in json.load(f)["results"]]


def mean_log(rows, predicted):
    return sum(abs(math.log(p / float(r["seconds"]))) for r, p in zip(rows, predicted)) / len(rows)


def stats(rows, predicted):
    errors = [p / float(r["seconds"]) - 1 for r, p in zip(rows, predicted)]
    return (100 * sum(abs(e) for e in errors) / len(errors), 100 * sum(errors) / len(errors),
            len(errors))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--arch", default="h200-sxm-141gb")
    parser.add_argument("--report", help="write DIR/h200-sxm-141gb-lmhead.md")
    args = parser.parse_args()
    _, rows = commented_csv.read(os.path.join(HERE, "h200-sxm-141gb-lmhead.csv"))
    gemms = [r for r in rows if r["section"] == "lmhead" and r["flops"]]
    odd = [r for r in gemms if any(int(r[d]) % 2 for d in ("n", "k"))]
    fitting, held = odd[0::2], odd[1::2]
    with tempfile.TemporaryDirectory() as work:
        grid = [round(0.05 + 0.005 * i, 3) for i in range(51)]
        best = min(grid, key=lambda v: mean_log(fitting, estimate(args.arch, fitting, v, work)))
        predicted = estimate(args.arch, gemms, best, work)
    out = ["# The LM head's GEMMs on an H200: `lmhead.py`", "",
           "Preset `%s`; unaligned_gemm_efficiency fitted on every other odd-vocabulary row: "
           "**%.3f**. Regenerate with `python3 share/validation/kernels/lmhead.py --report "
           "share/validation/kernels`.\n" % (args.arch, best),
           "| rows | n | mean abs error | mean signed error |", "|---|---|---|---|"]
    by = {id(r): p for r, p in zip(gemms, predicted)}
    for name, group in (("unaligned, fitting", fitting), ("unaligned, held out", held),
                        ("aligned (the preset's calibration)", [r for r in gemms if r not in odd])):
        mean_abs, signed, n = stats(group, [by[id(r)] for r in group])
        out.append("| %s | %d | %.1f%% | %+.1f%% |" % (name, n, mean_abs, signed))
    out += ["", "| GEMM | m | n | k | measured ms | TFLOP/s | phaze ms | error |",
            "|---|---|---|---|---|---|---|---|"]
    for r in gemms:
        s, p = float(r["seconds"]), by[id(r)]
        out.append("| %s | %s | %s | %s | %.3f | %.0f | %.3f | %+.1f%% |" % (
            r["kernel"], r["m"], r["n"], r["k"], s * 1e3, float(r["flops"]) / s / 1e12, p * 1e3,
            100 * (p / s - 1)))
    text = "\n".join(out) + "\n"
    print(text)
    if args.report:
        with open(os.path.join(args.report, "h200-sxm-141gb-lmhead.md"), "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
