#include "phaze/graph/graph_builder.hpp"

#include <cmath>
#include <cstdio>
#include <utility>
#include <fmt/printf.h>

#include "phaze/core/error.hpp"
#include "phaze/core/limits.hpp"
#include "phaze/graph/backward.hpp"
#include "phaze/graph/fusion.hpp"

namespace phaze {

namespace {

using A = Axis;

// The axes of a tensor of token rows × `features` (or of sequence rows for the pooler).
OpAxes Rows(Axis features, Axis rows = Axis::kTokens) { return OpAxes::Of({rows, features}); }
// … whose row reductions run along `row`.
OpAxes RowsAlong(Axis features, Axis row) {
  OpAxes axes = Rows(features);
  axes.row = row;
  return axes;
}

constexpr std::int64_t kIndexBytes = 8;  // token / position ids (int64, as PyTorch feeds them)
constexpr std::int64_t kMaskBytes = 1;   // dropout masks (bool)
constexpr std::int64_t kLossBytes = 4;   // cross-entropy runs in fp32 (Megatron; autocast in HF)

// Appends the ops of one layer to a forward operator graph. Every helper returns the tensor it
// produces; the op and its main output tensor share a name. Parameters are counted as weights are
// created (a tied weight is read, not owned).
class LayerWriter {
 public:
  LayerWriter(const ModelSpec& m, std::int64_t micro_batch, std::int64_t seq)
      : m_(m), b_(micro_batch), s_(seq), tokens_(micro_batch * seq), dt_(m.dtype_bytes) {}

  OperatorGraph graph;
  std::int64_t parameters = 0;
  std::int64_t tied_parameters = 0;
  std::int64_t expert = -1;  // the MoE expert the ops being written belong to
  bool attention_core = false;  // the ops being written are the attention core

  std::int64_t Tokens() const { return tokens_; }
  std::int64_t Batch() const { return b_; }
  std::int64_t Seq() const { return s_; }

  int Input(const std::string& name, std::int64_t elements, std::int64_t dtype, bool grad = true) {
    return graph.AddTensor(name, elements, dtype, grad);
  }

  // y = x·Wᵀ (+ b) on every row of x (its elements / in): {1, rows, out, in}, along the axes
  // {rows, out_axis, in_axis}; saves x for the weight gradient.
  int Linear(const std::string& name, int x, std::int64_t in, std::int64_t out, bool bias,
             Axis in_axis, Axis out_axis, bool tied_weight = false, Axis rows_axis = A::kTokens) {
    const std::int64_t weights = in * out;
    const std::int64_t rows = graph.GetTensor(x).elements / in;
    (tied_weight ? tied_parameters : parameters) += weights;
    OpAxes axes = Rows(out_axis, rows_axis);
    axes.m = rows_axis;
    axes.n = out_axis;
    axes.k = in_axis;
    Operator op = Op(name, OpKind::kGemm, axes);
    op.gemm = GemmShape{1, rows, out, in};
    op.inputs = {x};
    op.saved = {x};
    op.weight_bytes = weights * dt_;
    int y = Emit(std::move(op), rows * out);
    if (!bias) return y;
    parameters += out;
    Operator add = Op(name + ".bias", OpKind::kElementwise, Rows(out_axis, rows_axis));
    add.vector = {{"bias_add", rows * out, 1}};
    add.inputs = {y};
    add.weight_bytes = out * dt_;
    return Emit(std::move(add), rows * out);
  }

  int BatchedGemm(const std::string& name, int a, int b, GemmShape shape, OpAxes axes) {
    Operator op = Op(name, OpKind::kBatchedGemm, axes);
    op.gemm = shape;
    op.inputs = {a, b};
    op.saved = {a, b};
    return Emit(std::move(op), shape.batch * shape.m * shape.n);
  }

