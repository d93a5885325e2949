// The hard scheduling case, shared by the scheduler tests and benchmark: a chain of
// input-gradient ops (two GEMMs, then a vector op) with a weight-gradient GEMM branching off each
// GEMM, latencies 10–100 µs, all-cores latency 0.2–0.9× single-core.
#pragma once

#include <random>
#include <string>

#include "phaze/schedule/schedule_problem.hpp"

namespace phaze::testing {

inline ScheduleProblem BackwardLike(int ops, int num_tc, int num_vc, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> latency(1e-5, 1e-4), ratio(0.2, 0.9);
  ScheduleProblem p;
  p.name = "backward" + std::to_string(ops);
  p.num_tc = num_tc;
  p.num_vc = num_vc;
  int last = -1;
  while (static_cast<int>(p.ops.size()) < ops) {
    const int k = static_cast<int>(p.ops.size());
    const bool gemm = k % 3 != 2;
    ScheduleOp op{"op" + std::to_string(k), gemm ? ScheduleClass::kTensor : ScheduleClass::kVector,
                  latency(rng), 0};
    op.all_cores_s = op.single_core_s * ratio(rng);
    p.ops.push_back(op);
    if (last >= 0) p.edges.emplace_back(last, k);
    if (gemm && static_cast<int>(p.ops.size()) < ops) {  // the weight gradient branches off
      ScheduleOp wgrad{"wgrad" + std::to_string(k), ScheduleClass::kTensor, latency(rng), 0};
      wgrad.all_cores_s = wgrad.single_core_s * ratio(rng);
      p.ops.push_back(wgrad);
      p.edges.emplace_back(last >= 0 ? last : k, static_cast<int>(p.ops.size()) - 1);
    }
    last = k;
  }
  return p;
}

}  // namespace phaze::testing
