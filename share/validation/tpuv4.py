#!/usr/bin/env python3
"""Predicts published TPU v4 training runs with `phaze predict` on the TPU v4 preset
(share/arch/tpuv4-chip.yaml, the device model with the A100-fitted technology: nothing here is
fitted on a TPU) and the TPU v4 pod network (share/systems/tpuv4-pod.yaml), and reports predicted
against measured. Every row's configuration and figure comes with its source (ROWS below).

How the runs are expressed. Fully sharded data parallelism (FSDP: MaxText, PaLM's 256-way
sharding) is run as data parallelism of the same width: the same per-chip compute and a
gradient all-reduce of the same volume as FSDP's reduce-scatter + all-gather; the weights and
optimizer state it shards are not modelled (phaze has no ZeRO yet, issue 40), so the memory check
is lifted (--hbm-gib 4096) and only time is compared. PaLM's and the MLPerf model's 2D "model
parallel" sharding is run as Megatron tensor parallelism of the same width. PaLM's one shared
key/value head (multi-query attention) is computed by every one of its 12 model-parallel shards,
which tensor parallelism expresses as 12 key/value heads, one per shard (the same per-chip
work). Vocabularies are padded to a multiple of the model-parallel width as Megatron pads them
(PaLM 256,000 → 256,512; the MLPerf model's 30,522 → 30,720); n_params counts the published
ones.

  share/validation/tpuv4.py [--phaze build/phaze] [--estimator device] [--report DIR] [--jobs 2]

--report DIR writes tpuv4.md there. Standard library only.
"""
import argparse
import concurrent.futures
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

# measured: ("tflops_6n", x): model TFLOP/s per chip counted as 6·N per token (MaxText's
# convention, N from n_params below); ("tokens_per_s", x); ("step_s", x).
ROWS = [
    dict(name="maxtext-22b", chips=64, t=1, d=64, micro=16, batch=1024, recompute="full",
         model=dict(family="decoder", layers=48, hidden=6144, heads=24, head_dim=256,
                    ffn_hidden=24576, activation="relu", vocab=32768, sequence_length=1024,
                    positions="rotary", norm="rmsnorm", bias=False, tied_embeddings=True),
         measured=("tflops_6n", 156.0),
         source="MaxText README (github.com/google/maxtext @281e04bf, Apr 2023), Runtime "
                "Performance Results: 22B on v4-128 (64 chips), 64-way FSDP, full remat: "
                "156 TFLOP/s per chip, 56.7% MFU (6N); configs/1xv4-128.sh"),
    dict(name="maxtext-52b", chips=192, t=1, d=192, micro=10, batch=1920, recompute="full",
         model=dict(family="decoder", layers=32, hidden=12288, heads=32, head_dim=256,
                    ffn_hidden=49152, activation="relu", vocab=32768, sequence_length=1024,
                    positions="rotary", norm="rmsnorm", bias=False, tied_embeddings=True),
         measured=("tflops_6n", 154.0),
         source="MaxText README (@281e04bf): 52B on v4-384 (192 chips), 192-way FSDP, full "
                "remat: 154 TFLOP/s per chip, 56.0% MFU (6N); configs/1xv4-384.sh"),
    dict(name="palm-540b", chips=6144, t=12, d=512, micro=4, batch=2048, recompute="full",
         model=dict(family="decoder", layers=118, hidden=18432, heads=48, head_dim=256,
                    kv_heads=12, ffn_hidden=73728, activation="swiglu", vocab=256512,
                    sequence_length=2048, positions="rotary", norm="layernorm", bias=False,
                    parallel_block=True, tied_embeddings=True, published_kv_heads=1,
                    published_vocab=256000),
         measured=("tokens_per_s", 238.3e3),
         source="Chowdhery et al., PaLM (arXiv 2204.02311), Table 1, §4, §4.1, App. B: 540B "
                "on 6144 TPU v4 (2 pods × 3072; 12-way model × 256-way data in a pod, 2-way "
                "data across pods), batch 2048 × 2048, remat: 238.3K tokens/s, MFU 46.2%"),
    dict(name="mlperf-200b", chips=1024, t=16, d=64, micro=64, batch=4096, recompute="selective",
         model=dict(family="encoder", layers=66, hidden=12288, heads=128, ffn_hidden=98304,
                    activation="relu", vocab=30720, sequence_length=512, max_positions=512),
         measured=("step_s", 16.8),
         source="MLPerf Training v1.1 Open, Google tpu-v4-2048-JAX BERT 200B "
                "(mlcommons/training_results_v1.1, Google/benchmarks/bert/implementations/"
                "tpu-v4-2048-JAX; lingvo BertSpmdL66H12kBiggerBatch8x8x16): 1024 chips, mesh "
                "64 data × 16 model, batch 4096 × 512; 16.8 s per step derived from the result "
                "logs' 100-step blocks (1674-1688 s)"),
]


