#include "phaze/estimate/energy_model.hpp"

#include <cmath>

#include "phaze/arch/area_model.hpp"
#include "phaze/estimate/device_model.hpp"
#include "phaze/estimate/vector_cycles.hpp"

namespace phaze {
namespace {

using i64 = std::int64_t;

double Ceil(double a, double b) { return std::ceil(a / b); }

// Lane operations of one vector work item: cycles per element per lane × elements; a function
// in neither `overrides` nor the shared table counts one cycle (its estimator has costed its time).
double LaneOps(const VectorWork& v, const std::map<std::string, double>& overrides) {
  double cycles = 1;
  if (auto it = overrides.find(v.function); it != overrides.end()) {
    cycles = it->second;
  } else if (const double* shared = FindVectorCycles(v.function)) {
    cycles = *shared;
  }
  return cycles * static_cast<double>(v.elements);
}

}  // namespace

EnergyTechnology EnergyTechnologyFor(const ArchConfig& arch) {
  EnergyTechnology t;
  for (const auto& [key, value] : arch.energy) {
    if (const std::string why = EnergyTechnology::Check(key, value); !why.empty()) {
      throw Error("architecture '" + arch.name + "': energy: " + key + ": " + why);
    }
    t.Set(key, value);
  }
  return t;
}

double EnergyModel::SramJ(double bytes, double sram_bytes, const EnergyTechnology& t) {
  if (bytes <= 0 || sram_bytes <= 0) return 0;
  return bytes * t.sram_pj_per_byte_1mib * std::sqrt(sram_bytes / 1048576.0) * 1e-12;
}

Energy EnergyModel::Op(const OpWork& op, const ArchConfig& a,
                       const std::map<std::string, double>& vector_cycles,
                       const GemmTile* run_tile) {
  Energy e;
  if (op.kind == OpKind::kCollective || op.Core() == CoreClass::kNone) return e;
  const EnergyTechnology t = EnergyTechnologyFor(a);
  const double word = static_cast<double>(a.word_bytes);
  const double glb = static_cast<double>(a.glb_bytes);
  const double op_bytes = static_cast<double>(op.bytes_read + op.bytes_written + op.weight_bytes);
  double lane_ops = 0;
  for (const auto& v : op.vector) lane_ops += LaneOps(v, vector_cycles);
  e.compute_j = lane_ops * t.lane_op_pj * 1e-12;
  if (op.gemm) {
    const GemmShape& g = *op.gemm;
    const double b = static_cast<double>(g.batch);
    const double m = static_cast<double>(g.m);
    const double n = static_cast<double>(g.n);
    const double k = static_cast<double>(g.k);
    const double macs = b * m * n * k;
    // Under a power limit the tensor cores run at a lower clock and voltage: the switching energy
    // of the GEMM's MACs and their buffer reads scales with V², V following the clock down to
    // its floor (DeviceModel::PowerLimitVoltageScale; 1 without a limit).
    const double volts = DeviceModel::PowerLimitVoltageScale(a);
    const double volts2 = volts * volts;
    e.compute_j += macs * t.mac_pj * 1e-12 * volts2;
    // The tile the device model runs (on all cores) decides the GLB traffic.
    GemmTile tile;
    if (run_tile) {
      tile = *run_tile;
    } else {
      const i64 groups = DeviceModel::Groups(a);
      const double glb_bw = a.glb_bandwidth_words_per_cycle * word * a.frequency_hz;
      DeviceModel::GemmComputeSeconds(g, a, DeviceModel::TensorCoresPerGroup(a), groups,
                                      glb_bw / static_cast<double>(groups),
                                      DeviceTechnologyFor(a), &tile);
    }
    const double tiles = b * Ceil(m, static_cast<double>(tile.tm)) * Ceil(n, static_cast<double>(tile.tn));
    const double glb_bytes = tiles * static_cast<double>(tile.tm + tile.tn) * k * word + b * m * n * word;
    const double buffer_bytes =
        macs * word * (1.0 / static_cast<double>(a.pe_x) + 1.0 / static_cast<double>(a.pe_y));
    e.on_chip_j =
        (SramJ(glb_bytes, glb, t) + SramJ(buffer_bytes, static_cast<double>(a.l2_tc_bytes), t)) *
        volts2;
    // A result kept on chip (it writes no bytes: FlashAttention's scores) costs no HBM passes.
    const bool on_chip = op.kind == OpKind::kBatchedGemm && op.bytes_written == 0;
    double hbm_bytes = on_chip ? op_bytes : DeviceModel::GemmHbmBytes(g, a, op_bytes);
    const double out_bytes = b * m * n * word;
    for (const auto& v : op.vector) {  // a fused epilogue: one more pass over the output each
      if (DeviceModel::Folded(v.function)) continue;
      if (!on_chip) hbm_bytes += 2 * out_bytes;
      e.on_chip_j += SramJ(2 * out_bytes, glb, t);
    }
    e.memory_j = HbmJ(hbm_bytes, t);
  } else {
    e.on_chip_j = SramJ(op_bytes, glb, t);
    e.memory_j = HbmJ(op_bytes, t);
  }
  return e;
}

double EnergyModel::StaticPowerW(const ArchConfig& arch) {
  const EnergyTechnology t = EnergyTechnologyFor(arch);
  return t.idle_w + t.static_w_per_mm2 * DieAreaMm2(arch);
}

double EnergyModel::PeakPowerW(const ArchConfig& a) {
  const EnergyTechnology t = EnergyTechnologyFor(a);
  const double word = static_cast<double>(a.word_bytes);
  const double macs_per_s = static_cast<double>(a.num_tc * a.pe_x * a.pe_y) * a.frequency_hz;
  const double buffer_bytes_per_s =
      macs_per_s * word * (1.0 / static_cast<double>(a.pe_x) + 1.0 / static_cast<double>(a.pe_y));
  const double lanes_per_s = static_cast<double>(a.num_vc * a.pe_vc) * a.frequency_hz;
  const double glb_bytes_per_s = a.glb_bandwidth_words_per_cycle * word * a.frequency_hz;
  return StaticPowerW(a) + macs_per_s * t.mac_pj * 1e-12 + lanes_per_s * t.lane_op_pj * 1e-12 +
         SramJ(buffer_bytes_per_s, static_cast<double>(a.l2_tc_bytes), t) +
         SramJ(glb_bytes_per_s, static_cast<double>(a.glb_bytes), t) +
         HbmJ(a.hbm_bandwidth_bytes_per_s, t);
}

}  // namespace phaze
