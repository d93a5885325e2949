#!/usr/bin/env python3
"""Predicts measured training runs with `phaze predict` and reports the errors.

For every row of a measured-runs CSV (vTrain's format: GPUs, global batch, micro batch, hidden,
heads, layers, sequence, t, d, p, iteration ms) it writes the workload of the row's
hyperparameters (a Megatron GPT: FFN 4h, GPT-2 vocabulary padded to a multiple of 128·t, learned
positions), runs `phaze predict` with the row's exact plan and full recomputation on the given
device and system, and compares the predicted iteration time with the measured one: n, mean
|error|, p90, max and mean signed error, the same by shape (t, p, nodes: where a class of runs is
predicted too fast or too slow) and the five worst rows.

  share/validation/validate.py [--phaze build/phaze] [--csv FILE] [--arch a100-sxm-80gb]
      [--system dgx-a100] [--set train|test|all] [--param key=value ...] [--jobs 2]
      [--report DIR] [--residuals FILE] [--max-mean-error F] [--max-p90-error F]

Two optional columns after vTrain's eleven: the row's recompute (none|selective|full; empty: the
--recompute option, full by default) and sequence parallelism (1/true/yes).
--set: rows whose index mod 4 is 0 are the fitting set (train), the others are held out (test).
--param overrides the device estimator's calibration (framework/include/phaze/estimate/device_model.hpp), or the network
levels' effective figures: nvlink_call_latency_s, nvlink_latency_s, nvlink_bandwidth_bytes_per_s
(level 0), ib_call_latency_s, ib_latency_s, ib_bandwidth_bytes_per_s (level 1), or the architecture's collective_overlap and host_kernel_s.
--report DIR writes validation.md and scatter.svg there; --residuals FILE every predicted row's
plan and error as CSV (RESIDUAL_COLUMNS: what `phaze plan` reads for its error bands, in
share/validation/residuals.csv). --max-mean-error / --max-p90-error turn it
into a check (exit 1 when exceeded); the CTest uses them. Standard library and python3-yaml.
"""
import argparse
import collections
import concurrent.futures
import csv
import json
import os
import subprocess
import sys
import tempfile

import yaml_files  # share/validation/yaml_files.py, beside this script

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def load_rows(path):
    rows = []
    with open(path) as f:
        for i, r in enumerate(csv.reader(f)):
            if not r or r[0].startswith("#"):
                continue
            v = [float(x) for x in r[:11]]
            extra = [x.strip().lower() for x in r[11:13]] + ["", ""]
            if extra[0] not in ("", "none", "selective", "full"):
                raise SystemExit("%s:%d: recompute column: expected none, selective or full, found "
                                 "'%s'" % (path, i + 1, extra[0]))
            rows.append({"index": len(rows), "gpus": int(v[0]), "batch": int(v[1]),
                         "micro": int(v[2]), "hidden": int(v[3]), "heads": int(v[4]),
                         "layers": int(v[5]), "seq": int(v[6]), "t": int(v[7]), "d": int(v[8]),
                         "p": int(v[9]), "measured_s": v[10] / 1000.0,
                         "recompute": extra[0] or None,
                         "sequence_parallel": extra[1] in ("1", "true", "yes")})
    return rows


def padded_vocab(t, vocab=50257):
    unit = 128 * t  # Megatron-LM pads the vocabulary to a multiple of 128 · t
    return (vocab + unit - 1) // unit * unit


def model_file(directory, row):
    name = "gpt-h%d-a%d-l%d-s%d-t%d" % (row["hidden"], row["heads"], row["layers"], row["seq"], row["t"])
    path = os.path.join(directory, name + ".yaml")
    if not os.path.exists(path):
        # Written under a name of its own and renamed into place: another thread's row of the
        # same shape must never find the file created but not yet written.
        fd, partial = tempfile.mkstemp(dir=directory, suffix=".partial")
        with os.fdopen(fd, "w") as f:
            f.write("name: %s\nfamily: megatron-gpt\nlayers: %d\nhidden: %d\nheads: %d\n"
                    "ffn_hidden: %d\nvocab: %d\nmax_positions: %d\nsequence_length: %d\n" %
                    (name, row["layers"], row["hidden"], row["heads"], 4 * row["hidden"],
                     padded_vocab(row["t"]), row["seq"], row["seq"]))
        os.replace(partial, path)
    return path


