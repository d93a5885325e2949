// A placed step's totals (step_model.hpp's header comment): its time per batch with the breakdown,
// and its energy over the devices it uses.
#pragma once

#include "phaze/system/step_model.hpp"

namespace phaze {

// pipeline (PipelineTimeS) + exposed sync + (optimizer + tied): the time per batch (the DP and
// FinishStep add in this one order, so their figures agree to the bit).
inline double StepTimeS(double pipeline_s, double exposed_sync_s, double optimizer_s,
                        double tied_s) {
  double time = pipeline_s + exposed_sync_s;
  time += optimizer_s + tied_s;
  return time;
}

// The sum of a plan's stage loads in the order the placement DP accumulates it (from the last
// stage to the second, then the first), so that FinishStep's time is the DP's to the bit.
double StageLoadSum(const PlacementPlan& plan);

// Fills time, throughput, shares and the breakdown of a plan whose t, d, s and stages are set;
// `table` is its width's layer table, `level` the network level its pipeline crosses.
void FinishStep(const StepSettings& settings, const LayerTable& table, int level,
                PlacementPlan& plan);

// Fills plan.energy and plan.devices for a finished, feasible plan (computed once for the plan
// returned, not for every candidate the DP improves on).
void FillStepEnergy(const StepSettings& settings, const LayerTable& table, PlacementPlan& plan);

}  // namespace phaze
