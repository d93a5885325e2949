#include "phaze/arch/cost_model.hpp"

#include <fmt/printf.h>

#include <cmath>
#include <numbers>

#include "phaze/core/error.hpp"
#include "phaze/core/paths.hpp"
#include "phaze/arch/area_model.hpp"

namespace phaze {

std::string_view ToString(YieldModel m) {
  switch (m) {
    case YieldModel::kPoisson:
      return "poisson";
    case YieldModel::kMurphy:
      return "murphy";
    case YieldModel::kNegativeBinomial:
      break;
  }
  return "negative_binomial";
}

CostModel CostModel::Parse(const ConfigNode& root) {
  root.ExpectKeys({"description", "wafer_diameter_mm", "yield_model", "clustering_alpha", "nodes",
                   "hbm_usd_per_gib", "packaging_usd", "test_usd", "lifetime_years",
                   "electricity_usd_per_kwh", "pue"});
  CostModel m;
  m.wafer_diameter_mm_ = root.Child("wafer_diameter_mm").AsPositiveDouble();
  m.yield_model_ = root.Child("yield_model")
                       .AsEnum({YieldModel::kPoisson, YieldModel::kMurphy,
                                YieldModel::kNegativeBinomial});
  m.alpha_ = root.Child("clustering_alpha").AsPositiveDouble();
  const ConfigNode nodes = root.Child("nodes");
  if (!nodes.IsMap() || nodes.Entries().empty()) {
    nodes.Fail("expected a map of process nodes (nm: {wafer_usd, defect_density_per_cm2})");
  }
  for (const auto& [key, node] : nodes.Entries()) {
    char* end = nullptr;
    const double nm = std::strtod(key.c_str(), &end);
    if (end == key.c_str() || *end != '\0' || !(nm > 0)) {
      node.Fail("expected a node size in nm as the key, found '" + key + "'");
    }
    node.ExpectKeys({"wafer_usd", "defect_density_per_cm2"});
    m.nodes_[nm] = {node.Child("wafer_usd").AsPositiveDouble(),
                    node.Child("defect_density_per_cm2").AsNonNegativeDouble()};
  }
  m.hbm_usd_per_gib_ = root.Child("hbm_usd_per_gib").AsNonNegativeDouble();
  m.packaging_usd_ = root.Child("packaging_usd").AsNonNegativeDouble();
  m.test_usd_ = root.Child("test_usd").AsNonNegativeDouble();
  m.lifetime_years_ = root.Child("lifetime_years").AsPositiveDouble();
  m.electricity_usd_per_kwh_ = root.Child("electricity_usd_per_kwh").AsNonNegativeDouble();
  m.pue_ = root.Child("pue").AsPositiveDouble();
  if (m.pue_ < 1) root.Child("pue").Fail("expected a PUE of at least 1");
  if (m.wafer_diameter_mm_ > 1000) root.Child("wafer_diameter_mm").Fail("expected at most 1000 mm");
  return m;
}

CostModel CostModel::LoadFile(const std::string& path) { return Parse(ConfigNode::ParseFile(path)); }

CostModel CostModel::Default() {
  return LoadFile((ShareDirectory() / "cost" / "cost.yaml").string());
}

double CostModel::DiesPerWafer(double d, double a) {
  if (!(a > 0) || !(d > 0)) return 0;
  const double pi = std::numbers::pi;
  return std::max(0.0, std::floor(pi * (d / 2) * (d / 2) / a - pi * d / std::sqrt(2 * a)));
}

double CostModel::Yield(YieldModel model, double area_mm2, double d0, double alpha) {
  const double ad = area_mm2 / 100 * d0;  // mm² → cm²
  if (ad <= 0) return 1;
  switch (model) {
    case YieldModel::kPoisson:
      return std::exp(-ad);
    case YieldModel::kMurphy: {
      const double y = (1 - std::exp(-ad)) / ad;
      return y * y;
    }
    case YieldModel::kNegativeBinomial:
      break;
  }
  return std::pow(1 + ad / alpha, -alpha);
}

const CostModel::Node& CostModel::NodeFor(double node_nm, double* listed_nm) const {
  if (nodes_.empty()) throw Error("cost model: no process node listed");
  auto best = nodes_.begin();
  for (auto it = nodes_.begin(); it != nodes_.end(); ++it) {
    if (std::abs(it->first - node_nm) < std::abs(best->first - node_nm)) best = it;
  }
  if (listed_nm) *listed_nm = best->first;
  return best->second;
}

DeviceCost CostModel::Device(const ArchConfig& arch) const {
  DeviceCost c;
  const Node& node = NodeFor(arch.node_nm);
  c.die_area_mm2 = DieAreaMm2(arch);
  c.dies_per_wafer = DiesPerWafer(wafer_diameter_mm_, c.die_area_mm2);
  c.yield = Yield(yield_model_, c.die_area_mm2, node.defect_density_per_cm2, alpha_);
  const double good = c.dies_per_wafer * c.yield;
  if (!(good > 0)) throw Error("architecture '" + arch.name + "': " + Unbuildable(arch));
  c.die_usd = node.wafer_usd / good;
  c.hbm_usd = arch.HbmGiB() * hbm_usd_per_gib_;
  c.packaging_usd = packaging_usd_ + test_usd_;
  return c;
}

std::string CostModel::Unbuildable(const ArchConfig& arch) const {
  const double area = DieAreaMm2(arch);
  const Node& node = NodeFor(arch.node_nm);
  if (DiesPerWafer(wafer_diameter_mm_, area) * Yield(yield_model_, area,
                                                     node.defect_density_per_cm2, alpha_) > 0) {
    return "";
  }
  return fmt::sprintf("a die of %.0f mm² does not fit a %.0f mm wafer (the cost model's wafer_diameter_mm)",
                      area, wafer_diameter_mm_);
}

double CostModel::HourlyUsd(const ArchConfig& arch, double power_w,
                            double hourly_override) const {
  if (hourly_override > 0) return hourly_override;
  if (arch.hourly_usd > 0) return arch.hourly_usd;
  if (!Unbuildable(arch).empty()) return 0;  // not priced
  constexpr double kHoursPerYear = 8766;  // 365.25 days
  return Device(arch).TotalUsd() / (lifetime_years_ * kHoursPerYear) +
         power_w / 1000 * pue_ * electricity_usd_per_kwh_;
}

}  // namespace phaze
