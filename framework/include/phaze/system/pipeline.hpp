// Pipeline schedules (step_model.hpp's header comment): how many micro-batches a stage keeps in
// flight, how many steps the pipeline runs, and the sends between its stages.
#pragma once

#include <cstdint>

#include "phaze/system/step_model.hpp"

namespace phaze {

// Micro-batches whose activations the stage at `position` (1 = the last) of `stages` keeps:
// p (1F1B), m = `per_pipeline` (GPipe), or (2·(p − 1) + (v − 1)·s + 1)/v (interleaved).
double InFlightMicroBatches(const StepSettings& settings, int position, int stages,
                            std::int64_t per_pipeline);

// The pipeline's length in stage loads: m + (s − 1)/v with m = ⌈B/d⌉ (v = 1 unless interleaved).
double PipelineSteps(const StepSettings& settings, std::int64_t d, int stages);

// The network level the pipeline's sends cross: the one holding t·s·d ranks.
int PipelineLevel(const StepSettings& settings, int t, int stages, std::int64_t d);

// One send of `edge` across `level`: its bytes, then (gather_group g > 1) the receiving stage's
// all-gather of g·bytes over {g, stride 1}. Seconds, and joules per device.
double EdgeSendS(const StepSettings& settings, const PlacementEdge& edge, int level);
double EdgeSendJ(const StepSettings& settings, const PlacementEdge& edge, int level);

}  // namespace phaze
