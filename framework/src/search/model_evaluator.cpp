#include "phaze/search/model_evaluator.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <span>
#include <tuple>

#include "phaze/core/error.hpp"
#include "phaze/core/text_format.hpp"
#include "phaze/estimate/energy_model.hpp"
#include "phaze/estimate/estimate_cache.hpp"
#include "phaze/graph/graph_builder.hpp"
#include "phaze/schedule/layer_schedule.hpp"
#include "phaze/search/megatron_args.hpp"
#include "phaze/system/optimizer_step.hpp"
#include "phaze/system/pipeline.hpp"

namespace phaze {
namespace {

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

// Makespans of one slice's unique layers: forward, backward, and per recompute mode what the mode
// re-runs (0 where it re-runs nothing).
struct SliceTimes {
  std::vector<double> forward, backward;
  std::map<RecomputeMode, std::vector<double>> recompute;
  // The passes' dynamic energy per device, indexed alike.
  std::vector<Energy> forward_energy, backward_energy;
  std::map<RecomputeMode, std::vector<Energy>> recompute_energy;
  // Each unique layer's optimizer step (system/optimizer_step.hpp).
  std::vector<OptimizerStepCost> optimizer_step;
};

// The makespans on `archs.front()`. With `lower_bounds`, each makespan is instead the scheduler's
// cheap lower bound on the relaxation of the pass on every arch of `archs` (RelaxInto), and the
// optimizer step the shortest of theirs: times no longer than those of any of them (nothing
// solved, nothing recorded in `ev`). Throws Error when the archs give a pass different ops.
SliceTimes ScheduleSlice(const PreparedModel& model, const PreparedModel::Slice& slice,
                         std::span<const ArchConfig> archs, const std::vector<RecomputeMode>& modes,
                         const Estimator& estimator, const Scheduler& scheduler,
                         const Network& network, ModelEvaluation* ev, bool lower_bounds) {
  const LayerGraph& g = slice.graph;
  const ArchConfig& arch = archs.front();
  const std::size_t n = g.unique_layers.size();
  SliceTimes times;
  times.forward.assign(n, 0);
  times.backward.assign(n, 0);
  times.forward_energy.assign(n, Energy{});
  times.backward_energy.assign(n, Energy{});
  for (RecomputeMode mode : modes) {
    times.recompute[mode].assign(n, 0);
    times.recompute_energy[mode].assign(n, Energy{});
  }
  const EnergyTechnology energy_technology = EnergyTechnologyFor(arch);
  for (const UniqueLayer& u : g.unique_layers) {
    OptimizerStepCost step = CostOptimizerStep(u.optimizer_step, arch, energy_technology);
    for (const ArchConfig& other : archs.subspan(1)) {
      step.seconds = std::min(
          step.seconds,
          CostOptimizerStep(u.optimizer_step, other, EnergyTechnologyFor(other)).seconds);
    }
    times.optimizer_step.push_back(step);
  }
  auto schedule = [&](const UniqueLayer& u, const OperatorGraph& graph, Pass pass, Energy* energy) {
    const std::string name = model.name + "/" + u.name;
    const ScheduleProblem p = BuildScheduleProblem(
        graph, pass, estimator, lower_bounds ? archs : archs.first(1), network, name);
    *energy = p.energy;
    if (lower_bounds) return std::max(scheduler.LowerBound(p), p.host_s);  // as PassSeconds
    const ScheduleResult r = scheduler.Solve(p);
    const double seconds = PassSeconds(p, r);
    if (ev) {
      (r.stats.path == SchedulePath::kIlp ? ev->ilp_answers : ev->fast_answers) += 1;
      ev->max_gap = std::max(ev->max_gap, r.stats.gap);
    }
    return seconds;
  };
  for (std::size_t k = 0; k < n; ++k) {
    const UniqueLayer& u = g.unique_layers[k];
    times.forward[k] = schedule(u, u.forward, Pass::kForward, &times.forward_energy[k]);
    times.backward[k] = schedule(u, u.backward, Pass::kBackward, &times.backward_energy[k]);
    for (RecomputeMode mode : modes) {
      if (!u.Recomputes(mode)) continue;
      // Full recompute re-runs the forward graph: its makespan and energy are the forward one's.
      if (mode == RecomputeMode::kFull) {
        times.recompute[mode][k] = times.forward[k];
        times.recompute_energy[mode][k] = times.forward_energy[k];
      } else {
        times.recompute[mode][k] = schedule(u, RecomputeGraph(u, mode), Pass::kRecompute,
                                            &times.recompute_energy[mode][k]);
      }
    }
  }
  return times;
}

// Gradient bytes of the tables a layer reuses from another (the tied LM head), per device, as
// reduced between the first and last stage (training.gradient_reduction_precision).
double TiedGradientBytes(const LayerGraph& graph, const RunConfig::Training& training) {
  double bytes = 0;
  for (const auto& instance : graph.layers) {
    const UniqueLayer& u = graph.unique_layers.at(instance.unique_id);
    bytes += static_cast<double>(u.tied_parameters) * training.GradientReductionBytes();
  }
  return bytes;
}

// The per-layer figures the DP needs, for one slice and recompute mode (header comment), under
// `sharding`: where the run keeps the FP8 GEMMs' weights in FP8 only under it
// (RunConfig::Training::Fp8WeightsOnly), TE's cached FP8 copy is not kept beside them.
LayerTable MakeLayerTable(const LayerGraph& graph, const SliceTimes& times, RecomputeMode mode,
                          const RunConfig::Training& training, Sharding sharding) {
  const bool fp8_only = training.Fp8WeightsOnly(sharding);
  LayerTable table;
  const std::vector<double>& recompute = times.recompute.at(mode);
  std::vector<double> expert_bytes;  // per unique layer: its experts' weights
  for (const auto& u : graph.unique_layers) {
    double bytes = 0;
    for (const Operator& op : u.forward.Ops()) {
      if (op.expert >= 0) bytes += static_cast<double>(op.weight_bytes);
    }
    expert_bytes.push_back(bytes);
  }
  for (const auto& instance : graph.layers) {
    const UniqueLayer& u = graph.unique_layers.at(instance.unique_id);
    PlacementLayer l;
    l.name = instance.name;
    l.forward_s = times.forward[instance.unique_id];
    l.backward_s = times.backward[instance.unique_id];
    l.backward_recompute_s = recompute[instance.unique_id];
    l.forward_energy = times.forward_energy[instance.unique_id];
    l.backward_energy = times.backward_energy[instance.unique_id];
    l.backward_recompute_energy = times.recompute_energy.at(mode)[instance.unique_id];
    l.weight_bytes = static_cast<double>(u.weight_bytes);
    l.cached_weight_bytes = fp8_only ? 0.0 : static_cast<double>(u.cached_weight_bytes);
    if (training.fp8_param_gather && u.cached_weight_bytes > 0) {
      l.gathered_weight_bytes = l.weight_bytes - static_cast<double>(u.cached_weight_bytes) / 2;
    }
    l.gradient_bytes = static_cast<double>(u.gradient_bytes);
    l.optimizer_state_bytes = static_cast<double>(u.optimizer_state_bytes);
    const OptimizerStepCost& step = times.optimizer_step[instance.unique_id];
    l.optimizer_step_s = step.seconds;
    l.optimizer_step_energy = step.energy;
    l.activation_bytes = static_cast<double>(u.SavedBytes(mode));
    l.working_bytes = static_cast<double>(u.WorkingBytes(mode) + u.transient_bytes);
    l.step_working_bytes = static_cast<double>(u.step_working_bytes);
    l.expert_weight_bytes = expert_bytes[instance.unique_id];
    l.tensor_parallel = u.tensor_parallel;
    table.layers.push_back(l);
  }
  for (const auto& e : graph.edges) {
    table.edges.push_back({e.from, e.to, static_cast<double>(e.bytes), e.gather_group});
  }
  table.tied_gradient_bytes = TiedGradientBytes(graph, training);
  table.weight_replicas = graph.weight_replicas;
  table.expert_fold = graph.expert_fold;
  return table;
}

// The recompute modes of the run config, lightest first.
std::vector<RecomputeMode> Modes(const RunConfig& run) {
  std::vector<RecomputeMode> modes;
  for (RecomputeMode m : kRecomputeModes) {
    if (std::find(run.training.recompute.begin(), run.training.recompute.end(), m) !=
        run.training.recompute.end()) {
      modes.push_back(m);
    }
  }
  return modes;
}

// The DP input's cluster and training settings (layer tables are added by the caller) for a
// model whose weights take dtype_bytes per parameter.
PlacementProblem BaseProblem(const RunConfig& run, const ArchConfig& arch, std::int64_t dtype_bytes,
                             std::int64_t micro_batch, int virtual_stages) {
  PlacementProblem problem;
  problem.static_power_w = EnergyModel::StaticPowerW(arch);
  problem.num_accelerators = run.cluster.num_accelerators;
  problem.global_batch = run.training.global_batch;
  problem.micro_batch = micro_batch;
  problem.network = run.cluster.network;
  // An interleaved run's v = 1 plans are plain 1F1B.
  problem.schedule = run.training.pipeline_schedule == PipelineSchedule::kGPipe ? PipelineSchedule::kGPipe
                     : virtual_stages > 1 ? PipelineSchedule::kInterleaved
                                          : PipelineSchedule::k1F1B;
  problem.virtual_stages = virtual_stages;
  problem.bubble = run.training.bubble;
  problem.sends = run.training.pipeline_sends;
  problem.gradient_reduction_overlap = run.training.gradient_reduction_overlap;
  problem.hybrid_all_reduce = run.training.hybrid_all_reduce;
  problem.gradient_reduction_bytes_per_weight_byte =
      static_cast<double>(run.training.GradientReductionBytes()) / static_cast<double>(dtype_bytes);
  return problem;
}

// `arch`: the device with the HBM the plan was placed under.
PlanChoice MakeChoice(const PlacementPlan& plan, const PlacementProblem& problem, RecomputeMode mode,
                      const PreparedModel& model, const ArchConfig& arch, const RunConfig& run,
                      const CostModel& cost) {
  PlanChoice c;
  c.feasible = plan.feasible;
  c.reason = plan.reason;
  c.plan = plan;
  c.micro_batch = problem.micro_batch;
  c.recompute = mode;
  c.sharding = problem.sharding;
  if (problem.sharding != Sharding::kNone) {
    c.shard_replicas = ShardReplicas(problem, plan.tensor_parallel, plan.data_parallel);
  }
  c.precision = run.training.precision;
  c.hbm_gib = arch.HbmGiB();
  // An infeasible plan has no figures, except a fixed plan above the HBM (its figures are what it
  // would take if it fitted: priced too, for predict's report; it stays infeasible).
  if (!plan.feasible && !(plan.time_per_batch_s > 0)) return c;
  // Finite arithmetic (issue 44): a plan whose figures overflowed is no plan.
  if (!std::isfinite(plan.time_per_batch_s) || !(plan.time_per_batch_s > 0) ||
      !std::isfinite(plan.throughput_samples_per_s) || !std::isfinite(plan.energy.TotalJ())) {
    c.feasible = false;
    c.reason = "the plan's time or energy is not a finite positive number (its figures overflow "
               "double precision on architecture '" + arch.name + "')";
    return c;
  }
  c.tokens_per_s = plan.throughput_samples_per_s * static_cast<double>(model.sequence_length);
  c.mfu = c.tokens_per_s * model.flops_per_token /
          (static_cast<double>(problem.num_accelerators) * arch.PeakTensorFlopsPerS());
  const auto& layers = problem.widths.at(plan.tensor_parallel).layers;
  for (const auto& s : plan.stages) {
    c.stages.push_back({layers[s.first_layer].name, layers[s.last_layer].name,
                        s.last_layer - s.first_layer + 1, s.devices, s.load_s,
                        s.peak_memory_bytes});
  }
  PriceChoice(c, arch, run, cost);
  return c;
}

// Names the strategy `c` was found with: run.strategies[index], sliced as `graph` (its name), and
// the moe strategy's expert-parallel size at the plan's t when the model has `experts`
// (graph.HasExperts(), asked once per graph by the callers' loops).
void NameStrategy(PlanChoice& c, const RunConfig& run, int index, const LayerGraph& graph,
                  bool experts) {
  c.strategy = graph.strategy;
  c.strategy_index = index;
  const StrategyChoice& s = run.strategies.at(static_cast<std::size_t>(index));
  const bool moe = s.component.name == "moe" && !s.over && experts;
  const int t = static_cast<int>(c.plan.tensor_parallel);
  c.expert_parallel = moe ? ExpertParallelOf(s, t) : 0;
  c.expert_tensor_parallel = moe ? (SplitsExperts(s) ? t : 1) : 0;
}

// A fixed plan on `problem` (one of whose widths is `graph`'s), split at `strategy.stage_starts`
// or, when they are empty, as Megatron-LM splits it; infeasibility is a choice with the reason.
PlanChoice EvaluateFixed(const PlacementProblem& problem, const LayerGraph& graph,
                         FixedStrategy strategy, RecomputeMode mode, const PreparedModel& model,
                         const ArchConfig& device, const RunConfig& run, const CostModel& cost) {
  if (strategy.stage_starts.empty()) {
    std::string why;
    strategy.stage_starts = MegatronStageStarts(graph, strategy.pipeline_stages, &why);
    if (!why.empty()) {
      PlanChoice c;
      c.micro_batch = problem.micro_batch;
      c.recompute = mode;
      c.sharding = problem.sharding;
      c.hbm_gib = device.HbmGiB();
      c.reason = why;
      return c;
    }
  }
  return MakeChoice(PlacementSearch().Evaluate(problem, strategy), problem, mode, model, device,
                    run, cost);
}

// (micro-batch, strategy index) → (width → (graph, times))
using SlicedTimes = std::map<std::pair<std::int64_t, int>,
                             std::map<int, std::pair<const LayerGraph*, SliceTimes>>>;

}  // namespace

struct ModelBound::Times {
  SlicedTimes sliced;
};

namespace {

using SliceGroup = SlicedTimes::key_type;

// ScheduleSlice for every slice of the model, or only those of `group`.
SlicedTimes ScheduleSlices(const PreparedModel& model, std::span<const ArchConfig> archs,
                           const std::vector<RecomputeMode>& modes, const Estimator& estimator,
                           const Scheduler& scheduler, const Network& network, ModelEvaluation* ev,
                           bool lower_bounds, std::optional<SliceGroup> group = std::nullopt,
                           std::optional<std::int64_t> width = std::nullopt) {
  SlicedTimes sliced;
  for (const auto& slice : model.slices) {
    if (group && SliceGroup{slice.micro_batch, slice.strategy} != *group) continue;
    if (width && slice.width != *width) continue;
    sliced[{slice.micro_batch, slice.strategy}][static_cast<int>(slice.width)] = {
        &slice.graph,
        ScheduleSlice(model, slice, archs, modes, estimator, scheduler, network, ev, lower_bounds)};
  }
  return sliced;
}

// Keeps the first best choice offered to `slot`: micro_batch == 0 marks a slot not filled yet,
// and a later choice replaces it only when strictly better by `objective`.
void KeepBest(PlanChoice& slot, PlanChoice c, SearchObjective objective, std::int64_t accelerators) {
  if (slot.micro_batch == 0 ||
      ObjectiveValue(c, objective, accelerators) > ObjectiveValue(slot, objective, accelerators)) {
    slot = std::move(c);
  }
}

// A model's evaluation with no choice yet: one empty slot per HBM size.
ModelEvaluation NoChoices(const std::string& model, std::size_t hbm_sizes) {
  ModelEvaluation ev;
  ev.model = model;
  ev.best.reason = "not evaluated";
  ev.best_per_hbm.assign(hbm_sizes, ev.best);
  return ev;
}

// Why no plan on `arch` fits the run's power budget, when its static power alone is above it
// (every plan draws at least that: a bound, nothing solved); "" otherwise.
std::string StaticPowerRefusal(const RunConfig& run, const ArchConfig& arch) {
  const double static_w = EnergyModel::StaticPowerW(arch);
  if (!(run.arch.power_budget_w > 0 && static_w > run.arch.power_budget_w)) return "";
  return "static power " + FormatNumber("%.4g", static_w) +
         " W per device alone is above arch.power_budget_w " +
         FormatNumber("%.4g", run.arch.power_budget_w) + " W";
}

// Which choices PlaceAll makes: the DP's best plans, the expert plan (model.expert), or both.
enum class Slots { kBest, kBestAndExpert, kExpert };

// The DP for every micro-batch, recompute mode, v, sharding and HBM size of `sliced` (or of its
// group `only`), offered to ev.best and ev.best_per_hbm (one slot per HBM size), and the expert
// plan offered to ev.expert, as `slots` asks. Ties keep the earlier choice.
void PlaceAll(const RunConfig& run, const CostModel& cost, const PreparedModel& model,
              const ArchConfig& arch, const SlicedTimes& sliced,
              const std::vector<RecomputeMode>& modes, const std::vector<double>& hbm_list,
              Slots slots, bool bound, ModelEvaluation& ev, const SliceGroup* only = nullptr) {
  const std::vector<std::int64_t> vs = run.training.pipeline_schedule == PipelineSchedule::kInterleaved
                                           ? run.training.virtual_stages
                                           : std::vector<std::int64_t>{1};
  const PlacementSearch dp;
  // Plans are compared by the run's objective; a plan above the power budget is infeasible. A
  // `bound` (makespans that are lower bounds) compares throughputs only: its energies are exact
  // but its times are not, so its power is no bound.
  const SearchObjective objective = bound ? SearchObjective::kThroughput : run.search.objective;
  auto take = [&](PlanChoice& slot, PlanChoice c) {
    if (!bound && c.feasible && run.arch.power_budget_w > 0 && c.power_w > run.arch.power_budget_w) {
      c.feasible = false;
      c.reason = FormatNumber("%.4g", c.power_w) + " W per device, above arch.power_budget_w " +
                 FormatNumber("%.4g", run.arch.power_budget_w) + " W";
    }
    KeepBest(slot, std::move(c), objective, run.cluster.num_accelerators);
  };
  for (const auto& [key, widths] : sliced) {
    if (only && key != *only) continue;
    const auto [b, strategy] = key;
    const LayerGraph& graph = *widths.begin()->second.first;  // the group's name and experts
    const bool experts = graph.HasExperts();
    for (RecomputeMode mode : modes) {
      for (std::int64_t v : vs) {
        PlacementProblem problem =
            BaseProblem(run, arch, widths.begin()->second.first->dtype_bytes, b,
                        static_cast<int>(v));
        // A bound's placement: the DP is exact for min-max loads, not for their sum, so the
        // other stages' fill and drain (bubble `stages`) take a floor of the sum.
        if (bound && problem.bubble == PipelineBubble::kStages) {
          problem.bubble = PipelineBubble::kBound;
        }
        std::optional<bool> fp8_only;  // whether problem.widths keep FP8 weights only
        for (const auto& [sharding, group] : ShardingsOf(run.training)) {
          if (fp8_only != run.training.Fp8WeightsOnly(sharding)) {
            fp8_only = run.training.Fp8WeightsOnly(sharding);
            for (const auto& [t, entry] : widths) {
              problem.widths[t] =
                  MakeLayerTable(*entry.first, entry.second, mode, run.training, sharding);
            }
          }
          problem.sharding = sharding;
          problem.shard_span = ShardSpan(group, run.cluster.network);
          for (std::size_t h = 0; h < hbm_list.size(); ++h) {
            // Every HBM size of the sweep is a device of its own; the DP's limit is its HBM.
            const ArchConfig device = arch.WithHbmGiB(hbm_list[h]);
            problem.hbm_bytes = static_cast<double>(device.hbm_bytes);
            if (slots != Slots::kExpert) {
              PlanChoice c = MakeChoice(dp.Place(problem), problem, mode, model, device, run, cost);
              NameStrategy(c, run, strategy, graph, experts);
              c.shard_group = group;
              take(ev.best, c);
              take(ev.best_per_hbm[h], c);
            }
            if (slots != Slots::kBest && model.expert) {
              PlanRequest r;
              r.pipeline_stages = static_cast<int>(model.expert->pipeline_stages);
              r.data_parallel = static_cast<int>(model.expert->data_parallel);
              r.tensor_parallel = static_cast<int>(model.expert->tensor_parallel);
              PlanChoice x;
              x.micro_batch = b;
              x.recompute = mode;
              x.sharding = sharding;
              x.hbm_gib = device.HbmGiB();
              auto it = widths.find(r.tensor_parallel);
              if (it == widths.end()) {
                x.reason = "tensor-parallel width " + std::to_string(r.tensor_parallel) +
                           " is not among the evaluated widths";
              } else {
                x = EvaluateFixed(problem, *it->second.first,
                                  {r.pipeline_stages, r.data_parallel, r.tensor_parallel, {}}, mode,
                                  model, device, run, cost);
              }
              NameStrategy(x, run, strategy, graph, experts);
              x.shard_group = group;
              if (!ev.expert) ev.expert = PlanChoice{};
              take(*ev.expert, x);
            }
          }
        }
      }
    }
  }
}

SchedulerOptions SchedulerOptionsOf(const RunConfig& run) {
  SchedulerOptions o;
  o.solve = run.solver.Options();
  o.search_nodes = run.solver.search_nodes;
  o.max_exact_ops = static_cast<int>(run.solver.max_exact_ops);
  o.max_ilp_variables = static_cast<int>(run.solver.max_ilp_variables);
  return o;
}

}  // namespace

ModelEvaluator::ModelEvaluator(const RunConfig& run, std::shared_ptr<const Estimator> estimator,
                               std::shared_ptr<const SolverBackend> backend)
    : run_(run),
      cost_(run.cost.file.empty() ? CostModel::Default() : CostModel::LoadFile(run.cost.file)),
      estimator_(std::move(estimator)),
      backend_(std::move(backend)),
      scheduler_(backend_, SchedulerOptionsOf(run)) {}

double ModelEvaluator::ObjectiveBound(double throughput_bound, const ArchConfig& arch) const {
  // A device draws at least its static power, and an hour costs at least its price at that power
  // with the smallest HBM (HourlyUsd grows with both).
  const double static_w = EnergyModel::StaticPowerW(arch);
  switch (run_.search.objective) {
    case SearchObjective::kThroughput:
      break;
    case SearchObjective::kThroughputPerWatt:
      return throughput_bound / static_w;
    case SearchObjective::kThroughputPerCost: {
      const auto& hbm = run_.training.hbm_gib;
      const double hourly =
          cost_.HourlyUsd(arch.WithHbmGiB(*std::min_element(hbm.begin(), hbm.end())), static_w,
                          run_.cost.hourly_usd);
      // Not priced (a die no wafer holds): its score is 0.
      return hourly > 0 ? throughput_bound * 3600 /
                              (hourly * static_cast<double>(run_.cluster.num_accelerators))
                        : 0;
    }
  }
  return throughput_bound;
}

ModelEvaluation ModelEvaluator::Evaluate(const PreparedModel& model, const ArchConfig& arch,
                                         bool with_expert, GroupPruning pruning,
                                         ModelBound* own) const {
  const auto& hbm_list = run_.training.hbm_gib;
  ModelEvaluation ev = NoChoices(model.name, hbm_list.size());
  if (std::string why = StaticPowerRefusal(run_, arch); !why.empty()) {
    ev.best.reason = why;
    for (auto& c : ev.best_per_hbm) c.reason = why;
    return ev;
  }
  const std::vector<RecomputeMode> modes = Modes(run_);
  const SearchObjective objective = run_.search.objective;
  const std::int64_t accelerators = run_.cluster.num_accelerators;
  const std::span<const ArchConfig> archs(&arch, 1);
  const CachedEstimator estimator(estimator_);  // estimates shared by every schedule below
  auto since = [](std::chrono::steady_clock::time_point t0, double& seconds) {
    seconds += Seconds(t0);
  };

  // Branch and bound over the groups of slices the DP chooses among at once — a micro-batch size
  // and strategy, with every width, recompute mode, v, sharding and HBM size. The slots to fill
  // are the best plan per HBM size and, with_expert, the expert plan. A group's plans are bounded
  // by the DP (and the expert plan) on the scheduler's cheap lower bounds, per slot: the time per
  // batch never decreases when a layer's time grows (ModelBound's placement tier). The groups
  // are scheduled exactly in decreasing order of their bounds, and a group is left out when in
  // every slot its bound is below the best plan found so far, or its lower bounds fit no plan.
  // The choices are those of scheduling every group: a group left out has no plan as good as the
  // best in any slot (so, ties going to the earlier choice, none it would have kept), and where
  // it fits no plan its choice on the bounds is the one it would give — whether a plan fits
  // depends on memory only, and an unfit plan carries no times.
  const bool expert = with_expert && model.expert;
  const Slots slot_kinds = with_expert ? Slots::kBestAndExpert : Slots::kBest;
  auto filled = [&](const ModelEvaluation& e) {
    std::vector<const PlanChoice*> s;
    for (const PlanChoice& c : e.best_per_hbm) s.push_back(&c);
    if (expert) s.push_back(e.expert ? &*e.expert : nullptr);
    return s;
  };
  // Per group, in the DP's order: its choices, and whether it was left out (they are then its
  // choices on the bounds).
  std::map<SliceGroup, std::pair<ModelEvaluation, bool>> offered;
  try {
    auto t0 = std::chrono::steady_clock::now();
    SlicedTimes lower;
    if (own && !own->family_ && own->model_ == &model && own->times_ &&
        own->archs_.front().name == arch.name) {
      lower = std::move(own->times_->sliced);  // the same ScheduleSlices, made by the bound
      own->times_.reset();
    } else {
      lower = ScheduleSlices(model, archs, modes, estimator, scheduler_, run_.cluster.network,
                             nullptr, /*lower_bounds=*/true);
    }
    since(t0, ev.schedule_seconds);
    t0 = std::chrono::steady_clock::now();
    std::vector<std::pair<SliceGroup, ModelEvaluation>> groups;  // in the DP's order
    std::vector<std::vector<double>> bounds;  // per group and slot: the objective's bound
    while (!lower.empty()) {
      SlicedTimes one;
      one.insert(lower.extract(lower.begin()));
      ModelEvaluation b = NoChoices(model.name, hbm_list.size());
      PlaceAll(run_, cost_, model, arch, one, modes, hbm_list, slot_kinds, /*bound=*/true, b);
      bounds.emplace_back();
      for (const PlanChoice* c : filled(b)) {  // +∞: no choice, or a plan whose figures overflow
        bounds.back().push_back(!c || (!c->feasible && c->plan.feasible)
                                    ? std::numeric_limits<double>::infinity()
                                    : ObjectiveBound(c->Throughput(), arch));
      }
      groups.push_back({one.begin()->first, std::move(b)});
    }
    since(t0, ev.placement_seconds);
    std::vector<std::size_t> order(groups.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      return *std::max_element(bounds[a].begin(), bounds[a].end()) >
             *std::max_element(bounds[b].begin(), bounds[b].end());
    });
    std::vector<double> best(bounds.empty() ? 0 : bounds.front().size(), 0);  // per slot, so far
    for (std::size_t k : order) {
      auto& [group, on_bounds] = groups[k];
      const auto bounded = filled(on_bounds);
      bool needed = pruning == GroupPruning::kNone;
      for (std::size_t i = 0; i < best.size() && !needed; ++i) {
        needed |= (!bounded[i] || bounded[i]->plan.feasible) && !(bounds[k][i] < best[i]);
      }
      if (!needed) {
        offered.emplace(group, std::make_pair(std::move(on_bounds), true));
        continue;
      }
      t0 = std::chrono::steady_clock::now();
      const SlicedTimes exact = ScheduleSlices(model, archs, modes, estimator, scheduler_,
                                               run_.cluster.network, &ev, false, group);
      since(t0, ev.schedule_seconds);
      t0 = std::chrono::steady_clock::now();
      ModelEvaluation& choices =
          (offered[group] = {NoChoices(model.name, hbm_list.size()), false}).first;
      PlaceAll(run_, cost_, model, arch, exact, modes, hbm_list, slot_kinds, false, choices);
      since(t0, ev.placement_seconds);
      const auto solved = filled(choices);
      for (std::size_t i = 0; i < best.size(); ++i) {
        if (solved[i]) best[i] = std::max(best[i], ObjectiveValue(*solved[i], objective, accelerators));
      }
    }
  } catch (const UnsupportedOpError& e) {
    ev.best.reason = std::string("the estimator cannot cost an op: ") + e.what();
    for (auto& c : ev.best_per_hbm) c.reason = ev.best.reason;
    return ev;
  }
  // The groups' choices offered in the DP's order, as one PlaceAll over every group would; a
  // group left out offers only the choices that fit no plan.
  auto offer = [&](const ModelEvaluation& g, bool unfit_only) {
    auto keep = [&](PlanChoice& slot, const PlanChoice& c) {
      if (!unfit_only || !c.plan.feasible) KeepBest(slot, c, objective, accelerators);
    };
    keep(ev.best, g.best);
    for (std::size_t h = 0; h < hbm_list.size(); ++h) keep(ev.best_per_hbm[h], g.best_per_hbm[h]);
    if (g.expert) {
      if (!ev.expert) ev.expert = PlanChoice{};
      keep(*ev.expert, *g.expert);
    }
  };
  for (const auto& [group, choices] : offered) offer(choices.first, choices.second);
  ev.score = ObjectiveValue(ev.best, objective, accelerators);
  return ev;
}

