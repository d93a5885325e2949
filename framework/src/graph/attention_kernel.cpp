#include "phaze/graph/attention_kernel.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>

namespace phaze {

std::string_view ToString(AttentionKernel kernel) {
  switch (kernel) {
    case AttentionKernel::kFlash:
      return "flash";
    case AttentionKernel::kFused:
      return "fused";
    case AttentionKernel::kMegatron:
      return "megatron";
    case AttentionKernel::kUnfused:
      break;
  }
  return "unfused";
}

namespace {

// The forward tensor a backward tensor stands for: "saved:X", "flash:X" and "grad:X@op" → X.
std::string ForwardName(const std::string& name) {
  if (name.rfind("saved:", 0) == 0) return name.substr(6);
  if (name.rfind("flash:", 0) == 0) return name.substr(6);
  if (name.rfind("grad:", 0) == 0) return name.substr(5, name.find('@') - 5);
  return name;
}

// The score tiles a causal kernel computes: FlashAttention and cuDNN walk the scores in tiles
// of 128 × 128 and skip those above the diagonal, n(n + 1)/2 of n² for n = ⌈keys / 128⌉.
double CausalKeptShare(std::int64_t keys) {
  const double n = std::ceil(static_cast<double>(keys) / 128.0);
  return n > 0 ? (n + 1) / (2 * n) : 1.0;
}

std::int64_t Scaled(std::int64_t x, double share) {
  return std::max<std::int64_t>(1, std::llround(static_cast<double>(x) * share));
}

bool GemmSpansKeys(const Operator& op) {
  return op.gemm &&
         (op.axes.m == Axis::kKeys || op.axes.n == Axis::kKeys || op.axes.k == Axis::kKeys);
}

// `op` as the fused kernel runs it: marked, its softmax the online one, the forward kernel's
// dropout drawing its random numbers in the kernel (`flash_dropout`; the backward kernel's
// recomputed scores draw them again, partly under its heavier tensor work:
// `flash_dropout_backward`), and under a causal mask
// (kept < 1) its key dimension, and the lane work over its score planes, cut to the tiles
// computed (an epilogue over a GEMM's tokens × head-dimension output, such as the rotary
// backward fused onto dQ, keeps its size).
Operator InKernel(Operator op, double kept, bool forward_pass) {
  op.attention_kernel = true;
  bool planes = op.axes.Spans(Axis::kKeys);
  if (op.gemm) {
    GemmShape& g = *op.gemm;
    planes = op.axes.m == Axis::kKeys || op.axes.n == Axis::kKeys;
    if (op.axes.m == Axis::kKeys) g.m = Scaled(g.m, kept);
    if (op.axes.n == Axis::kKeys) g.n = Scaled(g.n, kept);
    if (op.axes.k == Axis::kKeys) g.k = Scaled(g.k, kept);
  }
  for (VectorWork& v : op.vector) {
    if (v.function == "softmax") v.function = "flash_softmax";
    if (v.function == "dropout") {
      v.function = forward_pass ? "flash_dropout" : "flash_dropout_backward";
    }
    if (planes) v.elements = Scaled(v.elements, kept);
  }
  return op;
}

// Whether the attention core of a forward graph is masked causally.
bool CausalCore(const OperatorGraph& fw) {
  for (const Operator& op : fw.Ops()) {
    if (!op.attention_core) continue;
    for (const VectorWork& v : op.vector) {
      if (v.function == "causal_mask") return true;
    }
  }
  return false;
}

// `unfused` with PyTorch's FP32 softmax wherever Megatron-LM's fused kernel does not run (header
// comment): the attention softmax's passes, its kept probabilities at 4 bytes (forward and the
// backward's saved copy).
LayerGraph WithMegatronSoftmax(const LayerGraph& graph) {
  LayerGraph out = graph;
  for (UniqueLayer& u : out.unique_layers) {
    const OperatorGraph& fw = u.forward;
    const bool causal = CausalCore(fw);
    std::set<std::string> fp32;  // the probabilities of each softmax that falls back
    for (const Operator& op : fw.Ops()) {
      if (!op.attention_core || op.kind != OpKind::kSoftmax || op.vector.empty() ||
          op.outputs.size() != 1) {
        continue;
      }
      const VectorWork& v = op.vector.front();
      const std::int64_t keys = v.row_elements;
      // Self-attention: as many queries as keys. A slice with fewer queries (context
      // parallelism) has no b·a/t to read off the elements and is left to the kernel.
      if (keys <= 0 || v.elements % (keys * keys) != 0) continue;
      if (!MegatronFusedSoftmaxRuns(v.elements / (keys * keys), keys, keys, causal)) {
        fp32.insert(fw.GetTensor(op.outputs[0]).name);
      }
    }
    if (fp32.empty()) continue;
    // The softmax (forward) or its backward (which reads the kept copy, "saved:X").
    auto touches = [&](const OperatorGraph& g, const Operator& op) {
      if (op.kind != OpKind::kSoftmax) return false;
      for (const auto* list : {&op.inputs, &op.outputs}) {
        for (int t : *list) {
          if (fp32.count(ForwardName(g.GetTensor(t).name))) return true;
        }
      }
      return false;
    };
    u.forward = Rewritten(
        fw,
        [&](int, Tensor& t) {
          if (fp32.count(t.name)) t.dtype_bytes = 4;
        },
        [&](int, Operator& op) {
          if (touches(fw, op)) op.passes = MegatronSoftmaxFallbackPasses(false);
        });
    const OperatorGraph& bw = u.backward;
    u.backward = Rewritten(
        bw,
        [&](int, Tensor& t) {
          if (t.name.rfind("saved:", 0) == 0 && fp32.count(ForwardName(t.name))) t.dtype_bytes = 4;
        },
        [&](int, Operator& op) {
          if (touches(bw, op)) op.passes = MegatronSoftmaxFallbackPasses(true);
        });
    FinalizeLayerMemory(u, out.dtype_bytes, out.optimizer);
  }
  return out;
}

}  // namespace

bool MegatronFusedSoftmaxRuns(std::int64_t attn_batches, std::int64_t sq, std::int64_t sk,
                              bool causal) {
  if (!(sk > 16 && sk <= 4096 && sq % 4 == 0 && sk % 4 == 0 && attn_batches % 4 == 0)) {
    return false;
  }
  std::int64_t power = 1;
  while (power < sk) power *= 2;
  const std::int64_t warp = std::min<std::int64_t>(power, 32);
  const std::int64_t per_block = (128 / warp) * (power <= 128 ? 2 : 1);
  return causal ? attn_batches % per_block == 0 : sq % per_block == 0;
}

KernelPasses MegatronSoftmaxFallbackPasses(bool backward) {
  KernelPasses p;
  p.word_bytes = 2;
  p.kernels = 4;  // five in all
  if (!backward) {
    // float() r2 w4, × scale r4 w4, masked_fill_ r4 w4, softmax r4 w4, .half() r4 w2: 18 bytes
    // read and 18 written per score. The op's own: the 16-bit scores read (2), the FP32
    // probabilities written (4); the op after it (dropout) reads them at 4 bytes where it reads
    // the 2-byte cast, so 2 bytes fewer here.
    p.reads = 7;   // (18 − 2 − 2) / 2
    p.writes = 7;  // (18 − 4) / 2
  } else {
    // .half()'s backward r2 w4, softmax backward r4 + r4 w4, masked_fill_'s r4 w4, the scale's
    // r4 w4, float()'s r4 w2: 22 and 18 bytes. The op's own: the gradient (2) and the kept FP32
    // probabilities (4) read, the 16-bit gradient written (2).
    p.reads = 8;       // (22 − 6) / 2
    p.writes = 8;      // (18 − 2) / 2
    p.held_bytes = 8;  // the softmax backward's FP32 input and output at once
  }
  return p;
}

LayerGraph WithAttentionKernel(const LayerGraph& graph, AttentionKernel kernel) {
  if (kernel == AttentionKernel::kUnfused) return graph;
  if (kernel == AttentionKernel::kMegatron) return WithMegatronSoftmax(graph);
  const bool fused = kernel == AttentionKernel::kFused;
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
    // The kernel's ops read or write an on-chip tensor or span the keys (the backward's, derived
    // before fusion, read the unfused names). A causal kernel skips the tiles above the
    // diagonal: the share kept follows from the keys the scores GEMM spans.
    auto in_kernel = [&](const OperatorGraph& g, const Operator& op) {
      if (op.kind != OpKind::kCollective && (op.axes.Spans(Axis::kKeys) || GemmSpansKeys(op))) {
        return true;
      }
      for (const auto* list : {&op.inputs, &op.outputs}) {
        for (int t : *list) {
          if (on_chip.count(ForwardName(g.GetTensor(t).name))) return true;
        }
      }
      return false;
    };
    std::int64_t keys = 0;
    for (const Operator& op : fw.Ops()) {
      if (op.attention_core && op.gemm && op.axes.n == Axis::kKeys) {
        keys = std::max(keys, op.gemm->n);
      }
    }
    const double kept = CausalCore(fw) && keys > 0 ? CausalKeptShare(keys) : 1.0;
    auto priced = [&](const OperatorGraph& g, const Operator& op, bool forward_pass) {
      return fused && in_kernel(g, op) ? InKernel(op, kept, forward_pass) : op;
    };

    OperatorGraph forward = Rewritten(
        fw, [&](int, Tensor& t) { t.elements = elements(t); },
        [&](int, Operator& op) { op = priced(fw, op, true); });

    // Backward: the recomputed core ops first (their tensors "flash:X"; inputs from outside the
    // core are the saved copies backward already reads, else new inputs), then backward as it was.
    // Gradients that stay in the kernel (dP, dS: written and read by its ops only) are on chip
    // too; their names are the unfused graph's, so they are found by their ops.
    const OperatorGraph& bw = u.backward;
    std::set<int> bw_on_chip;
    for (std::size_t t = 0; t < bw.Tensors().size(); ++t) {
      const int index = static_cast<int>(t);
      const int producer = bw.Producer(index);
      if (!fused || producer < 0 || !in_kernel(bw, bw.GetOp(producer)) || bw.IsOutput(index)) {
        continue;
      }
      bool kernel_only = !bw.Consumers(index).empty();
      for (int c : bw.Consumers(index)) kernel_only = kernel_only && in_kernel(bw, bw.GetOp(c));
      if (kernel_only) bw_on_chip.insert(index);
    }
    OperatorGraph backward;
    for (std::size_t t = 0; t < bw.Tensors().size(); ++t) {
      const Tensor& x = bw.Tensors()[t];
      backward.AddTensor(x.name, bw_on_chip.count(static_cast<int>(t)) ? 0 : elements(x),
                         x.dtype_bytes, x.requires_grad);
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
      backward.AddOp(fused ? InKernel(std::move(copy), kept, false) : std::move(copy));
    }
    for (const Operator& op : bw.Ops()) {
      backward.AddOp(priced(backward, op, false));
    }
    for (int t : bw.Outputs()) backward.MarkOutput(t);
    u.forward = std::move(forward);
    u.backward = std::move(backward);
    FinalizeLayerMemory(u, out.dtype_bytes, out.optimizer);
  }
  return out;
}

}  // namespace phaze
