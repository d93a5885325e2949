// COIN-OR CBC 2.10 as a Phaze ILP solver backend ("cbc"), through CBC's C++ interface: one
// OsiClpSolverInterface and one CbcModel per solve, so solves on different threads share nothing
// and run concurrently. It only translates: SolverBackend::Solve (the framework) checks options,
// answers empty models, turns a maximisation into the minimisation given here and adds the
// objective offset back.
//
// Why not CbcMain1 (what Cbc_solve in the C interface runs): it keeps static state and is not
// reentrant (coin-or/Cbc#332), so it needed a process-wide mutex. CbcModel::branchAndBound has no
// such state. What CbcMain1 adds on top by default (Clp's options, bound tightening, heuristics,
// cut generators, strong branching, in-Clp fathoming) is applied by cbc_main_settings.cpp, so the
// search follows CbcMain's closely (the solver benchmark's 40-op ILP: 26,860 nodes and 3.8 s
// against CbcMain's 22,492 and 2.6 s; the 17-op one: 2.1 s both). CglPreProcess is not used.
//
// Statuses: a model without integer variables is an LP, answered by Clp's initial solve and its
// proven-optimal/primal-infeasible/dual-infeasible flags. A MIP whose relaxation is infeasible or
// unbounded is answered from the relaxation; otherwise from branch-and-bound's status
// (0 finished, 1 stopped on a limit, 2 abandoned) with its isProven* predicates and whether an
// incumbent exists. Time limits are wall-clock.
#include <fmt/printf.h>

#include <algorithm>
#include <cmath>
#include <coin/CbcModel.hpp>
#include <coin/OsiClpSolverInterface.hpp>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "cbc_main_settings.hpp"
#include "phaze/ilp/solver_backend.hpp"
#include "phaze/plugin/plugin_abi.hpp"
#include "phaze/plugin/registry.hpp"

namespace phaze::solvers {
namespace {

// CBC treats magnitudes >= COIN_DBL_MAX (= DBL_MAX) as infinite.
constexpr double kCoinInfinity = std::numeric_limits<double>::max();

// The model as a Clp LP with its integer columns marked (the rows loaded as they are stored).
void LoadInto(OsiClpSolverInterface& lp, const IlpModel& model, const std::vector<double>& costs) {
  const int n = model.NumVariables();
  const int m = model.NumRows();
  std::vector<CoinBigIndex> starts(model.RowStarts().begin(), model.RowStarts().end() - 1);
  std::vector<int> lengths(static_cast<std::size_t>(m));
  for (int r = 0; r < m; ++r) {
    lengths[r] = static_cast<int>(model.RowStarts()[r + 1] - model.RowStarts()[r]);
  }
  const CoinPackedMatrix rows(false, n, m, static_cast<CoinBigIndex>(model.Columns().size()),
                              model.Coefficients().data(), model.Columns().data(), starts.data(),
                              lengths.data());
  auto coin = [](double x) {
    return x == kInfinity ? kCoinInfinity : x == -kInfinity ? -kCoinInfinity : x;
  };
  std::vector<double> lb(n), ub(n);
  for (int j = 0; j < n; ++j) {
    lb[j] = coin(model.Variable(j).lower);
    ub[j] = coin(model.Variable(j).upper);
  }
  std::vector<double> rlb(model.RowLower()), rub(model.RowUpper());
  for (double& x : rlb) x = coin(x);
  for (double& x : rub) x = coin(x);
  lp.loadProblem(rows, lb.data(), ub.data(), costs.data(), rlb.data(), rub.data());
  lp.setObjSense(1.0);
  for (int j = 0; j < n; ++j) {
    if (model.Variable(j).IsIntegral()) lp.setInteger(j);
  }
}

// The relaxation's answer when it settles the model: optimal for a pure LP, infeasible or
// unbounded for either. Returns false when branch-and-bound must decide.
bool AnswerFromRelaxation(const OsiClpSolverInterface& lp, bool has_integers,
                          MinimisationResult& r) {
  r.detail =
      fmt::sprintf("relaxation: optimal=%d primal_infeasible=%d dual_infeasible=%d abandoned=%d",
                   lp.isProvenOptimal(), lp.isProvenPrimalInfeasible(), lp.isProvenDualInfeasible(),
                   lp.isAbandoned());
  if (lp.isProvenPrimalInfeasible()) {
    r.status = SolveStatus::kInfeasible;
    r.detail += " (relaxation infeasible)";
  } else if (lp.isProvenDualInfeasible()) {
    r.status = SolveStatus::kUnbounded;
    r.detail += " (relaxation unbounded)";
  } else if (lp.isAbandoned()) {
    r.status = SolveStatus::kError;
    r.detail += " (relaxation abandoned: numerical difficulties)";
  } else if (!lp.isProvenOptimal()) {
    r.status = SolveStatus::kError;
    r.detail += " (relaxation stopped unsolved)";
  } else if (!has_integers) {
    const double* x = lp.getColSolution();
    r.status = SolveStatus::kOptimal;
    r.values.assign(x, x + lp.getNumCols());
    r.objective = r.best_bound = lp.getObjValue();
  } else {
    return false;
  }
  return true;
}

class CbcBackend final : public SolverBackend {
 public:
  // `cuts: false` switches CBC's cut generators off: on the scheduling ILPs the root cuts take most
  // of the time (2.3 s of 2.5 s on a BERT-large backward block) and lift the bound by under 1%.
  explicit CbcBackend(bool cuts = true) : cuts_(cuts) {}
  std::string Name() const override { return "cbc"; }
  std::string Version() const override { return "CBC " CBC_VERSION; }

