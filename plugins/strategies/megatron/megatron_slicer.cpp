#include "megatron_slicer.hpp"

#include <algorithm>
#include <map>

#include "phaze/strategy/slicing.hpp"

namespace phaze::strategies {

namespace {

using Role = MegatronRole;
using i64 = std::int64_t;

bool SplitFeature(Axis a) { return a == Axis::kHeads || a == Axis::kFfn || a == Axis::kVocab; }

// The tensor-parallel group: w devices, `stride` ranks apart (the width of the graph being
// sliced: 1 for a full graph, more when Megatron is composed over another strategy). A collective
// moves a tensor of the op it follows, so it spans that op's axes.
struct Group {
  i64 size = 1;
  i64 stride = 1;
};

Operator Collective(const std::string& name, std::optional<CollectiveKind> forward,
                    std::optional<CollectiveKind> backward, i64 bytes, Group group, int input,
                    int output, const OpAxes& of) {
  return MakeCollective(name, forward, backward, bytes, group.size, group.stride, input, output,
                        OpAxes{.spans = of.spans});
}

const OpAxes kHiddenState = OpAxes::Of({Axis::kTokens, Axis::kHidden});

// Work of this op is divided by w: split roles, and replicated ops under sequence parallelism.
bool Divided(const Operator& op, bool sp) {
  const Role r = MegatronRoleOf(op);
  return r == Role::kColumn || r == Role::kRow || r == Role::kSharded ||
         (sp && r == Role::kReplicated);
}

i64 ExpertCount(const OperatorGraph& g) {
  i64 experts = 0;
  for (const auto& op : g.Ops()) experts = std::max(experts, op.expert + 1);
  return experts;
}

OperatorGraph SliceForward(const OperatorGraph& g, Group group, i64 tokens, bool sp, bool ep) {
  const i64 w = group.size;
  const i64 kept_experts = ep ? ExpertCount(g) / w : 0;
  auto dropped = [&](const Operator& op) { return ep && op.expert >= kept_experts; };
  auto expert_producer = [&](int t) {
    return g.Producer(t) >= 0 && g.GetOp(g.Producer(t)).expert >= 0;
  };
  auto feeds_experts = [&](const Operator& op) {
    if (op.expert >= 0) return false;
    for (int t : op.outputs) {
      for (int c : g.Consumers(t)) {
        if (g.GetOp(c).expert >= 0) return true;
      }
    }
    return false;
  };
  // Split tensors: outputs of column-parallel and sharded ops (not a loss's scalar); with sequence
  // parallelism also the outputs of replicated ops and the hidden-state inputs.
  std::vector<bool> split(g.Tensors().size(), false);
  if (sp) {
    for (int t : g.InputTensors()) split[t] = g.GetTensor(t).requires_grad;
  }
  for (const auto& op : g.Ops()) {
    const Role r = MegatronRoleOf(op);
    const bool splits = r == Role::kColumn || r == Role::kSharded || (sp && r == Role::kReplicated);
    if (!splits || (ep && feeds_experts(op))) continue;  // expert buffers stay whole
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
  std::map<int, int> gathered;  // tensor → its f copy / all-gather, fed to column-parallel GEMMs
  for (const auto& original : g.Ops()) {
    if (dropped(original)) continue;  // another device's expert
    Operator op = original;
    const Role role = MegatronRoleOf(original);  // from the axes: unchanged by the edits below
    const bool dispatches = ep && feeds_experts(original);
    bool collects = false;
    if (ep && original.expert < 0) {
      std::vector<int> kept;
      for (int t : op.inputs) {
        if (expert_producer(t)) collects = true;
        if (!expert_producer(t) || g.GetOp(g.Producer(t)).expert < kept_experts) kept.push_back(t);
      }
      op.inputs = kept;
    }
    for (int& t : op.inputs) t = replaced[t];
    for (int& t : op.saved) t = replaced[t];
    if (dispatches) {
      // All-to-all of the routed tokens to the experts' devices; drop the other devices' buffers.
      for (int& t : op.inputs) {
        const Tensor src = s.GetTensor(t);  // a copy: AddTensor below may reallocate
        const int moved = s.AddTensor(src.name + ".all_to_all", src.elements, src.dtype_bytes);
        s.AddOp(Collective(src.name + ".all_to_all", CollectiveKind::kAllToAll,
                           CollectiveKind::kAllToAll, src.Bytes(), group, t, moved, op.axes));
        t = moved;
      }
      std::vector<int> outputs;
      for (int t : op.outputs) {
        bool used = g.IsOutput(t);
        for (int c : g.Consumers(t)) used = used || !dropped(g.GetOp(c));
        if (used) outputs.push_back(t);
      }
      op.outputs = outputs;
    }
    if (op.gemm && role == Role::kColumn) {
      const int x = op.inputs[0];
      auto it = gathered.find(x);
      if (it == gathered.end()) {
        const Tensor src = s.GetTensor(x);  // a copy: AddTensor below may reallocate
        if (sp) {  // all-gather the sequence forward, reduce-scatter the gradient backward
          const int full = s.AddTensor(src.name + ".all_gather", src.elements * w, src.dtype_bytes);
          s.AddOp(Collective(src.name + ".all_gather", CollectiveKind::kAllGather,
                             CollectiveKind::kReduceScatter, src.Bytes() * w, group, x, full,
                             kHiddenState));
          // The GEMMs keep only their part of x for backward (Korthikanti et al.'s memory), so
          // Megatron-LM gathers x again in backward for the weight gradient: identity forward,
          // an all-gather of the same bytes in this GEMM's backward.
          const int again = s.AddTensor(src.name + ".regather", src.elements * w, src.dtype_bytes);
          s.AddOp(Collective(src.name + ".regather", std::nullopt, CollectiveKind::kAllGather,
                             src.Bytes() * w, group, full, again, kHiddenState));
          it = gathered.emplace(x, again).first;
        } else {  // f: identity forward, all-reduce of the gradient backward
          const int copy = s.AddTensor(src.name + ".tp_copy", src.elements, src.dtype_bytes);
          s.AddOp(Collective(src.name + ".tp_copy", std::nullopt, CollectiveKind::kAllReduce,
                             src.Bytes(), group, x, copy, kHiddenState));
          it = gathered.emplace(x, copy).first;
        }
      }
      for (int& t : op.inputs) t = t == x ? it->second : t;
      if (!sp) {
        for (int& t : op.saved) t = t == x ? it->second : t;
      }  // with sequence parallelism the GEMM keeps the sequence-split x for backward
    }
    if (Divided(op, sp)) {
      if (op.gemm) {
        if (role == Role::kColumn) op.gemm->n /= w;
        if (role == Role::kRow) op.gemm->k /= w;
        if (role == Role::kSharded) op.gemm->batch /= w;
        if (role == Role::kReplicated) op.gemm->m /= w;  // per-token GEMM on s/w tokens
      }
      // Vocabulary-parallel gathers mask the ids outside their shard: all lookups, 1/w of the
      // table.
      const bool vocab_gather = op.kind == OpKind::kEmbedding && role == Role::kRow;
      if (!op.gemm && !vocab_gather) {
        for (auto& v : op.vector) {
          v.elements /= w;
          if (op.kind == OpKind::kLoss) v.row_elements /= w;
        }
      } else if (op.gemm) {
        for (auto& v : op.vector) v.elements /= w;
      }
      if (role != Role::kReplicated) op.weight_bytes /= w;
    }
    s.AddOp(op);
    if (role == Role::kRow) {
      // g: all-reduce forward (or reduce-scatter along the sequence), conjugate backward.
      const int y = op.outputs[0];
      const Tensor src = s.GetTensor(y);  // a copy: AddTensor below may reallocate
      const std::string name = src.name + (sp ? ".reduce_scatter" : ".all_reduce");
      const int reduced = s.AddTensor(name, sp ? src.elements / w : src.elements, src.dtype_bytes);
      s.AddOp(sp ? Collective(name, CollectiveKind::kReduceScatter, CollectiveKind::kAllGather,
                              src.Bytes(), group, y, reduced, op.axes)
                 : Collective(name, CollectiveKind::kAllReduce, std::nullopt, src.Bytes(), group, y,
                              reduced, op.axes));
      replaced[original.outputs[0]] = reduced;
    }
    if (collects) {  // all-to-all of the experts' results back to their tokens' devices
      const int y = op.outputs[0];
      const Tensor src = s.GetTensor(y);  // a copy: AddTensor below may reallocate
      const int moved = s.AddTensor(src.name + ".all_to_all", src.elements, src.dtype_bytes);
      s.AddOp(Collective(src.name + ".all_to_all", CollectiveKind::kAllToAll,
                         CollectiveKind::kAllToAll, src.Bytes(), group, y, moved, op.axes));
      replaced[original.outputs[0]] = moved;
    }
    if (op.kind == OpKind::kLoss) {
      // Vocabulary-parallel cross-entropy: max logit, sum of exponentials, target logit.
      int last = op.outputs[0];
      for (const char* step : {"max", "sum_exp", "target"}) {
        const int next = s.AddTensor(op.name + ".all_reduce_" + step, 1, 4);
        s.AddOp(Collective(op.name + ".all_reduce_" + step, CollectiveKind::kAllReduce,
                           std::nullopt, tokens * 4, group, last, next,
                           OpAxes::Of({Axis::kTokens})));
        last = next;
      }
      replaced[original.outputs[0]] = last;
    }
  }
  for (int t : g.Outputs()) s.MarkOutput(replaced[t]);
  return s;
}

}  // namespace

MegatronRole MegatronRoleOf(const Operator& op) {
  const OpAxes& x = op.axes;
  if (op.expert >= 0) return Role::kExpert;
  if (op.gemm) {
    if (SplitFeature(x.n)) return Role::kColumn;
    if (x.k == Axis::kHeads || x.k == Axis::kFfn) return Role::kRow;
    if (x.batch == Axis::kHeads) return Role::kSharded;
    return x.m == Axis::kTokens ? Role::kReplicated : Role::kUnsplit;
  }
  if (op.kind == OpKind::kEmbedding && x.Spans(Axis::kVocab)) return Role::kRow;
  if (x.Spans(Axis::kHeads) || x.Spans(Axis::kFfn) || x.Spans(Axis::kVocab)) return Role::kSharded;
  return x.Spans(Axis::kTokens) ? Role::kReplicated : Role::kUnsplit;
}

std::string TensorParallelRefusal(const LayerGraph& full, i64 w,
                                  const TensorParallelOptions& options) {
  if (w == 1) return "";
  auto not_divisible = [&](const std::string& what) {
    return what + " are not divisible by " + std::to_string(w);
  };
  if (options.expert_parallel) {
    for (const auto& u : full.unique_layers) {
      const i64 experts = ExpertCount(u.forward);
      if (experts == 0) continue;
      if (experts % w != 0) return not_divisible("the " + std::to_string(experts) + " experts");
    }
  }
  if (full.heads > 0 && full.heads % w != 0) {
    return not_divisible("the " + std::to_string(full.heads) + " attention heads");
  }
  if (full.kv_heads > 0 && full.kv_heads % w != 0) {
    return not_divisible("the " + std::to_string(full.kv_heads) + " key/value heads");
  }
  if ((options.sequence_parallel || options.expert_parallel) && full.sequence_length % w != 0) {
    return not_divisible("the sequence's " + std::to_string(full.sequence_length) + " tokens");
  }
  for (const auto& u : full.unique_layers) {
    for (const auto& op : u.forward.Ops()) {
      const Role role = MegatronRoleOf(op);
      std::string what;
      if (op.gemm && role == Role::kColumn && op.gemm->n % w != 0) {
        what = "its " + std::to_string(op.gemm->n) + " output columns";
      } else if (op.gemm && role == Role::kRow && op.gemm->k % w != 0) {
        what = "its reduction dimension " + std::to_string(op.gemm->k);
      } else if (op.kind == OpKind::kEmbedding && role == Role::kRow && !op.vector.empty() &&
                 (op.weight_bytes / full.dtype_bytes / op.vector[0].row_elements) % w != 0) {
        what = "its " +
               std::to_string(op.weight_bytes / full.dtype_bytes / op.vector[0].row_elements) +
               " vocabulary rows";
      } else if (role == Role::kSharded) {
        for (const auto& v : op.vector) {
          if (v.elements % w != 0) what = "its " + std::to_string(v.elements) + " elements";
        }
      }
      if (!what.empty())
        return "op '" + op.name + "' in layer '" + u.name + "': " + not_divisible(what);
    }
  }
  return "";
}

LayerGraph TensorParallelSlice(const LayerGraph& full, i64 w,
                               const TensorParallelOptions& options) {
  LayerGraph out = full;
  const bool ep = options.expert_parallel && w > 1;
  const bool sp = (options.sequence_parallel || options.expert_parallel) && w > 1;
  for (auto& layer : out.unique_layers) {
    if (w > 1) {
      layer.forward = SliceForward(layer.forward, Group{w, full.tensor_parallel},
                                   full.micro_batch * full.sequence_length, sp, ep);
    }
    layer.tied_parameters /= w;  // only the LM head reuses a table, and it is column-parallel
    layer.parameters = layer.forward.WeightBytes() / full.dtype_bytes - layer.tied_parameters;
    layer.tensor_parallel = w > 1;
  }
  if (w > 1) {
    // Each device sends its part: under sequence parallelism the activations are already split;
    // otherwise Megatron-LM's scatter/gather (Narayanan et al. SC21 §4.1) sends 1/w of the
    // replicated tensor from each device and all-gathers it on the receiving stage.
    for (auto& e : out.edges) {
      e.bytes /= w;
      if (!sp) e.gather_group = w;
    }
  }
  return out;
}

}  // namespace phaze::strategies
