#include "phaze/graph/layer_graph.hpp"

#include "phaze/core/error.hpp"

namespace phaze {

OptimizerSpec OptimizerSpec::Named(const std::string& name) {
  if (name == "adam-mixed") return {"adam-mixed", 12, "adam"};
  if (name == "sgd") return {"sgd", 0, "sgd"};
  throw InvalidArgumentError("unknown optimizer '" + name + "'; known: adam-mixed, sgd");
}

std::int64_t LayerGraph::Parameters() const {
  std::int64_t total = 0;
  for (const auto& l : layers) total += unique_layers.at(l.unique_id).parameters;
  return total;
}

std::int64_t LayerGraph::ForwardFlops() const {
  std::int64_t total = 0;
  for (const auto& l : layers) total += unique_layers.at(l.unique_id).forward.GemmFlops();
  return total;
}

std::int64_t LayerGraph::BackwardFlops() const {
  std::int64_t total = 0;
  for (const auto& l : layers) total += unique_layers.at(l.unique_id).backward.GemmFlops();
  return total;
}

std::vector<int> LayerGraph::InstanceCounts() const {
  std::vector<int> counts(unique_layers.size(), 0);
  for (const auto& l : layers) ++counts.at(l.unique_id);
  return counts;
}

std::string LayerGraph::Validate() const {
  const int n = static_cast<int>(layers.size());
  if (n == 0) return "the layer graph has no layers";
  for (int i = 0; i < n; ++i) {
    if (layers[i].unique_id < 0 || layers[i].unique_id >= static_cast<int>(unique_layers.size())) {
      return "layer '" + layers[i].name + "' refers to unique layer " +
             std::to_string(layers[i].unique_id) + ", but there are " +
             std::to_string(unique_layers.size());
    }
  }
  for (const auto& e : edges) {
    if (e.from < 0 || e.to >= n || e.from >= e.to) {
      return "edge " + std::to_string(e.from) + " -> " + std::to_string(e.to) +
             " must go from an earlier to a later layer among 0.." + std::to_string(n - 1);
    }
    if (e.bytes < 0)
      return "edge " + std::to_string(e.from) + " -> " + std::to_string(e.to) +
             " has negative bytes";
  }
  return "";
}

void FinalizeLayerMemory(UniqueLayer& layer, std::int64_t dtype_bytes,
                         const OptimizerSpec& optimizer) {
  const std::int64_t held = layer.parameters + layer.tied_parameters;
  layer.weight_bytes = held * dtype_bytes;
  layer.gradient_bytes = held * dtype_bytes;
  layer.optimizer_state_bytes = held * optimizer.state_bytes_per_parameter;
  layer.activation_bytes = layer.forward.SavedBytes();
  Operator step;
  step.name = layer.name + ".optimizer_step";
  step.kind = OpKind::kOptimizer;
  if (held > 0) step.vector.push_back({optimizer.step_function, held, 1});
  // Reads weights and gradients, writes weights (and reads/writes the optimizer state).
  step.weight_bytes = layer.weight_bytes + layer.gradient_bytes + layer.optimizer_state_bytes;
  layer.optimizer_step = step;
}

}  // namespace phaze
