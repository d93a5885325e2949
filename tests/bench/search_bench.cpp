// Google Benchmark: the per-config phases of the exhaustive search (issue 21) on configs spread
// over the paper's space — every `stride`-th of the 29,360 — with the models of a run config
// (PHAZE_BENCH_RUN, default share/runs/default.yaml; share/runs/paper.yaml for the eight models):
//   BM_ComputeBound    ModelEvaluator::UpperBound(kCompute) for every model of a config
//   BM_PlacementBound  UpperBound(kPlacement)
//   BM_FamilyBound     both tiers on the family of a config (the configs sharing its tensor cores)
//   BM_Evaluate        the exact evaluation (estimates, schedules, the DP at every HBM size)
// Each iteration takes the next sampled config with a fresh evaluator (an empty schedule memo), so
// the figures are the cold cost per config; whole runs, with the memo warm, are in
// share/runs/README.md.
//
// `phaze_search_bench --check-bounds[=STRIDE]` instead evaluates every STRIDE-th config (default
// 97: 303 configs) exactly and with both bounds, prints how tight the bounds are, and exits 1 if
// any bound is below the exact throughput — the property pruning rests on, on the real models.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "phaze/core/logger.hpp"
#include "phaze/search/search_context.hpp"
#include "plugin_registry.hpp"
#include "test_paths.hpp"

namespace phaze {
namespace {

std::string RunPath() {
  const char* run = std::getenv("PHAZE_BENCH_RUN");
  return run ? run : std::string(PHAZE_SOURCE_DIR) + "/share/runs/default.yaml";
}

struct Bench {
  std::ostringstream sink;
  Logger log{sink, LogLevel::kQuiet};
  RunConfig run = RunConfig::ParseFile(RunPath());
  SearchContext context{run, testing::BuiltPlugins(), log};
  std::shared_ptr<const Estimator> estimator =
      testing::BuiltPlugins().CreateEstimator(run.estimator.name, run.estimator.Params());
  std::shared_ptr<const SolverBackend> backend = testing::BuiltPlugins().CreateSolverBackend(
      run.solver.backend.name, run.solver.backend.Params());

