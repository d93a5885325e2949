// The layer graph of a workload for one micro-batch size and sequence length: a DAG of layer
// instances (embedding, transformer blocks, head/loss), each pointing at a unique layer that holds
// the forward and backward operator graphs, the optimizer step and the memory figures. Identical
// layers (every block of a model) share one unique layer, so estimates and ILPs run once for it.
//
// Memory figures of a unique layer are per device holding it, in bytes:
//   weight_bytes          = (parameters + tied_parameters) · dtype_bytes
//   gradient_bytes        = (parameters + tied_parameters) · optimizer gradient bytes per parameter
//                           (the gradient buffer's width: 4 for fp32, 2 where the run reduces
//                           16-bit gradients, training.gradient_reduction_precision)
//   step_working_bytes    = what the optimizer step holds beyond that, the activations freed:
//                           mixed-precision Adam over a 16-bit gradient buffer copies every
//                           gradient to fp32 first (Megatron-LM's Float16OptimizerWithFloat16Params
//                           and DeepSpeed's FP16_Optimizer: main_param.grad = grad.float()), 4
//                           bytes per parameter; 0 with fp32 gradients (the copy is the buffer
//                           itself)
//   optimizer_state_bytes = (parameters + tied_parameters) · optimizer state bytes per parameter
//   activation_bytes      = bytes of the distinct forward tensors saved for backward (one
//                           micro-batch), without recomputation
//   SavedBytes(mode)      = what the layer keeps per micro-batch under a recompute mode (DESIGN
//                           §10, Korthikanti et al. 2022): none = activation_bytes; selective =
//                           activation_bytes minus the tensors the attention core produces (its
//                           scores, softmax, dropout and context: Operator::attention_core);
//                           full = the layer's hidden-state input (transformer blocks only, as
//                           Megatron-LM checkpoints them; other layers keep their activations)
//   WorkingBytes(mode)    = activation_bytes − SavedBytes(mode): what recomputation
//                           re-materialises for the layer's backward (the transient working set);
//                           per-op on a block: the saved tensors its re-run ops produce
//                           (per_op_rerun_bytes), which its kept set, holding 16-bit GEMM results
//                           rather than the tensors backward reads, does not bound
//   transient_bytes       = the most a backward op's kernels hold at once beyond that
//                           (Operator::passes.held_bytes per element of its first vector work:
//                           the loss's FP32 temporaries, graph/loss_kernel.hpp); the stage's
//                           working set is WorkingBytes(mode) + transient_bytes
// A tied weight (the LM head reusing the word-embedding table) is counted once in the model's
// parameters (on the layer that owns it) and held again by the layer that reuses it, as Megatron-LM
// keeps a copy on the last pipeline stage.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "phaze/graph/operator_graph.hpp"

namespace phaze {

// Activation recomputation (DESIGN §10): none; selective (Korthikanti et al.: the attention core
// re-runs in backward); full (Megatron-LM: each block keeps its input and re-runs whole); per-op
// (TorchTitan's selective_ac_option "op": each block re-runs all but the ops PerOpKeeps names).
// kPerOp is last so that the values saved before it existed keep their meaning; lightest first is
// none, selective, per-op, full (kRecomputeModes).
enum class RecomputeMode { kNone, kSelective, kFull, kPerOp };
inline constexpr RecomputeMode kRecomputeModes[] = {RecomputeMode::kNone, RecomputeMode::kSelective,
                                                    RecomputeMode::kPerOp, RecomputeMode::kFull};
std::string_view ToString(RecomputeMode mode);
// none|selective|per-op|full
std::optional<RecomputeMode> ParseRecomputeMode(std::string_view text);

// The optimizer: Adam with mixed precision (Megatron-LM: fp32 master weights, moments and
// gradients), the same with its two moments in bf16 (Megatron-LM's precision-aware optimizer,
// --use-precision-aware-optimizer --exp-avg-dtype bf16 --exp-avg-sq-dtype bf16: Transformer
// Engine's FusedAdam keeps exp_avg and exp_avg_sq in 16 bits and the fp32 master weights as
// before; DeepSeek-V3's recipe), or plain SGD on 16-bit weights and gradients.
enum class OptimizerKind { kAdamMixed, kAdamBf16Moments, kSgd };
std::string_view ToString(OptimizerKind kind);  // adam-mixed | adam-bf16-moments | sgd
inline constexpr OptimizerKind kOptimizerKinds[] = {
    OptimizerKind::kAdamMixed, OptimizerKind::kAdamBf16Moments, OptimizerKind::kSgd};
inline bool IsAdam(OptimizerKind kind) { return kind != OptimizerKind::kSgd; }

// The optimizer's memory and step cost per parameter.
struct OptimizerSpec {
  OptimizerKind kind = OptimizerKind::kAdamMixed;
  // fp32 master weight + two fp32 moments (adam-mixed), or two bf16 ones (adam-bf16-moments: 8)
  std::int64_t state_bytes_per_parameter = 12;
  std::int64_t gradient_bytes_per_parameter = 4;   // the gradient buffer: fp32 by default
  // What the step copies each gradient to when the buffer is narrower (UniqueLayer's header).
  static constexpr std::int64_t kMasterGradientBytes = 4;
  std::string step_function = "adam";              // its vector function (the estimators' word)

