// TorchTitanArgs: the job-config keys that launch a plan on TorchTitan v0.2.2, checked against the
// configurations TorchTitan's own H100 benchmarks state (torchtitan
// benchmarks/llama3_h100_202412_torchtitan.md: Llama 3.1 8B on 8 GPUs with FSDP 8, local batch 2,
// per-op selective activation checkpointing, torch.compile; 70B on 256 GPUs with FSDP 32 and TP 8,
// local batch 16, full checkpointing, float8), and the plans it refuses with their reasons.
#include "phaze/search/torchtitan_args.hpp"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "phaze/core/config_node.hpp"
#include "test_util.hpp"

namespace phaze {
namespace {

using testing::Split;

// The settings of a plan whose `blocks` split evenly over its p·v chunks, as plans split them.
TorchTitanLaunch TorchTitanArgsEven(const PlanRequest& r, const RunConfig& run, int blocks,
                                    std::int64_t sequence_length, bool experts = true) {
  return TorchTitanArgs(r, run,
                        PipelineSplit::Default(blocks, r.pipeline_stages * r.virtual_stages),
                        sequence_length, experts);
}

StrategyChoice DTensorTensorParallel() {
  StrategyChoice c = StrategyChoice::Named("sequence_parallel");
  c.component.params = ConfigNode::ParseString("gathered_input: keep", "test");
  return c;
}

// TorchTitan's recipe (share/recipes/torchtitan-2025.yaml) on a run config of defaults.
RunConfig TorchTitanRun() {
  RunConfig run = RunConfig::Defaults();
  run.training.attention = AttentionKernel::kFlash;
  run.training.gradient_reduction_precision = ReductionPrecision::kFp32;
  run.training.fp8_recipe = Fp8Recipe::kTensorwise;
  run.training.loss = LossKernel::kCompiled;  // the recipe torchtitan-2025's
  run.training.fp8_param_storage = Fp8ParamStorage::k16Bit;  // the recipe's
  StrategyChoice cp = StrategyChoice::Named("context_parallel");
  cp.over = StrategyChoice::Over{DTensorTensorParallel().component, 2};
  run.strategies = {DTensorTensorParallel(),
                    StrategyChoice::Named("megatron"),
                    StrategyChoice::Named("sequence_parallel"),
                    cp,
                    StrategyChoice::Named("context_parallel"),
                    StrategyChoice::Named("moe")};
  return run;
}

PlanRequest Plan(int strategy, int t, int d, std::int64_t b, RecomputeMode recompute,
                 Sharding sharding) {
  PlanRequest r;
  r.strategy = strategy;
  r.tensor_parallel = t;
  r.data_parallel = d;
  r.micro_batch = b;
  r.recompute = recompute;
  r.sharding = sharding;
  return r;
}

TEST(TorchTitanArgs, TheBenchmarksOwnConfigurations) {
  RunConfig run = TorchTitanRun();
  // 8B, 8 GPUs: FSDP 8, local batch 2 (global 16: no accumulation), per-op checkpointing, bf16.
  run.training.global_batch = 16;
  const PlanRequest eight_gpus = Plan(0, 1, 8, 2, RecomputeMode::kPerOp, Sharding::kParameters);
  TorchTitanLaunch eight = TorchTitanArgsEven(eight_gpus, run, 32, 8192);
  EXPECT_EQ(eight.why, "");
  // The false flag in tyro's negated form (a model's config may turn async TP on).
  EXPECT_EQ(
      eight.Args(),
      Split("--parallelism.data_parallel_replicate_degree=1 "
            "--parallelism.data_parallel_shard_degree=8 "
            "--parallelism.fsdp_reshard_after_forward=default "
            "--parallelism.tensor_parallel_degree=1 "
            "--parallelism.context_parallel_degree=1 "
            "--parallelism.pipeline_parallel_degree=1 "
            "--parallelism.no_enable_async_tensor_parallel --training.local_batch_size=2 "
            "--training.global_batch_size=16 --training.seq_len=8192 "
            "--training.mixed_precision_param=bfloat16 "
            "--training.mixed_precision_reduce=float32 --activation_checkpoint.mode=selective "
            "--activation_checkpoint.selective_ac_option=op --compile.enable "
            "--compile.components=model,loss"));
  EXPECT_EQ(eight.Toml(),
            "# TorchTitan v0.2.2 job config keys from phaze plan: merge over the model's own train "
            "config\n"
            "\n[parallelism]\n"
            "data_parallel_replicate_degree = 1\n"
            "data_parallel_shard_degree = 8\n"
            "fsdp_reshard_after_forward = \"default\"\n"
            "tensor_parallel_degree = 1\n"
            "context_parallel_degree = 1\n"
            "pipeline_parallel_degree = 1\n"
            "enable_async_tensor_parallel = false\n"
            "\n[training]\n"
            "local_batch_size = 2\n"
            "global_batch_size = 16\n"
            "seq_len = 8192\n"
            "mixed_precision_param = \"bfloat16\"\n"
            "mixed_precision_reduce = \"float32\"\n"
            "\n[activation_checkpoint]\n"
            "mode = \"selective\"\n"
            "selective_ac_option = \"op\"\n"
            "\n[compile]\n"
            "enable = true\n"
            "components = [\"model\", \"loss\"]\n");
  {  // The loss priced eager (TorchTitan's 2024 runs): the model alone compiled.
    RunConfig eager = run;
    eager.training.loss = LossKernel::kTorch;
    EXPECT_EQ(TorchTitanArgsEven(eight_gpus, eager, 32, 8192).Args().back(),
              "--compile.components=model");
  }
  // Its float8 run: the linear layers converted but the LM head (`output`), the FSDP all-gathers
  // left in bf16 as phaze prices them.
  run.training.precision = Precision::kFp8;
  const std::vector<std::string> fp8 = TorchTitanArgsEven(eight_gpus, run, 32, 8192).Args();
  EXPECT_EQ(std::vector<std::string>(fp8.end() - 5, fp8.end()),
            Split("--model.converters=quantize.linear.float8 "
                  "--quantize.linear.float8.no_enable_fsdp_float8_all_gather "
                  "--quantize.linear.float8.filter_fqns=output --compile.enable "
                  "--compile.components=model,loss"));
  {  // FP8 weights gathered in FP8 (training.fp8_param_gather): FSDP's float8 all-gathers with
     // their scales precomputed; also where FSDP2 shards over cp ranks alone (d = 1, cp 8), and
     // not over one rank.
    RunConfig gather = run;
    gather.training.fp8_param_gather = true;
    auto has = [](const TorchTitanLaunch& l, const std::string& arg) {
      const std::vector<std::string> a = l.Args();
      return std::find(a.begin(), a.end(), arg) != a.end();
    };
    const std::string on = "--quantize.linear.float8.enable_fsdp_float8_all_gather";
    const TorchTitanLaunch eight_fp8 = TorchTitanArgsEven(eight_gpus, gather, 32, 8192);
    EXPECT_TRUE(has(eight_fp8, on));
    EXPECT_TRUE(
        has(eight_fp8, "--quantize.linear.float8.precompute_float8_dynamic_scale_for_fsdp"));
    const TorchTitanLaunch cp_only = TorchTitanArgsEven(
        Plan(4, 8, 1, 2, RecomputeMode::kFull, Sharding::kParameters), gather, 32, 8192);
    ASSERT_EQ(cp_only.why, "");
    EXPECT_TRUE(has(cp_only, on));
    const TorchTitanLaunch one = TorchTitanArgsEven(
        Plan(0, 1, 1, 2, RecomputeMode::kFull, Sharding::kParameters), gather, 32, 8192);
    EXPECT_TRUE(one.why.empty() ? !has(one, on) : true) << one.why;
    // Weights kept in FP8 only are Megatron-LM's: TorchTitan does not launch them.
    RunConfig stored = gather;
    stored.training.fp8_param_storage = Fp8ParamStorage::kFp8;
    EXPECT_NE(TorchTitanArgsEven(eight_gpus, stored, 32, 8192).why.find("fp8_param_storage fp8"),
              std::string::npos);
  }
  // 70B, 256 GPUs: FSDP 32 × TP 8, local batch 16 (global 512), full checkpointing, bf16; with the
  // tensor-parallel overlap, async TP.
  run.training.precision = Precision::kBf16;
  run.training.global_batch = 512;
  run.training.tensor_parallel_overlap = 0.5;
  EXPECT_EQ(TorchTitanArgsEven(Plan(0, 8, 32, 16, RecomputeMode::kFull, Sharding::kParameters), run,
                               80, 8192)
                .Args(),
            Split("--parallelism.data_parallel_replicate_degree=1 "
                  "--parallelism.data_parallel_shard_degree=32 "
                  "--parallelism.fsdp_reshard_after_forward=default "
                  "--parallelism.tensor_parallel_degree=8 --parallelism.context_parallel_degree=1 "
                  "--parallelism.pipeline_parallel_degree=1 "
                  "--parallelism.enable_async_tensor_parallel --training.local_batch_size=16 "
                  "--training.global_batch_size=512 --training.seq_len=8192 "
                  "--training.mixed_precision_param=bfloat16 "
                  "--training.mixed_precision_reduce=float32 --activation_checkpoint.mode=full "
                  "--compile.enable --compile.components=model,loss"));
}

TEST(TorchTitanArgs, WidthsShardingAndBatches) {
  RunConfig run = TorchTitanRun();
  run.training.global_batch = 64;
  auto settings = [&](const PlanRequest& r, int blocks = 32) {
    const TorchTitanLaunch l = TorchTitanArgsEven(r, run, blocks, 4096);
    EXPECT_EQ(l.why, "");
    std::string text;
    for (const std::string& a : l.Args()) {
      if ((a.rfind("--parallelism.", 0) == 0 && a.find(".no_") == std::string::npos) ||
          a.rfind("--training.local", 0) == 0) {
        text += (text.empty() ? "" : " ") + a.substr(2);
      }
    }
    return text;
  };
  // Context parallelism 4 over DTensor tensor parallelism 2 at t 8; FSDP2 keeping the weights
  // for backward (sharding gradients) with one micro-batch a step: 4 × 2 × 8 = 64.
  EXPECT_EQ(settings(Plan(3, 8, 2, 32, RecomputeMode::kNone, Sharding::kGradients)),
            "parallelism.data_parallel_replicate_degree=1 "
            "parallelism.data_parallel_shard_degree=2 "
            "parallelism.fsdp_reshard_after_forward=never parallelism.tensor_parallel_degree=2 "
            "parallelism.context_parallel_degree=4 parallelism.pipeline_parallel_degree=1 "
            "training.local_batch_size=32");
  // TorchTitan's context parallelism alone, over 4 ranks.
  EXPECT_EQ(settings(Plan(4, 4, 2, 4, RecomputeMode::kNone, Sharding::kParameters)),
            "parallelism.data_parallel_replicate_degree=1 "
            "parallelism.data_parallel_shard_degree=2 "
            "parallelism.fsdp_reshard_after_forward=default parallelism.tensor_parallel_degree=1 "
            "parallelism.context_parallel_degree=4 parallelism.pipeline_parallel_degree=1 "
            "training.local_batch_size=4");
  // Data parallelism alone without sharding: DDP over 8 (any strategy at t 1), one micro-batch of
  // 8 a step (TorchTitan's DDP reduces every micro-batch).
  EXPECT_EQ(settings(Plan(1, 1, 8, 8, RecomputeMode::kNone, Sharding::kNone)),
            "parallelism.data_parallel_replicate_degree=8 "
            "parallelism.data_parallel_shard_degree=1 parallelism.tensor_parallel_degree=1 "
            "parallelism.context_parallel_degree=1 parallelism.pipeline_parallel_degree=1 "
            "training.local_batch_size=8");
  // A pipeline under FSDP2 (sharding optimizer): 8 stages of 6 virtual ones over 96 blocks, 2
  // blocks each; the local batch is the replica's 64 / 8 = 8 samples, micro-batches of 1.
  PlanRequest piped = Plan(0, 4, 8, 1, RecomputeMode::kNone, Sharding::kOptimizer);
  piped.pipeline_stages = 8;
  piped.virtual_stages = 6;
  EXPECT_EQ(settings(piped, 96),
            "parallelism.data_parallel_replicate_degree=1 "
            "parallelism.data_parallel_shard_degree=8 "
            "parallelism.fsdp_reshard_after_forward=default parallelism.tensor_parallel_degree=4 "
            "parallelism.context_parallel_degree=1 parallelism.pipeline_parallel_degree=8 "
            "parallelism.pipeline_parallel_schedule=Interleaved1F1B "
            "parallelism.pipeline_parallel_layers_per_stage=2 "
            "parallelism.pipeline_parallel_first_stage_less_layers=0 "
            "parallelism.pipeline_parallel_last_stage_less_layers=0 "
            "parallelism.pipeline_parallel_microbatch_size=1 training.local_batch_size=8");
  // Without interleaving, 30 blocks over 4 stages: TorchTitan's own even split with no weight
  // for the embedding and head is Megatron's (8, 8, 7, 7), so no layers per stage is given.
  piped = Plan(0, 2, 2, 4, RecomputeMode::kFull, Sharding::kOptimizer);
  piped.pipeline_stages = 4;
  EXPECT_EQ(settings(piped, 30),
            "parallelism.data_parallel_replicate_degree=1 "
            "parallelism.data_parallel_shard_degree=2 "
            "parallelism.fsdp_reshard_after_forward=default parallelism.tensor_parallel_degree=2 "
            "parallelism.context_parallel_degree=1 parallelism.pipeline_parallel_degree=4 "
            "parallelism.pipeline_parallel_schedule=1F1B "
            "parallelism.pipeline_parallel_first_stage_less_layers=0 "
            "parallelism.pipeline_parallel_last_stage_less_layers=0 "
            "parallelism.pipeline_parallel_microbatch_size=4 training.local_batch_size=32");
}

// Hybrid sharding: TorchTitan's HSDP, FSDP2 within dp_shard = h replicas and dp_replicate = d/h
// copies (its mesh runs pp, dp_replicate, fsdp, tp outermost first, as phaze's ranks). On nodes
// of 8, `node` at DTensor TP 2 shards over the 4 replicas a node holds, d 32 over 8 copies; with
// two micro-batches a step too (FSDP2 all-reduces every micro-batch, as phaze prices it). A
// pipeline under FSDP2 (sharding optimizer) shards within 16 devices at t 4: 4 of d 8.
TEST(TorchTitanArgs, HybridShardingIsHsdp) {
  RunConfig run = TorchTitanRun();
  run.cluster.network = Network({{"node", 8, 300e9, 0}, {"fabric", 0, 50e9, 0}});
  run.training.global_batch = 128;
  auto degrees = [&](const PlanRequest& r) {
    const TorchTitanLaunch l = TorchTitanArgsEven(r, run, 32, 4096);
    EXPECT_EQ(l.why, "");
    std::string text;
    for (const std::string& a : l.Args()) {
      if (a.find("_degree=") != std::string::npos) text += (text.empty() ? "" : " ") + a.substr(14);
    }
    return text;
  };
  PlanRequest r = Plan(0, 2, 32, 2, RecomputeMode::kNone, Sharding::kParameters);
  r.shard_group = kShardWithinNode;
  EXPECT_EQ(degrees(r),
            "data_parallel_replicate_degree=8 data_parallel_shard_degree=4 "
            "tensor_parallel_degree=2 context_parallel_degree=1 pipeline_parallel_degree=1");
  r.micro_batch = 1;  // 128 / (1·32) = 4 micro-batches a step
  EXPECT_EQ(degrees(r),
            "data_parallel_replicate_degree=8 data_parallel_shard_degree=4 "
            "tensor_parallel_degree=2 context_parallel_degree=1 pipeline_parallel_degree=1");
  r.shard_group = kShardOverAll;
  EXPECT_EQ(degrees(r),
            "data_parallel_replicate_degree=1 data_parallel_shard_degree=32 "
            "tensor_parallel_degree=2 context_parallel_degree=1 pipeline_parallel_degree=1");
  // Priced with the all-reduce once a step (Megatron-FSDP's), 4 micro-batches are not FSDP2's.
  r.shard_group = kShardWithinNode;
  run.training.hybrid_all_reduce = HybridAllReduce::kOnceAStep;
  EXPECT_NE(TorchTitanArgsEven(r, run, 32, 4096).why.find("every micro-batch (4 here"),
            std::string::npos);
  PlanRequest piped = Plan(0, 4, 8, 1, RecomputeMode::kNone, Sharding::kOptimizer);
  piped.pipeline_stages = 4;
  piped.shard_group = 16;
  EXPECT_EQ(degrees(piped),
            "data_parallel_replicate_degree=2 data_parallel_shard_degree=4 "
            "tensor_parallel_degree=4 context_parallel_degree=1 pipeline_parallel_degree=4");
}

// The moe strategy's expert groups over e consecutive ranks of data_parallel_shard_degree·tp
// (TorchTitan v0.2.2's sparse mesh: pp, dp_replicate, efsdp, ep, etp, with ep dividing
// dp_shard·cp·tp): expert_parallel_degree e, expert_tensor_parallel_degree 1, as phaze folds them.
TEST(TorchTitanArgs, ExpertParallelBorrowsShardRanks) {
  RunConfig run = TorchTitanRun();
  run.cluster.network = Network({{"node", 8, 300e9, 0}, {"fabric", 0, 50e9, 0}});
  run.training.global_batch = 64;
  StrategyChoice moe = StrategyChoice::Named("moe");
  moe.component.params =
      ConfigNode::ParseString("{gathered_input: keep, expert_parallel: 8}", "test");
  run.strategies = {moe};
  auto launch = [&](int t, int d, std::int64_t group) {
    PlanRequest r = Plan(0, t, d, 4 / t, RecomputeMode::kNone, Sharding::kParameters);
    r.shard_group = group;
    return TorchTitanArgsEven(r, run, 32, 4096);
  };
  auto degrees = [](const TorchTitanLaunch& l) {
    std::string text;
    for (const std::string& a : l.Args()) {
      if (a.find("_degree=") != std::string::npos) text += (text.empty() ? "" : " ") + a.substr(14);
    }
    return text;
  };
  TorchTitanLaunch l = launch(2, 16, kShardOverAll);  // 2 × 16 ranks: e 8 = tp 2 × 4 of dp_shard
  ASSERT_EQ(l.why, "");
  EXPECT_EQ(l.expert, 8);
  EXPECT_EQ(degrees(l),
            "data_parallel_replicate_degree=1 data_parallel_shard_degree=16 "
            "tensor_parallel_degree=2 context_parallel_degree=1 expert_parallel_degree=8 "
            "expert_tensor_parallel_degree=1 pipeline_parallel_degree=1");
  {  // A model without experts under the moe strategy: no expert parallelism to launch.
    PlanRequest r = Plan(0, 2, 16, 2, RecomputeMode::kNone, Sharding::kParameters);
    const TorchTitanLaunch dense = TorchTitanArgsEven(r, run, 32, 4096, /*experts=*/false);
    ASSERT_EQ(dense.why, "");
    EXPECT_EQ(dense.expert, 1);
    EXPECT_EQ(degrees(dense).find("expert_parallel_degree"), std::string::npos) << degrees(dense);
  }
  l = launch(1, 16, kShardWithinNode);  // HSDP: dp_shard 8, and 8 divides 8·1
  ASSERT_EQ(l.why, "");
  EXPECT_NE(degrees(l).find("data_parallel_shard_degree=8 "), std::string::npos);
  l = launch(1, 16, 4);  // dp_shard 4: the expert group of 8 does not fit in 4·1 ranks
  // The part before the colon is what `plan` counts refusals by: it says why.
  EXPECT_EQ(l.why.substr(0, l.why.find(':')),
            "expert_parallel 8 not dividing data_parallel_shard_degree·tp·cp (4)");
  // Without DTensor's kept input its tensor parallelism is not TorchTitan's.
  run.strategies[0].component.params = ConfigNode::ParseString("expert_parallel: 8", "test");
  l = launch(2, 16, kShardOverAll);
  EXPECT_EQ(l.why.substr(0, l.why.find(':')),
            "tensor parallelism that gathers the input again in backward");
  // Experts split over the width (Megatron's expert tensor parallelism): refused, with why (the
  // part before the colon whole, as `plan` counts it).
  run.strategies[0].component.params = ConfigNode::ParseString(
      "{gathered_input: keep, expert_parallel: 8, expert_tensor_parallel: width}", "test");
  l = launch(2, 16, kShardOverAll);
  EXPECT_TRUE(l.Args().empty());
  EXPECT_EQ(l.why,
            "experts split over the width (expert_tensor_parallel width): phaze writes "
            "TorchTitan's arguments for whole experts only, expert_tensor_parallel_degree 1");
}

TEST(TorchTitanArgs, WhatTorchTitanCannotRunSaysWhy) {
  RunConfig run = TorchTitanRun();
  run.training.global_batch = 64;
  auto why = [&](const PlanRequest& r) {
    const TorchTitanLaunch l = TorchTitanArgsEven(r, run, 32, 4096);
    EXPECT_TRUE(l.settings.empty());
    EXPECT_TRUE(l.Args().empty());
    return l.why.substr(0, l.why.find(':'));
  };
  const auto fsdp = Sharding::kParameters;
  const auto none = RecomputeMode::kNone;
  EXPECT_EQ(why(Plan(1, 2, 4, 1, none, fsdp)), "tensor parallelism without sequence parallelism");
  EXPECT_EQ(why(Plan(2, 2, 4, 1, none, fsdp)),
            "tensor parallelism that gathers the input again in backward");
  EXPECT_EQ(why(Plan(5, 2, 4, 1, none, fsdp)),
            "tensor parallelism that gathers the input again in backward");
  PlanRequest piped = Plan(0, 2, 4, 1, none, fsdp);
  piped.pipeline_stages = 2;
  EXPECT_EQ(why(piped), "a pipeline without sharding optimizer");
  EXPECT_EQ(why(Plan(0, 2, 4, 1, RecomputeMode::kSelective, fsdp)), "recompute selective");
  EXPECT_EQ(why(Plan(0, 1, 8, 1, none, Sharding::kOptimizer)),
            "sharding optimizer without a pipeline");
  EXPECT_EQ(why(Plan(0, 2, 4, 1, none, Sharding::kNone)),
            "sharding none with tensor or context parallelism");
  EXPECT_EQ(why(Plan(0, 1, 16, 1, none, Sharding::kNone)),  // 64 / 16 = 4 micro-batches
            "sharding none over several micro-batches a step");
  const auto first_clause = [](const std::string& w) { return w.substr(0, w.find(':')); };
  EXPECT_EQ(first_clause(TorchTitanArgsEven(Plan(0, 8, 8, 8, none, fsdp), run, 32, 4100).why),
            "sequence not a multiple of 2·tp·cp");  // 4100 = 256·16 + 4
  EXPECT_EQ(why(Plan(3, 3, 8, 8, none, fsdp)),
            "strategy context_parallel over sequence_parallel×2 at t 3");
  // 64 / (2 · 8) = 4 micro-batches a step.
  EXPECT_EQ(why(Plan(0, 1, 8, 2, none, Sharding::kGradients)),
            "sharding gradients over several micro-batches a step");
  run.training.gradient_reduction_precision = ReductionPrecision::kBf16;
  EXPECT_EQ(why(Plan(0, 1, 8, 8, none, fsdp)), "gradients reduced in bf16");
  run.training.gradient_reduction_precision = ReductionPrecision::kFp32;
  run.training.attention = AttentionKernel::kMegatron;
  EXPECT_EQ(why(Plan(0, 1, 8, 8, none, fsdp)), "attention megatron");
  run.training.attention = AttentionKernel::kFlash;
  run.training.precision = Precision::kFp8;
  EXPECT_EQ(why(Plan(0, 2, 4, 8, none, fsdp)), "fp8 with tensor parallelism");
  EXPECT_EQ(TorchTitanArgsEven(Plan(0, 1, 8, 8, none, fsdp), run, 32, 4096).why, "");
  // torchao's float8 scales tensorwise: FP8 priced with TE's delayed scaling is not its run.
  run.training.fp8_recipe = Fp8Recipe::kDelayed;
  EXPECT_EQ(why(Plan(0, 1, 8, 8, none, fsdp)), "fp8_recipe delayed");
  run.training.fp8_recipe = Fp8Recipe::kTensorwise;
  run.training.precision = Precision::kFp16;
  EXPECT_EQ(why(Plan(0, 1, 8, 8, none, fsdp)), "fp16");
}

// Every key written is one of TorchTitan v0.2.2's (it refuses an unknown key), over a sweep of
// plans: the fields of job_config.py's Parallelism, Training, ActivationCheckpoint, Model, Compile
// and Float8Linear dataclasses at e347b1e5e, copied here; and each TOML table appears once.
TEST(TorchTitanArgs, EveryKeyIsTorchTitansOwn) {
  const std::map<std::string, std::set<std::string>> fields = {
      {"parallelism",
       {"data_parallel_replicate_degree",
        "data_parallel_shard_degree",
        "fsdp_reshard_after_forward",
        "tensor_parallel_degree",
        "disable_loss_parallel",
        "enable_async_tensor_parallel",
        "pipeline_parallel_degree",
        "module_fqns_per_model_part",
        "pipeline_parallel_first_stage_less_layers",
        "pipeline_parallel_last_stage_less_layers",
        "pipeline_parallel_layers_per_stage",
        "pipeline_parallel_schedule",
        "pipeline_parallel_schedule_csv",
        "pipeline_parallel_microbatch_size",
        "pipeline_parallel_expert_parallel_overlap",
        "context_parallel_degree",
        "context_parallel_load_balancer",
        "context_parallel_rotate_method",
        "expert_parallel_degree",
        "expert_tensor_parallel_degree",
        "expert_parallel_comm_backend"}},
      {"training",
       {"dataset", "dataset_path", "local_batch_size", "global_batch_size", "seq_len", "max_norm",
        "steps", "enable_cpu_offload", "dtype", "mixed_precision_param", "mixed_precision_reduce",
        "gc_freq", "gc_debug", "dataloader"}},
      {"activation_checkpoint",
       {"mode", "selective_ac_option", "per_op_sac_force_recompute_mm_shapes_by_fqns", "early_stop",
        "memory_budget", "visualize_memory_budget_pareto", "preserve_rng_state",
        "determinism_check", "debug"}},
      {"model",
       {"name", "flavor", "hf_assets_path", "tokenizer_path", "converters",
        "print_after_conversion"}},
      {"compile", {"enable", "components", "backend"}},
      {"quantize.linear.float8",
       {"enable_fsdp_float8_all_gather", "precompute_float8_dynamic_scale_for_fsdp", "recipe_name",
        "filter_fqns", "emulate"}},
  };
  RunConfig run = TorchTitanRun();
  run.training.global_batch = 64;
  std::size_t launched = 0;
  for (Precision precision : {Precision::kBf16, Precision::kFp8}) {
    run.training.precision = precision;
    for (int strategy = 0; strategy < static_cast<int>(run.strategies.size()); ++strategy) {
      for (int t : {1, 2, 4}) {
        for (int p : {1, 2}) {
          for (int v : {1, 2}) {
            for (RecomputeMode recompute :
                 {RecomputeMode::kNone, RecomputeMode::kPerOp, RecomputeMode::kFull}) {
              for (Sharding sharding : {Sharding::kNone, Sharding::kOptimizer, Sharding::kGradients,
                                        Sharding::kParameters}) {
                // d = 8/t replicas, one micro-batch of 64/d a step (p = 1)
                PlanRequest r = Plan(strategy, t, 8 / t, 64 / (8 / t), recompute, sharding);
                r.pipeline_stages = p;
                r.virtual_stages = p > 1 ? v : 1;
                const TorchTitanLaunch l = TorchTitanArgsEven(r, run, 32, 4096);
                EXPECT_EQ(l.settings.empty(), !l.why.empty());
                if (l.settings.empty()) continue;
                ++launched;
                std::set<std::string> tables;
                std::string last;
                for (const TorchTitanSetting& s : l.settings) {
                  ASSERT_TRUE(fields.count(s.section)) << s.section;
                  EXPECT_TRUE(fields.at(s.section).count(s.key)) << s.section << "." << s.key;
                  if (s.section != last) {
                    EXPECT_TRUE(tables.insert(s.section).second) << s.section << " twice";
                    last = s.section;
                  }
                }
              }
            }
          }
        }
      }
    }
  }
  EXPECT_GT(launched, 20u);
}

}  // namespace
}  // namespace phaze
