#include "phaze/system/stage_memory.hpp"

#include <algorithm>

namespace phaze {

void StageFootprint::Add(const PlacementLayer& l) {
  resident += l.weight_bytes + l.cached_weight_bytes + l.GradientBytes() +
              l.optimizer_state_bytes + l.activation_bytes;
  cached += l.cached_weight_bytes;
  activation += l.activation_bytes;
  weight += l.weight_bytes;
  gathered += l.GatheredWeightBytes();
  expert_gathered += l.ExpertGatheredWeightBytes();
  gradient += l.GradientBytes();
  optimizer_state += l.optimizer_state_bytes;
  working = std::max(working, l.working_bytes);
  step_working += l.step_working_bytes;
  largest_gradient = std::max(largest_gradient, l.GradientBytes());
  largest_gathered = std::max(largest_gathered, 2 * l.GatheredWeightBytes() + l.GradientBytes());
  if (l.expert_weight_bytes > 0) {
    const double x = l.ExpertShare();
    expert_weight += x * (l.weight_bytes + l.cached_weight_bytes);
    expert_gradient += x * l.GradientBytes();
    expert_optimizer_state += x * l.optimizer_state_bytes;
    expert_step_working += x * l.step_working_bytes;
  }
}

double LayerGatheredAway(const PlacementLayer& l, Sharding sharding, const ShardDivisors& n) {
  if (sharding < Sharding::kGradients) return 0.0;
  const double whole = sharding == Sharding::kParameters
                           ? 2 * l.GatheredWeightBytes() + l.GradientBytes()
                           : l.GradientBytes();
  const double expert = l.ExpertShare() * whole;
  auto away = [](std::int64_t ways) { return ways > 1 ? 1 - 1 / static_cast<double>(ways) : 0.0; };
  return away(n.ways) * (whole - expert) + away(n.expert_ways) * expert;
}

StageMemory StageMemoryParts(const StageFootprint& f, double stash, double in_flight,
                             Sharding sharding, const ShardDivisors& n) {
  const bool on = sharding != Sharding::kNone;
  const double ways = on && n.ways > 1 ? static_cast<double>(n.ways) : 1.0;
  const double expert_ways = on && n.expert_ways > 1 ? static_cast<double>(n.expert_ways) : 1.0;
  // A class's bytes divided by its ways: the dense part (all but `expert`) and the experts'.
  auto divided = [&](double all, double expert) {
    return n.expert_ways == n.ways ? all / ways : (all - expert) / ways + expert / expert_ways;
  };
  StageMemory m;
  m.weight_bytes = sharding == Sharding::kParameters ? divided(f.weight + f.cached, f.expert_weight)
                                                     : f.weight + f.cached;
  m.gradient_bytes =
      sharding >= Sharding::kGradients ? divided(f.gradient, f.expert_gradient) : f.gradient;
  m.optimizer_state_bytes = divided(f.optimizer_state, f.expert_optimizer_state);
  m.gathered_bytes = SplitsGather(sharding, n) ? f.gathered_away
                     : ways > 1                ? (1 - 1 / ways) * f.Gathered(sharding)
                                               : 0.0;
  m.in_flight = in_flight;
  m.working_bytes = f.working;
  const double backward = BackwardPeakBytes(f, stash, in_flight, sharding, n);
  m.activation_bytes = backward - m.weight_bytes - m.gradient_bytes - m.optimizer_state_bytes -
                       m.gathered_bytes - f.working;
  m.step_working_bytes = divided(f.step_working, f.expert_step_working);
  m.peak_at_step = f.step_working > 0 && StepPeakBytes(f, sharding, n) > backward;
  return m;
}

}  // namespace phaze
