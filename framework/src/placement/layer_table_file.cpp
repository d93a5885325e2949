#include "phaze/placement/layer_table_file.hpp"

#include <map>

#include "phaze/core/json.hpp"
#include "phaze/core/limits.hpp"

namespace phaze {

namespace {

// A byte count of a layer (its weights, activations, an edge): at most limits::kCount (2^62), so
// a stage's sums stay finite.
double Bytes(const ConfigNode& n) {
  const double v = n.AsNonNegativeDouble();
  if (v > limits::kCount) n.Fail("expected at most 2^62 bytes, found " + n.AsString());
  return v;
}

}  // namespace

PlacementProblem ParseLayerTableFile(const ConfigNode& root) {
  root.ExpectKeys({"num_accelerators", "global_batch", "micro_batch", "link_bandwidth_bytes_per_s",
                   "levels", "hbm_bytes", "recompute", "widths"});
  PlacementProblem p;
  p.num_accelerators = root.Child("num_accelerators").AsIntInRange(1, limits::kAccelerators);
  p.global_batch = root.Child("global_batch").AsIntInRange(1, limits::kGlobalBatch);
  auto micro = root.Child("micro_batch");
  p.micro_batch = micro.AsIntInRange(1, limits::kMicroBatch);
  if (p.global_batch % p.micro_batch != 0) {
    micro.Fail("global_batch " + std::to_string(p.global_batch) + " is not a multiple of " +
               std::to_string(p.micro_batch));
  }
  if (auto levels = root.Optional("levels")) {
    if (root.Has("link_bandwidth_bytes_per_s")) {
      levels->Fail("give either levels or link_bandwidth_bytes_per_s (a flat network), not both");
    }
    p.network = Network::ParseLevels(*levels);
  } else {
    p.network = Network::Flat(root.Child("link_bandwidth_bytes_per_s").AsRate(limits::kMinLinkRate, "byte per second"));
  }
  const ConfigNode hbm = root.Child("hbm_bytes");
  p.hbm_bytes = hbm.AsPositiveDouble();
  if (p.hbm_bytes > static_cast<double>(limits::kMemoryBytes)) {
    hbm.Fail("expected at most 2^50 bytes, found " + hbm.AsString());
  }
  if (auto r = root.Optional("recompute")) p.recompute = r->AsBool();
  auto widths = root.Child("widths");
  for (const auto& [key, node] : widths.Entries()) {
    int t = 0;
    try {
      size_t used = 0;
      t = std::stoi(key, &used);
      if (used != key.size() || t < 1) t = 0;
    } catch (const std::exception&) {
      t = 0;
    }
    if (t == 0) node.Fail("width keys must be positive integers (the tensor-parallel width), found '" + key + "'");
    node.ExpectKeys({"layers", "edges", "tied_gradient_bytes", "expert_fold"});
    LayerTable table;
    if (auto v = node.Optional("tied_gradient_bytes")) table.tied_gradient_bytes = Bytes(*v);
    if (auto v = node.Optional("expert_fold")) table.expert_fold = v->AsIntInRange(1, 1 << 20);
    std::map<std::string, int> index;
    const ConfigNode layers = node.Child("layers");
    if (layers.IsSequence() &&
        static_cast<std::int64_t>(layers.Elements().size()) > limits::kPlacementLayers) {
      layers.Fail(std::to_string(layers.Elements().size()) + " layers, more than phaze's limit of " +
                  std::to_string(limits::kPlacementLayers) +
                  " for the placement DP (its stage table grows as layers² × stages: 1,000 "
                  "layers take about 3 s); merge consecutive layers (share/config/README.md, "
                  "Limits)");
    }
    for (const auto& ln : layers.Elements()) {
      ln.ExpectKeys({"name", "forward_s", "backward_s", "recompute_forward_s",
                     "backward_recompute_s", "optimizer_step_s", "weight_bytes",
                     "cached_weight_bytes", "gathered_weight_bytes", "gradient_bytes",
                     "optimizer_state_bytes", "activation_bytes", "working_bytes",
                     "step_working_bytes", "expert_weight_bytes", "tensor_parallel"});
      PlacementLayer l;
      auto name = ln.Child("name");
      l.name = name.AsString();
      if (index.count(l.name)) name.Fail("duplicate layer name '" + l.name + "'");
      l.forward_s = ln.Child("forward_s").AsDuration();
      l.backward_s = ln.Child("backward_s").AsDuration();
      if (auto v = ln.Optional("recompute_forward_s")) l.recompute_forward_s = v->AsDuration();
      if (auto v = ln.Optional("backward_recompute_s")) l.backward_recompute_s = v->AsDuration();
      if (auto v = ln.Optional("optimizer_step_s")) l.optimizer_step_s = v->AsDuration();
      if (auto v = ln.Optional("working_bytes")) l.working_bytes = Bytes(*v);
      if (auto v = ln.Optional("step_working_bytes")) l.step_working_bytes = Bytes(*v);
      l.weight_bytes = Bytes(ln.Child("weight_bytes"));
      if (auto v = ln.Optional("cached_weight_bytes")) l.cached_weight_bytes = Bytes(*v);
      if (auto v = ln.Optional("gradient_bytes")) l.gradient_bytes = Bytes(*v);
      if (auto v = ln.Optional("gathered_weight_bytes")) {
        l.gathered_weight_bytes = Bytes(*v);
        if (*l.gathered_weight_bytes > l.weight_bytes) {
          v->Fail("gathered_weight_bytes are at most weight_bytes (" +
                  FormatDouble(l.weight_bytes) + "), found " +
                  FormatDouble(*l.gathered_weight_bytes));
        }
      }
      if (auto v = ln.Optional("optimizer_state_bytes")) l.optimizer_state_bytes = Bytes(*v);
      l.activation_bytes = Bytes(ln.Child("activation_bytes"));
      if (auto v = ln.Optional("expert_weight_bytes")) {
        l.expert_weight_bytes = Bytes(*v);
        if (l.expert_weight_bytes > l.weight_bytes) {
          v->Fail("expert_weight_bytes are part of weight_bytes (" + FormatDouble(l.weight_bytes) +
                  "), found " + FormatDouble(l.expert_weight_bytes));
        }
      }
      if (auto v = ln.Optional("tensor_parallel")) l.tensor_parallel = v->AsBool();
      index[l.name] = static_cast<int>(table.layers.size());
      table.layers.push_back(l);
    }
    if (table.layers.empty()) node.Child("layers").Fail("expected at least one layer");
    if (auto edges = node.Optional("edges")) {
      for (const auto& en : edges->Elements()) {
        en.ExpectKeys({"from", "to", "bytes", "gather_group"});
        auto endpoint = [&](const char* key) {
          auto n = en.Child(key);
          auto it = index.find(n.AsString());
          if (it == index.end()) n.Fail("no layer named '" + n.AsString() + "' in this width");
          return it->second;
        };
        PlacementEdge e{endpoint("from"), endpoint("to"), Bytes(en.Child("bytes"))};
        if (auto g = en.Optional("gather_group")) e.gather_group = g->AsPositiveInt();
        if (e.from >= e.to) {
          en.Fail("edges must go forward in the layer list (list layers in a topological order)");
        }
        table.edges.push_back(e);
      }
    }
    p.widths[t] = std::move(table);
  }
  if (p.widths.empty()) widths.Fail("expected at least one width");
  return p;
}

Json PlacementPlanToJson(const PlacementPlan& plan, const std::vector<std::string>& layer_names) {
  Json p = Json::MakeObject();
  p["pipeline_stages"] = plan.pipeline_stages;
  p["data_parallel"] = plan.data_parallel;
  p["tensor_parallel"] = plan.tensor_parallel;
  p["virtual_stages"] = plan.virtual_stages;
  p["micro_batches_per_batch"] = plan.micro_batches;
  p["max_stage_load_s"] = plan.max_stage_load_s;
  p["bubble_share"] = plan.bubble_share;
  p["sync_share"] = plan.sync_share;
  p["breakdown"] = ToJson(plan.breakdown);
  Json stages = Json::MakeArray();
  for (const auto& s : plan.stages) {
    Json sj = Json::MakeObject();
    sj["first_layer"] = layer_names.at(static_cast<std::size_t>(s.first_layer));
    sj["last_layer"] = layer_names.at(static_cast<std::size_t>(s.last_layer));
    sj["layers"] = s.last_layer - s.first_layer + 1;
    sj["devices"] = s.devices;
    sj["load_s"] = s.load_s;
    sj["forward_s"] = s.forward_s;
    sj["backward_s"] = s.backward_s;
    sj["recompute_s"] = s.recompute_s;
    sj["sharding_s"] = s.sharding_s;
    sj["peak_memory_bytes"] = s.peak_memory_bytes;
    sj["memory"] = ToJson(s.memory);
    stages.Push(sj);
  }
  p["stages"] = stages;
  return p;
}

std::vector<std::string> LayerNames(const LayerTable& table) {
  std::vector<std::string> names;
  for (const auto& l : table.layers) names.push_back(l.name);
  return names;
}

Json ToJson(const StepBreakdown& b) {
  Json j = Json::MakeObject();
  j["forward_s"] = b.forward_s;
  j["backward_s"] = b.backward_s;
  j["recompute_s"] = b.recompute_s;
  j["pipeline_send_s"] = b.pipeline_send_s;
  j["sharding_s"] = b.sharding_s;
  j["bubble_s"] = b.bubble_s;
  j["data_parallel_s"] = b.data_parallel_s;
  j["data_parallel_total_s"] = b.data_parallel_total_s;
  j["optimizer_s"] = b.optimizer_s;
  j["tied_embedding_s"] = b.tied_embedding_s;
  j["bottleneck_stage"] = b.bottleneck_stage;
  j["pipeline_level"] = b.pipeline_level;
  return j;
}

Json ToJson(const StageMemory& m) {
  Json j = Json::MakeObject();
  j["weight_bytes"] = m.weight_bytes;
  j["gradient_bytes"] = m.gradient_bytes;
  j["optimizer_state_bytes"] = m.optimizer_state_bytes;
  j["activation_bytes"] = m.activation_bytes;
  j["working_bytes"] = m.working_bytes;
  j["gathered_bytes"] = m.gathered_bytes;
  j["in_flight"] = m.in_flight;
  j["step_working_bytes"] = m.step_working_bytes;
  j["peak_at_step"] = m.peak_at_step;
  return j;
}

}  // namespace phaze
