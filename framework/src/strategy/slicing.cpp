#include "phaze/strategy/slicing.hpp"

#include "phaze/core/error.hpp"

namespace phaze {

Operator MakeCollective(const std::string& name, std::optional<CollectiveKind> forward,
                        std::optional<CollectiveKind> backward, std::int64_t bytes,
                        std::int64_t group, std::int64_t stride, int input, int output,
                        OpAxes axes) {
  Operator op;
  op.name = name;
  op.kind = OpKind::kCollective;
  op.axes = axes;
  op.collective = forward;
  op.collective_backward = backward;
  op.collective_bytes = bytes;
  op.collective_group = group;
  op.collective_stride = stride;
  op.inputs = {input};
  op.outputs = {output};
  return op;
}

void SplitAlong(Operator& op, Axis axis, std::int64_t ways) {
  if (ways == 1 || axis == Axis::kNone) return;
  auto divide = [&](std::int64_t& value, const char* what) {
    if (value % ways != 0) {
      throw InvalidArgumentError("op '" + op.name + "': its " + what + " " + std::to_string(value) +
                                 " along " + std::string(ToString(axis)) + " is not divisible by " +
                                 std::to_string(ways));
    }
    value /= ways;
  };
  if (op.gemm) {
    if (op.axes.batch == axis) divide(op.gemm->batch, "GEMM batch");
    if (op.axes.m == axis) divide(op.gemm->m, "GEMM m");
    if (op.axes.n == axis) divide(op.gemm->n, "GEMM n");
    if (op.axes.k == axis) divide(op.gemm->k, "GEMM k");
  }
  if (!op.axes.Spans(axis)) return;
  for (auto& v : op.vector) {
    divide(v.elements, "elements");
    if (op.axes.row == axis) divide(v.row_elements, "row length");
  }
  if (op.kind == OpKind::kCollective) divide(op.collective_bytes, "bytes");
}

void GrowAlong(Operator& op, Axis axis, std::int64_t factor) {
  if (factor == 1 || axis == Axis::kNone) return;
  if (op.gemm) {
    if (op.axes.batch == axis) op.gemm->batch *= factor;
    if (op.axes.m == axis) op.gemm->m *= factor;
    if (op.axes.n == axis) op.gemm->n *= factor;
    if (op.axes.k == axis) op.gemm->k *= factor;
  }
  if (!op.axes.Spans(axis)) return;
  for (auto& v : op.vector) {
    v.elements *= factor;
    if (op.axes.row == axis) v.row_elements *= factor;
  }
  if (op.kind == OpKind::kCollective) op.collective_bytes *= factor;
}

void ResizeAxis(LayerGraph& graph, Axis axis, std::int64_t from, std::int64_t to) {
  if (from == to || from < 1 || axis == Axis::kNone) return;
  auto resize = [&](std::int64_t& x) {
    if (x % from == 0) x = x / from * to;
  };
  for (auto& layer : graph.unique_layers) {
    const OperatorGraph& g = layer.forward;
    std::vector<std::int64_t> elements;
    for (const auto& t : g.Tensors()) elements.push_back(t.elements);
    std::vector<Operator> ops = g.Ops();
    bool holds_axis = false;
    for (auto& op : ops) {
      bool on_axis = op.axes.Spans(axis);
      bool writes_axis = false;  // its outputs have the dimension
      if (op.gemm) {
        for (auto [dim, a] : {std::pair{&op.gemm->batch, op.axes.batch},
                              std::pair{&op.gemm->m, op.axes.m}, std::pair{&op.gemm->n, op.axes.n},
                              std::pair{&op.gemm->k, op.axes.k}}) {
          if (a != axis) continue;
          resize(*dim);
          on_axis = true;
          writes_axis = writes_axis || dim != &op.gemm->k;
        }
      }
      if (!on_axis) continue;
      holds_axis = true;
      if (op.kind != OpKind::kEmbedding) {
        writes_axis = writes_axis || !op.gemm;
        for (auto& v : op.vector) {
          resize(v.elements);
          if (op.axes.row == axis) resize(v.row_elements);
        }
      }
      resize(op.weight_bytes);
      if (writes_axis) {
        for (int t : op.outputs) resize(elements[static_cast<size_t>(t)]);
      }
    }
    if (!holds_axis) continue;
    resize(layer.tied_parameters);
    layer.forward = Rewritten(
        g, [&](int t, Tensor& x) { x.elements = elements[static_cast<size_t>(t)]; },
        [&](int j, Operator& op) { op = std::move(ops[static_cast<size_t>(j)]); });
  }
}

}  // namespace phaze
