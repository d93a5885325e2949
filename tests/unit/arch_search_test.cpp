// The search loop (framework/search/arch_search) with a synthetic evaluator: hysteresis worked by
// hand, determinism across thread counts, budgets, the stop flag and failures; the common-score
// means by hand.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <chrono>
#include <stdexcept>
#include <thread>

#include "phaze/core/error.hpp"
#include "phaze/search/arch_search.hpp"
#include "phaze/search/pareto_front.hpp"
#include "phaze/search/search_driver.hpp"

namespace phaze {
namespace {

// Configs with the given areas (mm², decreasing) named c0, c1, …
std::vector<ArchPoint> Points(const std::vector<double>& areas_mm2) {
  std::vector<ArchPoint> out;
  for (std::size_t i = 0; i < areas_mm2.size(); ++i) {
    ArchPoint p;
    p.arch.name = "c" + std::to_string(i);
    p.area_um2 = areas_mm2[i] * 1e6;
    out.push_back(p);
  }
  return out;
}

// Scores looked up by config name.
ConfigEvaluator Scores(const std::vector<double>& scores) {
  return [scores](const ArchPoint& p, const Incumbent*) {
    ConfigEvaluation e;
    e.score = scores.at(std::stoul(p.arch.name.substr(1)));
    return e;
  };
}

TEST(Hysteresis, LastLevelMaximaNonIncreasing) {
  EXPECT_FALSE(HysteresisConverged({5, 4, 3}, 4));  // too few buckets
  EXPECT_TRUE(HysteresisConverged({5, 4, 3}, 3));
  EXPECT_TRUE(HysteresisConverged({1, 5, 5, 4}, 3));  // equal counts as non-increasing
  EXPECT_FALSE(HysteresisConverged({5, 4, 6}, 3));
  EXPECT_TRUE(HysteresisConverged({1, 9, 6, 6}, 2));
  EXPECT_FALSE(HysteresisConverged({0, 0, 0}, 3));  // nothing feasible yet: keep looking
}

TEST(Hysteresis, AreaBuckets) {
  EXPECT_EQ(AreaBucket(278826676.0, 0.01), 27882);  // 278.826676 mm² / 0.01 mm²
  EXPECT_EQ(AreaBucket(278820000.0, 0.01), 27882);
  EXPECT_EQ(AreaBucket(278819999.0, 0.01), 27881);
  EXPECT_EQ(AreaBucket(150e6, 10), 15);
}

TEST(ArchSearchLoop, StopsWhereHysteresisSaysWithAnyThreadCount) {
  // Buckets of 1 mm²: {10.5, 10.2} {9.7} {8.1} {7.9, 7.5} {6.0} {5.5} …
  // Bucket maxima: 3, 4, 2, 2 → with level 3, converged after bucket 4 ({7.9, 7.5}): 4 ≥ 2 ≥ 2.
  const auto points = Points({10.5, 10.2, 9.7, 8.1, 7.9, 7.5, 6.0, 5.5});
  const auto eval = Scores({3, 1, 4, 2, 2, 0, 9, 9});
  for (int threads : {1, 2, 4}) {
    ArchSearchOptions o;
    o.hysteresis_level = 3;
    o.bucket_width_mm2 = 1;
    o.threads = threads;
    NullProgress progress;
    const auto out = RunArchSearch(points, o, eval, progress);
    EXPECT_EQ(out.stop_reason, StopReason::kConverged) << threads;
    ASSERT_EQ(out.explored.size(), 6u) << threads;
    for (std::size_t i = 0; i < out.explored.size(); ++i) {
      EXPECT_EQ(out.explored[i].rank, static_cast<std::int64_t>(i));
      EXPECT_EQ(out.explored[i].point.arch.name, "c" + std::to_string(i));
    }
    EXPECT_EQ(out.bucket_best, (std::vector<double>{3, 4, 2, 2}));
    EXPECT_EQ(out.explored[4].bucket, 7);
  }
}

TEST(ArchSearchLoop, ExhaustiveAndBudgets) {
  const auto points = Points({10.5, 10.2, 9.7, 8.1, 7.9, 7.5, 6.0, 5.5});
  const auto eval = Scores({3, 1, 4, 2, 2, 0, 9, 9});
  NullProgress progress;
  ArchSearchOptions o;
  o.hysteresis_level = 3;
  o.bucket_width_mm2 = 1;
  o.exhaustive = true;
  auto all = RunArchSearch(points, o, eval, progress);
  EXPECT_EQ(all.stop_reason, StopReason::kExhausted);
  EXPECT_EQ(all.explored.size(), 8u);

  o.max_configs = 3;
  o.threads = 2;
  auto budget = RunArchSearch(points, o, eval, progress);
  EXPECT_EQ(budget.stop_reason, StopReason::kMaxConfigs);
  EXPECT_EQ(budget.explored.size(), 3u);
  EXPECT_EQ(budget.candidates, 8);

  // Never converges (scores keep rising), so the hysteresis search visits everything.
  o.exhaustive = false;
  o.max_configs = 0;
  auto rising = RunArchSearch(points, o, Scores({1, 2, 3, 4, 5, 6, 7, 8}), progress);
  EXPECT_EQ(rising.stop_reason, StopReason::kExhausted);
  EXPECT_EQ(rising.explored.size(), 8u);
}

TEST(ArchSearchLoop, StopFlagKeepsWhatWasEvaluated) {
  const auto points = Points({10.5, 10.2, 9.7, 8.1, 7.9});
  std::atomic<bool> stop{false};
  ConfigEvaluator eval = [&](const ArchPoint& p, const Incumbent*) {
    if (p.arch.name == "c1") stop = true;  // "Ctrl-C" while c1 is evaluated
    ConfigEvaluation e;
    e.score = 1;
    return e;
  };
  ArchSearchOptions o;
  o.exhaustive = true;
  NullProgress progress;
  const auto out = RunArchSearch(points, o, eval, progress, &stop);
  EXPECT_EQ(out.stop_reason, StopReason::kInterrupted);
  ASSERT_EQ(out.explored.size(), 2u);  // c0 and c1 complete; nothing started after the flag
}

TEST(ArchSearchLoop, AFailingEvaluationNamesTheConfig) {
  const auto points = Points({10.5, 10.2, 9.7, 8.1});
  ConfigEvaluator eval = [](const ArchPoint& p, const Incumbent*) -> ConfigEvaluation {
    if (p.arch.name == "c2") throw std::runtime_error("estimator crashed");
    return {};
  };
  for (int threads : {1, 3}) {
    ArchSearchOptions o;
    o.exhaustive = true;
    o.threads = threads;
    NullProgress progress;
    try {
      RunArchSearch(points, o, eval, progress);
      FAIL() << "expected an error";
    } catch (const Error& e) {
      EXPECT_STREQ(e.what(), "evaluating architecture c2: estimator crashed");
    }
  }
}

// A stand-in for the MPI coordinator: takes up to `batch` configs at once and reports them in
// reverse order (as another process finishing out of order would), failing on `fail_on`.
class BatchRemote final : public RemoteEvaluator {
 public:
  BatchRemote(std::vector<ArchPoint> points, ConfigEvaluator eval, std::size_t batch,
              std::int64_t fail_on = -1)
      : points_(std::move(points)), eval_(std::move(eval)), batch_(batch), fail_on_(fail_on) {}
  void Serve(WorkSource& work) override {
    while (true) {
      std::vector<std::int64_t> got;
      while (got.size() < batch_) {
        const auto task = work.Take();
        if (!task) break;
        got.push_back(task->index);
      }
      if (got.empty()) {
        EXPECT_TRUE(work.Closed());
        return;
      }
      for (auto it = got.rbegin(); it != got.rend(); ++it) {
        if (*it == fail_on_) {
          work.Failed(*it, "rank 7 (host test)", "plugin threw");
        } else {
          work.Done(*it, eval_(points_[static_cast<std::size_t>(*it)], nullptr));
        }
        ++evaluated;
      }
    }
  }
  std::atomic<int> evaluated{0};

