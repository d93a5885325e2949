// The estimator interface (plugins implement it; DESIGN §3, §8, §10): for an op on an architecture,
// its latency on one core (ℓ_i; for a fused op one tensor core paired with one vector core) and on
// all cores of its class (ℓ̂_i). Compute latency only: collective and send time belong to the network
// model (phaze/network/network.hpp), area to the architecture model (phaze/arch/area_model.hpp), so
// every quantity has one owner. Implementations are pure: const, deterministic, thread-safe. An op
// an estimator cannot cost raises UnsupportedOpError saying which op and why — never a silent zero
// or infinity.
//
// An estimator sees an op as an OpWork: its GEMM, its vector work items and its memory traffic,
// detached from the graph (so results can be cached by OpWork::Signature()). Backward ops are
// explicit ops of the backward graph; `pass` says which graph the op came from, for estimators that
// key on it (the built-in ones do not need it).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "phaze/arch/arch_config.hpp"
#include "phaze/core/energy.hpp"
#include "phaze/core/error.hpp"
#include "phaze/graph/operator_graph.hpp"

namespace phaze {

enum class Pass { kForward, kBackward, kRecompute };

std::string_view ToString(Pass pass);

struct OpWork {
  std::string name;
  OpKind kind = OpKind::kElementwise;
  std::optional<GemmShape> gemm;
  std::vector<VectorWork> vector;
  std::int64_t bytes_read = 0;     // activations read
  std::int64_t bytes_written = 0;  // activations written
  std::int64_t weight_bytes = 0;
  // An FP8 GEMM (Operator::fp8; graph/precision.hpp): its weight is read as its FP8 copy (half of
  // weight_bytes), and the `fp8_cast_elements` of its activation inputs still in 16 bits are cast
  // to FP8 by a kernel of its own. An estimator without an FP8 model raises UnsupportedOpError.
  bool fp8 = false;
  std::int64_t fp8_cast_elements = 0;
  // Under current scaling (Operator::fp8_current_scaling) its operands' amax, cast and
  // transposed-copy passes instead (Operator::fp8_scaling_bytes), in kernels of their own.
  std::int64_t fp8_scaling_bytes = 0;
  bool attention_kernel = false;  // Operator::attention_kernel
  // Kernels it launches beyond its first (Operator::passes; its temporaries' traffic is in
  // bytes_read and bytes_written).
  std::int64_t extra_kernels = 0;

  static OpWork Of(const Operator& op, const OperatorGraph& graph);
  static OpWork Gemm(GemmShape shape, std::int64_t word_bytes, bool weight_operand = true);
  static OpWork Vector(const std::string& function, std::int64_t elements, std::int64_t word_bytes,
                       std::int64_t row_elements = 1);
  CoreClass Core() const;
  // A deterministic text key of everything that affects an estimate (not the name), e.g.
  // "gemm|1x512x1024x1024|bias_add:524288/1|r1048576|w1048576|p2097152".
  std::string Signature() const;
};

struct OpEstimate {
  double single_core_s = 0;
  double all_cores_s = 0;
  // Dynamic energy of the op on all cores (compute, on-chip, memory), when the estimator models
  // it; the framework uses the energy model (EnergyModel::Op) when it does not.
  std::optional<Energy> energy;
  // Kernels the op launches (0: its work is folded into a neighbour's kernel). The host issues
  // each in the architecture's host_kernel_s (ScheduleProblem::host_s).
  int kernels = 1;
  // The op runs alone on the whole device, one op at a time (a GPU under one CUDA stream, a TPU
  // running one XLA op at a time): all_cores_s is its time, and no other op runs beside it but a
  // collective on the links. A layer whose every op is exclusive is scheduled as such
  // (BuildScheduleProblem, layer_schedule.hpp); single_core_s is then not a mode the device has.
  bool exclusive = false;
};

class UnsupportedOpError : public Error {
 public:
  using Error::Error;
  ~UnsupportedOpError() override;
};

class Estimator {
 public:
  virtual ~Estimator() = default;
  virtual OpEstimate Estimate(const OpWork& op, const ArchConfig& arch, Pass pass) const = 0;
  // For bounds only: times and kernels no larger than Estimate's on this arch (its energy is not
  // used). A family's bound (ModelBound) asks it of every member, so an estimator whose estimate
  // is a search can answer from what the search cannot go below, for less than the search
  // (the sunstone model: sunstone_mapper.hpp's Floor). Errors as Estimate's. Default: Estimate.
  virtual OpEstimate EstimateLowerBound(const OpWork& op, const ArchConfig& arch,
                                        Pass pass) const {
    return Estimate(op, arch, pass);
  }
};

}  // namespace phaze
