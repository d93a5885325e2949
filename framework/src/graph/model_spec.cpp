#include "phaze/graph/model_spec.hpp"

#include <cmath>
#include <functional>
#include <map>
#include <sstream>

#include "phaze/core/error.hpp"
#include "phaze/core/json.hpp"
#include "phaze/core/limits.hpp"
#include "phaze/graph/hf_config.hpp"

namespace phaze {

namespace {

// The block structure each family implies; every field can be overridden in the model file.
struct FamilyDefaults {
  NormKind norm = NormKind::kLayerNorm;
  NormPosition norm_position = NormPosition::kPre;
  bool final_norm = true;
  bool embedding_norm = false;
  Activation activation = Activation::kGelu;
  PositionKind positions = PositionKind::kLearned;
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
    bert.norm_position = NormPosition::kPost;
    bert.final_norm = false;
    bert.embedding_norm = true;
    bert.fused_qkv = false;
    bert.token_types = 2;
    bert.pooler = true;

    FamilyDefaults gpt2 = decoder;  // Hugging Face GPT-2: tanh-approximated GELU
    gpt2.activation = Activation::kGeluTanh;

    FamilyDefaults opt = decoder;  // Hugging Face OPT: ReLU, separate Q/K/V, no attention dropout
    opt.activation = Activation::kRelu;
    opt.fused_qkv = false;
    opt.dropout_attention = 0;

    FamilyDefaults llama = decoder;  // Llama 2: RMSNorm, SwiGLU, rotary, no biases, untied head
    llama.norm = NormKind::kRmsNorm;
    llama.activation = Activation::kSwiglu;
    llama.positions = PositionKind::kRotary;
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

std::string_view ToString(NormKind norm) {
  return norm == NormKind::kRmsNorm ? "rmsnorm" : "layernorm";
}

std::string_view ToString(PositionKind positions) {
  switch (positions) {
    case PositionKind::kLearned:
      return "learned";
    case PositionKind::kRotary:
      return "rotary";
    case PositionKind::kNone:
      return "none";
  }
  return "?";
}

std::string_view ToString(NormPosition position) {
  return position == NormPosition::kPost ? "post" : "pre";
}

std::string_view ToString(Activation activation) {
  switch (activation) {
    case Activation::kGelu:
      return "gelu";
    case Activation::kGeluTanh:
      return "gelu_tanh";
    case Activation::kRelu:
      return "relu";
    case Activation::kSwiglu:
      return "swiglu";
    case Activation::kGeglu:
      return "geglu";
  }
  return "?";
}

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
                   "head_dim",
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
                   "rotary_fraction",
                   "bias",
                   "qkv_bias",
                   "parallel_block",
                   "embedding_scale",
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
  if (m.name.find_first_not_of(" \t") == std::string::npos) {
    root.Child("name").Fail("expected the model's name, found an empty one (results, reports and "
                            "file names use it)");
  }

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
  m.head_dim = optional_int("head_dim", 0, limits::kHidden);
  m.ffn_hidden = optional_int("ffn_hidden", 4 * m.hidden, limits::kFfnHidden);
  m.embedding_dim = optional_int("embedding_dim", m.hidden, limits::kHidden);
  m.dtype_bytes = optional_int("dtype_bytes", 2, limits::kDtypeBytes);
  m.token_types = d->token_types;
  if (auto n = root.Optional("token_types")) {
    m.token_types = n->AsIntInRange(0, limits::kVocab);
  }

  // The key's word as one of `choices`, else the family's value.
  auto choice = [&](std::string_view key, auto fallback,
                    std::initializer_list<decltype(fallback)> choices) {
    auto n = root.Optional(key);
    return n ? n->AsEnum(choices) : fallback;
  };
  m.norm = choice("norm", d->norm, {NormKind::kLayerNorm, NormKind::kRmsNorm});
  m.norm_position =
      choice("norm_position", d->norm_position, {NormPosition::kPre, NormPosition::kPost});
  m.activation = choice("activation", d->activation,
                        {Activation::kGelu, Activation::kGeluTanh, Activation::kRelu,
                         Activation::kSwiglu, Activation::kGeglu});
  m.positions = choice("positions", d->positions,
                       {PositionKind::kLearned, PositionKind::kRotary, PositionKind::kNone});

