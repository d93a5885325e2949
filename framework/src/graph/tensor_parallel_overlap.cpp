#include "phaze/graph/tensor_parallel_overlap.hpp"

#include <vector>

namespace phaze {

namespace {

// A tensor-parallel all-gather or reduce-scatter: sequence parallelism's, not context
// parallelism's gather of the keys and values.
bool Chunkable(const Operator& op) {
  return op.kind == OpKind::kCollective && op.collective && op.collective_group > 1 &&
         (*op.collective == CollectiveKind::kAllGather ||
          *op.collective == CollectiveKind::kReduceScatter) &&
         !op.axes.Spans(Axis::kKeys);
}

// Whether a dense weight GEMM is next to op `start` along `next` (successors or predecessors),
// through views, identity collectives (sequence parallelism's re-gather, an identity in forward)
// and other chunkable collectives (in backward the re-gathered input's all-gather and the input
// gradient's reduce-scatter follow each other below the input-gradient GEMM). Not an expert's
// GEMM (Operator::expert ≥ 0): Megatron-LM's MoE token dispatcher gathers and scatters split
// experts' tokens itself, outside Transformer Engine's GEMM-overlapped communication
// (megatron/core/extensions/transformer_engine.py, TEGroupedLinear's explicit_expert_comm).
bool NextToGemm(const OperatorGraph& g, int start, const std::vector<std::vector<int>>& next) {
  std::vector<int> stack = next[static_cast<std::size_t>(start)];
  std::vector<char> seen(g.Ops().size(), 0);
  while (!stack.empty()) {
    const int i = stack.back();
    stack.pop_back();
    if (seen[static_cast<std::size_t>(i)]) continue;
    seen[static_cast<std::size_t>(i)] = 1;
    const Operator& op = g.GetOp(i);
    if (op.kind == OpKind::kGemm) {
      if (op.expert < 0) return true;
      continue;
    }
    if (op.kind == OpKind::kView || (op.kind == OpKind::kCollective && !op.collective) ||
        Chunkable(op)) {
      const auto& more = next[static_cast<std::size_t>(i)];
      stack.insert(stack.end(), more.begin(), more.end());
    }
  }
  return false;
}

OperatorGraph Marked(const OperatorGraph& g, double share) {
  const auto successors = g.Successors();
  const auto predecessors = g.Predecessors();
  return Rewritten(g, [](int, Tensor&) {}, [&](int i, Operator& op) {
    if (Chunkable(op) && (NextToGemm(g, i, successors) || NextToGemm(g, i, predecessors))) {
      op.gemm_overlap = share;
    }
  });
}

}  // namespace

LayerGraph WithTensorParallelOverlap(const LayerGraph& graph, double share) {
  if (share <= 0) return graph;
  LayerGraph out = graph;
  for (UniqueLayer& u : out.unique_layers) {
    if (u.kind != LayerKind::kBlock) continue;
    u.forward = Marked(u.forward, share);
    u.backward = Marked(u.backward, share);
  }
  return out;
}

}  // namespace phaze
