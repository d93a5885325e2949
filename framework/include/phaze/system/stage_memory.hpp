// A stage's memory per device (step_model.hpp's header comment): what its layers hold whatever the
// schedule, what each further in-flight micro-batch adds, the largest working set, and what the
// sharding divides among the N devices that hold the same weights.
#pragma once

#include <algorithm>
#include <cstdint>

#include "phaze/system/step_model.hpp"

namespace phaze {

// Sums over a stage's layers, per device, in layer order.
struct StageFootprint {
  double resident = 0;  // Σ (weight + cached + gradient + optimizer state + activation bytes)
  double weight = 0;
  // Σ what an all-gather of each layer's weights moves (PlacementLayer::GatheredWeightBytes), and
  // of that, the experts' (in each layer's own proportion): the stage's reduction gathers these.
  double gathered = 0;
  double expert_gathered = 0;
  double cached = 0;    // Σ cached weight copies
  double gradient = 0;
  double optimizer_state = 0;
  double activation = 0;  // Σ activation bytes (kept per in-flight micro-batch)
  double incoming = 0;    // Σ bytes of the edges entering the stage
  double working = 0;     // max working bytes
  double step_working = 0;      // Σ step working bytes (the optimizer step's fp32 gradient copies)
  double largest_gradient = 0;  // max gradient bytes of a layer
  // max 2·gathered weight + gradient bytes of a layer (PlacementLayer::GatheredWeightBytes)
  double largest_gathered = 0;
  // Of weight + cached, gradient, optimizer_state and step_working, the experts' part
  // (PlacementLayer::ExpertShare of each layer's), which the sharding divides over the experts'
  // own replicas (ShardWaysOf).
  double expert_weight = 0;
  double expert_gradient = 0;
  double expert_optimizer_state = 0;
  double expert_step_working = 0;
  // Set by the caller when the experts fold under sharding gradients or parameters (SplitsGather):
  // the most a layer holds whole beyond its shards, max over the layers of LayerGatheredAway.
  double gathered_away = 0;

