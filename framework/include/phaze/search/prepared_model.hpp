// The architecture-independent part of a model, built once per run (PrepareModel): the layer graph
// of every micro-batch size, sliced by each of the run's strategies for every tensor-parallel width
// it supports.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "phaze/graph/layer_graph.hpp"
#include "phaze/graph/model_spec.hpp"
#include "phaze/search/run_config.hpp"
#include "phaze/strategy/parallelism_strategy.hpp"

namespace phaze {

// The architecture-independent part of a model: its sliced layer graphs.
struct PreparedModel {
  std::string name;  // the workload's name
  std::string file;
  double weight = 1;
  std::optional<ExpertPlacement> expert;
  std::vector<std::string> presets;  // this model's own baseline architectures
  std::int64_t sequence_length = 0;
  std::int64_t parameters = 0;
  double flops_per_token = 0;  // model FLOPs (forward + backward GEMMs, attention included)

  struct Slice {
    std::int64_t micro_batch = 1;
    std::int64_t width = 1;
    int strategy = 0;  // index into RunConfig::strategies (graph.strategy is its name)
    LayerGraph graph;
  };
  std::vector<Slice> slices;         // micro-batch-major, then strategy, widths ascending
  std::vector<std::string> refused;  // "t=8: …" widths a strategy refused (for the report)

  // The slice for (micro-batch, width, strategy index), or null.
  const Slice* FindSlice(std::int64_t micro_batch, std::int64_t width, int strategy) const;
  // A copy without the (large) graphs, for results.
  PreparedModel WithoutSlices() const;
};

// The run's recipe on a (sliced) layer graph, as the search, predict, plan and schedule apply it:
// its attention kernel (graph/attention_kernel.hpp) and loss (graph/loss_kernel.hpp), then its
// number format (graph/precision.hpp), then its tensor-parallel communication overlap
// (graph/tensor_parallel_overlap.hpp).
LayerGraph WithTrainingKernels(const LayerGraph& graph, const RunConfig::Training& training);

// The model an entry names (a workload or a Hugging Face config; errors located at the entry).
ModelSpec LoadModelSpec(const ModelEntry& entry);

// Builds every (micro-batch, strategy, width) slice; `strategies` are run.strategies' objects
// (CreateRunStrategies). Throws ConfigError (located at the entry) when the model file is bad or,
// with `require_slices`, when no strategy supports any width (else `refused` says why).
PreparedModel PrepareModel(const ModelEntry& entry, const RunConfig& run,
                           const std::vector<std::shared_ptr<const ParallelismStrategy>>& strategies,
                           bool require_slices = true);

}  // namespace phaze
