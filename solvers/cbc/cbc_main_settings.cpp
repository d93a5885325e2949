// What CbcMain1 sets by default, written against CBC 2.10.8's classes. The numbers are CBC's own
// defaults (CbcSolver.cpp, "default strategy 1"); each is named where it is set.
#include "cbc_main_settings.hpp"

#include <algorithm>
#include <cmath>
#include <coin/CbcCutGenerator.hpp>
#include <coin/CbcHeuristic.hpp>
#include <coin/CbcHeuristicDiveCoefficient.hpp>
#include <coin/CbcHeuristicFPump.hpp>
#include <coin/CbcHeuristicGreedy.hpp>
#include <coin/CbcHeuristicRINS.hpp>
#include <coin/CglClique.hpp>
#include <coin/CglFlowCover.hpp>
#include <coin/CglGomory.hpp>
#include <coin/CglKnapsackCover.hpp>
#include <coin/CglMixedIntegerRounding2.hpp>
#include <coin/CglProbing.hpp>
#include <coin/CglTwomir.hpp>
#include <coin/ClpFactorization.hpp>
#include <coin/ClpSimplex.hpp>

namespace phaze::solvers {
namespace {

// Clp's special options while inside branch-and-bound (CbcSolver.cpp's IN_BRANCH_AND_BOUND).
constexpr int kClpInBranchAndBound = 0x01000000 | 262144 | 128 | 1024 | 2048;

void AddHeuristics(CbcModel& model) {
  // Feasibility pump as CbcMain tunes it (pumpTune 1005043): accumulate, 6 major passes, fix
  // integers and continuous at bounds (option 40), run at the root before cuts and after (when 13).
  CbcHeuristicFPump pump(model);
  pump.setFractionSmall(0.5);
  pump.setMaximumPasses(30);
  pump.setAccumulate(1);
  pump.setMaximumRetries(6);
  pump.setFeasibilityPumpOptions(40);
  pump.setWhen(13);
  pump.setHeuristicName("feasibility pump");
  model.addHeuristic(&pump);

  CbcRounding rounding(model);
  rounding.setHeuristicName("rounding");
  model.addHeuristic(&rounding);

  CbcHeuristicGreedyCover cover(model);
  cover.setHeuristicName("greedy cover");
  model.addHeuristic(&cover);
  CbcHeuristicGreedyEquality equality(model);
  equality.setHeuristicName("greedy equality");
  model.addHeuristic(&equality);

  CbcHeuristicDiveCoefficient dive(model);
  dive.setHeuristicName("DiveCoefficient");
  dive.setWhen(2);
  dive.setMaxIterations(100);
  model.addHeuristic(&dive);

  CbcHeuristicRINS rins(model);
  rins.setHeuristicName("RINS");
  rins.setFractionSmall(0.5);
  rins.setDecayFactor(5.0);
  model.addHeuristic(&rins);
}

// Every generator at "ifmove" (-98: at the root, then in the tree where it paid at the root), with
// CbcMain's switch-off thresholds and accuracy levels.
void AddCutGenerators(CbcModel& model) {
  const int columns = model.solver()->getNumCols();
  auto add = [&](CglCutGenerator& generator, const char* name, int switch_off, int inaccuracy) {
    model.addCutGenerator(&generator, -98, name);  // the model keeps a copy
    CbcCutGenerator* added = model.cutGenerator(model.numberCutGenerators() - 1);
    added->setSwitchOffIfLessThan(switch_off);
    added->setInaccuracy(inaccuracy);
  };

  CglProbing probing;
  probing.setUsingObjective(1);
  probing.setMaxPass(1);
  probing.setMaxPassRoot(1);
  probing.setMaxProbe(123);
  probing.setMaxProbeRoot(123);
  probing.setMaxLook(10);
  probing.setMaxLookRoot(20);
  probing.setMaxElements(200);
  probing.setMaxElementsRoot(300);
  probing.setRowCuts(3);
  add(probing, "Probing", 0, 5);

  CglGomory gomory;
  gomory.setLimitAtRoot(columns > 5000 ? 2000 : 1000);
  gomory.setLimit(50);
  gomory.setAwayAtRoot(0.005);
  add(gomory, "Gomory", 0, 3);

  CglKnapsackCover knapsack;
  add(knapsack, "Knapsack", -2, 1);

  CglClique clique(false, true);
  clique.setStarCliqueReport(false);
  clique.setRowCliqueReport(false);
  clique.setMinViolation(0.1);
  add(clique, "Clique", 0, 0);

  CglMixedIntegerRounding2 mir(1, true, 1);
  mir.setDoPreproc(1);
  add(mir, "MixedIntegerRounding2", 0, 2);

  CglFlowCover flow;
  add(flow, "FlowCover", 0, 2);

  CglTwomir twomir;
  twomir.setMaxElements(250);
  twomir.setAwayAtRoot(0.005);
  twomir.setAway(0.01);
  add(twomir, "TwoMirCuts", 1, 4);

  // Root cut passes: up to 100 on small models whatever the progress, else stop on a minimum drop.
  const double drop = std::fabs(model.solver()->getObjValue()) * 1e-5 + 1e-5;
  model.setMinimumDrop(std::min(5e-2, drop));
  model.setMaximumCutPassesAtRoot(columns < 500 ? -100 : columns < 5000 ? 100 : 20);
  model.setMaximumCutPasses(4);
  model.setWhenCuts(999998);
}

}  // namespace

void PrepareRelaxation(OsiClpSolverInterface& lp) {
  ClpSimplex* clp = lp.getModelPtr();
  clp->setPerturbation(50);
  clp->scaling(4);
  lp.setSpecialOptions(0x40000000 | 1024);
  // Refactorise every 75 + rows/50 iterations (CbcMain's rule for under 10,000 rows; capped).
  const int rows = clp->numberRows();
  int frequency = rows < 10000 ? 75 + rows / 50 : rows < 100000 ? 275 + (rows - 10000) / 200 : 725;
  clp->setFactorizationFrequency(std::min(1000, frequency));
}

void ConfigureBranchAndCut(CbcModel& model, bool cuts) {
  auto* lp = dynamic_cast<OsiClpSolverInterface*>(model.solver());
  ClpSimplex* clp = lp->getModelPtr();
  clp->setSpecialOptions(clp->specialOptions() | kClpInBranchAndBound);
  model.setResolveAfterTakeOffCuts(false);

  AddHeuristics(model);
  if (cuts) AddCutGenerators(model);

  lp->setIntParam(OsiMaxNumIterationHotStart, 100);
  const int columns = lp->getNumCols(), rows = lp->getNumRows();
  if (rows < 300 && columns < 500) {  // CbcMain's "go faster stripes" for small models
    lp->setupForRepeatedUse(2, 0);
    clp->setSpecialOptions(clp->specialOptions() | 2048 | 4096);
  } else {
    lp->setupForRepeatedUse(0, 0);
  }
  lp->setSpecialOptions(1057 | 1024);  // 1024: dense factorisation below 40 rows
  clp->factorization()->setGoDenseThreshold(40);
  if (!clp->factorization()->isDenseOrSmall()) clp->factorization()->setGoSmallThreshold(40);
  model.setSpecialOptions(model.specialOptions() | 2 | 512);

  // Strong branching on 5 candidates; pseudo-costs trusted after more branchings on small models.
  model.setNumberStrong(5);
  model.setNumberBeforeTrust(columns <= 50    ? 1000
                             : columns <= 100 ? 100
                             : columns <= 300 ? 50
                                              : 10);
  model.setStrongStrategy(0);
  model.setMultipleRootTries(0);
  // Small models: Clp finishes subtrees below depth 12 itself (CbcMain's fast node depth).
  if (columns + rows < 500) model.setFastNodeDepth(-12);
}

}  // namespace phaze::solvers
