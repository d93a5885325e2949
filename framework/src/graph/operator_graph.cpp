#include "phaze/graph/operator_graph.hpp"

#include <algorithm>
#include <queue>
#include <set>

#include "phaze/core/error.hpp"

namespace phaze {

int OperatorGraph::AddTensor(std::string name, std::int64_t elements, std::int64_t dtype_bytes,
                             bool requires_grad) {
  if (FindTensor(name) >= 0) throw InvalidArgumentError("duplicate tensor name '" + name + "'");
  if (elements < 0 || dtype_bytes <= 0) {
    throw InvalidArgumentError("tensor '" + name + "': elements must be ≥ 0 and dtype_bytes ≥ 1");
  }
  tensor_index_.emplace(name, static_cast<int>(tensors_.size()));
  tensors_.push_back({std::move(name), elements, dtype_bytes, requires_grad});
  producer_.push_back(-1);
  return static_cast<int>(tensors_.size()) - 1;
}

int OperatorGraph::AddOp(Operator op) {
  if (FindOp(op.name) >= 0) throw InvalidArgumentError("duplicate op name '" + op.name + "'");
  auto check = [&](const std::vector<int>& list, const char* what) {
    for (int t : list) {
      if (t < 0 || t >= static_cast<int>(tensors_.size())) {
        throw InvalidArgumentError("op '" + op.name + "': " + what + " tensor index " +
                                   std::to_string(t) + " does not exist");
      }
    }
  };
  check(op.inputs, "input");
  check(op.outputs, "output");
  check(op.saved, "saved");
  const int index = static_cast<int>(ops_.size());
  for (int t : op.outputs) {
    if (producer_[t] >= 0) {
      throw InvalidArgumentError("op '" + op.name + "': tensor '" + tensors_[t].name +
                                 "' is already written by op '" + ops_[producer_[t]].name + "'");
    }
    if (std::count(op.inputs.begin(), op.inputs.end(), t) > 0) {
      throw InvalidArgumentError("op '" + op.name + "' reads the tensor it writes ('" +
                                 tensors_[t].name + "')");
    }
  }
  for (int t : op.outputs) producer_[t] = index;
  op_index_.emplace(op.name, index);
  ops_.push_back(std::move(op));
  return index;
}

void OperatorGraph::MarkOutput(int tensor) {
  if (tensor < 0 || tensor >= static_cast<int>(tensors_.size())) {
    throw InvalidArgumentError("output tensor index " + std::to_string(tensor) + " does not exist");
  }
  if (!IsOutput(tensor)) outputs_.push_back(tensor);
}

OperatorGraph Rewritten(const OperatorGraph& g, const std::function<void(int, Tensor&)>& tensor,
                        const std::function<void(int, Operator&)>& op) {
  OperatorGraph out;
  for (std::size_t i = 0; i < g.Tensors().size(); ++i) {
    Tensor t = g.Tensors()[i];
    tensor(static_cast<int>(i), t);
    out.AddTensor(std::move(t.name), t.elements, t.dtype_bytes, t.requires_grad);
  }
  for (std::size_t i = 0; i < g.Ops().size(); ++i) {
    Operator o = g.Ops()[i];
    op(static_cast<int>(i), o);
    out.AddOp(std::move(o));
  }
  for (int t : g.Outputs()) out.MarkOutput(t);
  return out;
}

int OperatorGraph::FindTensor(std::string_view name) const {
  auto it = tensor_index_.find(name);
  return it == tensor_index_.end() ? -1 : it->second;
}

int OperatorGraph::FindOp(std::string_view name) const {
  auto it = op_index_.find(name);
  return it == op_index_.end() ? -1 : it->second;
}

std::vector<int> OperatorGraph::Consumers(int tensor) const {
  std::vector<int> out;
  for (size_t i = 0; i < ops_.size(); ++i) {
    const auto& in = ops_[i].inputs;
    if (std::find(in.begin(), in.end(), tensor) != in.end()) out.push_back(static_cast<int>(i));
  }
  return out;
}

bool OperatorGraph::IsOutput(int tensor) const {
  return std::find(outputs_.begin(), outputs_.end(), tensor) != outputs_.end();
}

std::vector<int> OperatorGraph::InputTensors() const {
  std::set<int> read;
  for (const auto& op : ops_) read.insert(op.inputs.begin(), op.inputs.end());
  std::vector<int> out;
  for (int t : read) {
    if (producer_[t] < 0) out.push_back(t);
  }
  return out;
}

std::vector<std::vector<int>> OperatorGraph::Predecessors() const {
  std::vector<std::vector<int>> preds(ops_.size());
  for (size_t j = 0; j < ops_.size(); ++j) {
    for (int t : ops_[j].inputs) {
      if (producer_[t] >= 0) preds[j].push_back(producer_[t]);
    }
    std::sort(preds[j].begin(), preds[j].end());
    preds[j].erase(std::unique(preds[j].begin(), preds[j].end()), preds[j].end());
  }
  return preds;
}

std::vector<std::vector<int>> OperatorGraph::Successors() const {
  std::vector<std::vector<int>> succ(ops_.size());
  const auto preds = Predecessors();
  for (size_t j = 0; j < ops_.size(); ++j) {
    for (int i : preds[j]) succ[i].push_back(static_cast<int>(j));
  }
  return succ;  // j ascending, so already sorted and unique
}

std::vector<int> OperatorGraph::TopologicalOrder() const {
  const auto preds = Predecessors();
  std::vector<std::vector<int>> succ(ops_.size());
  for (size_t j = 0; j < ops_.size(); ++j) {
    for (int i : preds[j]) succ[i].push_back(static_cast<int>(j));
  }
  std::vector<int> missing(ops_.size());
  std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
  for (size_t i = 0; i < ops_.size(); ++i) {
    missing[i] = static_cast<int>(preds[i].size());
    if (missing[i] == 0) ready.push(static_cast<int>(i));
  }
  std::vector<int> order;
  while (!ready.empty()) {
    int i = ready.top();
    ready.pop();
    order.push_back(i);
    for (int j : succ[i]) {
      if (--missing[j] == 0) ready.push(j);
    }
  }
  if (order.size() != ops_.size()) {
    for (size_t i = 0; i < ops_.size(); ++i) {
      if (missing[i] > 0) {
        throw InvalidArgumentError("the operator graph has a cycle through op '" + ops_[i].name +
                                   "'");
      }
    }
  }
  return order;
}

std::int64_t OperatorGraph::SavedBytes() const {
  std::set<int> saved;
  for (const auto& op : ops_) saved.insert(op.saved.begin(), op.saved.end());
  std::int64_t total = 0;
  for (int t : saved) total += tensors_[t].Bytes();
  return total;
}

std::int64_t OperatorGraph::GemmFlops() const {
  std::int64_t total = 0;
  for (const auto& op : ops_) total += op.GemmFlops();
  return total;
}

std::int64_t OperatorGraph::WeightBytes() const {
  std::int64_t total = 0;
  for (const auto& op : ops_) total += op.weight_bytes;
  return total;
}

std::int64_t OperatorGraph::BytesRead(const Operator& op) const {
  std::int64_t total = 0;
  for (int t : op.inputs) total += tensors_.at(t).Bytes();
  return total;
}

std::int64_t OperatorGraph::BytesWritten(const Operator& op) const {
  std::int64_t total = 0;
  for (int t : op.outputs) total += tensors_.at(t).Bytes();
  return total;
}

std::vector<int> OperatorGraph::CountByCore() const {
  std::vector<int> counts(4, 0);
  for (const auto& op : ops_) ++counts[static_cast<int>(op.Core())];
  return counts;
}

}  // namespace phaze