def predict(args, directory, setup, row):
    out = os.path.join(directory, "row%d.json" % row["index"])
    cmd = [args.phaze, "-q", "--config", setup.config, "predict", "--model",
           model_file(directory, row), "--arch", setup.arch, "--plan", "%d,%d,%d" % (row["t"], row["p"], row["d"]),
           "--micro-batch", str(row["micro"]), "--global-batch", str(row["batch"]),
           "--recompute", row["recompute"] or args.recompute, "-o", out]
    if row["sequence_parallel"]:
        cmd.append("--sequence-parallel")
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        return dict(row, predicted_s=None, error=None, problem=(r.stderr or r.stdout).strip())
    with open(out) as f:
        predicted = json.load(f)["result"]["time_per_batch_s"]
    return dict(row, predicted_s=predicted, error=(predicted - row["measured_s"]) / row["measured_s"])


RESIDUAL_COLUMNS = ["source", "gpus", "t", "p", "d", "v", "micro_batch", "recompute",
                    "sequence_parallel", "measured_s", "predicted_s", "error", "device", "cp"]


def device_name(arch):
    """The preset name of --arch (a name, or a file whose stem is one)."""
    return os.path.splitext(os.path.basename(arch))[0]


def write_residuals(path, source, results, append=False, device=None):
    """The rows predicted, one per line: the plan, measured and predicted seconds per iteration,
    the signed relative error of the time (predicted / measured − 1), the device preset the run
    was measured on (`device`, else each row's own "arch") and its context-parallel width cp (of
    t, the whole width; 1 when the row has none); `phaze plan` draws its error bands from the runs
    of the plan's device first, with context parallelism or without as the plan."""
    with open(path, "a" if append else "w", newline="") as f:
        w = csv.writer(f)
        if not append:
            w.writerow(RESIDUAL_COLUMNS)
        for r in results:
            if r.get("predicted_s") is None:
                continue
            w.writerow([source, r["gpus"], r["t"], r["p"], r["d"], r.get("v", 1), r["micro"],
                        r["recompute"], int(bool(r["sequence_parallel"])), "%.6g" % r["measured_s"],
                        "%.6g" % r["predicted_s"], "%.5f" % (r["predicted_s"] / r["measured_s"] - 1),
                        device or r["arch"], r.get("cp") or 1])


def system_levels(system):
    """The levels of share/systems/SYSTEM.yaml (or of the file SYSTEM), as dicts."""
    path = system if os.path.exists(system) else os.path.join(ROOT, "share", "systems", system + ".yaml")
    return yaml_files.load(path)["levels"]


# Parameters of the network the fit may set: the effective figures of the node's level (NVLink,
# level 0) and of the level between nodes (InfiniBand, level 1), as (level index, field).
NETWORK_PARAMS = {"nvlink_call_latency_s": (0, "call_latency_s"),
                  "nvlink_latency_s": (0, "latency_s"),
                  "nvlink_bandwidth_bytes_per_s": (0, "bandwidth_bytes_per_s"),
                  "ib_call_latency_s": (1, "call_latency_s"),
                  "ib_latency_s": (1, "latency_s"),
                  "ib_bandwidth_bytes_per_s": (1, "bandwidth_bytes_per_s")}


# Parameters of the architecture the fit may set (fields of share/arch/<device>.yaml).
ARCH_PARAMS = ("collective_overlap", "host_kernel_s")

