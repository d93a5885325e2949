#include "phaze/graph/attention_kernel.hpp"

#include <map>
#include <set>

namespace phaze {

std::string_view ToString(AttentionKernel kernel) {
  return kernel == AttentionKernel::kFlash ? "flash" : "unfused";
}

namespace {

// The forward tensor a backward tensor stands for: "saved:X" and "grad:X@op" → X.
std::string ForwardName(const std::string& name) {
  if (name.rfind("saved:", 0) == 0) return name.substr(6);
  if (name.rfind("grad:", 0) == 0) return name.substr(5, name.find('@') - 5);
  return name;
}

}  // namespace

LayerGraph WithAttentionKernel(const LayerGraph& graph, AttentionKernel kernel) {
  if (kernel != AttentionKernel::kFlash) return graph;
  LayerGraph out = graph;
  for (UniqueLayer& u : out.unique_layers) {
    const OperatorGraph& fw = u.forward;
    // The core's own tensors: written by a core op, read by core ops only.
    std::set<std::string> on_chip;
    for (std::size_t t = 0; t < fw.Tensors().size(); ++t) {
      const int index = static_cast<int>(t);
      const int producer = fw.Producer(index);
      if (producer < 0 || !fw.GetOp(producer).attention_core || fw.IsOutput(index)) continue;
      bool core_only = true;
      for (int c : fw.Consumers(index)) core_only = core_only && fw.GetOp(c).attention_core;
      if (core_only) on_chip.insert(fw.GetTensor(index).name);
    }
    if (on_chip.empty()) continue;
    // An on-chip tensor has no elements in memory (its work stays in the ops that touch it).
    auto elements = [&](const Tensor& t) {
      return on_chip.count(ForwardName(t.name)) ? 0 : t.elements;
    };
    OperatorGraph forward;
    for (const Tensor& t : fw.Tensors()) {
      forward.AddTensor(t.name, elements(t), t.dtype_bytes, t.requires_grad);
    }
    for (const Operator& op : fw.Ops()) forward.AddOp(op);
    for (int t : fw.Outputs()) forward.MarkOutput(t);

    // Backward: the recomputed core ops first (their tensors "flash:X"; inputs from outside the
    // core are the saved copies backward already reads, else new inputs), then backward as it was.
    const OperatorGraph& bw = u.backward;
    OperatorGraph backward;
    for (const Tensor& t : bw.Tensors()) {
      backward.AddTensor(t.name, elements(t), t.dtype_bytes, t.requires_grad);
    }
    std::map<int, int> recomputed;  // forward tensor → backward tensor
    auto tensor_of = [&](int t) {
      auto it = recomputed.find(t);
      if (it != recomputed.end()) return it->second;
      const Tensor& x = fw.GetTensor(t);
      int index = on_chip.count(x.name) ? -1 : backward.FindTensor("saved:" + x.name);
      if (index < 0) {
        index = backward.AddTensor("flash:" + x.name, on_chip.count(x.name) ? 0 : x.elements,
                                   x.dtype_bytes, false);
      }
      recomputed.emplace(t, index);
      return index;
    };
    for (const Operator& op : fw.Ops()) {
      if (!op.attention_core) continue;
      bool all_on_chip = !op.outputs.empty();
      for (int o : op.outputs) all_on_chip = all_on_chip && on_chip.count(fw.GetTensor(o).name);
      if (!all_on_chip) continue;
      Operator copy = op;
      copy.name = "flash:" + op.name;
      copy.saved.clear();
      for (int& t : copy.inputs) t = tensor_of(t);
      for (int& t : copy.outputs) t = tensor_of(t);
      backward.AddOp(std::move(copy));
    }
    for (const Operator& op : bw.Ops()) backward.AddOp(op);
    for (int t : bw.Outputs()) backward.MarkOutput(t);
    u.forward = std::move(forward);
    u.backward = std::move(backward);
    FinalizeLayerMemory(u, out.dtype_bytes, out.optimizer);
  }
  return out;
}

}  // namespace phaze
