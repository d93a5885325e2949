// The scheduler against expectations that do not come from it: an exhaustive search over schedules
// written here (not calling the scheduler or its heuristics), hand-worked cases, CBC and lp_solve
// agreeing, every strengthening switched off one at a time, and schedules checked for validity.
#include "phaze/schedule/scheduler.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <random>

#include "phaze/core/error.hpp"
#include "phaze/graph/graph_builder.hpp"
#include "phaze/schedule/layer_schedule.hpp"
#include "phaze/schedule/list_schedule.hpp"
#include "phaze/schedule/schedule_search.hpp"
#include "phaze/strategy/parallelism_strategy.hpp"
#include "plugin_registry.hpp"
#include "schedule/backward_like.hpp"
#include "test_paths.hpp"
#include "test_util.hpp"

namespace phaze {
namespace {

// ---- The oracle: every list order × mode × core choice, each op placed as early as possible
// after the ops before it in the list (semi-active schedules contain an optimum). ----
class Exhaustive {
 public:
  explicit Exhaustive(const ScheduleProblem& p) : p_(p), n_(static_cast<int>(p.ops.size())) {
    preds_.assign(n_, {});
    for (auto [a, b] : p.edges) preds_[b].push_back(a);
  }

  double Solve() {
    best_ = 0;
    for (const auto& op : p_.ops) best_ += op.single_core_s + op.all_cores_s;  // a safe start
    best_ *= 1.0 + 1e-12;
    std::vector<double> finish(n_, -1), tc(p_.num_tc, 0), vc(p_.num_vc, 0);
    Walk(0, finish, tc, vc, 0, 0, 0);
    return best_;
  }

 private:
  void Walk(int placed, std::vector<double>& finish, std::vector<double>& tc,
            std::vector<double>& vc, double barrier, double core_done, double end) {
    if (end >= best_) return;
    if (placed == n_) {
      best_ = end;
      return;
    }
    for (int i = 0; i < n_; ++i) {
      if (finish[i] >= 0) continue;
      double ready = 0;
      bool ok = true;
      for (int q : preds_[i]) {
        ok &= finish[q] >= 0;
        ready = std::max(ready, finish[q]);
      }
      if (!ok) continue;
      const ScheduleOp& op = p_.ops[i];
      if (op.cls == ScheduleClass::kLink) {
        finish[i] = ready + op.single_core_s;
        Walk(placed + 1, finish, tc, vc, barrier, core_done, std::max(end, finish[i]));
        finish[i] = -1;
        continue;
      }
      // Intra-op: after every core op placed so far; every later core op waits for it.
      {
        const double f = std::max(ready, core_done) + op.all_cores_s;
        auto tc2 = tc, vc2 = vc;
        finish[i] = f;
        Walk(placed + 1, finish, tc2, vc2, f, std::max(core_done, f), std::max(end, f));
        finish[i] = -1;
      }
      // One core (one pair for fused): every core whose state differs from the ones tried.
      const bool uses_tc = op.cls != ScheduleClass::kVector;
      const bool uses_vc = op.cls != ScheduleClass::kTensor;
      const int paired = std::min(p_.num_tc, p_.num_vc);
      const int count = op.cls == ScheduleClass::kFused ? paired : uses_tc ? p_.num_tc : p_.num_vc;
      std::vector<std::pair<double, double>> tried;
      for (int c = 0; c < count; ++c) {
        const double mine = uses_tc ? tc[c] : vc[c];
        const double other = c < paired ? (uses_tc ? vc[c] : tc[c]) : -1;
        const std::pair<double, double> state =
            op.cls == ScheduleClass::kFused ? std::pair{tc[c], vc[c]} : std::pair{mine, other};
        if (std::find(tried.begin(), tried.end(), state) != tried.end()) continue;
        tried.push_back(state);
        double start = std::max(ready, barrier);
        if (uses_tc) start = std::max(start, tc[c]);
        if (uses_vc) start = std::max(start, vc[c]);
        const double f = start + op.single_core_s;
        const double old_tc = uses_tc ? tc[c] : 0, old_vc = uses_vc ? vc[c] : 0;
        if (uses_tc) tc[c] = f;
        if (uses_vc) vc[c] = f;
        finish[i] = f;
        Walk(placed + 1, finish, tc, vc, barrier, std::max(core_done, f), std::max(end, f));
        finish[i] = -1;
        if (uses_tc) tc[c] = old_tc;
        if (uses_vc) vc[c] = old_vc;
      }
    }
  }

