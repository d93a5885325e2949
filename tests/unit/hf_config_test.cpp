// Hugging Face config.json import against independent expectations: the parameter counts the
// model publishers report for the shipped configs (workloads/hf/, sources in the table below),
// the hand-written workloads of the same models, hand-computed shapes and counts of the
// constructs only HF models use (head_dim ≠ hidden/heads, Q/K/V-only biases, partial rotary,
// parallel attention/MLP blocks), and located refusals of what phaze does not model.
#include "phaze/graph/hf_config.hpp"

#include <gtest/gtest.h>

#include <string>

#include "phaze/graph/graph_builder.hpp"
#include "phaze/graph/graph_file.hpp"
#include "test_util.hpp"
#include "test_paths.hpp"

namespace phaze {
namespace {

using testing::ErrorOf;

std::string Hf(const std::string& name) {
  return std::string(PHAZE_SOURCE_DIR) + "/workloads/hf/" + name + ".json";
}

LayerGraph Build(const ModelSpec& m, std::int64_t b = 1) {
  GraphOptions o;
  o.micro_batch = b;
  o.fusion = false;
  return BuildLayerGraph(m, o);
}

const UniqueLayer& Block(const LayerGraph& g) { return g.unique_layers.at(1); }

const Operator& Op(const OperatorGraph& g, const std::string& name) {
  const int i = g.FindOp(name);
  if (i < 0) throw std::runtime_error("no op " + name);
  return g.GetOp(i);
}

struct Published {
  const char* file;
  std::int64_t sequence;  // 0: the model's context
  std::int64_t parameters;
  const char* source;
};

// Every count is the publisher's exact figure for the checkpoint the config belongs to.
const Published kPublished[] = {
    {"gpt2", 0, 124439808, "GPT2LMHeadModel.from_pretrained('gpt2').num_parameters()"},
    {"pythia-1b", 0, 1011781632,
     "EleutherAI Pythia model card, exact counts (805,736,448 non-embedding)"},
    {"opt-125m", 0, 125239296, "OPTForCausalLM.from_pretrained('facebook/opt-125m')"},
    {"bert-base-uncased", 0, 109482240,
     "BertModel.from_pretrained('bert-base-uncased') (encoder + pooler)"},
    {"llama-2-7b", 0, 6738415616, "Llama 2 checkpoint (HF meta-llama/Llama-2-7b-hf)"},
    {"llama-3-8b", 0, 8030261248,
     "meta-llama/Meta-Llama-3-8B safetensors index: 16,060,522,496 bytes of bf16"},
    {"mistral-7b-v0.1", 4096, 7241732096, "mistralai/Mistral-7B-v0.1 (GGUF parameter_count)"},
    {"mixtral-8x7b", 4096, 46702792704, "mistralai/Mixtral-8x7B-v0.1 checkpoint"},
    {"qwen2-7b", 4096, 7615616512, "Qwen/Qwen2-7B safetensors (7,615,616,512)"},
    {"gemma-7b", 4096, 8537680896, "google/gemma-7b (KerasNLP preset gemma_7b_en params)"},
};

TEST(HfConfig, ShippedConfigsReproduceThePublishedParameterCounts) {
  for (const auto& p : kPublished) {
    SCOPED_TRACE(p.file);
    const ModelSpec m = LoadHfConfig(Hf(p.file), p.sequence);
    EXPECT_EQ(m.name, p.file);
    EXPECT_EQ(Build(m).Parameters(), p.parameters) << p.source;
  }
  // Pythia's card also gives the count without the input and output embedding matrices.
  EXPECT_EQ(Build(LoadHfConfig(Hf("pythia-1b"))).Parameters() - 2 * 50304 * 2048, 805736448);
}

// The same model read from its HF config and from the hand-written workload builds the same
// graph (ops, shapes, bytes, memory), name and published count aside.
TEST(HfConfig, BuildsTheSameGraphAsTheHandWrittenWorkload) {
  const std::pair<const char*, const char*> pairs[] = {{"llama-2-7b", "llama2-7b"},
                                                       {"mixtral-8x7b", "mixtral-8x7b"}};
  for (const auto& [hf, yaml] : pairs) {
    SCOPED_TRACE(hf);
    ModelSpec a = LoadHfConfig(Hf(hf), 4096);
    ModelSpec b = LoadModelSpec(std::string(PHAZE_SOURCE_DIR) + "/workloads/" + yaml + ".yaml");
    a.name = b.name;
    b.published_parameters.reset();
    EXPECT_EQ(LayerGraphToJson(Build(a, 2)).Dump(1), LayerGraphToJson(Build(b, 2)).Dump(1));
  }
}

// --emit-yaml writes a model description that builds exactly the graph the config builds.
TEST(HfConfig, EmittedYamlReadsBackAsTheSameModel) {
  for (const auto& p : kPublished) {
    SCOPED_TRACE(p.file);
    const ModelSpec m = LoadHfConfig(Hf(p.file), p.sequence > 0 ? p.sequence : 512);
    const ModelSpec back =
        ParseModelSpec(ConfigNode::ParseString(ModelSpecToYaml(m), "emitted.yaml"));
    EXPECT_EQ(LayerGraphToJson(Build(back)).Dump(1), LayerGraphToJson(Build(m)).Dump(1));
  }
}

TEST(HfConfig, GemmaHeadsAreWiderThanHiddenOverHeads) {
  const LayerGraph g = Build(LoadHfConfig(Hf("gemma-7b"), 1024), 2);
  const OperatorGraph& f = Block(g).forward;
  const std::int64_t T = 2 * 1024;
  EXPECT_EQ(*Op(f, "attn.q").gemm, (GemmShape{1, T, 16 * 256, 3072}));
  EXPECT_EQ(*Op(f, "attn.k").gemm, (GemmShape{1, T, 16 * 256, 3072}));
  EXPECT_EQ(*Op(f, "attn.scores").gemm, (GemmShape{2 * 16, 1024, 1024, 256}));
  EXPECT_EQ(*Op(f, "attn.dense").gemm, (GemmShape{1, T, 3072, 16 * 256}));
  EXPECT_EQ(Op(f, "mlp.gelu_tanh").vector.at(0).elements, T * 24576);  // the GeGLU gate
  EXPECT_GE(Op(g.unique_layers.at(0).forward, "embed.scale").vector.at(0).elements, T * 3072);
  // q, k, v, o 4·3072·4096 + gate, up, down 3·3072·24576 + two RMSNorms.
  EXPECT_EQ(Block(g).parameters, 4 * 3072 * 4096 + 3 * 3072 * 24576 + 2 * 3072);
}

TEST(HfConfig, Qwen2BiasesOnlyTheQueryKeyAndValueProjections) {
  const LayerGraph g = Build(LoadHfConfig(Hf("qwen2-7b"), 1024));
  const OperatorGraph& f = Block(g).forward;
  for (const char* op : {"attn.q.bias", "attn.k.bias", "attn.v.bias"})
    EXPECT_GE(f.FindOp(op), 0) << op;
  for (const char* op : {"attn.dense.bias", "mlp.gate.bias", "mlp.up.bias", "mlp.down.bias"})
    EXPECT_LT(f.FindOp(op), 0) << op;
  const std::int64_t h = 3584, kv = 4 * 128;
  EXPECT_EQ(Block(g).parameters, (h * h + h) + 2 * (h * kv + kv) + h * h + 3 * h * 18944 + 2 * h);
}

TEST(HfConfig, PythiaIsAParallelBlockWithAQuarterOfEachHeadRotated) {
  const LayerGraph g = Build(LoadHfConfig(Hf("pythia-1b"), 2048));
  const OperatorGraph& f = Block(g).forward;
  const std::int64_t T = 2048, h = 2048;
  // Both norms read the block input; one residual sums input, attention and MLP.
  const int input = f.InputTensors().at(0);
  EXPECT_EQ(Op(f, "ln1").inputs, std::vector<int>{input});
  EXPECT_EQ(Op(f, "ln2").inputs, std::vector<int>{input});
  EXPECT_EQ(Op(f, "residual").inputs.size(), 3u);
  EXPECT_LT(f.FindOp("residual1"), 0);
  EXPECT_EQ(Op(f, "attn.rotary_q").vector.at(0).elements, T * h / 4);
  EXPECT_EQ(f.GetTensor(Op(f, "attn.rotary_q").outputs.at(0)).elements, T * h);
  // Fused QKV and dense with biases, MLP with biases, two LayerNorms.
  EXPECT_EQ(Block(g).parameters,
            (h * 3 * h + 3 * h) + (h * h + h) + (h * 8192 + 8192) + (8192 * h + h) + 4 * h);
}

ModelSpec FromText(const std::string& text, std::int64_t sequence = 0) {
  return ParseHfConfig(ConfigNode::ParseString(text, "config.json"), sequence);
}

const char* kLlama = R"({
  "model_type": "llama", "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2,
  "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 100,
  "max_position_embeddings": 256)";

TEST(HfConfig, RefusesWhatItDoesNotModelNamingTheField) {
  EXPECT_EQ(FromText(std::string(kLlama) + "}").kv_heads, 2);
  auto error = [](const std::string& extra, std::int64_t s = 0) {
    return ErrorOf([&] { FromText(std::string(kLlama) + extra + "}", s); });
  };
  EXPECT_NE(error(R"(, "use_magic": true)")
                .find("config.json:4:48: use_magic: field 'use_magic' is not understood"),
            std::string::npos)
      << error(R"(, "use_magic": true)");
  const std::string sliding = ErrorOf([] {
    FromText(R"({"model_type": "mistral", "hidden_size": 64, "intermediate_size": 128,
      "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 100,
      "max_position_embeddings": 4096, "sliding_window": 1024})");
  });
  EXPECT_NE(sliding.find("sliding_window: sliding-window attention (window 1024 tokens, shorter "
                         "than the sequence of 4096)"),
            std::string::npos)
      << sliding;
  EXPECT_NE(error(R"(, "attention_bias": true)").find("attention_bias: biases on the attention"),
            std::string::npos);
  EXPECT_NE(error(R"(, "hidden_act": "relu")").find("hidden_act: activation 'relu' in a gated MLP"),
            std::string::npos);
  EXPECT_NE(
      error(R"(, "add_cross_attention": true)").find("add_cross_attention: an encoder-decoder"),
      std::string::npos);
  EXPECT_NE(error(R"(, "num_key_value_heads": 3)").find("duplicate key"), std::string::npos);
  EXPECT_NE(ErrorOf([] {
              FromText(R"({"model_type": "lama"})");
            }).find("model_type 'lama' is not one phaze reads; did you mean 'llama'?"),
            std::string::npos);
  EXPECT_NE(ErrorOf([] {
              FromText(R"({"model_type": "gpt2", "n_embd": 64})");
            }).find("missing required key 'n_layer'"),
            std::string::npos);
  EXPECT_NE(ErrorOf([] {
              FromText(R"({"model_type": "opt", "hidden_size": 64, "num_hidden_layers": 2,
                "num_attention_heads": 4, "ffn_dim": 128, "vocab_size": 100,
                "max_position_embeddings": 64, "activation_dropout": 0.1})");
            }).find("activation_dropout: dropout after the MLP activation"),
            std::string::npos);
  EXPECT_NE(ErrorOf([] {
              FromText(R"({"model_type": "gpt_neox", "hidden_size": 64, "num_hidden_layers": 2,
                "num_attention_heads": 4, "intermediate_size": 128, "vocab_size": 100,
                "max_position_embeddings": 64, "rotary_pct": 0.3})");
            }).find("rotary_pct: rotary positions rotate an even number"),
            std::string::npos);
  EXPECT_NE(ErrorOf([] {
              FromText(R"({"model_type": "gpt2", "n_embd": 64, "n_layer": 1, "n_head": 4,
                "vocab_size": 10, "n_positions": 32})",
                       64);
            }).find("sequence length 64 exceeds the 32 rows"),
            std::string::npos);
  // A window that covers the sequence changes nothing: accepted.
  EXPECT_EQ(FromText(R"({"model_type": "mistral", "hidden_size": 64, "intermediate_size": 128,
      "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 100,
      "max_position_embeddings": 4096, "sliding_window": 1024})",
                     1024)
                .sequence_length,
            1024);
}

TEST(HfConfig, OnlyMapsWithAModelTypeAreHfConfigs) {
  EXPECT_TRUE(IsHfConfigDocument(ConfigNode::ParseString(R"({"model_type": "gpt2"})", "a")));
  EXPECT_FALSE(IsHfConfigDocument(ConfigNode::ParseString("name: x\nfamily: llama\n", "b")));
  EXPECT_FALSE(IsHfConfigDocument(ConfigNode::ParseString("[1, 2]", "c")));
  EXPECT_NE(ErrorOf([] {
              LoadHfConfig(std::string(PHAZE_SOURCE_DIR) + "/workloads/tiny-gpt.yaml");
            }).find("expected a Hugging Face config.json"),
            std::string::npos);
}

}  // namespace
}  // namespace phaze
