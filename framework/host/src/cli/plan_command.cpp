// `phaze plan` (issue 40): for a model, a device and a cluster size, the best plans, ranked by
// time per step, or samples per joule or per dollar (--objective; framework:
// search/plan_ranking.hpp), at one or several board power limits (--power-limit-w), each with its
// breakdown, memory per stage, an error band from the validation residuals of runs of its shape
// (search/validation_residuals.hpp) and what launches it: the Megatron-LM arguments
// (search/megatron_args.hpp) and TorchTitan's job-config keys (search/torchtitan_args.hpp).
// --framework says whose defaults plan searches and whose arguments it prints: megatron-lm (the
// recipe megatron-core-2024; every recompute mode and sharding) or torchtitan (the recipe
// torchtitan-2025; recompute none, per-op, full; strategies sequence_parallel with DTensor's
// gathered_input: keep, and context_parallel; only the plans TorchTitan runs as phaze prices them).
// A Markdown table on stdout; -o writes JSON, `plans` best first, each with both launches (or why
// not).
//   phaze plan --model M.yaml --arch PRESET|FILE --accelerators K [--system NAME]
//     [--sequence-length S] [--global-batch B] [--top N] [--widths 1,2,4,8]
//     [--micro-batches 1,2,4,8] [--virtual-stages all|2,4] [--recompute none,selective,full]
//     [--sharding none,optimizer,gradients,parameters] [--shard-group all,node,16]
//     [--strategies all|megatron,…] [--context-parallel 2,4,8]
//     [--precision bf16,fp8] [--attention flash|unfused|fused] [--loss megatron|torch|compiled]
//     [--recipe NAME|FILE] [--power-limit-w 400,500,700] [--objective throughput_per_watt]
//     [--framework megatron-lm|torchtitan]
//     [--hbm-gib G] [--config RUN.yaml] [-o plan.json]
// The sweeps are the flags' (their defaults above, or the framework's), not the run config's; the
// config gives the rest (optimizer, gradient reduction precision and overlap, estimator, cost,
// network). The training recipe (share/recipes/) is --recipe's, else the run config's, else the
// framework's: megatron-core-2024 (FlashAttention, the gradient reduction and the
// sequence-parallel collectives overlapped) or torchtitan-2025, applied before the config's own
// training keys.
#include <fmt/printf.h>

#include <algorithm>
#include <sstream>

#include "commands.hpp"
#include "phaze/core/files.hpp"
#include "phaze/core/limits.hpp"
#include "phaze/core/text_format.hpp"
#include "phaze/graph/tensor_parallel_overlap.hpp"
#include "phaze/report/search_report.hpp"
#include "phaze/search/plan_ranking.hpp"
#include "phaze/search/training_recipe.hpp"
#include "phaze/search/validation_residuals.hpp"
#include "phaze/strategy/composed_strategy.hpp"
#include "phaze/strategy/width_restricted_strategy.hpp"

namespace po = boost::program_options;

