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

const OpAxes kHiddenState = OpAxes::Of({Axis::kTokens, Axis::kHidden});

// Work of an op of role r is divided by w: split roles, and replicated ops under sequence
// parallelism.
bool Divided(Role r, bool sp) {
  return r == Role::kColumn || r == Role::kRow || r == Role::kSharded ||
         (sp && r == Role::kReplicated);
}

// The axis a divided op's work is split along: a column GEMM's n, a row GEMM's k, a sharded op's
// heads, FFN or vocabulary, a replicated op's tokens (sequence parallelism); none for the
// vocabulary-parallel gather, which does every lookup against 1/w of the table.
Axis SplitAxis(const Operator& op, Role role) {
  switch (role) {
    case Role::kColumn:
      return op.axes.n;
    case Role::kRow:
      return op.gemm ? op.axes.k : Axis::kNone;
    case Role::kSharded:
      if (op.gemm) return op.axes.batch;
      for (Axis a : {Axis::kHeads, Axis::kFfn, Axis::kVocab}) {
        if (op.axes.Spans(a)) return a;
      }
      return Axis::kNone;
    case Role::kReplicated:
      return Axis::kTokens;
    case Role::kUnsplit:
    case Role::kExpert:
      break;
  }
  return Axis::kNone;
}

i64 ExpertCount(const OperatorGraph& g) {
  i64 experts = 0;
  for (const auto& op : g.Ops()) experts = std::max(experts, op.expert + 1);
  return experts;
}

// One unique layer's forward graph sliced for one device (the header comment's rules): ops are
// copied in order; each gets the collectives its role needs around it.
class ForwardSlicer {
 public:
  // `fold`: the data-parallel replicas the expert group spans (each kept expert receives fold×
  // the tokens). Whole experts (`etp` false): the group is the w devices and fold−1 more
  // replicas, w·fold consecutive ranks. Experts split over the width (`etp`, expert tensor
  // parallelism): fold devices w ranks apart, one per replica, each with its expert's 1/w.
  ForwardSlicer(const OperatorGraph& g, Group group, i64 tokens, bool sp, bool ep,
                bool keep_gathered, i64 fold, bool etp)
      : g_(g),
        group_(group),
        expert_group_{etp ? fold : group.size * fold, etp ? group.stride * group.size
                                                          : group.stride},
        w_(group.size),
        fold_(fold),
        tokens_(tokens),
        sp_(sp),
        ep_(ep),
        etp_(etp),
        keep_gathered_(sp && keep_gathered),
        kept_experts_(ep ? ExpertCount(g) / expert_group_.size : 0) {}

  OperatorGraph Slice() {
    const std::vector<bool> split = SplitTensors();
    const std::vector<bool> grown = ExpertBuffers();
    for (size_t t = 0; t < g_.Tensors().size(); ++t) {
      const Tensor& tensor = g_.GetTensor(static_cast<int>(t));
      // Under expert tensor parallelism an expert's buffers are both: fold× the tokens, 1/w of
      // them (the sequence shard before the gather, the feature shard after it).
      const i64 elements = (grown[t] ? tensor.elements * fold_ : tensor.elements) /
                           (split[t] ? w_ : 1);
      s_.AddTensor(tensor.name, elements, tensor.dtype_bytes, tensor.requires_grad);
    }
    replaced_.resize(g_.Tensors().size());
    for (size_t t = 0; t < replaced_.size(); ++t) replaced_[t] = static_cast<int>(t);
    for (const auto& original : g_.Ops()) {
      if (!Dropped(original)) Add(original);  // a dropped op is another device's expert
    }
    for (int t : g_.Outputs()) s_.MarkOutput(replaced_[t]);
    return std::move(s_);
  }

