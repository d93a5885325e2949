// The layer-table file of `phaze place --layers FILE` (JSON or YAML; schema in
// share/placement/README.md): cluster and training parameters plus, per tensor-parallel width, the
// layers with their profiled or estimated seconds and bytes, and the edges between them by name.
// Parsed through ConfigNode, so every error is located. Also the one JSON form of a plan.
#pragma once

#include <string>
#include <vector>

#include "phaze/core/config_node.hpp"
#include "phaze/core/json.hpp"
#include "phaze/placement/placement_search.hpp"

namespace phaze {

PlacementProblem ParseLayerTableFile(const ConfigNode& root);

// The plan object every output writes (results.json, `phaze place`, `phaze predict`):
// {pipeline_stages, data_parallel, tensor_parallel, virtual_stages, micro_batches_per_batch,
//  max_stage_load_s, bubble_share, sync_share, breakdown, stages: [{first_layer, last_layer,
//  layers (how many), devices, load_s, forward_s, backward_s, recompute_s, peak_memory_bytes,
//  memory}]}. `layer_names` names the layers the stages' indices refer to.
Json PlacementPlanToJson(const PlacementPlan& plan, const std::vector<std::string>& layer_names);
// The layer names of one width of a problem, for PlacementPlanToJson.
std::vector<std::string> LayerNames(const LayerTable& table);
// {forward_s, backward_s, recompute_s, pipeline_send_s, bubble_s, data_parallel_s (what the step
//  waits for), data_parallel_total_s (the whole reduction), optimizer_s,
//  tied_embedding_s, bottleneck_stage, pipeline_level}
Json ToJson(const StepBreakdown& breakdown);
// {weight_bytes, gradient_bytes, optimizer_state_bytes, activation_bytes, working_bytes, in_flight}
Json ToJson(const StageMemory& memory);

}  // namespace phaze
