// `phaze plan`'s framework parts (issue 40): the launchable plans are exactly the documented set
// (brute force over every (strategy, t, p, d, b, v, recompute, sharding) tuple filtered by the
// header's rules), the ranking keeps feasible plans fastest first with the times `phaze predict`
// gives, Megatron-LM's arguments are those of the plan (written out by hand), and error bands come
// from the runs of the plan's shape (a hand-made residuals file).
#include "phaze/search/plan_ranking.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <tuple>

#include "phaze/core/error.hpp"
#include "phaze/search/megatron_args.hpp"
#include "phaze/search/validation_residuals.hpp"
#include "phaze/strategy/composed_strategy.hpp"
#include "plugin_registry.hpp"
#include "test_util.hpp"
#include "test_paths.hpp"

namespace phaze {
namespace {

namespace fs = std::filesystem;

RunConfig PlanRun(std::int64_t K, std::int64_t batch) {
  RunConfig run = RunConfig::Defaults();
  run.estimator.name = "device";
  run.cluster.num_accelerators = K;
  run.cluster.network = Network::LoadSystem("dgx-a100");
  run.training.global_batch = batch;
  run.training.micro_batches = {1, 2, 4};
  run.training.tensor_parallel_widths = {1, 2, 4, 8};
  run.training.virtual_stages = {2, 3};
  run.training.recompute = {RecomputeMode::kNone, RecomputeMode::kFull};
  run.training.sharding = {Sharding::kNone, Sharding::kOptimizer, Sharding::kGradients,
                           Sharding::kParameters};
  run.strategies = {StrategyChoice::Named("megatron"), StrategyChoice::Named("sequence_parallel")};
  return run;
}

PreparedModel Prepare(const std::string& workload, const RunConfig& run) {
  ModelEntry entry;
  entry.file = entry.resolved = std::string(PHAZE_SOURCE_DIR) + "/workloads/" + workload;
  return PrepareModel(entry, run, CreateRunStrategies(testing::BuiltPlugins(), run.strategies),
                      /*require_slices=*/false);
}

using Shape = std::tuple<int, int, int, int, int, std::int64_t, RecomputeMode, Sharding>;

Shape ShapeOf(const PlanRequest& r) {
  return {r.strategy, r.tensor_parallel, r.pipeline_stages, r.data_parallel, r.virtual_stages,
          r.micro_batch, r.recompute, r.sharding};
}

// Megatron's 8.3B GPT (72 blocks, 32 heads) on 64 devices, batch 128.
TEST(PlanRanking, LaunchablePlansAreExactlyTheDocumentedSet) {
  const RunConfig run = PlanRun(64, 128);
  const PreparedModel model = Prepare("megatron-8.3b.yaml", run);
  std::set<Shape> expected;
  const int blocks = 72;
  for (int s = 0; s < 2; ++s) {
    for (int t : {1, 2, 4, 8}) {
      for (int p = 1; p <= 64; ++p) {
        for (int d = 1; d <= 64; ++d) {
          if (t * p * d != 64 || blocks % p != 0) continue;
          for (std::int64_t b : {1, 2, 4}) {
            if (!model.FindSlice(b, t, s) || 128 % (b * d) != 0) continue;
            for (int v : {1, 2, 3}) {
              if (v > 1 && (p == 1 || blocks % (p * v) != 0 || (128 / (b * d)) % p != 0)) continue;
              for (RecomputeMode m : run.training.recompute) {
                for (Sharding z : run.training.sharding) {
                  if (z != Sharding::kNone && d < 2) continue;  // r = 1 for these strategies
                  if ((z == Sharding::kGradients || z == Sharding::kParameters) && p > 1) continue;
                  expected.insert({s, t, p, d, v, b, m, z});
                }
              }
            }
          }
        }
      }
    }
  }
  const std::vector<PlanRequest> plans = LaunchablePlans(model, run);
  std::set<Shape> found;
  for (const auto& r : plans) found.insert(ShapeOf(r));
  EXPECT_EQ(found.size(), plans.size());  // no plan twice
  EXPECT_EQ(found, expected);
  EXPECT_GT(expected.size(), 500u);
  // Spot checks of the rules: p 8, v 3 interleaves 72 blocks (24 chunks) with 64 micro-batches per
  // replica; p 16 does not divide 72; p 4, v 2 (8 chunks) with micro-batch 4 leaves 8 per replica
  // (a multiple of 4); ZeRO-3 without a pipeline only.
  EXPECT_TRUE(found.count({0, 4, 8, 2, 3, 1, RecomputeMode::kNone, Sharding::kOptimizer}));
  EXPECT_TRUE(found.count({1, 4, 4, 4, 2, 4, RecomputeMode::kFull, Sharding::kNone}));
  EXPECT_FALSE(found.count({1, 4, 8, 2, 2, 4, RecomputeMode::kFull, Sharding::kNone}));  // 72 % 16
  EXPECT_FALSE(found.count({0, 4, 16, 1, 1, 1, RecomputeMode::kNone, Sharding::kNone}));
  EXPECT_TRUE(found.count({0, 8, 1, 8, 1, 2, RecomputeMode::kNone, Sharding::kParameters}));
  EXPECT_FALSE(found.count({0, 8, 2, 4, 1, 2, RecomputeMode::kNone, Sharding::kParameters}));
  for (const auto& r : plans) {
    EXPECT_FALSE(r.pipeline_stages > 1 && r.sharding == Sharding::kParameters);
  }
}

TEST(PlanRanking, FeasiblePlansFastestFirstAsPredictTimesThem) {
  RunConfig run = PlanRun(8, 32);
  run.training.attention = AttentionKernel::kFlash;
  run.training.recompute = {RecomputeMode::kNone, RecomputeMode::kSelective};
  const PreparedModel model = Prepare("tiny-gpt.yaml", run);
  auto& reg = testing::BuiltPlugins();
  const ModelEvaluator evaluator(run, reg.CreateEstimator("device", run.estimator.Params()),
                                 reg.CreateSolverBackend("cbc", run.solver.backend.Params()));
  const ArchConfig arch = LoadArchConfig("a100-sxm-80gb");
  const PlanRanking ranking = RankPlans(evaluator, model, arch, run, 4);
  EXPECT_EQ(ranking.evaluated, LaunchablePlans(model, run).size());
  std::size_t refused = 0;
  for (const auto& [kind, count] : ranking.refused) refused += count;
  EXPECT_EQ(ranking.feasible + refused, ranking.evaluated);
  ASSERT_EQ(ranking.plans.size(), 4u);
  for (std::size_t k = 0; k < ranking.plans.size(); ++k) {
    const RankedPlan& p = ranking.plans[k];
    EXPECT_TRUE(p.choice.feasible);
    if (k > 0) {
      EXPECT_LE(ranking.plans[k - 1].choice.plan.time_per_batch_s, p.choice.plan.time_per_batch_s);
    }
    // The same figure as `phaze predict` of that plan alone.
    EXPECT_EQ(evaluator.EvaluatePlan(model, arch, p.request).plan.time_per_batch_s,
              p.choice.plan.time_per_batch_s);
  }
  // Nothing faster was left out: the best of every plan, evaluated one by one.
  double best = 1e300;
  for (const auto& r : LaunchablePlans(model, run)) {
    const PlanChoice c = evaluator.EvaluatePlan(model, arch, r);
    if (c.feasible) best = std::min(best, c.plan.time_per_batch_s);
  }
  EXPECT_EQ(ranking.plans.front().choice.plan.time_per_batch_s, best);
  // Sequence parallelism at t = 1 slices as Megatron does, and with FlashAttention selective
  // recompute re-runs nothing: each plan that is the same in effect is shown once.
  for (std::size_t a = 0; a < ranking.plans.size(); ++a) {
    for (std::size_t b = a + 1; b < ranking.plans.size(); ++b) {
      auto sa = ShapeOf(ranking.plans[a].request), sb = ShapeOf(ranking.plans[b].request);
      std::get<0>(sa) = std::get<0>(sb) = 0;
      std::get<6>(sa) = std::get<6>(sb) = RecomputeMode::kNone;
      EXPECT_FALSE(sa == sb && ranking.plans[a].choice.plan.time_per_batch_s ==
                                   ranking.plans[b].choice.plan.time_per_batch_s);
    }
  }
}

// Shard groups all, node (8 GPUs on the DGX A100) and 16 devices: each sharded plan once per
// distinct number of replicas h its groups give (the most dividing d within the span at t devices
// each; r = 1 for these strategies), and only when h ≥ 2; unsharded plans once.
TEST(PlanRanking, ShardGroupsAddEachHybridShardingOnce) {
  RunConfig run = PlanRun(64, 128);
  const PreparedModel model = Prepare("megatron-8.3b.yaml", run);
  const std::size_t plain = LaunchablePlans(model, run).size();
  run.training.shard_groups = {kShardOverAll, kShardWithinNode, 16};
  std::set<std::pair<Shape, std::int64_t>> expected;
  for (const PlanRequest& r : [&] {
         RunConfig all = run;
         all.training.shard_groups = {kShardOverAll};
         return LaunchablePlans(model, all);
       }()) {
    const std::int64_t d = r.data_parallel, t = r.tensor_parallel;
    if (r.sharding == Sharding::kNone) {
      expected.insert({ShapeOf(r), d});
      continue;
    }
    for (std::int64_t span : {t * d, std::int64_t{8}, std::int64_t{16}}) {
      std::int64_t h = 1;
      for (std::int64_t x = 1; x <= d; ++x) {
        if (d % x == 0 && x * t <= span) h = x;
      }
      if (h >= 2) expected.insert({ShapeOf(r), h});
    }
  }
  const std::vector<PlanRequest> plans = LaunchablePlans(model, run);
  std::set<std::pair<Shape, std::int64_t>> found;
  for (const PlanRequest& r : plans)
    found.insert({ShapeOf(r), ShardReplicasOf(r, run.cluster.network)});
  EXPECT_EQ(found.size(), plans.size());  // no plan twice
  EXPECT_EQ(found, expected);
  EXPECT_GT(plans.size(), plain);
  // t 8, d 8, no pipeline: a node holds one replica (no HSDP), 16 devices two.
  EXPECT_TRUE(found.count({{0, 8, 1, 8, 1, 2, RecomputeMode::kNone, Sharding::kParameters}, 8}));
  EXPECT_FALSE(found.count({{0, 8, 1, 8, 1, 2, RecomputeMode::kNone, Sharding::kParameters}, 1}));
  EXPECT_TRUE(found.count({{0, 8, 1, 8, 1, 2, RecomputeMode::kNone, Sharding::kParameters}, 2}));
}

using testing::Split;

// The arguments of a plan whose `blocks` split evenly over its p·v chunks, as plans split them.
MegatronLaunch MegatronArgsEven(const PlanRequest& r, const RunConfig& run, int blocks,
                                std::int64_t sequence_length, bool experts = false) {
  return MegatronArgs(r, run, PipelineSplit::Default(blocks, r.pipeline_stages * r.virtual_stages),
                      sequence_length, experts);
}

TEST(MegatronArgs, ThePlansArgumentsByHand) {
  RunConfig run = RunConfig::Defaults();
  run.training.global_batch = 1536;
  StrategyChoice cp = StrategyChoice::Named("context_parallel");
  cp.over = StrategyChoice::Over{ComponentChoice{"sequence_parallel", std::nullopt, std::nullopt}, 4};
  run.strategies = {StrategyChoice::Named("megatron"), StrategyChoice::Named("sequence_parallel"),
                    cp, StrategyChoice::Named("moe"), StrategyChoice::Named("my_strategy")};
  PlanRequest r;
  r.tensor_parallel = 8;
  r.pipeline_stages = 8;
  r.data_parallel = 16;
  r.virtual_stages = 2;
  r.micro_batch = 1;
  r.recompute = RecomputeMode::kSelective;
  r.sharding = Sharding::kOptimizer;
  r.strategy = 1;  // sequence parallel, 96 blocks: 96 / (8·2) = 6 layers per virtual stage
  EXPECT_EQ(MegatronArgsEven(r, run, 96, 2048).args,
            Split("--tensor-model-parallel-size 8 --pipeline-model-parallel-size 8 "
                  "--num-layers-per-virtual-pipeline-stage 6 --micro-batch-size 1 "
                  "--global-batch-size 1536 --seq-length 2048 --sequence-parallel "
                  "--recompute-granularity selective --use-distributed-optimizer --bf16"));
  // Megatron-LM asserts one CUDA connection with tensor parallelism (outside Megatron-FSDP), and
  // sequence parallelism needs the sequence a multiple of tp: 2044 = 8·255 + 4.
  EXPECT_EQ(MegatronArgsEven(r, run, 96, 2048).env,
            std::vector<std::string>{"CUDA_DEVICE_MAX_CONNECTIONS=1"});
  EXPECT_NE(MegatronArgsEven(r, run, 96, 2044).why.find("not a multiple of tp = 8"),
            std::string::npos);
  r.strategy = 2;  // context parallel 2 over sequence-parallel tensor parallelism 4
  // Context parallelism cuts the sequence in 2·cp = 4 chunks: 2050 = 4·512 + 2 is refused.
  EXPECT_NE(MegatronArgsEven(r, run, 96, 2050).why.find("not a multiple of 2·cp = 4"),
            std::string::npos);
  r.virtual_stages = 1;
  r.recompute = RecomputeMode::kFull;
  r.sharding = Sharding::kNone;
  run.training.gradient_reduction_precision = ReductionPrecision::kBf16;
  run.training.gradient_reduction_overlap = 0.5;
  run.training.tensor_parallel_overlap = 0.5;  // with sequence parallelism: --tp-comm-overlap
  EXPECT_EQ(MegatronArgsEven(r, run, 96, 2048).args,
            Split("--tensor-model-parallel-size 4 --pipeline-model-parallel-size 8 "
                  "--context-parallel-size 2 --micro-batch-size 1 --global-batch-size 1536 "
                  "--seq-length 2048 --sequence-parallel --tp-comm-overlap "
                  "--recompute-granularity full "
                  "--recompute-method uniform --recompute-num-layers 1 --overlap-grad-reduce "
                  "--bf16 --grad-reduce-in-bf16"));
  r.sharding = Sharding::kOptimizer;  // the distributed optimizer's all-gather overlapped too
  EXPECT_EQ(MegatronArgsEven(r, run, 96, 2048).args,
            Split("--tensor-model-parallel-size 4 --pipeline-model-parallel-size 8 "
                  "--context-parallel-size 2 --micro-batch-size 1 --global-batch-size 1536 "
                  "--seq-length 2048 --sequence-parallel --tp-comm-overlap "
                  "--recompute-granularity full "
                  "--recompute-method uniform --recompute-num-layers 1 "
                  "--use-distributed-optimizer --overlap-grad-reduce --overlap-param-gather "
                  "--bf16 --grad-reduce-in-bf16"));
  r.strategy = 3;  // moe: experts over the width, attention sequence parallel
  r.pipeline_stages = 1;
  r.recompute = RecomputeMode::kNone;
  r.sharding = Sharding::kParameters;
  run.training.gradient_reduction_precision = ReductionPrecision::kFp16;
  run.training.precision = Precision::kFp16;
  run.training.gradient_reduction_overlap = 0;
  EXPECT_EQ(MegatronArgsEven(r, run, 32, 4096, true).args,
            Split("--tensor-model-parallel-size 8 --pipeline-model-parallel-size 1 "
                  "--expert-model-parallel-size 8 --expert-tensor-parallel-size 1 "
                  "--moe-token-dispatcher-type alltoall "
                  "--micro-batch-size 1 --global-batch-size 1536 "
                  "--seq-length 4096 --sequence-parallel --tp-comm-overlap "
                  "--use-distributed-optimizer "
                  "--use-megatron-fsdp --data-parallel-sharding-strategy optim_grads_params "
                  "--ckpt-format fsdp_dtensor --fp16"));
  r.strategy = 0;  // plain tensor parallelism: no --tp-comm-overlap (it needs sequence parallelism)
  r.tensor_parallel = 2;
  EXPECT_EQ(MegatronArgsEven(r, run, 32, 4096).args,
            Split("--tensor-model-parallel-size 2 --pipeline-model-parallel-size 1 "
                  "--micro-batch-size 1 --global-batch-size 1536 --seq-length 4096 "
                  "--use-distributed-optimizer --use-megatron-fsdp "
                  "--data-parallel-sharding-strategy optim_grads_params --ckpt-format fsdp_dtensor "
                  "--fp16"));
  r.tensor_parallel = 1;
  r.sharding = Sharding::kGradients;
  EXPECT_EQ(MegatronArgsEven(r, run, 32, 4096).args,
            Split("--tensor-model-parallel-size 1 --pipeline-model-parallel-size 1 "
                  "--micro-batch-size 1 --global-batch-size 1536 --seq-length 4096 "
                  "--use-distributed-optimizer --use-megatron-fsdp "
                  "--data-parallel-sharding-strategy optim_grads --ckpt-format fsdp_dtensor "
                  "--fp16"));
  run.training.precision = Precision::kFp8;  // Transformer Engine's hybrid recipe over bf16
  run.training.gradient_reduction_precision = ReductionPrecision::kFp32;
  run.training.attention = AttentionKernel::kFlash;
  r.sharding = Sharding::kNone;
  EXPECT_EQ(MegatronArgsEven(r, run, 32, 4096).args,
            Split("--tensor-model-parallel-size 1 --pipeline-model-parallel-size 1 "
                  "--micro-batch-size 1 --global-batch-size 1536 --seq-length 4096 "
                  "--attention-backend flash --bf16 --fp8-format hybrid --fp8-recipe delayed"));
  run.training.fp8_recipe = Fp8Recipe::kTensorwise;  // TE's Float8CurrentScaling
  EXPECT_EQ(MegatronArgsEven(r, run, 32, 4096).args.back(), "tensorwise");
  run.training.fp8_recipe = Fp8Recipe::kDelayed;
  EXPECT_TRUE(MegatronArgsEven(r, run, 32, 4096).env.empty());  // t 1: no connection limit
  r.strategy = 4;
  const MegatronLaunch none = MegatronArgsEven(r, run, 32, 4096);
  EXPECT_TRUE(none.args.empty());
  EXPECT_FALSE(none.widths.has_value());
  EXPECT_EQ(none.why, "strategy 'my_strategy' has no Megatron-LM equivalent");
}

// The moe strategy with each expert split over the width (expert_tensor_parallel: width) is
// Megatron-LM's --expert-tensor-parallel-size = TP, its default; whole experts are 1. With one
// expert-parallel rank the expert-tensor size is written without an expert-parallel one, with the
// all-to-all dispatcher priced (not Megatron's default allgather one).
TEST(MegatronArgs, SplitExpertsCarryTheirTensorParallelSize) {
  RunConfig run = RunConfig::Defaults();
  run.training.global_batch = 256;
  auto moe = [](const char* params) {
    StrategyChoice s = StrategyChoice::Named("moe");
    s.component.params = ConfigNode::ParseString(params, "test");
    return s;
  };
  run.strategies = {moe("{expert_parallel: 4, expert_tensor_parallel: width}"),
                    moe("{expert_parallel: 1, expert_tensor_parallel: width}"),
                    moe("{expert_parallel: 4, expert_tensor_parallel: 1}")};
  PlanRequest r;
  r.tensor_parallel = 2;
  r.pipeline_stages = 1;
  r.data_parallel = 32;
  r.micro_batch = 1;
  r.recompute = RecomputeMode::kNone;
  r.sharding = Sharding::kNone;
  r.strategy = 0;
  const MegatronLaunch split = MegatronArgsEven(r, run, 32, 4096, true);
  ASSERT_EQ(split.why, "");
  EXPECT_EQ(split.widths->expert, 4);
  EXPECT_EQ(split.widths->expert_tensor, 2);
  EXPECT_EQ(split.args,
            Split("--tensor-model-parallel-size 2 --pipeline-model-parallel-size 1 "
                  "--expert-model-parallel-size 4 --expert-tensor-parallel-size 2 "
                  "--moe-token-dispatcher-type alltoall --micro-batch-size 1 "
                  "--global-batch-size 256 --seq-length 4096 --sequence-parallel --bf16"));
  r.strategy = 1;
  const MegatronLaunch every = MegatronArgsEven(r, run, 32, 4096, true);
  ASSERT_EQ(every.why, "");
  EXPECT_EQ(every.widths->expert, 1);
  EXPECT_EQ(every.args,
            Split("--tensor-model-parallel-size 2 --pipeline-model-parallel-size 1 "
                  "--expert-tensor-parallel-size 2 --moe-token-dispatcher-type alltoall "
                  "--micro-batch-size 1 "
                  "--global-batch-size 256 --seq-length 4096 --sequence-parallel --bf16"));
  r.strategy = 2;
  const MegatronLaunch whole = MegatronArgsEven(r, run, 32, 4096, true);
  EXPECT_EQ(whole.widths->expert_tensor, 1);
  const std::vector<std::string> head = Split(
      "--tensor-model-parallel-size 2 --pipeline-model-parallel-size 1 "
      "--expert-model-parallel-size 4 --expert-tensor-parallel-size 1");
  EXPECT_TRUE(std::equal(head.begin(), head.end(), whole.args.begin()));
  // A dense strategy keeps every expert whole on each tensor-parallel rank: said explicitly, since
  // Megatron-LM's default would split them (--expert-tensor-parallel-size = TP).
  run.strategies.push_back(StrategyChoice::Named("sequence_parallel"));
  r.strategy = 3;
  EXPECT_EQ(MegatronArgsEven(r, run, 32, 4096, true).args,
            Split("--tensor-model-parallel-size 2 --pipeline-model-parallel-size 1 "
                  "--expert-tensor-parallel-size 1 --micro-batch-size 1 "
                  "--global-batch-size 256 --seq-length 4096 --sequence-parallel --bf16"));
  // Hybrid sharding: Megatron-LM asserts that the distributed-optimizer instances divide the
  // expert data-parallel size, world/(EP·ETP·PP). Within nodes of 8 at t 2, d 32: 4 replicas a
  // node, 8 instances; split experts at e 4 leave 2·32/(4·2) = 8 (launchable), whole experts at
  // e 16 leave 2·32/16 = 4 (refused).
  run.cluster.network = Network({{"node", 8, 300e9, 0}, {"fabric", 0, 50e9, 0}});
  r.sharding = Sharding::kOptimizer;
  r.shard_group = kShardWithinNode;
  r.strategy = 0;
  const MegatronLaunch hsdp = MegatronArgsEven(r, run, 32, 4096, true);
  EXPECT_EQ(hsdp.why, "");
  EXPECT_NE(std::find(hsdp.args.begin(), hsdp.args.end(), "--num-distributed-optimizer-instances"),
            hsdp.args.end());
  run.strategies[2] = moe("{expert_parallel: 16, expert_tensor_parallel: 1}");
  r.strategy = 2;
  EXPECT_EQ(MegatronArgsEven(r, run, 32, 4096, true).why,
            "expert data-parallel size 4 not a multiple of the 8 distributed-optimizer instances, "
            "as Megatron-LM needs");
}

// Hybrid sharding (training.shard_group) on nodes of 8: `node` at t 2 shards over the 4
// data-parallel replicas a node holds, so d 16 keeps 16/4 = 4 distributed-optimizer instances
// (Megatron-LM's intra-instance group: the dp·cp/instances consecutive ranks); a span of 32 = t·d
// or more is plain sharding. Megatron-FSDP takes the same flag; over several micro-batches a step
// it all-reduces across its instances once, where phaze prices FSDP2's every micro-batch, so that
// plan has a reason instead.
TEST(MegatronArgs, HybridShardingByHand) {
  RunConfig run = RunConfig::Defaults();
  run.cluster.network = Network({{"node", 8, 300e9, 0}, {"fabric", 0, 50e9, 0}});
  run.training.global_batch = 64;
  run.strategies = {StrategyChoice::Named("megatron")};
  PlanRequest r;
  r.tensor_parallel = 2;
  r.pipeline_stages = 4;
  r.data_parallel = 16;
  r.micro_batch = 1;
  r.sharding = Sharding::kOptimizer;
  r.shard_group = kShardWithinNode;
  EXPECT_EQ(ShardReplicasOf(r, run.cluster.network), 4);
  EXPECT_EQ(MegatronArgsEven(r, run, 32, 4096).args,
            Split("--tensor-model-parallel-size 2 --pipeline-model-parallel-size 4 "
                  "--micro-batch-size 1 --global-batch-size 64 --seq-length 4096 "
                  "--use-distributed-optimizer --num-distributed-optimizer-instances 4 --bf16"));
  r.shard_group = 32;
  EXPECT_EQ(ShardReplicasOf(r, run.cluster.network), 16);
  EXPECT_EQ(MegatronArgsEven(r, run, 32, 4096).args,
            Split("--tensor-model-parallel-size 2 --pipeline-model-parallel-size 4 "
                  "--micro-batch-size 1 --global-batch-size 64 --seq-length 4096 "
                  "--use-distributed-optimizer --bf16"));
  r.tensor_parallel = 1;
  r.pipeline_stages = 1;
  r.data_parallel = 64;
  r.sharding = Sharding::kParameters;
  r.shard_group = kShardWithinNode;  // 8 replicas a node: 8 instances
  EXPECT_EQ(MegatronArgsEven(r, run, 32, 4096).args,
            Split("--tensor-model-parallel-size 1 --pipeline-model-parallel-size 1 "
                  "--micro-batch-size 1 --global-batch-size 64 --seq-length 4096 "
                  "--use-distributed-optimizer --num-distributed-optimizer-instances 8 "
                  "--use-megatron-fsdp --data-parallel-sharding-strategy optim_grads_params "
                  "--ckpt-format fsdp_dtensor --bf16"));
  run.training.global_batch = 128;  // 2 micro-batches a step
  const MegatronLaunch twice = MegatronArgsEven(r, run, 32, 4096);
  EXPECT_TRUE(twice.args.empty());
  EXPECT_NE(twice.why.find("hybrid sharding of gradients or parameters over 2 micro-batches"),
            std::string::npos);
  r.shard_group = kShardOverAll;  // plain Megatron-FSDP reduce-scatters every micro-batch
  EXPECT_FALSE(MegatronArgsEven(r, run, 32, 4096).args.empty());
  // Priced as Megatron-FSDP runs it (the megatron-core-2024 recipe's once_a_step), it launches.
  r.shard_group = kShardWithinNode;
  run.training.hybrid_all_reduce = HybridAllReduce::kOnceAStep;
  const MegatronLaunch once = MegatronArgsEven(r, run, 32, 4096);
  EXPECT_EQ(once.why, "");
  EXPECT_EQ(once.args, Split("--tensor-model-parallel-size 1 --pipeline-model-parallel-size 1 "
                             "--micro-batch-size 1 --global-batch-size 128 --seq-length 4096 "
                             "--use-distributed-optimizer --num-distributed-optimizer-instances 8 "
                             "--use-megatron-fsdp --data-parallel-sharding-strategy "
                             "optim_grads_params --ckpt-format fsdp_dtensor --bf16"));
}

// Eight runs: five at t 8 with a pipeline on several nodes (|errors| 1..5%), two at t 8 without a
// pipeline (10%, 20%), one at t 2 (−30%). Nodes of 8.
TEST(ValidationResiduals, BandsFromTheRunsOfThePlansShape) {
  const fs::path dir = fs::temp_directory_path() / ("phaze-residuals-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "r.csv") << "source,gpus,t,p,d,v,micro_batch,recompute,sequence_parallel,"
                                  "measured_s,predicted_s,error\n"
                                  "a,64,8,8,1,1,1,full,0,1,1.01,0.01\n"
                                  "a,64,8,4,2,1,1,full,0,1,0.98,-0.02\n"
                                  "a,128,8,8,2,1,1,full,0,1,1.03,0.03\n"
                                  "a,64,8,2,4,1,1,full,0,1,0.96,-0.04\n"
                                  "a,32,8,4,1,1,1,full,0,1,1.05,0.05\n"
                                  "b,8,8,1,1,1,1,full,0,1,1.1,0.10\n"
                                  "b,16,8,1,2,1,1,full,0,1,1.2,0.20\n"
                                  "b,4,2,1,2,1,1,full,0,1,0.7,-0.30\n";
  const ValidationResiduals r = ValidationResiduals::Load(dir / "r.csv");
  ASSERT_EQ(r.Runs().size(), 8u);
  // t 8, pipeline, several nodes: the five, mean 3%, p90 (rank ⌈4.5⌉ = 5) 5%, max 5%.
  auto band = r.For(8, 4, 256, 8);
  EXPECT_EQ(band.runs, 5u);
  EXPECT_EQ(band.shape, "t 8, with a pipeline, several nodes");
  EXPECT_NEAR(band.mean_abs, 0.03, 1e-12);
  EXPECT_DOUBLE_EQ(band.p90_abs, 0.05);
  EXPECT_DOUBLE_EQ(band.max_abs, 0.05);
  // t 8 without a pipeline has 2 runs, fewer than 5: every t 8 run (7), mean 0.45/7.
  band = r.For(8, 1, 8, 8);
  EXPECT_EQ(band.runs, 7u);
  EXPECT_EQ(band.shape, "t 8");
  EXPECT_NEAR(band.mean_abs, 0.45 / 7, 1e-12);
  EXPECT_DOUBLE_EQ(band.max_abs, 0.20);
  // t 4: no such runs, every run.
  band = r.For(4, 2, 64, 8);
  EXPECT_EQ(band.runs, 8u);
  EXPECT_EQ(band.shape, "every validated run");
  EXPECT_DOUBLE_EQ(band.max_abs, 0.30);
  // With a device column: the plan's device's runs first, then every run. Five t 8 runs on x
  // (|errors| 10..50%) and the eight above on a: a t 8 plan on x takes x's five (mean 30%), on a
  // the bands above, on a device with no runs every device's; x has no t 2 run, so a t 2 plan on
  // x takes every run on x.
  {
    std::ofstream f(dir / "d.csv");
    f << "source,gpus,t,p,d,error,device\n";
    for (const auto& run : r.Runs()) {
      f << "a," << run.gpus << "," << run.t << "," << run.p << "," << run.d << "," << run.error
        << ",a\n";
    }
    for (int k = 1; k <= 5; ++k) f << "b,16,8,1,2," << -0.1 * k << ",x\n";
  }
  const ValidationResiduals d = ValidationResiduals::Load(dir / "d.csv");
  ASSERT_EQ(d.Runs().size(), 13u);
  band = d.For(8, 1, 16, 8, "x");
  EXPECT_EQ(band.runs, 5u);
  EXPECT_EQ(band.shape, "t 8, without a pipeline, several nodes, on x");
  EXPECT_NEAR(band.mean_abs, 0.30, 1e-12);
  band = d.For(8, 4, 256, 8, "a");
  EXPECT_EQ(band.shape, "t 8, with a pipeline, several nodes, on a");
  EXPECT_NEAR(band.mean_abs, 0.03, 1e-12);
  band = d.For(8, 1, 8, 8, "y");  // no runs on y: t 8 among all, 2 of a's and x's 5
  EXPECT_EQ(band.shape, "t 8, without a pipeline");
  EXPECT_EQ(band.runs, 7u);
  band = d.For(2, 1, 4, 8, "x");
  EXPECT_EQ(band.shape, "every run on x");
  EXPECT_EQ(band.runs, 5u);
  // Malformed files say where.
  std::ofstream(dir / "bad.csv") << "source,gpus,t,p,d,error\nx,8,eight,1,1,0.1\n";
  try {
    ValidationResiduals::Load(dir / "bad.csv");
    ADD_FAILURE() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()),
              (dir / "bad.csv").string() + ":2: expected numbers in gpus, t, p, d, error and cp");
  }
  std::ofstream(dir / "nocol.csv") << "source,gpus,t,p\nx,8,8,1\n";
  EXPECT_THROW(ValidationResiduals::Load(dir / "nocol.csv"), ConfigError);
  std::ofstream(dir / "badcp.csv") << "source,gpus,t,p,d,error,cp\nx,8,8,1,1,0.1,3\n";
  try {
    ValidationResiduals::Load(dir / "badcp.csv");
    ADD_FAILURE() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()), (dir / "badcp.csv").string() +
                                         ":2: cp must be >= 1 and divide t (the whole width, "
                                         "tp·cp)");
  }
  fs::remove_all(dir);
}

