// Device placement by dynamic programming (the paper's §5; DESIGN.md §6): for each tensor-parallel
// width t, choose the data-parallel width d, the number of pipeline stages s and which layers each
// stage holds, under the HBM limit, to minimise the time per batch of a flushing 1F1B pipeline.
//
// Exact semantics (tests compare against these):
// * Layers are given in a topological order; a stage is a contiguous range [i, j) of that order.
//   For a chain this covers every partition; for a DAG with branches only the downsets that are
//   suffixes of the order are explored (a documented, conservative restriction).
// * a (devices of a stage) = t if the stage holds a tensor-parallel layer, else 1.
// * load(stage, position p from the end; the last stage is p = 1), seconds:
//   forward: layers in order; a layer starts when its in-stage predecessors have finished and each
//   input from another stage has arrived (edge bytes / link bandwidth, counted from time 0);
//   fw = latest finish. Backward the same on reversed edges with backward_s. Without
//   recomputation, or for p = 1: load = fw + bw. With recomputation and p > 1: the backward phase
//   first re-runs the stage's forward (Σ recompute_forward_s, ignoring outside inputs) and every
//   backward layer starts no earlier than that recompute has ended: load = fw + bw'.
// * memory(stage, p) = Σ (weight + gradient + optimizer state + activation bytes)
//   + (p − 1)·stash, stash = bytes of the edges entering the stage from other stages (recompute) or
//   Σ activation bytes (stash). A stage with memory > hbm_bytes is infeasible.
// * dp over suffixes: the max stage load of covering the suffix with s stages whose devices sum to
//   at most k; because a ∈ {1, t}, k collapses to the number m of stages with a = 1
//   (devices = m + t·(s − m)), an exact reformulation.
// * time per batch = (⌈B/d⌉ + s − 1)·max stage load + 4·(d − 1)/d · weight_bytes(first stage) /
//   link bandwidth, with B = global_batch / micro_batch, d ∈ [1, min(K, B)], ⌊K/d⌋ devices per
//   pipeline. Among d with equal ⌊K/d⌋ and ⌈B/d⌉ the smallest is best (smaller sync term), so only
//   those d are evaluated. Ties: smaller t, then smaller d, then fewer stages, then the earlier
//   split (deterministic).
// * throughput = global_batch / time per batch.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace phaze {

struct PlacementLayer {
  std::string name;
  double forward_s = 0;
  double backward_s = 0;
  std::optional<double> recompute_forward_s;  // default: forward_s
  double weight_bytes = 0;
  std::optional<double> gradient_bytes;       // default: weight_bytes
  double optimizer_state_bytes = 0;
  double activation_bytes = 0;
  bool tensor_parallel = false;

  double RecomputeForwardS() const { return recompute_forward_s.value_or(forward_s); }
  double GradientBytes() const { return gradient_bytes.value_or(weight_bytes); }
};

struct PlacementEdge {
  int from = 0;  // layer indices; from < to in the given order
  int to = 0;
  double bytes = 0;
};

// The layer DAG of one tensor-parallel width (per-device figures of that width's slice).
struct LayerTable {
  std::vector<PlacementLayer> layers;
  std::vector<PlacementEdge> edges;
};

struct PlacementProblem {
  std::map<int, LayerTable> widths;  // t → table
  std::int64_t num_accelerators = 1;
  std::int64_t global_batch = 1;
  std::int64_t micro_batch = 1;
  double link_bandwidth_bytes_per_s = 1;
  double hbm_bytes = 0;
  bool recompute = false;

  // Empty when valid, else what is wrong (which layer, which edge).
  std::string Validate() const;
};

struct StagePlan {
  int first_layer = 0;  // inclusive
  int last_layer = 0;   // inclusive
  int devices = 1;      // a
  double load_s = 0;
  double peak_memory_bytes = 0;
};

struct PlacementPlan {
  bool feasible = false;
  std::string reason;  // why not, when infeasible
  double time_per_batch_s = 0;
  double throughput_samples_per_s = 0;
  int tensor_parallel = 1;  // t
  int data_parallel = 1;    // d
  int pipeline_stages = 0;  // s
  std::int64_t micro_batches = 0;  // B
  std::vector<StagePlan> stages;   // first stage first
  double max_stage_load_s = 0;
  double bubble_share = 0;  // (s − 1)·max load / time
  double sync_share = 0;    // data-parallel gradient sync / time
};

struct FixedStrategy {
  int pipeline_stages = 1;  // p
  int data_parallel = 1;    // d
  int tensor_parallel = 1;  // t
};

class PlacementSearch {
 public:
  // The best plan over every width in the problem. Infeasibility is a plan with a reason.
  PlacementPlan Place(const PlacementProblem& problem) const;
  // A fixed {p, d, t} ("expert") strategy with the same formulas; layers are split as evenly as
  // possible into p contiguous stages (the first n mod p stages get one extra layer).
  PlacementPlan Evaluate(const PlacementProblem& problem, const FixedStrategy& strategy) const;
};

}  // namespace phaze
