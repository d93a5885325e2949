// The strategy conformance suite (Phaze::conformance): what every parallelism strategy the plugins
// under test register must do, on the
// tiny GPT (4 heads, 32 tokens, no replicated GEMM) at widths 1, 2 and 4:
//  * width 1 changes nothing;
//  * no GEMM work is lost or duplicated: w × per-device forward and backward GEMM FLOPs equal the
//    unsliced model's;
//  * parameters: a device holds at most the model, and the w devices together, counting each
//    weight once per group of weight_replicas, hold at least all of it;
//  * every collective with a backward conjugate has it in the backward graph, same bytes;
//  * a width that does not divide the model (3) is refused with a reason naming it, and slicing
//    anyway fails with that reason.
#include <gtest/gtest.h>

#include "phaze/conformance/conformance.hpp"
#include "phaze/core/error.hpp"
#include "phaze/core/paths.hpp"
#include "phaze/graph/graph_builder.hpp"
#include "phaze/strategy/parallelism_strategy.hpp"
#include "phaze/strategy/slicing.hpp"

namespace phaze::conformance {
namespace {

LayerGraph TinyGpt() {
  GraphOptions o;
  o.micro_batch = 2;
  o.fusion = false;
  return BuildLayerGraph(LoadModelSpec((WorkloadsDirectory() / "tiny-gpt.yaml").string()),
                         o);
}

std::int64_t Flops(const LayerGraph& g, bool backward) {
  const auto counts = g.InstanceCounts();
  std::int64_t total = 0;
  for (std::size_t u = 0; u < g.unique_layers.size(); ++u) {
    const UniqueLayer& l = g.unique_layers[u];
    total += counts[u] * (backward ? l.backward : l.forward).GemmFlops();
  }
  return total;
}

class StrategyTest : public ::testing::TestWithParam<std::string> {
 protected:
  std::shared_ptr<ParallelismStrategy> strategy_ =
      Plugins().CreateStrategy(GetParam(), ConfigNode::EmptyMap("test", "params"));
  LayerGraph full_ = TinyGpt();
  LayerGraph Slice(std::int64_t w) const {
    return SliceLayerGraph(*strategy_, GetParam(), full_, w, /*fusion=*/false);
  }
};

TEST_P(StrategyTest, WidthOneChangesNothing) {
  const LayerGraph one = Slice(1);
  EXPECT_EQ(Flops(one, false), Flops(full_, false));
  EXPECT_EQ(Flops(one, true), Flops(full_, true));
  EXPECT_EQ(one.Parameters(), full_.Parameters());
  EXPECT_EQ(one.weight_replicas, 1);
  for (std::size_t u = 0; u < one.unique_layers.size(); ++u) {
    EXPECT_EQ(one.unique_layers[u].forward.Ops().size(),
              full_.unique_layers[u].forward.Ops().size());
  }
}

// What a slice conserves: the full graph's work and parameters, with the vocabulary the slice
// reports it padded to (LayerGraph::padded_vocab; Megatron-LM pads to a multiple of 128·t).
TEST_P(StrategyTest, ConservesGemmFlopsAndParameters) {
  for (std::int64_t w : {2, 4}) {
    SCOPED_TRACE("w=" + std::to_string(w));
    ASSERT_EQ(strategy_->Refusal(full_, w), "");
    const LayerGraph g = Slice(w);
    LayerGraph full = full_;
    if (g.padded_vocab > 0) {
      EXPECT_GT(g.padded_vocab, full_.vocab);
      EXPECT_EQ(g.padded_vocab % w, 0);
      ResizeAxis(full, Axis::kVocab, full_.vocab, g.padded_vocab);
      for (auto& layer : full.unique_layers) {  // the resized weights' parameters, and backward
        layer.parameters = layer.forward.WeightBytes() / full.dtype_bytes - layer.tied_parameters;
        CompleteUniqueLayer(layer, /*fusion=*/false, full.dtype_bytes, full.optimizer);
      }
    }
    EXPECT_EQ(w * Flops(g, false), Flops(full, false));
    EXPECT_EQ(w * Flops(g, true), Flops(full, true));
    EXPECT_LE(g.Parameters(), full.Parameters());
    EXPECT_GE(w / g.weight_replicas * g.Parameters(), full.Parameters());
    EXPECT_EQ(w % g.weight_replicas, 0);
  }
}

TEST_P(StrategyTest, EveryCollectiveHasItsBackwardConjugate) {
  for (std::int64_t w : {2, 4}) {
    const LayerGraph g = Slice(w);
    for (const auto& u : g.unique_layers) {
      SCOPED_TRACE(u.name + " w=" + std::to_string(w));
      std::map<CollectiveKind, std::int64_t> expected, found;
      for (const auto& op : u.forward.Ops()) {
        if (op.kind == OpKind::kCollective && op.collective_backward) {
          expected[*op.collective_backward] += op.collective_bytes;
        }
      }
      for (const auto& op : u.backward.Ops()) {
        if (op.kind == OpKind::kCollective && op.collective)
          found[*op.collective] += op.collective_bytes;
      }
      EXPECT_EQ(found, expected);
    }
  }
}

TEST_P(StrategyTest, RefusesAWidthThatDoesNotDivideWithTheReason) {
  const std::string why = strategy_->Refusal(full_, 3);
  EXPECT_NE(why.find("not divisible by 3"), std::string::npos) << why;
  try {
    Slice(3);
    FAIL() << "sliced 3 ways";
  } catch (const InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot split tiny-gpt 3 ways: " + why), std::string::npos)
        << e.what();
  }
}

GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(StrategyTest);
INSTANTIATE_TEST_SUITE_P(
    Strategies, StrategyTest,
    ::testing::ValuesIn(Plugins().Names(ComponentKind::kParallelismStrategy)),
    [](const auto& info) { return info.param; });

}  // namespace
}  // namespace phaze::conformance

namespace phaze::conformance {
// Referenced by main() (conformance.cpp) so that linking the static Phaze::conformance keeps this
// suite's object, whose tests nothing else references.
int kStrategySuite = 0;
}  // namespace phaze::conformance
