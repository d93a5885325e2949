// The optimizer step (step_model.hpp's header comment), one owner: what a layer's step costs on a
// device, from the layer's `optimizer_step` op (UniqueLayer::optimizer_step: one vector op over
// every parameter the layer holds, whose weight_bytes are the weights, gradients and optimizer
// state it touches), and the share of it each device runs.
#pragma once

#include <cstdint>

#include "phaze/arch/arch_config.hpp"
#include "phaze/arch/technology.hpp"
#include "phaze/core/energy.hpp"
#include "phaze/graph/operator.hpp"
#include "phaze/system/step_model.hpp"

namespace phaze {

struct OptimizerStepCost {
  double seconds = 0;
  Energy energy;
};

// A memory-bound pass: every byte the step touches read and written once at the device's HBM
// bandwidth, 2·weight_bytes of `step` (the energy: those bytes of HBM traffic).
OptimizerStepCost CostOptimizerStep(const Operator& step, const ArchConfig& arch,
                                    const EnergyTechnology& energy);

// Seconds of a stage's step (Σ optimizer_step_s of its layers) on each device at width t: the
// whole step, or 1/(h·r) of it when sharded (any sharding: each device steps its shard; h =
// ShardReplicas, d unless hybrid).
double OptimizerStepS(const StepSettings& settings, int t, double stage_step_s, std::int64_t d,
                      std::int64_t r);
// Devices' worth of a stage's step a plan runs: d·a, or (d/h)·a/r when sharded (a: the stage's
// devices; each of the d/h shard groups steps once), for the step's energy.
double OptimizerStepRuns(const StepSettings& settings, int t, double a, std::int64_t d,
                         std::int64_t r);

// The same for a stage of `table` whose step has `expert_step_s` seconds (and energy) of
// experts: with the experts folded (LayerTable::expert_fold > 1) each class divided, and run, as
// its own devices shard it (step_model.hpp's DenseClass, ExpertClass); else the one-class value.
double StageOptimizerStepS(const StepSettings& settings, const LayerTable& table, int t,
                           std::int64_t d, double stage_step_s, double expert_step_s);
Energy StageOptimizerStepJ(const StepSettings& settings, const LayerTable& table, int t,
                           std::int64_t d, double a, const Energy& step, const Energy& expert_step);

}  // namespace phaze
