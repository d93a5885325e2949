#include "phaze/system/stage_memory.hpp"

#include <algorithm>

namespace phaze {

void StageFootprint::Add(const PlacementLayer& l) {
  resident += l.weight_bytes + l.GradientBytes() + l.optimizer_state_bytes + l.activation_bytes;
  activation += l.activation_bytes;
  weight += l.weight_bytes;
  gradient += l.GradientBytes();
  optimizer_state += l.optimizer_state_bytes;
  working = std::max(working, l.working_bytes);
}

StageMemory StageMemoryParts(const StageFootprint& f, double stash, double in_flight,
                             std::int64_t optimizer_shards) {
  StageMemory m;
  m.weight_bytes = f.weight;
  m.gradient_bytes = f.gradient;
  m.optimizer_state_bytes = f.optimizer_state / static_cast<double>(optimizer_shards);
  m.in_flight = in_flight;
  m.activation_bytes = StagePeakBytes(f, stash, in_flight, optimizer_shards) - m.weight_bytes -
                       m.gradient_bytes - m.optimizer_state_bytes - f.working;
  m.working_bytes = f.working;
  return m;
}

}  // namespace phaze
