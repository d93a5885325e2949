// The operator graph of one layer and one pass (forward or backward): tensors and the ops that read
// and write them. Op j depends on op i when j reads a tensor i writes; the op DAG is derived from
// the tensors, so it cannot disagree with them. Tensors nobody writes are the graph's inputs
// (arriving from the previous layer, or saved forward tensors read by backward ops); the layer's
// outputs are marked explicitly. Names of tensors and of ops are unique within a graph.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "phaze/graph/operator.hpp"

namespace phaze {

class OperatorGraph {
 public:
  // Adds a tensor; throws InvalidArgumentError on a duplicate name or negative size.
  int AddTensor(std::string name, std::int64_t elements, std::int64_t dtype_bytes,
                bool requires_grad = true);
  // Adds an op; throws InvalidArgumentError on a duplicate name, an unknown tensor index, or an
  // output that another op already writes.
  int AddOp(Operator op);
  // Marks a tensor as an output of the layer (sent to the next layer, or the loss).
  void MarkOutput(int tensor);

  const std::vector<Tensor>& Tensors() const { return tensors_; }
  const std::vector<Operator>& Ops() const { return ops_; }
  const Tensor& GetTensor(int index) const { return tensors_.at(index); }
  const Operator& GetOp(int index) const { return ops_.at(index); }
  const std::vector<int>& Outputs() const { return outputs_; }
  int FindTensor(std::string_view name) const;  // -1 when absent
  int FindOp(std::string_view name) const;      // -1 when absent

  int Producer(int tensor) const { return producer_.at(tensor); }  // -1: a graph input
  std::vector<int> Consumers(int tensor) const;
  bool IsOutput(int tensor) const;
  // Tensors read by some op that no op writes, in index order.
  std::vector<int> InputTensors() const;

  // Op-level DAG (deduplicated, sorted).
  std::vector<std::vector<int>> Predecessors() const;
  std::vector<std::vector<int>> Successors() const;
  // Kahn's order with the smallest index first among ready ops (deterministic). Throws
  // InvalidArgumentError naming an op on the cycle if the graph is cyclic.
  std::vector<int> TopologicalOrder() const;

  // Σ bytes over the distinct tensors some op saves for backward.
  std::int64_t SavedBytes() const;
  std::int64_t GemmFlops() const;
  std::int64_t WeightBytes() const;
  // Activation bytes an op reads / writes (its input / output tensors; weights excluded).
  std::int64_t BytesRead(const Operator& op) const;
  std::int64_t BytesWritten(const Operator& op) const;
  // Ops per core class, indexed by static_cast<int>(CoreClass).
  std::vector<int> CountByCore() const;

 private:
  std::vector<Tensor> tensors_;
  std::vector<Operator> ops_;
  std::vector<int> producer_;
  std::vector<int> outputs_;
  std::map<std::string, int, std::less<>> tensor_index_;
  std::map<std::string, int, std::less<>> op_index_;
};

// A copy of `g` rebuilt through AddTensor and AddOp (so every check applies again), each tensor
// first passed to `tensor(index, copy)` and each op to `op(index, copy)`: how the graph rewrites
// (precision, loss and attention kernels, tensor-parallel slicing) change what tensors hold and
// what ops cost. They keep names, and an op's inputs and outputs, unless they mean to re-wire it.
OperatorGraph Rewritten(const OperatorGraph& g, const std::function<void(int, Tensor&)>& tensor,
                        const std::function<void(int, Operator&)>& op);

}  // namespace phaze