  const ScheduleProblem& p_;
  int n_;
  std::vector<std::vector<int>> preds_;
  double best_ = 0;
};

ScheduleProblem RandomProblem(std::mt19937& rng, int index) {
  std::uniform_int_distribution<int> ops(2, 7), cores(1, 3), cls(0, 9);
  std::uniform_real_distribution<double> latency(1, 10), ratio(0.2, 1.2), unit(0, 1);
  ScheduleProblem p;
  p.name = "random" + std::to_string(index);
  p.num_tc = cores(rng);
  p.num_vc = cores(rng);
  const int n = ops(rng);
  const double density = 0.15 + 0.4 * unit(rng);
  for (int i = 0; i < n; ++i) {
    ScheduleOp op;
    op.name = "op" + std::to_string(i);
    const int c = cls(rng);
    op.cls = c < 4   ? ScheduleClass::kTensor
             : c < 7 ? ScheduleClass::kVector
             : c < 9 ? ScheduleClass::kFused
                     : ScheduleClass::kLink;
    // Latencies on a 1/8 grid, so that ties (and equal makespans) happen.
    op.single_core_s = std::round(latency(rng) * 8) / 8 * 1e-4;
    op.all_cores_s =
        op.cls == ScheduleClass::kLink
            ? op.single_core_s
            : std::max(0.125e-4, std::round(op.single_core_s * ratio(rng) * 8e4) / 8e4);
    p.ops.push_back(op);
    for (int j = 0; j < i; ++j) {
      if (unit(rng) < density) p.edges.emplace_back(j, i);
    }
  }
  return p;
}

std::vector<ScheduleProblem> RandomProblems(int count) {
  std::mt19937 rng(20240722);
  std::vector<ScheduleProblem> out;
  for (int k = 0; k < count; ++k) out.push_back(RandomProblem(rng, k));
  return out;
}

// 320 random problems; the first 120 under the sanitizer, where CBC's solves are 10-20 times
// slower (its factorizations' large arrays are mapped and unmapped by ASan's allocator each time).
const std::vector<ScheduleProblem>& Cases() {
  static const auto cases = RandomProblems(testing::kSanitized ? 120 : 320);
  return cases;
}

// The exhaustive optimum of Cases()[k], found when first asked: a test that checks a few cases
// (fewer under the sanitizer) does not wait for all 320.
double Oracle(std::size_t k) {
  static std::vector<std::optional<double>> values(Cases().size());
  if (!values.at(k)) values[k] = Exhaustive(Cases()[k]).Solve();
  return *values[k];
}

std::shared_ptr<const SolverBackend> Backend(const std::string& name) {
  auto& registry = testing::BuiltPlugins();
  if (!registry.Has(ComponentKind::kSolverBackend, name)) return nullptr;
  return registry.CreateSolverBackend(name);
}

SchedulerOptions Exact() {
  SchedulerOptions o;
  o.solve.relative_gap = 1e-9;
  o.solve.time_limit_s = 60;
  o.cache = false;
  return o;
}

constexpr double kTol = 1e-9;

void ExpectMatchesOracle(const Scheduler& s, const std::string& what, int limit = 1 << 30) {
  const auto& cases = Cases();
  int ilp = 0, fast = 0;
  for (std::size_t k = 0; k < cases.size() && static_cast<int>(k) < limit; ++k) {
    const ScheduleResult r = s.Solve(cases[k]);
    ASSERT_NEAR(r.makespan_s, Oracle(k), 1e-6 * Oracle(k))
        << what << ": " << cases[k].name << " via " << ToString(r.stats.path);
    ASSERT_EQ(CheckSchedule(cases[k], r, kTol), "") << what << ": " << cases[k].name;
    ASSERT_EQ(r.stats.status, SolveStatus::kOptimal) << what << ": " << cases[k].name;
    (r.stats.path == SchedulePath::kIlp ? ilp : fast)++;
  }
  ::testing::Test::RecordProperty(what + "_ilp", ilp);
  ::testing::Test::RecordProperty(what + "_fast", fast);
}

TEST(ExhaustiveOracle, HandWorkedCases) {
  // Two independent tensor ops, one tensor core: serial 3 + 4 = 7, or intra-op 2 + 3 = 5.
  ScheduleProblem p;
  p.num_tc = 1;
  p.num_vc = 1;
  p.ops = {{"a", ScheduleClass::kTensor, 3, 2}, {"b", ScheduleClass::kTensor, 4, 3}};
  EXPECT_DOUBLE_EQ(Exhaustive(p).Solve(), 5);
  // Two tensor cores: both at once, 4.
  p.num_tc = 2;
  EXPECT_DOUBLE_EQ(Exhaustive(p).Solve(), 4);
  // A link op overlaps the compute it is not ordered with.
  p.ops.push_back({"ar", ScheduleClass::kLink, 4.5, 4.5});
  EXPECT_DOUBLE_EQ(Exhaustive(p).Solve(), 4.5);
  // A fused op needs a pair: with 2 TC and 1 VC, a vector op and a fused op cannot overlap.
  ScheduleProblem f;
  f.num_tc = 2;
  f.num_vc = 1;
  f.ops = {{"f", ScheduleClass::kFused, 2, 2},
           {"v", ScheduleClass::kVector, 3, 3},
           {"t", ScheduleClass::kTensor, 5, 5}};
  EXPECT_DOUBLE_EQ(Exhaustive(f).Solve(), 5);  // t on core 1 alongside f then v on pair 0
}

TEST(RelaxInto, HandWorkedCaseAndBruteForce) {
  // a: one tensor core, ops 3/2 and 4/3 → 5 (both intra-op). b: two tensor cores, ops 5/4 and
  // 2/2, one vector core → 5 (both at once). The relaxation: two cores, ops 3/2 and 2/2 → 3.
  ScheduleProblem a;
  a.num_tc = 1;
  a.num_vc = 1;
  a.host_s = 1;
  a.ops = {{"x", ScheduleClass::kTensor, 3, 2}, {"y", ScheduleClass::kTensor, 4, 3}};
  ScheduleProblem b = a;
  b.num_tc = 2;
  b.host_s = 0.5;
  b.ops[0].single_core_s = 5;
  b.ops[0].all_cores_s = 4;
  b.ops[1].single_core_s = 2;
  b.ops[1].all_cores_s = 2;
  EXPECT_DOUBLE_EQ(Exhaustive(a).Solve(), 5);
  EXPECT_DOUBLE_EQ(Exhaustive(b).Solve(), 5);
  ScheduleProblem r = a;
  ASSERT_TRUE(RelaxInto(r, b));
  EXPECT_EQ(r.num_tc, 2);
  EXPECT_DOUBLE_EQ(r.ops[0].single_core_s, 3);
  EXPECT_DOUBLE_EQ(r.ops[0].all_cores_s, 2);
  EXPECT_DOUBLE_EQ(r.ops[1].single_core_s, 2);
  EXPECT_DOUBLE_EQ(r.host_s, 0.5);
  EXPECT_DOUBLE_EQ(Exhaustive(r).Solve(), 3);
  // Different edges or classes: no relaxation, nothing changed.
  ScheduleProblem c = a;
  c.edges = {{0, 1}};
  ScheduleProblem unchanged = a;
  EXPECT_FALSE(RelaxInto(unchanged, c));
  c = a;
  c.ops[1].cls = ScheduleClass::kVector;
  EXPECT_FALSE(RelaxInto(unchanged, c));
  EXPECT_EQ(unchanged.num_tc, 1);
  EXPECT_DOUBLE_EQ(unchanged.host_s, 1);
  // Brute force: the relaxation of random problems of one shape is never slower than any of them.
  std::mt19937 rng(7);
  for (int k = 0; k < 60; ++k) {
    ScheduleProblem first = RandomProblem(rng, k);
    ScheduleProblem relaxed = first;
    double fastest = Exhaustive(first).Solve();
    std::uniform_real_distribution<double> scale(0.5, 2.0);
    std::uniform_int_distribution<int> cores(1, 3);
    for (int other = 0; other < 2; ++other) {
      ScheduleProblem q = first;
      q.num_tc = cores(rng);
      q.num_vc = cores(rng);
      for (auto& op : q.ops) {
        op.single_core_s *= scale(rng);
        op.all_cores_s = op.cls == ScheduleClass::kLink ? op.single_core_s
                                                         : op.all_cores_s * scale(rng);
      }
      ASSERT_TRUE(RelaxInto(relaxed, q));
      fastest = std::min(fastest, Exhaustive(q).Solve());
    }
    EXPECT_LE(Exhaustive(relaxed).Solve(), fastest + 1e-9) << k;
  }
}

TEST(Scheduler, HandWorkedCasesWithEachBackend) {
  for (const std::string name : {"cbc", "lpsolve"}) {
    auto backend = Backend(name);
    if (!backend) continue;
    SchedulerOptions o = Exact();
    o.fast_paths = false;
    o.presolve = false;
    Scheduler s(backend, o);
    ScheduleProblem p;
    p.num_tc = 1;
    p.num_vc = 1;
    p.ops = {{"a", ScheduleClass::kTensor, 3, 2}, {"b", ScheduleClass::kTensor, 4, 3}};
    ScheduleResult r = s.Solve(p);
    EXPECT_NEAR(r.makespan_s, 5, 1e-9) << name;
    EXPECT_TRUE(r.ops[0].intra_op && r.ops[1].intra_op) << name;
    // Three independent tensor ops that gain nothing from intra-op, two tensor cores: without
    // core rows all three would overlap; the lazy loop adds them and re-solves → 2 + 2.
    p.num_tc = 2;
    p.ops = {{"a", ScheduleClass::kTensor, 2, 2},
             {"b", ScheduleClass::kTensor, 2, 2},
             {"c", ScheduleClass::kTensor, 2, 2}};
    r = s.Solve(p);
    EXPECT_NEAR(r.makespan_s, 4, 1e-9) << name;
    EXPECT_EQ(r.stats.resolves, 1) << name;
    EXPECT_EQ(r.stats.solves, 2) << name;
    EXPECT_EQ(CheckSchedule(p, r, kTol), "") << name;
  }
}

// Eight tensor ops on two tensor cores, the even ones a chain: small, and not settled by the
// heuristic alone.
ScheduleProblem EightTensorOpsInTwoChains() {
  ScheduleProblem p;
  p.num_tc = 2;
  p.num_vc = 1;
  for (int i = 0; i < 8; ++i) {
    p.ops.push_back({"t" + std::to_string(i), ScheduleClass::kTensor, 3.0 + i % 3, 2.0 + i % 2});
  }
  for (int i = 0; i + 2 < 8; i += 2) p.edges.push_back({i, i + 2});
  return p;
}

// A node limit the ILP stops at before it finds a schedule of its own: the heuristic schedule
// stands and is reported feasible by either backend (lp_solve, which takes no warm start, said
// no_solution_at_limit of the schedule it printed, where CBC said feasible).
TEST(Scheduler, ALimitBeforeAnIlpSolutionKeepsTheHeuristicScheduleAsFeasible) {
  const ScheduleProblem p = EightTensorOpsInTwoChains();
  for (const std::string name : {"cbc", "lpsolve"}) {
    auto backend = Backend(name);
    if (!backend) continue;
    SchedulerOptions o = Exact();
    o.fast_paths = false;
    o.presolve = false;
    o.search_nodes = 0;
    o.solve.node_limit = 1;
    const ScheduleResult r = Scheduler(backend, o).Solve(p);
    EXPECT_TRUE(r.stats.status == SolveStatus::kFeasible || r.stats.status == SolveStatus::kOptimal)
        << name << ": " << SolveStatusName(r.stats.status) << " " << r.stats.detail;
    EXPECT_EQ(CheckSchedule(p, r, kTol), "") << name;
  }
}

TEST(Scheduler, IlpMatchesExhaustiveSearchWithCbc) {
  auto cbc = Backend("cbc");
  if (!cbc) GTEST_SKIP() << "no cbc backend built";
  SchedulerOptions o = Exact();
  o.fast_paths = false;
  o.presolve = false;
  ExpectMatchesOracle(Scheduler(cbc, o), "cbc_ilp");
}

TEST(Scheduler, IlpMatchesExhaustiveSearchWithLpSolve) {
  auto lp = Backend("lpsolve");
  if (!lp) GTEST_SKIP() << "no lpsolve backend built";
  SchedulerOptions o = Exact();
  o.fast_paths = false;
  o.presolve = false;
  ExpectMatchesOracle(Scheduler(lp, o), "lpsolve_ilp");
}

TEST(Scheduler, DefaultPathMatchesExhaustiveSearch) {
  // Presolve and fast paths on: every answer, fast or not, equals the oracle's.
  ExpectMatchesOracle(Scheduler(Backend("cbc"), Exact()), "default");
}

TEST(Scheduler, PlainPaperFormulationMatchesExhaustiveSearch) {
  auto cbc = Backend("cbc");
  if (!cbc) GTEST_SKIP() << "no cbc backend built";
  SchedulerOptions o = Exact();
  o.presolve = o.fast_paths = o.heuristic_start = o.path_cuts = o.work_bounds = false;
  o.symmetry_breaking = false;
  o.transitivity_rows = true;
  ExpectMatchesOracle(Scheduler(cbc, o), "plain", testing::kSanitized ? 20 : 80);
}

TEST(Scheduler, EachReductionAloneLeavesTheOptimumUnchanged) {
  auto cbc = Backend("cbc");
  if (!cbc) GTEST_SKIP() << "no cbc backend built";
  using Toggle = std::function<void(SchedulerOptions&)>;
  const std::vector<std::pair<std::string, Toggle>> toggles = {
      {"presolve", [](SchedulerOptions& o) { o.presolve = true; }},
      {"heuristic_start", [](SchedulerOptions& o) { o.heuristic_start = true; }},
      {"path_cuts", [](SchedulerOptions& o) { o.path_cuts = true; }},
      {"few_path_cuts",
       [](SchedulerOptions& o) {
         o.path_cuts = true;
         o.max_path_cuts = 1;
       }},
      {"work_bounds", [](SchedulerOptions& o) { o.work_bounds = true; }},
      {"symmetry_breaking", [](SchedulerOptions& o) { o.symmetry_breaking = true; }},
      {"transitivity_rows", [](SchedulerOptions& o) { o.transitivity_rows = true; }},
  };
  for (const auto& [name, on] : toggles) {
    SchedulerOptions o = Exact();
    o.presolve = o.fast_paths = o.heuristic_start = o.path_cuts = o.work_bounds = false;
    o.symmetry_breaking = o.transitivity_rows = false;
    on(o);
    ExpectMatchesOracle(Scheduler(cbc, o), name, testing::kSanitized ? 6 : 50);
  }
}

TEST(Scheduler, FastPathsAgreeWithTheSolverOnTheSameInputs) {
  auto cbc = Backend("cbc");
  if (!cbc) GTEST_SKIP() << "no cbc backend built";
  SchedulerOptions solver_only = Exact();
  solver_only.fast_paths = false;
  const Scheduler fast(nullptr, Exact()), slow(cbc, solver_only);
  int chain = 0, list = 0, search = 0;
  for (const auto& p : Cases()) {
    ScheduleResult f;
    try {
      f = fast.Solve(p);
    } catch (const Error&) {
      continue;  // needs the ILP: not a fast-path case
    }
    const ScheduleResult s = slow.Solve(p);
    EXPECT_NEAR(f.makespan_s, s.makespan_s, 1e-6 * s.makespan_s) << p.name;
    chain += f.stats.path == SchedulePath::kChain;
    list += f.stats.path == SchedulePath::kListSchedule;
    search += f.stats.path == SchedulePath::kSearch;
  }
  EXPECT_GT(chain, 10);
  EXPECT_GT(list, 10);
  EXPECT_GT(search, 10);
}

// With a relative gap the solver may stop anywhere within it, by whichever route: the list
// schedule, the schedule search, or the ILP — which a segment within 1.5 gaps of its bound tries
// before the search. Every answer is a valid schedule within the gap of the exhaustive optimum,
// with a lower bound no larger than it, and some of them are the ILP's (7 here; none when the ILP
// is not tried first: on this corpus the search then closes every gap).
TEST(Scheduler, EveryRouteStopsWithinTheRequestedGapOfTheOptimum) {
  auto cbc = Backend("cbc");
  if (!cbc) GTEST_SKIP() << "no cbc backend built";
  int ilp = 0;
  for (const double gap : {0.02, 0.05, 0.1}) {
    SchedulerOptions o = Exact();
    o.solve.relative_gap = gap;
    const Scheduler s(cbc, o);
    for (std::size_t k = 0; k < Cases().size(); ++k) {
      const auto& p = Cases()[k];
      const ScheduleResult r = s.Solve(p);
      ASSERT_EQ(CheckSchedule(p, r, kTol), "") << p.name << " gap " << gap;
      EXPECT_GE(r.makespan_s, Oracle(k) * (1 - 1e-12)) << p.name;
      EXPECT_LE(r.makespan_s * (1 - gap), Oracle(k) * (1 + 1e-9))
          << p.name << " gap " << gap << " via " << ToString(r.stats.path);
      EXPECT_LE(r.stats.lower_bound_s, Oracle(k) * (1 + 1e-9)) << p.name;
      EXPECT_LE(r.stats.gap, gap + 1e-9) << p.name << " via " << ToString(r.stats.path);
      ilp += r.stats.path == SchedulePath::kIlp;
    }
  }
  ::testing::Test::RecordProperty("ilp", ilp);
  EXPECT_GT(ilp, 0);
}

TEST(Scheduler, HeuristicAndBoundBracketTheOptimum) {
  for (std::size_t k = 0; k < Cases().size(); ++k) {
    const auto& p = Cases()[k];
    const Precedence prec(p);
    const ScheduleResult h = HeuristicSchedule(p, prec);
    EXPECT_EQ(CheckSchedule(p, h, kTol), "") << p.name;
    EXPECT_GE(h.makespan_s, Oracle(k) * (1 - 1e-12)) << p.name;
    const ScheduleResult improved = ImproveSchedule(p, prec, h, 200);
    EXPECT_EQ(CheckSchedule(p, improved, kTol), "") << p.name;
    EXPECT_GE(improved.makespan_s, Oracle(k) * (1 - 1e-12)) << p.name;
    EXPECT_LE(improved.makespan_s, h.makespan_s) << p.name;
    // The bound is valid at any node budget, and more nodes never weaken it.
    const double root = MakespanLowerBound(p, prec, kInfinity, 0);
    const double full = MakespanLowerBound(p, prec, kInfinity, 1 << 20);
    EXPECT_LE(root, full * (1 + 1e-12)) << p.name;
    EXPECT_LE(full, Oracle(k) * (1 + 1e-12)) << p.name;
    EXPECT_LE(MakespanLowerBound(p, prec), Oracle(k) * (1 + 1e-12)) << p.name;
    EXPECT_LE(Oracle(k), p.SequentialMakespan() * (1 + 1e-12)) << p.name;
  }
}

TEST(Scheduler, EveryGeneratedScheduleIsValid) {
  // Random topological orders and modes, appended and back-filled: always a valid schedule, never
  // shorter than the optimum.
  std::mt19937 rng(7);
  for (std::size_t k = 0; k < Cases().size(); ++k) {
    const auto& p = Cases()[k];
    const Precedence prec(p);
    const int n = static_cast<int>(p.ops.size());
    for (int trial = 0; trial < 4; ++trial) {
      std::vector<double> priority(n);
      for (double& x : priority) x = std::generate_canonical<double, 32>(rng);
      const std::vector<int> order = PriorityOrder(p, prec, priority);  // a random one
      std::vector<ModeChoice> modes(n);
      for (auto& m : modes) m = static_cast<ModeChoice>(rng() % 3);
      for (bool backfill : {false, true}) {
        const ScheduleResult r = GenerateSchedule(p, prec, order, modes, backfill);
        EXPECT_EQ(CheckSchedule(p, r, kTol), "") << p.name << (backfill ? " back-filled" : "");
        EXPECT_GE(r.makespan_s, Oracle(k) * (1 - 1e-12)) << p.name;
      }
    }
  }
}

TEST(Scheduler, BackFillingUsesEarlierGaps) {
  // One core each. v (vector, 5) feeds b (tensor, 2); a (tensor, 2) and c (tensor, 3) are free.
  // In the list order v, a, b, c appending puts c after b: a [0,2), b [5,7), c [7,10). Back-filling
  // puts c into the idle gap [2,5) before b, for a makespan of 7 (the optimum).
  ScheduleProblem p;
  p.num_tc = 1;
  p.num_vc = 1;
  p.ops = {{"v", ScheduleClass::kVector, 5, 5},
           {"a", ScheduleClass::kTensor, 2, 2},
           {"b", ScheduleClass::kTensor, 2, 2},
           {"c", ScheduleClass::kTensor, 3, 3}};
  p.edges = {{0, 2}};
  const Precedence prec(p);
  const std::vector<ModeChoice> single(4, ModeChoice::kSingle);
  const ScheduleResult appended = GenerateSchedule(p, prec, {0, 1, 2, 3}, single, false);
  const ScheduleResult filled = GenerateSchedule(p, prec, {0, 1, 2, 3}, single, true);
  EXPECT_DOUBLE_EQ(appended.makespan_s, 10);
  EXPECT_DOUBLE_EQ(filled.makespan_s, 7);
  EXPECT_DOUBLE_EQ(filled.ops[3].start_s, 2);
  EXPECT_EQ(CheckSchedule(p, filled, kTol), "");
  EXPECT_DOUBLE_EQ(Exhaustive(p).Solve(), 7);
  // An all-cores op goes into a gap where no core is busy. With v a link op (5, no core), a runs
  // [0,2) and b [5,7); x (tensor, 4 on one core, 1 on all cores), last in the list, fits into
  // [2,3) back-filled but starts at 7 appended.
  p.ops[0].cls = ScheduleClass::kLink;
  p.ops[3] = {"x", ScheduleClass::kTensor, 4, 1};
  const std::vector<ModeChoice> modes = {ModeChoice::kSingle, ModeChoice::kSingle,
                                         ModeChoice::kSingle, ModeChoice::kIntra};
  const ScheduleResult late = GenerateSchedule(p, prec, {0, 1, 2, 3}, modes, false);
  const ScheduleResult early = GenerateSchedule(p, prec, {0, 1, 2, 3}, modes, true);
  EXPECT_EQ(CheckSchedule(p, early, kTol), "");
  EXPECT_DOUBLE_EQ(late.ops[3].start_s, 7);
  EXPECT_DOUBLE_EQ(early.ops[3].start_s, 2);
  EXPECT_DOUBLE_EQ(early.makespan_s, 7);
}

TEST(Scheduler, EnergeticBoundByHand) {
  // Three independent tensor ops of 2 on two tensor cores: work 6 / 2 = 3, but one core must run
  // two of them, so T = 4. Energetic reasoning sees it: for T < 4 every op must run in the middle
  // of [0, T] for 4 − T at least, 3 ops on 2 cores.
  ScheduleProblem p;
  p.num_tc = 2;
  p.num_vc = 1;
  p.ops = {{"a", ScheduleClass::kTensor, 2, 2},
           {"b", ScheduleClass::kTensor, 2, 2},
           {"c", ScheduleClass::kTensor, 2, 2}};
  const Precedence prec(p);
  EXPECT_DOUBLE_EQ(MakespanLowerBound(p, prec, kInfinity, 0), 3);
  EXPECT_NEAR(MakespanLowerBound(p, prec), 4, 1e-3);
  EXPECT_LE(MakespanLowerBound(p, prec), 4);
  EXPECT_DOUBLE_EQ(Exhaustive(p).Solve(), 4);
}

TEST(ScheduleSearch, ProvesWhatEnergeticReasoningCannot) {
  // Five independent tensor ops of 3 on two tensor cores: one core runs three of them, so T = 9.
  // The work bound says 7.5, and energetic reasoning adds nothing: no op has to run in any
  // particular part of [0, T] for T ≥ 6. Searching the schedules proves 9.
  ScheduleProblem p;
  p.num_tc = 2;
  p.num_vc = 1;
  for (const char* name : {"a", "b", "c", "d", "e"}) p.ops.push_back({name, ScheduleClass::kTensor, 3, 3});
  const Precedence prec(p);
  EXPECT_DOUBLE_EQ(Exhaustive(p).Solve(), 9);
  EXPECT_LT(MakespanLowerBound(p, prec), 7.51);
  const ModeRestriction open(p.ops.size(), -1);
  // From a poor incumbent (every op one after another): the search finds a 9 and proves it.
  const ScheduleSearchResult r = SearchSchedules(p, prec, open, 15, 15, 100000);
  EXPECT_TRUE(r.complete);
  EXPECT_DOUBLE_EQ(r.lower_bound_s, 9);
  ASSERT_TRUE(r.better.has_value());
  EXPECT_DOUBLE_EQ(r.better->makespan_s, 9);
  EXPECT_EQ(CheckSchedule(p, *r.better, kTol), "");
  // Asked only to show nothing is below 8, it stops there: a bound of at least 8, no schedule.
  const ScheduleSearchResult enough = SearchSchedules(p, prec, open, 9, 8, 100000);
  EXPECT_TRUE(enough.complete);
  EXPECT_GE(enough.lower_bound_s, 8);
  EXPECT_LE(enough.lower_bound_s, 9);
  EXPECT_FALSE(enough.better.has_value());
  // Out of nodes, it says so.
  EXPECT_FALSE(SearchSchedules(p, prec, open, 15, 15, 2).complete);
  // Through the mode bound (as the scheduler calls it), and the scheduler without a backend.
  LowerBoundOptions o;
  o.enough = 9;
  o.search_nodes = 100000;
  EXPECT_DOUBLE_EQ(MakespanLowerBound(p, prec, o), 9);
  const ScheduleResult s = Scheduler(nullptr).Solve(p);
  EXPECT_DOUBLE_EQ(s.makespan_s, 9);
  EXPECT_EQ(s.stats.status, SolveStatus::kOptimal);
}

TEST(ScheduleSearch, SinksOnAllCoresGoLastUnlessALinkOpCanRunBesideThem) {
  // x is a sink: 10 on its vector core, 2 on all cores. a (tensor, 2) comes before b (tensor, 1).
  // On all cores x runs alone, so a, b, x one after another: 5, with x last (the search tries x
  // on all cores only after every other op); x on its own core beside them takes 10.
  ScheduleProblem p;
  p.num_tc = 1;
  p.num_vc = 1;
  p.ops = {{"a", ScheduleClass::kTensor, 2, 2},
           {"b", ScheduleClass::kTensor, 1, 1},
           {"x", ScheduleClass::kVector, 10, 2}};
  p.edges = {{0, 1}};
  const ModeRestriction open(p.ops.size(), -1);
  for (double expected : {5.0, 3.0}) {
    const Precedence prec(p);
    EXPECT_DOUBLE_EQ(Exhaustive(p).Solve(), expected);
    const ScheduleSearchResult r = SearchSchedules(p, prec, open, kInfinity, kInfinity, 1000);
    ASSERT_TRUE(r.complete && r.better.has_value());
    EXPECT_DOUBLE_EQ(r.lower_bound_s, expected);
    EXPECT_DOUBLE_EQ(r.better->makespan_s, expected);
    EXPECT_EQ(CheckSchedule(p, *r.better, kTol), "");
    // With a a link op, which occupies no core, x on all cores runs beside it: x ∥ a, then b,
    // 3. Putting x last would say 5.
    p.ops[0].cls = ScheduleClass::kLink;
  }
}

TEST(ScheduleSearch, FindsTheOptimumOfEveryRandomDag) {
  // With no incumbent and every mode open, the search is exact on the cores-as-pools relaxation:
  // its bound never exceeds the oracle's optimum and, without fused ops (whose pairs the pools
  // do not track), equals it, with a valid schedule of that makespan.
  int exact = 0;
  for (std::size_t k = 0; k < Cases().size(); ++k) {
    const auto& p = Cases()[k];
    const Precedence prec(p);
    const ScheduleSearchResult r =
        SearchSchedules(p, prec, ModeRestriction(p.ops.size(), -1), kInfinity, kInfinity, 1 << 22);
    ASSERT_TRUE(r.complete) << p.name;
    ASSERT_TRUE(r.better.has_value()) << p.name;
    EXPECT_EQ(CheckSchedule(p, *r.better, kTol), "") << p.name;
    EXPECT_LE(r.lower_bound_s, Oracle(k) * (1 + 1e-12)) << p.name;
    EXPECT_GE(r.better->makespan_s, Oracle(k) * (1 - 1e-12)) << p.name;
    const bool fused = std::any_of(p.ops.begin(), p.ops.end(), [](const ScheduleOp& op) {
      return op.cls == ScheduleClass::kFused;
    });
    if (!fused) {
      EXPECT_NEAR(r.lower_bound_s, Oracle(k), 1e-9 * Oracle(k)) << p.name;
      EXPECT_NEAR(r.better->makespan_s, Oracle(k), 1e-9 * Oracle(k)) << p.name;
      ++exact;
    }
    // Modes restricted: every op of the schedule found runs in a mode it was allowed, and the
    // bound holds for that restriction (never above what was found).
    ModeRestriction single(p.ops.size(), 0);
    const ScheduleSearchResult s = SearchSchedules(p, prec, single, kInfinity, kInfinity, 1 << 22);
    ASSERT_TRUE(s.complete && s.better.has_value()) << p.name;
    for (const ScheduledOp& op : s.better->ops) EXPECT_FALSE(op.intra_op) << p.name;
    EXPECT_LE(s.lower_bound_s, s.better->makespan_s * (1 + 1e-12)) << p.name;
    EXPECT_GE(s.better->makespan_s, Oracle(k) * (1 - 1e-12)) << p.name;
    // All cores wherever that is faster (the case where sinks are only ever placed last): the
    // oracle's optimum of the same DAG with those ops' one-core latencies out of reach.
    ScheduleProblem all_cores = p;
    for (ScheduleOp& op : all_cores.ops) {
      if (op.IntraOpUseful()) op.single_core_s = 1e3;
    }
    const double optimum = Exhaustive(all_cores).Solve();
    const ScheduleSearchResult a =
        SearchSchedules(p, prec, ModeRestriction(p.ops.size(), 1), kInfinity, kInfinity, 1 << 22);
    ASSERT_TRUE(a.complete && a.better.has_value()) << p.name;
    EXPECT_EQ(CheckSchedule(p, *a.better, kTol), "") << p.name;
    EXPECT_LE(a.lower_bound_s, optimum * (1 + 1e-12)) << p.name;
    if (!fused) {
      EXPECT_NEAR(a.better->makespan_s, optimum, 1e-9 * optimum) << p.name;
    }
  }
  EXPECT_GT(exact, testing::kSanitized ? 30 : 100);  // 119 of the 320
}

TEST(Scheduler, ChipPathBoundByHand) {
  // Two cores of each class. a (vector) and c (fused, after b) take 1 on all cores, where each
  // runs alone on the chip, against 4 and 3 on one core; b (vector) takes 1 on one core. So a, b
  // and c run one after another: 3, the path b → c plus a, which no head-body-tail or energetic
  // bound sees (the vector cores' work is 1 + 1/2 + 1).
  ScheduleProblem p;
  p.num_tc = 2;
  p.num_vc = 2;
  p.ops = {{"a", ScheduleClass::kVector, 4, 1},
           {"b", ScheduleClass::kVector, 1, 4},
           {"c", ScheduleClass::kFused, 3, 1}};
  p.edges = {{1, 2}};
  EXPECT_DOUBLE_EQ(MakespanLowerBound(p, Precedence(p)), 3);
  EXPECT_DOUBLE_EQ(Exhaustive(p).Solve(), 3);
  // A link op occupies no core, so an all-cores op may overlap it: with b a link op, a runs
  // beside it and the optimum is 2. The bound must not count b.
  p.ops[1].cls = ScheduleClass::kLink;
  EXPECT_DOUBLE_EQ(Exhaustive(p).Solve(), 2);
  EXPECT_DOUBLE_EQ(MakespanLowerBound(p, Precedence(p)), 2);
}

TEST(Scheduler, ModeBoundByHand) {
  // One core each; v (vector, 10 on one core, 4 on all) and t (tensor, 8) are independent.
  // Without choosing modes the bound is 8 (t's work, and v at 4). With v on all cores the chip
  // is v's for 4, then t: T ≥ 12; with v on one core T ≥ 10. So T ≥ min(12, 10) = 10, which
  // v ∥ t attains.
  ScheduleProblem p;
  p.num_tc = 1;
  p.num_vc = 1;
  p.ops = {{"v", ScheduleClass::kVector, 10, 4}, {"t", ScheduleClass::kTensor, 8, 8}};
  const Precedence prec(p);
  EXPECT_DOUBLE_EQ(MakespanLowerBound(p, prec, kInfinity, 0), 8);
  EXPECT_DOUBLE_EQ(MakespanLowerBound(p, prec), 10);
  EXPECT_DOUBLE_EQ(Exhaustive(p).Solve(), 10);
  // The scheduler answers it without the solver: the list schedule meets the bound.
  const ScheduleResult r = Scheduler(nullptr, SchedulerOptions{}).Solve(p);
  EXPECT_DOUBLE_EQ(r.makespan_s, 10);
  EXPECT_EQ(r.stats.path, SchedulePath::kListSchedule);
}

TEST(Scheduler, HeadBodyTailBoundByHand) {
  // v (vector, 3) releases t1 and t2 (tensor, 1 each); t0 (tensor, 1) is free; one core each.
  // Critical path 3 + 1 = 4 and tensor work 3, but t1 and t2 cannot start before 3, so
  // T ≥ 3 + 1 + 1 = 5, which the schedule t0 ∥ v, then t1, t2 attains.
  ScheduleProblem p;
  p.num_tc = 1;
  p.num_vc = 1;
  p.ops = {{"v", ScheduleClass::kVector, 3, 3},
           {"t0", ScheduleClass::kTensor, 1, 1},
           {"t1", ScheduleClass::kTensor, 1, 1},
           {"t2", ScheduleClass::kTensor, 1, 1}};
  p.edges = {{0, 2}, {0, 3}};
  const Precedence prec(p);
  EXPECT_DOUBLE_EQ(MakespanLowerBound(p, prec), 5);
  EXPECT_DOUBLE_EQ(Exhaustive(p).Solve(), 5);
  // The tail side: t1 and t2 feed v; they must end by T − 3.
  p.edges = {{2, 0}, {3, 0}};
  const Precedence reversed(p);
  EXPECT_DOUBLE_EQ(MakespanLowerBound(p, reversed), 5);
  EXPECT_DOUBLE_EQ(Exhaustive(p).Solve(), 5);
}

TEST(Scheduler, TimeLimitGivesTheIncumbentWithItsGap) {
  auto cbc = Backend("cbc");
  if (!cbc) GTEST_SKIP() << "no cbc backend built";
  SchedulerOptions o;
  o.solve.time_limit_s = 0.05;
  o.fast_paths = false;
  const ScheduleProblem p = testing::BackwardLike(60, 2, 2, 7);
  const ScheduleResult r = Scheduler(cbc, o).Solve(p);
  EXPECT_EQ(CheckSchedule(p, r, 1e-12), "");
  EXPECT_LE(r.stats.lower_bound_s, r.makespan_s);
  EXPECT_NEAR(r.stats.gap, (r.makespan_s - r.stats.lower_bound_s) / r.makespan_s, 1e-12);
  if (r.stats.status != SolveStatus::kOptimal) {
    EXPECT_FALSE(r.stats.detail.empty());
  }
}

TEST(Precedence, ArticulationOpsAreTheOpsComparableToAllOthers) {
  // The linear sweep against the closure's definition, on random DAGs with shuffled labels (so the
  // topological order is not the index order), plus a chain and a diamond by hand.
  std::mt19937 rng(11);
  for (int trial = 0; trial < 300; ++trial) {
    const int n = 1 + static_cast<int>(rng() % 12);
    std::vector<int> label(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) label[static_cast<std::size_t>(i)] = i;
    std::shuffle(label.begin(), label.end(), rng);
    ScheduleProblem p;
    p.name = "random";
    for (int i = 0; i < n; ++i) p.ops.push_back({"o" + std::to_string(i), ScheduleClass::kTensor, 1, 1});
    const unsigned density = 1 + rng() % 4;  // out of 8
    for (int i = 0; i < n; ++i) {
      for (int j = i + 1; j < n; ++j) {
        if (rng() % 8 < density) p.edges.emplace_back(label[i], label[j]);
      }
    }
    const Precedence prec(p);
    std::vector<int> expected;
    for (int i : prec.Order()) {
      bool all = true;
      for (int j = 0; j < n; ++j) all = all && prec.Comparable(i, j);
      if (all) expected.push_back(i);
    }
    EXPECT_EQ(prec.ArticulationOps(), expected) << "trial " << trial;
    EXPECT_EQ(Precedence(p, Precedence::Closure::kNone).ArticulationOps(), expected);
  }
  ScheduleProblem diamond;
  for (const char* name : {"a", "b", "c", "d"}) diamond.ops.push_back({name, ScheduleClass::kVector, 1, 1});
  diamond.edges = {{0, 1}, {0, 2}, {1, 3}, {2, 3}};
  EXPECT_EQ(Precedence(diamond).ArticulationOps(), (std::vector<int>{0, 3}));
  diamond.edges.pop_back();  // c is now a sink beside d: only a precedes everything
  EXPECT_EQ(Precedence(diamond).ArticulationOps(), (std::vector<int>{0}));
}

TEST(Scheduler, SegmentsOverTheBudgetKeepAValidListScheduleAndSaySo) {
  const ScheduleProblem p = testing::BackwardLike(60, 2, 2, 7);
  SchedulerOptions o;
  o.max_exact_ops = 10;
  const ScheduleResult r = Scheduler(nullptr, o).Solve(p);  // no backend: nothing reaches an ILP
  EXPECT_EQ(CheckSchedule(p, r, 1e-12), "");
  EXPECT_EQ(r.stats.status, SolveStatus::kFeasible);
  EXPECT_NE(r.stats.detail.find("over the budget of 10 (solver.max_exact_ops)"), std::string::npos)
      << r.stats.detail;
  EXPECT_LE(r.stats.lower_bound_s, r.makespan_s);
  EXPECT_EQ(r.stats.solves, 0);
  // The bound is a bound: below the thorough list schedule (back-filled, modes flipped) too.
  EXPECT_LE(r.stats.lower_bound_s, HeuristicSchedule(p, Precedence(p)).makespan_s * (1 + 1e-12));
}

// An ILP over solver.max_ilp_variables is not solved: the segment keeps its heuristic schedule and
// bound, feasible, and says why; without the budget the same problem is solved by the ILP.
TEST(Scheduler, IlpsOverTheVariableBudgetAreNotSolved) {
  const ScheduleProblem p = EightTensorOpsInTwoChains();
  auto backend = Backend("cbc");
  ASSERT_TRUE(backend);
  SchedulerOptions o = Exact();
  o.fast_paths = false;
  o.presolve = false;
  o.search_nodes = 0;
  o.max_ilp_variables = 10;
  const ScheduleResult r = Scheduler(backend, o).Solve(p);
  EXPECT_EQ(CheckSchedule(p, r, kTol), "");
  EXPECT_EQ(r.stats.status, SolveStatus::kFeasible);
  EXPECT_EQ(r.stats.solves, 0);
  EXPECT_GT(r.stats.variables, 10);
  EXPECT_NE(r.stats.detail.find("over the budget of 10 (solver.max_ilp_variables): not solved"),
            std::string::npos)
      << r.stats.detail;
  EXPECT_LE(r.stats.lower_bound_s, r.makespan_s);
  o.max_ilp_variables = 0;  // no budget: the ILP runs
  EXPECT_GT(Scheduler(backend, o).Solve(p).stats.solves, 0);
}

TEST(Scheduler, TimeLimitBoundsTheLocalSearchAsWell) {
  // A local search of 10^9 generations would run for hours: the segment's time limit stops it,
  // and the schedule kept is valid and no worse than the list schedule it started from.
  const ScheduleProblem p = testing::BackwardLike(60, 2, 2, 7);
  const Precedence prec(p);
  const ScheduleResult list = HeuristicSchedule(p, prec);
  bool stopped = false;
  const ScheduleResult r = ImproveSchedule(p, prec, list, 1000000000, 0, 0, Deadline::In(0.05), &stopped);
  EXPECT_TRUE(stopped);
  EXPECT_EQ(CheckSchedule(p, r, 1e-12), "");
  EXPECT_LE(r.makespan_s, list.makespan_s);
  // Through the scheduler (no solver needed: the limit ends it before any ILP).
  SchedulerOptions o;
  o.solve.time_limit_s = 0.05;
  o.improvement_evaluations = 1000000000;
  o.solve.relative_gap = 0;
  const ScheduleResult s = Scheduler(nullptr, o).Solve(p);
  EXPECT_EQ(CheckSchedule(p, s, 1e-12), "");
  if (s.stats.status != SolveStatus::kOptimal) {
    EXPECT_NE(s.stats.detail.find("the time limit of 0.05 s ran out"), std::string::npos)
        << s.stats.detail;
  }
}

TEST(Scheduler, CachesByProblemContent) {
  Scheduler s(Backend("cbc"), Exact());
  SchedulerOptions cached = Exact();
  cached.cache = true;
  Scheduler c(Backend("cbc"), cached);
  const auto& p = Cases()[3];
  const double first = c.Solve(p).makespan_s;
  EXPECT_EQ(c.Solve(p).makespan_s, first);
  EXPECT_EQ(c.CacheHits(), 1);
  EXPECT_EQ(c.CacheMisses(), 1);
  ScheduleProblem changed = p;
  changed.ops[0].single_core_s *= 2;
  c.Solve(changed);
  EXPECT_EQ(c.CacheMisses(), 2);
}

TEST(Scheduler, LowerBoundIsBelowTheOptimumAndBecomesTheSolvedMakespan) {
  // Against the exhaustive oracle on the random DAGs: the cheap bound is a bound; once a problem
  // is solved, the memo answers with the makespan Solve returned.
  SchedulerOptions o = Exact();
  o.cache = true;
  const Scheduler s(Backend("cbc"), o);
  int tight = 0;
  for (std::size_t k = 0; k < 120; ++k) {
    const ScheduleProblem& p = Cases()[k];
    const double bound = s.LowerBound(p);
    EXPECT_LE(bound, Oracle(k) * (1 + 1e-9)) << p.name;
    tight += bound >= Oracle(k) * (1 - 1e-9);
    const double solved = s.Solve(p).makespan_s;
    EXPECT_NEAR(s.LowerBound(p), solved, 1e-12 * solved) << p.name;
  }
  ::testing::Test::RecordProperty("tight_bounds_of_120", tight);
  EXPECT_GT(tight, 0);
}

TEST(ScheduleCache, KeysByContentNotNames) {
  ScheduleProblem a;
  a.num_tc = 2;
  a.num_vc = 1;
  a.ops = {{"gemm", ScheduleClass::kTensor, 2, 1}, {"allreduce", ScheduleClass::kLink, 3, 0}};
  a.edges = {{0, 1}};
  ScheduleProblem b = a;
  b.name = "other";
  b.ops[0].name = "matmul";
  b.ops[1].all_cores_s = 7;  // ignored for link ops
  EXPECT_EQ(ScheduleCache::Key(a), ScheduleCache::Key(b));
  for (auto change : std::vector<std::function<void(ScheduleProblem&)>>{
           [](ScheduleProblem& p) { p.ops[0].single_core_s = 2.5; },
           [](ScheduleProblem& p) { p.ops[0].all_cores_s = 1.5; },
           [](ScheduleProblem& p) { p.ops[0].cls = ScheduleClass::kVector; },
           [](ScheduleProblem& p) { p.num_tc = 3; },
           [](ScheduleProblem& p) { p.edges.clear(); }}) {
    ScheduleProblem c = a;
    change(c);
    EXPECT_NE(ScheduleCache::Key(c), ScheduleCache::Key(a));
  }
}

TEST(ScheduleCache, StaysWithinItsBudgetAndKeepsWhatIsUsed) {
  ScheduleCache cache(64 * 1024);
  ScheduleResult r;
  r.ops.resize(8);
  r.makespan_s = 1;
  cache.Insert("kept", r);
  for (int k = 0; k < 2000; ++k) {
    cache.Insert("key" + std::to_string(k), r);
    cache.InsertBound("bound" + std::to_string(k), k);
    ASSERT_TRUE(cache.Find("kept").has_value()) << k;  // used: moves back to the young half
    ASSERT_LE(cache.Stats().bytes, 64 * 1024) << k;
  }
  const ScheduleCacheStats st = cache.Stats();
  EXPECT_GT(st.evictions, 1000);
  EXPECT_FALSE(cache.Find("key0").has_value());  // not used since: gone
  EXPECT_EQ(cache.FindBound("kept"), 1.0);  // a solved schedule answers for its bound
  EXPECT_EQ(cache.FindBound("bound1999"), 1999.0);
  EXPECT_EQ(cache.Stats().bound_hits, 2);
}

TEST(Scheduler, InvalidProblemsAreNamed) {
  Scheduler s(nullptr);
  ScheduleProblem p;
  p.name = "bad";
  p.num_tc = 1;
  p.num_vc = 0;
  p.ops = {{"gelu", ScheduleClass::kVector, 1, 1}};
  try {
    s.Solve(p);
    FAIL();
  } catch (const InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("op 'gelu' needs a vector core"), std::string::npos);
  }
  p.num_vc = 1;
  p.ops.push_back({"qkv", ScheduleClass::kTensor, 1, 1});
  p.edges = {{0, 1}, {1, 0}};
  EXPECT_THROW(s.Solve(p), InvalidArgumentError);
  p.edges = {};
  p.ops[0].single_core_s = std::nan("");
  EXPECT_THROW(s.Solve(p), InvalidArgumentError);
}

// collective_overlap φ: a collective of T seconds becomes (1 − φ)·T holding every core, followed
// by φ·T on the link; φ = 1 is the template's (collectives beside compute).
TEST(LayerSchedule, CollectiveOverlapSplitsEachCollective) {
  auto& plugins = testing::BuiltPlugins();
  if (!plugins.Has(ComponentKind::kSolverBackend, "cbc")) GTEST_SKIP() << "no cbc backend built";
  const ConfigNode none = ConfigNode::EmptyMap("test", "params");
  const auto estimator = plugins.CreateEstimator("analytic", none);
  const auto strategy = plugins.CreateStrategy("megatron", none);
  GraphOptions unfused;
  unfused.fusion = false;
  const LayerGraph g = SliceLayerGraph(
      *strategy, "megatron",
      BuildLayerGraph(
          LoadModelSpec(std::string(PHAZE_SOURCE_DIR) + "/workloads/megatron-2.5b.yaml"), unfused),
      4, true);
  const UniqueLayer& block = g.unique_layers[1];
  const Network network = Network::Flat(1e10, 1e-6);
  ArchConfig arch = LoadArchConfig("tpuv4");
  auto build = [&](double overlap) {
    arch.collective_overlap = overlap;
    return BuildScheduleProblem(block.backward, Pass::kBackward, *estimator, arch, network, "b");
  };
  const ScheduleProblem beside = build(1), held = build(0), half = build(0.25);
  std::vector<double> links;  // the collectives' times, in order
  double compute = 0;
  for (const auto& op : beside.ops) {
    if (op.cls == ScheduleClass::kLink) {
      links.push_back(op.single_core_s);
    } else {
      compute += op.MinLatency();
    }
  }
  ASSERT_EQ(links.size(), 2u);  // the conjugates of f before QKV and FC1: all-reduces
  // φ = 0: no link op; each collective holds all cores for its whole time, and the fastest way to
  // run it is on all of them; the problem is otherwise the same.
  ASSERT_EQ(held.ops.size(), beside.ops.size());
  double exposed = 0;
  for (const auto& op : held.ops) {
    EXPECT_NE(op.cls, ScheduleClass::kLink) << op.name;
    if (op.name.find(".backward") != std::string::npos &&
        op.name.find("tp_copy") != std::string::npos) {
      EXPECT_EQ(op.cls, ScheduleClass::kFused);
      EXPECT_DOUBLE_EQ(op.single_core_s, op.all_cores_s * (arch.num_tc + arch.num_vc));
      exposed += op.all_cores_s;
    }
  }
  EXPECT_DOUBLE_EQ(exposed, links[0] + links[1]);
  // Nothing overlaps a collective that holds the device: cutting its intervals out of the
  // schedule leaves a schedule of the compute alone (the collectives free), so the optimum is at
  // least the collectives' time plus that problem's optimum; and never shorter than with φ = 1.
  const Scheduler scheduler(Backend("cbc"), Exact());
  const ScheduleProblem free_links = BuildScheduleProblem(
      block.backward, Pass::kBackward, *estimator, arch,
      Network::Flat(std::numeric_limits<double>::infinity()), "free");
  ASSERT_EQ(free_links.ops.size(), beside.ops.size() - 2);
  const double held_s = scheduler.Solve(held).makespan_s;
  EXPECT_GE(held_s, scheduler.Solve(free_links).makespan_s + links[0] + links[1] - 1e-12);
  EXPECT_GE(held_s, scheduler.Solve(beside).makespan_s - 1e-12);
  EXPECT_LE(held_s, compute + links[0] + links[1] + 1e-12);
  // φ = 0.25: one more op per collective, 3/4 of it exposed, then 1/4 on the link after it.
  ASSERT_EQ(half.ops.size(), beside.ops.size() + 2);
  int split = 0;
  for (size_t i = 0; i < half.ops.size(); ++i) {
    if (half.ops[i].cls != ScheduleClass::kLink) continue;
    ASSERT_GT(i, 0u);
    const ScheduleOp& before = half.ops[i - 1];
    EXPECT_EQ(before.name, half.ops[i].name + ".exposed");
    EXPECT_DOUBLE_EQ(before.all_cores_s, 0.75 * links[split]);
    EXPECT_DOUBLE_EQ(half.ops[i].single_core_s, 0.25 * links[split]);
    EXPECT_NE(std::find(half.edges.begin(), half.edges.end(),
                        std::pair<int, int>(static_cast<int>(i) - 1, static_cast<int>(i))),
              half.edges.end());
    ++split;
  }
  EXPECT_EQ(split, 2);
}

// The host's issue time (ArchConfig::host_kernel_s): the host issues every kernel of a pass —
// each op's kernels as its estimate counts them, one per collective — ahead of the device, so the
// pass lasts max(makespan, kernels · host_kernel_s). Counted by hand on the Megatron block's
// forward pass at t = 4: 16 compute ops (ln1, qkv, scores, softmax, dropout, context, dense,
// dense bias, dropout, residual, ln2, fc1, fc2, fc2 bias, dropout, residual) and 2 all-reduces;
// the test's estimator says the scores GEMM launches 3 kernels and the softmax none.
TEST(LayerSchedule, HostIssueTimeBoundsThePass) {
  auto& plugins = testing::BuiltPlugins();
  if (!plugins.Has(ComponentKind::kSolverBackend, "cbc")) GTEST_SKIP() << "no cbc backend built";
  class Kernels : public Estimator {
   public:
    OpEstimate Estimate(const OpWork& op, const ArchConfig&, Pass) const override {
      OpEstimate e{1e-5, 1e-6, std::nullopt};
      if (op.name == "attn.scores") e.kernels = 3;
      if (op.name == "attn.softmax") e.kernels = 0;
      return e;
    }
  } estimator;
  const auto strategy = plugins.CreateStrategy("megatron", ConfigNode::EmptyMap("test", "params"));
  const LayerGraph g = BuildSlicedLayerGraph(
      *strategy, "megatron",
      LoadModelSpec(std::string(PHAZE_SOURCE_DIR) + "/workloads/megatron-2.5b.yaml"),
      GraphOptions{}, 4);
  const UniqueLayer& block = g.unique_layers[1];
  ArchConfig arch = LoadArchConfig("tpuv4");
  const Network network = Network::Flat(1e10, 1e-6);
  const Scheduler scheduler(Backend("cbc"), Exact());
  int compute = 0;
  for (double h : {0.0, 1e-7, 1e-3}) {
    arch.host_kernel_s = h;
    const ScheduleProblem p =
        BuildScheduleProblem(block.forward, Pass::kForward, estimator, arch, network, "f");
    compute = 0;
    for (const auto& op : p.ops) compute += op.cls != ScheduleClass::kLink ? 1 : 0;
    EXPECT_DOUBLE_EQ(p.host_s, (16 - 1 + 3 - 1 + 2) * h);
    const ScheduleResult r = scheduler.Solve(p);
    EXPECT_DOUBLE_EQ(PassSeconds(p, r), std::max(r.makespan_s, p.host_s));
    // 1 ms per kernel dwarfs the device's makespan (µs): host-bound. 0.1 µs: device-bound.
    if (h == 1e-3) {
      EXPECT_DOUBLE_EQ(PassSeconds(p, r), 19e-3);
    }
    if (h == 1e-7) {
      EXPECT_DOUBLE_EQ(PassSeconds(p, r), r.makespan_s);
    }
  }
  EXPECT_EQ(compute, 16);  // the collectives are on the links (φ = 1 on tpuv4)
}

// A device that runs one op at a time (the H100 preset's calibration: concurrent_kernels 0, one
// CUDA stream) gets a problem of one core pair, each op fused at its all-cores time, so a block
// without collectives lasts the sum of its ops' times and the bound proves it at once. The block
// is a 64-expert mixture (top 8, experts of width 1,408): on the 528 tensor cores its expert
// branches left the schedule search a 10-19% gap after seconds per segment. The same estimates
// with `exclusive` cleared keep the cores, the classes and both modes; so does a family that
// mixes a concurrent arch in; collectives stay on the links beside the one pair.
TEST(LayerSchedule, OneOpAtATimeDeviceLastsTheSumOfItsOps) {
  auto& plugins = testing::BuiltPlugins();
  const ConfigNode none = ConfigNode::EmptyMap("test", "params");
  const auto serial = plugins.CreateEstimator("device", none);
  class Concurrent : public Estimator {  // serial's estimates, not exclusive
   public:
    explicit Concurrent(const Estimator& inner) : inner_(inner) {}
    OpEstimate Estimate(const OpWork& op, const ArchConfig& arch, Pass pass) const override {
      OpEstimate e = inner_.Estimate(op, arch, pass);
      e.exclusive = false;
      return e;
    }

   private:
    const Estimator& inner_;
  } unconverted(*serial);
  const bool has_cbc = plugins.Has(ComponentKind::kSolverBackend, "cbc");
  const auto strategy = plugins.CreateStrategy("megatron", none);
  ModelSpec spec = LoadModelSpec(std::string(PHAZE_SOURCE_DIR) + "/workloads/mixtral-8x7b.yaml");
  spec.experts = 64;
  spec.top_k = 8;
  spec.expert_ffn_hidden = 1408;
  spec.sequence_length = 1024;
  const LayerGraph g = BuildSlicedLayerGraph(*strategy, "megatron", spec, GraphOptions{}, 1);
  const ArchConfig arch = LoadArchConfig("h100-sxm-80gb");
  ArchConfig concurrent_arch = arch;
  concurrent_arch.name = "h100-concurrent";
  concurrent_arch.calibration["concurrent_kernels"] = 1;
  const std::vector<ArchConfig> mixed = {arch, concurrent_arch};
  const Network network = Network::Flat(1e11);
  int experts_ops = 0;
  for (const auto& u : g.unique_layers) {
    for (Pass pass : {Pass::kForward, Pass::kBackward}) {
      const std::string name = u.name + "-" + std::string(ToString(pass));
      const OperatorGraph& graph = PassGraph(u, pass);
      const ScheduleProblem p = BuildScheduleProblem(graph, pass, *serial, arch, network, name);
      const ScheduleProblem q =
          BuildScheduleProblem(graph, pass, unconverted, arch, network, name);
      EXPECT_EQ(p.num_tc, 1) << name;
      EXPECT_EQ(p.num_vc, 1) << name;
      EXPECT_EQ(q.num_tc, arch.num_tc) << name;
      EXPECT_EQ(q.num_vc, arch.num_vc) << name;
      ASSERT_EQ(q.ops.size(), p.ops.size()) << name;
      EXPECT_EQ(q.edges, p.edges) << name;
      double sum = 0;
      bool any_single_mode = false;
      for (std::size_t i = 0; i < p.ops.size(); ++i) {
        const ScheduleOp& op = p.ops[i];
        ASSERT_EQ(op.cls, ScheduleClass::kFused) << name << " " << op.name;  // t = 1: no links
        EXPECT_EQ(op.all_cores_s, q.ops[i].all_cores_s) << op.name;  // the time alone, kept
        EXPECT_EQ(op.single_core_s, op.all_cores_s) << op.name;
        any_single_mode = any_single_mode || q.ops[i].cls != ScheduleClass::kFused ||
                          q.ops[i].single_core_s > q.ops[i].all_cores_s;
        sum += op.all_cores_s;
        experts_ops += op.name.find("mlp.expert") != std::string::npos;
      }
      EXPECT_TRUE(any_single_mode) << name;  // the unconverted problem kept its classes and modes
      const ScheduleProblem family =
          BuildScheduleProblem(graph, pass, *serial, std::span(mixed), network, name);
      EXPECT_EQ(family.num_tc, arch.num_tc) << name;
      if (!has_cbc) continue;
      const Scheduler scheduler(Backend("cbc"), Exact());
      const ScheduleResult r = scheduler.Solve(p);
      EXPECT_EQ(CheckSchedule(p, r, 1e-12), "") << name;
      EXPECT_NEAR(r.makespan_s, sum, 1e-12 * sum) << name;
      EXPECT_EQ(r.stats.gap, 0) << name;
      EXPECT_NE(r.stats.path, SchedulePath::kSearch) << name;
      EXPECT_NE(r.stats.path, SchedulePath::kIlp) << name;
    }
  }
  EXPECT_GE(experts_ops, 2 * 64 * 3);  // each expert's gate, up and down at least, both passes

  // t = 2 (a dense block): the tensor-parallel collectives stay link ops beside the one pair, so
  // the pass lasts at least its compute one op at a time and at most that plus every link.
  const LayerGraph dense = BuildSlicedLayerGraph(
      *strategy, "megatron",
      LoadModelSpec(std::string(PHAZE_SOURCE_DIR) + "/workloads/megatron-2.5b.yaml"),
      GraphOptions{}, 2);
  for (Pass pass : {Pass::kForward, Pass::kBackward}) {
    const ScheduleProblem p = BuildScheduleProblem(PassGraph(dense.unique_layers[1], pass), pass,
                                                   *serial, arch, network, "dense");
    EXPECT_EQ(p.num_tc, 1);
    double compute = 0, links = 0;
    for (const ScheduleOp& op : p.ops) {
      if (op.cls == ScheduleClass::kLink) {
        links += op.single_core_s;
      } else {
        EXPECT_EQ(op.cls, ScheduleClass::kFused) << op.name;
        compute += op.all_cores_s;
      }
    }
    EXPECT_GT(links, 0);
    if (!has_cbc) continue;
    const ScheduleResult r = Scheduler(Backend("cbc"), Exact()).Solve(p);
    EXPECT_EQ(CheckSchedule(p, r, 1e-12), "");
    EXPECT_GE(r.makespan_s, compute * (1 - 1e-12));
    EXPECT_LE(r.makespan_s, (compute + links) * (1 + 1e-12));
  }
}

// A family's problem in one walk of the graph is each member's problem relaxed into the first
// (RelaxInto), op for op and bit for bit; archs that disagree on collective_overlap take that path
// themselves, and a split that changes the ops is refused as RelaxInto refuses it.
TEST(LayerSchedule, ProblemOverArchsIsTheirRelaxation) {
  auto& plugins = testing::BuiltPlugins();
  const ConfigNode none = ConfigNode::EmptyMap("test", "params");
  const auto estimator = plugins.CreateEstimator("device", none);
  const auto strategy = plugins.CreateStrategy("megatron", none);
  const LayerGraph g = BuildSlicedLayerGraph(
      *strategy, "megatron",
      LoadModelSpec(std::string(PHAZE_SOURCE_DIR) + "/workloads/megatron-2.5b.yaml"),
      GraphOptions{}, 4);
  const UniqueLayer& block = g.unique_layers[1];
  const Network network = Network::Flat(1e10, 1e-6);
  std::vector<ArchConfig> archs(3, LoadArchConfig("tpuv4"));
  archs[1].num_vc *= 4;  // faster vector ops, more cores
  archs[1].host_kernel_s = archs[0].host_kernel_s / 2;
  archs[2].num_tc *= 2;
  archs[2].glb_bytes /= 8;
  archs[2].host_kernel_s = archs[0].host_kernel_s * 2;
  for (auto& a : archs) a.name = "a" + std::to_string(&a - archs.data());
  auto relaxed = [&](const std::vector<ArchConfig>& family, Pass pass) {
    ScheduleProblem p = BuildScheduleProblem(PassGraph(block, pass), pass, *estimator,
                                             family.front(), network, "p");
    for (std::size_t a = 1; a < family.size(); ++a) {
      EXPECT_TRUE(RelaxInto(p, BuildScheduleProblem(PassGraph(block, pass), pass, *estimator,
                                                    family[a], network, "p")));
    }
    return p;
  };
  auto expect_same = [](const ScheduleProblem& a, const ScheduleProblem& b) {
    ASSERT_EQ(a.ops.size(), b.ops.size());
    for (std::size_t i = 0; i < a.ops.size(); ++i) {
      EXPECT_EQ(a.ops[i].name, b.ops[i].name);
      EXPECT_EQ(a.ops[i].cls, b.ops[i].cls);
      EXPECT_EQ(a.ops[i].single_core_s, b.ops[i].single_core_s) << a.ops[i].name;
      EXPECT_EQ(a.ops[i].all_cores_s, b.ops[i].all_cores_s) << a.ops[i].name;
    }
    EXPECT_EQ(a.edges, b.edges);
    EXPECT_EQ(a.num_tc, b.num_tc);
    EXPECT_EQ(a.num_vc, b.num_vc);
    EXPECT_EQ(a.host_s, b.host_s);
    EXPECT_EQ(a.energy.TotalJ(), b.energy.TotalJ());  // the first arch's
  };
  for (double overlap : {1.0, 0.25}) {  // collectives on the links; partly holding the device
    for (auto& a : archs) a.collective_overlap = overlap;
    for (Pass pass : {Pass::kForward, Pass::kBackward}) {
      const ScheduleProblem one = BuildScheduleProblem(PassGraph(block, pass), pass, *estimator,
                                                       std::span(archs), network, "p");
      expect_same(one, relaxed(archs, pass));
      // The other archs' cores count: on all cores, the relaxation is faster than the first arch.
      const ScheduleProblem first = relaxed({archs[0]}, pass);
      EXPECT_EQ(one.num_vc, archs[1].num_vc);
      EXPECT_EQ(one.num_tc, archs[2].num_tc);
      EXPECT_EQ(one.host_s, std::min(first.host_s, one.host_s));
      double saved = 0;
      for (std::size_t i = 0; i < one.ops.size(); ++i) {
        saved += first.ops[i].all_cores_s - one.ops[i].all_cores_s;
      }
      EXPECT_GT(saved, 0);
    }
  }
  // Archs that disagree: 0.25 and 0.5 split the same way (built one by one, same answer); 0 and
  // 1 do not (a link op against none).
  archs[1].collective_overlap = 0.5;
  expect_same(BuildScheduleProblem(block.backward, Pass::kBackward, *estimator, std::span(archs),
                                   network, "p"),
              relaxed(archs, Pass::kBackward));
  archs[0].collective_overlap = 0;
  archs[1].collective_overlap = 1;
  try {
    BuildScheduleProblem(block.backward, Pass::kBackward, *estimator, std::span(archs), network,
                         "p");
    ADD_FAILURE() << "archs whose collectives split differently were relaxed";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("architectures 'a0' and 'a1' give its backward pass "
                                         "different ops"),
              std::string::npos)
        << e.what();
  }
}

