#include "phaze/system/gradient_sync.hpp"

namespace phaze {

namespace {

// The reduction's collectives priced by `price` (Network::CollectiveS or CollectiveJ).
template <typename Price>
double Reduction(const StepSettings& settings, int t, std::int64_t d, std::int64_t r,
                 double weight_bytes, Price price) {
  const CommGroup group{d * r, t / r};
  const double gradients = settings.gradient_reduction_bytes_per_weight_byte * weight_bytes;
  if (settings.distributed_optimizer) {
    return price(CollectiveKind::kReduceScatter, gradients, group) +
           price(CollectiveKind::kAllGather, weight_bytes, group);
  }
  return price(CollectiveKind::kAllReduce, gradients, group);
}

CommGroup TiedGroup(int t, std::int64_t d, int stages) {
  return CommGroup{2, static_cast<std::int64_t>(t) * d * (stages - 1)};
}

}  // namespace

double GradientSyncS(const StepSettings& settings, int t, std::int64_t d, std::int64_t r,
                     double weight_bytes) {
  return Reduction(settings, t, d, r, weight_bytes,
                   [&](CollectiveKind k, double bytes, const CommGroup& g) {
                     return settings.network.CollectiveS(k, bytes, g);
                   });
}

double ExposedGradientSyncS(const StepSettings& settings, int t, std::int64_t d, std::int64_t r,
                            double weight_bytes) {
  return (1 - settings.gradient_reduction_overlap) * GradientSyncS(settings, t, d, r, weight_bytes);
}

double GradientSyncJ(const StepSettings& settings, int t, std::int64_t d, std::int64_t r,
                     double weight_bytes) {
  return Reduction(settings, t, d, r, weight_bytes,
                   [&](CollectiveKind k, double bytes, const CommGroup& g) {
                     return settings.network.CollectiveJ(k, bytes, g);
                   });
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
