// The megatron and sequence_parallel strategies against independent figures: Megatron-LM's
// per-device parameter count, the collectives per block and pass (REFERENCE §3.5), Korthikanti et
// al.'s activation formulas with tensor and sequence parallelism, FLOPs divided by the width, and
// refusals with their reasons.
#include <gtest/gtest.h>

#include <set>

#include "phaze/core/error.hpp"
#include "phaze/estimate/estimator.hpp"
#include "phaze/graph/attention_kernel.hpp"
#include "phaze/graph/graph_builder.hpp"
#include "phaze/graph/precision.hpp"
#include "phaze/graph/tensor_parallel_overlap.hpp"
#include "phaze/plugin/registry.hpp"
#include "phaze/strategy/parallelism_strategy.hpp"
#include "plugin_registry.hpp"
#include "test_paths.hpp"

namespace phaze {
namespace {

Registry& Strategies() { return testing::BuiltPlugins(); }

template <class F>
std::string ConfigErrorOf(F f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

LayerGraph Full(const std::string& model, std::int64_t b, std::int64_t seq = 0) {
  GraphOptions o;
  o.micro_batch = b;
  o.sequence_length = seq;
  o.fusion = false;
  return BuildLayerGraph(
      LoadModelSpec(std::string(PHAZE_SOURCE_DIR) + "/workloads/" + model + ".yaml"), o);
}

LayerGraph Slice(const std::string& model, std::int64_t b, std::int64_t w, bool fusion = true,
                 const std::string& strategy = "megatron") {
  auto s = Strategies().CreateStrategy(strategy, ConfigNode::EmptyMap("test", "params"));
  return SliceLayerGraph(*s, strategy, Full(model, b), w, fusion);
}

const UniqueLayer& Block(const LayerGraph& g) { return g.unique_layers.at(1); }

struct Collectives {
  int count = 0;
  std::int64_t bytes = 0;
};
Collectives Count(const OperatorGraph& g, CollectiveKind kind) {
  Collectives c;
  for (const auto& op : g.Ops()) {
    if (op.kind == OpKind::kCollective && op.collective == kind) {
      ++c.count;
      c.bytes += op.collective_bytes;
    }
  }
  return c;
}

TEST(Strategies, AllFourAreRegistered) {
  EXPECT_EQ(Strategies().Names(ComponentKind::kParallelismStrategy),
            (std::vector<std::string>{"context_parallel", "megatron", "moe", "sequence_parallel"}));
}

TEST(Megatron, PerDeviceParametersOf83B) {
  // Megatron-LM splits every weight matrix, the column-parallel biases and the vocabulary; norms,
  // row-parallel biases and position embeddings are replicated:
  //   V·h/w + s·h + l·(12h²/w + 7h/w + 6h) + 2h  (embedding; blocks; final norm),
  // with V the GPT-2 vocabulary padded to a multiple of 128·w (--make-vocab-size-divisible-by
  // 128): 50,304 rows at w = 1, 50,432 at 2, 50,688 at 4, 51,200 at 8.
  const std::int64_t s = 1024, l = 72, h = 3072;
  for (auto [w, V] : {std::pair<std::int64_t, std::int64_t>{1, 50304}, {2, 50432}, {4, 50688},
                      {8, 51200}}) {
    const std::int64_t expected =
        V * h / w + s * h + l * (12 * h * h / w + 7 * h / w + 6 * h) + 2 * h;
    const LayerGraph g = Slice("megatron-8.3b", 1, w);
    EXPECT_EQ(g.Parameters(), expected) << "w=" << w;
    EXPECT_EQ(g.unique_layers[2].tied_parameters, V * h / w) << "the LM head's copy of the table";
  }
  EXPECT_EQ(Slice("megatron-8.3b", 1, 1).Parameters(), Full("megatron-8.3b", 1).Parameters());
}

TEST(Megatron, AllReducesPerBlockAndPass) {
  for (std::int64_t b : {1, 4}) {
    for (std::int64_t w : {2, 8}) {
      for (bool fusion : {false, true}) {
        const LayerGraph g = Slice("megatron-8.3b", b, w, fusion);
        const std::int64_t hidden_bytes = b * 1024 * 3072 * 2;
        const Collectives fw = Count(Block(g).forward, CollectiveKind::kAllReduce);
        const Collectives bw = Count(Block(g).backward, CollectiveKind::kAllReduce);
        EXPECT_EQ(fw.count, 2);
        EXPECT_EQ(fw.bytes, 2 * hidden_bytes);
        EXPECT_EQ(bw.count, 2);
        EXPECT_EQ(bw.bytes, 2 * hidden_bytes);
        for (CollectiveKind other : {CollectiveKind::kAllGather, CollectiveKind::kReduceScatter,
                                     CollectiveKind::kAllToAll}) {
          EXPECT_EQ(Count(Block(g).forward, other).count + Count(Block(g).backward, other).count,
                    0);
        }
        for (const auto& op : Block(g).forward.Ops()) {
          if (op.kind == OpKind::kCollective) {
            EXPECT_EQ(op.collective_group, w);
          }
        }
        // Vocabulary-parallel embedding: one all-reduce forward; cross-entropy: three of b·s fp32.
        EXPECT_EQ(Count(g.unique_layers[0].forward, CollectiveKind::kAllReduce).count, 1);
        EXPECT_EQ(Count(g.unique_layers[2].forward, CollectiveKind::kAllReduce).bytes, 3 * b * 1024 * 4);
      }
    }
  }
  EXPECT_EQ(Count(Block(Slice("megatron-8.3b", 1, 1)).forward, CollectiveKind::kAllReduce).count, 0);
}

TEST(Megatron, ActivationsAndFlopsPerDevice) {
  // Korthikanti et al. 2022, Table 2, tensor parallelism without sequence parallelism:
  // s·b·h·(10 + 24/t + 5·a·s/(h·t)) bytes per block = 10sbh + 24sbh/t + 5as²b/t.
  const std::int64_t s = 1024, h = 3072, a = 32;
  for (std::int64_t b : {1, 2}) {
    for (std::int64_t t : {1, 2, 4, 8}) {
      const LayerGraph g = Slice("megatron-8.3b", b, t);
      EXPECT_EQ(Block(g).activation_bytes,
                10 * s * b * h + 24 * s * b * h / t + 5 * a * s * s * b / t)
          << "b=" << b << " t=" << t;
      EXPECT_EQ(Block(g).forward.GemmFlops(), (24 * b * s * h * h + 4 * b * s * s * h) / t);
      EXPECT_EQ(Block(g).backward.GemmFlops(), 2 * Block(g).forward.GemmFlops());
      EXPECT_EQ(Block(g).tensor_parallel, t > 1);
    }
  }
}

TEST(Megatron, RefusesWidthsWithTheReason) {
  auto megatron = Strategies().CreateStrategy("megatron", ConfigNode::EmptyMap("test", "params"));
  const LayerGraph gpt2 = Full("gpt2-xl", 1);
  EXPECT_EQ(megatron->Refusal(gpt2, 2), "the 25 attention heads are not divisible by 2");
  // 5 divides the 25 heads and 1600, and the vocabulary padded to a multiple of 640 (50,560 rows);
  // without padding it does not divide GPT-2's 50,257-token vocabulary.
  EXPECT_EQ(megatron->Refusal(gpt2, 5), "");
  // make_vocab_size_divisible_by: 1 pads to a multiple of the width alone: 50,260 rows at 5.
  auto by_one = Strategies().CreateStrategy(
      "megatron", ConfigNode::ParseString("make_vocab_size_divisible_by: 1", "test"));
  EXPECT_EQ(by_one->Refusal(gpt2, 5), "");
  EXPECT_EQ(SliceLayerGraph(*by_one, "megatron", gpt2, 5, true).padded_vocab, 50260);
  // A graph whose vocabulary is unknown (an imported graph) is not padded.
  LayerGraph imported = gpt2;
  imported.vocab = 0;
  EXPECT_EQ(
      megatron->Refusal(imported, 5),
      "op 'embed.word' in layer 'embedding': its 50257 vocabulary rows are not divisible by 5");
  EXPECT_NE(ConfigErrorOf([] {
              Strategies().CreateStrategy(
                  "megatron", ConfigNode::ParseString("make_vocab_size_divisible_by: 0", "run.yaml"));
            }).find("make_vocab_size_divisible_by"),
            std::string::npos);
  const LayerGraph m83 = Full("megatron-8.3b", 1);
  EXPECT_EQ(SupportedWidths(*megatron, m83, {1, 2, 3, 4, 8, 16, 32, 64}),
            (std::vector<std::int64_t>{1, 2, 4, 8, 16, 32}));
  try {
    SliceLayerGraph(*megatron, "megatron", m83, 3, true);
    FAIL();
  } catch (const InvalidArgumentError& e) {
    EXPECT_NE(
        std::string(e.what()).find("cannot split megatron-8.3b 3 ways: the 32 attention heads"),
        std::string::npos)
        << e.what();
  }
}

// Megatron-LM pads the vocabulary to a multiple of make_vocab_size_divisible_by · t (128 by
// default); its logs for GPT-2's 50,257 tokens: "with 47 dummy tokens (new size: 50304)" at t = 1,
// "175 dummy tokens (new size: 50432)" at t = 2 and "943 … 51200" at t = 8. Every vocabulary-sized
// count grows with it: the table, the LM head's columns, the logits, the loss's rows.
TEST(Megatron, PadsTheVocabularyAsMegatronLmDoes) {
  const LayerGraph gpt2 = Full("gpt2-xl", 2);  // h 1600, 25 heads: widths 1 and 5 (25 | w)
  const std::int64_t h = 1600, tokens = 2 * 1024;
  for (auto [w, V] : {std::pair<std::int64_t, std::int64_t>{1, 50304}, {5, 50560}}) {
    const LayerGraph g = Slice("gpt2-xl", 2, w, /*fusion=*/false);
    EXPECT_EQ(g.vocab, 50257);
    EXPECT_EQ(g.padded_vocab, V) << "w=" << w;
    const UniqueLayer& embedding = g.unique_layers.at(0);
    const UniqueLayer& head = g.unique_layers.at(2);
    EXPECT_EQ(embedding.parameters - 1024 * h, V / w * h) << "the table's rows on a device";
    EXPECT_EQ(head.tied_parameters, V / w * h);
    bool lm = false, loss = false;
    for (const auto& op : head.forward.Ops()) {
      if (op.name == "head.lm") {
        lm = true;
        EXPECT_EQ(op.gemm->n, V / w);
        EXPECT_EQ(head.forward.GetTensor(op.outputs[0]).elements, tokens * V / w);
      }
      if (op.kind == OpKind::kLoss) {
        loss = true;
        EXPECT_EQ(op.vector.at(0).row_elements, V / w);
        EXPECT_EQ(op.vector.at(0).elements, tokens * V / w);
        EXPECT_EQ(head.forward.GetTensor(op.outputs[0]).elements, 1) << "the loss is one value";
      }
    }
    EXPECT_TRUE(lm && loss);
  }
  // A vocabulary the multiple already divides is left alone (Megatron's 8.3B at t = 1: 50,304).
  EXPECT_EQ(Slice("megatron-8.3b", 1, 1).padded_vocab, 0);
}

TEST(SequenceParallel, ActivationsCollectivesAndParameters) {
  // Korthikanti et al. 2022, Table 2, tensor + sequence parallelism: s·b·h·(34 + 5·a·s/h)/t bytes
  // per block = (34·s·b·h + 5·a·s²·b)/t.
  const std::int64_t s = 1024, h = 3072, a = 32;
  for (std::int64_t b : {1, 2}) {
    for (std::int64_t t : {2, 4, 8}) {
      const LayerGraph g = Slice("megatron-8.3b", b, t, true, "sequence_parallel");
      EXPECT_EQ(Block(g).activation_bytes, (34 * s * b * h + 5 * a * s * s * b) / t)
          << "b=" << b << " t=" << t;
      // Each all-reduce becomes a reduce-scatter and an all-gather of the same b·s·h values;
      // backward also gathers the input of each column-parallel GEMM (QKV, FC1) again for its
      // weight gradient, since only the sequence part was kept (Megatron-LM's SP linear layer).
      const std::int64_t hidden_bytes = b * s * h * 2;
      for (const auto* pass : {&Block(g).forward, &Block(g).backward}) {
        const std::int64_t gathers = pass == &Block(g).forward ? 2 : 4;
        EXPECT_EQ(Count(*pass, CollectiveKind::kAllReduce).count, 0);
        EXPECT_EQ(Count(*pass, CollectiveKind::kReduceScatter).count, 2);
        EXPECT_EQ(Count(*pass, CollectiveKind::kReduceScatter).bytes, 2 * hidden_bytes);
        EXPECT_EQ(Count(*pass, CollectiveKind::kAllGather).count, gathers);
        EXPECT_EQ(Count(*pass, CollectiveKind::kAllGather).bytes, gathers * hidden_bytes);
      }
      // The same weights as tensor parallelism; the GEMM FLOPs too; edges carry s/t of the hidden.
      EXPECT_EQ(g.Parameters(), Slice("megatron-8.3b", b, t).Parameters());
      EXPECT_EQ(Block(g).forward.GemmFlops(), (24 * b * s * h * h + 4 * b * s * s * h) / t);
      EXPECT_EQ(g.edges[3].bytes, hidden_bytes / t);
      EXPECT_EQ(g.edges[3].gather_group, 1);  // already split along the sequence
      // Without sequence parallelism Megatron-LM's scatter/gather sends 1/t from each device
      // and all-gathers on the receiving stage (Narayanan et al. SC21 §4.1).
      const LayerGraph tp = Slice("megatron-8.3b", b, t);
      EXPECT_EQ(tp.edges[3].bytes, hidden_bytes / t);
      EXPECT_EQ(tp.edges[3].gather_group, t);
    }
  }
  auto sp =
      Strategies().CreateStrategy("sequence_parallel", ConfigNode::EmptyMap("test", "params"));
  EXPECT_EQ(sp->Refusal(Full("megatron-8.3b", 1, 1000), 16),
            "the sequence's 1000 tokens are not divisible by 16");
  EXPECT_EQ(sp->Refusal(Full("megatron-8.3b", 1, 1000), 8), "");
}

// FP8 (graph/precision.hpp) as Transformer Engine runs it with tensor parallelism (v1.13:
// layernorm_linear.py casts in the norm and gathers the FP8 output, keeps the FP8 shard and
// gathers it again for the weight gradient; base.py's grad_output_preprocess casts the output
// gradient before gathering it; the reduce-scatters sum 16-bit partial results). Korthikanti's
// activations with the four linear layers' inputs in FP8, by hand: sequence parallelism keeps
// (27·sbh + 5·a·s²·b)/t, as without tensor parallelism (graph_builder_test); tensor parallelism
// alone keeps sbh·(8 + 19/t) + 5·a·s²·b/t (the replicated norm outputs 2+2 → 1+1 of its 10·sbh,
// the context and FC2's input 2+8 → 1+4 of its 24·sbh/t). Every all-gather moves s·b·h bytes.
TEST(SequenceParallel, Fp8GathersMoveOneBytePerValue) {
  const std::int64_t s = 1024, h = 3072, a = 32;
  for (std::int64_t b : {1, 2}) {
    for (std::int64_t t : {2, 4, 8}) {
      const LayerGraph bf16 = Slice("megatron-8.3b", b, t, true, "sequence_parallel");
      const LayerGraph g = WithPrecision(bf16, Precision::kFp8);
      EXPECT_EQ(Block(g).activation_bytes, (27 * s * b * h + 5 * a * s * s * b) / t)
          << "b=" << b << " t=" << t;
      const std::int64_t values = b * s * h;
      for (const auto* pass : {&Block(g).forward, &Block(g).backward}) {
        const std::int64_t gathers = pass == &Block(g).forward ? 2 : 4;
        EXPECT_EQ(Count(*pass, CollectiveKind::kAllGather).count, gathers);
        EXPECT_EQ(Count(*pass, CollectiveKind::kAllGather).bytes, gathers * values);
        EXPECT_EQ(Count(*pass, CollectiveKind::kReduceScatter).bytes, 2 * 2 * values);
      }
      const LayerGraph tp = WithPrecision(Slice("megatron-8.3b", b, t), Precision::kFp8);
      EXPECT_EQ(Block(tp).activation_bytes * t, (8 * t + 19) * s * b * h + 5 * a * s * s * b)
          << "b=" << b << " t=" << t;
      EXPECT_EQ(Count(Block(tp).backward, CollectiveKind::kAllReduce).bytes, 2 * 2 * values);
      EXPECT_EQ(Count(Block(tp).forward, CollectiveKind::kAllReduce).bytes, 2 * 2 * values);
    }
  }
  // BERT's blocks are post-LN: the shards gathered for QKV and FC1 (the block's input and the
  // first norm's output) are also read by the residual adds, so they stay 16-bit and only the
  // context and FC2's input are kept in FP8 (5·sbh/t bytes fewer, not 7); TE casts the shards and
  // gathers FP8 all the same (linear.py casts inputmat before gather_along_first_dim), so every
  // gather, forward and backward, still moves s·b·h bytes.
  const std::int64_t bert_values = 512 * 1024;
  for (std::int64_t t : {2, 4}) {
    const LayerGraph bf16 = Slice("bert-large", 1, t, true, "sequence_parallel");
    const LayerGraph g = WithPrecision(bf16, Precision::kFp8);
    EXPECT_EQ(Block(g).activation_bytes, Block(bf16).activation_bytes - 5 * bert_values / t)
        << "t=" << t;
    for (const auto* pass : {&Block(g).forward, &Block(g).backward}) {
      const std::int64_t gathers = pass == &Block(g).forward ? 2 : 4;
      EXPECT_EQ(Count(*pass, CollectiveKind::kAllGather).bytes, gathers * bert_values) << t;
      EXPECT_EQ(Count(*pass, CollectiveKind::kReduceScatter).bytes, 2 * 2 * bert_values) << t;
    }
  }
}

// Current scaling (training.fp8_recipe tensorwise: torchao's Float8Linear) by hand on a GPT block
// (pre-LN, b·s·h = sbh, no tensor parallelism). Forward: the four linears' inputs (the two norms'
// outputs, the context, the GELU's 4·sbh) are FP8-only tensors TE's producer would write in FP8:
// each written in 16 bits first, then read for its amax and cast, 6 bytes an element — 42·sbh
// (the residual a fused epilogue adds is not cast); every weight's amax and cast (not its bias),
// 5 bytes an element of 12·h² — 60·h². Backward: each incoming
// 16-bit gradient of a linear's output (3·sbh for QKV, sbh, 4·sbh, sbh) read for its amax and
// cast once, 5·9·sbh; the input-gradient GEMMs' weights copied transposed, 2·12·h²; the
// weight-gradient GEMMs' two inputs each copied transposed, 2·(4 + 2 + 5 + 5)·sbh. The memory is
// delayed scaling's (the same tensors kept in FP8), and delayed scaling charges no such passes.
TEST(Fp8, CurrentScalingPassesByHand) {
  const std::int64_t s = 1024, h = 3072, b = 2, sbh = s * b * h;
  const LayerGraph bf16 = Slice("megatron-8.3b", b, 1);
  const LayerGraph delayed = WithPrecision(bf16, Precision::kFp8);
  const LayerGraph current = WithPrecision(bf16, Precision::kFp8, Fp8Recipe::kTensorwise);
  auto scaling = [](const OperatorGraph& g) {
    std::int64_t bytes = 0;
    for (const Operator& op : g.Ops()) {
      EXPECT_EQ(op.fp8_current_scaling, op.fp8) << op.name;
      bytes += op.fp8_scaling_bytes;
    }
    return bytes;
  };
  EXPECT_EQ(scaling(Block(current).forward), 42 * sbh + 60 * h * h);
  EXPECT_EQ(scaling(Block(current).backward), 45 * sbh + 24 * h * h + 32 * sbh);
  EXPECT_EQ(Block(current).activation_bytes, Block(delayed).activation_bytes);
  EXPECT_EQ(Block(current).cached_weight_bytes, Block(delayed).cached_weight_bytes);
  for (const Operator& op : Block(delayed).backward.Ops()) {
    EXPECT_FALSE(op.fp8_current_scaling) << op.name;
    EXPECT_EQ(op.fp8_scaling_bytes, 0) << op.name;
  }
  // Delayed scaling's cast kernels, by the same hand: forward none (every linear's input is
  // written in FP8 by its producer; the residuals the fused epilogues add stay 16-bit and are not
  // cast); backward each 16-bit output gradient at both its GEMMs, 2·9·sbh (the saved inputs are
  // FP8; GELU's saved 16-bit input, read by FC2's fused input-gradient epilogue, is not cast).
  auto casts = [](const OperatorGraph& g) {
    std::int64_t elements = 0;
    for (const Operator& op : g.Ops()) elements += OpWork::Of(op, g).fp8_cast_elements;
    return elements;
  };
  EXPECT_EQ(casts(Block(delayed).forward), 0);
  EXPECT_EQ(casts(Block(delayed).backward), 2 * 9 * sbh);
  EXPECT_EQ(casts(Block(current).forward) + casts(Block(current).backward), 0);
  // Sequence parallelism over t: every cast is of a shard (the norms' outputs before their
  // all-gathers, the row-parallel outputs' gradients before theirs, the rest local), so the
  // casts and weights divide by t; the weight-gradient GEMMs copy the FP8 re-gathered norm
  // outputs and the gathered gradients whole (4·sbh), the local rest over t (12·sbh/t).
  for (std::int64_t t : {2, 4}) {
    const LayerGraph sp = WithPrecision(Slice("megatron-8.3b", b, t, true, "sequence_parallel"),
                                        Precision::kFp8, Fp8Recipe::kTensorwise);
    EXPECT_EQ(scaling(Block(sp).forward), (42 * sbh + 60 * h * h) / t) << "t=" << t;
    EXPECT_EQ(scaling(Block(sp).backward),
              (45 * sbh + 24 * h * h) / t + 2 * (4 * sbh + 12 * sbh / t))
        << "t=" << t;
  }
}

// PyTorch DTensor's tensor parallelism (TorchTitan: ColwiseParallel on a Shard(1) input) gathers
// the sequence for the column-parallel GEMMs as Megatron-LM does, but autograd saves the gathered
// input for the weight gradient: `gathered_input: keep`. By hand from Korthikanti's SP table: the
// QKV and FC1 inputs (2·sbh each, 16-bit; 1·sbh in FP8) are kept whole instead of their shards, so
// a block keeps (34·sbh + 5·a·s²·b)/t + 4·sbh·(t − 1)/t (FP8: 27 and 2·sbh·(t − 1)/t), and
// backward all-gathers nothing but the reduce-scatters' conjugates: 2 gathers, not 4.
TEST(SequenceParallel, DTensorKeepsTheGatheredInput) {
  const std::int64_t s = 1024, h = 3072, a = 32;
  auto keep = Strategies().CreateStrategy(
      "sequence_parallel", ConfigNode::ParseString("gathered_input: keep", "run.yaml"));
  for (std::int64_t b : {1, 2}) {
    for (std::int64_t t : {2, 4, 8}) {
      const LayerGraph g =
          SliceLayerGraph(*keep, "sequence_parallel", Full("megatron-8.3b", b), t, true);
      const std::int64_t sbh = s * b * h;
      EXPECT_EQ(Block(g).activation_bytes,
                (34 * sbh + 5 * a * s * s * b) / t + 4 * sbh * (t - 1) / t)
          << "b=" << b << " t=" << t;
      const LayerGraph fp8 = WithPrecision(g, Precision::kFp8);
      EXPECT_EQ(Block(fp8).activation_bytes,
                (27 * sbh + 5 * a * s * s * b) / t + 2 * sbh * (t - 1) / t)
          << "b=" << b << " t=" << t;
      for (const LayerGraph* graph : {&g, &fp8}) {
        const std::int64_t value_bytes = graph == &g ? 2 : 1;
        EXPECT_EQ(Count(Block(*graph).forward, CollectiveKind::kAllGather).count, 2);
        EXPECT_EQ(Count(Block(*graph).backward, CollectiveKind::kAllGather).count, 2);
        EXPECT_EQ(Count(Block(*graph).backward, CollectiveKind::kAllGather).bytes,
                  2 * value_bytes * sbh);
        EXPECT_EQ(Count(Block(*graph).backward, CollectiveKind::kReduceScatter).bytes, 2 * 2 * sbh);
      }
    }
  }
  // `regather` is Megatron-LM's, the default; the option needs sequence parallelism.
  auto regather = Strategies().CreateStrategy(
      "sequence_parallel", ConfigNode::ParseString("gathered_input: regather", "run.yaml"));
  EXPECT_EQ(SliceLayerGraph(*regather, "sequence_parallel", Full("megatron-8.3b", 1), 4, true)
                .unique_layers.at(1)
                .activation_bytes,
            Block(Slice("megatron-8.3b", 1, 4, true, "sequence_parallel")).activation_bytes);
  EXPECT_NE(ConfigErrorOf([] {
              Strategies().CreateStrategy(
                  "megatron", ConfigNode::ParseString("gathered_input: keep", "run.yaml"));
            }).find("run.yaml:1:17: gathered_input: needs sequence parallelism"),
            std::string::npos);
  EXPECT_NE(ConfigErrorOf([] {
              Strategies().CreateStrategy(
                  "sequence_parallel", ConfigNode::ParseString("gathered_input: save", "run.yaml"));
            }).find("found 'save'"),
            std::string::npos);
}

TEST(Moe, ExpertsPerDeviceAllToAllsAndParameters) {
  // Mixtral 8x7B: E = 8 experts, top-2, h 4096, FFN 14336, 32 heads, 8 key/value heads (d 128),
  // V 32000, s 4096. With balanced routing each expert receives T·k/E tokens.
  const std::int64_t E = 8, k = 2, h = 4096, f = 14336, kv = 8 * 128, s = 4096, L = 32;
  EXPECT_EQ(Full("mixtral-8x7b", 1).Parameters(), 46702792704);  // published
  for (std::int64_t b : {1, 2}) {
    const std::int64_t T = b * s, per_expert = T * k / E;
    for (std::int64_t w : {2, 4, 8}) {
      const LayerGraph g = Slice("mixtral-8x7b", b, w, true, "moe");
      // The vocabulary padded to a multiple of 128·w: 32,000 at w = 2, 32,256 at 4, 32,768 at 8.
      const std::int64_t V = w == 2 ? 32000 : w == 4 ? 32256 : 32768;
      std::set<std::int64_t> experts;
      for (const auto& op : Block(g).forward.Ops()) {
        if (op.expert >= 0) experts.insert(op.expert);
      }
      EXPECT_EQ(static_cast<std::int64_t>(experts.size()), E / w) << "w=" << w;
      // Dispatch and combine: one all-to-all each way per pass, of this device's share of the
      // routed-token buffer (E·T·k/E·h values / w).
      for (const auto* pass : {&Block(g).forward, &Block(g).backward}) {
        const Collectives a2a = Count(*pass, CollectiveKind::kAllToAll);
        EXPECT_EQ(a2a.count, 2);
        EXPECT_EQ(a2a.bytes, 2 * E * per_expert * h * 2 / w);
      }
      // Per device: vocabulary-parallel embedding and head, tensor-parallel attention, replicated
      // norms and router, E/w whole SwiGLU experts.
      const std::int64_t block = (2 * h * h + 2 * h * kv) / w + 2 * h + h * E + (E / w) * 3 * h * f;
      EXPECT_EQ(g.Parameters(), V * h / w + L * block + h + V * h / w) << "w=" << w;
      // Expert GEMM FLOPs per device: E/w experts × 3 GEMMs × 2·(T·k/E)·h·f.
      std::int64_t expert_flops = 0;
      for (const auto& op : Block(g).forward.Ops()) {
        if (op.expert >= 0) expert_flops += op.GemmFlops();
      }
      EXPECT_EQ(expert_flops, (E / w) * 3 * 2 * per_expert * h * f);
    }
  }
  auto moe = Strategies().CreateStrategy("moe", ConfigNode::EmptyMap("test", "params"));
  EXPECT_EQ(moe->Refusal(Full("mixtral-8x7b", 1), 16), "the 8 experts are not divisible by 16");
  EXPECT_EQ(moe->Refusal(Full("mixtral-8x7b", 1), 3), "the 8 experts are not divisible by 3");
  EXPECT_EQ(moe->Refusal(Full("mixtral-8x7b", 1), 8), "");
}

TEST(Moe, ExpertParallelFoldsOverDataParallelReplicas) {
  // The moe strategy with expert_parallel e at width w: E/e whole experts per device, each
  // receiving the routed tokens of e devices (T·k/E · e/w), all-to-alls over the e consecutive
  // ranks carrying this device's share of the routed tokens, as unfolded; the graph says the
  // experts fold over e/w data-parallel replicas.
  const std::int64_t E = 8, k = 2, h = 4096, f = 14336, kv = 8 * 128, s = 4096, L = 32, b = 1;
  const std::int64_t T = b * s, per_expert = T * k / E;
  for (auto [w, e] :
       {std::pair<std::int64_t, std::int64_t>{1, 8}, {2, 8}, {4, 8}, {1, 2}, {2, 4}}) {
    auto moe = Strategies().CreateStrategy(
        "moe", ConfigNode::ParseString("expert_parallel: " + std::to_string(e), "run.yaml"));
    ASSERT_EQ(moe->Refusal(Full("mixtral-8x7b", b), w), "");
    const LayerGraph g = SliceLayerGraph(*moe, "moe", Full("mixtral-8x7b", b), w, true);
    const std::string where = "w=" + std::to_string(w) + " e=" + std::to_string(e);
    EXPECT_EQ(g.expert_fold, e / w) << where;
    std::set<std::int64_t> experts;
    std::int64_t expert_flops = 0;
    for (const auto& op : Block(g).forward.Ops()) {
      if (op.expert < 0) continue;
      experts.insert(op.expert);
      expert_flops += op.GemmFlops();
      if (op.gemm) EXPECT_EQ(op.gemm->m, per_expert * e / w) << where << " " << op.name;
    }
    EXPECT_EQ(static_cast<std::int64_t>(experts.size()), E / e) << where;
    // The same expert work per device as E/w experts of T·k/E tokens.
    EXPECT_EQ(expert_flops, (E / w) * 3 * 2 * per_expert * h * f) << where;
    for (const auto* pass : {&Block(g).forward, &Block(g).backward}) {
      int a2a = 0;
      for (const auto& op : pass->Ops()) {
        if (op.kind != OpKind::kCollective || op.collective != CollectiveKind::kAllToAll) continue;
        ++a2a;
        EXPECT_EQ(op.collective_group, e) << where;
        EXPECT_EQ(op.collective_stride, 1) << where;
        EXPECT_EQ(op.collective_bytes, E * per_expert * h * 2 / w) << where;
      }
      EXPECT_EQ(a2a, 2) << where;
    }
    const std::int64_t V = w == 4 ? 32256 : 32000;  // padded to a multiple of 128·w
    const std::int64_t block = (2 * h * h + 2 * h * kv) / w + 2 * h + h * E + (E / e) * 3 * h * f;
    EXPECT_EQ(g.Parameters(), V * h / w + L * block + h + V * h / w) << where;
  }
  auto with = [](std::int64_t e) {
    return Strategies().CreateStrategy(
        "moe", ConfigNode::ParseString("expert_parallel: " + std::to_string(e), "run.yaml"));
  };
  EXPECT_EQ(with(3)->Refusal(Full("mixtral-8x7b", 1), 1),
            "the 8 experts are not divisible by expert_parallel 3");
  EXPECT_EQ(with(2)->Refusal(Full("mixtral-8x7b", 1), 4).substr(0, 46),
            "expert_parallel 2 is not a multiple of the wid");
  // A dense model under the same strategy folds nothing.
  EXPECT_EQ(SliceLayerGraph(*with(8), "moe", Full("megatron-8.3b", 1), 1, true).expert_fold, 1);
  EXPECT_NE(ConfigErrorOf([] {
              Strategies().CreateStrategy(
                  "megatron", ConfigNode::ParseString("expert_parallel: 8", "run.yaml"));
            }).find("run.yaml:1:18: expert_parallel: needs the moe strategy"),
            std::string::npos);
}

}  // namespace
}  // namespace phaze

namespace phaze {
namespace {

TEST(Recompute, SavedBytesPerModeAreKorthikantisTable2) {
  // Korthikanti et al. 2022, Table 2 (2-byte activations, 1-byte dropout masks), per block:
  //   no parallelism              sbh(34 + 5as/h)
  //   tensor parallel             sbh(10 + 24/t + 5as/(ht))
  //   + sequence parallel         sbh(34/t + 5as/(ht))
  //   tensor parallel, selective  sbh(10 + 24/t)
  //   + sequence parallel, sel.   sbh(34/t)
  //   full recompute              2sbh (its input; with sequence parallelism split t ways)
  // The working set is what recomputation re-materialises: the difference to no recompute.
  const std::int64_t s = 1024, h = 3072, a = 32;
  for (bool fusion : {false, true}) {
    for (std::int64_t b : {1, 2}) {
      for (std::int64_t t : {1, 2, 4, 8}) {
        for (bool sp : {false, true}) {
          if (sp && t == 1) continue;
          const LayerGraph g =
              Slice("megatron-8.3b", b, t, fusion, sp ? "sequence_parallel" : "megatron");
          const UniqueLayer& blk = Block(g);
          const std::int64_t sbh = s * b * h, core = 5 * a * s * s * b / t;
          const std::int64_t none = sp ? 34 * sbh / t + core : 10 * sbh + 24 * sbh / t + core;
          const std::int64_t selective = sp ? 34 * sbh / t : 10 * sbh + 24 * sbh / t;
          const std::int64_t full = sp ? 2 * sbh / t : 2 * sbh;
          const std::string where = "b=" + std::to_string(b) + " t=" + std::to_string(t) +
                                    (sp ? " sp" : "") + (fusion ? " fused" : "");
          EXPECT_EQ(blk.SavedBytes(RecomputeMode::kNone), none) << where;
          EXPECT_EQ(blk.SavedBytes(RecomputeMode::kSelective), selective) << where;
          EXPECT_EQ(blk.SavedBytes(RecomputeMode::kFull), full) << where;
          EXPECT_EQ(blk.WorkingBytes(RecomputeMode::kSelective), core) << where;
          EXPECT_EQ(blk.WorkingBytes(RecomputeMode::kFull), none - full) << where;
          EXPECT_EQ(blk.WorkingBytes(RecomputeMode::kNone), 0) << where;
        }
      }
    }
  }
}

TEST(Recompute, WhatEachModeReRuns) {
  const LayerGraph g = Slice("megatron-8.3b", 1, 2, false);
  const UniqueLayer& blk = Block(g);
  EXPECT_EQ(RecomputeGraph(blk, RecomputeMode::kNone).Ops().size(), 0u);
  EXPECT_EQ(RecomputeGraph(blk, RecomputeMode::kFull).Ops().size(), blk.forward.Ops().size());
  // Selective: scores, scale, causal mask, softmax, attention dropout, context — nothing else.
  std::set<std::string> names;
  const OperatorGraph core = RecomputeGraph(blk, RecomputeMode::kSelective);
  for (const auto& op : core.Ops()) names.insert(op.name);
  EXPECT_EQ(names, (std::set<std::string>{"attn.scores", "attn.scale", "attn.mask", "attn.softmax",
                                          "attn.dropout", "attn.context"}));
  // Its GEMM FLOPs are the attention core's: 2·(2·b·s²·h)/t.
  EXPECT_EQ(core.GemmFlops(), 4LL * 1024 * 1024 * 3072 / 2);
  // The embedding and the head are not checkpointed: no mode re-runs them.
  for (RecomputeMode m : {RecomputeMode::kSelective, RecomputeMode::kFull}) {
    EXPECT_FALSE(g.unique_layers[0].Recomputes(m));
    EXPECT_FALSE(g.unique_layers[2].Recomputes(m));
    EXPECT_TRUE(blk.Recomputes(m));
  }
}

TEST(Recompute, PerOpKeepsEveryOtherLinearAndTheAttentionOutputByHand) {
  // TorchTitan's per-op selective checkpointing on a Llama 2 7B block (h 4096, 32 heads of 128,
  // no grouped keys, FFN f 11008, no dropout, 2-byte activations), s 4096, micro-batch b. It keeps
  // the block's input and the outputs of the 1st, 3rd, 5th and 7th linear layers (q, v, gate,
  // down), of the attention and of the reduce-scatters; everything else re-runs.
  const std::int64_t s = 4096, h = 4096, a = 32, f = 11008;
  for (bool fusion : {false, true}) {
    for (std::int64_t b : {1, 2}) {
      const std::string where = "b=" + std::to_string(b) + (fusion ? " fused" : "");
      const std::int64_t sb = s * b;
      // No tensor parallelism: input h, q h, v h, gate f, down h, attention output h; the unfused
      // attention core also keeps its softmax output (a·s² per sequence; FlashAttention: none).
      const UniqueLayer plain = Block(Slice("llama2-7b", b, 1, fusion));
      EXPECT_EQ(plain.SavedBytes(RecomputeMode::kPerOp), 2 * sb * (5 * h + f) + 2 * a * s * s * b)
          << where;
      const UniqueLayer flash =
          Block(WithAttentionKernel(Slice("llama2-7b", b, 1, fusion), AttentionKernel::kFlash));
      EXPECT_EQ(flash.SavedBytes(RecomputeMode::kPerOp), 2 * sb * (5 * h + f)) << where;
      // What re-runs: k, the output projection and up (2·sb·h·(h + h + f) GEMM FLOPs), and none
      // of the attention core's.
      const OperatorGraph rerun = RecomputeGraph(flash, RecomputeMode::kPerOp);
      EXPECT_EQ(rerun.GemmFlops(), 2 * sb * h * (2 * h + f)) << where;
      for (const auto& op : rerun.Ops()) EXPECT_FALSE(op.attention_core) << op.name;
      // What the re-run rebuilds of what backward reads: the first norm's output (the linear
      // layers' input), the rotated q and k (the attention's inputs), the first residual sum and
      // the second norm's output (the second norm's and the FFN's inputs), up's output, the
      // activation's and their product (the product's and down's inputs): 2·sb·(5h + 3f).
      // Epilogue fusion puts the rotation in q's and k's GEMMs and the activation in gate's, so
      // kept q and gate take theirs with them: 2·sb·(4h + 2f).
      EXPECT_EQ(flash.WorkingBytes(RecomputeMode::kPerOp),
                fusion ? 2 * sb * (4 * h + 2 * f) : 2 * sb * (5 * h + 3 * f))
          << where;
      // Tensor parallelism 2 with sequence parallelism: the input, q, v, gate and the attention
      // output are split 2 ways; down's GEMM result is the whole partial sum (sb·h) before its
      // reduce-scatter; the two reduce-scatters' outputs are sb·h/2 each.
      const UniqueLayer sp = Block(WithAttentionKernel(
          Slice("llama2-7b", b, 2, fusion, "sequence_parallel"), AttentionKernel::kFlash));
      EXPECT_EQ(sp.SavedBytes(RecomputeMode::kPerOp), 2 * sb * (4 * h + f / 2)) << where;
      // In FP8 at t 8 the linear layers' inputs are saved in one byte, and what per-op keeps
      // (down's whole 16-bit partial sum among it) outweighs what the block saves without
      // checkpointing; TorchTitan re-runs the same ops all the same (its float8 runs read the
      // bf16 runs' peak memory, share/validation/README.md).
      const auto at8 = [&](Precision precision) {
        return Block(
            WithPrecision(WithAttentionKernel(Slice("llama2-7b", b, 8, fusion, "sequence_parallel"),
                                              AttentionKernel::kFlash),
                          precision));
      };
      const UniqueLayer bf16 = at8(Precision::kBf16), fp8 = at8(Precision::kFp8);
      EXPECT_GT(fp8.SavedBytes(RecomputeMode::kPerOp), fp8.SavedBytes(RecomputeMode::kNone))
          << where;
      EXPECT_TRUE(fp8.Recomputes(RecomputeMode::kPerOp)) << where;
      EXPECT_GT(fp8.WorkingBytes(RecomputeMode::kPerOp), 0) << where;
      EXPECT_EQ(RecomputeGraph(fp8, RecomputeMode::kPerOp).GemmFlops(),
                RecomputeGraph(bf16, RecomputeMode::kPerOp).GemmFlops())
          << where;
    }
  }
  // Embedding and head are not checkpointed: per-op keeps all they save and re-runs nothing.
  const LayerGraph g = Slice("llama2-7b", 1, 1);
  for (int k : {0, 2}) {
    EXPECT_EQ(g.unique_layers[k].SavedBytes(RecomputeMode::kPerOp),
              g.unique_layers[k].SavedBytes(RecomputeMode::kNone));
    EXPECT_FALSE(g.unique_layers[k].Recomputes(RecomputeMode::kPerOp));
  }
  EXPECT_EQ(ParseRecomputeMode("per-op"), RecomputeMode::kPerOp);
  EXPECT_EQ(ToString(RecomputeMode::kPerOp), "per-op");
}

TEST(Moe, ExpertTensorParallelSplitsEachExpertOverTheWidth) {
  // Megatron-LM's expert tensor parallelism at the width (--expert-tensor-parallel-size t, its
  // default): expert_parallel e counts replicas, so E/e experts stay on each device, each split
  // over the w devices as the dense FFN is: gate and up n = f/w, down k = f/w, on the routed
  // tokens of e replicas (T·k/E · e). Per pass, the all-to-alls run over e devices w ranks apart
  // with the device's sequence shard of the routed tokens; the kept experts' tokens are
  // all-gathered over the width before their GEMMs and their results reduce-scattered after.
  const std::int64_t E = 8, k = 2, h = 4096, f = 14336, kv = 8 * 128, s = 4096, L = 32, b = 1;
  const std::int64_t T = b * s, per_expert = T * k / E;
  for (auto [w, e] : {std::pair<std::int64_t, std::int64_t>{2, 4}, {2, 1}, {4, 2}, {8, 8}}) {
    auto moe = Strategies().CreateStrategy(
        "moe", ConfigNode::ParseString("{expert_parallel: " + std::to_string(e) +
                                           ", expert_tensor_parallel: width}",
                                       "run.yaml"));
    ASSERT_EQ(moe->Refusal(Full("mixtral-8x7b", b), w), "");
    const LayerGraph g = SliceLayerGraph(*moe, "moe", Full("mixtral-8x7b", b), w, true);
    const std::string where = "w=" + std::to_string(w) + " e=" + std::to_string(e);
    EXPECT_EQ(g.expert_fold, e) << where;
    std::set<std::int64_t> experts;
    std::int64_t expert_flops = 0;
    for (const auto& op : Block(g).forward.Ops()) {
      if (op.expert < 0 || op.kind == OpKind::kCollective) continue;
      experts.insert(op.expert);
      expert_flops += op.GemmFlops();
      if (!op.gemm) continue;
      EXPECT_EQ(op.gemm->m, per_expert * e) << where << " " << op.name;
      const bool down = op.name.find(".down") != std::string::npos;
      EXPECT_EQ(down ? op.gemm->k : op.gemm->n, f / w) << where << " " << op.name;
      EXPECT_EQ(down ? op.gemm->n : op.gemm->k, h) << where << " " << op.name;
    }
    EXPECT_EQ(static_cast<std::int64_t>(experts.size()), E / e) << where;
    EXPECT_EQ(expert_flops, E * 3 * 2 * per_expert * h * f / w) << where;
    for (const auto* pass : {&Block(g).forward, &Block(g).backward}) {
      int a2a = 0, gathers = 0, scatters = 0;
      for (const auto& op : pass->Ops()) {
        if (op.kind != OpKind::kCollective) continue;
        if (op.collective == CollectiveKind::kAllToAll) {
          ++a2a;
          EXPECT_EQ(op.collective_group, e) << where;
          EXPECT_EQ(op.collective_stride, w) << where;
          EXPECT_EQ(op.collective_bytes, E * per_expert * h * 2 / w) << where;
        } else if (op.name.find("mlp.") == 0) {
          // One gather of all the device's experts' tokens after the dispatch, and one
          // reduce-scatter of their partial sums after the collection, as Megatron-LM's alltoall
          // dispatcher does: each moving the E/e experts' e·T·k/E tokens' hidden states.
          EXPECT_EQ(op.collective_group, w) << where << " " << op.name;
          EXPECT_EQ(op.collective_bytes, E * per_expert * h * 2) << where << " " << op.name;
          const bool gather = op.collective == CollectiveKind::kAllGather;
          (gather ? gathers : scatters) += 1;
        }
      }
      EXPECT_EQ(a2a, e > 1 ? 2 : 0) << where;
      EXPECT_EQ(gathers, 1) << where;   // forward: the gather; backward: the scatter's
      EXPECT_EQ(scatters, 1) << where;  // conjugate, and the reverse
    }
    // Megatron-LM's dispatcher gathers and scatters the experts' tokens itself, outside
    // Transformer Engine's GEMM-overlapped communication (TEGroupedLinear's explicit expert comm):
    // tensor-parallel overlap marks the attention's gathers and scatters, not the experts'.
    const LayerGraph marked = WithTensorParallelOverlap(g, 0.5);
    int dense_marked = 0, expert_collectives = 0;
    for (const auto* pass : {&Block(marked).forward, &Block(marked).backward}) {
      for (const auto& op : pass->Ops()) {
        if (op.kind != OpKind::kCollective || op.collective == CollectiveKind::kAllToAll) continue;
        if (op.name.find("mlp.") == 0) {
          ++expert_collectives;
          EXPECT_EQ(op.gemm_overlap, -1) << where << " " << op.name;
        } else if (op.gemm_overlap == 0.5) {
          ++dense_marked;
        }
      }
    }
    EXPECT_EQ(expert_collectives, 4) << where;
    EXPECT_GT(dense_marked, 0) << where;
    const std::int64_t V = w == 2 ? 32000 : w == 4 ? 32256 : 32768;  // padded to 128·w
    const std::int64_t block =
        (2 * h * h + 2 * h * kv) / w + 2 * h + h * E + (E / e) * 3 * h * f / w;
    EXPECT_EQ(g.Parameters(), V * h / w + L * block + h + V * h / w) << where;
  }
  // Whole experts need e to be a multiple of the width; split ones count replicas.
  auto etp = Strategies().CreateStrategy(
      "moe", ConfigNode::ParseString("{expert_parallel: 2, expert_tensor_parallel: width}", "t"));
  EXPECT_EQ(etp->Refusal(Full("mixtral-8x7b", 1), 4), "");
  EXPECT_EQ(etp->Refusal(Full("mixtral-8x7b", 1), 3),
            "the 32 attention heads are not divisible by 3");
  EXPECT_NE(ConfigErrorOf([] {
              Strategies().CreateStrategy(
                  "moe", ConfigNode::ParseString("expert_tensor_parallel: 2", "run.yaml"));
            }).find("expected 1 (each expert whole on its device) or width"),
            std::string::npos);
  EXPECT_NE(ConfigErrorOf([] {
              Strategies().CreateStrategy(
                  "sequence_parallel", ConfigNode::ParseString("expert_tensor_parallel: width",
                                                               "run.yaml"));
            }).find("needs the moe strategy"),
            std::string::npos);
}

}  // namespace
}  // namespace phaze
