// The workload graphs against independent expectations: published parameter counts, the FLOP
// formula of Narayanan et al. (SC21), the saved-activation formula of Korthikanti et al. (2022),
// GEMM shapes of the backward pass written out by hand, and the fusion rule applied by hand.
#include "phaze/graph/graph_builder.hpp"
#include "phaze/graph/attention_kernel.hpp"
#include "phaze/graph/loss_kernel.hpp"
#include "phaze/estimate/estimator.hpp"
#include "phaze/graph/precision.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>

#include "phaze/core/error.hpp"
#include "test_paths.hpp"

namespace phaze {
namespace {

std::string Workload(const std::string& name) {
  return std::string(PHAZE_SOURCE_DIR) + "/workloads/" + name + ".yaml";
}

LayerGraph Build(const std::string& name, std::int64_t b, bool fusion = true,
                 const std::string& optimizer = "adam-mixed") {
  GraphOptions o;
  o.micro_batch = b;
  o.fusion = fusion;
  for (OptimizerKind kind : kOptimizerKinds) {
    if (ToString(kind) == optimizer) o.optimizer = OptimizerSpec::For(kind);
  }
  return BuildLayerGraph(LoadModelSpec(Workload(name)), o);
}

const UniqueLayer& Layer(const LayerGraph& g, const std::string& name) {
  for (const auto& u : g.unique_layers) {
    if (u.name == name) return u;
  }
  throw std::runtime_error("no unique layer " + name);
}

const Operator& Op(const OperatorGraph& g, const std::string& name) {
  const int i = g.FindOp(name);
  if (i < 0) throw std::runtime_error("no op " + name);
  return g.GetOp(i);
}

// Is op `to` reachable from op `from` in the op DAG?
bool Reaches(const OperatorGraph& g, const std::string& from, const std::string& to) {
  const auto succ = g.Successors();
  std::vector<int> stack = {g.FindOp(from)};
  std::set<int> seen;
  while (!stack.empty()) {
    int i = stack.back();
    stack.pop_back();
    if (i == g.FindOp(to)) return true;
    for (int j : succ[i]) {
      if (seen.insert(j).second) stack.push_back(j);
    }
  }
  return false;
}

TEST(Workloads, HuggingFaceParameterCountsAreExact) {
  // Published counts (model cards / `sum(p.numel())` of the Hugging Face models).
  const std::map<std::string, std::int64_t> published = {
      {"bert-large", 335141888},  // BertModel incl. pooler
      {"gpt2-xl", 1557611200},
      {"opt-350m", 331196416},
      {"llama2-7b", 6738415616},
  };
  for (const auto& [name, count] : published) {
    EXPECT_EQ(Build(name, 1).Parameters(), count) << name;
  }
}

TEST(Workloads, MegatronParameterCountsMatchTheClosedForm) {
  // Narayanan et al. 2021, eq. (2): P = 12·l·h²·(1 + 13/(12h) + (V + s)/(12·l·h)), plus the final
  // LayerNorm's 2h, which the formula leaves out. Within 1% of the names 2.5B, 8.3B, 175B.
  struct Case {
    std::string name;
    std::int64_t l, h, V, s;
    double published;
  };
  for (const Case& c : {Case{"megatron-2.5b", 54, 1920, 50304, 1024, 2.5e9},
                        Case{"megatron-8.3b", 72, 3072, 50304, 1024, 8.3e9},
                        Case{"megatron-gpt3-175b", 96, 12288, 50304, 2048, 175e9}}) {
    const std::int64_t closed = 12 * c.l * c.h * c.h + 13 * c.l * c.h + (c.V + c.s) * c.h + 2 * c.h;
    const std::int64_t counted = Build(c.name, 1).Parameters();
    EXPECT_EQ(counted, closed) << c.name;
    EXPECT_LT(std::abs(counted - c.published) / c.published, 0.01) << c.name;
  }
}

TEST(Workloads, GptBlockForwardFlopsMatchNarayanan) {
  // Forward GEMM FLOPs of one GPT block: 24·b·s·h²·(1 + s/(6h)) = 24·b·s·h² + 4·b·s²·h; the model
  // adds the logits GEMM 2·b·s·h·V.
  struct Case {
    std::string name;
    std::int64_t l, h, s, V;
  };
  for (const Case& c :
       {Case{"gpt2-xl", 48, 1600, 1024, 50257}, Case{"megatron-8.3b", 72, 3072, 1024, 50304}}) {
    for (std::int64_t b : {1, 2, 4, 8}) {
      const LayerGraph g = Build(c.name, b);
      const std::int64_t block = 24 * b * c.s * c.h * c.h + 4 * b * c.s * c.s * c.h;
      EXPECT_EQ(Layer(g, "block").forward.GemmFlops(), block) << c.name << " b=" << b;
      EXPECT_EQ(g.ForwardFlops(), c.l * block + 2 * b * c.s * c.h * c.V) << c.name << " b=" << b;
    }
  }
}

TEST(Workloads, GptBlockSavedActivationsMatchKorthikanti) {
  // Korthikanti et al. 2022, §4.1 (fp16, dropout masks of one byte, no recomputation, no sequence
  // parallelism): s·b·h·(34 + 5·a·s/h) bytes per block = 34·s·b·h + 5·a·s²·b.
  struct Case {
    std::string name;
    std::int64_t h, a, s;
  };
  for (const Case& c : {Case{"gpt2-xl", 1600, 25, 1024}, Case{"megatron-8.3b", 3072, 32, 1024}}) {
    for (std::int64_t b : {1, 2, 4, 8}) {
      for (bool fusion : {true, false}) {
        const LayerGraph g = Build(c.name, b, fusion);
        EXPECT_EQ(Layer(g, "block").activation_bytes, 34 * c.s * b * c.h + 5 * c.a * c.s * c.s * b)
            << c.name << " b=" << b << " fusion=" << fusion;
      }
    }
  }
}

// FP8 (graph/precision.hpp) on Korthikanti's block: the inputs of the four linear layers are kept
// in FP8 — QKV's and FC1's (the norms' outputs, 2·sbh each), the projection's (the context, 2·sbh)
// and FC2's (the activation's output, 8·sbh) — so 34·sbh + 5·a·s²·b becomes 27·sbh + 5·a·s²·b;
// the linear layers' GEMMs are FP8 forward and backward, attention's batched GEMMs and the
// embedding and head are not; the FP8 weight copies are 2 bytes per weight of the linear layers
// (12·h² unfused). bf16 and fp16 leave the graph as it is.
TEST(Workloads, Fp8KeepsTheLinearInputsInOneByte) {
  const std::int64_t h = 3072, a = 32, s = 1024;
  for (bool fusion : {false, true}) {
    const LayerGraph g = Build("megatron-8.3b", 1, fusion);
    EXPECT_EQ(WithPrecision(g, Precision::kBf16).unique_layers[1].forward.Ops(),
              g.unique_layers[1].forward.Ops());
    const LayerGraph f = WithPrecision(g, Precision::kFp8);
    const UniqueLayer& block = Layer(f, "block");
    EXPECT_EQ(block.activation_bytes, 27 * s * h + 5 * a * s * s) << "fusion=" << fusion;
    if (!fusion) {
      EXPECT_EQ(block.cached_weight_bytes, 2 * 12 * h * h);
    }
    int fp8 = 0;
    for (const OperatorGraph* graph : {&block.forward, &block.backward}) {
      for (const Operator& op : graph->Ops()) {
        EXPECT_EQ(op.fp8, op.kind == OpKind::kGemm) << op.name;
        fp8 += op.fp8 ? 1 : 0;
      }
    }
    EXPECT_EQ(fp8, 4 * 3);  // four linear layers: forward, input gradient, weight gradient
    for (const char* other : {"embedding", "head"}) {
      for (const Operator& op : Layer(f, other).forward.Ops()) EXPECT_FALSE(op.fp8) << op.name;
      EXPECT_EQ(Layer(f, other).activation_bytes, Layer(g, other).activation_bytes);
    }
  }
}

// FlashAttention (graph/attention_kernel.hpp) on Korthikanti's block: the core's s² tensors stay
// on chip, so 34·sbh + 5·a·s²·b becomes 34·sbh; backward re-runs QKᵀ (2·b·a·s²·d more GEMM
// FLOPs) and the core's vector work; forward is unchanged in FLOPs; nothing else moves.
TEST(Workloads, FlashAttentionKeepsTheCoreOnChip) {
  const std::int64_t h = 3072, a = 32, s = 1024, d = h / a;
  for (std::int64_t b : {1, 2}) {
    for (bool fusion : {false, true}) {
      const LayerGraph g = Build("megatron-8.3b", b, fusion);
      const LayerGraph f = WithAttentionKernel(g, AttentionKernel::kFlash);
      const UniqueLayer& block = Layer(f, "block");
      const UniqueLayer& plain = Layer(g, "block");
      EXPECT_EQ(block.activation_bytes, 34 * s * b * h) << "b=" << b << " fusion=" << fusion;
      EXPECT_EQ(block.forward.GemmFlops(), plain.forward.GemmFlops());
      EXPECT_EQ(block.backward.GemmFlops() - plain.backward.GemmFlops(), 2 * b * a * s * s * d);
      std::int64_t core_bytes = 0;
      for (const Operator& op : block.forward.Ops()) {
        if (op.attention_core && op.name != "attn.context") {
          core_bytes += block.forward.BytesWritten(op);
        }
      }
      EXPECT_EQ(core_bytes, 0) << "fusion=" << fusion;
      EXPECT_EQ(Layer(f, "head").activation_bytes, Layer(g, "head").activation_bytes);
    }
  }
  EXPECT_EQ(WithAttentionKernel(Build("tiny-gpt", 1), AttentionKernel::kUnfused)
                .unique_layers[1].activation_bytes,
            Build("tiny-gpt", 1).unique_layers[1].activation_bytes);
}

// `fused` attention (graph/attention_kernel.hpp) on Megatron 8.3B (s = 1,024: n = 8 tiles of
// 128, 36 of 64 computed under the causal mask, 9/16): the core's GEMM FLOPs forward and backward
// (the 4 gradients and the recomputed QKᵀ, each 2·b·a·s²·d) fall to 9/16, the softmax is the
// online one, the attention dropout draws its random numbers in the kernel, and no s² tensor is left in memory in either pass (`flash` leaves dP and dS, whose
// names are the unfused graph's). BERT's padding mask keeps every tile.
TEST(Workloads, FusedAttentionSkipsCausalTilesAndKeepsItsGradientsOnChip) {
  const std::int64_t h = 3072, a = 32, s = 1024, d = h / a;
  for (std::int64_t b : {1, 2}) {
    const LayerGraph g = Build("megatron-8.3b", b);
    const UniqueLayer& plain = Layer(g, "block");
    const LayerGraph flash = WithAttentionKernel(g, AttentionKernel::kFlash);
    const LayerGraph fused = WithAttentionKernel(g, AttentionKernel::kFused);
    const UniqueLayer& block = Layer(fused, "block");
    const std::int64_t core = 2 * b * a * s * s * d;  // one of the core's GEMMs
    EXPECT_EQ(block.forward.GemmFlops(), plain.forward.GemmFlops() - 2 * core + 2 * core * 9 / 16);
    EXPECT_EQ(block.backward.GemmFlops(),
              plain.backward.GemmFlops() - 4 * core + 5 * core * 9 / 16);
    EXPECT_EQ(block.activation_bytes, Layer(flash, "block").activation_bytes);
    auto s2_tensors = [&](const OperatorGraph& graph) {
      int n = 0;
      for (const Tensor& t : graph.Tensors()) n += t.elements >= b * a * s * s ? 1 : 0;
      return n;
    };
    EXPECT_GT(s2_tensors(Layer(flash, "block").backward), 0);
    EXPECT_EQ(s2_tensors(block.forward), 0);
    EXPECT_EQ(s2_tensors(block.backward), 0);
    int kernel_ops = 0;
    for (const OperatorGraph* graph : {&block.forward, &block.backward}) {
      for (const Operator& op : graph->Ops()) {
        kernel_ops += op.attention_kernel ? 1 : 0;
        for (const VectorWork& v : op.vector) {
          EXPECT_NE(v.function, "softmax") << op.name;
          if (v.function == "flash_softmax" || v.function == "flash_dropout" ||
              v.function == "flash_dropout_backward") {
            EXPECT_TRUE(op.attention_kernel) << op.name;
            EXPECT_EQ(v.elements, b * a * s * s * 9 / 16) << op.name;
          }
          // The forward kernel draws the attention dropout's random numbers; the backward's
          // re-run (flash:attn.dropout) draws them again.
          if (op.name == "attn.dropout") {
            EXPECT_EQ(v.function, "flash_dropout");
          }
          if (op.name == "flash:attn.dropout") {
            EXPECT_EQ(v.function, "flash_dropout_backward");
          }
        }
      }
      for (const Operator& op : Layer(flash, "block").forward.Ops()) {
        EXPECT_FALSE(op.attention_kernel) << op.name;
      }
    }
    EXPECT_GE(kernel_ops, 10) << "b=" << b;  // forward core, recomputed core, gradients
    EXPECT_GE(block.forward.FindOp("attn.dropout"), 0);
    EXPECT_GE(block.backward.FindOp("flash:attn.dropout"), 0);
  }
  const LayerGraph bert = Build("bert-large", 1);
  EXPECT_EQ(Layer(WithAttentionKernel(bert, AttentionKernel::kFused), "block").forward.GemmFlops(),
            Layer(bert, "block").forward.GemmFlops());
}

// Megatron-LM's fused scale-mask-softmax kernel (FusedScaleMaskSoftmax.is_kernel_available),
// its rule applied by hand: 16 < sk ≤ 4,096, sq and sk multiples of 4, b·a/t a multiple of 4,
// and b·a/t (causal) or sq (padding mask) a multiple of the batches per block, 4 for sk > 128
// (warps of 32 lanes, one batch each) and 8 for sk ≤ 128 (two per warp).
TEST(Workloads, MegatronFusedSoftmaxRunsByItsShapeRules) {
  EXPECT_TRUE(MegatronFusedSoftmaxRuns(4, 1024, 1024, true));    // t 8, 16 heads, b 2
  EXPECT_FALSE(MegatronFusedSoftmaxRuns(2, 1024, 1024, true));   // t 8, 16 heads, b 1
  EXPECT_FALSE(MegatronFusedSoftmaxRuns(25, 1024, 1024, true));  // GPT-2 XL's 25 heads, b 1
  EXPECT_TRUE(MegatronFusedSoftmaxRuns(100, 1024, 1024, true));  // and b 4
  EXPECT_TRUE(MegatronFusedSoftmaxRuns(8, 4096, 4096, true));
  EXPECT_FALSE(MegatronFusedSoftmaxRuns(8, 8192, 8192, true));  // sk > 4,096
  EXPECT_FALSE(MegatronFusedSoftmaxRuns(8, 16, 16, true));      // sk ≤ 16
  EXPECT_FALSE(MegatronFusedSoftmaxRuns(4, 128, 128, true));    // 4 batches, 8 per block
  EXPECT_TRUE(MegatronFusedSoftmaxRuns(8, 128, 128, true));
  EXPECT_TRUE(MegatronFusedSoftmaxRuns(4, 128, 128, false));    // padding: sq 128 of 8
  EXPECT_FALSE(MegatronFusedSoftmaxRuns(4, 100, 100, false));   // sq 100 not of 8
  EXPECT_FALSE(MegatronFusedSoftmaxRuns(4, 1022, 1022, true));  // sk not a multiple of 4
}

// `megatron` attention on GPT-2 XL (25 heads, s = 1,024; n = b·a·s² scores): at b = 1 the fused
// kernel cannot run (25 planes) and PyTorch's FP32 path does — forward float() r2 w4, × scale
// r4 w4, masked_fill_ r4 w4, softmax r4 w4, .half() r4 w2 (18n read, 18n written, the dropout
// after it reading the kept FP32 probabilities at 4 bytes for the 2 of the cast: 2n fewer here),
// backward 22n read and 18n written, five kernels each way, the probabilities kept at 4 bytes
// (2n more activation) and two FP32 temporaries held in backward (8n); at b = 4 (100 planes) the
// graph is `unfused`'s.
TEST(Workloads, MegatronSoftmaxFallsBackToFp32WhereItsKernelCannotRun) {
  const std::int64_t a = 25, s = 1024;
  for (std::int64_t b : {1, 4}) {
    const LayerGraph g = Build("gpt2-xl", b);
    const LayerGraph m = WithAttentionKernel(g, AttentionKernel::kMegatron);
    const UniqueLayer& plain = Layer(g, "block");
    const UniqueLayer& block = Layer(m, "block");
    const std::int64_t n = b * a * s * s;
    const Operator& forward = Op(block.forward, "attn.softmax");
    const Operator& backward = Op(block.backward, "attn.softmax.backward");
    const OpWork fw = OpWork::Of(forward, block.forward);
    const OpWork bw = OpWork::Of(backward, block.backward);
    if (b == 4) {
      EXPECT_EQ(block.forward.Ops(), plain.forward.Ops());
      EXPECT_EQ(block.backward.Ops(), plain.backward.Ops());
      EXPECT_EQ(block.activation_bytes, plain.activation_bytes);
      EXPECT_EQ(fw.bytes_read + fw.bytes_written, 4 * n);
      continue;
    }
    EXPECT_EQ(fw.bytes_read, 18 * n - 2 * n);
    EXPECT_EQ(fw.bytes_written, 18 * n);
    EXPECT_EQ(fw.extra_kernels, 4);
    EXPECT_EQ(bw.bytes_read, 22 * n);
    EXPECT_EQ(bw.bytes_written, 18 * n);
    EXPECT_EQ(bw.extra_kernels, 4);
    EXPECT_EQ(OpWork::Of(Op(block.forward, "attn.dropout"), block.forward).bytes_read, 4 * n);
    EXPECT_EQ(block.activation_bytes, plain.activation_bytes + 2 * n);
    EXPECT_EQ(block.transient_bytes, 8 * n);
    EXPECT_EQ(Layer(m, "head").activation_bytes, Layer(g, "head").activation_bytes);
  }
}

// The loss's kernels (graph/loss_kernel.hpp) on Megatron 8.3B's head, n = b·s·V logits: the
// one-kernel op reads the 16-bit logits and writes the FP32 probabilities (6n bytes and the
// loss), its backward reads them and writes the 16-bit gradient (6n); Megatron-LM's
// vocab_parallel_cross_entropy adds the cast's FP32 copy and five passes over it (max, subtract,
// exp, sum, divide: 5 reads, 3 writes of 4n) and, backward, grad.mul_ and the cast back (a read
// and a write); F.cross_entropy on FP32 logits the cast and a log-softmax reading it three times,
// and backward a zeroed gradient, a log-softmax backward reading it twice and the cast.
TEST(Workloads, LossKernelsPassOverTheFp32Logits) {
  const std::int64_t b = 2, n = b * 1024 * 50304;
  const LayerGraph g = Build("megatron-8.3b", b);
  auto bytes = [](const LayerGraph& graph, bool backward) {
    const UniqueLayer& head = Layer(graph, "head");
    const OperatorGraph& pass = backward ? head.backward : head.forward;
    for (const Operator& op : pass.Ops()) {
      if (op.kind != OpKind::kLoss) continue;
      const OpWork w = OpWork::Of(op, pass);
      return std::pair{w.bytes_read + w.bytes_written, w.extra_kernels};
    }
    ADD_FAILURE() << "no loss op";
    return std::pair<std::int64_t, std::int64_t>{0, 0};
  };
  const auto [forward, none] = bytes(g, false);
  const auto backward = bytes(g, true).first;
  EXPECT_EQ(none, 0);
  EXPECT_EQ(forward, 2 * n + 4 * n + 4);  // and the FP32 loss
  EXPECT_EQ(backward, 4 * n + 2 * n);  // (the loss's gradient is seeded, not read)
  const LayerGraph megatron = WithLossKernel(g, LossKernel::kMegatron);
  EXPECT_EQ(bytes(megatron, false), (std::pair{forward + 32 * n, std::int64_t{5}}));
  EXPECT_EQ(bytes(megatron, true), (std::pair{backward + 8 * n, std::int64_t{1}}));
  const LayerGraph torch = WithLossKernel(g, LossKernel::kTorch);
  EXPECT_EQ(bytes(torch, false), (std::pair{forward + 16 * n, std::int64_t{2}}));
  EXPECT_EQ(bytes(torch, true), (std::pair{backward + 20 * n, std::int64_t{3}}));
  // The blocks and the kept memory do not change (the FP32 copy is the kept probabilities); the
  // head's backward holds, beside them, its 16-bit gradient (Megatron-LM: 2n bytes) or the zeroed
  // FP32 gradient and the log-softmax backward's FP32 output (F.cross_entropy: 4n + 4n).
  EXPECT_EQ(Layer(megatron, "block").forward.Ops(), Layer(g, "block").forward.Ops());
  EXPECT_EQ(Layer(megatron, "head").activation_bytes, Layer(g, "head").activation_bytes);
  EXPECT_EQ(Layer(torch, "head").activation_bytes, Layer(g, "head").activation_bytes);
  EXPECT_EQ(Layer(g, "head").transient_bytes, 0);
  EXPECT_EQ(Layer(megatron, "head").transient_bytes, 2 * n);
  EXPECT_EQ(Layer(torch, "head").transient_bytes, 8 * n);
  EXPECT_EQ(Layer(torch, "block").transient_bytes, 0);
  // Compiled (Inductor): forward the logits read twice (max, then the sum of exponentials) and
  // one FP32 log-sum-exp a row written, b·s rows; backward the kept 16-bit logits read and the
  // gradient written, one kernel each way. It keeps the logits (2n) and the row values, not the
  // FP32 probabilities (4n), and holds its 16-bit gradient beside them in backward.
  const std::int64_t rows = b * 1024;
  const LayerGraph compiled = WithLossKernel(g, LossKernel::kCompiled);
  EXPECT_EQ(bytes(compiled, false), (std::pair{2 * n + 2 * n + 4 + 4 * rows, std::int64_t{0}}));
  EXPECT_EQ(bytes(compiled, true), (std::pair{2 * n + 2 * n, std::int64_t{0}}));
  EXPECT_EQ(Layer(compiled, "head").activation_bytes,
            Layer(g, "head").activation_bytes - 4 * n + 2 * n + 4 * rows);
  EXPECT_EQ(Layer(compiled, "head").transient_bytes, 2 * n);
  EXPECT_EQ(Layer(compiled, "block").forward.Ops(), Layer(g, "block").forward.Ops());
  const OperatorGraph& head = Layer(compiled, "head").forward;
  const Operator& loss = head.GetOp(head.FindOp("head.loss"));
  EXPECT_EQ(loss.saved.at(0), loss.inputs.at(0));  // the logits
  EXPECT_GE(Layer(compiled, "head")
                .backward.FindTensor("saved:" + head.GetTensor(loss.inputs.at(0)).name),
            0);
}

// Mixed-precision Adam over a 16-bit gradient buffer (Megatron with --fp16): 2 gradient bytes per
// held parameter, and the step's fp32 copy of them, 4 more, counted as the step's working bytes;
// with the default fp32 buffer the copy is the buffer (0), and SGD keeps no fp32 gradients. The
// step reads fp32 gradients either way: its bytes are the fp32-buffer graph's.
TEST(Workloads, SixteenBitGradientsAreCopiedToFp32ForTheStep) {
  GraphOptions o;
  o.micro_batch = 1;
  o.optimizer = OptimizerSpec::For(OptimizerKind::kAdamMixed);
  const ModelSpec spec = LoadModelSpec(Workload("megatron-8.3b"));
  const LayerGraph fp32 = BuildLayerGraph(spec, o);
  o.optimizer.gradient_bytes_per_parameter = 2;
  const LayerGraph fp16 = BuildLayerGraph(spec, o);
  const LayerGraph sgd = Build("megatron-8.3b", 1, true, "sgd");
  for (const char* name : {"embedding", "block", "head"}) {
    const UniqueLayer& a = Layer(fp32, name);
    const UniqueLayer& h = Layer(fp16, name);
    const std::int64_t held = a.parameters + a.tied_parameters;
    ASSERT_GT(held, 0) << name;
    EXPECT_EQ(a.gradient_bytes, 4 * held) << name;
    EXPECT_EQ(a.step_working_bytes, 0) << name;
    EXPECT_EQ(h.gradient_bytes, 2 * held) << name;
    EXPECT_EQ(h.step_working_bytes, 4 * held) << name;
    EXPECT_EQ(h.optimizer_state_bytes, a.optimizer_state_bytes) << name;
    EXPECT_EQ(h.optimizer_step.weight_bytes, a.optimizer_step.weight_bytes) << name;
    EXPECT_EQ(a.optimizer_step.weight_bytes, (2 + 4 + 12) * held) << name;
    EXPECT_EQ(Layer(sgd, name).step_working_bytes, 0) << name;
  }
}

TEST(Workloads, BackwardGemmFlopsAreTwiceTheForward) {
  for (const char* name : {"opt-350m", "bert-large", "gpt2-xl", "llama2-7b", "megatron-bert",
                           "megatron-2.5b", "megatron-8.3b", "megatron-gpt3-175b"}) {
    for (std::int64_t b : {1, 2}) {
      const LayerGraph g = Build(name, b);
      for (const auto& u : g.unique_layers) {
        std::int64_t forward = u.forward.GemmFlops();
        // The BERT pooler feeds no loss, so it gets no gradient: 2·b·h·h forward FLOPs only.
        if (u.forward.FindOp("head.pooler") >= 0) forward -= 2 * b * 1024 * 1024;
        EXPECT_EQ(u.backward.GemmFlops(), 2 * forward) << name << " " << u.name << " b=" << b;
      }
    }
  }
}

TEST(Workloads, BackwardGemmShapesAndOrderOnTheTinyModel) {
  // tiny-gpt: h 64, 4 heads (d 16), s 32, FFN 256, b 2 → T = 64 tokens.
  const LayerGraph g = Build("tiny-gpt", 2, /*fusion=*/false);
  const OperatorGraph& fw = Layer(g, "block").forward;
  const OperatorGraph& bw = Layer(g, "block").backward;
  EXPECT_EQ(*Op(fw, "attn.qkv").gemm, (GemmShape{1, 64, 192, 64}));
  EXPECT_EQ(*Op(fw, "attn.scores").gemm, (GemmShape{8, 32, 32, 16}));
  EXPECT_EQ(*Op(fw, "attn.context").gemm, (GemmShape{8, 32, 16, 32}));
  EXPECT_EQ(*Op(fw, "mlp.fc1").gemm, (GemmShape{1, 64, 256, 64}));
  // dX = dY·W: T × in, reducing over out; dW = Xᵀ·dY: in × out, reducing over T.
  EXPECT_EQ(*Op(bw, "attn.qkv.grad_input").gemm, (GemmShape{1, 64, 64, 192}));
  EXPECT_EQ(*Op(bw, "attn.qkv.grad_weight").gemm, (GemmShape{1, 64, 192, 64}));
  EXPECT_EQ(*Op(bw, "mlp.fc2.grad_input").gemm, (GemmShape{1, 64, 256, 64}));
  EXPECT_EQ(*Op(bw, "mlp.fc2.grad_weight").gemm, (GemmShape{1, 256, 64, 64}));
  // scores = Q·Kᵀ: dQ = dS·K (s × d, reducing s); dK = Qᵀ·dS as (d × s, reducing s).
  EXPECT_EQ(*Op(bw, "attn.scores.grad_a").gemm, (GemmShape{8, 32, 16, 32}));
  EXPECT_EQ(*Op(bw, "attn.scores.grad_b").gemm, (GemmShape{8, 16, 32, 32}));
  // context = P·V: dP = dC·Vᵀ (s × s, reducing d); dV = Pᵀ·dC (s × d, reducing s).
  EXPECT_EQ(*Op(bw, "attn.context.grad_a").gemm, (GemmShape{8, 32, 32, 16}));
  EXPECT_EQ(*Op(bw, "attn.context.grad_b").gemm, (GemmShape{8, 32, 16, 32}));
  // The chain rule runs the forward data flow backwards.
  EXPECT_TRUE(Reaches(bw, "mlp.fc2.grad_input", "mlp.fc1.grad_input"));
  EXPECT_TRUE(Reaches(bw, "mlp.fc1.grad_input", "attn.dense.grad_input"));
  EXPECT_TRUE(Reaches(bw, "attn.context.grad_a", "attn.softmax.backward"));
  EXPECT_TRUE(Reaches(bw, "attn.softmax.backward", "attn.scores.grad_a"));
  EXPECT_TRUE(Reaches(bw, "attn.scores.grad_a", "attn.qkv.grad_input"));
  EXPECT_FALSE(Reaches(bw, "attn.qkv.grad_input", "mlp.fc2.grad_input"));
  // Weight gradients are side branches: nothing waits for them.
  EXPECT_TRUE(bw.Successors()[bw.FindOp("mlp.fc1.grad_weight")].empty());
  // The backward graph takes the gradient of the block output and returns the input's gradient,
  // the sum of the residual path and the ln1 path.
  ASSERT_EQ(bw.Outputs().size(), 1u);
  EXPECT_EQ(bw.GetTensor(bw.Outputs()[0]).elements, 64 * 64);
  EXPECT_EQ(bw.Producer(bw.Outputs()[0]), bw.FindOp("input.grad_sum"));
  ASSERT_EQ(bw.InputTensors().empty(), false);
  EXPECT_GE(bw.FindTensor("grad:residual2"), 0);
}

TEST(Workloads, FusionFollowsTheRule) {
  const LayerGraph fused = Build("tiny-gpt", 2, true);
  const LayerGraph plain = Build("tiny-gpt", 2, false);
  const OperatorGraph& f = Layer(fused, "block").forward;
  // Worked out by hand from the rule in fusion.hpp for a pre-LN GPT block.
  const std::vector<std::pair<std::string, std::vector<std::string>>> expected = {
      {"ln1", {"layernorm"}},
      {"attn.qkv", {"bias_add"}},
      {"attn.scores", {"scale", "causal_mask"}},
      {"attn.softmax", {"softmax"}},
      {"attn.dropout", {"dropout"}},
      {"attn.context", {}},
      {"attn.dense", {"bias_add", "dropout", "add"}},
      {"ln2", {"layernorm"}},
      {"mlp.fc1", {"bias_add", "gelu"}},
      {"mlp.fc2", {"bias_add", "dropout", "add"}},
  };
  ASSERT_EQ(f.Ops().size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    const Operator& op = f.GetOp(i);
    EXPECT_EQ(op.name, expected[i].first);
    std::vector<std::string> functions;
    for (const auto& w : op.vector) functions.push_back(w.function);
    EXPECT_EQ(functions, expected[i].second) << op.name;
  }
  EXPECT_EQ(Op(f, "mlp.fc1").Core(), CoreClass::kFused);
  EXPECT_EQ(Op(f, "attn.context").Core(), CoreClass::kTensor);
  EXPECT_EQ(Op(f, "ln2").Core(), CoreClass::kVector);
  // Fusion moves no work and changes no memory figure; it saves memory traffic.
  for (size_t u = 0; u < fused.unique_layers.size(); ++u) {
    for (auto pass : {&UniqueLayer::forward, &UniqueLayer::backward}) {
      const OperatorGraph& a = fused.unique_layers[u].*pass;
      const OperatorGraph& b = plain.unique_layers[u].*pass;
      EXPECT_EQ(a.GemmFlops(), b.GemmFlops());
      std::int64_t va = 0, vb = 0, wa = 0, wb = 0;
      for (const auto& op : a.Ops()) va += op.VectorElements(), wa += a.BytesWritten(op);
      for (const auto& op : b.Ops()) vb += op.VectorElements(), wb += b.BytesWritten(op);
      EXPECT_EQ(va, vb);
      EXPECT_LE(wa, wb);
    }
    EXPECT_EQ(fused.unique_layers[u].activation_bytes, plain.unique_layers[u].activation_bytes);
  }
  // Fused fc1 writes the GELU input (saved for backward) and output, not the pre-bias product:
  // 2 tensors of T·FFN = 64·256 two-byte values.
  EXPECT_EQ(f.BytesWritten(Op(f, "mlp.fc1")), 2 * 64 * 256 * 2);
}

TEST(Workloads, FamilyStructure) {
  // Llama: RMSNorm, SwiGLU, rotary, separate Q/K/V whose input gradients are summed, no dropout.
  const LayerGraph llama = Build("llama2-7b", 1, false);
  const OperatorGraph& fw = Layer(llama, "block").forward;
  EXPECT_GE(fw.FindOp("mlp.silu"), 0);
  EXPECT_GE(fw.FindOp("attn.rotary_q"), 0);
  EXPECT_EQ(Op(fw, "ln1").vector[0].function, "rmsnorm");
  for (const auto& op : fw.Ops()) EXPECT_NE(op.kind, OpKind::kDropout) << op.name;
  const OperatorGraph& bw = Layer(llama, "block").backward;
  EXPECT_EQ(Op(bw, "ln1.grad_sum").vector[0].elements, 2 * 4096 * 4096);  // 3 summands
  // Untied head: owns its table; tied GPT-2 head holds a copy of the embedding's.
  EXPECT_EQ(Layer(llama, "head").parameters, 32000 * 4096 + 4096);
  const LayerGraph gpt2 = Build("gpt2-xl", 1);
  EXPECT_EQ(Layer(gpt2, "head").parameters, 3200);
  EXPECT_EQ(Layer(gpt2, "head").tied_parameters, 50257 * 1600);
  // BERT: post-LN, pooler forward only (no gradient), segment embeddings, embedding norm.
  const LayerGraph bert = Build("bert-large", 1);
  // The pooler reads the first token of each sequence: b rows, not b·s.
  EXPECT_EQ(*Op(Layer(bert, "head").forward, "head.pooler").gemm, (GemmShape{1, 1, 1024, 1024}));
  for (const auto& op : Layer(bert, "head").backward.Ops()) {
    EXPECT_EQ(op.name.find("pooler"), std::string::npos) << op.name;
  }
  EXPECT_GE(Layer(bert, "embedding").forward.FindOp("embed.token_type"), 0);
  EXPECT_GE(Layer(bert, "embedding").forward.FindOp("embed.norm"), 0);
  // OPT-350M: the 512-wide embeddings are projected in and out.
  const LayerGraph opt = Build("opt-350m", 1);
  EXPECT_EQ(Op(Layer(opt, "embedding").forward, "embed.project_in").gemm->k, 512);
  EXPECT_EQ(Op(Layer(opt, "head").forward, "head.lm").gemm->k, 512);
}

TEST(Workloads, MemoryFiguresAndOptimizer) {
  const LayerGraph adam = Build("megatron-8.3b", 1, true, "adam-mixed");
  const LayerGraph sgd = Build("megatron-8.3b", 1, true, "sgd");
  const std::int64_t p = 12 * 3072LL * 3072 + 13 * 3072;  // one block
  const UniqueLayer& block = Layer(adam, "block");
  EXPECT_EQ(block.parameters, p);
  EXPECT_EQ(block.weight_bytes, 2 * p);
  EXPECT_EQ(block.gradient_bytes, 4 * p);         // fp32 gradients (Megatron mixed precision)
  EXPECT_EQ(block.optimizer_state_bytes, 12 * p);  // fp32 master + two fp32 moments
  // 18 bytes per parameter in all (Korthikanti et al., Narayanan et al.: 2 + 4 + 12).
  EXPECT_EQ(block.weight_bytes + block.gradient_bytes + block.optimizer_state_bytes, 18 * p);
  EXPECT_EQ(Layer(sgd, "block").optimizer_state_bytes, 0);
  EXPECT_EQ(Layer(sgd, "block").gradient_bytes, 2 * p);
  // Adam with bf16 moments (Megatron-LM's precision-aware optimizer, --exp-avg-dtype bf16
  // --exp-avg-sq-dtype bf16): the fp32 master (4) and two bf16 moments (2 + 2), the fp32
  // gradients as before: 14 bytes per parameter; its step touches 2 + 4 + 8 bytes of each.
  const LayerGraph bf16_moments = Build("megatron-8.3b", 1, true, "adam-bf16-moments");
  const UniqueLayer& bf16 = Layer(bf16_moments, "block");
  EXPECT_EQ(bf16.optimizer_state_bytes, 8 * p);
  EXPECT_EQ(bf16.gradient_bytes, 4 * p);
  EXPECT_EQ(bf16.weight_bytes + bf16.gradient_bytes + bf16.optimizer_state_bytes, 14 * p);
  EXPECT_EQ(bf16.optimizer_step.weight_bytes, (2 + 4 + 8) * p);
  EXPECT_EQ(bf16.optimizer_step.vector.at(0).function, "adam");
  EXPECT_EQ(block.optimizer_step.vector.at(0).elements, p);
  EXPECT_EQ(block.optimizer_step.vector.at(0).function, "adam");
  // Edges carry the hidden state of one micro-batch: b·s·h·2 bytes.
  ASSERT_EQ(adam.edges.size(), adam.layers.size() - 1);
  EXPECT_EQ(adam.edges[0].bytes, 1024 * 3072 * 2);
  EXPECT_EQ(Build("megatron-8.3b", 4).edges[5].bytes, 4 * 1024 * 3072 * 2);
  // Every block instance shares one unique layer.
  EXPECT_EQ(adam.InstanceCounts(), (std::vector<int>{1, 72, 1}));
  EXPECT_EQ(adam.Validate(), "");
}

TEST(Workloads, SequenceLengthOverrideAndBadOptions) {
  GraphOptions o;
  o.sequence_length = 128;
  const ModelSpec m = LoadModelSpec(Workload("gpt2-xl"));
  const LayerGraph g = BuildLayerGraph(m, o);
  EXPECT_EQ(g.sequence_length, 128);
  EXPECT_EQ(Layer(g, "block").forward.GemmFlops(), 24 * 128 * 1600LL * 1600 + 4 * 128 * 128 * 1600);
  o.sequence_length = 2048;  // GPT-2 has 1024 learned positions
  EXPECT_THROW(BuildLayerGraph(m, o), InvalidArgumentError);
  o.sequence_length = 0;
  o.micro_batch = 0;
  EXPECT_THROW(BuildLayerGraph(m, o), InvalidArgumentError);
}

// Rewritten: tensors and ops pass through the callbacks by index, the outputs stay marked, and
// AddTensor's and AddOp's checks apply to what the callbacks return.
TEST(Workloads, RewrittenGraphKeepsItsShapeAndItsChecks) {
  OperatorGraph g;
  const int x = g.AddTensor("x", 10, 2);
  const int y = g.AddTensor("y", 10, 2);
  Operator op;
  op.name = "a";
  op.inputs = {x};
  op.outputs = {y};
  g.AddOp(op);
  g.MarkOutput(y);
  std::vector<int> seen;
  const OperatorGraph r = Rewritten(
      g, [](int t, Tensor& tensor) { tensor.elements *= t + 2; },
      [&](int j, Operator& o) {
        seen.push_back(j);
        o.fp8 = true;
      });
  EXPECT_EQ(seen, std::vector<int>{0});
  ASSERT_EQ(r.Tensors().size(), 2u);
  EXPECT_EQ(r.GetTensor(x).elements, 20);
  EXPECT_EQ(r.GetTensor(y).elements, 30);
  EXPECT_EQ(r.GetTensor(y).dtype_bytes, 2);
  EXPECT_TRUE(r.GetOp(0).fp8);
  EXPECT_EQ(r.Producer(y), 0);
  EXPECT_TRUE(r.IsOutput(y));
  EXPECT_FALSE(g.GetOp(0).fp8);  // the original is left as it was
  EXPECT_THROW(Rewritten(
                   g, [](int, Tensor& t) { t.elements = -1; }, [](int, Operator&) {}),
               InvalidArgumentError);
  EXPECT_THROW(Rewritten(
                   g, [](int, Tensor&) {}, [&](int, Operator& o) { o.outputs = {x}; }),
               InvalidArgumentError);  // it would read the tensor it writes
}

}  // namespace
}  // namespace phaze
