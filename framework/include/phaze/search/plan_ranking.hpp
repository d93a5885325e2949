// `phaze plan` (issue 40): the plans Megatron-LM can launch for one model on a device and a
// cluster size, each evaluated as `phaze predict` would (ModelEvaluator::EvaluatePlans: Megatron's
// even split of the blocks), ranked by time per step.
//
// LaunchablePlans enumerates, for every strategy of the run and every width t it sliced the model
// at: p dividing the transformer blocks (every layer of an imported graph) with t·p dividing the
// accelerators, d = K/(t·p), d ≤ the micro-batches; each micro-batch b of training.micro_batches
// with b·d dividing the global batch; v = 1 and, unless the schedule is GPipe, each v of
// training.virtual_stages for which p > 1, p·v divides the blocks and the micro-batches per replica
// are a multiple of p (Megatron-LM's interleaving); each recompute mode of training.recompute; each
// sharding of training.sharding — gradients and parameters only without a pipeline (p = 1, as
// Megatron-FSDP runs), and nothing but none when no two devices hold the same weights (d·r = 1),
// each with each shard group of training.shard_group (ShardingsOf) whose replicas h
// (ShardReplicas) share weights with another device (h·r ≥ 2) and differ from an earlier group's
// at this t and d. Order: strategy, t, p, b, v, recompute, sharding, shard group (each as listed
// or ascending).
//
// RankPlans keeps the feasible ones (of those `refuse` lets through), best first under
// run.search.objective (throughput: fastest first; throughput_per_watt: most samples per joule of
// a device; throughput_per_cost: most samples per dollar; a stable sort: ties keep that order),
// each plan once — plans with the same t, p, d, v, b, sharding and shard replicas h and the same
// time and peak memory are one plan in effect (two strategies that slice alike, as sequence
// parallelism at t = 1 does Megatron's; two recompute modes that re-run the same, as selective and
// none do with FlashAttention), the first listed kept — and the first `top` of them.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "phaze/search/model_evaluator.hpp"

namespace phaze {

std::vector<PlanRequest> LaunchablePlans(const PreparedModel& model, const RunConfig& run);

// Why LaunchablePlans found nothing: each shape t·p·d of the accelerators (t a width some
// strategy sliced the model at) with the first condition it fails, or, when no width was sliced,
// that. Empty when some plan is launchable.
std::string WhyNoLaunchablePlan(const PreparedModel& model, const RunConfig& run);

struct RankedPlan {
  PlanRequest request;
  PlanChoice choice;
};

struct PlanRanking {
  std::vector<RankedPlan> plans;  // the `top` best feasible plans, best first (RankKey)
  std::size_t evaluated = 0;      // plans enumerated and evaluated
  std::size_t feasible = 0;
  // Why the others do not run, by kind: "over the HBM", "too few devices", … → count.
  std::map<std::string, std::size_t> refused;
  std::string none_launchable;  // WhyNoLaunchablePlan when nothing was evaluated
  // Feasible plans not listed because another listed plan is the same in effect (the same t, p,
  // d, v, micro-batch, sharding, time and peak: two strategies that slice alike).
  std::size_t alike = 0;
  // The smallest peak memory of the plans over the HBM (0 when none is): what a device would need.
  double smallest_over_hbm_bytes = 0;
};

// Why the framework a plan is for cannot launch it ("kind: why"), empty when it can.
using LaunchRefusal = std::function<std::string(const PlanRequest&)>;

// `refuse`, when given, drops the plans it refuses before they are evaluated, each counted in
// `refused` under its reason's kind (the text before its first ':').
PlanRanking RankPlans(const ModelEvaluator& evaluator, const PreparedModel& model,
                      const ArchConfig& arch, const RunConfig& run, std::size_t top,
                      const LaunchRefusal& refuse = {});

// The key plans are ranked by, smaller first: the step time under the throughput objective, else
// minus the plan's ObjectiveValue under run.search.objective.
double RankKey(const RankedPlan& plan, const RunConfig& run);

// The transformer blocks of a slice (LayerKind::kBlock layers), or every layer when it has none.
int PipelineUnits(const LayerGraph& graph);

}  // namespace phaze
