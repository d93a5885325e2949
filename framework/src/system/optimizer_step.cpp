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

double OptimizerStepS(const StepSettings& settings, double stage_step_s, std::int64_t d,
                      std::int64_t r) {
  return settings.sharding != Sharding::kNone ? stage_step_s / static_cast<double>(d * r)
                                        : stage_step_s;
}

double OptimizerStepRuns(const StepSettings& settings, double a, double d, std::int64_t r) {
  return settings.sharding != Sharding::kNone ? a / static_cast<double>(r) : d * a;
}

}  // namespace phaze
