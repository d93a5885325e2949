#!/usr/bin/env python3
"""phaze's fused attention against attention kernels measured on one GPU, and its fit.

    python3 share/validation/kernels/attention.py --arch h200-sxm-141gb \
        --kernels share/validation/kernels/h200-sxm-141gb-attention.csv [--fit] [--report DIR]

Every attention row of measure.py's CSV (section `attention`: a backend, forward or forward plus
backward, causal or full mask, batch·heads × sequence × head dimension) is costed by `phaze
schedule --attention fused` on a one-block model of that shape: the durations of the attention
kernel's ops (scores, softmax, context, the backward's recomputed scores and softmax and their
gradients: graph/attention_kernel.hpp) are summed, forward plus backward for `fwd_bwd` rows.
Grouped-query rows are left out (phaze costs the core per query head).

--fit fits three parameters on the backend's fitting rows (every other shape, in file order; the
rest are held out and reported apart; rows measured under 300 µs are reported, not fitted: eager
calls that short are bound by the host's launches, which phaze charges apart, host_kernel_s),
minimising the mean |log(predicted / measured)|:
  attention_efficiency           the fraction of the tensor peak the forward kernel's GEMMs
                                 reach (the preset's `calibration:`)
  attention_backward_efficiency  the same for the backward kernel's
  flash_softmax                  lane cycles per score of the online softmax (vector_cycles.cpp)
Each pass's time is linear in 1/efficiency and in the cycles (three phaze runs a row give the
coefficients); the grid search uses them, and the fitted values are then run for real.
Python 3 standard library; needs build/phaze (or PHAZE).
"""
import argparse
import math
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import commented_csv  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
PHAZE = os.environ.get("PHAZE", os.path.join(ROOT, "build", "phaze"))

CORE = ("attn.scores", "attn.softmax", "attn.context", "attn.mask", "attn.scale",
        "attn.dropout", "flash:")
ROW = re.compile(r"^\s+(\S+)\s+\S+\s+\S+\s+([0-9.]+)\s+([0-9.]+)\s")


def load(path, backend):
    comments, table = commented_csv.read(path)
    rows = []
    for r in table:
        if r["section"] != "attention":
            continue
        name, mode, mask = r["kernel"].split(":")
        if name != backend or r["row"] != r["batch"]:
            continue
        dropout = re.search(r"dropout ([0-9.]+)", r.get("note") or "")
        rows.append({"mode": mode, "causal": mask == "causal", "bh": int(r["batch"]),
                     "s": int(r["m"]), "d": int(r["k"]), "seconds": float(r["seconds"]),
                     "flops": float(r["flops"]),
                     "dropout": float(dropout.group(1)) if dropout else 0.0})
    return comments, rows


def model_yaml(work, bh, s, d, causal, dropout):
    path = os.path.join(work, "attn-%d-%d-%d-%s-%g.yaml" % (bh, s, d, causal, dropout))
    with open(path, "w") as f:
        f.write("name: attention\nfamily: %s\nlayers: 1\nhidden: %d\nheads: %d\nvocab: 256\n"
                "max_positions: %d\nsequence_length: %d\ncausal: %s\ndropout: %g\n"
                % ("megatron-gpt" if causal else "encoder", bh * d, bh, s, s,
                   "true" if causal else "false", dropout))
    return path


def config_yaml(work, forward, backward, cycles):
    path = os.path.join(work, "run-%r-%r-%r.yaml" % (forward, backward, cycles))
    with open(path, "w") as f:
        f.write("estimator:\n  name: device\n  params:\n    attention_efficiency: %r\n"
                "    attention_backward_efficiency: %r\n"
                "    vector_cycles: {flash_softmax: %r}\n" % (forward, backward, cycles))
    return path


