// How a plan spreads the model's transformer blocks over its p·v pipeline chunks, in the order
// Megatron-LM and TorchTitan number them (chunk s is device s mod p's (s div p)-th; the embedding
// is on chunk 0, the head on the last) — what their launch arguments must reproduce:
//   - Megatron-LM's default (--pipeline-model-parallel-size p [--num-layers-per-virtual-pipeline-
//     stage n]) gives every chunk blocks/(p·v) and refuses blocks not a multiple of p·v; any
//     other split is --pipeline-model-parallel-layout (MegatronLayout);
//   - TorchTitan's generate_llm_fqn_per_model_part gives chunk s (blocks + a + b)/(p·v), one more
//     while s < (blocks + a + b) mod (p·v), less a on the first and b on the last
//     (pipeline_parallel_first/last_stage_less_layers a, b: TorchTitanLessLayers).
// The split priced is the plan's stage starts (each device's layers) or, without them,
// MegatronStageStarts; a device's blocks over its v chunks as evenly as possible, its extra blocks
// on its later chunks on the first device (whose first chunk holds the embedding) and on its
// earlier ones elsewhere (the last device's last chunk holds the head): TorchTitan's 7, 8 × 14, 7
// blocks of Llama 3.1 405B over 16 chunks are the devices' 15, 16 × 6, 15.
#pragma once

#include <string>
#include <vector>

#include "phaze/graph/layer_graph.hpp"
#include "phaze/search/model_evaluator.hpp"

namespace phaze {

struct PipelineSplit {
  std::vector<int> blocks;  // per chunk, p·v of them; empty with `why` when there is no such split
  std::string why;          // the model's layers are not an embedding, blocks and a head

  int Blocks() const;  // in all
  // Every chunk the same: Megatron-LM's default split.
  bool Even() const;
  // The blocks a chunk, runs folded: "7, 8 × 14, 7".
  std::string Text() const;

  // `blocks` over `chunks` as Megatron-LM's stage starts split them (MegatronStageStarts: the
  // first blocks mod chunks one more).
  static PipelineSplit Default(int blocks, int chunks);
};

PipelineSplit PlanPipelineSplit(const LayerGraph& graph, const PlanRequest& plan);

// Megatron-LM's --pipeline-model-parallel-layout for the split (megatron/core/transformer/
// pipeline_parallel_layer_layout.py: chunks split by '|', E the embedding, t a block, L the loss;
// a run of equal chunks "(…|)*n", a run of blocks "t*n"), e.g. "Et*15|(t*16|)*6,t*15L".
std::string MegatronLayout(const PipelineSplit& split);

// TorchTitan's pipeline_parallel_first/last_stage_less_layers (a, b) whose split over the chunks
// is this one and, for a looped schedule (v > 1 `virtual_stages`), a
// pipeline_parallel_layers_per_stage that makes ⌈(blocks + a + b) / it⌉ the chunks — or 0: none
// needed (v 1), or none does at v 2, TorchTitan's default of two chunks a device; false when no
// pair does.
bool TorchTitanLessLayers(const PipelineSplit& split, int virtual_stages, int* first_less,
                          int* last_less, int* layers_per_stage);

}  // namespace phaze
