#include "phaze/graph/precision.hpp"

#include <set>
#include <string>
#include <vector>

#include "phaze/graph/backward.hpp"

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

// A collective whose forward pass hands on its input's values unchanged: an all-gather, or an
// identity (Megatron's f, the sequence-parallel re-gather). Cast before it, it carries FP8.
bool Carrier(const Operator& op) {
  return op.kind == OpKind::kCollective &&
         (!op.collective || *op.collective == CollectiveKind::kAllGather);
}

// Which tensors of `g` reach FP8 GEMMs only: produced in `g`, not its output, and every consumer
// an FP8 GEMM or a carrier every output of which is such a tensor.
std::vector<bool> ReachingFp8GemmsOnly(const OperatorGraph& g) {
  const std::size_t n = g.Tensors().size();
  std::vector<bool> fp8(n, false);
  for (bool changed = true; changed;) {  // a carrier's input follows its outputs
    changed = false;
    for (std::size_t t = 0; t < n; ++t) {
      const int index = static_cast<int>(t);
      if (fp8[t] || g.Producer(index) < 0 || g.IsOutput(index)) continue;
      const std::vector<int> consumers = g.Consumers(index);
      bool all = !consumers.empty();
      for (int c : consumers) {
        const Operator& op = g.GetOp(c);
        bool carried = Carrier(op) && !op.outputs.empty();
        for (int out : op.outputs) carried = carried && fp8[out];
        all = all && (Fp8Gemm(op) || carried);
      }
      if (all) fp8[t] = changed = true;
    }
  }
  return fp8;
}

bool AllGather(const Operator& op) {
  return op.kind == OpKind::kCollective && op.collective == CollectiveKind::kAllGather;
}

// `g` with its FP8 GEMMs marked, the named tensors one byte per element and the named all-gathers
// moving one byte per element instead of `dtype_bytes`.
OperatorGraph Fp8Rewritten(const OperatorGraph& g, const std::set<std::string>& fp8_tensors,
                           const std::set<std::string>& fp8_gathers, std::int64_t dtype_bytes) {
  return Rewritten(
      g,
      [&](int, Tensor& t) {
        if (fp8_tensors.count(t.name)) t.dtype_bytes = 1;
      },
      [&](int, Operator& op) {
        op.fp8 = Fp8Gemm(op);
        if (fp8_gathers.count(op.name)) op.collective_bytes /= dtype_bytes;
      });
}

}  // namespace

LayerGraph WithPrecision(const LayerGraph& graph, Precision precision) {
  if (precision != Precision::kFp8) return graph;
  LayerGraph out = graph;
  for (UniqueLayer& u : out.unique_layers) {
    if (u.kind != LayerKind::kBlock) continue;
    const OperatorGraph& fw = u.forward;
    const OperatorGraph& bw = u.backward;
    // Activations that reach FP8 GEMMs only (through all-gathers and identities): written and
    // kept in FP8; their saved copies in the backward graph too.
    const std::vector<bool> fp8 = ReachingFp8GemmsOnly(fw);
    std::set<std::string> fp8_tensors;
    for (std::size_t t = 0; t < fp8.size(); ++t) {
      if (!fp8[t]) continue;
      fp8_tensors.insert(fw.GetTensor(static_cast<int>(t)).name);
      fp8_tensors.insert("saved:" + fw.GetTensor(static_cast<int>(t)).name);
    }
    // All-gathers that move FP8: a forward one of such an activation; the backward one of a
    // carrier of such an activation (the sequence-parallel re-gather of the kept FP8 shard); a
    // backward one of a gradient that reaches FP8 GEMMs only, which TE casts before gathering
    // (the gradient itself stays 16-bit here: the GEMMs' cast kernel, still charged on the
    // gathered elements, stands in for the cast of the shard and the transpose of the gathered
    // FP8 tensor that the weight gradient needs).
    std::set<std::string> forward_gathers, backward_gathers;
    for (const Operator& op : fw.Ops()) {
      if (!Carrier(op) || op.inputs.empty() || !fp8[op.inputs[0]]) continue;
      if (AllGather(op)) forward_gathers.insert(op.name);
      if (op.collective_backward == CollectiveKind::kAllGather) {
        backward_gathers.insert(BackwardOpName(op.name));
      }
    }
    const std::vector<bool> fp8_gradients = ReachingFp8GemmsOnly(bw);
    for (const Operator& op : bw.Ops()) {
      bool reaches = AllGather(op) && !op.outputs.empty();
      for (int t : op.outputs) reaches = reaches && fp8_gradients[t];
      if (reaches) backward_gathers.insert(op.name);
    }
    u.forward = Fp8Rewritten(fw, fp8_tensors, forward_gathers, out.dtype_bytes);
    u.backward = Fp8Rewritten(bw, fp8_tensors, backward_gathers, out.dtype_bytes);
    FinalizeLayerMemory(u, out.dtype_bytes, out.optimizer);
  }
  return out;
}

}  // namespace phaze
