#!/usr/bin/env python3
"""The FP8 recipe on silicon: exact accumulation, current scaling's passes, and compiled blocks.

    python3 share/validation/kernels/fp8_recipe.py [--arch h200-sxm-141gb] [--report DIR]

Reads measure.py's float8parts, float8 and float8block sections
(share/validation/kernels/h200-sxm-141gb-float8parts.csv, -float8.csv, -float8block.csv) and:

1. fits `fp8_exact_accumulation` (DeviceTechnology: the fraction of the fast-accumulation FP8
   rate the backward's exactly-accumulating GEMMs reach) as the geometric mean of the measured
   fast / exact time ratios of the same input- or weight-gradient GEMM, on every other pair (the
   rest held out); the forward-shaped pairs (and the fp8 section's squares) are listed apart;
2. prices one Llama 3 8B linear layer, forward + backward, as the `float8` section ran it
   (torchao's tensorwise recipe written out, torch.compile'd): the three FP8 GEMMs with
   `phaze estimate` (forward fast, input and weight gradients exact: `fp8_gemm_backward`) plus
   current scaling's passes as graph/precision.hpp counts them for a linear whose input is a
   16-bit graph input — 7 bytes an element of the input, the weight and the output gradient
   (amax 2, cast 2 + 1, a transposed copy 1 + 1) at the preset's memory_efficiency, 2 kernels each;
3. prices the compiled blocks of the float8block section with `phaze schedule` (the block's own
   graph, every FP8 rule of graph/precision.hpp: `--precision fp8 --fp8-recipe tensorwise`, and
   `delayed` beside it), forward + backward, collectives left out (one GPU), against BF16.

Python 3 standard library; needs build/phaze (or PHAZE).
"""
import argparse
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
sys.path.insert(0, HERE)
import commented_csv  # noqa: E402
import compare  # noqa: E402

SCALING_BYTES = 7  # per element of the input, the weight and the output gradient (a lone linear)


def rows(name):
    return commented_csv.read(os.path.join(HERE, name))[1]


def estimate(arch, lines, work):
    """all-cores seconds of each ops-file line on the preset (compare.py's `phaze estimate`)."""
    return compare.estimate(compare.preset_text(arch), lines, work)


def geomean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values))


def exact_accumulation(out):
    pairs = {}
    parts = rows("h200-sxm-141gb-float8parts.csv")
    squares = [r for r in rows("h200-sxm-141gb.csv")
               if r["section"] == "fp8" and r["kernel"].startswith("square") and r["m"]
               and int(r["m"]) >= 4096]
    for r in parts + squares:
        if r["note"] in ("fast_accum", "exact_accum"):
            key = (r["kernel"], r["m"], r["n"], r["k"])
            pairs.setdefault(key, {})[r["note"]] = float(r["seconds"])
    # The parameter prices the backward's GEMMs: fitted and judged on the input- and
    # weight-gradient pairs; the forward-shaped ones (the recipes run them fast) are listed.
    every = [(k, v["fast_accum"] / v["exact_accum"]) for k, v in pairs.items() if len(v) == 2]
    ratios = [(k, v) for k, v in every if k[0].endswith(("dgrad", "wgrad"))]
    fitting = [v for i, (_, v) in enumerate(ratios) if i % 2 == 0]
    held = [v for i, (_, v) in enumerate(ratios) if i % 2 == 1]
    out.append("## 1. Exact accumulation (the backward's FP8 GEMMs)\n")
    out.append("| GEMM | m | n | k | fast / exact time |")
    out.append("|---|---|---|---|---|")
    for (kernel, m, n, k), v in every:
        out.append("| %s | %s | %s | %s | %.3f |" % (kernel, m, n, k, v))
    out.append("")
    forward = [v for k, v in every if not k[0].endswith(("dgrad", "wgrad"))]
    out.append("fp8_exact_accumulation: %.3f on %d fitting backward pairs (geometric mean); the %d "
               "held out give %.3f; range %.3f–%.3f. The %d forward-shaped pairs: %.3f.\n" % (
                   geomean(fitting), len(fitting), len(held), geomean(held),
                   min(v for _, v in ratios), max(v for _, v in ratios), len(forward),
                   geomean(forward)))


