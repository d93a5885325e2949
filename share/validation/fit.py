#!/usr/bin/env python3
"""Fits the device model's calibration and NVLink's effective figures on the fitting set of the
measured runs (rows with index mod 4 = 0; validate.py --set train), minimising the mean |relative
error| by coordinate search with shrinking multiplicative steps. With --published, the objective
is the mean of that and of the mean |error| on the fitting rows of published-a100.csv (even
indexes; published.py), so the device is fitted on small single-node runs and on large multi-node
ones at once. Prints the fitted values and the errors on the fitting and the held-out rows of
both; the values go into share/arch/<device>.yaml (calibration) and share/systems/<system>.yaml
(NVLink) by hand, with this script's output in share/validation/fit-output.txt.

  share/validation/fit.py [--phaze build/phaze] [--rounds 5] [--start key=value ...] [--step 1.5]
      [--published] [--fix key ...]
"""
import argparse
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import published  # noqa: E402
import validate  # noqa: E402

START = {"gemm_efficiency": 0.8, "memory_efficiency": 0.8, "kernel_overhead_s": 5e-6,
         "host_kernel_s": 2e-5, "nvlink_latency_s": 3e-6, "nvlink_bandwidth_bytes_per_s": 3e11,
         "ib_bandwidth_bytes_per_s": 2.5e10, "collective_overlap": 0.5}
LIMITS = {"gemm_efficiency": (0.2, 1.0), "memory_efficiency": (0.2, 1.0),
          "kernel_overhead_s": (0.0, 2e-4), "host_kernel_s": (0.0, 1e-3),
          "nvlink_call_latency_s": (0.0, 2e-4), "nvlink_latency_s": (0.0, 2e-4), "nvlink_bandwidth_bytes_per_s": (5e10, 3e11),
          "ib_bandwidth_bytes_per_s": (2e9, 2.5e10), "collective_overlap": (0.0, 1.0)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--phaze", default=os.path.join(validate.ROOT, "build", "phaze"))
    ap.add_argument("--csv", default=os.path.join(validate.HERE, "vtrain-single-node.csv"))
    ap.add_argument("--arch", default="a100-sxm-80gb")
    ap.add_argument("--system", default="dgx-a100")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--start", action="append", default=[], help="key=value: a starting value")
    ap.add_argument("--step", type=float, default=1.5, help="first multiplicative step")
    ap.add_argument("--published", action="store_true",
                    help="also fit on the even rows of published-a100.csv")
    ap.add_argument("--fix", action="append", default=[], help="a parameter left at its start")
    args = ap.parse_args()
    args.micro_batches, args.virtual_stages, args.recompute = [1, 2, 4, 8], [1, 2, 4], "full"
    rows = validate.load_rows(args.csv)
    train, test = validate.select(rows, "train"), validate.select(rows, "test")
    big = published.load_rows(os.path.join(validate.HERE, "published-a100.csv"))
    # Fitting rows: the even rows of the file (Narayanan et al. 1.7B, 7.5B, 39.1B, 145.6B, 529.6B,
    # the GPT-3 175B row and Korthikanti et al.'s four selective + SP rows); the odd rows are held
    # out (the other Narayanan rows and Korthikanti et al.'s four full-recompute rows).
    big_train, big_test = big[0::2], big[1::2]

    def published_summary(subset, params):
        directory = tempfile.mkdtemp(prefix="phaze-fit-")
        setup = validate.write_config(directory, args, params)
        return validate.summary([published.predict(args, directory, setup, r) for r in subset])

    def cost(params):
        c = validate.summary(validate.run(args, train, params))["mean"]
        if args.published:
            c = (c + published_summary(big_train, params)["mean"]) / 2
        return c

    params = dict(START)
    for kv in args.start:
        k, _, v = kv.partition("=")
        params[k] = float(v)
    best = cost(params)
    print("start %s: train mean |error| %.2f%%" % (params, 100 * best), flush=True)
    step = args.step
    for r in range(args.rounds):
        for key in sorted(k for k in params if k not in args.fix):
            for factor in (step, 1 / step):
                while True:
                    lo, hi = LIMITS[key]
                    value = params[key] * factor if params[key] > 0 else (hi - lo) * 0.01
                    trial = dict(params, **{key: min(hi, max(lo, value))})
                    c = cost(trial)
                    if c < best - 5e-4:  # improvements under 0.05 points are noise
                        params, best = trial, c
                        print("  %s = %.4g: %.2f%%" % (key, params[key], 100 * best), flush=True)
                    else:
                        break
        step = 1 + (step - 1) / 2
        print("round %d: %s train %.2f%%" % (r + 1, params, 100 * best), flush=True)
    for name, s in (("single node, train", validate.summary(validate.run(args, train, params))),
                    ("single node, test (held out)", validate.summary(validate.run(args, test, params))),
                    ("published, train (even rows)", published_summary(big_train, params)),
                    ("published, test (odd rows, held out)", published_summary(big_test, params))):
        print("%s: n %d, mean %.2f%%, p90 %.2f%%, max %.2f%%, signed %+.2f%%" % (
            name, s["n"], 100 * s["mean"], 100 * s["p90"], 100 * s["max"], 100 * s["bias"]))
    print("fitted: " + " ".join("--param %s=%.4g" % kv for kv in sorted(params.items())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