  auto flag = [&](std::string_view key, bool fallback) {
    auto n = root.Optional(key);
    return n ? n->AsBool() : fallback;
  };
  m.final_norm = flag("final_norm", d->final_norm);
  m.embedding_norm = flag("embedding_norm", d->embedding_norm);
  m.bias = flag("bias", d->bias);
  m.qkv_bias = flag("qkv_bias", m.bias);
  m.parallel_block = flag("parallel_block", false);
  m.embedding_scale = flag("embedding_scale", false);
  if (auto n = root.Optional("rotary_fraction")) {
    m.rotary_fraction = n->AsPositiveDouble();
    if (m.rotary_fraction > 1)
      n->Fail("expected a share of the head dimensions in (0, 1], found " + n->Describe());
  }
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
  if (m.head_dim == 0 && m.hidden % m.heads != 0) {
    root.Child("heads").Fail("heads " + std::to_string(m.heads) + " does not divide hidden " +
                             std::to_string(m.hidden) +
                             " (the head dimension must be an integer; or give head_dim)");
  }
  if (m.heads % m.kv_heads != 0) {
    root.Child("kv_heads")
        .Fail("kv_heads " + std::to_string(m.kv_heads) + " does not divide heads " +
              std::to_string(m.heads));
  }
  if (m.positions == PositionKind::kLearned) {
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
  if (m.positions == PositionKind::kRotary) {
    const double rotated = m.rotary_fraction * static_cast<double>(m.HeadDim());
    if (rotated != std::floor(rotated) || static_cast<std::int64_t>(rotated) % 2 != 0) {
      const ConfigNode at = root.Optional("rotary_fraction") ? root.Child("rotary_fraction")
                            : root.Optional("head_dim")      ? root.Child("head_dim")
                                                             : root.Child("heads");
      at.Fail("rotary positions rotate an even number of each head's dimensions; head dimension " +
              std::to_string(m.HeadDim()) + " × rotary_fraction " +
              FormatDouble(m.rotary_fraction) + " = " + FormatDouble(rotated));
    }
  } else if (auto n = root.Optional("rotary_fraction")) {
    n->Fail("rotary_fraction applies to rotary positions; positions are '" +
            std::string(ToString(m.positions)) + "'");
  }
  if (m.parallel_block && m.norm_position != NormPosition::kPre) {
    root.Child("parallel_block")
        .Fail(
            "a parallel attention/MLP block is pre-LN (each branch normalises its input); "
            "norm_position is '" +
            std::string(ToString(m.norm_position)) + "'");
  }
  return m;
}

ModelSpec LoadModelSpec(const std::string& path) {
  return ParseModelSpec(ConfigNode::ParseFile(path));
}

ModelSpec ParseWorkload(const ConfigNode& root, std::int64_t sequence_length) {
  if (IsHfConfigDocument(root)) return ParseHfConfig(root, sequence_length);
  ModelSpec m = ParseModelSpec(root);
  if (sequence_length > 0) m.sequence_length = sequence_length;
  return m;
}

ModelSpec LoadWorkload(const std::string& path, std::int64_t sequence_length) {
  return ParseWorkload(ConfigNode::ParseFile(path), sequence_length);
}

ModelSpec LoadHfConfig(const std::string& path, std::int64_t sequence_length) {
  const ConfigNode root = ConfigNode::ParseFile(path);
  if (!IsHfConfigDocument(root)) {
    root.Fail("expected a Hugging Face config.json (a map with a 'model_type'), found " +
              root.Describe() + (root.IsMap() ? " without 'model_type'" : ""));
  }
  return ParseHfConfig(root, sequence_length);
}

namespace {

// A YAML scalar that reads back as the same string.
std::string YamlString(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

}  // namespace

std::string ModelSpecToYaml(const ModelSpec& m) {
  std::ostringstream y;
  auto line = [&](const std::string& key, const std::string& value) {
    y << key << ": " << value << "\n";
  };
  auto integer = [&](const std::string& key, std::int64_t v) { line(key, std::to_string(v)); };
  auto flag = [&](const std::string& key, bool v) { line(key, v ? "true" : "false"); };
  line("name", YamlString(m.name));
  line("family", m.family);
  if (!m.description.empty()) line("description", YamlString(m.description));
  if (m.published_parameters) integer("published_parameters", *m.published_parameters);
  integer("layers", m.layers);
  integer("hidden", m.hidden);
  integer("heads", m.heads);
  integer("kv_heads", m.kv_heads);
  if (m.head_dim > 0) integer("head_dim", m.head_dim);
  integer("ffn_hidden", m.ffn_hidden);
  integer("vocab", m.vocab);
  if (m.max_positions > 0) integer("max_positions", m.max_positions);
  integer("sequence_length", m.sequence_length);
  integer("embedding_dim", m.EmbeddingDim());
  integer("token_types", m.token_types);
  line("norm", std::string(ToString(m.norm)));
  line("norm_position", std::string(ToString(m.norm_position)));
  flag("final_norm", m.final_norm);
  flag("embedding_norm", m.embedding_norm);
  flag("embedding_scale", m.embedding_scale);
  line("activation", std::string(ToString(m.activation)));
  line("positions", std::string(ToString(m.positions)));
  if (m.positions == PositionKind::kRotary) line("rotary_fraction", FormatDouble(m.rotary_fraction));
  flag("bias", m.bias);
  flag("qkv_bias", m.qkv_bias);
  flag("parallel_block", m.parallel_block);
  flag("tied_embeddings", m.tied_embeddings);
  flag("fused_qkv", m.fused_qkv);
  flag("pooler", m.pooler);
  flag("lm_head_transform", m.lm_head_transform);
  flag("lm_head_bias", m.lm_head_bias);
  flag("causal", m.causal);
  y << "dropout: {embedding: " << FormatDouble(m.dropout_embedding)
    << ", attention: " << FormatDouble(m.dropout_attention)
    << ", hidden: " << FormatDouble(m.dropout_hidden) << "}\n";
  integer("dtype_bytes", m.dtype_bytes);
  if (m.experts > 0) {
    y << "moe: {experts: " << m.experts << ", top_k: " << m.top_k
      << ", expert_ffn_hidden: " << m.expert_ffn_hidden
      << ", capacity_factor: " << FormatDouble(m.capacity_factor) << "}\n";
  }
  return y.str();
}

}  // namespace phaze
