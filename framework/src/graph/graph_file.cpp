#include "phaze/graph/graph_file.hpp"

#include <cstdio>
#include <map>
#include <sstream>
#include <fmt/printf.h>

#include "phaze/core/error.hpp"
#include "phaze/graph/backward.hpp"
#include "phaze/graph/fusion.hpp"

namespace phaze {

namespace {

// ---------------------------------------------------------------- export

Json TensorNames(const OperatorGraph& g, const std::vector<int>& list) {
  Json a = Json::MakeArray();
  for (int t : list) a.Push(g.GetTensor(t).name);
  return a;
}

Json OperatorToJson(const Operator& op, const OperatorGraph* g) {
  Json j = Json::MakeObject();
  j["name"] = op.name;
  j["kind"] = ToString(op.kind);
  j["core"] = ToString(op.Core());
  if (op.axes.spans != 0) {
    Json axes = Json::MakeArray();
    for (int a = 1; a < kAxisCount; ++a) {
      if (op.axes.Spans(static_cast<Axis>(a))) axes.Push(std::string(ToString(static_cast<Axis>(a))));
    }
    j["axes"] = axes;
  }
  if (op.axes.row != Axis::kNone) j["row_axis"] = ToString(op.axes.row);
  if (op.expert >= 0) j["expert"] = op.expert;
  if (op.attention_core) j["attention_core"] = true;
  if (op.fp8) j["fp8"] = true;
  if (op.fp8_current_scaling) j["fp8_current_scaling"] = true;
  if (op.fp8_scaling_bytes > 0) j["fp8_scaling_bytes"] = op.fp8_scaling_bytes;
  if (op.attention_kernel) j["attention_kernel"] = true;
  if (op.passes != KernelPasses{}) {
    Json passes = Json::MakeObject();
    passes["reads"] = op.passes.reads;
    passes["writes"] = op.passes.writes;
    passes["kernels"] = op.passes.kernels;
    passes["word_bytes"] = op.passes.word_bytes;
    if (op.passes.held_bytes > 0) passes["held_bytes"] = op.passes.held_bytes;
    j["passes"] = passes;
  }
  if (op.gemm) {
    Json gemm = Json::MakeObject();
    gemm["batch"] = op.gemm->batch;
    gemm["m"] = op.gemm->m;
    gemm["n"] = op.gemm->n;
    gemm["k"] = op.gemm->k;
    const OpAxes& x = op.axes;
    if (x.batch != Axis::kNone || x.m != Axis::kNone || x.n != Axis::kNone || x.k != Axis::kNone) {
      Json axes = Json::MakeObject();
      axes["batch"] = ToString(x.batch);
      axes["m"] = ToString(x.m);
      axes["n"] = ToString(x.n);
      axes["k"] = ToString(x.k);
      gemm["axes"] = axes;
    }
    j["gemm"] = gemm;
    j["flops"] = op.GemmFlops();
  }
  if (!op.vector.empty()) {
    Json v = Json::MakeArray();
    for (const auto& w : op.vector) {
      Json item = Json::MakeObject();
      item["function"] = w.function;
      item["elements"] = w.elements;
      item["row_elements"] = w.row_elements;
      v.Push(item);
    }
    j["vector"] = v;
  }
  if (g != nullptr) {
    j["inputs"] = TensorNames(*g, op.inputs);
    j["outputs"] = TensorNames(*g, op.outputs);
    if (!op.saved.empty()) j["saved"] = TensorNames(*g, op.saved);
    j["bytes_read"] = g->BytesRead(op);
    j["bytes_written"] = g->BytesWritten(op);
  }
  j["weight_bytes"] = op.weight_bytes;
  if (op.kind == OpKind::kCollective) {
    j["collective"] = op.collective ? ToString(*op.collective) : "";
    j["collective_backward"] = op.collective_backward ? ToString(*op.collective_backward) : "";
    j["collective_bytes"] = op.collective_bytes;
    j["collective_group"] = op.collective_group;
    if (op.collective_stride != 1) j["collective_stride"] = op.collective_stride;
    if (op.gemm_overlap >= 0) j["gemm_overlap"] = op.gemm_overlap;
  }
  return j;
}

Json OperatorGraphToJson(const OperatorGraph& g) {
  Json j = Json::MakeObject();
  Json tensors = Json::MakeArray();
  for (const auto& t : g.Tensors()) {
    Json tj = Json::MakeObject();
    tj["name"] = t.name;
    tj["elements"] = t.elements;
    tj["dtype_bytes"] = t.dtype_bytes;
    if (!t.requires_grad) tj["requires_grad"] = false;
    tensors.Push(tj);
  }
  j["tensors"] = tensors;
  Json ops = Json::MakeArray();
  for (const auto& op : g.Ops()) ops.Push(OperatorToJson(op, &g));
  j["ops"] = ops;
  j["outputs"] = TensorNames(g, g.Outputs());
  return j;
}

// ---------------------------------------------------------------- import

std::int64_t NonNegative(const ConfigNode& n) {
  std::int64_t v = n.AsInt();
  if (v < 0) n.Fail("expected an integer ≥ 0, found " + n.Describe());
  return v;
}

Axis ParseAxisNode(const ConfigNode& node) {
  auto axis = ParseAxis(node.AsString());
  if (!axis) {
    std::string list;
    for (const auto& a : AxisNames()) list += (list.empty() ? "" : ", ") + a;
    node.Fail("unknown axis '" + node.AsString() + "'; expected one of " + list);
  }
  return *axis;
}

Operator ParseOperator(const ConfigNode& node, const OperatorGraph& g) {
  node.ExpectKeys({"name",
                   "kind",
                   "core",
                   "axes",
                   "row_axis",
                   "expert",
                   "attention_core",
                   "fp8",
                   "fp8_current_scaling",
                   "fp8_scaling_bytes",
                   "attention_kernel",
                   "passes",
                   "gemm",
                   "flops",
                   "vector",
                   "inputs",
                   "outputs",
                   "saved",
                   "bytes_read",
                   "bytes_written",
                   "weight_bytes",
                   "collective",
                   "collective_backward",
                   "collective_bytes",
                   "collective_group",
                   "collective_stride",
                   "gemm_overlap"});
  Operator op;
  op.name = node.Child("name").AsString();
  const ConfigNode kind = node.Child("kind");
  auto parsed_kind = ParseOpKind(kind.AsString());
  if (!parsed_kind) {
    std::string list;
    for (const auto& k : OpKindNames()) list += (list.empty() ? "" : ", ") + k;
    kind.Fail("unknown op kind '" + kind.AsString() + "'; expected one of " + list);
  }
  op.kind = *parsed_kind;
  if (auto n = node.Optional("axes")) {
    for (const auto& item : n->Elements()) op.axes.Add(ParseAxisNode(item));
  }
  if (auto n = node.Optional("row_axis")) op.axes.row = ParseAxisNode(*n);
  if (auto n = node.Optional("expert")) op.expert = NonNegative(*n);
  if (auto n = node.Optional("attention_core")) op.attention_core = n->AsBool();
  if (auto n = node.Optional("fp8")) op.fp8 = n->AsBool();
  if (auto n = node.Optional("fp8_current_scaling")) op.fp8_current_scaling = n->AsBool();
  if (auto n = node.Optional("fp8_scaling_bytes")) op.fp8_scaling_bytes = NonNegative(*n);
  if (auto n = node.Optional("attention_kernel")) op.attention_kernel = n->AsBool();
  if (auto n = node.Optional("passes")) {
    n->ExpectKeys({"reads", "writes", "kernels", "word_bytes", "held_bytes"});
    if (auto v = n->Optional("reads")) op.passes.reads = NonNegative(*v);
    if (auto v = n->Optional("writes")) op.passes.writes = NonNegative(*v);
    if (auto v = n->Optional("kernels")) op.passes.kernels = NonNegative(*v);
    if (auto v = n->Optional("word_bytes")) op.passes.word_bytes = NonNegative(*v);
    if (auto v = n->Optional("held_bytes")) op.passes.held_bytes = NonNegative(*v);
  }
  if (auto n = node.Optional("gemm")) {
    n->ExpectKeys({"batch", "m", "n", "k", "axes"});
    if (auto a = n->Optional("axes")) {
      a->ExpectKeys({"batch", "m", "n", "k"});
      auto axis = [&](const char* key) {
        auto v = a->Optional(key);
        return v ? ParseAxisNode(*v) : Axis::kNone;
      };
      op.axes.batch = axis("batch"), op.axes.m = axis("m"), op.axes.n = axis("n");
      op.axes.k = axis("k");
    }
    GemmShape s;
    if (auto b = n->Optional("batch")) s.batch = b->AsPositiveInt();
    s.m = n->Child("m").AsPositiveInt();
    s.n = n->Child("n").AsPositiveInt();
    s.k = n->Child("k").AsPositiveInt();
    op.gemm = s;
  }
  if (auto n = node.Optional("vector")) {
    for (const auto& item : n->Elements()) {
      item.ExpectKeys({"function", "elements", "row_elements"});
      VectorWork w;
      w.function = item.Child("function").AsString();
      w.elements = NonNegative(item.Child("elements"));
      if (auto r = item.Optional("row_elements")) w.row_elements = r->AsPositiveInt();
      op.vector.push_back(w);
    }
  }
  if ((op.kind == OpKind::kGemm || op.kind == OpKind::kBatchedGemm) && !op.gemm) {
    node.Fail("a '" + std::string(ToString(op.kind)) +
              "' op needs a 'gemm' shape {batch, m, n, k}");
  }
  if (auto n = node.Optional("core")) {
    const std::string derived(ToString(op.Core()));
    if (n->AsString() != derived) {
      n->Fail("core class '" + n->AsString() + "' contradicts the op's work: it is '" + derived +
              "' (tensor: gemm only; vector: vector only; fused: both; none: neither)");
    }
  }
  auto tensors = [&](std::string_view key) {
    std::vector<int> out;
    auto list = node.Optional(key);
    if (!list) return out;
    for (const auto& e : list->Elements()) {
      const std::string name = e.AsString();
      const int t = g.FindTensor(name);
      if (t < 0) {
        std::vector<std::string> names;
        for (const auto& tensor : g.Tensors()) names.push_back(tensor.name);
        std::string hint;
        if (auto guess = DidYouMean(name, names)) hint = "; did you mean '" + *guess + "'?";
        e.Fail("unknown tensor '" + name + "'" + hint + " (declare it under 'tensors')");
      }
      out.push_back(t);
    }
    return out;
  };
  op.inputs = tensors("inputs");
  op.outputs = tensors("outputs");
  op.saved = tensors("saved");
  if (auto n = node.Optional("weight_bytes")) op.weight_bytes = NonNegative(*n);
  for (auto [key, field] :
       {std::pair<const char*, std::optional<CollectiveKind>*>{"collective", &op.collective},
        {"collective_backward", &op.collective_backward}}) {
    if (auto n = node.Optional(key)) {
      const std::string text =
          n->AsChoice({"", "all_reduce", "all_gather", "reduce_scatter", "all_to_all"});
      *field = text.empty() ? std::nullopt : ParseCollectiveKind(text);
    }
  }
  if (auto n = node.Optional("collective_bytes")) op.collective_bytes = NonNegative(*n);
  if (auto n = node.Optional("collective_group")) op.collective_group = n->AsPositiveInt();
  if (auto n = node.Optional("collective_stride")) op.collective_stride = n->AsPositiveInt();
  if (auto n = node.Optional("gemm_overlap")) {
    op.gemm_overlap = n->AsNonNegativeDouble();
    if (op.gemm_overlap > 1) n->Fail("expected a fraction in [0, 1]");
  }
  return op;
}

OperatorGraph ParseOperatorGraph(const ConfigNode& node) {
  node.ExpectKeys({"tensors", "ops", "outputs"});
  OperatorGraph g;
  for (const auto& t : node.Child("tensors").Elements()) {
    t.ExpectKeys({"name", "elements", "dtype_bytes", "requires_grad"});
    const std::string name = t.Child("name").AsString();
    if (g.FindTensor(name) >= 0) t.Child("name").Fail("duplicate tensor name '" + name + "'");
    auto dtype = t.Optional("dtype_bytes");
    auto grad = t.Optional("requires_grad");
    g.AddTensor(name, NonNegative(t.Child("elements")), dtype ? dtype->AsPositiveInt() : 2,
                grad ? grad->AsBool() : true);
  }
  for (const auto& o : node.Child("ops").Elements()) {
    Operator op = ParseOperator(o, g);
    try {
      g.AddOp(std::move(op));
    } catch (const InvalidArgumentError& e) {
      o.Fail(e.what());
    }
  }
  if (auto outs = node.Optional("outputs")) {
    for (const auto& e : outs->Elements()) {
      const int t = g.FindTensor(e.AsString());
      if (t < 0) e.Fail("unknown tensor '" + e.AsString() + "'");
      g.MarkOutput(t);
    }
  }
  try {
    g.TopologicalOrder();
  } catch (const InvalidArgumentError& e) {
    node.Child("ops").Fail(e.what());
  }
  return g;
}

// ---------------------------------------------------------------- summary helpers

std::string Fixed(double value, int digits) {
  std::string buf = fmt::sprintf("%.*f", digits, value);
  return buf;
}

std::string Pad(const std::string& s, size_t width, bool right = true) {
  if (s.size() >= width) return s;
  return right ? std::string(width - s.size(), ' ') + s : s + std::string(width - s.size(), ' ');
}

std::string DotId(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

}  // namespace

std::string WithThousands(std::int64_t value) {
  std::string digits = std::to_string(value < 0 ? -value : value);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return value < 0 ? "-" + out : out;
}

Json LayerGraphToJson(const LayerGraph& graph) {
  Json j = Json::MakeObject();
  j["format"] = kLayerGraphFormat;
  j["version"] = kLayerGraphFormatVersion;
  Json model = Json::MakeObject();
  model["name"] = graph.model;
  model["family"] = graph.family;
  model["micro_batch"] = graph.micro_batch;
  model["sequence_length"] = graph.sequence_length;
  model["dtype_bytes"] = graph.dtype_bytes;
  model["tensor_parallel"] = graph.tensor_parallel;
  if (!graph.strategy.empty()) model["strategy"] = graph.strategy;
  if (graph.weight_replicas != 1) model["weight_replicas"] = graph.weight_replicas;
  if (graph.expert_fold != 1) model["expert_fold"] = graph.expert_fold;
  if (graph.heads > 0) model["heads"] = graph.heads;
  if (graph.kv_heads > 0) model["kv_heads"] = graph.kv_heads;
  if (graph.vocab > 0) model["vocab"] = graph.vocab;
  if (graph.padded_vocab > 0) model["padded_vocab"] = graph.padded_vocab;
  model["fused"] = graph.fused;
  model["optimizer"] = std::string(ToString(graph.optimizer.kind));
  model["parameters"] = graph.Parameters();
  if (graph.published_parameters) model["published_parameters"] = *graph.published_parameters;
  model["forward_flops"] = graph.ForwardFlops();
  model["backward_flops"] = graph.BackwardFlops();
  j["model"] = model;
  Json uniques = Json::MakeArray();
  for (size_t i = 0; i < graph.unique_layers.size(); ++i) {
    const UniqueLayer& u = graph.unique_layers[i];
    Json uj = Json::MakeObject();
    uj["id"] = static_cast<int>(i);
    uj["name"] = u.name;
    uj["kind"] = std::string(ToString(u.kind));
    uj["parameters"] = u.parameters;
    uj["tied_parameters"] = u.tied_parameters;
    uj["tensor_parallel"] = u.tensor_parallel;
    uj["weight_bytes"] = u.weight_bytes;
    uj["gradient_bytes"] = u.gradient_bytes;
    uj["optimizer_state_bytes"] = u.optimizer_state_bytes;
    uj["activation_bytes"] = u.activation_bytes;
    uj["step_working_bytes"] = u.step_working_bytes;
    uj["forward"] = OperatorGraphToJson(u.forward);
    uj["backward"] = OperatorGraphToJson(u.backward);
    uj["optimizer_step"] = OperatorToJson(u.optimizer_step, nullptr);
    uniques.Push(uj);
  }
  j["unique_layers"] = uniques;
  Json layers = Json::MakeArray();
  for (const auto& l : graph.layers) {
    Json lj = Json::MakeObject();
    lj["name"] = l.name;
    lj["unique_id"] = l.unique_id;
    layers.Push(lj);
  }
  j["layers"] = layers;
  Json edges = Json::MakeArray();
  for (const auto& e : graph.edges) {
    Json ej = Json::MakeObject();
    ej["from"] = e.from;
    ej["to"] = e.to;
    ej["bytes"] = e.bytes;
    if (e.gather_group > 1) ej["gather_group"] = e.gather_group;
    edges.Push(ej);
  }
  j["edges"] = edges;
  return j;
}

bool IsLayerGraphDocument(const ConfigNode& root) { return root.IsMap() && root.Has("format"); }

LayerGraph ParseLayerGraphFile(const ConfigNode& root) {
  if (!root.IsMap()) root.Fail("expected a layer-graph document (a map), found " + root.Describe());
  root.ExpectKeys({"format", "version", "model", "unique_layers", "layers", "edges"});
  const ConfigNode format = root.Child("format");
  if (format.AsString() != kLayerGraphFormat) {
    format.Fail(std::string("expected '") + kLayerGraphFormat + "', found " + format.Describe());
  }
  const ConfigNode version = root.Child("version");
  if (version.AsInt() != kLayerGraphFormatVersion) {
    version.Fail("this phaze reads version " + std::to_string(kLayerGraphFormatVersion) +
                 ", found " + version.Describe() +
                 (version.AsInt() == 1 ? " (version 1 said how Megatron splits each op, `tp_role`; "
                                         "version 2 says what its axes are, `axes`: re-export the "
                                         "graph with `phaze graph --format json`)"
                                       : ""));
  }
  LayerGraph g;
  const ConfigNode model = root.Child("model");
  model.ExpectKeys({"name", "family", "micro_batch", "sequence_length", "dtype_bytes",
                    "tensor_parallel", "strategy", "weight_replicas", "expert_fold", "heads",
                    "kv_heads", "vocab", "padded_vocab", "fused", "optimizer", "parameters",
                    "published_parameters", "forward_flops", "backward_flops"});
  g.model = model.Child("name").AsString();
  if (auto n = model.Optional("family")) g.family = n->AsString();
  g.micro_batch = model.Child("micro_batch").AsPositiveInt();
  g.sequence_length = model.Child("sequence_length").AsPositiveInt();
  if (auto n = model.Optional("dtype_bytes")) g.dtype_bytes = n->AsPositiveInt();
  if (auto n = model.Optional("tensor_parallel")) g.tensor_parallel = n->AsPositiveInt();
  if (auto n = model.Optional("strategy")) g.strategy = n->AsString();
  if (auto n = model.Optional("weight_replicas")) g.weight_replicas = n->AsPositiveInt();
  if (auto n = model.Optional("expert_fold")) g.expert_fold = n->AsPositiveInt();
  if (auto n = model.Optional("heads")) g.heads = n->AsPositiveInt();
  if (auto n = model.Optional("kv_heads")) g.kv_heads = n->AsPositiveInt();
  if (auto n = model.Optional("vocab")) g.vocab = n->AsPositiveInt();
  if (auto n = model.Optional("padded_vocab")) g.padded_vocab = n->AsPositiveInt();
  if (auto n = model.Optional("fused")) g.fused = n->AsBool();
  if (auto n = model.Optional("optimizer")) {
    g.optimizer = OptimizerSpec::For(n->AsEnum(
        {OptimizerKind::kAdamMixed, OptimizerKind::kAdamBf16Moments, OptimizerKind::kSgd}));
  }
  if (auto n = model.Optional("published_parameters")) g.published_parameters = n->AsPositiveInt();

  for (const auto& node : root.Child("unique_layers").Elements()) {
    node.ExpectKeys({"id", "name", "kind", "parameters", "tied_parameters", "tensor_parallel",
                     "weight_bytes", "gradient_bytes", "optimizer_state_bytes", "activation_bytes",
                     "step_working_bytes", "forward", "backward", "optimizer_step"});
    if (auto id = node.Optional("id");
        id && id->AsInt() != static_cast<std::int64_t>(g.unique_layers.size())) {
      id->Fail("unique layer ids must be 0, 1, 2, … in order; expected " +
               std::to_string(g.unique_layers.size()) + ", found " + id->Describe());
    }
    UniqueLayer u;
    u.name = node.Child("name").AsString();
    u.kind = node.Optional("kind") ? node.Child("kind").AsEnum({LayerKind::kEmbedding,
                                                                LayerKind::kBlock, LayerKind::kHead,
                                                                LayerKind::kCustom})
                                   : LayerKind::kCustom;
    u.parameters = NonNegative(node.Child("parameters"));
    if (auto n = node.Optional("tied_parameters")) u.tied_parameters = NonNegative(*n);
    if (auto n = node.Optional("tensor_parallel")) u.tensor_parallel = n->AsBool();
    u.forward = ParseOperatorGraph(node.Child("forward"));
    if (auto n = node.Optional("backward")) {
      u.backward = ParseOperatorGraph(*n);
    } else {
      try {
        u.backward = DeriveBackward(u.forward);
      } catch (const InvalidArgumentError& e) {
        node.Child("forward").Fail(e.what());
      }
      if (g.fused) u.backward = FuseOperators(u.backward);
    }
    FinalizeLayerMemory(u, g.dtype_bytes, g.optimizer);
    if (auto n = node.Optional("weight_bytes")) u.weight_bytes = NonNegative(*n);
    if (auto n = node.Optional("gradient_bytes")) u.gradient_bytes = NonNegative(*n);
    if (auto n = node.Optional("optimizer_state_bytes")) u.optimizer_state_bytes = NonNegative(*n);
    if (auto n = node.Optional("activation_bytes")) u.activation_bytes = NonNegative(*n);
    if (auto n = node.Optional("step_working_bytes")) u.step_working_bytes = NonNegative(*n);
    g.unique_layers.push_back(std::move(u));
  }
  if (g.unique_layers.empty())
    root.Child("unique_layers").Fail("expected at least one unique layer");

  std::map<std::string, int> layer_index;
  for (const auto& node : root.Child("layers").Elements()) {
    node.ExpectKeys({"name", "unique_id"});
    LayerInstance l;
    l.name = node.Child("name").AsString();
    if (!layer_index.emplace(l.name, static_cast<int>(g.layers.size())).second) {
      node.Child("name").Fail("duplicate layer name '" + l.name + "'");
    }
    const ConfigNode id = node.Child("unique_id");
    l.unique_id = static_cast<int>(NonNegative(id));
    if (l.unique_id >= static_cast<int>(g.unique_layers.size())) {
      id.Fail("no unique layer " + std::to_string(l.unique_id) + "; there are " +
              std::to_string(g.unique_layers.size()));
    }
    g.layers.push_back(l);
  }
  if (g.layers.empty()) root.Child("layers").Fail("expected at least one layer");
  if (auto edges = root.Optional("edges")) {
    for (const auto& node : edges->Elements()) {
      node.ExpectKeys({"from", "to", "bytes", "gather_group"});
      auto endpoint = [&](const ConfigNode& n) {
        if (n.IsScalar() && layer_index.count(n.AsString())) return layer_index[n.AsString()];
        std::int64_t v = n.AsInt();
        if (v < 0 || v >= static_cast<std::int64_t>(g.layers.size())) {
          n.Fail("expected a layer index 0.." + std::to_string(g.layers.size() - 1) +
                 " or a layer name, found " + n.Describe());
        }
        return static_cast<int>(v);
      };
      LayerGraphEdge e{endpoint(node.Child("from")), endpoint(node.Child("to")),
                       NonNegative(node.Child("bytes"))};
      if (auto n = node.Optional("gather_group")) e.gather_group = n->AsPositiveInt();
      if (e.from >= e.to) {
        node.Fail(
            "edges must go from an earlier to a later layer (layers are listed in "
            "topological order); found " +
            std::to_string(e.from) + " -> " + std::to_string(e.to));
      }
      g.edges.push_back(e);
    }
  }
  return g;
}

std::string LayerGraphToDot(const LayerGraph& graph) {
  static const char* kColors[] = {"#f4a582", "#92c5de", "#c2a5cf", "#e0e0e0"};  // by CoreClass
  std::ostringstream os;
  os << "digraph " << DotId(graph.model) << " {\n"
     << "  // operator graphs of each unique layer; colours: tensor, vector, fused, none\n"
     << "  rankdir=TB;\n  node [shape=box, style=filled, fontname=\"Helvetica\", fontsize=10];\n";
  const auto counts = graph.InstanceCounts();
  for (size_t u = 0; u < graph.unique_layers.size(); ++u) {
    const UniqueLayer& layer = graph.unique_layers[u];
    for (const auto& [pass, g] :
         {std::pair<const char*, const OperatorGraph*>{"forward", &layer.forward},
          {"backward", &layer.backward}}) {
      const std::string prefix = layer.name + "/" + pass + "/";
      os << "  subgraph " << DotId("cluster_" + prefix) << " {\n    label="
         << DotId(layer.name + " ×" + std::to_string(counts[u]) + " (" + pass + ")") << ";\n";
      for (const auto& op : g->Ops()) {
        std::string label = op.name + "\\n" + std::string(ToString(op.Core()));
        if (op.gemm) {
          label += " " + std::to_string(op.gemm->batch) + "×" + std::to_string(op.gemm->m) + "×" +
                   std::to_string(op.gemm->n) + "×" + std::to_string(op.gemm->k);
        }
        os << "    " << DotId(prefix + op.name) << " [label=\"" << label << "\", fillcolor=\""
           << kColors[static_cast<int>(op.Core())] << "\"];\n";
      }
      const auto succ = g->Successors();
      for (size_t i = 0; i < succ.size(); ++i) {
        for (int j : succ[i]) {
          os << "    " << DotId(prefix + g->GetOp(i).name) << " -> "
             << DotId(prefix + g->GetOp(j).name) << ";\n";
        }
      }
      os << "  }\n";
    }
  }
  os << "}\n";
  return os.str();
}

std::string LayerGraphSummary(const LayerGraph& graph) {
  std::ostringstream os;
  const std::int64_t params = graph.Parameters();
  os << "model        " << graph.model;
  if (!graph.family.empty()) os << " (family " << graph.family << ")";
  os << "\nshape        micro-batch " << graph.micro_batch << " x sequence "
     << graph.sequence_length << ", " << graph.dtype_bytes << "-byte values, ";
  // The width is the slicing strategy's: a tensor-parallel width for megatron, a context-parallel
  // one for context_parallel.
  if (graph.strategy.empty()) {
    os << "unsliced";
  } else {
    os << "sliced by " << graph.strategy << " at width " << graph.tensor_parallel;
  }
  os << ", fusion " << (graph.fused ? "on" : "off") << ", optimizer "
     << ToString(graph.optimizer.kind) << "\n";
  if (graph.padded_vocab > 0) {
    os << "vocabulary   " << WithThousands(graph.vocab) << " rows padded to "
       << WithThousands(graph.padded_vocab) << " (+" << graph.padded_vocab - graph.vocab << ", by "
       << graph.strategy << ")\n";
  }
  os << "parameters   " << WithThousands(params);
  if (!graph.strategy.empty()) {  // a slice: the published count is the whole model's
    os << " per device (strategy " << graph.strategy << ", width " << graph.tensor_parallel << ")";
  } else if (graph.published_parameters) {
    const double rel = static_cast<double>(params - *graph.published_parameters) /
                       static_cast<double>(*graph.published_parameters);
    os << "  (published " << WithThousands(*graph.published_parameters) << ": "
       << (params == *graph.published_parameters ? std::string("exact")
                                                 : (rel > 0 ? "+" : "") + Fixed(100 * rel, 2) + "%")
       << ")";
  }
  const auto counts = graph.InstanceCounts();
  os << "\nlayers       " << graph.layers.size() << " (";
  for (size_t u = 0; u < counts.size(); ++u) {
    os << (u ? " + " : "") << counts[u] << " x " << graph.unique_layers[u].name;
  }
  os << "), " << graph.unique_layers.size() << " unique\n\n";
  os << Pad("unique layer", 14, false) << Pad("count", 6) << Pad("fw ops t/v/f/n", 17)
     << Pad("bw ops t/v/f/n", 17) << Pad("parameters", 16) << Pad("fw GFLOP", 12)
     << Pad("bw GFLOP", 12) << Pad("saved MiB", 11) << "\n";
  auto ops = [](const OperatorGraph& g) {
    auto c = g.CountByCore();
    return std::to_string(g.Ops().size()) + " " + std::to_string(c[0]) + "/" +
           std::to_string(c[1]) + "/" + std::to_string(c[2]) + "/" + std::to_string(c[3]);
  };
  std::int64_t activations = 0, state = 0;
  std::string collective_lines;
  for (size_t u = 0; u < graph.unique_layers.size(); ++u) {
    const UniqueLayer& l = graph.unique_layers[u];
    os << Pad(l.name, 14, false) << Pad(std::to_string(counts[u]), 6) << Pad(ops(l.forward), 17)
       << Pad(ops(l.backward), 17) << Pad(WithThousands(l.parameters), 16)
       << Pad(Fixed(l.forward.GemmFlops() / 1e9, 1), 12)
       << Pad(Fixed(l.backward.GemmFlops() / 1e9, 1), 12)
       << Pad(Fixed(l.activation_bytes / 1048576.0, 1), 11) << "\n";
    for (const auto& [pass, g] :
         {std::pair<const char*, const OperatorGraph*>{"forward", &l.forward},
          {"backward", &l.backward}}) {
      // (kind, group) → count, bytes: the devices each runs over (an expert group's all-to-alls
      // span e devices, the tensor-parallel collectives the width).
      std::map<std::pair<std::string, std::int64_t>, std::pair<int, std::int64_t>> collectives;
      for (const auto& op : g->Ops()) {
        if (op.kind != OpKind::kCollective || !op.collective) continue;
        auto& [count, bytes] =
            collectives[{std::string(ToString(*op.collective)), op.collective_group}];
        ++count;
        bytes += op.collective_bytes;
      }
      for (const auto& [kind, cb] : collectives) {
        collective_lines += "  " + l.name + " " + pass + ": " + std::to_string(cb.first) + " x " +
                            kind.first + ", " + WithThousands(cb.second) + " bytes in all, group " +
                            std::to_string(kind.second) + "\n";
      }
    }
    activations += counts[u] * l.activation_bytes;
    state += counts[u] * (l.weight_bytes + l.gradient_bytes + l.optimizer_state_bytes);
  }
  const double fw = static_cast<double>(graph.ForwardFlops()),
               bw = static_cast<double>(graph.BackwardFlops());
  if (!collective_lines.empty())
    os << "\ncollectives per unique layer (per device):\n" << collective_lines;
  os << "\nper micro-batch: forward " << Fixed(fw / 1e12, 3) << " TFLOP, backward "
     << Fixed(bw / 1e12, 3) << " TFLOP (GEMMs), saved activations "
     << Fixed(activations / 1073741824.0, 3) << " GiB\n"
     << "model state:     weights + gradients + optimizer " << Fixed(state / 1073741824.0, 3)
     << " GiB\n";
  return os.str();
}

}  // namespace phaze
