// A transformer workload as described by a model file (workloads/*.yaml; schema in
// workloads/README.md): the family gives defaults for the block structure, every key can override
// them. Parse → validate: ParseModelSpec checks types, ranges and consistency (heads divide
// hidden, …) with located errors; the graph builder then trusts the spec.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "phaze/core/config_node.hpp"

namespace phaze {

// The norm and the position encoding of a model (their words in YAML and files: ToString; the
// norm's word is also the vector function its ops run, which estimators cost by name).
enum class NormKind { kLayerNorm, kRmsNorm };
enum class PositionKind { kLearned, kRotary, kNone };
enum class NormPosition { kPre, kPost };  // before each sub-layer (GPT) or after its residual (BERT)
std::string_view ToString(NormPosition position);  // pre | post
std::string_view ToString(NormKind norm);          // layernorm | rmsnorm
std::string_view ToString(PositionKind positions);  // learned | rotary | none
// The MLP's activation; the gated ones (SwiGLU, GeGLU) have a gate projection.
enum class Activation { kGelu, kGeluTanh, kRelu, kSwiglu, kGeglu };
std::string_view ToString(Activation activation);  // gelu | gelu_tanh | relu | swiglu | geglu

struct ModelSpec {
  std::string source;  // the file it came from
  std::string name;
  std::string
      family;  // bert | gpt2 | opt | llama | megatron-gpt | megatron-bert | decoder | encoder
  std::string description;
  std::optional<std::int64_t> published_parameters;  // for the summary's comparison

  std::int64_t layers = 0;
  std::int64_t hidden = 0;
  std::int64_t heads = 0;
  std::int64_t kv_heads = 0;    // grouped-query attention; default = heads
  std::int64_t head_dim = 0;    // per-head width; default hidden/heads (Gemma 7B: 256 ≠ 3072/16)
  std::int64_t ffn_hidden = 0;  // default 4·hidden
  std::int64_t vocab = 0;
  std::int64_t max_positions = 0;  // rows of a learned position table
  std::int64_t sequence_length = 0;
  std::int64_t embedding_dim = 0;  // word-embedding width; ≠ hidden adds project_in/out (OPT-350M)
  std::int64_t token_types = 0;    // BERT segment embeddings (0: none)

  NormKind norm = NormKind::kLayerNorm;
  NormPosition norm_position = NormPosition::kPre;
  bool final_norm = false;       // a norm after the last block
  bool embedding_norm = false;   // a norm on the embedding output (BERT)
  Activation activation = Activation::kGelu;
  PositionKind positions = PositionKind::kLearned;
  double rotary_fraction = 1.0;  // share of each head's dimensions rotated (GPT-NeoX rotary_pct)
  bool bias = true;              // biases on every linear layer
  bool qkv_bias = true;  // biases on the Q, K, V projections (default: bias; Qwen2: only these)
  bool parallel_block = false;   // attention and MLP read the same input (GPT-NeoX, GPT-J): pre-LN
  bool embedding_scale = false;  // embeddings multiplied by sqrt(hidden) (Gemma)
  bool tied_embeddings = true;   // LM head reuses the word-embedding table
  bool fused_qkv = true;         // one QKV projection (GPT-2, Megatron) or three (BERT, OPT, Llama)
  bool pooler = false;           // BERT pooler (first token → dense → tanh), forward only
  bool lm_head_transform = false;  // dense + activation + norm before the LM head (BERT MLM)
  bool lm_head_bias = false;
  bool causal = true;

  double dropout_embedding = 0;
  double dropout_attention = 0;  // on the attention probabilities
  double dropout_hidden = 0;     // after the attention output projection and the MLP

  std::int64_t dtype_bytes = 2;  // weights and activations (fp16 / bf16)

  // Mixture of experts (absent: a dense MLP): `moe: {experts, top_k, expert_ffn_hidden,
  // capacity_factor}`. Every token goes to top_k of the experts; with balanced routing each expert
  // processes ⌈capacity_factor · b·s · top_k / experts⌉ tokens.
  std::int64_t experts = 0;
  std::int64_t top_k = 0;
  std::int64_t expert_ffn_hidden = 0;  // default ffn_hidden
  double capacity_factor = 1.0;

  std::int64_t HeadDim() const { return head_dim > 0 ? head_dim : hidden / heads; }
  std::int64_t AttentionWidth() const { return heads * HeadDim(); }  // Q and context width
  bool GatedMlp() const {
    return activation == Activation::kSwiglu || activation == Activation::kGeglu;
  }
  // The element-wise function of the MLP (the gate's for a gated MLP): its vector function's name.
  std::string MlpFunction() const {
    return activation == Activation::kSwiglu  ? "silu"
           : activation == Activation::kGeglu ? "gelu_tanh"
                                              : std::string(ToString(activation));
  }
  std::int64_t EmbeddingDim() const { return embedding_dim > 0 ? embedding_dim : hidden; }
};

// The family names and their defaults, in documentation order.
std::vector<std::string> ModelFamilies();

// Parses a model description; throws ConfigError with "FILE:LINE:COL: key: ..." on bad input.
ModelSpec ParseModelSpec(const ConfigNode& root);
ModelSpec LoadModelSpec(const std::string& path);

// A workload of either kind: a phaze model description, or a Hugging Face config.json
// (recognised by its `model_type`; read by ParseHfConfig). sequence_length > 0 overrides the
// model's own.
ModelSpec ParseWorkload(const ConfigNode& root, std::int64_t sequence_length = 0);
ModelSpec LoadWorkload(const std::string& path, std::int64_t sequence_length = 0);
// Only a Hugging Face config.json (`phaze graph --hf`, `models: [{hf: FILE}]`).
ModelSpec LoadHfConfig(const std::string& path, std::int64_t sequence_length = 0);

// The model description that reads back as `m` (every key written, none left to the family's
// defaults): `phaze graph --hf config.json --emit-yaml`.
std::string ModelSpecToYaml(const ModelSpec& m);

}  // namespace phaze
