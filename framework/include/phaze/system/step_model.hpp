// The step model (DESIGN §10, §11): what one training step of a placed model costs — its time per
// global batch, its memory per stage and its energy — from per-layer figures, the cluster's network
// and the training settings. The placement DP (placement/placement_search.hpp) chooses the split;
// this folder owns every formula the split is judged by, one owner per quantity:
//   pipeline.hpp        schedules (1F1B, interleaved, GPipe): in-flight micro-batches, the steps of
//                       the pipeline, the level its sends cross and their time and energy;
//   stage_memory.hpp    a stage's bytes per device: weights, gradients, optimizer state (as the
//                       sharding divides them), kept activations, the working set;
//   gradient_sync.hpp   the data-parallel gradient reduction and the tied embedding's all-reduce;
//   optimizer_step.hpp  the optimizer step: its cost from the layer's optimizer_step op, its share
//                       per device;
//   step_time.hpp       the time per batch and its breakdown, and the step's energy.
//
// Exact semantics (tests compare against these):
// * Ranks are laid out as Megatron-LM does: tensor-parallel innermost, then data-parallel, then
//   pipeline. The pipeline's sends cross the level that holds t·s·d ranks (the outermost level the
//   job spans: with s > 1 the slowest stage boundary; exact when every stage has t devices);
//   send(edge) = Network::SendS(bytes, that level) (bytes / bandwidth on a flat network), plus, for
//   an edge with gather_group g > 1 (Megatron's scatter/gather: each of the g tensor-parallel
//   devices sent its part), the receiving stage's all-gather of g·bytes over {g, stride 1}.
// * load(stage, position p from the end; the last stage is p = 1), seconds per micro-batch:
//   forward: layers in order; a layer starts when its in-stage predecessors have finished and each
//   input from another stage has arrived (v·send(edge bytes), counted from time 0; v = virtual
//   stages, 1 unless interleaved); fw = latest finish. Backward the same on reversed edges, each
//   layer lasting backward_s + backward_recompute_s (selective/full recompute re-runs inside the
//   layer's backward, on every stage). With the paper's stage recompute (`recompute`) and p > 1:
//   the backward phase first re-runs the stage's forward (Σ recompute_forward_s, ignoring outside
//   inputs) and every backward layer starts no earlier than that recompute has ended.
//   load = fw + bw, plus, with `pipeline_sends: blocking` (PipelineSends), v·Network::SendS(edge
//   bytes, that level) for every edge with exactly one end in the stage (its activations out, its
//   gradients back: the point-to-point part only; the receiver's all-gather is not the sender's).
// * memory(stage, p) = Σ (weight + gradient + optimizer state + activation bytes)
//   + cached weight copies + (in-flight − 1)·stash + max working_bytes over the stage's layers,
//   or, if larger, the optimizer step's: Σ (weight + cached + gradient + optimizer state +
//   step_working bytes), the activations freed by then (step_working: fp32 copies of 16-bit
//   gradients; divided by N like the optimizer state when sharded),
//   where stash = Σ activation
//   bytes (or, with the paper's stage recompute, the bytes of the edges entering the stage; and
//   interleaved, the last stage's without the model's last layer, the LM head, which runs in the
//   final chunk and so keeps one micro-batch as 1F1B's last stage does), and
//   in-flight micro-batches are p (1F1B), m = ⌈B/d⌉ (GPipe) or, interleaved over v chunks per
//   device with s stages, (2·(p − 1) + (v − 1)·s + 1)/v (Megatron-LM's warm-up count in chunks of
//   1/v of the stage), each at most m (the warm-up is capped at the micro-batches there are). A
//   stage with memory > hbm_bytes is infeasible.
// * sharding (ZeRO; N = d·r, the devices that hold the same weights): `optimizer` (ZeRO-1,
//   Megatron-LM's distributed optimizer) divides the optimizer state by N; `gradients` (ZeRO-2)
//   the gradients too; `parameters` (ZeRO-3, FSDP's full sharding) the weights (and their cached
//   FP8 copies) too. What is
//   sharded is held whole while a layer works on it, one layer at a time: memory adds
//   (1 − 1/N)·max over the stage's layers of its gradient bytes (`gradients`), or of twice its
//   weight bytes and its gradient bytes (`parameters`: the layer's gathered weights and the next
//   layer's, prefetched, taken as the same size).
//   Traffic, over the reduction group {N, stride t/r}, G = gradient_reduction_bytes_per_weight_byte
//   × the stage's weight bytes W: every micro-batch, `gradients` reduce-scatters G and
//   `parameters` all-gathers W twice (before forward and before backward) and reduce-scatters G.
//   Those collectives run on their own stream beside the compute: a stage's load is
//   max(its compute load, their seconds). Once per step, the sync is an all-reduce of G (`none`),
//   a reduce-scatter of G plus an all-gather of W (`optimizer`), an all-gather of W
//   (`gradients`), nothing (`parameters`).
// * time per batch = pipeline + (1 − overlap)·sync + optimizer + tied, with
//   pipeline = m·max stage load + (Σ stage loads − max)/v (bubble `stages`, the default: the
//   bottleneck runs every micro-batch, each other stage's fill and drain adds its own load; v = 1
//   but interleaved) or, the paper's, (m + (s − 1)/v)·max stage load (bubble `bottleneck`), the
//   same when the stages are balanced (pipeline.hpp's PipelineTimeS), m = ⌈B/d⌉,
//   B = global_batch / micro_batch;
//   sync = max over stages k of stage k's exposed data-parallel gradient reduction over the group
//   {d·r, stride t/r} (r = weight_replicas) as the sharding has it (above; unsharded: all-reduce
//   of 2·weight bytes, fp32 gradients of 2-byte weights, the paper's 4·(d − 1)/d·W/bandwidth on a
//   flat network) less its lead, Σ_{j<k} of stage j's backward per micro-batch and chunk (stage k
//   ends its last backward that much before the first stage, which ends last in 1F1B); the
//   paper's formula, the first stage's alone, is the case k = 0 (the placement DP's bound, and
//   the step whenever the first stage's reduction is the one that ends last);
//   optimizer = max over stages of Σ optimizer_step_s (/(d·r) when sharded at all), the steps
//   starting together once the reductions are done; tied = all-reduce of the width's
//   tied_gradient_bytes between the first and the last stage (group {2, stride t·d·(s − 1)}) when
//   s > 1.
// * experts folded over j data-parallel replicas (LayerTable::expert_fold > 1; r = 1): each
//   layer's expert_weight_bytes (and that share of its gradients, optimizer state, step working
//   bytes, optimizer step and its energy) belong to a second class held by the d/j replicas t·j
//   ranks apart (ExpertClass, N_e = h_e of them sharding together): the sharding divides them by
//   N_e, each layer holds whole (1 − 1/N)·its rest's and (1 − 1/N_e)·its experts' gathered bytes
//   (stage_memory.hpp's LayerGatheredAway, max over the stage's layers), and every collective —
//   the step's sync, the per-micro-batch ones per layer — runs per class over its own group, the
//   two one after the other; d must be a multiple of j.
// * throughput = global_batch / time per batch.
// * energy per step (the chosen plan only): Σ over stages of a·B·Σ_layers (forward + backward +
//   recompute energy; + forward again with the paper's stage recompute) + the optimizer step on
//   d·a devices (a/r of it when sharded), each stage's data-parallel reduction (Network::
//   CollectiveJ per device, on d·a devices) and its per-micro-batch sharding collectives (B·a
//   times), 2·v·B·a sends per cut edge (Network::SendJ),
//   the tied embedding's all-reduce, and static_power_w × devices × time per batch.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "phaze/core/energy.hpp"
#include "phaze/network/network.hpp"