std::optional<PlanChoice> ModelEvaluator::EvaluateExpert(const PreparedModel& model,
                                                         const ArchConfig& arch) const {
  // As Evaluate: none above the power budget on static power alone, none when an op cannot be
  // costed.
  if (!model.expert || !StaticPowerRefusal(run_, arch).empty()) return std::nullopt;
  ModelEvaluation ev = NoChoices(model.name, run_.training.hbm_gib.size());
  const std::vector<RecomputeMode> modes = Modes(run_);
  const CachedEstimator estimator(estimator_);
  // Every group's slices at the expert's width, exactly, as Evaluate schedules a group it keeps
  // (a group it leaves out offers the expert choice it would have given: the same choice). A
  // width no slice has: every slice, for the choices that say so.
  const std::int64_t expert_width = model.expert->tensor_parallel;
  std::optional<std::int64_t> width;
  if (std::any_of(model.slices.begin(), model.slices.end(),
                  [&](const auto& slice) { return slice.width == expert_width; })) {
    width = expert_width;
  }
  try {
    const SlicedTimes exact =
        ScheduleSlices(model, std::span(&arch, 1), modes, estimator, scheduler_,
                       run_.cluster.network, &ev, false, std::nullopt, width);
    PlaceAll(run_, cost_, model, arch, exact, modes, run_.training.hbm_gib, Slots::kExpert, false,
             ev);
  } catch (const UnsupportedOpError&) {
    return std::nullopt;
  }
  if (!ev.expert) return std::nullopt;
  return *ev.expert;
}