  std::unique_ptr<ModelEvaluator> Fresh() const {
    return std::make_unique<ModelEvaluator>(context.Run(), estimator, backend);
  }
  static Bench& Get() {
    static Bench* b = new Bench();
    return *b;
  }
};

template <typename F>
void PerConfig(benchmark::State& state, F&& phase) {
  Bench& b = Bench::Get();
  const auto& configs = b.context.Configs();
  const std::size_t stride = 500;
  std::size_t next = 0;
  for (auto _ : state) {
    const auto evaluator = b.Fresh();
    const ArchPoint& point = configs[next];
    next = (next + stride) % configs.size();
    for (const auto& model : b.context.Models()) phase(*evaluator, model, point.arch);
  }
  state.counters["configs/s"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}

void BM_ComputeBound(benchmark::State& state) {
  PerConfig(state, [](const ModelEvaluator& e, const PreparedModel& m, const ArchConfig& a) {
    benchmark::DoNotOptimize(e.UpperBound(m, a, ModelEvaluator::BoundTier::kCompute));
  });
}
void BM_PlacementBound(benchmark::State& state) {
  PerConfig(state, [](const ModelEvaluator& e, const PreparedModel& m, const ArchConfig& a) {
    benchmark::DoNotOptimize(e.UpperBound(m, a, ModelEvaluator::BoundTier::kPlacement));
  });
}
void BM_Evaluate(benchmark::State& state) {
  PerConfig(state, [](const ModelEvaluator& e, const PreparedModel& m, const ArchConfig& a) {
    benchmark::DoNotOptimize(e.Evaluate(m, a, false).best.Throughput());
  });
}
// Both tiers on a whole family (search_context.hpp: the configs sharing a config's tensor cores),
// cold; `configs/s` counts the family's members — what one family bound can settle.
void BM_FamilyBound(benchmark::State& state) {
  Bench& b = Bench::Get();
  const auto& configs = b.context.Configs();
  std::size_t next = 0, members = 0;
  for (auto _ : state) {
    const auto evaluator = b.Fresh();
    const ArchConfig& a = configs[next].arch;
    next = (next + 500) % configs.size();
    std::vector<ArchConfig> family;
    for (const auto& c : configs) {
      if (c.arch.num_tc == a.num_tc && c.arch.pe_x == a.pe_x && c.arch.pe_y == a.pe_y) {
        family.push_back(c.arch);
      }
    }
    members += family.size();
    for (const auto& model : b.context.Models()) {
      ModelBound bound = evaluator->Bound(model, family);
      benchmark::DoNotOptimize(bound.Compute());
      benchmark::DoNotOptimize(bound.Placement());
    }
  }
  state.counters["configs/s"] =
      benchmark::Counter(static_cast<double>(members), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_ComputeBound)->Unit(benchmark::kMillisecond)->Iterations(59);
BENCHMARK(BM_FamilyBound)->Unit(benchmark::kMillisecond)->Iterations(59);
BENCHMARK(BM_PlacementBound)->Unit(benchmark::kMillisecond)->Iterations(59);
BENCHMARK(BM_Evaluate)->Unit(benchmark::kMillisecond)->Iterations(59);

int CheckBounds(std::size_t stride) {
  Bench& b = Bench::Get();
  const auto evaluator = b.Fresh();
  const auto& configs = b.context.Configs();
  int checked = 0, violations = 0, feasible = 0;
  std::vector<double> compute_ratio, placement_ratio;  // bound / exact, feasible rows
  for (std::size_t c = 0; c < configs.size(); c += stride) {
    for (const auto& model : b.context.Models()) {
      const ArchConfig& arch = configs[c].arch;
      const double compute = evaluator->UpperBound(model, arch, ModelEvaluator::BoundTier::kCompute);
      const double placement =
          evaluator->UpperBound(model, arch, ModelEvaluator::BoundTier::kPlacement);
      const double exact = evaluator->Evaluate(model, arch, false).best.Throughput();
      ++checked;
      const double tol = 1e-9 * exact;
      if (compute + tol < exact || placement + tol < exact) {
        ++violations;
        std::printf("VIOLATION %s on %s: exact %.9g, compute bound %.9g, placement bound %.9g\n",
                    model.name.c_str(), arch.name.c_str(), exact, compute, placement);
      }
      if (exact > 0) {
        ++feasible;
        compute_ratio.push_back(compute / exact);
        placement_ratio.push_back(placement / exact);
      }
    }
  }
  auto quantile = [](std::vector<double> v, double q) {
    if (v.empty()) return 0.0;
    std::sort(v.begin(), v.end());
    return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1))];
  };
  std::printf("%d (config, model) pairs checked, %d feasible, %d bounds below the exact "
              "throughput\n",
              checked, feasible, violations);
  std::printf("bound / exact   min     median  p90     max\n");
  std::printf("compute         %.3f   %.3f   %.3f   %.3f\n", quantile(compute_ratio, 0),
              quantile(compute_ratio, 0.5), quantile(compute_ratio, 0.9), quantile(compute_ratio, 1));
  std::printf("placement       %.3f   %.3f   %.3f   %.3f\n", quantile(placement_ratio, 0),
              quantile(placement_ratio, 0.5), quantile(placement_ratio, 0.9),
              quantile(placement_ratio, 1));
  return violations == 0 ? 0 : 1;
}

}  // namespace
}  // namespace phaze

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--check-bounds", 14) == 0) {
      const std::size_t stride = argv[i][14] == '=' ? std::strtoul(argv[i] + 15, nullptr, 10) : 97;
      return phaze::CheckBounds(std::max<std::size_t>(1, stride));
    }
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
