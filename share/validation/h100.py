#!/usr/bin/env python3
"""Predicts published H100 training runs with `phaze predict` and reports the errors.

For every row of published-h100.csv (its header cites the sources) it writes the workload (a
Megatron GPT with untied embeddings, a Llama 3, or Mixtral 8x7B's mixture of experts), runs `phaze predict --arch ARCH
--system dgx-h100` on the row's device preset (TorchTitan's H100s: h100-sxm-96gb-hbm2e) with the
row's plan, micro-batch, batch, recompute, sequence parallelism, sharding, precision and
FlashAttention, and compares the
iteration time with the published one: Megatron-LM's per-GPU TFLOP/s turned into seconds with
its own FLOP count, 72·B·s·L·h² + 12·B·s²·L·h + 6·B·s·h·V per iteration; TorchTitan's tokens/s
per GPU into B·s / (tokens/s · GPUs). A setting the source does not publish (Megatron's micro-
batch, recompute and interleaving) is tried over micro-batch 1, 2, 4, recompute none and
selective and every v Megatron-LM allows, and phaze's fastest feasible plan is kept, with the
range over the others. Two recipe parameters were fitted on the Megatron-LM README's rows
(phaze's recipe megatron-core-2024, share/recipes/): the share of the first stage's last backward
the data-parallel reduction hides behind (on the nine; each row's reduction is reported as
exposed / whole) and the share of a tensor-parallel all-gather or reduce-scatter hidden beside its
GEMM (on the three with one stage and t > 1). TorchTitan's rows are not fitted; its async-TP rows
take the second value (the CSV's tp_overlap column).

  share/validation/h100.py [--phaze build/phaze] [--csv FILE] [--jobs 2] [--report DIR]
      [--residuals FILE] [--max-mean-error F] [--recipe SOURCE:KEY=VALUE ...] [--source NAME ...]
      [--attention flash|fused] [--estimator-params YAML] [--row REGEX] [--max-memory-error F]

A row with context parallelism (the CSV's cp > 1) runs the context_parallel strategy over its
tensor parallelism, phaze's width t·cp; a TorchTitan pipeline whose blocks do not split evenly
gets TorchTitan's own split (--stage-starts).

--report DIR writes h100.md there; --residuals FILE appends each predicted row (with its device
preset) to validate.py's residuals, from which `phaze plan` draws the error bands of H100 plans.
Standard library only.
"""
import argparse
import concurrent.futures
import csv
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import validate  # noqa: E402  (write_residuals: the file phaze plan's error bands come from)

# Each source's training recipe in phaze (share/recipes/). Megatron-LM's README runs state
# --overlap-grad-reduce, --overlap-param-gather and --tp-comm-overlap: the share of the
# data-parallel reduction hidden behind the first stage's last backward (the recipe's
# gradient_reduction_overlap, 0.8, the share of that window usable; system/gradient_sync.hpp) and
# of a tensor-parallel collective run beside the GEMMs (tensor_parallel_overlap, 0.5; graph/
# tensor_parallel_overlap.hpp). TorchTitan's FSDP2 overlaps its collectives as the sharding model
# already has it; its TP rows are plain TP or async TP (tp_overlap): the recipe torchtitan-2025
# (FlashAttention through PyTorch SDPA, fp32 reduction, PyTorch's cross-entropy, no further
# overlap; `phaze plan --framework torchtitan` plans with it), the tensor-parallel overlap per row.
SOURCE_RECIPE = {"megatron-readme": "megatron-core-2024", "megatron-moe-readme": "megatron-core-2024",
                 "torchtitan-2408": "torchtitan-2025",
                 "torchtitan-2412": "torchtitan-2025", "torchtitan-2506": "torchtitan-2025",
                 "torchtitan-2506-h200": "torchtitan-2025"}
