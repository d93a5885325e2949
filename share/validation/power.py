#!/usr/bin/env python3
"""Power validation of the energy model (DESIGN §11; framework/include/phaze/estimate/
energy_model.hpp): fits ONE parameter, the 7 nm scale of the template's 22 nm dynamic energies
(mac_pj, lane_op_pj, sram_pj_per_byte_1mib), on the only measured per-chip training power of a
chip phaze models — Google's TPU v4, mean 170 W (Cloud TPU v4 documentation: min / mean / max
90 / 170 / 192 W) — over the four published TPU v4 runs of tpuv4.py, then predicts, unfitted,
the A100 and H100 presets (same 7 nm figures) on Megatron plans and compares them with what is
published for them: their TDPs (400 W, 700 W) and, for the H100, MLPerf Training v4.0's measured
node power of GPT-3 175B on 512 GPUs (host included; no per-GPU board measurement was found,
share/energy/README.md).

Power is linear in the scale s at fixed step times (dynamic energy is Σ work · energy per unit):
P(s) = P(0) + s·(P(1) − P(0)), so two predictions per row fit it exactly.

  share/validation/power.py [--phaze build/phaze] [--report DIR] [--jobs 2]

--report DIR writes power.md there. Standard library and python3-yaml.
"""
import argparse
import concurrent.futures
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SHARE = os.path.join(HERE, "..")
sys.path.insert(0, HERE)
import tpuv4  # noqa: E402  (the TPU v4 rows and their workloads)
import yaml_files  # noqa: E402

TEMPLATE_22NM = dict(mac_pj=2.0, lane_op_pj=1.0, sram_pj_per_byte_1mib=6.25)  # energy_model.hpp
TPU_V4_MEAN_W = 170.0

GPU_ROWS = [
    dict(name="gpt3-175b a100", arch="a100-sxm-80gb", system="dgx-a100",
         model="workloads/megatron-gpt3-175b.yaml", plan="8,16,8", micro=1, batch=1536,
         recompute="full", tdp=400.0,
         source="Megatron-LM's GPT-3 175B script (Narayanan et al., SC21, Table 1 row 175B); "
                "A100 SXM4 TDP 400 W (NVIDIA A100 datasheet)"),
    dict(name="gpt3-175b h100", arch="h100-sxm-80gb", system="dgx-h100",
         model="workloads/megatron-gpt3-175b.yaml", plan="8,16,8", micro=1, batch=1536,
         recompute="full", tdp=700.0,
         source="the same plan on DGX H100; H100 SXM5 TDP 700 W (NVIDIA H100 datasheet)"),
    dict(name="mlperf-gpt3 h100", arch="h100-sxm-80gb", system="dgx-h100",
         model="workloads/megatron-gpt3-175b.yaml", plan="4,8,16,12", micro=1, batch=2048,
         recompute="selective", sequence_parallel=True, tdp=700.0, measured=843.0,
         config="training: {sharding: optimizer, gradient_reduction_precision: bf16, "
                "precision: fp8, attention: flash}\n",
         source="MLPerf Training v4.0, Sustainable Metal Cloud (mlcommons/training_results_v4.0, "
                "smc-dc-power): GPT-3 175B on 512 H100-SXM, TP 4, PP 8, VPP 12, GBS 2048; "
                "408.44 kWh DC over 56.9 min = 6.742 kW per 8-GPU node (843 W per GPU, host "
                "CPUs, NICs and power conversion included; immersion-cooled, no fans). The run "
                "used FP8 and fused attention, as phaze predicts it (FP8 MACs at the 16-bit MAC "
                "energy: no FP8 figure here); Zeus (ml.energy) puts "
                "GPUs at ~70% of a training server's power, ~590 W per GPU, an estimate"),
]


def arch_with(preset, energy, directory, tag):
    """The preset's file with its `energy:` map replaced by `energy`."""
    document = yaml_files.load(os.path.join(SHARE, "arch", preset + ".yaml"))
    document["energy"] = {k: float(v) for k, v in sorted(energy.items())}
    path = os.path.join(directory, "%s-%s.yaml" % (preset, tag))
    yaml_files.dump(document, path)
    return path


def preset_energy(preset):
    """The preset's own `energy:` map."""
    energy = yaml_files.load(os.path.join(SHARE, "arch", preset + ".yaml")).get("energy") or {}
    return {k: float(v) for k, v in energy.items()}


