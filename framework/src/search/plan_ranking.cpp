#include "phaze/search/plan_ranking.hpp"

#include <algorithm>

namespace phaze {

int PipelineUnits(const LayerGraph& graph) {
  int blocks = 0;
  for (const auto& l : graph.layers) {
    blocks += graph.unique_layers.at(l.unique_id).kind == LayerKind::kBlock ? 1 : 0;
  }
  return blocks > 0 ? blocks : static_cast<int>(graph.layers.size());
}

std::vector<PlanRequest> LaunchablePlans(const PreparedModel& model, const RunConfig& run) {
  const std::int64_t K = run.cluster.num_accelerators;
  const std::int64_t batch = run.training.global_batch;
  std::vector<std::int64_t> vs = {1};
  if (run.training.pipeline_schedule != PipelineSchedule::kGPipe) {
    for (std::int64_t v : run.training.virtual_stages) vs.push_back(v);
  }
  std::vector<std::int64_t> micro_batches = run.training.micro_batches;
  std::sort(micro_batches.begin(), micro_batches.end());
  std::vector<PlanRequest> plans;
  for (int strategy = 0; strategy < static_cast<int>(run.strategies.size()); ++strategy) {
    std::vector<std::int64_t> widths = run.training.tensor_parallel_widths;
    std::sort(widths.begin(), widths.end());
    for (std::int64_t t : widths) {
      for (int p = 1; t * p <= K; ++p) {
        if (K % (t * p) != 0) continue;
        const std::int64_t d = K / (t * p);
        for (std::int64_t b : micro_batches) {
          const PreparedModel::Slice* slice = model.FindSlice(b, t, strategy);
          if (!slice || batch % (b * d) != 0) continue;
          const int units = PipelineUnits(slice->graph);
          if (p > units || units % p != 0) continue;
          const std::int64_t per_replica = batch / (b * d);
          const std::int64_t replicas = slice->graph.weight_replicas;
          // Experts folded over j replicas: j divides d, without context parallelism's weight
          // replicas (PlacementSearch refuses those).
          const std::int64_t fold = slice->graph.expert_fold;
          if (d % fold != 0 || (fold > 1 && replicas > 1)) continue;
          for (std::int64_t v : vs) {
            if (v > 1 && (p < 2 || units % (p * v) != 0 || per_replica % p != 0)) continue;
            for (RecomputeMode mode : run.training.recompute) {
              std::vector<std::pair<Sharding, std::int64_t>> shards;  // (sharding, h) taken
              for (const auto& [sharding, group] : ShardingsOf(run.training)) {
                if (sharding >= Sharding::kGradients && p > 1) continue;
                PlanRequest r;
                r.tensor_parallel = static_cast<int>(t);
                r.data_parallel = static_cast<int>(d);
                r.sharding = sharding;
                r.shard_group = group;
                const std::int64_t h = ShardReplicasOf(r, run.cluster.network);
                if (sharding != Sharding::kNone && h * replicas < 2) continue;
                // Two groups that divide over the same replicas here are one plan.
                const std::pair<Sharding, std::int64_t> key{sharding, h};
                if (std::find(shards.begin(), shards.end(), key) != shards.end()) continue;
                shards.push_back(key);
                r.strategy = strategy;
                r.pipeline_stages = p;
                r.virtual_stages = static_cast<int>(v);
                r.micro_batch = b;
                r.recompute = mode;
                plans.push_back(r);
              }
            }
          }
        }
      }
    }
  }
  return plans;
}

std::string WhyNoLaunchablePlan(const PreparedModel& model, const RunConfig& run) {
  if (!LaunchablePlans(model, run).empty()) return "";
  const std::int64_t K = run.cluster.num_accelerators;
  const std::int64_t batch = run.training.global_batch;
  std::vector<std::int64_t> widths;  // the widths some strategy sliced the model at
  for (const auto& slice : model.slices) {
    if (std::find(widths.begin(), widths.end(), slice.width) == widths.end()) {
      widths.push_back(slice.width);
    }
  }
  std::sort(widths.begin(), widths.end());
  const std::string head = "no launchable plan for " + std::to_string(K) +
                           " accelerators and global batch " + std::to_string(batch) + ": ";
  if (widths.empty()) {
    std::string refused;  // each strategy's reason at each width, once
    for (const std::string& r : model.refused) {
      if (refused.find(r) == std::string::npos) refused += (refused.empty() ? "" : "; ") + r;
    }
    return head + "no strategy could slice " + model.name +
           (refused.empty() ? "" : " at the widths asked (" + refused + ")");
  }
  std::string list;
  for (std::int64_t b : run.training.micro_batches) {
    list += (list.empty() ? "" : ",") + std::to_string(b);
  }
  std::string why;
  int shapes = 0;
  for (std::int64_t t : widths) {
    int units = 0;  // the blocks of a slice at this width
    std::vector<std::pair<std::int64_t, std::int64_t>> folds;  // its (expert fold, replicas)
    for (const auto& slice : model.slices) {
      if (slice.width != t) continue;
      units = PipelineUnits(slice.graph);
      folds.emplace_back(slice.graph.expert_fold, slice.graph.weight_replicas);
    }
    std::sort(folds.begin(), folds.end());
    for (std::int64_t p = 1; t * p <= K; ++p) {
      if (K % (t * p) != 0) continue;
      const std::int64_t d = K / (t * p);
      bool divides = false;  // some listed micro-batch b with b·d dividing the batch
      for (std::int64_t b : run.training.micro_batches) divides = divides || batch % (b * d) == 0;
      // LaunchablePlans' expert-fold rule: some slice's fold j divides d, without weight replicas.
      const bool folds_fit = std::any_of(folds.begin(), folds.end(), [&](const auto& f) {
        return d % f.first == 0 && (f.first == 1 || f.second == 1);
      });
      const std::int64_t j = folds.empty() ? 1 : folds.front().first;
      const std::string reason =
          p > units || units % p != 0 ? "p does not divide the " + std::to_string(units) + " blocks"
          : !folds_fit && d % j != 0
              ? "each expert group spans " + std::to_string(j) +
                    " data-parallel replicas, which d does not divide (a smaller --expert-parallel)"
          : !folds_fit ? "experts folded over data-parallel replicas with context parallelism's "
                         "weight replicas are not modelled"
          : !divides                  ? "no micro-batch of " + list + " times d divides the batch"
                     : "no listed sharding applies (optimizer and up need two devices holding the "
                       "same weights; gradients and parameters, no pipeline)";
      if (++shapes <= 8) {
        why += (why.empty() ? "" : "; ") + ("t " + std::to_string(t) + ", p " + std::to_string(p) +
                                            ", d " + std::to_string(d) + ": " + reason);
      }
    }
  }
  if (shapes == 0) {
    return head + "no width the model was sliced at (" + std::to_string(widths.front()) +
           " and up) divides " + std::to_string(K);
  }
  if (shapes > 8) why += "; and " + std::to_string(shapes - 8) + " more";
  return head + "every t·p·d = " + std::to_string(K) + " fails — " + why +
         " (change --accelerators, --global-batch, --micro-batches or --widths)";
}

namespace {

// The kind of a refusal, for the summary: its reason without the plan and the figures.
std::string RefusalKind(const std::string& reason) {
  if (reason.find("> HBM") != std::string::npos) return "over the HBM";
  if (reason.find("accelerators") != std::string::npos) return "too few accelerators";
  if (reason.find("micro-batches") != std::string::npos) return "d above the micro-batches";
  return reason.substr(0, reason.find(':'));
}

// The same plan in effect: the same t, p, d, v, micro-batch and sharding, and the same time and
// peak memory (two strategies that slice alike, or two recompute modes that re-run the same).
bool SamePlan(const RankedPlan& a, const RankedPlan& b) {
  const PlanRequest &x = a.request, &y = b.request;
  return x.tensor_parallel == y.tensor_parallel && x.pipeline_stages == y.pipeline_stages &&
         x.data_parallel == y.data_parallel && x.virtual_stages == y.virtual_stages &&
         x.micro_batch == y.micro_batch && x.sharding == y.sharding &&
         a.choice.shard_replicas == b.choice.shard_replicas &&
         a.choice.plan.time_per_batch_s == b.choice.plan.time_per_batch_s &&
         a.choice.plan.PeakMemoryBytes() == b.choice.plan.PeakMemoryBytes();
}

}  // namespace

PlanRanking RankPlans(const ModelEvaluator& evaluator, const PreparedModel& model,
                      const ArchConfig& arch, const RunConfig& run, std::size_t top,
                      const LaunchRefusal& refuse) {
  std::vector<PlanRequest> requests = LaunchablePlans(model, run);
  PlanRanking ranking;
  if (requests.empty()) ranking.none_launchable = WhyNoLaunchablePlan(model, run);
  if (refuse) {
    std::erase_if(requests, [&](const PlanRequest& r) {
      const std::string reason = refuse(r);
      if (!reason.empty()) ++ranking.refused[reason.substr(0, reason.find(':'))];
      return !reason.empty();
    });
  }
  const std::vector<PlanChoice> choices = evaluator.EvaluatePlans(model, arch, requests);
  ranking.evaluated = requests.size();
  for (std::size_t i = 0; i < requests.size(); ++i) {
    if (choices[i].feasible) {
      ranking.plans.push_back({requests[i], choices[i]});
    } else {
      const std::string kind = RefusalKind(choices[i].reason);
      ++ranking.refused[kind];
      const double peak = choices[i].plan.PeakMemoryBytes();
      if (kind == "over the HBM" && peak > 0 &&
          (ranking.smallest_over_hbm_bytes == 0 || peak < ranking.smallest_over_hbm_bytes)) {
        ranking.smallest_over_hbm_bytes = peak;
      }
    }
  }
  ranking.feasible = ranking.plans.size();
  std::stable_sort(
      ranking.plans.begin(), ranking.plans.end(),
      [&](const RankedPlan& a, const RankedPlan& b) { return RankKey(a, run) < RankKey(b, run); });
  // The same plan in effect twice (sequence parallelism at t = 1 is Megatron's; with
  // FlashAttention selective recompute re-runs nothing): the first listed stays.
  std::vector<RankedPlan> distinct;
  for (RankedPlan& plan : ranking.plans) {
    bool seen = false;
    for (auto it = distinct.rbegin();
         it != distinct.rend() && !seen && RankKey(*it, run) == RankKey(plan, run); ++it) {
      seen = SamePlan(*it, plan);
    }
    if (!seen) distinct.push_back(std::move(plan));
  }
  ranking.alike = ranking.plans.size() - distinct.size();
  ranking.plans = std::move(distinct);
  if (ranking.plans.size() > top) ranking.plans.resize(top);
  return ranking;
}

double RankKey(const RankedPlan& plan, const RunConfig& run) {
  if (run.search.objective == SearchObjective::kThroughput)
    return plan.choice.plan.time_per_batch_s;
  return -ObjectiveValue(plan.choice, run.search.objective, run.cluster.num_accelerators);
}

}  // namespace phaze