# How the measured software trained, as run-config training settings. Every run in the suite is
# Megatron (Megatron-LM or Megatron-DeepSpeed) with --fp16 and without
# --accumulate-allreduce-grads-in-fp32 (examples/sc21/ and examples/gpt3/ in Megatron-LM; the
# vTrain runs' "mixed precision"), so its gradient buffer and its data-parallel and tied-embedding
# reductions are fp16: 2 bytes per parameter, not the 4 of fp32 main gradients. The rest is the
# stack's recipe (share/recipes/): the published runs are Megatron-LM's (megatron-lm-2021:
# Megatron's fused softmax and its shape rules, the reduction after backward); vTrain's are
# Megatron-DeepSpeed's (megatron-deepspeed-2023: the same, with DeepSpeed's pipeline engine, whose
# every send blocks its sender).
TRAINING = {"recipe": "megatron-lm-2021", "gradient_reduction_precision": "fp16"}
VTRAIN_TRAINING = dict(TRAINING, recipe="megatron-deepspeed-2023")

Setup = collections.namedtuple("Setup", "config arch")


def write_config(directory, args, params, training=None):
    """A Setup in DIRECTORY: a run config with the device estimator's PARAMS calibration overrides,
    the training settings TRAINING (default: the suite's TRAINING) and the levels of args.system
    with the NETWORK_PARAMS overrides, and the architecture args.arch, copied with the
    ARCH_PARAMS overrides when PARAMS has any."""
    training = TRAINING if training is None else training
    config = os.path.join(directory, "run.yaml")
    estimator = {k: v for k, v in params.items() if k not in NETWORK_PARAMS and k not in ARCH_PARAMS}
    levels = system_levels(args.system)
    for key, (level, field) in NETWORK_PARAMS.items():
        if key in params:
            levels[level][field] = float(params[key])
    with open(config, "w") as f:
        body = ", ".join("%s: %r" % kv for kv in sorted(estimator.items()))
        f.write("estimator: {name: device, params: {%s}}\ntraining: {%s}\ncluster:\n  levels:\n" %
                (body, ", ".join("%s: %s" % kv for kv in sorted(training.items()))))
        for level in levels:
            f.write("    - %s\n" % yaml_files.flow_map(level))
    arch = args.arch
    overrides = {k: params[k] for k in ARCH_PARAMS if k in params}
    if overrides:
        source = arch if os.path.exists(arch) else os.path.join(ROOT, "share", "arch", arch + ".yaml")
        document = yaml_files.load(source)
        document.update(sorted(overrides.items()))
        arch = os.path.join(directory, "arch.yaml")
        yaml_files.dump(document, arch)
    return Setup(config, arch)


def run(args, rows, params):
    directory = tempfile.mkdtemp(prefix="phaze-validation-")
    setup = write_config(directory, args, params, VTRAIN_TRAINING)
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        return list(pool.map(lambda r: predict(args, directory, setup, r), rows))


def percentile(values, q):
    s = sorted(values)
    if not s:
        return float("nan")
    k = min(len(s) - 1, max(0, int(round(q * (len(s) - 1)))))
    return s[k]


def summary(results):
    ok = [r for r in results if r["error"] is not None]
    errors = [abs(r["error"]) for r in ok]
    return {"n": len(results), "predicted": len(ok), "failed": len(results) - len(ok),
            "mean": sum(errors) / len(errors) if errors else float("nan"),
            "p90": percentile(errors, 0.9), "max": max(errors) if errors else float("nan"),
            "bias": sum(r["error"] for r in ok) / len(ok) if ok else float("nan")}