 private:
  bool Dropped(const Operator& op) const { return ep_ && op.expert >= kept_experts_; }
  bool ExpertProducer(int t) const {
    return g_.Producer(t) >= 0 && g_.GetOp(g_.Producer(t)).expert >= 0;
  }
  bool CollectsExperts(const Operator& op) const {
    if (op.expert >= 0) return false;
    for (int t : op.inputs) {
      if (ExpertProducer(t)) return true;
    }
    return false;
  }
  bool FeedsExperts(const Operator& op) const {
    if (op.expert >= 0) return false;
    for (int t : op.outputs) {
      for (int c : g_.Consumers(t)) {
        if (g_.GetOp(c).expert >= 0) return true;
      }
    }
    return false;
  }

  // What an expert holds of its tokens: the buffers the dispatch fills for the experts and every
  // tensor an expert writes (fold× the tokens of the unfolded slice).
  std::vector<bool> ExpertBuffers() const {
    std::vector<bool> grown(g_.Tensors().size(), false);
    if (!ep_ || fold_ == 1) return grown;
    for (const auto& op : g_.Ops()) {
      if (op.expert < 0 && !FeedsExperts(op)) continue;
      for (int t : op.outputs) grown[t] = true;
    }
    return grown;
  }

  // Split tensors: outputs of column-parallel and sharded ops (not a loss's scalar); with sequence
  // parallelism also the outputs of replicated ops and the hidden-state inputs.
  std::vector<bool> SplitTensors() const {
    std::vector<bool> split(g_.Tensors().size(), false);
    if (sp_) {
      for (int t : g_.InputTensors()) split[t] = g_.GetTensor(t).requires_grad;
    }
    for (const auto& op : g_.Ops()) {
      const Role r = MegatronRoleOf(op, etp_);
      const bool splits =
          r == Role::kColumn || r == Role::kSharded || (sp_ && r == Role::kReplicated);
      // The experts' buffers stay whole (gathered over the width first under expert tensor
      // parallelism), and so do split experts' collected partial sums (reduce-scattered after).
      if (!splits || (ep_ && (FeedsExperts(op) || (etp_ && CollectsExperts(op))))) continue;
      for (size_t i = 0; i < op.outputs.size(); ++i) {
        if (!(op.kind == OpKind::kLoss && i == 0)) split[op.outputs[i]] = true;
      }
    }
    return split;
  }

  // A collective on tensor `input` of the slice, writing a new tensor of `elements`.
  int AddCollective(const std::string& name, std::optional<CollectiveKind> forward,
                    std::optional<CollectiveKind> backward, i64 bytes, int input, i64 elements,
                    int dtype_bytes, const OpAxes& of) {
    const int out = s_.AddTensor(name, elements, dtype_bytes);
    s_.AddOp(MakeCollective(name, forward, backward, bytes, group_.size, group_.stride, input, out,
                            OpAxes{.spans = of.spans}));
    return out;
  }
  // The same moving a copy of tensor `t` (AddTensor may reallocate the slice's tensors).
  int AddCollectiveOn(int t, const std::string& suffix, std::optional<CollectiveKind> forward,
                      std::optional<CollectiveKind> backward, i64 bytes, i64 elements,
                      const OpAxes& of) {
    const Tensor src = s_.GetTensor(t);
    return AddCollective(src.name + suffix, forward, backward, bytes, t, elements,
                         src.dtype_bytes, of);
  }

