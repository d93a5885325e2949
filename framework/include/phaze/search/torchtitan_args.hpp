// The TorchTitan settings that launch a plan (`phaze plan`'s torchtitan_args and torchtitan_toml),
// for TorchTitan v0.2.2 — its last release configured by TOML job files (torchtitan
// config/job_config.py; an unknown key is an error there, so only its keys are written). They go
// over the model's own train config (its name, flavor, tokenizer, dataset, optimizer, steps):
//   CONFIG_FILE=…/llama3_8b.toml ./run_train.sh --parallelism.tensor_parallel_degree=8 …
//
//   [parallelism]  data_parallel_replicate_degree d, data_parallel_shard_degree 1   (sharding
//                    none: DDP, which TorchTitan runs only alone, t = p = 1)
//                  data_parallel_replicate_degree d/h, data_parallel_shard_degree h (h =
//                    ShardReplicasOf: d, or fewer with a shard group — HSDP, FSDP2 within each
//                    group of h, the d/h groups all-reducing their shards),
//                  fsdp_reshard_after_forward "default" | "never"   (sharding parameters |
//                    gradients: FSDP2 gathers the weights again for backward, or keeps them from
//                    forward; the latter is phaze's gradients only with one micro-batch a step;
//                    with a pipeline, sharding optimizer: "default" keeps the weights from the
//                    first forward and PyTorch's pipeline stage reduce-scatters the gradients at
//                    the last backward, so the step gathers and reduces once, the weights and
//                    gradients whole and the optimizer sharded — ZeRO-1's memory and traffic)
//                  tensor_parallel_degree tp, context_parallel_degree cp,
//                  enable_async_tensor_parallel   (training.tensor_parallel_overlap > 0, tp > 1)
//                  pipeline_parallel_degree p; p > 1: pipeline_parallel_schedule "1F1B" |
//                    "GPipe" | "Interleaved1F1B" with pipeline_parallel_layers_per_stage (v > 1),
//                    pipeline_parallel_first/last_stage_less_layers: the split priced
//                    (search/pipeline_split.hpp; 0, 0 and blocks/(p·v) for an even one, 1, 1
//                    and 8 for Llama 3.1 405B's 7, 8 × 14, 7), pipeline_parallel_microbatch_size b
//   [training]     local_batch_size b, or B/d with a pipeline (one schedule of all its
//                  micro-batches), global_batch_size B (gradient accumulation B/(local·d)),
//                  seq_len S, mixed_precision_param "bfloat16", mixed_precision_reduce "float32"
//   [activation_checkpoint]  mode "none" | "selective" with selective_ac_option "op" (recompute
//                    per-op) | "full"
//   [model]        converters ["quantize.linear.float8"]   (fp8; torchao's tensorwise scaling),
//                    with [quantize.linear.float8] enable_fsdp_float8_all_gather false (the FSDP
//                    all-gathers move bf16, as phaze prices them; true, with
//                    precompute_float8_dynamic_scale_for_fsdp true, under
//                    training.fp8_param_gather) and filter_fqns ["output"] (the LM head stays
//                    bf16, as phaze keeps it)
//   [compile]      enable true (TorchTitan's benchmark runs phaze is validated on were compiled),
//                    components ["model", "loss"] (training.loss compiled) or ["model"]
//
// The width t: sequence_parallel with gathered_input: keep is DTensor's tensor parallelism (tp =
// t); context_parallel is TorchTitan's (cp = t, or over such tensor parallelism of width k: tp =
// k, cp = t/k; FSDP2 then shards over d·cp, as phaze does); at t = 1 any strategy. What TorchTitan
// cannot run as phaze evaluated it has no settings and a reason: Megatron-LM's tensor parallelism
// (it gathers the input again in backward), moe (TorchTitan's expert parallelism borrows
// data-parallel ranks), a pipeline under another sharding than optimizer (without FSDP2 TorchTitan
// trains it in FP32), recompute selective (Megatron-LM's attention-core recompute), sharding
// optimizer without a pipeline (ZeRO-1), tensor or context parallelism without FSDP2, DDP or
// FSDP2 keeping the weights (sharding none, gradients) over several micro-batches a step
// (TorchTitan reduces every micro-batch), hybrid sharding of gradients or parameters over several
// micro-batches without a pipeline priced with its all-reduce once a step (FSDP2 runs it every
// micro-batch; training.hybrid_all_reduce), fp8 with tensor parallelism (v0.2.2's float8 tensor
// parallelism is off under the converter's current name: its all-gathers move bf16), fp8 priced
// with delayed scaling (torchao's float8 scales tensorwise: training.fp8_recipe), a sequence
// not a multiple of 2·tp·cp, fp16, a bf16 gradient reduction, the unfused attention kernels
// (TorchTitan runs PyTorch SDPA's FlashAttention). A composed strategy TorchTitan runs needs
// gathered_input: keep on its inner sequence_parallel in the run config (plan --framework
// torchtitan sets it on a plain sequence_parallel only).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "phaze/search/model_evaluator.hpp"
#include "phaze/search/pipeline_split.hpp"

namespace phaze {

// One key of a TorchTitan job config: `value` as a TOML literal (8, "op", true, ["a"]).
struct TorchTitanSetting {
  std::string section;  // "parallelism", "quantize.linear.float8"
  std::string key;
  std::string value;
};

struct TorchTitanLaunch {
  std::vector<TorchTitanSetting> settings;  // empty, with `why`, when TorchTitan cannot run it
  std::string why;
  int tensor = 0;   // tensor_parallel_degree (0 without settings)
  int context = 0;  // context_parallel_degree
  int expert = 0;   // expert_parallel_degree (1: none)

  // The command-line overrides, one token each: --section.key=value (strings unquoted, lists
  // comma-separated, as TorchTitan's parser reads them); a true flag as --section.key alone, a
  // false one as tyro's --section.no_key (over a model config that may say true).
  std::vector<std::string> Args() const;
  // The settings as TOML tables, in order, under a comment naming the TorchTitan release.
  std::string Toml() const;
};

// `split`, `sequence_length` and `experts`: as MegatronArgs'.
TorchTitanLaunch TorchTitanArgs(const PlanRequest& plan, const RunConfig& run,
                                const PipelineSplit& split, std::int64_t sequence_length,
                                bool experts = true);

}  // namespace phaze
