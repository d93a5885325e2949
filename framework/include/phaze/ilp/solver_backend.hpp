// The interface every ILP solver backend plugin implements (CBC, lp_solve, …), with its options and
// result. The call either returns a SolveResult — infeasible and unbounded are results, not
// exceptions — or throws phaze::Error for misuse (a malformed model). Status names are part of the
// JSON output; the enum is only ever appended to.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "phaze/ilp/ilp_model.hpp"

namespace phaze {

enum class SolveStatus {
  kOptimal,             // proven optimal within the gap tolerances
  kFeasible,            // a limit was hit with an incumbent: `objective` is valid, `best_bound` too
  kInfeasible,          // proven infeasible
  kUnbounded,           // proven unbounded (or infeasible-or-unbounded where the solver can't tell)
  kNoSolutionAtLimit,   // a limit was hit before any feasible solution was found
  kError,               // the solver failed; `detail` says how
};

// "optimal", "feasible", "infeasible", "unbounded", "no_solution_at_limit", "error".
std::string_view SolveStatusName(SolveStatus status);

struct SolveOptions {
  double time_limit_s = kInfinity;  // wall-clock limit; infinity = none
  // Branch-and-bound node limit; 0 = none. Unlike a time limit it stops at the same point on every
  // run and machine, so results are reproducible (the search uses it).
  std::int64_t node_limit = 0;
  double relative_gap = 1e-4;       // stop when |incumbent − bound| ≤ gap·|incumbent|
  double absolute_gap = 0.0;        // … or ≤ this
  int threads = 1;                  // where the backend supports it
  bool verbose = false;             // false: nothing on stdout/stderr
  // Optional complete starting solution (one value per variable); backends that accept MIP starts
  // use it, others ignore it. Must have NumVariables() entries when non-empty.
  std::vector<double> warm_start;
  // Optional objective cutoff: solutions worse than this are not wanted (a known upper bound for
  // minimisation, lower bound for maximisation).
  std::optional<double> objective_cutoff;

  // Empty string when valid, else what is wrong (Ceres-style IsValid).
  std::string Validate(int num_variables) const;
};

struct SolveResult {
  SolveStatus status = SolveStatus::kError;
  double objective = 0.0;       // offset included; valid when HasSolution()
  double best_bound = 0.0;      // proven bound on the optimum (= objective when optimal)
  std::vector<double> values;   // one per variable when HasSolution()
  double solve_time_s = 0.0;
  std::int64_t nodes = 0;       // branch-and-bound nodes, where reported
  std::string detail;           // the raw native status, e.g. "Cbc_status=1 secondaryStatus=4"

  bool HasSolution() const {
    return status == SolveStatus::kOptimal || status == SolveStatus::kFeasible;
  }
  // Relative gap between objective and bound (0 when optimal, infinity without a solution).
  double Gap() const;
};

// What a backend reports for the minimisation it was given (SolverBackend::SolveMinimisation):
// objective and bound without the model's offset.
struct MinimisationResult {
  SolveStatus status = SolveStatus::kError;
  double objective = 0.0;           // of the minimisation; valid with a solution
  double best_bound = -kInfinity;   // proven lower bound of the minimisation; −inf when unknown
  std::vector<double> values;       // one per variable, with a solution
  std::int64_t nodes = 0;
  std::string detail;               // the raw native status
};

// A solver backend translates a minimisation to its library and the library's answer back; the
// framework's Solve does the rest, the same for every backend: checks the options, answers a model
// without variables, turns a maximisation into a minimisation (costs and cutoff negated, the
// offset taken out) and back, and times the call.
class SolverBackend {
 public:
  virtual ~SolverBackend() = default;
  // The registry name, e.g. "cbc".
  virtual std::string Name() const = 0;
  // The native library and version, e.g. "CBC 2.10.8".
  virtual std::string Version() const = 0;
  // Thread-safe and deterministic for the same model and options (with threads = 1).
  SolveResult Solve(const IlpModel& model, const SolveOptions& options) const;

 protected:
  // minimise Σ costs[j]·x_j subject to the model's rows, bounds and integrality (the model's own
  // objective sense and offset are to be ignored), under `options` (valid; a cutoff, if any, is
  // on this minimisation). The model has at least one variable.
  virtual MinimisationResult SolveMinimisation(const IlpModel& model,
                                               const std::vector<double>& costs,
                                               const SolveOptions& options) const = 0;
};

// Solves models that need no solver: no variables (objective = offset; optimal, or infeasible if a
// row's bounds exclude 0). Returns nullopt for any other model. SolverBackend::Solve calls it first.
std::optional<SolveResult> SolveWithoutSolver(const IlpModel& model);

}  // namespace phaze