ModelBound ModelEvaluator::Bound(const PreparedModel& model, std::vector<ArchConfig> archs) const {
  if (archs.empty()) throw InvalidArgumentError("ModelEvaluator::Bound: no architecture");
  ModelBound bound;
  bound.evaluator_ = this;
  bound.model_ = &model;
  bound.family_ = archs.size() > 1;
  bound.archs_ = std::move(archs);
  return bound;
}

ModelBound::ModelBound() = default;
ModelBound::~ModelBound() = default;
ModelBound::ModelBound(ModelBound&&) noexcept = default;
ModelBound& ModelBound::operator=(ModelBound&&) noexcept = default;

namespace {

// Another estimator's lower bounds as its estimates (Estimator::EstimateLowerBound).
class LowerBoundEstimator : public Estimator {
 public:
  explicit LowerBoundEstimator(std::shared_ptr<const Estimator> inner)
      : inner_(std::move(inner)) {}
  OpEstimate Estimate(const OpWork& op, const ArchConfig& arch, Pass pass) const override {
    return inner_->EstimateLowerBound(op, arch, pass);
  }

 private:
  std::shared_ptr<const Estimator> inner_;
};

}  // namespace

const ModelBound::Times* ModelBound::LowerBoundTimes() {
  if (!scheduled_) {
    scheduled_ = true;
    const RunConfig& run = evaluator_->run_;
    // A family's ops at the estimator's lower bounds (each member's exact estimates are what the
    // family bound exists to avoid; not memoised here: most are asked once, and an estimator
    // with a costly bound keeps its own memo); one config's at its exact estimates (tighter, and
    // its evaluation needs them anyway).
    const LowerBoundEstimator floors(evaluator_->estimator_);
    const CachedEstimator cached(evaluator_->estimator_);
    const Estimator& estimator = archs_.size() > 1 ? static_cast<const Estimator&>(floors) : cached;
    try {
      times_ = std::make_unique<Times>();
      times_->sliced = ScheduleSlices(*model_, archs_, Modes(run), estimator,
                                      evaluator_->scheduler_, run.cluster.network, nullptr,
                                      /*lower_bounds=*/true);
    } catch (const UnsupportedOpError&) {
      times_.reset();  // Evaluate says why there is no plan
    }
    // Only the first is needed from now on (Refine's DP prices its plans on it); a family's
    // copies, each with its calibration and energy tables, are most of what a bound held.
    archs_.erase(archs_.begin() + 1, archs_.end());
    archs_.shrink_to_fit();
  }
  return times_.get();
}