namespace phaze {

// One layer instance of a width's slice, per device.
struct PlacementLayer {
  std::string name;
  double forward_s = 0;
  double backward_s = 0;
  std::optional<double> recompute_forward_s;  // the paper's stage recompute; default forward_s
  double backward_recompute_s = 0;  // selective/full recompute, inside backward on every stage
  double optimizer_step_s = 0;      // the optimizer step over the layer's parameters
  // Dynamic energy per device and micro-batch of each pass (the paper's stage recompute re-runs
  // forward_energy), and of the optimizer step (per step).
  Energy forward_energy, backward_energy, backward_recompute_energy, optimizer_step_energy;
  double weight_bytes = 0;
  // Copies of the weights kept beside them (UniqueLayer::cached_weight_bytes: FP8's), held like
  // the weights but neither reduced nor stepped.
  double cached_weight_bytes = 0;
  std::optional<double> gradient_bytes;       // default: weight_bytes
  // What one all-gather of the layer's weights moves per device, and what FSDP holds gathered:
  // default weight_bytes; with FP8 weights gathered in FP8 (training.fp8_param_gather), the FP8
  // GEMMs' weights (cached_weight_bytes, at 16 bits) at one byte a parameter, weight_bytes −
  // cached_weight_bytes / 2.
  std::optional<double> gathered_weight_bytes;
  double optimizer_state_bytes = 0;
  double activation_bytes = 0;  // kept per in-flight micro-batch
  double working_bytes = 0;     // transient, during the layer's backward
  double step_working_bytes = 0;  // transient, during the optimizer step (activations freed)
  // Of weight_bytes, the MoE experts' (Operator::expert ≥ 0). When the width's experts spread
  // over data-parallel replicas too (LayerTable::expert_fold j > 1) they are held by d/j replicas
  // t·j ranks apart, not by all d; ExpertShare() of the layer's gradients, optimizer state, step
  // working bytes and optimizer step go with them.
  double expert_weight_bytes = 0;
  bool tensor_parallel = false;

