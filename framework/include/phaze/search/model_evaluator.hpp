// One model on one architecture (DESIGN §1's pipeline for a single config): per-op estimates →
// the ILP schedule of every unique layer slice's forward, backward and recompute pass → the
// placement DP for every micro-batch size, HBM size, recompute mode (and virtual-stage count when
// interleaving), sharing the estimates and schedules across them (the reference restarts
// everything for each). Per layer the DP gets (DESIGN §10): forward and backward makespans; the
// makespan of what the recompute mode re-runs (RecomputeGraph) as backward_recompute_s; the bytes
// kept per in-flight micro-batch (UniqueLayer::SavedBytes) and the working set; the optimizer step
// (system/optimizer_step.hpp, from the layer's optimizer_step op); and, for a model whose head reuses the embedding table, its gradient bytes for the all-reduce
// between the first and the last stage. Collectives and sends are the run config's network's.
//
// PrepareModel does the architecture-independent part once per run: the layer graph of every
// micro-batch size, sliced by the strategy for every tensor-parallel width it supports.
// ModelEvaluator::Evaluate then costs one architecture. The DP finds the fastest plan for each
// micro-batch, recompute mode, v and HBM size; those plans are then compared by search.objective
// (throughput by default; throughput per watt or per dollar, DESIGN §11), a plan drawing more than
// arch.power_budget_w per device counting as infeasible; ties go to the smaller micro-batch, then
// the lighter recompute mode (none, selective, full), then the smaller v, then the HBM size listed
// first (deterministic). Every feasible plan is priced (PriceChoice): power, energy, cost. ModelEvaluator::EvaluatePlan costs one
// given plan (`phaze predict`); fixed plans split the blocks as Megatron-LM does (MegatronStageStarts).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "phaze/arch/arch_config.hpp"
#include "phaze/core/boxed.hpp"
#include "phaze/arch/cost_model.hpp"
#include "phaze/search/run_config.hpp"
#include "phaze/estimate/estimator.hpp"
#include "phaze/graph/layer_graph.hpp"
#include "phaze/placement/placement_search.hpp"
#include "phaze/search/plan_choice.hpp"
#include "phaze/search/prepared_model.hpp"
#include "phaze/schedule/scheduler.hpp"
#include "phaze/strategy/parallelism_strategy.hpp"

namespace phaze {

struct ModelEvaluation {
  std::string model;
  bool pruned = false;  // not evaluated (the search's bound showed it cannot matter); best.reason says why
  PlanChoice best;                       // over micro-batch, width, HBM, recompute
  // The model's score on the config: ObjectiveValue(best) under search.objective (samples/s by
  // default); 0 when infeasible or pruned. Winners, incumbents and common scores use it.
  double score = 0;
  std::vector<PlanChoice> best_per_hbm;  // indexed like training.hbm_gib
  // The model's expert {p, d, t}, best settings for it (on the heap: an exhaustive search keeps
  // tens of thousands of evaluations, nearly all without one).
  Boxed<PlanChoice> expert;
  int ilp_answers = 0;      // schedules that needed the solver
  int fast_answers = 0;     // answered by a fast path
  double max_gap = 0;       // worst relative gap of a schedule
  double schedule_seconds = 0;  // wall time of estimates + schedules (timing; not reproducible)
  double placement_seconds = 0;
};

// One plan to evaluate (`phaze predict`).
struct PlanRequest {
  int strategy = 0;  // index into RunConfig::strategies
  int tensor_parallel = 1;
  int pipeline_stages = 1;
  int data_parallel = 1;
  int virtual_stages = 1;  // > 1: interleaved 1F1B
  std::int64_t micro_batch = 1;
  RecomputeMode recompute = RecomputeMode::kNone;
  Sharding sharding = Sharding::kNone;
  std::int64_t shard_group = kShardOverAll;  // RunConfig::Training::shard_groups' words
  std::vector<int> stage_starts;  // empty: MegatronStageStarts
};

// The data-parallel replicas h a plan's sharding divides over on `network`: ShardReplicas at its
// t and d for its shard group's span (d unless hybrid, and d unsharded).
std::int64_t ShardReplicasOf(const PlanRequest& plan, const Network& network);

// First layer of every stage after the first when p stages split the graph as Megatron-LM does:
// the transformer blocks evenly (the first blocks mod p stages take one more), the embedding with
// the first stage and the head with the last. Layers of other kinds (an imported graph): the even
// split of every layer. Empty with `reason` set when p exceeds the blocks.
std::vector<int> MegatronStageStarts(const LayerGraph& graph, int p, std::string* reason);

class ModelEvaluator;

// The two tiers of ModelEvaluator::UpperBound for one model on a set of configs at once — one
// config, or a family of configs sharing their tensor cores (search_context.hpp) — as throughputs
// (samples/s; ModelEvaluator::ObjectiveBound turns them into bounds on another objective). Every
// makespan is the scheduler's lower bound on the relaxation of that pass over the whole set
// (RelaxInto: each op as fast, and each core count as large, as on any of them, or one op at a
// time when all of them run one op at a time, layer_schedule.hpp — on a set of more
// than one config, as its estimator's lower bound, Estimator::EstimateLowerBound; the optimizer
// step the shortest), so each tier bounds the throughput Evaluate finds on every config of the
// set. Lazy: the makespans are bounded once, on the first call of either tier (a family's dropped
// once both are known; one config's kept for its evaluation, ModelEvaluator::Evaluate's `own`),
// and each tier is computed once. Not thread-safe; lives no longer than its
// evaluator and model.
class ModelBound {
 public:
  ModelBound();
  ~ModelBound();
  ModelBound(ModelBound&&) noexcept;
  ModelBound& operator=(ModelBound&&) noexcept;

