// Graph files: the layer graph with its operator graphs as JSON ("format": "phaze-layer-graph",
// "version": 1; schema in workloads/README.md), so graphs traced elsewhere can be brought in;
// import goes through the config layer and reports FILE:LINE:COL errors. Also the DOT rendering and
// the text summary printed by `phaze graph`.
#pragma once

#include <string>

#include "phaze/core/config_node.hpp"
#include "phaze/core/json.hpp"
#include "phaze/graph/layer_graph.hpp"

namespace phaze {

inline constexpr const char* kLayerGraphFormat = "phaze-layer-graph";
inline constexpr int kLayerGraphFormatVersion = 2;  // 2: neutral `axes` replace `tp_role`

Json LayerGraphToJson(const LayerGraph& graph);

// True when the document is a graph file (has "format": "phaze-layer-graph"), false for a model
// description.
bool IsLayerGraphDocument(const ConfigNode& root);

// Imports a graph file. A unique layer without "backward" gets the derived one (and is fused when
// the model's "fused" is true); memory figures absent from the file are derived from
// "parameters", the saved tensors and the optimizer.
LayerGraph ParseLayerGraphFile(const ConfigNode& root);

std::string LayerGraphToDot(const LayerGraph& graph);

// The human-readable summary: parameters (vs the published count), layers, ops per class, FLOPs,
// memory per unique layer and in total.
std::string LayerGraphSummary(const LayerGraph& graph);

// 1234567 → "1,234,567".
std::string WithThousands(std::int64_t value);

}  // namespace phaze