def attention_seconds(model, arch, config, passes):
    total = 0.0
    for p in passes:
        out = subprocess.run([PHAZE, "schedule", "--model", model, "--arch", arch, "--attention",
                              "fused", "--pass", p, "--config", config, "-q"],
                             capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            m = ROW.match(line)
            if m and m.group(1).startswith(CORE):
                total += float(m.group(3)) * 1e-6
    return total


def predict(rows, arch, work, forward, backward, cycles):
    """(forward seconds, backward seconds) of each row's attention (0 backward for `fwd`)."""
    config = config_yaml(work, forward, backward, cycles)
    out = []
    for r in rows:
        model = model_yaml(work, r["bh"], r["s"], r["d"], r["causal"], r["dropout"])
        out.append((attention_seconds(model, arch, config, ("forward",)),
                    attention_seconds(model, arch, config, ("backward",))
                    if r["mode"] == "fwd_bwd" else 0.0))
    return out


FIT_FLOOR_S = 300e-6


def stats(rows, predicted):
    errs = [p / r["seconds"] - 1 for r, p in zip(rows, predicted)]
    if not errs:
        return "—", "—", "—", 0
    return ("%.1f%%" % (100 * sum(abs(e) for e in errs) / len(errs)),
            "%.1f%%" % (100 * max(abs(e) for e in errs)),
            "%+.1f%%" % (100 * sum(errs) / len(errs)), len(errs))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--arch", required=True)
    parser.add_argument("--kernels", required=True, help="measure.py's CSV")
    parser.add_argument("--backend", default="cudnn_attention",
                        help="the measured kernel to compare with (default: cudnn_attention, "
                        "what Transformer Engine runs; flash_attention: FlashAttention-2)")
    parser.add_argument("--fit", action="store_true")
    parser.add_argument("--cycles", type=float, default=None,
                        help="flash_softmax cycles without --fit (default: the table's)")
    parser.add_argument("--report", help="write DIR/<kernels name>-<backend>.md")
    args = parser.parse_args()

    comments, rows = load(args.kernels, args.backend)
    shapes = []
    for r in rows:
        key = (r["bh"], r["s"], r["d"])
        if key not in shapes:
            shapes.append(key)
    for r in rows:
        r["fitting"] = shapes.index((r["bh"], r["s"], r["d"])) % 2 == 0
    preset = open(os.path.join(ROOT, "share", "arch", args.arch + ".yaml")).read()
    m = re.search(r"\battention_efficiency:\s*([0-9.]+)", preset)
    forward = float(m.group(1)) if m else 0.72
    m = re.search(r"attention_backward_efficiency:\s*([0-9.]+)", preset)
    backward = float(m.group(1)) if m else 0.6
    m = re.search(r'\{"flash_softmax", ([0-9.]+)\}',
                  open(os.path.join(ROOT, "framework", "src", "estimate",
                                    "vector_cycles.cpp")).read())
    cycles = args.cycles if args.cycles is not None else float(m.group(1))
    log = []
    with tempfile.TemporaryDirectory() as work:
        if args.fit:
            e0, e1, c0, c1 = 0.6, 0.9, 8.0, 16.0
            t00 = predict(rows, args.arch, work, e0, e0, c0)
            t10 = predict(rows, args.arch, work, e1, e1, c0)
            t01 = predict(rows, args.arch, work, e0, e0, c1)
            coef = []  # per row and pass: time = a / efficiency + b · cycles + c
            for x, y, z in zip(t00, t10, t01):
                per_pass = []
                for i in range(2):
                    a = (x[i] - y[i]) / (1 / e0 - 1 / e1)
                    b = (z[i] - x[i]) / (c1 - c0)
                    per_pass.append((a, b, x[i] - a / e0 - b * c0))
                coef.append(per_pass)
            fit_rows = [(k, r) for k, r in zip(coef, rows)
                        if r["fitting"] and r["seconds"] >= FIT_FLOOR_S]
            best = None
            for ef in [0.5 + 0.005 * i for i in range(101)]:
                for eb in [0.3 + 0.005 * i for i in range(141)]:
                    if eb > 1:
                        break
                    for c in [0.5 * j for j in range(81)]:
                        err = 0.0
                        for (f, b), r in fit_rows:
                            t = f[0] / ef + f[1] * c + f[2] + b[0] / eb + b[1] * c + b[2]
                            err += abs(math.log(t / r["seconds"]))
                        if best is None or err < best[0]:
                            best = (err, ef, eb, c)
            _, forward, backward, cycles = best
            log.append("fit: attention_efficiency %.3f, attention_backward_efficiency %.3f, "
                       "flash_softmax %.1f cycles (mean |log error| %.4f on %d fitting rows of "
                       "%.0f µs or more)" % (forward, backward, cycles, best[0] / len(fit_rows),
                                             len(fit_rows), FIT_FLOOR_S * 1e6))
            print(log[-1], flush=True)
        predicted = [f + b for f, b in predict(rows, args.arch, work, forward, backward, cycles)]

    table = ["| rows | n | mean abs error | max | mean signed |", "|---|---|---|---|---|"]
    big = lambda r: r["seconds"] >= FIT_FLOOR_S  # noqa: E731
    for label, sel in (("forward, fitting", lambda r: r["mode"] == "fwd" and r["fitting"]),
                       ("forward, held out", lambda r: r["mode"] == "fwd" and not r["fitting"]),
                       ("forward + backward, fitting",
                        lambda r: r["mode"] == "fwd_bwd" and r["fitting"]),
                       ("forward + backward, held out",
                        lambda r: r["mode"] == "fwd_bwd" and not r["fitting"]),
                       ("%.0f µs or more, fitting" % (FIT_FLOOR_S * 1e6),
                        lambda r: big(r) and r["fitting"]),
                       ("%.0f µs or more, held out" % (FIT_FLOOR_S * 1e6),
                        lambda r: big(r) and not r["fitting"]),
                       ("under %.0f µs (host-bound eager calls)" % (FIT_FLOOR_S * 1e6),
                        lambda r: not big(r)),
                       ("all", lambda r: True)):
        pairs = [(r, p) for r, p in zip(rows, predicted) if sel(r)]
        mean, worst, signed, n = stats([r for r, _ in pairs], [p for _, p in pairs])
        table.append("| %s | %d | %s | %s | %s |" % (label, n, mean, worst, signed))
    print("\n".join(table))
    detail = ["| mode | mask | batch·heads | sequence | head dim | measured µs | phaze µs | error "
              "| measured TFLOP/s | shape |", "|---|---|---|---|---|---|---|---|---|---|"]
    for r, p in zip(rows, predicted):
        detail.append("| %s | %s | %d | %d | %d | %.1f | %.1f | %+.1f%% | %.0f | %s |" % (
            r["mode"], "causal" if r["causal"] else "full", r["bh"], r["s"], r["d"],
            r["seconds"] * 1e6, p * 1e6, 100 * (p / r["seconds"] - 1),
            r["flops"] / r["seconds"] / 1e12, "yes" if r["fitting"] else "held out"))
    if not args.report:
        print("\n".join(detail))
        return
    name = "%s-%s" % (os.path.splitext(os.path.basename(args.kernels))[0], args.backend)
    md = ["# Fused attention measured on one GPU against phaze: %s" % name, "",
          "Generated by `share/validation/kernels/attention.py --arch %s --kernels %s --backend "
          "%s%s`. Measured by measure.py's attention section (queued eager SDPA calls, random "
          "inputs); predicted: the attention kernel's ops of `phaze schedule --attention fused` "
          "on a one-block model of the shape, forward (plus backward), with "
          "`attention_efficiency: %.4g`, `attention_backward_efficiency: %.4g` and "
          "`flash_softmax: %.4g` cycles. Fitting rows: every other shape, measured at %.0f µs or "
          "more; the others are held out." % (
              args.arch, os.path.relpath(args.kernels, ROOT), args.backend,
              " --fit" if args.fit else "", forward, backward, cycles, FIT_FLOOR_S * 1e6), ""]
    md += ["Measured on: " + c for c in comments if c.startswith(("device", "nvidia-smi"))]
    md += [""] + log + [""] + table + [""] + detail
    with open(os.path.join(args.report, name + ".md"), "w") as f:
        f.write("\n".join(md) + "\n")


if __name__ == "__main__":
    main()
