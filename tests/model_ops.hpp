// Every forward and backward op (as OpWork) of the given model files at micro-batches 1 and 4,
// fused and not: a realistic mix of transformer ops for estimator tests (the conformance suite
// and the analytic estimator's cache test).
#pragma once

#include <string>
#include <vector>

#include "phaze/estimate/estimator.hpp"
#include "phaze/graph/graph_builder.hpp"

namespace phaze::testing {

inline std::vector<OpWork> ModelOps(const std::vector<std::string>& model_files) {
  std::vector<OpWork> ops;
  for (const auto& file : model_files) {
    const ModelSpec spec = LoadModelSpec(file);
    for (std::int64_t b : {1, 4}) {
      for (bool fusion : {true, false}) {
        GraphOptions o;
        o.micro_batch = b;
        o.fusion = fusion;
        const LayerGraph g = BuildLayerGraph(spec, o);
        for (const auto& u : g.unique_layers) {
          for (const auto* graph : {&u.forward, &u.backward}) {
            for (const auto& op : graph->Ops()) ops.push_back(OpWork::Of(op, *graph));
          }
        }
      }
    }
  }
  return ops;
}

}  // namespace phaze::testing