namespace phaze::cli {

void AddPlanOptions(po::options_description& d) {
  d.add_options()("model", po::value<std::string>(), "workload file (workloads/*.yaml)")(
      "arch", po::value<std::string>(), "architecture preset or file (share/arch/)")(
      "accelerators", po::value<std::int64_t>(), "devices of the cluster")(
      "system", po::value<std::string>(), "the network: a system in share/systems/ or a file")(
      "global-batch", po::value<std::int64_t>(), "samples per step (default: the run config's)")(
      "sequence-length", po::value<std::int64_t>(),
      "tokens per sample (default: the model's own; a Hugging Face config's is its "
      "max_position_embeddings)")("top", po::value<std::int64_t>()->default_value(5),
                                  "plans to show")(
      "widths", po::value<std::string>()->default_value("1,2,4,8"),
      "tensor-parallel widths t (the strategy's whole width)")(
      "micro-batches", po::value<std::string>()->default_value("1,2,4,8"), "micro-batch sizes")(
      "virtual-stages", po::value<std::string>()->default_value("all"),
      "v > 1 tried beside v = 1 (interleaved 1F1B); all: every v Megatron-LM allows (each "
      "dividing the blocks per stage)")(
      "recompute", po::value<std::string>()->default_value("none,selective,full"),
      "recompute modes (--framework torchtitan: none,per-op,full)")(
      "sharding", po::value<std::string>()->default_value("none,optimizer,gradients,parameters"),
      "data-parallel sharding (gradients and parameters without a pipeline only)")(
      "shard-group", po::value<std::string>()->default_value("all"),
      "over how many devices a sharding divides, each tried: all (every data-parallel replica), "
      "node (the replicas within a node, replicated across nodes: HSDP), or a device count "
      "(--framework torchtitan: all,node)")(
      "expert-parallel", po::value<std::string>()->default_value("all"),
      "the moe strategy's expert-parallel sizes e, each tried: width (e = t), a count (with whole "
      "experts a multiple of t: its e/t data-parallel replicas join each expert group; with split "
      "ones e replicas), or all (width and every divisor of the model's experts; split: 1 and "
      "every divisor)")(
      "expert-tensor-parallel", po::value<std::string>()->default_value("1"),
      "the moe strategy's experts: 1 (each whole on its device, the expert groups over e "
      "devices), width (each split over the tensor-parallel width t, Megatron-LM's default "
      "--expert-tensor-parallel-size t: e counts data-parallel replicas, and all adds e = 1), or "
      "all (both)")(
      "context-parallel", po::value<std::string>()->default_value("1"),
      "context-parallel widths c > 1 composed over tensor parallelism: each over every "
      "tensor-parallel strategy swept (megatron, sequence_parallel) at every width k > 1 of "
      "--widths, planned at t = k·c (the plan's tp k, cp c); 1: none (context_parallel alone, "
      "tp 1, stays in --strategies)")(
      "strategies", po::value<std::string>()->default_value("all"),
      "parallelism strategies (phaze plugins); all: every one loaded — megatron, "
      "sequence_parallel, context_parallel, moe, then any other by name (--framework "
      "torchtitan: sequence_parallel,context_parallel)")(
      "precision", po::value<std::string>()->default_value("bf16"),
      "number formats: bf16, fp16, fp8 (a device with fp8_tensor_ratio)")(
      "recipe", po::value<std::string>(),
      "training recipe (share/recipes/) or file, over the run config (default: the run "
      "config's training.recipe, else the framework's — megatron-core-2024, torchtitan-2025 — "
      "before the config's own keys)")("hbm-gib", po::value<double>(),
                                       "HBM per device (default: the architecture's)")(
      "power-limit-w", po::value<std::string>(),
      "board power limits in W, each tried (default: the architecture's power_limit_w, else its "
      "TDP); below the TDP the tensor cores' clock falls (share/arch/README.md)")(
      "objective", po::value<std::string>(),
      "what plans are ranked by: throughput (fastest first), throughput_per_watt (most samples "
      "per joule of a device), throughput_per_cost (most samples per dollar: at a preset's fixed "
      "hourly_usd, the fastest); default: the run config's search.objective, throughput")(
      "framework", po::value<std::string>()->default_value("megatron-lm"),
      "whose plans: megatron-lm or torchtitan (its recipe, recompute modes and strategies by "
      "default, only the plans it runs, and its job-config keys printed)");
  AddKernelOptions(d);
  AddWeightFormatOptions(d);
}

namespace {

// From this many tokens a sample, plan suggests --context-parallel when it was not given.
constexpr std::int64_t kLongSequence = 16384;

// The recipes plans are launched with unless --recipe or the run config names one.
constexpr const char* kMegatronRecipe = "megatron-core-2024";
constexpr const char* kTorchTitanRecipe = "torchtitan-2025";

// `items` with each repeated one dropped after its first (a sweep lists every value once).
template <class T>
std::vector<T> FirstOfEach(const std::vector<T>& items) {
  std::vector<T> out;
  for (const T& x : items) {
    if (std::find(out.begin(), out.end(), x) == out.end()) out.push_back(x);
  }
  return out;
}

// The comma-separated words of a sweep's flag, each once.
std::vector<std::string> Words(const std::string& text) { return FirstOfEach(SplitCommas(text)); }

// The comma-separated numbers of --flag, each read whole by `read` (std::stoll, std::stod), else
// "--flag: expected comma-separated KIND, found '…'"; each value once.
template <class T, class Read>
std::vector<T> Numbers(const po::variables_map& vm, const std::string& flag, const char* kind,
                       Read read) {
  std::vector<T> out;
  for (const std::string& w : SplitCommas(vm[flag].as<std::string>())) {
    std::size_t used = 0;
    T v{};
    try {
      v = read(w, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (w.empty() || used != w.size()) {
      throw UsageError("--" + flag + ": expected comma-separated " + kind + ", found '" +
                       vm[flag].as<std::string>() + "'");
    }
    out.push_back(v);
  }
  return FirstOfEach(out);
}

std::vector<std::int64_t> Ints(const po::variables_map& vm, const std::string& flag,
                               std::int64_t hi) {
  std::vector<std::int64_t> out =
      Numbers<std::int64_t>(vm, flag, "integers", [](const std::string& w, std::size_t* used) {
        return static_cast<std::int64_t>(std::stoll(w, used));
      });
  for (std::int64_t& v : out) v = CheckRange("--" + flag, v, 1, hi);
  return out;
}

std::string Percent(double fraction) { return fmt::sprintf("%.1f%%", 100 * fraction); }

// --strategies all: every strategy the registry has, phaze's own first from the plainest (a tie
// between plans goes to the strategy listed first), then any other plugin's by name.
std::vector<std::string> EveryStrategy(const Registry& registry) {
  std::vector<std::string> names;
  for (const char* own : {"megatron", "sequence_parallel", "context_parallel", "moe"}) {
    if (registry.Has(ComponentKind::kParallelismStrategy, own)) names.emplace_back(own);
  }
  for (const std::string& name : registry.Names(ComponentKind::kParallelismStrategy)) {
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  }
  return names;
}

// --context-parallel's compositions: context parallelism c (each of `cps`, all > 1) over each
// tensor-parallel strategy of run.strategies (megatron, sequence_parallel, with their params) at
// each width k > 1 of training.tensor_parallel_widths, planned at t = k·c alone. Appends them to
// run.strategies and their t to the widths sliced; returns every strategy's planned widths (the
// others' the widths asked), for WidthRestrictedStrategy. UsageError when `cps` finds nothing to
// compose over.
std::vector<std::vector<std::int64_t>> ComposeContextParallel(
    const Registry& registry, const std::vector<std::int64_t>& cps,
    const std::vector<StrategyChoice>& configured, RunConfig& run) {
  const std::vector<std::int64_t> asked = run.training.tensor_parallel_widths;
  std::vector<std::vector<std::int64_t>> planned(run.strategies.size(), asked);
  if (cps.empty()) return planned;
  // A width t = k·c is planned where it divides the accelerators (a plan is t·p·d of them).
  const std::int64_t K = run.cluster.num_accelerators;
  auto fits = [&](std::int64_t k, std::int64_t c) {
    return k > 1 && k * c <= limits::kWidth && K % (k * c) == 0;
  };
  if (std::ranges::none_of(run.strategies, IsTensorParallelism)) {
    throw UsageError(
        "--context-parallel: context parallelism composes over tensor parallelism, megatron or "
        "sequence_parallel, and --strategies has neither");
  }
  for (std::int64_t c : cps) {
    if (std::ranges::none_of(asked, [&](std::int64_t k) { return fits(k, c); })) {
      std::string widths;
      for (std::int64_t k : asked) widths += (widths.empty() ? "" : ", ") + std::to_string(k);
      throw UsageError("--context-parallel " + std::to_string(c) +
                       ": no tensor-parallel width k > 1 of --widths (" + widths +
                       ") gives a width k·" + std::to_string(c) + " that divides the " +
                       std::to_string(K) + " accelerators");
    }
  }
  std::vector<StrategyChoice> composed;
  for (const StrategyChoice& s : run.strategies) {
    if (!IsTensorParallelism(s)) continue;
    for (std::int64_t k : asked) {
      std::vector<std::int64_t> totals;
      for (std::int64_t c : cps) {
        if (fits(k, c)) totals.push_back(k * c);
      }
      if (totals.empty()) continue;
      composed.push_back(WithContextParallel(registry, s, k, configured, "--context-parallel"));
      planned.push_back(totals);
      for (std::int64_t t : totals) {
        auto& widths = run.training.tensor_parallel_widths;
        if (std::find(widths.begin(), widths.end(), t) == widths.end()) widths.push_back(t);
      }
    }
  }
  run.strategies.insert(run.strategies.end(), composed.begin(), composed.end());
  return planned;
}

}  // namespace

int RunPlan(CommandContext& ctx) {
  for (const char* required : {"model", "arch", "accelerators"}) {
    if (!ctx.vm.count(required)) {
      throw UsageError(std::string("phaze plan: --") + required + " is required (phaze plan " +
                       "--help)");
    }
  }
  const std::string framework = ctx.vm["framework"].as<std::string>();
  if (framework != "megatron-lm" && framework != "torchtitan") {
    throw UsageError("--framework: expected megatron-lm or torchtitan, found '" + framework + "'");
  }
  const bool torchtitan = framework == "torchtitan";
  // A flag the user left at its default takes the framework's.
  const auto sweep = [&](const char* flag, const char* torchtitan_default) {
    return torchtitan && ctx.vm[flag].defaulted() ? std::string(torchtitan_default)
                                                  : ctx.vm[flag].as<std::string>();
  };
  const std::string recipe =
      ctx.vm.count("recipe") ? "" : (torchtitan ? kTorchTitanRecipe : kMegatronRecipe);
  RunConfig run = RunConfig::Defaults();
  if (!ctx.global.config.empty()) {
    run = RunConfig::ParseFile(ctx.global.config, false, recipe);
  } else if (!recipe.empty()) {
    ApplyTrainingRecipe(recipe, run.training);
  }
  RecipeFromFlags(ctx.vm, run);
  run.cluster.num_accelerators = IntOption(ctx.vm, "accelerators", 1, limits::kAccelerators);
  if (ctx.vm.count("global-batch")) {
    run.training.global_batch = IntOption(ctx.vm, "global-batch", 1, limits::kGlobalBatch);
  }
  const auto top = static_cast<std::size_t>(IntOption(ctx.vm, "top", 1, 1000));
  NetworkFromFlags(ctx.vm, run);
  run.training.tensor_parallel_widths = Ints(ctx.vm, "widths", limits::kWidth);
  run.training.micro_batches = Ints(ctx.vm, "micro-batches", limits::kMicroBatch);
  // "all": filled in per model below, once its blocks are known.
  const bool every_v = ctx.vm["virtual-stages"].as<std::string>() == "all";
  run.training.virtual_stages.clear();
  if (!every_v) run.training.virtual_stages = Ints(ctx.vm, "virtual-stages", limits::kWidth);
  for (std::int64_t v : run.training.virtual_stages) {
    if (v < 2) throw UsageError("--virtual-stages: each v is >= 2 (v = 1 is always tried)");
  }
  if (run.training.pipeline_schedule != PipelineSchedule::kGPipe) {
    run.training.pipeline_schedule = PipelineSchedule::k1F1B;  // v > 1 plans interleave
  }
  run.training.recompute.clear();
  for (const std::string& w : Words(sweep("recompute", "none,per-op,full"))) {
    const auto mode = ParseRecomputeMode(w);
    if (!mode)
      throw UsageError("--recompute: expected none, selective, per-op or full, found '" + w + "'");
    run.training.recompute.push_back(*mode);
  }
  run.training.sharding.clear();
  for (const std::string& w : Words(ctx.vm["sharding"].as<std::string>())) {
    run.training.sharding.push_back(ParseSharding("--sharding", w));
  }
  run.training.shard_groups = ParseShardGroups("--shard-group", sweep("shard-group", "all,node"));
  const std::vector<StrategyChoice> configured = std::move(run.strategies);
  run.strategies.clear();
  const std::string strategies = sweep("strategies", "sequence_parallel,context_parallel");
  for (const std::string& w :
       strategies == "all" ? EveryStrategy(ctx.registry) : Words(strategies)) {
    StrategyChoice& c =
        run.strategies.emplace_back(NamedStrategy(ctx.registry, "--strategies", w, configured));
    if (torchtitan && (c.component.name == "sequence_parallel" || c.component.name == "moe") &&
        !c.component.params) {
      // TorchTitan's tensor parallelism is DTensor's: it keeps the gathered input.
      c.component.params =
          ConfigNode::ParseString("gathered_input: keep", "phaze plan --framework torchtitan");
    }
  }
  // The moe strategy once per expert-parallel size (width: the plan's t), in place; all: the
  // width and every divisor of the model's experts above 1.
  const ModelEntry entry = ModelFromFlags(ctx.vm);
  const std::string ep_text = ctx.vm["expert-parallel"].as<std::string>();
  std::vector<std::int64_t> experts = {0};
  const bool moe = std::any_of(run.strategies.begin(), run.strategies.end(),
                               [](const StrategyChoice& c) { return c.component.name == "moe"; });
  auto need_moe = [&](const std::string& flag) {
    if (!moe) {
      throw UsageError(flag + ": expert parallelism is the moe strategy's, and --strategies lists "
                       "none (add moe)");
    }
  };
  std::optional<ModelSpec> spec;  // read once, when an expert flag needs it
  auto spec_of_model = [&]() -> const ModelSpec& {
    if (!spec) spec = ReadFlag("--model", [&] { return LoadModelSpec(entry); });
    return *spec;
  };
  if (ep_text != "all") {
    experts = ParseExpertParallel("--expert-parallel", ep_text);
    need_moe("--expert-parallel");
    CheckExpertParallel("--expert-parallel", experts, spec_of_model());
  } else if (moe) {
    const std::int64_t E = spec_of_model().experts;
    for (std::int64_t e = 2; e <= E; ++e) {
      if (E % e == 0) experts.push_back(e);
    }
    if (E == 0 && strategies == "all") {
      // On a dense model moe is sequence parallelism (its plugin), which "all" already ranks:
      // not evaluated twice.
      std::erase_if(run.strategies,
                    [](const StrategyChoice& c) { return c.component.name == "moe" && !c.over; });
    }
  }
  // Each size with whole experts and, on a model with experts, split ones (the slicer refuses
  // them at t = 1). With split experts e counts replicas: e = 1 (every expert on each device)
  // and the divisors, not the width. Whole experts by default: split ones double a mixture of
  // experts' plans, and on fine-grained ones (many experts a device) their layers' schedules cost
  // far more (README, `phaze plan`).
  const std::string etp_text = ctx.vm["expert-tensor-parallel"].as<std::string>();
  std::vector<bool> splits = ParseExpertTensorParallel("--expert-tensor-parallel", etp_text, true);
  if (!ctx.vm["expert-tensor-parallel"].defaulted() && etp_text != "all") {
    need_moe("--expert-tensor-parallel");
    CheckExpertTensorParallel("--expert-tensor-parallel", splits, spec_of_model());
  } else if (moe && spec_of_model().experts == 0) {
    splits = {false};  // a dense model has no experts to split
  }
  std::vector<StrategyChoice> swept;
  for (const StrategyChoice& c : run.strategies) {
    if (c.component.name != "moe" || c.over) {
      swept.push_back(c);
      continue;
    }
    for (const bool split : splits) {
      std::vector<std::int64_t> sizes = experts;
      if (split && ep_text == "all") sizes.front() = 1;  // for 0, the width: a divisor already
      for (std::int64_t e : sizes) {
        swept.push_back(WithExpertParallel(
            WithExpertTensorParallel(c, split, "--expert-tensor-parallel"), e, "--expert-parallel"));
      }
    }
  }
  run.strategies = std::move(swept);
  // --context-parallel: c > 1 composed over the tensor-parallel strategies
  // (ComposeContextParallel).
  std::vector<std::int64_t> cps;
  for (std::int64_t c : Ints(ctx.vm, "context-parallel", limits::kWidth)) {
    if (c > 1) cps.push_back(c);
  }
  const std::vector<std::vector<std::int64_t>> planned =
      ComposeContextParallel(ctx.registry, cps, configured, run);
  // The run's strategies, each sliced at its planned widths only.
  const auto plan_strategies = [&](const RunConfig& r) {
    std::vector<std::shared_ptr<const ParallelismStrategy>> out =
        CreateRunStrategies(ctx.registry, r.strategies);
    for (std::size_t i = 0; !cps.empty() && i < out.size(); ++i) {
      out[i] = std::make_shared<WidthRestrictedStrategy>(
          out[i], planned[i],
          r.strategies[i].over ? "--context-parallel composes it at t = tp·cp"
                               : "--widths does not list it");
    }
    return out;
  };
  KernelsFromFlags(ctx.vm, run);
  if (ctx.vm.count("objective")) {
    const std::string word = ctx.vm["objective"].as<std::string>();
    bool known = false;
    for (SearchObjective o : {SearchObjective::kThroughput, SearchObjective::kThroughputPerWatt,
                              SearchObjective::kThroughputPerCost}) {
      if (ToString(o) == word) {
        run.search.objective = o;
        known = true;
      }
    }
    if (!known) {
      throw UsageError(
          "--objective: expected throughput, throughput_per_watt or "
          "throughput_per_cost, found '" +
          word + "'");
    }
  }
  const ArchConfig arch = DeviceFromFlags(ctx.vm, run);
  // One device per --power-limit-w, each ranked, the rankings merged.
  std::vector<ArchConfig> devices;
  if (ctx.vm.count("power-limit-w")) {
    for (double watts : Numbers<double>(
             ctx.vm, "power-limit-w", "watts",
             [](const std::string&w, std::size_t*used) { return std::stod(w, used); })) {
      const ArchConfig device = WithPowerLimit(arch, watts);
      if (std::ranges::none_of(devices, [&](const ArchConfig& d) {
            return d.power_limit_w == device.power_limit_w;
          })) {
        devices.push_back(device);  // a limit listed twice is tried once
      }
    }
  } else {
    devices.push_back(arch);
  }
  run.CheckComponents(ctx.registry, true, true, true);

  std::vector<Precision> precisions;
  for (const std::string& w : Words(ctx.vm["precision"].as<std::string>())) {
    precisions.push_back(ParsePrecision("--precision", w));
    CheckPrecisionOnDevice("--precision", precisions.back(), arch);
  }
  RefuseFp8FlagsWithoutFp8(
      ctx.vm, std::find(precisions.begin(), precisions.end(), Precision::kFp8) != precisions.end(),
      ctx.vm["precision"].as<std::string>());

  // One ranking per number format (each its own slices) and device, merged best first.
  std::vector<RunConfig> runs;          // per precision
  std::vector<PreparedModel> models;    // per precision
  std::vector<std::size_t> format_of;   // per ranked plan: its index in runs/models
  std::vector<std::size_t> device_of;   // per ranked plan: its index in devices
  PlanRanking ranking;
  for (Precision precision : precisions) {
    RunConfig& rp = runs.emplace_back(run);
    rp.training.precision = precision;
    const PreparedModel& m = models.emplace_back(ReadFlag("--model", [&] {
      return PrepareModel(entry, rp, plan_strategies(rp), /*require_slices=*/false);
    }));
    if (every_v && !m.slices.empty()) {  // v divides the blocks per stage, so the blocks
      const int blocks = PipelineUnits(m.slices.front().graph);
      for (int v = 2; v <= blocks; ++v) {
        if (blocks % v == 0) rp.training.virtual_stages.push_back(v);
      }
    }
    const ModelEvaluator evaluator(
        rp, ctx.registry.CreateEstimator(rp.estimator.name, rp.estimator.Params()),
        ctx.registry.CreateSolverBackend(rp.solver.backend.name, rp.solver.backend.Params()));
    for (std::size_t dev = 0; dev < devices.size(); ++dev) {
      // --framework torchtitan ranks only the plans TorchTitan can run as phaze prices them.
      LaunchRefusal refuse;
      if (torchtitan && !m.slices.empty()) {
        refuse = [&, experts = m.slices.front().graph.HasExperts()](const PlanRequest& r) {
          const std::string why =
              TorchTitanArgs(r, rp, PlanPipelineSplit(m.slices.front().graph, r), m.sequence_length,
                             experts)
                  .why;
          return why.empty() ? why : "not for TorchTitan (" + why.substr(0, why.find(':')) + "):";
        };
      }
      PlanRanking part = ReadFlag(
          "--arch", [&] { return RankPlans(evaluator, m, devices[dev], rp, top, refuse); });
      ranking.evaluated += part.evaluated;
      ranking.feasible += part.feasible;
      if (ranking.none_launchable.empty()) ranking.none_launchable = part.none_launchable;
      for (const auto& [kind, count] : part.refused) ranking.refused[kind] += count;
      ranking.alike += part.alike;
      if (part.smallest_over_hbm_bytes > 0 &&
          (ranking.smallest_over_hbm_bytes == 0 ||
           part.smallest_over_hbm_bytes < ranking.smallest_over_hbm_bytes)) {
        ranking.smallest_over_hbm_bytes = part.smallest_over_hbm_bytes;
      }
      for (RankedPlan& p : part.plans) {
        ranking.plans.push_back(std::move(p));
        format_of.push_back(runs.size() - 1);
        device_of.push_back(dev);
      }
    }
  }
  {  // best first across the formats and devices (stable: ties keep the listed order)
    std::vector<std::size_t> order(ranking.plans.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      return RankKey(ranking.plans[a], run) < RankKey(ranking.plans[b], run);
    });
    if (order.size() > top) order.resize(top);
    std::vector<RankedPlan> plans;
    std::vector<std::size_t> formats, plan_devices;
    for (std::size_t i : order) {
      plans.push_back(ranking.plans[i]);
      formats.push_back(format_of[i]);
      plan_devices.push_back(device_of[i]);
    }
    ranking.plans = std::move(plans);
    format_of = std::move(formats);
    device_of = std::move(plan_devices);
  }
  const PreparedModel& model = models.front();
  const ValidationResiduals residuals = ValidationResiduals::Installed();
  const std::int64_t K = run.cluster.num_accelerators;
  const std::int64_t node = run.cluster.network.Levels().front().size > 0
                                ? run.cluster.network.Levels().front().size
                                : K;

  Json j = Json::MakeObject();
  j["model"] = model.name;
  j["arch"] = arch.name;
  if (devices.size() == 1) {
    j["device"] = DevicePowerJson(devices.front());
  } else {  // each plan's `device` says the limit it runs at
    j["device"]["name"] = arch.name;
    j["device"]["tdp_w"] = arch.tdp_w;
    Json limits = Json::MakeArray();
    for (const ArchConfig& d : devices) limits.Push(d.power_limit_w);
    j["power_limits_w"] = limits;
  }
  j["objective"] = std::string(ToString(run.search.objective));
  j["framework"] = framework;
  // The strategies searched, with the run config's params (e.g. sequence_parallel's
  // gathered_input).
  Json searched = Json::MakeArray();
  for (const StrategyChoice& c : run.strategies) searched.Push(c.ToJson());
  j["strategies"] = searched;
  j["estimator"] = run.estimator.name;
  j["accelerators"] = K;
  j["global_batch"] = run.training.global_batch;
  j["sequence_length"] = model.sequence_length;
  j["recipe"] = run.training.recipe;
  j["attention"] = std::string(ToString(run.training.attention));
  j["loss"] = std::string(ToString(run.training.loss));
  j["fp8_recipe"] = std::string(ToString(run.training.fp8_recipe));
  j["fp8_param_gather"] = run.training.fp8_param_gather;
  j["fp8_param_storage"] = std::string(ToString(run.training.fp8_param_storage));
  j["bubble"] = std::string(ToString(run.training.bubble));
  j["pipeline_sends"] = std::string(ToString(run.training.pipeline_sends));
  j["gradient_reduction_overlap"] = run.training.gradient_reduction_overlap;
  j["tensor_parallel_overlap"] = run.training.tensor_parallel_overlap;
  j["cluster"]["levels"] = run.cluster.network.ToJson();
  if (!run.cluster.network.Name().empty()) j["cluster"]["system"] = run.cluster.network.Name();
  j["evaluated"] = static_cast<std::int64_t>(ranking.evaluated);
  j["feasible"] = static_cast<std::int64_t>(ranking.feasible);
  j["alike"] = static_cast<std::int64_t>(ranking.alike);  // feasible, not listed again
  if (ranking.smallest_over_hbm_bytes > 0) {
    j["smallest_over_hbm_bytes"] = ranking.smallest_over_hbm_bytes;
  }
  Json refused = Json::MakeObject();
  for (const auto& [kind, count] : ranking.refused) refused[kind] = static_cast<std::int64_t>(count);
  j["refused"] = refused;
  j["error_bands_from"] = residuals.Source();
  Json plans = Json::MakeArray();
  std::ostringstream table, commands;
  std::string tight;  // the ranks of the plans within 10% of the HBM
  table
      << "| # | t | p | d | v | tp | cp | ep | micro-batch | recompute | sharding | precision | "
         "strategy | step (s) | tokens/s | MFU | peak GiB | limit W | power W | J/token | "
         "error band |\n"
      << "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  int rank = 0;
  for (const RankedPlan& ranked : ranking.plans) {
    const RunConfig& rp = runs[format_of[static_cast<std::size_t>(rank)]];
    const PreparedModel& mp = models[format_of[static_cast<std::size_t>(rank)]];
    const ArchConfig& device = devices[device_of[static_cast<std::size_t>(rank)]];
    ++rank;
    const PlanRequest& r = ranked.request;
    const PlanChoice& c = ranked.choice;
    const PreparedModel::Slice* slice = mp.FindSlice(r.micro_batch, r.tensor_parallel, r.strategy);
    const bool experts = slice->graph.HasExperts();
    const PipelineSplit split = PlanPipelineSplit(slice->graph, r);
    const MegatronLaunch launch = MegatronArgs(r, rp, split, mp.sequence_length, experts);
    const TorchTitanLaunch titan = TorchTitanArgs(r, rp, split, mp.sequence_length, experts);
    const MegatronWidths widths = launch.widths.value_or(MegatronWidths{});
    // The framework's own: its widths in the table and its arguments printed.
    std::vector<std::string> args = torchtitan ? titan.Args() : launch.args;
    if (!torchtitan && !args.empty())
      args.insert(args.begin(), launch.env.begin(), launch.env.end());
    const std::string why = torchtitan ? titan.why : launch.why;
    const bool launchable = !args.empty();
    // The plan's context-parallel width, of its t (context_parallel alone: all of it).
    const StrategyChoice& chosen = rp.strategies.at(static_cast<std::size_t>(r.strategy));
    const std::int64_t cp = chosen.component.name == "context_parallel"
                                ? r.tensor_parallel / (chosen.over ? chosen.over->width : 1)
                                : 1;
    const ValidationResiduals::Band band =
        residuals.For(r.tensor_parallel, r.pipeline_stages, K, node, arch.name, cp);
    const double peak = c.plan.PeakMemoryBytes();

    Json pj = Json::MakeObject();
    pj["rank"] = rank;
    pj["t"] = r.tensor_parallel;
    pj["p"] = r.pipeline_stages;
    pj["d"] = r.data_parallel;
    pj["v"] = r.virtual_stages;
    pj["micro_batch"] = r.micro_batch;
    pj["recompute"] = std::string(ToString(r.recompute));
    pj["sharding"] = std::string(ToString(r.sharding));
    if (r.sharding != Sharding::kNone) {
      pj["shard_group"] = ShardGroupText(r.shard_group);
      pj["shard_replicas"] = c.shard_replicas;  // h of d (HSDP when fewer)
    }
    pj["precision"] = std::string(ToString(c.precision));
    pj["strategy"] = c.strategy;
    pj["device"] = DevicePowerJson(device);
    pj["time_per_batch_s"] = c.plan.time_per_batch_s;
    pj["hbm_share"] = peak / static_cast<double>(arch.hbm_bytes);  // of the device's HBM
    if (peak > kTightHbmShare * static_cast<double>(arch.hbm_bytes)) {
      tight += (tight.empty() ? "" : ", ") + std::to_string(rank);
    }
    Json bj = Json::MakeObject();
    bj["runs"] = static_cast<std::int64_t>(band.runs);
    bj["shape"] = band.shape;
    bj["mean_abs_error"] = band.mean_abs;
    bj["p90_abs_error"] = band.p90_abs;
    bj["max_abs_error"] = band.max_abs;
    pj["error_band"] = bj;
    PutLaunches(pj, launch, titan);
    pj["result"] = PlanChoiceToJson(c);
    plans.Push(pj);

    const std::string band_text =
        band.runs > 0 ? fmt::sprintf("±%s (%zu runs: %s)", Percent(band.mean_abs).c_str(),
                                     band.runs, band.shape.c_str())
                      : std::string("—");
    const double limit = device.power_limit_w > 0 ? device.power_limit_w : device.tdp_w;
    table << fmt::sprintf(
        "| %d | %d | %d | %d | %d | %s | %s | %s | %lld | %s | %s | %s | %s | "
        "%.4g | %.4g | %.1f%% | %.2f | %s | %.0f | %.3g | %s |\n",
        rank, r.tensor_parallel, r.pipeline_stages, r.data_parallel, r.virtual_stages,
        !launchable ? "—" : std::to_string(torchtitan ? titan.tensor : widths.tensor),
        !launchable ? "—" : std::to_string(torchtitan ? titan.context : widths.context),
        !launchable   ? "—"
        : torchtitan  ? std::to_string(titan.expert)
        : widths.expert_tensor > 1
            ? std::to_string(widths.expert) + ", etp " + std::to_string(widths.expert_tensor)
            : std::to_string(widths.expert),
        static_cast<long long>(r.micro_batch), ToString(r.recompute).data(),
        ShardingText(r.sharding, c.shard_replicas, r.data_parallel).c_str(),
        ToString(c.precision).data(), c.strategy.c_str(), c.plan.time_per_batch_s, c.tokens_per_s,
        100 * c.mfu, peak / 1073741824.0, limit > 0 ? fmt::sprintf("%g", limit) : std::string("—"),
        c.power_w, c.energy_per_token_j, band_text.c_str());
    commands << rank << ": ";
    if (device.power_limit_w > 0 && device.power_limit_w < device.tdp_w) {
      commands << "[nvidia-smi --power-limit " << FormatNumber("%g", device.power_limit_w) << "] ";
    }
    if (args.empty()) {
      commands << "(" << why << ")";
    } else {
      for (std::size_t k = 0; k < args.size(); ++k) commands << (k ? " " : "") << args[k];
    }
    commands << "\n";
  }
  j["plans"] = plans;
  if (!ctx.global.output.empty()) WriteTextFileAtomic(ctx.global.output, j.Dump() + "\n");

  auto& o = ctx.out;
  o << "# " << model.name << " on " << K << " × " << arch.name << " ("
    << (run.cluster.network.Name().empty()
            ? std::to_string(run.cluster.network.Levels().size()) + "-level network"
            : run.cluster.network.Name())
    << ", estimator " << run.estimator.name
    << (devices.size() == 1 ? PowerLimitText(devices.front()) : [&] {
         std::string limits;
         for (const ArchConfig& d : devices) {
           limits += (limits.empty() ? "" : ", ") + FormatNumber("%g", d.power_limit_w);
         }
         return ", power limits " + limits + " W of its " + FormatNumber("%g", arch.tdp_w) +
                " W TDP";
       }())
    << "), global batch " << run.training.global_batch << " × " << model.sequence_length
    << " tokens"
    << (entry.sequence_length > 0 ? "" : " (the model's sequence; --sequence-length to change)")
    << "\n\nRecipe " << (run.training.recipe.empty() ? "phaze's defaults" : run.training.recipe)
    << ": " << ToString(run.training.attention) << " attention, the data-parallel reduction "
    << (run.training.gradient_reduction_overlap > 0
            ? "overlapped with the first stage's last backward, " +
                  Percent(run.training.gradient_reduction_overlap) + " of it usable"
            : std::string("after backward"))
    << (run.training.tensor_parallel_overlap > 0
            ? ", the sequence-parallel all-gathers and reduce-scatters chunked beside the GEMMs (" +
                  Percent(ChunkedCollectiveShare(run.training.tensor_parallel_overlap,
                                                 arch.collective_overlap)) +
                  " of each hidden)"
            : std::string())
    << (std::find(precisions.begin(), precisions.end(), Precision::kFp8) != precisions.end()
            ? ", FP8 with " + std::string(ToString(run.training.fp8_recipe)) + " scaling"
            : std::string())
    << " (share/recipes/).\n\n"
    << ranking.evaluated << " plans evaluated, " << ranking.feasible << " fit";
  if (run.search.objective != SearchObjective::kThroughput) {
    o << " (ranked by " << ObjectiveUnit(run.search.objective) << ")";
  }
  if (ranking.alike > 0) {
    o << " (" << ranking.alike
      << " of them the same in effect as another that fits: each listed once)";
  }
  for (const auto& [kind, count] : ranking.refused) o << "; " << count << " " << kind;
  o << ".\n\n";
  if (const std::string flat = FlatNetworkNote(ctx.vm, run.cluster.network, K); !flat.empty()) {
    o << "Note: " << flat << ".\n\n";
  }
  if (ranking.plans.empty()) {
    if (ranking.evaluated == 0 && !ranking.none_launchable.empty()) {
      ctx.err << ranking.none_launchable << "\n";
    } else {
      ctx.err << "no plan fits: " << ranking.evaluated << " evaluated";
      if (ranking.smallest_over_hbm_bytes > 0) {
        ctx.err << "; the smallest needs "
                << fmt::sprintf("%.2f", ranking.smallest_over_hbm_bytes / (1024.0 * 1024 * 1024))
                << " GiB per device, of " << fmt::sprintf("%.2f", arch.HbmGiB())
                << " GiB HBM (--hbm-gib, more accelerators or a smaller micro-batch)";
      }
      ctx.err << "\n";
    }
    return static_cast<int>(ExitCode::kNoFeasibleResult);
  }
  o << table.str() << "\nError bands: mean |error| of phaze's predicted step time on measured "
    << "runs of the plan's shape ("
    << (residuals.Source().empty() ? "none found" : residuals.Source()) << ").\n";
  if (!tight.empty()) {
    const bool one = tight.find(',') == std::string::npos;
    o << (one ? "\nPlan " : "\nPlans ") << tight << (one ? " uses" : " use")
      << " more than 90% of the " << fmt::sprintf("%.2f", arch.HbmGiB())
      << " GiB HBM: " << kAllocatorNote << "; --hbm-gib "
      << fmt::sprintf("%.0f", kTightHbmShare * arch.HbmGiB())
      << " ranks only plans that leave 10% free.\n";
  }
  if (cps.empty() && model.sequence_length >= kLongSequence &&
      std::ranges::any_of(run.strategies, [](const StrategyChoice& c) {
        return c.component.name == "context_parallel";
      })) {  // context parallelism was ranked at tp 1 only
    o << "\nA long sequence (" << model.sequence_length
      << " tokens): --context-parallel 2,4,8 also ranks context parallelism over tensor "
         "parallelism (tp k × cp c at t = k·c, k of --widths), as long sequences train.\n";
  }
  o << (torchtitan ? "\nTorchTitan v0.2.2 arguments, over the model's train config "
                     "(CONFIG_FILE=… ./run_train.sh ARGS; plan.json's torchtitan_toml has them as "
                     "TOML):\n\n"
                   : "\nMegatron-LM arguments (d = world size / (tp·p·cp)):\n\n")
    << commands.str();
  return 0;
}

}  // namespace phaze::cli