double ModelBound::Compute() {
  constexpr double kNoBound = std::numeric_limits<double>::infinity();
  if (compute_) return *compute_;
  compute_ = kNoBound;
  const Times* times = LowerBoundTimes();
  if (!times) return *compute_;
  const RunConfig& run = evaluator_->run_;
  // Header comment: global_batch·K / (B·W) with W the device-seconds of one micro-batch; per group
  // of slices, then the largest. +∞ for every group when it does not apply.
  std::vector<double> groups;
  for (const auto& [key, widths] : times->sliced) {
    const std::int64_t b = key.first;
    const double B = static_cast<double>(run.training.global_batch / b);
    double best = 0;
    for (const auto& [t, entry] : widths) {
      const LayerGraph& g = *entry.first;
      const SliceTimes& slice = entry.second;
      // Only a chain of layers runs its layers one after another inside a stage.
      if (!LayersFormChain(g.layers.size(), g.edges)) best = kNoBound;
      for (const auto& [mode, recompute] : slice.recompute) {
        double work = 0;
        for (const auto& instance : g.layers) {
          const UniqueLayer& u = g.unique_layers.at(instance.unique_id);
          const std::size_t k = static_cast<std::size_t>(instance.unique_id);
          const double devices = u.tensor_parallel ? static_cast<double>(t) : 1.0;
          work += devices * (slice.forward[k] + slice.backward[k] + recompute[k]);
        }
        best = work > 0 ? std::max(best, static_cast<double>(run.training.global_batch) *
                                             static_cast<double>(run.cluster.num_accelerators) /
                                             (B * work))
                        : kNoBound;
      }
    }
    groups.push_back(best);
  }
  group_compute_ = groups;
  group_placement_.assign(groups.size(), std::nullopt);
  compute_ = groups.empty() ? 0 : *std::max_element(groups.begin(), groups.end());
  return *compute_;
}

