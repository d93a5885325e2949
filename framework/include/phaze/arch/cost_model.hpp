// The cost model (DESIGN §11): what a device costs to make and what an hour of it costs, from
// constants in one cited YAML (share/cost/cost.yaml, sources in share/cost/README.md).
//
// * Dies per wafer (Hennessy & Patterson, "Cost of an Integrated Circuit"):
//     DPW = ⌊π·(D/2)² / A − π·D / √(2·A)⌋   (D the wafer diameter, A the die area, in mm)
// * Die yield, with D0 the node's defect density per cm² and A in cm²:
//     poisson            Y = e^(−A·D0)
//     murphy             Y = ((1 − e^(−A·D0)) / (A·D0))²
//     negative_binomial  Y = (1 + A·D0/α)^(−α)   (Stapper; α the clustering parameter)
// * Die cost = wafer price / (DPW · Y); device cost = die + HBM GiB · $/GiB + packaging + test.
// * Hour of a device: its preset's rental price (ArchConfig::hourly_usd, or the run config's
//   override) when it has one, else the device cost over its service life plus its energy,
//   device cost / (lifetime_years · 8766 h) + power · PUE · $/kWh.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "phaze/arch/arch_config.hpp"
#include "phaze/core/config_node.hpp"

namespace phaze {

enum class YieldModel { kPoisson, kMurphy, kNegativeBinomial };
std::string_view ToString(YieldModel model);  // poisson | murphy | negative_binomial

struct DeviceCost {
  double die_area_mm2 = 0;
  double dies_per_wafer = 0;
  double yield = 0;
  double die_usd = 0;
  double hbm_usd = 0;
  double packaging_usd = 0;  // packaging and test
  double TotalUsd() const { return die_usd + hbm_usd + packaging_usd; }
};

class CostModel {
 public:
  struct Node {
    double wafer_usd = 0;
    double defect_density_per_cm2 = 0;
  };

  static CostModel Parse(const ConfigNode& root);
  static CostModel LoadFile(const std::string& path);
  // share/cost/cost.yaml
  static CostModel Default();

  static double DiesPerWafer(double wafer_diameter_mm, double die_area_mm2);
  static double Yield(YieldModel model, double die_area_mm2, double defect_density_per_cm2,
                      double alpha);

  // The node whose figures a die of `node_nm` uses: the listed node nearest to it (ties: the
  // smaller). Throws Error when no node is listed.
  const Node& NodeFor(double node_nm, double* listed_nm = nullptr) const;
  // The device's cost with its HBM (arch.hbm_bytes); an Error when the die cannot be built.
  DeviceCost Device(const ArchConfig& arch) const;
  // Why the die cannot be built (no good die per wafer: it is larger than the wafer holds), or "".
  std::string Unbuildable(const ArchConfig& arch) const;
  // Dollars per device-hour drawing `power_w` on average; `hourly_override` > 0 wins, then the
  // arch's hourly_usd, then ownership (header comment); 0 (not priced) when the die cannot be
  // built (Unbuildable) and no price is given.
  double HourlyUsd(const ArchConfig& arch, double power_w, double hourly_override = 0) const;

 private:
  double wafer_diameter_mm_ = 300;
  YieldModel yield_model_ = YieldModel::kNegativeBinomial;
  double alpha_ = 3;
  std::map<double, Node> nodes_;
  double hbm_usd_per_gib_ = 0;
  double packaging_usd_ = 0;
  double test_usd_ = 0;
  double lifetime_years_ = 4;
  double electricity_usd_per_kwh_ = 0;
  double pue_ = 1;
};

}  // namespace phaze
