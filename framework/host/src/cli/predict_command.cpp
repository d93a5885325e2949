// `phaze predict`: one training plan evaluated without searching (DESIGN §10) — the time of a
// step and its parts, per-stage memory, throughput and MFU, on an architecture preset or file and
// the run config's cluster (or a system from share/systems/). Flags override the run config:
//   phaze predict --model M.yaml --arch PRESET|FILE [--config RUN.yaml] --plan t,p,d[,v]
//     --micro-batch b --recompute none|selective|per-op|full [--sharding none|optimizer|gradients|
//     parameters] [--shard-group all|node|N] [--precision bf16|fp16|fp8]
//     [--attention unfused|megatron|flash|fused]
//     [--loss megatron|torch|compiled] [--sequence-parallel]
//     [--strategy NAME] [--expert-parallel E] [--context-parallel C]
//     [--global-batch B] [--sequence-length S]
//     [--accelerators K] [--system NAME] [--hbm-gib G] [--stage-starts i,j,…] [--tokens N]
//     [--hourly-usd P] [-o OUT.json]
// An infeasible plan exits 1 naming the stage that does not fit and by how much.
#include <fmt/printf.h>

#include <cstdio>
#include <sstream>

#include "commands.hpp"
#include "phaze/arch/arch_config.hpp"
#include "phaze/core/error.hpp"
#include "phaze/core/files.hpp"
#include "phaze/core/limits.hpp"
#include "phaze/core/text_format.hpp"
#include "phaze/graph/tensor_parallel_overlap.hpp"
#include "phaze/placement/layer_table_file.hpp"
#include "phaze/report/search_report.hpp"
#include "phaze/search/model_evaluator.hpp"
#include "phaze/search/plan_ranking.hpp"
#include "phaze/search/run_config.hpp"
#include "phaze/strategy/composed_strategy.hpp"

namespace po = boost::program_options;

