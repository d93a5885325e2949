// `phaze place --layers FILE [--fixed p,d,t]`: the placement DP alone on a layer table.
#include <cstdio>
#include <sstream>

#include "commands.hpp"
#include "phaze/core/error.hpp"
#include "phaze/core/files.hpp"
#include "phaze/placement/layer_table_file.hpp"

namespace po = boost::program_options;

namespace phaze::cli {

void AddPlaceOptions(po::options_description& d) {
  d.add_options()("layers", po::value<std::string>(), "layer-table file (JSON or YAML)")(
      "fixed", po::value<std::string>(), "evaluate a fixed strategy p,d,t instead of searching");
}

int RunPlace(CommandContext& ctx) {
  if (!ctx.vm.count("layers")) throw UsageError("phaze place: --layers FILE is required");
  const std::string file = ctx.vm["layers"].as<std::string>();
  PlacementProblem problem = ParseLayerTableFile(ConfigNode::ParseFile(file));
  PlacementSearch search;
  PlacementPlan plan;
  if (ctx.vm.count("fixed")) {
    std::string spec = ctx.vm["fixed"].as<std::string>();
    FixedStrategy f;
    char tail = 0;
    if (std::sscanf(spec.c_str(), "%d,%d,%d%c", &f.pipeline_stages, &f.data_parallel,
                    &f.tensor_parallel, &tail) != 3) {
      throw UsageError("--fixed: expected p,d,t (three integers, e.g. 8,128,1), found '" + spec +
                       "'");
    }
    if (f.pipeline_stages < 1 || f.data_parallel < 1 || f.tensor_parallel < 1) {
      throw UsageError("--fixed: p, d and t must be at least 1, found '" + spec + "'");
    }
    plan = search.Evaluate(problem, f);
  } else {
    plan = search.Place(problem);
  }
  Json json = Json::MakeObject();
  json["feasible"] = plan.feasible;
  if (!plan.feasible) {
    json["reason"] = plan.reason;
  } else {
    json["throughput_samples_per_s"] = plan.throughput_samples_per_s;
    json["time_per_batch_s"] = plan.time_per_batch_s;
    json["micro_batch"] = problem.micro_batch;
    json["recompute"] = problem.recompute;
    json["schedule"] = ToString(problem.schedule);
    json["plan"] = PlacementPlanToJson(plan, LayerNames(problem.widths.at(plan.tensor_parallel)));
  }
  if (!ctx.global.output.empty()) WriteTextFileAtomic(ctx.global.output, json.Dump() + "\n");
  if (!plan.feasible) {
    ctx.err << "no feasible placement: " << plan.reason << "\n";
    return static_cast<int>(ExitCode::kNoFeasibleResult);
  }
  const auto& layers = problem.widths.at(plan.tensor_parallel).layers;
  ctx.out << "time per batch  " << plan.time_per_batch_s << " s\n"
          << "throughput      " << plan.throughput_samples_per_s << " samples/s\n"
          << "plan            t=" << plan.tensor_parallel << " d=" << plan.data_parallel
          << " s=" << plan.pipeline_stages << " micro-batch " << problem.micro_batch << " ("
          << plan.micro_batches << " per batch), recompute " << (problem.recompute ? "on" : "off")
          << "\n"
          << "bubble share    " << plan.bubble_share << "\nsync share      " << plan.sync_share
          << "\nstages:\n";
  for (size_t k = 0; k < plan.stages.size(); ++k) {
    const auto& s = plan.stages[k];
    ctx.out << "  " << k << ": " << layers[s.first_layer].name;
    if (s.last_layer > s.first_layer) ctx.out << " .. " << layers[s.last_layer].name;
    ctx.out << " (" << (s.last_layer - s.first_layer + 1) << " layers), " << s.devices
            << " device(s), load " << s.load_s << " s, memory " << s.peak_memory_bytes
            << " bytes\n";
  }
  return 0;
}

}  // namespace phaze::cli
