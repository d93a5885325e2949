// A plan with the settings it was found for and what it costs: time, power, energy and money
// (DESIGN §11), and its score under the run's objective.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "phaze/arch/arch_config.hpp"
#include "phaze/arch/cost_model.hpp"
#include "phaze/graph/layer_graph.hpp"
#include "phaze/search/run_config.hpp"
#include "phaze/system/step_model.hpp"

namespace phaze {

// A plan with the training settings it was found for, and its metrics.
struct PlanChoice {
  bool feasible = false;
  std::string reason;  // when infeasible
  PlacementPlan plan;
  std::string strategy;   // the parallelism strategy it was found with (RunConfig's Name())
  int strategy_index = 0;  // its index in RunConfig::strategies
  // e: the devices each expert group spans under the moe strategy (its params' expert_parallel,
  // else t; Megatron-LM's --expert-model-parallel-size); 0 when the strategy is not moe or the
  // model has no experts.
  std::int64_t expert_parallel = 0;
  // Its experts' split (Megatron-LM's --expert-tensor-parallel-size): 1 whole, t split over the
  // width (then e counts data-parallel replicas); 0 when expert_parallel is.
  std::int64_t expert_tensor_parallel = 0;
  std::int64_t micro_batch = 0;
  RecomputeMode recompute = RecomputeMode::kNone;
  Sharding sharding = Sharding::kNone;
  std::int64_t shard_group = 0;     // training.shard_group it was found for (kShardOverAll, …)
  std::int64_t shard_replicas = 0;  // h: the data-parallel replicas the sharding divides over
                                    // (ShardReplicas: d unless hybrid); 0 unsharded
  Precision precision = Precision::kBf16;
  double hbm_gib = 0;
  double tokens_per_s = 0;
  double mfu = 0;  // model FLOP/s over the cluster's peak tensor FLOP/s
  // Energy and cost (DESIGN §11; PriceChoice). The step's energy by part is plan.energy.
  double power_w = 0;             // average per device the plan uses
  double energy_per_token_j = 0;  // joules of the cluster per trained token
  double hourly_usd = 0;          // per device-hour (rental price, or ownership + energy)
  double usd_per_million_tokens = 0;  // the whole cluster's hours per million trained tokens
  double time_to_train_s = 0;     // training.tokens / tokens_per_s; 0 without a token budget
  struct Stage {
    std::string first_layer, last_layer;
    int layers = 0;
    int devices = 1;
    double load_s = 0;
    double peak_memory_bytes = 0;
  };
  std::vector<Stage> stages;

  double Throughput() const { return feasible ? plan.throughput_samples_per_s : 0.0; }
  // Joules of the cluster per trained sample (0 when infeasible).
  double EnergyPerSampleJ() const {
    const double samples = plan.throughput_samples_per_s * plan.time_per_batch_s;
    return feasible && samples > 0 ? plan.energy.TotalJ() / samples : 0.0;
  }
  // Strictly better: higher throughput (a feasible plan beats an infeasible one).
  bool BetterThan(const PlanChoice& other) const { return Throughput() > other.Throughput(); }
};

// Fills a timed choice's power, energy per token, hourly price, $ per million tokens and time to
// train (training.tokens) from its plan, the architecture and the cost model (a choice whose plan
// has no time, infeasible before timing, is left alone).
void PriceChoice(PlanChoice& choice, const ArchConfig& arch, const RunConfig& run,
                 const CostModel& cost);

// A plan's score under search.objective: samples/s; samples/s per watt of a device (power_w); or
// samples per dollar of the cluster's `accelerators` hours (hourly_usd each). 0 when infeasible.
double ObjectiveValue(const PlanChoice& choice, SearchObjective objective,
                      std::int64_t accelerators);
// Its unit: "samples/s", "samples/s per W", "samples per $" (per dollar of the cluster's hours).
std::string_view ObjectiveUnit(SearchObjective objective);

}  // namespace phaze