def n_params(m):
    """Weights as MaxText and PaLM count them: embeddings + per block attention and MLP."""
    h, hd = m["hidden"], m.get("head_dim", m["hidden"] // m["heads"])
    q = m["heads"] * hd
    kv = m.get("published_kv_heads", m.get("kv_heads", m["heads"])) * hd
    attention = h * q + 2 * h * kv + q * h
    mlp = (3 if m["activation"] == "swiglu" else 2) * h * m["ffn_hidden"]
    return m["layers"] * (attention + mlp) + m.get("published_vocab", m["vocab"]) * h


def workload(directory, row):
    # Written under a name of its own and renamed into place: power.py's threads write the same
    # row's workload while another phaze may be reading it.
    path = os.path.join(directory, row["name"] + ".yaml")
    fd, partial = tempfile.mkstemp(dir=directory, suffix=".partial")
    with os.fdopen(fd, "w") as f:
        f.write("name: %s\n" % row["name"])
        for k, v in row["model"].items():
            if k.startswith("published_"):
                continue
            f.write("%s: %s\n" % (k, str(v).lower() if isinstance(v, bool) else v))
        if "max_positions" not in row["model"]:
            f.write("max_positions: %d\n" % row["model"]["sequence_length"])
        f.write("dropout: 0\n")
    os.replace(partial, path)
    return path


def predict(args, directory, row):
    out = os.path.join(directory, row["name"] + ".json")
    config = os.path.join(directory, "run.yaml")
    with open(config, "w") as f:
        f.write("estimator: %s\n" % args.estimator)
    cmd = [args.phaze, "-q", "--config", config, "predict", "--model", workload(directory, row), "--arch",
           "tpuv4-chip", "--system", "tpuv4-pod", "--plan", "%d,1,%d" % (row["t"], row["d"]),
           "--micro-batch", str(row["micro"]), "--global-batch", str(row["batch"]),
           "--recompute", row["recompute"], "--hbm-gib", "4096", "-o", out]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        return dict(row, problem=(r.stderr or r.stdout).strip().splitlines()[-1])
    with open(out) as f:
        step = json.load(f)["result"]["time_per_batch_s"]
    tokens = row["batch"] * row["model"]["sequence_length"]
    kind, measured = row["measured"]
    if kind == "tflops_6n":
        predicted = 6 * n_params(row["model"]) * tokens / (row["chips"] * step) / 1e12
    elif kind == "tokens_per_s":
        predicted = tokens / step
    else:
        predicted = step
    # Every error as throughput: + = predicted faster than measured.
    error = measured / predicted - 1 if kind == "step_s" else predicted / measured - 1
    return dict(row, step_s=step, predicted=predicted, error=error)


UNITS = {"tflops_6n": "TFLOP/s per chip (6N)", "tokens_per_s": "tokens/s", "step_s": "s per step"}


def table(results):
    lines = ["| run | chips | plan (t, d, micro, recompute) | measured | predicted | throughput "
             "error | predicted step (s) |", "|---|---|---|---|---|---|---|"]
    for r in results:
        kind, measured = r["measured"]
        plan = "%d, %d, %d, %s" % (r["t"], r["d"], r["micro"], r["recompute"])
        if "problem" in r:
            lines.append("| %s | %d | %s | %.4g %s | — (%s) | — | — |" %
                         (r["name"], r["chips"], plan, measured, UNITS[kind], r["problem"]))
        else:
            lines.append("| %s | %d | %s | %.4g %s | %.4g | %+.1f%% | %.2f |" %
                         (r["name"], r["chips"], plan, measured, UNITS[kind], r["predicted"],
                          100 * r["error"], r["step_s"]))
    return "\n".join(lines)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--phaze", default=os.path.join(HERE, "..", "..", "build", "phaze"))
    p.add_argument("--report")
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--estimator", default="device", help="the estimator (default: device)")
    args = p.parse_args()
    directory = tempfile.mkdtemp(prefix="phaze-tpuv4-")
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        results = list(pool.map(lambda r: predict(args, directory, r), ROWS))
    text = table(results)
    done = [r for r in results if "problem" not in r]
    if done:
        text += "\n\nmean |throughput error| over %d rows: %.1f%% (positive: predicted faster)\n" % (
            len(done), 100 * sum(abs(r["error"]) for r in done) / len(done))
    text += "\nSources:\n" + "\n".join("- %s: %s" % (r["name"], r["source"]) for r in results)
    print(text)
    if args.report:
        os.makedirs(args.report, exist_ok=True)
        with open(os.path.join(args.report, "tpuv4.md"), "w") as f:
            f.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
