#include "phaze/graph/hf_config.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <optional>
#include <set>

#include "phaze/core/error.hpp"
#include "phaze/core/json.hpp"
#include "phaze/core/limits.hpp"

namespace phaze {

namespace {

// Keys of transformers' PretrainedConfig and of checkpoint bookkeeping that never change what a
// training step computes: generation settings, token ids, labels, initialisation, numerical
// epsilons, rotary frequencies and scaling, caching, attention kernels, storage dtype (phaze
// trains in 16-bit whatever the checkpoint stores), auxiliary-loss weights.
const std::set<std::string, std::less<>>& InertKeys() {
  static const std::set<std::string, std::less<>> keys = {"_name_or_path",
                                                          "_commit_hash",
                                                          "_attn_implementation",
                                                          "architectures",
                                                          "model_type",
                                                          "transformers_version",
                                                          "torch_dtype",
                                                          "use_bfloat16",
                                                          "return_dict",
                                                          "output_hidden_states",
                                                          "output_attentions",
                                                          "torchscript",
                                                          "tf_legacy_loss",
                                                          "use_cache",
                                                          "tie_encoder_decoder",
                                                          "chunk_size_feed_forward",
                                                          "finetuning_task",
                                                          "id2label",
                                                          "label2id",
                                                          "num_labels",
                                                          "problem_type",
                                                          "tokenizer_class",
                                                          "prefix",
                                                          "bos_token_id",
                                                          "eos_token_id",
                                                          "pad_token_id",
                                                          "sep_token_id",
                                                          "decoder_start_token_id",
                                                          "task_specific_params",
                                                          "max_length",
                                                          "min_length",
                                                          "do_sample",
                                                          "early_stopping",
                                                          "num_beams",
                                                          "num_beam_groups",
                                                          "diversity_penalty",
                                                          "temperature",
                                                          "top_k",
                                                          "top_p",
                                                          "typical_p",
                                                          "repetition_penalty",
                                                          "length_penalty",
                                                          "no_repeat_ngram_size",
                                                          "encoder_no_repeat_ngram_size",
                                                          "bad_words_ids",
                                                          "num_return_sequences",
                                                          "output_scores",
                                                          "return_dict_in_generate",
                                                          "forced_bos_token_id",
                                                          "forced_eos_token_id",
                                                          "remove_invalid_values",
                                                          "exponential_decay_length_penalty",
                                                          "suppress_tokens",
                                                          "begin_suppress_tokens",
                                                          "gradient_checkpointing",
                                                          "initializer_range",
                                                          "init_std",
                                                          "layer_norm_eps",
                                                          "layer_norm_epsilon",
                                                          "rms_norm_eps",
                                                          "rope_theta",
                                                          "rotary_emb_base",
                                                          "rope_scaling",
                                                          "pretraining_tp",
                                                          "classifier_dropout",
                                                          "router_aux_loss_coef",
                                                          "output_router_logits",
                                                          "router_jitter_noise"};
  return keys;
}

// Reads the fields of one config, remembering which it read: Finish() refuses the rest.
class HfReader {
 public:
  HfReader(const ConfigNode& root, std::string type) : root_(root), type_(std::move(type)) {}