double ModelBound::Current() {
  Compute();
  if (group_compute_.empty()) return *compute_;  // no times (+∞) or no groups
  double bound = 0;
  for (std::size_t g = 0; g < group_compute_.size(); ++g) {
    bound = std::max(bound, group_placement_[g] ? std::min(group_compute_[g], *group_placement_[g])
                                                : group_compute_[g]);
  }
  return bound;
}

bool ModelBound::Refine() {
  Compute();
  if (group_compute_.empty()) return false;
  // The group with the largest bound so far (ties: the first).
  std::size_t top = 0;
  double top_bound = -1;
  for (std::size_t g = 0; g < group_compute_.size(); ++g) {
    const double b = group_placement_[g] ? std::min(group_compute_[g], *group_placement_[g])
                                         : group_compute_[g];
    if (b > top_bound) {
      top = g;
      top_bound = b;
    }
  }
  if (group_placement_[top]) return false;  // its DP has run: Current() is the placement tier
  // The DP itself on the lower bounds, at the largest HBM only (a larger HBM only admits more
  // plans).
  const RunConfig& run = evaluator_->run_;
  const auto& hbm = run.training.hbm_gib;
  const Times* times = LowerBoundTimes();
  const SliceGroup group = std::next(times->sliced.begin(), static_cast<std::ptrdiff_t>(top))->first;
  ModelEvaluation ev = NoChoices(model_->name, 1);
  PlaceAll(run, evaluator_->cost_, *model_, archs_.front(), times->sliced, Modes(run),
           {*std::max_element(hbm.begin(), hbm.end())}, Slots::kBest, /*bound=*/true, ev, &group);
  group_placement_[top] = ev.best.Throughput();
  if (family_ && std::all_of(group_placement_.begin(), group_placement_.end(),
                             [](const auto& p) { return p.has_value(); })) {
    times_.reset();  // every group refined: a family's makespans are no longer needed
  }
  return true;
}

