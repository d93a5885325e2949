#include "phaze/estimate/estimator.hpp"

#include "phaze/graph/precision.hpp"

namespace phaze {

// Key function: UnsupportedOpError's vtable and type info are emitted here only.
UnsupportedOpError::~UnsupportedOpError() = default;

std::string_view ToString(Pass pass) {
  switch (pass) {
    case Pass::kForward:
      return "forward";
    case Pass::kBackward:
      return "backward";
    case Pass::kRecompute:
      return "recompute";
  }
  return "?";
}

OpWork OpWork::Of(const Operator& op, const OperatorGraph& graph) {
  OpWork w;
  w.name = op.name;
  w.kind = op.kind;
  w.gemm = op.gemm;
  w.vector = op.vector;
  w.bytes_read = graph.BytesRead(op);
  w.bytes_written = graph.BytesWritten(op);
  w.weight_bytes = op.weight_bytes;
  w.attention_kernel = op.attention_kernel;
  if (!op.vector.empty()) {
    const std::int64_t temporary = op.vector.front().elements * op.passes.word_bytes;
    w.bytes_read += op.passes.reads * temporary;
    w.bytes_written += op.passes.writes * temporary;
  }
  w.extra_kernels = op.passes.kernels;
  if (op.fp8) {
    w.fp8 = true;
    w.fp8_scaling_bytes = op.fp8_scaling_bytes;
    for (int t : Fp8GemmOperands(op)) {
      const Tensor& x = graph.GetTensor(t);
      if (x.dtype_bytes > 1 && !op.fp8_current_scaling) w.fp8_cast_elements += x.elements;
    }
  }
  return w;
}

OpWork OpWork::Gemm(GemmShape s, std::int64_t word_bytes, bool weight_operand) {
  OpWork w;
  w.name = "gemm";
  w.kind = weight_operand ? OpKind::kGemm : OpKind::kBatchedGemm;
  w.gemm = s;
  w.bytes_read = s.batch * s.m * s.k * word_bytes;
  if (weight_operand) {
    w.weight_bytes = s.batch * s.k * s.n * word_bytes;
  } else {
    w.bytes_read += s.batch * s.k * s.n * word_bytes;
  }
  w.bytes_written = s.batch * s.m * s.n * word_bytes;
  return w;
}

OpWork OpWork::Vector(const std::string& function, std::int64_t elements, std::int64_t word_bytes,
                      std::int64_t row_elements) {
  OpWork w;
  w.name = function;
  w.kind = OpKind::kElementwise;
  w.vector = {{function, elements, row_elements}};
  w.bytes_read = elements * word_bytes;
  w.bytes_written = elements * word_bytes;
  return w;
}

CoreClass OpWork::Core() const {
  if (gemm) return vector.empty() ? CoreClass::kTensor : CoreClass::kFused;
  return vector.empty() ? CoreClass::kNone : CoreClass::kVector;
}

std::string OpWork::Signature() const {
  std::string s(ToString(kind));
  if (gemm) {
    s += "|" + std::to_string(gemm->batch) + "x" + std::to_string(gemm->m) + "x" +
         std::to_string(gemm->n) + "x" + std::to_string(gemm->k);
  }
  for (const auto& v : vector) {
    s += "|" + v.function + ":" + std::to_string(v.elements) + "/" + std::to_string(v.row_elements);
  }
  s += "|r" + std::to_string(bytes_read) + "|w" + std::to_string(bytes_written) + "|p" +
       std::to_string(weight_bytes);
  if (fp8) s += "|fp8c" + std::to_string(fp8_cast_elements);
  if (fp8_scaling_bytes > 0) s += "|fp8s" + std::to_string(fp8_scaling_bytes);
  if (attention_kernel) s += "|attn";
  if (extra_kernels > 0) s += "|k" + std::to_string(1 + extra_kernels);
  return s;
}

}  // namespace phaze
