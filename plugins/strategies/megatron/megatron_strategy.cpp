// The "megatron" parallelism strategy: Megatron-LM tensor model parallelism (Shoeybi et al. 2019)
// of width w, read off the tensor-parallel roles the graph builder puts on every op:
// * column-parallel GEMMs (QKV, first FFN GEMM, LM head): n / w; row-parallel GEMMs (attention
//   output, second FFN GEMM): k / w; sharded ops (attention heads, FFN activations, split biases,
//   vocabulary-parallel cross-entropy): work / w; replicated ops (norms, residual stream): whole.
// * g after every row-parallel op (and the vocabulary-parallel embedding): all-reduce of its
//   output forward, identity backward. f before every column-parallel GEMM reading a replicated
//   tensor: identity forward, all-reduce of the input gradient backward. Per block: two all-reduces
//   of b·s·h values forward and two backward (REFERENCE §3.5).
// * vocabulary-parallel cross-entropy: three all-reduces of b·s fp32 values (max logit, sum of
//   exponentials, target logit) forward.
// Widths are refused when they do not divide the heads, the key/value heads, or a split dimension
// (the reason names the op).
#include <map>
#include <memory>

#include "phaze/core/error.hpp"
#include "phaze/plugin/plugin_abi.hpp"
#include "phaze/plugin/registry.hpp"
#include "phaze/strategy/parallelism_strategy.hpp"

namespace phaze::strategies {

namespace {

using Role = TensorParallelRole;
using i64 = std::int64_t;

Operator Collective(const std::string& name, const std::string& forward, const std::string& backward,
                    i64 bytes, i64 group, int input, int output) {
  Operator op;
  op.name = name;
  op.kind = OpKind::kCollective;
  op.collective = forward;
  op.collective_backward = backward;
  op.collective_bytes = bytes;
  op.collective_group = group;
  op.inputs = {input};
  op.outputs = {output};
  return op;
}

class MegatronStrategy : public ParallelismStrategy {
 public:
  std::string Refusal(const LayerGraph& full, i64 w) const override {
    if (w == 1) return "";
    if (full.heads > 0 && full.heads % w != 0) {
      return "the " + std::to_string(full.heads) + " attention heads are not divisible by " + std::to_string(w);
    }
    if (full.kv_heads > 0 && full.kv_heads % w != 0) {
      return "the " + std::to_string(full.kv_heads) + " key/value heads are not divisible by " +
             std::to_string(w);
    }
    for (const auto& u : full.unique_layers) {
      for (const auto& op : u.forward.Ops()) {
        std::string what;
        if (op.gemm && op.tp_role == Role::kColumn && op.gemm->n % w != 0) {
          what = "its " + std::to_string(op.gemm->n) + " output columns";
        } else if (op.gemm && op.tp_role == Role::kRow && op.gemm->k % w != 0) {
          what = "its reduction dimension " + std::to_string(op.gemm->k);
        } else if (op.kind == OpKind::kEmbedding && op.tp_role == Role::kRow && !op.vector.empty() &&
                   (op.weight_bytes / full.dtype_bytes / op.vector[0].row_elements) % w != 0) {
          what = "its " + std::to_string(op.weight_bytes / full.dtype_bytes / op.vector[0].row_elements) +
                 " vocabulary rows";
        } else if (op.tp_role == Role::kSharded) {
          for (const auto& v : op.vector) {
            if (v.elements % w != 0) what = "its " + std::to_string(v.elements) + " elements";
          }
        }
        if (!what.empty()) {
          return "op '" + op.name + "' in layer '" + u.name + "': " + what + " are not divisible by " +
                 std::to_string(w);
        }
      }
    }
    return "";
  }

  LayerGraph Slice(const LayerGraph& full, i64 w) const override {
    LayerGraph out = full;
    for (auto& layer : out.unique_layers) {
      layer.forward = SliceForward(layer.forward, w, full.micro_batch * full.sequence_length);
      const i64 held_after = layer.forward.WeightBytes() / full.dtype_bytes;
      layer.tied_parameters /= w;  // only the LM head reuses a table, and it is column-parallel
      layer.parameters = held_after - layer.tied_parameters;
      layer.tensor_parallel = w > 1;
    }
    return out;
  }

