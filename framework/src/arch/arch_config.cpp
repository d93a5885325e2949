#include "phaze/arch/arch_config.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "phaze/arch/technology.hpp"
#include "phaze/core/error.hpp"
#include "phaze/core/limits.hpp"
#include "phaze/core/preset_file.hpp"
#include "phaze/core/text_format.hpp"

namespace phaze {

namespace {

constexpr std::int64_t kMiB = 1024 * 1024;
constexpr std::int64_t kGiB = 1024 * kMiB;

std::string SizeText(std::int64_t bytes) {
  if (bytes % kGiB == 0) return std::to_string(bytes / kGiB) + "GiB";
  if (bytes % kMiB == 0) return std::to_string(bytes / kMiB) + "MiB";
  if (bytes % 1024 == 0) return std::to_string(bytes / 1024) + "KiB";
  return std::to_string(bytes) + "B";
}

// One of two alternative keys for a size (e.g. glb_mib or glb_bytes); `unit` scales the first.
std::int64_t ReadSize(const ConfigNode& root, std::string_view scaled_key, std::int64_t unit,
                      std::string_view bytes_key, std::int64_t fallback) {
  auto scaled = root.Optional(scaled_key);
  auto bytes = root.Optional(bytes_key);
  if (scaled && bytes) {
    bytes->Fail("give either " + std::string(scaled_key) + " or " + std::string(bytes_key) +
                ", not both");
  }
  if (scaled) {
    const double v = scaled->AsPositiveDouble() * static_cast<double>(unit);
    if (v > static_cast<double>(limits::kMemoryBytes)) {
      scaled->Fail("expected at most " + std::to_string(limits::kMemoryBytes / unit) +
                   " (1 PiB, phaze's limit: see share/config/README.md, Limits)");
    }
    return static_cast<std::int64_t>(v);
  }
  return bytes ? bytes->AsIntInRange(1, limits::kMemoryBytes) : fallback;
}

}  // namespace

ArchConfig ArchConfig::WithHbmGiB(double gib) const {
  ArchConfig a = *this;
  a.hbm_bytes = std::llround(gib * 1073741824.0);
  return a;
}

std::string ArchConfig::GeneratedName() const {
  return "tc" + std::to_string(num_tc) + "x" + std::to_string(pe_x) + "x" + std::to_string(pe_y) +
         "-vc" + std::to_string(num_vc) + "x" + std::to_string(pe_vc) + "-glb" +
         SizeText(glb_bytes);
}

std::string ArchConfig::Validate() const {
  if (num_tc < 1 || num_vc < 1 || pe_x < 1 || pe_y < 1 || pe_vc < 1) {
    return "core counts and array sizes must be ≥ 1";
  }
  if (glb_bytes <= 0 || l2_tc_bytes <= 0 || l2_vc_bytes <= 0 || hbm_bytes <= 0) {
    return "buffer and HBM sizes must be > 0";
  }
  if (!(glb_bandwidth_words_per_cycle > 0) || !(hbm_bandwidth_bytes_per_s > 0) ||
      !(frequency_hz > 0) || word_bytes < 1) {
    return "bandwidths and the frequency must be > 0, word_bytes ≥ 1";
  }
  if (!(collective_overlap >= 0 && collective_overlap <= 1)) {
    return "collective_overlap must be a fraction in [0, 1]";
  }
  if (!(host_kernel_s >= 0) || !std::isfinite(host_kernel_s)) return "host_kernel_s must be >= 0";
  if (!(fp8_tensor_ratio >= 0 && fp8_tensor_ratio <= 64)) return "fp8_tensor_ratio must be in [0, 64]";
  if (!(tdp_w >= 0) || !(power_limit_w >= 0) || !std::isfinite(tdp_w + power_limit_w)) {
    return "tdp_w and power_limit_w must be >= 0";
  }
  if (power_limit_w > 0 && !(tdp_w > 0)) {
    return "power_limit_w needs tdp_w (the calibration's limit)";
  }
  if (power_limit_w > tdp_w)
    return "power_limit_w above tdp_w: the calibration's clock is the most";
  return "";
}

Json ArchConfig::ToJson() const {
  Json j = Json::MakeObject();
  j["name"] = name;
  j["num_tc"] = num_tc;
  j["num_vc"] = num_vc;
  j["pe_x"] = pe_x;
  j["pe_y"] = pe_y;
  j["pe_vc"] = pe_vc;
  j["glb_bytes"] = glb_bytes;
  j["glb_bandwidth_words_per_cycle"] = glb_bandwidth_words_per_cycle;
  j["l2_tc_bytes"] = l2_tc_bytes;
  j["l2_vc_bytes"] = l2_vc_bytes;
  j["hbm_bytes"] = hbm_bytes;
  j["hbm_bandwidth_bytes_per_s"] = hbm_bandwidth_bytes_per_s;
  j["frequency_hz"] = frequency_hz;
  j["word_bytes"] = word_bytes;
  if (fp8_tensor_ratio > 0) j["fp8_tensor_ratio"] = fp8_tensor_ratio;
  if (!calibration.empty()) {
    Json c = Json::MakeObject();
    for (const auto& [k, v] : calibration) c[k] = v;
    j["calibration"] = c;
  }
  if (!energy.empty()) {
    Json c = Json::MakeObject();
    for (const auto& [k, v] : energy) c[k] = v;
    j["energy"] = c;
  }
  if (die_area_mm2 > 0) j["die_area_mm2"] = die_area_mm2;
  j["node_nm"] = node_nm;
  if (hourly_usd > 0) j["hourly_usd"] = hourly_usd;
  if (!estimator.empty()) {
    j["estimator"] = estimator;
  }
  if (collective_overlap != 1.0) j["collective_overlap"] = collective_overlap;
  if (host_kernel_s != 0) j["host_kernel_s"] = host_kernel_s;
  if (tdp_w > 0) j["tdp_w"] = tdp_w;
  if (power_limit_w > 0) j["power_limit_w"] = power_limit_w;
  j["peak_tensor_flops_per_s"] = PeakTensorFlopsPerS();
  return j;
}

ArchConfig ParseArchConfig(const ConfigNode& root) {
  if (!root.IsMap()) root.Fail("expected an architecture (a map), found " + root.Describe());
  // clang-format off
  root.ExpectKeys({"name", "description", "num_tc", "num_vc", "pe_x", "pe_y", "pe_vc", "glb_mib",
                   "glb_bytes", "glb_bandwidth_words_per_cycle", "l2_tc_bytes", "l2_vc_bytes",
                   "hbm_gib", "hbm_bytes", "hbm_bandwidth_bytes_per_s", "frequency_hz",
                   "word_bytes", "fp8_tensor_ratio", "collective_overlap", "host_kernel_s",
                   "calibration", "energy", "estimator", "die_area_mm2", "node_nm", "hourly_usd",
                   "tdp_w", "power_limit_w"});
  // clang-format on
  ArchConfig a;
  a.num_tc = root.Child("num_tc").AsIntInRange(1, limits::kCores);
  a.num_vc = root.Child("num_vc").AsIntInRange(1, limits::kCores);
  a.pe_x = root.Child("pe_x").AsIntInRange(1, limits::kPeDim);
  a.pe_y = root.Child("pe_y").AsIntInRange(1, limits::kPeDim);
  a.pe_vc = root.Optional("pe_vc") ? root.Child("pe_vc").AsIntInRange(1, limits::kPeDim) : a.pe_x;
  a.glb_bytes = ReadSize(root, "glb_mib", kMiB, "glb_bytes", -1);
  if (a.glb_bytes < 0) root.Child("glb_mib").Fail("missing: give glb_mib or glb_bytes");
  // Rates of at least 1 (limits::kMinRate): every time derived from them stays finite.
  auto rate = [](const ConfigNode& n, const char* unit) { return n.AsRate(limits::kMinRate, unit); };
  if (auto n = root.Optional("glb_bandwidth_words_per_cycle")) {
    a.glb_bandwidth_words_per_cycle = rate(*n, "word per cycle");
  }
  a.l2_tc_bytes = root.Optional("l2_tc_bytes") ? root.Child("l2_tc_bytes").AsIntInRange(1, limits::kMemoryBytes)
                                               : ArchConfig::DefaultL2Bytes(a.pe_x * a.pe_y);
  a.l2_vc_bytes = root.Optional("l2_vc_bytes") ? root.Child("l2_vc_bytes").AsIntInRange(1, limits::kMemoryBytes)
                                               : ArchConfig::DefaultL2Bytes(a.pe_vc);
  a.hbm_bytes = ReadSize(root, "hbm_gib", kGiB, "hbm_bytes", 32 * kGiB);
  if (auto n = root.Optional("hbm_bandwidth_bytes_per_s"))
    a.hbm_bandwidth_bytes_per_s = rate(*n, "byte per second");
  if (auto n = root.Optional("frequency_hz")) a.frequency_hz = rate(*n, "Hz");
  if (auto n = root.Optional("word_bytes")) a.word_bytes = n->AsIntInRange(1, limits::kDtypeBytes);
  if (auto n = root.Optional("fp8_tensor_ratio")) {
    a.fp8_tensor_ratio = n->AsNonNegativeDouble();
    if (a.fp8_tensor_ratio > 64) n->Fail("expected a multiple of the 16-bit rate in [0, 64]");
  }
  if (auto n = root.Optional("collective_overlap")) {
    a.collective_overlap = n->AsNonNegativeDouble();
    if (a.collective_overlap > 1) n->Fail("expected a fraction in [0, 1]");
  }
  if (auto n = root.Optional("host_kernel_s")) a.host_kernel_s = n->AsDuration();
  if (auto e = root.Optional("estimator")) a.estimator = e->AsString();
  if (auto c = root.Optional("calibration")) {
    if (!c->IsMap()) c->Fail("expected a map of named numbers, found " + c->Describe());
    // For the device model (the default estimator) the keys and ranges are its technology
    // parameters'; another estimator's calibration is its own to check (AsDouble: finite).
    const bool device = a.estimator.empty() || a.estimator == "device" || a.estimator == "gpu";
    for (const auto& [key, value] : c->Entries()) {
      const double x = value.AsDouble();
      if (device) {
        if (const std::string why = DeviceTechnology::Check(key, x); !why.empty()) value.Fail(why);
      }
      a.calibration[key] = x;
    }
  }
  auto positive = [](const ConfigNode& n, const char* unit) {
    const double x = n.AsPositiveDouble();
    if (x > 1e9) n.Fail(std::string("expected at most 1e9 ") + unit + ", found " + n.AsString());
    return x;
  };
  if (auto n = root.Optional("die_area_mm2")) a.die_area_mm2 = positive(*n, "mm²");
  if (auto n = root.Optional("node_nm")) a.node_nm = positive(*n, "nm");
  if (auto n = root.Optional("hourly_usd")) a.hourly_usd = positive(*n, "USD per hour");
  if (auto n = root.Optional("tdp_w")) a.tdp_w = positive(*n, "W");
  if (auto n = root.Optional("power_limit_w")) {
    a.power_limit_w = positive(*n, "W");
    if (!root.Optional("tdp_w")) {
      n->Fail("needs tdp_w beside it: the board power the calibration was measured at");
    }
    if (a.power_limit_w > a.tdp_w) {
      n->Fail("above tdp_w (" + FormatNumber("%g", a.tdp_w) +
              " W): the clock the calibration was measured at is the most the device runs at");
    }
  }
  if (auto c = root.Optional("energy")) {
    if (!c->IsMap()) c->Fail("expected a map of the energy model's parameters, found " + c->Describe());
    for (const auto& [key, value] : c->Entries()) {
      const double x = value.AsDouble();
      if (const std::string why = EnergyTechnology::Check(key, x); !why.empty()) value.Fail(why);
      a.energy[key] = x;
    }
  }
  a.name = root.Optional("name") ? root.Child("name").AsString() : a.GeneratedName();
  return a;
}

ArchConfig LoadArchConfig(const std::string& name_or_path) {
  // Search spaces live beside the presets; they are not listed as presets.
  const auto preset = [](const std::string& stem) { return stem.find("space") == std::string::npos; };
  return ParseArchConfig(
      ConfigNode::ParseFile(FindPresetFile(name_or_path, "arch", "architecture", preset)));
}

}  // namespace phaze