  double Compute();    // kCompute: no DP; the largest of the groups' (below)
  // kPlacement, per group of slices (a micro-batch size and strategy: what one DP chooses among):
  // the smaller of its compute bound and the DP on the makespan bounds at the largest HBM; the
  // largest over the groups (no looser than either tier alone).
  double Placement();
  // kPlacement refined lazily, for pruning: Current() is the largest over the groups of the
  // tightest bound known for each (the DP's once it has run, else the compute bound); Refine()
  // runs the DP of the group with the largest (ties: the first) and is false when that one has
  // run already — Current() then equals Placement(), however few groups ran. A caller refines
  // while its decision is open.
  double Current();
  bool Refine();

 private:
  friend class ModelEvaluator;
  struct Times;
  const Times* LowerBoundTimes();  // null: the estimator cannot cost an op (bounds +∞)

  const ModelEvaluator* evaluator_ = nullptr;
  const PreparedModel* model_ = nullptr;
  std::vector<ArchConfig> archs_;
  bool family_ = false;  // more than one arch: its makespans are dropped once both tiers are known
  bool scheduled_ = false;
  std::unique_ptr<Times> times_;
  std::optional<double> compute_;
  std::vector<double> group_compute_;                  // per group of times_->sliced
  std::vector<std::optional<double>> group_placement_;  // the DP's, once run
};

class ModelEvaluator {
 public:
  ModelEvaluator(const RunConfig& run, std::shared_ptr<const Estimator> estimator,
                 std::shared_ptr<const SolverBackend> backend);

  // Evaluates `model` on `arch`. Estimator errors (UnsupportedOpError) become an infeasible result
  // with the reason; other errors propagate. Thread-safe; deterministic for a deterministic solver.
  // The slices are scheduled a group at a time (a micro-batch size and strategy: what one DP
  // chooses among), best bound first, and a group whose bounds show it cannot give any of the
  // choices is not scheduled (GroupPruning::kBound; see the .cpp) — the same choices as
  // scheduling every group (kNone, which tests compare with), ilp/fast answer counts aside.
  // `own`: the model's bound on this arch alone (Bound(model, {arch}), as a search's last bound
  // tier makes it); Evaluate takes the lower-bound makespans it holds instead of bounding them
  // again — the same values — and leaves it spent.
  enum class GroupPruning { kBound, kNone };
  ModelEvaluation Evaluate(const PreparedModel& model, const ArchConfig& arch, bool with_expert,
                           GroupPruning pruning = GroupPruning::kBound,
                           ModelBound* own = nullptr) const;

