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
//   softmax, dropout: FlashAttention recomputes the probabilities), as ops of the backward graph.
// Applied after the strategy and fusion; memory is recomputed (FinalizeLayerMemory).
#pragma once

#include <string_view>

#include "phaze/graph/layer_graph.hpp"

namespace phaze {

enum class AttentionKernel { kUnfused, kFlash };
std::string_view ToString(AttentionKernel kernel);  // "unfused", "flash"

LayerGraph WithAttentionKernel(const LayerGraph& graph, AttentionKernel kernel);

}  // namespace phaze
