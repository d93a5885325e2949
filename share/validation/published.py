#!/usr/bin/env python3
"""Predicts published multi-node A100 throughputs (Narayanan et al. SC21 Table 1, Megatron-LM's
GPT-3 175B) with `phaze predict` and reports the errors in TFLOP/s per GPU.

For every row of published-a100.csv it writes the GPT workload of the row (FFN 4h, the row's
vocabulary and sequence), and runs `phaze predict` on the device and system with the row's
published t, p, d = GPUs / (t p), global batch, recomputation, and the row's micro-batch size and
interleaving (for Narayanan's Table 1, from the authors' examples/sc21/run_table_1.sh). For a row
that gives neither, the script predicts every micro-batch in --micro-batches (dividing the batch
per data-parallel replica) and every interleaving v in --virtual-stages (dividing the blocks per
stage; 1 = 1F1B) that fits in HBM and keeps phaze's best, which stands for the tuned
configuration the authors ran. The predicted throughput is
counted as the publications count it, Narayanan et al.'s equation (3):

    F = 96 B s l h^2 (1 + s / (6 h) + V / (16 l h))   per iteration,  TFLOP/s per GPU = F / (T n)

  share/validation/published.py [--phaze build/phaze] [--csv FILE] [--arch a100-sxm-80gb]
      [--system dgx-a100] [--param key=value ...] [--micro-batches 1,2,4,8]
      [--virtual-stages 1,2,4] [--report DIR] [--max-error F] [--max-mean-error F]

--param as in validate.py. --report DIR writes published.md there; --max-error / --max-mean-error
turn it into a check on the largest and the mean |error| (exit 1 when exceeded; the CTest
Validation.PublishedA100). Standard library and python3-yaml.
"""
import argparse
import concurrent.futures
import csv
import json
import os
import subprocess
import sys
import tempfile

import validate

HERE = os.path.dirname(os.path.abspath(__file__))


def load_rows(path):
    rows = []
    with open(path) as f:
        for line, r in enumerate(csv.reader(f), 1):
            if not r or r[0].startswith("#"):
                continue
            where = "%s:%d" % (path, line)
            name, v = r[0], [float(x) for x in r[1:11]]
            cell = lambda i: r[i].strip() if len(r) > i else ""
            row = {"name": name, "params_b": v[0], "heads": int(v[1]), "hidden": int(v[2]),
                   "layers": int(v[3]), "seq": int(v[4]), "vocab": int(v[5]), "t": int(v[6]),
                   "p": int(v[7]), "gpus": int(v[8]), "batch": int(v[9]),
                   "micro": int(cell(12)) if cell(12) else None,
                   "v": int(cell(13)) if cell(13) else None,
                   "recompute": cell(14).lower() or "full",
                   "sequence_parallel": cell(15).lower() in ("1", "true", "yes")}
            if row["recompute"] not in ("none", "selective", "full"):
                raise SystemExit("%s: recompute column: expected none, selective or full, found "
                                 "'%s'" % (where, row["recompute"]))
            row["d"] = row["gpus"] // (row["t"] * row["p"])
            if row["d"] * row["t"] * row["p"] != row["gpus"]:
                raise SystemExit("%s: %s: %d GPUs are not a multiple of t·p = %d" %
                                 (where, name, row["gpus"], row["t"] * row["p"]))
            # The publication gives TFLOP/s per GPU (equation (3)) or an iteration time.
            if cell(11):
                row["published"] = float(cell(11))
                row["published_s"] = megatron_flops(row) / (row["published"] * 1e12 * row["gpus"])
            elif cell(16):
                row["published_s"] = float(cell(16))
                row["published"] = megatron_flops(row) / (row["published_s"] * 1e12 * row["gpus"])
            else:
                raise SystemExit("%s: %s: neither TFLOP/s (column 12) nor an iteration time "
                                 "(column 17)" % (where, name))
            rows.append(row)
    return rows


