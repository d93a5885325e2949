// The context_parallel strategy plugin, alone and composed over megatron, against figures derived
// here from the model's hyperparameters: per-device GEMM FLOPs (every token-split GEMM does 1/w),
// the bytes its all-gathers of K and V move, Korthikanti et al.'s activation formula with the
// gathered K and V kept whole, parameters (weights are replicated), and refusals.
#include <gtest/gtest.h>

#include "phaze/core/error.hpp"
#include "phaze/graph/graph_builder.hpp"
#include "phaze/plugin/registry.hpp"
#include "phaze/search/run_config.hpp"
#include "phaze/strategy/composed_strategy.hpp"
#include "phaze/strategy/slicing.hpp"
#include "phaze/strategy/width_restricted_strategy.hpp"
#include "plugin_registry.hpp"
#include "test_paths.hpp"

namespace phaze {
namespace {

LayerGraph Full(const std::string& model, std::int64_t b) {
  GraphOptions o;
  o.micro_batch = b;
  o.fusion = false;
  return BuildLayerGraph(
      LoadModelSpec(std::string(PHAZE_SOURCE_DIR) + "/workloads/" + model + ".yaml"), o);
}

std::shared_ptr<ParallelismStrategy> Create(const std::string& name) {
  return testing::BuiltPlugins().CreateStrategy(name, ConfigNode::EmptyMap("test", "params"));
}

struct Traffic {
  int count = 0;
  std::int64_t bytes = 0;
  std::int64_t group = 0, stride = 0;
};
Traffic Of(const OperatorGraph& g, CollectiveKind kind) {
  Traffic t;
  for (const auto& op : g.Ops()) {
    if (op.kind != OpKind::kCollective || op.collective != kind) continue;
    ++t.count;
    t.bytes += op.collective_bytes;
    t.group = op.collective_group;
    t.stride = op.collective_stride;
  }
  return t;
}

// Megatron-8.3B: s = 1024, h = 3072, a = 32, 2-byte activations; the block's forward GEMMs do
// 24·b·s·h² + 4·b·s²·h FLOPs, and it keeps s·b·h·(34 + 5·a·s/h) bytes (Korthikanti et al.,
// Table 2, no parallelism). Context parallelism over w devices: all of it on s/w queries, except
// that the scores and context GEMMs keep the all-gathered K and V (s·b·h·2 bytes each) instead of
// their 1/w parts.
TEST(ContextParallel, FlopsActivationsAndKeyValueTraffic) {
  const std::int64_t s = 1024, h = 3072, a = 32, V = 50304, l = 72;
  auto cp = Create("context_parallel");
  for (std::int64_t b : {1, 2}) {
    const LayerGraph full = Full("megatron-8.3b", b);
    for (std::int64_t w : {1, 2, 4, 8}) {
      SCOPED_TRACE("b=" + std::to_string(b) + " w=" + std::to_string(w));
      const LayerGraph g = SliceLayerGraph(*cp, "context_parallel", full, w, true);
      const UniqueLayer& block = g.unique_layers.at(1);
      EXPECT_EQ(block.forward.GemmFlops(), (24 * b * s * h * h + 4 * b * s * s * h) / w);
      EXPECT_EQ(block.backward.GemmFlops(), 2 * block.forward.GemmFlops());
      const std::int64_t sbh = s * b * h;
      EXPECT_EQ(block.activation_bytes, (34 * sbh + 5 * a * s * s * b) / w + 4 * sbh * (w - 1) / w);
      // K and V gathered forward (the gathered tensor's bytes), reduce-scattered backward.
      const Traffic gather = Of(block.forward, CollectiveKind::kAllGather);
      const Traffic scatter = Of(block.backward, CollectiveKind::kReduceScatter);
      EXPECT_EQ(gather.count, w > 1 ? 2 : 0);
      EXPECT_EQ(gather.bytes, w > 1 ? 2 * sbh * 2 : 0);
      EXPECT_EQ(scatter.bytes, gather.bytes);
      if (w > 1) {
        EXPECT_EQ(gather.group, w);
        EXPECT_EQ(gather.stride, 1);
      }
      EXPECT_EQ(Of(block.forward, CollectiveKind::kAllReduce).count, 0);
      // Weights whole on every device, their gradients reduced over the w of them.
      EXPECT_EQ(g.Parameters(), V * h + s * h + l * (12 * h * h + 13 * h) + 2 * h);
      EXPECT_EQ(g.weight_replicas, w);
      EXPECT_EQ(g.edges.at(0).bytes, sbh * 2 / w);
      EXPECT_EQ(g.edges.at(0).gather_group, 1);
      // The head's loss: 1/w of the tokens over the whole vocabulary.
      EXPECT_EQ(g.unique_layers.at(2).forward.GemmFlops(), 2 * b * s * h * V / w);
    }
  }
}

// Composed over megatron ×2, a width t is 2 tensor-parallel ranks × c = t/2 context-parallel
// groups of them: block FLOPs and Megatron's all-reduces (on s/c tokens) are divided by t and c;
// the all-gathers of K and V (already split over the heads) run over c devices 2 ranks apart;
// parameters are megatron ×2's; the c groups hold the same weights.
TEST(ContextParallel, ComposesOverMegatron) {
  // V: GPT-2's vocabulary padded for Megatron's width 2 (a multiple of 256).
  const std::int64_t s = 1024, h = 3072, a = 32, b = 1, V = 50432, l = 72;
  const auto composed = std::make_shared<ComposedStrategy>(
      Create("megatron"), "megatron", 2, Create("context_parallel"), "context_parallel");
  const LayerGraph full = Full("megatron-8.3b", b);
  const std::int64_t sbh = s * b * h;
  for (std::int64_t t : {2, 4, 8}) {
    SCOPED_TRACE("t=" + std::to_string(t));
    const std::int64_t c = t / 2;
    const LayerGraph g = SliceLayerGraph(*composed, "cp over megatron", full, t, true);
    const UniqueLayer& block = g.unique_layers.at(1);
    EXPECT_EQ(block.forward.GemmFlops(), (24 * b * s * h * h + 4 * b * s * s * h) / t);
    const Traffic all_reduce = Of(block.forward, CollectiveKind::kAllReduce);
    EXPECT_EQ(all_reduce.count, 2);
    EXPECT_EQ(all_reduce.bytes, 2 * sbh * 2 / c);
    EXPECT_EQ(all_reduce.group, 2);
    EXPECT_EQ(all_reduce.stride, 1);
    const Traffic gather = Of(block.forward, CollectiveKind::kAllGather);
    EXPECT_EQ(gather.count, c > 1 ? 2 : 0);
    EXPECT_EQ(gather.bytes, c > 1 ? 2 * (sbh / 2) * 2 : 0);
    if (c > 1) {
      EXPECT_EQ(gather.group, c);
      EXPECT_EQ(gather.stride, 2);
    }
    // Megatron ×2 keeps 10sbh + 24sbh/2 + 5as²b/2; c splits it, K and V (sbh bytes each after
    // the head split) stay gathered.
    EXPECT_EQ(block.activation_bytes,
              (10 * sbh + 12 * sbh + 5 * a * s * s * b / 2) / c + 2 * sbh * (c - 1) / c);
    EXPECT_EQ(g.Parameters(), V * h / 2 + s * h + l * (12 * h * h / 2 + 7 * h / 2 + 6 * h) + 2 * h);
    EXPECT_EQ(g.weight_replicas, c);
  }
}

TEST(ContextParallel, RefusesWithTheReason) {
  auto cp = Create("context_parallel");
  const LayerGraph gpt2 = Full("gpt2-xl", 1);
  EXPECT_EQ(cp->Refusal(gpt2, 3), "the sequence's 1024 tokens are not divisible by 3");
  EXPECT_EQ(cp->Refusal(gpt2, 2), "");  // 25 heads: no matter, the heads stay whole
  EXPECT_EQ(SupportedWidths(*cp, gpt2, {1, 2, 3, 4, 8}), (std::vector<std::int64_t>{1, 2, 4, 8}));
  const ComposedStrategy over2(Create("megatron"), "megatron", 2, cp, "context_parallel");
  EXPECT_EQ(over2.Refusal(gpt2, 4), "megatron ×2: the 25 attention heads are not divisible by 2");
  const ComposedStrategy over4(Create("megatron"), "megatron", 4, cp, "context_parallel");
  const LayerGraph m83 = Full("megatron-8.3b", 1);
  EXPECT_EQ(over4.Refusal(m83, 6), "the width 6 is not a multiple of megatron's 4");
  EXPECT_EQ(over4.Refusal(m83, 4 * 1024 * 2),
            "context_parallel ×2048: the sequence's 1024 tokens "
            "are not divisible by 2048");
}

// `phaze plan --context-parallel`'s widths: a strategy planned at some widths refuses the others,
// saying which and why; at its own the strategy it wraps decides and slices, the same slice.
TEST(WidthRestricted, RefusesTheWidthsNotPlannedAndDefersTheRest) {
  const auto cp = Create("context_parallel");
  const LayerGraph gpt2 = Full("gpt2-xl", 1);
  const WidthRestrictedStrategy only(cp, {2, 3}, "asked for 2 and 3");
  EXPECT_EQ(only.Refusal(gpt2, 4), "not planned at t = 4: asked for 2 and 3");
  EXPECT_EQ(only.Refusal(gpt2, 3), "the sequence's 1024 tokens are not divisible by 3");
  EXPECT_EQ(only.Refusal(gpt2, 2), "");
  EXPECT_EQ(SupportedWidths(only, gpt2, {1, 2, 3, 4}), (std::vector<std::int64_t>{2}));
  const LayerGraph a = SliceLayerGraph(only, "cp", gpt2, 2, true);
  const LayerGraph b = SliceLayerGraph(*cp, "cp", gpt2, 2, true);
  EXPECT_EQ(a.Parameters(), b.Parameters());
  EXPECT_EQ(a.weight_replicas, 2);
  ASSERT_EQ(a.unique_layers.size(), b.unique_layers.size());
  for (std::size_t i = 0; i < a.unique_layers.size(); ++i) {
    EXPECT_EQ(a.unique_layers[i].forward.GemmFlops(), b.unique_layers[i].forward.GemmFlops());
    EXPECT_EQ(a.unique_layers[i].activation_bytes, b.unique_layers[i].activation_bytes);
  }
}

// The run config's `strategy.over` builds the composition, names it, and a typo in either name
// fails when the config is checked, at its line.
TEST(ContextParallel, RunConfigComposesAndChecksBothNames) {
  const char* yaml = R"(models: [{file: tiny.yaml}]
strategy: {name: context_parallel, over: {name: megatron, width: 2}}
)";
  RunConfig run = RunConfig::Parse(ConfigNode::ParseString(yaml, "run.yaml"));
  ASSERT_EQ(run.strategies.size(), 1u);
  EXPECT_EQ(run.strategies[0].Name(), "context_parallel over megatron×2");
  EXPECT_NO_THROW(run.CheckComponents(testing::BuiltPlugins(), false, false, true));
  const auto strategy = CreateStrategy(testing::BuiltPlugins(), run.strategies[0]);
  const LayerGraph g =
      SliceLayerGraph(*strategy, run.strategies[0].Name(), Full("tiny-gpt", 1), 4, true);
  EXPECT_EQ(g.weight_replicas, 2);
  EXPECT_EQ(g.strategy, "context_parallel over megatron×2");
  const Json echo = run.ToJson();
  EXPECT_NE(echo.Dump(0).find("\"over\""), std::string::npos);

