#!/usr/bin/env python3
"""share/validation/decompose.py on runs built from known costs (the CTest
Validation.DecomposeRecoversKnownCosts): the measured fit must recover a class's block, rest and
once from p = 1 runs, and the residual fit phaze's errors in them from runs over three pipeline
depths — both exactly, from the closed form T = m·(L/p·block + rest) + (p − 1)·L/p·block + once
written out by hand below, not through the script's own coefficients."""
import csv
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "share",
                                "validation"))
import decompose  # noqa: E402


def iteration_s(p, layers, m, block, rest, once):
    per_stage = layers // p
    return m * (per_stage * block + rest) + (p - 1) * per_stage * block + once


class DecomposeTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="decompose-test-")
        self.csv = os.path.join(self.dir, "runs.csv")
        self.residuals = os.path.join(self.dir, "residuals.csv")
        # Class (t 2, h 1024, micro-batch 2): measured block 3 ms, rest 9 ms, once 20 ms;
        # phaze prices the block 0.5 ms too high, the rest 4 ms too low and once 1 ms too low.
        self.truth = (3e-3, 9e-3, 20e-3)
        self.error = (-0.5e-3, 4e-3, 1e-3)
        runs = []
        for p in (1, 2, 4):
            for layers in (12, 24):
                for d, batch in ((1, 8), (1, 16), (2, 32)):
                    m = batch // (d * 2)
                    measured = iteration_s(p, layers, m, *self.truth)
                    predicted = iteration_s(p, layers, m, *(a - e for a, e in
                                                             zip(self.truth, self.error)))
                    runs.append((2 * d * p, batch, layers, p, d, measured, predicted))
        with open(self.csv, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["# GPUs", "global batch", "micro batch", "hidden", "heads", "layers",
                        "sequence", "t", "d", "p", "iteration (ms)"])
            for gpus, batch, layers, p, d, measured, _ in runs:
                w.writerow([gpus, batch, 2, 1024, 16, layers, 1024, 2, d, p, measured * 1e3])
        with open(self.residuals, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["source", "gpus", "t", "p", "d", "v", "micro_batch", "recompute",
                        "sequence_parallel", "measured_s", "predicted_s", "error", "device"])
            for gpus, batch, layers, p, d, measured, predicted in runs:
                w.writerow(["runs.csv", gpus, 2, p, d, 1, 2, "full", 0, "%.6g" % measured,
                            "%.9g" % predicted, "%.5f" % (predicted / measured - 1), "a100"])

    def test_measured_class_recovers_its_costs(self):
        runs = decompose.load_runs(self.csv, self.residuals)
        self.assertTrue(all(r["predicted_s"] is not None for r in runs))
        measured = decompose.measured_classes(runs)
        self.assertEqual(list(measured), [(2, 1024, 16, 1024, 2, 1)])  # d 2 has one m only
        block, rest, once, n, fit = measured[(2, 1024, 16, 1024, 2, 1)]
        self.assertEqual(n, 4)  # p = 1, d = 1: two layer counts × two batches
        for got, want in zip((block, rest, once), self.truth):
            self.assertAlmostEqual(got, want, delta=1e-6 * want)  # the CSV holds 6 ms decimals
        self.assertLess(fit, 1e-6)

    def test_residual_class_recovers_phazes_errors(self):
        runs = decompose.load_runs(self.csv, self.residuals)
        residuals = decompose.residual_classes(runs)
        self.assertEqual(list(residuals), [(2, 1024, 16, 1024, 2)])
        d_block, d_rest, d_once, n, before, after = residuals[(2, 1024, 16, 1024, 2)]
        self.assertEqual(n, 18)
        for got, want in zip((d_block, d_rest, d_once), self.error):
            self.assertAlmostEqual(got, want, delta=1e-8)
        self.assertGreater(before, 0.01)
        self.assertLess(after, 1e-6)

    def test_a_class_without_two_depths_or_sizes_is_left_out(self):
        runs = [r for r in decompose.load_runs(self.csv, self.residuals) if r["p"] == 2]
        self.assertEqual(decompose.residual_classes(runs), {})
        self.assertEqual(decompose.measured_classes(runs), {})


if __name__ == "__main__":
    unittest.main()
