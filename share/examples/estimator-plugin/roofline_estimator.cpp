// A complete, minimal estimator plugin — the walk-through of the README's "Write an estimator
// plugin", and a standalone CMake project built against an installed phaze (README.md here). A
// roofline: an op takes the longer of its FLOPs at the cores' peak and its bytes at the HBM
// bandwidth. Built into <build>/examples/, so phaze loads it only when asked
// (`phaze --plugin build/examples/roofline-example.so`), and selected by name:
// `estimator: {name: roofline, params: {efficiency: 0.8}}`.
#include <algorithm>
#include <memory>

#include "phaze/estimate/estimator.hpp"
#include "phaze/plugin/plugin_abi.hpp"
#include "phaze/plugin/registry.hpp"

namespace {

class RooflineEstimator : public phaze::Estimator {
 public:
  explicit RooflineEstimator(double efficiency) : efficiency_(efficiency) {}

  phaze::OpEstimate Estimate(const phaze::OpWork& op, const phaze::ArchConfig& arch,
                             phaze::Pass) const override {
    const double bytes = static_cast<double>(op.bytes_read + op.bytes_written + op.weight_bytes);
    const double memory_s = bytes / arch.hbm_bandwidth_bytes_per_s;
    double flops = 0, per_core_flops_per_s = 0, cores = 1;
    if (op.gemm) {  // tensor and fused ops: the GEMM dominates
      flops = static_cast<double>(op.gemm->Flops());
      per_core_flops_per_s = 2.0 * static_cast<double>(arch.pe_x * arch.pe_y) * arch.frequency_hz;
      cores = static_cast<double>(arch.num_tc);
    } else if (!op.vector.empty()) {  // one operation per element and lane
      flops = static_cast<double>(op.vector.front().elements);
      per_core_flops_per_s = static_cast<double>(arch.pe_vc) * arch.frequency_hz;
      cores = static_cast<double>(arch.num_vc);
    } else {
      return {};  // a view
    }
    const double one = std::max(flops / (per_core_flops_per_s * efficiency_), memory_s);
    const double all = std::max(flops / (per_core_flops_per_s * cores * efficiency_), memory_s);
    return {one, all, std::nullopt};
  }

 private:
  double efficiency_;
};

phaze::plugin::PluginInfo RooflineExample() {
  return {phaze::plugin::kAbiVersion, "roofline-example", "1.0.0",
          "example estimator: FLOPs at peak vs bytes at HBM bandwidth",
          [](phaze::Registry& registry) {
            registry.AddEstimator("roofline", "roofline of peak FLOP/s and HBM bandwidth",
                                  [](const phaze::ConfigNode& params) {
                                    params.ExpectKeys({"efficiency"});
                                    double efficiency = 1.0;
                                    if (auto e = params.Optional("efficiency")) {
                                      efficiency = e->AsPositiveDouble();
                                    }
                                    return std::make_shared<RooflineEstimator>(efficiency);
                                  });
          }};
}

}  // namespace

PHAZE_PLUGIN_ENTRY(RooflineExample)
