#include "phaze/search/search_context.hpp"

#include <fmt/printf.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <map>
#include <mutex>
#include <thread>
#include <tuple>

#include "phaze/arch/arch_config.hpp"
#include "phaze/arch/area_model.hpp"
#include "phaze/core/error.hpp"
#include "phaze/core/json.hpp"
#include "phaze/core/parallel.hpp"
#include "phaze/core/paths.hpp"
#include "phaze/core/text_format.hpp"
#include "phaze/strategy/composed_strategy.hpp"

namespace phaze {
namespace {

// FNV-1a, 64 bit.
class Digest {
 public:
  void Add(std::string_view s) {
    for (unsigned char c : s) hash_ = (hash_ ^ c) * 1099511628211ULL;
    hash_ = (hash_ ^ 0xff) * 1099511628211ULL;  // separator
  }
  void Add(double v) { Add(std::to_string(std::bit_cast<std::uint64_t>(v))); }
  std::string Hex() const {
    std::string buf = fmt::sprintf("%016llx", static_cast<unsigned long long>(hash_));
    return buf;
  }

 private:
  std::uint64_t hash_ = 14695981039346656037ULL;
};

}  // namespace

double CommonScore(const std::vector<double>& throughputs, const std::vector<double>& weights,
                   ScoreMean mean) {
  if (throughputs.empty()) return 0;
  double sum = 0, weight_sum = 0, log_sum = 0;
  for (std::size_t i = 0; i < throughputs.size(); ++i) {
    if (!(throughputs[i] > 0)) return 0;
    const double w = mean == ScoreMean::kWeighted ? weights[i] : 1.0;
    sum += w * throughputs[i];
    weight_sum += w;
    log_sum += std::log(throughputs[i]);
  }
  if (mean == ScoreMean::kGeometric) return std::exp(log_sum / static_cast<double>(throughputs.size()));
  return sum / weight_sum;
}

SearchContext::SearchContext(const RunConfig& run, const Registry& registry, Logger& log)
    : run_(run), plugins_(registry.Plugins()) {
  run_.CheckComponents(registry, true, true, true);

  const auto t0 = std::chrono::steady_clock::now();
  // The architecture-independent layer graphs.
  const auto strategies = CreateRunStrategies(registry, run_.strategies);
  for (const auto& entry : run_.models) {
    models_.push_back(PrepareModel(entry, run_, strategies));
    const auto& m = models_.back();
    weights_.push_back(m.weight);
    log.Verbose("model " + m.name + ": " + std::to_string(m.slices.size()) +
                " (micro-batch, width) slices");
    for (const auto& r : m.refused) log.Verbose("  " + m.name + " " + r);
    // A strategy listed beside others that slices the model at no width drops out of its search:
    // said, since a typo in its params (an expert_parallel no width allows) would go unnoticed.
    for (std::size_t i = 0; i < run_.strategies.size() && run_.strategies.size() > 1; ++i) {
      if (std::ranges::any_of(m.slices,
                              [&](const auto& s) { return s.strategy == static_cast<int>(i); })) {
        continue;
      }
      const std::string name = run_.strategies[i].Name();
      std::string why;
      for (const auto& r : m.refused) {
        if (why.empty() && r.rfind(name + " ", 0) == 0)
          why = " (" + r.substr(name.size() + 1) + ")";
      }
      log.Warn(m.name + ": strategy[" + std::to_string(i) + "] " +
               run_.strategies[i].ToJson().Dump(-1) +
               " slices it at none of the tensor-parallel widths" + why +
               "; its search goes on without it");
    }
  }

  // The baselines' presets, read now so that a typo fails before the search, not after it.
  auto check_presets = [](const std::vector<std::string>& names,
                          const std::vector<ConfigNode>& nodes) {
    for (size_t i = 0; i < names.size(); ++i) {
      const auto origin = i < nodes.size() ? std::optional<ConfigNode>(nodes[i]) : std::nullopt;
      LoadNamed(origin, [&] { return LoadArchConfig(names[i]); });
    }
  };
  check_presets(run_.arch.presets, run_.arch.preset_nodes);
  for (const auto& entry : run_.models) check_presets(entry.presets, entry.preset_nodes);

  // The space.
  const AreaModel area = AreaModel::Default();
  const ArchSpace space =
      LoadNamed(run_.arch.space_node, [&] { return ArchSpace::LoadFile(run_.SpaceFile(), area); });
  space_name_ = space.name;
  area_budget_mm2_ = space.area_budget_um2 * 1e-6;
  configs_ = space.Enumerate(area);
  if (configs_.empty()) {
    throw ConfigError(run_.SpaceFile() + ": the space has no config inside the area window");
  }

  // The families (Evaluate): configs sharing their tensor cores.
  std::map<std::tuple<std::int64_t, std::int64_t, std::int64_t>, std::vector<std::size_t>> shapes;
  for (std::size_t c = 0; c < configs_.size(); ++c) {
    const ArchConfig& a = configs_[c].arch;
    shapes[{a.num_tc, a.pe_x, a.pe_y}].push_back(c);
  }
  family_of_.assign(configs_.size(), -1);
  for (const auto& [shape, members] : shapes) {
    if (members.size() < 2) continue;
    auto family = std::make_unique<Family>();
    family->first = members.front();
    for (std::size_t c : members) {
      family->members.push_back(configs_[c].arch);
      family_of_[c] = static_cast<int>(families_.size());
    }
    families_.push_back(std::move(family));
  }

  estimator_ = registry.CreateEstimator(run_.estimator.name, run_.estimator.Params());
  backend_ = registry.CreateSolverBackend(run_.solver.backend.name, run_.solver.backend.Params());
  evaluator_ = std::make_unique<ModelEvaluator>(run_, estimator_, backend_);
  prepare_s_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

int MaxSearchThreads() {
  return static_cast<int>(std::max(64U, 4 * std::thread::hardware_concurrency()));
}

int SearchContext::SearchThreads(int requested) const {
  if (requested > 0) return std::min(requested, MaxSearchThreads());
  if (run_.search.threads > 0) {
    return static_cast<int>(std::min<std::int64_t>(run_.search.threads, MaxSearchThreads()));
  }
  return static_cast<int>(std::max(1U, std::thread::hardware_concurrency()));
}

std::string SearchContext::SolverVersion() const { return backend_->Version(); }

ConfigEvaluation SearchContext::Evaluate(const ArchPoint& point, const Incumbent* incumbent) const {
  ConfigEvaluation ce;
  ce.models.resize(models_.size());
  std::vector<ModelBound> own;  // the own tier's bounds, whose makespans Evaluate reuses
  PruneDecision decision;
  decision.models.assign(models_.size(), 0);
  if (incumbent && incumbent->throughputs.size() == models_.size()) {
    PruneRecord record;
    record.model_bounds.assign(models_.size(), std::numeric_limits<double>::infinity());
    record.incumbent = *incumbent;
    std::vector<int> settled_at(models_.size(), 0);  // the tier whose bound pruned the model
    std::vector<char> by_family(models_.size(), 0);  // and whether it was the family's
    // One tier: every model not settled yet gets min(its bound, bound(m)); true when all settle.
    auto tier = [&](int number, int family, const auto& bound) {
      record.tier = number;
      record.family = family;
      for (std::size_t m = 0; m < models_.size(); ++m) {
        if (decision.models[m]) continue;  // already below its incumbent
        record.model_bounds[m] =
            std::min(record.model_bounds[m], evaluator_->ObjectiveBound(bound(m), point.arch));
      }
      record.score_bound = CommonScore(record.model_bounds, weights_, run_.search.mean);
      decision = DecidePruning(record.model_bounds, record.score_bound, *incumbent);
      for (std::size_t m = 0; m < models_.size(); ++m) {
        if (decision.models[m] && settled_at[m] == 0) {
          settled_at[m] = number;
          by_family[m] = family > 0;
        }
      }
      return decision.All();
    };
    // The placement tier, refined group by group (ModelBound::Refine) while the decision is
    // open: each round refines the group with the largest bound of every model not settled; it
    // ends settled, or when no model's bound can tighten — deciding as the whole tier would.
    auto placement_tier = [&](int family, std::vector<ModelBound>& bounds) {
      while (true) {
        if (tier(2, family, [&](std::size_t m) { return bounds[m].Current(); })) return true;
        bool refined = false;
        for (std::size_t m = 0; m < models_.size(); ++m) {
          if (!decision.models[m]) refined |= bounds[m].Refine();
        }
        if (!refined) return false;
      }
    };
    bool settled = false;
    const bool listed = &point >= configs_.data() && &point < configs_.data() + configs_.size();
    if (const int f = listed ? family_of_[static_cast<std::size_t>(&point - configs_.data())] : -1;
        f >= 0) {
      Family& family = *families_[static_cast<std::size_t>(f)];
      const int size = static_cast<int>(family.members.size());
      std::lock_guard lock(family.mutex);
      auto& bounds = family.Bounds(*evaluator_, models_);
      settled = tier(1, size, [&](std::size_t m) { return bounds[m].Compute(); }) ||
                placement_tier(size, bounds);
    }
    if (!settled) {
      for (const auto& model : models_) own.push_back(evaluator_->Bound(model, {point.arch}));
      settled = tier(1, 0, [&](std::size_t m) { return own[m].Compute(); }) ||
                placement_tier(0, own);
    }
    if (decision.score) {
      for (std::size_t m = 0; m < models_.size(); ++m) {
        if (!decision.models[m]) continue;
        ModelEvaluation& ev = ce.models[m];
        ev.model = models_[m].name;
        ev.pruned = true;
        ev.best.reason = std::string("pruned by ") +
                         (by_family[m] ? "its family's " : "its ") +
                         (settled_at[m] == 1 ? "compute" : "placement") + " bound: at most " +
                         FormatNumber("%.6g", record.model_bounds[m]) +
                         " " + std::string(ObjectiveUnit(run_.search.objective)) +
                         ", where a config evaluated before gives " +
                         FormatNumber("%.6g", incumbent->throughputs[m]);
      }
      ce.pruned = std::move(record);
    }
  }
  std::vector<double> thr;
  for (std::size_t m = 0; m < models_.size(); ++m) {
    if (!decision.models[m]) {
      ce.models[m] = evaluator_->Evaluate(models_[m], point.arch, /*with_expert=*/false,
                                          ModelEvaluator::GroupPruning::kBound,
                                          own.empty() ? nullptr : &own[m]);
    }
    thr.push_back(ce.models[m].score);
  }
  if (!ce.pruned) ce.score = CommonScore(thr, weights_, run_.search.mean);
  return ce;
}

std::vector<ModelBound>& SearchContext::Family::Bounds(const ModelEvaluator& evaluator,
                                                      const std::vector<PreparedModel>& models) {
  if (bounds.empty()) {
    for (const auto& model : models) bounds.push_back(evaluator.Bound(model, members));
  }
  return bounds;
}

SearchContext::Seed SearchContext::SeedIncumbent(int threads, ProgressSink& progress,
                                                 const std::atomic<bool>* stop) const {
  // Every family's compute bounds, on `threads` threads: the common score they promise.
  std::vector<double> promise(families_.size(), 0);
  std::int64_t done = 0;
  std::mutex progress_mutex;
  progress.Begin("family bounds", static_cast<std::int64_t>(families_.size()));
  ForEachIndex(
      families_.size(), threads,
      [&](std::size_t f) {
        Family& family = *families_[f];
        std::vector<double> bounds;
        {
          std::lock_guard lock(family.mutex);
          for (ModelBound& b : family.Bounds(*evaluator_, models_)) bounds.push_back(b.Compute());
        }
        promise[f] = CommonScore(bounds, weights_, run_.search.mean);
        const std::lock_guard lock(progress_mutex);
        progress.Update(++done);
      },
      stop);
  progress.End();
  // The most promising family (ties: the first) and its largest config, exactly.
  const auto best = std::max_element(promise.begin(), promise.end());
  Seed seed;
  if (best == promise.end() || !(*best > 0)) return seed;
  const std::size_t config = families_[static_cast<std::size_t>(best - promise.begin())]->first;
  const auto t0 = std::chrono::steady_clock::now();
  seed.evaluation = Evaluate(configs_[config]);
  seed.evaluation.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  seed.config = static_cast<std::int64_t>(config);
  seed.arch = configs_[config].arch.name;
  return seed;
}

std::string SearchContext::Fingerprint() const {
  Digest d;
  Json settings = run_.ToJson();  // where the file lives and where outputs go may differ by node
  settings["source"] = "";
  settings["output"] = "";
  // Settings that change when and where configs are evaluated, not what they give: a resumed
  // run or an MPI rank may differ in them.
  for (const char* key : {"threads", "max_configs", "max_seconds", "checkpoint_seconds"}) {
    settings["search"][key] = 0;
  }
  d.Add(settings.Dump());
  for (const auto& m : models_) {
    d.Add(m.name);
    d.Add(static_cast<double>(m.slices.size()));
    d.Add(m.flops_per_token);
  }
  for (const auto& c : configs_) {
    d.Add(c.arch.name);
    d.Add(c.area_um2);
  }
  return std::to_string(models_.size()) + " models, " + std::to_string(configs_.size()) +
         " configs, digest " + d.Hex();
}

}  // namespace phaze
