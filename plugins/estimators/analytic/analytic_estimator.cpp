#include "analytic_estimator.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <tuple>

#include "phaze/estimate/vector_cycles.hpp"

namespace phaze::estimators {

namespace {

using i64 = std::int64_t;

i64 CeilDiv(i64 a, i64 b) { return (a + b - 1) / b; }

// The reference's per-element cycle constants of the element-wise ops (REFERENCE §2.3): its
// vector-core table for these functions, and the constants it adds for a fused epilogue.
const std::map<std::string, double>& ReferenceCycles() {
  static const std::map<std::string, double> table = {
      {"add", 1},
      {"bias_add", 1},
      {"mul", 1},
      {"scale", 10},
      {"mask", 1},
      {"causal_mask", 1},
      {"dropout", 2},
      {"relu", 1},
      {"gelu", 1},
      {"gelu_tanh", 1},
      {"silu", 12},
      {"tanh", 27},
      {"layernorm", 1},
      {"rmsnorm", 1},
      {"rotary", 13},
      {"add_backward", 1},
      {"mul_backward", 1},
      {"scale_backward", 10},
      {"mask_backward", 1},
      {"causal_mask_backward", 1},
      {"dropout_backward", 1},
      {"relu_backward", 1},
      {"gelu_backward", 1},
      {"gelu_tanh_backward", 1},
      {"silu_backward", 22},
      {"tanh_backward", 2},
      {"layernorm_backward", 1},
      {"rmsnorm_backward", 1},
      {"rotary_backward", 2},
  };
  return table;
}

// A fused epilogue's constant in sunstone mode (1 for what the reference does not list).
double ReferenceConstant(const std::string& f) {
  auto it = ReferenceCycles().find(f);
  return it == ReferenceCycles().end() ? 1 : it->second;
}

// Words moved between a level and the one below for a blocked GEMM whose stationary weight block
// (k_b × n_b) takes at most `capacity_words`: inputs re-read per weight column block, weights once,
// partial sums written (and re-read) per weight row block. Minimised over n_b.
double BlockedTraffic(const GemmShape& s, double capacity_words, i64 step) {
  double best = -1;
  for (i64 nb = std::min<i64>(step, s.n);; nb = std::min<i64>(nb * 2, s.n)) {
    const i64 kb = std::min<i64>(s.k, static_cast<i64>(capacity_words / static_cast<double>(nb)));
    if (kb >= 1) {
      const double t =
          static_cast<double>(s.batch) *
          (static_cast<double>(s.m * s.k) * static_cast<double>(CeilDiv(s.n, nb)) +
           static_cast<double>(s.k * s.n) +
           static_cast<double>(s.m * s.n) * static_cast<double>(2 * CeilDiv(s.k, kb) - 1));
      if (best < 0 || t < best) best = t;
    }
    if (nb == s.n) break;
  }
  if (best < 0) {  // not even one column fits: stream everything element by element
    best = static_cast<double>(s.batch) *
           (static_cast<double>(s.m * s.k) * static_cast<double>(s.n) +
            static_cast<double>(s.k * s.n) +
            static_cast<double>(s.m * s.n) * static_cast<double>(2 * s.k - 1));
  }
  return best;
}

}  // namespace

AnalyticEstimator::AnalyticEstimator(Model model, const ConfigNode& params)
    : model_(model) {
  params.ExpectKeys(
      {"model", "l2_words_per_cycle", "vector_cycles", "register_bytes", "access_pj"});
  if (auto n = params.Optional("model")) {
    model_ =
        n->AsChoice({"physical", "sunstone"}) == "physical" ? Model::kPhysical : Model::kSunstone;
  }
  if (auto n = params.Optional("l2_words_per_cycle")) l2_words_per_cycle_ = n->AsPositiveDouble();
  if (auto n = params.Optional("vector_cycles")) {
    for (const auto& [name, value] : n->Entries())
      vector_cycles_[name] = value.AsNonNegativeDouble();
  }
  if (auto n = params.Optional("register_bytes")) register_bytes_ = n->AsPositiveInt();
  SunstoneCosts costs;
  if (auto n = params.Optional("access_pj")) {
    n->ExpectKeys({"register", "buffer", "glb", "dram"});
    const char* names[] = {"register", "buffer", "glb", "dram"};
    for (int i = 0; i < 4; ++i) {
      if (auto e = n->Optional(names[i])) costs.access_pj[i] = e->AsPositiveDouble();
    }
  }
  mapper_ = std::make_unique<SunstoneMapper>(costs);
}

double AnalyticEstimator::CyclesPerElement(const OpWork& op, const std::string& f) const {
  return VectorCycles(model_ == Model::kPhysical ? "analytic" : "sunstone", op.name, f,
                      vector_cycles_);
}

double AnalyticEstimator::TensorCycles(const GemmShape& s, bool /*weight_operand*/,
                                       const ArchConfig& a, i64 cores,
                                       double glb_words_per_cycle) const {
  const double tiles = static_cast<double>(s.batch) * static_cast<double>(CeilDiv(s.k, a.pe_x)) *
                       static_cast<double>(CeilDiv(s.n, a.pe_y));
  // Weights are double-buffered: loading the next tile (pe_x cycles, a row per cycle) hides under
  // streaming the current one, so a tile costs max(M, pe_x); one fill and drain are exposed.
  const double compute =
      tiles * static_cast<double>(std::max(s.m, a.pe_x)) + static_cast<double>(a.pe_x + a.pe_y);
  const double l2_bw =
      l2_words_per_cycle_ > 0 ? l2_words_per_cycle_ : static_cast<double>(a.pe_x + 2 * a.pe_y);
  const double l2_traffic =
      static_cast<double>(s.batch) *
      (static_cast<double>(s.m * s.k) * static_cast<double>(CeilDiv(s.n, a.pe_y)) +
       static_cast<double>(s.k * s.n) +
       static_cast<double>(s.m * s.n) * static_cast<double>(2 * CeilDiv(s.k, a.pe_x) - 1));
  const double l2_words = static_cast<double>(a.l2_tc_bytes / a.word_bytes);
  const double glb_traffic = BlockedTraffic(s, l2_words / 2, a.pe_y);
  const double glb_share = glb_words_per_cycle / static_cast<double>(cores);
  return std::max({compute, l2_traffic / l2_bw, glb_traffic / glb_share});
}

double AnalyticEstimator::HbmSeconds(const GemmShape& s, bool weight_operand,
                                     const ArchConfig& a) const {
  const double glb_words = static_cast<double>(a.glb_bytes / a.word_bytes);
  const double working =
      static_cast<double>(s.batch) * static_cast<double>(s.m * s.k + s.k * s.n + s.m * s.n);
  const double words = working <= glb_words
                           ? (weight_operand ? static_cast<double>(s.batch * s.k * s.n) : 0.0)
                           : BlockedTraffic(s, glb_words / 2, a.pe_y);
  return words * static_cast<double>(a.word_bytes) / a.hbm_bandwidth_bytes_per_s;
}

double AnalyticEstimator::PhysicalGemmSeconds(const OpWork& op, const ArchConfig& a,
                                              bool all_cores) const {
  const GemmShape& s = *op.gemm;
  const bool weights = op.kind == OpKind::kGemm;
  const double hbm = HbmSeconds(s, weights, a);
  const double f = a.frequency_hz;
  double best = std::max(TensorCycles(s, weights, a, 1, a.glb_bandwidth_words_per_cycle) / f, hbm);
  if (!all_cores || a.num_tc == 1) return best;
  const i64 c = a.num_tc;
  for (int dim = 0; dim < 3; ++dim) {
    GemmShape part = s;
    i64& extent = dim == 0 ? part.batch : dim == 1 ? part.m : part.n;
    const i64 used = std::min<i64>(c, extent);
    if (used <= 1) continue;
    extent = CeilDiv(extent, used);
    const double t =
        std::max(TensorCycles(part, weights, a, used, a.glb_bandwidth_words_per_cycle) / f, hbm);
    best = std::min(best, t);
  }
  return best;
}

double AnalyticEstimator::VectorSeconds(const OpWork& op, const ArchConfig& a, i64 cores,
                                        bool include_memory) const {
  const i64 lanes = a.pe_vc * cores;
  double cycles = 0;
  for (const auto& w : op.vector) {
    cycles += CyclesPerElement(op, w.function) * static_cast<double>(CeilDiv(w.elements, lanes));
  }
  double seconds = cycles / a.frequency_hz;
  if (include_memory) {
    const double bytes = static_cast<double>(op.bytes_read + op.bytes_written + op.weight_bytes);
    const double port = std::min(a.glb_bandwidth_words_per_cycle, 3.0 * static_cast<double>(lanes));
    double memory = bytes / static_cast<double>(a.word_bytes) / port / a.frequency_hz;
    if (bytes > static_cast<double>(a.glb_bytes))
      memory = std::max(memory, bytes / a.hbm_bandwidth_bytes_per_s);
    seconds = std::max(seconds, memory);
  }
  return seconds;
}

double AnalyticEstimator::SunstoneTensorCycles(const OpWork& op, const ArchConfig& a,
                                               i64 cores, bool floor) const {
  const GemmShape& g = *op.gemm;
  SunstoneHardware hw;
  hw.pe_x = a.pe_x;
  hw.pe_y = a.pe_y;
  std::tie(hw.core_x, hw.core_y) = SunstoneHardware::CoreGrid(cores);
  hw.register_words = register_bytes_;
  hw.buffer_words = a.l2_tc_bytes;
  hw.glb_words = a.glb_bytes;
  const SunstoneGemm gemm{g.batch * g.m, g.k, g.n};
  const double cycles = floor ? mapper_->FloorCycles(gemm, hw) : mapper_->Cycles(gemm, hw);
  if (std::isinf(cycles)) {
    throw UnsupportedOpError(
        "estimator 'sunstone': op '" + op.name + "': no mapping of its GEMM (" +
        std::to_string(g.batch * g.m) + " rows × " + std::to_string(g.n) + " columns ← " +
        std::to_string(g.k) + ") fits " + std::to_string(cores) + " core(s) of " +
        std::to_string(a.pe_x) + "×" + std::to_string(a.pe_y) + " PEs with " +
        std::to_string(a.l2_tc_bytes) + "-byte core buffers and a " +
        std::to_string(a.glb_bytes) + "-byte GLB (the reference's Sunstone finds none either)");
  }
  return cycles;
}

double AnalyticEstimator::SunstoneVectorCycles(const OpWork& op, i64 lanes) const {
  double cycles = 0;
  for (const auto& w : op.vector) {
    const double n = static_cast<double>(w.elements);
    const double c = std::ceil(n / static_cast<double>(lanes));
    const std::string& f = w.function;
    if (auto it = vector_cycles_.find(f); it != vector_cycles_.end()) {
      cycles += it->second * c;
    } else if (f == "softmax" || f == "flash_softmax" || f == "cross_entropy") {
      // The reference has one softmax: FlashAttention's online one (flash_softmax) costs as it.
      const double k = static_cast<double>(std::max<i64>(1, w.row_elements));
      const double rows = n / k;
      cycles += rows * std::ceil(k / static_cast<double>(lanes)) + 10 +
                (f == "cross_entropy" ? 13 : 10) * c;
      if (f == "cross_entropy") cycles += 2 * c;  // NllLoss
    } else if (f == "embedding" || f == "embedding_backward" || f == "bias_grad") {
      // The reference maps embeddings and sums to no-ops.
    } else if (f == "add_backward" || f == "mul_backward" || f == "softmax_backward") {
      cycles += 2 * c;  // two-operand backward; softmax backward
    } else if (f == "cross_entropy_backward") {
      cycles += 4 * c;
    } else if (auto it = ReferenceCycles().find(f); it != ReferenceCycles().end()) {
      cycles += it->second * c;
    } else {  // the reference costs neither optimizers nor MoE: use the physical constants
      cycles += CyclesPerElement(op, f) * c;
    }
  }
  return cycles;
}

OpEstimate AnalyticEstimator::Estimate(const OpWork& op, const ArchConfig& a, Pass) const {
  return EstimateOp(op, a, false);
}

OpEstimate AnalyticEstimator::EstimateLowerBound(const OpWork& op, const ArchConfig& a,
                                                 Pass) const {
  return EstimateOp(op, a, model_ == Model::kSunstone);
}

OpEstimate AnalyticEstimator::EstimateOp(const OpWork& op, const ArchConfig& a, bool floor) const {
  if (op.kind == OpKind::kCollective) {
    throw UnsupportedOpError("op '" + op.name + "' is a collective: it runs on the links, not on " +
                             "cores; the network model costs it");
  }
  if (op.fp8) {
    throw UnsupportedOpError("op '" + op.name + "' is an FP8 GEMM: the paper's analytic model "
                             "has no FP8 rate (use the device estimator, or train in bf16)");
  }
  OpEstimate e;
  switch (op.Core()) {
    case CoreClass::kNone:  // a view moves no data
      return e;
    case CoreClass::kVector:
      if (model_ == Model::kSunstone) {
        e.single_core_s = SunstoneVectorCycles(op, a.pe_vc) / a.frequency_hz;
        e.all_cores_s = SunstoneVectorCycles(op, a.pe_vc * a.num_vc) / a.frequency_hz;
      } else {
        e.single_core_s = VectorSeconds(op, a, 1, true);
        e.all_cores_s = std::min(e.single_core_s, VectorSeconds(op, a, a.num_vc, true));
      }
      return e;
    case CoreClass::kTensor:
    case CoreClass::kFused:
      break;
  }
  if (model_ == Model::kSunstone) {
    double epilogue = 0;
    for (const auto& w : op.vector) epilogue += ReferenceConstant(w.function);
    e.single_core_s = (SunstoneTensorCycles(op, a, 1, floor) + epilogue) / a.frequency_hz;
    // Sunstone's EDP-best mapping on all cores can be slower than on one (REFERENCE §2.2); the
    // op can always leave cores idle, and the schedule would pick the single core anyway.
    e.all_cores_s = std::min(
        e.single_core_s,
        (SunstoneTensorCycles(op, a, a.num_tc, floor) + epilogue) / a.frequency_hz);
    return e;
  }
  const double t1 = PhysicalGemmSeconds(op, a, false);
  const double tn = PhysicalGemmSeconds(op, a, true);
  if (op.vector.empty()) {
    e.single_core_s = t1;
    e.all_cores_s = tn;
    return e;
  }
  const GemmShape& s = *op.gemm;
  const double out_tiles = static_cast<double>(s.batch) *
                           static_cast<double>(CeilDiv(s.n, a.pe_y)) *
                           static_cast<double>(CeilDiv(s.m, std::max<i64>(1, a.pe_x)));
  const double v1 = VectorSeconds(op, a, 1, false);
  const double vn = VectorSeconds(op, a, a.num_vc, false);
  e.single_core_s = std::max(t1, v1) + v1 / out_tiles;
  e.all_cores_s = std::min(e.single_core_s, std::max(tn, vn) + vn / out_tiles);
  return e;
}

}  // namespace phaze::estimators
