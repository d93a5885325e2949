#include "phaze/search/hysteresis_comparison.hpp"

#include <algorithm>

namespace phaze {

HysteresisComparison CompareHysteresis(
    const ArchSearchOutcome& outcome, std::int64_t level, double bucket_width_mm2,
    const std::function<ConfigEvaluation(const ArchPoint&)>& evaluate) {
  HysteresisComparison h;
  h.level = level;
  const auto& explored = outcome.explored;
  const std::size_t models = explored.empty() ? 0 : explored.front().evaluation.models.size();
  h.best_per_model.assign(models, -1);
  h.model_scores.assign(models, 0);
  std::vector<double> bucket_best;
  double best_in_bucket = 0;
  for (std::size_t c = 0; c < explored.size(); ++c) {
    const ExploredConfig& e = explored[c];
    ++h.visited;
    const ConfigEvaluation* ev = &e.evaluation;
    ConfigEvaluation now;
    if (ev->pruned) {
      // Skipped when its bounds can change no maximum the walk keeps (header comment).
      bool changes = ev->pruned->score_bound > best_in_bucket;
      for (std::size_t m = 0; m < models && !changes; ++m) {
        const double bound = ev->models[m].pruned ? ev->pruned->model_bounds[m]
                                                  : ev->models[m].score;
        changes = bound > h.model_scores[m];
      }
      if (changes) {
        now = evaluate(e.point);
        ev = &now;
        ++h.evaluated_now;
      }
    }
    if (!ev->pruned) {
      best_in_bucket = std::max(best_in_bucket, ev->score);
      if (ev->score > h.score) {
        h.score = ev->score;
        h.best_common = static_cast<int>(c);
      }
      for (std::size_t m = 0; m < models; ++m) {
        if (ev->models[m].score > h.model_scores[m]) {
          h.model_scores[m] = ev->models[m].score;
          h.best_per_model[m] = static_cast<int>(c);
        }
      }
    }
    const bool bucket_ends =
        c + 1 == explored.size() ||
        AreaBucket(explored[c + 1].point.area_um2, bucket_width_mm2) != e.bucket;
    if (bucket_ends) {
      bucket_best.push_back(best_in_bucket);
      best_in_bucket = 0;
      if (HysteresisConverged(bucket_best, level)) {
        h.converged = true;
        break;
      }
    }
  }
  return h;
}

}  // namespace phaze
