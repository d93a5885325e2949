#include "phaze/graph/backward.hpp"

#include <algorithm>
#include <map>
#include <utility>

#include "phaze/core/error.hpp"

namespace phaze {

std::string BackwardOpName(std::string_view forward_op) {
  return std::string(forward_op) + ".backward";
}

namespace {

// A gradient GEMM's axes: the forward op's, with its dimensions as the gradient's shape permutes
// them (`batch`, `m`, `n`, `k` name which forward axis each new dimension is).
OpAxes Permuted(Axis batch, Axis m, Axis n, Axis k) {
  OpAxes out = OpAxes::Of({batch, m, n});
  out.batch = batch, out.m = m, out.n = n, out.k = k;
  return out;
}

class BackwardWriter {
 public:
  explicit BackwardWriter(const OperatorGraph& fw) : fw_(fw), contributions_(fw.Tensors().size()) {
    // Which forward tensors carry a gradient: inputs that want one, and outputs of ops that read a
    // tensor carrying one or own weights.
    needs_grad_.resize(fw.Tensors().size());
    for (size_t t = 0; t < fw.Tensors().size(); ++t) needs_grad_[t] = fw.GetTensor(t).requires_grad;
    for (int i : fw.TopologicalOrder()) {
      const Operator& op = fw.GetOp(i);
      bool flows = op.weight_bytes > 0;
      for (int in : op.inputs) flows = flows || needs_grad_[in];
      for (int out : op.outputs) needs_grad_[out] = flows && fw.GetTensor(out).requires_grad;
    }
  }

  OperatorGraph Run() {
    for (int t : fw_.Outputs()) {
      const int producer = fw_.Producer(t);
      if (producer >= 0 && fw_.GetOp(producer).kind == OpKind::kLoss) {
        seeded_.push_back(t);
      } else if (needs_grad_[t]) {
        contributions_[t].push_back(NewTensor("grad:" + fw_.GetTensor(t).name, t));
      }
    }
    auto order = fw_.TopologicalOrder();
    for (auto it = order.rbegin(); it != order.rend(); ++it) Backward(fw_.GetOp(*it));
    for (int t : fw_.InputTensors()) {
      if (!needs_grad_[t]) continue;
      const int g = GradOf(t);
      if (g >= 0) bw_.MarkOutput(g);
    }
    return std::move(bw_);
  }

 private:
  int NewTensor(const std::string& name, int like) {
    const Tensor& t = fw_.GetTensor(like);
    return bw_.AddTensor(name, t.elements, t.dtype_bytes);
  }

  int Saved(int t) {
    auto it = saved_.find(t);
    if (it != saved_.end()) return it->second;
    const Tensor& src = fw_.GetTensor(t);
    const int copy = bw_.AddTensor("saved:" + src.name, src.elements, src.dtype_bytes, false);
    saved_.emplace(t, copy);
    return copy;
  }

  // The gradient of forward tensor t (summing several contributions); -1 when none flows back.
  int GradOf(int t) {
    auto& list = contributions_[t];
    if (list.size() <= 1) return list.empty() ? -1 : list[0];
    const Tensor& src = fw_.GetTensor(t);
    Operator sum;
    sum.name = src.name + ".grad_sum";
    sum.kind = OpKind::kElementwise;
    sum.vector = {{"add", src.elements * static_cast<std::int64_t>(list.size() - 1), 1}};
    if (fw_.Producer(t) >= 0) sum.expert = fw_.GetOp(fw_.Producer(t)).expert;
    sum.inputs = list;
    const int g = NewTensor("grad:" + src.name, t);
    sum.outputs = {g};
    bw_.AddOp(std::move(sum));
    list = {g};
    return g;
  }

  bool IsSeeded(int t) const { return std::count(seeded_.begin(), seeded_.end(), t) > 0; }

  // Adds `op` writing one gradient per input of `fw_op` in `targets`; records the contributions.
  void EmitWithInputGradients(Operator op, const Operator& fw_op, const std::vector<int>& targets) {
    for (int in : targets) {
      const int g = NewTensor("grad:" + fw_.GetTensor(in).name + "@" + fw_op.name, in);
      op.outputs.push_back(g);
      contributions_[in].push_back(g);
    }
    bw_.AddOp(std::move(op));
  }

  std::vector<int> InputsNeedingGrad(const Operator& op) const {
    std::vector<int> out;
    for (int in : op.inputs) {
      if (needs_grad_[in]) out.push_back(in);
    }
    return out;
  }