 private:
  std::vector<ArchPoint> points_;
  ConfigEvaluator eval_;
  std::size_t batch_;
  std::int64_t fail_on_;
};

TEST(ArchSearchLoop, ARemoteEvaluatorGivesTheSameSearch) {
  // The same space and expectations as StopsWhereHysteresisSaysWithAnyThreadCount.
  const auto points = Points({10.5, 10.2, 9.7, 8.1, 7.9, 7.5, 6.0, 5.5});
  const auto eval = Scores({3, 1, 4, 2, 2, 0, 9, 9});
  for (int threads : {0, 1, 2}) {
    for (std::size_t batch : {1, 3}) {
      BatchRemote remote(points, eval, batch);
      ArchSearchOptions o;
      o.hysteresis_level = 3;
      o.bucket_width_mm2 = 1;
      o.threads = threads;
      o.remote = &remote;
      NullProgress progress;
      const auto out = RunArchSearch(points, o, eval, progress);
      EXPECT_EQ(out.stop_reason, StopReason::kConverged) << threads << " " << batch;
      ASSERT_EQ(out.explored.size(), 6u) << threads << " " << batch;
      for (std::size_t i = 0; i < out.explored.size(); ++i) {
        EXPECT_EQ(out.explored[i].point.arch.name, "c" + std::to_string(i));
      }
      EXPECT_EQ(out.bucket_best, (std::vector<double>{3, 4, 2, 2}));
      if (threads == 0) {
        EXPECT_GE(remote.evaluated.load(), 6);  // it did all the work
      }
    }
  }
}

TEST(ArchSearchLoop, RemoteFailuresNameWhereTheyHappened) {
  const auto points = Points({10.5, 10.2, 9.7, 8.1});
  const auto eval = Scores({1, 1, 1, 1});
  BatchRemote remote(points, eval, 2, /*fail_on=*/2);
  ArchSearchOptions o;
  o.exhaustive = true;
  o.threads = 0;
  o.remote = &remote;
  NullProgress progress;
  try {
    RunArchSearch(points, o, eval, progress);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "evaluating architecture c2 on rank 7 (host test): plugin threw");
  }