  void Add(const Operator& original) {
    Operator op = original;
    const Role role = MegatronRoleOf(original, etp_);  // from the axes: unchanged by the edits
    const bool dispatches = ep_ && FeedsExperts(original);
    bool collects = false;
    if (ep_ && original.expert < 0) {
      std::vector<int> kept;
      for (int t : op.inputs) {
        if (ExpertProducer(t)) collects = true;
        if (!ExpertProducer(t) || g_.GetOp(g_.Producer(t)).expert < kept_experts_) {
          kept.push_back(t);
        }
      }
      op.inputs = kept;
    }
    for (int& t : op.inputs) t = replaced_[t];
    for (int& t : op.saved) t = replaced_[t];
    if (dispatches) Dispatch(op);
    if (ep_ && op.expert >= 0) GrowAlong(op, Axis::kTokens, fold_);
    // Split experts' GEMMs read the dispatch's gathered tokens and leave partial sums for the
    // collection's reduce-scatter: no collective of their own.
    const bool split_expert = etp_ && op.expert >= 0;
    if (op.gemm && role == Role::kColumn && w_ > 1 && !split_expert) GatherInput(op);
    if (Divided(role, sp_) && !(etp_ && (dispatches || collects))) {
      SplitAlong(op, SplitAxis(op, role), w_);
      if (role != Role::kReplicated) op.weight_bytes /= w_;  // replicated weights stay whole
    }
    s_.AddOp(op);
    const int y = op.outputs.empty() ? -1 : op.outputs[0];
    if (role == Role::kRow && w_ > 1 && !split_expert) {
      // g: all-reduce forward (or reduce-scatter along the sequence), conjugate backward.
      const Tensor& src = s_.GetTensor(y);
      replaced_[original.outputs[0]] =
          sp_ ? AddCollectiveOn(y, ".reduce_scatter", CollectiveKind::kReduceScatter,
                                CollectiveKind::kAllGather, src.Bytes(), src.elements / w_, op.axes)
              : AddCollectiveOn(y, ".all_reduce", CollectiveKind::kAllReduce, std::nullopt,
                                src.Bytes(), src.elements, op.axes);
    }
    if (collects) {  // all-to-all of the experts' results back to their tokens' devices
      int back = y;
      if (etp_ && w_ > 1) {  // the partial sums reduce-scattered over the width first
        const Tensor src = s_.GetTensor(y);
        back = AddCollectiveOn(y, ".reduce_scatter", CollectiveKind::kReduceScatter,
                               CollectiveKind::kAllGather, src.Bytes(), src.elements / w_, op.axes);
      }
      replaced_[original.outputs[0]] = AddAllToAll(back, op.axes);
    }
    if (op.kind == OpKind::kLoss && w_ > 1) {
      // Vocabulary-parallel cross-entropy: max logit, sum of exponentials, target logit.
      int last = y;
      for (const char* step : {"max", "sum_exp", "target"}) {
        last = AddCollective(op.name + ".all_reduce_" + step, CollectiveKind::kAllReduce,
                             std::nullopt, tokens_ * 4, last, 1, 4, OpAxes::Of({Axis::kTokens}));
      }
      replaced_[original.outputs[0]] = last;
    }
  }

  // All-to-all of the routed tokens to the experts' devices (under expert tensor parallelism
  // their sequence shards, then all-gathered over the width, as Megatron-LM's dispatcher does for
  // all of a device's experts at once); drop the other devices' buffers.
  void Dispatch(Operator& op) {
    for (int& t : op.inputs) {
      t = AddAllToAll(t, op.axes);
      if (etp_ && w_ > 1) {
        const Tensor src = s_.GetTensor(t);
        t = AddCollectiveOn(t, ".all_gather", CollectiveKind::kAllGather,
                            CollectiveKind::kReduceScatter, src.Bytes() * w_, src.elements * w_,
                            kHiddenState);
      }
    }
    std::vector<int> outputs;
    for (int t : op.outputs) {
      bool used = g_.IsOutput(t);
      for (int c : g_.Consumers(t)) used = used || !Dropped(g_.GetOp(c));
      if (used) outputs.push_back(t);
    }
    op.outputs = outputs;
  }

  // An all-to-all of tensor `t` (its bytes per device) over the expert group, both passes.
  int AddAllToAll(int t, const OpAxes& of) {
    if (expert_group_.size == 1) return t;  // one rank: nothing to exchange
    const Tensor src = s_.GetTensor(t);
    const std::string name = src.name + ".all_to_all";
    const int out = s_.AddTensor(name, src.elements, src.dtype_bytes);
    s_.AddOp(MakeCollective(name, CollectiveKind::kAllToAll, CollectiveKind::kAllToAll, src.Bytes(),
                            expert_group_.size, expert_group_.stride, t, out,
                            OpAxes{.spans = of.spans}));
    return out;
  }