// Context parallelism is part of a plan's shape: beside d.csv's dense runs on a (five t 8 with a
// pipeline, |errors| 1..5%), six context-parallel runs on a, five of them t 8 with a pipeline
// (|errors| 20..60%) and one t 2 (10%). A dense t 8 pipelined plan keeps the dense five (3%); a
// context-parallel one takes the five alike (40%); a context-parallel plan of another t, every
// context-parallel run on a (6, mean 35%); on a device without any, every context-parallel run;
// an empty cp cell is 1.
TEST(ValidationResiduals, ContextParallelPlansDrawOnContextParallelRuns) {
  const fs::path dir =
      fs::temp_directory_path() / ("phaze-residuals-cp-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  {
    std::ofstream f(dir / "cp.csv");
    f << "source,gpus,t,p,d,error,device,cp\n";
    for (int k = 1; k <= 5; ++k) f << "a,64,8,4,2," << 0.01 * k << ",a,\n";
    for (int k = 1; k <= 5; ++k) f << "c,64,8,4,2," << -0.1 * (k + 1) << ",a,4\n";
    f << "c,8,2,1,4,0.1,a,2\n";
  }
  const ValidationResiduals r = ValidationResiduals::Load(dir / "cp.csv");
  ASSERT_EQ(r.Runs().size(), 11u);
  EXPECT_EQ(r.Runs().front().cp, 1);
  auto band = r.For(8, 4, 64, 8, "a");
  EXPECT_EQ(band.shape, "t 8, with a pipeline, several nodes, on a");
  EXPECT_NEAR(band.mean_abs, 0.03, 1e-12);
  band = r.For(8, 4, 64, 8, "a", 2);
  EXPECT_EQ(band.shape, "t 8, with a pipeline, several nodes, context parallel, on a");
  EXPECT_EQ(band.runs, 5u);
  EXPECT_NEAR(band.mean_abs, 0.40, 1e-12);
  EXPECT_DOUBLE_EQ(band.max_abs, 0.60);
  band = r.For(16, 1, 16, 8, "a", 8);
  EXPECT_EQ(band.shape, "every context-parallel run on a");
  EXPECT_EQ(band.runs, 6u);
  EXPECT_NEAR(band.mean_abs, 2.1 / 6, 1e-12);
  band = r.For(16, 1, 16, 8, "b", 8);
  EXPECT_EQ(band.shape, "every context-parallel run");
  EXPECT_EQ(band.runs, 6u);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace phaze
