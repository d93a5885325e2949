// `phaze schedule`: the optimal operator schedule of one layer on one accelerator (DESIGN §5),
// either of a workload's layer (`--model FILE --layer N|NAME --micro-batch b [--strategy S
// --width w] --arch PRESET|FILE [--pass forward|backward|recompute] [--attention
// unfused|megatron|flash| fused] [--loss megatron|torch|compiled] [--precision bf16|fp16|fp8]`, the
// run's recipe by default) or of a standalone DAG (`--graph FILE`, format in
// share/schedule/README.md). Prints the makespan and the schedule; --solver overrides the run
// config's backend; --output writes JSON (top-level makespan_s); --gantt FILE.svg draws it;
// --dump-ilp DIR writes every ILP solved.
#include <fmt/printf.h>

#include <cstdio>
#include <filesystem>

#include "commands.hpp"
#include "phaze/core/error.hpp"
#include "phaze/core/files.hpp"
#include "phaze/core/limits.hpp"
#include "phaze/core/text_format.hpp"
#include "phaze/estimate/estimate_cache.hpp"
#include "phaze/graph/graph_builder.hpp"
#include "phaze/graph/graph_file.hpp"
#include "phaze/graph/model_spec.hpp"
#include "phaze/graph/precision.hpp"
#include "phaze/schedule/layer_schedule.hpp"
#include "phaze/schedule/schedule_file.hpp"
#include "phaze/schedule/scheduler.hpp"
#include "phaze/search/prepared_model.hpp"
#include "phaze/search/run_config.hpp"
#include "phaze/strategy/composed_strategy.hpp"

namespace po = boost::program_options;