  // Evaluate(model, arch, true).expert alone, the same choice: only the slices of the expert
  // plan's width are scheduled and the DP's search is skipped (the robustness study's reference).
  std::optional<PlanChoice> EvaluateExpert(const PreparedModel& model,
                                           const ArchConfig& arch) const;

  // One plan, on the run config's cluster and training settings (its micro-batch must be prepared:
  // PrepareModel with it among training.micro_batches, its width among the widths).
  // Infeasibility (memory, devices) is a choice with the reason; the per-stage memory and the
  // breakdown are in choice.plan.
  PlanChoice EvaluatePlan(const PreparedModel& model, const ArchConfig& arch,
                          const PlanRequest& request) const;
  // Many plans (`phaze plan`), in order: each slice and recompute mode is scheduled once, however
  // many plans use it. The same answers as EvaluatePlan one by one.
  std::vector<PlanChoice> EvaluatePlans(const PreparedModel& model, const ArchConfig& arch,
                                        const std::vector<PlanRequest>& requests) const;

  // The schedule of one unique layer slice and pass (for the Gantt chart of a winner); `strategy`
  // is the index into RunConfig::strategies the plan was found with (PlanChoice::strategy_index).
  ScheduleResult ScheduleLayer(const PreparedModel& model, const ArchConfig& arch,
                               std::int64_t micro_batch, std::int64_t width, int strategy,
                               const std::string& layer, Pass pass,
                               ScheduleProblem* problem) const;

  // An upper bound on Evaluate(model, arch).best.Throughput(), cheap to compute (the search's
  // bound pass prunes with it). Both tiers use the scheduler's lower bounds on every makespan
  // (Scheduler::LowerBound; no schedule is solved) — the DP's time per batch never decreases when
  // a layer's time grows, so they bound the plans Evaluate finds:
  //  * kCompute, no DP: global_batch·K / (B·W), maximised over micro-batch b, width t and recompute
  //    mode, where B = ⌊global_batch / b⌋ micro-batches and W = Σ over layers of (devices the
  //    layer's stage has at least: t for a tensor-parallel layer, else 1) × (forward + backward +
  //    recompute): K devices can do no more than K device-seconds of work per second, and every
  //    pipeline runs ⌈B/d⌉ micro-batches through its slowest stage (placement_search.hpp). Valid
  //    only when consecutive layers are linked (a stage then runs its layers one after another);
  //    otherwise +∞.
  //  * kPlacement: the DP on the lower bounds, at the largest HBM size.
  // +∞ when the estimator cannot cost an op (Evaluate then says why).
  enum class BoundTier { kCompute, kPlacement };
  // With search.objective other than throughput, the bound is on the objective: the throughput
  // bound over the least a config can cost per unit (ObjectiveBound).
  double UpperBound(const PreparedModel& model, const ArchConfig& arch, BoundTier tier) const;
  // An upper bound on a config's objective from one on its throughput: a device draws at least its
  // static power, and costs at least its hourly price at that power with the smallest HBM.
  double ObjectiveBound(double throughput_bound, const ArchConfig& arch) const;
  const CostModel& Cost() const { return cost_; }
  // Both tiers' throughput bounds on `model` over every config of `archs` (not empty), lazily.
  ModelBound Bound(const PreparedModel& model, std::vector<ArchConfig> archs) const;

  SchedulerOptions Options() const { return scheduler_.Options(); }
  // The run's scheduler, whose segment memo every evaluation shares.
  const Scheduler& SharedScheduler() const { return scheduler_; }

 private:
  friend class ModelBound;
  const RunConfig& run_;
  CostModel cost_;
  std::shared_ptr<const Estimator> estimator_;
  std::shared_ptr<const SolverBackend> backend_;
  Scheduler scheduler_;
};

}  // namespace phaze
