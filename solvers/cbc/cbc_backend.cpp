// COIN-OR CBC 2.10 as a Phaze ILP solver backend ("cbc"), through CBC's C interface. It only
// translates: SolverBackend::Solve (the framework) checks options, answers empty models, turns a
// maximisation into the minimisation given here and adds the objective offset back.
//
// Native statuses are mapped explicitly: Cbc_status (0 finished, 1 stopped on a limit, 2
// abandoned, 5 user) with Cbc_secondaryStatus and the isProven* predicates; an objective of
// ~1.8e308 means "no solution" whatever the status says. Time limits are wall-clock ("timeMode
// elapsed").
//
// Cbc_solve runs CbcMain1, which keeps static state; solves are therefore serialised by a mutex in
// this plugin. Parallel searches get their parallelism from evaluating architectures, and run the
// ILPs of one architecture one after another.
#include <coin/Cbc_C_Interface.h>

#include <algorithm>
#include <cstdint>
#include <cmath>
#include <limits>
#include <mutex>
#include <string>
#include <vector>
#include <fmt/printf.h>

#include "phaze/ilp/solver_backend.hpp"
#include "phaze/plugin/plugin_abi.hpp"
#include "phaze/plugin/registry.hpp"

namespace phaze::solvers {
namespace {

// CBC treats magnitudes >= COIN_DBL_MAX (= DBL_MAX) as infinite.
constexpr double kCoinInfinity = std::numeric_limits<double>::max();

std::mutex& CbcMutex() {
  static std::mutex m;
  return m;
}

std::string Fmt(double v) {
  std::string buf = fmt::sprintf("%.17g", v);
  return buf;
}

class CbcBackend final : public SolverBackend {
 public:
  // `cuts: false` switches CBC's cut generators off: on the scheduling ILPs the root cuts take most
  // of the time (2.3 s of 2.5 s on a BERT-large backward block) and lift the bound by under 1%.
  explicit CbcBackend(bool cuts = true) : cuts_(cuts) {}
  std::string Name() const override { return "cbc"; }
  std::string Version() const override { return std::string("CBC ") + Cbc_getVersion(); }