  void Backward(const Operator& op) {
    std::vector<int> grads;  // gradients of the op's outputs that have one
    bool seeded = false;
    for (int out : op.outputs) {
      if (IsSeeded(out)) seeded = true;
      const int g = GradOf(out);
      if (g >= 0) grads.push_back(g);
    }
    if (grads.empty() && !seeded) return;  // nothing downstream needs this op's gradient

    switch (op.kind) {
      case OpKind::kOptimizer:
        throw InvalidArgumentError("op '" + op.name + "': an optimizer step has no backward");
      case OpKind::kCollective: {  // the conjugate: Megatron's g (all-reduce ↔ identity), f, …
        if (!op.collective_backward) {
          for (int in : InputsNeedingGrad(op)) contributions_[in].push_back(grads.at(0));
          return;
        }
        Operator conjugate;
        conjugate.name = BackwardOpName(op.name);
        conjugate.kind = OpKind::kCollective;
        conjugate.axes = op.axes;
        conjugate.expert = op.expert;
        conjugate.collective = op.collective_backward;
        conjugate.collective_backward = op.collective;
        conjugate.collective_bytes = op.collective_bytes;
        conjugate.collective_group = op.collective_group;
        conjugate.collective_stride = op.collective_stride;
        conjugate.inputs = grads;
        EmitWithInputGradients(std::move(conjugate), op, InputsNeedingGrad(op));
        return;
      }
      case OpKind::kView: {  // split ↔ concat, select ↔ scatter: again a view
        Operator inverse;
        inverse.name = BackwardOpName(op.name);
        inverse.kind = OpKind::kView;
        inverse.axes = op.axes;
        inverse.expert = op.expert;
        inverse.inputs = grads;
        EmitWithInputGradients(std::move(inverse), op, InputsNeedingGrad(op));
        return;
      }
      default:
        break;
    }
    if (op.gemm) {
      GemmBackward(op, op.vector.empty() ? grads : std::vector<int>{EpilogueBackward(op, grads)});
      return;
    }
    if (op.vector.size() == 1 && op.vector[0].function == "add") {
      for (int in : InputsNeedingGrad(op)) contributions_[in].push_back(grads.at(0));
      return;
    }
    if (op.vector.size() == 1 && op.vector[0].function == "bias_add") {
      for (int in : InputsNeedingGrad(op)) contributions_[in].push_back(grads.at(0));
      Operator bias;
      bias.name = op.name + ".grad_bias";
      bias.kind = OpKind::kReduction;
      bias.axes = op.axes;
      bias.expert = op.expert;
      bias.vector = {{"bias_grad", op.vector[0].elements, 1}};
      bias.inputs = {grads.at(0)};
      bias.weight_bytes = op.weight_bytes;
      bw_.AddOp(std::move(bias));
      return;
    }
    Operator b = VectorBackwardOp(op, BackwardOpName(op.name), grads);
    EmitWithInputGradients(std::move(b), op, InputsNeedingGrad(op));
  }

  Operator VectorBackwardOp(const Operator& op, const std::string& name,
                            const std::vector<int>& grads) {
    Operator b;
    b.name = name;
    b.kind = op.kind;
    b.axes = op.axes;
    b.expert = op.expert;
    for (const auto& w : op.vector)
      b.vector.push_back({w.function + "_backward", w.elements, w.row_elements});
    b.inputs = grads;
    for (int s : op.saved) b.inputs.push_back(Saved(s));
    b.weight_bytes = op.gemm ? 0 : op.weight_bytes;  // norm/embedding weight gradients
    return b;
  }

  // A fused forward op: back-propagate through its epilogue into the GEMM's output gradient.
  int EpilogueBackward(const Operator& op, const std::vector<int>& grads) {
    Operator b = VectorBackwardOp(op, op.name + ".epilogue_backward", grads);
    const GemmShape& s = *op.gemm;
    const int g = bw_.AddTensor("grad:" + op.name + ".gemm_output", s.batch * s.m * s.n,
                                fw_.GetTensor(op.outputs.at(0)).dtype_bytes);
    b.outputs = {g};
    bw_.AddOp(std::move(b));
    return g;
  }

  void GemmBackward(const Operator& op, const std::vector<int>& grads) {
    const GemmShape& s = *op.gemm;
    const int dout = grads.at(0);
    const OpAxes& x = op.axes;
    if (op.kind == OpKind::kBatchedGemm) {
      const int a = op.inputs.at(0), b = op.inputs.at(1);
      if (needs_grad_[a]) {
        Operator ga = GemmOp(op.name + ".grad_a", op, {s.batch, s.m, s.k, s.n}, {dout, Saved(b)});
        ga.axes = Permuted(x.batch, x.m, x.k, x.n);
        EmitWithInputGradients(std::move(ga), op, {a});
      }
      if (needs_grad_[b]) {
        Operator gb = GemmOp(op.name + ".grad_b", op, {s.batch, s.k, s.n, s.m}, {Saved(a), dout});
        gb.axes = Permuted(x.batch, x.k, x.n, x.m);
        EmitWithInputGradients(std::move(gb), op, {b});
      }
      return;
    }
    const int in = op.inputs.at(0);
    if (needs_grad_[in]) {
      Operator gi = GemmOp(op.name + ".grad_input", op, {s.batch, s.m, s.k, s.n}, {dout});
      gi.axes = Permuted(x.batch, x.m, x.k, x.n);
      gi.weight_bytes = op.weight_bytes;  // reads W
      EmitWithInputGradients(std::move(gi), op, {in});
    }
    Operator gw =
        GemmOp(op.name + ".grad_weight", op, {1, s.k, s.n, s.batch * s.m}, {Saved(in), dout});
    gw.axes = Permuted(Axis::kNone, x.k, x.n, x.m);
    gw.weight_bytes = op.weight_bytes;  // writes dW
    bw_.AddOp(std::move(gw));
  }

  Operator GemmOp(const std::string& name, const Operator& fw_op, GemmShape shape,
                  std::vector<int> inputs) const {
    Operator g;
    g.name = name;
    g.kind = fw_op.kind;
    g.gemm = shape;
    g.axes = fw_op.axes;
    g.expert = fw_op.expert;
    g.inputs = std::move(inputs);
    return g;
  }

  const OperatorGraph& fw_;
  OperatorGraph bw_;
  std::vector<bool> needs_grad_;
  std::vector<std::vector<int>> contributions_;  // per forward tensor: backward tensors
  std::vector<int> seeded_;
  std::map<int, int> saved_;
};

}  // namespace

OperatorGraph DeriveBackward(const OperatorGraph& forward) { return BackwardWriter(forward).Run(); }

}  // namespace phaze