 private:
  static OperatorGraph SliceForward(const OperatorGraph& g, i64 w, i64 tokens) {
    // Which tensors are split: outputs of column-parallel and sharded ops (a loss's scalar is not).
    std::vector<bool> split(g.Tensors().size(), false);
    for (const auto& op : g.Ops()) {
      if (op.tp_role != Role::kColumn && op.tp_role != Role::kSharded) continue;
      for (size_t i = 0; i < op.outputs.size(); ++i) {
        if (!(op.kind == OpKind::kLoss && i == 0)) split[op.outputs[i]] = true;
      }
    }
    OperatorGraph s;
    for (size_t t = 0; t < g.Tensors().size(); ++t) {
      const Tensor& tensor = g.GetTensor(static_cast<int>(t));
      s.AddTensor(tensor.name, split[t] ? tensor.elements / w : tensor.elements, tensor.dtype_bytes,
                  tensor.requires_grad);
    }
    std::vector<int> replaced(g.Tensors().size());
    for (size_t t = 0; t < replaced.size(); ++t) replaced[t] = static_cast<int>(t);
    std::map<int, int> copied;  // replicated tensor → its f copy (fed to column-parallel GEMMs)
    for (const auto& original : g.Ops()) {
      Operator op = original;
      for (int& t : op.inputs) t = replaced[t];
      for (int& t : op.saved) t = replaced[t];
      if (op.gemm && op.tp_role == Role::kColumn && w > 1) {
        // f: identity forward, all-reduce of the input gradient backward.
        const int x = op.inputs[0];
        if (!split[original.inputs[0]]) {
          auto it = copied.find(x);
          if (it == copied.end()) {
            const Tensor& src = s.GetTensor(x);
            const int copy = s.AddTensor(src.name + ".tp_copy", src.elements, src.dtype_bytes);
            s.AddOp(Collective(src.name + ".tp_copy", "", "all_reduce", src.Bytes(), w, x, copy));
            it = copied.emplace(x, copy).first;
          }
          for (int& t : op.inputs) t = t == x ? it->second : t;
          for (int& t : op.saved) t = t == x ? it->second : t;
        }
      }
      switch (op.tp_role) {
        case Role::kColumn:
          if (op.gemm) op.gemm->n /= w;
          op.weight_bytes /= w;
          break;
        case Role::kRow:
          if (op.gemm) op.gemm->k /= w;
          op.weight_bytes /= w;
          break;
        case Role::kSharded:
          if (op.gemm) op.gemm->batch /= w;
          for (auto& v : op.vector) {
            v.elements /= w;
            if (op.kind == OpKind::kLoss) v.row_elements /= w;
          }
          op.weight_bytes /= w;
          break;
        case Role::kReplicated:
          break;
      }
      s.AddOp(op);
      if (w > 1 && op.tp_role == Role::kRow) {
        // g: all-reduce of the partial sums forward, identity backward.
        const int y = op.outputs[0];
        const Tensor& src = s.GetTensor(y);
        const int reduced = s.AddTensor(src.name + ".all_reduce", src.elements, src.dtype_bytes);
        s.AddOp(Collective(src.name + ".all_reduce", "all_reduce", "", src.Bytes(), w, y, reduced));
        replaced[original.outputs[0]] = reduced;
      }
      if (w > 1 && op.kind == OpKind::kLoss) {
        // Vocabulary-parallel cross-entropy: max logit, sum of exponentials, target logit.
        int last = op.outputs[0];
        for (const char* step : {"max", "sum_exp", "target"}) {
          const int next = s.AddTensor(op.name + ".all_reduce_" + step, 1, 4);
          s.AddOp(Collective(op.name + ".all_reduce_" + step, "all_reduce", "", tokens * 4, w, last, next));
          last = next;
        }
        replaced[original.outputs[0]] = last;
      }
    }
    for (int t : g.Outputs()) s.MarkOutput(replaced[t]);
    return s;
  }
};

}  // namespace

plugin::PluginInfo MegatronPlugin() {
  return {plugin::kAbiVersion, "megatron", "1.0.0", "Megatron-LM tensor model parallelism",
          [](Registry& registry) {
            registry.AddStrategy("megatron", "column/row-parallel GEMMs, split heads, vocabulary-parallel embedding and loss",
                                 [](const ConfigNode& params) {
                                   params.ExpectKeys(std::initializer_list<std::string_view>{});
                                   return std::make_shared<MegatronStrategy>();
                                 });
          }};
}

}  // namespace phaze::strategies

PHAZE_PLUGIN_ENTRY(phaze::strategies::MegatronPlugin)
