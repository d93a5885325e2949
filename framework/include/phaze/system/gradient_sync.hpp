// Gradient reduction (step_model.hpp's header comment): the data-parallel reduction of a stage's
// gradients over the d·r devices that hold the same weights, t/r ranks apart (r =
// LayerTable::weight_replicas) — once per step as the sharding has it (all-reduce; reduce-scatter
// of the gradients and all-gather of the weights; …) and, sharding gradients or parameters, every
// micro-batch — in the precision the settings give; and the tied embedding's all-reduce between
// the first and the last stage. Under hybrid sharding (StepSettings::shard_span) the sharded
// collectives run within groups of h·r devices (h = ShardReplicas), and the d/h groups all-reduce
// each device's 1/(h·r) of the gradients: once a step with the optimizer sharded; with the
// gradients or parameters every micro-batch or once a step (StepSettings::hybrid_all_reduce).
#pragma once

#include <cstdint>

#include "phaze/system/step_model.hpp"

namespace phaze {

// `gathered_bytes` below: what one all-gather of the weights moves per device
// (PlacementLayer::GatheredWeightBytes: less than weight_bytes when FP8 weights are gathered in
// FP8); negative (the default) = weight_bytes. The gradients are counted from weight_bytes.
inline constexpr double kGatherWeightBytes = -1;

// A stage's (or one layer's) weights per device for the functions over a table's two classes:
// `weight` bytes, `expert` of them experts', and what an all-gather of each moves.
struct StageWeights {
  double weight = 0;
  double expert = 0;
  double gathered = kGatherWeightBytes;         // of `weight`
  double expert_gathered = kGatherWeightBytes;  // of `expert`
  double Gathered() const { return gathered >= 0 ? gathered : weight; }
  double ExpertGathered() const { return expert_gathered >= 0 ? expert_gathered : expert; }
  StageWeights& operator+=(const StageWeights& o) {
    gathered = Gathered() + o.Gathered();
    expert_gathered = ExpertGathered() + o.ExpertGathered();
    weight += o.weight;
    expert += o.expert;
    return *this;
  }
};
// One layer's.
inline StageWeights WeightsOf(const PlacementLayer& l) {
  return {l.weight_bytes, l.expert_weight_bytes, l.GatheredWeightBytes(),
          l.ExpertGatheredWeightBytes()};
}

// Seconds of the reduction of a stage holding `weight_bytes` per device.
double GradientSyncS(const StepSettings& settings, int t, std::int64_t d, std::int64_t r,
                     double weight_bytes, double gathered_bytes = kGatherWeightBytes);

// The same reduction in its two halves, which overlap different passes: the gradients' (all-reduce,
// or reduce-scatter with the optimizer state sharded), ready as the last micro-batch's backward
// produces them, and the weights' all-gather (optimizer or gradients sharded), which the next
// step's first forward needs. reduce_s + gather_s == GradientSyncS.
struct SyncParts {
  double reduce_s = 0;
  double gather_s = 0;
};
SyncParts GradientSyncPartsS(const StepSettings& settings, int t, std::int64_t d, std::int64_t r,
                             double weight_bytes, double gathered_bytes = kGatherWeightBytes);

// The reduction of a stage of `table` at width t and d holding `w` per device: with the experts
// folded (LayerTable::expert_fold j > 1) each class over its own devices (step_model.hpp's
// DenseClass, ExpertClass: the experts over the d/j replicas t·j ranks apart), the two one after
// the other; else GradientSyncPartsS of the whole, bit for bit.
SyncParts StageSyncPartsS(const StepSettings& settings, const LayerTable& table, int t,
                          std::int64_t d, const StageWeights& w);
double StageSyncJ(const StepSettings& settings, const LayerTable& table, int t, std::int64_t d,
                  const StageWeights& w);

// What the first stage's compute offers a reduction to hide behind, per micro-batch.
struct SyncWindow {
  double backward_s = 0;   // the stage's backward (with the recompute inside it)
  double forward_s = 0;    // its forward
  double first_share = 0;  // its first layer's share of its weights: the gradient ready last, the
                           // weights the forward needs first (neither can hide)
  int stages = 1;          // pipeline stages p
};

// The part of the reduction the step waits for. Without overlap (gradient_reduction_overlap f = 0,
// Megatron-LM without --overlap-grad-reduce) all of it. With f > 0 (Megatron-Core's
// --overlap-grad-reduce and --overlap-param-gather, PyTorch DDP's buckets) the gradients of the
// stage's v model chunks (v = virtual_stages, 1 without interleaving) are reduced as their last
// micro-batch's backward produces them: chunk k's last backward ends k·p chunk slots before the
// first stage's last one (the interleaved schedule runs each chunk's backwards in groups of p
// micro-batches), so its reduction, 1/v of reduce_s, may start f·(k·p + 1)·backward_s/v before
// that end; the chunks' reductions run one after another on the network, and what runs past the
// end is exposed — at least the first layer's share, whose gradient is ready last. The weights'
// all-gather mirrors it against the next step's forward (chunk k's first forward starts k·p chunk
// slots after the step's first). f is the share of those windows during which the reduction runs
// at full speed (the rest is lost to contention for the SMs and HBM). One chunk without a pipeline
// gives max(first_share·X, X − f·backward_s) for a reduction of X seconds.
double ExposedGradientSyncS(const StepSettings& settings, const SyncParts& parts,
                            const SyncWindow& window);
// Joules per device of the same reduction.
double GradientSyncJ(const StepSettings& settings, int t, std::int64_t d, std::int64_t r,
                     double weight_bytes, double gathered_bytes = kGatherWeightBytes);

// Seconds and joules per device of the collectives a stage holding `weight_bytes` per device runs
// for every micro-batch (sharding gradients: reduce-scatter of the gradients, and under hybrid
// sharding every micro-batch the all-reduce of their shards across the d/h groups, as FSDP2's
// HSDP runs it;
// parameters: those and two all-gathers of the weights); 0 unsharded, with optimizer sharding, or
// with h·r = 1.
double ShardingPerMicroBatchS(const StepSettings& settings, int t, std::int64_t d, std::int64_t r,
                              double weight_bytes, double gathered_bytes = kGatherWeightBytes);
double ShardingPerMicroBatchJ(const StepSettings& settings, int t, std::int64_t d, std::int64_t r,
                              double weight_bytes, double gathered_bytes = kGatherWeightBytes);
// What of those collectives no compute can hide, every micro-batch: the stage's first layer's
// all-gather (parameters), which its first forward waits for, and its reduce-scatter
// (gradients, parameters), which its last backward produces — the next micro-batch's all-gather
// shares the links with it (FSDP2 runs them on two streams, over one network).
double ShardingEdgeS(const StepSettings& settings, int t, std::int64_t d, std::int64_t r,
                     double first_layer_weight_bytes, double gathered_bytes = kGatherWeightBytes);
// The same three for weights `w` of `table`: each class over its own devices (as
// StageSyncPartsS), the one-class value when the experts are not folded.
double StageShardingPerMicroBatchS(const StepSettings& settings, const LayerTable& table, int t,
                                   std::int64_t d, const StageWeights& w);
double StageShardingPerMicroBatchJ(const StepSettings& settings, const LayerTable& table, int t,
                                   std::int64_t d, const StageWeights& w);
double StageShardingEdgeS(const StepSettings& settings, const LayerTable& table, int t,
                          std::int64_t d, const StageWeights& first_layer);
// A stage's load per micro-batch with the sharding's collectives beside its compute: the compute
// and the edge one after the other, or the collectives when longer (the compute without any).
double ShardedLoadS(double compute_s, double collectives_s, double edge_s);

// The tied embedding's all-reduce of `bytes` per device between the first and the last of s
// stages (group {2, stride t·d·(s − 1)}); 0 without a pipeline or tied weights. Seconds, and
// joules per device.
double TiedEmbeddingS(const StepSettings& settings, int t, std::int64_t d, int stages,
                      double bytes);
double TiedEmbeddingJ(const StepSettings& settings, int t, std::int64_t d, int stages,
                      double bytes);

}  // namespace phaze