def run(args, cmd, out):
    r = subprocess.run([args.phaze, "-q"] + cmd + ["-o", out], capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit("phaze failed: %s\n%s" % (" ".join(cmd), r.stderr or r.stdout))
    with open(out) as f:
        return json.load(f)["result"]


def tpu_power(args, directory, row, scale):
    energy = dict(preset_energy("tpuv4-chip"))
    energy.update({k: v * scale for k, v in TEMPLATE_22NM.items()})
    arch = arch_with("tpuv4-chip", energy, directory, "%s-%g" % (row["name"], scale))
    cmd = ["predict", "--model", tpuv4.workload(directory, row), "--arch", arch, "--system",
           "tpuv4-pod", "--plan", "%d,1,%d" % (row["t"], row["d"]), "--micro-batch",
           str(row["micro"]), "--global-batch", str(row["batch"]), "--recompute",
           row["recompute"], "--hbm-gib", "4096"]
    return run(args, cmd, os.path.join(directory, "%s-%g.json" % (row["name"], scale)))


def gpu_power(args, directory, row):
    cmd = []
    if row.get("config"):
        config = os.path.join(directory, row["name"].replace(" ", "-") + ".yaml")
        with open(config, "w") as f:
            f.write(row["config"])
        cmd = ["--config", config]
    if row.get("sequence_parallel"):
        cmd_tail = ["--sequence-parallel"]
    else:
        cmd_tail = []
    cmd += ["predict", "--model", os.path.join(SHARE, "..", row["model"]), "--arch", row["arch"],
           "--system", row["system"], "--plan", row["plan"], "--micro-batch", str(row["micro"]),
           "--global-batch", str(row["batch"]), "--recompute", row["recompute"]] + cmd_tail
    return run(args, cmd, os.path.join(directory, row["name"].replace(" ", "-") + ".json"))


def parts(result):
    e = result["energy_per_iteration_by_part"]
    total = sum(e.values())
    return ", ".join("%s %.0f%%" % (k[:-2], 100 * v / total) for k, v in e.items())


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--phaze", default=os.path.join(HERE, "..", "..", "build", "phaze"))
    p.add_argument("--report")
    p.add_argument("--jobs", type=int, default=2)
    args = p.parse_args()
    directory = tempfile.mkdtemp(prefix="phaze-power-")
    jobs = [(r, s) for r in tpuv4.ROWS for s in (0.0, 1.0)]
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        results = list(pool.map(lambda j: tpu_power(args, directory, *j), jobs))
    p0 = [results[2 * i]["power_w"] for i in range(len(tpuv4.ROWS))]
    p1 = [results[2 * i + 1]["power_w"] for i in range(len(tpuv4.ROWS))]
    # Least squares of Σ (p0 + s·(p1 − p0) − 170)² over the rows.
    num = sum((TPU_V4_MEAN_W - a) * (b - a) for a, b in zip(p0, p1))
    den = sum((b - a) ** 2 for a, b in zip(p0, p1))
    scale = num / den
    fitted = {k: round(v * scale, 4) for k, v in TEMPLATE_22NM.items()}
    lines = ["# Power: predicted against published", "",
             "Fitted (one parameter, on the TPU v4 rows): the 7 nm scale of the 22 nm template's "
             "dynamic energies s = %.4f → %s." % (scale, ", ".join(
                 "%s %.4g" % kv for kv in sorted(fitted.items()))),
             "", "| run | device | predicted W per device | published W | kind | "
             "step energy by part |", "|---|---|---|---|---|---|"]
    check = []
    for i, row in enumerate(tpuv4.ROWS):
        res = tpu_power(args, directory, row, scale)
        check.append(res["power_w"])
        lines.append("| %s (fitting row) | TPU v4 | %.1f | %.0f mean (90–192) | measured, "
                     "fleet mean, workload not stated | %s |" % (
                         row["name"], res["power_w"], TPU_V4_MEAN_W, parts(res)))
    for row in GPU_ROWS:
        res = gpu_power(args, directory, row)
        if "measured" in row:
            lines.append("| %s (unfitted) | %s | %.1f (%.0f%% of TDP) | %.0f per GPU of the node "
                         "(TDP %.0f) | measured, node level, host included | %s |" % (
                             row["name"], row["arch"], res["power_w"],
                             100 * res["power_w"] / row["tdp"], row["measured"], row["tdp"],
                             parts(res)))
        else:
            lines.append("| %s (unfitted) | %s | %.1f (%.0f%% of TDP) | %.0f | TDP only | %s |" % (
                row["name"], row["arch"], res["power_w"], 100 * res["power_w"] / row["tdp"],
                row["tdp"], parts(res)))
    lines += ["", "Mean predicted TPU v4 power over the fitting rows: %.1f W (target %.0f W)." % (
        sum(check) / len(check), TPU_V4_MEAN_W), "", "Sources:"]
    lines += ["- TPU v4 power: Google Cloud TPU v4 documentation, system architecture table "
              "(min/mean/max 90/170/192 W); the rows: tpuv4.py"]
    lines += ["- %s: %s" % (r["name"], r["source"]) for r in GPU_ROWS]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.report:
        os.makedirs(args.report, exist_ok=True)
        with open(os.path.join(args.report, "power.md"), "w") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
