#include "phaze/search/search_driver.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <thread>

#include "phaze/arch/area_model.hpp"
#include "phaze/core/error.hpp"
#include "phaze/core/paths.hpp"

namespace phaze {
namespace {

double Since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::string SpacePath(const RunConfig& run) {
  if (run.arch.space.empty() || run.arch.space == "paper") {
    return (ShareDirectory() / "arch" / "paper-space.yaml").string();
  }
  std::filesystem::path p(run.arch.space);
  if (p.is_relative()) p = std::filesystem::path(run.source).parent_path() / p;
  return p.string();
}

}  // namespace

double CommonScore(const std::vector<double>& throughputs, const std::vector<double>& weights,
                   const std::string& mean) {
  if (throughputs.empty()) return 0;
  double sum = 0, weight_sum = 0, log_sum = 0;
  for (std::size_t i = 0; i < throughputs.size(); ++i) {
    if (!(throughputs[i] > 0)) return 0;
    sum += (mean == "weighted" ? weights[i] : 1.0) * throughputs[i];
    weight_sum += mean == "weighted" ? weights[i] : 1.0;
    log_sum += std::log(throughputs[i]);
  }
  if (mean == "geometric") return std::exp(log_sum / static_cast<double>(throughputs.size()));
  return sum / weight_sum;
}

bool SearchResults::AnyFeasible() const {
  return std::any_of(best_per_model.begin(), best_per_model.end(), [](int i) { return i >= 0; });
}

double SearchResults::ReferenceThroughput(const std::string& model) const {
  if (run.arch.presets.empty()) return 0;
  const std::string& ref = run.arch.presets.front();
  double dp = 0;
  for (const auto& b : baselines) {
    if (b.arch != ref || b.model != model) continue;
    if (b.kind == "expert") return b.plan.Throughput();
    dp = b.plan.Throughput();
  }
  const bool has_expert = std::any_of(models.begin(), models.end(), [&](const PreparedModel& m) {
    return m.name == model && m.expert.has_value();
  });
  return has_expert ? 0 : dp;
}

SearchResults RunSearchDriver(const RunConfig& run, const Registry& registry,
                              ProgressSink& progress, Logger& log,
                              const SearchDriverOptions& options) {
  const auto t_start = std::chrono::steady_clock::now();
  run.CheckComponents(registry, true, true, true);
  SearchResults res;
  res.run = run;
  res.plugins = registry.Plugins();

  // 1. Models: the architecture-independent layer graphs.
  auto t0 = std::chrono::steady_clock::now();
  const auto strategy = registry.CreateStrategy(run.strategy.name, run.strategy.Params());
  for (const auto& entry : run.models) {
    res.models.push_back(PrepareModel(entry, run, *strategy));
    const auto& m = res.models.back();
    log.Verbose("model " + m.name + ": " + std::to_string(m.slices.size()) +
                " (micro-batch, width) slices");
    for (const auto& r : m.refused) log.Verbose("  " + m.name + " " + r);
  }
  res.timings.prepare_s = Since(t0);

  // 2. The space.
  const AreaModel area = AreaModel::Default();
  const ArchSpace space = ArchSpace::LoadFile(SpacePath(run), area);
  res.space_name = space.name;
  res.area_budget_mm2 = space.area_budget_um2 * 1e-6;
  const std::vector<ArchPoint> configs = space.Enumerate(area);
  if (configs.empty()) {
    throw ConfigError(SpacePath(run) + ": the space has no config inside the area window");
  }

  const auto estimator = registry.CreateEstimator(run.estimator.name, run.estimator.Params());
  const auto backend =
      registry.CreateSolverBackend(run.solver.backend.name, run.solver.backend.Params());
  res.solver_version = backend->Version();
  const ModelEvaluator evaluator(run, estimator, backend);

  std::vector<double> weights;
  for (const auto& m : res.models) weights.push_back(m.weight);
  auto evaluate = [&](const ArchPoint& point) {
    ConfigEvaluation ce;
    std::vector<double> thr;
    for (const auto& m : res.models) {
      ce.models.push_back(evaluator.Evaluate(m, point.arch, /*with_expert=*/false));
      thr.push_back(ce.models.back().best.Throughput());
    }
    ce.score = CommonScore(thr, weights, run.search.mean);
    return ce;
  };

  // 3. The search.
  ArchSearchOptions so;
  so.exhaustive = run.search.mode == "exhaustive";
  so.hysteresis_level = run.search.hysteresis_level;
  so.bucket_width_mm2 = run.search.bucket_width_mm2;
  so.max_configs = run.search.max_configs;
  so.max_seconds = run.search.max_seconds;
  so.threads = options.threads > 0 ? options.threads
               : run.search.threads > 0
                   ? static_cast<int>(run.search.threads)
                   : static_cast<int>(std::max(1U, std::thread::hardware_concurrency()));
  t0 = std::chrono::steady_clock::now();
  res.outcome = RunArchSearch(configs, so, evaluate, progress, options.stop);
  res.timings.search_s = Since(t0);

  // 4. Winners.
  const auto& explored = res.outcome.explored;
  res.best_per_model.assign(res.models.size(), -1);
  for (std::size_t c = 0; c < explored.size(); ++c) {
    const auto& ev = explored[c].evaluation;
    for (std::size_t m = 0; m < res.models.size(); ++m) {
      const double thr = ev.models[m].best.Throughput();
      const int cur = res.best_per_model[m];
      if (thr > 0 && (cur < 0 || thr > explored[cur].evaluation.models[m].best.Throughput())) {
        res.best_per_model[m] = static_cast<int>(c);
      }
    }
    if (ev.score > 0 && (res.best_common < 0 || ev.score > explored[res.best_common].evaluation.score)) {
      res.best_common = static_cast<int>(c);
    }
  }

  // 5. Baselines (skipped when interrupted).
  t0 = std::chrono::steady_clock::now();
  if (!(options.stop && options.stop->load())) {
    auto add = [&](const std::string& preset, const PreparedModel& m) {
      const ArchConfig arch = LoadArchConfig(preset);
      const ModelEvaluation ev = evaluator.Evaluate(m, arch, /*with_expert=*/true);
      const double area_mm2 = estimator->AreaMm2(arch);
      if (ev.expert) res.baselines.push_back({preset, arch, m.name, "expert", area_mm2, *ev.expert});
      res.baselines.push_back({preset, arch, m.name, "phaze-dp", area_mm2, ev.best});
    };
    for (const auto& m : res.models) {
      for (const auto& p : run.arch.presets) add(p, m);
      for (const auto& p : m.presets) add(p, m);
    }
  }
  res.timings.baselines_s = Since(t0);

  // 6. The winner's main layer schedule: first model, on the common winner (else its own).
  if (!res.models.empty()) {
    int c = res.best_common >= 0 ? res.best_common : res.best_per_model[0];
    if (c >= 0) {
      const auto& m = res.models[0];
      const auto& plan = explored[c].evaluation.models[0].best;
      // The unique layer with the most backward ops (the transformer block).
      if (const auto* slice = m.FindSlice(plan.micro_batch, plan.plan.tensor_parallel)) {
        const LayerGraph* g = &slice->graph;
        const UniqueLayer* main = &g->unique_layers.front();
        for (const auto& u : g->unique_layers) {
          if (u.backward.Ops().size() > main->backward.Ops().size()) main = &u;
        }
        WinnerSchedule w;
        w.result = evaluator.ScheduleLayer(m, explored[c].point.arch, plan.micro_batch,
                                           plan.plan.tensor_parallel, main->name, Pass::kBackward,
                                           &w.problem);
        w.title = m.name + " " + main->name + " backward, b=" + std::to_string(plan.micro_batch) +
                  ", t=" + std::to_string(plan.plan.tensor_parallel) + ", on " +
                  explored[c].point.arch.name;
        res.winner_schedule = std::move(w);
      }
    }
  }
  for (auto& m : res.models) m.slices.clear();  // the graphs are large and no longer needed
  res.timings.total_s = Since(t_start);
  return res;
}

}  // namespace phaze