  // A remote that cannot serve at all aborts the search with its own message, even while local
  // threads would carry on.
  class Broken final : public RemoteEvaluator {
   public:
    void Serve(WorkSource&) override { throw Error("rank 3 (host x) could not take part"); }
  } broken;
  o.threads = 1;
  o.remote = &broken;
  ConfigEvaluator slow = [](const ArchPoint&, const Incumbent*) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    ConfigEvaluation e;
    e.score = 1;
    return e;
  };
  try {
    RunArchSearch(points, o, slow, progress);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "rank 3 (host x) could not take part");
  }

  // A local failure names the local process when it has a name.
  o.remote = nullptr;
  o.local_name = "rank 0 (host y)";
  ConfigEvaluator bad = [](const ArchPoint&, const Incumbent*) -> ConfigEvaluation {
    throw std::runtime_error("estimator crashed");
  };
  try {
    RunArchSearch(points, o, bad, progress);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "evaluating architecture c0 on rank 0 (host y): estimator crashed");
  }
}

// Two models on `n` configs of decreasing area: exact throughputs (some tied, some infeasible) and
// upper bounds 0–60% above them, drawn from `seed`. The evaluator prunes as SearchContext does
// (DecidePruning on the bounds and their common score: no score, and only the models not settled
// evaluated) and counts its exact model evaluations.
struct SyntheticSpace {
  std::vector<ArchPoint> points;
  std::vector<std::vector<double>> exact, bound;  // [config][model]
  std::atomic<int> exact_evaluations{0};

  SyntheticSpace(int n, unsigned seed) {
    std::uint64_t state = seed * 2654435761ULL + 1;
    auto uniform = [&] {
      state = state * 6364136223846793005ULL + 1442695040888963407ULL;
      return static_cast<double>(state >> 11) / 9007199254740992.0;
    };
    std::vector<double> areas;
    double area = 300;
    for (int i = 0; i < n; ++i) {
      area -= uniform() < 0.2 ? 0 : uniform() * 2;  // some equal areas
      areas.push_back(area);
    }
    points = Points(areas);
    for (int i = 0; i < n; ++i) {
      std::vector<double> t, u;
      for (int m = 0; m < 2; ++m) {
        // Larger configs tend to be faster; a few infeasible; coarse values make ties.
        double v = uniform() < 0.1 ? 0.0 : std::round(areas[i] * (0.5 + uniform()) / 10) * 10;
        t.push_back(v);
        u.push_back(v * (1 + 0.6 * uniform()));
      }
      exact.push_back(t);
      bound.push_back(u);
    }
  }