# TorchTitan's 2024 benchmarks ran the loss eager (train.py at 3faaa1a and 9dec370: "compiling loss
# function causes CUDA errors, turning off for now"); from April 2025 TorchTitan compiles it with
# the model (torchtitan/components/loss.py build_cross_entropy_loss at 820504e and e7c0cae), as
# the recipe has it (training.loss compiled).
SOURCE_LOSS = {"torchtitan-2408": "torch", "torchtitan-2412": "torch"}
# The sources whose runs state FP8 weights all-gathered in FP8 (Trainy's command line:
# --quantize.linear.float8.enable_fsdp_float8_all_gather): training.fp8_param_gather.
FP8_PARAM_GATHER = {"torchtitan-2506-h200"}
# Overrides of those parameters and the architecture's collective_overlap for a scan (`--recipe
# SOURCE:KEY=VALUE`; None: the recipe's and the architecture's own).
RECIPES = {"megatron-readme": {"gradient_reduction_overlap": None, "tensor_parallel_overlap": None,
                               "collective_overlap": None}}


def recipe_value(source, key):
    """The effective value of a recipe parameter: the override, else the recipe file's."""
    if RECIPES[source][key] is not None:
        return RECIPES[source][key]
    with open(os.path.join(ROOT, "share", "recipes", SOURCE_RECIPE[source] + ".yaml")) as f:
        for line in f:
            if line.strip().startswith(key + ":"):
                return float(line.split(":")[1])
    return None


# Published FP8 against BF16 on the same plan (TorchTitan: torchao float8, tensorwise scaling).
PAIRS = [("tt_2412_t1_llama3.1-8B_8gpu_fsdp_compile", "tt_2412_t1_llama3.1-8B_8gpu_fsdp_compile_float8"),
         ("tt_2412_t3_llama3.1-8B_128gpu_fsdp_compile",
          "tt_2412_t3_llama3.1-8B_128gpu_fsdp_compile_float8"),
         ("tt_2408_llama3.1-405B_128gpu_2d_bf16_wps", "tt_2408_llama3.1-405B_128gpu_2d_float8_wps"),
         ("tt_2506_llama3-70B_256gpu_fsdp32_tp8_bf16_vanillatp",
          "tt_2506_llama3-70B_256gpu_fsdp32_tp8_float8_tensorwise_vanillatp"),
         ("tt_2506_llama3-8B_64gpu_fsdp8_tp8_bf16_vanillatp",
          "tt_2506_llama3-8B_64gpu_fsdp8_tp8_float8_tensorwise_vanillatp")]
# Published async TP against plain TP on the same plan (TorchTitan 2025-06): phaze's
# tensor_parallel_overlap, fitted on Megatron-LM's rows, checked on another implementation.
OVERLAP_PAIRS = [(name + "_vanillatp", name + "_asynctp") for name in (
    "tt_2506_llama3-70B_256gpu_fsdp32_tp8_bf16", "tt_2506_llama3-70B_256gpu_fsdp32_tp8_float8_tensorwise",
    "tt_2506_llama3-8B_64gpu_fsdp8_tp8_bf16", "tt_2506_llama3-8B_64gpu_fsdp8_tp8_float8_tensorwise")]
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
NUMBERS = ["layers", "hidden", "heads", "kv_heads", "ffn_hidden", "vocab", "seq_len", "gpus", "t",
           "p", "d", "v", "micro_batch", "global_batch", "experts", "top_k", "ep", "cp"]


def load_rows(path):
    rows = []
    with open(path) as f:
        lines = [l for l in f if not l.startswith("#")]
    for i, r in enumerate(csv.DictReader(lines)):
        for k in NUMBERS:
            r[k] = int(r[k]) if r[k] else None
        r["value"] = float(r["value"])
        r["memory_gib"] = float(r["memory_gib"]) if r["memory_gib"] else None
        r["sequence_parallel"] = r["sequence_parallel"] in ("1", "true")
        r["tp_overlap"] = r.get("tp_overlap") in ("1", "true")
        r["cp"] = r["cp"] or 1
        rows.append(r)
    return rows