  int Norm(const std::string& name, int x, std::int64_t width) {
    const std::int64_t weights = m_.norm == NormKind::kRmsNorm ? width : 2 * width;
    parameters += weights;
    const std::int64_t n = graph.GetTensor(x).elements;
    Operator op = Op(name, OpKind::kNorm, RowsAlong(A::kHidden, A::kHidden));
    op.vector = {{std::string(ToString(m_.norm)), n, width}};
    op.inputs = {x};
    op.saved = {x};
    op.weight_bytes = weights * dt_;
    return Emit(std::move(op), n);
  }

  enum class Save { kNothing, kInput, kOutput };
  int Unary(const std::string& name, OpKind kind, const std::string& function, int x, Save save,
            OpAxes axes, std::int64_t row = 1) {
    const std::int64_t n = graph.GetTensor(x).elements;
    Operator op = Op(name, kind, axes);
    op.vector = {{function, n, row}};
    op.inputs = {x};
    if (save == Save::kInput) op.saved = {x};
    return Emit(std::move(op), n, save == Save::kOutput);
  }

  int Activation(const std::string& name, const std::string& function, int x, OpAxes axes) {
    // ReLU and tanh differentiate from their output, GELU and SiLU from their input.
    const Save save = (function == "relu" || function == "tanh") ? Save::kOutput : Save::kInput;
    return Unary(name, OpKind::kElementwise, function, x, save, axes);
  }

  int Dropout(const std::string& name, int x, double p, OpAxes axes) {
    if (p <= 0) return x;
    const std::int64_t n = graph.GetTensor(x).elements;
    Operator op = Op(name, OpKind::kDropout, axes);
    op.vector = {{"dropout", n, 1}};
    op.inputs = {x};
    const int mask = Input(name + ".mask", n, kMaskBytes, /*grad=*/false);
    op.outputs = {mask};
    op.saved = {mask};
    return Emit(std::move(op), n);
  }

  // Element-wise sum of same-sized tensors (residual adds, embedding sums).
  int Add(const std::string& name, std::vector<int> xs, std::int64_t elements) {
    Operator op = Op(name, OpKind::kElementwise, Rows(A::kHidden));
    op.vector = {{"add", elements * static_cast<std::int64_t>(xs.size() - 1), 1}};
    op.inputs = std::move(xs);
    return Emit(std::move(op), elements);
  }

  int Mul(const std::string& name, int a, int b, OpAxes axes) {
    const std::int64_t n = graph.GetTensor(a).elements;
    Operator op = Op(name, OpKind::kElementwise, axes);
    op.vector = {{"mul", n, 1}};
    op.inputs = {a, b};
    op.saved = {a, b};
    return Emit(std::move(op), n);
  }

  // Rows of a `rows × dim` table gathered for `lookups` ids; `table` is what the rows are (the
  // vocabulary, or positions: kNone).
  int Gather(const std::string& name, int ids, std::int64_t rows, std::int64_t dim, Axis table) {
    parameters += rows * dim;
    const std::int64_t n = graph.GetTensor(ids).elements * dim;
    OpAxes axes = RowsAlong(A::kHidden, A::kHidden);
    if (table != A::kNone) axes.Add(table);
    Operator op = Op(name, OpKind::kEmbedding, axes);
    op.vector = {{"embedding", n, dim}};
    op.inputs = {ids};
    op.saved = {ids};
    op.weight_bytes = rows * dim * dt_;
    return Emit(std::move(op), n);
  }

  // A view producing several tensors (QKV split) or a smaller one (first-token select).
  std::vector<int> View(const std::string& name, int x,
                        const std::vector<std::pair<std::string, std::int64_t>>& parts,
                        OpAxes axes) {
    Operator op = Op(name, OpKind::kView, axes);
    op.inputs = {x};
    std::vector<int> outs;
    for (const auto& [suffix, elements] : parts)
      outs.push_back(Input(name + "." + suffix, elements, dt_));
    op.outputs = outs;
    graph.AddOp(std::move(op));
    return outs;
  }

  // A view joining several tensors into one (no data movement).
  int Concat(const std::string& name, std::vector<int> xs, std::int64_t elements) {
    Operator op = Op(name, OpKind::kView, Rows(A::kHidden));
    op.inputs = std::move(xs);
    return Emit(std::move(op), elements);
  }

