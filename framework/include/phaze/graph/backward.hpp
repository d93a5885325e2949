// Backward-graph derivation: the ops autograd would run for a layer's forward operator graph, with
// their true shapes and the dependencies the chain rule imposes (reverse of the forward data flow).
//
// Rules, per forward op whose outputs receive a gradient (ops off every path to the layer's
// outputs — the BERT pooler — get none):
// * GEMM out[m,n] = x[m,k]·W[k,n] (batch b): input gradient dx = dout·Wᵀ as GEMM {b, m, k, n}
//   (only if x needs a gradient) and weight gradient dW = xᵀ·dout as GEMM {1, k, n, b·m}. The
//   input-gradient op of a column-parallel layer is row-parallel and vice versa.
// * Batched GEMM C = A·B: dA = dC·Bᵀ {b, m, k, n} and dB = Aᵀ·dC {b, k, n, m}.
// * "add" passes the gradient through to every input; "bias_add" passes it through and adds a
//   bias-gradient reduction op; a view becomes the inverse view (split ↔ concat).
// * Every other vector op becomes one op of the same kind whose work items are the forward ones
//   with "_backward" appended, reading the output gradients and the tensors the forward op saved.
//   The loss op seeds the pass (it has no incoming gradient).
// * A fused forward op (GEMM + epilogue) first back-propagates through its epilogue.
// * A collective becomes its conjugate (`collective_backward`, e.g. Megatron's g: all-reduce
//   forward, identity backward; f: identity forward, all-reduce backward); an identity passes the
//   gradient through.
// * A tensor read by several ops gets the sum of their gradients: one "add" op "<t>.grad_sum".
// Tensors: "grad:<t>" (or "grad:<t>@<op>" for one contribution), "saved:<t>" for saved forward
// tensors (graph inputs of the backward graph). The graph's outputs are the gradients of the
// forward graph's inputs (sent to the previous layer); its inputs are the gradients of the forward
// outputs.
#pragma once

#include <string>
#include <string_view>

#include "phaze/graph/operator_graph.hpp"

namespace phaze {

// Throws InvalidArgumentError for an op kind that has no backward (an optimizer step).
OperatorGraph DeriveBackward(const OperatorGraph& forward);

// The name of the one op DeriveBackward writes for a forward collective, view or vector op:
// "<op>.backward" (a collective's conjugate, a view's inverse, a vector op's backward).
std::string BackwardOpName(std::string_view forward_op);

}  // namespace phaze