  MinimisationResult SolveMinimisation(const IlpModel& model, const std::vector<double>& costs,
                                       const SolveOptions& options) const override {
    const int n = model.NumVariables();
    const int m = model.NumRows();

    // Column-major copy of the rows.
    std::vector<CoinBigIndex> starts(static_cast<size_t>(n) + 1, 0);
    for (int c : model.Columns()) ++starts[static_cast<size_t>(c) + 1];
    for (int j = 0; j < n; ++j) starts[j + 1] += starts[j];
    std::vector<int> index(model.Columns().size());
    std::vector<double> value(model.Columns().size());
    {
      std::vector<CoinBigIndex> fill(starts.begin(), starts.end() - 1);
      for (int r = 0; r < m; ++r) {
        for (auto k = model.RowStarts()[r]; k < model.RowStarts()[r + 1]; ++k) {
          int c = model.Columns()[k];
          index[fill[c]] = r;
          value[fill[c]] = model.Coefficients()[k];
          ++fill[c];
        }
      }
    }
    std::vector<double> lb(n), ub(n), obj(n);
    for (int j = 0; j < n; ++j) {
      const auto& v = model.Variable(j);
      lb[j] = v.lower == -kInfinity ? -kCoinInfinity : v.lower;
      ub[j] = v.upper == kInfinity ? kCoinInfinity : v.upper;
      obj[j] = costs[j];
    }
    std::vector<double> rlb(model.RowLower()), rub(model.RowUpper());
    for (double& x : rlb)
      if (x == -kInfinity) x = -kCoinInfinity;
    for (double& x : rub)
      if (x == kInfinity) x = kCoinInfinity;

    std::lock_guard lock(CbcMutex());
    Cbc_Model* cbc = Cbc_newModel();
    struct Deleter {
      Cbc_Model* p;
      ~Deleter() { Cbc_deleteModel(p); }
    } deleter{cbc};
    Cbc_loadProblem(cbc, n, m, starts.data(), index.data(), value.data(), lb.data(), ub.data(),
                    obj.data(), rlb.data(), rub.data());
    for (int j = 0; j < n; ++j) {
      if (model.Variable(j).IsIntegral()) Cbc_setInteger(cbc, j);
    }
    Cbc_setObjSense(cbc, 1.0);
    Cbc_setLogLevel(cbc, options.verbose ? 1 : 0);
    if (!options.verbose) {
      Cbc_setParameter(cbc, "log", "0");
      Cbc_setParameter(cbc, "slog", "0");
    }
    Cbc_setParameter(cbc, "timeMode", "elapsed");
    if (std::isfinite(options.time_limit_s)) {
      Cbc_setMaximumSeconds(cbc, options.time_limit_s);
      // CBC 2.10's CglPreProcess::postProcess can segfault when the clock runs out at the wrong
      // moment (seen here at 0.05 s on a 60-op scheduling ILP; coin-or/Cbc#353 is the same code
      // path): with a time limit, no MIP preprocessing.
      Cbc_setParameter(cbc, "preprocess", "off");
    }
    if (!cuts_) Cbc_setParameter(cbc, "cuts", "off");
    if (options.node_limit > 0) {
      Cbc_setMaximumNodes(cbc, static_cast<int>(std::min<std::int64_t>(options.node_limit, INT32_MAX)));
    }
    Cbc_setAllowableFractionGap(cbc, options.relative_gap);
    Cbc_setAllowableGap(cbc, options.absolute_gap);
    if (options.threads > 1) {
      Cbc_setParameter(cbc, "threads", std::to_string(options.threads).c_str());
    }
    if (options.objective_cutoff) Cbc_setCutoff(cbc, *options.objective_cutoff);
    if (!options.warm_start.empty()) {
      std::vector<int> idx(n);
      for (int j = 0; j < n; ++j) idx[j] = j;
      Cbc_setMIPStartI(cbc, n, idx.data(), options.warm_start.data());
    }

    Cbc_solve(cbc);

    MinimisationResult r;
    const int status = Cbc_status(cbc);
    const int secondary = Cbc_secondaryStatus(cbc);
    const double raw_obj = Cbc_getObjValue(cbc);
    const double* sol = Cbc_getColSolution(cbc);
    const bool has_solution = sol != nullptr && std::fabs(raw_obj) < 1e300 &&
                              (Cbc_isProvenOptimal(cbc) || Cbc_numberSavedSolutions(cbc) > 0 ||
                               Cbc_bestSolution(cbc) != nullptr);
    r.detail = "Cbc_status=" + std::to_string(status) +
               " secondaryStatus=" + std::to_string(secondary) + " objective=" + Fmt(raw_obj);
    r.nodes = Cbc_getNodeCount(cbc);
    if (status == -1) {
      // No branch-and-bound ran: a pure LP (or one settled by the initial solve). The isProven*
      // predicates are unreliable here (an unbounded LP reads "proven infeasible"); the
      // initial-solve flags are not.
      if (Cbc_isInitialSolveProvenOptimal(cbc) && has_solution) {
        r.status = SolveStatus::kOptimal;
      } else if (Cbc_isInitialSolveProvenPrimalInfeasible(cbc)) {
        r.status = SolveStatus::kInfeasible;
      } else if (Cbc_isInitialSolveAbandoned(cbc)) {
        r.status = SolveStatus::kError;
        r.detail += " (initial LP solve abandoned)";
      } else {
        r.status = SolveStatus::kUnbounded;
        r.detail += " (initial LP solve: dual infeasible)";
      }
    } else if (Cbc_isProvenInfeasible(cbc) && !has_solution) {
      r.status = SolveStatus::kInfeasible;
      if (options.objective_cutoff) r.detail += " (no solution better than the cutoff)";
    } else if ((Cbc_isContinuousUnbounded(cbc) || secondary == 7) && !Cbc_isProvenOptimal(cbc)) {
      r.status = SolveStatus::kUnbounded;
    } else if (status == 2) {
      r.status = SolveStatus::kError;
      r.detail += " (abandoned: numerical difficulties)";
    } else if (Cbc_isProvenOptimal(cbc) && has_solution) {
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
      r.values.assign(sol, sol + n);
      r.objective = raw_obj;
      const double bound = Cbc_getBestPossibleObjValue(cbc);
      r.best_bound = std::fabs(bound) < 1e300 ? bound : -kInfinity;  // ~DBL_MAX: no bound
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
                "cbc", "COIN-OR CBC branch-and-cut (C interface); wall-clock time limit",
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
