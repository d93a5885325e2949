#include "phaze/ilp/solver_backend.hpp"

#include <chrono>
#include <cmath>

namespace phaze {

std::string_view SolveStatusName(SolveStatus status) {
  switch (status) {
    case SolveStatus::kOptimal: return "optimal";
    case SolveStatus::kFeasible: return "feasible";
    case SolveStatus::kInfeasible: return "infeasible";
    case SolveStatus::kUnbounded: return "unbounded";
    case SolveStatus::kNoSolutionAtLimit: return "no_solution_at_limit";
    case SolveStatus::kError: return "error";
  }
  return "error";
}

std::string SolveOptions::Validate(int num_variables) const {
  if (std::isnan(time_limit_s) || time_limit_s <= 0) return "time_limit_s must be > 0";
  if (!(relative_gap >= 0) || !std::isfinite(relative_gap)) return "relative_gap must be >= 0";
  if (!(absolute_gap >= 0) || !std::isfinite(absolute_gap)) return "absolute_gap must be >= 0";
  if (threads < 1) return "threads must be >= 1";
  if (node_limit < 0) return "node_limit must be >= 0";
  if (!warm_start.empty() && static_cast<int>(warm_start.size()) != num_variables) {
    return "warm_start has " + std::to_string(warm_start.size()) + " values for " +
           std::to_string(num_variables) + " variables";
  }
  if (objective_cutoff && !std::isfinite(*objective_cutoff)) return "objective_cutoff must be finite";
  return "";
}

double SolveResult::Gap() const {
  if (!HasSolution()) return kInfinity;
  if (status == SolveStatus::kOptimal) return 0.0;
  double diff = std::fabs(objective - best_bound);
  return diff / std::max(1e-10, std::fabs(objective));
}

SolveResult SolverBackend::Solve(const IlpModel& model, const SolveOptions& options) const {
  if (std::string err = options.Validate(model.NumVariables()); !err.empty()) {
    SolveResult r;
    r.status = SolveStatus::kError;
    r.detail = "invalid options: " + err;
    return r;
  }
  if (auto trivial = SolveWithoutSolver(model)) return *trivial;
  const auto start = std::chrono::steady_clock::now();
  const double sign = model.Sense() == ObjectiveSense::kMaximize ? -1.0 : 1.0;
  const double offset = model.ObjectiveOffset();
  std::vector<double> costs(static_cast<std::size_t>(model.NumVariables()));
  for (int j = 0; j < model.NumVariables(); ++j) costs[j] = sign * model.Variable(j).objective;
  SolveOptions native = options;
  if (native.objective_cutoff) native.objective_cutoff = sign * (*options.objective_cutoff - offset);

  MinimisationResult m = SolveMinimisation(model, costs, native);
  SolveResult r;
  r.status = m.status;
  r.nodes = m.nodes;
  r.detail = std::move(m.detail);
  if (r.HasSolution()) {
    r.values = std::move(m.values);
    r.objective = sign * m.objective + offset;
    r.best_bound = r.status == SolveStatus::kOptimal ? r.objective
                   : std::isfinite(m.best_bound)     ? sign * m.best_bound + offset
                                                     : sign * -kInfinity;
  }
  r.solve_time_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

std::optional<SolveResult> SolveWithoutSolver(const IlpModel& model) {
  if (model.NumVariables() != 0) return std::nullopt;
  SolveResult r;
  r.detail = "no variables: solved without calling the solver";
  for (int i = 0; i < model.NumRows(); ++i) {
    auto row = model.Row(i);
    if (row.lower > 0 || row.upper < 0) {
      r.status = SolveStatus::kInfeasible;
      r.detail += "; row '" + row.name + "' excludes 0";
      return r;
    }
  }
  r.status = SolveStatus::kOptimal;
  r.objective = r.best_bound = model.ObjectiveOffset();
  return r;
}

}  // namespace phaze