  static OptimizerSpec For(OptimizerKind kind);
};

// What a unique layer is: the transformer's embedding, a block, the head, or a layer of an
// imported graph (custom). Megatron-LM's stage split and full recompute treat blocks alone.
enum class LayerKind { kEmbedding, kBlock, kHead, kCustom };
std::string_view ToString(LayerKind kind);  // embedding | block | head | custom

struct UniqueLayer {
  std::string name;       // "embedding", "block", "head", or a user's name
  LayerKind kind = LayerKind::kCustom;
  OperatorGraph forward;  // also the recompute pass
  OperatorGraph backward;
  Operator optimizer_step;           // one vector op over every parameter the layer holds
  std::int64_t parameters = 0;       // owned
  std::int64_t tied_parameters = 0;  // owned by another layer, also held here
  std::int64_t weight_bytes = 0;
  std::int64_t gradient_bytes = 0;
  std::int64_t optimizer_state_bytes = 0;
  std::int64_t activation_bytes = 0;
  std::int64_t selective_activation_bytes = 0;  // SavedBytes(kSelective)
  std::int64_t checkpoint_bytes = 0;            // SavedBytes(kFull)
  std::int64_t per_op_activation_bytes = 0;     // SavedBytes(kPerOp)
  // What per-op's re-run rebuilds of what the backward pass reads: the saved tensors of a block
  // that ops PerOpKeeps does not name produce (WorkingBytes(kPerOp)).
  std::int64_t per_op_rerun_bytes = 0;
  // Copies of the weights kept beside them: Transformer Engine's FP8 weight and its transpose,
  // 2 bytes per parameter of the layer's FP8 GEMMs (graph/precision.hpp); 0 otherwise.
  std::int64_t cached_weight_bytes = 0;
  std::int64_t transient_bytes = 0;     // (header comment)
  std::int64_t step_working_bytes = 0;  // (header comment)
  bool tensor_parallel = false;  // split by the tensor-parallel strategy