  // Any other vector op: `function` on `elements`, writing `out_elements`.
  int Generic(const std::string& name, OpKind kind, const std::string& function,
              std::int64_t elements, std::int64_t row, std::vector<int> inputs,
              std::vector<int> saved, std::int64_t out_elements, OpAxes axes) {
    Operator op = Op(name, kind, axes);
    op.vector = {{function, elements, row}};
    op.inputs = std::move(inputs);
    op.saved = std::move(saved);
    return Emit(std::move(op), out_elements);
  }

  // Cross-entropy over `classes` per token: one fp32 scalar; keeps the fp32 probabilities.
  int Loss(const std::string& name, int logits, std::int64_t classes) {
    const std::int64_t n = graph.GetTensor(logits).elements;
    Operator op = Op(name, OpKind::kLoss, RowsAlong(A::kVocab, A::kVocab));
    op.vector = {{"cross_entropy", n, classes}};
    op.inputs = {logits};
    const int probs = Input(name + ".probabilities", n, kLossBytes, /*grad=*/false);
    op.outputs = {probs};
    op.saved = {probs};
    const int loss = graph.AddTensor(name, 1, kLossBytes);
    op.outputs.insert(op.outputs.begin(), loss);
    graph.AddOp(std::move(op));
    return loss;
  }

 private:
  Operator Op(const std::string& name, OpKind kind, OpAxes axes) const {
    Operator op;
    op.name = name;
    op.kind = kind;
    op.axes = axes;
    op.expert = expert;
    op.attention_core = attention_core;
    return op;
  }

  // Adds the op with a new main output tensor (named after the op) in front of its outputs.
  int Emit(Operator op, std::int64_t elements, bool save_output = false) {
    const int y = graph.AddTensor(op.name, elements, dt_);
    op.outputs.insert(op.outputs.begin(), y);
    if (save_output) op.saved.push_back(y);
    graph.AddOp(std::move(op));
    return y;
  }