  std::optional<ConfigNode> Get(std::string_view key) {
    used_.emplace(key);
    return root_.Optional(key);
  }
  ConfigNode Need(std::string_view key) {
    used_.emplace(key);
    return root_.Child(key);
  }
  std::int64_t Int(std::string_view key, std::int64_t limit) {
    return Need(key).AsIntInRange(1, limit);
  }
  std::int64_t Int(std::string_view key, std::int64_t limit, std::int64_t fallback) {
    auto n = Get(key);
    return n ? n->AsIntInRange(1, limit) : fallback;
  }
  bool Bool(std::string_view key, bool fallback) {
    auto n = Get(key);
    return n ? n->AsBool() : fallback;
  }
  double Probability(std::string_view key, double fallback) {
    auto n = Get(key);
    if (!n) return fallback;
    const double p = n->AsDouble();
    if (p < 0 || p >= 1) n->Fail("expected a probability in [0, 1), found " + n->Describe());
    return p;
  }
  // A field whose only value phaze models is `modelled`; any other is refused with `why`.
  void Only(std::string_view key, bool modelled, const std::string& why) {
    auto n = Get(key);
    if (n && n->AsBool() != modelled) Refuse(*n, why);
  }
  void Ignore(std::initializer_list<std::string_view> keys) {
    for (auto k : keys) used_.emplace(k);
  }
  [[noreturn]] void Refuse(const ConfigNode& n, const std::string& why) const {
    n.Fail(why + "; phaze does not model it for model_type '" + type_ +
           "' and will not approximate it silently");
  }
  void Finish() const {
    std::set<std::string, std::less<>> seen;
    for (const auto& [key, node] : root_.Entries()) {
      if (!seen.insert(key).second) {
        node.Fail("duplicate key '" + key + "' (JSON does not say which value counts)");
      }
      if (used_.count(key) || InertKeys().count(key)) continue;
      if (key == "is_encoder_decoder" || key == "add_cross_attention") {
        if (node.IsNull() || !node.AsBool()) continue;
        Refuse(node, "an encoder-decoder / cross-attention model");
      }
      if (key == "pruned_heads") {
        if (node.IsNull() || node.Entries().empty()) continue;
        Refuse(node, "pruned attention heads");
      }
      node.Fail("field '" + key + "' is not understood by phaze's reader for model_type '" + type_ +
                "'; if it changes the architecture phaze cannot model it, and if it does " +
                "not, remove it from the file (workloads/README.md lists the fields read)");
    }
  }

