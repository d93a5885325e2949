#include "phaze/system/pipeline.hpp"

namespace phaze {

double InFlightMicroBatches(const StepSettings& settings, int position, int stages,
                            std::int64_t per_pipeline) {
  switch (settings.schedule) {
    case PipelineSchedule::k1F1B:
      break;
    case PipelineSchedule::kGPipe:
      return static_cast<double>(per_pipeline);
    case PipelineSchedule::kInterleaved: {
      const double v = settings.virtual_stages;
      return (2.0 * (position - 1) + (v - 1) * stages + 1) / v;
    }
  }
  return position;
}

double PipelineSteps(const StepSettings& settings, std::int64_t d, int stages) {
  const double steps_base = static_cast<double>(settings.MicroBatchesPerPipeline(d));
  return steps_base + (stages - 1) / static_cast<double>(settings.virtual_stages);
}

int PipelineLevel(const StepSettings& settings, int t, int stages, std::int64_t d) {
  return settings.network.LevelHolding(static_cast<std::int64_t>(t) * stages * d);
}

double EdgeSendS(const StepSettings& settings, const PlacementEdge& edge, int level) {
  double s = settings.network.SendS(edge.bytes, level);
  if (edge.gather_group > 1) {
    s += settings.network.CollectiveS(CollectiveKind::kAllGather,
                                      edge.bytes * static_cast<double>(edge.gather_group),
                                      CommGroup{edge.gather_group, 1});
  }
  return s;
}

double EdgeSendJ(const StepSettings& settings, const PlacementEdge& edge, int level) {
  double j = settings.network.SendJ(edge.bytes, level);
  if (edge.gather_group > 1) {
    j += settings.network.CollectiveJ(CollectiveKind::kAllGather,
                                      edge.bytes * static_cast<double>(edge.gather_group),
                                      CommGroup{edge.gather_group, 1});
  }
  return j;
}

}  // namespace phaze
