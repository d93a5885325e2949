// The robustness study (phaze/search/robustness.hpp) on the tiny search of the CLI tests: six rows
// (three technology parameters × 0.9 and 1.1), each row's speed-up equal to the winner's and the
// TPUv4 reference's throughputs re-evaluated here with the parameter scaled from the A100 values
// written out (0.7727, 0.762, 14.61 µs), and no study for an estimator without those parameters.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <unistd.h>

#include "cli/tiny_search.hpp"
#include "phaze/core/progress.hpp"
#include "phaze/search/search_context.hpp"
#include "phaze/search/search_driver.hpp"
#include "plugin_registry.hpp"

namespace phaze {
namespace {

namespace fs = std::filesystem;

struct Tiny {
  std::ostringstream sink;
  Logger log{sink, LogLevel::kQuiet};
  RunConfig run;
  std::unique_ptr<SearchContext> context;
  SearchResults results;
  explicit Tiny(const std::string& extra) {
    const fs::path dir = fs::temp_directory_path() /
                         ("phaze-robustness-" + std::to_string(::getpid()) + "-" +
                          std::to_string(std::hash<std::string>{}(extra)));
    fs::create_directories(dir);
    std::ofstream(dir / "space.yaml") << testing::kTinySpace;
    std::ofstream(dir / "run.yaml") << testing::TinySearchConfig(extra);
    run = RunConfig::ParseFile((dir / "run.yaml").string());
    context = std::make_unique<SearchContext>(run, testing::BuiltPlugins(), log);
    NullProgress progress;
    results = RunSearchDriver(*context, progress);
  }
};

TEST(Robustness, EachParameterScaledOnTheWinnerAndTheReference) {
  Tiny t("");
  const SearchResults& r = t.results;
  ASSERT_GE(r.best_common, 0);
  const RobustnessStudy& st = r.robustness;
  EXPECT_EQ(st.winner, r.outcome.explored[r.best_common].point.arch.name);
  EXPECT_GE(st.candidates, 2);
  ASSERT_EQ(st.rows.size(), 6u) << st.skipped;
  const std::map<std::string, double> a100 = {
      {"gemm_efficiency", 0.7727}, {"memory_efficiency", 0.762}, {"kernel_overhead_s", 1.461e-5}};
  const PreparedModel& model = t.context->Models().front();
  const double base = r.outcome.explored[r.best_common].evaluation.models[0].best.Throughput() /
                      r.ReferenceThroughput(model.name);
  EXPECT_NEAR(st.base_speedup, base, 1e-12 * base);
  bool moved = false;
  for (const auto& row : st.rows) {
    SCOPED_TRACE(row.parameter + " × " + std::to_string(row.factor));
    ArchConfig winner;
    for (const auto& e : r.outcome.explored) {
      if (e.point.arch.name == row.winner) winner = e.point.arch;
    }
    ASSERT_EQ(winner.name, row.winner);
    EXPECT_EQ(row.winner_changed, row.winner != st.winner);
    ArchConfig reference = LoadArchConfig("tpuv4");
    winner.calibration[row.parameter] = a100.at(row.parameter) * row.factor;
    reference.calibration[row.parameter] = a100.at(row.parameter) * row.factor;
    const double w = t.context->Evaluator().Evaluate(model, winner, false).best.Throughput();
    const auto ref = t.context->Evaluator().Evaluate(model, reference, true).expert;
    ASSERT_TRUE(ref.has_value());
    EXPECT_NEAR(row.speedup, w / ref->Throughput(), 1e-9 * row.speedup);
    // Brute force: no candidate (the best configs by common score) beats the row's winner under
    // the perturbation — the study prunes candidates by their bounds instead of evaluating them.
    std::vector<const ExploredConfig*> candidates;
    for (const auto& e : r.outcome.explored) {
      if (e.evaluation.score > 0) candidates.push_back(&e);
    }
    std::stable_sort(candidates.begin(), candidates.end(), [](auto* a, auto* b) {
      return a->evaluation.score > b->evaluation.score;
    });
    candidates.resize(std::min<std::size_t>(candidates.size(), st.candidates));
    for (const ExploredConfig* e : candidates) {
      ArchConfig arch = e->point.arch;
      arch.calibration[row.parameter] = a100.at(row.parameter) * row.factor;
      const double c = t.context->Evaluator().Evaluate(model, arch, false).best.Throughput();
      EXPECT_LE(c, w * (1 + 1e-12)) << arch.name;
    }
    moved |= std::abs(row.speedup / st.base_speedup - 1) > 1e-6;
  }
  EXPECT_TRUE(moved) << "no perturbation changed any throughput";
}

// A stop (Ctrl-C, SIGTERM) set before or during the study ends it with no rows, saying why,
// rather than rows of the perturbations it never evaluated.
TEST(Robustness, AStopEndsTheStudyWithoutRows) {
  Tiny t("");
  const SearchResults& r = t.results;
  ASSERT_GE(r.best_common, 0);
  ASSERT_FALSE(r.robustness.rows.empty());
  std::vector<double> reference;
  for (const auto& m : t.context->Models()) reference.push_back(r.ReferenceThroughput(m.name));
  NullProgress progress;
  const std::atomic<bool> stop{true};
  const RobustnessStudy st =
      StudyRobustness(*t.context, r.outcome, r.best_common, reference, 5, 1, progress, &stop);
  EXPECT_TRUE(st.rows.empty());
  EXPECT_EQ(st.skipped, "interrupted (Ctrl-C or SIGTERM) before it finished");
}

// EvaluateExpert (the reference's expert plan alone, its width's slices only) makes the choice
// Evaluate makes with the expert slot, on the reference and every explored config, perturbed
// or not; and with the expert at a width no slice has, the same infeasible choice.
TEST(Robustness, EvaluateExpertMakesEvaluatesExpertChoice) {
  Tiny t("");
  const ModelEvaluator& evaluator = t.context->Evaluator();
  PreparedModel model = t.context->Models().front();
  ASSERT_TRUE(model.expert.has_value());
  std::vector<ArchConfig> archs = {LoadArchConfig("tpuv4")};
  archs.push_back(archs.front());
  archs.back().calibration["memory_efficiency"] = 0.762 * 0.9;
  for (const auto& e : t.results.outcome.explored) archs.push_back(e.point.arch);
  auto same = [&](const ArchConfig& arch) {
    SCOPED_TRACE(arch.name);
    const auto all =
        evaluator.Evaluate(model, arch, true, ModelEvaluator::GroupPruning::kNone).expert;
    const std::optional<PlanChoice> alone = evaluator.EvaluateExpert(model, arch);
    ASSERT_EQ(all.has_value(), alone.has_value());
    if (!alone) return;
    EXPECT_EQ(alone->feasible, all->feasible);
    EXPECT_EQ(alone->reason, all->reason);
    EXPECT_EQ(alone->Throughput(), all->Throughput());  // the same plan: the same bits
    EXPECT_EQ(alone->micro_batch, all->micro_batch);
    EXPECT_EQ(alone->recompute, all->recompute);
    EXPECT_EQ(alone->hbm_gib, all->hbm_gib);
    EXPECT_EQ(alone->stages.size(), all->stages.size());
  };
  for (const ArchConfig& arch : archs) same(arch);
  int feasible = 0;
  for (const ArchConfig& arch : archs) {
    const auto x = evaluator.EvaluateExpert(model, arch);
    feasible += x && x->feasible ? 1 : 0;
  }
  EXPECT_GT(feasible, 0) << "no expert plan fits: the comparison above says little";
  model.expert->tensor_parallel = 4;  // not among the widths (1, 2)
  same(archs.front());
  const auto none = evaluator.EvaluateExpert(model, archs.front());
  ASSERT_TRUE(none.has_value());
  EXPECT_FALSE(none->feasible);
  EXPECT_NE(none->reason.find("not among the evaluated widths"), std::string::npos) << none->reason;
  model.expert.reset();
  EXPECT_FALSE(evaluator.EvaluateExpert(model, archs.front()).has_value());
}

TEST(Robustness, NoStudyForAnEstimatorWithoutTechnologyParameters) {
  Tiny t("estimator: analytic\n");
  EXPECT_TRUE(t.results.robustness.rows.empty());
  EXPECT_NE(t.results.robustness.skipped.find("'analytic'"), std::string::npos)
      << t.results.robustness.skipped;
}

}  // namespace
}  // namespace phaze