namespace phaze::cli {

void AddPredictOptions(po::options_description& d) {
  d.add_options()("model", po::value<std::string>(), "workload file (workloads/*.yaml)")(
      "arch", po::value<std::string>(), "architecture preset or file (share/arch/)")(
      "plan", po::value<std::string>(),
      "t,p,d[,v]: tensor, pipeline, data parallel widths and "
      "virtual stages per device (v > 1: interleaved 1F1B)")(
      "micro-batch", po::value<std::int64_t>(), "micro-batch size")(
      "recompute", po::value<std::string>()->default_value("none"),
      "none | selective | per-op | full")(
      "sharding", po::value<std::string>(),
      "none | optimizer (ZeRO-1, the distributed optimizer) | gradients (ZeRO-2) | parameters "
      "(ZeRO-3, FSDP); default: the run config's first training.sharding")(
      "shard-group", po::value<std::string>(),
      "over how many devices the sharding divides: all (every data-parallel replica), node (the "
      "replicas within a node, replicated across: HSDP) or a device count; default: the run "
      "config's first training.shard_group")(
      "precision", po::value<std::string>(),
      "bf16 | fp16 | fp8 (FP8 GEMMs in the blocks, scaled as --fp8-recipe says; default: the "
      "run config's)")(
      "recipe", po::value<std::string>(),
      "training recipe (share/recipes/: megatron-lm-2021, megatron-deepspeed-2023, "
      "megatron-core-2024) or file, over the "
      "run config; the other flags override it (default: the run config's, else phaze's "
      "defaults, which are megatron-lm-2021's but for its softmax rule, --attention megatron)")(
      "sequence-parallel", "Megatron sequence parallelism (the sequence_parallel strategy)")(
      "expert-parallel", po::value<std::string>(),
      "the moe strategy's expert-parallel size e, or `width` (e = t, the default): with whole "
      "experts a multiple of t, each expert group spanning e/t data-parallel replicas too; with "
      "split ones (--expert-tensor-parallel width) e data-parallel replicas (Megatron-LM's "
      "--expert-model-parallel-size)")(
      "expert-tensor-parallel", po::value<std::string>(),
      "the moe strategy's experts: 1 (each whole on its device, the default) or width, or t "
      "itself (each split over t, Megatron-LM's --expert-tensor-parallel-size t: e then counts "
      "data-parallel replicas, any divisor of the experts)")(
      "strategy", po::value<std::string>(),
      "the parallelism strategy (a plugin: megatron, sequence_parallel, context_parallel, moe); "
      "t is its whole width, as phaze plan's t column (default: the run config's first)")(
      "context-parallel", po::value<std::int64_t>(),
      "context parallelism c over the tensor parallelism (megatron or sequence_parallel): t is "
      "then the whole width, t/c tensor-parallel ranks × c context-parallel groups of them "
      "(Megatron-LM's --tensor-model-parallel-size t/c --context-parallel-size c; default 1)")(
      "sequence-length", po::value<std::int64_t>(),
      "tokens per sample (default: the model's own; a Hugging Face config's is its "
      "max_position_embeddings)")("global-batch", po::value<std::int64_t>(),
                                  "samples per step (default: the run config's)")(
      "accelerators", po::value<std::int64_t>(),
      "devices (default t·p·d; fewer cannot run the plan, more would idle and are refused)")(
      "system", po::value<std::string>(), "the network: a system in share/systems/ or a file")(
      "hbm-gib", po::value<double>(), "HBM per device (default: the architecture's)")(
      "power-limit-w", po::value<double>(),
      "board power limit in W (default: the architecture's power_limit_w, else its TDP); below "
      "the TDP the tensor cores' clock falls (share/arch/README.md)")(
      "stage-starts", po::value<std::string>(),
      "first layer index of stages 2..p (default: Megatron's even split of the blocks)")(
      "tokens", po::value<double>(),
      "tokens to train: report the time and cost (default: the "
      "run config's training.tokens)")("hourly-usd", po::value<double>(),
                                       "price of a device-hour (default: the run config's "
                                       "cost.hourly_usd, else the preset's, else the cost model)");
  AddKernelOptions(d);
  AddWeightFormatOptions(d);
}

namespace {

// Every cell of a comma-separated list, empty ones included ("", "1,", "1,,2" have one), each a
// non-negative integer.
std::vector<int> ParseInts(const std::string& text, const std::string& flag) {
  std::vector<int> out;
  for (const std::string& cell : SplitCommas(text)) {
    try {
      std::size_t used = 0;
      const int v = std::stoi(cell, &used);
      if (used != cell.size() || v < 0) throw std::invalid_argument(cell);
      out.push_back(v);
    } catch (const std::exception&) {
      throw UsageError(flag + ": expected comma-separated non-negative integers, found '" + text +
                       "'");
    }
  }
  return out;
}

std::string Seconds(double s) {
  std::string buf = fmt::sprintf("%10.4f s", s);
  return buf;
}

std::string GiB(double bytes) {
  std::string buf = fmt::sprintf("%.2f GiB", bytes / 1073741824.0);
  return buf;
}

// What the plan asks of the model's layers: Megatron's interleaved schedule splits the
// transformer blocks evenly into p·v chunks and runs micro-batches in groups of p; explicit stage
// starts are p − 1 first-layer indices, strictly increasing, inside the model — with v > 1, each
// device's layers, its v chunks together (phaze prices a device's chunks as one stage, so an
// uneven split of the chunks, TorchTitan's 7, 8 × 14, 7 blocks of Llama 3.1 405B's 126 over
// p·v = 16, is given by the layers each device gets: 15, 16 × 6, 15).
void CheckPlanAgainstModel(const LayerGraph& graph, const PlanRequest& r,
                          std::int64_t global_batch) {
  const int layers = static_cast<int>(graph.layers.size());
  const int p = static_cast<int>(r.pipeline_stages);
  if (r.virtual_stages > 1) {
    std::int64_t blocks = 0;
    for (const auto& l : graph.layers) blocks += graph.unique_layers.at(l.unique_id).kind == LayerKind::kBlock;
    const std::int64_t chunks = r.pipeline_stages * r.virtual_stages;
    if (blocks == 0 || (blocks % chunks != 0 && r.stage_starts.empty())) {
      throw UsageError("--plan: interleaving splits the " + std::to_string(blocks) +
                       " transformer blocks of " + graph.model +
                       " into p·v = " + std::to_string(chunks) + " equal chunks; " +
                       std::to_string(blocks) + " is not a multiple of " + std::to_string(chunks) +
                       " (--stage-starts gives each device's layers for an uneven split)");
    }
    const std::int64_t per_replica = global_batch / (r.micro_batch * r.data_parallel);
    if (per_replica % r.pipeline_stages != 0) {
      throw UsageError("--plan: the interleaved schedule runs micro-batches in groups of p = " +
                       std::to_string(p) + "; a replica has " + std::to_string(per_replica));
    }
  }
  if (graph.expert_fold > 1 && r.data_parallel % graph.expert_fold != 0) {
    throw UsageError("--plan d = " + std::to_string(r.data_parallel) +
                     ": the expert groups span " + std::to_string(graph.expert_fold) +
                     " data-parallel replicas, which must divide d (--expert-parallel sets the "
                     "groups' size, t by default)");
  }
  if (r.stage_starts.empty()) return;
  if (static_cast<int>(r.stage_starts.size()) != p - 1) {
    throw UsageError("--stage-starts: expected p − 1 = " + std::to_string(p - 1) +
                     " first-layer indices (stages 2.." + std::to_string(p) + "), found " +
                     std::to_string(r.stage_starts.size()));
  }
  int previous = 0;
  for (int start : r.stage_starts) {
    if (start <= previous || start >= layers) {
      throw UsageError("--stage-starts: " + std::to_string(start) + " is not a first layer of a "
                       "stage after " + std::to_string(previous) + ": the starts are strictly "
                       "increasing layer indices from 1 to " + std::to_string(layers - 1) +
                       " (" + graph.model + " has " + std::to_string(layers) + " layers)");
    }
    previous = start;
  }
}

}  // namespace

int RunPredict(CommandContext& ctx) {
  for (const char* required : {"model", "arch", "plan", "micro-batch"}) {
    if (!ctx.vm.count(required)) {
      throw UsageError(std::string("phaze predict: --") + required + " is required (phaze " +
                       "predict --help)");
    }
  }
  RunConfig run = ctx.global.config.empty() ? RunConfig::Defaults()
                                            : RunConfig::ParseFile(ctx.global.config, false);
  const std::vector<int> plan = ParseInts(ctx.vm["plan"].as<std::string>(), "--plan");
  if ((plan.size() != 3 && plan.size() != 4) || plan[0] < 1 || plan[1] < 1 || plan[2] < 1 ||
      (plan.size() == 4 && plan[3] < 1)) {
    throw UsageError("--plan: expected t,p,d or t,p,d,v with every value >= 1, found '" +
                     ctx.vm["plan"].as<std::string>() + "'");
  }
  CheckRange("--plan t", plan[0], 1, limits::kWidth);
  CheckRange("--plan p", plan[1], 1, limits::kWidth);
  CheckRange("--plan d", plan[2], 1, limits::kAccelerators);
  if (plan.size() == 4) CheckRange("--plan v", plan[3], 1, limits::kWidth);
  CheckRange("--plan t·p·d", static_cast<std::int64_t>(plan[0]) * plan[1] * plan[2], 1,
             limits::kAccelerators);
  PlanRequest request;
  request.tensor_parallel = plan[0];
  request.pipeline_stages = plan[1];
  request.data_parallel = plan[2];
  request.virtual_stages = plan.size() == 4 ? plan[3] : 1;
  request.micro_batch = IntOption(ctx.vm, "micro-batch", 1, limits::kMicroBatch);
  const std::string mode = ctx.vm["recompute"].as<std::string>();
  const auto parsed_mode = ParseRecomputeMode(mode);
  if (!parsed_mode) {
    throw UsageError("--recompute: expected none, selective, per-op or full, found '" + mode + "'");
  }
  request.recompute = *parsed_mode;
  RecipeFromFlags(ctx.vm, run);
  request.sharding = run.training.sharding.front();
  if (ctx.vm.count("sharding")) {
    request.sharding = ParseSharding("--sharding", ctx.vm["sharding"].as<std::string>());
  }
  run.training.sharding = {request.sharding};
  request.shard_group = run.training.shard_groups.front();
  if (ctx.vm.count("shard-group")) {
    const std::vector<std::int64_t> groups =
        ParseShardGroups("--shard-group", ctx.vm["shard-group"].as<std::string>());
    if (groups.size() != 1) throw UsageError("--shard-group: expected one group, all, node or N");
    request.shard_group = groups.front();
    const std::int64_t t = request.tensor_parallel, d = request.data_parallel;
    const std::int64_t n = request.shard_group;
    if (request.sharding == Sharding::kNone && n != kShardOverAll) {
      throw UsageError(
          "--shard-group " + ctx.vm["shard-group"].as<std::string>() + ": the sharding is none (" +
          (ctx.vm.count("sharding") ? "--sharding" : "the run config's training.sharding") +
          "), which shards nothing (give --sharding optimizer, gradients or "
          "parameters)");
    }
    // A group spans t·h devices, h > 1 of the d replicas dividing d: a count ShardReplicas would
    // round (to the h below it) is refused. A device count needs no network (ShardSpan).
    const std::int64_t h = n > 0 ? ShardReplicasOf(request, Network{}) : 0;
    if (n > 0 && n < t * d && (h < 2 || t * h != n)) {
      std::string spans;
      for (std::int64_t k = 2; k < d; ++k) {
        if (d % k == 0) spans += (spans.empty() ? "" : ", ") + std::to_string(t * k);
      }
      throw UsageError("--shard-group " + std::to_string(n) +
                       ": a shard group spans t·h devices, " + "h > 1 of the d = " +
                       std::to_string(d) + " replicas with h dividing d (t = " + std::to_string(t) +
                       ": " + (spans.empty() ? "none below all" : spans + ", or all") + ")");
    }
  }
  run.training.shard_groups = {request.shard_group};
  if (ctx.vm.count("precision")) {
    run.training.precision = ParsePrecision("--precision", ctx.vm["precision"].as<std::string>());
  }
  KernelsFromFlags(ctx.vm, run);
  RefuseFp8FlagsWithoutFp8(ctx.vm, run.training.precision == Precision::kFp8,
                           std::string(ToString(run.training.precision)));
  if (ctx.vm.count("fp8-param-gather") && request.sharding == Sharding::kNone) {
    throw UsageError(
        "--fp8-param-gather: the sharding is none, so no weights are gathered (give --sharding "
        "optimizer, gradients or parameters)");
  }
  if (ctx.vm.count("stage-starts")) {
    request.stage_starts = ParseInts(ctx.vm["stage-starts"].as<std::string>(), "--stage-starts");
  }

  // The run config, overridden by the flags.
  if (ctx.vm.count("global-batch")) {
    run.training.global_batch = IntOption(ctx.vm, "global-batch", 1, limits::kGlobalBatch);
  }
  if (run.training.global_batch % (request.micro_batch * request.data_parallel) != 0) {
    throw UsageError("the global batch " + std::to_string(run.training.global_batch) +
                     " is not a multiple of --micro-batch × d = " +
                     std::to_string(request.micro_batch) + " × " +
                     std::to_string(request.data_parallel) +
                     ": every data-parallel replica runs whole micro-batches");
  }
  if (request.virtual_stages > 1 && request.pipeline_stages < 2) {
    throw UsageError("--plan v: interleaving (v = " + std::to_string(request.virtual_stages) +
                     ") needs at least 2 pipeline stages, found p = 1");
  }
  run.cluster.num_accelerators = static_cast<std::int64_t>(request.tensor_parallel) *
                                 request.pipeline_stages * request.data_parallel;
  if (ctx.vm.count("accelerators")) {
    const std::int64_t plan_devices = run.cluster.num_accelerators;
    run.cluster.num_accelerators = IntOption(ctx.vm, "accelerators", 1, limits::kAccelerators);
    if (run.cluster.num_accelerators > plan_devices) {  // fewer: infeasible, said below
      throw UsageError("--accelerators " + std::to_string(run.cluster.num_accelerators) +
                       ": --plan " + std::to_string(request.tensor_parallel) + "," +
                       std::to_string(request.pipeline_stages) + "," +
                       std::to_string(request.data_parallel) +
                       " runs on t·p·d = " + std::to_string(plan_devices) +
                       " devices and the rest would idle (its MFU, power and cost would not "
                       "agree); give --accelerators " +
                       std::to_string(plan_devices) + " or a plan that uses them all");
    }
  }
  NetworkFromFlags(ctx.vm, run);
  if (ctx.vm.count("sequence-parallel") && ctx.vm.count("strategy")) {
    throw UsageError("--sequence-parallel is --strategy sequence_parallel: give one of them");
  }
  if (ctx.vm.count("sequence-parallel")) {
    run.strategies = {
        NamedStrategy(ctx.registry, "--sequence-parallel", "sequence_parallel", run.strategies)};
  }
  if (ctx.vm.count("strategy")) {
    const std::string name = ctx.vm["strategy"].as<std::string>();
    run.strategies = {NamedStrategy(ctx.registry, "--strategy", name, run.strategies)};
  }
  run.strategies.resize(1);  // a plan is costed under one strategy: the first listed
  if (ctx.vm.count("expert-parallel")) {
    const std::vector<std::int64_t> e =
        ParseExpertParallel("--expert-parallel", ctx.vm["expert-parallel"].as<std::string>());
    if (e.size() != 1) throw UsageError("--expert-parallel: one size for a plan");
    CheckExpertParallel("--expert-parallel", e,
                        ReadFlag("--model", [&] { return LoadModelSpec(ModelFromFlags(ctx.vm)); }));
    run.strategies[0] = WithExpertParallel(run.strategies[0], e[0], "--expert-parallel");
  }
  if (ctx.vm.count("expert-tensor-parallel")) {
    const std::vector<bool> splits = ParseExpertTensorParallel(
        "--expert-tensor-parallel", ctx.vm["expert-tensor-parallel"].as<std::string>(), false,
        request.tensor_parallel);
    CheckExpertTensorParallel(
        "--expert-tensor-parallel", splits,
        ReadFlag("--model", [&] { return LoadModelSpec(ModelFromFlags(ctx.vm)); }));
    const bool split = splits.front();
    run.strategies[0] =
        WithExpertTensorParallel(run.strategies[0], split, "--expert-tensor-parallel");
  }
  if (ctx.vm.count("context-parallel")) {
    const std::int64_t c = IntOption(ctx.vm, "context-parallel", 1, limits::kWidth);
    if (request.tensor_parallel % c != 0) {
      throw UsageError("--context-parallel " + std::to_string(c) +
                       ": --plan t = " + std::to_string(request.tensor_parallel) +
                       " is the whole width, tensor × context parallel, and " + std::to_string(c) +
                       " does not divide it");
    }
    if (c > 1) {
      run.strategies[0] =
          WithContextParallel(ctx.registry, run.strategies[0], request.tensor_parallel / c,
                              run.strategies, "--context-parallel");
    }
  }
  run.training.micro_batches = {request.micro_batch};
  run.training.tensor_parallel_widths = {request.tensor_parallel};
  run.training.recompute = {request.recompute};
  if (request.virtual_stages > 1) {
    run.training.pipeline_schedule = PipelineSchedule::kInterleaved;
    run.training.virtual_stages = {request.virtual_stages};
  } else if (run.training.pipeline_schedule == PipelineSchedule::kInterleaved) {
    run.training.pipeline_schedule = PipelineSchedule::k1F1B;
  }
  ArchConfig arch = DeviceFromFlags(ctx.vm, run);
  CheckPrecisionOnDevice(ctx.vm.count("precision") ? "--precision" : "training.precision",
                         run.training.precision, arch);
  if (ctx.vm.count("power-limit-w")) {
    arch = WithPowerLimit(arch, ctx.vm["power-limit-w"].as<double>());
  }
  if (ctx.vm.count("tokens")) {
    run.training.tokens = ctx.vm["tokens"].as<double>();
    if (!(run.training.tokens >= 0) || !(run.training.tokens <= 1e18)) {
      throw UsageError("--tokens: expected a count in [0, 1e18]");
    }
  }
  if (ctx.vm.count("hourly-usd")) {
    run.cost.hourly_usd = ctx.vm["hourly-usd"].as<double>();
    if (!(run.cost.hourly_usd > 0) || !(run.cost.hourly_usd <= 1e7)) {
      throw UsageError("--hourly-usd: expected a price above 0 and at most 1e7 per device-hour");
    }
  }
  run.CheckComponents(ctx.registry, true, true, true);

  const ModelEntry entry = ModelFromFlags(ctx.vm);
  const PreparedModel model = ReadFlag("--model", [&] {
    return PrepareModel(entry, run, CreateRunStrategies(ctx.registry, run.strategies),
                        /*require_slices=*/false);
  });
  const PreparedModel::Slice* found =
      model.FindSlice(request.micro_batch, request.tensor_parallel, request.strategy);
  if (!found) {
    throw UsageError("--plan t = " + std::to_string(request.tensor_parallel) + ": the strategy '" +
                     run.strategies[0].Name() + "' cannot split " + model.name + " " +
                     std::to_string(request.tensor_parallel) + " ways" +
                     (model.refused.empty() ? "" : " (" + model.refused.front() + ")"));
  }
  // The slice the plan runs (its vocabulary padding is reported below).
  const LayerGraph& slice = found->graph;
  CheckPlanAgainstModel(slice, request, run.training.global_batch);
  const ModelEvaluator evaluator(
      run, ctx.registry.CreateEstimator(run.estimator.name, run.estimator.Params()),
      ctx.registry.CreateSolverBackend(run.solver.backend.name, run.solver.backend.Params()));
  const PlanChoice choice = evaluator.EvaluatePlan(model, arch, request);
  const PlacementPlan& p = choice.plan;

  // What was asked, then the plan's result as results.json writes one (PlanChoiceToJson).
  Json j = Json::MakeObject();
  j["model"] = model.name;
  j["arch"] = arch.name;
  j["device"] = DevicePowerJson(arch);
  j["strategy"] = run.strategies.front().ToJson();
  j["estimator"] = run.estimator.name;
  j["global_batch"] = run.training.global_batch;
  j["sequence_length"] = model.sequence_length;
  j["accelerators"] = run.cluster.num_accelerators;
  j["schedule"] = std::string(ToString(run.training.pipeline_schedule));
  if (!run.training.recipe.empty()) j["recipe"] = run.training.recipe;
  j["attention"] = std::string(ToString(run.training.attention));
  j["loss"] = std::string(ToString(run.training.loss));
  j["fp8_recipe"] = std::string(ToString(run.training.fp8_recipe));
  j["fp8_param_gather"] = run.training.fp8_param_gather;
  j["fp8_param_storage"] = std::string(ToString(run.training.fp8_param_storage));
  j["bubble"] = std::string(ToString(run.training.bubble));
  j["pipeline_sends"] = std::string(ToString(run.training.pipeline_sends));
  j["gradient_reduction_overlap"] = run.training.gradient_reduction_overlap;
  j["tensor_parallel_overlap"] = run.training.tensor_parallel_overlap;
  j["model_flops_per_token"] = model.flops_per_token;
  // The vocabulary the strategy padded (Megatron-LM: a multiple of 128·t), when it did.
  if (slice.padded_vocab > 0) {
    j["vocab"] = slice.vocab;
    j["padded_vocab"] = slice.padded_vocab;
  }
  j["cluster"]["levels"] = run.cluster.network.ToJson();
  if (!run.cluster.network.Name().empty()) j["cluster"]["system"] = run.cluster.network.Name();
  // What launches it: Megatron-LM's arguments and TorchTitan's job-config keys, or why not.
  const bool experts = slice.HasExperts();
  const PipelineSplit split = PlanPipelineSplit(slice, request);
  PutLaunches(j, MegatronArgs(request, run, split, model.sequence_length, experts),
              TorchTitanArgs(request, run, split, model.sequence_length, experts));
  // A plan above the HBM is infeasible but timed: its figures (what it would take if it fitted) are
  // written beside the reason.
  const bool over_hbm = !choice.feasible && p.time_per_batch_s > 0;
  if (over_hbm) {
    PlanChoice shown = choice;
    shown.feasible = true;
    j["result"] = PlanChoiceToJson(shown);
    j["result"]["feasible"] = false;
    j["result"]["reason"] = choice.reason;
  } else {
    j["result"] = PlanChoiceToJson(choice);
  }
  // Finite arithmetic (issue 44): a figure that overflowed is an error naming it and the inputs
  // it comes from, never an "inf" or a null in the output.
  if (const std::string at = j.FirstNonFinite(); !at.empty()) {
    throw UsageError("phaze predict: " + at + " is not a finite number: the plan's figures "
                     "overflow double precision for this model on architecture '" + arch.name +
                     "' (check its rates and sizes, the model's sizes and --hbm-gib)");
  }
  if (!ctx.global.output.empty()) WriteTextFileAtomic(ctx.global.output, j.Dump() + "\n");
  if (!choice.feasible && !over_hbm) {
    ctx.err << "infeasible plan: " << choice.reason << "\n";
    return static_cast<int>(ExitCode::kNoFeasibleResult);
  }

  const StepBreakdown& b = p.breakdown;
  const std::string& strategy = run.strategies[0].component.name;
  auto& o = ctx.out;
  o << model.name << " on " << run.cluster.num_accelerators << " × " << arch.name << " ("
    << (run.cluster.network.Name().empty()
            ? std::to_string(run.cluster.network.Levels().size()) + "-level network"
            : run.cluster.network.Name())
    << ", estimator " << run.estimator.name << PowerLimitText(arch) << "): t "
    << request.tensor_parallel << ", p " << request.pipeline_stages << ", d "
    << request.data_parallel;
  if (request.virtual_stages > 1) o << ", v " << request.virtual_stages;
  o << ", micro-batch " << request.micro_batch << ", batch " << run.training.global_batch << " × "
    << model.sequence_length << " tokens, recompute " << ToString(request.recompute)
    << (request.sharding != Sharding::kNone
            ? ", sharding " +
                  ShardingText(request.sharding, choice.shard_replicas, request.data_parallel)
            : std::string())
    << (run.training.precision != Precision::kBf16
            ? ", " + std::string(ToString(run.training.precision)) +
                  (run.training.precision == Precision::kFp8
                       ? " (" + std::string(ToString(run.training.fp8_recipe)) + " scaling" +
                             (run.training.Fp8WeightsOnly(request.sharding)
                                  ? ", weights kept and gathered in FP8"
                              : run.training.fp8_param_gather && request.sharding != Sharding::kNone
                                  ? ", weights gathered in FP8"
                                  : "") +
                             ")"
                       : std::string())
            : std::string())
    << (IsFlashAttention(run.training.attention) ? ", FlashAttention" : "")
    << (run.strategies[0].over
            ? ", strategy " + run.strategies[0].Name() + " (t " +
                  std::to_string(request.tensor_parallel) + " = " +
                  std::to_string(run.strategies[0].over->width) + " × " +
                  std::to_string(request.tensor_parallel / run.strategies[0].over->width) + ")"
        : strategy == "megatron"          ? std::string()
        : strategy == "sequence_parallel" ? std::string(", sequence parallel")
                                          : ", strategy " + strategy)
    << (choice.expert_parallel > 0 ? ", expert parallel " + std::to_string(choice.expert_parallel)
                                   : std::string())
    << (choice.expert_tensor_parallel > 1
            ? ", experts split over t (expert tensor parallel " +
                  std::to_string(choice.expert_tensor_parallel) + ")"
            : std::string())
    << (std::ranges::any_of(slice.unique_layers,
                            [](const UniqueLayer& u) {
                              return std::ranges::any_of(u.forward.Ops(), [](const Operator& op) {
                                return op.gemm_overlap >= 0;
                              });
                            })
            ? fmt::sprintf(", TP collectives %.0f%% beside the GEMMs",
                           100 * ChunkedCollectiveShare(run.training.tensor_parallel_overlap,
                                                        arch.collective_overlap))
            : std::string())
    << "\n";
  if (slice.padded_vocab > 0) {
    o << "  vocabulary        " << slice.vocab << " rows padded to " << slice.padded_vocab << " (+"
      << slice.padded_vocab - slice.vocab << ", " << slice.strategy << ")\n";
  }
  o << "  iteration         " << Seconds(p.time_per_batch_s) << "\n"
    << "    forward         " << Seconds(b.forward_s) << "   (bottleneck stage "
    << b.bottleneck_stage << ", " << p.micro_batches / request.data_parallel
    << " micro-batches a replica)\n"
    << "    backward        " << Seconds(b.backward_s) << "\n"
    << "    recompute       " << Seconds(b.recompute_s) << "\n"
    << "    pipeline sends  " << Seconds(b.pipeline_send_s)
    << (run.training.pipeline_sends == PipelineSends::kBlocking && request.pipeline_stages > 1
            ? "   (blocking: each stage also waits for its own sends)"
            : "")
    << "\n"
    << (request.sharding >= Sharding::kGradients
            ? "    sharding        " + Seconds(b.sharding_s) +
                  "   (its per-micro-batch collectives beyond the compute)\n"
            : std::string())
    << "    pipeline bubble " << Seconds(b.bubble_s) << "\n"
    << "    data parallel   " << Seconds(b.data_parallel_s)
    << (b.data_parallel_total_s > b.data_parallel_s
            ? fmt::sprintf("   (of %.4f s; the rest hidden behind the first stage's last backward "
                           "and first forward)",
                           b.data_parallel_total_s)
            : std::string())
    << "\n"
    << "    optimizer step  " << Seconds(b.optimizer_s) << "\n"
    << "    tied embedding  " << Seconds(b.tied_embedding_s) << "\n";
  std::string line = fmt::sprintf("  throughput        %.4g tokens/s, %.4g samples/s, MFU %.1f%%\n",
                choice.tokens_per_s, p.throughput_samples_per_s, 100 * choice.mfu);
  o << line;
  const Energy& e = p.energy;
  const double joules = e.TotalJ();
  auto part = [&](double j) { return joules > 0 ? 100 * j / joules : 0.0; };
  line = fmt::sprintf("  power             %.1f W per device (%lld devices); energy %.4g J per "
                      "iteration, %.4g J per token\n",
                      choice.power_w, static_cast<long long>(p.devices), joules,
                      choice.energy_per_token_j);
  o << line;
  line = fmt::sprintf("    compute %.1f%%, on-chip %.1f%%, memory %.1f%%, network %.1f%%, "
                      "static %.1f%%\n",
                      part(e.compute_j), part(e.on_chip_j), part(e.memory_j), part(e.network_j),
                      part(e.static_j));
  o << line;
  if (choice.hourly_usd > 0) {
    o << fmt::sprintf("  cost              $%.4g per device-hour, $%.4g per million tokens",
                      choice.hourly_usd, choice.usd_per_million_tokens);
  } else {
    o << "  cost              not priced: " << evaluator.Cost().Unbuildable(arch);
  }
  if (choice.time_to_train_s > 0) {
    o << fmt::sprintf("; %.4g tokens in %.4g days", run.training.tokens,
                      choice.time_to_train_s / 86400);
  }
  o << "\n";
  o << "  memory per device (HBM " << arch.HbmGiB() << " GiB):\n";
  std::string tight;  // the stages within 10% of the HBM
  for (std::size_t k = 0; k < p.stages.size(); ++k) {
    const StageMemory& m = p.stages[k].memory;
    const double state = m.weight_bytes + m.gradient_bytes + m.optimizer_state_bytes;
    // The forward and backward's sum; the peak unless the optimizer step's is larger.
    const double backward = state + m.activation_bytes + m.working_bytes + m.gathered_bytes;
    line = fmt::sprintf(
        "    stage %-3zu %10s = weights %s + gradients %s + optimizer %s + activations "
        "%s (%.3g in flight) + working %s%s\n",
        k, GiB(m.peak_at_step ? backward : p.stages[k].peak_memory_bytes).c_str(),
        GiB(m.weight_bytes).c_str(), GiB(m.gradient_bytes).c_str(),
        GiB(m.optimizer_state_bytes).c_str(), GiB(m.activation_bytes).c_str(), m.in_flight,
        GiB(m.working_bytes).c_str(),
        m.gathered_bytes > 0 ? (" + gathered " + GiB(m.gathered_bytes)).c_str() : "");
    o << line;
    if (m.step_working_bytes > 0) {
      o << fmt::sprintf(
          "      optimizer step %s = weights, gradients, optimizer + fp32 gradient "
          "copies %s (activations freed)%s\n",
          GiB(state + m.step_working_bytes).c_str(), GiB(m.step_working_bytes).c_str(),
          m.peak_at_step ? ": the stage's peak" : "");
    }
    if (p.stages[k].peak_memory_bytes > static_cast<double>(arch.hbm_bytes)) {
      o << "      over the HBM by "
        << GiB(p.stages[k].peak_memory_bytes - static_cast<double>(arch.hbm_bytes)) << "\n";
    } else if (p.stages[k].peak_memory_bytes >
               kTightHbmShare * static_cast<double>(arch.hbm_bytes)) {
      tight += (tight.empty() ? "" : ", ") + std::to_string(k);
    }
  }
  if (!tight.empty()) {  // as phaze plan says of such plans
    o << "    stage" << (tight.find(',') == std::string::npos ? " " : "s ") << tight
      << " within 10% of the HBM: " << kAllocatorNote << "\n";
  }
  if (request.sharding >= Sharding::kGradients && request.pipeline_stages > 1) {
    // What a pipeline under FSDP2 does (TorchTitan) is not what this prices.
    o << "  note: sharding " << ToString(request.sharding) << " under a pipeline is priced as "
      << (request.sharding == Sharding::kParameters
              ? "gathering the weights and reduce-scattering the gradients"
              : "reduce-scattering the gradients")
      << " every micro-batch; TorchTitan's FSDP2 under a pipeline keeps the weights and "
         "gradients whole through the step and shards the optimizer state alone, which "
         "--sharding optimizer prices (share/validation/README.md, \"Context parallelism and "
         "405B's pipeline\")\n";
  }
  if (const std::string flat =
          FlatNetworkNote(ctx.vm, run.cluster.network, run.cluster.num_accelerators);
      !flat.empty()) {
    o << "  note: " << flat << "\n";
  }
  if (over_hbm) {
    ctx.err << "infeasible plan (does not fit; the figures above are what it would take if it "
               "did): "
            << choice.reason << "\n";
    return static_cast<int>(ExitCode::kNoFeasibleResult);
  }
  return 0;
}

}  // namespace phaze::cli