def model_file(directory, row):
    path = os.path.join(directory, row["name"] + ".yaml")
    with open(path, "w") as f:
        f.write("name: %s\nfamily: %s\nlayers: %d\nhidden: %d\nheads: %d\nkv_heads: %d\n"
                "ffn_hidden: %d\nvocab: %d\nmax_positions: %d\nsequence_length: %d\n"
                % (row["name"], row["family"], row["layers"], row["hidden"], row["heads"],
                   row["kv_heads"], row["ffn_hidden"], row["vocab"], row["seq_len"], row["seq_len"]))
        f.write("tied_embeddings: false\n")
        if row["experts"]:  # a mixture of SwiGLU experts of the FFN's width
            f.write("moe: {experts: %d, top_k: %d, expert_ffn_hidden: %d}\n"
                    % (row["experts"], row["top_k"], row["ffn_hidden"]))
    return path


def measured_seconds(row):
    B, s, L, h, V = row["global_batch"], row["seq_len"], row["layers"], row["hidden"], row["vocab"]
    if row["metric"] == "tflops_per_gpu" and row["experts"]:
        # Megatron-LM's num_floating_point_operations with grouped-query attention, SwiGLU and
        # top-k experts (megatron/training/training.py, 2024): 12·B·s·L·h² times the attention's
        # (1 + g/a + s/h)·q/h (q = h: heads of h/a), the MLP's f/h·k·3/2 and the logits' V/(2·L·h).
        g, a, f, k = row["kv_heads"], row["heads"], row["ffn_hidden"], row["top_k"]
        flops = 12 * B * s * L * h * h * ((1 + g / a + s / h) + f / h * k * 1.5 + V / (2 * L * h))
        return flops / (row["value"] * 1e12 * row["gpus"])
    if row["metric"] == "tflops_per_gpu":  # Megatron-LM's num_floating_point_operations
        flops = 72 * B * s * L * h * h + 12 * B * s * s * L * h + 6 * B * s * h * V
        return flops / (row["value"] * 1e12 * row["gpus"])
    if row["metric"] == "tokens_per_s_per_gpu":
        return B * s / (row["value"] * row["gpus"])
    raise SystemExit("%s: unknown metric '%s'" % (row["name"], row["metric"]))