  ConfigEvaluator Evaluator() {
    return [this](const ArchPoint& p, const Incumbent* incumbent) {
      const auto i = std::stoul(p.arch.name.substr(1));
      ConfigEvaluation e;
      const std::vector<double> weights{1, 1};
      PruneDecision d;
      d.models.assign(2, 0);
      if (incumbent) {
        const double score_bound = CommonScore(bound[i], weights, ScoreMean::kArithmetic);
        d = DecidePruning(bound[i], score_bound, *incumbent);
        if (d.score) e.pruned = PruneRecord{1, bound[i], score_bound, *incumbent};
      }
      for (std::size_t m = 0; m < 2; ++m) {
        ModelEvaluation me;
        me.pruned = d.models[m] != 0;
        if (!me.pruned) {
          ++exact_evaluations;
          me.best.feasible = exact[i][m] > 0;
          me.best.plan.throughput_samples_per_s = exact[i][m];
          me.score = exact[i][m];  // the throughput objective
        }
        e.models.push_back(me);
      }
      if (!e.pruned) e.score = CommonScore(exact[i], weights, ScoreMean::kArithmetic);
      return e;
    };
  }
};

// What the search driver reports from an outcome: the winner per model and common (first of equal
// throughputs in decreasing-area order), and the Pareto fronts, as config names.
std::vector<std::string> WinnersAndFronts(const ArchSearchOutcome& out, bool fronts) {
  std::vector<std::string> got;
  for (int m = -1; m < 2; ++m) {
    auto thr = [&](const ExploredConfig& e) {
      return m < 0 ? e.evaluation.score : e.evaluation.models[m].best.Throughput();
    };
    const ExploredConfig* best = nullptr;
    std::vector<double> area, throughput;
    for (const auto& e : out.explored) {
      if (thr(e) > 0 && (!best || thr(e) > thr(*best))) best = &e;
      area.push_back(e.point.area_um2);
      throughput.push_back(thr(e));
    }
    got.push_back(best ? best->point.arch.name : "none");
    if (!fronts) continue;
    std::string front;
    for (std::size_t i : ParetoFront(area, throughput)) front += out.explored[i].point.arch.name + " ";
    got.push_back(front);
  }
  return got;
}

TEST(ArchSearchLoop, PruningKeepsTheWinnersAndParetoFrontsOfEvaluatingEverything) {
  for (unsigned seed : {1u, 2u, 3u, 4u, 5u}) {
    SyntheticSpace space(300, seed);
    NullProgress progress;
    ArchSearchOptions all;
    all.exhaustive = true;
    const auto everything = RunArchSearch(space.points, all, space.Evaluator(), progress);
    ASSERT_EQ(space.exact_evaluations.load(), 600);
    EXPECT_EQ(everything.pruned, 0);
    for (PruneMode mode : {PruneMode::kWinners, PruneMode::kPareto}) {
      const bool pareto = mode == PruneMode::kPareto;
      for (int threads : {1, 2, 4}) {
        space.exact_evaluations = 0;
        ArchSearchOptions o = all;
        o.prune = mode;
        o.threads = threads;
        const auto out = RunArchSearch(space.points, o, space.Evaluator(), progress);
        const std::string where = "seed " + std::to_string(seed) + (pareto ? " pareto" : " winners") +
                                  " threads " + std::to_string(threads);
        EXPECT_EQ(WinnersAndFronts(out, pareto), WinnersAndFronts(everything, pareto)) << where;
        // Every config is reported, in decreasing-area order, pruned or not.
        ASSERT_EQ(out.explored.size(), 300u) << where;
        for (std::size_t i = 0; i < out.explored.size(); ++i) {
          EXPECT_EQ(out.explored[i].rank, static_cast<std::int64_t>(i)) << where;
        }
        // Every model of a config is evaluated exactly or pruned; a fully pruned config has none.
        int pruned_models = 0;
        for (const auto& e : out.explored) {
          for (const auto& m : e.evaluation.models) pruned_models += m.pruned;
          EXPECT_EQ(e.evaluation.FullyPruned(), e.evaluation.pruned &&
                                                    e.evaluation.models[0].pruned &&
                                                    e.evaluation.models[1].pruned);
        }
        EXPECT_EQ(pruned_models + space.exact_evaluations.load(), 600) << where;
        EXPECT_GT(out.pruned, pareto ? 30 : 150) << where;
        EXPECT_GT(out.partially_pruned, 0) << where;
        EXPECT_EQ(out.stop_reason, StopReason::kExhausted);
      }
    }
  }
}