  double RecomputeForwardS() const { return recompute_forward_s.value_or(forward_s); }
  double GradientBytes() const { return gradient_bytes.value_or(weight_bytes); }
  double GatheredWeightBytes() const { return gathered_weight_bytes.value_or(weight_bytes); }
  // Of those, the experts': with gathered_weight_bytes set, in the layer's own proportion (FP8
  // whenever its other GEMMs are: the experts are linear layers of the block); else exactly
  // expert_weight_bytes.
  double ExpertGatheredWeightBytes() const {
    return gathered_weight_bytes ? ExpertShare() * *gathered_weight_bytes : expert_weight_bytes;
  }
  double ExpertShare() const {
    return expert_weight_bytes > 0 ? expert_weight_bytes / weight_bytes : 0.0;
  }
};

struct PlacementEdge {
  int from = 0;  // layer indices; from < to in the given order
  int to = 0;
  double bytes = 0;
  // > 1: the receiving stage all-gathers the whole tensor from the 1/gather_group parts its
  // tensor-parallel devices received (group {gather_group, stride 1}) — Megatron's scatter/gather.
  std::int64_t gather_group = 1;
};

// The layer DAG of one tensor-parallel width (per-device figures of that width's slice).
struct LayerTable {
  std::vector<PlacementLayer> layers;
  std::vector<PlacementEdge> edges;
  double tied_gradient_bytes = 0;  // per device, all-reduced between first and last stage
  // LayerGraph::weight_replicas of the slice: r of the width's t devices hold the same weights
  // (r divides t); gradients are reduced over d·r devices t/r ranks apart, and sharding divides
  // over them.
  std::int64_t weight_replicas = 1;
  // j: each expert group spans j data-parallel replicas — besides its t devices, each expert whole
  // (expert parallelism e = j·t: Megatron-LM's MoE parallel folding with expert tensor
  // parallelism 1; TorchTitan's expert parallelism borrowing data-parallel ranks), or one device
  // per replica, each expert split over the t (e = j: expert tensor parallelism t). The
  // layers' expert weights are then reduced and sharded over the d/j replicas t·j ranks apart that
  // hold the same experts (ExpertClass); j divides d. 1: the experts are replicated like the rest.
  std::int64_t expert_fold = 1;
};

// The devices that hold the same weights, as the data-parallel reduction and the sharding see
// them: d replicas t ranks apart, r of a replica's t devices (LayerTable::weight_replicas) — or,
// for the experts folded over j replicas, d/j replicas t·j apart (r = 1).
struct WeightClass {
  int t = 1;
  std::int64_t d = 1;
  std::int64_t r = 1;
};
inline WeightClass DenseClass(const LayerTable& table, int t, std::int64_t d) {
  return {t, d, table.weight_replicas};
}
inline WeightClass ExpertClass(const LayerTable& table, int t, std::int64_t d) {
  const std::int64_t j = table.expert_fold;
  return {static_cast<int>(t * j), d / j, table.expert_fold > 1 ? 1 : table.weight_replicas};
}

// What the d·r devices holding the same weights divide among themselves (header comment):
// nothing, the optimizer state (ZeRO-1, Megatron-LM's distributed optimizer), also the gradients
// (ZeRO-2), also the weights (ZeRO-3, PyTorch FSDP's full sharding). Ordered: each shards more.
enum class Sharding { kNone, kOptimizer, kGradients, kParameters };
std::string_view ToString(Sharding sharding);  // "none", "optimizer", "gradients", "parameters"

// When hybrid sharding of the gradients or parameters (StepSettings::shard_span) all-reduces the
// shards across the groups (training.hybrid_all_reduce): after every micro-batch's reduce-scatter,
// beside the compute (FSDP2's HSDP: TorchTitan never defers it), or once a step, with the
// step's reduction (Megatron-FSDP's outer group: at the last micro-batch only). Sharding the
// optimizer all-reduces once a step either way.
enum class HybridAllReduce { kEveryMicroBatch, kOnceAStep };
std::string_view ToString(HybridAllReduce when);  // "every_micro_batch", "once_a_step"

enum class PipelineSchedule { k1F1B, kInterleaved, kGPipe };
std::string_view ToString(PipelineSchedule schedule);  // "1f1b", "interleaved", "gpipe"

// How long the pipeline's fill and drain last (pipeline.hpp's PipelineTimeS): each other
// stage's own load (stages), or s − 1 slots of the bottleneck's load, the paper's
// (m + p − 1)·max (bottleneck). kBound (not a training setting): `stages` with the loads' sum
// replaced by a floor every placement's sum is above (StageLoadFloor), so that the placement
// DP on lower-bound layer times is a lower bound of its `stages` time on the exact ones (the
// search's bound placements, model_evaluator): the DP is exact for the largest load, not for
// the sum of the loads of its covering.
enum class PipelineBubble { kStages, kBottleneck, kBound };
std::string_view ToString(PipelineBubble bubble);  // "stages", "bottleneck", "bound"

// How a stage's sends to its neighbours wait (training.pipeline_sends): `batched` — Megatron-LM's
// schedules pair each send with the receive from the same neighbour in one batch_isend_irecv
// (both directions of the link at once), so a stage waits only for what it receives: the sends
// into it, as the header comment prices them; `blocking` — DeepSpeed's PipelineEngine
// (deepspeed/runtime/pipe/p2p.py: dist.send / dist.recv, async_op False, one tensor per call, the
// engine's SendActivation, RecvActivation, SendGrad and RecvGrad instructions one after another)
// holds the sender until its send has gone too, so a stage's load also counts its own sends out:
// the forward's activations to later stages and the backward's gradients to earlier ones.
enum class PipelineSends { kBatched, kBlocking };
std::string_view ToString(PipelineSends sends);  // "batched", "blocking"

// What a step costs besides its layers and their split: the cluster and the training settings.
struct StepSettings {
  std::int64_t num_accelerators = 1;
  std::int64_t global_batch = 1;
  std::int64_t micro_batch = 1;
  Network network = Network::Flat(1);
  bool recompute = false;  // the paper's stage recompute (see the header comment)
  PipelineSchedule schedule = PipelineSchedule::k1F1B;
  int virtual_stages = 1;  // v; > 1 only with kInterleaved
  PipelineBubble bubble = PipelineBubble::kStages;
  PipelineSends sends = PipelineSends::kBatched;
  Sharding sharding = Sharding::kNone;
  // Hybrid sharding (HSDP; Megatron-LM's --num-distributed-optimizer-instances): the sharding
  // divides over the data-parallel replicas within `shard_span` devices consecutive in rank
  // (ShardReplicas), each such group holds a whole copy of what it shards, and the groups
  // all-reduce their gradient shards (gradient_sync.hpp: once a step with the optimizer sharded;
  // with the gradients or parameters as hybrid_all_reduce says). 0: over all d (plain ZeRO/FSDP).
  std::int64_t shard_span = 0;
  HybridAllReduce hybrid_all_reduce = HybridAllReduce::kEveryMicroBatch;
  double gradient_reduction_overlap = 0;  // share of the first stage's passes the sync hides
                                          // behind (gradient_sync.hpp's ExposedGradientSyncS)
  // Bytes the data-parallel sync reduces per byte of weights: 2 for fp32 gradients of 16-bit
  // weights, 1 when the gradients are reduced in the weights' 16-bit format.
  double gradient_reduction_bytes_per_weight_byte = 2;
  // Watts a device draws whatever it does (EnergyModel::StaticPowerW), for the step's energy.
  double static_power_w = 0;

