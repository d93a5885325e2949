// Gradient reduction (step_model.hpp's header comment): the data-parallel reduction of a stage's
// gradients over the d·r devices that hold the same weights, t/r ranks apart (r =
// LayerTable::weight_replicas) — once per step as the sharding has it (all-reduce; reduce-scatter
// of the gradients and all-gather of the weights; …) and, sharding gradients or parameters, every
// micro-batch — in the precision the settings give; and the tied embedding's all-reduce between
// the first and the last stage.
#pragma once

#include <cstdint>

#include "phaze/system/step_model.hpp"

namespace phaze {

// Seconds of the reduction of a stage holding `weight_bytes` per device.
double GradientSyncS(const StepSettings& settings, int t, std::int64_t d, std::int64_t r,
                     double weight_bytes);
// The part not hidden behind backward: (1 − gradient_reduction_overlap) of it.
double ExposedGradientSyncS(const StepSettings& settings, int t, std::int64_t d, std::int64_t r,
                            double weight_bytes);
// Joules per device of the same reduction.
double GradientSyncJ(const StepSettings& settings, int t, std::int64_t d, std::int64_t r,
                     double weight_bytes);

// Seconds and joules per device of the collectives a stage holding `weight_bytes` per device runs
// for every micro-batch (sharding gradients: reduce-scatter of the gradients; parameters: that and
// two all-gathers of the weights); 0 unsharded, with optimizer sharding, or with d·r = 1.
double ShardingPerMicroBatchS(const StepSettings& settings, int t, std::int64_t d,
                              std::int64_t r, double weight_bytes);
double ShardingPerMicroBatchJ(const StepSettings& settings, int t, std::int64_t d,
                              std::int64_t r, double weight_bytes);

// The tied embedding's all-reduce of `bytes` per device between the first and the last of s
// stages (group {2, stride t·d·(s − 1)}); 0 without a pipeline or tied weights. Seconds, and
// joules per device.
double TiedEmbeddingS(const StepSettings& settings, int t, std::int64_t d, int stages,
                      double bytes);
double TiedEmbeddingJ(const StepSettings& settings, int t, std::int64_t d, int stages,
                      double bytes);

}  // namespace phaze
