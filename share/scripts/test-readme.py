#!/usr/bin/env python3
"""The READMEs as a test (issue 42): every ```sh block of README.md and of the folder READMEs runs,
exactly as written, as one bash script (`set -euo pipefail`, so a heredoc or a variable carries
from line to line) in a fresh copy of the checkout whose `build/` is the build being tested — so
`build/phaze …`, relative outputs (`-o predict.json`) and `share/scripts/…` work as a reader
typing them would see. A block fails on any non-zero exit, or after its time limit.

A command that cannot run here is marked in the README, beside its block, by an HTML comment on a
line of its own (invisible when rendered) naming a piece of the command and why:
    <!-- readme-test: skip "fit.py" — about 10 minutes per stage; run by hand -->
Its line (with its continuation lines) is left out of the block; everything else runs. A marker
that matches no command is an error, so markers cannot rot either.

    python3 share/scripts/test-readme.py [--build DIR] [--only FILE] [--timeout S]
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SKIP = re.compile(r'^<!--\s*readme-test:\s*skip\s+"([^"]+)"\s*[—-]+\s*(.*?)\s*-->', re.M)
BLOCK = re.compile(r"```(sh|bash)\n(.*?)```", re.S)


def readmes():
    files = [ROOT / "README.md"]
    for pattern in ("*/README.md", "share/*/README.md", "share/examples/*/README.md",
                    "framework/*/README.md"):
        files += sorted(ROOT.glob(pattern))
    return [f for f in dict.fromkeys(files) if f.is_file()]


def commands(script):
    """The block's logical lines: a line with its backslash continuations."""
    out, current = [], []
    for line in script.splitlines():
        current.append(line)
        if not line.rstrip().endswith("\\"):
            out.append("\n".join(current))
            current = []
    if current:
        out.append("\n".join(current))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.environ.get("PHAZE_BUILD_DIR", str(ROOT / "build")))
    ap.add_argument("--only", help="one README (path relative to the checkout)")
    ap.add_argument("--timeout", type=float, default=300, help="seconds per block")
    args = ap.parse_args()
    build = Path(args.build).resolve()
    if not (build / "phaze").exists():
        sys.exit(f"test-readme: no {build}/phaze: build first (share/scripts/build.sh)")

    # The checkout as git sees it (tracked and new files, not ignored ones), without build trees.
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT,
                            capture_output=True, check=True).stdout.decode().split("\0")
    failures, ran, skipped = [], 0, 0
    with tempfile.TemporaryDirectory(prefix="phaze-readme-") as tmp:
        for readme in readmes():
            rel = readme.relative_to(ROOT)
            if args.only and str(rel) != args.only:
                continue
            text = readme.read_text()
            marks = {m.group(1): m.group(2) for m in SKIP.finditer(text)}
            used = set()
            for k, m in enumerate(BLOCK.finditer(text)):
                line_no = text[:m.start()].count("\n") + 1
                kept = []
                for cmd in commands(m.group(2)):
                    hit = next((key for key in marks if key in cmd), None)
                    if hit is None:
                        kept.append(cmd)
                    else:
                        used.add(hit)
                        skipped += 1
                        print(f"  skip {rel}:{line_no}: {cmd.strip().splitlines()[0]}  ({marks[hit]})")
                script = "\n".join(kept)
                if not any(c.strip() and not c.strip().startswith("#") for c in kept):
                    continue
                # A fresh copy per block: blocks do not see each other's outputs.
                work = Path(tmp) / f"{rel.as_posix().replace('/', '_')}-{k}"
                for name in listed:
                    if not name:
                        continue
                    src, dst = ROOT / name, work / name
                    if src.is_file():
                        dst.parent.mkdir(parents=True, exist_ok=True)
                        shutil.copy2(src, dst)
                (work / "build").symlink_to(build)
                start = time.monotonic()
                try:
                    r = subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=work,
                                       capture_output=True, text=True, timeout=args.timeout,
                                       stdin=subprocess.DEVNULL)
                    code, out = r.returncode, r.stdout + r.stderr
                except subprocess.TimeoutExpired as e:
                    code, out = "timeout", (e.stdout or b"").decode() + (e.stderr or b"").decode()
                ran += 1
                took = time.monotonic() - start
                status = "ok" if code == 0 else f"FAILED ({code})"
                print(f"{status:>6}  {rel}:{line_no}  {took:.1f} s")
                if code != 0:
                    failures.append(f"{rel}:{line_no}: exit {code}\n{script}\n--- output (tail)\n"
                                    + "\n".join(out.splitlines()[-20:]))
            for key in marks:
                if key not in used:
                    failures.append(f"{rel}: the marker skip \"{key}\" matches no command")
    print(f"test-readme: {ran} blocks ran, {skipped} commands skipped as marked, "
          f"{len(failures)} failed")
    for f in failures:
        print("\n" + f, file=sys.stderr)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
