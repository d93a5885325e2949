#include "phaze/graph/precision.hpp"

#include <set>

namespace phaze {

std::string_view ToString(Precision precision) {
  switch (precision) {
    case Precision::kBf16:
      return "bf16";
    case Precision::kFp16:
      return "fp16";
    case Precision::kFp8:
      return "fp8";
  }
  return "?";
}

namespace {

bool Fp8Gemm(const Operator& op) { return op.kind == OpKind::kGemm && op.gemm.has_value(); }

// `g` with its FP8 GEMMs marked and the named tensors one byte per element.
OperatorGraph Fp8Rewritten(const OperatorGraph& g, const std::set<std::string>& fp8_tensors) {
  return Rewritten(
      g,
      [&](int, Tensor& t) {
        if (fp8_tensors.count(t.name)) t.dtype_bytes = 1;
      },
      [](int, Operator& op) { op.fp8 = Fp8Gemm(op); });
}

}  // namespace

LayerGraph WithPrecision(const LayerGraph& graph, Precision precision) {
  if (precision != Precision::kFp8) return graph;
  LayerGraph out = graph;
  for (UniqueLayer& u : out.unique_layers) {
    if (u.kind != LayerKind::kBlock) continue;
    const OperatorGraph& fw = u.forward;
    // Activations every consumer of which is an FP8 GEMM (and that are not the layer's inputs or
    // outputs): written and kept in FP8; their saved copies in the backward graph too.
    std::set<std::string> fp8_tensors;
    for (std::size_t t = 0; t < fw.Tensors().size(); ++t) {
      const int index = static_cast<int>(t);
      const std::vector<int> consumers = fw.Consumers(index);
      if (consumers.empty() || fw.Producer(index) < 0 || fw.IsOutput(index)) continue;
      bool all_fp8 = true;
      for (int c : consumers) all_fp8 = all_fp8 && Fp8Gemm(fw.GetOp(c));
      if (!all_fp8) continue;
      fp8_tensors.insert(fw.GetTensor(index).name);
      fp8_tensors.insert("saved:" + fw.GetTensor(index).name);
    }
    u.forward = Fp8Rewritten(u.forward, fp8_tensors);
    u.backward = Fp8Rewritten(u.backward, fp8_tensors);
    FinalizeLayerMemory(u, out.dtype_bytes, out.optimizer);
  }
  return out;
}

}  // namespace phaze
