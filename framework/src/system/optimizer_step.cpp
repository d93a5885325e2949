#include "phaze/system/optimizer_step.hpp"

#include "phaze/estimate/energy_model.hpp"

namespace phaze {

OptimizerStepCost CostOptimizerStep(const Operator& step, const ArchConfig& arch,
                                    const EnergyTechnology& energy) {
  const double bytes = 2.0 * static_cast<double>(step.weight_bytes);
  OptimizerStepCost c;
  c.seconds = bytes / arch.hbm_bandwidth_bytes_per_s;
  c.energy.memory_j = EnergyModel::HbmJ(bytes, energy);
  return c;
}

double OptimizerStepS(const StepSettings& settings, int t, double stage_step_s, std::int64_t d,
                      std::int64_t r) {
  return settings.sharding != Sharding::kNone
             ? stage_step_s / static_cast<double>(ShardReplicas(settings, t, d) * r)
             : stage_step_s;
}

double OptimizerStepRuns(const StepSettings& settings, int t, double a, std::int64_t d,
                         std::int64_t r) {
  if (settings.sharding == Sharding::kNone) return static_cast<double>(d) * a;
  const std::int64_t groups = d / ShardReplicas(settings, t, d);
  return static_cast<double>(groups) * a / static_cast<double>(r);
}

}  // namespace phaze
