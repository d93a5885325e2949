#include "phaze/search/search_driver.hpp"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <optional>

#include "phaze/arch/area_model.hpp"
#include "phaze/core/parallel.hpp"
#include "phaze/search/search_checkpoint.hpp"

namespace phaze {

std::string_view ToString(BaselineKind kind) {
  return kind == BaselineKind::kExpert ? "expert" : "phaze-dp";
}
namespace {

// Configs the robustness study re-evaluates under each perturbation (the best by common score).
constexpr int kRobustnessCandidates = 5;

double Since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

bool SearchResults::AnyFeasible() const {
  return std::any_of(best_per_model.begin(), best_per_model.end(), [](int i) { return i >= 0; });
}

double SearchResults::ReferenceThroughput(const std::string& model) const {
  if (run.arch.presets.empty()) return 0;
  const std::string& ref = run.arch.presets.front();
  double dp = 0;
  for (const auto& b : baselines) {
    if (b.arch != ref || b.model != model) continue;
    if (b.kind == BaselineKind::kExpert) return b.plan.Throughput();
    dp = b.plan.Throughput();
  }
  const bool has_expert = std::any_of(models.begin(), models.end(), [&](const PreparedModel& m) {
    return m.name == model && m.expert.has_value();
  });
  return has_expert ? 0 : dp;
}

std::string SearchResults::ReferenceLabel(const std::string& model) const {
  if (run.arch.presets.empty()) return "";
  const bool expert = std::any_of(models.begin(), models.end(), [&](const PreparedModel& m) {
    return m.name == model && m.expert.has_value();
  });
  return run.arch.presets.front() + (expert ? " expert" : " + Phaze DP");
}

std::string SearchResults::CommonReferenceLabel() const {
  std::string common;
  for (const auto& m : models) {
    const std::string label = ReferenceLabel(m.name);
    if (!common.empty() && label != common) return "per model";
    common = label;
  }
  return common;
}

SearchResults RunSearchDriver(const SearchContext& context, ProgressSink& progress,
                              const SearchDriverOptions& options) {
  const auto t_start = std::chrono::steady_clock::now();
  SearchResults res;
  res.run = context.Run();
  res.plugins = context.Plugins();
  res.space_name = context.SpaceName();
  res.area_budget_mm2 = context.AreaBudgetMm2();
  res.solver_version = context.SolverVersion();
  res.timings.prepare_s = context.PrepareSeconds();
  const RunConfig& run = context.Run();
  const ModelEvaluator& evaluator = context.Evaluator();
  const std::vector<PreparedModel>& models = context.Models();

  // The search.
  ArchSearchOptions so;
  so.exhaustive = run.search.mode == SearchMode::kExhaustive;
  so.prune = run.search.prune;
  so.hysteresis_level = run.search.hysteresis_level;
  so.bucket_width_mm2 = run.search.bucket_width_mm2;
  so.max_configs = run.search.max_configs;
  so.max_seconds = run.search.max_seconds;
  so.threads = context.SearchThreads(options.threads);
  res.timings.threads = so.threads;
  res.timings.processes = options.processes;
  so.remote = options.remote;
  so.local_name = options.local_name;
  std::optional<SearchCheckpoint> checkpoint;
  if (!options.checkpoint.empty()) {
    const double every = run.search.checkpoint_seconds;
    if (options.resume) {
      checkpoint = SearchCheckpoint::Resume(options.checkpoint, context.Fingerprint(), every,
                                            &so.resumed);
      res.resumed = static_cast<std::int64_t>(so.resumed.size());
    } else {
      checkpoint = SearchCheckpoint::Create(
          options.checkpoint, context.Fingerprint(),
          run.source.empty() ? "" : std::filesystem::absolute(run.source).string(), every);
    }
    so.on_finished = [&](std::int64_t index, const ConfigEvaluation& e) { checkpoint->Add(index, e); };
  }
  auto t0 = std::chrono::steady_clock::now();
  const bool seeds = so.exhaustive && so.prune == PruneMode::kWinners;
  if (seeds && !so.resumed.empty()) {
    // A resumed journal keeps its own visiting order, whatever this run's budget: a seeded one
    // (its first config not the largest) starts from that seed again, an unseeded one from none.
    if (const auto& [config, evaluation] = so.resumed.front(); config != 0) {
      res.seed = {config, context.Configs().at(static_cast<std::size_t>(config)).arch.name,
                  evaluation};
      so.seed = {{config, evaluation}};
    }
  } else if (seeds && so.max_configs == 0) {
    // The whole space, pruned for the winners: start from a promising config.
    res.seed = context.SeedIncumbent(so.threads, progress, options.stop);
    if (res.seed.config >= 0) so.seed = {{res.seed.config, res.seed.evaluation}};
    res.timings.seed_s = Since(t0);
  }
  res.outcome = RunArchSearch(
      context.Configs(), so,
      [&](const ArchPoint& p, const Incumbent* incumbent) { return context.Evaluate(p, incumbent); },
      progress, options.stop);
  res.timings.search_s = Since(t0);
  if (checkpoint) checkpoint->Flush();

  // Winners.
  const auto& explored = res.outcome.explored;
  res.best_per_model.assign(models.size(), -1);
  for (std::size_t c = 0; c < explored.size(); ++c) {
    const auto& ev = explored[c].evaluation;
    for (std::size_t m = 0; m < models.size(); ++m) {
      const double score = ev.models[m].score;  // search.objective's value
      const int cur = res.best_per_model[m];
      if (score > 0 && (cur < 0 || score > explored[cur].evaluation.models[m].score)) {
        res.best_per_model[m] = static_cast<int>(c);
      }
    }
    if (ev.score > 0 && (res.best_common < 0 || ev.score > explored[res.best_common].evaluation.score)) {
      res.best_common = static_cast<int>(c);
    }
  }

  // The hysteresis beside the optimum (hysteresis_comparison.hpp).
  t0 = std::chrono::steady_clock::now();
  if (run.search.compare_hysteresis && run.search.mode == SearchMode::kExhaustive &&
      Complete(res.outcome.stop_reason)) {
    res.hysteresis = CompareHysteresis(res.outcome, run.search.hysteresis_level,
                                       run.search.bucket_width_mm2,
                                       [&](const ArchPoint& p) { return context.Evaluate(p); });
  }
  res.timings.hysteresis_s = Since(t0);

  // Baselines (skipped when interrupted).
  t0 = std::chrono::steady_clock::now();
  if (!(options.stop && options.stop->load())) {
    const AreaModel area = AreaModel::Default();  // the one owner of area (as for the space)
    std::vector<std::pair<const PreparedModel*, std::string>> pairs;  // (model, preset), in order
    for (const auto& m : models) {
      for (const auto& p : run.arch.presets) pairs.emplace_back(&m, p);
      for (const auto& p : m.presets) pairs.emplace_back(&m, p);
    }
    std::vector<std::vector<BaselineResult>> rows(pairs.size());
    ForEachIndex(pairs.size(), so.threads, [&](std::size_t i) {
      const auto& [m, preset] = pairs[i];
      const ArchConfig arch = LoadArchConfig(preset);
      const ModelEvaluation ev = evaluator.Evaluate(*m, arch, /*with_expert=*/true);
      const double area_mm2 = area.Area(arch).TotalMm2();
      if (ev.expert)
        rows[i].push_back({preset, arch, m->name, BaselineKind::kExpert, area_mm2, *ev.expert});
      rows[i].push_back({preset, arch, m->name, BaselineKind::kPhazeDp, area_mm2, ev.best});
    });
    for (auto& r : rows) res.baselines.insert(res.baselines.end(), r.begin(), r.end());
  }
  res.timings.baselines_s = Since(t0);

  // Robustness of the common winner to the device model's fitted parameters (robustness.hpp).
  t0 = std::chrono::steady_clock::now();
  if (!(options.stop && options.stop->load())) {
    std::vector<double> reference;
    for (const auto& m : models) reference.push_back(res.ReferenceThroughput(m.name));
    res.robustness = StudyRobustness(context, res.outcome, res.best_common, reference,
                                     kRobustnessCandidates, so.threads, progress, options.stop);
  }
  res.timings.robustness_s = Since(t0);
  // Stopped after the search, during the baselines or the robustness study: the results lack
  // them, so they are marked partial (exit 4) and --resume finishes them from the journal.
  if (options.stop && options.stop->load() && Complete(res.outcome.stop_reason)) {
    res.outcome.stop_reason = StopReason::kInterrupted;
  }

  // The winner's main layer schedule: first model, on the common winner (else its own).
  if (!models.empty()) {
    int c = res.best_common >= 0 ? res.best_common : res.best_per_model[0];
    if (c >= 0) {
      const auto& m = models[0];
      const auto& plan = explored[c].evaluation.models[0].best;
      // The unique layer with the most backward ops (the transformer block).
      if (const auto* slice = m.FindSlice(plan.micro_batch, plan.plan.tensor_parallel,
                                          plan.strategy_index)) {
        const LayerGraph* g = &slice->graph;
        const UniqueLayer* main = &g->unique_layers.front();
        for (const auto& u : g->unique_layers) {
          if (u.backward.Ops().size() > main->backward.Ops().size()) main = &u;
        }
        WinnerSchedule w;
        w.result = evaluator.ScheduleLayer(m, explored[c].point.arch, plan.micro_batch,
                                           plan.plan.tensor_parallel, plan.strategy_index,
                                           main->name, Pass::kBackward, &w.problem);
        w.title = m.name + " " + main->name + " backward, b=" + std::to_string(plan.micro_batch) +
                  ", t=" + std::to_string(plan.plan.tensor_parallel) + ", on " +
                  explored[c].point.arch.name;
        res.winner_schedule = std::move(w);
      }
    }
  }
  for (const auto& m : models) res.models.push_back(m.WithoutSlices());
  res.schedule_cache = evaluator.SharedScheduler().CacheStats();
  res.timings.total_s = res.timings.prepare_s + Since(t_start);
  return res;
}

}  // namespace phaze
