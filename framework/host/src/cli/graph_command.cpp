// `phaze graph --model FILE | --hf config.json [--micro-batch B] [--sequence-length S]
//  [--no-fusion] [--optimizer adam-mixed|adam-bf16-moments|sgd] [--format summary|json|dot]
//  [--emit-yaml]`: builds
// (or imports) a workload's layer graph and prints its summary, JSON or DOT (--output FILE also
// writes the graph JSON); --emit-yaml prints the model description a Hugging Face config reads as.
#include "commands.hpp"
#include "phaze/search/run_config.hpp"
#include "phaze/core/error.hpp"
#include "phaze/core/files.hpp"
#include "phaze/core/limits.hpp"
#include "phaze/graph/graph_builder.hpp"
#include "phaze/graph/graph_file.hpp"
#include "phaze/graph/hf_config.hpp"
#include "phaze/strategy/composed_strategy.hpp"

namespace po = boost::program_options;

namespace phaze::cli {

void AddGraphOptions(po::options_description& d) {
  d.add_options()("model", po::value<std::string>(),
                  "model description (YAML), Hugging Face config.json or graph file (JSON)")(
      "hf", po::value<std::string>(), "a Hugging Face config.json (only that kind)")(
      "emit-yaml",
      "print the model description (YAML) equivalent to --hf/--model instead (-o also writes it)")(
      "micro-batch", po::value<std::int64_t>()->default_value(1), "micro-batch size b")(
      "sequence-length", po::value<std::int64_t>()->default_value(0),
      "sequence length (0: the model's own)")(
      "no-fusion", "keep GEMMs and their element-wise epilogues as separate ops")(
      "optimizer", po::value<std::string>()->default_value("adam-mixed"),
      "optimizer for the memory figures: adam-mixed | adam-bf16-moments | sgd")(
      "format", po::value<std::string>()->default_value("summary"), "summary | json | dot")(
      "strategy", po::value<std::string>(), "slice with this parallelism strategy (megatron, …)")(
      "width", po::value<std::int64_t>()->default_value(1),
      "the strategy's width (devices per slice)")(
      "expert-parallel", po::value<std::string>(),
      "with --strategy moe: its expert-parallel size e (dividing the experts; with whole experts "
      "a multiple of --width): E/e experts per expert-parallel rank")(
      "expert-tensor-parallel", po::value<std::string>(),
      "with --strategy moe: 1 (each expert whole on its device, the default) or width, or the "
      "--width itself (each split over the --width devices, Megatron-LM's "
      "--expert-tensor-parallel-size)");
}

std::int64_t CheckRange(const std::string& flag, std::int64_t v, std::int64_t lo, std::int64_t hi) {
  if (v < lo || v > hi) {
    throw UsageError(flag + ": expected an integer in [" + std::to_string(lo) + ", " +
                     std::to_string(hi) + "], found " + std::to_string(v) +
                     (v > hi ? " (phaze's limit: see share/config/README.md, Limits)" : ""));
  }
  return v;
}

std::int64_t IntOption(const po::variables_map& vm, const std::string& name, std::int64_t lo,
                       std::int64_t hi) {
  return CheckRange("--" + name, vm[name].as<std::int64_t>(), lo, hi);
}

GraphOptions ReadGraphOptions(const po::variables_map& vm) {
  GraphOptions options;
  options.micro_batch = IntOption(vm, "micro-batch", 1, limits::kMicroBatch);
  options.sequence_length = IntOption(vm, "sequence-length", 0, limits::kSequence);
  options.fusion = !vm.count("no-fusion");
  if (vm.count("optimizer")) {
    options.optimizer =
        OptimizerSpec::For(ParseOptimizer("--optimizer", vm["optimizer"].as<std::string>()));
  }
  return options;
}

int RunGraph(CommandContext& ctx) {
  const bool hf = ctx.vm.count("hf") > 0;
  if (hf == (ctx.vm.count("model") > 0)) {
    throw UsageError(std::string("phaze graph: ") +
                     (hf ? "give either --model or --hf, not both" : "--model FILE is required"));
  }
  const std::string format = ctx.vm["format"].as<std::string>();
  if (format != "summary" && format != "json" && format != "dot") {
    throw UsageError("--format: expected summary, json or dot, found '" + format + "'");
  }
  const std::string path = ctx.vm[hf ? "hf" : "model"].as<std::string>();
  if (ctx.vm.count("emit-yaml")) {
    const std::int64_t s = IntOption(ctx.vm, "sequence-length", 0, limits::kSequence);
    const ModelSpec model = hf ? LoadHfConfig(path, s) : LoadWorkload(path, s);
    const std::string yaml = "# " + model.name + ", written by phaze graph --emit-yaml from " +
                             path + "\n" + ModelSpecToYaml(model);
    if (!ctx.global.output.empty()) WriteTextFileAtomic(ctx.global.output, yaml);
    ctx.out << yaml;
    return 0;
  }
  const ConfigNode root = ConfigNode::ParseFile(path);
  LayerGraph graph;
  if (hf && !IsHfConfigDocument(root)) {
    root.Fail("--hf expects a Hugging Face config.json (a map with a 'model_type'), found " +
              root.Describe());
  }
  if (IsLayerGraphDocument(root)) {
    RefuseModelOptionsOnGraphFile(ctx.vm, {"micro-batch", "sequence-length", "no-fusion",
                                           "optimizer", "strategy", "width", "expert-parallel"});
    graph = ParseLayerGraphFile(root);
  } else {
    const GraphOptions options = ReadGraphOptions(ctx.vm);
    const std::int64_t width = IntOption(ctx.vm, "width", 1, limits::kWidth);
    if (width != 1 && !ctx.vm.count("strategy")) {
      throw UsageError("phaze graph: --width " + std::to_string(width) +
                       " needs --strategy (megatron, …) to slice the graph");
    }
    for (const char* flag : {"expert-parallel", "expert-tensor-parallel"}) {
      if (ctx.vm.count(flag) && !ctx.vm.count("strategy")) {
        throw UsageError(std::string("phaze graph: --") + flag + " needs --strategy moe");
      }
    }
    const ModelSpec model = ParseWorkload(root, options.sequence_length);
    try {
      if (ctx.vm.count("strategy")) {
        // The strategy with the run config's params for it (--config), as predict takes it.
        const RunConfig configured = ctx.global.config.empty()
                                         ? RunConfig::Defaults()
                                         : RunConfig::ParseFile(ctx.global.config, false);
        const std::string name = ctx.vm["strategy"].as<std::string>();
        StrategyChoice choice =
            NamedStrategy(ctx.registry, "--strategy", name, configured.strategies);
        if (ctx.vm.count("expert-parallel")) {
          const std::vector<std::int64_t> e =
              ParseExpertParallel("--expert-parallel", ctx.vm["expert-parallel"].as<std::string>());
          if (e.size() != 1) throw UsageError("--expert-parallel: one size for a graph");
          CheckExpertParallel("--expert-parallel", e, model);
          choice = WithExpertParallel(choice, e[0], "--expert-parallel");
        }
        if (ctx.vm.count("expert-tensor-parallel")) {
          const std::vector<bool> splits = ParseExpertTensorParallel(
              "--expert-tensor-parallel", ctx.vm["expert-tensor-parallel"].as<std::string>(),
              false, width);
          CheckExpertTensorParallel("--expert-tensor-parallel", splits, model);
          choice = WithExpertTensorParallel(choice, splits.front(), "--expert-tensor-parallel");
        }
        const auto strategy = CreateStrategy(ctx.registry, choice);
        graph = BuildSlicedLayerGraph(*strategy, choice.Name(), model, options, width);
      } else {
        graph = BuildLayerGraph(model, options);
      }
    } catch (const InvalidArgumentError& e) {
      throw UsageError(std::string("phaze graph: ") + e.what());
    }
  }
  if (!ctx.global.output.empty()) {
    WriteTextFileAtomic(ctx.global.output, LayerGraphToJson(graph).Dump(1) + "\n");
  }
  if (format == "json") {
    ctx.out << LayerGraphToJson(graph).Dump(1) << "\n";
  } else if (format == "dot") {
    ctx.out << LayerGraphToDot(graph);
  } else {
    ctx.out << LayerGraphSummary(graph);
  }
  return 0;
}

}  // namespace phaze::cli
