#include "phaze/search/prepared_model.hpp"

#include <algorithm>

#include "phaze/core/error.hpp"
#include "phaze/graph/graph_builder.hpp"
#include "phaze/graph/hf_config.hpp"
#include "phaze/graph/model_spec.hpp"
#include "phaze/graph/tensor_parallel_overlap.hpp"

namespace phaze {

namespace {

// "FILE: " for a run config read from a file; nothing for the built-in defaults.
std::string SourcePrefix(const RunConfig& run) {
  return run.source.empty() || run.source == "<defaults>" ? "" : run.source + ": ";
}

}  // namespace

PreparedModel PreparedModel::WithoutSlices() const {
  PreparedModel m;
  m.name = name;
  m.file = file;
  m.weight = weight;
  m.expert = expert;
  m.presets = presets;
  m.sequence_length = sequence_length;
  m.parameters = parameters;
  m.flops_per_token = flops_per_token;
  m.refused = refused;
  return m;
}

const PreparedModel::Slice* PreparedModel::FindSlice(std::int64_t micro_batch,
                                                     std::int64_t width, int strategy) const {
  for (const auto& s : slices) {
    if (s.micro_batch == micro_batch && s.width == width && s.strategy == strategy) return &s;
  }
  return nullptr;
}

LayerGraph WithTrainingKernels(const LayerGraph& graph, const RunConfig::Training& training) {
  return WithTensorParallelOverlap(
      WithPrecision(WithLossKernel(WithAttentionKernel(graph, training.attention), training.loss),
                    training.precision, training.fp8_recipe),
      training.tensor_parallel_overlap);
}

ModelSpec LoadModelSpec(const ModelEntry& entry) {
  return LoadNamed(entry.file_node, [&] {
    return entry.hf ? LoadHfConfig(entry.resolved, entry.sequence_length)
                    : LoadWorkload(entry.resolved, entry.sequence_length);
  });
}

PreparedModel PrepareModel(
    const ModelEntry& entry, const RunConfig& run,
    const std::vector<std::shared_ptr<const ParallelismStrategy>>& strategies,
    bool require_slices) {
  const ModelSpec spec = LoadModelSpec(entry);
  PreparedModel m;
  m.name = spec.name;
  m.file = entry.file;
  m.weight = entry.weight;
  m.expert = entry.expert;
  m.presets = entry.presets;
  std::vector<std::int64_t> micro_batches = run.training.micro_batches;
  std::sort(micro_batches.begin(), micro_batches.end());
  std::vector<std::int64_t> widths = run.training.tensor_parallel_widths;
  std::sort(widths.begin(), widths.end());
  for (std::int64_t b : micro_batches) {
    GraphOptions options;
    options.micro_batch = b;
    options.fusion = false;
    options.optimizer = OptimizerSpec::For(run.training.optimizer);
    // Mixed-precision Adam's gradient buffer is what the replicas reduce: fp32, or the 16-bit
    // buffer of Megatron with --fp16 (or --grad-reduce-in-bf16), whose step copies it to fp32.
    if (IsAdam(options.optimizer.kind)) {
      options.optimizer.gradient_bytes_per_parameter = run.training.GradientReductionBytes();
    }
    LayerGraph full;
    try {
      full = BuildLayerGraph(spec, options);
    } catch (const InvalidArgumentError& e) {
      throw ConfigError(SourcePrefix(run) + "model " + entry.file + ", micro-batch " +
                        std::to_string(b) + ": " + e.what());
    }
    if (m.sequence_length == 0) {
      m.sequence_length = full.sequence_length;
      m.parameters = full.Parameters();
      m.flops_per_token = static_cast<double>(full.ForwardFlops() + full.BackwardFlops()) /
                          static_cast<double>(b * full.sequence_length);
    }
    for (std::size_t i = 0; i < strategies.size(); ++i) {
      const ParallelismStrategy& strategy = *strategies[i];
      const std::string name = run.strategies.at(i).Name();
      const auto supported = SupportedWidths(strategy, full, widths);
      for (std::int64_t w : widths) {
        if (std::find(supported.begin(), supported.end(), w) != supported.end()) {
          m.slices.push_back(
              {b, w, static_cast<int>(i),
               WithTrainingKernels(SliceLayerGraph(strategy, name, full, w, true), run.training)});
        } else if (b == micro_batches.front()) {
          m.refused.push_back((strategies.size() > 1 ? name + " " : std::string()) + "t=" +
                              std::to_string(w) + ": " + strategy.Refusal(full, w));
        }
      }
    }
  }
  if (m.slices.empty() && require_slices) {
    std::string names;
    for (const auto& s : run.strategies) names += (names.empty() ? "" : ", ") + s.Name();
    throw ConfigError(SourcePrefix(run) + "model " + entry.file + ": " +
                      (run.strategies.size() > 1 ? "the strategies '" : "the strategy '") + names +
                      "' support" + (run.strategies.size() > 1 ? "" : "s") +
                      " none of the tensor-parallel widths (" +
                      (m.refused.empty() ? std::string() : m.refused.front()) + ")");
  }
  return m;
}

}  // namespace phaze
