#include "phaze/system/pipeline.hpp"

#include <algorithm>

namespace phaze {

double InFlightMicroBatches(const StepSettings& settings, int position, int stages,
                            std::int64_t per_pipeline) {
  const auto m = static_cast<double>(per_pipeline);
  switch (settings.schedule) {
    case PipelineSchedule::k1F1B:
      break;
    case PipelineSchedule::kGPipe:
      return m;
    case PipelineSchedule::kInterleaved: {
      const double v = settings.virtual_stages;
      return std::min((2.0 * (position - 1) + (v - 1) * stages + 1) / v, m);
    }
  }
  return std::min(static_cast<double>(position), m);
}

double PipelineSteps(const StepSettings& settings, std::int64_t d, int stages) {
  const double steps_base = static_cast<double>(settings.MicroBatchesPerPipeline(d));
  return steps_base + (stages - 1) / static_cast<double>(settings.virtual_stages);
}

double PipelineTimeS(const StepSettings& settings, std::int64_t d, int stages, double max_load_s,
                     double sum_load_s) {
  if (settings.bubble == PipelineBubble::kBottleneck) {
    return PipelineSteps(settings, d, stages) * max_load_s;
  }
  const double m = static_cast<double>(settings.MicroBatchesPerPipeline(d));
  const double sum =
      settings.bubble == PipelineBubble::kBound ? std::max(sum_load_s, max_load_s) : sum_load_s;
  return m * max_load_s + (sum - max_load_s) / static_cast<double>(settings.virtual_stages);
}

double StageLoadFloor(const LayerTable& table) {
  const auto& L = table.layers;
  if (!LayersFormChain(L.size(), table.edges)) return 0;
  double floor = 0;
  for (const auto& l : L) floor += l.forward_s + l.backward_s + l.backward_recompute_s;
  return floor;
}

int PipelineLevel(const StepSettings& settings, int t, int stages, std::int64_t d) {
  return settings.network.LevelHolding(static_cast<std::int64_t>(t) * stages * d);
}

namespace {

// One send of `edge`, priced by `send` (bytes) and `all_gather` (bytes, group): seconds or joules.
template <class Send, class AllGather>
double PriceEdge(const PlacementEdge& edge, Send send, AllGather all_gather) {
  double x = send(edge.bytes);
  if (edge.gather_group > 1) {
    x += all_gather(edge.bytes * static_cast<double>(edge.gather_group),
                    CommGroup{edge.gather_group, 1});
  }
  return x;
}

}  // namespace

double EdgeSendS(const StepSettings& settings, const PlacementEdge& edge, int level) {
  const Network& net = settings.network;
  return PriceEdge(
      edge, [&](double bytes) { return net.SendS(bytes, level); },
      [&](double bytes, CommGroup g) { return net.CollectiveS(CollectiveKind::kAllGather, bytes, g); });
}

double EdgeSendJ(const StepSettings& settings, const PlacementEdge& edge, int level) {
  const Network& net = settings.network;
  return PriceEdge(
      edge, [&](double bytes) { return net.SendJ(bytes, level); },
      [&](double bytes, CommGroup g) { return net.CollectiveJ(CollectiveKind::kAllGather, bytes, g); });
}

}  // namespace phaze