  // Adds the next layer of the stage.
  void Add(const PlacementLayer& layer);
  // What each in-flight micro-batch beyond the first keeps: the activations, or with the paper's
  // stage recompute only the stage's inputs.
  double Stash(bool stage_recompute) const { return stage_recompute ? incoming : activation; }
  // Of the stage's resident bytes, those `sharding` divides, and the whole-layer copies it adds
  // back while a layer works (both before the (1 − 1/N) factor).
  double Sharded(Sharding sharding) const {
    return optimizer_state + (sharding >= Sharding::kGradients ? gradient : 0.0) +
           (sharding == Sharding::kParameters ? weight + cached : 0.0);
  }
  double ExpertSharded(Sharding sharding) const {
    return expert_optimizer_state + (sharding >= Sharding::kGradients ? expert_gradient : 0.0) +
           (sharding == Sharding::kParameters ? expert_weight : 0.0);
  }
  double Gathered(Sharding sharding) const {
    return sharding == Sharding::kParameters  ? largest_gathered
           : sharding == Sharding::kGradients ? largest_gradient
                                              : 0.0;
  }
};

// The devices sharing what the sharding divides: `ways` for a stage's weights but the experts',
// `expert_ways` for those (ShardWaysOf; equal to `ways` unless the experts are folded, and then
// every formula below is the one-class one, bit for bit).
struct ShardDivisors {
  ShardDivisors(std::int64_t n = 1) : ways(n), expert_ways(n) {}  // one class: N for all
  ShardDivisors(std::int64_t n, std::int64_t experts) : ways(n), expert_ways(experts) {}
  std::int64_t ways;
  std::int64_t expert_ways;
  bool operator==(const ShardDivisors&) const = default;
};
// Peak bytes per device of a stage with `in_flight` micro-batches kept and `n` devices sharing
// what `sharding` divides (ways = 1 or kNone: nothing is): the larger of the forward and backward
// phase's (BackwardPeakBytes) and the optimizer step's (StepPeakBytes). Each class's sharded bytes
// lose (1 − 1/N) of themselves, N its ways; what the sharding holds whole while a layer works is
// (1 − 1/N)·Gathered over the `ways` — or, with the experts folded, the stage's gathered_away
// (each layer's classes over their own ways, LayerGatheredAway).
inline double BackwardPeakBytes(const StageFootprint& f, double stash, double in_flight,
                                Sharding sharding, const ShardDivisors& n) {
  double memory = f.resident + (in_flight - 1) * stash + f.working;
  if (sharding == Sharding::kNone) return memory;
  const bool split = n.expert_ways != n.ways;
  const double expert = split ? f.ExpertSharded(sharding) : 0.0;
  if (split && sharding >= Sharding::kGradients) {
    memory += f.gathered_away;
    if (n.ways > 1)
      memory -= (1 - 1 / static_cast<double>(n.ways)) * (f.Sharded(sharding) - expert);
  } else if (n.ways > 1) {
    memory += (1 - 1 / static_cast<double>(n.ways)) *
              (f.Gathered(sharding) - (f.Sharded(sharding) - expert));
  }
  if (n.expert_ways > 1 && expert > 0) {
    memory -= (1 - 1 / static_cast<double>(n.expert_ways)) * expert;
  }
  return memory;
}
// The step holds the weights, gradients and state (what the sharding divides, divided) and the
// step's working bytes — of the shard it updates when sharded — with no activation and nothing
// gathered.
inline double StepPeakBytes(const StageFootprint& f, Sharding sharding, const ShardDivisors& n) {
  double memory = f.resident - f.activation + f.step_working;
  if (sharding == Sharding::kNone) return memory;
  const double expert =
      n.expert_ways != n.ways ? f.ExpertSharded(sharding) + f.expert_step_working : 0.0;
  if (n.ways > 1) {
    memory -=
        (1 - 1 / static_cast<double>(n.ways)) * ((f.Sharded(sharding) + f.step_working) - expert);
  }
  if (n.expert_ways > 1 && expert > 0) {
    memory -= (1 - 1 / static_cast<double>(n.expert_ways)) * expert;
  }
  return memory;
}
inline double StagePeakBytes(const StageFootprint& f, double stash, double in_flight,
                             Sharding sharding, const ShardDivisors& n) {
  const double backward = BackwardPeakBytes(f, stash, in_flight, sharding, n);
  return f.step_working > 0 ? std::max(backward, StepPeakBytes(f, sharding, n)) : backward;
}

// What a layer holds whole while it works beyond its shards (sharding gradients: its gradients;
// parameters: twice its weights and its gradients), each class less 1/N of its ways: the rest's
// over n.ways, the experts' (ExpertShare of it) over n.expert_ways.
double LayerGatheredAway(const PlacementLayer& layer, Sharding sharding, const ShardDivisors& n);
// Whether a table's stages need it: experts folded (ways differ) under sharding gradients or
// parameters.
inline bool SplitsGather(Sharding sharding, const ShardDivisors& n) {
  return sharding >= Sharding::kGradients && n.expert_ways != n.ways;
}

// The same, part by part.
StageMemory StageMemoryParts(const StageFootprint& f, double stash, double in_flight,
                             Sharding sharding, const ShardDivisors& n);

// How many devices share what the sharding divides at width t and d, for a width with
// `weight_replicas` r: h·r (h = ShardReplicas: d, or fewer under hybrid sharding), or 1 unsharded.
inline std::int64_t ShardWays(const StepSettings& settings, std::int64_t t, std::int64_t d,
                              std::int64_t weight_replicas) {
  return settings.sharding != Sharding::kNone ? ShardReplicas(settings, t, d) * weight_replicas : 1;
}
inline std::int64_t ShardWays(const StepSettings& settings, const WeightClass& c) {
  return ShardWays(settings, c.t, c.d, c.r);
}
// Both classes of a table's weights at t and d (step_model.hpp's DenseClass and ExpertClass).
inline ShardDivisors ShardWaysOf(const StepSettings& settings, const LayerTable& table, int t,
                                 std::int64_t d) {
  return {ShardWays(settings, DenseClass(table, t, d)),
          ShardWays(settings, ExpertClass(table, t, d))};
}

}  // namespace phaze