def megatron_flops(row):
    """FLOPs per iteration as the publications count them: with full recomputation Narayanan et
    al. (SC21) equation (3), 96 B s l h^2 (1 + s/6h + V/16lh); otherwise the model FLOPs of
    Korthikanti et al. (their MFU), 72 B s l h^2 (1 + s/6h + V/12lh)."""
    b, s, l, h, v = row["batch"], row["seq"], row["layers"], row["hidden"], row["vocab"]
    if row["recompute"] == "full":
        return 96.0 * b * s * l * h * h * (1 + s / (6.0 * h) + v / (16.0 * l * h))
    return 72.0 * b * s * l * h * h * (1 + s / (6.0 * h) + v / (12.0 * l * h))


def model_file(directory, row):
    path = os.path.join(directory, row["name"] + ".yaml")
    with open(path, "w") as f:
        f.write("name: %s\nfamily: megatron-gpt\nlayers: %d\nhidden: %d\nheads: %d\n"
                "ffn_hidden: %d\nvocab: %d\nmax_positions: %d\nsequence_length: %d\n" %
                (row["name"], row["layers"], row["hidden"], row["heads"], 4 * row["hidden"],
                 row["vocab"], row["seq"], row["seq"]))
    return path


def candidates(row, micro_batches, virtual_stages):
    if row["micro"] is not None:
        micro_batches = [row["micro"]]
    if row["v"] is not None:
        virtual_stages = [row["v"]]
    per_replica = row["batch"] // row["d"]
    blocks_per_stage = row["layers"] // row["p"] if row["layers"] % row["p"] == 0 else 0
    for micro in micro_batches:
        if per_replica % micro:
            continue
        for v in virtual_stages:
            if v > 1 and (row["p"] == 1 or not blocks_per_stage or blocks_per_stage % v
                          or (per_replica // micro) % row["p"]):
                continue  # Megatron's interleaving: blocks split evenly, micro-batches a multiple of p
            yield micro, v


def predict(args, directory, setup, row):
    model = model_file(directory, row)
    best, slowest, tried = None, None, []
    for micro, v in candidates(row, args.micro_batches, args.virtual_stages):
        out = os.path.join(directory, "%s-b%d-v%d.json" % (row["name"], micro, v))
        plan = "%d,%d,%d" % (row["t"], row["p"], row["d"]) + (",%d" % v if v > 1 else "")
        cmd = [args.phaze, "-q", "--config", setup.config, "predict", "--model", model, "--arch",
               setup.arch, "--plan", plan, "--micro-batch", str(micro), "--global-batch",
               str(row["batch"]), "--recompute", row["recompute"], "-o", out]
        if row["sequence_parallel"]:
            cmd.append("--sequence-parallel")
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            tried.append("micro %d v %d: %s" % (micro, v, (r.stderr or r.stdout).strip().splitlines()[-1]))
            continue
        with open(out) as f:
            predicted = json.load(f)["result"]  # the plan's result, as results.json writes one
        result = dict(iteration_s=predicted["time_per_batch_s"],
                      breakdown=predicted["plan"]["breakdown"])
        if best is None or result["iteration_s"] < best["iteration_s"]:
            best = dict(result, micro=micro, v=v)
        if slowest is None or result["iteration_s"] > slowest:
            slowest = result["iteration_s"]
    if best is None:
        return dict(row, predicted=None, error=None, problem="; ".join(tried[:3]))
    tflops = megatron_flops(row) / (best["iteration_s"] * row["gpus"]) / 1e12
    low = megatron_flops(row) / (slowest * row["gpus"]) / 1e12
    return dict(row, predicted=tflops, low=low, error=(tflops - row["published"]) / row["published"],
                iteration_s=best["iteration_s"], micro=best["micro"], v=best["v"],
                given=row["micro"] is not None, breakdown=best["breakdown"])


def table(results):
    lines = ["| run | params (B) | GPUs | t | p | d | batch | recompute | micro-batch, v | "
             "iteration (s): predicted | published | TFLOP/s/GPU: predicted | range over "
             "micro-batch, v | published | error |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        recompute = r["recompute"] + (" + SP" if r["sequence_parallel"] else "")
        head = "| %s | %.1f | %d | %d | %d | %d | %d | %s |" % (
            r["name"], r["params_b"], r["gpus"], r["t"], r["p"], r["d"], r["batch"], recompute)
        if r["predicted"] is None:
            lines.append(head + " — | — | %.2f | failed: %s | — | %.1f | — |" % (
                r["published_s"], r["problem"], r["published"]))
            continue
        lines.append(head + " %d, %d%s | %.2f | %.2f | %.1f | %s | %.1f | %+.1f%% |" % (
            r["micro"], r["v"], " (published)" if r["given"] else " (phaze's best)",
            r["iteration_s"], r["published_s"], r["predicted"],
            "—" if r["given"] else "%.1f–%.1f" % (r["low"], r["predicted"]),
            r["published"], 100 * r["error"]))
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--phaze", default=os.path.join(validate.ROOT, "build", "phaze"))
    ap.add_argument("--csv", default=os.path.join(HERE, "published-a100.csv"))
    ap.add_argument("--arch", default="a100-sxm-80gb")
    ap.add_argument("--system", default="dgx-a100")
    ap.add_argument("--param", action="append", default=[], help="key=value, as in validate.py")
    ap.add_argument("--micro-batches", default="1,2,4,8")
    ap.add_argument("--virtual-stages", default="1,2,4")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--report", help="directory for published.md")
    ap.add_argument("--residuals", help="CSV file the rows are appended to (validate.py's "
                    "columns; written with a header when it does not exist)")
    ap.add_argument("--max-error", type=float, help="bound on the largest |error|")
    ap.add_argument("--max-mean-error", type=float, help="bound on the mean |error|")
    args = ap.parse_args()
    args.micro_batches = [int(x) for x in args.micro_batches.split(",")]
    args.virtual_stages = [int(x) for x in args.virtual_stages.split(",")]
    params = {k: float(v) for k, _, v in (kv.partition("=") for kv in args.param)}
    directory = tempfile.mkdtemp(prefix="phaze-published-")
    setup = validate.write_config(directory, args, params)
    rows = load_rows(args.csv)
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        results = list(pool.map(lambda r: predict(args, directory, setup, r), rows))
    s = validate.summary(results)
    text = table(results)
    headline = ("%s: n %d, predicted %d, mean |error| %.2f%%, max %.2f%%, mean signed error %+.2f%%"
                % (os.path.basename(args.csv), s["n"], s["predicted"], 100 * s["mean"],
                   100 * s["max"], 100 * s["bias"]))
    print(headline)
    print(text)
    if args.residuals:
        rows_out = [dict(r, measured_s=r["published_s"], predicted_s=r["iteration_s"])
                    for r in results if r["predicted"] is not None]
        validate.write_residuals(args.residuals, os.path.basename(args.csv), rows_out,
                                 append=os.path.exists(args.residuals),
                                 device=validate.device_name(args.arch))
    if args.report:
        os.makedirs(args.report, exist_ok=True)
        with open(os.path.join(args.report, "published.md"), "w") as f:
            f.write("# Validation: published multi-node A100 throughputs\n\n")
            f.write("Generated by `share/validation/published.py --report …` with `--arch %s "
                    "--system %s`%s. TFLOP/s per GPU counted with Narayanan et al.'s equation (3); "
                    "micro-batch and interleaving as each row gives them, else phaze's best "
                    "over %s × v %s.\n\n%s\n\n%s\n" % (
                        args.arch, args.system, (" and " + ", ".join(args.param)) if args.param else "",
                        args.micro_batches, args.virtual_stages, headline, text))
    return validate.check(s, max=args.max_error, mean=args.max_mean_error)

if __name__ == "__main__":
    sys.exit(main())
