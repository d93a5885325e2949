// Tensor-parallel communication run beside the GEMMs (training.tensor_parallel_overlap):
// Megatron-LM's --tp-comm-overlap (Transformer Engine's userbuffers, with sequence parallelism)
// and TorchTitan's async TP split a linear layer's all-gather of its input, or reduce-scatter of
// its output, into chunks that pipeline with the GEMM: while chunk k is multiplied, chunk k + 1
// travels. In a transformer block's graphs (LayerKind::kBlock, forward and backward) every
// all-gather that feeds a weight GEMM (OpKind::kGemm, through views and identity collectives) and every reduce-scatter a
// weight GEMM feeds is marked with Operator::gemm_overlap = `share`, which the layer schedule
// (schedule/layer_schedule.hpp) reads:
// * `share` of the collective's time runs on the link beside the GEMM — an all-gather's with
//   the GEMMs it feeds (they start as soon as its exposed part is done, their successors wait for
//   the whole collective), a reduce-scatter's with the GEMMs that feed it (it starts with them);
// * the rest, 1 − share, holds the whole device before the GEMM (all-gather) or after it
//   (reduce-scatter), as an unoverlapped collective's exposed part does: the first or last chunk,
//   which cannot overlap, and the SMs and memory bandwidth the communication kernels take.
// All-reduces (tensor parallelism without sequence parallelism), all-to-alls and the collectives
// outside the blocks (the vocabulary-parallel LM head and loss) keep the architecture's
// collective_overlap: Megatron-LM allows --tp-comm-overlap only with --sequence-parallel, and
// its userbuffers cover the blocks' linear layers. share 0 leaves the graph as it is.
#pragma once

#include "phaze/graph/layer_graph.hpp"

namespace phaze {

LayerGraph WithTensorParallelOverlap(const LayerGraph& graph, double share);

}  // namespace phaze
