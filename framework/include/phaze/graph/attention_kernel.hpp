// How attention runs (training.attention): `unfused` — the graphs as built, every tensor of the
// attention core (scores, scaled, masked, probabilities, dropout and its mask: a·s² per sequence)
// written to and read from memory and kept for backward, as Megatron-LM's 2021 recipes and the
// paper run it — or `flash`: FlashAttention (Dao et al. 2022; Megatron-LM --use-flash-attn, TE's
// fused attention, PyTorch SDPA), as today's recipes run it:
// * the core's own tensors (those an attention-core op writes and only attention-core ops read)
//   stay on chip: zero bytes, in forward, in the copies backward reads and in their gradients —
//   so no s² traffic, none kept (Korthikanti's 5·a·s²·b bytes per block go);
// * the core's ops keep their arithmetic (the GEMMs' FLOPs, softmax and dropout on the lanes);
// * backward re-runs the forward ops of the core whose outputs stay on chip (QKᵀ, scale, mask,
//   softmax, dropout: FlashAttention recomputes the probabilities), as ops of the backward graph;
// `fused` is `flash` priced as the measured kernels run (share/validation/kernels/attention.py):
// * the ops that read or write an on-chip tensor are the fused kernel's (Operator::
//   attention_kernel): their GEMMs run at the device's attention efficiency, their softmax is the
//   online one (`flash_softmax`), and under a causal mask they compute only the score tiles of
//   128 × 128 on or below the diagonal — n(n + 1)/2 of n², n = ⌈keys / 128⌉ — so each GEMM's key
//   dimension and each lane op's elements are cut to (n + 1)/(2n) of the full s²;
// * the backward's gradients that stay in the kernel (dP, dS) are on chip too.
// Not yet the recipes' default: on H100 runs `fused` predicts 12% (Megatron-LM) to 28%
// (TorchTitan) too fast where `flash` meets them (share/validation/kernels/README.md): the
// cost `flash`'s full s² stands in for lies outside the layer, which matches silicon (H200:
// a Llama 3 8B block within 7% eager, 0.4% compiled) only when fused.
// `megatron` is `unfused` as Megatron-LM's FusedScaleMaskSoftmax runs it (megatron/model/
// fused_softmax.py, 2021–2023; megatron/core/fusions/fused_softmax.py since): its one fused kernel
// (scale, mask and softmax in a pass, 16-bit in and out: `unfused`'s pricing) runs only where the
// kernel's shape rules hold (MegatronFusedSoftmaxRuns); elsewhere PyTorch's path runs in FP32
// (softmax_in_fp32, on whenever query-key layer scaling is): input.float(), × scale,
// masked_fill_, softmax, .half() — five kernels, 18 bytes read and 18 written per score, the
// probabilities kept in FP32 (4 bytes, not 2) — and its backward through autograd is five more
// (22 bytes read, 18 written, two FP32 temporaries held at once). With 16 heads at t = 8 (two per
// device) and micro-batch 1, b·a/t = 2 is not a multiple of 4: vTrain's t = 8 micro-batch 1 runs.
// Applied after the strategy and fusion; memory is recomputed (FinalizeLayerMemory).
#pragma once

#include <cstdint>
#include <string_view>

#include "phaze/graph/layer_graph.hpp"

namespace phaze {

enum class AttentionKernel { kUnfused, kFlash, kFused, kMegatron };
std::string_view ToString(AttentionKernel kernel);  // "unfused", "flash", "fused", "megatron"

// Whether Megatron-LM's fused scale-mask-softmax kernel runs on scores of `attn_batches` = b·a/t
// planes of sq queries × sk keys (FusedScaleMaskSoftmax.is_kernel_available, 16-bit input):
// 16 < sk ≤ 4,096, sq and sk multiples of 4, attn_batches a multiple of 4, and attn_batches
// (causal) or sq (otherwise) a multiple of the kernel's batches per block — 128 threads of warps
// of min(32, 2^⌈log2 sk⌉) lanes, two batches per warp when 2^⌈log2 sk⌉ ≤ 128, else one.
bool MegatronFusedSoftmaxRuns(std::int64_t attn_batches, std::int64_t sq, std::int64_t sk,
                              bool causal);
// The passes of PyTorch's FP32 softmax path beyond the graph's softmax op's own input (16-bit
// scores) and output (the FP32 probabilities it keeps), in 2-byte words per score: forward or
// backward (header comment).
KernelPasses MegatronSoftmaxFallbackPasses(bool backward);

// FlashAttention in one form or the other (`flash`, `fused`): the scores stay on chip.
inline bool IsFlashAttention(AttentionKernel kernel) {
  return kernel == AttentionKernel::kFlash || kernel == AttentionKernel::kFused;
}

LayerGraph WithAttentionKernel(const LayerGraph& graph, AttentionKernel kernel);

}  // namespace phaze
