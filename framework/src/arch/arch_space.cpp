#include "phaze/arch/arch_space.hpp"

#include <algorithm>

#include "phaze/core/error.hpp"
#include "phaze/core/limits.hpp"

namespace phaze {

namespace {

// A list of positive integers, or {powers_of_two: [from, to]} (from → to, either direction).
// Each value (before `scale`) in [1, hi]: phaze's limit for the field (phaze/core/limits.hpp).
std::vector<std::int64_t> ReadValues(const ConfigNode& node, std::int64_t hi, std::int64_t scale = 1) {
  std::vector<std::int64_t> values;
  if (node.IsMap()) {
    node.ExpectKeys({"powers_of_two"});
    auto ends = node.Child("powers_of_two").Elements();
    if (ends.size() != 2) node.Child("powers_of_two").Fail("expected [from, to]");
    const std::int64_t from = ends[0].AsIntInRange(1, hi), to = ends[1].AsIntInRange(1, hi);
    for (auto* e : {&ends[0], &ends[1]}) {
      const std::int64_t v = e->AsIntInRange(1, hi);
      if ((v & (v - 1)) != 0) e->Fail("expected a power of two, found " + e->Describe());
    }
    if (from >= to) {
      for (std::int64_t v = from; v >= to; v /= 2) values.push_back(v * scale);
    } else {
      for (std::int64_t v = from; v <= to; v *= 2) values.push_back(v * scale);
    }
  } else {
    for (const auto& e : node.Elements()) {
      const std::int64_t v = e.AsIntInRange(1, hi) * scale;
      // A value twice would make every config it is in twice, under one name.
      if (std::find(values.begin(), values.end(), v) != values.end()) {
        e.Fail("listed twice: give each value once");
      }
      values.push_back(v);
    }
    if (values.empty()) node.Fail("expected at least one value");
  }
  return values;
}

}  // namespace

ArchSpace ArchSpace::Parse(const ConfigNode& root, const AreaModel& area) {
  if (root.Has("device")) {
    root.ExpectKeys({"name", "description", "device"});
    ArchSpace s;
    s.name = root.Optional("name") ? root.Child("name").AsString() : "device";
    try {
      s.device = LoadArchConfig(root.Child("device").AsString());
    } catch (const ConfigError& e) {
      root.Child("device").Fail(e.what());
    }
    s.area_budget_um2 = area.AreaUm2(*s.device);
    s.area_budget_source = "device " + s.device->name;
    return s;
  }
  root.ExpectKeys({"name", "description", "num_tc", "num_vc", "pe_x", "pe_y", "pe_vc", "glb_mib",
                   "glb_bandwidth_words_per_cycle", "scale_glb_bandwidth_for_single_core",
                   "hbm_gib", "hbm_bandwidth_bytes_per_s", "frequency_hz", "fp8_tensor_ratio",
                   "area_budget",
                   "min_area_fraction", "min_area_fraction_single_core"});
  ArchSpace s;
  s.name = root.Child("name").AsString();
  s.num_tc = ReadValues(root.Child("num_tc"), limits::kCores);
  s.num_vc = ReadValues(root.Child("num_vc"), limits::kCores);
  s.pe_x = ReadValues(root.Child("pe_x"), limits::kPeDim);
  s.pe_y = ReadValues(root.Child("pe_y"), limits::kPeDim);
  s.glb_bytes = ReadValues(root.Child("glb_mib"), limits::kMemoryBytes >> 20, 1 << 20);
  if (auto n = root.Optional("pe_vc")) {
    if (!(n->IsScalar() && n->AsString() == "pe_x")) s.pe_vc = ReadValues(*n, limits::kPeDim);
  }
  if (auto n = root.Optional("glb_bandwidth_words_per_cycle"))
    s.glb_bandwidth_words_per_cycle = n->AsPositiveDouble();
  if (auto n = root.Optional("scale_glb_bandwidth_for_single_core"))
    s.scale_glb_bandwidth_for_single_core = n->AsBool();
  if (auto n = root.Optional("hbm_gib"))
    s.hbm_bytes = static_cast<std::int64_t>(n->AsPositiveDouble() * (1 << 30));
  if (auto n = root.Optional("hbm_bandwidth_bytes_per_s"))
    s.hbm_bandwidth_bytes_per_s = n->AsPositiveDouble();
  if (auto n = root.Optional("frequency_hz")) s.frequency_hz = n->AsPositiveDouble();
  if (auto n = root.Optional("fp8_tensor_ratio")) {
    s.fp8_tensor_ratio = n->AsNonNegativeDouble();
    if (s.fp8_tensor_ratio > 64) n->Fail("expected a multiple of the 16-bit rate in [0, 64]");
  }
  const ConfigNode budget = root.Child("area_budget");
  budget.ExpectKeys({"preset", "area_mm2"});
  if (budget.Has("preset") == budget.Has("area_mm2")) {
    budget.Fail("give exactly one of 'preset' (its area is the budget) or 'area_mm2'");
  }
  if (auto n = budget.Optional("preset")) {
    s.area_budget_um2 =
        area.AreaUm2(LoadNamed(n, [&] { return LoadArchConfig(n->AsString()); }));
    s.area_budget_source = "preset " + n->AsString();
  } else {
    s.area_budget_um2 = budget.Child("area_mm2").AsPositiveDouble() * 1e6;
    s.area_budget_source = "area_mm2";
  }
  auto fraction = [](const ConfigNode& n) {
    const double f = n.AsNonNegativeDouble();
    if (f > 1) n.Fail("expected a fraction in [0, 1], found " + n.Describe());
    return f;
  };
  if (auto n = root.Optional("min_area_fraction")) s.min_area_fraction = fraction(*n);
  if (auto n = root.Optional("min_area_fraction_single_core"))
    s.min_area_fraction_single_core = fraction(*n);
  // Enumeration computes every candidate's area before the window, the sort and any --limit:
  // bounded so that it takes seconds (the paper's space has 75,712 candidates, 0.3 s).
  if (s.CandidateCount() > limits::kSpaceCandidates) {
    root.Fail("the space has " + std::to_string(s.CandidateCount()) +
              " candidates (the product of the value counts), more than phaze's limit of " +
              std::to_string(limits::kSpaceCandidates) +
              " (share/config/README.md, Limits); narrow some ranges");
  }
  return s;
}

ArchSpace ArchSpace::LoadFile(const std::string& path, const AreaModel& area) {
  return Parse(ConfigNode::ParseFile(path), area);
}

ArchConfig ArchSpace::Make(std::int64_t tc, std::int64_t vc, std::int64_t x, std::int64_t y,
                           std::int64_t pe_vc, std::int64_t glb) const {
  ArchConfig a;
  a.num_tc = tc;
  a.num_vc = vc;
  a.pe_x = x;
  a.pe_y = y;
  a.pe_vc = pe_vc;
  a.glb_bytes = glb;
  a.glb_bandwidth_words_per_cycle = glb_bandwidth_words_per_cycle;
  if (scale_glb_bandwidth_for_single_core && tc == 1) {
    const double scaled =
        glb_bandwidth_words_per_cycle * static_cast<double>(std::max(x, y)) / 256.0;
    a.glb_bandwidth_words_per_cycle =
        std::min(std::max(scaled, 4.0), glb_bandwidth_words_per_cycle);
  }
  a.l2_tc_bytes = ArchConfig::DefaultL2Bytes(x * y);
  a.l2_vc_bytes = ArchConfig::DefaultL2Bytes(pe_vc);
  a.hbm_bytes = hbm_bytes;
  a.hbm_bandwidth_bytes_per_s = hbm_bandwidth_bytes_per_s;
  a.frequency_hz = frequency_hz;
  a.fp8_tensor_ratio = fp8_tensor_ratio;
  a.name = a.GeneratedName();
  return a;
}

std::int64_t ArchSpace::CandidateCount() const {
  if (device) return 1;
  const std::int64_t vc_lanes = pe_vc.empty() ? 1 : static_cast<std::int64_t>(pe_vc.size());
  return static_cast<std::int64_t>(num_tc.size() * num_vc.size() * pe_x.size() * pe_y.size() *
                                   glb_bytes.size()) *
         vc_lanes;
}

std::vector<ArchPoint> ArchSpace::Enumerate(const AreaModel& area) const {
  if (device) return {{*device, area.AreaUm2(*device)}};
  std::vector<ArchPoint> kept;
  for (auto tc : num_tc) {
    for (auto vc : num_vc) {
      const double f = (tc == 1 || vc == 1) ? min_area_fraction_single_core : min_area_fraction;
      for (auto x : pe_x) {
        for (auto y : pe_y) {
          const std::vector<std::int64_t> lanes =
              pe_vc.empty() ? std::vector<std::int64_t>{x} : pe_vc;
          for (auto lane : lanes) {
            for (auto glb : glb_bytes) {
              ArchConfig a = Make(tc, vc, x, y, lane, glb);
              const double um2 = area.AreaUm2(a);
              if (um2 <= area_budget_um2 && um2 >= f * area_budget_um2) kept.push_back({a, um2});
            }
          }
        }
      }
    }
  }
  std::stable_sort(kept.begin(), kept.end(),
                   [](const ArchPoint& a, const ArchPoint& b) { return a.area_um2 > b.area_um2; });
  return kept;
}

}  // namespace phaze