  const char* typo = R"(models: [{file: tiny.yaml}]
strategy: {name: context_parallel, over: {name: megatrn, width: 2}}
)";
  RunConfig bad = RunConfig::Parse(ConfigNode::ParseString(typo, "run.yaml"));
  try {
    bad.CheckComponents(testing::BuiltPlugins(), false, false, true);
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("run.yaml:2:49: strategy.over.name: no parallelism "
                                         "strategy named 'megatrn'"),
              std::string::npos)
        << e.what();
  }
}

// The framework helper the plugin slices with: only the dimensions that are the axis divide.
TEST(Slicing, SplitAlongDividesOnlyThatAxis) {
  Operator scores;
  scores.name = "scores";
  scores.kind = OpKind::kBatchedGemm;
  scores.gemm = GemmShape{8, 64, 64, 16};
  scores.axes = OpAxes::Of({Axis::kHeads, Axis::kTokens, Axis::kKeys});
  scores.axes.batch = Axis::kHeads, scores.axes.m = Axis::kTokens, scores.axes.n = Axis::kKeys;
  scores.axes.k = Axis::kHeadDim;
  SplitAlong(scores, Axis::kTokens, 4);
  EXPECT_EQ(*scores.gemm, (GemmShape{8, 16, 64, 16}));
  SplitAlong(scores, Axis::kHeads, 2);
  EXPECT_EQ(*scores.gemm, (GemmShape{4, 16, 64, 16}));

  Operator softmax;
  softmax.name = "softmax";
  softmax.kind = OpKind::kSoftmax;
  softmax.vector = {{"softmax", 8 * 64 * 64, 64}};
  softmax.axes = OpAxes::Of({Axis::kHeads, Axis::kTokens, Axis::kKeys});
  softmax.axes.row = Axis::kKeys;
  SplitAlong(softmax, Axis::kTokens, 4);  // rows stay whole
  EXPECT_EQ(softmax.vector[0].elements, 8 * 64 * 64 / 4);
  EXPECT_EQ(softmax.vector[0].row_elements, 64);
  SplitAlong(softmax, Axis::kKeys, 2);  // rows halve
  EXPECT_EQ(softmax.vector[0].row_elements, 32);
  SplitAlong(softmax, Axis::kFfn, 2);  // not an axis of this op
  EXPECT_EQ(softmax.vector[0].elements, 8 * 64 * 64 / 8);

  Operator odd = softmax;
  odd.vector[0].elements = 30;
  try {
    SplitAlong(odd, Axis::kTokens, 4);
    FAIL();
  } catch (const InvalidArgumentError& e) {
    EXPECT_EQ(std::string(e.what()),
              "op 'softmax': its elements 30 along tokens is not divisible by 4");
  }
}

}  // namespace
}  // namespace phaze