def candidates(row):
    micro = [row["micro_batch"]] if row["micro_batch"] else [1, 2, 4]
    recompute = [row["recompute"]] if row["recompute"] else ["none", "selective"]
    blocks = row["layers"]
    for b in micro:
        per_replica = row["global_batch"] // (b * row["d"])
        if row["global_batch"] % (b * row["d"]):
            continue
        # Megatron-LM interleaves v chunks of --num-layers-per-virtual-pipeline-stage layers each:
        # any v dividing the blocks per stage, the micro-batches a multiple of p.
        vs = [row["v"]] if row["v"] else [1] + [v for v in range(2, blocks // row["p"] + 1)
                                               if row["p"] > 1 and blocks % (row["p"] * v) == 0
                                               and per_replica % row["p"] == 0]
        for v in vs:
            for rc in recompute:
                yield b, v, rc


# training.attention for every row: flash (the recipes' today), or fused (--attention fused: the
# kernel as measured, share/validation/kernels/README.md).
ATTENTION = ["flash"]
# What TorchTitan's column-parallel linears save of their gathered input (the sequence_parallel
# strategy's gathered_input): keep, as DTensor does; regather (Megatron-LM's) for a comparison.
GATHERED_INPUT = ["keep"]
# The device estimator's params for every row (--estimator-params: a YAML mapping), e.g.
# FlashAttention-2's fitted kernel (kernels/h200-sxm-141gb-attention-flash_attention.md) with
# --attention fused; empty: the presets' calibration.
ESTIMATOR_PARAMS = [""]


def recipe_files(directory, row):
    """The run config and architecture of the row's recipe, in files of the row's own: the rows
    run in parallel threads, and a file one row rewrites while another's phaze reads it would be
    read empty (a run config of defaults, silently)."""
    recipe = {k: v for k, v in RECIPES.get(row["source"], {}).items() if v is not None}
    config = os.path.join(directory, "run-%s.yaml" % row["name"])
    with open(config, "w") as f:  # Megatron-LM with --bf16 and FSDP2 both reduce in fp32; both
        # run FlashAttention (TE's fused attention, PyTorch SDPA). TorchTitan's loss is
        # F.cross_entropy on FP32 logits (training.loss torch), Megatron-LM's its own.
        extra = "".join(", %s: %s" % (k, v) for k, v in recipe.items()
                        if k == "gradient_reduction_overlap")
        # The tensor-parallel overlap: the one value fitted on Megatron-LM's rows, for every run
        # the CSV says overlaps (TorchTitan's async TP too), none for the others.
        extra += ", tensor_parallel_overlap: %g" % (
            recipe_value("megatron-readme", "tensor_parallel_overlap") if row["tp_overlap"] else 0)
        if row["source"] in SOURCE_RECIPE:
            extra += ", recipe: %s" % SOURCE_RECIPE[row["source"]]
        if row["source"] in SOURCE_LOSS:
            extra += ", loss: %s" % SOURCE_LOSS[row["source"]]
        if row["source"] in FP8_PARAM_GATHER:
            extra += ", fp8_param_gather: true"
        f.write("training: {gradient_reduction_precision: fp32, attention: %s%s}\n"
                % (ATTENTION[0], extra))
        if ESTIMATOR_PARAMS[0]:
            f.write("estimator: {name: device, params: %s}\n" % ESTIMATOR_PARAMS[0])
        # The tensor-parallel strategy, as the keys of its run-config mapping.
        tensor = "name: megatron"
        if row["sequence_parallel"] and row["source"].startswith("torchtitan"):
            # TorchTitan's tensor parallelism is PyTorch DTensor's: a column-parallel linear
            # saves its all-gathered input, as autograd does, and gathers nothing in backward.
            tensor = "name: sequence_parallel, params: {gathered_input: %s}" % GATHERED_INPUT[0]
        elif row["sequence_parallel"]:
            tensor = "name: sequence_parallel"
        if row["cp"] > 1:
            # Context parallelism over the tensor parallelism (cp groups t ranks apart): the plan's
            # width is t·cp. TorchTitan's CP all-gathers the keys and values (its default
            # context_parallel_rotate_method, allgather), as the context_parallel strategy prices.
            over = ", over: {width: %d, %s}" % (row["t"], tensor) if row["t"] > 1 else ""
            f.write("strategy: {name: context_parallel%s}\n" % over)
        elif row["sequence_parallel"] and row["source"].startswith("torchtitan"):
            f.write("strategy: {%s}\n" % tensor)
    arch = row["arch"]
    if "collective_overlap" in recipe:
        arch = os.path.join(directory, "%s-%s.yaml" % (row["arch"], row["name"]))
        with open(os.path.join(ROOT, "share", "arch", row["arch"] + ".yaml")) as src, \
                open(arch, "w") as dst:
            for line in src:
                if line.startswith("collective_overlap:"):
                    line = "collective_overlap: %s\n" % recipe["collective_overlap"]
                dst.write(line)
    return config, arch


def torchtitan_stage_starts(row, v):
    """The first layer of pipeline stages 2..p as TorchTitan (Dec 2024) splits a model when no
    split points are given (torchtitan/parallelisms/pipelining_utils.py generate_split_points):
    p·v chunks of ⌊L / (p·v)⌋ blocks, the L mod (p·v) left over going one each to the chunks
    after the first, the last taking the rest; rank r runs chunks r, r + p, … (Interleaved 1F1B
    with v = 2). As phaze's --stage-starts: each device's layers, its chunks together (block k is
    layer k + 1, after the embedding). None where that is Megatron-LM's even split or the row is
    not TorchTitan's (phaze's default split)."""
    if not row["source"].startswith("torchtitan") or row["p"] == 1:
        return None
    p, chunks, blocks = row["p"], row["p"] * v, row["layers"]
    if blocks % chunks == 0:
        return None
    base, extra = divmod(blocks, chunks)
    sizes = []
    for i in range(chunks - 1):
        sizes.append(base + (1 if i > 0 and extra > 0 else 0))
        if i > 0 and extra > 0:
            extra -= 1
    sizes.append(blocks - sum(sizes))
    per_rank = [sum(sizes[r::p]) for r in range(p)]
    starts, layer = [], 1  # phaze's layer index: the embedding is layer 0
    for n in per_rank[:-1]:
        layer += n
        starts.append(layer)
    return starts


def predict(args, directory, row):
    model = model_file(directory, row)
    config, arch = recipe_files(directory, row)
    results, tried = [], []
    for b, v, rc in candidates(row):
        out = os.path.join(directory, "%s-b%d-v%d-%s.json" % (row["name"], b, v, rc))
        plan = "%d,%d,%d" % (row["t"] * row["cp"], row["p"], row["d"]) + (",%d" % v if v > 1 else "")
        cmd = [args.phaze, "-q", "--config", config, "predict", "--model", model, "--arch",
               arch, "--system", "dgx-h100", "--plan", plan, "--micro-batch", str(b),
               "--global-batch", str(row["global_batch"]), "--recompute", rc, "--sharding",
               row["sharding"], "--precision", row["precision"], "-o", out]
        if row["sequence_parallel"] and row["cp"] == 1:
            cmd.append("--sequence-parallel")  # with the run config's params (TorchTitan's)
        starts = torchtitan_stage_starts(row, v)
        if starts:
            cmd += ["--stage-starts", ",".join(map(str, starts))]
        if row["experts"]:  # experts folded over ep / t data-parallel replicas
            cmd += ["--strategy", "moe", "--expert-parallel", str(row["ep"])]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            tried.append("b %d v %d %s: %s" % (b, v, rc, (r.stderr or r.stdout).strip().splitlines()[-1]))
            continue
        with open(out) as f:
            result = json.load(f)["result"]
        peak = max(st["peak_memory_bytes"] for st in result["plan"]["stages"]) / 2**30
        breakdown = result["plan"]["breakdown"]
        results.append((result["time_per_batch_s"], b, v, rc, peak, breakdown["data_parallel_s"],
                        breakdown["data_parallel_total_s"]))
    measured = measured_seconds(row)
    if not results:
        return dict(row, measured_s=measured, predicted_s=None, error=None,
                    problem="; ".join(tried[:2]))
    best = min(results)
    return dict(row, measured_s=measured, predicted_s=best[0], slowest_s=max(results)[0],
                error=best[0] / measured - 1, micro=best[1], v=best[2], recompute_used=best[3],
                peak_gib=best[4], dp_exposed_s=best[5], dp_total_s=best[6],
                given=bool(row["micro_batch"] and row["recompute"]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--phaze", default=os.path.join(ROOT, "build", "phaze"))
    ap.add_argument("--csv", default=os.path.join(HERE, "published-h100.csv"))
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--report", help="directory for h100.md")
    ap.add_argument("--residuals", help="CSV file the predicted rows are appended to "
                    "(validate.py's --residuals)")
    ap.add_argument("--max-mean-error", type=float, help="bound on the mean |error|")
    ap.add_argument("--recipe", action="append", default=[],
                    help="SOURCE:KEY=VALUE, a recipe parameter (RECIPES)")
    ap.add_argument("--source", action="append", default=[], help="only these sources' rows")
    ap.add_argument("--row", help="only the rows whose name matches this regular expression")
    ap.add_argument("--max-memory-error", type=float,
                    help="bound on the largest |error| of the largest stage's memory against the "
                         "published peaks (a row with one that is not predicted fails it)")
    ap.add_argument("--attention", choices=("flash", "fused"), default="flash",
                    help="training.attention of every row (default: flash)")
    ap.add_argument("--torchtitan-gathered-input", choices=("keep", "regather"), default="keep",
                    help="what TorchTitan's tensor-parallel linears save of their gathered input "
                         "(default: keep, as DTensor does)")
    ap.add_argument("--estimator-params", default="",
                    help="the device estimator's params for every row, a YAML mapping, e.g. "
                         "FlashAttention-2's: '{attention_efficiency: 0.93, "
                         "attention_backward_efficiency: 0.375, vector_cycles: "
                         "{flash_softmax: 27}}' (default: the presets' calibration)")
    args = ap.parse_args()
    ATTENTION[0] = args.attention
    ESTIMATOR_PARAMS[0] = args.estimator_params
    GATHERED_INPUT[0] = args.torchtitan_gathered_input
    for item in args.recipe:
        source, _, kv = item.partition(":")
        key, _, value = kv.partition("=")
        if source not in RECIPES or key not in RECIPES[source]:
            raise SystemExit("--recipe %s: expected SOURCE:KEY=VALUE with KEY one of %s" % (
                item, ", ".join("%s:%s" % (s, k) for s in RECIPES for k in RECIPES[s])))
        RECIPES[source][key] = float(value)
    rows = [r for r in load_rows(args.csv) if (not args.source or r["source"] in args.source)
            and (not args.row or re.search(args.row, r["name"]))]
    directory = tempfile.mkdtemp(prefix="phaze-h100-")
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        results = list(pool.map(lambda r: predict(args, directory, r), rows))
    lines = ["| run | source | GPUs | t | cp | p | d | micro-batch, v, recompute | sharding | "
             "precision | iteration (s): predicted | range | published | error | data-parallel "
             "reduction (s): exposed / whole |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    by_source = {}
    for r in results:
        head = "| %s | %s | %d | %d | %d | %d | %d |" % (r["name"], r["source"], r["gpus"], r["t"],
                                                        r["cp"], r["p"], r["d"])
        if r["error"] is None:
            lines.append(head + " — | %s | %s | — | — | %.3f | failed: %s | — |" % (
                r["sharding"], r["precision"], r["measured_s"], r["problem"]))
            by_source.setdefault(r["source"], []).append(None)
            continue
        by_source.setdefault(r["source"], []).append(r["error"])
        lines.append(head + " %d, %d, %s%s | %s | %s | %.3f | %s | %.3f | %+.1f%% | %.3f / %.3f |" % (
            r["micro"], r["v"], r["recompute_used"], " (published)" if r["given"] else " (phaze's best)",
            r["sharding"], r["precision"], r["predicted_s"],
            "—" if r["given"] else "%.3f–%.3f" % (r["predicted_s"], r["slowest_s"]),
            r["measured_s"], 100 * r["error"], r["dp_exposed_s"], r["dp_total_s"]))
    errors = [abs(r["error"]) for r in results if r["error"] is not None]
    summary = ["| source | n | predicted | mean abs error | max | mean signed error |",
               "|---|---|---|---|---|---|"]
    for source, errs in list(by_source.items()) + [("all", [r["error"] for r in results])]:
        ok = [e for e in errs if e is not None]
        summary.append("| %s | %d | %d | %.2f%% | %.2f%% | %+.2f%% |" % (
            source, len(errs), len(ok), 100 * sum(map(abs, ok)) / max(1, len(ok)),
            100 * max(map(abs, ok), default=0), 100 * sum(ok) / max(1, len(ok))))
    by_name = {r["name"]: r for r in results}
    def speedup_table(header, pairs):
        """Published and phaze's speed-up of each pair's second run over its first (same plan)."""
        table = [header, "|---|---|---|---|"]
        for slow, fast in pairs:
            if slow not in by_name or fast not in by_name:
                continue
            a, b = by_name[slow], by_name[fast]
            ours = ("%.2f×" % (a["predicted_s"] / b["predicted_s"])
                    if a["predicted_s"] and b["predicted_s"] else "— (not predicted)")
            table.append("| %s | %s | %.2f× | %s |" % (slow, fast, a["measured_s"] / b["measured_s"], ours))
        return table

    speedups = speedup_table("| BF16 run | FP8 run | published FP8 speed-up | phaze's |", PAIRS)
    overlap = speedup_table("| plain TP run | async TP run | published speed-up | phaze's |",
                            OVERLAP_PAIRS)
    memory = ["| run | published peak (GiB) | phaze's largest stage (GiB) | error |", "|---|---|---|---|"]
    for r in results:
        if r["memory_gib"] is None:
            continue
        if r["error"] is None:  # refused: the memory the plan would take, from the reason
            memory.append("| %s | %.1f | refused (%s) | — |" % (r["name"], r["memory_gib"],
                                                                 r["problem"].split("needs ")[-1][:40]))
        else:
            memory.append("| %s | %.1f | %.1f | %+.1f%% |" % (
                r["name"], r["memory_gib"], r["peak_gib"], 100 * (r["peak_gib"] / r["memory_gib"] - 1)))
    mean = sum(errors) / len(errors) if errors else float("nan")
    print("%s: n %d, predicted %d, mean |error| %.2f%%, max %.2f%%" % (
        os.path.basename(args.csv), len(results), len(errors), 100 * mean,
        100 * max(errors, default=float("nan"))))
    print("\n".join(summary))
    print("\n".join(lines))
    print("\n".join(speedups))
    print("\n".join(overlap))
    print("\n".join(memory))
    if args.residuals:
        # t as phaze plan's t column has it: the strategy's whole width, tensor × context.
        predicted = [dict(r, recompute=r["recompute_used"], t=r["t"] * r["cp"])
                     for r in results if r["error"] is not None]
        validate.write_residuals(args.residuals, os.path.basename(args.csv), predicted,
                                 append=os.path.exists(args.residuals))
    if args.report:
        os.makedirs(args.report, exist_ok=True)
        with open(os.path.join(args.report, "h100.md"), "w") as f:
            f.write("# Validation: published H100 training runs\n\n"
                    "Generated by `share/validation/h100.py --report …`: every row of "
                    "published-h100.csv predicted on its device preset with `--system dgx-h100`, "
                    "FlashAttention and its published plan. The device parameters are fitted on "
                    "kernels measured on an H200 (share/validation/kernels/; no run fitted); two "
                    "recipe parameters were fitted on the Megatron-LM rows, the share of the first "
                    "stage's last backward the data-parallel reduction hides behind (on all nine) "
                    "and the share of a tensor-parallel all-gather or reduce-scatter hidden beside "
                    "its GEMM (on the three with one pipeline stage and t > 1): %s. TorchTitan's "
                    "rows are not fitted (its async-TP rows take the second value), nor are "
                    "Megatron-LM's Mixtral 8x7B rows (moe strategy, experts folded over "
                    "data-parallel replicas). Sources and how "
                    "each counts its figure: the CSV's header; the discussion: README.md.\n\n" % ", ".join(
                        "%s %s = %g" % (src, k, recipe_value(src, k)) for src, kv in RECIPES.items()
                        for k in kv if recipe_value(src, k) is not None) + "\n".join(summary) + "\n\n" + "\n".join(lines) + "\n\n"
                    "FP8 against BF16 on the same plan:\n\n" + "\n".join(speedups) + "\n\n"
                    "Tensor-parallel communication overlapped (TorchTitan's async TP, at the "
                    "tensor_parallel_overlap fitted on Megatron-LM's rows) against plain TP on the "
                    "same plan:\n\n" + "\n".join(overlap) + "\n\n"
                    "Peak memory per GPU, published against phaze's largest stage:\n\n"
                    + "\n".join(memory) + "\n")
    if args.max_mean_error is not None and not mean <= args.max_mean_error:
        print("FAIL: mean |error| %.4f > bound %.4f" % (mean, args.max_mean_error))
        return 1
    if args.max_memory_error is not None:
        # Every row with a published peak must be predicted, its largest stage within the bound.
        worst = max((abs(r["peak_gib"] / r["memory_gib"] - 1) if r["error"] is not None
                     else float("inf")) for r in results if r["memory_gib"] is not None)
        if not worst <= args.max_memory_error:
            print("FAIL: largest |memory error| %.4f > bound %.4f" % (worst, args.max_memory_error))
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