def by_shape(results, node_size):
    """The predicted rows grouped by (t, p, nodes), nodes = ⌈GPUs / node_size⌉: [(t, p, nodes, n,
    mean |error|, mean signed error)], sorted. Structure in the errors (a class of shapes
    predicted too fast or too slow) shows here before it shows in the mean."""
    groups = collections.defaultdict(list)
    for r in results:
        if r["error"] is not None:
            nodes = -(-r["gpus"] // node_size)
            groups[(r["t"], r["p"], nodes)].append(r["error"])
    return [(t, p, nodes, len(e), sum(abs(x) for x in e) / len(e), sum(e) / len(e))
            for (t, p, nodes), e in sorted(groups.items())]


def check(s, **bounds):
    """Exit status of a check: 1 when a row failed or a figure of summary S exceeds its bound
    (bounds by summary key: mean=, p90=, max=; None = unchecked), each failure printed."""
    ok = True
    for key, bound in bounds.items():
        if bound is not None and not s[key] <= bound:
            print("FAIL: %s |error| %.4f > bound %.4f" % (key, s[key], bound))
            ok = False
    if s["failed"]:
        print("FAIL: %d rows could not be predicted" % s["failed"])
        ok = False
    return 0 if ok else 1


def select(rows, which):
    if which == "train":
        return [r for r in rows if r["index"] % 4 == 0]
    if which == "test":
        return [r for r in rows if r["index"] % 4 != 0]
    return rows


def describe(r):
    return ("h %d, l %d, GPUs %d, t %d d %d p %d, micro %d, batch %d: measured %.1f ms, predicted %s"
            % (r["hidden"], r["layers"], r["gpus"], r["t"], r["d"], r["p"], r["micro"], r["batch"],
               1000 * r["measured_s"],
               "%.1f ms (%+.1f%%)" % (1000 * r["predicted_s"], 100 * r["error"])
               if r["predicted_s"] is not None else "failed: " + r.get("problem", "")))


def scatter_svg(results, path):
    ok = [r for r in results if r["predicted_s"] is not None]
    hi = max(max(r["measured_s"] for r in ok), max(r["predicted_s"] for r in ok)) * 1.05
    size, pad = 480, 50
    def xy(m, p):
        return pad + (size - 2 * pad) * m / hi, size - pad - (size - 2 * pad) * p / hi
    parts = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" '
             'font-size="12">' % (size, size),
             '<rect width="100%" height="100%" fill="white"/>']
    x0, y0 = xy(0, 0)
    x1, y1 = xy(hi, hi)
    parts.append('<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#888"/>' % (x0, y0, x1, y1))
    for f in (0.9, 1.1):
        xa, ya = xy(0, 0)
        xb, yb = xy(hi, hi * f)
        parts.append('<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#ccc" stroke-dasharray="4"/>'
                     % (xa, ya, xb, yb))
    for r in ok:
        x, y = xy(r["measured_s"], r["predicted_s"])
        parts.append('<circle cx="%.1f" cy="%.1f" r="2" fill="#1f77b4" fill-opacity="0.5"/>' % (x, y))
    parts.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>' % (pad, size - pad, size - pad, size - pad))
    parts.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>' % (pad, pad, pad, size - pad))
    parts.append('<text x="%d" y="%d" text-anchor="middle">measured iteration (s, 0–%.2f)</text>'
                 % (size / 2, size - 15, hi))
    parts.append('<text x="15" y="%d" transform="rotate(-90 15 %d)" text-anchor="middle">predicted '
                 'iteration (s)</text>' % (size / 2, size / 2))
    parts.append('<text x="%d" y="30" text-anchor="middle">phaze predict vs measured (diagonal; '
                 'dashed ±10%%)</text>' % (size / 2))
    parts.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(parts) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--phaze", default=os.path.join(ROOT, "build", "phaze"))
    ap.add_argument("--csv", default=os.path.join(HERE, "vtrain-single-node.csv"))
    ap.add_argument("--arch", default="a100-sxm-80gb")
    ap.add_argument("--system", default="dgx-a100")
    ap.add_argument("--set", default="all", choices=["train", "test", "all"])
    ap.add_argument("--recompute", default="full", choices=["none", "selective", "full"],
                    help="the recomputation the measured runs are predicted with")
    ap.add_argument("--param", action="append", default=[], help="key=value (device estimator)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--report", help="directory for validation.md and scatter.svg")
    ap.add_argument("--residuals", help="CSV file for every predicted row's plan and error")
    ap.add_argument("--max-mean-error", type=float)
    ap.add_argument("--max-p90-error", type=float)
    args = ap.parse_args()
    params = {}
    for kv in args.param:
        k, _, v = kv.partition("=")
        params[k] = float(v)
    rows = load_rows(args.csv)
    results = run(args, select(rows, args.set), params)
    s = summary(results)
    worst = sorted((r for r in results if r["error"] is not None), key=lambda r: -abs(r["error"]))[:5]
    failed = [r for r in results if r["error"] is None]
    print("%s (%s set): n %d, predicted %d, mean |error| %.2f%%, p90 %.2f%%, max %.2f%%, mean "
          "signed error %+.2f%%" % (os.path.basename(args.csv), args.set, s["n"], s["predicted"],
                                    100 * s["mean"], 100 * s["p90"], 100 * s["max"], 100 * s["bias"]))
    node_size = int(system_levels(args.system)[0].get("size", 1))
    shapes = by_shape(results, node_size)
    print("by shape (t, p, nodes: n, mean |error|, mean signed): " + "; ".join(
        "%d, %d, %d: %d, %.1f%%, %+.1f%%" % (t, p, nodes, n, 100 * mean, 100 * bias)
        for t, p, nodes, n, mean, bias in shapes))
    print("five worst rows:")
    for r in worst:
        print("  " + describe(r))
    for r in failed[:5]:
        print("  " + describe(r))
    if args.residuals:
        for r in results:
            r["recompute"] = r["recompute"] or args.recompute
        write_residuals(args.residuals, os.path.basename(args.csv), results,
                        device=device_name(args.arch))
    if args.report:
        os.makedirs(args.report, exist_ok=True)
        scatter_svg(results, os.path.join(args.report, "scatter.svg"))
        with open(os.path.join(args.report, "validation.md"), "w") as f:
            f.write("# Validation: phaze predict against measured runs\n\n")
            f.write("Generated by `share/validation/validate.py --set %s --report …` on %s with "
                    "`--arch %s --system %s`%s.\n\n" % (
                        args.set, os.path.basename(args.csv), args.arch, args.system,
                        (" and " + ", ".join(args.param)) if args.param else ""))
            f.write("| set | n | predicted | mean abs error | p90 | max | mean signed error |\n"
                    "|---|---|---|---|---|---|---|\n")
            f.write("| %s | %d | %d | %.2f%% | %.2f%% | %.2f%% | %+.2f%% |\n\n" % (
                args.set, s["n"], s["predicted"], 100 * s["mean"], 100 * s["p90"], 100 * s["max"],
                100 * s["bias"]))
            for name, sub in (("train (index mod 4 = 0, fitted on)", [r for r in results if r["index"] % 4 == 0]),
                              ("test (held out)", [r for r in results if r["index"] % 4 != 0])):
                if sub:
                    t = summary(sub)
                    f.write("- %s: n %d, mean %.2f%%, p90 %.2f%%, max %.2f%%\n" % (
                        name, t["n"], 100 * t["mean"], 100 * t["p90"], 100 * t["max"]))
            f.write("\nBy shape (nodes of %d GPUs; + = predicted slower than measured):\n\n"
                    "| t | p | nodes | n | mean \\|error\\| | mean signed error |\n"
                    "|---|---|---|---|---|---|\n" % node_size)
            for t, p, nodes, n, mean, bias in shapes:
                f.write("| %d | %d | %d | %d | %.2f%% | %+.2f%% |\n" % (t, p, nodes, n, 100 * mean,
                                                                       100 * bias))
            f.write("\nFive worst rows:\n\n")
            for r in worst:
                f.write("- " + describe(r) + "\n")
            f.write("\n![predicted vs measured](scatter.svg)\n")
    return check(s, mean=args.max_mean_error, p90=args.max_p90_error)

if __name__ == "__main__":
    sys.exit(main())