namespace phaze::cli {

void AddScheduleOptions(po::options_description& d) {
  d.add_options()("model", po::value<std::string>(), "workload (YAML) or layer-graph file (JSON)")(
      "layer", po::value<std::string>(), "unique layer: index or name (default: block)")(
      "micro-batch", po::value<std::int64_t>()->default_value(1), "micro-batch size b")(
      "sequence-length", po::value<std::int64_t>()->default_value(0),
      "sequence length (0: the model's own)")("strategy", po::value<std::string>(),
                                              "parallelism strategy (default: the run config's)")(
      "width", po::value<std::int64_t>()->default_value(1), "tensor-parallel width")(
      "precision", po::value<std::string>(),
      "bf16 | fp16 | fp8 (default: the run config's training.precision)")(
      "arch", po::value<std::string>(), "architecture: preset name or YAML file")(
      "pass", po::value<std::string>()->default_value("forward"), "forward | backward | recompute")(
      "graph", po::value<std::string>(), "standalone DAG file (JSON) instead of --model")(
      "estimator", po::value<std::string>(), "estimator (default: the run config's)")(
      "solver", po::value<std::string>(), "ILP backend (default: the run config's, cbc)")(
      "time-limit", po::value<double>(), "seconds per layer for the ILP (default: run config)")(
      "gap", po::value<double>(), "relative optimality gap (default: run config, 1e-4)")(
      "search-nodes", po::value<std::int64_t>(),
      "nodes of the schedule search before the ILP (0: none; default: run config)")(
      "gantt", po::value<std::string>(), "write the schedule as an SVG Gantt chart")(
      "dump-ilp", po::value<std::string>(), "write every ILP solved into this directory (.lp)");
  AddKernelOptions(d);
}

namespace {

Pass ParsePass(const std::string& text) {
  if (text == "forward") return Pass::kForward;
  if (text == "backward") return Pass::kBackward;
  if (text == "recompute") return Pass::kRecompute;
  throw UsageError("--pass: expected forward, backward or recompute, found '" + text + "'");
}

const UniqueLayer& PickLayer(const LayerGraph& graph, const std::string& wanted) {
  std::string names;
  for (std::size_t k = 0; k < graph.unique_layers.size(); ++k) {
    const auto& u = graph.unique_layers[k];
    if (u.name == wanted || std::to_string(k) == wanted) return u;
    names += (names.empty() ? "" : ", ") + std::to_string(k) + " " + u.name;
  }
  throw UsageError("--layer: no unique layer '" + wanted + "'; the model has: " + names);
}

std::string CoreText(const std::vector<int>& cores, const char* prefix) {
  if (cores.empty()) return "";
  if (cores.size() == 1) return prefix + std::to_string(cores[0]);
  return std::string(prefix) + std::to_string(cores.front()) + "-" + std::to_string(cores.back());
}

}  // namespace

int RunSchedule(CommandContext& ctx) {
  const bool from_graph = ctx.vm.count("graph") > 0;
  if (from_graph == (ctx.vm.count("model") > 0)) {
    throw UsageError("phaze schedule: give --model FILE (with --arch) or --graph FILE");
  }
  RunConfig run = ctx.global.config.empty() ? RunConfig::Defaults()
                                            : RunConfig::ParseFile(ctx.global.config, false);
  if (ctx.vm.count("solver")) {
    run.solver.backend = {RegisteredName(ctx.registry, ComponentKind::kSolverBackend, "--solver",
                                         ctx.vm["solver"].as<std::string>()),
                          {},
                          {}};
  }
  if (ctx.vm.count("estimator")) {
    run.estimator = {RegisteredName(ctx.registry, ComponentKind::kEstimator, "--estimator",
                                    ctx.vm["estimator"].as<std::string>()),
                     {},
                     {}};
  }
  if (ctx.vm.count("strategy")) {  // with the run config's params for it, as predict takes it
    run.strategies = {NamedStrategy(ctx.registry, "--strategy",
                                    ctx.vm["strategy"].as<std::string>(), run.strategies)};
  }
  run.CheckComponents(ctx.registry, true, !from_graph, !from_graph && ctx.vm.count("strategy"));

  ScheduleProblem problem;
  std::string where;
  if (from_graph) {
    for (const char* option :
         {"model", "layer", "strategy", "arch", "estimator", "attention", "loss", "precision"}) {
      if (ctx.vm.count(option)) {
        throw UsageError(std::string("--") + option + " applies to --model, not to --graph");
      }
    }
    problem = ParseScheduleProblem(ConfigNode::ParseFile(ctx.vm["graph"].as<std::string>()));
    where = problem.name;
  } else {
    if (!ctx.vm.count("arch")) throw UsageError("phaze schedule: --model needs --arch PRESET|FILE");
    const ArchConfig arch = LoadArchConfig(ctx.vm["arch"].as<std::string>());
    const ConfigNode root = ConfigNode::ParseFile(ctx.vm["model"].as<std::string>());
    const std::int64_t width = IntOption(ctx.vm, "width", 1, limits::kWidth);
    LayerGraph graph;
    try {
      if (IsLayerGraphDocument(root)) {
        RefuseModelOptionsOnGraphFile(
            ctx.vm, {"micro-batch", "sequence-length", "strategy", "width", "precision",
                     "attention", "loss", "fp8-recipe"});
        graph = ParseLayerGraphFile(root);
      } else {
        const GraphOptions options = ReadGraphOptions(ctx.vm);
        const ModelSpec model = ParseWorkload(root, options.sequence_length);
        if (width > 1 || ctx.vm.count("strategy")) {
          // The first strategy of the run config (or --strategy).
          const auto strategy = CreateStrategy(ctx.registry, run.strategies.front());
          graph = BuildSlicedLayerGraph(*strategy, run.strategies.front().Name(), model, options,
                                        width);
        } else {
          graph = BuildLayerGraph(model, options);
        }
        // The run's recipe, as the search and predict apply it (a layer-graph file is
        // scheduled as written).
        KernelsFromFlags(ctx.vm, run);
        if (ctx.vm.count("precision")) {
          run.training.precision =
              ParsePrecision("--precision", ctx.vm["precision"].as<std::string>());
        }
        RefuseFp8FlagsWithoutFp8(ctx.vm, run.training.precision == Precision::kFp8,
                                 std::string(ToString(run.training.precision)));
        graph = WithTrainingKernels(graph, run.training);
      }
    } catch (const InvalidArgumentError& e) {
      throw UsageError(std::string("phaze schedule: ") + e.what());
    }
    const std::string wanted = ctx.vm.count("layer") ? ctx.vm["layer"].as<std::string>() : "block";
    const UniqueLayer& layer = PickLayer(graph, wanted);
    const Pass pass = ParsePass(ctx.vm["pass"].as<std::string>());
    const auto estimator = ctx.registry.CreateEstimator(run.estimator.name, run.estimator.Params());
    where = graph.model + " " + layer.name + " " + std::string(ToString(pass)) +
            ", b=" + std::to_string(graph.micro_batch) +
            ", t=" + std::to_string(graph.tensor_parallel) + ", on " + arch.name;
    problem =
        BuildScheduleProblem(PassGraph(layer, pass), pass, *estimator, arch, run.cluster.network,
                             graph.model + "-" + layer.name + "-" + std::string(ToString(pass)));
  }

  SchedulerOptions options;
  options.solve = run.solver.Options();
  options.search_nodes = run.solver.search_nodes;
  options.max_exact_ops = static_cast<int>(run.solver.max_exact_ops);
  options.max_ilp_variables = static_cast<int>(run.solver.max_ilp_variables);
  if (ctx.vm.count("time-limit")) {
    options.solve.time_limit_s = ctx.vm["time-limit"].as<double>();
    options.solve.node_limit = 0;  // an explicit time limit replaces the default node limit
  }
  if (ctx.vm.count("gap")) options.solve.relative_gap = ctx.vm["gap"].as<double>();
  if (!(options.solve.time_limit_s > 0)) {
    throw UsageError("--time-limit: expected seconds > 0, found " +
                     FormatNumber("%g", options.solve.time_limit_s));
  }
  if (!(options.solve.relative_gap >= 0)) {
    throw UsageError("--gap: expected a relative gap ≥ 0, found " +
                     FormatNumber("%g", options.solve.relative_gap));
  }
  if (ctx.vm.count("search-nodes")) {
    options.search_nodes = ctx.vm["search-nodes"].as<std::int64_t>();
    if (options.search_nodes < 0) throw UsageError("--search-nodes: expected 0 or more");
  }
  if (ctx.vm.count("dump-ilp")) {
    // Made here, so that a path that cannot be a directory is the user's error, said before
    // any solve, not a filesystem exception from inside the scheduler.
    options.dump_dir = ctx.vm["dump-ilp"].as<std::string>();
    std::error_code ec;
    if (options.dump_dir.empty()) throw UsageError("--dump-ilp: expected a directory, found ''");
    if (std::filesystem::exists(options.dump_dir, ec) &&
        !std::filesystem::is_directory(options.dump_dir, ec)) {
      throw UsageError("--dump-ilp " + options.dump_dir + ": exists and is not a directory");
    }
    std::filesystem::create_directories(options.dump_dir, ec);
    if (ec) throw UsageError("--dump-ilp " + options.dump_dir + ": " + ec.message());
  }
  const Scheduler scheduler(
      ctx.registry.CreateSolverBackend(run.solver.backend.name, run.solver.backend.Params()),
      options);
  const ScheduleResult result = scheduler.Solve(problem);

  const double sequential = problem.SequentialMakespan();
  std::string line;
  line = fmt::sprintf(
                "%s: makespan %.3f µs (sequential %.3f µs, %.3fx) — %s, %s, gap %.2g; %zu ops, "
                "%d segments (%d fast), %d ILP solves (%.3f s, %d variables)\n",
                where.c_str(), result.makespan_s * 1e6, sequential * 1e6,
                result.makespan_s > 0 ? sequential / result.makespan_s : 1.0,
                std::string(ToString(result.stats.path)).c_str(),
                std::string(SolveStatusName(result.stats.status)).c_str(), result.stats.gap,
                problem.ops.size(), result.stats.segments, result.stats.fast_path_segments,
                result.stats.solves, result.stats.solve_time_s, result.stats.variables);
  ctx.out << line;
  if (problem.host_s > result.makespan_s) {
    line = fmt::sprintf(
                  "  host-bound: the host issues the pass in %.3f µs, longer than its makespan; "
                  "the pass lasts %.3f µs\n",
                  problem.host_s * 1e6, PassSeconds(problem, result) * 1e6);
    ctx.out << line;
  }
  if (!result.stats.detail.empty()) ctx.out << "  solver: " << result.stats.detail << "\n";
  std::vector<int> order(problem.ops.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return result.ops[a].start_s < result.ops[b].start_s; });
  line = fmt::sprintf("  %-40s %-6s %-6s %12s %12s  %s\n", "op", "class", "mode",
                "start µs", "duration µs", "cores");
  ctx.out << line;
  for (int i : order) {
    const auto& s = result.ops[i];
    std::string cores = CoreText(s.tensor_cores, "TC");
    const std::string vc = CoreText(s.vector_cores, "VC");
    if (!vc.empty()) cores += (cores.empty() ? "" : "+") + vc;
    if (cores.empty()) cores = "links";
    line = fmt::sprintf("  %-40s %-6s %-6s %12.3f %12.3f  %s\n",
                  problem.ops[i].name.c_str(), std::string(ToString(problem.ops[i].cls)).c_str(),
                  s.intra_op ? "intra" : "single", s.start_s * 1e6, s.duration_s * 1e6,
                  cores.c_str());
    ctx.out << line;
  }
  if (!ctx.global.output.empty()) {
    Json doc = ScheduleToJson(problem, result);
    doc["solver"] = run.solver.backend.name;
    // What the pass lasts: its makespan, or the host's issue time when that is longer (the
    // text's "host-bound" line).
    doc["host_s"] = problem.host_s;
    doc["pass_s"] = PassSeconds(problem, result);
    doc["problem"] = ScheduleProblemToJson(problem);
    WriteTextFileAtomic(ctx.global.output, doc.Dump(1) + "\n");
  }
  if (ctx.vm.count("gantt")) {
    WriteTextFileAtomic(ctx.vm["gantt"].as<std::string>(), ScheduleToSvg(problem, result, where));
  }
  return 0;
}

}  // namespace phaze::cli
