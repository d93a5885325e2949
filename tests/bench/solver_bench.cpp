// Google Benchmark: each ILP backend on a 40-operator scheduling-like big-M model (the shape of the
// paper's per-layer ILP without core-assignment rows: start times, intra-op flags y, ordering
// binaries for incomparable pairs, big-M disjunctions, makespan objective), and on a 17-operator
// backward-like DAG (a chain with a weight-gradient branch off each GEMM) that is hard for CBC.
//
//   build/tests/bench/phaze_solver_bench [--benchmark_filter=...]
#include <benchmark/benchmark.h>

#include <random>

#include "phaze/ilp/solver_backend.hpp"
#include "phaze/plugin/registry.hpp"
#include "plugin_registry.hpp"

namespace phaze {
namespace {

struct Dag {
  int n = 0;
  std::vector<std::pair<int, int>> edges;
  std::vector<double> single, all;  // ℓ_i and ℓ̂_i in µs
};

// Forward-like: `blocks` blocks of three parallel ops (Q, K, V-like) joined by one op.
Dag ForwardLike(int blocks, std::mt19937& rng) {
  Dag d;
  std::uniform_real_distribution<double> lat(10, 100), frac(0.2, 0.9);
  int prev = -1;
  for (int b = 0; b < blocks; ++b) {
    int base = d.n;
    d.n += 4;
    for (int k = 0; k < 3; ++k) {
      if (prev >= 0) d.edges.emplace_back(prev, base + k);
      d.edges.emplace_back(base + k, base + 3);
    }
    prev = base + 3;
  }
  for (int i = 0; i < d.n; ++i) {
    d.single.push_back(lat(rng));
    d.all.push_back(d.single.back() * frac(rng));
  }
  return d;
}

// Backward-like: a chain of `gemms` input-gradient ops, each with a weight-gradient branch.
Dag BackwardLike(int gemms, std::mt19937& rng) {
  Dag d;
  std::uniform_real_distribution<double> lat(10, 100), frac(0.2, 0.9);
  for (int g = 0; g < gemms; ++g) {
    int dx = d.n++, dw = d.n++;
    if (g > 0) d.edges.emplace_back(dx - 2, dx);
    if (g > 0) d.edges.emplace_back(dx - 2, dw);
  }
  d.n += 1;  // final sink after the last dx
  d.edges.emplace_back(d.n - 3, d.n - 1);
  for (int i = 0; i < d.n; ++i) {
    d.single.push_back(lat(rng));
    d.all.push_back(d.single.back() * frac(rng));
  }
  return d;
}

IlpModel BuildModel(const Dag& d) {
  // Transitive closure for comparability.
  std::vector<std::vector<char>> reach(d.n, std::vector<char>(d.n, 0));
  for (auto [a, b] : d.edges) reach[a][b] = 1;
  for (int k = 0; k < d.n; ++k)
    for (int i = 0; i < d.n; ++i)
      if (reach[i][k])
        for (int j = 0; j < d.n; ++j)
          if (reach[k][j]) reach[i][j] = 1;
  double horizon = 0;
  for (double v : d.single) horizon += v;
  IlpModel m;
  int makespan = m.AddVariable(0, horizon, VarType::kContinuous, "T", 1);
  std::vector<int> t(d.n), y(d.n);
  for (int i = 0; i < d.n; ++i) {
    t[i] = m.AddContinuous(0, horizon, "t" + std::to_string(i));
    y[i] = m.AddBinary("y" + std::to_string(i));
  }
  // p_i = ℓ_i − (ℓ_i − ℓ̂_i) y_i, substituted into every row.
  for (int i = 0; i < d.n; ++i) {  // T ≥ t_i + p_i
    m.AddRow(d.single[i], {{makespan, 1}, {t[i], -1}, {y[i], d.single[i] - d.all[i]}}, kInfinity);
  }
  for (auto [a, b] : d.edges) {  // t_a + p_a ≤ t_b
    m.AddRow(-kInfinity, {{t[a], 1}, {y[a], -(d.single[a] - d.all[a])}, {t[b], -1}}, -d.single[a]);
  }
  for (int i = 0; i < d.n; ++i) {
    for (int j = i + 1; j < d.n; ++j) {
      if (reach[i][j] || reach[j][i]) continue;
      int xij = m.AddBinary(), xji = m.AddBinary();
      m.AddRow(-kInfinity, {{xij, 1}, {xji, 1}}, 1);
      m.AddRow(0, {{xij, 1}, {xji, 1}, {y[i], -1}}, kInfinity);  // intra-op ops run alone
      m.AddRow(0, {{xij, 1}, {xji, 1}, {y[j], -1}}, kInfinity);
      // t_i + p_i − H(1 − x_ij) ≤ t_j
      m.AddRow(-kInfinity,
               {{t[i], 1}, {y[i], -(d.single[i] - d.all[i])}, {t[j], -1}, {xij, horizon}},
               horizon - d.single[i]);
      m.AddRow(-kInfinity,
               {{t[j], 1}, {y[j], -(d.single[j] - d.all[j])}, {t[i], -1}, {xji, horizon}},
               horizon - d.single[j]);
    }
  }
  return m;
}

Registry& Plugins() { return testing::BuiltPlugins(); }

void Solve(benchmark::State& state, const std::string& backend_name, const IlpModel& model,
           double time_limit_s) {
  if (!Plugins().Has(ComponentKind::kSolverBackend, backend_name)) {
    state.SkipWithError(("backend not built: " + backend_name).c_str());
    return;
  }
  auto backend = Plugins().CreateSolverBackend(backend_name);
  SolveOptions o;
  o.time_limit_s = time_limit_s;
  SolveResult r;
  for (auto _ : state) r = backend->Solve(model, o);
  state.counters["makespan_us"] = r.objective;
  state.counters["gap"] = r.Gap();
  state.counters["optimal"] = r.status == SolveStatus::kOptimal;
  state.counters["nodes"] = static_cast<double>(r.nodes);
  state.counters["vars"] = model.NumVariables();
  state.counters["rows"] = model.NumRows();
}

void BM_Forward40(benchmark::State& state, std::string backend) {
  std::mt19937 rng(1);
  Solve(state, backend, BuildModel(ForwardLike(10, rng)), 60);
}
void BM_Backward17(benchmark::State& state, std::string backend) {
  std::mt19937 rng(2);
  Solve(state, backend, BuildModel(BackwardLike(8, rng)), 30);
}

// The same 16-op forward-like ILP solved on 1 and 2 threads at once: a backend whose solves run
// concurrently does twice the solves per second on two threads (with 2 cores), a serialised one
// the same.
void BM_Forward16Concurrent(benchmark::State& state, std::string backend_name) {
  std::mt19937 rng(3);
  const IlpModel model = BuildModel(ForwardLike(4, rng));
  if (!Plugins().Has(ComponentKind::kSolverBackend, backend_name)) {
    state.SkipWithError(("backend not built: " + backend_name).c_str());
    return;
  }
  auto backend = Plugins().CreateSolverBackend(backend_name);
  SolveOptions o;
  o.relative_gap = 0;
  SolveResult r;
  for (auto _ : state) r = backend->Solve(model, o);
  state.SetItemsProcessed(state.iterations());
  state.counters["makespan_us"] = benchmark::Counter(r.objective, benchmark::Counter::kAvgThreads);
  state.counters["optimal"] =
      benchmark::Counter(r.status == SolveStatus::kOptimal, benchmark::Counter::kAvgThreads);
}
BENCHMARK_CAPTURE(BM_Forward16Concurrent, cbc, std::string("cbc"))
    ->Unit(benchmark::kMillisecond)
    ->Threads(1)
    ->Threads(2)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_Forward16Concurrent, lpsolve, std::string("lpsolve"))
    ->Unit(benchmark::kMillisecond)
    ->Threads(1)
    ->Threads(2)
    ->UseRealTime();

BENCHMARK_CAPTURE(BM_Forward40, cbc, std::string("cbc"))
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);
BENCHMARK_CAPTURE(BM_Forward40, lpsolve, std::string("lpsolve"))
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);
BENCHMARK_CAPTURE(BM_Backward17, cbc, std::string("cbc"))
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);
BENCHMARK_CAPTURE(BM_Backward17, lpsolve, std::string("lpsolve"))
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);

}  // namespace
}  // namespace phaze

BENCHMARK_MAIN();