  std::int64_t SavedBytes(RecomputeMode mode) const;
  std::int64_t WorkingBytes(RecomputeMode mode) const {
    if (mode == RecomputeMode::kPerOp && kind == LayerKind::kBlock) return per_op_rerun_bytes;
    return std::max<std::int64_t>(0, activation_bytes - SavedBytes(mode));
  }
  // Whether the mode re-runs anything of this layer in backward: per-op re-runs a block's ops
  // but those PerOpKeeps names even where what it keeps is no smaller than what the block would
  // save without it (TorchTitan checkpoints every block; in FP8 the kept 16-bit GEMM outputs can
  // outweigh the FP8 inputs the GEMMs would save); the other modes re-run what frees memory.
  bool Recomputes(RecomputeMode mode) const {
    return (mode == RecomputeMode::kPerOp && kind == LayerKind::kBlock) || WorkingBytes(mode) > 0;
  }
};

struct LayerInstance {
  std::string name;  // "embedding", "block.0", …, "head"
  int unique_id = 0;
};

struct LayerGraphEdge {
  int from = 0;  // instance indices, from < to
  int to = 0;
  std::int64_t bytes = 0;  // per micro-batch, each direction (activations forward, gradients back)
  // > 1: Megatron's scatter/gather of pipeline sends — each of this many tensor-parallel devices
  // sends `bytes` (its 1/t part), and the receiving stage all-gathers the whole tensor.
  std::int64_t gather_group = 1;
};

struct LayerGraph {
  std::string model;
  std::string family;
  std::int64_t micro_batch = 1;
  std::int64_t sequence_length = 0;
  std::int64_t dtype_bytes = 2;
  std::int64_t tensor_parallel = 1;  // the width this graph is a slice for
  std::string strategy;              // the strategy that sliced it ("" = unsliced)
  // How many of the width's devices hold every parameter whole: 1 when the strategy splits the
  // weights (tensor parallelism), the width when it only splits the work (context parallelism).
  // Those devices reduce their gradients together with data parallelism's (placement DP).
  std::int64_t weight_replicas = 1;
  // Over how many data-parallel replicas the experts spread: with whole experts (the moe
  // strategy's expert_parallel e = expert_fold · width) each device keeps whole experts; with
  // experts split over the width (expert_tensor_parallel: width) e = expert_fold. Their weights
  // are reduced over the replicas that hold the same ones (LayerTable::expert_fold).
  std::int64_t expert_fold = 1;
  std::int64_t heads = 0;            // attention heads and key/value heads of the full model
  std::int64_t kv_heads = 0;         // (0: unknown, e.g. an imported graph without them)
  // Vocabulary rows of the model as described, and (0: none) the rows a strategy padded it to
  // (Megatron-LM: a multiple of make_vocab_size_divisible_by · t); 0: unknown (an imported graph).
  std::int64_t vocab = 0;
  std::int64_t padded_vocab = 0;
  bool fused = true;
  OptimizerSpec optimizer;
  std::optional<std::int64_t> published_parameters;

  std::vector<UniqueLayer> unique_layers;
  std::vector<LayerInstance> layers;  // topological order
  std::vector<LayerGraphEdge> edges;

  // Σ over instances of their unique layer's owned parameters.
  std::int64_t Parameters() const;
  // Σ over instances of forward / backward GEMM FLOPs (one micro-batch).
  std::int64_t ForwardFlops() const;
  std::int64_t BackwardFlops() const;
  // How many instances use each unique layer.
  std::vector<int> InstanceCounts() const;
  // Whether a layer routes to experts (an op of an expert's branch: Operator::expert ≥ 0).
  bool HasExperts() const;
  // Empty when consistent, else what is wrong (unique ids in range, edges forward, …).
  std::string Validate() const;
};

// The ops a recompute mode re-runs in backward: the whole forward graph (full), the attention core
// (selective), a block's ops but those PerOpKeeps names (per-op), or nothing (none). The tensors
// the re-run ops read from ops that do not re-run become the graph's inputs.
OperatorGraph RecomputeGraph(const UniqueLayer& layer, RecomputeMode mode);

// The forward ops TorchTitan's per-op selective activation checkpointing keeps the outputs of
// (torchtitan parallelize_llama.py, 2024-12 and 2025-06: `_save_list` and `_custom_policy`):
//   - the linear layers (aten.mm) counted in forward order, every other one from the first (q, v,
//     gate and down of a Llama block: "saves output of all compute ops, except every second mm");
//     FP8 ones too: torchao's float8 linear calls aten.mm on its float8 tensors, and the policy's
//     dispatch mode sees that call before the tensors turn it into _scaled_mm (TorchTitan's
//     float8 runs read the same peak memory as their bf16 ones: 76.8 and 77.0 GiB, 61.8 and 62.0);
//   - the attention (SDPA flash/efficient): the attention core's ops, which therefore never re-run;
//   - reduce-scatters (tensor parallelism's, with sequence parallelism).
// Everything else (norms, rotary, activations, residual adds, all-gathers, the other linear
// layers) re-runs in backward — except the epilogue fusion gave a kept linear layer (rotary after
// q, the activation after gate), which the re-run skips with it: a small under-count. Returns one
// flag per op of `forward`.
std::vector<bool> PerOpKeeps(const OperatorGraph& forward);

// Sets the memory figures and the optimizer step of `layer` from its parameters, its forward
// graph's saved tensors and the optimizer (see the header comment).
void FinalizeLayerMemory(UniqueLayer& layer, std::int64_t dtype_bytes,
                         const OptimizerSpec& optimizer);

}  // namespace phaze
