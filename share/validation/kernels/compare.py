#!/usr/bin/env python3
"""The device model against kernels measured on one GPU (measure.py's CSV), and its fit.

    python3 share/validation/kernels/compare.py --arch h200-sxm-141gb \
        --kernels share/validation/kernels/h200-sxm-141gb.csv [--fit] [--report DIR]

Every GEMM, FP8 GEMM and memory-bound kernel of the CSV is costed by `phaze estimate` on the
preset (its all-cores time: the device time of one kernel, launch floor included) and compared
with the measured device time. The kernel's own byte count (the CSV's `bytes`) is passed to the
estimate, so a two-input kernel is costed with its two inputs.

--fit searches the preset's five device parameters, one at a time over a grid, round after round
until none moves, minimising the mean |log(predicted / measured)| over the fitting rows (every
other row of each group, in file order; the rest are held out and reported separately):
  gemm_efficiency    fraction of the tensor peak a GEMM tile reaches (BF16 GEMM rows)
  wave_quantization  share of a partial last wave of tiles left idle (BF16 GEMM rows)
  fp8_tensor_ratio   the FP8 rate over the 16-bit rate at that efficiency (FP8 GEMM rows)
  memory_efficiency  fraction of HBM bandwidth a memory-bound kernel reaches
  kernel_overhead_s  device time of a kernel beyond its work (every fitted group, each weighted
                     alike: GEMMs, FP8 GEMMs, streaming kernels, the tiny kernels)
memory_efficiency and kernel_overhead_s are fitted on single-pass streaming kernels (copy, add,
mul, GELU, SiLU, dropout, the FP8 cast), whose bytes are what phaze counts. Row reductions and
multi-kernel ops (LayerNorm, RMSNorm, softmax, cross-entropy, Adam) are compared, not fitted:
PyTorch's eager kernels for them take more passes over memory than one (LayerNorm's backward is
two kernels, cross-entropy a log-softmax and a loss), so they measure the gap between phaze's
one-pass count and those kernels, not the bandwidth.
FlashAttention rows are printed as measured: phaze costs FlashAttention as its GEMMs and softmax
on chip (graph/attention_kernel.hpp), not as one op `phaze estimate` can be asked for.
Python 3 standard library; needs build/phaze (or PHAZE).
"""
import argparse
import json
import math
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

# measure.py's kernel names → phaze's vector functions (vector_cycles.cpp); a copy and a cast
# cost one lane operation per element, as an add does.
FUNCTION = {"copy": "add", "cast_bf16_to_fp8": "add"}

PARAMS = {
    "gemm_efficiency": [round(0.40 + 0.005 * i, 3) for i in range(121)],
    "wave_quantization": [round(0.05 * i, 2) for i in range(21)],
    "fp8_tensor_ratio": [round(1.20 + 0.01 * i, 2) for i in range(81)],
    "memory_efficiency": [round(0.40 + 0.005 * i, 3) for i in range(121)],
    "kernel_overhead_s": [round(0.25e-6 * i, 9) for i in range(81)],
}
# Which rows each parameter is judged on while it is searched.
JUDGED_ON = {"gemm_efficiency": ("gemm",), "wave_quantization": ("gemm",),
             "fp8_tensor_ratio": ("fp8",),
             "memory_efficiency": ("stream",),
             "kernel_overhead_s": ("gemm", "fp8", "stream", "tiny")}


def load(path):
    comments, rows = commented_csv.read(path)
    for r in rows:
        r["seconds"] = float(r["seconds"])
    return comments, rows


