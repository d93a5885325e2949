#include "phaze/search/plan_choice.hpp"

#include <cmath>

namespace phaze {

void PriceChoice(PlanChoice& c, const ArchConfig& arch, const RunConfig& run,
                 const CostModel& cost) {
  const PlacementPlan& p = c.plan;
  if (!(p.time_per_batch_s > 0)) return;  // no figures (infeasible before timing)
  c.power_w = p.PowerW();
  const double tokens_per_step = c.tokens_per_s * p.time_per_batch_s;
  c.energy_per_token_j = tokens_per_step > 0 ? p.energy.TotalJ() / tokens_per_step : 0;
  c.hourly_usd = cost.HourlyUsd(arch, c.power_w, run.cost.hourly_usd);
  // The whole cluster is paid for, whether or not the plan uses every device.
  const double cluster_usd_per_s =
      c.hourly_usd * static_cast<double>(run.cluster.num_accelerators) / 3600;
  c.usd_per_million_tokens = c.tokens_per_s > 0 ? 1e6 * cluster_usd_per_s / c.tokens_per_s : 0;
  c.time_to_train_s = run.training.tokens > 0 && c.tokens_per_s > 0
                          ? run.training.tokens / c.tokens_per_s
                          : 0;
}

double ObjectiveValue(const PlanChoice& c, SearchObjective objective, std::int64_t accelerators) {
  const double thr = c.Throughput();
  switch (objective) {
    case SearchObjective::kThroughput:
      break;
    case SearchObjective::kThroughputPerWatt:
      return c.power_w > 0 ? thr / c.power_w : 0;
    case SearchObjective::kThroughputPerCost:
      // samples/s over $/s of the cluster: samples per dollar.
      return c.hourly_usd > 0 ? thr * 3600 / (c.hourly_usd * static_cast<double>(accelerators))
                              : 0;
  }
  return thr;
}

std::string_view ObjectiveUnit(SearchObjective objective) {
  switch (objective) {
    case SearchObjective::kThroughput:
      break;
    case SearchObjective::kThroughputPerWatt:
      return "samples/s per W";
    case SearchObjective::kThroughputPerCost:
      return "samples per $";
  }
  return "samples/s";
}

}  // namespace phaze
