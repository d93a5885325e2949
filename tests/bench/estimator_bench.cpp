// Google Benchmark: op estimates per second (issue 5's target: ≥ 1,000,000 per second on one
// thread) for a mix of real transformer ops — every forward and backward op of GPT-2 XL,
// Llama-2-7B and BERT-large blocks at micro-batch 1 and 4 — on the TPUv4-like preset; raw
// estimators and the cache (repeated layers).
#include <benchmark/benchmark.h>

#include "phaze/arch/arch_space.hpp"
#include "phaze/estimate/estimate_cache.hpp"
#include "phaze/graph/graph_builder.hpp"
#include "phaze/plugin/registry.hpp"
#include "plugin_registry.hpp"
#include "test_paths.hpp"

namespace phaze {
namespace {

Registry& Plugins() { return testing::BuiltPlugins(); }

const std::vector<OpWork>& Ops() {
  static const std::vector<OpWork> ops = [] {
    std::vector<OpWork> out;
    for (const char* model : {"gpt2-xl", "llama2-7b", "bert-large"}) {
      const ModelSpec spec =
          LoadModelSpec(std::string(PHAZE_SOURCE_DIR) + "/workloads/" + model + ".yaml");
      for (std::int64_t b : {1, 4}) {
        GraphOptions o;
        o.micro_batch = b;
        const LayerGraph g = BuildLayerGraph(spec, o);
        for (const auto& u : g.unique_layers) {
          for (const auto* graph : {&u.forward, &u.backward}) {
            for (const auto& op : graph->Ops()) {
              if (op.Core() != CoreClass::kNone) out.push_back(OpWork::Of(op, *graph));
            }
          }
        }
      }
    }
    return out;
  }();
  return ops;
}

void Run(benchmark::State& state, const Estimator& estimator) {
  const auto& ops = Ops();
  const ArchConfig arch = LoadArchConfig("tpuv4");
  std::size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(estimator.Estimate(ops[i], arch, Pass::kForward));
    if (++i == ops.size()) i = 0;
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["ops_in_mix"] = static_cast<double>(ops.size());
}

void BM_Estimate(benchmark::State& state, const char* name) {
  auto e = Plugins().CreateEstimator(name, ConfigNode::EmptyMap("bench", "params"));
  Run(state, *e);
}

void BM_EstimateCached(benchmark::State& state, const char* name) {
  CachedEstimator cached(Plugins().CreateEstimator(name, ConfigNode::EmptyMap("bench", "params")));
  Run(state, cached);
}

// A whole model on one config with a cold memo: every op of the mix (three models, micro-batch 1
// and 4) costed by a fresh estimator on every 97th config of the paper's space in turn. The
// sunstone estimator runs its mapping search once per distinct (GEMM, core count) here.
void BM_WholeModelColdPerConfig(benchmark::State& state, const char* name) {
  static const std::vector<ArchPoint> configs =
      ArchSpace::LoadFile(std::string(PHAZE_SOURCE_DIR) + "/share/arch/paper-space.yaml",
                          AreaModel::Default())
          .Enumerate(AreaModel::Default());
  const auto& ops = Ops();
  std::size_t next = 0;
  for (auto _ : state) {
    auto e = Plugins().CreateEstimator(name, ConfigNode::EmptyMap("bench", "params"));
    const ArchConfig& arch = configs[next].arch;
    next = (next + 97) % configs.size();
    for (const auto& op : ops) {
      try {
        benchmark::DoNotOptimize(e->Estimate(op, arch, Pass::kForward));
      } catch (const UnsupportedOpError&) {  // no mapping fits: infeasible, as in the reference
      }
    }
  }
  state.counters["configs/s"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
  state.counters["ops_per_config"] = static_cast<double>(ops.size());
}

BENCHMARK_CAPTURE(BM_Estimate, analytic, "analytic");
BENCHMARK_CAPTURE(BM_Estimate, sunstone, "sunstone");
BENCHMARK_CAPTURE(BM_Estimate, device, "device");
BENCHMARK_CAPTURE(BM_EstimateCached, device, "device");
BENCHMARK_CAPTURE(BM_EstimateCached, analytic, "analytic");
BENCHMARK_CAPTURE(BM_WholeModelColdPerConfig, analytic, "analytic")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_WholeModelColdPerConfig, sunstone, "sunstone")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_WholeModelColdPerConfig, device, "device")->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace phaze

BENCHMARK_MAIN();