double ModelBound::Placement() {
  while (Refine()) {
  }
  return Current();
}

double ModelEvaluator::UpperBound(const PreparedModel& model, const ArchConfig& arch,
                                  BoundTier tier) const {
  ModelBound bound = Bound(model, {arch});
  return ObjectiveBound(tier == BoundTier::kCompute ? bound.Compute() : bound.Placement(), arch);
}

PlanChoice ModelEvaluator::EvaluatePlan(const PreparedModel& model, const ArchConfig& arch,
                                        const PlanRequest& r) const {
  return EvaluatePlans(model, arch, {r}).front();
}

std::vector<PlanChoice> ModelEvaluator::EvaluatePlans(
    const PreparedModel& model, const ArchConfig& arch,
    const std::vector<PlanRequest>& requests) const {
  const CachedEstimator estimator(estimator_);
  // The layer table of each (slice, recompute mode, FP8 weights only) the requests use; each
  // (slice, recompute mode) scheduled once.
  std::map<std::tuple<const PreparedModel::Slice*, RecomputeMode, bool>, LayerTable> tables;
  std::map<std::pair<const PreparedModel::Slice*, RecomputeMode>, SliceTimes> scheduled;
  std::vector<PlanChoice> choices;
  choices.reserve(requests.size());
  for (const PlanRequest& r : requests) {
    const PreparedModel::Slice* slice =
        model.FindSlice(r.micro_batch, r.tensor_parallel, r.strategy);
    if (!slice) {
      throw InvalidArgumentError(model.name + ": no slice for micro-batch " +
                                 std::to_string(r.micro_batch) + ", tensor-parallel width " +
                                 std::to_string(r.tensor_parallel) +
                                 (model.refused.empty() ? "" : " (" + model.refused.front() + ")"));
    }
    const bool fp8_only = run_.training.Fp8WeightsOnly(r.sharding);
    auto table = tables.find({slice, r.recompute, fp8_only});
    if (table == tables.end()) {
      auto times = scheduled.find({slice, r.recompute});
      if (times == scheduled.end()) {
        times = scheduled
                    .emplace(std::make_pair(slice, r.recompute),
                             ScheduleSlice(model, *slice, std::span(&arch, 1), {r.recompute},
                                           estimator, scheduler_, run_.cluster.network, nullptr,
                                           /*lower_bounds=*/false))
                    .first;
      }
      table = tables
                  .emplace(std::make_tuple(slice, r.recompute, fp8_only),
                           MakeLayerTable(slice->graph, times->second, r.recompute, run_.training,
                                          r.sharding))
                  .first;
    }
    PlacementProblem problem =
        BaseProblem(run_, arch, slice->graph.dtype_bytes, r.micro_batch, r.virtual_stages);
    problem.widths[r.tensor_parallel] = table->second;
    problem.hbm_bytes = static_cast<double>(arch.hbm_bytes);  // the device's own
    problem.sharding = r.sharding;
    problem.shard_span = ShardSpan(r.shard_group, run_.cluster.network);
    PlanChoice c = EvaluateFixed(problem, slice->graph,
                                 {r.pipeline_stages, r.data_parallel, r.tensor_parallel,
                                  r.stage_starts},
                                 r.recompute, model, arch, run_, cost_);
    NameStrategy(c, run_, r.strategy, slice->graph, slice->graph.HasExperts());
    c.shard_group = r.sharding != Sharding::kNone ? r.shard_group : kShardOverAll;
    choices.push_back(std::move(c));
  }
  return choices;
}

