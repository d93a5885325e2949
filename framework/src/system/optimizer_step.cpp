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

double StageOptimizerStepS(const StepSettings& settings, const LayerTable& table, int t,
                           std::int64_t d, double stage_step_s, double expert_step_s) {
  const WeightClass dense = DenseClass(table, t, d);
  if (table.expert_fold <= 1) return OptimizerStepS(settings, t, stage_step_s, d, dense.r);
  const WeightClass experts = ExpertClass(table, t, d);
  return OptimizerStepS(settings, t, stage_step_s - expert_step_s, d, dense.r) +
         OptimizerStepS(settings, experts.t, expert_step_s, experts.d, experts.r);
}

Energy StageOptimizerStepJ(const StepSettings& settings, const LayerTable& table, int t,
                           std::int64_t d, double a, const Energy& step,
                           const Energy& expert_step) {
  const WeightClass dense = DenseClass(table, t, d);
  if (table.expert_fold <= 1) return step * OptimizerStepRuns(settings, t, a, d, dense.r);
  const WeightClass experts = ExpertClass(table, t, d);
  const Energy rest = step + expert_step * -1.0;
  return rest * OptimizerStepRuns(settings, t, a, d, dense.r) +
         expert_step * OptimizerStepRuns(settings, experts.t, a, experts.d, experts.r);
}

}  // namespace phaze
