// The unit of work of a layer: one operator (op) of an operator graph, and the tensors ops read and
// write. An op is a GEMM (tensor core), a list of element-wise/reduction work items (vector core),
// both (a fused op: a GEMM with the vector ops it absorbed as its epilogue), or neither (a view or
// a collective, costed elsewhere). Quantities are exact integers: elements, bytes, FLOPs.
//
// GEMM convention: out[batch][m][n] = Σ_k A[batch][m][k] · B[batch][k][n]; FLOPs = 2·batch·m·n·k.
// A linear layer y = x·Wᵀ on T tokens of width k_in into k_out is {batch 1, m T, n k_out, k k_in}.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "phaze/core/collective_kind.hpp"

namespace phaze {

// What an op computes, coarsely (the fusion rules and the estimators key on it).
enum class OpKind {
  kGemm,         // one operand is a weight (linear layer)
  kBatchedGemm,  // both operands are activations (attention scores, context)
  kElementwise,  // bias add, residual add, scale, mask, activation functions, their backward
  kNorm,         // layernorm / rmsnorm (row reductions), forward or backward
  kSoftmax,      // softmax over rows, forward or backward
  kDropout,      // dropout (writes a 1-byte mask) or its backward
  kReduction,    // column reductions: bias gradients, gradient accumulation sums
  kEmbedding,    // gather from a table, or its scatter-add backward
  kLoss,         // cross-entropy over the vocabulary, or its backward
  kCollective,   // all-reduce / all-gather / reduce-scatter / all-to-all (network, not cores)
  kView,         // split / concat / select: no data movement
  kOptimizer,    // the optimizer step over a layer's parameters
};

// Which cores run the op (DESIGN §5): derived from the op's work, never stored separately.
enum class CoreClass { kTensor, kVector, kFused, kNone };

// A model dimension an op's work runs along: the neutral structural facts a parallelism strategy
// reads to decide how to split the op (DESIGN §3). The graph builder states them; the framework
// never splits anything by them itself. Which strategy splits which axis is the plugins' business.
enum class Axis : std::uint8_t {
  kNone,
  kTokens,     // the micro-batch's token positions (b·s; the queries in attention)
  kSequences,  // one per sequence (b): the BERT pooler's first tokens
  kKeys,       // the key/value positions attention reads for each query
  kHidden,     // the model width (and an embedding's width)
  kHeads,      // attention heads: q/k/v/context features, score planes
  kHeadDim,    // the features within one head (the scores' reduction)
  kFfn,        // the feed-forward width
  kVocab,      // the vocabulary: logits, the word-embedding table's rows
  kExperts,    // one per MoE expert: router logits
};
inline constexpr int kAxisCount = 10;

// What an op's dimensions are. A GEMM names each of its four (out[batch][m][n] = Σ_k …); every op
// says which axes its work and main output span (`spans`, a set). Backward ops inherit them,
// permuted as their shapes are.
struct OpAxes {
  Axis batch = Axis::kNone;
  Axis m = Axis::kNone;
  Axis n = Axis::kNone;
  Axis k = Axis::kNone;
  Axis row = Axis::kNone;   // what a row reduction's rows run along (VectorWork::row_elements)
  std::uint16_t spans = 0;  // bit (1 << Axis)

