#include "phaze/system/gradient_sync.hpp"

namespace phaze {

namespace {

// The step's reduction priced by `price` (Network::CollectiveS or CollectiveJ), as the sharding
// has it: all-reduce of the gradients; reduce-scatter of them and all-gather of the weights
// (optimizer); the all-gather only (gradients: reduce-scattered every micro-batch); nothing
// (parameters).
template <typename Price>
double Reduction(const StepSettings& settings, int t, std::int64_t d, std::int64_t r,
                 double weight_bytes, Price price) {
  const CommGroup group{d * r, t / r};
  const double gradients = settings.gradient_reduction_bytes_per_weight_byte * weight_bytes;
  switch (settings.sharding) {
    case Sharding::kNone:
      return price(CollectiveKind::kAllReduce, gradients, group);
    case Sharding::kOptimizer:
      return price(CollectiveKind::kReduceScatter, gradients, group) +
             price(CollectiveKind::kAllGather, weight_bytes, group);
    case Sharding::kGradients:
      return price(CollectiveKind::kAllGather, weight_bytes, group);
    case Sharding::kParameters:
      return 0.0;
  }
  return 0.0;
}

// The collectives every micro-batch runs: the gradients' reduce-scatter (gradients, parameters)
// and the weights' two all-gathers (parameters).
template <typename Price>
double PerMicroBatch(const StepSettings& settings, int t, std::int64_t d, std::int64_t r,
                     double weight_bytes, Price price) {
  if (settings.sharding < Sharding::kGradients || d * r < 2) return 0.0;
  const CommGroup group{d * r, t / r};
  double total = price(CollectiveKind::kReduceScatter,
                       settings.gradient_reduction_bytes_per_weight_byte * weight_bytes, group);
  if (settings.sharding == Sharding::kParameters) {
    total += 2 * price(CollectiveKind::kAllGather, weight_bytes, group);
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

CommGroup TiedGroup(int t, std::int64_t d, int stages) {
  return CommGroup{2, static_cast<std::int64_t>(t) * d * (stages - 1)};
}

}  // namespace

double GradientSyncS(const StepSettings& settings, int t, std::int64_t d, std::int64_t r,
                     double weight_bytes) {
  return Reduction(settings, t, d, r, weight_bytes, SecondsOn(settings));
}

double ExposedGradientSyncS(const StepSettings& settings, int t, std::int64_t d, std::int64_t r,
                            double weight_bytes) {
  return (1 - settings.gradient_reduction_overlap) * GradientSyncS(settings, t, d, r, weight_bytes);
}

double GradientSyncJ(const StepSettings& settings, int t, std::int64_t d, std::int64_t r,
                     double weight_bytes) {
  return Reduction(settings, t, d, r, weight_bytes, JoulesOn(settings));
}

double ShardingPerMicroBatchS(const StepSettings& settings, int t, std::int64_t d,
                              std::int64_t r, double weight_bytes) {
  return PerMicroBatch(settings, t, d, r, weight_bytes, SecondsOn(settings));
}

double ShardingPerMicroBatchJ(const StepSettings& settings, int t, std::int64_t d,
                              std::int64_t r, double weight_bytes) {
  return PerMicroBatch(settings, t, d, r, weight_bytes, JoulesOn(settings));
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
