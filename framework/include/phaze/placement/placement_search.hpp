// Device placement by dynamic programming (the paper's §5; DESIGN.md §6 and §10): for each
// tensor-parallel width t, choose the data-parallel width d, the number of pipeline stages s and
// which layers each stage holds, under the HBM limit, to minimise the time of a training step.
// What a split costs — loads, memory, sync, optimizer step, time per batch, energy — is the step
// model's (system/step_model.hpp, whose header states every formula); this is the search over
// splits.
//
// Exact semantics (tests compare against these):
// * Layers are given in a topological order; a stage is a contiguous range [i, j) of that order.
//   For a chain this covers every partition; for a DAG with branches only the downsets that are
//   suffixes of the order are explored (a documented, conservative restriction).
// * a (devices of a stage) = t if the stage holds a tensor-parallel layer, else 1.
// * d ∈ [1, min(K, B)], ⌊K/d⌋ devices per pipeline; a stage with memory > hbm_bytes is infeasible.
// * dp over suffixes: the max stage load of covering the suffix with s stages whose devices sum to
//   at most k; because a ∈ {1, t}, k collapses to the number m of stages with a = 1
//   (devices = m + t·(s − m)), an exact reformulation. The DP runs once per pipeline level and per
//   memory class (the d, m or s the memory depends on: one class for 1F1B without the distributed
//   optimizer).
// * Among d with equal ⌊K/d⌋ and ⌈B/d⌉ the smallest is best (sync, sends and the optimizer never
//   shrink with d, the memory class aside: with the distributed optimizer a larger d of the same
//   ⌊K/d⌋ and ⌈B/d⌉ is not tried), so only those d are evaluated. Ties: smaller t, then smaller d,
//   then fewer stages, then the earlier split (deterministic).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "phaze/system/step_model.hpp"

namespace phaze {

// The step settings, the layer table of every width and the device's HBM.
struct PlacementProblem : StepSettings {
  std::map<int, LayerTable> widths;  // t → table
  double hbm_bytes = 0;

  // Empty when valid, else what is wrong (which setting, which layer, which edge).
  std::string Validate() const;
};

struct FixedStrategy {
  int pipeline_stages = 1;  // p
  int data_parallel = 1;    // d
  int tensor_parallel = 1;  // t
  // First layer of every stage after the first (p − 1 increasing indices); empty: the even split.
  std::vector<int> stage_starts;
};

class PlacementSearch {
 public:
  // The best plan over every width in the problem. Infeasibility is a plan with a reason.
  PlacementPlan Place(const PlacementProblem& problem) const;
  // A fixed {p, d, t} ("expert") strategy with the same formulas; layers are split at
  // `stage_starts`, or as evenly as possible into p contiguous stages (the first n mod p stages
  // get one extra layer). A plan whose stages exceed the HBM is infeasible (the reason names the
  // first and its overflow) but keeps its time, breakdown, energy and every stage's memory.
  PlacementPlan Evaluate(const PlacementProblem& problem, const FixedStrategy& strategy) const;
};

}  // namespace phaze
