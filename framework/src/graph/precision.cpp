#include "phaze/graph/precision.hpp"

#include <map>
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

// `g` with its FP8 GEMMs marked, the named tensors one byte per element and the named
// all-gathers moving one byte per value instead of the divisor given (the bytes of a value of the
// tensor they gather).
OperatorGraph Fp8Rewritten(const OperatorGraph& g, const std::set<std::string>& fp8_tensors,
                           const std::map<std::string, std::int64_t>& fp8_gathers) {
  return Rewritten(
      g,
      [&](int, Tensor& t) {
        if (fp8_tensors.count(t.name)) t.dtype_bytes = 1;
      },
      [&](int, Operator& op) {
        op.fp8 = Fp8Gemm(op);
        if (auto it = fp8_gathers.find(op.name); it != fp8_gathers.end()) {
          op.collective_bytes /= it->second;
        }
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
    // All-gathers that move FP8, as TE casts before it gathers: in forward, each whose gathered
    // tensor is FP8 (whatever the shard: a shard another op also reads in 16 bits, a post-LN
    // block's residual, is cast by a kernel of its own that is not charged, 3 bytes per value of
    // the shard); in backward, the re-gather of such a tensor (the conjugate of its carrier) and
    // each gather of a gradient that reaches FP8 GEMMs only (the gradient itself stays 16-bit
    // here: the GEMMs' cast kernel, charged on the gathered values, stands in for TE's cast of
    // the shard and transpose of the gathered FP8 tensor).
    const auto all_fp8 = [](const std::vector<bool>& marks, const Operator& op) {
      bool all = !op.outputs.empty();
      for (int t : op.outputs) all = all && marks[t];
      return all;
    };
    std::map<std::string, std::int64_t> forward_gathers, backward_gathers;
    for (const Operator& op : fw.Ops()) {
      if (!Carrier(op) || !all_fp8(fp8, op)) continue;
      const std::int64_t value_bytes = fw.GetTensor(op.outputs[0]).dtype_bytes;
      if (AllGather(op)) forward_gathers[op.name] = value_bytes;
      if (op.collective_backward == CollectiveKind::kAllGather) {
        backward_gathers[BackwardOpName(op.name)] = value_bytes;
      }
    }
    const std::vector<bool> fp8_gradients = ReachingFp8GemmsOnly(bw);
    for (const Operator& op : bw.Ops()) {
      if (AllGather(op) && all_fp8(fp8_gradients, op)) {
        backward_gathers[op.name] = bw.GetTensor(op.outputs[0]).dtype_bytes;
      }
    }
    u.forward = Fp8Rewritten(fw, fp8_tensors, forward_gathers);
    u.backward = Fp8Rewritten(bw, fp8_tensors, backward_gathers);
    FinalizeLayerMemory(u, out.dtype_bytes, out.optimizer);
  }
  return out;
}

}  // namespace phaze
