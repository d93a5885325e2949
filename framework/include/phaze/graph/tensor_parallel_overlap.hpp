// Tensor-parallel communication run beside the GEMMs (training.tensor_parallel_overlap):
// Megatron-LM's --tp-comm-overlap (Transformer Engine's userbuffers, with sequence parallelism)
// and TorchTitan's async TP split a linear layer's all-gather of its input, or reduce-scatter of
// its output, into chunks that pipeline with the GEMM: while chunk k is multiplied, chunk k + 1
// travels. In a transformer block's graphs (LayerKind::kBlock, forward and backward), every
// tensor-parallel all-gather and reduce-scatter next to a weight GEMM (OpKind::kGemm) — through
// views, identity collectives and other such collectives, for in backward the input's re-gather
// and the input gradient's reduce-scatter follow each other below the input-gradient GEMM — is
// marked with Operator::gemm_overlap = `share`, which the layer schedule reads
// (schedule/layer_schedule.cpp):
// * `share` of the collective's time (or the architecture's collective_overlap where that is
//   larger: a chip whose collectives never contend with compute hides them whole) runs on the
//   link beside the GEMM: beside the GEMM above it when there is one (it starts with it), else
//   beside the GEMMs it feeds (they start once its exposed part is done; their successors wait
//   for the whole collective);
// * the rest holds the whole device, after the GEMM above and the link part or before the GEMMs
//   below, as an unoverlapped collective's exposed part does: the first or last chunk, which
//   cannot overlap, and the SMs and memory bandwidth the communication kernels take. A pair
//   lasts max(GEMM, link part) + exposed part.
// Transformer Engine runs the input gradient's reduce-scatter beside the weight-gradient GEMM;
// phaze's backward graph puts it after the input's re-gather below the input-gradient GEMM, so
// both run beside that GEMM, one after the other on the link (the weight-gradient GEMM, which
// waits for neither, may still run beside them).
// All-reduces (tensor parallelism without sequence parallelism), all-to-alls, context
// parallelism's gathers of keys and values, and the collectives outside the blocks (the
// vocabulary-parallel LM head and loss) keep the architecture's collective_overlap: Megatron-LM
// allows --tp-comm-overlap only with --sequence-parallel, and its userbuffers cover the blocks'
// linear layers. share 0 leaves the graph as it is.
#pragma once

#include <algorithm>

#include "phaze/graph/layer_graph.hpp"

namespace phaze {

LayerGraph WithTensorParallelOverlap(const LayerGraph& graph, double share);

// The share of a chunked collective's time that runs beside its GEMM: the recipe's `share`, or
// the architecture's `collective_overlap` where that is larger.
inline double ChunkedCollectiveShare(double share, double collective_overlap) {
  return std::max(share, collective_overlap);
}

}  // namespace phaze
