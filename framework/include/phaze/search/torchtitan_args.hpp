// The TorchTitan settings that launch a plan (`phaze plan`'s torchtitan_args and torchtitan_toml),
// for TorchTitan v0.2.2 — its last release configured by TOML job files (torchtitan
// config/job_config.py; an unknown key is an error there, so only its keys are written). They go
// over the model's own train config (its name, flavor, tokenizer, dataset, optimizer, steps):
//   CONFIG_FILE=…/llama3_8b.toml ./run_train.sh --parallelism.tensor_parallel_degree=8 …
//
//   [parallelism]  data_parallel_replicate_degree d, data_parallel_shard_degree 1   (sharding
//                    none: DDP, which TorchTitan runs only alone, t = p = 1)
//                  data_parallel_replicate_degree 1, data_parallel_shard_degree d,
//                  fsdp_reshard_after_forward "default" | "never"   (sharding parameters |
//                    gradients: FSDP2 gathers the weights again for backward, or keeps them from
//                    forward; the latter is phaze's gradients only with one micro-batch a step)
//                  tensor_parallel_degree tp, context_parallel_degree cp,
//                  enable_async_tensor_parallel   (training.tensor_parallel_overlap > 0, tp > 1)
//   [training]     local_batch_size b, global_batch_size B (gradient accumulation B/(b·d)),
//                  seq_len S, mixed_precision_param "bfloat16", mixed_precision_reduce "float32"
//   [activation_checkpoint]  mode "none" | "selective" with selective_ac_option "op" (recompute
//                    per-op) | "full"
//   [model]        converters ["quantize.linear.float8"]   (fp8), with [quantize.linear.float8]
//                    recipe_name "tensorwise", filter_fqns ["output"] (the LM head stays bf16, as
//                    phaze keeps it; the FSDP all-gathers move bf16, as phaze prices them)
//   [compile]      enable true (the TorchTitan runs phaze is validated on were compiled: h100.md)
//
// The width t: sequence_parallel with gathered_input: keep is DTensor's tensor parallelism (tp =
// t); context_parallel is TorchTitan's (cp = t, or over such tensor parallelism of width k: tp =
// k, cp = t/k; FSDP2 then shards over d·cp, as phaze does); at t = 1 any strategy. What TorchTitan
// cannot run as phaze evaluated it has no settings and a reason: Megatron-LM's tensor parallelism
// (it gathers the input again in backward), moe (TorchTitan's expert parallelism borrows
// data-parallel ranks), a pipeline (phaze prices FSDP2 without one only, and TorchTitan trains a
// pipeline without FSDP2 in FP32), recompute selective (Megatron-LM's attention-core recompute),
// sharding optimizer (ZeRO-1), tensor or context parallelism without FSDP2, fp16, a bf16 gradient
// reduction, the unfused attention kernels (TorchTitan runs PyTorch SDPA's FlashAttention).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "phaze/search/model_evaluator.hpp"

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

  // The command-line overrides, one token each: --section.key=value (strings unquoted, lists
  // comma-separated, as TorchTitan's parser reads them); a true flag as --section.key alone, a
  // false one left out (TorchTitan's default for each written here).
  std::vector<std::string> Args() const;
  // The settings as TOML tables, in order, under a comment naming the TorchTitan release.
  std::string Toml() const;
};

// `sequence_length`: tokens per sample.
TorchTitanLaunch TorchTitanArgs(const PlanRequest& plan, const RunConfig& run,
                                std::int64_t sequence_length);

}  // namespace phaze
