// Google Benchmark for the per-layer scheduler (issue 7's targets): the time to schedule every
// unique layer slice — forward and backward, Megatron tensor-parallel widths 1, 2, 4, 8 where the
// model allows them, micro-batch 1, 2, 4, 8 — of the paper's eight models on the `tpuv4` preset
// and on the Phaze-common config, with each backend (target with CBC: each ILP optimal or within
// 1% in ≤ 2 s, the whole set ≤ 60 s), and the share answered by fast paths. Also backward-like
// random DAGs of 17 / 34 / 60 / 100 ops (the hard case of the issue) with CBC.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>

#include "phaze/core/files.hpp"
#include "phaze/estimate/estimate_cache.hpp"
#include "phaze/graph/graph_builder.hpp"
#include "phaze/plugin/registry.hpp"
#include "phaze/schedule/layer_schedule.hpp"
#include "phaze/schedule/schedule_file.hpp"
#include "phaze/schedule/scheduler.hpp"
#include "phaze/strategy/parallelism_strategy.hpp"
#include "plugin_registry.hpp"
#include "schedule/backward_like.hpp"
#include "test_paths.hpp"

namespace phaze {
namespace {

Registry& Plugins() { return testing::BuiltPlugins(); }

const char* const kModels[] = {"opt-350m",      "bert-large",        "gpt2-xl",
                               "llama2-7b",     "megatron-bert",     "megatron-2.5b",
                               "megatron-8.3b", "megatron-gpt3-175b"};

std::vector<ScheduleProblem> LayerProblems(const std::string& arch_name) {
  const ArchConfig arch = LoadArchConfig(arch_name);
  const Network cluster = Network::Flat(4294967296.0);  // the paper's 4 GiB/s link
  const ConfigNode none = ConfigNode::EmptyMap("bench", "params");
  const CachedEstimator estimator(Plugins().CreateEstimator("analytic", none));
  const auto strategy = Plugins().CreateStrategy("megatron", none);
  std::vector<ScheduleProblem> out;
  for (const char* model : kModels) {
    const ModelSpec spec =
        LoadModelSpec(std::string(PHAZE_SOURCE_DIR) + "/workloads/" + model + ".yaml");
    for (std::int64_t b : {1, 2, 4, 8}) {
      GraphOptions o;
      o.micro_batch = b;
      o.fusion = false;
      const LayerGraph full = BuildLayerGraph(spec, o);
      for (std::int64_t w : SupportedWidths(*strategy, full, {1, 2, 4, 8})) {
        const LayerGraph g = SliceLayerGraph(*strategy, "megatron", full, w, true);
        for (const auto& u : g.unique_layers) {
          for (Pass pass : {Pass::kForward, Pass::kBackward}) {
            out.push_back(BuildScheduleProblem(PassGraph(u, pass), pass, estimator, arch, cluster,
                                               std::string(model) + "/b" + std::to_string(b) +
                                                   "/t" + std::to_string(w) + "/" + u.name + "/" +
                                                   std::string(ToString(pass))));
          }
        }
      }
    }
  }
  return out;
}

void BM_ScheduleAllLayers(benchmark::State& state, const std::string& arch,
                          const std::string& backend_name) {
  if (!Plugins().Has(ComponentKind::kSolverBackend, backend_name)) {
    state.SkipWithError(("no backend " + backend_name).c_str());
    return;
  }
  static std::map<std::string, std::vector<ScheduleProblem>> sets;
  if (!sets.count(arch)) sets[arch] = LayerProblems(arch);
  const auto& problems = sets[arch];
  // PHAZE_BENCH_CBC_PARAMS='{cuts: false}' passes backend parameters (as the run configs do).
  const char* params = std::getenv("PHAZE_BENCH_CBC_PARAMS");
  const auto backend = Plugins().CreateSolverBackend(
      backend_name, params && backend_name == "cbc" ? ConfigNode::ParseString(params, "env")
                                                    : ConfigNode::EmptyMap("bench", "params"));
  double ilp = 0, fast = 0, worst = 0, slowest = 0, not_optimal = 0, max_gap = 0, max_ops = 0;
  for (auto _ : state) {
    SchedulerOptions options;
    options.solve.time_limit_s =
        std::getenv("PHAZE_BENCH_TL") ? std::atof(std::getenv("PHAZE_BENCH_TL")) : 10;
    if (const char* nodes = std::getenv("PHAZE_BENCH_NODES")) {  // a node limit instead of time
      options.solve.node_limit = std::atoll(nodes);
      options.solve.time_limit_s = kInfinity;
    }
    if (const char* gap = std::getenv("PHAZE_BENCH_GAP"))
      options.solve.relative_gap = std::atof(gap);
    if (const char* dir = std::getenv("PHAZE_BENCH_DUMP_ILP")) options.dump_dir = dir;
    if (const char* e = std::getenv("PHAZE_BENCH_SEARCH")) options.search_nodes = std::atol(e);
    if (const char* e = std::getenv("PHAZE_BENCH_IMPROVE")) {  // local-search evaluations
      options.improvement_evaluations = std::atoi(e);
    }
    const Scheduler scheduler(backend, options);
    ilp = fast = worst = slowest = not_optimal = max_gap = 0;
    for (const auto& p : problems) {
      if (const char* only = std::getenv("PHAZE_BENCH_ONLY");
          only && p.name.find(only) == std::string::npos)
        continue;
      if (std::getenv("PHAZE_BENCH_DUMP")) {
        std::fprintf(stderr, "%s tc %d vc %d\n", p.name.c_str(), p.num_tc, p.num_vc);
        for (std::size_t i = 0; i < p.ops.size(); ++i) {
          std::fprintf(stderr, "  %2zu %-40s %-6s %10.3f %10.3f us\n", i, p.ops[i].name.c_str(),
                       std::string(ToString(p.ops[i].cls)).c_str(), p.ops[i].single_core_s * 1e6,
                       p.ops[i].all_cores_s * 1e6);
        }
        for (auto [a, b] : p.edges) std::fprintf(stderr, "  %d>%d", a, b);
        std::fprintf(stderr, "\n");
      }
      const auto started = std::chrono::steady_clock::now();
      const ScheduleResult r = scheduler.Solve(p);
      const std::chrono::duration<double> took = std::chrono::steady_clock::now() - started;
      slowest = std::max(slowest, took.count());  // everything: heuristics, bounds, search, ILP
      if (std::getenv("PHAZE_BENCH_VERBOSE")) {
        std::fprintf(
            stderr,
            "%-60s %3zu ops %-13s %-8s %8.3f s makespan %.6g bound %.6g gap %.2g segs %d solves "
            "%d vars %d\n",
            p.name.c_str(), p.ops.size(), std::string(ToString(r.stats.path)).c_str(),
            std::string(SolveStatusName(r.stats.status)).c_str(), r.stats.solve_time_s,
            r.makespan_s, r.stats.lower_bound_s, r.stats.gap, r.stats.segments, r.stats.solves,
            r.stats.variables);
      }
      // PHAZE_BENCH_DUMP_DAG=DIR writes each problem not proven within the gap as a DAG file
      // (`phaze schedule --graph DIR/F.json` solves it again).
      if (const char* dir = std::getenv("PHAZE_BENCH_DUMP_DAG");
          dir && r.stats.status != SolveStatus::kOptimal) {
        std::string file = arch + "-" + p.name + ".json";
        std::replace(file.begin(), file.end(), '/', '-');
        WriteTextFileAtomic(std::string(dir) + "/" + file, ScheduleProblemToJson(p).Dump(1) + "\n");
      }
      max_ops = std::max(max_ops, static_cast<double>(p.ops.size()));
      (r.stats.path == SchedulePath::kIlp ? ilp : fast) += 1;
      worst = std::max(worst, r.stats.solve_time_s);
      not_optimal += r.stats.status != SolveStatus::kOptimal;
      max_gap = std::max(max_gap, r.stats.gap);
    }
    state.counters["cache_hits"] = static_cast<double>(scheduler.CacheHits());
  }
  state.counters["problems"] = static_cast<double>(problems.size());
  state.counters["max_ops"] = max_ops;
  state.counters["answered_by_ilp"] = ilp;
  state.counters["answered_fast"] = fast;
  state.counters["worst_ilp_s"] = worst;
  state.counters["slowest_problem_s"] = slowest;
  state.counters["not_optimal"] = not_optimal;
  state.counters["max_gap"] = max_gap;
}

void BM_BackwardLike(benchmark::State& state) {
  const int ops = static_cast<int>(state.range(0));
  const ScheduleProblem p = testing::BackwardLike(ops, 2, 2, static_cast<unsigned>(ops));
  SchedulerOptions options;
  options.solve.time_limit_s = 60;
  options.cache = false;
  const Scheduler scheduler(Plugins().CreateSolverBackend("cbc"), options);
  ScheduleResult r;
  for (auto _ : state) r = scheduler.Solve(p);
  state.counters["makespan_us"] = r.makespan_s * 1e6;
  state.counters["gap"] = r.stats.gap;
  state.counters["optimal"] = r.stats.status == SolveStatus::kOptimal;
  state.counters["ilp"] = r.stats.path == SchedulePath::kIlp;
  state.counters["solves"] = r.stats.solves;
}

BENCHMARK_CAPTURE(BM_ScheduleAllLayers, tpuv4_cbc, "tpuv4", "cbc")
    ->Unit(benchmark::kSecond)
    ->Iterations(1);
BENCHMARK_CAPTURE(BM_ScheduleAllLayers, common_cbc, "phaze-common", "cbc")
    ->Unit(benchmark::kSecond)
    ->Iterations(1);
BENCHMARK_CAPTURE(BM_ScheduleAllLayers, tpuv4_lpsolve, "tpuv4", "lpsolve")
    ->Unit(benchmark::kSecond)
    ->Iterations(1);
BENCHMARK_CAPTURE(BM_ScheduleAllLayers, common_lpsolve, "phaze-common", "lpsolve")
    ->Unit(benchmark::kSecond)
    ->Iterations(1);
BENCHMARK(BM_BackwardLike)
    ->Arg(17)
    ->Arg(34)
    ->Arg(60)
    ->Arg(100)
    ->Unit(benchmark::kSecond)
    ->Iterations(1);

}  // namespace
}  // namespace phaze

BENCHMARK_MAIN();
