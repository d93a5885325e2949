// Builds the layer graph of a transformer described by a ModelSpec, for one micro-batch size and
// sequence length: the embedding layer, one unique block shared by every transformer layer, and the
// head/loss layer, each with its forward operator graph (every op the model runs, with the true
// GEMM shapes including the batch), the backward graph derived from it (DeriveBackward), operator
// fusion (FuseOperators, unless switched off) and the memory figures. The op lists per family are
// documented in workloads/README.md; tests check FLOPs and saved bytes against published formulas.
#pragma once

#include <cstdint>

#include "phaze/graph/layer_graph.hpp"
#include "phaze/graph/model_spec.hpp"

namespace phaze {

struct GraphOptions {
  std::int64_t micro_batch = 1;
  std::int64_t sequence_length = 0;  // 0: the model's own
  bool fusion = true;
  OptimizerSpec optimizer;
};

// Throws InvalidArgumentError for a non-positive micro-batch, or a sequence longer than a learned
// position table.
LayerGraph BuildLayerGraph(const ModelSpec& model, const GraphOptions& options);

// Completes a unique layer whose forward graph is set: derives the backward graph, fuses both when
// `fusion` is set, and fills the memory figures and optimizer step. Used by the builder and by
// graph-file import (layers given without a backward graph).
void CompleteUniqueLayer(UniqueLayer& layer, bool fusion, std::int64_t dtype_bytes,
                         const OptimizerSpec& optimizer);

}  // namespace phaze
