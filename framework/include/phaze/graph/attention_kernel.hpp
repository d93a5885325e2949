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
// Applied after the strategy and fusion; memory is recomputed (FinalizeLayerMemory).
#pragma once

#include <string_view>

#include "phaze/graph/layer_graph.hpp"

namespace phaze {

enum class AttentionKernel { kUnfused, kFlash, kFused };
std::string_view ToString(AttentionKernel kernel);  // "unfused", "flash", "fused"

LayerGraph WithAttentionKernel(const LayerGraph& graph, AttentionKernel kernel);

}  // namespace phaze
