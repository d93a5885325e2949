// The Megatron-LM command-line arguments that launch a plan (`phaze plan`'s megatron_args), from
// the plan's request, the run's strategy and training settings — the parallelism, batch and
// training flags, to go beside the model's own (--num-layers, which must equal the blocks here,
// --hidden-size, --num-experts, …). Checked against Megatron-LM's arguments.py and validate_args
// at d98e8a64 (2026-08); Megatron-FSDP's flags as named since 2025-08:
//   --tensor-model-parallel-size tp --pipeline-model-parallel-size p
//   [--num-layers-per-virtual-pipeline-stage blocks/(p·v)]   (v > 1: interleaved 1F1B)
//   | [--pipeline-model-parallel-layout L]   (a split priced with chunks of unequal blocks:
//                                            search/pipeline_split.hpp's MegatronLayout)
//   [--context-parallel-size cp] [--expert-model-parallel-size ep --expert-tensor-parallel-size 1
//    --moe-token-dispatcher-type alltoall]   (ep > 1: the all-to-all dispatch phaze prices, not
//                                             Megatron-LM's default allgather)
//   --micro-batch-size b --global-batch-size B --seq-length S
//   [--sequence-parallel] [--make-vocab-size-divisible-by N]   (the strategy's padding, not 128)
//   [--tp-comm-overlap]                                        (tensor_parallel_overlap > 0, SP)
//   [--recompute-granularity selective | --recompute-granularity full --recompute-method uniform
//    --recompute-num-layers 1]
//   [--use-distributed-optimizer [--use-megatron-fsdp --data-parallel-sharding-strategy
//    optim_grads | optim_grads_params --ckpt-format fsdp_dtensor]]   (sharding optimizer |
//                                                              gradients | parameters)
//   [--num-distributed-optimizer-instances d/h]   (hybrid sharding over h = ShardReplicasOf < d
//                                                  replicas: the intra-instance group of h·cp
//                                                  consecutive data-parallel ranks, the
//                                                  instances all-reducing their shards once a step)
//   [--optimizer sgd | --use-precision-aware-optimizer --exp-avg-dtype bf16 --exp-avg-sq-dtype
//    bf16]                                       (training.optimizer sgd | adam-bf16-moments, the
//                                                  second refused without a sharding)
//   [--overlap-grad-reduce [--overlap-param-gather]]         (gradient_reduction_overlap > 0;
//                                                              the second with sharding optimizer)
//   [--attention-backend flash]                              (training.attention flash, fused)
//   --bf16 | --fp16 (training.precision; fp8 is --bf16 --fp8-format hybrid --fp8-recipe
//   delayed|tensorwise, Transformer Engine's recipe as training.fp8_recipe says, and
//   --fp8-param-gather with training.fp8_param_gather under any sharding)
//   [--grad-reduce-in-bf16 when gradient_reduction_precision is bf16]
// and the environment CUDA_DEVICE_MAX_CONNECTIONS=1 with tensor or context parallelism outside
// Megatron-FSDP (Megatron-LM asserts it on Hopper and older). Megatron-FSDP turns its overlaps on
// whatever the flags say.
// The strategy's width t splits as: megatron tp = t; sequence_parallel tp = t and
// --sequence-parallel; moe tp = ep = t with --sequence-parallel (its attention is sequence
// parallel; each expert whole on a rank); context_parallel cp = t, or over a Megatron width k:
// tp = k, cp = t/k (with --sequence-parallel when that inner strategy is sequence_parallel).
// Megatron-LM derives d = world size / (tp·p·cp). Other strategies have no Megatron-LM form, nor
// a sequence Megatron-LM refuses (not a multiple of 2·cp; with sequence parallelism, its part per
// context rank not a multiple of tp), nor hybrid sharding of gradients or parameters over several
// micro-batches a step priced with FSDP2's all-reduce every micro-batch (Megatron-FSDP all-reduces
// across its instances once a step: training.hybrid_all_reduce once_a_step, the
// megatron-core-2024 recipe's), nor sharding gradients or parameters under a pipeline
// (Megatron-FSDP runs without one).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "phaze/search/model_evaluator.hpp"
#include "phaze/search/pipeline_split.hpp"

namespace phaze {

struct MegatronWidths {
  int tensor = 1;   // --tensor-model-parallel-size
  int context = 1;  // --context-parallel-size
  int expert = 1;   // --expert-model-parallel-size
  int expert_tensor = 1;  // --expert-tensor-parallel-size: t when the experts are split (ETP)
  bool sequence_parallel = false;
};

// A plan as Megatron-LM launches it: how its strategy spends the width and the arguments; or,
// for a strategy Megatron-LM does not have, no widths, no arguments and why.
struct MegatronLaunch {
  std::optional<MegatronWidths> widths;
  std::vector<std::string> args;
  std::vector<std::string> env;  // "NAME=value" the launch needs
  std::string why;
};

// Whether a component has params gathered_input: keep (PyTorch DTensor's tensor parallelism:
// sequence_parallel, moe); a strategy, when it or the one it is composed over has.
// The moe strategy's expert-parallel size at width t: its expert_parallel param, else t.
int ExpertParallelOf(const StrategyChoice& strategy, int t);
// Whether the moe strategy splits each expert over the width (expert_tensor_parallel: width).
bool SplitsExperts(const StrategyChoice& strategy);
bool KeepsGatheredInput(const ComponentChoice& component);
bool KeepsGatheredInput(const StrategyChoice& strategy);

// `split`: the blocks of each pipeline chunk as priced (PlanPipelineSplit; p > 1 without one has
// no arguments, its why); `sequence_length`: tokens per sample;
// `experts`: whether the model routes to experts (LayerGraph::HasExperts) — a dense model under
// the moe strategy launches no expert parallelism.
MegatronLaunch MegatronArgs(const PlanRequest& plan, const RunConfig& run,
                            const PipelineSplit& split, std::int64_t sequence_length,
                            bool experts = true);

}  // namespace phaze
