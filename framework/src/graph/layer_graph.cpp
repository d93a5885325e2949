#include "phaze/graph/layer_graph.hpp"

#include <set>

#include "phaze/core/error.hpp"

namespace phaze {

std::string_view ToString(RecomputeMode mode) {
  switch (mode) {
    case RecomputeMode::kNone:
      return "none";
    case RecomputeMode::kSelective:
      return "selective";
    case RecomputeMode::kFull:
      return "full";
    case RecomputeMode::kPerOp:
      return "per-op";
  }
  return "?";
}

std::optional<RecomputeMode> ParseRecomputeMode(std::string_view text) {
  for (auto m : kRecomputeModes) {
    if (ToString(m) == text) return m;
  }
  return std::nullopt;
}

std::string_view ToString(OptimizerKind kind) {
  switch (kind) {
    case OptimizerKind::kSgd:
      return "sgd";
    case OptimizerKind::kAdamBf16Moments:
      return "adam-bf16-moments";
    case OptimizerKind::kAdamMixed:
      break;
  }
  return "adam-mixed";
}

std::string_view ToString(LayerKind kind) {
  switch (kind) {
    case LayerKind::kEmbedding:
      return "embedding";
    case LayerKind::kBlock:
      return "block";
    case LayerKind::kHead:
      return "head";
    case LayerKind::kCustom:
      return "custom";
  }
  return "?";
}

OptimizerSpec OptimizerSpec::For(OptimizerKind kind) {
  if (kind == OptimizerKind::kSgd) return {OptimizerKind::kSgd, 0, 2, "sgd"};
  if (kind == OptimizerKind::kAdamBf16Moments) return {kind, 4 + 2 + 2, 4, "adam"};
  return {OptimizerKind::kAdamMixed, 4 + 4 + 4, 4, "adam"};
}

std::int64_t LayerGraph::Parameters() const {
  std::int64_t total = 0;
  for (const auto& l : layers) total += unique_layers.at(l.unique_id).parameters;
  return total;
}

std::int64_t LayerGraph::ForwardFlops() const {
  std::int64_t total = 0;
  for (const auto& l : layers) total += unique_layers.at(l.unique_id).forward.GemmFlops();
  return total;
}

std::int64_t LayerGraph::BackwardFlops() const {
  std::int64_t total = 0;
  for (const auto& l : layers) total += unique_layers.at(l.unique_id).backward.GemmFlops();
  return total;
}

std::vector<int> LayerGraph::InstanceCounts() const {
  std::vector<int> counts(unique_layers.size(), 0);
  for (const auto& l : layers) ++counts.at(l.unique_id);
  return counts;
}

bool LayerGraph::HasExperts() const {
  for (const auto& u : unique_layers) {
    for (const auto& op : u.forward.Ops()) {
      if (op.expert >= 0) return true;
    }
  }
  return false;
}

std::string LayerGraph::Validate() const {
  const int n = static_cast<int>(layers.size());
  if (n == 0) return "the layer graph has no layers";
  for (int i = 0; i < n; ++i) {
    if (layers[i].unique_id < 0 || layers[i].unique_id >= static_cast<int>(unique_layers.size())) {
      return "layer '" + layers[i].name + "' refers to unique layer " +
             std::to_string(layers[i].unique_id) + ", but there are " +
             std::to_string(unique_layers.size());
    }
  }
  for (const auto& e : edges) {
    if (e.from < 0 || e.to >= n || e.from >= e.to) {
      return "edge " + std::to_string(e.from) + " -> " + std::to_string(e.to) +
             " must go from an earlier to a later layer among 0.." + std::to_string(n - 1);
    }
    if (e.bytes < 0)
      return "edge " + std::to_string(e.from) + " -> " + std::to_string(e.to) +
             " has negative bytes";
  }
  return "";
}

std::int64_t UniqueLayer::SavedBytes(RecomputeMode mode) const {
  switch (mode) {
    case RecomputeMode::kNone:
      return activation_bytes;
    case RecomputeMode::kSelective:
      return selective_activation_bytes;
    case RecomputeMode::kFull:
      return checkpoint_bytes;
    case RecomputeMode::kPerOp:
      return per_op_activation_bytes;
  }
  return activation_bytes;
}

namespace {

bool AttentionCoreTensor(const OperatorGraph& g, int t) {
  return g.Producer(t) >= 0 && g.GetOp(g.Producer(t)).attention_core;
}

}  // namespace

std::vector<bool> PerOpKeeps(const OperatorGraph& forward) {
  std::vector<bool> keep;
  int linear = 0;  // the policy's mm count
  for (const auto& op : forward.Ops()) {
    bool kept = op.attention_core ||
                (op.kind == OpKind::kCollective && op.collective == CollectiveKind::kReduceScatter);
    if (!op.attention_core && op.gemm && op.weight_bytes > 0) {
      ++linear;
      kept = linear % 2 == 1;
    }
    keep.push_back(kept);
  }
  return keep;
}

OperatorGraph RecomputeGraph(const UniqueLayer& layer, RecomputeMode mode) {
  if (mode == RecomputeMode::kFull && layer.Recomputes(mode)) return layer.forward;
  OperatorGraph out;
  if (mode != RecomputeMode::kSelective &&
      !(mode == RecomputeMode::kPerOp && layer.kind == LayerKind::kBlock)) {
    return out;
  }
  const OperatorGraph& g = layer.forward;
  std::vector<bool> rerun;  // selective: the attention core; per-op: what it does not keep
  if (mode == RecomputeMode::kSelective) {
    for (const auto& op : g.Ops()) rerun.push_back(op.attention_core);
  } else {
    rerun = PerOpKeeps(g);
    rerun.flip();
  }
  std::vector<int> remap(g.Tensors().size(), -1);
  auto tensor = [&](int t) {
    if (remap[t] < 0) {
      const Tensor& x = g.GetTensor(t);
      remap[t] = out.AddTensor(x.name, x.elements, x.dtype_bytes, x.requires_grad);
    }
    return remap[t];
  };
  for (std::size_t i = 0; i < g.Ops().size(); ++i) {
    const Operator& op = g.Ops()[i];
    if (!rerun[i]) continue;
    Operator copy = op;
    for (auto* list : {&copy.inputs, &copy.outputs, &copy.saved}) {
      for (int& t : *list) t = tensor(t);
    }
    out.AddOp(std::move(copy));
  }
  return out;
}

void FinalizeLayerMemory(UniqueLayer& layer, std::int64_t dtype_bytes,
                         const OptimizerSpec& optimizer) {
  const std::int64_t held = layer.parameters + layer.tied_parameters;
  layer.weight_bytes = held * dtype_bytes;
  layer.gradient_bytes = held * optimizer.gradient_bytes_per_parameter;
  layer.optimizer_state_bytes = held * optimizer.state_bytes_per_parameter;
  layer.step_working_bytes = IsAdam(optimizer.kind) && optimizer.gradient_bytes_per_parameter <
                                                           OptimizerSpec::kMasterGradientBytes
                                 ? held * OptimizerSpec::kMasterGradientBytes
                                 : 0;
  const OperatorGraph& g = layer.forward;
  layer.activation_bytes = g.SavedBytes();
  layer.cached_weight_bytes = 0;
  for (const auto& op : g.Ops()) layer.cached_weight_bytes += op.fp8 ? op.weight_bytes : 0;
  layer.transient_bytes = 0;
  for (const auto& op : layer.backward.Ops()) {
    if (op.passes.held_bytes > 0 && !op.vector.empty()) {
      layer.transient_bytes =
          std::max(layer.transient_bytes, op.vector.front().elements * op.passes.held_bytes);
    }
  }
  // Selective: a tensor the attention core produces is dropped unless an op outside the core keeps
  // it (the context, which the output projection saves); the core's inputs (q, k, v) stay.
  std::set<int> saved, kept;
  for (const auto& op : g.Ops()) {
    for (int t : op.saved) {
      if (!op.attention_core || !AttentionCoreTensor(g, t)) kept.insert(t);
    }
  }
  layer.selective_activation_bytes = 0;
  for (int t : kept) layer.selective_activation_bytes += g.GetTensor(t).Bytes();
  // Full recompute keeps a transformer block's hidden-state input (Megatron-LM checkpoints the
  // blocks, not the embedding or the head).
  layer.checkpoint_bytes = layer.activation_bytes;
  if (layer.kind == LayerKind::kBlock) {
    layer.checkpoint_bytes = 0;
    for (int t : g.InputTensors()) {
      if (g.GetTensor(t).requires_grad) layer.checkpoint_bytes += g.GetTensor(t).Bytes();
    }
  }
  // Per-op keeps, of a block, its input, every kept op's output (of a linear layer, its GEMM's
  // m·n result, whatever epilogue fusion appended to the op) and what the attention core keeps for
  // its backward (with FlashAttention, nothing but its output; the q, k and v it reads re-run).
  layer.per_op_activation_bytes = layer.activation_bytes;
  layer.per_op_rerun_bytes = 0;
  if (layer.kind == LayerKind::kBlock) {
    layer.per_op_activation_bytes = layer.checkpoint_bytes;
    const std::vector<bool> keep = PerOpKeeps(g);
    std::set<int> outputs;  // tensors kept whole: the core's and the reduce-scatters'
    for (std::size_t i = 0; i < g.Ops().size(); ++i) {
      const Operator& op = g.Ops()[i];
      if (!keep[i]) continue;
      if (op.attention_core) {
        for (int t : op.saved) {
          if (AttentionCoreTensor(g, t)) outputs.insert(t);
        }
        for (int t : op.outputs) {
          for (int c : g.Consumers(t)) {
            if (!g.GetOp(c).attention_core) outputs.insert(t);
          }
        }
      } else if (op.gemm) {
        layer.per_op_activation_bytes += op.gemm->batch * op.gemm->m * op.gemm->n * dtype_bytes;
      } else {
        outputs.insert(op.outputs.begin(), op.outputs.end());
      }
    }
    for (int t : outputs) layer.per_op_activation_bytes += g.GetTensor(t).Bytes();
    std::set<int> rerun;  // saved tensors a re-run op produces
    for (const auto& op : g.Ops()) {
      for (int t : op.saved) {
        const int producer = g.Producer(t);
        if (producer >= 0 && !keep[producer]) rerun.insert(t);
      }
    }
    for (int t : rerun) layer.per_op_rerun_bytes += g.GetTensor(t).Bytes();
  }
  Operator step;
  step.name = layer.name + ".optimizer_step";
  step.kind = OpKind::kOptimizer;
  if (held > 0) step.vector.push_back({optimizer.step_function, held, 1});
  // Reads weights and the fp32 gradients — the buffer, or the copy a 16-bit buffer is given
  // (step_working_bytes) —, writes weights (and reads/writes the optimizer state). The copy's own
  // pass is left to the device calibration, fitted on runs that make it (share/validation).
  step.weight_bytes =
      layer.weight_bytes +
      (layer.step_working_bytes > 0 ? layer.step_working_bytes : layer.gradient_bytes) +
      layer.optimizer_state_bytes;
  layer.optimizer_step = step;
}

}  // namespace phaze
