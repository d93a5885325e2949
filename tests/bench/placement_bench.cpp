// Google Benchmark: the placement DP on a GPT-3-like chain of 97 layers (embedding + 96 blocks;
// the head folded into the last block) with widths {4, 8}, K = 1024 accelerators, B = 4096
// micro-batches per batch, recomputation on (issue 8's target: ≤ 100 ms on a 2-core machine).
#include <benchmark/benchmark.h>

#include "phaze/placement/placement_search.hpp"

namespace phaze {
namespace {

PlacementProblem Gpt3Like() {
  PlacementProblem p;
  p.num_accelerators = 1024;
  p.global_batch = 4096;
  p.micro_batch = 1;
  p.network = Network::Flat(4.3e9);
  p.hbm_bytes = 80.0 * (1ull << 30);
  p.recompute = true;
  const double h = 12288, seq = 2048;
  for (int t : {4, 8}) {
    LayerTable table;
    for (int i = 0; i < 97; ++i) {
      PlacementLayer l;
      l.name = i == 0 ? "embedding" : "block" + std::to_string(i - 1);
      double params = i == 0 ? 50257 * h : 12 * h * h;
      l.weight_bytes = 2 * params / t;
      l.optimizer_state_bytes = 12 * params / t;
      l.activation_bytes = i == 0 ? seq * h * 2 : seq * h * (34 + 5 * 96 * seq / h) / t;
      l.forward_s = i == 0 ? 1e-4 : 24 * seq * h * h * (1 + seq / (6 * h)) / 275e12 / t;
      l.backward_s = 2 * l.forward_s;
      l.tensor_parallel = true;
      table.layers.push_back(l);
      if (i > 0) table.edges.push_back({i - 1, i, seq * h * 2});
    }
    p.widths[t] = table;
  }
  return p;
}

void BM_PlaceGpt3Like(benchmark::State& state) {
  PlacementProblem p = Gpt3Like();
  PlacementSearch search;
  PlacementPlan plan;
  for (auto _ : state) plan = search.Place(p);
  state.counters["time_per_batch_s"] = plan.time_per_batch_s;
  state.counters["t"] = plan.tensor_parallel;
  state.counters["d"] = plan.data_parallel;
  state.counters["s"] = plan.pipeline_stages;
}
BENCHMARK(BM_PlaceGpt3Like)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace phaze

BENCHMARK_MAIN();
