// lp_solve 5.5 as a Phaze ILP solver backend ("lpsolve"). It only translates: SolverBackend::Solve
// (the framework) checks options, answers empty models, turns a maximisation into the minimisation
// given here and adds the objective offset back.
//
// Traps handled here (see CONVENTIONS.md): lp_lib.h #defines LE/GE/EQ/TRUE/FALSE, so it is included
// last and only here; the global solve() is called as ::solve; columns are 1-based; the default
// lower bound is 0, so every bound is set explicitly; set_timeout takes whole seconds (0 = none),
// so a time limit is rounded *up* to whole seconds; a row-less unbounded model can report OPTIMAL
// at an objective of ±1e30, which is mapped to unbounded. lp_solve reports no best bound for a
// stopped search (best_bound = −inf for minimisation), and ignores warm starts and cutoffs. A node
// limit is implemented with the abort callback.
#include <cstdint>
#include <cmath>
#include <string>
#include <vector>

#include "phaze/ilp/solver_backend.hpp"
#include "phaze/plugin/plugin_abi.hpp"
#include "phaze/plugin/registry.hpp"

// clang-format off
#include <lpsolve/lp_lib.h>  // must stay last: it #defines common words
// clang-format on

namespace phaze::solvers {
namespace {

std::string StatusText(int code) {
  switch (code) {
    case NOMEMORY: return "NOMEMORY";
    case OPTIMAL: return "OPTIMAL";
    case SUBOPTIMAL: return "SUBOPTIMAL";
    case INFEASIBLE: return "INFEASIBLE";
    case UNBOUNDED: return "UNBOUNDED";
    case DEGENERATE: return "DEGENERATE";
    case NUMFAILURE: return "NUMFAILURE";
    case USERABORT: return "USERABORT";
    case TIMEOUT: return "TIMEOUT";
    case PRESOLVED: return "PRESOLVED";
    case ACCURACYERROR: return "ACCURACYERROR";
    default: return "code " + std::to_string(code);
  }
}

class LpSolveBackend final : public SolverBackend {
 public:
  std::string Name() const override { return "lpsolve"; }
  std::string Version() const override {
    int major = 0, minor = 0, release = 0, build = 0;
    lp_solve_version(&major, &minor, &release, &build);
    return "lp_solve " + std::to_string(major) + "." + std::to_string(minor) + "." +
           std::to_string(release) + "." + std::to_string(build);
  }

  MinimisationResult SolveMinimisation(const IlpModel& model, const std::vector<double>& costs,
                                       const SolveOptions& options) const override {
    MinimisationResult r;
    const int n = model.NumVariables();
    const int m = model.NumRows();

    lprec* lp = make_lp(0, n);
    if (lp == nullptr) {
      r.status = SolveStatus::kError;
      r.detail = "make_lp failed (out of memory)";
      return r;
    }
    struct Deleter {
      lprec* p;
      ~Deleter() { delete_lp(p); }
    } deleter{lp};
    set_outputfile(lp, const_cast<char*>(""));
    set_verbose(lp, options.verbose ? NORMAL : NEUTRAL);
    const double inf = get_infinite(lp);
    auto clamp = [inf](double x) { return x >= inf ? inf : x <= -inf ? -inf : x; };

    std::vector<double> row(static_cast<size_t>(n) + 1, 0.0);
    for (int j = 0; j < n; ++j) row[j + 1] = costs[j];
    set_obj_fn(lp, row.data());
    set_minim(lp);

    set_add_rowmode(lp, TRUE);
    std::vector<int> cols;
    std::vector<double> coefs;
    for (int i = 0; i < m; ++i) {
      auto rv = model.Row(i);
      cols.clear();
      coefs.clear();
      for (size_t k = 0; k < rv.columns.size(); ++k) {
        cols.push_back(rv.columns[k] + 1);
        coefs.push_back(rv.coefficients[k]);
      }
      const bool lo = rv.lower > -kInfinity, hi = rv.upper < kInfinity;
      int type = (lo && hi && rv.lower == rv.upper) ? EQ : lo ? GE : LE;
      double rhs = type == LE ? (hi ? rv.upper : inf) : rv.lower;
      add_constraintex(lp, static_cast<int>(cols.size()), coefs.data(), cols.data(), type, rhs);
      if (lo && hi && rv.lower != rv.upper) set_rh_range(lp, i + 1, rv.upper - rv.lower);  // GE row: [lower, lower + delta]
    }
    set_add_rowmode(lp, FALSE);
    for (int j = 0; j < n; ++j) {
      const auto& v = model.Variable(j);
      set_bounds(lp, j + 1, clamp(v.lower), clamp(v.upper));
      if (v.IsIntegral()) set_int(lp, j + 1, TRUE);
    }
    if (std::isfinite(options.time_limit_s)) {
      set_timeout(lp, static_cast<long>(std::ceil(options.time_limit_s)));
    }
    // A node limit through the abort callback (lp_solve has no parameter for it): it asks the
    // solver's own node count, so the stop point is reproducible.
    std::int64_t node_limit = options.node_limit;
    if (node_limit > 0) {
      put_abortfunc(
          lp,
          [](lprec* l, void* handle) -> int {
            return static_cast<std::int64_t>(get_total_nodes(l)) >=
                           *static_cast<std::int64_t*>(handle)
                       ? TRUE
                       : FALSE;
          },
          &node_limit);
    }
    set_mip_gap(lp, TRUE, options.absolute_gap);   // TRUE: absolute gap
    set_mip_gap(lp, FALSE, options.relative_gap);  // FALSE: relative gap

    const int code = ::solve(lp);
    const double raw_obj = get_objective(lp);
    r.nodes = static_cast<std::int64_t>(get_total_nodes(lp));
    r.detail = "solve()=" + std::to_string(code) + " (" + StatusText(code) + ")";
    switch (code) {
      case OPTIMAL:
      case PRESOLVED:
        r.status = std::fabs(raw_obj) >= 1e30 ? SolveStatus::kUnbounded : SolveStatus::kOptimal;
        break;
      case SUBOPTIMAL: r.status = SolveStatus::kFeasible; break;
      case INFEASIBLE: r.status = SolveStatus::kInfeasible; break;
      case UNBOUNDED: r.status = SolveStatus::kUnbounded; break;
      case TIMEOUT:
      case USERABORT: r.status = SolveStatus::kNoSolutionAtLimit; break;
      default: r.status = SolveStatus::kError; break;
    }
    if (r.status == SolveStatus::kOptimal || r.status == SolveStatus::kFeasible) {
      r.values.resize(static_cast<size_t>(n));
      get_variables(lp, r.values.data());
      r.objective = raw_obj;  // no bound is reported for a stopped search: best_bound stays −inf
    }
    return r;
  }
};

plugin::PluginInfo LpSolvePlugin() {
  return {plugin::kAbiVersion, "lpsolve", "1.0.0", "lp_solve 5.5 MIP solver backend",
          [](Registry& registry) {
            registry.AddSolverBackend(
                "lpsolve", "lp_solve 5.5 branch-and-bound; time limit in whole seconds",
                [](const ConfigNode& params) {
                  params.ExpectKeys(std::initializer_list<std::string_view>{});
                  return std::make_shared<LpSolveBackend>();
                });
          }};
}

}  // namespace
}  // namespace phaze::solvers

PHAZE_PLUGIN_ENTRY(phaze::solvers::LpSolvePlugin)
