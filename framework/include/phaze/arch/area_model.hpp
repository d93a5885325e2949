// Accelerator area (DESIGN §4): a linear model at 22 nm that reproduces the reference's
// Accelergy/CACTI figures exactly —
//   area = num_tc·(pe_x·pe_y·tc_pe + L2(l2_tc)) + num_vc·(pe_vc·vc_lane + L2(l2_vc)) + GLB(glb)
// with per-PE areas and SRAM tables read from a data file (share/area/22nm.yaml). Sizes between
// table points are interpolated linearly, sizes beyond the last point extrapolated from the last
// segment (flagged in the breakdown).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "phaze/arch/arch_config.hpp"
#include "phaze/core/config_node.hpp"

namespace phaze {

struct AreaBreakdown {
  double tensor_cores_um2 = 0;  // PEs and L2 of every tensor core
  double vector_cores_um2 = 0;
  double glb_um2 = 0;
  bool extrapolated = false;  // a buffer size outside its table
  double TotalUm2() const { return tensor_cores_um2 + vector_cores_um2 + glb_um2; }
  double TotalMm2() const { return TotalUm2() * 1e-6; }
};

class AreaModel {
 public:
  static AreaModel Parse(const ConfigNode& root);
  static AreaModel LoadFile(const std::string& path);
  // share/area/22nm.yaml
  static AreaModel Default();

  AreaBreakdown Area(const ArchConfig& arch) const;
  double AreaUm2(const ArchConfig& arch) const { return Area(arch).TotalUm2(); }
  const std::string& Technology() const { return technology_; }

 private:
  // (bytes, µm²) sorted by bytes; returns the area and whether it extrapolated.
  static std::pair<double, bool> Lookup(const std::vector<std::pair<double, double>>& table,
                                        double bytes);
  std::string technology_;
  double tc_pe_um2_ = 0;
  double vc_lane_um2_ = 0;
  std::vector<std::pair<double, double>> l2_;
  std::vector<std::pair<double, double>> glb_;
};

// A device's die area in mm²: the architecture's die_area_mm2 (a real chip's published die), else
// the default area model's 22 nm area of the template chip. The energy model's static power and
// the cost model's die cost scale with it.
double DieAreaMm2(const ArchConfig& arch);

}  // namespace phaze
