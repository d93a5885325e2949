// The energy model (DESIGN §11): what an op costs in joules on a chip of the template, beside the
// device model's seconds (device_model.hpp), from the same work counts and the same tiling.
//
// Dynamic energy of one op, on all cores (an op's energy does not depend on how many cores share
// it; only its time does):
// * compute: MACs · mac_pj (a GEMM's batch·m·n·k) + lane operations · lane_op_pj (Σ over its
//   vector work of cycles(function) · elements, the cycle table of vector_cycles.hpp; folded scale
//   and mask count here too);
// * on-chip: bytes moved through an SRAM of S bytes cost sram_pj_per_byte_1mib · √(S / 1 MiB)
//   each (the wire-dominated √S law of Horowitz's SRAM figures: 8 KiB, 32 KiB and 1 MiB reads fit
//   it within 12%). A GEMM reads batch·m·n·k·word·(1/pe_x + 1/pe_y) bytes from the tensor cores'
//   buffers (each operand word feeds a row or column of the array) and moves its tiles' operands
//   through the GLB, Σ tiles (tm + tn)·k·word, plus its output once (the tile the device model
//   picks); a vector op moves its bytes through the GLB once;
// * memory: HBM bytes (the device model's: a GEMM's operands and result, or the blocked re-reads
//   of a GEMM larger than the GLB; an epilogue's pass over the output; a vector op's bytes) ·
//   8 · hbm_pj_per_bit.
// Static power of a device: idle_w + static_w_per_mm2 · die area (ArchConfig::die_area_mm2 of a
// real chip, or the area model's 22 nm area of a template chip), drawn for the whole step.
//
// Technology parameters (EnergyTechnology): defaults for the template's 22 nm node, with sources in
// share/energy/README.md; a preset's `energy:` map overrides them (a real chip's node, its die, its
// HBM generation).
#pragma once

#include <map>
#include <string>

#include "phaze/arch/arch_config.hpp"
#include "phaze/core/energy.hpp"
#include "phaze/estimate/device_model.hpp"
#include "phaze/estimate/estimator.hpp"

namespace phaze {

// EnergyTechnology (arch/technology.hpp) for `arch`: defaults, then arch.energy (an Error on a
// value Check refuses).
EnergyTechnology EnergyTechnologyFor(const ArchConfig& arch);


class EnergyModel {
 public:
  // Dynamic energy of one op on all cores (compute, on-chip, memory; network_j and static_j 0).
  // Collectives have none here: the network model owns their bytes. `vector_cycles` overrides the
  // shared cycle table (an estimator's params); a function in neither counts one cycle. `tile`:
  // the GEMM tile the device model ran (null: the one it would pick with the arch's calibration).
  static Energy Op(const OpWork& op, const ArchConfig& arch,
                   const std::map<std::string, double>& vector_cycles = {},
                   const GemmTile* tile = nullptr);
  // Joules of moving `bytes` through an SRAM of `sram_bytes`.
  static double SramJ(double bytes, double sram_bytes, const EnergyTechnology& t);
  // Joules of `bytes` of HBM traffic.
  static double HbmJ(double bytes, const EnergyTechnology& t) {
    return bytes * 8 * t.hbm_pj_per_bit * 1e-12;
  }
  // Watts the device draws whatever it does: idle_w + static_w_per_mm2 · die area.
  static double StaticPowerW(const ArchConfig& arch);
  // An upper bound on the device's power: static + every MAC and lane busy every cycle, each MAC
  // with its buffer reads, and HBM at full bandwidth (what a TDP must cover).
  static double PeakPowerW(const ArchConfig& arch);
};

}  // namespace phaze
