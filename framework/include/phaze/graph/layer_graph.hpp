// The layer graph of a workload for one micro-batch size and sequence length: a DAG of layer
// instances (embedding, transformer blocks, head/loss), each pointing at a unique layer that holds
// the forward and backward operator graphs, the optimizer step and the memory figures. Identical
// layers (every block of a model) share one unique layer, so estimates and ILPs run once for it.
//
// Memory figures of a unique layer are per device holding it, in bytes:
//   weight_bytes          = (parameters + tied_parameters) · dtype_bytes
//   gradient_bytes        = (parameters + tied_parameters) · dtype_bytes
//   optimizer_state_bytes = (parameters + tied_parameters) · optimizer state bytes per parameter
//   activation_bytes      = bytes of the distinct forward tensors saved for backward (one
//                           micro-batch)
// A tied weight (the LM head reusing the word-embedding table) is counted once in the model's
// parameters (on the layer that owns it) and held again by the layer that reuses it, as Megatron-LM
// keeps a copy on the last pipeline stage.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "phaze/graph/operator_graph.hpp"

namespace phaze {

// The optimizer's memory and step cost per parameter.
struct OptimizerSpec {
  std::string name = "adam-mixed";              // adam-mixed | sgd
  std::int64_t state_bytes_per_parameter = 12;  // fp32 master weight + two fp32 moments
  std::string step_function = "adam";

  // "adam-mixed" or "sgd"; throws InvalidArgumentError otherwise.
  static OptimizerSpec Named(const std::string& name);
};

struct UniqueLayer {
  std::string name;       // "embedding", "block", "head", or a user's name
  std::string kind;       // embedding | block | head | custom
  OperatorGraph forward;  // also the recompute pass
  OperatorGraph backward;
  Operator optimizer_step;           // one vector op over every parameter the layer holds
  std::int64_t parameters = 0;       // owned
  std::int64_t tied_parameters = 0;  // owned by another layer, also held here
  std::int64_t weight_bytes = 0;
  std::int64_t gradient_bytes = 0;
  std::int64_t optimizer_state_bytes = 0;
  std::int64_t activation_bytes = 0;
  bool tensor_parallel = false;  // split by the tensor-parallel strategy
};

struct LayerInstance {
  std::string name;  // "embedding", "block.0", …, "head"
  int unique_id = 0;
};

struct LayerGraphEdge {
  int from = 0;  // instance indices, from < to
  int to = 0;
  std::int64_t bytes = 0;  // per micro-batch, each direction (activations forward, gradients back)
};

struct LayerGraph {
  std::string model;
  std::string family;
  std::int64_t micro_batch = 1;
  std::int64_t sequence_length = 0;
  std::int64_t dtype_bytes = 2;
  std::int64_t tensor_parallel = 1;  // the width this graph is a slice for
  std::string strategy;              // the strategy that sliced it ("" = unsliced)
  std::int64_t heads = 0;            // attention heads and key/value heads of the full model
  std::int64_t kv_heads = 0;         // (0: unknown, e.g. an imported graph without them)
  bool fused = true;
  OptimizerSpec optimizer;
  std::optional<std::int64_t> published_parameters;

  std::vector<UniqueLayer> unique_layers;
  std::vector<LayerInstance> layers;  // topological order
  std::vector<LayerGraphEdge> edges;

  // Σ over instances of their unique layer's owned parameters.
  std::int64_t Parameters() const;
  // Σ over instances of forward / backward GEMM FLOPs (one micro-batch).
  std::int64_t ForwardFlops() const;
  std::int64_t BackwardFlops() const;
  // How many instances use each unique layer.
  std::vector<int> InstanceCounts() const;
  // Empty when consistent, else what is wrong (unique ids in range, edges forward, …).
  std::string Validate() const;
};

// Sets the memory figures and the optimizer step of `layer` from its parameters, its forward
// graph's saved tensors and the optimizer (see the header comment).
void FinalizeLayerMemory(UniqueLayer& layer, std::int64_t dtype_bytes,
                         const OptimizerSpec& optimizer);

}  // namespace phaze
