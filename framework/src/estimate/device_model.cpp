#include "phaze/estimate/device_model.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string_view>
#include <utility>

#include "phaze/core/error.hpp"
#include "phaze/core/text_format.hpp"
#include "phaze/estimate/energy_model.hpp"
#include "phaze/estimate/vector_cycles.hpp"

namespace phaze {

namespace {

using i64 = std::int64_t;

i64 CeilDiv(i64 a, i64 b) { return (a + b - 1) / b; }

// Array-sized blocks (rows × columns) one tensor core computes of a tile: cuBLAS's CTA tiles on
// an SM of 2 × 2 tensor cores of 16 × 16 (64×64 … 256×128, header comment).
constexpr i64 kBlocks[][2] = {{2, 2}, {2, 4}, {4, 2}, {4, 4}, {4, 8}, {8, 4}};

}  // namespace

bool DeviceModel::Folded(const std::string& function) {
  // string_views: a name of another length is told apart without reading it (every estimate
  // asks this of each of its op's vector functions).
  static constexpr std::string_view kFolded[] = {
      "scale", "mask", "causal_mask", "scale_backward", "mask_backward", "causal_mask_backward"};
  for (const std::string_view f : kFolded) {
    if (function == f) return true;
  }
  return false;
}

DeviceTechnology DeviceTechnologyFor(const ArchConfig& arch,
                                     const std::map<std::string, double>& overrides) {
  // Called for every estimate: the maps' entries are matched against the keys (usually there
  // are none), and only values that were set are checked (the defaults are valid).
  DeviceTechnology t;
  bool set = false;
  for (const auto* m : {&arch.calibration, &overrides}) {
    for (const auto& [key, value] : *m) {
      for (const char* k : DeviceTechnology::kKeys) {
        if (key == k) {
          t.Set(key, value);
          set = true;
        }
      }
    }
  }
  for (const char* key : DeviceTechnology::kKeys) {
    if (!set) break;
    if (const std::string why = DeviceTechnology::Check(key, t.Get(key)); !why.empty()) {
      throw UnsupportedOpError("device model: architecture '" + arch.name + "': " + key + ": " +
                               why);
    }
  }
  return t;
}

DeviceModel::DeviceModel(std::string name, std::map<std::string, double> overrides,
                         std::map<std::string, double> vector_cycles)
    : name_(std::move(name)),
      overrides_(std::move(overrides)),
      vector_cycles_(std::move(vector_cycles)) {}

i64 DeviceModel::TensorCoresPerGroup(const ArchConfig& a) {
  return std::max<i64>(1, a.num_tc / std::max<i64>(1, a.num_vc));
}

i64 DeviceModel::Groups(const ArchConfig& a) {
  return std::max<i64>(1, a.num_tc / TensorCoresPerGroup(a));
}

static_assert(std::size(kBlocks) == GemmTiles::kMax);

GemmTiles DeviceModel::Tiles(const ArchConfig& a, i64 cores_per_unit) {
  i64 gn = 1;
  for (i64 d = 1; d * d <= cores_per_unit; ++d) {
    if (cores_per_unit % d == 0) gn = d;
  }
  const i64 gm = cores_per_unit / gn;
  GemmTiles tiles;
  for (const auto& [rows, cols] : kBlocks) {
    const i64 operand_bytes = 2 * (rows * a.pe_x + cols * a.pe_y) * a.pe_x * a.word_bytes;
    const bool smallest = rows == kBlocks[0][0] && cols == kBlocks[0][1];
    if (smallest || a.l2_tc_bytes <= 0 || operand_bytes <= a.l2_tc_bytes) {
      tiles.tiles[tiles.count++] = {rows * a.pe_x * gm, cols * a.pe_y * gn};
    }
  }
  return tiles;
}

double DeviceModel::GemmComputeSeconds(const GemmShape& g, const ArchConfig& a,
                                       i64 cores_per_unit, i64 units, double glb_share,
                                       const DeviceTechnology& tech, GemmTile* chosen,
                                       double rate, i64 word) {
  const double unit_flops_per_s = 2.0 * static_cast<double>(cores_per_unit * a.pe_x * a.pe_y) *
                                  a.frequency_hz * tech.gemm_efficiency * rate;
  const double operand_word = static_cast<double>(word > 0 ? word : a.word_bytes);
  const double k = static_cast<double>(g.k);
  const double k_filled = static_cast<double>(CeilDiv(g.k, a.pe_x) * a.pe_x);
  double best = std::numeric_limits<double>::infinity();
  for (const GemmTile& t : Tiles(a, cores_per_unit)) {
    const double tiles = static_cast<double>(g.batch) * static_cast<double>(CeilDiv(g.m, t.tm)) *
                         static_cast<double>(CeilDiv(g.n, t.tn));
    const double tm = static_cast<double>(t.tm);
    const double tn = static_cast<double>(t.tn);
    const double tile_s = std::max(2.0 * tm * tn * k_filled / unit_flops_per_s,
                                   (tm + tn) * operand_word * k / glb_share);
    // Whole waves leave the last one's spare units idle; a balanced schedule (stream-K) does not.
    const double per_unit = tiles / static_cast<double>(units);
    const double waves =
        tech.wave_quantization * std::ceil(per_unit) + (1 - tech.wave_quantization) * per_unit;
    const double s = waves * tile_s;
    if (s < best) {
      best = s;
      if (chosen) *chosen = t;
    }
  }
  return best;
}

double DeviceModel::PowerLimitClockScale(const ArchConfig& a) {
  if (!(a.power_limit_w > 0) || !(a.tdp_w > 0) || a.power_limit_w >= a.tdp_w) return 1;
  const double static_w = EnergyModel::StaticPowerW(a);
  if (!(a.power_limit_w > static_w)) {
    throw Error(  // the architecture's, not a caller's: a configuration error
        "architecture '" + a.name + "': power_limit_w " + FormatNumber("%g", a.power_limit_w) +
        " W leaves nothing above its static power (" + FormatNumber("%.1f", static_w) +
        " W, the energy model's): it cannot run");
  }
  const double share = (a.power_limit_w - static_w) / (a.tdp_w - static_w);
  const double floor = EnergyTechnologyFor(a).voltage_floor_clock;
  const double cubic = std::cbrt(share);
  return cubic >= floor ? cubic : share / (floor * floor);
}

double DeviceModel::PowerLimitVoltageScale(const ArchConfig& a) {
  const double clock = PowerLimitClockScale(a);
  return clock < 1 ? std::max(clock, EnergyTechnologyFor(a).voltage_floor_clock) : 1.0;
}

double DeviceModel::GemmHbmBytes(const GemmShape& g, const ArchConfig& a, double op_bytes) {
  const double word = static_cast<double>(a.word_bytes);
  const double glb_words = static_cast<double>(a.glb_bytes) / word;
  const double b = static_cast<double>(g.batch);
  const double m = static_cast<double>(g.m);
  const double n = static_cast<double>(g.n);
  const double k = static_cast<double>(g.k);
  if (glb_words <= 0 || b * (m * k + k * n + m * n) <= glb_words) return op_bytes;
  return std::max(op_bytes, b * (2 * m * n * k / std::sqrt(glb_words) + m * n) * word);
}

double DeviceModel::LaneSeconds(const OpWork& op, const std::string& function, i64 elements,
                                const ArchConfig& a, i64 lanes) const {
  return VectorCycles(name_, op.name, function, vector_cycles_) *
         static_cast<double>(CeilDiv(elements, lanes)) / a.frequency_hz;
}

OpEstimate DeviceModel::Estimate(const OpWork& op, const ArchConfig& a, Pass pass) const {
  if (op.kind == OpKind::kCollective) {
    throw UnsupportedOpError("estimator '" + name_ + "': op '" + op.name +
                             "' is a collective: the network model costs it");
  }
  OpEstimate e;
  if (op.Core() == CoreClass::kNone) {  // a view moves no data
    e.kernels = 0;
    return e;
  }
  const DeviceTechnology t = DeviceTechnologyFor(a, overrides_);
  const bool concurrent = t.concurrent_kernels == 1;
  const i64 groups = Groups(a);
  const double f = a.frequency_hz;
  // The clock of the power-bound work (GEMMs, a fused attention kernel's lanes) under the limit.
  const double clock = PowerLimitClockScale(a);
  const i64 lanes_all = a.num_vc * a.pe_vc;
  const double hbm = a.hbm_bandwidth_bytes_per_s * t.memory_efficiency;
  const double op_bytes = static_cast<double>(op.bytes_read + op.bytes_written + op.weight_bytes);

  // Folded work: its arithmetic only.
  double folded_all = 0;
  double folded_one = 0;
  bool all_folded = !op.vector.empty();
  for (const auto& v : op.vector) {
    if (Folded(v.function)) {
      folded_all += static_cast<double>(v.elements) / (static_cast<double>(lanes_all) * f);
      folded_one += static_cast<double>(v.elements) / (static_cast<double>(a.pe_vc) * f);
    } else {
      all_folded = false;
    }
  }
  // `share`: the fraction of the chip's bandwidths the op gets (1 on all cores, 1/num on one).
  double all = 0;
  double one = 0;
  GemmTile tile;  // the all-cores tile of a GEMM, for its energy
  if (!op.gemm && all_folded) {  // a scale or mask on its own: inside the softmax kernel
    e.kernels = 0;
    all = folded_all;
    one = folded_one;
  } else if (op.gemm) {
    const GemmShape& g = *op.gemm;
    if (op.fp8 && !(a.fp8_tensor_ratio > 0)) {
      throw UnsupportedOpError("estimator '" + name_ + "': op '" + op.name + "' is an FP8 GEMM "
                               "and architecture '" + a.name + "' has no FP8 tensor rate "
                               "(fp8_tensor_ratio; train it in bf16)");
    }
    // The tensor cores and the operand traffic that feeds them run at the power limit's clock.
    // The backward's FP8 GEMMs accumulate exactly, at fp8_exact_accumulation of the rate.
    const double fp8_rate =
        a.fp8_tensor_ratio * (pass == Pass::kBackward ? t.fp8_exact_accumulation : 1.0);
    const double rate = (op.fp8 ? fp8_rate : 1.0) * clock;
    const i64 word = op.fp8 ? 1 : a.word_bytes;
    // A fused attention kernel keeps its query tile on chip and streams only the keys and values
    // through the GLB: half the operand traffic of a GEMM tile, as twice the bandwidth.
    const double glb = a.glb_bandwidth_words_per_cycle * static_cast<double>(a.word_bytes) * f *
                       clock * (op.attention_kernel ? 2.0 : 1.0);
    // An FP8 GEMM reads its weight's FP8 copy.
    const double gemm_bytes =
        op.fp8 ? op_bytes - static_cast<double>(op.weight_bytes) / 2 : op_bytes;
    // A GEMM whose result stays on chip (FlashAttention's scores: it writes no bytes) reads its
    // operands once; otherwise the blocked re-reads when they do not fit. So does every GEMM of a
    // fused attention kernel, at that kernel's efficiency.
    const bool on_chip = op.kind == OpKind::kBatchedGemm && op.bytes_written == 0;
    DeviceTechnology gemm_tech = t;
    if (op.attention_kernel) {
      gemm_tech.gemm_efficiency =
          pass == Pass::kBackward ? t.attention_backward_efficiency : t.attention_efficiency;
    }
    // A weight GEMM whose n or k is odd (an unpadded vocabulary's LM head): its operands' rows
    // are not aligned for the tensor cores' loads, and the library's fallback kernels reach
    // unaligned_gemm_efficiency of the peak.
    if (op.kind == OpKind::kGemm && (g.n % 2 == 1 || g.k % 2 == 1)) {
      gemm_tech.gemm_efficiency = std::min(gemm_tech.gemm_efficiency, t.unaligned_gemm_efficiency);
    }
    const double hbm_bytes =
        on_chip || op.attention_kernel ? gemm_bytes : GemmHbmBytes(g, a, gemm_bytes);
    const double out_bytes =
        on_chip ? 0.0 : static_cast<double>(g.batch * g.m * g.n * a.word_bytes);
    const double tcs = static_cast<double>(a.num_tc);
    all = std::max(
              GemmComputeSeconds(g, a, TensorCoresPerGroup(a), groups,
                                 glb / static_cast<double>(groups), gemm_tech, &tile, rate, word),
              hbm_bytes / hbm) +
          t.kernel_overhead_s + folded_all;
    one = std::max(GemmComputeSeconds(g, a, 1, 1, glb / tcs, gemm_tech, nullptr, rate, word),
                   hbm_bytes / (hbm / tcs)) +
          t.kernel_overhead_s + folded_one;
    if (op.fp8_cast_elements > 0) {  // the cast of its 16-bit inputs: a kernel of its own
      const double cast_bytes = 3.0 * static_cast<double>(op.fp8_cast_elements);
      all += cast_bytes / hbm + t.kernel_overhead_s;
      one += cast_bytes / (hbm / tcs) + t.kernel_overhead_s;
      ++e.kernels;
    }
    if (op.fp8_scaling_bytes > 0) {  // current scaling: the amax and cast kernels
      const double scaling_bytes = static_cast<double>(op.fp8_scaling_bytes);
      all += scaling_bytes / hbm + 2 * t.kernel_overhead_s;
      one += scaling_bytes / (hbm / tcs) + 2 * t.kernel_overhead_s;
      e.kernels += 2;
    }
    for (const auto& v : op.vector) {  // fused epilogues: a pass over the output each
      if (Folded(v.function)) continue;
      all += std::max(2 * out_bytes / hbm, LaneSeconds(op, v.function, v.elements, a, lanes_all)) +
             t.kernel_overhead_s;
      one += std::max(2 * out_bytes / (hbm / tcs),
                      LaneSeconds(op, v.function, v.elements, a, a.pe_vc)) +
             t.kernel_overhead_s;
      ++e.kernels;
    }
  } else {
    double lanes_s_all = 0;
    double lanes_s_one = 0;
    for (const auto& v : op.vector) {
      if (Folded(v.function)) continue;
      lanes_s_all += LaneSeconds(op, v.function, v.elements, a, lanes_all);
      lanes_s_one += LaneSeconds(op, v.function, v.elements, a, a.pe_vc);
    }
    if (op.attention_kernel) {  // inside the power-bound kernel: at its clock
      lanes_s_all /= clock;
      lanes_s_one /= clock;
    }
    const double vcs = static_cast<double>(a.num_vc);
    // Lane work inside a fused attention kernel launches no kernel of its own; a multi-kernel op
    // (Operator::passes) launches each of its kernels.
    e.kernels = op.attention_kernel ? 0 : static_cast<int>(1 + op.extra_kernels);
    const double overhead = t.kernel_overhead_s * static_cast<double>(e.kernels);
    all = std::max(op_bytes / hbm, lanes_s_all) + overhead + folded_all;
    one = std::max(op_bytes / (hbm / vcs), lanes_s_one) + overhead + folded_one;
  }
  if (concurrent) {
    e.all_cores_s = std::min(all, one);
    e.single_core_s = one;
  } else {
    e.all_cores_s = all;
    e.exclusive = true;
    // A fused op's or GEMM's "one core" is a group; a vector op's a vector core.
    e.single_core_s = all * static_cast<double>(op.gemm ? groups : std::max<i64>(1, a.num_vc));
  }
  e.energy = EnergyModel::Op(op, a, vector_cycles_, op.gemm ? &tile : nullptr);
  return e;
}

}  // namespace phaze
