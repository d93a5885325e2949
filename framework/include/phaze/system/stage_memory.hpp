// A stage's memory per device (step_model.hpp's header comment): what its layers hold whatever the
// schedule, what each further in-flight micro-batch adds, the largest working set, and the
// optimizer state the distributed optimizer shards.
#pragma once

#include <cstdint>

#include "phaze/system/step_model.hpp"

namespace phaze {

// Sums over a stage's layers, per device, in layer order.
struct StageFootprint {
  double resident = 0;  // Σ (weight + gradient + optimizer state + activation bytes)
  double weight = 0;
  double gradient = 0;
  double optimizer_state = 0;
  double activation = 0;  // Σ activation bytes (kept per in-flight micro-batch)
  double incoming = 0;    // Σ bytes of the edges entering the stage
  double working = 0;     // max working bytes

  // Adds the next layer of the stage.
  void Add(const PlacementLayer& layer);
  // What each in-flight micro-batch beyond the first keeps: the activations, or with the paper's
  // stage recompute only the stage's inputs.
  double Stash(bool stage_recompute) const { return stage_recompute ? incoming : activation; }
};

// Peak bytes per device of a stage with `in_flight` micro-batches kept and its optimizer state
// sharded `optimizer_shards` ways (1: not sharded).
inline double StagePeakBytes(const StageFootprint& f, double stash, double in_flight,
                             std::int64_t optimizer_shards) {
  double memory = f.resident + (in_flight - 1) * stash + f.working;
  if (optimizer_shards > 1) {
    memory -= f.optimizer_state - f.optimizer_state / static_cast<double>(optimizer_shards);
  }
  return memory;
}

// The same, part by part.
StageMemory StageMemoryParts(const StageFootprint& f, double stash, double in_flight,
                             std::int64_t optimizer_shards);

// How many ways the optimizer state of a width with `weight_replicas` is sharded at d.
inline std::int64_t OptimizerShards(const StepSettings& settings, std::int64_t d,
                                    std::int64_t weight_replicas) {
  return settings.distributed_optimizer ? d * weight_replicas : 1;
}

}  // namespace phaze