// Bounds as tight as they come, and an ulp under the throughput they bound: the rounding of a
// bound summed in another order than its evaluation. A config tied with the incumbent must still
// be evaluated (kBoundSlack), so the winners are those of evaluating everything; a bound clearly
// below is pruned.
TEST(ArchSearchLoop, ABoundAnUlpUnderATieDoesNotPruneIt) {
  for (unsigned seed : {1u, 2u, 3u}) {
    SyntheticSpace space(300, seed);
    for (std::size_t i = 0; i < space.exact.size(); ++i) {
      for (std::size_t m = 0; m < 2; ++m) {
        space.bound[i][m] = std::nextafter(space.exact[i][m], 0.0);
      }
    }
    NullProgress progress;
    ArchSearchOptions all;
    all.exhaustive = true;
    const auto everything = RunArchSearch(space.points, all, space.Evaluator(), progress);
    for (int threads : {1, 2}) {
      ArchSearchOptions o = all;
      o.prune = PruneMode::kWinners;
      o.threads = threads;
      const auto out = RunArchSearch(space.points, o, space.Evaluator(), progress);
      EXPECT_EQ(WinnersAndFronts(out, false), WinnersAndFronts(everything, false))
          << "seed " << seed << " threads " << threads;
      EXPECT_GT(out.pruned, 100) << "seed " << seed;
    }
  }
  Incumbent incumbent;
  incumbent.score = 10511.405675378848;
  incumbent.throughputs = {10511.405675378848};
  EXPECT_FALSE(DecidePruning({10511.405675378846}, 10511.405675378846, incumbent).score);
  const PruneDecision below = DecidePruning({10511.4}, 10511.4, incumbent);
  EXPECT_TRUE(below.score);
  EXPECT_TRUE(below.models[0]);
}

TEST(ArchSearchLoop, HysteresisNeverPrunes) {
  SyntheticSpace space(40, 7);
  NullProgress progress;
  ArchSearchOptions o;
  o.prune = PruneMode::kWinners;  // ignored outside exhaustive mode
  o.hysteresis_level = 3;
  o.bucket_width_mm2 = 1;
  const auto out = RunArchSearch(space.points, o, space.Evaluator(), progress);
  EXPECT_EQ(out.pruned, 0);
  EXPECT_EQ(out.stop_reason, StopReason::kConverged);
  for (const auto& e : out.explored) EXPECT_FALSE(e.evaluation.pruned.has_value());
  // (Workers may run ahead of the convergence point; those evaluations are discarded.)
  EXPECT_GE(space.exact_evaluations.load(), 2 * static_cast<int>(out.explored.size()));
}

TEST(CommonScore, Means) {
  EXPECT_DOUBLE_EQ(CommonScore({2, 8}, {1, 1}, ScoreMean::kArithmetic), 5);
  EXPECT_DOUBLE_EQ(CommonScore({2, 8}, {3, 1}, ScoreMean::kWeighted), (6.0 + 8.0) / 4.0);
  EXPECT_DOUBLE_EQ(CommonScore({2, 8}, {1, 1}, ScoreMean::kGeometric), 4);
  EXPECT_EQ(CommonScore({2, 0}, {1, 1}, ScoreMean::kArithmetic), 0);  // a model infeasible on the config
  EXPECT_EQ(CommonScore({}, {}, ScoreMean::kGeometric), 0);
}

}  // namespace
}  // namespace phaze
