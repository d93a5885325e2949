// Power, energy and cost in the search (DESIGN §11) on the tiny search of the CLI tests, every
// config evaluated (exhaustive, no pruning) unless a test says otherwise:
//  * a power budget below the unconstrained winner's power gives a winner within it, and no
//    feasible plan anywhere above it; a budget below every chip's static power prunes everything
//    without evaluating (the bound);
//  * throughput_per_watt and throughput_per_cost winners are the best of every explored config by
//    their own figures (brute force over the explored results), and pruning with the objective's
//    bounds keeps them;
//  * every feasible plan's energy parts add up to its step energy and its power is that over the
//    step time and the devices.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>

#include "cli/tiny_search.hpp"
#include "phaze/core/error.hpp"
#include "phaze/core/progress.hpp"
#include "phaze/search/search_context.hpp"
#include "phaze/search/search_driver.hpp"
#include "plugin_registry.hpp"

namespace phaze {
namespace {

namespace fs = std::filesystem;

// The tiny search's run config with `search` (a map's contents) and `arch_extra` (more keys of
// `arch:`).
std::string Config(const std::string& search, const std::string& arch_extra = "") {
  std::string text = testing::TinySearchConfig();
  const auto replace = [&](const std::string& from, const std::string& to) {
    const auto at = text.find(from);
    if (at == std::string::npos) throw Error("tiny search config without '" + from + "'");
    text.replace(at, from.size(), to);
  };
  replace("presets: [tpuv4]}", "presets: [tpuv4]" + arch_extra + "}");
  replace("search: {mode: hysteresis, hysteresis_level: 2, bucket_width_mm2: 10}",
          "search: {bucket_width_mm2: 10, mode: exhaustive, " + search + "}");
  return text;
}

SearchResults Search(const std::string& search, const std::string& arch_extra = "") {
  const std::string extra = search + "|" + arch_extra;
  const fs::path dir = fs::temp_directory_path() /
                       ("phaze-objective-" + std::to_string(::getpid()) + "-" +
                        std::to_string(std::hash<std::string>{}(extra)));
  fs::create_directories(dir);
  std::ofstream(dir / "space.yaml") << testing::kTinySpace;
  std::ofstream(dir / "run.yaml") << Config(search, arch_extra);
  std::ostringstream sink;
  Logger log{sink, LogLevel::kQuiet};
  const RunConfig run = RunConfig::ParseFile((dir / "run.yaml").string());
  const SearchContext context(run, testing::BuiltPlugins(), log);
  NullProgress progress;
  return RunSearchDriver(context, progress);
}

const PlanChoice& Winner(const SearchResults& r) {
  return r.outcome.explored.at(static_cast<std::size_t>(r.best_common)).evaluation.models[0].best;
}

TEST(SearchObjectives, PowerBudgetGivesAWinnerWithinIt) {
  const SearchResults free = Search("prune: none");
  ASSERT_GE(free.best_common, 0);
  const double winner_w = Winner(free).power_w;
  // The least power of any explored config's plan: a budget between it and the winner's.
  double least = winner_w;
  for (const auto& e : free.outcome.explored) {
    const PlanChoice& c = e.evaluation.models[0].best;
    if (c.feasible) least = std::min(least, c.power_w);
  }
  ASSERT_LT(least, winner_w);
  const double budget = (least + winner_w) / 2;
  const SearchResults r = Search("prune: none", ", power_budget_w: " + std::to_string(budget));
  ASSERT_GE(r.best_common, 0);
  EXPECT_LE(Winner(r).power_w, budget);
  EXPECT_LE(Winner(r).Throughput(), Winner(free).Throughput());
  for (const auto& e : r.outcome.explored) {
    const PlanChoice& c = e.evaluation.models[0].best;
    if (c.feasible) {
      EXPECT_LE(c.power_w, budget) << e.point.arch.name;
    }
  }
  // Below every chip's static power: nothing is evaluated, every config says why.
  const SearchResults none = Search("prune: none", ", power_budget_w: 1");
  EXPECT_LT(none.best_common, 0);
  for (const auto& e : none.outcome.explored) {
    EXPECT_NE(e.evaluation.models[0].best.reason.find("static power"), std::string::npos);
  }
}

// The best explored config by `value` (brute force over the results).
double BestBy(const SearchResults& r, double (*value)(const PlanChoice&, std::int64_t)) {
  double best = 0;
  for (const auto& e : r.outcome.explored) {
    best = std::max(best, value(e.evaluation.models[0].best, r.run.cluster.num_accelerators));
  }
  return best;
}

TEST(SearchObjectives, PerWattAndPerCostWinnersAreTheBestOfEveryConfig) {
  const SearchResults thr = Search("prune: none");
  auto per_watt = [](const PlanChoice& c, std::int64_t) {
    return c.feasible && c.power_w > 0 ? c.Throughput() / c.power_w : 0.0;
  };
  auto per_cost = [](const PlanChoice& c, std::int64_t k) {
    return c.feasible && c.hourly_usd > 0
               ? c.Throughput() * 3600 / (c.hourly_usd * static_cast<double>(k))
               : 0.0;
  };
  for (const auto& [objective, value] :
       {std::pair{std::string("throughput_per_watt"), +per_watt},
        std::pair{std::string("throughput_per_cost"), +per_cost}}) {
    const SearchResults all =
        Search("prune: none, objective: " + objective);
    ASSERT_GE(all.best_common, 0) << objective;
    const double winner = value(Winner(all), all.run.cluster.num_accelerators);
    EXPECT_EQ(winner, BestBy(all, value)) << objective;
    EXPECT_EQ(all.outcome.explored[all.best_common].evaluation.score, winner) << objective;
    // At least as good by its own figure as the throughput winner's plan.
    EXPECT_GE(winner, value(Winner(thr), thr.run.cluster.num_accelerators)) << objective;
    // Pruning by the objective's bounds keeps the winner.
    const SearchResults pruned =
        Search("prune: winners, objective: " + objective);
    EXPECT_EQ(pruned.outcome.explored[pruned.best_common].point.arch.name,
              all.outcome.explored[all.best_common].point.arch.name)
        << objective;
    EXPECT_EQ(pruned.outcome.explored[pruned.best_common].evaluation.score,
              all.outcome.explored[all.best_common].evaluation.score);
  }
}

TEST(SearchObjectives, EnergyPartsAddUpAndPowerIsEnergyOverTime) {
  const SearchResults r = Search("prune: none");
  int feasible = 0;
  for (const auto& e : r.outcome.explored) {
    const PlanChoice& c = e.evaluation.models[0].best;
    if (!c.feasible) continue;
    ++feasible;
    const Energy& j = c.plan.energy;
    EXPECT_GT(j.compute_j, 0);
    EXPECT_GT(j.memory_j, 0);
    EXPECT_GT(j.static_j, 0);
    EXPECT_NEAR(j.TotalJ(), j.compute_j + j.on_chip_j + j.memory_j + j.network_j + j.static_j,
                1e-9 * j.TotalJ());
    EXPECT_NEAR(c.power_w,
                j.TotalJ() / (c.plan.time_per_batch_s * static_cast<double>(c.plan.devices)),
                1e-9 * c.power_w);
    EXPECT_NEAR(c.energy_per_token_j * c.tokens_per_s * c.plan.time_per_batch_s, j.TotalJ(),
                1e-9 * j.TotalJ());
  }
  EXPECT_GT(feasible, 10);
}

// Issue 43's bug: with `strategy: [megatron, context_parallel]` and a model whose 3 heads megatron
// cannot split 2 ways, every t = 2 plan is context parallel's (strategy index 1). The winner's
// layer schedule must be looked up under that strategy: it used the first one's slices and ended a
// finished search with an internal error, writing nothing.
TEST(SearchStrategies, TheWinnersScheduleUsesTheStrategyItWasFoundWith) {
  const fs::path dir = fs::temp_directory_path() /
                       ("phaze-strategy-winner-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "space.yaml") << testing::kTinySpace;
  std::ofstream(dir / "three-heads.yaml")
      << "name: three-heads\nfamily: megatron-gpt\nlayers: 2\nhidden: 96\nheads: 3\n"
         "vocab: 256\nmax_positions: 64\nsequence_length: 32\n";
  std::ofstream(dir / "run.yaml")
      << "models: [three-heads.yaml]\narch: {space: space.yaml, presets: [tpuv4]}\n"
         "cluster: {num_accelerators: 16}\n"
         "training: {global_batch: 64, micro_batches: [1], tensor_parallel_widths: [2],\n"
         "           hbm_gib: [32], recompute: [none]}\n"
         "strategy: [megatron, context_parallel]\n"
         "search: {mode: exhaustive, prune: none, bucket_width_mm2: 10}\n";
  std::ostringstream sink;
  Logger log{sink, LogLevel::kQuiet};
  const RunConfig run = RunConfig::ParseFile((dir / "run.yaml").string());
  const SearchContext context(run, testing::BuiltPlugins(), log);
  NullProgress progress;
  const SearchResults r = RunSearchDriver(context, progress);
  ASSERT_GE(r.best_common, 0);
  const PlanChoice& best = Winner(r);
  EXPECT_EQ(best.strategy_index, 1);
  EXPECT_EQ(best.plan.tensor_parallel, 2);
  ASSERT_TRUE(r.winner_schedule.has_value());
  EXPECT_GT(r.winner_schedule->result.makespan_s, 0);
}

}  // namespace
}  // namespace phaze