  const ModelSpec& m_;
  std::int64_t b_, s_, tokens_, dt_;
};

int Attention(LayerWriter& w, const ModelSpec& m, int x) {
  const std::int64_t h = m.hidden, a = m.heads, d = m.HeadDim(), qw = m.AttentionWidth(),
                     kv = m.kv_heads * d;
  const std::int64_t T = w.Tokens(), b = w.Batch(), s = w.Seq();
  int q, k, v;
  if (m.fused_qkv) {
    int qkv = w.Linear("attn.qkv", x, h, qw + 2 * kv, m.qkv_bias, A::kHidden, A::kHeads);
    auto parts = w.View("attn.split", qkv, {{"q", T * qw}, {"k", T * kv}, {"v", T * kv}},
                        Rows(A::kHeads));
    q = parts[0], k = parts[1], v = parts[2];
  } else {
    q = w.Linear("attn.q", x, h, qw, m.qkv_bias, A::kHidden, A::kHeads);
    k = w.Linear("attn.k", x, h, kv, m.qkv_bias, A::kHidden, A::kHeads);
    v = w.Linear("attn.v", x, h, kv, m.qkv_bias, A::kHidden, A::kHeads);
  }
  if (m.positions == PositionKind::kRotary) {
    // Rotates rotary_fraction of each head's dimensions; the rest pass through.
    auto rotary = [&](const std::string& name, int t) {
      const std::int64_t n = w.graph.GetTensor(t).elements;
      const auto rotated = static_cast<std::int64_t>(std::llround(m.rotary_fraction * n));
      return w.Generic(name, OpKind::kElementwise, "rotary", rotated, 1, {t}, {}, n,
                       Rows(A::kHeads));
    };
    q = rotary("attn.rotary_q", q);
    k = rotary("attn.rotary_k", k);
  }
  using Save = LayerWriter::Save;
  w.attention_core = true;  // scores … context: what selective recomputation re-runs
  // Scores and probabilities: one plane per head, a query's row over the keys.
  const OpAxes planes = OpAxes::Of({A::kHeads, A::kTokens, A::kKeys});
  OpAxes scores_axes = planes, context_axes = OpAxes::Of({A::kHeads, A::kTokens, A::kHeadDim});
  scores_axes.batch = context_axes.batch = A::kHeads;
  scores_axes.m = context_axes.m = A::kTokens;
  scores_axes.n = A::kKeys, scores_axes.k = A::kHeadDim;
  context_axes.n = A::kHeadDim, context_axes.k = A::kKeys;
  int scores = w.BatchedGemm("attn.scores", q, k, {b * a, s, s, d}, scores_axes);
  int scaled =
      w.Unary("attn.scale", OpKind::kElementwise, "scale", scores, Save::kNothing, planes);
  int masked = w.Unary("attn.mask", OpKind::kElementwise, m.causal ? "causal_mask" : "mask", scaled,
                       Save::kNothing, planes);
  OpAxes rows_of_keys = planes;
  rows_of_keys.row = A::kKeys;
  int probs =
      w.Unary("attn.softmax", OpKind::kSoftmax, "softmax", masked, Save::kOutput, rows_of_keys, s);
  probs = w.Dropout("attn.dropout", probs, m.dropout_attention, planes);
  int context = w.BatchedGemm("attn.context", probs, v, {b * a, s, d, s}, context_axes);
  w.attention_core = false;
  return w.Linear("attn.dense", context, qw, h, m.bias, A::kHeads, A::kHidden);
}

// A feed-forward network of width f on x.
int FeedForward(LayerWriter& w, const ModelSpec& m, int x, const std::string& prefix,
                std::int64_t f) {
  const std::int64_t h = m.hidden;
  if (m.GatedMlp()) {
    int gate = w.Linear(prefix + ".gate", x, h, f, m.bias, A::kHidden, A::kFfn);
    int up = w.Linear(prefix + ".up", x, h, f, m.bias, A::kHidden, A::kFfn);
    int act = w.Activation(prefix + "." + m.MlpFunction(), m.MlpFunction(), gate, Rows(A::kFfn));
    int prod = w.Mul(prefix + ".mul", act, up, Rows(A::kFfn));
    return w.Linear(prefix + ".down", prod, f, h, m.bias, A::kFfn, A::kHidden);
  }
  int fc1 = w.Linear(prefix + ".fc1", x, h, f, m.bias, A::kHidden, A::kFfn);
  int act = w.Activation(prefix + "." + m.MlpFunction(), m.MlpFunction(), fc1, Rows(A::kFfn));
  return w.Linear(prefix + ".fc2", act, f, h, m.bias, A::kFfn, A::kHidden);
}

// Mixture of experts: router, top-k gating, dispatch of each token's top_k copies to the experts'
// buffers, one feed-forward branch per expert (parallel branches the ILP can overlap), collection
// and the gate-weighted combine.
int MixtureOfExperts(LayerWriter& w, const ModelSpec& m, int x) {
  const std::int64_t h = m.hidden, E = m.experts, k = m.top_k, T = w.Tokens();
  const std::int64_t per_expert = static_cast<std::int64_t>(
      std::ceil(m.capacity_factor * static_cast<double>(T * k) / static_cast<double>(E)));
  using Save = LayerWriter::Save;
  int logits = w.Linear("mlp.router", x, h, E, false, A::kHidden, A::kExperts);
  int probs = w.Unary("mlp.router_softmax", OpKind::kSoftmax, "softmax", logits, Save::kOutput,
                      RowsAlong(A::kExperts, A::kExperts), E);
  int gates = w.Generic("mlp.top_k", OpKind::kElementwise, "top_k", T * E, E, {probs}, {}, T * k,
                        RowsAlong(A::kExperts, A::kExperts));
  int routed = w.Generic("mlp.dispatch", OpKind::kElementwise, "permute", T * k * h, h, {x, gates},
                         {gates}, E * per_expert * h, RowsAlong(A::kHidden, A::kHidden));
  std::vector<std::pair<std::string, std::int64_t>> buffers;
  for (std::int64_t e = 0; e < E; ++e)
    buffers.emplace_back("expert" + std::to_string(e), per_expert * h);
  std::vector<int> inputs = w.View("mlp.experts_in", routed, buffers, Rows(A::kHidden));
  std::vector<int> outputs;
  for (std::int64_t e = 0; e < E; ++e) {
    w.expert = e;
    outputs.push_back(
        FeedForward(w, m, inputs[e], "mlp.expert" + std::to_string(e), m.expert_ffn_hidden));
  }
  w.expert = -1;
  int collected = w.Concat("mlp.experts_out", outputs, E * per_expert * h);
  return w.Generic("mlp.combine", OpKind::kElementwise, "combine", T * k * h, h, {collected, gates},
                   {collected, gates}, T * h, RowsAlong(A::kHidden, A::kHidden));
}

int Mlp(LayerWriter& w, const ModelSpec& m, int x) {
  if (m.experts > 0) return MixtureOfExperts(w, m, x);
  return FeedForward(w, m, x, "mlp", m.ffn_hidden);
}

UniqueLayer EmbeddingLayer(const ModelSpec& m, std::int64_t b, std::int64_t s) {
  LayerWriter w(m, b, s);
  const std::int64_t T = b * s, h = m.hidden, e = m.EmbeddingDim();
  int ids = w.Input("token_ids", T, kIndexBytes, false);
  int x = w.Gather("embed.word", ids, m.vocab, e, A::kVocab);
  if (e != h) x = w.Linear("embed.project_in", x, e, h, false, A::kHidden, A::kHidden);
  std::vector<int> parts = {x};
  if (m.positions == PositionKind::kLearned) {
    int pos = w.Input("position_ids", s, kIndexBytes, false);
    parts.push_back(w.Gather("embed.position", pos, m.max_positions, h, A::kNone));
  }
  if (m.token_types > 0) {
    int types = w.Input("token_type_ids", T, kIndexBytes, false);
    parts.push_back(w.Gather("embed.token_type", types, m.token_types, h, A::kNone));
  }
  if (parts.size() > 1) x = w.Add("embed.add", parts, T * h);
  if (m.embedding_scale) {
    x = w.Unary("embed.scale", OpKind::kElementwise, "scale", x, LayerWriter::Save::kNothing,
                Rows(A::kHidden));
  }
  if (m.embedding_norm) x = w.Norm("embed.norm", x, h);
  x = w.Dropout("embed.dropout", x, m.dropout_embedding, Rows(A::kHidden));
  w.graph.MarkOutput(x);
  UniqueLayer layer;
  layer.name = "embedding";
  layer.kind = LayerKind::kEmbedding;
  layer.forward = std::move(w.graph);
  layer.parameters = w.parameters;
  return layer;
}

UniqueLayer BlockLayer(const ModelSpec& m, std::int64_t b, std::int64_t s) {
  LayerWriter w(m, b, s);
  const std::int64_t T = b * s, h = m.hidden;
  const int x = w.Input("input", T * h, m.dtype_bytes);
  int y;
  if (m.parallel_block) {
    // GPT-NeoX / GPT-J: y = x + attention(ln1(x)) + mlp(ln2(x)).
    int att = Attention(w, m, w.Norm("ln1", x, h));
    att = w.Dropout("attn.out_dropout", att, m.dropout_hidden, Rows(A::kHidden));
    int mlp = Mlp(w, m, w.Norm("ln2", x, h));
    mlp = w.Dropout("mlp.dropout", mlp, m.dropout_hidden, Rows(A::kHidden));
    y = w.Add("residual", {x, att, mlp}, T * h);
  } else if (m.norm_position == NormPosition::kPre) {
    int att = Attention(w, m, w.Norm("ln1", x, h));
    att = w.Dropout("attn.out_dropout", att, m.dropout_hidden, Rows(A::kHidden));
    int r1 = w.Add("residual1", {x, att}, T * h);
    int mlp = Mlp(w, m, w.Norm("ln2", r1, h));
    mlp = w.Dropout("mlp.dropout", mlp, m.dropout_hidden, Rows(A::kHidden));
    y = w.Add("residual2", {r1, mlp}, T * h);
  } else {
    int att = Attention(w, m, x);
    att = w.Dropout("attn.out_dropout", att, m.dropout_hidden, Rows(A::kHidden));
    int n1 = w.Norm("ln1", w.Add("residual1", {x, att}, T * h), h);
    int mlp = Mlp(w, m, n1);
    mlp = w.Dropout("mlp.dropout", mlp, m.dropout_hidden, Rows(A::kHidden));
    y = w.Norm("ln2", w.Add("residual2", {n1, mlp}, T * h), h);
  }
  w.graph.MarkOutput(y);
  UniqueLayer layer;
  layer.name = "block";
  layer.kind = LayerKind::kBlock;
  layer.forward = std::move(w.graph);
  layer.parameters = w.parameters;
  layer.tensor_parallel = true;
  return layer;
}

UniqueLayer HeadLayer(const ModelSpec& m, std::int64_t b, std::int64_t s) {
  LayerWriter w(m, b, s);
  const std::int64_t T = b * s, h = m.hidden, e = m.EmbeddingDim();
  int x = w.Input("input", T * h, m.dtype_bytes);
  if (m.final_norm) x = w.Norm("head.norm", x, h);
  if (m.pooler) {
    // Forward only: its output would feed a next-sentence head, which the model has not.
    const OpAxes pooled_axes = Rows(A::kHidden, A::kSequences);
    int first = w.View("head.first_token", x, {{"out", b * h}}, pooled_axes)[0];
    int pooled = w.Linear("head.pooler", first, h, h, true, A::kHidden, A::kHidden, false,
                          A::kSequences);
    w.Activation("head.pooler_tanh", "tanh", pooled, pooled_axes);
  }
  if (m.lm_head_transform) {
    int t = w.Linear("head.transform", x, h, h, m.bias, A::kHidden, A::kHidden);
    t = w.Activation("head.transform_act", m.MlpFunction(), t, Rows(A::kHidden));
    x = w.Norm("head.transform_norm", t, h);
  }
  if (e != h) x = w.Linear("head.project_out", x, h, e, false, A::kHidden, A::kHidden);
  int logits =
      w.Linear("head.lm", x, e, m.vocab, m.lm_head_bias, A::kHidden, A::kVocab, m.tied_embeddings);
  w.graph.MarkOutput(w.Loss("head.loss", logits, m.vocab));
  UniqueLayer layer;
  layer.name = "head";
  layer.kind = LayerKind::kHead;
  layer.forward = std::move(w.graph);
  layer.parameters = w.parameters;
  layer.tied_parameters = w.tied_parameters;
  layer.tensor_parallel = true;
  return layer;
}

}  // namespace

void CompleteUniqueLayer(UniqueLayer& layer, bool fusion, std::int64_t dtype_bytes,
                         const OptimizerSpec& optimizer) {
  layer.backward = DeriveBackward(layer.forward);
  if (fusion) {
    layer.forward = FuseOperators(layer.forward);
    layer.backward = FuseOperators(layer.backward);
  }
  FinalizeLayerMemory(layer, dtype_bytes, optimizer);
}

namespace {

std::string Scientific(double v) {
  std::string text = fmt::sprintf("%.2g", v);
  return text;
}

// Refuses a workload whose counts would not fit the 64-bit integers the graph is built in: the
// FLOPs of a training step of one micro-batch (forward, backward, a recompute) and the bytes of its
// parameters with gradients and optimizer state, estimated in long double before anything is
// built. Every element, byte and FLOP count of an op is below these totals, so none overflows.
void CheckMagnitude(const ModelSpec& model, std::int64_t b, std::int64_t s) {
  using R = long double;
  const R h = model.hidden, tokens = R(b) * s, layers = model.layers;
  const R matrices = model.GatedMlp() ? 3 : 2;
  const R mlp = matrices * R(model.ffn_hidden) * h;
  const R expert_mlp = model.experts > 0 ? matrices * R(model.expert_ffn_hidden) * h : mlp;
  const R attention = 2 * h * (model.AttentionWidth() + R(model.kv_heads) * model.HeadDim());
  const R active_mlp = model.experts > 0 ? model.top_k * expert_mlp : mlp;
  const R stored_mlp = model.experts > 0 ? model.experts * expert_mlp : mlp;
  const R vocab_table = R(model.vocab) * model.EmbeddingDim();
  const R forward = 2 * tokens * (layers * (attention + active_mlp) + vocab_table) +
                    4 * layers * R(b) * s * s * model.AttentionWidth();
  const R parameters = layers * (attention + stored_mlp) + vocab_table +
                       R(model.max_positions + model.token_types) * h;
  const R state = parameters * (model.dtype_bytes + 16);
  const auto too_large = [&](R value, const std::string& what) {
    if (value <= limits::kCount) return;
    throw InvalidArgumentError(
        (model.source.empty() ? model.name : model.source) + ": " + what + " is about " +
        Scientific(static_cast<double>(value)) + ", above the 2^62 (4.6e18) phaze counts in; " +
        "use a smaller micro-batch (" + std::to_string(b) + "), sequence length (" +
        std::to_string(s) + ") or model");
  };
  too_large(4 * forward, "a training step of one micro-batch in FLOPs");
  too_large(state, "the bytes of its weights, gradients and optimizer state");
}

}  // namespace

LayerGraph BuildLayerGraph(const ModelSpec& model, const GraphOptions& options) {
  if (options.micro_batch < 1 || options.micro_batch > limits::kMicroBatch) {
    throw InvalidArgumentError("micro-batch size must be in [1, " +
                               std::to_string(limits::kMicroBatch) + "], got " +
                               std::to_string(options.micro_batch));
  }
  const std::int64_t s =
      options.sequence_length > 0 ? options.sequence_length : model.sequence_length;
  if (s > limits::kSequence) {
    throw InvalidArgumentError("sequence length must be at most " +
                               std::to_string(limits::kSequence) + ", got " + std::to_string(s));
  }
  CheckMagnitude(model, options.micro_batch, s);
  if (model.positions == PositionKind::kLearned && s > model.max_positions) {
    throw InvalidArgumentError("sequence length " + std::to_string(s) + " exceeds " + model.name +
                               "'s max_positions " + std::to_string(model.max_positions));
  }
  const std::int64_t b = options.micro_batch;
  LayerGraph g;
  g.model = model.name;
  g.family = model.family;
  g.micro_batch = b;
  g.sequence_length = s;
  g.dtype_bytes = model.dtype_bytes;
  g.fused = options.fusion;
  g.optimizer = options.optimizer;
  g.published_parameters = model.published_parameters;
  g.heads = model.heads;
  g.kv_heads = model.kv_heads;
  g.vocab = model.vocab;

  g.unique_layers = {EmbeddingLayer(model, b, s), BlockLayer(model, b, s), HeadLayer(model, b, s)};
  for (auto& layer : g.unique_layers) {
    CompleteUniqueLayer(layer, options.fusion, model.dtype_bytes, options.optimizer);
  }
  const std::int64_t hidden_bytes = b * s * model.hidden * model.dtype_bytes;
  g.layers.push_back({"embedding", 0});
  for (std::int64_t i = 0; i < model.layers; ++i)
    g.layers.push_back({"block." + std::to_string(i), 1});
  g.layers.push_back({"head", 2});
  for (size_t i = 0; i + 1 < g.layers.size(); ++i) {
    g.edges.push_back({static_cast<int>(i), static_cast<int>(i) + 1, hidden_bytes});
  }
  return g;
}

}  // namespace phaze
