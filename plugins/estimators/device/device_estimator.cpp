// Plugin entry of the device model (framework/include/phaze/estimate/device_model.hpp): registers
// it as `device`, the search's default, and as `gpu`, the name the GPU planner's presets and
// configs have used (the same physics; kept so existing run configs load).
// params: any technology parameter (DeviceTechnology::kKeys: gemm_efficiency, memory_efficiency,
// kernel_overhead_s, concurrent_kernels, …; they override the preset's calibration),
// vector_cycles: {function: cycles per element per lane}.
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "phaze/core/config_node.hpp"
#include "phaze/estimate/device_model.hpp"
#include "phaze/plugin/plugin_abi.hpp"
#include "phaze/plugin/registry.hpp"

namespace phaze::estimators {

namespace {

class DeviceEstimator : public Estimator {
 public:
  DeviceEstimator(const std::string& name, const ConfigNode& params)
      : model_(name, Overrides(params), VectorCycles(params)) {}
  OpEstimate Estimate(const OpWork& op, const ArchConfig& arch, Pass pass) const override {
    return model_.Estimate(op, arch, pass);
  }

 private:
  static std::map<std::string, double> Overrides(const ConfigNode& params) {
    // Every technology parameter of the device model (DeviceTechnology::kKeys) and the lanes'
    // cycles per function.
    std::vector<std::string> keys(std::begin(DeviceTechnology::kKeys),
                                  std::end(DeviceTechnology::kKeys));
    keys.push_back("vector_cycles");
    params.ExpectKeys(keys);
    std::map<std::string, double> out;
    for (const std::string key : DeviceTechnology::kKeys) {
      if (key == "concurrent_kernels") continue;  // a boolean, below
      if (auto v = params.Optional(key)) {
        const double x = v->AsDouble();
        if (const std::string why = DeviceTechnology::Check(key, x); !why.empty()) v->Fail(why);
        out[key] = x;
      }
    }
    if (auto v = params.Optional("concurrent_kernels")) {
      out["concurrent_kernels"] = v->AsBool() ? 1 : 0;
    }
    return out;
  }
  static std::map<std::string, double> VectorCycles(const ConfigNode& params) {
    std::map<std::string, double> out;
    if (auto n = params.Optional("vector_cycles")) {
      for (const auto& [name, value] : n->Entries()) out[name] = value.AsNonNegativeDouble();
    }
    return out;
  }
  DeviceModel model_;
};

void Add(Registry& registry, const std::string& name, const std::string& description) {
  registry.AddEstimator(name, description, [name](const ConfigNode& params) {
    return std::make_shared<DeviceEstimator>(name, params);
  });
}

}  // namespace

plugin::PluginInfo DevicePlugin() {
  return {plugin::kAbiVersion, "device", "2.0.0",
          "one device model for template chips, TPUs and GPUs: GEMM tiles in waves over core "
          "groups, GLB and HBM bounds, lane- or memory-bound vector ops, per-kernel cost",
          [](Registry& registry) {
            Add(registry, "device",
                "the device model (params: gemm_efficiency, memory_efficiency, kernel_overhead_s, "
                "concurrent_kernels, vector_cycles; default: the preset's calibration, else the "
                "A100-fitted technology)");
            Add(registry, "gpu", "the device model under its GPU planner name (same as 'device')");
          }};
}

}  // namespace phaze::estimators

PHAZE_PLUGIN_ENTRY(phaze::estimators::DevicePlugin)
