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

}  // namespace phaze
