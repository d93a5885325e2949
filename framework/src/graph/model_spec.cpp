#include "phaze/graph/model_spec.hpp"

#include <functional>
#include <map>

#include "phaze/core/error.hpp"
#include "phaze/core/limits.hpp"

namespace phaze {

namespace {

// The block structure each family implies; every field can be overridden in the model file.
struct FamilyDefaults {
  std::string norm = "layernorm";
  std::string norm_position = "pre";
  bool final_norm = true;
  bool embedding_norm = false;
  std::string activation = "gelu";
  std::string positions = "learned";
  bool bias = true;
  bool tied_embeddings = true;
  bool fused_qkv = true;
  std::int64_t token_types = 0;
  bool pooler = false;
  bool lm_head_transform = false;
  bool lm_head_bias = false;
  bool causal = true;
  double dropout_embedding = 0.1;
  double dropout_attention = 0.1;
  double dropout_hidden = 0.1;
};

const std::vector<std::pair<std::string, FamilyDefaults>>& Families() {
  static const std::vector<std::pair<std::string, FamilyDefaults>> families = [] {
    FamilyDefaults decoder;  // a pre-LN GPT block (Megatron-LM's GPT)
    FamilyDefaults encoder = decoder;
    encoder.causal = false;

    FamilyDefaults bert = encoder;  // Hugging Face BertModel: post-LN, embedding LN, pooler
    bert.norm_position = "post";
    bert.final_norm = false;
    bert.embedding_norm = true;
    bert.fused_qkv = false;
    bert.token_types = 2;
    bert.pooler = true;

    FamilyDefaults gpt2 = decoder;  // Hugging Face GPT-2: tanh-approximated GELU
    gpt2.activation = "gelu_tanh";

    FamilyDefaults opt = decoder;  // Hugging Face OPT: ReLU, separate Q/K/V, no attention dropout
    opt.activation = "relu";
    opt.fused_qkv = false;
    opt.dropout_attention = 0;

    FamilyDefaults llama = decoder;  // Llama 2: RMSNorm, SwiGLU, rotary, no biases, untied head
    llama.norm = "rmsnorm";
    llama.activation = "swiglu";
    llama.positions = "rotary";
    llama.bias = false;
    llama.tied_embeddings = false;
    llama.fused_qkv = false;
    llama.dropout_embedding = llama.dropout_attention = llama.dropout_hidden = 0;

    FamilyDefaults megatron_bert = encoder;  // Megatron-LM BERT: pre-LN, pooler, MLM transform
    megatron_bert.token_types = 2;
    megatron_bert.pooler = true;
    megatron_bert.lm_head_transform = true;
    megatron_bert.lm_head_bias = true;

    return std::vector<std::pair<std::string, FamilyDefaults>>{
        {"bert", bert},
        {"gpt2", gpt2},
        {"opt", opt},
        {"llama", llama},
        {"megatron-gpt", decoder},
        {"megatron-bert", megatron_bert},
        {"decoder", decoder},
        {"encoder", encoder},
    };
  }();
  return families;
}

double ReadProbability(const ConfigNode& node) {
  double p = node.AsDouble();
  if (p < 0 || p >= 1) node.Fail("expected a probability in [0, 1), found " + node.Describe());
  return p;
}

}  // namespace

std::vector<std::string> ModelFamilies() {
  std::vector<std::string> names;
  for (const auto& [name, d] : Families()) names.push_back(name);
  return names;
}

ModelSpec ParseModelSpec(const ConfigNode& root) {
  if (!root.IsMap()) root.Fail("expected a model description (a map), found " + root.Describe());
  root.ExpectKeys({"name",
                   "family",
                   "description",
                   "published_parameters",
                   "layers",
                   "hidden",
                   "heads",
                   "kv_heads",
                   "ffn_hidden",
                   "vocab",
                   "max_positions",
                   "sequence_length",
                   "embedding_dim",
                   "token_types",
                   "norm",
                   "norm_position",
                   "final_norm",
                   "embedding_norm",
                   "activation",
                   "positions",
                   "bias",
                   "tied_embeddings",
                   "fused_qkv",
                   "pooler",
                   "lm_head_transform",
                   "lm_head_bias",
                   "causal",
                   "dropout",
                   "dtype_bytes",
                   "moe"});
  ModelSpec m;
  m.source = root.Source();
  m.name = root.Child("name").AsString();

  const ConfigNode family = root.Child("family");
  m.family = family.AsString();
  const FamilyDefaults* d = nullptr;
  for (const auto& [name, defaults] : Families()) {
    if (name == m.family) d = &defaults;
  }
  if (d == nullptr) {
    std::string list;
    for (const auto& n : ModelFamilies()) list += (list.empty() ? "" : ", ") + n;
    std::string hint;
    if (auto guess = DidYouMean(m.family, ModelFamilies()))
      hint = "; did you mean '" + *guess + "'?";
    family.Fail("unknown model family '" + m.family + "'" + hint + "  known families: " + list);
  }
  if (auto n = root.Optional("description")) m.description = n->AsString();
  if (auto n = root.Optional("published_parameters")) m.published_parameters = n->AsPositiveInt();

  m.layers = root.Child("layers").AsIntInRange(1, limits::kLayers);
  m.hidden = root.Child("hidden").AsIntInRange(1, limits::kHidden);
  m.heads = root.Child("heads").AsIntInRange(1, limits::kHeads);
  m.vocab = root.Child("vocab").AsIntInRange(1, limits::kVocab);
  m.sequence_length = root.Child("sequence_length").AsIntInRange(1, limits::kSequence);
  auto optional_int = [&](std::string_view key, std::int64_t fallback, std::int64_t limit) {
    auto n = root.Optional(key);
    return n ? n->AsIntInRange(1, limit) : fallback;
  };
  m.kv_heads = optional_int("kv_heads", m.heads, limits::kHeads);
  m.ffn_hidden = optional_int("ffn_hidden", 4 * m.hidden, limits::kFfnHidden);
  m.embedding_dim = optional_int("embedding_dim", m.hidden, limits::kHidden);
  m.dtype_bytes = optional_int("dtype_bytes", 2, limits::kDtypeBytes);
  m.token_types = d->token_types;
  if (auto n = root.Optional("token_types")) {
    m.token_types = n->AsIntInRange(0, limits::kVocab);
  }

  auto choice = [&](std::string_view key, const std::string& fallback,
                    std::initializer_list<std::string_view> choices) {
    auto n = root.Optional(key);
    return n ? n->AsChoice(choices) : fallback;
  };
  m.norm = choice("norm", d->norm, {"layernorm", "rmsnorm"});
  m.norm_position = choice("norm_position", d->norm_position, {"pre", "post"});
  m.activation = choice("activation", d->activation, {"gelu", "gelu_tanh", "relu", "swiglu"});
  m.positions = choice("positions", d->positions, {"learned", "rotary", "none"});

  auto flag = [&](std::string_view key, bool fallback) {
    auto n = root.Optional(key);
    return n ? n->AsBool() : fallback;
  };
  m.final_norm = flag("final_norm", d->final_norm);
  m.embedding_norm = flag("embedding_norm", d->embedding_norm);
  m.bias = flag("bias", d->bias);
  m.tied_embeddings = flag("tied_embeddings", d->tied_embeddings);
  m.fused_qkv = flag("fused_qkv", d->fused_qkv);
  m.pooler = flag("pooler", d->pooler);
  m.lm_head_transform = flag("lm_head_transform", d->lm_head_transform);
  m.lm_head_bias = flag("lm_head_bias", d->lm_head_bias);
  m.causal = flag("causal", d->causal);

  m.dropout_embedding = d->dropout_embedding;
  m.dropout_attention = d->dropout_attention;
  m.dropout_hidden = d->dropout_hidden;
  if (auto dn = root.Optional("dropout")) {
    if (dn->IsScalar()) {
      m.dropout_embedding = m.dropout_attention = m.dropout_hidden = ReadProbability(*dn);
    } else {
      dn->ExpectKeys({"embedding", "attention", "hidden"});
      if (auto n = dn->Optional("embedding")) m.dropout_embedding = ReadProbability(*n);
      if (auto n = dn->Optional("attention")) m.dropout_attention = ReadProbability(*n);
      if (auto n = dn->Optional("hidden")) m.dropout_hidden = ReadProbability(*n);
    }
  }

  if (auto moe = root.Optional("moe")) {
    moe->ExpectKeys({"experts", "top_k", "expert_ffn_hidden", "capacity_factor"});
    m.experts = moe->Child("experts").AsIntInRange(1, limits::kExperts);
    m.top_k = moe->Child("top_k").AsIntInRange(1, limits::kExperts);
    if (m.top_k > m.experts) {
      moe->Child("top_k").Fail("top_k " + std::to_string(m.top_k) + " exceeds the " +
                               std::to_string(m.experts) + " experts");
    }
    m.expert_ffn_hidden = moe->Optional("expert_ffn_hidden")
                              ? moe->Child("expert_ffn_hidden").AsIntInRange(1, limits::kFfnHidden)
                              : m.ffn_hidden;
    if (auto n = moe->Optional("capacity_factor")) m.capacity_factor = n->AsPositiveDouble();
  }

  // Consistency.
  if (m.hidden % m.heads != 0) {
    root.Child("heads").Fail("heads " + std::to_string(m.heads) + " does not divide hidden " +
                             std::to_string(m.hidden) + " (the head dimension must be an integer)");
  }
  if (m.heads % m.kv_heads != 0) {
    root.Child("kv_heads")
        .Fail("kv_heads " + std::to_string(m.kv_heads) + " does not divide heads " +
              std::to_string(m.heads));
  }
  if (m.positions == "learned") {
    m.max_positions = root.Child("max_positions").AsIntInRange(1, limits::kSequence);
    if (m.sequence_length > m.max_positions) {
      root.Child("sequence_length")
          .Fail("sequence_length " + std::to_string(m.sequence_length) + " exceeds max_positions " +
                std::to_string(m.max_positions) +
                " (the learned position table has no row for it)");
    }
  } else if (auto n = root.Optional("max_positions")) {
    m.max_positions = n->AsIntInRange(1, limits::kSequence);
  }
  if (m.positions == "rotary" && m.HeadDim() % 2 != 0) {
    root.Child("heads").Fail("rotary positions need an even head dimension; hidden/heads = " +
                             std::to_string(m.HeadDim()));
  }
  return m;
}

ModelSpec LoadModelSpec(const std::string& path) {
  return ParseModelSpec(ConfigNode::ParseFile(path));
}

}  // namespace phaze
