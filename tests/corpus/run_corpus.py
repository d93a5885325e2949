#!/usr/bin/env python3
"""Runs the hostile-input corpus (cases.txt) against a phaze binary: every case must exit with
its expected code (0, 1 or 2 — never 3, a crash or a signal), print its expected substring, finish
within the time limit, and leave no sanitizer report on stderr; no result (the output of exit 0 or
1, and every file a case writes) may hold `inf` or `nan` as a number (a refusal may quote them). Prints one line per failure and a
summary; exits 1 when any case failed.

  run_corpus.py --phaze build/phaze [--timeout 10] [--filter SUBSTRING] [--jobs 2]
"""
import argparse, concurrent.futures, os, pathlib, re, shlex, subprocess, sys, tempfile, time

HERE = pathlib.Path(__file__).resolve().parent
SANITIZER_MARKS = ("AddressSanitizer", "UndefinedBehaviorSanitizer", "runtime error:",
                   "LeakSanitizer", "terminate called", "internal error")
NON_FINITE = re.compile(r"(?<![A-Za-z_])(inf|nan|infinity)(?![A-Za-z_])", re.I)


def load_cases():
    for number, line in enumerate((HERE / "cases.txt").read_text().splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        exit_code, substring, args = (part.strip() for part in line.split("|", 2))
        yield number, int(exit_code), substring, args


def run_case(phaze, timeout, case):
    number, expected, substring, args = case
    with tempfile.TemporaryDirectory(prefix="phaze-corpus-") as tmp:
        def expand(t):
            return t.replace("{in}", str(HERE / "inputs")).replace("{tmp}", tmp).replace(
                "{src}", str(HERE.parent.parent))
        text, substring = expand(args), expand(substring)
        argv = [phaze] + shlex.split(text)
        start = time.monotonic()
        try:
            p = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout,
                               cwd=tmp, env=dict(os.environ, PHAZE_PLUGIN_PATH=""))
        except subprocess.TimeoutExpired:
            return f"cases.txt:{number}: timed out after {timeout} s: {text}"
        seconds = time.monotonic() - start
        out = p.stdout.decode(errors="replace") + p.stderr.decode(errors="replace")
        problems = []
        if p.returncode != expected:
            problems.append(f"exit {p.returncode}, expected {expected}")
        if substring and substring not in out:
            problems.append(f"no '{substring}' in the output")
        marks = [m for m in SANITIZER_MARKS if m in out]
        if marks:
            problems.append("reported " + ", ".join(marks))
        if p.returncode == 2 and not out.strip():
            problems.append("exit 2 with no message")
        if p.returncode in (0, 1) and NON_FINITE.search(out):
            problems.append(f"non-finite number printed: '{NON_FINITE.search(out).group(0)}'")
        for f in pathlib.Path(tmp).rglob("*"):
            if f.is_file() and f.suffix in (".json", ".csv", ".md", ".svg", ".yaml"):
                m = NON_FINITE.search(f.read_text(errors="replace"))
                if m:
                    problems.append(f"non-finite number '{m.group(0)}' in {f.name}")
        if problems:
            tail = out.strip().splitlines()[-3:] if out.strip() else []
            return (f"cases.txt:{number}: {'; '.join(problems)} ({seconds:.1f} s): {text}\n    " +
                    "\n    ".join(tail))
        return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--phaze", required=True)
    ap.add_argument("--timeout", type=float, default=10.0)
    ap.add_argument("--filter", default="")
    ap.add_argument("--jobs", type=int, default=2)
    a = ap.parse_args()
    cases = [c for c in load_cases() if a.filter in c[3]]
    start = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(a.jobs) as pool:
        failures = [f for f in pool.map(lambda c: run_case(a.phaze, a.timeout, c), cases) if f]
    for f in failures:
        print(f)
    print(f"corpus: {len(cases) - len(failures)}/{len(cases)} cases passed "
          f"in {time.monotonic() - start:.1f} s")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