std::int64_t ShardReplicasOf(const PlanRequest& plan, const Network& network) {
  StepSettings settings;
  settings.sharding = plan.sharding;
  settings.shard_span = ShardSpan(plan.shard_group, network);
  return ShardReplicas(settings, plan.tensor_parallel, plan.data_parallel);
}

std::vector<int> MegatronStageStarts(const LayerGraph& graph, int p, std::string* reason) {
  std::vector<int> blocks;
  for (std::size_t i = 0; i < graph.layers.size(); ++i) {
    if (graph.unique_layers.at(graph.layers[i].unique_id).kind == LayerKind::kBlock) {
      blocks.push_back(static_cast<int>(i));
    }
  }
  const int n = static_cast<int>(graph.layers.size());
  const bool megatron = !blocks.empty() && blocks.front() >= 0 && blocks.back() < n &&
                        blocks.back() - blocks.front() + 1 == static_cast<int>(blocks.size());
  std::vector<int> starts;
  if (!megatron) {  // the even split of every layer
    for (int k = 0, i = 0; k + 1 < p; ++k) {
      i += n / p + (k < n % p ? 1 : 0);
      starts.push_back(i);
    }
    return starts;
  }
  const int count = static_cast<int>(blocks.size());
  if (p > count) {
    *reason = std::to_string(p) + " pipeline stages for " + std::to_string(count) +
              " transformer blocks";
    return {};
  }
  for (int k = 0, i = 0; k + 1 < p; ++k) {
    i += count / p + (k < count % p ? 1 : 0);
    starts.push_back(blocks[static_cast<std::size_t>(i)]);
  }
  return starts;
}

ScheduleResult ModelEvaluator::ScheduleLayer(const PreparedModel& model, const ArchConfig& arch,
                                             std::int64_t micro_batch, std::int64_t width,
                                             int strategy, const std::string& layer, Pass pass,
                                             ScheduleProblem* problem) const {
  const PreparedModel::Slice* slice = model.FindSlice(micro_batch, width, strategy);
  if (!slice) {
    throw InvalidArgumentError(model.name + ": no slice for micro-batch " +
                               std::to_string(micro_batch) + ", width " + std::to_string(width) +
                               ", strategy " + std::to_string(strategy));
  }
  for (const auto& u : slice->graph.unique_layers) {
    if (u.name != layer) continue;
    *problem = BuildScheduleProblem(PassGraph(u, pass), pass, *estimator_, arch,
                                    run_.cluster.network, model.name + "/" + u.name);
    return scheduler_.Solve(*problem);
  }
  throw InvalidArgumentError(model.name + ": no unique layer '" + layer + "'");
}

}  // namespace phaze
