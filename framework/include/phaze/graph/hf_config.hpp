// Hugging Face `config.json` → ModelSpec, for the families phaze models: GPT-2, GPT-NeoX/Pythia,
// OPT, BERT, Llama (1, 2, 3), Mistral, Qwen2, Mixtral and Gemma (the mapping per `model_type` is
// in workloads/README.md, "Hugging Face configs"). Strict: an unknown `model_type`, a field no
// reader knows, or a known field with a value that changes the architecture in a way phaze does not
// model (sliding-window attention shorter than the sequence, cross-attention, dropout after the
// activation, …) is a located error naming the field, never a silent approximation.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "phaze/core/config_node.hpp"
#include "phaze/graph/model_spec.hpp"

namespace phaze {

// A map with a string `model_type`: what every Hugging Face config has and no phaze file has.
bool IsHfConfigDocument(const ConfigNode& root);

// The `model_type` values ParseHfConfig reads.
std::vector<std::string> HfModelTypes();

// sequence_length > 0 sets the sequence; 0 takes the model's context length
// (max_position_embeddings, or n_positions for GPT-2). The name is the file's stem, or its
// directory's name for a file called config.json.
ModelSpec ParseHfConfig(const ConfigNode& root, std::int64_t sequence_length = 0);

}  // namespace phaze