 private:
  const ConfigNode& root_;
  std::string type_;
  std::set<std::string, std::less<>> used_;
};

// The MLP's element-wise function from a transformers activation name.
Activation HfActivation(HfReader& r, const ConfigNode& n, bool gated) {
  const std::string name = n.AsString();
  const bool tanh_gelu = name == "gelu_new" || name == "gelu_fast" || name == "gelu_pytorch_tanh" ||
                         name == "gelu_tanh";
  const bool gelu = name == "gelu" || name == "gelu_python";
  if (gated) {
    if (name == "silu" || name == "swish") return Activation::kSwiglu;
    if (gelu || tanh_gelu) return Activation::kGeglu;  // Gemma: GELU (tanh) gate
  } else {
    if (tanh_gelu) return Activation::kGeluTanh;
    if (gelu) return Activation::kGelu;
    if (name == "relu") return Activation::kRelu;
  }
  r.Refuse(n,
           std::string("activation '") + name + "' in a " + (gated ? "gated" : "plain") + " MLP");
}

// Everything set explicitly, so the spec does not depend on the family's defaults.
ModelSpec Base(const std::string& family) {
  ModelSpec m;
  m.family = family;
  m.norm = NormKind::kLayerNorm;
  m.norm_position = NormPosition::kPre;
  m.final_norm = true;
  m.activation = Activation::kGelu;
  m.positions = PositionKind::kLearned;
  m.bias = m.qkv_bias = true;
  m.tied_embeddings = true;
  m.fused_qkv = true;
  m.causal = true;
  m.dtype_bytes = 2;
  return m;
}

void SetDropout(ModelSpec& m, double embedding, double attention, double hidden) {
  m.dropout_embedding = embedding;
  m.dropout_attention = attention;
  m.dropout_hidden = hidden;
}

// The dimensions every reader but GPT-2's names alike; `ffn_key` is the MLP width's name.
void ReadDimensions(HfReader& r, ModelSpec& m, std::string_view ffn_key) {
  m.hidden = r.Int("hidden_size", limits::kHidden);
  m.layers = r.Int("num_hidden_layers", limits::kLayers);
  m.heads = r.Int("num_attention_heads", limits::kHeads);
  m.kv_heads = m.heads;  // grouped-query attention: the Llama readers only
  m.ffn_hidden = r.Int(ffn_key, limits::kFfnHidden);
  m.vocab = r.Int("vocab_size", limits::kVocab);
}

// A share of each head's dimensions that is rotated, in (0, 1].
std::optional<double> ReadRotaryShare(HfReader& r, std::string_view key) {
  auto n = r.Get(key);
  if (!n) return std::nullopt;
  const double share = n->AsPositiveDouble();
  if (share > 1) n->Fail("expected a share in (0, 1], found " + n->Describe());
  return share;
}

ModelSpec ReadGpt2(HfReader& r) {
  ModelSpec m = Base("gpt2");
  m.hidden = r.Int("n_embd", limits::kHidden);
  m.layers = r.Int("n_layer", limits::kLayers);
  m.heads = r.Int("n_head", limits::kHeads);
  m.kv_heads = m.heads;
  m.ffn_hidden = r.Int("n_inner", limits::kFfnHidden, 4 * m.hidden);
  m.vocab = r.Int("vocab_size", limits::kVocab);
  m.max_positions = r.Int("n_positions", limits::kSequence);
  if (auto n = r.Get("n_ctx"); n && n->AsInt() != m.max_positions) {
    r.Refuse(*n, "n_ctx " + std::to_string(n->AsInt()) + " differs from n_positions " +
                     std::to_string(m.max_positions));
  }
  m.activation = Activation::kGeluTanh;
  if (auto n = r.Get("activation_function")) m.activation = HfActivation(r, *n, false);
  SetDropout(m, r.Probability("embd_pdrop", 0.1), r.Probability("attn_pdrop", 0.1),
             r.Probability("resid_pdrop", 0.1));
  m.tied_embeddings = r.Bool("tie_word_embeddings", true);
  // Numerics of the attention and the double-heads model's summary head (not part of the LM).
  r.Ignore({"scale_attn_weights", "scale_attn_by_inverse_layer_idx", "reorder_and_upcast_attn",
            "summary_type", "summary_use_proj", "summary_activation", "summary_proj_to_labels",
            "summary_first_dropout"});
  return m;
}

ModelSpec ReadGptNeox(HfReader& r) {
  ModelSpec m = Base("decoder");
  ReadDimensions(r, m, "intermediate_size");
  m.max_positions = r.Int("max_position_embeddings", limits::kSequence);
  m.positions = PositionKind::kRotary;
  m.rotary_fraction = ReadRotaryShare(r, "rotary_pct").value_or(0.25);
  if (auto n = r.Get("hidden_act")) m.activation = HfActivation(r, *n, false);
  m.parallel_block = r.Bool("use_parallel_residual", true);
  m.tied_embeddings = r.Bool("tie_word_embeddings", false);
  r.Only("attention_bias", true, "attention without biases beside an MLP with them");
  const double hidden = r.Probability("hidden_dropout", 0);
  SetDropout(m, hidden, r.Probability("attention_dropout", 0), hidden);
  return m;
}

ModelSpec ReadOpt(HfReader& r) {
  ModelSpec m = Base("opt");
  ReadDimensions(r, m, "ffn_dim");
  // OPT's learned position table has two offset rows before position 0.
  const std::int64_t context = r.Int("max_position_embeddings", limits::kSequence - 2);
  m.max_positions = context + 2;
  m.sequence_length = context;
  m.embedding_dim = r.Int("word_embed_proj_dim", limits::kHidden, m.hidden);
  const bool pre = r.Bool("do_layer_norm_before", true);
  m.norm_position = pre ? NormPosition::kPre : NormPosition::kPost;
  m.final_norm = pre && !r.Bool("_remove_final_layer_norm", false);
  m.activation = Activation::kRelu;
  if (auto n = r.Get("activation_function")) m.activation = HfActivation(r, *n, false);
  m.fused_qkv = false;
  m.bias = m.qkv_bias = r.Bool("enable_bias", true);
  m.tied_embeddings = r.Bool("tie_word_embeddings", true);
  const double dropout = r.Probability("dropout", 0.1);
  SetDropout(m, dropout, r.Probability("attention_dropout", 0), dropout);
  if (auto n = r.Get("activation_dropout"); n && n->AsDouble() != 0) {
    r.Refuse(*n, "dropout after the MLP activation");
  }
  if (auto n = r.Get("layerdrop"); n && n->AsDouble() != 0) {
    r.Refuse(*n, "LayerDrop (skipping blocks at random in training)");
  }
  r.Only("layer_norm_elementwise_affine", true, "norms without weights");
  return m;
}

ModelSpec ReadBert(HfReader& r) {
  // BertModel: post-LN encoder, embedding norm, token types, pooler (workloads/README.md).
  ModelSpec m = Base("bert");
  ReadDimensions(r, m, "intermediate_size");
  m.max_positions = r.Int("max_position_embeddings", limits::kSequence);
  m.token_types = r.Int("type_vocab_size", limits::kVocab, 2);
  if (auto n = r.Get("hidden_act")) m.activation = HfActivation(r, *n, false);
  m.norm_position = NormPosition::kPost;
  m.final_norm = false;
  m.embedding_norm = true;
  m.fused_qkv = false;
  m.pooler = true;
  m.causal = false;
  const double hidden = r.Probability("hidden_dropout_prob", 0.1);
  SetDropout(m, hidden, r.Probability("attention_probs_dropout_prob", 0.1), hidden);
  if (auto n = r.Get("position_embedding_type"); n && n->AsString() != "absolute") {
    r.Refuse(*n, "position embeddings '" + n->AsString() + "' (phaze models 'absolute')");
  }
  r.Only("is_decoder", false, "BERT used as a causal decoder");
  m.tied_embeddings = r.Bool("tie_word_embeddings", true);
  return m;
}

// Llama and the models built on its block: Mistral, Mixtral, Qwen2, Gemma.
ModelSpec ReadLlamaLike(HfReader& r, const std::string& type, std::int64_t sequence_length) {
  ModelSpec m = Base("llama");
  ReadDimensions(r, m, "intermediate_size");
  m.kv_heads = r.Int("num_key_value_heads", limits::kHeads, m.heads);
  m.max_positions = r.Int("max_position_embeddings", limits::kSequence);
  if (auto n = r.Get("head_dim")) {
    m.head_dim = n->AsIntInRange(1, limits::kHidden);
    if (m.head_dim * m.heads == m.hidden) m.head_dim = 0;  // the default, written out
  }
  const bool gemma = type == "gemma";
  m.norm = NormKind::kRmsNorm;
  m.positions = PositionKind::kRotary;
  m.rotary_fraction = ReadRotaryShare(r, "partial_rotary_factor").value_or(1.0);
  // Gemma names its MLP activation hidden_activation (hidden_act is the legacy key it overrides).
  m.activation = gemma ? Activation::kGeglu : Activation::kSwiglu;
  const auto act = gemma ? r.Get("hidden_activation") : std::nullopt;
  if (act) {
    m.activation = HfActivation(r, *act, true);
    r.Ignore({"hidden_act"});
  } else if (auto n = r.Get("hidden_act")) {
    m.activation = HfActivation(r, *n, true);
  }
  m.fused_qkv = false;
  m.bias = m.qkv_bias = false;
  if (type == "qwen2") m.qkv_bias = true;  // Qwen2 biases Q, K and V only (not a config field)
  const auto attention_bias = r.Get("attention_bias");
  const auto mlp_bias = r.Get("mlp_bias");
  const bool attn_b = attention_bias && attention_bias->AsBool();
  const bool mlp_b = mlp_bias && mlp_bias->AsBool();
  if (attn_b != mlp_b) {
    r.Refuse(attn_b ? *attention_bias : *mlp_bias,
             "biases on the attention but not on the MLP, or the reverse");
  }
  if (attn_b) m.bias = m.qkv_bias = true;
  m.tied_embeddings = r.Bool("tie_word_embeddings", gemma);
  m.embedding_scale = gemma;  // Gemma multiplies its embeddings by sqrt(hidden)
  SetDropout(m, 0, r.Probability("attention_dropout", 0), 0);

  // Sliding-window attention changes the attention's cost unless the window covers the sequence.
  const std::int64_t s = sequence_length > 0 ? sequence_length : m.max_positions;
  const bool sliding = type != "qwen2" || r.Bool("use_sliding_window", false);
  if (auto n = r.Get("sliding_window"); n && sliding && n->AsInt() < s) {
    r.Refuse(*n, "sliding-window attention (window " + std::to_string(n->AsInt()) +
                     " tokens, shorter than the sequence of " + std::to_string(s) + ")");
  }
  r.Ignore({"max_window_layers"});  // Qwen2: which layers would slide, when use_sliding_window

  if (type == "mixtral") {
    m.experts = r.Int("num_local_experts", limits::kExperts);
    m.top_k = r.Int("num_experts_per_tok", limits::kExperts);
    if (m.top_k > m.experts) {
      r.Need("num_experts_per_tok")
          .Fail("top-" + std::to_string(m.top_k) + " routing over " + std::to_string(m.experts) +
                " experts");
    }
    m.expert_ffn_hidden = m.ffn_hidden;
  }
  return m;
}

const std::vector<std::string>& Types() {
  static const std::vector<std::string> types = {"gpt2",    "gpt_neox", "opt",   "bert", "llama",
                                                 "mistral", "mixtral",  "qwen2", "gemma"};
  return types;
}

std::string ModelName(const std::string& source) {
  const std::filesystem::path p(source);
  if (p.stem() == "config" && p.has_parent_path()) {
    const auto dir = p.parent_path().filename();
    if (!dir.empty() && dir != "." && dir != "..") return dir.string();
  }
  return p.stem().string();
}

}  // namespace

bool IsHfConfigDocument(const ConfigNode& root) {
  if (!root.IsMap()) return false;
  auto type = root.Optional("model_type");
  return type && type->IsScalar();
}

std::vector<std::string> HfModelTypes() { return Types(); }

ModelSpec ParseHfConfig(const ConfigNode& root, std::int64_t sequence_length) {
  const ConfigNode type_node = root.Child("model_type");
  const std::string type = type_node.AsString();
  if (std::find(Types().begin(), Types().end(), type) == Types().end()) {
    std::string list;
    for (const auto& t : Types()) list += (list.empty() ? "" : ", ") + t;
    std::string hint;
    if (auto guess = DidYouMean(type, Types())) hint = "; did you mean '" + *guess + "'?";
    type_node.Fail("model_type '" + type + "' is not one phaze reads" + hint + "  known: " + list +
                   " (or describe the model in phaze's YAML schema, " + "workloads/README.md)");
  }
  HfReader r(root, type);
  ModelSpec m = type == "gpt2"       ? ReadGpt2(r)
                : type == "gpt_neox" ? ReadGptNeox(r)
                : type == "opt"      ? ReadOpt(r)
                : type == "bert"     ? ReadBert(r)
                                     : ReadLlamaLike(r, type, sequence_length);
  r.Finish();

  m.source = root.Source();
  m.name = ModelName(m.source);
  m.description = "Hugging Face " + type + " config " + m.source;
  if (m.sequence_length == 0) m.sequence_length = m.max_positions;
  if (sequence_length > 0) m.sequence_length = sequence_length;

  // The consistency ParseModelSpec checks, located at the Hugging Face fields.
  auto field = [&](std::initializer_list<std::string_view> keys) {
    for (auto k : keys) {
      if (auto n = root.Optional(k)) return *n;
    }
    return type_node;
  };
  if (m.head_dim == 0 && m.hidden % m.heads != 0) {
    field({"num_attention_heads", "n_head"})
        .Fail(std::to_string(m.heads) + " heads do not divide the hidden size " +
              std::to_string(m.hidden));
  }
  if (m.heads % m.kv_heads != 0) {
    field({"num_key_value_heads"})
        .Fail(std::to_string(m.kv_heads) + " key/value heads do not divide the " +
              std::to_string(m.heads) + " heads");
  }
  if (m.positions == PositionKind::kRotary) {
    const double rotated = m.rotary_fraction * static_cast<double>(m.HeadDim());
    if (rotated != std::floor(rotated) || static_cast<std::int64_t>(rotated) % 2 != 0) {
      field({"rotary_pct", "partial_rotary_factor", "head_dim", "num_attention_heads"})
          .Fail(
              "rotary positions rotate an even number of each head's dimensions; head "
              "dimension " +
              std::to_string(m.HeadDim()) + " × " + FormatDouble(m.rotary_fraction) + " = " +
              FormatDouble(rotated));
    }
  }
  if (m.positions == PositionKind::kLearned && m.sequence_length > m.max_positions) {
    throw ConfigError(root.Source() + ": sequence length " + std::to_string(m.sequence_length) +
                      " exceeds the " + std::to_string(m.max_positions) +
                      " rows of the model's learned position table");
  }
  return m;
}

}  // namespace phaze
