#include "phaze/system/stage_memory.hpp"

#include <algorithm>

namespace phaze {

void StageFootprint::Add(const PlacementLayer& l) {
  resident += l.weight_bytes + l.cached_weight_bytes + l.GradientBytes() +
              l.optimizer_state_bytes + l.activation_bytes;
  cached += l.cached_weight_bytes;
  activation += l.activation_bytes;
  weight += l.weight_bytes;
  gradient += l.GradientBytes();
  optimizer_state += l.optimizer_state_bytes;
  working = std::max(working, l.working_bytes);
  step_working += l.step_working_bytes;
  largest_gradient = std::max(largest_gradient, l.GradientBytes());
  largest_gathered = std::max(largest_gathered, 2 * l.weight_bytes + l.GradientBytes());
}

StageMemory StageMemoryParts(const StageFootprint& f, double stash, double in_flight,
                             Sharding sharding, std::int64_t ways) {
  const bool sharded = ways > 1 && sharding != Sharding::kNone;
  const double n = sharded ? static_cast<double>(ways) : 1.0;
  StageMemory m;
  m.weight_bytes = sharding == Sharding::kParameters ? (f.weight + f.cached) / n : f.weight + f.cached;
  m.gradient_bytes = sharding >= Sharding::kGradients ? f.gradient / n : f.gradient;
  m.optimizer_state_bytes = f.optimizer_state / n;
  m.gathered_bytes = sharded ? (1 - 1 / n) * f.Gathered(sharding) : 0.0;
  m.in_flight = in_flight;
  m.working_bytes = f.working;
  const double backward = BackwardPeakBytes(f, stash, in_flight, sharding, ways);
  m.activation_bytes = backward - m.weight_bytes - m.gradient_bytes - m.optimizer_state_bytes -
                       m.gathered_bytes - f.working;
  m.step_working_bytes = f.step_working / n;
  m.peak_at_step = f.step_working > 0 && StepPeakBytes(f, sharding, ways) > backward;
  return m;
}

}  // namespace phaze
