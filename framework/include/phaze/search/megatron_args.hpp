// The Megatron-LM command-line arguments that launch a plan (`phaze plan`'s megatron_args), from
// the plan's request, the run's strategy and training settings:
//   --tensor-model-parallel-size tp --pipeline-model-parallel-size p
//   [--num-layers-per-virtual-pipeline-stage blocks/(p·v)]   (v > 1: interleaved 1F1B)
//   [--context-parallel-size cp] [--expert-model-parallel-size ep]
//   --micro-batch-size b --global-batch-size B --seq-length S
//   [--sequence-parallel]
//   [--recompute-granularity selective | --recompute-granularity full --recompute-method uniform
//    --recompute-num-layers 1]
//   [--use-distributed-optimizer [--use-megatron-fsdp --data-parallel-sharding-strategy
//    optim_grads | optim_grads_params]]                      (sharding optimizer | gradients |
//                                                              parameters)
//   [--overlap-grad-reduce [--overlap-param-gather]]         (gradient_reduction_overlap > 0;
//                                                              the second with sharding optimizer)
//   [--use-flash-attn]                                       (training.attention flash)
//   --bf16 | --fp16 (training.precision; fp8 is --bf16 --fp8-format hybrid, Transformer
//   Engine's recipe) [--grad-reduce-in-bf16 when gradient_reduction_precision is bf16]
// The strategy's width t splits as: megatron tp = t; sequence_parallel tp = t and
// --sequence-parallel; moe tp = ep = t with --sequence-parallel (its attention is sequence
// parallel); context_parallel cp = t, or over a Megatron width k: tp = k, cp = t/k (with
// --sequence-parallel when that inner strategy is sequence_parallel). Megatron-LM derives
// d = world size / (tp·p·cp). Other strategies have no Megatron-LM form.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "phaze/search/model_evaluator.hpp"

namespace phaze {

struct MegatronWidths {
  int tensor = 1;   // --tensor-model-parallel-size
  int context = 1;  // --context-parallel-size
  int expert = 1;   // --expert-model-parallel-size
  bool sequence_parallel = false;
};

// A plan as Megatron-LM launches it: how its strategy spends the width and the arguments; or,
// for a strategy Megatron-LM does not have, no widths, no arguments and why.
struct MegatronLaunch {
  std::optional<MegatronWidths> widths;
  std::vector<std::string> args;
  std::string why;
};

// Whether the strategy, or the one it is composed over, has params gathered_input: keep (PyTorch
// DTensor's tensor parallelism: sequence_parallel, moe).
bool KeepsGatheredInput(const StrategyChoice& strategy);

// `blocks`: the model's transformer blocks (PipelineUnits); `sequence_length`: tokens per sample.
MegatronLaunch MegatronArgs(const PlanRequest& plan, const RunConfig& run, int blocks,
                            std::int64_t sequence_length);

}  // namespace phaze
