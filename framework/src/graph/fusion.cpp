#include "phaze/graph/fusion.hpp"

#include <algorithm>
#include <set>

namespace phaze {

namespace {

bool Absorbable(const Operator& op) {
  if (op.gemm) return false;
  return op.kind == OpKind::kElementwise || op.kind == OpKind::kDropout || op.kind == OpKind::kView;
}

void AppendUnique(std::vector<int>& list, int value) {
  if (std::find(list.begin(), list.end(), value) == list.end()) list.push_back(value);
}

}  // namespace

OperatorGraph FuseOperators(const OperatorGraph& graph) {
  std::vector<Operator> ops = graph.Ops();
  std::vector<bool> alive(ops.size(), true);
  std::set<int> saved;
  for (const auto& op : ops) saved.insert(op.saved.begin(), op.saved.end());
  std::vector<std::vector<int>> readers(graph.Tensors().size());
  for (size_t i = 0; i < ops.size(); ++i) {
    for (int t : ops[i].inputs) readers[t].push_back(static_cast<int>(i));
  }

  const std::vector<int> order = graph.TopologicalOrder();
  bool changed = true;
  while (changed) {
    changed = false;
    for (int p : order) {
      if (!alive[p] || !ops[p].gemm) continue;
      Operator& producer = ops[p];
      std::set<int> consumers;
      bool blocked = false;
      for (int t : producer.outputs) {
        if (graph.IsOutput(t)) blocked = true;
        for (int r : readers[t]) {
          if (alive[r]) consumers.insert(r);
        }
      }
      if (blocked || consumers.size() != 1) continue;
      const int s = *consumers.begin();
      Operator& sink = ops[s];
      if (!Absorbable(sink)) continue;
      if (sink.kind == OpKind::kView &&
          std::any_of(sink.inputs.begin(), sink.inputs.end(), [&](int t) {
            return std::count(producer.outputs.begin(), producer.outputs.end(), t) == 0;
          })) {
        continue;  // a concat of several ops' outputs would make P wait for them for nothing
      }
      // Merge sink into producer.
      std::vector<int> outputs;
      for (int t : producer.outputs) {
        const bool read_by_sink = std::count(sink.inputs.begin(), sink.inputs.end(), t) > 0;
        if (!read_by_sink || saved.count(t)) outputs.push_back(t);
      }
      for (int t : sink.outputs) outputs.push_back(t);
      for (int t : sink.inputs) {
        if (std::count(producer.outputs.begin(), producer.outputs.end(), t) == 0) {
          AppendUnique(producer.inputs, t);
          readers[t].push_back(p);
        }
      }
      producer.outputs = outputs;
      for (const auto& w : sink.vector) producer.vector.push_back(w);
      for (int t : sink.saved) AppendUnique(producer.saved, t);
      producer.weight_bytes += sink.weight_bytes;
      producer.attention_core = producer.attention_core && sink.attention_core;
      alive[s] = false;
      changed = true;
    }
  }

  // Rebuild with the live ops (in their original order) and only the tensors still referenced.
  std::vector<bool> used(graph.Tensors().size(), false);
  for (size_t i = 0; i < ops.size(); ++i) {
    if (!alive[i]) continue;
    for (const auto* list : {&ops[i].inputs, &ops[i].outputs, &ops[i].saved}) {
      for (int t : *list) used[t] = true;
    }
  }
  for (int t : graph.Outputs()) used[t] = true;
  std::vector<int> remap(graph.Tensors().size(), -1);
  OperatorGraph fused;
  for (size_t t = 0; t < used.size(); ++t) {
    if (!used[t]) continue;
    const Tensor& tensor = graph.GetTensor(t);
    remap[t] =
        fused.AddTensor(tensor.name, tensor.elements, tensor.dtype_bytes, tensor.requires_grad);
  }
  auto map_all = [&](std::vector<int>& list) {
    for (int& t : list) t = remap[t];
  };
  for (size_t i = 0; i < ops.size(); ++i) {
    if (!alive[i]) continue;
    Operator op = ops[i];
    map_all(op.inputs);
    map_all(op.outputs);
    map_all(op.saved);
    fused.AddOp(std::move(op));
  }
  for (int t : graph.Outputs()) fused.MarkOutput(remap[t]);
  return fused;
}

}  // namespace phaze
