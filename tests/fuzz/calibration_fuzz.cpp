// libFuzzer target: the readers of what a chip and its cluster are — architecture files with their
// `calibration:` (the device model's technology) and `energy:` maps, system files (network levels
// with bandwidth, latency and energy per bit) and cost-model files. Bad input must be a ConfigError
// (a located message). Oracle, independent of the readers: whatever they accept, the models built
// on it give finite, non-negative figures — the device model's time and energy of a GEMM and of a
// vector op, the die's static and peak power and cost, a collective's time and energy on every
// level — so no accepted file can put an inf or a nan into a result.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <string>

#include "phaze/arch/arch_config.hpp"
#include "phaze/arch/area_model.hpp"
#include "phaze/arch/cost_model.hpp"
#include "phaze/core/config_node.hpp"
#include "phaze/core/error.hpp"
#include "phaze/estimate/device_model.hpp"
#include "phaze/estimate/energy_model.hpp"
#include "phaze/network/network.hpp"

namespace {

void Check(double x, const char* what, const std::string& text) {
  if (std::isfinite(x) && x >= 0) return;
  std::cerr << "calibration_fuzz: " << what << " = " << x << " for the accepted document:\n"
            << text << "\n";
  std::abort();
}

void CheckEnergy(const phaze::Energy& e, const std::string& text) {
  Check(e.compute_j, "energy.compute_j", text);
  Check(e.on_chip_j, "energy.on_chip_j", text);
  Check(e.memory_j, "energy.memory_j", text);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > 8192) return 0;
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::optional<phaze::ConfigNode> parsed;
  try {
    parsed = phaze::ConfigNode::ParseString(text, "fuzz.yaml");
  } catch (const phaze::ConfigError&) {
    return 0;
  }
  const phaze::ConfigNode& root = *parsed;
  // An architecture file.
  try {
    const phaze::ArchConfig arch = phaze::ParseArchConfig(root);
    const phaze::DeviceModel model("device", {}, {});
    for (const phaze::OpWork& op :
         {phaze::OpWork::Gemm({4, 2048, 1024, 4096}, arch.word_bytes),
          phaze::OpWork::Gemm({1, 1, 1, 1}, arch.word_bytes),
          phaze::OpWork::Vector("gelu", 1 << 22, arch.word_bytes),
          phaze::OpWork::Vector("softmax", 1 << 20, arch.word_bytes, 1024)}) {
      try {
        const phaze::OpEstimate e = model.Estimate(op, arch);
        Check(e.single_core_s, "single_core_s", text);
        Check(e.all_cores_s, "all_cores_s", text);
        if (e.energy) CheckEnergy(*e.energy, text);
        CheckEnergy(phaze::EnergyModel::Op(op, arch), text);
      } catch (const phaze::UnsupportedOpError&) {
        // A calibration the model refuses at use is reported as unsupported, not a crash.
      }
    }
    Check(phaze::DieAreaMm2(arch), "die area", text);
    Check(phaze::EnergyModel::StaticPowerW(arch), "static power", text);
    Check(phaze::EnergyModel::PeakPowerW(arch), "peak power", text);
    static const phaze::CostModel cost = phaze::CostModel::Default();
    if (cost.Unbuildable(arch).empty()) {  // else Device() refuses it, with that reason
      Check(cost.Device(arch).TotalUsd(), "device cost", text);
    }
    Check(cost.HourlyUsd(arch, 300, 0), "hourly price", text);
  } catch (const phaze::ConfigError&) {
  }
  // A system file's levels.
  try {
    if (root.IsMap()) {
      if (auto levels = root.Optional("levels")) {
        const phaze::Network net = phaze::Network::ParseLevels(*levels);
        for (int level = 0; level < static_cast<int>(net.Levels().size()); ++level) {
          Check(net.SendS(1 << 20, level), "send time", text);
          Check(net.SendJ(1 << 20, level), "send energy", text);
        }
        for (std::int64_t ranks : {2, 8, 64, 4096}) {
          Check(net.CollectiveS(phaze::CollectiveKind::kAllReduce, 1 << 24, {ranks, 1}),
                "all-reduce time", text);
          Check(net.CollectiveJ(phaze::CollectiveKind::kAllReduce, 1 << 24, {ranks, 1}),
                "all-reduce energy", text);
        }
      }
    }
  } catch (const phaze::ConfigError&) {
  }
  // A cost-model file.
  try {
    const phaze::CostModel cost = phaze::CostModel::Parse(root);
    phaze::ArchConfig arch;
    arch.die_area_mm2 = 600;
    if (cost.Unbuildable(arch).empty()) Check(cost.Device(arch, 80).TotalUsd(), "device cost (cost file)", text);
    Check(cost.HourlyUsd(arch, 80, 300, 0), "hourly price (cost file)", text);
  } catch (const phaze::ConfigError&) {
  }
  return 0;
}
