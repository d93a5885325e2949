// Operator fusion (the paper's §4, after WHAM/TVM): a GEMM absorbs the element-wise ops that follow
// it into its epilogue, so the intermediate never goes to memory and the pair runs as one fused op
// (tensor core + the vector work it cannot hide). Rule, applied to a fixed point:
//   an op P with a GEMM absorbs op S when S is the only op reading any of P's outputs, none of P's
//   outputs is a layer output, and S is element-wise (bias add, residual add, scale, mask,
//   activation, dropout, their backward forms, gradient sums) or a view of P's outputs only.
// Softmax, norms and reductions are never absorbed (they need whole rows or columns). The fused op
// keeps P's name, GEMM and role; its vector work is P's followed by S's; it reads P's and S's
// other inputs, writes S's outputs plus any of P's outputs that are saved for backward, and saves
// what both saved. FLOPs, vector work and saved tensors are unchanged by fusion (tests check).
#pragma once

#include "phaze/graph/operator_graph.hpp"

namespace phaze {

OperatorGraph FuseOperators(const OperatorGraph& graph);

}  // namespace phaze
