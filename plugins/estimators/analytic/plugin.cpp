// Plugin entry: registers the analytic estimator twice — "analytic" (physical model; the search's
// default until the device model) and "sunstone" (the reference-compatible preset).
#include <memory>

#include "analytic_estimator.hpp"
#include "phaze/plugin/plugin_abi.hpp"
#include "phaze/plugin/registry.hpp"

namespace phaze::estimators {

plugin::PluginInfo AnalyticPlugin() {
  return {plugin::kAbiVersion, "analytic", "1.0.0",
          "systolic-array + memory-hierarchy latency model, ring collectives, 22 nm area",
          [](Registry& registry) {
            registry.AddEstimator(
                "analytic",
                "weight-stationary systolic tensor cores bounded by L2/GLB/HBM bandwidth",
                [](const ConfigNode& params) {
                  return std::make_shared<AnalyticEstimator>(AnalyticEstimator::Model::kPhysical,
                                                             params);
                });
            registry.AddEstimator(
                "sunstone", "the reference's Sunstone tensor-core cycles and vector-core table",
                [](const ConfigNode& params) {
                  return std::make_shared<AnalyticEstimator>(AnalyticEstimator::Model::kSunstone,
                                                             params);
                });
          }};
}

}  // namespace phaze::estimators

PHAZE_PLUGIN_ENTRY(phaze::estimators::AnalyticPlugin)
