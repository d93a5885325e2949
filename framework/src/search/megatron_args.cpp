#include "phaze/search/megatron_args.hpp"

namespace phaze {

namespace {

// How a strategy spends width t; false with *why when Megatron-LM has no such strategy.
bool MegatronWidthsOf(const StrategyChoice& strategy, int t, MegatronWidths* out,
                      std::string* why) {
  MegatronWidths w;
  const std::string& name = strategy.component.name;
  if (name == "megatron" || name == "sequence_parallel" || name == "moe") {
    if (strategy.over) {
      *why = "strategy '" + strategy.Name() + "': Megatron-LM composes no strategy over " + name;
      return false;
    }
    w.tensor = t;
    w.sequence_parallel = name != "megatron" && t > 1;
    if (name == "moe") {
      w.expert = ExpertParallelOf(strategy, t);
      w.expert_tensor = SplitsExperts(strategy) ? t : 1;
    }
  } else if (name == "context_parallel") {
    const std::int64_t k = strategy.over ? strategy.over->width : 1;
    const std::string inner = strategy.over ? strategy.over->component.name : "megatron";
    if (inner != "megatron" && inner != "sequence_parallel") {
      *why = "strategy '" + strategy.Name() + "': Megatron-LM runs context parallelism over its "
             "tensor parallelism only";
      return false;
    }
    w.tensor = static_cast<int>(k);
    w.context = static_cast<int>(t / k);
    w.sequence_parallel = inner == "sequence_parallel" && k > 1;
  } else {
    *why = "strategy '" + strategy.Name() + "' has no Megatron-LM equivalent";
    return false;
  }
  // PyTorch DTensor's tensor parallelism (the strategy's gathered_input: keep) is not
  // Megatron-LM's.
  if (w.sequence_parallel && KeepsGatheredInput(strategy)) {
    *why = "strategy '" + strategy.Name() +
           "' keeps the gathered input (gathered_input: keep, "
           "PyTorch DTensor's tensor parallelism); Megatron-LM gathers it again in backward";
    return false;
  }
  *out = w;
  return true;
}

}  // namespace

int ExpertParallelOf(const StrategyChoice& strategy, int t) {
  const auto e = strategy.component.Params().Optional("expert_parallel");
  return e ? static_cast<int>(e->AsPositiveInt()) : t;
}

bool SplitsExperts(const StrategyChoice& strategy) {
  if (strategy.component.name != "moe") return false;
  const auto etp = strategy.component.Params().Optional("expert_tensor_parallel");
  return etp && etp->AsString() == "width";
}

bool KeepsGatheredInput(const ComponentChoice& component) {
  const auto g = component.Params().Optional("gathered_input");
  return g && g->AsString() == "keep";
}

bool KeepsGatheredInput(const StrategyChoice& strategy) {
  return KeepsGatheredInput(strategy.component) ||
         (strategy.over && KeepsGatheredInput(strategy.over->component));
}

MegatronLaunch MegatronArgs(const PlanRequest& plan, const RunConfig& run,
                            const PipelineSplit& split, std::int64_t sequence_length,
                            bool experts) {
  MegatronLaunch launch;
  MegatronWidths w;
  if (!MegatronWidthsOf(run.strategies.at(static_cast<std::size_t>(plan.strategy)),
                        plan.tensor_parallel, &w, &launch.why)) {
    return launch;
  }
  if (!experts) w.expert = w.expert_tensor = 1;
  if (plan.pipeline_stages > 1 && split.blocks.empty()) {
    launch.why = split.why;
    return launch;
  }
  if (plan.recompute == RecomputeMode::kPerOp) {
    launch.why =
        "recompute per-op is TorchTitan's per-op selective activation checkpointing; "
        "Megatron-LM has no such granularity";
    return launch;
  }
  // Megatron-LM's checks on the sequence (validate_args): context parallelism splits it in 2·cp
  // chunks, sequence parallelism each rank's part t ways.
  if (w.context > 1 && sequence_length % (2 * w.context) != 0) {
    launch.why = "sequence " + std::to_string(sequence_length) +
                 " not a multiple of 2·cp = " + std::to_string(2 * w.context) +
                 ", as Megatron-LM's context parallelism needs";
    return launch;
  }
  if (w.sequence_parallel && (sequence_length / w.context) % w.tensor != 0) {
    launch.why = "sequence " + std::to_string(sequence_length / w.context) +
                 " per context rank not a multiple of tp = " + std::to_string(w.tensor) +
                 ", as Megatron-LM's sequence parallelism needs";
    return launch;
  }
  // Megatron-FSDP's hybrid sharding all-reduces across its instances at the last micro-batch
  // only (megatron_fsdp.py: outer_fsdp_group_grad_reduce on is_last_microbatch): priced as
  // training.hybrid_all_reduce once_a_step (the megatron-core-2024 recipe), not FSDP2's.
  const std::int64_t h = ShardReplicasOf(plan, run.cluster.network);
  const std::int64_t accumulation =
      run.training.global_batch / (plan.micro_batch * plan.data_parallel);
  if (plan.sharding >= Sharding::kGradients && h < plan.data_parallel && accumulation > 1 &&
      run.training.hybrid_all_reduce != HybridAllReduce::kOnceAStep) {
    launch.why = "hybrid sharding of gradients or parameters over " + std::to_string(accumulation) +
                 " micro-batches a step priced with the all-reduce every micro-batch (FSDP2's): "
                 "Megatron-FSDP all-reduces across its instances once a step "
                 "(training.hybrid_all_reduce: once_a_step)";
    return launch;
  }
  // Megatron-LM splits the experts' distributed optimizer into the same instances, and asserts
  // that they divide the expert data-parallel size, world/(EP·ETP·PP) (parallel_state.py:
  // "Expert data parallel size should be divisible by partial DistOpt shard factor").
  if (experts && plan.sharding != Sharding::kNone && h < plan.data_parallel) {
    const std::int64_t instances = plan.data_parallel / h;
    const std::int64_t expert_dp = std::int64_t{w.tensor} * w.context * plan.data_parallel /
                                   (std::int64_t{w.expert} * w.expert_tensor);
    if (expert_dp % instances != 0) {
      launch.why = "expert data-parallel size " + std::to_string(expert_dp) +
                   " not a multiple of the " + std::to_string(instances) +
                   " distributed-optimizer instances, as Megatron-LM needs";
      return launch;
    }
  }
  // The precision-aware optimizer (TE's FusedAdam with bf16 moments) runs under the distributed
  // optimizer only (megatron/core/optimizer/__init__.py).
  if (run.training.optimizer == OptimizerKind::kAdamBf16Moments &&
      plan.sharding == Sharding::kNone) {
    launch.why =
        "optimizer adam-bf16-moments without a sharding: Megatron-LM's precision-aware optimizer "
        "runs only with the distributed optimizer (sharding optimizer or more)";
    return launch;
  }
  // ZeRO-2/3 is Megatron-FSDP, planned without a pipeline (its v2 refuses one:
  // megatron/core/distributed/fsdp/mcore_fsdp_adapter.py; LaunchablePlans offers none).
  if (plan.sharding >= Sharding::kGradients && plan.pipeline_stages > 1) {
    launch.why = "sharding " + std::string(ToString(plan.sharding)) +
                 " under a pipeline: Megatron-LM shards gradients and parameters with "
                 "Megatron-FSDP, which runs without a pipeline (its v2 refuses one)";
    return launch;
  }
  launch.widths = w;
  // Megatron-LM asserts one CUDA connection with tensor or context parallelism on Hoppers and
  // older (it orders the collectives and the GEMMs they overlap), and not under Megatron-FSDP.
  if ((w.tensor > 1 || w.context > 1) && plan.sharding < Sharding::kGradients) {
    launch.env.push_back("CUDA_DEVICE_MAX_CONNECTIONS=1");
  }
  std::vector<std::string>& a = launch.args;
  auto flag = [&](const std::string& name, std::int64_t value) {
    a.push_back(name);
    a.push_back(std::to_string(value));
  };
  flag("--tensor-model-parallel-size", w.tensor);
  flag("--pipeline-model-parallel-size", plan.pipeline_stages);
  // The split priced: Megatron-LM's default when every chunk holds the same blocks, else its
  // layout (which sets the virtual stages itself).
  if (plan.pipeline_stages > 1 && !split.Even()) {
    a.insert(a.end(), {"--pipeline-model-parallel-layout", MegatronLayout(split)});
  } else if (plan.virtual_stages > 1) {
    flag("--num-layers-per-virtual-pipeline-stage", split.blocks.front());
  }
  if (w.context > 1) flag("--context-parallel-size", w.context);
  // The experts' split as priced, and the all-to-all dispatcher the moe strategy prices (with
  // split experts its tokens gathered over the width; Megatron's default allgather dispatcher
  // gathers every token instead), with every expert on every rank (e = 1) too. Megatron-LM's
  // --expert-tensor-parallel-size defaults to TP: whole experts at t > 1 say 1 under any strategy.
  const bool spread = w.expert > 1 || w.expert_tensor > 1;
  if (spread || (experts && w.tensor > 1)) {
    if (w.expert > 1) flag("--expert-model-parallel-size", w.expert);
    flag("--expert-tensor-parallel-size", w.expert_tensor);
    if (spread) a.insert(a.end(), {"--moe-token-dispatcher-type", "alltoall"});
  }
  flag("--micro-batch-size", plan.micro_batch);
  flag("--global-batch-size", run.training.global_batch);
  flag("--seq-length", sequence_length);
  if (w.sequence_parallel) a.push_back("--sequence-parallel");
  // The vocabulary padding the strategy was given (make_vocab_size_divisible_by; Megatron-LM's
  // default 128 goes unsaid).
  const StrategyChoice& strategy = run.strategies.at(static_cast<std::size_t>(plan.strategy));
  for (const ComponentChoice* c :
       {&strategy.component, strategy.over ? &strategy.over->component : nullptr}) {
    if (!c) continue;
    const auto multiple = c->Params().Optional("make_vocab_size_divisible_by");
    if (multiple && multiple->AsInt() != 128) {
      flag("--make-vocab-size-divisible-by", multiple->AsInt());
      break;
    }
  }
  // The tensor-parallel all-gathers and reduce-scatters chunked beside the GEMMs (Transformer
  // Engine's userbuffers; Megatron-LM allows it only with sequence parallelism, and phaze models
  // it only for those collectives: graph/tensor_parallel_overlap.hpp).
  if (w.sequence_parallel && run.training.tensor_parallel_overlap > 0) {
    a.push_back("--tp-comm-overlap");
  }
  switch (plan.recompute) {
    case RecomputeMode::kNone:
      break;
    case RecomputeMode::kSelective:
      a.insert(a.end(), {"--recompute-granularity", "selective"});
      break;
    case RecomputeMode::kFull:
      a.insert(a.end(), {"--recompute-granularity", "full", "--recompute-method", "uniform",
                         "--recompute-num-layers", "1"});
      break;
    case RecomputeMode::kPerOp:  // refused above
      break;
  }
  if (plan.sharding != Sharding::kNone) a.push_back("--use-distributed-optimizer");
  // Hybrid sharding: d/h copies of the sharded state, each over h replicas (Megatron-LM's
  // intra-instance group is dp·cp/instances consecutive ranks; Megatron-FSDP's HSDP likewise).
  if (plan.sharding != Sharding::kNone && h < plan.data_parallel) {
    a.insert(a.end(),
             {"--num-distributed-optimizer-instances", std::to_string(plan.data_parallel / h)});
  }
  if (plan.sharding >= Sharding::kGradients) {
    a.insert(a.end(), {"--use-megatron-fsdp", "--data-parallel-sharding-strategy",
                       plan.sharding == Sharding::kGradients ? "optim_grads" : "optim_grads_params",
                       "--ckpt-format", "fsdp_dtensor"});  // Megatron-FSDP's only format
  }
  if (run.training.optimizer == OptimizerKind::kSgd) {
    a.insert(a.end(), {"--optimizer", "sgd"});
  } else if (run.training.optimizer == OptimizerKind::kAdamBf16Moments) {
    a.insert(a.end(), {"--use-precision-aware-optimizer", "--exp-avg-dtype", "bf16",
                       "--exp-avg-sq-dtype", "bf16"});
  }
  // The overlapped reduction: bucketed behind backward; with the distributed optimizer its
  // all-gather of the updated weights too (Megatron-LM allows --overlap-param-gather only there).
  if (run.training.gradient_reduction_overlap > 0) {
    a.push_back("--overlap-grad-reduce");
    if (plan.sharding == Sharding::kOptimizer) a.push_back("--overlap-param-gather");
  }
  if (IsFlashAttention(run.training.attention)) {
    a.insert(a.end(), {"--attention-backend", "flash"});
  }
  // The number format; Megatron-LM with --bf16 reduces gradients in fp32 unless told bf16, with
  // --fp16 in its fp16 gradient buffer. FP8 is Transformer Engine's hybrid recipe over bf16.
  a.push_back(run.training.precision == Precision::kFp16 ? "--fp16" : "--bf16");
  if (run.training.precision != Precision::kFp16 &&
      run.training.gradient_reduction_precision == ReductionPrecision::kBf16) {
    a.push_back("--grad-reduce-in-bf16");
  }
  if (run.training.precision == Precision::kFp8) {
    a.insert(a.end(), {"--fp8-format", "hybrid", "--fp8-recipe",
                       std::string(ToString(run.training.fp8_recipe))});
    // The weights all-gathered in FP8 (training.fp8_param_gather): Megatron-LM allows it with
    // the distributed optimizer or Megatron-FSDP only, which any sharding here runs, and then
    // keeps them in FP8 only (training.fp8_param_storage fp8; a plan priced with 16bit storage
    // holds up to 2 bytes an FP8 weight fewer under this flag than priced).
    if (run.training.fp8_param_gather && plan.sharding != Sharding::kNone) {
      a.push_back("--fp8-param-gather");
    }
  }
  return launch;
}

}  // namespace phaze
