// The number format a model trains in (training.precision): bf16 or fp16 — 16-bit weights,
// activations and GEMMs, the graphs as built — or fp8, Transformer Engine's recipe as Megatron-LM
// runs it with --fp8-format hybrid:
// * the linear layers of the transformer blocks (OpKind::kGemm ops of LayerKind::kBlock layers,
//   forward and both backward GEMMs) run in FP8 (Operator::fp8) at the device's FP8 tensor rate
//   (ArchConfig::fp8_tensor_ratio × its 16-bit peak); attention's batched GEMMs, the embedding,
//   the LM head, norms, softmax and every element-wise op stay 16-bit;
// * an activation that reaches FP8 GEMMs only — directly or through tensor-parallel all-gathers
//   and identities (Megatron's f, the sequence-parallel re-gather) — is written and kept in FP8
//   (1 byte per element: TE fuses the cast into the norm before QKV and FC1 and into the
//   activation before FC2; the saved copy the backward pass reads, with sequence parallelism the
//   local shard, is FP8 too); any other GEMM input (the gradients in backward, an input another
//   op also reads) is cast by the GEMM's own cast kernel, costed by the estimator
//   (OpWork::fp8_cast_elements; only the GEMM's operands, Fp8GemmOperands, not a fused
//   epilogue's residual or saved input);
// * the tensor-parallel all-gathers feeding FP8 GEMMs move 1 byte per value (collective_bytes
//   divided by the 16-bit value's bytes), as TE and torchao cast before gathering: the forward
//   gather of such an activation (a shard another op also reads in 16 bits, as a post-LN block's
//   residual, is cast by a kernel of its own, not charged), its re-gather in backward, and the
//   backward gather of an output gradient that reaches FP8 GEMMs only (that gradient stays
//   16-bit in the graph: the GEMMs' cast kernel stands in for TE's cast of the shard and
//   transpose of the gathered FP8 tensor); reduce-scatters and all-reduces sum 16-bit partial
//   results and stay 16-bit;
// * TE keeps an FP8 copy of each such weight and its transpose: UniqueLayer::cached_weight_bytes
//   (2 bytes per parameter) on top of the 16-bit weights, the fp32 gradients and optimizer state.
// * the backward's FP8 GEMMs accumulate exactly (TE's split accumulator for dgrad and wgrad,
//   torchao's use_fast_accum=False for its gradient GEMMs): the device model prices them at
//   `fp8_exact_accumulation` of the forward's fast-accumulation rate.
// How the FP8 scales are found (training.fp8_recipe, Fp8Recipe):
// * delayed (Transformer Engine's DelayedScaling, Megatron-LM's --fp8-recipe delayed, its
//   default): from an amax history, so a cast needs no pass of its own over the tensor; all the
//   above;
// * tensorwise (per-tensor current scaling: torchao's Float8Linear as TorchTitan's float8 runs
//   used it, TE's Float8CurrentScaling): each cast first reads the tensor for its amax, nothing
//   is fused into a producer, the weight is cast every call and the backward GEMMs copy their
//   FP8 operands transposed. Every FP8 GEMM is marked Operator::fp8_current_scaling and carries
//   the bytes of those passes (Operator::fp8_scaling_bytes, precision.cpp CurrentScalingBytes):
//   per linear layer about 7 bytes an element of its input, its weight and its output gradient.
//   The same tensors are kept and gathered in FP8 as under delayed scaling (torchao saves the
//   cast input and casts before it all-gathers). Measured on an H200 (a Llama 3 8B linear,
//   compiled, share/validation/kernels/README.md): 1.0 ms of a TP-8 layer's 2.1 ms.
// Applied to a sliced, completed layer graph (after the strategy and fusion), which it returns
// with every unique layer's memory recomputed (FinalizeLayerMemory).
#pragma once

#include <string_view>
#include <vector>

#include "phaze/graph/layer_graph.hpp"

namespace phaze {

enum class Precision { kBf16, kFp16, kFp8 };
std::string_view ToString(Precision precision);  // "bf16", "fp16", "fp8"

enum class Fp8Recipe { kDelayed, kTensorwise };
std::string_view ToString(Fp8Recipe recipe);  // "delayed", "tensorwise"

// Where the FP8 GEMMs' weights live when they are gathered in FP8 under a sharding
// (training.fp8_param_gather, training.fp8_param_storage):
// * fp8: in FP8 only (Megatron-Core's TransformerConfig.fp8_param, which Megatron-LM's
//   --fp8-param-gather sets: TE's fp8_model_init makes them Float8Tensors): one byte a parameter
//   and the transpose TE keeps for backward, one byte, where otherwise the 16-bit weight (2) sits
//   beside TE's cached FP8 copy and transpose (UniqueLayer::cached_weight_bytes, 2). The layer
//   table then drops the cached copy: the weight's 16-bit bytes stand for the FP8 weight and its
//   transpose. The FP32 main weights, the gradients and the optimizer state do not change.
// * 16bit: in 16 bits as without the gathers (torchao's FSDP float8 all-gather, TorchTitan's
//   enable_fsdp_float8_all_gather, casts the 16-bit shard before gathering it).
enum class Fp8ParamStorage { kFp8, k16Bit };
std::string_view ToString(Fp8ParamStorage storage);  // "fp8", "16bit"

LayerGraph WithPrecision(const LayerGraph& graph, Precision precision,
                         Fp8Recipe recipe = Fp8Recipe::kDelayed);

// The tensors an FP8 GEMM casts: its operand, or a weight gradient's two (backward.cpp's
// `.grad_weight`: the saved input and the output gradient); a fused epilogue's inputs after them
// (a residual, a saved activation) stay 16-bit and are not cast.
std::vector<int> Fp8GemmOperands(const Operator& op);

}  // namespace phaze
