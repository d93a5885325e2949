#include "phaze/system/gradient_sync.hpp"

#include <algorithm>
#include <limits>

namespace phaze {

namespace {

// The groups of the reduction at width t and d (ShardReplicas h): the h·r devices t/r ranks apart
// that shard together (all d·r unless hybrid), and the d/h of them t·h ranks apart that hold the
// same shard (one without hybrid sharding).
struct ShardGroups {
  CommGroup shard;
  CommGroup replicas;
};
ShardGroups GroupsOf(const StepSettings& settings, int t, std::int64_t d, std::int64_t r) {
  const std::int64_t h = ShardReplicas(settings, t, d);
  return {CommGroup{h * r, t / r}, CommGroup{d / h, static_cast<std::int64_t>(t) * h}};
}

// A gathered size given (≥ 0), else the weights' own.
double GatheredOr(double gathered, double weight_bytes) {
  return gathered >= 0 ? gathered : weight_bytes;
}

// The all-reduce of each device's 1/(h·r) of `gradients` bytes across the d/h shard groups (0
// without hybrid sharding).
template <typename Price>
double Across(const ShardGroups& g, double gradients, Price price) {
  return g.replicas.size > 1 ? price(CollectiveKind::kAllReduce,
                                     gradients / static_cast<double>(g.shard.size), g.replicas)
                             : 0.0;
}

// The step's reduction priced by `price` (Network::CollectiveS or CollectiveJ), as the sharding
// has it, in its two halves (SyncParts): all-reduce of the gradients; reduce-scatter of them and
// all-gather of the weights (optimizer); the all-gather only (gradients: reduce-scattered every
// micro-batch); nothing (parameters). Hybrid sharding adds to the gradients' half the all-reduce
// of each device's 1/(h·r) of them across the d/h shard groups (Across) — always with the
// optimizer sharded (Megatron-LM's distributed-optimizer instances), with the gradients or
// parameters only when it runs once a step (HybridAllReduce; else PerMicroBatch runs it).
// `gathered`: what an all-gather of the weights moves (GatheredBytes; FP8 weights in FP8).
template <typename Price>
SyncParts Reduction(const StepSettings& settings, int t, std::int64_t d, std::int64_t r,
                    double weight_bytes, double gathered, Price price) {
  const ShardGroups g = GroupsOf(settings, t, d, r);
  const double gradients = settings.gradient_reduction_bytes_per_weight_byte * weight_bytes;
  const bool once = settings.hybrid_all_reduce == HybridAllReduce::kOnceAStep;
  switch (settings.sharding) {
    case Sharding::kNone:
      return {price(CollectiveKind::kAllReduce, gradients, g.shard), 0.0};
    case Sharding::kOptimizer:
      return {
          price(CollectiveKind::kReduceScatter, gradients, g.shard) + Across(g, gradients, price),
          price(CollectiveKind::kAllGather, gathered, g.shard)};
    case Sharding::kGradients:
      return {once ? Across(g, gradients, price) : 0.0,
              price(CollectiveKind::kAllGather, gathered, g.shard)};
    case Sharding::kParameters:
      return {once ? Across(g, gradients, price) : 0.0, 0.0};
  }
  return {};
}

// ExposedGradientSyncS for one half: `total` seconds of reduction in v equal chunks, chunk k free
// to start f·(k·p + 1)·slot before the end of the pass (slot = the pass per micro-batch and chunk),
// the chunks one after another; the end past 0, and at least the first layer's share.
double ExposedPart(double total, double pass_s, double f, int v, const SyncWindow& w) {
  if (f == 0 || !(total > 0)) return total;  // no overlap: all of it, exactly
  const double chunk = total / v;
  const double slot = pass_s / v;
  double end = -std::numeric_limits<double>::infinity();
  for (int k = v - 1; k >= 0; --k) {
    end = std::max(end, -f * (static_cast<double>(k) * w.stages + 1) * slot) + chunk;
  }
  return std::max(w.first_share * total, std::max(0.0, end));
}

// The collectives every micro-batch runs: the gradients' reduce-scatter (gradients, parameters),
// under hybrid sharding run every micro-batch the all-reduce of the shards across the groups
// (FSDP2's HSDP runs it after each reduce-scatter), and `gathers` all-gathers of the weights
// (parameters: two, before forward and backward).
template <typename Price>
double PerMicroBatch(const StepSettings& settings, int t, std::int64_t d, std::int64_t r,
                     double weight_bytes, double gathered, Price price, int gathers = 2) {
  if (settings.sharding < Sharding::kGradients) return 0.0;
  const ShardGroups g = GroupsOf(settings, t, d, r);
  const CommGroup& group = g.shard;
  if (group.size < 2) return 0.0;
  const double gradients = settings.gradient_reduction_bytes_per_weight_byte * weight_bytes;
  double total = price(CollectiveKind::kReduceScatter, gradients, group);
  if (settings.hybrid_all_reduce == HybridAllReduce::kEveryMicroBatch) {
    total += Across(g, gradients, price);
  }
  if (settings.sharding == Sharding::kParameters) {
    total += gathers * price(CollectiveKind::kAllGather, gathered, group);
  }
  return total;
}

auto SecondsOn(const StepSettings& settings) {
  return [&settings](CollectiveKind k, double bytes, const CommGroup& g) {
    return settings.network.CollectiveS(k, bytes, g);
  };
}

auto JoulesOn(const StepSettings& settings) {
  return [&settings](CollectiveKind k, double bytes, const CommGroup& g) {
    return settings.network.CollectiveJ(k, bytes, g);
  };
}

// f(class, bytes, gathered) over the two classes of a table's weights (`w.weight`,
// `w.expert` of them experts): the rest's over {d·r, t/r}, the experts' over their replicas
// (ExpertClass), summed; f of the whole when the experts are not folded.
template <typename F>
double OverClasses(const LayerTable& table, int t, std::int64_t d, const StageWeights& w, F f) {
  const WeightClass dense = DenseClass(table, t, d);
  if (table.expert_fold <= 1) return f(dense, w.weight, w.Gathered());
  return f(dense, w.weight - w.expert, w.Gathered() - w.ExpertGathered()) +
         f(ExpertClass(table, t, d), w.expert, w.ExpertGathered());
}

CommGroup TiedGroup(int t, std::int64_t d, int stages) {
  return CommGroup{2, static_cast<std::int64_t>(t) * d * (stages - 1)};
}

}  // namespace

SyncParts GradientSyncPartsS(const StepSettings& settings, int t, std::int64_t d, std::int64_t r,
                             double weight_bytes, double gathered_bytes) {
  return Reduction(settings, t, d, r, weight_bytes, GatheredOr(gathered_bytes, weight_bytes),
                   SecondsOn(settings));
}

double GradientSyncS(const StepSettings& settings, int t, std::int64_t d, std::int64_t r,
                     double weight_bytes, double gathered_bytes) {
  const SyncParts p = GradientSyncPartsS(settings, t, d, r, weight_bytes, gathered_bytes);
  return p.reduce_s + p.gather_s;
}

SyncParts StageSyncPartsS(const StepSettings& settings, const LayerTable& table, int t,
                          std::int64_t d, const StageWeights& w) {
  const WeightClass dense = DenseClass(table, t, d);
  if (table.expert_fold <= 1) {
    return GradientSyncPartsS(settings, t, d, dense.r, w.weight, w.Gathered());
  }
  const WeightClass experts = ExpertClass(table, t, d);
  const SyncParts a = GradientSyncPartsS(settings, t, d, dense.r, w.weight - w.expert,
                                         w.Gathered() - w.ExpertGathered());
  const SyncParts b =
      GradientSyncPartsS(settings, experts.t, experts.d, experts.r, w.expert, w.ExpertGathered());
  return {a.reduce_s + b.reduce_s, a.gather_s + b.gather_s};
}

double StageSyncJ(const StepSettings& settings, const LayerTable& table, int t, std::int64_t d,
                  const StageWeights& w) {
  return OverClasses(table, t, d, w, [&](const WeightClass& c, double bytes, double gathered) {
    return GradientSyncJ(settings, c.t, c.d, c.r, bytes, gathered);
  });
}

double ExposedGradientSyncS(const StepSettings& settings, const SyncParts& parts,
                            const SyncWindow& window) {
  const double f = settings.gradient_reduction_overlap;
  const int v = std::max(1, settings.virtual_stages);
  return ExposedPart(parts.reduce_s, window.backward_s, f, v, window) +
         ExposedPart(parts.gather_s, window.forward_s, f, v, window);
}

double GradientSyncJ(const StepSettings& settings, int t, std::int64_t d, std::int64_t r,
                     double weight_bytes, double gathered_bytes) {
  const SyncParts p = Reduction(settings, t, d, r, weight_bytes,
                                GatheredOr(gathered_bytes, weight_bytes), JoulesOn(settings));
  return p.reduce_s + p.gather_s;
}

double ShardingPerMicroBatchS(const StepSettings& settings, int t, std::int64_t d, std::int64_t r,
                              double weight_bytes, double gathered_bytes) {
  return PerMicroBatch(settings, t, d, r, weight_bytes, GatheredOr(gathered_bytes, weight_bytes),
                       SecondsOn(settings));
}

double ShardingEdgeS(const StepSettings& settings, int t, std::int64_t d, std::int64_t r,
                     double first_layer_weight_bytes, double gathered_bytes) {
  return PerMicroBatch(settings, t, d, r, first_layer_weight_bytes,
                       GatheredOr(gathered_bytes, first_layer_weight_bytes), SecondsOn(settings),
                       1);
}

double StageShardingPerMicroBatchS(const StepSettings& settings, const LayerTable& table, int t,
                                   std::int64_t d, const StageWeights& w) {
  return OverClasses(table, t, d, w, [&](const WeightClass& c, double bytes, double gathered) {
    return ShardingPerMicroBatchS(settings, c.t, c.d, c.r, bytes, gathered);
  });
}

double StageShardingPerMicroBatchJ(const StepSettings& settings, const LayerTable& table, int t,
                                   std::int64_t d, const StageWeights& w) {
  return OverClasses(table, t, d, w, [&](const WeightClass& c, double bytes, double gathered) {
    return ShardingPerMicroBatchJ(settings, c.t, c.d, c.r, bytes, gathered);
  });
}

double StageShardingEdgeS(const StepSettings& settings, const LayerTable& table, int t,
                          std::int64_t d, const StageWeights& first_layer) {
  return OverClasses(table, t, d, first_layer,
                     [&](const WeightClass& c, double bytes, double gathered) {
                       return ShardingEdgeS(settings, c.t, c.d, c.r, bytes, gathered);
                     });
}

double ShardedLoadS(double compute_s, double collectives_s, double edge_s) {
  return collectives_s > 0 ? std::max(compute_s + edge_s, collectives_s) : compute_s;
}

double ShardingPerMicroBatchJ(const StepSettings& settings, int t, std::int64_t d, std::int64_t r,
                              double weight_bytes, double gathered_bytes) {
  return PerMicroBatch(settings, t, d, r, weight_bytes, GatheredOr(gathered_bytes, weight_bytes),
                       JoulesOn(settings));
}

double TiedEmbeddingS(const StepSettings& settings, int t, std::int64_t d, int stages,
                      double bytes) {
  if (stages < 2 || !(bytes > 0)) return 0;
  return settings.network.CollectiveS(CollectiveKind::kAllReduce, bytes, TiedGroup(t, d, stages));
}

double TiedEmbeddingJ(const StepSettings& settings, int t, std::int64_t d, int stages,
                      double bytes) {
  if (stages < 2 || !(bytes > 0)) return 0;
  return settings.network.CollectiveJ(CollectiveKind::kAllReduce, bytes, TiedGroup(t, d, stages));
}

}  // namespace phaze
