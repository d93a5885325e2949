#include "phaze/search/robustness.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <mutex>
#include <numeric>

#include "phaze/arch/arch_config.hpp"
#include "phaze/core/parallel.hpp"
#include "phaze/estimate/device_model.hpp"

namespace phaze {

namespace {

// Geometric mean over models of throughput / reference (models without a reference left out).
double Speedup(const std::vector<double>& throughput, const std::vector<double>& reference) {
  double log_sum = 0;
  int n = 0;
  for (std::size_t m = 0; m < throughput.size(); ++m) {
    if (reference[m] <= 0 || throughput[m] <= 0) continue;
    log_sum += std::log(throughput[m] / reference[m]);
    ++n;
  }
  return n == 0 ? 0 : std::exp(log_sum / n);
}

ArchConfig Perturbed(ArchConfig arch, const std::string& key, double factor,
                     const std::map<std::string, double>& overrides) {
  const double base = DeviceTechnologyFor(arch, overrides).Get(key);
  arch.calibration[key] = std::min(key == "kernel_overhead_s" ? 1e300 : 1.0, base * factor);
  return arch;
}

}  // namespace

RobustnessStudy StudyRobustness(const SearchContext& context, const ArchSearchOutcome& outcome,
                                int best_common, const std::vector<double>& reference,
                                int candidates, int threads, ProgressSink& progress,
                                const std::atomic<bool>* stop) {
  RobustnessStudy study;
  const RunConfig& run = context.Run();
  if (run.estimator.name != "device" && run.estimator.name != "gpu") {
    study.skipped = "the estimator '" + run.estimator.name + "' has no technology parameters";
    return study;
  }
  if (best_common < 0 || run.arch.presets.empty()) {
    study.skipped = best_common < 0 ? "no common winner" : "no reference preset (arch.presets)";
    return study;
  }
  // The estimator's params: override the calibration; a parameter they fix is not perturbed.
  std::map<std::string, double> overrides;
  std::vector<std::string> keys;
  const ConfigNode params = run.estimator.Params();
  for (const char* key : {"gemm_efficiency", "memory_efficiency", "kernel_overhead_s"}) {
    if (auto v = params.Optional(key)) {
      overrides[key] = v->AsDouble();
      study.skipped += (study.skipped.empty() ? "fixed by estimator params: " : ", ") +
                       std::string(key);
    } else {
      keys.push_back(key);
    }
  }
  if (auto v = params.Optional("concurrent_kernels")) {
    overrides["concurrent_kernels"] = v->AsBool() ? 1 : 0;
  }

  // The candidates: the best configs by common score, the winner first.
  const auto& explored = outcome.explored;
  std::vector<int> order;
  for (std::size_t i = 0; i < explored.size(); ++i) {
    if (explored[i].evaluation.score > 0) order.push_back(static_cast<int>(i));
  }
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    if (a == best_common || b == best_common) return a == best_common && b != best_common;
    return explored[a].evaluation.score > explored[b].evaluation.score;
  });
  order.resize(std::min<std::size_t>(order.size(), static_cast<std::size_t>(std::max(1, candidates))));
  study.candidates = static_cast<int>(order.size());
  study.winner = explored[best_common].point.arch.name;
  const auto& models = context.Models();
  std::vector<double> base(models.size());
  for (std::size_t m = 0; m < models.size(); ++m) {
    base[m] = explored[best_common].evaluation.models[m].best.Throughput();
  }
  study.base_speedup = Speedup(base, reference);

  // Per perturbation, on `threads` threads: the reference and the winner exactly, then each other
  // candidate only if its upper bounds (SearchContext::Evaluate with an incumbent) can beat the
  // best perturbed score so far — one that cannot is no perturbed winner (ties go to the earlier
  // candidate, the winner first), so the rows are those of evaluating every candidate.
  std::vector<std::pair<std::string, double>> perturbations;
  for (const auto& key : keys) {
    for (double f : {0.9, 1.1}) perturbations.push_back({key, f});
  }
  // results[p][c + 1][m]: throughput (c = −1: the reference); scores[p][c] (0: pruned).
  std::vector<std::vector<std::vector<double>>> results(
      perturbations.size(),
      std::vector<std::vector<double>>(order.size() + 1, std::vector<double>(models.size())));
  std::vector<std::vector<double>> scores(perturbations.size(),
                                          std::vector<double>(order.size()));
  const ArchConfig preset = LoadArchConfig(run.arch.presets.front());
  std::mutex progress_mutex;
  std::int64_t done = 0;
  progress.Begin("robustness",
                 static_cast<std::int64_t>(perturbations.size() * (order.size() + 1)));
  auto stopped = [&] { return stop && stop->load(); };
  ForEachIndex(perturbations.size(), threads, [&](std::size_t p) {
    if (stopped()) return;
    const auto& [key, factor] = perturbations[p];
    auto tick = [&] {
      const std::lock_guard<std::mutex> lock(progress_mutex);
      progress.Update(++done, key + " × " + (factor < 1 ? "0.9" : "1.1"));
    };
    const ArchConfig arch = Perturbed(preset, key, factor, overrides);
    for (std::size_t m = 0; m < models.size(); ++m) {
      if (models[m].expert) {
        const std::optional<PlanChoice> x = context.Evaluator().EvaluateExpert(models[m], arch);
        results[p][0][m] = x ? x->Throughput() : 0;
      } else {
        results[p][0][m] = context.Evaluator().Evaluate(models[m], arch, false).best.Throughput();
      }
    }
    tick();
    double best = 0;
    for (std::size_t c = 0; c < order.size() && !stopped(); ++c) {
      ArchPoint point = explored[order[c]].point;
      point.arch = Perturbed(point.arch, key, factor, overrides);
      // Every model settles with the score: only the common score decides the winner.
      const Incumbent incumbent{
          std::vector<double>(models.size(), std::numeric_limits<double>::infinity()), best};
      const ConfigEvaluation ev = context.Evaluate(point, c == 0 ? nullptr : &incumbent);
      for (std::size_t m = 0; m < models.size(); ++m) {
        results[p][c + 1][m] = ev.models[m].best.Throughput();
      }
      scores[p][c] = ev.score;
      best = std::max(best, ev.score);
      tick();
    }
  });
  progress.End();
  if (stopped()) {  // some perturbations unfinished: no rows rather than rows of zeros
    study.skipped = "interrupted (Ctrl-C or SIGTERM) before it finished";
    return study;
  }

  for (std::size_t p = 0; p < perturbations.size(); ++p) {
    int best = 0;
    for (std::size_t c = 1; c < order.size(); ++c) {
      if (scores[p][c] > scores[p][best]) best = static_cast<int>(c);
    }
    RobustnessRow row;
    row.parameter = perturbations[p].first;
    row.factor = perturbations[p].second;
    row.winner = explored[order[best]].point.arch.name;
    row.winner_changed = best != 0;
    row.speedup = Speedup(results[p][best + 1], results[p][0]);
    study.rows.push_back(row);
  }
  return study;
}

}  // namespace phaze
