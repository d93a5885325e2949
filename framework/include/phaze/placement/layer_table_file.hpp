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

// {"feasible", "reason"?, "time_per_batch_s", "throughput_samples_per_s", "plan": {t, d, s,
// micro_batches, max_stage_load_s, bubble_share, sync_share, stages: [{layers, devices, load_s,
// peak_memory_bytes}]}}
Json PlacementPlanToJson(const PlacementPlan& plan, const PlacementProblem& problem);

}  // namespace phaze
