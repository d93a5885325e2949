// The layer-table file of `phaze place --layers FILE` (JSON or YAML; schema in
// share/placement/README.md): cluster and training parameters plus, per tensor-parallel width, the
// layers with their profiled or estimated seconds and bytes, and the edges between them by name.
// Parsed through ConfigNode, so every error is located. Also renders a plan as JSON.
#pragma once

#include "phaze/config/config_node.hpp"
#include "phaze/core/json.hpp"
#include "phaze/placement/placement_search.hpp"

namespace phaze {

PlacementProblem ParseLayerTableFile(const ConfigNode& root);

// {"feasible", "reason"?, "time_per_batch_s", "throughput_samples_per_s", "plan": {t, d, s, v,
// micro_batches, max_stage_load_s, bubble_share, sync_share, breakdown, stages: [{layers,
// devices, load_s, forward_s, backward_s, recompute_s, peak_memory_bytes, memory}]}}
Json PlacementPlanToJson(const PlacementPlan& plan, const PlacementProblem& problem);
// {forward_s, backward_s, recompute_s, pipeline_send_s, bubble_s, data_parallel_s, optimizer_s,
//  tied_embedding_s, bottleneck_stage, pipeline_level}
Json ToJson(const StepBreakdown& breakdown);
// {weight_bytes, gradient_bytes, optimizer_state_bytes, activation_bytes, working_bytes, in_flight}
Json ToJson(const StageMemory& memory);
// {devices, load_s, forward_s, backward_s, recompute_s, peak_memory_bytes, memory}
Json ToJson(const StagePlan& stage);

}  // namespace phaze
