// The search's bound pass with the real plugins (the device model, CBC, Megatron slicing), on a
// sub-space of the paper's space sampled along every dimension, two small models:
//  * ModelEvaluator::UpperBound never falls below what Evaluate finds, at either tier, for every
//    config and model — the property pruning rests on — nor does the placement tier refined
//    lazily, which ends where the whole tier is;
//  * Scheduler::LowerBound never exceeds the makespan Solve returns;
//  * Evaluate's pruning of (micro-batch, strategy) groups gives the choices of scheduling them all;
//  * exhaustive search with pruning returns the winners (per model and common) of evaluating every
//    config, and with Pareto pruning also the same Pareto fronts, on one thread and on two, while
//    pruning some configs;
//  * searching several strategies finds, per model and config, the best of searching each alone,
//    and the plan records the strategy whose own search reaches that throughput.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <tuple>

#include <unistd.h>

#include "phaze/core/progress.hpp"
#include "phaze/report/search_report.hpp"
#include "phaze/search/pareto_front.hpp"
#include "phaze/search/search_context.hpp"
#include "phaze/search/search_driver.hpp"
#include "plugin_registry.hpp"
#include "test_paths.hpp"
#include "test_util.hpp"

namespace phaze {
namespace {

namespace fs = std::filesystem;

void Write(const fs::path& path, const std::string& text) { std::ofstream(path) << text; }

// A temporary directory with the sub-space, a second model and a run config (`search` appended).
fs::path Setup(const std::string& search) {
  const fs::path dir = fs::temp_directory_path() /
                       ("phaze-search-bound-" + std::to_string(::getpid()) + "-" +
                        std::to_string(std::hash<std::string>{}(search)));
  fs::create_directories(dir);
  Write(dir / "space.yaml",
        "name: sub\nnum_tc: [64, 16, 4, 1]\nnum_vc: [256, 16, 1]\npe_x: [256, 32, 4]\n"
        "pe_y: [128, 16, 2]\npe_vc: pe_x\nglb_mib: [64, 8, 1]\n"
        "glb_bandwidth_words_per_cycle: 4096\nscale_glb_bandwidth_for_single_core: true\n"
        "hbm_bandwidth_bytes_per_s: 1.2e12\nfrequency_hz: 1.05e9\n"
        "area_budget: {preset: tpuv4}\nmin_area_fraction: 0.02\n"
        "min_area_fraction_single_core: 0.0\n");
  Write(dir / "wide.yaml",
        "name: wide-gpt\nfamily: megatron-gpt\nlayers: 3\nhidden: 128\nheads: 8\nvocab: 512\n"
        "max_positions: 64\nsequence_length: 64\n");
  Write(dir / "run.yaml",
        "models:\n  - file: " + std::string(PHAZE_SOURCE_DIR) +
            "/workloads/tiny-gpt.yaml\n  - file: wide.yaml\n"
            "arch: {space: space.yaml}\n"
            "cluster: {num_accelerators: 64}\n"
            "training: {global_batch: 256, micro_batches: [1, 4], tensor_parallel_widths: [1, 2],\n"
            "           hbm_gib: [1, 32], recompute: [none, full]}\n"
            "solver: {backend: cbc, node_limit: 5, relative_gap: 0.05, search_nodes: 2000,\n"
            "         max_exact_ops: 24, params: {cuts: false}}\n" + search);
  return dir;
}

struct Context {
  std::ostringstream sink;
  Logger log{sink, LogLevel::kQuiet};
  RunConfig run;
  std::unique_ptr<SearchContext> context;
  struct InDir {
    fs::path dir;  // holding run.yaml and what it names
  };
  explicit Context(const std::string& search) : Context(InDir{Setup(search)}) {}
  explicit Context(const InDir& in) {
    run = RunConfig::ParseFile((in.dir / "run.yaml").string());
    context = std::make_unique<SearchContext>(run, testing::BuiltPlugins(), log);
  }
};

TEST(SearchBounds, NeverBelowWhatTheEvaluationFinds) {
  Context c("");
  const auto& configs = c.context->Configs();
  ASSERT_GT(configs.size(), 60u);
  const ModelEvaluator& evaluator = c.context->Evaluator();
  int compute_finite = 0, checked = 0;
  const std::size_t stride = testing::kSanitized ? 4 : 1;  // every config, but sanitized
  for (std::size_t i = 0; i < configs.size(); i += stride) {
    const ArchPoint& point = configs[i];
    for (const auto& model : c.context->Models()) {
      ++checked;
      // Bounds first (nothing solved yet: the scheduler's own mode bound), then the evaluation.
      const double compute =
          evaluator.UpperBound(model, point.arch, ModelEvaluator::BoundTier::kCompute);
      const double placement =
          evaluator.UpperBound(model, point.arch, ModelEvaluator::BoundTier::kPlacement);
      const double exact = evaluator.Evaluate(model, point.arch, false).best.Throughput();
      const double tol = 1e-9 * exact;
      EXPECT_GE(compute + tol, exact) << model.name << " on " << point.arch.name;
      EXPECT_GE(placement + tol, exact) << model.name << " on " << point.arch.name;
      // After solving, the bounds use the solved makespans: still above, and no looser.
      EXPECT_GE(evaluator.UpperBound(model, point.arch, ModelEvaluator::BoundTier::kPlacement) + tol,
                exact);
      EXPECT_LE(evaluator.UpperBound(model, point.arch, ModelEvaluator::BoundTier::kPlacement),
                placement * (1 + 1e-12));
      compute_finite += std::isfinite(compute);
      // Refined lazily, the placement tier only tightens, and ends where the whole tier is.
      ModelBound lazy = evaluator.Bound(model, {point.arch});
      double last = lazy.Current();
      EXPECT_EQ(last, lazy.Compute());
      while (lazy.Refine()) {
        EXPECT_LE(lazy.Current(), last);
        last = lazy.Current();
      }
      EXPECT_EQ(last, evaluator.Bound(model, {point.arch}).Placement()) << model.name;
      EXPECT_GE(last + tol, exact);
    }
  }
  EXPECT_EQ(compute_finite, checked);  // both are layer chains
}

TEST(SearchBounds, FamilyBoundsNeverBelowAnyMember) {
  // The families of search_context.hpp: configs sharing their tensor cores. Bounds first, on an
  // evaluator that has solved nothing, then every member exactly.
  Context c("");
  std::map<std::tuple<std::int64_t, std::int64_t, std::int64_t>, std::vector<ArchConfig>> families;
  for (const auto& point : c.context->Configs()) {
    families[{point.arch.num_tc, point.arch.pe_x, point.arch.pe_y}].push_back(point.arch);
  }
  const ModelEvaluator& evaluator = c.context->Evaluator();
  int checked = 0, strictly_looser = 0;
  int index = 0;
  for (const auto& [shape, members] : families) {
    if (members.size() < 2 || index++ % 2) continue;  // every other family
    for (const auto& model : c.context->Models()) {
      ModelBound family = evaluator.Bound(model, members);
      const double compute = family.Compute(), placement = family.Placement();
      // The first, middle and last member, by decreasing area (every member takes 9 s).
      for (std::size_t i : {std::size_t{0}, members.size() / 2, members.size() - 1}) {
        const ArchConfig& arch = members[i];
        const double exact = evaluator.Evaluate(model, arch, false).best.Throughput();
        EXPECT_GE(compute * (1 + 1e-9), exact) << model.name << " on " << arch.name;
        EXPECT_GE(placement * (1 + 1e-9), exact) << model.name << " on " << arch.name;
        // A family's bound is no tighter than a member's own.
        const double own = evaluator.UpperBound(model, arch, ModelEvaluator::BoundTier::kPlacement);
        EXPECT_GE(placement * (1 + 1e-9), own) << model.name << " on " << arch.name;
        strictly_looser += placement > own * (1 + 1e-9);
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 20);
  EXPECT_GT(strictly_looser, 0);  // the members do differ
}

TEST(SearchBounds, GroupPruningGivesWhatSchedulingEveryGroupGives) {
  // ModelEvaluator::Evaluate's branch and bound over the (micro-batch, strategy) groups against
  // scheduling every group: the same choices — best, per HBM size, expert — on sampled configs,
  // under two objectives, while some groups are left out. 1 GiB of HBM fits no plan on some
  // configs (the choices left-out groups stand in with), and 1 GiB, micro-batch 4, nowhere.
  const fs::path dir = phaze::Setup("");
  // What results.json says of a choice, and what it says only of a feasible one.
  auto describe = [](const PlanChoice& c) {
    return PlanChoiceToJson(c).Dump() + " b=" + std::to_string(c.micro_batch) + " " +
           std::string(ToString(c.recompute)) + " " + std::to_string(c.hbm_gib) + " GiB " +
           c.strategy;
  };
  for (const std::string objective : {"throughput", "throughput_per_watt"}) {
    Write(dir / "groups.yaml",
          "models:\n  - file: " + std::string(PHAZE_SOURCE_DIR) +
              "/workloads/tiny-gpt.yaml\n    expert: [2, 8, 2]\n  - file: wide.yaml\n"
              "arch: {space: space.yaml}\n"
              "cluster: {num_accelerators: 64}\n"
              "training: {global_batch: 256, micro_batches: [1, 2, 4], "
              "tensor_parallel_widths: [1, 2],\n"
              "           hbm_gib: [0.001, 32], recompute: [none, full]}\n"
              "solver: {backend: cbc, node_limit: 5, relative_gap: 0.05, search_nodes: 2000,\n"
              "         max_exact_ops: 24, params: {cuts: false}}\n"
              "search: {objective: " + objective + "}\n");
    std::ostringstream sink;
    Logger log{sink, LogLevel::kQuiet};
    const RunConfig run = RunConfig::ParseFile((dir / "groups.yaml").string());
    const SearchContext context(run, testing::BuiltPlugins(), log);
    const ModelEvaluator& evaluator = context.Evaluator();
    int answers_pruned = 0, answers_all = 0, compared = 0, unfit = 0;
    const auto& configs = context.Configs();
    for (std::size_t i = 0; i < configs.size(); i += testing::kSanitized ? 36 : 9) {
      for (const auto& model : context.Models()) {
        for (const bool expert : {false, true}) {
          const ArchConfig& arch = configs[i].arch;
          const ModelEvaluation pruned = evaluator.Evaluate(model, arch, expert);
          const ModelEvaluation all =
              evaluator.Evaluate(model, arch, expert, ModelEvaluator::GroupPruning::kNone);
          const std::string where = model.name + " on " + arch.name + (expert ? ", expert" : "");
          EXPECT_EQ(describe(pruned.best), describe(all.best)) << where;
          ASSERT_EQ(pruned.best_per_hbm.size(), 2u);
          for (std::size_t h = 0; h < 2; ++h) {
            EXPECT_EQ(describe(pruned.best_per_hbm[h]), describe(all.best_per_hbm[h]))
                << where << ", HBM " << h;
            unfit += !all.best_per_hbm[h].feasible;
          }
          ASSERT_EQ(pruned.expert.has_value(), all.expert.has_value()) << where;
          if (all.expert) {
            EXPECT_EQ(describe(*pruned.expert), describe(*all.expert)) << where;
          }
          EXPECT_EQ(pruned.score, all.score) << where;
          answers_pruned += pruned.fast_answers + pruned.ilp_answers;
          answers_all += all.fast_answers + all.ilp_answers;
          ++compared;
        }
      }
    }
    EXPECT_GT(compared, testing::kSanitized ? 5 : 20);
    EXPECT_GT(unfit, 0);                       // the stand-ins were exercised
    EXPECT_LT(answers_pruned, answers_all);    // and some groups were left out
    std::cerr << objective << ": " << compared << " evaluations, " << answers_pruned
              << " schedules with group pruning, " << answers_all << " without; " << unfit
              << " HBM sizes unfit\n";
  }
}

TEST(SearchBounds, HysteresisReplayFindsWhatAHysteresisRunFinds) {
  // hysteresis_comparison.hpp against the hysteresis itself, on one thread (its winners do not
  // depend on threads) and for two levels: the same configs visited, the same winners and scores.
  NullProgress progress;
  std::int64_t evaluated_now = 0, visited = 0;
  for (int level : {2, 4}) {
    const std::string shape = "hysteresis_level: " + std::to_string(level) + ", bucket_width_mm2: 10";
    Context hysteresis("search: {mode: hysteresis, " + shape + "}\n");
    Context exhaustive("search: {mode: exhaustive, prune: winners, compare_hysteresis: true, " +
                       shape + "}\n");
    SearchDriverOptions o;
    o.threads = 1;
    const SearchResults h = RunSearchDriver(*hysteresis.context, progress, o);
    const SearchResults e = RunSearchDriver(*exhaustive.context, progress, o);
    ASSERT_TRUE(e.hysteresis.has_value());
    const HysteresisComparison& c = *e.hysteresis;
    EXPECT_EQ(c.converged, h.outcome.stop_reason == StopReason::kConverged) << level;
    EXPECT_EQ(c.visited, static_cast<std::int64_t>(h.outcome.explored.size())) << level;
    ASSERT_GE(c.best_common, 0);
    EXPECT_EQ(e.outcome.explored[c.best_common].point.arch.name,
              h.outcome.explored[h.best_common].point.arch.name);
    EXPECT_EQ(c.score, h.outcome.explored[h.best_common].evaluation.score);
    for (std::size_t m = 0; m < c.best_per_model.size(); ++m) {
      EXPECT_EQ(e.outcome.explored[c.best_per_model[m]].point.arch.name,
                h.outcome.explored[h.best_per_model[m]].point.arch.name);
      EXPECT_EQ(c.model_scores[m], h.outcome.explored[h.best_per_model[m]].evaluation.models[m].score);
    }
    evaluated_now += c.evaluated_now;
    visited += c.visited;
    // A hysteresis run gets no comparison; an exhaustive one without the key neither.
    EXPECT_FALSE(h.hysteresis.has_value());
  }
  EXPECT_GT(evaluated_now, 0);        // some pruned ones had to be evaluated for it,
  EXPECT_LT(evaluated_now, visited);  // and the bounds settled others
}

TEST(SearchStrategies, SeveralStrategiesFindTheBestOfEachAlone) {
  // The tiny models' kernels are far below the device model's per-kernel cost, which would make
  // both strategies tie everywhere: without it their arithmetic decides.
  const std::string estimator = "estimator: {name: device, params: {kernel_overhead_s: 0}}\n";
  Context both(estimator + "strategy: [megatron, context_parallel]\n");
  Context megatron(estimator + "strategy: megatron\n");
  Context cp(estimator + "strategy: context_parallel\n");
  const auto& configs = both.context->Configs();
  int decided = 0;  // both strategies feasible, with different throughputs
  for (std::size_t i = 0; i < configs.size(); i += 7) {
    const ArchPoint& point = configs[i];
    for (std::size_t m = 0; m < both.context->Models().size(); ++m) {
      const auto& model = both.context->Models()[m];
      SCOPED_TRACE(model.name + " on " + point.arch.name);
      const PlanChoice best = both.context->Evaluator().Evaluate(model, point.arch, false).best;
      const double alone[2] = {
          megatron.context->Evaluator()
              .Evaluate(megatron.context->Models()[m], point.arch, false)
              .best.Throughput(),
          cp.context->Evaluator().Evaluate(cp.context->Models()[m], point.arch, false)
              .best.Throughput()};
      EXPECT_DOUBLE_EQ(best.Throughput(), std::max(alone[0], alone[1]));
      if (!best.feasible) continue;
      ASSERT_TRUE(best.strategy == "megatron" || best.strategy == "context_parallel")
          << best.strategy;
      EXPECT_EQ(best.strategy_index, best.strategy == "megatron" ? 0 : 1);
      EXPECT_DOUBLE_EQ(best.Throughput(), alone[best.strategy_index]);
      decided += alone[0] > 0 && alone[1] > 0 && alone[0] != alone[1];
    }
  }
  EXPECT_GT(decided, 0);  // the choice between them is exercised
}

TEST(SearchStrategies, ExpertParallelSizesSweptTogether) {
  // The moe strategy listed twice, at e = t and at expert_parallel 4 (at t 1 four data-parallel
  // replicas share each expert group, at t 2 two): per config, the best of the two searched alone,
  // and the plan names the size it was found at, in results.json's plan too.
  const std::string moe =
      "name: tiny-moe\nfamily: llama\nlayers: 2\nhidden: 64\nheads: 4\nkv_heads: 2\n"
      "ffn_hidden: 128\nvocab: 256\nmax_positions: 64\nsequence_length: 64\n"
      "moe: {experts: 4, top_k: 2, expert_ffn_hidden: 128}\n";
  auto context = [&](const std::string& strategy) {
    const fs::path dir = phaze::Setup(strategy);
    Write(dir / "moe.yaml", moe);
    Write(dir / "run.yaml",
          "models:\n  - file: moe.yaml\narch: {space: space.yaml}\n"
          "cluster: {num_accelerators: 64}\n"
          "training: {global_batch: 256, micro_batches: [1], tensor_parallel_widths: [1, 2],\n"
          "           hbm_gib: [32], recompute: [none]}\n"
          "estimator: {name: device, params: {kernel_overhead_s: 0}}\n"
          "solver: {backend: cbc, node_limit: 5, relative_gap: 0.05, search_nodes: 2000,\n"
          "         max_exact_ops: 24, params: {cuts: false}}\n" +
              strategy);
    return std::make_unique<Context>(Context::InDir{dir});
  };
  const std::string folded = "{name: moe, params: {expert_parallel: 4}}";
  auto both = context("strategy: [moe, " + folded + "]\n");
  auto plain = context("strategy: moe\n");
  auto four = context("strategy: " + folded + "\n");
  const auto& configs = both->context->Configs();
  int decided = 0, folded_won = 0;
  for (std::size_t i = 0; i < configs.size(); i += 11) {
    const ArchConfig& arch = configs[i].arch;
    SCOPED_TRACE(arch.name);
    auto best_of = [&](const Context& c) {
      return c.context->Evaluator().Evaluate(c.context->Models()[0], arch, false).best;
    };
    const PlanChoice best = best_of(*both);
    const double alone[2] = {best_of(*plain).Throughput(), best_of(*four).Throughput()};
    EXPECT_DOUBLE_EQ(best.Throughput(), std::max(alone[0], alone[1]));
    if (!best.feasible) continue;
    EXPECT_EQ(best.strategy, "moe");
    EXPECT_DOUBLE_EQ(best.Throughput(), alone[best.strategy_index]);
    const std::int64_t t = best.plan.tensor_parallel;
    EXPECT_EQ(best.expert_parallel, best.strategy_index == 0 ? t : 4);
    const Json written = PlanChoiceToJson(best);  // kept: Find points into it
    const Json* e = written.Find("plan")->Find("expert_parallel");
    ASSERT_NE(e, nullptr);
    EXPECT_EQ(e->AsDouble(), static_cast<double>(best.expert_parallel));
    decided += alone[0] > 0 && alone[1] > 0 && alone[0] != alone[1];
    folded_won += best.strategy_index == 1;
  }
  EXPECT_GT(decided, 0);
  EXPECT_GT(folded_won, 0);  // the folded groups do win somewhere
}

// The winners and Pareto fronts the search reports, as architecture names.
std::vector<std::string> Reported(const SearchResults& r, bool fronts) {
  std::vector<std::string> out;
  const auto& explored = r.outcome.explored;
  for (std::size_t m = 0; m < r.models.size(); ++m) {
    out.push_back(r.best_per_model[m] < 0 ? "none" : explored[r.best_per_model[m]].point.arch.name);
  }
  out.push_back(r.best_common < 0 ? "none" : explored[r.best_common].point.arch.name);
  if (!fronts) return out;
  for (int m = -1; m < static_cast<int>(r.models.size()); ++m) {
    std::vector<double> area, throughput;
    for (const auto& e : explored) {
      area.push_back(e.point.area_um2);
      throughput.push_back(m < 0 ? e.evaluation.score : e.evaluation.models[m].best.Throughput());
    }
    std::string front;
    for (std::size_t i : ParetoFront(area, throughput)) front += explored[i].point.arch.name + " ";
    out.push_back(front);
  }
  return out;
}

TEST(SearchBounds, PruningKeepsTheWinnersAndFronts) {
  NullProgress progress;
  Context all("search: {mode: exhaustive, prune: none}\n");
  const SearchResults everything = RunSearchDriver(*all.context, progress);
  ASSERT_EQ(everything.outcome.pruned, 0);
  ASSERT_GE(everything.best_common, 0);
  for (const std::string mode : {"winners", "pareto"}) {
    for (int threads : {1, 2}) {
      if (testing::kSanitized && threads == 1) continue;  // the threaded driver, sanitized
      Context c("search: {mode: exhaustive, prune: " + mode + "}\n");
      SearchDriverOptions o;
      o.threads = threads;
      const SearchResults r = RunSearchDriver(*c.context, progress, o);
      const bool pareto = mode == "pareto";
      EXPECT_EQ(Reported(r, pareto), Reported(everything, pareto)) << mode << " " << threads;
      EXPECT_EQ(r.outcome.explored.size(), everything.outcome.explored.size());
      EXPECT_GT(r.outcome.pruned, 0) << mode << " " << threads;
      EXPECT_EQ(r.outcome.pruned,
                r.outcome.pruned_by_compute_bound + r.outcome.pruned_by_placement_bound);
      EXPECT_GT(r.outcome.pruned_by_family, 0) << mode << " " << threads;
      EXPECT_LE(r.outcome.pruned_by_family, r.outcome.pruned);
      // The winners' figures are the same evaluation.
      EXPECT_EQ(r.outcome.explored[r.best_common].evaluation.score,
                everything.outcome.explored[everything.best_common].evaluation.score);
      // results.json's text, streamed config by config, is the document's.
      if (threads == (testing::kSanitized ? 2 : 1)) {
        for (int indent : {1, 2, -1}) {
          EXPECT_EQ(SearchResultsJsonText(r, indent), SearchResultsToJson(r).Dump(indent));
        }
      }
      // Pruning for the winners starts from a seed: a config evaluated first, whose record is
      // where it belongs in `explored`, as evaluating every config gives it.
      if (pareto) {
        EXPECT_LT(r.seed.config, 0);
        continue;
      }
      ASSERT_GE(r.seed.config, 0);
      const auto seed = static_cast<std::size_t>(r.seed.config);
      EXPECT_EQ(r.outcome.explored[seed].rank, r.seed.config);
      EXPECT_EQ(r.outcome.explored[seed].evaluation.score, r.seed.evaluation.score);
      EXPECT_EQ(r.seed.evaluation.score, everything.outcome.explored[seed].evaluation.score);
      EXPECT_GT(r.seed.evaluation.score, 0);
    }
  }
}

}  // namespace
}  // namespace phaze