  bool Spans(Axis a) const { return (spans >> static_cast<int>(a)) & 1U; }
  OpAxes& Add(Axis a) {  // kNone adds nothing
    if (a == Axis::kNone) return *this;
    spans = static_cast<std::uint16_t>(spans | (1U << static_cast<int>(a)));
    return *this;
  }
  static OpAxes Of(std::initializer_list<Axis> axes) {
    OpAxes out;
    for (Axis a : axes) out.Add(a);
    return out;
  }
  bool operator==(const OpAxes&) const = default;
};

std::string_view ToString(OpKind kind);
std::string_view ToString(CoreClass core);
std::string_view ToString(Axis axis);
std::optional<OpKind> ParseOpKind(std::string_view text);
std::optional<Axis> ParseAxis(std::string_view text);
// All valid names, for "expected one of ..." messages.
std::vector<std::string> OpKindNames();
std::vector<std::string> AxisNames();

struct GemmShape {
  std::int64_t batch = 1;
  std::int64_t m = 0;
  std::int64_t n = 0;
  std::int64_t k = 0;
  std::int64_t Flops() const { return 2 * batch * m * n * k; }
  std::int64_t Macs() const { return batch * m * n * k; }
  bool operator==(const GemmShape&) const = default;
};

// One vector-core work item: `function` applied to `elements` elements. Row reductions (softmax,
// norms, cross-entropy) also give the row length. Estimators cost functions by name (e.g. "gelu",
// "softmax_backward"); the names the built-in graphs use are listed in workloads/README.md.
struct VectorWork {
  std::string function;
  std::int64_t elements = 0;
  std::int64_t row_elements = 1;
  bool operator==(const VectorWork&) const = default;
};

// A tensor of a layer: activations, gradients, masks. Weights are not tensors (see
// Operator::weight_bytes). A tensor is written by at most one op; tensors no op writes are the
// layer's inputs (or saved forward tensors read by backward ops).
struct Tensor {
  std::string name;
  std::int64_t elements = 0;
  std::int64_t dtype_bytes = 2;
  // False for tensors no gradient flows into: token ids, dropout masks, saved probabilities.
  bool requires_grad = true;
  std::int64_t Bytes() const { return elements * dtype_bytes; }
  bool operator==(const Tensor&) const = default;
};

// A multi-kernel op's traffic beyond its own inputs and outputs: its kernels write `writes` and
// read `reads` whole temporaries of its first vector work's elements, `word_bytes` each, and it
// launches `kernels` kernels beyond its first. Megatron-LM's FP32 cross-entropy casts the logits,
// then takes their maximum, subtracts it, exponentiates, sums and divides, a pass over the FP32
// logits each (graph/loss_kernel.hpp). Counted in elements, so a strategy's slice scales it.
// `held_bytes`: bytes per element its kernels hold at once beyond what the layer keeps for its
// backward — the memory's transient (UniqueLayer::transient_bytes), e.g. a loss backward's FP32
// temporaries.
struct KernelPasses {
  std::int64_t reads = 0;
  std::int64_t writes = 0;
  std::int64_t kernels = 0;
  std::int64_t word_bytes = 4;
  std::int64_t held_bytes = 0;
  bool operator==(const KernelPasses&) const = default;
};

struct Operator {
  std::string name;
  OpKind kind = OpKind::kElementwise;
  std::optional<GemmShape> gemm;   // the tensor-core part
  std::vector<VectorWork> vector;  // the vector-core part (for a fused op: the absorbed epilogue)
  std::vector<int> inputs;         // tensor indices read (activations, gradients, saved tensors)
  std::vector<int> outputs;        // tensor indices written
  // Tensors (inputs, outputs or masks) this op keeps for the backward pass. Forward ops only; a
  // backward graph lists the saved forward tensors it reads as its own (producer-less) inputs.
  std::vector<int> saved;
  std::int64_t weight_bytes = 0;  // parameters read (and, for an optimizer step, written)
  OpAxes axes;               // what its dimensions are (for parallelism strategies)
  std::int64_t expert = -1;  // the MoE expert whose branch this op belongs to (-1: none)
  // Part of the attention core (scores, scale, mask, softmax, its dropout, context): what
  // selective recomputation (Korthikanti et al. 2022) re-runs in backward.
  bool attention_core = false;
  // A GEMM Transformer Engine runs in FP8 (E4M3/E5M2 operands, 16-bit output): the linear layers
  // of the transformer blocks under training.precision fp8 (graph/precision.hpp).
  bool fp8 = false;
  // An FP8 GEMM whose scales are found when it casts (training.fp8_recipe tensorwise: torchao's
  // Float8Linear, TE's current scaling), and the bytes of the passes over memory that its
  // operands' scaling costs (graph/precision.hpp says which): amax reads, casts, transposed FP8
  // copies.
  bool fp8_current_scaling = false;
  std::int64_t fp8_scaling_bytes = 0;
  // Part of a fused attention kernel (graph/attention_kernel.hpp, training.attention fused): its
  // GEMMs run at the kernel's efficiency and its lane work launches no kernel of its own.
  bool attention_kernel = false;
  KernelPasses passes;  // what its kernels move beyond its inputs and outputs (none: one kernel)
  // A collective op (kind kCollective) runs on the links, not on cores: `collective` is what it
  // does in this pass (none: an identity such as Megatron's f), `collective_backward` what its
  // backward does (none: identity),
  // over `collective_group` devices `collective_stride` ranks apart (1: consecutive ranks, as the
  // innermost strategy's are) with `collective_bytes` per device.
  std::optional<CollectiveKind> collective;
  std::optional<CollectiveKind> collective_backward;
  std::int64_t collective_bytes = 0;
  std::int64_t collective_group = 1;
  std::int64_t collective_stride = 1;
  // A tensor-parallel all-gather that feeds a weight GEMM, or reduce-scatter that a weight GEMM
  // feeds, run in chunks beside that GEMM (training.tensor_parallel_overlap, graph/
  // tensor_parallel_overlap.hpp): the share of its time that overlaps the GEMM (the
  // architecture's collective_overlap where that is larger); ≤ 0, or on an all-reduce or
  // all-to-all: not chunked (the architecture's collective_overlap, as for any collective).
  double gemm_overlap = -1;

  CoreClass Core() const;
  std::int64_t GemmFlops() const { return gemm ? gemm->Flops() : 0; }
  std::int64_t VectorElements() const;
  bool operator==(const Operator&) const = default;
};

}  // namespace phaze