  // Before a column-parallel GEMM: f (identity forward, all-reduce of the input gradient
  // backward) or, with sequence parallelism, the all-gather of the sequence (reduce-scatter of the
  // gradient backward) — once per input tensor, shared by the GEMMs reading it.
  void GatherInput(Operator& op) {
    const int x = op.inputs[0];
    auto it = gathered_.find(x);
    if (it == gathered_.end()) {
      const Tensor& src = s_.GetTensor(x);
      const i64 bytes = src.Bytes(), elements = src.elements;
      if (sp_) {
        const int full = AddCollectiveOn(x, ".all_gather", CollectiveKind::kAllGather,
                                         CollectiveKind::kReduceScatter, bytes * w_,
                                         elements * w_, kHiddenState);
        if (keep_gathered_) {
          // PyTorch DTensor (TorchTitan): the GEMMs save the gathered x, as autograd does.
          it = gathered_.emplace(x, full).first;
        } else {
          // The GEMMs keep only their part of x for backward (Korthikanti et al.'s memory), so
          // Megatron-LM gathers x again in backward for the weight gradient: identity forward,
          // an all-gather of the same bytes in this GEMM's backward.
          const int again = AddCollective(s_.GetTensor(x).name + ".regather", std::nullopt,
                                          CollectiveKind::kAllGather, bytes * w_, full,
                                          elements * w_, s_.GetTensor(x).dtype_bytes, kHiddenState);
          it = gathered_.emplace(x, again).first;
        }
      } else {
        const int copy = AddCollectiveOn(x, ".tp_copy", std::nullopt, CollectiveKind::kAllReduce,
                                         bytes, elements, kHiddenState);
        it = gathered_.emplace(x, copy).first;
      }
    }
    for (int& t : op.inputs) t = t == x ? it->second : t;
    if (!sp_ || keep_gathered_) {
      for (int& t : op.saved) t = t == x ? it->second : t;
    }  // Megatron's sequence parallelism keeps the sequence-split x for backward
  }

  const OperatorGraph& g_;
  const Group group_, expert_group_;
  const i64 w_, fold_, tokens_;
  const bool sp_, ep_, etp_;
  const bool keep_gathered_;  // TensorParallelOptions::keep_gathered_input, under sp_
  const i64 kept_experts_;
  OperatorGraph s_;
  std::vector<int> replaced_;     // original tensor → the tensor that stands for it
  std::map<int, int> gathered_;   // tensor → its f copy / all-gather, fed to column GEMMs
};

// The graph with its vocabulary padded as Megatron-LM pads it for width w: to the next multiple
// of vocab_multiple · w rows (unchanged when the vocabulary is unknown or already a multiple).
LayerGraph PadVocabulary(const LayerGraph& full, i64 w, const TensorParallelOptions& options) {
  const i64 multiple = options.vocab_multiple * w;
  if (full.vocab <= 0 || multiple <= 1 || full.vocab % multiple == 0) return full;
  LayerGraph padded = full;
  padded.padded_vocab = (full.vocab + multiple - 1) / multiple * multiple;
  ResizeAxis(padded, Axis::kVocab, full.vocab, padded.padded_vocab);
  return padded;
}

}  // namespace

