#!/usr/bin/env python3
"""The default models' exhaustive winners and Pareto fronts against stored results (issue 41).

Two runs of share/runs/default.yaml as it stands (its models, baselines, cluster, training and
solver), compared with default-models.expected.json:

- the slice: the space replaced by default-models-space.yaml (a slice of the paper's space around
  the winners) and `prune: pareto`, so the fronts are exact. Its winners (per model and common)
  and throughput-vs-area Pareto fronts must equal those `--update` stored from the same run with
  `prune: none` (every config evaluated, nothing pruned);
- the whole space, exactly as the README runs it (`prune: winners`): its winners must equal the
  stored ones (the fronts of `prune: winners` cover only the configs evaluated, so they are not
  compared).

So the test fails when pruning loses a winner or a front member, and when a change to the models
or to default.yaml moves any of them; after a deliberate change, rerun with `--update` and say why
in the commit.

Usage: check_default_models.py --phaze build/phaze [--update] [--threads 2] [--slice-only]
Exit 0: identical (names exactly, throughputs to 1e-9 relative); 1: a difference, each printed.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
DEFAULT = os.path.join(ROOT, "share", "runs", "default.yaml")
SPACE = os.path.join(HERE, "default-models-space.yaml")
EXPECTED = os.path.join(HERE, "default-models.expected.json")
REL_TOL = 1e-9


def regression_config(prune):
    """default.yaml with the slice for its space and `prune` for its pruning."""
    with open(DEFAULT) as f:
        text = f.read()
    swaps = [("space: paper", "space: " + SPACE), ("prune: winners", "prune: " + prune),
             ("file: ../../", "file: " + ROOT + "/")]
    for old, new in swaps:
        if old not in text:
            sys.exit(f"{DEFAULT}: no '{old}' to replace for the regression run; update "
                     f"{os.path.relpath(__file__, ROOT)} with it")
        text = text.replace(old, new)
    return text


def run_search(phaze, config, threads, out_dir):
    cmd = [phaze, "search", "--config", config, "--threads", str(threads), "--output-dir", out_dir,
           "--quiet"]
    done = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if done.returncode != 0:
        sys.exit(f"{' '.join(cmd)} exited {done.returncode}:\n{done.stdout}")
    with open(os.path.join(out_dir, "results.json")) as f:
        return json.load(f)


def summary(results, fronts):
    """Winners (and fronts) as names and throughputs (ranks are positions in this run only)."""
    explored = results["explored"]

    def entry(rank, model=None):
        e = explored[rank]
        if model is None:
            value = e["score"]
        else:
            value = next(m for m in e["models"] if m["model"] == model)["best"][
                "throughput_samples_per_s"]
        return {"arch": e["arch"]["name"], "area_mm2": e["area_mm2"], "samples_per_s": value}

    winners = results["winners"]
    out = {
        "stop_reason": results["stop_reason"],
        "configs": len(explored),
        "winners": {
            "common": entry(winners["common"]["rank"]),
            "per_model": {w["model"]: entry(w["rank"], w["model"]) for w in winners["per_model"]},
        },
    }
    if fronts:
        front = results["pareto_front"]
        if not front["exact"]:
            sys.exit("results.json: pareto_front.exact is false; the slice must run with prune: "
                     "pareto or none")
        out["fronts"] = {
            "common": [entry(r) for r in front["common"]],
            "per_model": {f["model"]: [entry(r, f["model"]) for r in f["configs"]]
                          for f in front["per_model"]},
        }
    return out


def pruned_count(results):
    return sum(1 for e in results["explored"] if e.get("pruned"))


def close(a, b):
    return abs(a - b) <= REL_TOL * max(abs(a), abs(b))


def differences(expected, got, path="", out=None):
    """Every place the two summaries differ, as 'path: expected X, got Y'."""
    out = [] if out is None else out
    if isinstance(expected, dict) and isinstance(got, dict):
        for k in sorted(set(expected) | set(got)):
            if k not in got or k not in expected:
                out.append(f"{path}/{k}: expected {expected.get(k)!r}, got {got.get(k)!r}")
            else:
                differences(expected[k], got[k], f"{path}/{k}", out)
    elif isinstance(expected, list) and isinstance(got, list):
        if len(expected) != len(got):
            names = lambda xs: [x.get("arch") if isinstance(x, dict) else x for x in xs]
            out.append(f"{path}: expected {len(expected)} entries {names(expected)}, "
                       f"got {len(got)} {names(got)}")
        else:
            for i, (a, b) in enumerate(zip(expected, got)):
                differences(a, b, f"{path}[{i}]", out)
    elif isinstance(expected, float) and isinstance(got, (int, float)):
        if not close(expected, float(got)):
            out.append(f"{path}: expected {expected!r}, got {got!r}")
    elif expected != got:
        out.append(f"{path}: expected {expected!r}, got {got!r}")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--phaze", required=True)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--update", action="store_true",
                    help="rewrite the expected file: the slice with prune: none, the whole space "
                         "as default.yaml says")
    ap.add_argument("--slice-only", action="store_true", help="skip the whole-space run")
    args = ap.parse_args()
    got, pruned = {}, {}
    with tempfile.TemporaryDirectory() as tmp:
        config = os.path.join(tmp, "default-models.yaml")
        with open(config, "w") as f:
            f.write(regression_config("none" if args.update else "pareto"))
        results = run_search(args.phaze, config, args.threads, os.path.join(tmp, "slice"))
        got["slice"], pruned["slice"] = summary(results, fronts=True), pruned_count(results)
        if not args.slice_only:
            results = run_search(args.phaze, DEFAULT, args.threads, os.path.join(tmp, "whole"))
            got["whole_space"] = summary(results, fronts=False)
            pruned["whole_space"] = pruned_count(results)
    if args.update and pruned["slice"]:
        sys.exit(f"prune: none pruned {pruned['slice']} configs")
    if not args.update and not pruned["slice"]:
        sys.exit("prune: pareto pruned nothing: the test no longer exercises pruning")
    for run, s in got.items():
        if s["stop_reason"] != "exhausted":
            sys.exit(f"{run}: stop_reason {s['stop_reason']!r}, expected 'exhausted'")
    if args.update:
        if args.slice_only:
            sys.exit("--update needs both runs (leave out --slice-only)")
        with open(EXPECTED, "w") as f:
            json.dump(got, f, indent=1)
            f.write("\n")
        print(f"wrote {EXPECTED}")
        return 0
    with open(EXPECTED) as f:
        expected = json.load(f)
    diff = []
    for run in got:
        diff += differences(expected[run], got[run], run)
    for line in diff:
        print(line)
    if diff:
        print(f"{len(diff)} differences from {EXPECTED}")
        return 1
    for run, s in got.items():
        w = s["winners"]
        line = (f"{run}: {s['configs']} configs ({pruned[run]} pruned), winners identical: common "
                f"{w['common']['arch']} at {w['common']['samples_per_s']:.6g} samples/s, "
                + ", ".join(f"{m} {e['arch']} at {e['samples_per_s']:.6g}"
                            for m, e in w["per_model"].items()))
        if "fronts" in s:
            line += ("; exact fronts identical to prune: none's: "
                     f"{len(s['fronts']['common'])} common, "
                     + ", ".join(f"{len(v)} {k}" for k, v in s["fronts"]["per_model"].items()))
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
