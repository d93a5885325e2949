#include "phaze/arch/area_model.hpp"

#include "phaze/core/paths.hpp"

namespace phaze {

namespace {

std::vector<std::pair<double, double>> ParseTable(const ConfigNode& node) {
  std::vector<std::pair<double, double>> table;
  for (const auto& row : node.Elements()) {
    auto cells = row.Elements();
    if (cells.size() != 2) row.Fail("expected a [bytes, um2] pair, found " + row.Describe());
    const double bytes = cells[0].AsPositiveDouble();
    const double area = cells[1].AsPositiveDouble();
    if (!table.empty() && bytes <= table.back().first) {
      cells[0].Fail("sizes must increase down the table");
    }
    table.emplace_back(bytes, area);
  }
  if (table.size() < 2) node.Fail("expected at least two [bytes, um2] rows");
  return table;
}

}  // namespace

AreaModel AreaModel::Parse(const ConfigNode& root) {
  root.ExpectKeys({"technology", "description", "tc_pe_um2", "vc_lane_um2", "l2_um2", "glb_um2"});
  AreaModel m;
  m.technology_ = root.Child("technology").AsString();
  m.tc_pe_um2_ = root.Child("tc_pe_um2").AsPositiveDouble();
  m.vc_lane_um2_ = root.Child("vc_lane_um2").AsPositiveDouble();
  m.l2_ = ParseTable(root.Child("l2_um2"));
  m.glb_ = ParseTable(root.Child("glb_um2"));
  return m;
}

AreaModel AreaModel::LoadFile(const std::string& path) {
  return Parse(ConfigNode::ParseFile(path));
}

double DieAreaMm2(const ArchConfig& arch) {
  if (arch.die_area_mm2 > 0) return arch.die_area_mm2;
  static const AreaModel area = AreaModel::Default();
  return area.Area(arch).TotalMm2();
}

AreaModel AreaModel::Default() {
  return LoadFile((ShareDirectory() / "area" / "22nm.yaml").string());
}

std::pair<double, bool> AreaModel::Lookup(const std::vector<std::pair<double, double>>& table,
                                          double bytes) {
  size_t hi = 1;
  while (hi + 1 < table.size() && table[hi].first < bytes) ++hi;
  const auto& [x0, y0] = table[hi - 1];
  const auto& [x1, y1] = table[hi];
  if (bytes == x0) return {y0, false};
  if (bytes == x1) return {y1, false};
  const bool outside = bytes < table.front().first || bytes > table.back().first;
  return {y0 + (y1 - y0) * (bytes - x0) / (x1 - x0), outside};
}

AreaBreakdown AreaModel::Area(const ArchConfig& a) const {
  AreaBreakdown b;
  const auto [l2_tc, tc_out] = Lookup(l2_, static_cast<double>(a.l2_tc_bytes));
  const auto [l2_vc, vc_out] = Lookup(l2_, static_cast<double>(a.l2_vc_bytes));
  const auto [glb, glb_out] = Lookup(glb_, static_cast<double>(a.glb_bytes));
  b.tensor_cores_um2 =
      static_cast<double>(a.num_tc) * (static_cast<double>(a.pe_x * a.pe_y) * tc_pe_um2_ + l2_tc);
  b.vector_cores_um2 =
      static_cast<double>(a.num_vc) * (static_cast<double>(a.pe_vc) * vc_lane_um2_ + l2_vc);
  b.glb_um2 = glb;
  b.extrapolated = tc_out || vc_out || glb_out;
  return b;
}

}  // namespace phaze
