// Model descriptions with bad input give located errors; graph files round-trip and import
// hand-written graphs (backward derived) with located errors.
#include "phaze/graph/graph_file.hpp"

#include <gtest/gtest.h>

#include "phaze/core/error.hpp"
#include "phaze/graph/attention_kernel.hpp"
#include "phaze/graph/loss_kernel.hpp"
#include "phaze/graph/graph_builder.hpp"

namespace phaze {
namespace {

const char* kTiny = R"(name: t
family: megatron-gpt
layers: 2
hidden: 64
heads: 4
vocab: 256
max_positions: 64
sequence_length: 32
)";

std::string SpecError(const std::string& text) {
  try {
    ParseModelSpec(ConfigNode::ParseString(text, "model.yaml"));
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

std::string Replace(std::string text, const std::string& from, const std::string& to) {
  text.replace(text.find(from), from.size(), to);
  return text;
}

TEST(ModelSpec, FamilyDefaultsAndOverrides) {
  ModelSpec m = ParseModelSpec(ConfigNode::ParseString(kTiny, "model.yaml"));
  EXPECT_EQ(m.ffn_hidden, 256);
  EXPECT_EQ(m.kv_heads, 4);
  EXPECT_EQ(m.norm_position, NormPosition::kPre);
  EXPECT_TRUE(m.causal);
  EXPECT_DOUBLE_EQ(m.dropout_attention, 0.1);
  m = ParseModelSpec(ConfigNode::ParseString(
      std::string(kTiny) + "norm: rmsnorm\nactivation: swiglu\ndropout: 0\nbias: false\n",
      "m.yaml"));
  EXPECT_EQ(m.norm, NormKind::kRmsNorm);
  EXPECT_EQ(m.activation, Activation::kSwiglu);
  EXPECT_DOUBLE_EQ(m.dropout_hidden, 0);
  EXPECT_FALSE(m.bias);
}

TEST(ModelSpec, BadInputGivesLocatedErrors) {
  EXPECT_NE(SpecError(Replace(kTiny, "megatron-gpt", "gpt"))
                .find("model.yaml:2:9: family: unknown model family 'gpt'; did you mean 'gpt2'?"),
            std::string::npos)
      << SpecError(Replace(kTiny, "megatron-gpt", "gpt"));
  EXPECT_NE(SpecError(Replace(kTiny, "heads: 4", "heads: 6"))
                .find("model.yaml:5:8: heads: heads 6 does not divide hidden 64"),
            std::string::npos)
      << SpecError(Replace(kTiny, "heads: 4", "heads: 6"));
  const std::string negative = SpecError(Replace(kTiny, "layers: 2", "layers: -2"));
  EXPECT_NE(negative.find("model.yaml:3:9: layers:"), std::string::npos) << negative;
  EXPECT_NE(negative.find("-2"), std::string::npos) << negative;
  EXPECT_NE(SpecError(Replace(kTiny, "sequence_length: 32", "sequence_length: 65"))
                .find("sequence_length: sequence_length 65 exceeds max_positions 64"),
            std::string::npos);
  EXPECT_NE(SpecError(std::string(kTiny) + "hiden: 3\n").find("unknown key 'hiden'"),
            std::string::npos);
  EXPECT_NE(SpecError(std::string(kTiny) + "activation: swish\n").find("activation:"),
            std::string::npos);
  EXPECT_NE(SpecError(std::string(kTiny) + "dropout: {hidden: 1.5}\n")
                .find("dropout.hidden: expected a probability in [0, 1)"),
            std::string::npos);
  EXPECT_NE(SpecError(Replace(kTiny, "vocab: 256\n", "")).find("missing required key 'vocab'"),
            std::string::npos);
}

TEST(GraphFile, RoundTripKeepsEverything) {
  GraphOptions o;
  o.micro_batch = 2;
  const LayerGraph plain =
      BuildLayerGraph(ParseModelSpec(ConfigNode::ParseString(kTiny, "model.yaml")), o);
  // And with fused attention (its kernel's ops are marked: Operator::attention_kernel) and the
  // loss's kernels (Operator::passes).
  const LayerGraph fused =
      WithLossKernel(WithAttentionKernel(plain, AttentionKernel::kFused), LossKernel::kTorch);
  int marked = 0;
  for (const Operator& op : fused.unique_layers[1].backward.Ops()) marked += op.attention_kernel;
  EXPECT_GT(marked, 0);
  for (const LayerGraph* graph : {&plain, &fused}) {
    const LayerGraph& g = *graph;
    const std::string text = LayerGraphToJson(g).Dump(1);
    const ConfigNode doc = ConfigNode::ParseString(text, "graph.json");
    ASSERT_TRUE(IsLayerGraphDocument(doc));
    const LayerGraph back = ParseLayerGraphFile(doc);
    EXPECT_EQ(back.model, g.model);
    EXPECT_EQ(back.micro_batch, 2);
    EXPECT_EQ(back.Parameters(), g.Parameters());
    ASSERT_EQ(back.unique_layers.size(), g.unique_layers.size());
    for (size_t u = 0; u < g.unique_layers.size(); ++u) {
      const UniqueLayer &a = g.unique_layers[u], &b = back.unique_layers[u];
      EXPECT_EQ(a.forward.Ops(), b.forward.Ops()) << a.name;
      EXPECT_EQ(a.forward.Tensors(), b.forward.Tensors()) << a.name;
      EXPECT_EQ(a.forward.Outputs(), b.forward.Outputs()) << a.name;
      EXPECT_EQ(a.backward.Ops(), b.backward.Ops()) << a.name;
      EXPECT_EQ(a.optimizer_step, b.optimizer_step) << a.name;
      EXPECT_EQ(a.activation_bytes, b.activation_bytes);
      EXPECT_EQ(a.optimizer_state_bytes, b.optimizer_state_bytes);
      EXPECT_EQ(a.tied_parameters, b.tied_parameters);
      EXPECT_EQ(a.tensor_parallel, b.tensor_parallel);
    }
    EXPECT_EQ(back.layers.size(), g.layers.size());
    ASSERT_EQ(back.edges.size(), g.edges.size());
    EXPECT_EQ(back.edges[1].bytes, g.edges[1].bytes);
    // And the JSON of the imported graph is byte-identical.
    EXPECT_EQ(LayerGraphToJson(back).Dump(1), text);
  }
}

// A user's forward-only graph: y = gelu(x·W) on 8 tokens of width 4 → 16.
const char* kUserGraph = R"({
  "format": "phaze-layer-graph", "version": 2,
  "model": {"name": "user", "micro_batch": 1, "sequence_length": 8, "fused": false},
  "unique_layers": [{
    "name": "mlp", "parameters": 64,
    "forward": {
      "tensors": [{"name": "x", "elements": 32}, {"name": "h", "elements": 128},
                  {"name": "y", "elements": 128}],
      "ops": [
        {"name": "fc", "kind": "gemm", "axes": ["tokens", "ffn"],
         "gemm": {"m": 8, "n": 16, "k": 4, "axes": {"m": "tokens", "n": "ffn", "k": "hidden"}},
         "inputs": ["x"], "outputs": ["h"], "saved": ["x"], "weight_bytes": 128},
        {"name": "act", "kind": "elementwise", "axes": ["tokens", "ffn"],
         "vector": [{"function": "gelu", "elements": 128}],
         "inputs": ["h"], "outputs": ["y"], "saved": ["h"]}],
      "outputs": ["y"]}}],
  "layers": [{"name": "a", "unique_id": 0}, {"name": "b", "unique_id": 0}],
  "edges": [{"from": "a", "to": "b", "bytes": 256}]
})";

TEST(GraphFile, ImportsAUserGraphAndDerivesBackward) {
  const LayerGraph g = ParseLayerGraphFile(ConfigNode::ParseString(kUserGraph, "user.json"));
  ASSERT_EQ(g.unique_layers.size(), 1u);
  const UniqueLayer& u = g.unique_layers[0];
  // act.backward, then fc.grad_input {1, 8, 4, 16} and fc.grad_weight {1, 4, 16, 8}.
  const OperatorGraph& bw = u.backward;
  ASSERT_EQ(bw.Ops().size(), 3u);
  EXPECT_EQ(bw.GetOp(0).name, "act.backward");
  EXPECT_EQ(bw.GetOp(0).vector.at(0).function, "gelu_backward");
  EXPECT_EQ(*bw.GetOp(bw.FindOp("fc.grad_input")).gemm, (GemmShape{1, 8, 4, 16}));
  EXPECT_EQ(*bw.GetOp(bw.FindOp("fc.grad_weight")).gemm, (GemmShape{1, 4, 16, 8}));
  // The axes follow the shapes: the input gradient runs tokens × hidden, reducing over the FFN;
  // the weight gradient hidden × FFN, reducing over the tokens.
  const OpAxes gi = bw.GetOp(bw.FindOp("fc.grad_input")).axes;
  EXPECT_EQ(gi.m, Axis::kTokens);
  EXPECT_EQ(gi.n, Axis::kHidden);
  EXPECT_EQ(gi.k, Axis::kFfn);
  const OpAxes gw = bw.GetOp(bw.FindOp("fc.grad_weight")).axes;
  EXPECT_EQ(gw.m, Axis::kHidden);
  EXPECT_EQ(gw.n, Axis::kFfn);
  EXPECT_EQ(gw.k, Axis::kTokens);
  EXPECT_TRUE(gw.Spans(Axis::kFfn) && gw.Spans(Axis::kHidden) && !gw.Spans(Axis::kTokens));
  EXPECT_TRUE(bw.GetOp(0).axes.Spans(Axis::kFfn));
  EXPECT_EQ(u.activation_bytes, (32 + 128) * 2);  // x and h, two bytes each
  EXPECT_EQ(u.optimizer_state_bytes, 64 * 12);
  EXPECT_EQ(g.Parameters(), 128);
  ASSERT_EQ(g.edges.size(), 1u);
  EXPECT_EQ(g.edges[0].to, 1);
}

std::string ImportError(const std::string& text) {
  try {
    ParseLayerGraphFile(ConfigNode::ParseString(text, "user.json"));
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(GraphFile, BadGraphsGiveLocatedErrors) {
  std::string e = ImportError(Replace(kUserGraph, R"("inputs": ["h"])", R"("inputs": ["hh"])"));
  EXPECT_NE(e.find("user.json:15:"), std::string::npos) << e;
  EXPECT_NE(e.find("unknown tensor 'hh'; did you mean 'h'?"), std::string::npos) << e;
  e = ImportError(
      Replace(kUserGraph, R"("outputs": ["y"], "saved")", R"("outputs": ["h"], "saved")"));
  EXPECT_NE(e.find("tensor 'h' is already written by op 'fc'"), std::string::npos) << e;
  e = ImportError(Replace(kUserGraph, R"("inputs": ["x"])", R"("inputs": ["y"])"));
  EXPECT_NE(e.find("cycle"), std::string::npos) << e;
  e = ImportError(
      Replace(kUserGraph, R"("kind": "gemm",)", R"("kind": "gemm", "core": "vector",)"));
  EXPECT_NE(e.find("core class 'vector' contradicts the op's work: it is 'tensor'"),
            std::string::npos)
      << e;
  e = ImportError(Replace(kUserGraph, R"("kind": "gemm")", R"("kind": "matmul")"));
  EXPECT_NE(e.find("unknown op kind 'matmul'"), std::string::npos) << e;
  e = ImportError(Replace(kUserGraph, R"("unique_id": 0}, {"name": "b", "unique_id": 0})",
                          R"("unique_id": 0}, {"name": "b", "unique_id": 3})"));
  EXPECT_NE(e.find("no unique layer 3; there are 1"), std::string::npos) << e;
  e = ImportError(Replace(kUserGraph, R"("from": "a", "to": "b")", R"("from": "b", "to": "a")"));
  EXPECT_NE(e.find("edges must go from an earlier to a later layer"), std::string::npos) << e;
  e = ImportError(Replace(kUserGraph, R"("version": 2)", R"("version": 7)"));
  EXPECT_NE(e.find("this phaze reads version 2"), std::string::npos) << e;
  e = ImportError(Replace(kUserGraph, R"("version": 2)", R"("version": 1)"));
  EXPECT_NE(e.find("re-export the graph"), std::string::npos) << e;
  e = ImportError(Replace(kUserGraph, R"("axes": ["tokens", "ffn"],
         "vector")", R"("axes": ["tokens", "fnn"],
         "vector")"));
  EXPECT_NE(e.find("user.json:13:67: unique_layers[0].forward.ops[1].axes[1]"), std::string::npos) << e;
  EXPECT_NE(e.find("unknown axis 'fnn'; expected one of none, tokens,"), std::string::npos) << e;
}

}  // namespace
}  // namespace phaze
