#include "phaze/schedule/scheduler.hpp"

#include <fmt/printf.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <optional>
#include <set>

#include "paper_ilp.hpp"
#include "phaze/core/error.hpp"
#include "phaze/ilp/model_writer.hpp"
#include "phaze/schedule/list_schedule.hpp"

namespace phaze {

using paper_ilp::BuildIlp;
using paper_ilp::Fixed;
using paper_ilp::IlpBuild;
using paper_ilp::Replay;
using paper_ilp::ReplaySolution;

namespace {

constexpr double kRelativeTolerance = 1e-9;
constexpr int kSearchModeBranchings = 20000;  // the mode bound's budget when it runs the search
constexpr int kBoundBranchings = 16;  // the mode bound's budget in LowerBound
// A segment whose list schedule is within this many requested gaps of the bound tries the ILP
// before the schedule search (SolveSegment).
constexpr double kIlpFirstGaps = 1.5;

bool HasIncomparablePair(const ScheduleProblem& p, const Precedence& prec) {
  const int n = static_cast<int>(p.ops.size());
  for (int i = 0; i < n; ++i) {
    for (int j = i + 1; j < n; ++j) {
      if (!prec.Comparable(i, j)) return true;
    }
  }
  return false;
}

int StatusRank(SolveStatus status) {
  if (status == SolveStatus::kOptimal) return 0;
  if (status == SolveStatus::kFeasible) return 1;
  return 2;
}

// A schedule kept when a budget (ops or time) ends the segment's work: valid, with its lower
// bound and gap, status "feasible" and `why` in the detail.
ScheduleResult KeptAtBudget(ScheduleResult r, double lower_bound, std::string why) {
  r.stats.path = SchedulePath::kListSchedule;
  r.stats.status = SolveStatus::kFeasible;
  r.stats.segments = 1;
  r.stats.detail = std::move(why);
  r.stats.lower_bound_s = std::min(lower_bound, r.makespan_s);
  r.stats.gap = r.makespan_s > 0 ? (r.makespan_s - r.stats.lower_bound_s) / r.makespan_s : 0;
  return r;
}

}  // namespace

Scheduler::Scheduler(std::shared_ptr<const SolverBackend> backend, SchedulerOptions options)
    : backend_(std::move(backend)),
      options_(std::move(options)),
      cache_(std::make_shared<ScheduleCache>(options_.cache_bytes)) {}

std::int64_t Scheduler::CacheHits() const { return cache_->Stats().hits; }

std::int64_t Scheduler::CacheMisses() const { return cache_->Stats().misses; }

ScheduleCacheStats Scheduler::CacheStats() const { return cache_->Stats(); }

IlpModel Scheduler::BuildModel(const ScheduleProblem& problem, bool tensor_z, bool vector_z,
                               double* scale) const {
  if (std::string e = problem.Validate(); !e.empty()) {
    throw InvalidArgumentError("schedule problem '" + problem.name + "': " + e);
  }
  const Precedence prec(problem);
  const ScheduleResult heuristic = HeuristicSchedule(problem, prec);
  IlpBuild b = BuildIlp(problem, prec, options_, tensor_z, vector_z, &heuristic);
  if (scale) *scale = b.scale;
  return std::move(b.model);
}

namespace {

// A problem split for solving: the ops of each segment (in the problem's numbering) and the
// segment as a problem of its own.
struct SegmentSplit {
  std::vector<std::vector<int>> members;
  std::vector<ScheduleProblem> problems;
};

// Segments: the ops between consecutive articulation ops (comparable to every other op), each a
// problem of its own whose core counts are clamped to the ops that could use them; one segment
// of all ops without presolve. Linear in ops and edges (a 100k-op chain has 100k segments): only
// the order and the articulation ops are needed here, the closure is built per segment.
SegmentSplit SplitIntoSegments(const ScheduleProblem& problem, bool presolve) {
  const Precedence prec(problem, Precedence::Closure::kNone);
  const int n = static_cast<int>(problem.ops.size());
  SegmentSplit split;
  auto& segments = split.members;
  if (presolve) {
    std::vector<bool> is_articulation(static_cast<std::size_t>(n), false);
    for (int i : prec.ArticulationOps()) is_articulation[static_cast<std::size_t>(i)] = true;
    std::vector<int> current;
    for (int i : prec.Order()) {
      if (is_articulation[static_cast<std::size_t>(i)]) {
        if (!current.empty()) segments.push_back(std::move(current));
        current.clear();
        segments.push_back({i});
      } else {
        current.push_back(i);
      }
    }
    if (!current.empty()) segments.push_back(std::move(current));
  } else if (n > 0) {
    segments.push_back(prec.Order());
  }
  // Each op's segment and index in it, and each segment's edges.
  std::vector<int> segment_of(static_cast<std::size_t>(n), -1), local(static_cast<std::size_t>(n), -1);
  for (std::size_t k = 0; k < segments.size(); ++k) {
    for (std::size_t m = 0; m < segments[k].size(); ++m) {
      segment_of[static_cast<std::size_t>(segments[k][m])] = static_cast<int>(k);
      local[static_cast<std::size_t>(segments[k][m])] = static_cast<int>(m);
    }
  }
  split.problems.resize(segments.size());
  for (const auto& [from, to] : problem.edges) {
    const int k = segment_of[static_cast<std::size_t>(from)];
    if (k == segment_of[static_cast<std::size_t>(to)]) {
      split.problems[static_cast<std::size_t>(k)].edges.emplace_back(
          local[static_cast<std::size_t>(from)], local[static_cast<std::size_t>(to)]);
    }
  }
  for (std::size_t k = 0; k < segments.size(); ++k) {
    ScheduleProblem& sub = split.problems[k];
    sub.name = problem.name + (segments.size() > 1 ? "-seg" + std::to_string(k) : "");
    int tensor_ops = 0, vector_ops = 0;
    for (int i : segments[k]) {
      sub.ops.push_back(problem.ops[i]);
      tensor_ops += problem.ops[i].UsesTensorCore();
      vector_ops += problem.ops[i].UsesVectorCore();
    }
    // Cores beyond the number of ops that could use them never matter: at most that many run at
    // once, and fused ops still find min(tensor_ops, vector_ops) pairs. Exact, and it keeps the
    // heuristics and the ILP small on a 4096-core architecture (and makes segments of configs
    // that differ only in core counts the same problem for the cache). Intra-op ops get every
    // real core back when the schedule is assembled.
    sub.num_tc = std::max(1, std::min(problem.num_tc, tensor_ops));
    sub.num_vc = std::max(1, std::min(problem.num_vc, vector_ops));
  }
  return split;
}

}  // namespace

ScheduleResult Scheduler::Solve(const ScheduleProblem& problem) const {
  if (std::string e = problem.Validate(); !e.empty()) {
    throw InvalidArgumentError("schedule problem '" + problem.name + "': " + e);
  }
  const SegmentSplit split = SplitIntoSegments(problem, options_.presolve);
  const int n = static_cast<int>(problem.ops.size());
  ScheduleResult result;
  result.ops.resize(static_cast<std::size_t>(n));
  result.stats.segments = static_cast<int>(split.problems.size());
  double offset = 0, bound = 0;
  for (std::size_t k = 0; k < split.problems.size(); ++k) {
    const auto& members = split.members[k];
    const ScheduleProblem& sub = split.problems[k];
    std::optional<ScheduleResult> cached;
    std::string key;
    if (options_.cache) {
      key = ScheduleCache::Key(sub);
      cached = cache_->Find(key);
    }
    if (!cached) {
      cached = SolveSegment(sub, static_cast<int>(k));
      if (options_.cache) cache_->Insert(key, *cached);
    }
    const ScheduleResult& r = *cached;
    for (std::size_t m = 0; m < members.size(); ++m) {
      ScheduledOp s = r.ops[m];
      s.start_s += offset;
      if (s.intra_op) {
        if (!s.tensor_cores.empty()) s.tensor_cores = AllCores(problem.num_tc);
        if (!s.vector_cores.empty()) s.vector_cores = AllCores(problem.num_vc);
      }
      result.ops[static_cast<std::size_t>(members[m])] = std::move(s);
    }
    offset += r.makespan_s;
    bound += r.stats.lower_bound_s;
    ScheduleStats& st = result.stats;
    st.path = std::max(st.path, r.stats.path);  // the strongest path (enum order)
    if (StatusRank(r.stats.status) > StatusRank(st.status)) st.status = r.stats.status;
    st.solve_time_s += r.stats.solve_time_s;
    st.solves += r.stats.solves;
    st.resolves += r.stats.resolves;
    st.fast_path_segments += r.stats.path != SchedulePath::kIlp;
    st.variables = std::max(st.variables, r.stats.variables);
    st.rows = std::max(st.rows, r.stats.rows);
    if (!r.stats.detail.empty()) st.detail += (st.detail.empty() ? "" : "; ") + r.stats.detail;
  }
  result.makespan_s = offset;
  result.stats.lower_bound_s = std::min(bound, offset);
  result.stats.gap = offset > 0 ? (offset - result.stats.lower_bound_s) / offset : 0;
  if (result.stats.gap < kRelativeTolerance) result.stats.gap = 0;  // rounding, not a gap
  return result;
}

double Scheduler::LowerBound(const ScheduleProblem& problem) const {
  if (std::string e = problem.Validate(); !e.empty()) {
    throw InvalidArgumentError("schedule problem '" + problem.name + "': " + e);
  }
  const SegmentSplit split = SplitIntoSegments(problem, options_.presolve);
  double bound = 0;
  for (const ScheduleProblem& sub : split.problems) {
    std::string key;
    if (options_.cache) {
      key = ScheduleCache::Key(sub);
      if (const auto cached = cache_->FindBound(key)) {
        bound += *cached;
        continue;
      }
    }
    // The mode bound with a few branchings (the scheduler's own bound takes 2,000): near-linear,
    // exact on chains, and within a few percent on the transformer layers' segments.
    const Precedence order_only(sub, Precedence::Closure::kNone);
    const double b = MakespanLowerBound(sub, order_only, kInfinity, kBoundBranchings);
    if (options_.cache) cache_->InsertBound(key, b);
    bound += b;
  }
  return bound;
}

ScheduleResult Scheduler::SolveSegment(const ScheduleProblem& segment, int index) const {
  if (segment.ops.empty()) return {};
  if (options_.max_exact_ops > 0 && static_cast<int>(segment.ops.size()) > options_.max_exact_ops) {
    // Over the budget: the closure (n² bits), the back-filling list schedules, the local search
    // and the ILP all grow quadratically or worse with the ops. Appending list schedules and a
    // bound with few mode branchings stay near-linear.
    const Precedence order_only(segment, Precedence::Closure::kNone);
    ScheduleResult r = HeuristicSchedule(segment, order_only, /*thorough=*/false);
    const double bound = MakespanLowerBound(segment, order_only, r.makespan_s, /*max_nodes=*/16);
    return KeptAtBudget(std::move(r), bound,
                        std::to_string(segment.ops.size()) + " ops in one segment, over the budget of " +
                            std::to_string(options_.max_exact_ops) +
                            " (solver.max_exact_ops) for exact scheduling: an appending list "
                            "schedule and a lower bound");
  }
  const Precedence prec(segment);
  ScheduleResult heuristic = HeuristicSchedule(segment, prec);
  double lower_bound = MakespanLowerBound(segment, prec, heuristic.makespan_s);
  heuristic.stats.segments = 1;
  if (options_.fast_paths) {
    const double tol = kRelativeTolerance * segment.SerialMakespan();
    if (!HasIncomparablePair(segment, prec)) {
      heuristic.stats.path = SchedulePath::kChain;
      heuristic.stats.lower_bound_s = heuristic.makespan_s;
      return heuristic;
    }
    if (heuristic.makespan_s <= lower_bound + tol) {
      heuristic.stats.path = SchedulePath::kListSchedule;
      heuristic.stats.lower_bound_s = heuristic.makespan_s;
      return heuristic;
    }
  }
  // A segment whose time limit runs out keeps its best schedule so far and its bound, and says so.
  auto stop_here = [&](const std::string& why) {
    return KeptAtBudget(std::move(heuristic), lower_bound, why);
  };
  const Deadline deadline = Deadline::In(options_.solve.time_limit_s);
  std::string limit = fmt::sprintf("%g", options_.solve.time_limit_s);
  const std::string out_of_time = std::string("the time limit of ") + limit + " s ran out before the ";
  const double gap = options_.solve.relative_gap;
  if (options_.improvement_evaluations > 0) {
    // Independent rounds of local search from the list schedule, each with its own seed, while a
    // round still finds a better schedule than the rounds before and the best is not yet within
    // the requested gap of the bound.
    const double good_enough = gap < 1 ? lower_bound / (1 - gap) : kInfinity;
    const ScheduleResult list = heuristic;
    for (int round = 0; round < options_.improvement_rounds; ++round) {
      bool stopped = false;
      ScheduleResult r = ImproveSchedule(segment, prec, list, options_.improvement_evaluations,
                                         good_enough, round, deadline, &stopped);
      if (round > 0 && r.makespan_s >= heuristic.makespan_s) break;
      heuristic = std::move(r);
      if (heuristic.makespan_s <= good_enough || stopped) break;
    }
    heuristic.stats.path = SchedulePath::kListSchedule;
    if (options_.fast_paths &&
        heuristic.makespan_s <= lower_bound + kRelativeTolerance * segment.SerialMakespan()) {
      heuristic.stats.lower_bound_s = heuristic.makespan_s;
      return heuristic;
    }
  }
  SchedulePath proven_by = SchedulePath::kListSchedule;
  const bool within_gap = heuristic.makespan_s - lower_bound <= gap * heuristic.makespan_s;
  if (deadline.Passed() && !within_gap) return stop_here(out_of_time + "schedule search");
  // The answer of the ILP tried first (below) while the heuristic is still the one it started
  // from: the same model solved again would give it again.
  std::optional<ScheduleResult> ilp_first;
  if (options_.fast_paths && options_.search_nodes > 0 && backend_ && !within_gap &&
      heuristic.makespan_s - lower_bound <= kIlpFirstGaps * gap * heuristic.makespan_s) {
    // Close to the gap: the ILP first. On the transformer layers' segments the schedule search
    // spends its whole budget on the last tenths of a percent of such a gap and then hands over
    // to the ILP anyway, which closes it at once (2026-11-29, default.yaml: 28 of the 44
    // segments within 1.5 gaps went search, then ILP — 0.30 s of search and 0.06 s of ILP each
    // on average, every ILP proving the gap). An ILP that leaves the gap open hands on its
    // schedule if shorter and its bound; the search then runs as before, and the ILP again only
    // if the search changed the schedule it starts from.
    ScheduleResult ilp = SolveIlp(segment, prec, heuristic, lower_bound, index, deadline);
    if (ilp.stats.gap <= gap) return ilp;
    lower_bound = std::max(lower_bound, ilp.stats.lower_bound_s);  // ≤ its makespan ≤ heuristic's
    if (ilp.makespan_s < heuristic.makespan_s) {
      heuristic.ops = std::move(ilp.ops);
      heuristic.makespan_s = ilp.makespan_s;
    } else {
      ilp_first = std::move(ilp);
    }
    if (deadline.Passed()) return stop_here(out_of_time + "schedule search");
  }
  if (options_.fast_paths && options_.search_nodes > 0 && !within_gap) {
    // Search the schedules under the choices of modes the bound cannot rule out: it proves the
    // gap the bound alone cannot (a packing loss) or finds a shorter schedule.
    LowerBoundOptions search;
    search.upper = heuristic.makespan_s;
    search.max_nodes = kSearchModeBranchings;
    search.enough = heuristic.makespan_s * (1 - gap + 1e-9);  // a hair more: no rounding doubt
    search.search_nodes = options_.search_nodes;
    ScheduleResult better;
    const double searched = MakespanLowerBound(segment, prec, search, &better);
    if (!better.ops.empty()) {
      better.stats = heuristic.stats;
      heuristic = std::move(better);
      ilp_first.reset();
    }
    lower_bound = std::max(lower_bound, std::min(searched, heuristic.makespan_s));
    proven_by = SchedulePath::kSearch;
  }
  // Within the requested relative gap of the bound: what the solver would stop at.
  if (options_.fast_paths && heuristic.makespan_s - lower_bound <= gap * heuristic.makespan_s) {
    heuristic.stats.path = proven_by;
    heuristic.stats.lower_bound_s = lower_bound;
    heuristic.stats.gap = (heuristic.makespan_s - lower_bound) / heuristic.makespan_s;
    return heuristic;
  }
  if (!backend_) {
    throw Error("schedule problem '" + segment.name +
                "' needs the ILP, but the scheduler has no solver backend");
  }
  if (deadline.Passed()) return stop_here(out_of_time + "ILP");
  if (ilp_first) {  // its answer, with the bound the search may have raised
    ScheduleStats& st = ilp_first->stats;
    st.lower_bound_s = std::min(std::max(st.lower_bound_s, lower_bound), ilp_first->makespan_s);
    st.gap = ilp_first->makespan_s > 0
                 ? (ilp_first->makespan_s - st.lower_bound_s) / ilp_first->makespan_s
                 : 0;
    return std::move(*ilp_first);
  }
  return SolveIlp(segment, prec, std::move(heuristic), lower_bound, index, deadline);
}

ScheduleResult Scheduler::SolveIlp(const ScheduleProblem& seg, const Precedence& prec,
                                   ScheduleResult heuristic, double lower_bound, int index,
                                   const Deadline& deadline) const {
  ScheduleStats stats;
  stats.path = SchedulePath::kIlp;
  stats.segments = 1;
  auto fallback = [&](SolveStatus status, const std::string& why) {
    // No usable ILP answer: keep the heuristic schedule (always valid) and say why.
    ScheduleResult r = std::move(heuristic);
    stats.status = status;
    stats.detail = backend_->Name() + ": " + why;
    stats.lower_bound_s = lower_bound;
    stats.gap = r.makespan_s > 0 ? (r.makespan_s - lower_bound) / r.makespan_s : 0;
    r.stats = stats;
    return r;
  };
  bool tensor_z = false, vector_z = false, use_heuristic = true;
  for (int attempt = 0; attempt < 4; ++attempt) {
    if (attempt > 0 && deadline.Passed()) {
      return fallback(SolveStatus::kFeasible, "the time limit ran out before the ILP could be solved again "
                                  "with core-assignment rows; the heuristic schedule is kept");
    }
    const IlpBuild b =
        BuildIlp(seg, prec, options_, tensor_z, vector_z, use_heuristic ? &heuristic : nullptr);
    if (options_.max_ilp_variables > 0 && b.model.NumVariables() > options_.max_ilp_variables) {
      stats.variables = std::max(stats.variables, b.model.NumVariables());
      return fallback(SolveStatus::kFeasible,
                      std::to_string(b.model.NumVariables()) + " variables, over the budget of " +
                          std::to_string(options_.max_ilp_variables) +
                          " (solver.max_ilp_variables): not solved; the schedule and bound so far "
                          "are kept");
    }
    if (!options_.dump_dir.empty()) {
      std::filesystem::create_directories(options_.dump_dir);
      std::string file = seg.name.empty() ? "schedule-seg" + std::to_string(index) : seg.name;
      for (char& c : file) {
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_') c = '_';
      }
      WriteModel(b.model,
                 options_.dump_dir + "/" + file + "-solve" + std::to_string(attempt) + ".lp");
    }
    SolveOptions solve = options_.solve;
    solve.warm_start = b.start;
    // The time limit is for the whole segment (local search and schedule search included):
    // the ILP and its re-solves get what is left.
    solve.time_limit_s = std::max(0.1, deadline.RemainingS());
    const SolveResult res = backend_->Solve(b.model, solve);
    ++stats.solves;
    stats.solve_time_s += res.solve_time_s;
    stats.variables = std::max(stats.variables, b.model.NumVariables());
    stats.rows = std::max(stats.rows, b.model.NumRows());
    if (res.status == SolveStatus::kInfeasible && use_heuristic && options_.heuristic_start) {
      // The heuristic schedule satisfies this model, so "infeasible" is the solver's numerics:
      // solve again without the heuristic's bounds.
      use_heuristic = false;
      continue;
    }
    if (!res.HasSolution()) {
      // A limit before the ILP found a solution: the heuristic schedule stands, feasible — as
      // a backend given it as a warm start (CBC) reports it; lp_solve takes none, and said
      // no_solution_at_limit of the same schedule.
      if (res.status == SolveStatus::kNoSolutionAtLimit) {
        return fallback(SolveStatus::kFeasible,
                        res.detail +
                            ": no better schedule within the limit; the heuristic "
                            "schedule is kept");
      }
      return fallback(res.status, res.detail);
    }
    Replay replay = ReplaySolution(seg, prec, b, res.values, tensor_z, vector_z);
    if (!replay.tensor_oversubscribed && !replay.vector_oversubscribed) {
      const double tol = kRelativeTolerance * seg.SerialMakespan();
      if (std::string e = CheckSchedule(seg, replay.schedule, tol); !e.empty()) {
        return fallback(res.status,
                        res.detail + " (inconsistent solution: " + e + ")");
      }
      ScheduleResult r = replay.schedule.makespan_s <= heuristic.makespan_s
                             ? std::move(replay.schedule)
                             : std::move(heuristic);
      stats.status = res.status;
      if (res.status != SolveStatus::kOptimal) stats.detail = backend_->Name() + ": " + res.detail;
      double bound = lower_bound;
      if (std::isfinite(res.best_bound)) bound = std::max(bound, res.best_bound / b.scale);
      stats.lower_bound_s = std::min(bound, r.makespan_s);
      stats.gap = r.makespan_s > 0 ? (r.makespan_s - stats.lower_bound_s) / r.makespan_s : 0;
      r.stats = stats;
      return r;
    }
    const bool more =
        (replay.tensor_oversubscribed && !tensor_z) || (replay.vector_oversubscribed && !vector_z);
    if (!more) break;
    ++stats.resolves;
    tensor_z |= replay.tensor_oversubscribed;
    vector_z |= replay.vector_oversubscribed;
  }
  return fallback(SolveStatus::kError,
                  "the ILP schedule oversubscribes cores even with core-assignment rows "
                  "(numerical trouble in the solver?)");
}

}  // namespace phaze