  // B = global_batch / micro_batch.
  std::int64_t MicroBatches() const { return global_batch / micro_batch; }
  // ⌈B/d⌉: the micro-batches each of d pipelines runs.
  std::int64_t MicroBatchesPerPipeline(std::int64_t d) const { return (MicroBatches() + d - 1) / d; }
  // Empty when valid, else what is wrong.
  std::string Validate() const;
};

// The data-parallel replicas h the sharding divides over at width t and data-parallel width d
// (ranks run t innermost, then d: replica k's devices are t·k … t·k + t − 1): all d without a
// span (or a span of t·d or more), else the largest divisor h of d with t·h ≤ shard_span, at least
// 1 (d unsharded: the sharding divides nothing, and every replica reduces with every other). The
// d/h groups of h replicas are t·h ranks apart.
std::int64_t ShardReplicas(const StepSettings& settings, std::int64_t t, std::int64_t d);

// Per device of a stage.
struct StageMemory {
  double weight_bytes = 0;      // with the cached copies (FP8's)
  double gradient_bytes = 0;
  double optimizer_state_bytes = 0;
  double activation_bytes = 0;  // in-flight micro-batches × kept bytes (or the paper's stash)
  double working_bytes = 0;
  double gathered_bytes = 0;    // what the sharding holds whole while a layer works (1 − 1/N)
  double in_flight = 0;         // micro-batches whose activations are kept
  // What the optimizer step holds beyond the weights, gradients and state (fp32 copies of 16-bit
  // gradients), the activations freed by then; the stage's peak is the larger of the two phases.
  double step_working_bytes = 0;
  bool peak_at_step = false;  // the step, not the forward and backward, sets the peak
};

struct StagePlan {
  int first_layer = 0;  // inclusive
  int last_layer = 0;   // inclusive
  int devices = 1;      // a
  double load_s = 0;    // per micro-batch: forward + backward (+ recompute) + waits for sends,
                        // or the sharding's collectives when they take longer
  double forward_s = 0;    // Σ forward_s of its layers
  double backward_s = 0;   // Σ backward_s
  double recompute_s = 0;  // Σ recompute it runs (backward_recompute_s, or the paper's)
  double sharding_s = 0;   // of load_s, what the sharding's collectives add beyond the compute
  double peak_memory_bytes = 0;
  StageMemory memory;
};

// The parts of a training step (seconds per global batch). The first seven add up to the pipeline
// time; iteration = pipeline + sync + optimizer + tied embedding.
struct StepBreakdown {
  double forward_s = 0;      // m × the bottleneck stage's forward
  double backward_s = 0;     // m × its backward
  double recompute_s = 0;    // m × its recompute
  double pipeline_send_s = 0;  // m × its waits for activations and gradients from other stages
  double sharding_s = 0;     // m × the part of its load the sharding's collectives add
  double bubble_s = 0;       // (Σ loads − max)/v, or the paper's (s − 1)/v·max
  double data_parallel_s = 0;  // exposed gradient reduction
  double data_parallel_total_s = 0;  // the whole reduction, hidden part included
  double optimizer_s = 0;
  double tied_embedding_s = 0;
  int bottleneck_stage = 0;  // index of the stage with the largest load
  int pipeline_level = 0;    // network level the pipeline's sends cross
};

struct PlacementPlan {
  bool feasible = false;
  std::string reason;  // why not, when infeasible
  double time_per_batch_s = 0;
  double throughput_samples_per_s = 0;
  int tensor_parallel = 1;  // t
  int data_parallel = 1;    // d
  int pipeline_stages = 0;  // s
  int virtual_stages = 1;   // v
  std::int64_t micro_batches = 0;  // B
  std::vector<StagePlan> stages;   // first stage first
  double max_stage_load_s = 0;
  double bubble_share = 0;  // bubble / time
  double sync_share = 0;    // data-parallel gradient sync / time
  StepBreakdown breakdown;
  // One training step's energy over the `devices` the plan uses (d × Σ stage devices): every
  // device's passes for its micro-batches and its optimizer step, every stage's gradient sync,
  // the sends between stages and the tied embedding's all-reduce (network), and static power over
  // the step's time.
  Energy energy;
  std::int64_t devices = 0;
  // The largest stage's peak bytes per device.
  double PeakMemoryBytes() const {
    double peak = 0;
    for (const StagePlan& s : stages) peak = peak > s.peak_memory_bytes ? peak : s.peak_memory_bytes;
    return peak;
  }
  // Average power per device (W).
  double PowerW() const {
    return devices > 0 && time_per_batch_s > 0
               ? energy.TotalJ() / (time_per_batch_s * static_cast<double>(devices))
               : 0;
  }
};

}  // namespace phaze
