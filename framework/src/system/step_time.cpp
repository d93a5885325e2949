#include "phaze/system/step_time.hpp"

#include <algorithm>

#include "phaze/system/gradient_sync.hpp"
#include "phaze/system/optimizer_step.hpp"
#include "phaze/system/pipeline.hpp"

namespace phaze {

double StageLoadSum(const PlacementPlan& plan) {
  double rest = 0;
  for (size_t k = plan.stages.size(); k-- > 1;) rest += plan.stages[k].load_s;
  return plan.stages.empty() ? 0.0 : plan.stages[0].load_s + rest;
}

void FinishStep(const StepSettings& settings, const LayerTable& table, int level,
                PlacementPlan& plan) {
  const std::int64_t B = settings.MicroBatches();
  const int t = plan.tensor_parallel;
  const int d = plan.data_parallel;
  const int s = plan.pipeline_stages;
  double max_load = 0;
  int bottleneck = 0;
  for (size_t k = 0; k < plan.stages.size(); ++k) {
    if (plan.stages[k].load_s > max_load) {
      max_load = plan.stages[k].load_s;
      bottleneck = static_cast<int>(k);
    }
  }
  // Every stage reduces its own gradients once its last backward ends, over its own replicas, and
  // the optimizer steps once all have (Megatron-LM's gradient-norm all-reduce spans the stages).
  // Stage k's last backward ends Σ_{j<k} of the stages' backward per chunk before the first
  // stage's (the last micro-batch's gradients flow from the last stage to the first; fewer when a
  // stage waits on another, so this lead is the least it can be): the step waits for
  // max_k(exposed_k − lead_k), the first stage's reduction alone only when it is the largest —
  // as the paper's formula takes it (DESIGN §6), which a search would otherwise game by putting
  // a small first stage before a large one. Each stage's compute per micro-batch is the window
  // its reduction may hide behind.
  const double v = std::max(1, settings.virtual_stages);
  double sync = -1, optimizer = 0, lead = 0;
  SyncParts parts;
  for (int k = 0; k < s; ++k) {
    const StagePlan& stage = plan.stages[static_cast<size_t>(k)];
    double step = 0, recompute = 0, expert_step = 0;
    StageWeights weights;
    SyncWindow window;
    window.stages = s;
    for (int l = stage.first_layer; l <= stage.last_layer; ++l) {
      const PlacementLayer& layer = table.layers[l];
      weights += WeightsOf(layer);
      step += layer.optimizer_step_s;
      expert_step += layer.ExpertShare() * layer.optimizer_step_s;
      window.forward_s += layer.forward_s;
      window.backward_s += layer.backward_s;
      recompute += layer.backward_recompute_s;
    }
    window.backward_s += recompute;  // as the placement search sums them
    if (weights.weight > 0) {
      window.first_share = table.layers[stage.first_layer].weight_bytes / weights.weight;
    }
    const SyncParts stage_parts = StageSyncPartsS(settings, table, t, d, weights);
    const double wait = std::max(0.0, ExposedGradientSyncS(settings, stage_parts, window) - lead);
    if (wait > sync) {
      sync = wait;
      parts = stage_parts;
    }
    optimizer = std::max(optimizer, StageOptimizerStepS(settings, table, t, d, step, expert_step));
    lead += window.backward_s / v;
  }
  const double tied = TiedEmbeddingS(settings, t, d, s, table.tied_gradient_bytes);
  plan.micro_batches = B;
  plan.virtual_stages = settings.virtual_stages;
  plan.max_stage_load_s = max_load;
  const double sum_load =
      settings.bubble == PipelineBubble::kBound ? StageLoadFloor(table) : StageLoadSum(plan);
  plan.time_per_batch_s =
      StepTimeS(PipelineTimeS(settings, d, s, max_load, sum_load), sync, optimizer, tied);
  plan.throughput_samples_per_s =
      static_cast<double>(settings.global_batch) / plan.time_per_batch_s;
  StepBreakdown& b = plan.breakdown;
  const double m = static_cast<double>(settings.MicroBatchesPerPipeline(d));
  const StagePlan& neck = plan.stages[bottleneck];
  b.bottleneck_stage = bottleneck;
  b.pipeline_level = level;
  b.forward_s = m * neck.forward_s;
  b.backward_s = m * neck.backward_s;
  b.recompute_s = m * neck.recompute_s;
  b.sharding_s = m * neck.sharding_s;
  b.pipeline_send_s = m * std::max(0.0, neck.load_s - neck.sharding_s - neck.forward_s -
                                            neck.backward_s - neck.recompute_s);
  b.bubble_s = PipelineTimeS(settings, d, s, max_load, sum_load) - m * max_load;
  b.data_parallel_s = sync;
  b.data_parallel_total_s = parts.reduce_s + parts.gather_s;
  b.optimizer_s = optimizer;
  b.tied_embedding_s = tied;
  plan.bubble_share = b.bubble_s / plan.time_per_batch_s;
  plan.sync_share = sync / plan.time_per_batch_s;
  plan.feasible = true;
}

void FillStepEnergy(const StepSettings& settings, const LayerTable& table, PlacementPlan& plan) {
  const auto& L = table.layers;
  const int level = plan.breakdown.pipeline_level;
  const int t = plan.tensor_parallel;
  const double B = static_cast<double>(settings.MicroBatches());
  const double d = plan.data_parallel;
  const double v = settings.virtual_stages;
  const int s = plan.pipeline_stages;
  Energy e;
  std::int64_t devices = 0;
  for (int k = 0; k < s; ++k) {
    const StagePlan& stage = plan.stages[static_cast<size_t>(k)];
    const double a = stage.devices;
    devices += stage.devices;
    Energy per_micro_batch, step, expert_step;
    StageWeights weights;
    for (int l = stage.first_layer; l <= stage.last_layer; ++l) {
      per_micro_batch += L[l].forward_energy + L[l].backward_energy + L[l].backward_recompute_energy;
      if (settings.recompute && s - k > 1) per_micro_batch += L[l].forward_energy;  // stage recompute
      step += L[l].optimizer_step_energy;
      expert_step += L[l].optimizer_step_energy * L[l].ExpertShare();
      weights += WeightsOf(L[l]);
    }
    // Every pipeline runs its share of the B micro-batches: B in all, on each of the a devices.
    e += per_micro_batch * (B * a);
    e += StageOptimizerStepJ(settings, table, t, plan.data_parallel, a, step, expert_step);
    e.network_j += StageSyncJ(settings, table, t, plan.data_parallel, weights) * d * a;
    e.network_j +=
        StageShardingPerMicroBatchJ(settings, table, t, plan.data_parallel, weights) * B * a;
    for (const auto& edge : table.edges) {  // activations forward, their gradients back
      if (edge.from < stage.first_layer || edge.from > stage.last_layer ||
          edge.to <= stage.last_layer) {
        continue;
      }
      e.network_j += 2 * EdgeSendJ(settings, edge, level) * v * B * a;
    }
  }
  e.network_j += 2 * d * t *
                 TiedEmbeddingJ(settings, t, plan.data_parallel, s, table.tied_gradient_bytes);
  plan.devices = devices * plan.data_parallel;
  e.static_j = settings.static_power_w * static_cast<double>(plan.devices) * plan.time_per_batch_s;
  plan.energy = e;
}

}  // namespace phaze
