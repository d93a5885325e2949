// The parallelism-strategy interface (plugins implement it; DESIGN §3): given a workload's full
// layer graph and a width w, the per-device slice — shapes divided as the strategy divides them,
// collective ops inserted (kind, bytes, group, and what they do in the backward pass), layers
// marked as split, per-device parameters. Strategies slice *unfused forward* graphs; the framework
// (SliceLayerGraph) then re-derives the backward graphs, fuses and recomputes the memory figures,
// so every strategy gets those for free and consistently. Const, deterministic, thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "phaze/graph/graph_builder.hpp"
#include "phaze/graph/layer_graph.hpp"

namespace phaze {

class ParallelismStrategy {
 public:
  virtual ~ParallelismStrategy() = default;
  // "" when `width` is supported for this graph, else why not (which op or hyperparameter).
  virtual std::string Refusal(const LayerGraph& full, std::int64_t width) const = 0;
  // The per-device slice of an unfused graph: forward graphs, parameters and tied_parameters per
  // unique layer, `tensor_parallel` flags. Called only for widths Refusal accepts.
  virtual LayerGraph Slice(const LayerGraph& full, std::int64_t width) const = 0;
};

// Slices `full` (built with fusion off) for `width`, then derives backward graphs, fuses when
// `fusion`, and recomputes memory. Throws InvalidArgumentError with the strategy's reason for an
// unsupported width, or when `full` is fused.
LayerGraph SliceLayerGraph(const ParallelismStrategy& strategy, const std::string& strategy_name,
                           const LayerGraph& full, std::int64_t width, bool fusion);

// A model's per-device layer graph: built unfused with `options`, sliced `width` ways, fused when
// options.fusion — the one path from a model description to a sliced graph.
LayerGraph BuildSlicedLayerGraph(const ParallelismStrategy& strategy,
                                 const std::string& strategy_name, const ModelSpec& model,
                                 GraphOptions options, std::int64_t width);

// The widths among `candidates` the strategy supports for `full`.
std::vector<std::int64_t> SupportedWidths(const ParallelismStrategy& strategy,
                                          const LayerGraph& full,
                                          const std::vector<std::int64_t>& candidates);

}  // namespace phaze
