#include "phaze/strategy/parallelism_strategy.hpp"

#include "phaze/core/error.hpp"
#include "phaze/graph/graph_builder.hpp"

namespace phaze {

LayerGraph SliceLayerGraph(const ParallelismStrategy& strategy, const std::string& strategy_name,
                           const LayerGraph& full, std::int64_t width, bool fusion) {
  if (full.fused) {
    throw InvalidArgumentError("strategy '" + strategy_name +
                               "' slices unfused graphs; build the graph with fusion off");
  }
  if (width < 1) throw InvalidArgumentError("width must be ≥ 1, got " + std::to_string(width));
  const std::string refusal = strategy.Refusal(full, width);
  if (!refusal.empty()) {
    throw InvalidArgumentError("strategy '" + strategy_name + "' cannot split " + full.model + " " +
                               std::to_string(width) + " ways: " + refusal);
  }
  LayerGraph slice = strategy.Slice(full, width);
  if (slice.weight_replicas < 1 || width % slice.weight_replicas != 0) {
    throw InvalidArgumentError("strategy '" + strategy_name + "' returned weight_replicas " +
                               std::to_string(slice.weight_replicas) + ", which does not divide " +
                               std::to_string(width));
  }
  slice.tensor_parallel = width;
  slice.strategy = strategy_name;
  slice.fused = fusion;
  for (auto& layer : slice.unique_layers) {
    CompleteUniqueLayer(layer, fusion, slice.dtype_bytes, slice.optimizer);
  }
  return slice;
}

LayerGraph BuildSlicedLayerGraph(const ParallelismStrategy& strategy,
                                 const std::string& strategy_name, const ModelSpec& model,
                                 GraphOptions options, std::int64_t width) {
  const bool fusion = options.fusion;
  options.fusion = false;
  return SliceLayerGraph(strategy, strategy_name, BuildLayerGraph(model, options), width, fusion);
}

std::vector<std::int64_t> SupportedWidths(const ParallelismStrategy& strategy,
                                          const LayerGraph& full,
                                          const std::vector<std::int64_t>& candidates) {
  std::vector<std::int64_t> out;
  for (auto w : candidates) {
    if (w >= 1 && strategy.Refusal(full, w).empty()) out.push_back(w);
  }
  return out;
}

}  // namespace phaze
