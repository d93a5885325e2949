#include "phaze/search/torchtitan_args.hpp"

#include "phaze/graph/attention_kernel.hpp"
#include "phaze/graph/loss_kernel.hpp"
#include "phaze/search/megatron_args.hpp"

namespace phaze {

namespace {

std::string Quoted(const std::string& s) { return "\"" + s + "\""; }

// How the strategy spends width t as TorchTitan's tp and cp, and its expert-parallel degree ep;
// false with *why otherwise.
bool TorchTitanWidths(const StrategyChoice& strategy, int t, int* tp, int* cp, int* ep,
                      std::string* why) {
  *tp = 1;
  *cp = 1;
  *ep = 1;
  const std::string& name = strategy.component.name;
  const std::string inner = strategy.over ? strategy.over->component.name : "";
  const std::int64_t k = strategy.over ? strategy.over->width : 1;
  const std::string dtensor =
      "TorchTitan's tensor parallelism is PyTorch DTensor's, which keeps the gathered input "
      "(strategy sequence_parallel or moe with params {gathered_input: keep})";
  if (name == "moe" && !strategy.over) {
    // Its experts whole on each rank (expert_tensor_parallel_degree 1), the expert groups over
    // e consecutive ranks of dp_shard·tp, as phaze folds them.
    if (t > 1 && !KeepsGatheredInput(strategy)) {
      *why = "tensor parallelism that gathers the input again in backward: " + dtensor;
      return false;
    }
    if (t > 1 && SplitsExperts(strategy)) {
      *why =
          "experts split over the width (expert_tensor_parallel width): phaze writes "
          "TorchTitan's arguments for whole experts only, expert_tensor_parallel_degree 1";
      return false;
    }
    *tp = t;
    *ep = ExpertParallelOf(strategy, t);
    return true;
  }
  if (t == 1) return true;  // every other strategy slices nothing at t = 1
  if (name == "sequence_parallel" && !strategy.over) {
    if (!KeepsGatheredInput(strategy)) {
      *why = "tensor parallelism that gathers the input again in backward: " + dtensor;
      return false;
    }
    *tp = t;
    return true;
  }
  if (name == "context_parallel" && (!strategy.over || k == 1 || inner == "sequence_parallel")) {
    if (t % k != 0) {
      *why = "strategy " + strategy.Name() + " at t " + std::to_string(t) +
             ": the width is not a multiple of the inner one";
      return false;
    }
    if (k > 1 && !KeepsGatheredInput(strategy.over->component)) {
      *why = "tensor parallelism that gathers the input again in backward: " + dtensor;
      return false;
    }
    *tp = static_cast<int>(k);
    *cp = static_cast<int>(t / k);
    return true;
  }
  if (name == "megatron") {
    *why =
        "tensor parallelism without sequence parallelism: TorchTitan does not run it; " + dtensor;
  } else {
    *why = "strategy " + strategy.Name() + ": no TorchTitan equivalent";
  }
  return false;
}

}  // namespace

std::vector<std::string> TorchTitanLaunch::Args() const {
  std::vector<std::string> out;
  for (const TorchTitanSetting& s : settings) {
    const std::string flag = "--" + s.section + "." + s.key;
    if (s.value == "true") {
      out.push_back(flag);
    } else if (s.value == "false") {  // tyro's negation: the model's config may say true
      out.push_back("--" + s.section + ".no_" + s.key);
    } else if (s.value.empty()) {
      continue;
    } else if (s.value.front() == '[') {  // ["a", "b"] → a,b
      std::string list;
      for (char c : s.value.substr(1, s.value.size() - 2)) {
        if (c != '"' && c != ' ') list += c;
      }
      out.push_back(flag + "=" + list);
    } else if (s.value.front() == '"') {
      out.push_back(flag + "=" + s.value.substr(1, s.value.size() - 2));
    } else {
      out.push_back(flag + "=" + s.value);
    }
  }
  return out;
}

std::string TorchTitanLaunch::Toml() const {
  std::string out =
      "# TorchTitan v0.2.2 job config keys from phaze plan: merge over the model's own train "
      "config\n";
  std::string section;
  for (const TorchTitanSetting& s : settings) {
    if (s.section != section) {
      section = s.section;
      out += "\n[" + section + "]\n";
    }
    out += s.key + " = " + s.value + "\n";
  }
  return out;
}

TorchTitanLaunch TorchTitanArgs(const PlanRequest& plan, const RunConfig& run,
                                const PipelineSplit& split, std::int64_t sequence_length,
                                bool experts) {
  TorchTitanLaunch launch;
  const StrategyChoice& strategy = run.strategies.at(static_cast<std::size_t>(plan.strategy));
  int tp = 1;
  int cp = 1;
  int ep = 1;
  if (!TorchTitanWidths(strategy, plan.tensor_parallel, &tp, &cp, &ep, &launch.why)) {
    return launch;
  }
  if (!experts) ep = 1;
  const RunConfig::Training& training = run.training;
  const std::int64_t d = plan.data_parallel;
  const int p = plan.pipeline_stages;
  const std::int64_t accumulation = training.global_batch / (plan.micro_batch * d);
  const std::int64_t h = ShardReplicasOf(plan, run.cluster.network);
  std::string& why = launch.why;
  if (p > 1 && plan.sharding != Sharding::kOptimizer) {
    why =
        "a pipeline without sharding optimizer: TorchTitan's pipeline runs under FSDP2, which "
        "keeps the weights and gradients whole through the step and shards the optimizer "
        "(phaze's sharding optimizer); without FSDP2 it trains in FP32";
  } else if (plan.recompute == RecomputeMode::kSelective) {
    why =
        "recompute selective: Megatron-LM's (the attention core); TorchTitan's selective "
        "activation checkpointing is per-op (--recompute per-op)";
  } else if (p == 1 && plan.sharding == Sharding::kOptimizer) {
    why =
        "sharding optimizer without a pipeline: ZeRO-1, which TorchTitan has only under its "
        "pipeline (FSDP2 alone is sharding gradients or parameters)";
  } else if (plan.sharding == Sharding::kNone && (tp > 1 || cp > 1)) {
    why =
        "sharding none with tensor or context parallelism: TorchTitan runs DDP alone (with "
        "context parallelism it shards the weights over it; with tensor parallelism it trains "
        "in FP32)";
  } else if (plan.sharding == Sharding::kNone && accumulation > 1) {
    why =
        "sharding none over several micro-batches a step: TorchTitan's DDP all-reduces the "
        "gradients every micro-batch (" +
        std::to_string(accumulation) + " here), phaze once a step";
  } else if (plan.sharding == Sharding::kGradients && accumulation > 1) {
    why =
        "sharding gradients over several micro-batches a step: FSDP2 keeping the weights "
        "from forward to backward gathers them every micro-batch (" +
        std::to_string(accumulation) + " here), phaze's gradients sharding once a step";
  } else if (p == 1 && plan.sharding >= Sharding::kGradients && h < d && accumulation > 1 &&
             training.hybrid_all_reduce == HybridAllReduce::kOnceAStep) {
    why =
        "hybrid sharding priced with the all-reduce once a step over several micro-batches: "
        "FSDP2 all-reduces across the replicas every micro-batch (" +
        std::to_string(accumulation) + " here; training.hybrid_all_reduce: every_micro_batch)";
  } else if (training.precision == Precision::kFp8 && tp > 1) {
    why =
        "fp8 with tensor parallelism: TorchTitan v0.2.2 turns on float8 tensor parallelism only "
        "for a converter named \"float8\", which it no longer registers, so its tensor-parallel "
        "all-gathers move bf16 where phaze moves FP8";
  } else if (training.optimizer != OptimizerKind::kAdamMixed) {
    why = "optimizer " + std::string(ToString(training.optimizer)) +
          ": TorchTitan's AdamW keeps its moments in FP32, as adam-mixed prices them";
  } else if (training.Fp8WeightsOnly(plan.sharding)) {
    why =
        "fp8_param_storage fp8: the FP8 weights kept in FP8 only are Megatron-LM's; TorchTitan "
        "keeps them in 16 bits and casts its shards to gather them in FP8 (fp8_param_storage "
        "16bit)";
  } else if (training.precision == Precision::kFp8 &&
             training.fp8_recipe != Fp8Recipe::kTensorwise) {
    why = "fp8_recipe " + std::string(ToString(training.fp8_recipe)) +
          ": TorchTitan's float8 converter scales tensorwise (torchao's current scaling), not "
          "from an amax history; use fp8_recipe tensorwise";
  } else if (sequence_length % (2 * tp * cp) != 0) {
    why = "sequence not a multiple of 2·tp·cp: TorchTitan requires seq_len " +
          std::to_string(sequence_length) + " to be one of " + std::to_string(2 * tp * cp);
  } else if (training.precision == Precision::kFp16) {
    why = "fp16: TorchTitan trains in bfloat16 (or float32)";
  } else if (training.gradient_reduction_precision != ReductionPrecision::kFp32) {
    why = "gradients reduced in " + std::string(ToString(training.gradient_reduction_precision)) +
          ": TorchTitan v0.2.2 reduces them in float32 only (mixed_precision_reduce)";
  } else if (!IsFlashAttention(training.attention)) {
    why = "attention " + std::string(ToString(training.attention)) +
          ": TorchTitan runs PyTorch SDPA's FlashAttention (attention flash or fused)";
  } else if (ep > 1 && (plan.sharding != Sharding::kNone ? h : 1) * tp * cp % ep != 0) {
    why = "expert_parallel " + std::to_string(ep) +
          " not dividing data_parallel_shard_degree·tp·cp (" +
          std::to_string((plan.sharding != Sharding::kNone ? h : 1) * tp * cp) +
          "): TorchTitan's expert groups borrow those ranks, which the expert-parallel degree "
          "must divide";
  }
  // The split priced, as TorchTitan's first/last-stage-less-layers give it.
  int first_less = 0, last_less = 0, layers_per_stage = 0;
  if (why.empty() && p > 1) {
    if (split.blocks.empty()) {
      why = split.why;
    } else if (!TorchTitanLessLayers(split, plan.virtual_stages, &first_less, &last_less,
                                     &layers_per_stage)) {
      why = "the pipeline split priced (" + split.Text() +
            " blocks a chunk) is none TorchTitan's pipeline_parallel_first/last_stage_less_layers "
            "give";
    }
  }
  if (!why.empty()) return launch;

  launch.tensor = tp;
  launch.context = cp;
  launch.expert = ep;
  auto set = [&](const std::string& section, const std::string& key, const std::string& value) {
    launch.settings.push_back({section, key, value});
  };
  const bool fsdp = plan.sharding != Sharding::kNone;
  // FSDP2 over h of the d replicas (HSDP when h < d: the mesh's dp_replicate outside its fsdp).
  set("parallelism", "data_parallel_replicate_degree", std::to_string(fsdp ? d / h : d));
  set("parallelism", "data_parallel_shard_degree", std::to_string(fsdp ? h : 1));
  if (fsdp) {
    set("parallelism", "fsdp_reshard_after_forward",
        Quoted(plan.sharding == Sharding::kGradients ? "never" : "default"));
  }
  set("parallelism", "tensor_parallel_degree", std::to_string(tp));
  set("parallelism", "context_parallel_degree", std::to_string(cp));
  if (ep > 1) {  // whole experts on each rank, over ep consecutive ranks of dp_shard·cp·tp
    set("parallelism", "expert_parallel_degree", std::to_string(ep));
    set("parallelism", "expert_tensor_parallel_degree", "1");
  }
  set("parallelism", "pipeline_parallel_degree", std::to_string(p));
  if (p > 1) {  // the split priced (pipeline_split.hpp)
    set("parallelism", "pipeline_parallel_schedule",
        Quoted(plan.virtual_stages > 1                                  ? "Interleaved1F1B"
               : training.pipeline_schedule == PipelineSchedule::kGPipe ? "GPipe"
                                                                        : "1F1B"));
    if (layers_per_stage > 0) {  // else v 1, or v 2: TorchTitan's default two chunks a device
      set("parallelism", "pipeline_parallel_layers_per_stage", std::to_string(layers_per_stage));
    }
    set("parallelism", "pipeline_parallel_first_stage_less_layers", std::to_string(first_less));
    set("parallelism", "pipeline_parallel_last_stage_less_layers", std::to_string(last_less));
    set("parallelism", "pipeline_parallel_microbatch_size", std::to_string(plan.micro_batch));
  }
  set("parallelism", "enable_async_tensor_parallel",
      tp > 1 && training.tensor_parallel_overlap > 0 ? "true" : "false");
  // Per data-parallel rank: one micro-batch a step's accumulation, or a pipeline's schedule of all.
  set("training", "local_batch_size",
      std::to_string(p > 1 ? training.global_batch / d : plan.micro_batch));
  set("training", "global_batch_size", std::to_string(training.global_batch));
  set("training", "seq_len", std::to_string(sequence_length));
  set("training", "mixed_precision_param", Quoted("bfloat16"));
  set("training", "mixed_precision_reduce", Quoted("float32"));
  switch (plan.recompute) {
    case RecomputeMode::kNone:
      set("activation_checkpoint", "mode", Quoted("none"));
      break;
    case RecomputeMode::kPerOp:
      set("activation_checkpoint", "mode", Quoted("selective"));
      set("activation_checkpoint", "selective_ac_option", Quoted("op"));
      break;
    case RecomputeMode::kFull:
      set("activation_checkpoint", "mode", Quoted("full"));
      break;
    case RecomputeMode::kSelective:  // refused above
      break;
  }
  if (training.precision == Precision::kFp8) {
    set("model", "converters", "[\"quantize.linear.float8\"]");
    // torchao's default recipe (tensorwise scaling); the FSDP all-gathers in bf16 or, with
    // training.fp8_param_gather, in FP8 with the scales of all weights found in one pass after
    // the optimizer step (precompute_float8_dynamic_scale_for_fsdp), as torchao advises.
    // FSDP2 shards over dp_shard·cp, h·cp ranks: it gathers where that is more than one.
    const bool fp8_gather = training.fp8_param_gather && fsdp && h * cp > 1;
    set("quantize.linear.float8", "enable_fsdp_float8_all_gather", fp8_gather ? "true" : "false");
    if (fp8_gather) {
      set("quantize.linear.float8", "precompute_float8_dynamic_scale_for_fsdp", "true");
    }
    set("quantize.linear.float8", "filter_fqns", "[\"output\"]");
  }
  set("compile", "enable", "true");
  // What phaze priced: the loss compiled with the model (training.loss compiled, TorchTitan's
  // default components) or run eager.
  set("compile", "components",
      training.loss == LossKernel::kCompiled ? "[\"model\", \"loss\"]" : "[\"model\"]");
  return launch;
}

}  // namespace phaze
