#include "phaze/search/model_evaluator.hpp"

#include <algorithm>
#include <chrono>
#include <map>

#include "phaze/core/error.hpp"
#include "phaze/estimate/estimate_cache.hpp"
#include "phaze/graph/graph_builder.hpp"
#include "phaze/schedule/layer_schedule.hpp"

namespace phaze {
namespace {

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

// The per-layer figures the DP needs, for one slice, from the makespans of its unique layers.
LayerTable MakeLayerTable(const LayerGraph& graph, const std::vector<double>& forward,
                          const std::vector<double>& backward,
                          const std::vector<double>& recompute) {
  LayerTable table;
  for (const auto& instance : graph.layers) {
    const UniqueLayer& u = graph.unique_layers.at(instance.unique_id);
    PlacementLayer l;
    l.name = instance.name;
    l.forward_s = forward[instance.unique_id];
    l.backward_s = backward[instance.unique_id];
    l.recompute_forward_s = recompute[instance.unique_id];
    l.weight_bytes = static_cast<double>(u.weight_bytes);
    l.gradient_bytes = static_cast<double>(u.gradient_bytes);
    l.optimizer_state_bytes = static_cast<double>(u.optimizer_state_bytes);
    l.activation_bytes = static_cast<double>(u.activation_bytes);
    l.tensor_parallel = u.tensor_parallel;
    table.layers.push_back(l);
  }
  for (const auto& e : graph.edges) {
    table.edges.push_back({e.from, e.to, static_cast<double>(e.bytes)});
  }
  return table;
}

PlanChoice MakeChoice(const PlacementPlan& plan, const PlacementProblem& problem, double hbm_gib,
                      const PreparedModel& model, const ArchConfig& arch) {
  PlanChoice c;
  c.feasible = plan.feasible;
  c.reason = plan.reason;
  c.plan = plan;
  c.micro_batch = problem.micro_batch;
  c.recompute = problem.recompute;
  c.hbm_gib = hbm_gib;
  if (!plan.feasible) return c;
  c.tokens_per_s = plan.throughput_samples_per_s * static_cast<double>(model.sequence_length);
  c.mfu = c.tokens_per_s * model.flops_per_token /
          (static_cast<double>(problem.num_accelerators) * arch.PeakTensorFlopsPerS());
  const auto& layers = problem.widths.at(plan.tensor_parallel).layers;
  for (const auto& s : plan.stages) {
    c.stages.push_back({layers[s.first_layer].name, layers[s.last_layer].name,
                        s.last_layer - s.first_layer + 1, s.devices, s.load_s,
                        s.peak_memory_bytes});
  }
  return c;
}

}  // namespace

PreparedModel PreparedModel::WithoutSlices() const {
  PreparedModel m;
  m.name = name;
  m.file = file;
  m.weight = weight;
  m.expert = expert;
  m.presets = presets;
  m.sequence_length = sequence_length;
  m.parameters = parameters;
  m.flops_per_token = flops_per_token;
  m.refused = refused;
  return m;
}

const PreparedModel::Slice* PreparedModel::FindSlice(std::int64_t micro_batch,
                                                     std::int64_t width) const {
  for (const auto& s : slices) {
    if (s.micro_batch == micro_batch && s.width == width) return &s;
  }
  return nullptr;
}

PreparedModel PrepareModel(const ModelEntry& entry, const RunConfig& run,
                           const ParallelismStrategy& strategy) {
  const ModelSpec spec = LoadModelSpec(entry.resolved);
  PreparedModel m;
  m.name = spec.name;
  m.file = entry.file;
  m.weight = entry.weight;
  m.expert = entry.expert;
  m.presets = entry.presets;
  std::vector<std::int64_t> micro_batches = run.training.micro_batches;
  std::sort(micro_batches.begin(), micro_batches.end());
  std::vector<std::int64_t> widths = run.training.tensor_parallel_widths;
  std::sort(widths.begin(), widths.end());
  for (std::int64_t b : micro_batches) {
    GraphOptions options;
    options.micro_batch = b;
    options.fusion = false;
    options.optimizer = OptimizerSpec::Named(run.training.optimizer);
    LayerGraph full;
    try {
      full = BuildLayerGraph(spec, options);
    } catch (const InvalidArgumentError& e) {
      throw ConfigError(run.source + ": model " + entry.file + ", micro-batch " +
                        std::to_string(b) + ": " + e.what());
    }
    if (m.sequence_length == 0) {
      m.sequence_length = full.sequence_length;
      m.parameters = full.Parameters();
      m.flops_per_token = static_cast<double>(full.ForwardFlops() + full.BackwardFlops()) /
                          static_cast<double>(b * full.sequence_length);
    }
    const auto supported = SupportedWidths(strategy, full, widths);
    for (std::int64_t w : widths) {
      if (std::find(supported.begin(), supported.end(), w) != supported.end()) {
        m.slices.push_back({b, w, SliceLayerGraph(strategy, run.strategy.name, full, w, true)});
      } else if (b == micro_batches.front()) {
        m.refused.push_back("t=" + std::to_string(w) + ": " + strategy.Refusal(full, w));
      }
    }
  }
  if (m.slices.empty()) {
    throw ConfigError(run.source + ": model " + entry.file + ": the strategy '" +
                      run.strategy.name + "' supports none of the tensor-parallel widths " +
                      "(" + (m.refused.empty() ? std::string() : m.refused.front()) + ")");
  }
  return m;
}

ModelEvaluator::ModelEvaluator(const RunConfig& run, std::shared_ptr<const Estimator> estimator,
                               std::shared_ptr<const SolverBackend> backend)
    : run_(run), estimator_(std::move(estimator)), backend_(std::move(backend)) {
  scheduler_options_.solve = run.solver.Options();
  scheduler_options_.search_nodes = run.solver.search_nodes;
  cluster_.num_accelerators = run.cluster.num_accelerators;
  cluster_.link_bandwidth_bytes_per_s = run.cluster.link_bandwidth_bytes_per_s;
  cluster_.link_latency_s = run.cluster.link_latency_s;
}

ModelEvaluation ModelEvaluator::Evaluate(const PreparedModel& model, const ArchConfig& arch,
                                         bool with_expert) const {
  ModelEvaluation ev;
  ev.model = model.name;
  ev.best.reason = "not evaluated";
  const auto& hbm_list = run_.training.hbm_gib;
  ev.best_per_hbm.resize(hbm_list.size(), ev.best);
  const bool any_recompute = std::find(run_.training.recompute.begin(),
                                       run_.training.recompute.end(),
                                       true) != run_.training.recompute.end();

  // Schedules of every unique layer slice and pass; estimates shared through one cache.
  const auto t0 = std::chrono::steady_clock::now();
  const CachedEstimator estimator(estimator_);
  const Scheduler scheduler(backend_, scheduler_options_);
  std::map<std::int64_t, PlacementProblem> problems;  // micro-batch → DP input
  try {
    for (const auto& slice : model.slices) {
      const LayerGraph& g = slice.graph;
      const std::size_t n = g.unique_layers.size();
      std::vector<double> fw(n), bw(n), rc(n);
      for (std::size_t k = 0; k < n; ++k) {
        const UniqueLayer& u = g.unique_layers[k];
        for (Pass pass : {Pass::kForward, Pass::kBackward, Pass::kRecompute}) {
          if (pass == Pass::kRecompute && !any_recompute) continue;
          const ScheduleProblem p = BuildScheduleProblem(
              PassGraph(u, pass), pass, estimator, arch, cluster_, model.name + "/" + u.name);
          const ScheduleResult r = scheduler.Solve(p);
          (pass == Pass::kForward ? fw : pass == Pass::kBackward ? bw : rc)[k] = r.makespan_s;
          (r.stats.path == "ilp" ? ev.ilp_answers : ev.fast_answers) += 1;
          ev.max_gap = std::max(ev.max_gap, r.stats.gap);
          ev.schedules.push_back({slice.micro_batch, slice.width, u.name, pass, r.makespan_s,
                                  p.SequentialMakespan(), r.stats.path, r.stats.status,
                                  r.stats.gap});
        }
        if (!any_recompute) rc[k] = fw[k];
      }
      PlacementProblem& problem = problems[slice.micro_batch];
      problem.widths[static_cast<int>(slice.width)] = MakeLayerTable(g, fw, bw, rc);
    }
  } catch (const UnsupportedOpError& e) {
    ev.best.reason = std::string("the estimator cannot cost an op: ") + e.what();
    for (auto& c : ev.best_per_hbm) c.reason = ev.best.reason;
    ev.schedule_seconds = Seconds(t0);
    return ev;
  }
  ev.schedule_seconds = Seconds(t0);

  // The DP for every micro-batch, recompute setting and HBM size. Ties keep the earlier choice.
  const auto t1 = std::chrono::steady_clock::now();
  const PlacementSearch dp;
  // micro_batch == 0 marks a slot not filled yet.
  auto take = [](PlanChoice& slot, const PlanChoice& c) {
    if (slot.micro_batch == 0 || c.BetterThan(slot)) slot = c;
  };
  for (auto& [b, problem] : problems) {
    problem.num_accelerators = run_.cluster.num_accelerators;
    problem.global_batch = run_.training.global_batch;
    problem.micro_batch = b;
    problem.link_bandwidth_bytes_per_s = run_.cluster.link_bandwidth_bytes_per_s;
    for (bool recompute : {false, true}) {
      if (std::find(run_.training.recompute.begin(), run_.training.recompute.end(), recompute) ==
          run_.training.recompute.end()) {
        continue;
      }
      problem.recompute = recompute;
      for (std::size_t h = 0; h < hbm_list.size(); ++h) {
        problem.hbm_bytes = hbm_list[h] * 1073741824.0;
        const PlanChoice c = MakeChoice(dp.Place(problem), problem, hbm_list[h], model, arch);
        take(ev.best, c);
        take(ev.best_per_hbm[h], c);
        if (with_expert && model.expert) {
          const FixedStrategy fixed{static_cast<int>(model.expert->pipeline_stages),
                                    static_cast<int>(model.expert->data_parallel),
                                    static_cast<int>(model.expert->tensor_parallel)};
          PlanChoice x;
          if (problem.widths.count(fixed.tensor_parallel)) {
            x = MakeChoice(dp.Evaluate(problem, fixed), problem, hbm_list[h], model, arch);
          } else {
            x.micro_batch = b;
            x.reason = "tensor-parallel width " + std::to_string(fixed.tensor_parallel) +
                       " is not among the evaluated widths";
          }
          if (!ev.expert) ev.expert = PlanChoice{};
          take(*ev.expert, x);
        }
      }
    }
  }
  ev.placement_seconds = Seconds(t1);
  return ev;
}

ScheduleResult ModelEvaluator::ScheduleLayer(const PreparedModel& model, const ArchConfig& arch,
                                             std::int64_t micro_batch, std::int64_t width,
                                             const std::string& layer, Pass pass,
                                             ScheduleProblem* problem) const {
  const PreparedModel::Slice* slice = model.FindSlice(micro_batch, width);
  if (!slice) {
    throw InvalidArgumentError(model.name + ": no slice for micro-batch " +
                               std::to_string(micro_batch) + ", width " + std::to_string(width));
  }
  for (const auto& u : slice->graph.unique_layers) {
    if (u.name != layer) continue;
    *problem = BuildScheduleProblem(PassGraph(u, pass), pass, *estimator_, arch, cluster_,
                                    model.name + "/" + u.name);
    return Scheduler(backend_, scheduler_options_).Solve(*problem);
  }
  throw InvalidArgumentError(model.name + ": no unique layer '" + layer + "'");
}

}  // namespace phaze
