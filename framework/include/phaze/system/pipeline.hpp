// Pipeline schedules (step_model.hpp's header comment): how many micro-batches a stage keeps in
// flight, how many steps the pipeline runs, and the sends between its stages.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "phaze/system/step_model.hpp"

namespace phaze {

// Micro-batches whose activations the stage at `position` (1 = the last) of `stages` keeps:
// p (1F1B), m = `per_pipeline` (GPipe), or (2·(p − 1) + (v − 1)·s + 1)/v (interleaved) — the
// warm-up Megatron-LM runs plus one —, at most the m micro-batches the pipeline has (Megatron-LM
// caps the warm-up at them, and so does PyTorch's schedule: TorchTitan's default is m = s).
double InFlightMicroBatches(const StepSettings& settings, int position, int stages,
                            std::int64_t per_pipeline);

// The pipeline's length in stage loads when its stages are balanced: m + (s − 1)/v with
// m = ⌈B/d⌉ (v = 1 unless interleaved).
double PipelineSteps(const StepSettings& settings, std::int64_t d, int stages);

// The pipeline's time from its `stages` stages' loads per micro-batch, the largest `max_load_s`
// and their sum `sum_load_s`. PipelineBubble::kStages (the default): m·max + (sum − max)/v — the
// bottleneck stage runs all m micro-batches and the others' fill and drain add one load each,
// 1/v of it interleaved: the heterogeneous form of (m + (s − 1)/v)·max, equal to it when the
// stages are balanced, as in Alpa (Zheng et al., OSDI 2022, §5.2: Σ tᵢ + (B − 1)·max tⱼ) and
// DAPPLE (Fan et al., PPoPP 2021). A last stage that holds the LM head and its loss beside its
// blocks is the usual bottleneck, and the others do not wait for it in their fill and drain.
// kBottleneck: the paper's PipelineSteps · max. kBound: `sum_load_s` is a floor of the sum
// (StageLoadFloor), taken as max(floor, max).
double PipelineTimeS(const StepSettings& settings, std::int64_t d, int stages, double max_load_s,
                     double sum_load_s);

// Whether `layers` layers form a chain: every layer but the first has an edge from the one before
// it (edges: anything with `from` and `to`; other edges may be there too). Then a stage that
// holds several runs them one after another, and its time is at least the sum of theirs.
template <class Edges>
bool LayersFormChain(std::size_t layers, const Edges& edges) {
  std::vector<char> linked(layers, 0);
  for (const auto& e : edges) {
    if (e.to == e.from + 1 && e.to > 0 && static_cast<std::size_t>(e.to) < layers) linked[e.to] = 1;
  }
  for (std::size_t i = 1; i < layers; ++i) {
    if (!linked[i]) return false;
  }
  return true;
}

// A floor of the sum of the stage loads of any placement of `table`: a chain's stage runs its
// layers' forward and backward passes one after another (sends and recomputation only add), so
// the sum is at least Σ (forward + backward + backward recompute) over the layers; 0 when the
// layers do not form a chain (LayersFormChain; a stage's branches may overlap). The paper's stage
// recompute (StepSettings::recompute) would add every stage's forward but the last one's; only
// layer-table files set it (the search's recomputation is backward_recompute_s, counted here), so
// the floor leaves it out.
double StageLoadFloor(const LayerTable& table);

// The network level the pipeline's sends cross: the one holding t·s·d ranks.
int PipelineLevel(const StepSettings& settings, int t, int stages, std::int64_t d);

// One send of `edge` across `level`: its bytes, then (gather_group g > 1) the receiving stage's
// all-gather of g·bytes over {g, stride 1}. Seconds, and joules per device.
double EdgeSendS(const StepSettings& settings, const PlacementEdge& edge, int level);
double EdgeSendJ(const StepSettings& settings, const PlacementEdge& edge, int level);

}  // namespace phaze