  MinimisationResult SolveMinimisation(const IlpModel& model, const std::vector<double>& costs,
                                       const SolveOptions& options) const override {
    const int n = model.NumVariables();
    OsiClpSolverInterface lp;
    const int log_level = options.verbose ? 1 : 0;
    lp.messageHandler()->setLogLevel(log_level);
    lp.setHintParam(OsiDoReducePrint, !options.verbose, OsiHintTry);
    LoadInto(lp, model, costs);
    PrepareRelaxation(lp);
    bool has_integers = false;
    for (int j = 0; j < n && !has_integers; ++j) has_integers = model.Variable(j).IsIntegral();

    lp.initialSolve();
    MinimisationResult r;
    if (AnswerFromRelaxation(lp, has_integers, r)) return r;
    // Bounds implied by the rows (CbcMain does this before branch-and-bound).
    if (lp.getModelPtr()->tightenPrimalBounds() != 0) {
      r.status = SolveStatus::kInfeasible;
      r.detail += " (bound tightening proves it infeasible)";
      return r;
    }
    lp.resolve();

    CbcModel cbc(lp);  // clones the solved relaxation
    cbc.setLogLevel(log_level);
    cbc.solver()->messageHandler()->setLogLevel(0);
    cbc.setUseElapsedTime(true);
    if (std::isfinite(options.time_limit_s)) cbc.setMaximumSeconds(options.time_limit_s);
    if (options.node_limit > 0) {
      cbc.setMaximumNodes(static_cast<int>(std::min<std::int64_t>(options.node_limit, INT32_MAX)));
    }
    cbc.setAllowableFractionGap(options.relative_gap);
    cbc.setAllowableGap(options.absolute_gap);
    if (options.threads > 1 && CbcModel::haveMultiThreadSupport()) {
      cbc.setNumberThreads(options.threads);
    }
    if (options.objective_cutoff) cbc.setCutoff(*options.objective_cutoff);
    if (!options.warm_start.empty()) {
      // Kept only if feasible (check = true); the objective is recomputed.
      cbc.setBestSolution(options.warm_start.data(), n, kCoinInfinity, true);
    }
    // CBC's default cut generators (probing, Gomory, knapsack, clique, flow cover, MIR; where they
    // pay) unless switched off, strong branching on 5 candidates with pseudo-costs trusted after
    // 5 branchings, and the rounding heuristic; plus the feasibility pump, as CbcMain runs it.
    ConfigureBranchAndCut(cbc, cuts_);
    cbc.branchAndBound();

    const int status = cbc.status();
    const int secondary = cbc.secondaryStatus();
    const double* best = cbc.bestSolution();
    const bool has_solution = best != nullptr && std::fabs(cbc.getObjValue()) < 1e300;
    r.detail = fmt::sprintf("CbcModel status=%d secondaryStatus=%d objective=%.17g", status,
                            secondary, cbc.getObjValue());
    r.nodes = cbc.getNodeCount();
    if (cbc.isProvenInfeasible() && !has_solution) {
      r.status = SolveStatus::kInfeasible;
      if (options.objective_cutoff) r.detail += " (no solution better than the cutoff)";
    } else if ((cbc.isContinuousUnbounded() || secondary == 7) && !has_solution) {
      r.status = SolveStatus::kUnbounded;
    } else if (status == 2) {
      r.status = SolveStatus::kError;
      r.detail += " (abandoned: numerical difficulties)";
    } else if (cbc.isProvenOptimal() && has_solution) {
      r.status = SolveStatus::kOptimal;
    } else if (has_solution) {
      r.status = SolveStatus::kFeasible;  // stopped on a limit with an incumbent
    } else if (status == 1 || status == 5) {
      r.status = SolveStatus::kNoSolutionAtLimit;
    } else {
      r.status = SolveStatus::kError;
      r.detail += " (no solution and no proof)";
    }
    if (r.status == SolveStatus::kOptimal || r.status == SolveStatus::kFeasible) {
      r.values.assign(best, best + n);
      r.objective = cbc.getObjValue();
      const double bound = cbc.getBestPossibleObjValue();
      r.best_bound = std::fabs(bound) < 1e300 ? bound : -kInfinity;  // ~DBL_MAX: no bound
      if (r.status == SolveStatus::kOptimal) r.best_bound = std::min(r.best_bound, r.objective);
    }
    return r;
  }

 private:
  bool cuts_ = true;
};

plugin::PluginInfo CbcPlugin() {
  return {plugin::kAbiVersion, "cbc", "1.0.0", "COIN-OR CBC 2.10 MIP solver backend",
          [](Registry& registry) {
            registry.AddSolverBackend(
                "cbc", "COIN-OR CBC branch-and-cut (CbcModel per solve); wall-clock time limit",
                [](const ConfigNode& params) {
                  params.ExpectKeys({"cuts"});
                  const auto cuts = params.Optional("cuts");
                  return std::make_shared<CbcBackend>(cuts ? cuts->AsBool() : true);
                });
          }};
}

}  // namespace
}  // namespace phaze::solvers

PHAZE_PLUGIN_ENTRY(phaze::solvers::CbcPlugin)