// ---- Every layer of the paper's eight models (b = 1; t = 1 and 2) on tpuv4: the schedule is
// valid, never longer than sequential (intra-op on every op, one at a time — the paper's
// observation), never shorter than the lower bound; repeated blocks solve once. ----
TEST(SchedulerOnModels, EveryLayerOfTheEightModelsSchedules) {
  auto& plugins = testing::BuiltPlugins();
  if (!plugins.Has(ComponentKind::kSolverBackend, "cbc")) GTEST_SKIP() << "no cbc backend built";
  const ConfigNode none = ConfigNode::EmptyMap("test", "params");
  const auto estimator = plugins.CreateEstimator("analytic", none);
  const auto strategy = plugins.CreateStrategy("megatron", none);
  const ArchConfig arch = LoadArchConfig("tpuv4");
  SchedulerOptions options;
  options.solve.time_limit_s = 0.5;
  const Scheduler scheduler(Backend("cbc"), options);
  int layers = 0;
  for (const char* model : {"opt-350m", "bert-large", "gpt2-xl", "llama2-7b", "megatron-bert",
                            "megatron-2.5b", "megatron-8.3b", "megatron-gpt3-175b"}) {
    const ModelSpec spec =
        LoadModelSpec(std::string(PHAZE_SOURCE_DIR) + "/workloads/" + model + ".yaml");
    GraphOptions o;
    o.fusion = false;
    const LayerGraph full = BuildLayerGraph(spec, o);
    for (std::int64_t w : SupportedWidths(*strategy, full, {1, 2})) {
      const LayerGraph g = SliceLayerGraph(*strategy, "megatron", full, w, true);
      for (const auto& u : g.unique_layers) {
        for (Pass pass : {Pass::kForward, Pass::kBackward}) {
          const ScheduleProblem p = BuildScheduleProblem(PassGraph(u, pass), pass, *estimator, arch,
                                                         Network::Flat(4294967296.0), model + u.name);
          const ScheduleResult r = scheduler.Solve(p);
          const Precedence prec(p);
          EXPECT_EQ(CheckSchedule(p, r, 1e-12), "") << p.name;
          EXPECT_LE(r.makespan_s, p.SequentialMakespan() * (1 + 1e-12)) << p.name;
          EXPECT_GE(r.makespan_s, MakespanLowerBound(p, prec) * (1 - 1e-12)) << p.name;
          EXPECT_GE(r.makespan_s, r.stats.lower_bound_s * (1 - 1e-12)) << p.name;
          ++layers;
        }
      }
    }
  }
  EXPECT_EQ(layers, (8 + 7) * 3 * 2);  // GPT-2 XL's 25 heads do not split two ways
}
}  // namespace
}  // namespace phaze
