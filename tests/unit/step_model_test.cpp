// The step model's formulas (framework/include/phaze/system/) against values worked out by hand
// from the header comment of step_model.hpp and the paper's formulas, independently of the
// placement DP that uses them (placement_search_test.cpp checks them again through the DP).
#include "phaze/system/step_model.hpp"

#include <gtest/gtest.h>

#include "phaze/arch/arch_config.hpp"
#include "phaze/system/gradient_sync.hpp"
#include "phaze/system/optimizer_step.hpp"
#include "phaze/system/pipeline.hpp"
#include "phaze/system/stage_memory.hpp"

namespace phaze {
namespace {

StepSettings Settings(PipelineSchedule schedule, int v = 1) {
  StepSettings s;
  s.num_accelerators = 64;
  s.global_batch = 64;
  s.micro_batch = 2;  // B = 32
  s.network = Network::Flat(1e9);
  s.schedule = schedule;
  s.virtual_stages = v;
  return s;
}

// In flight at position p of s stages: 1F1B p; GPipe ⌈B/d⌉; interleaved (2(p − 1) + (v − 1)s + 1)/v.
TEST(StepModel, InFlightMicroBatchesPerSchedule) {
  EXPECT_DOUBLE_EQ(InFlightMicroBatches(Settings(PipelineSchedule::k1F1B), 3, 4, 8), 3.0);
  EXPECT_DOUBLE_EQ(InFlightMicroBatches(Settings(PipelineSchedule::kGPipe), 3, 4, 8), 8.0);
  // v = 2, s = 4, p = 4 (the first stage): (6 + 4 + 1)/2 = 5.5; p = 1: (0 + 4 + 1)/2 = 2.5.
  const StepSettings il = Settings(PipelineSchedule::kInterleaved, 2);
  EXPECT_DOUBLE_EQ(InFlightMicroBatches(il, 4, 4, 8), 5.5);
  EXPECT_DOUBLE_EQ(InFlightMicroBatches(il, 1, 4, 8), 2.5);
  // Never more than the pipeline's m micro-batches: Megatron-LM's warm-up is
  // min((s − rank − 1)·2 + (v − 1)·s, m·v) chunks (schedules.py), 1F1B's min(s − rank − 1, m).
  EXPECT_DOUBLE_EQ(InFlightMicroBatches(Settings(PipelineSchedule::k1F1B), 3, 4, 2), 2.0);
  EXPECT_DOUBLE_EQ(InFlightMicroBatches(il, 4, 4, 4), 4.0);
  EXPECT_DOUBLE_EQ(InFlightMicroBatches(il, 1, 4, 4), 2.5);
}

// B = 32, d = 3: m = 11; s = 4: 1F1B 11 + 3 = 14, interleaved v = 2: 11 + 1.5 = 12.5.
TEST(StepModel, PipelineSteps) {
  EXPECT_EQ(Settings(PipelineSchedule::k1F1B).MicroBatchesPerPipeline(3), 11);
  EXPECT_DOUBLE_EQ(PipelineSteps(Settings(PipelineSchedule::k1F1B), 3, 4), 14.0);
  EXPECT_DOUBLE_EQ(PipelineSteps(Settings(PipelineSchedule::kInterleaved, 2), 3, 4), 12.5);
}

// Two layers: weights 10 + 20, gradients default to the weights, optimizer state 40 + 80,
// activations 5 + 7, working 3 and 9: resident (10 + 10 + 40 + 5) + (20 + 20 + 80 + 7) = 192;
// with 3 in flight 192 + 2·12 + 9 = 225; the optimizer state sharded 4 ways saves 120·3/4 = 90:
// 135. Sharding gradients too saves (120 + 30)·3/4 and holds 3/4 of the largest gradient, 20:
// 225 − 112.5 + 15 = 127.5. Sharding parameters too saves (120 + 30 + 30)·3/4 = 135 and holds 3/4
// of the largest 2·weight + gradient, 2·20 + 20 = 60: 225 − 135 + 45 = 135, weights and gradients
// 30/4 each.
TEST(StepModel, StageMemoryByHand) {
  PlacementLayer a, b;
  a.weight_bytes = 10;
  a.optimizer_state_bytes = 40;
  a.activation_bytes = 5;
  a.working_bytes = 3;
  b.weight_bytes = 20;
  b.optimizer_state_bytes = 80;
  b.activation_bytes = 7;
  b.working_bytes = 9;
  StageFootprint f;
  f.Add(a);
  f.Add(b);
  f.incoming = 4;
  EXPECT_DOUBLE_EQ(f.resident, 192);
  EXPECT_DOUBLE_EQ(f.Stash(false), 12);
  EXPECT_DOUBLE_EQ(f.Stash(true), 4);  // the paper's stage recompute keeps only the inputs
  EXPECT_DOUBLE_EQ(StagePeakBytes(f, f.Stash(false), 3, Sharding::kNone, 1), 225);
  EXPECT_DOUBLE_EQ(StagePeakBytes(f, f.Stash(false), 3, Sharding::kNone, 4), 225);
  EXPECT_DOUBLE_EQ(StagePeakBytes(f, f.Stash(false), 3, Sharding::kOptimizer, 1), 225);
  EXPECT_DOUBLE_EQ(StagePeakBytes(f, f.Stash(false), 3, Sharding::kOptimizer, 4), 135);
  EXPECT_DOUBLE_EQ(StagePeakBytes(f, f.Stash(false), 3, Sharding::kGradients, 4), 127.5);
  EXPECT_DOUBLE_EQ(StagePeakBytes(f, f.Stash(false), 3, Sharding::kParameters, 4), 135);
  const StageMemory z3 = StageMemoryParts(f, f.Stash(false), 3, Sharding::kParameters, 4);
  EXPECT_DOUBLE_EQ(z3.weight_bytes, 7.5);
  EXPECT_DOUBLE_EQ(z3.gradient_bytes, 7.5);
  EXPECT_DOUBLE_EQ(z3.optimizer_state_bytes, 30);
  EXPECT_DOUBLE_EQ(z3.gathered_bytes, 45);
  EXPECT_DOUBLE_EQ(z3.activation_bytes, 36);
  // FP8 weight copies (8 more bytes on the first layer) are held like weights: whole unsharded or
  // with optimizer sharding, divided with the weights by parameters sharding.
  PlacementLayer c = a;
  c.cached_weight_bytes = 8;
  StageFootprint g;
  g.Add(c);
  g.Add(b);
  EXPECT_DOUBLE_EQ(StagePeakBytes(g, g.Stash(false), 3, Sharding::kOptimizer, 4), 135 + 8);
  EXPECT_DOUBLE_EQ(StagePeakBytes(g, g.Stash(false), 3, Sharding::kParameters, 4), 135 + 8.0 / 4);
  EXPECT_DOUBLE_EQ(StageMemoryParts(g, g.Stash(false), 3, Sharding::kParameters, 4).weight_bytes,
                   (30 + 8) / 4.0);
  const StageMemory m = StageMemoryParts(f, f.Stash(false), 3, Sharding::kOptimizer, 4);
  EXPECT_DOUBLE_EQ(m.weight_bytes, 30);
  EXPECT_DOUBLE_EQ(m.gradient_bytes, 30);
  EXPECT_DOUBLE_EQ(m.optimizer_state_bytes, 30);
  EXPECT_DOUBLE_EQ(m.working_bytes, 9);
  EXPECT_DOUBLE_EQ(m.activation_bytes, 36);  // 12 + 2·12 kept
  StepSettings s = Settings(PipelineSchedule::k1F1B);
  EXPECT_EQ(ShardWays(s, 2, 8, 2), 1);
  s.sharding = Sharding::kOptimizer;
  EXPECT_EQ(ShardWays(s, 2, 8, 2), 16);
}

// The paper's flat-network sync: all-reduce of 2W bytes over d = 4 at 1e9 B/s is
// 2·(d − 1)/d·2W/bw = 4·(3/4)·1e9/1e9 = 3 s for W = 1e9; half of it hidden with overlap 0.5.
// The distributed optimizer: reduce-scatter of 2W, (d − 1)/d·2W/bw = 1.5 s, plus the all-gather
// of W, 0.75 s. Sharding gradients: the all-gather once per step, the reduce-scatter (1.5 s) every
// micro-batch; parameters: nothing per step, that and two all-gathers (3 s) every micro-batch.
// The tied embedding: all-reduce of 1e9 bytes between 2 ranks: 1 s, none with s = 1.
// The optimizer step's peak (16-bit gradient buffers copied to fp32 for the step): two layers of
// 5 and 10 parameters with 2-byte weights and gradients, 12 bytes of state and 4 of fp32 copies
// per parameter. Resident 10+10+60+5 + 20+20+120+7 = 252, stash 12. Forward and backward at 3 in
// flight: 252 + 2·12 + 9 = 285; the step: 252 − 12 activations + 60 copies = 300, the peak. At 5
// in flight the backward's 252 + 4·12 + 9 = 309 is. Sharded 4 ways, the step holds a quarter of
// the copies: optimizer sharding 285 − ¾·180 = 150 against 300 − ¾·(180 + 60) = 120; parameters
// sharding (divided 240, gathered 2·20 + 20 = 60) 285 + ¾·(60 − 240) = 150 against
// 300 − ¾·(240 + 60) = 75.
TEST(StepModel, OptimizerStepPeakByHand) {
  PlacementLayer a, b;
  a.weight_bytes = 10;
  a.gradient_bytes = 10;
  a.optimizer_state_bytes = 60;
  a.step_working_bytes = 20;
  a.activation_bytes = 5;
  a.working_bytes = 3;
  b.weight_bytes = 20;
  b.gradient_bytes = 20;
  b.optimizer_state_bytes = 120;
  b.step_working_bytes = 40;
  b.activation_bytes = 7;
  b.working_bytes = 9;
  StageFootprint f;
  f.Add(a);
  f.Add(b);
  EXPECT_DOUBLE_EQ(f.resident, 252);
  EXPECT_DOUBLE_EQ(f.step_working, 60);
  const double stash = f.Stash(false);
  EXPECT_DOUBLE_EQ(StagePeakBytes(f, stash, 3, Sharding::kNone, 1), 300);
  EXPECT_DOUBLE_EQ(StagePeakBytes(f, stash, 5, Sharding::kNone, 1), 309);
  EXPECT_DOUBLE_EQ(StagePeakBytes(f, stash, 3, Sharding::kOptimizer, 4), 150);
  EXPECT_DOUBLE_EQ(StepPeakBytes(f, Sharding::kOptimizer, 4), 120);
  EXPECT_DOUBLE_EQ(StagePeakBytes(f, stash, 3, Sharding::kParameters, 4), 150);
  EXPECT_DOUBLE_EQ(StepPeakBytes(f, Sharding::kParameters, 4), 75);
  const StageMemory at_step = StageMemoryParts(f, stash, 3, Sharding::kNone, 1);
  EXPECT_TRUE(at_step.peak_at_step);
  EXPECT_DOUBLE_EQ(at_step.step_working_bytes, 60);
  EXPECT_DOUBLE_EQ(at_step.activation_bytes, 36);  // 12 + 2·12 kept, as the backward holds them
  EXPECT_DOUBLE_EQ(at_step.weight_bytes + at_step.gradient_bytes + at_step.optimizer_state_bytes +
                       at_step.step_working_bytes,
                   300);
  const StageMemory in_backward = StageMemoryParts(f, stash, 5, Sharding::kNone, 1);
  EXPECT_FALSE(in_backward.peak_at_step);
  EXPECT_DOUBLE_EQ(in_backward.activation_bytes, 60);
  const StageMemory sharded = StageMemoryParts(f, stash, 3, Sharding::kOptimizer, 4);
  EXPECT_FALSE(sharded.peak_at_step);
  EXPECT_DOUBLE_EQ(sharded.step_working_bytes, 15);
}

TEST(StepModel, GradientSyncOnAFlatNetwork) {
  StepSettings s = Settings(PipelineSchedule::k1F1B);
  EXPECT_DOUBLE_EQ(GradientSyncS(s, 1, 4, 1, 1e9), 3.0);
  EXPECT_DOUBLE_EQ(ShardingPerMicroBatchS(s, 1, 4, 1, 1e9), 0.0);
  s.sharding = Sharding::kOptimizer;
  EXPECT_DOUBLE_EQ(GradientSyncS(s, 1, 4, 1, 1e9), 2.25);
  EXPECT_DOUBLE_EQ(ShardingPerMicroBatchS(s, 1, 4, 1, 1e9), 0.0);
  s.sharding = Sharding::kGradients;
  EXPECT_DOUBLE_EQ(GradientSyncS(s, 1, 4, 1, 1e9), 0.75);
  EXPECT_DOUBLE_EQ(ShardingPerMicroBatchS(s, 1, 4, 1, 1e9), 1.5);
  s.sharding = Sharding::kParameters;
  EXPECT_DOUBLE_EQ(GradientSyncS(s, 1, 4, 1, 1e9), 0.0);
  EXPECT_DOUBLE_EQ(ShardingPerMicroBatchS(s, 1, 4, 1, 1e9), 3.0);
  EXPECT_DOUBLE_EQ(ShardingPerMicroBatchS(s, 1, 1, 1, 1e9), 0.0);  // d·r = 1: nothing to share
  EXPECT_DOUBLE_EQ(TiedEmbeddingS(s, 1, 4, 2, 1e9), 1.0);
  EXPECT_DOUBLE_EQ(TiedEmbeddingS(s, 1, 4, 1, 1e9), 0.0);
}

// Hybrid sharding (StepSettings::shard_span), by hand on the flat network at 1e9 B/s, W = 1e9
// bytes of weights, 2W of gradients. The replicas h: the most that divide d within the span (t
// devices each): span 4 at t = 1, d = 8 gives 4; at t = 2, 2; at t = 3, 1; span 6 at t = 1, 4 (6
// does not divide 8); a span of t·d or more, or none, all d. With h = 4 of d = 8: the distributed
// optimizer reduce-scatters 2W over 4 ((3/4)·2 = 1.5 s), all-reduces each device's quarter across
// the 2 groups (2·(1/2)·0.5 = 0.5 s) and all-gathers W over 4 (0.75 s): 2.75 s, against
// 1.75 + 0.875 = 2.625 s over all 8. Gradients: the 0.75 s once a step, the 1.5 + 0.5 s every
// micro-batch (FSDP2's HSDP all-reduces after each reduce-scatter); parameters: nothing once a
// step, 1.5 + 0.5 + 2·0.75 = 3.5 s every micro-batch. All-reduced once a step instead
// (Megatron-FSDP's outer group), the 0.5 s moves to the step: gradients 1.25 s a step and 1.5 s a
// micro-batch, parameters 0.5 s and 3 s.
// Memory divides 4 ways (h·r: 2·2 at t = 2 with 2 replicas), the step's time by 4 and the stage's
// steps run (8/4)·a/r = 2 for a = r = 1.
// Experts folded over data-parallel replicas (LayerTable::expert_fold): their weights are held,
// reduced and sharded by the d/j replicas t·j ranks apart, the rest by all d. By hand: a layer of
// 100 weight bytes, 80 of them experts, 600 bytes of optimizer state, 50 of step time.
TEST(StepModel, FoldedExpertsByHand) {
  PlacementLayer l;
  l.weight_bytes = 100;
  l.expert_weight_bytes = 80;
  l.optimizer_state_bytes = 600;
  l.optimizer_step_s = 50;
  l.activation_bytes = 10;
  LayerTable table;
  table.layers = {l};
  table.expert_fold = 4;  // t 2, d 8: experts over 2 replicas 8 ranks apart
  StepSettings s;
  s.num_accelerators = 16;
  s.sharding = Sharding::kOptimizer;
  s.network = Network::Flat(1.0);  // 1 byte/s, no latency: seconds are bytes
  const WeightClass experts = ExpertClass(table, 2, 8);
  EXPECT_EQ(experts.t, 8);
  EXPECT_EQ(experts.d, 2);
  const ShardDivisors n = ShardWaysOf(s, table, 2, 8);
  EXPECT_EQ(n.ways, 8);
  EXPECT_EQ(n.expert_ways, 2);
  StageFootprint f;
  f.Add(l);
  // Optimizer state: dense 120/8 = 15, experts 480/2 = 240.
  const StageMemory m = StageMemoryParts(f, f.Stash(false), 1, Sharding::kOptimizer, n);
  EXPECT_DOUBLE_EQ(m.optimizer_state_bytes, 15 + 240);
  // Resident 100 + 100 (gradients) + 600 + 10, less 7/8 of 120 and 1/2 of 480.
  EXPECT_DOUBLE_EQ(StagePeakBytes(f, f.Stash(false), 1, Sharding::kOptimizer, n), 810 - 105 - 240);
  // The step: 10 s of dense step over 8, 40 s of experts over 2.
  EXPECT_DOUBLE_EQ(StageOptimizerStepS(s, table, 2, 8, 50, 40), 10.0 / 8 + 40.0 / 2);
  // The reduction (fp32 gradients: 2 bytes per weight byte): reduce-scatter of 40 bytes over 8
  // and of 160 over 2, all-gather of 20 over 8 and of 80 over 2 (ring: (n − 1)/n of the bytes).
  const SyncParts sync = StageSyncPartsS(s, table, 2, 8, {100, 80});
  EXPECT_DOUBLE_EQ(sync.reduce_s, 40.0 * 7 / 8 + 160.0 / 2);
  EXPECT_DOUBLE_EQ(sync.gather_s, 20.0 * 7 / 8 + 80.0 / 2);
  // Sharding the parameters: the layer holds its 2·100 weight and 100 gradient bytes whole while
  // it works, 60 of them the rest's (less 1/8) and 240 the experts' (less 1/2).
  EXPECT_DOUBLE_EQ(LayerGatheredAway(l, Sharding::kParameters, n), 60.0 * 7 / 8 + 240.0 / 2);
  EXPECT_DOUBLE_EQ(LayerGatheredAway(l, Sharding::kGradients, n), 20.0 * 7 / 8 + 80.0 / 2);
  {  // Unset, the experts gather exactly their own bytes (14/50 of 50e9 rounds off 14e9).
    PlacementLayer big;
    big.weight_bytes = 50e9;
    big.expert_weight_bytes = 14e9;
    EXPECT_EQ(WeightsOf(big).ExpertGathered(), 14e9);
    EXPECT_EQ(WeightsOf(big).Gathered(), 50e9);
  }
  {  // Its weights gathered at 70 of their 100 bytes (FP8 weights in FP8): the experts gather
     // in the layer's proportion, 56 of 80; the gradients are counted from the 100 as before.
    PlacementLayer fp8 = l;
    fp8.gathered_weight_bytes = 70;
    const StageWeights w = WeightsOf(fp8);
    EXPECT_DOUBLE_EQ(w.ExpertGathered(), 56);
    const SyncParts g = StageSyncPartsS(s, table, 2, 8, w);
    EXPECT_DOUBLE_EQ(g.reduce_s, sync.reduce_s);
    EXPECT_DOUBLE_EQ(g.gather_s, 14.0 * 7 / 8 + 56.0 / 2);
    // What the layer holds whole: 2·70 + 100 = 240, 48 the rest's and 192 the experts'.
    EXPECT_DOUBLE_EQ(LayerGatheredAway(fp8, Sharding::kParameters, n), 48.0 * 7 / 8 + 192.0 / 2);
    // Sharding the parameters, every micro-batch: two all-gathers of the gathered bytes and the
    // reduce-scatter of the gradients, per class.
    StepSettings p = s;
    p.sharding = Sharding::kParameters;
    EXPECT_DOUBLE_EQ(StageShardingPerMicroBatchS(p, table, 2, 8, w),
                     (2 * 14.0 + 40.0) * 7 / 8 + (2 * 56.0 + 160.0) / 2);
  }
  // Unfolded, the same layer is one class.
  table.expert_fold = 1;
  EXPECT_EQ(ShardWaysOf(s, table, 2, 8).expert_ways, 8);
  EXPECT_DOUBLE_EQ(StageSyncPartsS(s, table, 2, 8, {100, 80}).reduce_s, 200.0 * 7 / 8);
  EXPECT_DOUBLE_EQ(StageOptimizerStepS(s, table, 2, 8, 50, 40), 50.0 / 8);
}

// Hybrid sharding of folded experts shards them over what Megatron-LM's distributed optimizer
// does (parallel_state.py): its instances are the dense groups, world/(t·h) of them per stage
// (h the dense shard replicas), and each expert shard group is the expert data-parallel group,
// world/(EP·ETP) per stage, divided by the instances. Whole experts: EP = j·t, ETP 1.
TEST(StepModel, HybridShardingShardsFoldedExpertsAsMegatronsInstances) {
  StepSettings s = Settings(PipelineSchedule::k1F1B);
  s.sharding = Sharding::kOptimizer;
  s.shard_span = 8;  // a node
  LayerTable table;
  table.layers = {PlacementLayer{}};
  struct Case {
    int t;
    std::int64_t d, j, dense, experts;  // by hand, Megatron's sizes
  };
  // t 1, d 64, EP 8: 8 dense replicas a node, 8 instances; expert DP 64/8 = 8, over 8: 1 — the
  // experts' state is whole on every device, as Megatron-LM keeps it.
  // t 1, d 64, EP 4: expert DP 16, over 8 instances: 2.
  // t 2, d 32, EP 4 (j 2): dense 8/2 = 4, instances 32/4 = 8; expert DP 64/4 = 16, over 8: 2 —
  // the same as experts split over t at EP 2 (j 2, ETP 2): EP·ETP = 4 = j·t.
  for (const Case& c : {Case{1, 64, 8, 8, 1}, Case{1, 64, 4, 8, 2}, Case{2, 32, 2, 4, 2}}) {
    table.expert_fold = c.j;
    const ShardDivisors n = ShardWaysOf(s, table, c.t, c.d);
    EXPECT_EQ(n.ways, c.dense) << c.t << " " << c.j;
    EXPECT_EQ(n.expert_ways, c.experts) << c.t << " " << c.j;
    const std::int64_t world = c.t * c.d, instances = c.d / c.dense;
    EXPECT_EQ(n.expert_ways, world / (c.j * c.t) / instances);  // EP·ETP = j·t either way
  }
}

TEST(StepModel, HybridShardingByHand) {
  StepSettings s = Settings(PipelineSchedule::k1F1B);
  s.sharding = Sharding::kOptimizer;
  EXPECT_EQ(ShardReplicas(s, 1, 8), 8);
  s.shard_span = 4;
  EXPECT_EQ(ShardReplicas(s, 1, 8), 4);
  EXPECT_EQ(ShardReplicas(s, 2, 8), 2);
  EXPECT_EQ(ShardReplicas(s, 3, 8), 1);
  EXPECT_EQ(ShardReplicas(s, 4, 1), 1);
  EXPECT_EQ(ShardReplicas(s, 1, 3), 3);  // 4 devices hold all 3
  s.shard_span = 6;
  EXPECT_EQ(ShardReplicas(s, 1, 8), 4);
  s.shard_span = 8;
  EXPECT_EQ(ShardReplicas(s, 1, 8), 8);
  s.shard_span = 4;
  const SyncParts optimizer = GradientSyncPartsS(s, 1, 8, 1, 1e9);
  EXPECT_DOUBLE_EQ(optimizer.reduce_s, 2.0);
  EXPECT_DOUBLE_EQ(optimizer.gather_s, 0.75);
  EXPECT_DOUBLE_EQ(ShardingPerMicroBatchS(s, 1, 8, 1, 1e9), 0.0);
  s.shard_span = 0;
  EXPECT_DOUBLE_EQ(GradientSyncS(s, 1, 8, 1, 1e9), 2.625);
  s.shard_span = 4;
  s.sharding = Sharding::kGradients;
  EXPECT_DOUBLE_EQ(GradientSyncS(s, 1, 8, 1, 1e9), 0.75);
  EXPECT_DOUBLE_EQ(ShardingPerMicroBatchS(s, 1, 8, 1, 1e9), 2.0);
  s.sharding = Sharding::kParameters;
  EXPECT_DOUBLE_EQ(GradientSyncS(s, 1, 8, 1, 1e9), 0.0);
  EXPECT_DOUBLE_EQ(ShardingPerMicroBatchS(s, 1, 8, 1, 1e9), 3.5);
  EXPECT_DOUBLE_EQ(ShardingEdgeS(s, 1, 8, 1, 1e9), 1.5 + 0.5 + 0.75);  // one all-gather
  s.hybrid_all_reduce = HybridAllReduce::kOnceAStep;
  EXPECT_DOUBLE_EQ(GradientSyncS(s, 1, 8, 1, 1e9), 0.5);
  EXPECT_DOUBLE_EQ(ShardingPerMicroBatchS(s, 1, 8, 1, 1e9), 3.0);
  s.sharding = Sharding::kGradients;
  EXPECT_DOUBLE_EQ(GradientSyncS(s, 1, 8, 1, 1e9), 1.25);
  EXPECT_DOUBLE_EQ(ShardingPerMicroBatchS(s, 1, 8, 1, 1e9), 1.5);
  s.sharding = Sharding::kOptimizer;  // the same either way
  EXPECT_DOUBLE_EQ(GradientSyncS(s, 1, 8, 1, 1e9), 2.75);
  s.hybrid_all_reduce = HybridAllReduce::kEveryMicroBatch;
  EXPECT_DOUBLE_EQ(GradientSyncS(s, 1, 8, 1, 1e9), 2.75);
  s.sharding = Sharding::kParameters;
  EXPECT_EQ(ShardWays(s, 1, 8, 1), 4);
  EXPECT_EQ(ShardWays(s, 2, 8, 2), 4);
  s.sharding = Sharding::kOptimizer;
  EXPECT_DOUBLE_EQ(OptimizerStepS(s, 1, 8.0, 8, 1), 2.0);
  EXPECT_DOUBLE_EQ(OptimizerStepRuns(s, 1, 1, 8, 1), 2.0);
  // Unsharded, the span changes nothing: the all-reduce of 2W over 8, 2·(7/8)·2 = 3.5 s.
  s.sharding = Sharding::kNone;
  EXPECT_DOUBLE_EQ(GradientSyncS(s, 1, 8, 1, 1e9), 3.5);
  EXPECT_EQ(ShardWays(s, 1, 8, 1), 1);
}

// What of the sync the step waits for (gradient_sync.hpp), by hand. The all-reduce above, 3 s:
// without overlap all of it, whatever the window. With f = 0.5, a backward of 4 s per micro-batch
// and the first layer 10% of the weights: max(0.1·3, 3 − 0.5·4) = 1 s; a backward of 8 s hides all
// but the first layer's 0.3 s. Interleaved, v = 2 chunks of 1.5 s on p = 2 stages (chunk slots of
// 2 s): chunk 1 may start 0.5·(1·2 + 1)·2 = 3 s before the end and ends 1.5 s before it; chunk 0
// may start 0.5·(0·2 + 1)·2 = 1 s before and ends 0.5 s after: 0.5 s. The distributed optimizer's
// reduce-scatter (1.5 s) behind a 2 s backward and its all-gather (0.75 s) behind a 1 s forward:
// (1.5 − 0.5·2) + (0.75 − 0.5·1) = 0.75 s.
TEST(StepModel, ReductionHiddenBehindTheFirstStagesPasses) {
  StepSettings s = Settings(PipelineSchedule::k1F1B);
  const SyncParts all_reduce = GradientSyncPartsS(s, 1, 4, 1, 1e9);
  EXPECT_DOUBLE_EQ(all_reduce.reduce_s, 3.0);
  EXPECT_DOUBLE_EQ(all_reduce.gather_s, 0.0);
  SyncWindow w;
  w.backward_s = 4;
  w.forward_s = 2;
  w.first_share = 0.1;
  EXPECT_DOUBLE_EQ(ExposedGradientSyncS(s, all_reduce, w), 3.0);
  s.gradient_reduction_overlap = 0.5;
  EXPECT_DOUBLE_EQ(ExposedGradientSyncS(s, all_reduce, w), 1.0);
  w.backward_s = 8;
  EXPECT_DOUBLE_EQ(ExposedGradientSyncS(s, all_reduce, w), 0.3);
  s.schedule = PipelineSchedule::kInterleaved;
  s.virtual_stages = 2;
  w.stages = 2;
  w.backward_s = 4;
  EXPECT_DOUBLE_EQ(ExposedGradientSyncS(s, all_reduce, w), 0.5);
  s.schedule = PipelineSchedule::k1F1B;
  s.virtual_stages = 1;
  s.sharding = Sharding::kOptimizer;
  const SyncParts optimizer = GradientSyncPartsS(s, 1, 4, 1, 1e9);
  EXPECT_DOUBLE_EQ(optimizer.reduce_s, 1.5);
  EXPECT_DOUBLE_EQ(optimizer.gather_s, 0.75);
  w.backward_s = 2;
  w.forward_s = 1;
  EXPECT_DOUBLE_EQ(ExposedGradientSyncS(s, optimizer, w), 0.75);
}

// The optimizer step of a layer with 1e9 bytes of weights + gradients + state: read and written
// once at 2e12 B/s = 1 ms, 2e9 bytes · 8 · 3.9 pJ/bit of HBM energy; 1/(d·r) of it per device
// with the distributed optimizer.
TEST(StepModel, OptimizerStepFromItsOp) {
  Operator step;
  step.kind = OpKind::kOptimizer;
  step.weight_bytes = 1000000000;
  ArchConfig arch;
  arch.hbm_bandwidth_bytes_per_s = 2e12;
  EnergyTechnology tech;
  tech.hbm_pj_per_bit = 3.9;
  const OptimizerStepCost c = CostOptimizerStep(step, arch, tech);
  EXPECT_DOUBLE_EQ(c.seconds, 1e-3);
  EXPECT_DOUBLE_EQ(c.energy.memory_j, 2e9 * 8 * 3.9e-12);
  EXPECT_DOUBLE_EQ(c.energy.TotalJ(), c.energy.memory_j);
  StepSettings s = Settings(PipelineSchedule::k1F1B);
  EXPECT_DOUBLE_EQ(OptimizerStepS(s, 2, 8.0, 4, 2), 8.0);
  EXPECT_DOUBLE_EQ(OptimizerStepRuns(s, 2, 2, 4, 2), 8.0);  // d·a devices
  s.sharding = Sharding::kOptimizer;
  EXPECT_DOUBLE_EQ(OptimizerStepS(s, 2, 8.0, 4, 2), 1.0);
  EXPECT_DOUBLE_EQ(OptimizerStepRuns(s, 2, 2, 4, 2), 1.0);  // a/r
}

// Layers form a chain when each has an edge from the one before it, whatever else links them; the
// floor of a stage loads' sum is then Σ forward + backward + backward recompute (by hand: 1 + 2 +
// 0.5 and 3 + 4 + 0), and 0 for layers that may overlap.
TEST(StepModel, ChainsAndTheirLoadFloor) {
  LayerTable table;
  PlacementLayer a, b;
  a.forward_s = 1;
  a.backward_s = 2;
  a.backward_recompute_s = 0.5;
  b.forward_s = 3;
  b.backward_s = 4;
  table.layers = {a, b, a};
  EXPECT_TRUE(LayersFormChain(1, table.edges));  // one layer, no edge
  EXPECT_FALSE(LayersFormChain(3, table.edges));
  EXPECT_DOUBLE_EQ(StageLoadFloor(table), 0);
  table.edges = {{0, 1, 8}, {1, 2, 8}};
  EXPECT_TRUE(LayersFormChain(3, table.edges));
  EXPECT_DOUBLE_EQ(StageLoadFloor(table), 3.5 + 7 + 3.5);
  table.edges.push_back({0, 2, 8});  // a skip edge: still one after another
  EXPECT_TRUE(LayersFormChain(3, table.edges));
  EXPECT_DOUBLE_EQ(StageLoadFloor(table), 14);
  table.edges = {{0, 1, 8}, {0, 2, 8}};  // 1 and 2 are branches
  EXPECT_FALSE(LayersFormChain(3, table.edges));
  EXPECT_DOUBLE_EQ(StageLoadFloor(table), 0);
}

}  // namespace
}  // namespace phaze
