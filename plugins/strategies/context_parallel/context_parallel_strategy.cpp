// The "context_parallel" parallelism strategy: the sequence split across w devices for every op
// (context parallelism, as Llama 3 and Megatron-LM train long sequences). Written only against
// the framework's neutral op axes and its slicing helpers (phaze/strategy/slicing.hpp):
//
// * Every op whose work spans the tokens does 1/w of it (SplitAlong tokens): the GEMMs' token
//   rows, the vector ops' elements, the collectives of a strategy it is composed over. The tensors
//   those ops write, and the layer inputs they read, hold 1/w of the tokens. Ops off the tokens
//   (the BERT pooler on each sequence's first token) run whole on every device.
// * Attention needs every key for its queries: the operand a GEMM reads along the keys (K for the
//   scores, V for the context) is all-gathered over the w devices before it (backward: the
//   gradient is reduce-scattered), and the GEMM keeps the gathered operand for backward. A ring
//   exchange (Megatron-LM's) moves the same (w−1)/w of K and V per device; its overlap with the
//   attention blocks is not modelled. The s×s scores are balanced over the devices (the load-
//   balanced chunking both use for causal masks), so each does 1/w of them.
// * Weights are whole on every device: LayerGraph::weight_replicas is multiplied by w, so the
//   placement DP reduces the gradients over the w devices with the data-parallel replicas.
// * Pipeline sends carry each device's 1/w of the hidden state.
// Composed over another strategy (`strategy: {name: context_parallel, over: {name: megatron,
// width: k}}`) its groups are k ranks apart (the width of the slice it receives).
// Refused: widths that do not divide the sequence, or any count it would split (named).
#include <memory>
#include <vector>

#include "phaze/core/error.hpp"
#include "phaze/plugin/plugin_abi.hpp"
#include "phaze/plugin/registry.hpp"
#include "phaze/strategy/parallelism_strategy.hpp"
#include "phaze/strategy/slicing.hpp"

namespace phaze::strategies {

namespace {

using i64 = std::int64_t;

bool OnTokens(const Operator& op) { return op.axes.Spans(Axis::kTokens); }

// The operand of a GEMM that runs along the keys (its second input), or -1.
int KeysOperand(const Operator& op) {
  if (!op.gemm || op.inputs.size() < 2) return -1;
  return (op.axes.n == Axis::kKeys || op.axes.k == Axis::kKeys) ? op.inputs[1] : -1;
}

OperatorGraph SliceForward(const OperatorGraph& g, i64 w, i64 stride) {
  // Which tensors hold 1/w of the tokens: written by an op on the tokens (not a loss's scalar;
  // a collective's output when its input is), or layer inputs read by one.
  std::vector<bool> split(g.Tensors().size(), false);
  for (const auto& op : g.Ops()) {
    if (!OnTokens(op)) continue;
    for (size_t i = 0; i < op.outputs.size(); ++i) {
      const bool scalar = op.kind == OpKind::kLoss && i == 0;
      const bool passes = op.kind != OpKind::kCollective || split[op.inputs.at(0)];
      if (!scalar && passes) split[op.outputs[i]] = true;
    }
    for (int t : op.inputs) {
      if (g.Producer(t) < 0) split[t] = true;
    }
  }
  OperatorGraph s;
  for (size_t t = 0; t < g.Tensors().size(); ++t) {
    const Tensor& x = g.GetTensor(static_cast<int>(t));
    if (split[t] && x.elements % w != 0) {
      throw InvalidArgumentError("tensor '" + x.name + "' of " + std::to_string(x.elements) +
                                 " elements is not divisible by " + std::to_string(w));
    }
    s.AddTensor(x.name, split[t] ? x.elements / w : x.elements, x.dtype_bytes, x.requires_grad);
  }
  std::vector<int> gathered(g.Tensors().size(), -1);  // tensor → its all-gathered copy
  for (const auto& original : g.Ops()) {
    Operator op = original;
    SplitAlong(op, Axis::kTokens, w);
    if (const int keys = KeysOperand(original); keys >= 0 && split[keys]) {
      if (gathered[keys] < 0) {
        const Tensor local = s.GetTensor(keys);  // a copy: AddTensor may reallocate
        gathered[keys] =
            s.AddTensor(local.name + ".cp_all_gather", local.elements * w, local.dtype_bytes);
        s.AddOp(MakeCollective(local.name + ".cp_all_gather", CollectiveKind::kAllGather,
                               CollectiveKind::kReduceScatter, local.Bytes() * w, w, stride, keys,
                               gathered[keys], OpAxes::Of({Axis::kKeys, Axis::kHeads})));
      }
      for (int& t : op.inputs) t = t == keys ? gathered[keys] : t;
      for (int& t : op.saved) t = t == keys ? gathered[keys] : t;
    }
    s.AddOp(op);
  }
  for (int t : g.Outputs()) s.MarkOutput(t);
  return s;
}

class ContextParallelStrategy : public ParallelismStrategy {
 public:
  std::string Refusal(const LayerGraph& full, i64 width) const override {
    if (width == 1) return "";
    if (full.sequence_length % width != 0) {
      return "the sequence's " + std::to_string(full.sequence_length) +
             " tokens are not divisible by " + std::to_string(width);
    }
    try {
      Slice(full, width);
    } catch (const InvalidArgumentError& e) {
      return e.what();
    }
    return "";
  }

  LayerGraph Slice(const LayerGraph& full, i64 width) const override {
    LayerGraph out = full;
    if (width == 1) return out;
    for (auto& layer : out.unique_layers) {
      try {
        layer.forward = SliceForward(layer.forward, width, full.tensor_parallel);
      } catch (const InvalidArgumentError& e) {
        throw InvalidArgumentError("layer '" + layer.name + "': " + e.what());
      }
      layer.tensor_parallel = true;
    }
    for (auto& e : out.edges) e.bytes /= width;
    out.weight_replicas *= width;
    return out;
  }
};

}  // namespace

plugin::PluginInfo ContextParallelPlugin() {
  return {plugin::kAbiVersion, "context_parallel", "1.0.0",
          "context parallelism: the sequence split across devices, keys and values all-gathered",
          [](Registry& registry) {
            registry.AddStrategy(
                "context_parallel",
                "every op on s/w tokens; K and V all-gathered for attention; weights replicated",
                [](const ConfigNode& params) {
                  params.ExpectKeys(std::initializer_list<std::string_view>{});
                  return std::make_shared<ContextParallelStrategy>();
                });
          }};
}

}  // namespace phaze::strategies

PHAZE_PLUGIN_ENTRY(phaze::strategies::ContextParallelPlugin)