def linears(arch, work, out):
    measured = {}
    for r in rows("h200-sxm-141gb-float8.csv"):
        measured[(r["kernel"], r["dtype"], r["note"].split(";")[0])] = r
    parts = {}
    for r in rows("h200-sxm-141gb-float8parts.csv"):
        if r["note"] in ("fast_accum", "exact_accum", ""):
            parts[(r["kernel"], r["note"])] = float(r["seconds"])
    shapes = sorted({(k.split(":")[0], int(r["m"]), int(r["n"]), int(r["k"]))
                     for (k, _, _), r in measured.items()}, key=lambda s: (-s[1], s[0]))
    out.append("## 2. One linear, forward + backward, compiled (the float8 section)\n")
    out.append("Measured: BF16 `F.linear` (eager; its three GEMMs), the written-out tensorwise "
               "recipe compiled; the bare FP8 GEMMs as the recipe calls them (float8parts: "
               "forward fast, backward exact). phaze: its BF16 GEMMs; the FP8 GEMMs; with "
               "current scaling's %d bytes an element of x, W and dy.\n" % SCALING_BYTES)
    out.append("| linear | m | n | k | BF16 measured ms | phaze | FP8 GEMMs measured | phaze | "
               "recipe measured | phaze | error |")
    out.append("|---|---|---|---|---|---|---|---|---|---|---|")
    errors = []
    for label, m, n, k in shapes:
        bf = measured.get(("%s:linear:fwd_bwd" % label, "bf16", "eager F.linear"))
        fp = measured.get(("%s:recipe:fwd_bwd" % label, "fp8_tensorwise", "torch.compile"))
        if not bf or not fp:
            continue
        gemms = [parts.get(("%s:fwd" % label, "fast_accum")),
                 parts.get(("%s:dgrad" % label, "exact_accum")),
                 parts.get(("%s:wgrad" % label, "exact_accum"))]
        lines = ["gemm,1,%d,%d,%d" % (m, n, k), "gemm,1,%d,%d,%d" % (m, k, n),
                 "gemm,1,%d,%d,%d" % (n, k, m),
                 "fp8_gemm,1,%d,%d,%d" % (m, n, k), "fp8_gemm_backward,1,%d,%d,%d" % (m, k, n),
                 "fp8_gemm_backward,1,%d,%d,%d" % (n, k, m)]
        # The scaling passes as six streaming kernels (an amax and a cast for each tensor).
        for elements in (m * k, n * k, m * n):
            total = SCALING_BYTES * elements
            lines += ["vector,add,%d,1,%d,%d" % (elements, total // 4, total // 4)] * 2
        est = estimate(arch, lines, work)
        p_bf, p_gemm, p_all = sum(est[0:3]), sum(est[3:6]), sum(est[3:])
        m_fp = float(fp["seconds"])
        errors.append(p_all / m_fp - 1)
        out.append("| %s | %d | %d | %d | %.3f | %.3f | %s | %.3f | %.3f | %.3f | %+.1f%% |" % (
            label, m, n, k, float(bf["seconds"]) * 1e3, p_bf * 1e3,
            "%.3f" % (sum(gemms) * 1e3) if all(gemms) else "—", p_gemm * 1e3, m_fp * 1e3,
            p_all * 1e3, 100 * errors[-1]))
    out.append("")
    out.append("Mean |error| of the recipe rows: %.1f%% (%d linears), signed %+.1f%%.\n" % (
        100 * sum(abs(e) for e in errors) / len(errors), len(errors),
        100 * sum(errors) / len(errors)))


ROW = re.compile(r"^\s+(\S+)\s+(\S+)\s+\S+\s+[-0-9.]+\s+([-0-9.]+)\s")
COLLECTIVE = re.compile(r"all_reduce|all_gather|reduce_scatter|all_to_all|tp_copy|regather")


def block_seconds(arch, model, batch, width, precision, recipe):
    total = 0.0
    for p in ("forward", "backward"):
        text = subprocess.run(
            [PHAZE, "schedule", "--model", model, "--micro-batch", str(batch), "--width",
             str(width), "--strategy", "megatron", "--arch", arch, "--attention", "fused",
             "--precision", precision, "--fp8-recipe", recipe, "--pass", p, "-q"],
            check=True, capture_output=True, text=True).stdout
        for line in text.splitlines():
            m = ROW.match(line)
            if m and m.group(2) != "link" and not COLLECTIVE.search(m.group(1)):
                total += float(m.group(3)) * 1e-6
    return total


def blocks(arch, work, out):
    model = os.path.join(work, "llama3-8b-block.yaml")
    with open(model, "w") as f:  # Meta's Llama 3 8B, one block
        f.write("name: llama3-8b-block\nfamily: llama\nlayers: 1\nhidden: 4096\nheads: 32\n"
                "kv_heads: 8\nffn_hidden: 14336\nvocab: 128256\nmax_positions: 8192\n"
                "sequence_length: 8192\ntied_embeddings: false\n")
    measured = {(r["kernel"], r["dtype"]): float(r["seconds"])
                for r in rows("h200-sxm-141gb-float8block.csv")}
    out.append("## 3. Compiled Llama 3 8B blocks, forward + backward (the float8block section)\n")
    out.append("`phaze schedule --attention fused` (cuDNN's kernel, SDPA's default here) of one "
               "block, the collectives left out; TP 8 is one rank's slice (`--width 8`).\n")
    out.append("| block | micro-batch | BF16 measured ms | phaze | FP8 measured | tensorwise | "
               "error | delayed | error | speed-up measured | tensorwise | delayed |")
    out.append("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for label, batch, width in (("llama3-8b-block", 2, 1), ("llama3-8b-t8-block", 12, 8)):
        bf = measured[("%s:fwd_bwd" % label, "bf16")]
        fp = measured[("%s:fwd_bwd" % label, "fp8_tensorwise")]
        p_bf = block_seconds(arch, model, batch, width, "bf16", "delayed")
        p_cur = block_seconds(arch, model, batch, width, "fp8", "tensorwise")
        p_del = block_seconds(arch, model, batch, width, "fp8", "delayed")
        out.append("| %s | %d | %.2f | %.2f (%+.1f%%) | %.2f | %.2f | %+.1f%% | %.2f | %+.1f%% | "
                   "%.3f× | %.3f× | %.3f× |" % (
                       label, batch, bf * 1e3, p_bf * 1e3, 100 * (p_bf / bf - 1), fp * 1e3,
                       p_cur * 1e3, 100 * (p_cur / fp - 1), p_del * 1e3, 100 * (p_del / fp - 1),
                       bf / fp, p_bf / p_cur, p_bf / p_del))
    out.append("")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--arch", default="h200-sxm-141gb")
    parser.add_argument("--report", help="write DIR/h200-sxm-141gb-float8.md")
    args = parser.parse_args()
    out = ["# The FP8 recipe on an H200: `fp8_recipe.py` against measure.py's float8 sections",
           "", "Preset `%s`; regenerate with `python3 share/validation/kernels/fp8_recipe.py "
           "--report share/validation/kernels`.\n" % args.arch]
    with tempfile.TemporaryDirectory() as work:
        exact_accumulation(out)
        linears(args.arch, work, out)
        blocks(args.arch, work, out)
    text = "\n".join(out)
    print(text)
    if args.report:
        with open(os.path.join(args.report, "h200-sxm-141gb-float8.md"), "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