MegatronRole MegatronRoleOf(const Operator& op, bool split_experts) {
  if (op.expert >= 0 && !split_experts) return Role::kExpert;
  const OpAxes& x = op.axes;
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

std::string TensorParallelRefusal(const LayerGraph& unpadded, i64 w,
                                  const TensorParallelOptions& options) {
  if (options.expert_parallel && options.expert_tensor_parallel && w == 1 && unpadded.HasExperts()) {
    return "expert_tensor_parallel width at width 1 keeps each expert whole: the same as "
           "expert_tensor_parallel 1";
  }
  if (w == 1 && ExpertParallelSize(options, w) == 1) return "";
  const LayerGraph full = PadVocabulary(unpadded, w, options);
  auto not_divisible = [&](const std::string& what) {
    return what + " are not divisible by " + std::to_string(w);
  };
  if (options.expert_parallel) {
    const i64 e = ExpertParallelSize(options, w);
    if (!options.expert_tensor_parallel && e % w != 0) {
      return "expert_parallel " + std::to_string(e) + " is not a multiple of the width " +
             std::to_string(w) +
             " (experts whole on each device; expert_tensor_parallel: width splits them over the "
             "width, and then expert_parallel counts data-parallel replicas)";
    }
    for (const auto& u : full.unique_layers) {
      const i64 experts = ExpertCount(u.forward);
      if (experts == 0) continue;
      if (experts % e != 0) {
        return "the " + std::to_string(experts) + " experts are not divisible by " +
               (e == w ? std::to_string(w) : "expert_parallel " + std::to_string(e));
      }
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
      const Role role = MegatronRoleOf(op, options.expert_tensor_parallel);
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

TensorParallelOptions ReadTensorParallelOptions(const ConfigNode& params,
                                                TensorParallelOptions defaults) {
  params.ExpectKeys({"make_vocab_size_divisible_by", "gathered_input", "expert_parallel",
                     "expert_tensor_parallel"});
  if (auto n = params.Optional("expert_parallel")) {
    if (!defaults.expert_parallel) {
      n->Fail("needs the moe strategy (expert parallelism)");
    }
    // Up to the host's accelerator limit (limits::kAccelerators, outside the plugin SDK), as the
    // CLI's --expert-parallel.
    defaults.expert_parallel_size = n->AsIntInRange(1, std::int64_t{1} << 24);
  }
  if (auto n = params.Optional("expert_tensor_parallel")) {
    if (!defaults.expert_parallel) n->Fail("needs the moe strategy (expert parallelism)");
    const std::string word = n->AsString();
    if (word != "1" && word != "width") {
      n->Fail(
          "expected 1 (each expert whole on its device) or width (each expert split over the "
          "tensor-parallel width, Megatron-LM's --expert-tensor-parallel-size t), found '" +
          word + "'");
    }
    defaults.expert_tensor_parallel = word == "width";
  }
  if (auto n = params.Optional("make_vocab_size_divisible_by")) {
    defaults.vocab_multiple = n->AsIntInRange(1, 1 << 20);
  }
  if (auto n = params.Optional("gathered_input")) {
    if (!defaults.sequence_parallel && !defaults.expert_parallel) {
      n->Fail(
          "needs sequence parallelism (the sequence_parallel or moe strategy): without it "
          "the GEMMs' input is not gathered");
    }
    const std::string word = n->AsString();
    if (word != "regather" && word != "keep") {
      n->Fail(
          "expected regather (Megatron-LM: the sequence shard kept, gathered again in "
          "backward) or keep (PyTorch DTensor, TorchTitan: the gathered input kept), found '" +
          word + "'");
    }
    defaults.keep_gathered_input = word == "keep";
  }
  return defaults;
}

LayerGraph TensorParallelSlice(const LayerGraph& unpadded, i64 w,
                               const TensorParallelOptions& options) {
  const LayerGraph full = PadVocabulary(unpadded, w, options);
  LayerGraph out = full;
  const i64 e = options.expert_parallel ? ExpertParallelSize(options, w) : w;
  const bool etp = options.expert_parallel && options.expert_tensor_parallel;
  const i64 fold = etp ? e : e / w;
  // Split experts go through the dispatch and the collection even on one expert-parallel rank:
  // their tokens are gathered over the width there.
  const bool ep = options.expert_parallel && (e > 1 || etp);
  const bool sp = (options.sequence_parallel || options.expert_parallel) && w > 1;
  for (const auto& u : full.unique_layers) {
    if (ep && ExpertCount(u.forward) > 0) out.expert_fold = fold;  // a dense model folds nothing
  }
  for (auto& layer : out.unique_layers) {
    if (w > 1 || ep) {
      layer.forward = ForwardSlicer(layer.forward, Group{w, full.tensor_parallel},
                                    full.micro_batch * full.sequence_length, sp, ep,
                                    options.keep_gathered_input, fold, etp)
                          .Slice();
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
