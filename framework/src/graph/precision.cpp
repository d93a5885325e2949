#include "phaze/graph/precision.hpp"

#include <algorithm>
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

std::string_view ToString(Fp8Recipe recipe) {
  return recipe == Fp8Recipe::kTensorwise ? "tensorwise" : "delayed";
}

std::string_view ToString(Fp8ParamStorage storage) {
  return storage == Fp8ParamStorage::k16Bit ? "16bit" : "fp8";
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

bool SavedName(const std::string& name) { return name.rfind("saved:", 0) == 0; }

bool IsWeightGradient(const Operator& op) {  // backward.cpp's name for dW = xᵀ·dy
  const std::string suffix = ".grad_weight";
  return op.name.size() >= suffix.size() &&
         op.name.compare(op.name.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Bytes an element of a tensor costs under current scaling: the amax pass reads it and the
// scaled cast reads it again and writes FP8 (2 + 2 + 1); a transposed FP8 copy reads and writes
// one byte.
constexpr std::int64_t kAmaxAndCastBytes = 5;
constexpr std::int64_t kTransposedCopyBytes = 2;

// Current scaling's passes over memory (the GEMM operands only, Fp8GemmOperands), charged to the
// FP8 GEMMs of `g` (one pass's graph, already rewritten: the activations that reach FP8 GEMMs only
// are one byte), as torchao's tensorwise Float8Linear runs them (torchao/float8/float8_linear.py
// and float8_ops.py, 2024: torch._scaled_mm takes its first operand row-major and its second
// column-major):
// * forward: each input, at its first FP8 GEMM, read for its amax and cast (5 bytes an element;
//   an all-gathered input on its shard, before the gather; one that TE's fused producer would
//   have written in FP8 is written in 16 bits first, 1 byte more); the 16-bit weight's amax and
//   cast at every GEMM (5);
// * backward: each 16-bit gradient, at its first FP8 GEMM, read for its amax and cast (5; a
//   gathered one on its shard); the input-gradient GEMM's weight copied transposed (2); the
//   weight-gradient GEMM's inputs (the gradient and the input torchao cast and saved in forward,
//   or its FP8 re-gather) copied transposed (2 each, once a tensor).
std::vector<std::int64_t> CurrentScalingBytes(const OperatorGraph& g, bool backward) {
  std::vector<std::int64_t> bytes(g.Ops().size(), 0);
  std::set<int> cast, copied;
  for (std::size_t i = 0; i < g.Ops().size(); ++i) {
    const Operator& op = g.GetOp(static_cast<int>(i));
    if (!Fp8Gemm(op)) continue;
    const bool weight_gradient = IsWeightGradient(op);
    std::int64_t b = 0;
    if (op.weight_bytes > 0 && !weight_gradient) {  // the weight, k·n of the GEMM
      const std::int64_t weight_elements = op.gemm->k * op.gemm->n;
      b += (backward ? kTransposedCopyBytes : kAmaxAndCastBytes) * weight_elements;
    }
    for (int t : Fp8GemmOperands(op)) {
      const Tensor& x = g.GetTensor(t);
      const int producer = g.Producer(t);
      // Backward casts only its 16-bit gradients: an FP8 input there was cast in forward and
      // saved (or re-gathered), as was a saved 16-bit one (torchao saves the cast input).
      const bool needs_cast =
          !backward || (x.dtype_bytes > 1 && !(producer < 0 && SavedName(x.name)));
      if (needs_cast && cast.insert(t).second) {
        // Cast before the gathers: the input of the first all-gather among the carriers
        // (all-gathers, identities such as the sequence-parallel re-gather) that hand it on.
        std::int64_t elements = x.elements;
        for (int p = producer; p >= 0 && Carrier(g.GetOp(p)) && !g.GetOp(p).inputs.empty();) {
          const int in = g.GetOp(p).inputs[0];
          if (AllGather(g.GetOp(p))) elements = g.GetTensor(in).elements;
          p = g.Producer(in);
        }
        b += (kAmaxAndCastBytes + (x.dtype_bytes == 1 ? 1 : 0)) * elements;
      }
      if (backward && weight_gradient && copied.insert(t).second) {
        b += kTransposedCopyBytes * x.elements;
      }
    }
    bytes[i] = b;
  }
  return bytes;
}

// `g` with its FP8 GEMMs marked, the named tensors one byte per element and the named
// all-gathers moving one byte per value instead of the divisor given (the bytes of a value of the
// tensor they gather).
OperatorGraph Fp8Rewritten(const OperatorGraph& g, const std::set<std::string>& fp8_tensors,
                           const std::map<std::string, std::int64_t>& fp8_gathers, Fp8Recipe recipe,
                           bool backward) {
  OperatorGraph out = Rewritten(
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
  if (recipe != Fp8Recipe::kTensorwise) return out;
  const std::vector<std::int64_t> scaling = CurrentScalingBytes(out, backward);
  return Rewritten(
      out, [](int, Tensor&) {},
      [&](int index, Operator& op) {
        op.fp8_current_scaling = op.fp8;
        op.fp8_scaling_bytes = scaling[static_cast<std::size_t>(index)];
      });
}

}  // namespace

std::vector<int> Fp8GemmOperands(const Operator& op) {
  const std::size_t n = std::min<std::size_t>(IsWeightGradient(op) ? 2 : 1, op.inputs.size());
  return std::vector<int>(op.inputs.begin(), op.inputs.begin() + static_cast<std::ptrdiff_t>(n));
}

LayerGraph WithPrecision(const LayerGraph& graph, Precision precision, Fp8Recipe recipe) {
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
    u.forward = Fp8Rewritten(fw, fp8_tensors, forward_gathers, recipe, false);
    u.backward = Fp8Rewritten(bw, fp8_tensors, backward_gathers, recipe, true);
    FinalizeLayerMemory(u, out.dtype_bytes, out.optimizer);
  }
  return out;
}

}  // namespace phaze
