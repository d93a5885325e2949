// The architecture search space (DESIGN §4) as data: value lists per template parameter, how pe_vc
// relates to pe_x, fixed memory-system figures, and the area window that keeps a config. The
// paper's space (share/arch/paper-space.yaml) gives exactly 29,360 configs; schema in
// share/arch/README.md.
//
// Enumeration: nested loops in the order num_tc, num_vc, pe_x, pe_y, glb (each list in the order
// written), pe_vc tied to pe_x or looped innermost-but-one; a config is kept iff
//   f·budget ≤ area ≤ budget,  f = min_area_fraction_single_core if num_tc = 1 or num_vc = 1,
//                              else min_area_fraction.
// Result order: decreasing area; equal areas keep enumeration order (a stable sort).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "phaze/arch/arch_config.hpp"
#include "phaze/arch/area_model.hpp"
#include "phaze/core/config_node.hpp"

namespace phaze {

struct ArchPoint {
  ArchConfig arch;
  double area_um2 = 0;
};

struct ArchSpace {
  std::string name;
  std::vector<std::int64_t> num_tc, num_vc, pe_x, pe_y, glb_bytes;
  std::vector<std::int64_t> pe_vc;  // empty: tied to pe_x
  double glb_bandwidth_words_per_cycle = 4096;
  // The reference's single-core rule: when num_tc = 1, min(max(bw·max(pe_x, pe_y)/256, 4), bw).
  bool scale_glb_bandwidth_for_single_core = true;
  std::int64_t hbm_bytes = 32LL << 30;
  double hbm_bandwidth_bytes_per_s = 1.2e12;
  double frequency_hz = 1.05e9;
  // Every candidate's FP8 rate (ArchConfig::fp8_tensor_ratio; 0: none). The area model does not
  // charge for FP8 datapaths: a space that sets it assumes them free.
  double fp8_tensor_ratio = 0;
  double area_budget_um2 = 0;
  std::string area_budget_source;  // "preset tpuv4" or "area_mm2"
  double min_area_fraction = 0.3;
  double min_area_fraction_single_core = 0.0;
  // `device: PRESET`: a space of exactly one fixed device (a GPU preset, say), its calibration
  // included — the Megatron planner's question: the best plan on a given device.
  std::optional<ArchConfig> device;

  static ArchSpace Parse(const ConfigNode& root, const AreaModel& area);
  static ArchSpace LoadFile(const std::string& path, const AreaModel& area);

  // The config for one point of the loops (L2 sizes by the 16-bytes-per-PE rule).
  ArchConfig Make(std::int64_t tc, std::int64_t vc, std::int64_t x, std::int64_t y,
                  std::int64_t pe_vc, std::int64_t glb) const;
  // Every kept config, by decreasing area.
  std::vector<ArchPoint> Enumerate(const AreaModel& area) const;
  // Loop iterations before the area window (for reports).
  std::int64_t CandidateCount() const;
};

}  // namespace phaze
