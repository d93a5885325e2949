// What strategy plugins slice with (DESIGN §3). The framework describes what an op is — its shapes,
// the tensors it reads and writes, and its axes (Operator::axes: which dimension is tokens, keys,
// hidden, heads, FFN, vocabulary, experts; Operator::expert: which MoE branch) — and a strategy
// decides how to split it. These helpers are the mechanics every strategy needs: dividing an op
// along one of its axes, and inserting a collective with its backward conjugate.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "phaze/graph/layer_graph.hpp"
#include "phaze/graph/operator.hpp"

namespace phaze {

// A collective op reading tensor `input` and writing `output`: `forward` in this pass (none: an
// identity), `backward` in the backward pass (DeriveBackward emits it as the conjugate), over
// `group` devices `stride` ranks apart, `bytes` per device (the full tensor for all-reduce, the
// gathered tensor for all-gather, the input tensor for reduce-scatter and all-to-all). `axes`
// are those of the tensor it moves, so a strategy applied on top can split it further.
Operator MakeCollective(const std::string& name, std::optional<CollectiveKind> forward,
                        std::optional<CollectiveKind> backward, std::int64_t bytes,
                        std::int64_t group, std::int64_t stride, int input, int output,
                        OpAxes axes = {});

// Divides an op's work `ways` ways along `axis`: every GEMM dimension that is that axis, the
// elements of its vector work when the op spans the axis, and their row length when its rows run
// along it (OpAxes::row); a collective spanning the axis moves 1/ways of its bytes. Weights are
// untouched (whether they are split is the strategy's call). Exact: throws InvalidArgumentError
// naming the op when a divided count is not a multiple of `ways`.
void SplitAlong(Operator& op, Axis axis, std::int64_t ways);
// The converse: multiplies the same counts by `factor` (an expert that receives the tokens of
// `factor` times as many devices).
void GrowAlong(Operator& op, Axis axis, std::int64_t factor);

// Resizes a dimension of the whole model from `from` to `to` (a vocabulary padded to a multiple,
// as Megatron-LM pads it): in every unique layer's forward graph, each GEMM dimension on `axis`,
// the work of each op spanning `axis` (not an embedding gather's, whose lookups do not depend on
// the table's rows) and its row length when its rows run along it, the weights of those ops and
// the tensors they write, and the tied parameters of a layer holding them. A count is resized only
// when it is a multiple of `from` (so a scalar such as the loss stays one value). Backward and
// memory are re-derived afterwards (SliceLayerGraph does).
void ResizeAxis(LayerGraph& graph, Axis axis, std::int64_t from, std::int64_t to);

}  // namespace phaze
