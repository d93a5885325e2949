// The settings CBC's stand-alone solver (CbcMain1, "default strategy 1") applies before its
// branch-and-cut, applied here to a CbcModel of our own so that solves need no CbcMain1 (which is
// not reentrant: coin-or/Cbc#332). CglPreProcess is left out: CBC 2.10's postProcess can segfault
// when a time limit strikes inside it (coin-or/Cbc#353), and the scheduling ILPs gain little from
// it.
#pragma once

#include <coin/CbcModel.hpp>
#include <coin/OsiClpSolverInterface.hpp>

namespace phaze::solvers {

// Before the root LP: Clp's scaling, perturbation, factorisation frequency and dense-factorisation
// options as CbcMain sets them.
void PrepareRelaxation(OsiClpSolverInterface& lp);

// After the root LP, before branchAndBound: the heuristics (feasibility pump, rounding, greedy
// cover and equality, coefficient diving, RINS), the cut generators when `cuts` (probing, Gomory,
// knapsack, clique, MIR, flow cover, two-step MIR), root cut passes, strong branching and trust,
// Clp's in-tree fathoming of small subtrees, and Clp's branch-and-bound options. The objects added
// are copied by the model, so nothing here outlives the call.
void ConfigureBranchAndCut(CbcModel& model, bool cuts);

}  // namespace phaze::solvers