def op_line(r):
    """The `phaze estimate` ops-file line of a row, or None (not costed)."""
    section, kernel = r["section"], r["kernel"]
    if section in ("gemm", "tiny") and ":" in kernel and r["m"]:
        kind = "batched_gemm" if kernel.endswith(":bmm") else "gemm"
        return "%s,%s,%s,%s,%s" % (kind, r["batch"], r["m"], r["n"], r["k"])
    if section == "fp8" and r["m"]:
        return "fp8_gemm,%s,%s,%s,%s" % (r["batch"], r["m"], r["n"], r["k"])
    if section in ("vector", "tiny", "fp8") and r["elements"]:
        total = int(r["bytes"])
        function = FUNCTION.get(kernel, kernel)
        return "vector,%s,%s,%s,%d,%d" % (function, r["elements"], r["row"] or 1, total // 2,
                                          total - total // 2)
    return None


# Single-pass streaming kernels: each element read and written once, their bytes unambiguous.
STREAMING = {"copy", "add", "mul", "gelu", "gelu_tanh", "gelu_backward", "silu", "silu_backward",
             "dropout", "dropout_backward", "cast_bf16_to_fp8"}


def group(r):
    """gemm, fp8, stream (single-pass memory-bound kernels), reduction (row reductions and
    multi-kernel ops: PyTorch's eager kernels take more passes than phaze counts; not fitted)
    or tiny (the per-kernel floor)."""
    if r["section"] == "fp8" and r["m"]:
        return "fp8"
    if r["section"] in ("vector", "fp8"):
        return "stream" if r["kernel"] in STREAMING else "reduction"
    return r["section"]


def preset_text(arch):
    path = arch if os.path.exists(arch) else os.path.join(ROOT, "share", "arch", arch + ".yaml")
    with open(path) as f:
        return f.read()


def with_params(text, params):
    for key, value in params.items():
        text, n = re.subn(r"(?m)^(\s*%s:\s*)[-+0-9.eE]+" % key, r"\g<1>%r" % value, text)
        if n != 1:
            sys.exit("compare.py: the preset has no single '%s:' line to set" % key)
    return text


# A parameter a preset leaves out: the device model's default, the datasheet's FP8 rate.
DEFAULTS = {"wave_quantization": 1.0, "fp8_tensor_ratio": 2.0}


def read_params(text, defaults=None):
    out = {}
    for key in PARAMS:
        m = re.search(r"(?m)^\s*%s:\s*([-+0-9.eE]+)" % key, text)
        if m:
            out[key] = float(m.group(1))
        elif defaults and key in defaults:
            out[key] = defaults[key]
        else:
            sys.exit("compare.py: the preset has no '%s:' line" % key)
    return out


def estimate(text, lines, workdir):
    arch = os.path.join(workdir, "arch.yaml")
    ops = os.path.join(workdir, "ops.csv")
    out = os.path.join(workdir, "estimate.json")
    with open(arch, "w") as f:
        f.write(text)
    with open(ops, "w") as f:
        f.write("\n".join(lines) + "\n")
    done = subprocess.run([PHAZE, "-q", "-o", out, "estimate", "--arch", arch, "--ops-file", ops],
                          capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit("compare.py: phaze estimate failed:\n" + done.stderr)
    with open(out) as f:
        return [r["all_cores_s"] for r in json.load(f)["results"]]


def score(rows, predicted, groups):
    """The mean over `groups` of each group's mean |log(predicted / measured)|."""
    logs = {}
    for r, p in zip(rows, predicted):
        if group(r) in groups:
            logs.setdefault(group(r), []).append(abs(math.log(p / r["seconds"])))
    return sum(sum(v) / len(v) for v in logs.values()) / len(logs) if logs else 0.0


def stats(rows, predicted):
    errors = [p / r["seconds"] - 1 for r, p in zip(rows, predicted)]
    if not errors:
        return "—", "—", "—", 0
    mean_abs = 100 * sum(abs(e) for e in errors) / len(errors)
    worst = 100 * max(abs(e) for e in errors)
    signed = 100 * sum(errors) / len(errors)
    return "%.1f%%" % mean_abs, "%.1f%%" % worst, "%+.1f%%" % signed, len(errors)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--arch", required=True, help="preset name or YAML")
    parser.add_argument("--kernels", required=True, help="measure.py's CSV")
    parser.add_argument("--before", help="also cost with this preset's five parameters (those it "
                        "leaves out at the model's defaults, FP8 at the datasheet's 2); default: "
                        "--arch as it is")
    parser.add_argument("--fit", action="store_true", help="fit the five parameters")
    parser.add_argument("--report", help="write DIR/<kernels file name>.md")
    args = parser.parse_args()

    comments, all_rows = load(args.kernels)
    rows = [r for r in all_rows if op_line(r)]
    lines = [op_line(r) for r in rows]
    # Fitting rows: every other costed row of each group, in file order.
    seen = {}
    for r in rows:
        g = group(r)
        r["fitting"] = g != "reduction" and seen.get(g, 0) % 2 == 0
        seen[g] = seen.get(g, 0) + 1
    fitting = [r for r in rows if r["fitting"]]
    fit_lines = [op_line(r) for r in fitting]

    text = preset_text(args.arch)
    params = read_params(text)
    before_text = text
    if args.before:
        before_text = with_params(text, read_params(preset_text(args.before), DEFAULTS))
    with tempfile.TemporaryDirectory() as work:
        before = estimate(before_text, lines, work)
        log = []
        if args.fit:
            for round_ in range(1, 6):
                moved = False
                for key, grid in PARAMS.items():
                    best = None
                    for value in grid:
                        trial = dict(params, **{key: value})
                        s = score(fitting, estimate(with_params(text, trial), fit_lines, work),
                                  JUDGED_ON[key])
                        if best is None or s < best[0] - 1e-12:
                            best = (s, value)
                    if best[1] != params[key]:
                        moved = True
                    params[key] = best[1]
                    log.append("round %d: %s = %r (mean |log error| %.4f on its rows)"
                               % (round_, key, best[1], best[0]))
                    print(log[-1], flush=True)
                if not moved:
                    break
            text = with_params(text, params)
        after = estimate(text, lines, work)

    def section_table(predicted, label):
        out = ["| rows | n | mean abs error | max | mean signed |", "|---|---|---|---|---|"]
        for name, groups in (("BF16 GEMMs", ("gemm",)), ("FP8 GEMMs", ("fp8",)),
                             ("streaming memory-bound kernels", ("stream",)),
                             ("tiny kernels (the floor)", ("tiny",)),
                             ("reductions and multi-kernel ops", ("reduction",))):
            for which, keep in (("fitting", True), ("held out", False)):
                sel = [(r, p) for r, p in zip(rows, predicted)
                       if group(r) in groups and r["fitting"] == keep]
                if not sel and which == "fitting":
                    continue
                if groups == ("reduction",):
                    which = "not fitted"
                m, w, s, n = stats([r for r, _ in sel], [p for _, p in sel])
                out.append("| %s, %s | %d | %s | %s | %s |" % (name, which, n, m, w, s))
        m, w, s, n = stats(rows, predicted)
        out.append("| all | %d | %s | %s | %s |" % (n, m, w, s))
        return "%s\n\n%s" % (label, "\n".join(out))

    before_label = ("Before (%s with %s's device parameters):" % (args.arch, args.before)
                    if args.before else "Before (%s as it is):" % args.arch)
    print(section_table(before, before_label))
    print(section_table(after, "After (parameters %s):" % ", ".join(
        "%s %r" % kv for kv in params.items())))
    if not args.report:
        return
    name = os.path.splitext(os.path.basename(args.kernels))[0]
    md = ["# Kernels measured on one GPU against the device model: %s" % name, "",
          "Generated by `share/validation/kernels/compare.py --arch %s --kernels %s%s%s`. "
          "Measured by measure.py (device time per kernel, CUDA-graph replay, operands rotated "
          "past the L2); predicted: `phaze estimate`'s all-cores time of the same kernel on the "
          "preset. Fitting rows are every other row of each group; the others are held out."
          % (args.arch, os.path.relpath(args.kernels, ROOT),
             " --before " + args.before if args.before else "", " --fit" if args.fit else ""), ""]
    md += ["Measured on: " + c for c in comments] + [""]
    md += [section_table(before, before_label), "",
           section_table(after, "After, with " + ", ".join("`%s: %r`" % kv
                                                            for kv in params.items()) + ":"), ""]
    if log:
        md += ["Fit (coordinate search over grids, each parameter judged on its rows):", "", "```"]
        md += log + ["```", ""]
    md += ["| kernel | dtype | shape (b, m, n, k) or elements (row) | measured µs | before µs | "
           "after µs | error after | fitting |", "|---|---|---|---|---|---|---|---|"]
    for r, b, a in zip(rows, before, after):
        shape = ("%s, %s, %s, %s" % (r["batch"], r["m"], r["n"], r["k"]) if r["m"]
                 else "%s (%s)" % (r["elements"], r["row"] or "—"))
        md.append("| %s | %s | %s | %.2f | %.2f | %.2f | %+.1f%% | %s |" % (
            r["kernel"], r["dtype"], shape, r["seconds"] * 1e6, b * 1e6, a * 1e6,
            100 * (a / r["seconds"] - 1),
            "yes" if r["fitting"] else "not fitted" if group(r) == "reduction" else "held out"))
    other = [r for r in all_rows if not op_line(r)]
    if other:
        md += ["", "Measured only (not a single op of `phaze estimate`):", "",
               "| kernel | batch·heads, sequence, head dim | measured µs | TFLOP/s | note |",
               "|---|---|---|---|---|"]
        for r in other:
            md.append("| %s | %s, %s, %s | %.1f | %.0f | %s |" % (
                r["kernel"], r["batch"], r["m"], r["k"], r["seconds"] * 1e6,
                float(r["flops"]) / r["seconds"] / 1e12 if r["flops"] else 0, r["note"]))
    with open(os.path.join(args.report, name + ".md"), "w") as f:
        f.write("\n".join(md) + "\n")


if __name__ == "__main__":
    main()
