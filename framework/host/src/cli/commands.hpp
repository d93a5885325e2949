// Internal: the option sets and entry points of the `phaze` subcommands, one .cpp per command.
#pragma once

#include <boost/program_options/errors.hpp>
#include <boost/program_options/options_description.hpp>
#include <boost/program_options/variables_map.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "phaze/arch/arch_config.hpp"
#include "phaze/cli/command_context.hpp"
#include "phaze/core/error.hpp"
#include "phaze/graph/graph_builder.hpp"
#include "phaze/search/megatron_args.hpp"
#include "phaze/search/run_config.hpp"
#include "phaze/search/torchtitan_args.hpp"

namespace phaze::cli {

inline void NoOptions(boost::program_options::options_description&) {}

// A layer-graph file is already built: each of `options` given (not defaulted) is a UsageError
// "--OPTION applies to model descriptions; a graph file is already built" (graph, schedule).
void RefuseModelOptionsOnGraphFile(const boost::program_options::variables_map& vm,
                                   std::initializer_list<const char*> options);

// `name`, given by `flag`, when the registry has a component of `kind` so named; else a
// UsageError "FLAG: no … named 'x'; registered: …" (not a run config's "<defaults>" path).
std::string RegisteredName(const Registry& registry, ComponentKind kind, const std::string& flag,
                           const std::string& name);

// error_hints.cpp. When `message` says a file has an unknown key at its top and the file reads
// as another kind of phaze file than the one expected (a recipe given as --model, a system as
// --arch), "FILE looks like a training recipe (share/recipes/): give it with --recipe, …"; else
// "".
std::string OtherFileKindHint(const std::string& message);
// Boost's "the argument ('1k8') for option '--accelerators' is invalid" as "--accelerators:
// expected an integer, found '1k8'" for an integer or number option of `options`; else Boost's.
std::string InvalidValueMessage(const boost::program_options::invalid_option_value& e,
                                const boost::program_options::options_description& options);

// Throws UsageError "--flag: expected an integer in [lo, hi], found v" unless lo <= v <= hi (hi:
// phaze's limit for the quantity, phaze/core/limits.hpp).
std::int64_t CheckRange(const std::string& flag, std::int64_t v, std::int64_t lo, std::int64_t hi);
// The integer option `name` of vm, checked by CheckRange.
std::int64_t IntOption(const boost::program_options::variables_map& vm, const std::string& name,
                       std::int64_t lo, std::int64_t hi);

// A file a flag names is read with the flag's name on any error (a missing preset, a bad key in
// the file: "--arch: FILE:L:C: …"), so the message says which argument to fix.
template <class Read>
auto ReadFlag(const std::string& flag, Read read) {
  try {
    return read();
  } catch (const ConfigError& e) {
    throw UsageError(flag + ": " + e.what());
  }
}

// predict's and plan's device (device_flags.cpp): --arch, a preset or file, whose estimator the
// run uses unless its config names one; with --hbm-gib, the same device with that much HBM.
ArchConfig DeviceFromFlags(const boost::program_options::variables_map& vm, RunConfig& run);
// The device at another board power limit (--power-limit-w: predict's one, each of plan's), or a
// UsageError saying why it cannot run at it.
ArchConfig WithPowerLimit(ArchConfig arch, double watts);
// ", 500 W of its 700 W TDP" for a device run below its TDP (--power-limit-w, power_limit_w), else
// "": for the headers of predict and plan.
std::string PowerLimitText(const ArchConfig& arch);
// The device as predict.json and plan.json record it: its name and, where the preset states its
// TDP, the board power limit it ran at (the TDP without one) and its tensor cores' clock relative
// to the calibration's (DeviceModel::PowerLimitClockScale).
Json DevicePowerJson(const ArchConfig& arch);
// What launches a plan, as plan.json's plans and predict.json record it: `megatron` (the widths
// Megatron-LM gives t), `megatron_args` and `megatron_env` (the environment it needs), `torchtitan`
// (its tp and cp) with `torchtitan_args` and `torchtitan_toml`; a framework that cannot run the
// plan as phaze prices it gets null arguments and a `…_args_note` saying why
// (search/megatron_args.hpp, search/torchtitan_args.hpp).
void PutLaunches(Json& j, const MegatronLaunch& megatron, const TorchTitanLaunch& torchtitan);
// --model and --sequence-length: the workload file (a description, a Hugging Face config.json or
// a graph file) and the tokens per sample it is planned at (default: the model's own — for a
// Hugging Face config, its max_position_embeddings).
ModelEntry ModelFromFlags(const boost::program_options::variables_map& vm);
// A strategy named on the command line (--strategy, --strategies, --sequence-parallel), else
// UsageError naming `flag` and the registered strategies; with the `params:` of the run config's
// choice of that name (`configured`, one not composed `over` another), if it has one — so a
// config's `sequence_parallel` with `gathered_input: keep` stays so when a flag picks it.
StrategyChoice NamedStrategy(const Registry& registry, const std::string& flag,
                             const std::string& name,
                             const std::vector<StrategyChoice>& configured = {});
// `strategy` (the moe strategy, else UsageError naming `flag`) with its expert_parallel param set
// to e (0: removed, the width), over its other params.
StrategyChoice WithExpertParallel(StrategyChoice strategy, std::int64_t e, const std::string& flag);
// The same with its experts split over the width (expert_tensor_parallel: width) or whole (the
// param removed: 1).
StrategyChoice WithExpertTensorParallel(StrategyChoice strategy, bool split,
                                        const std::string& flag);
// --expert-tensor-parallel's `text`: 1 {false}, width {true}, and with `all` allowed all
// {false, true}; with the plan's tensor-parallel `width` t known (predict, graph), the integer t
// is width, as Megatron-LM's --expert-tensor-parallel-size t reads; else UsageError naming `flag`
// (other sizes are not modelled).
std::vector<bool> ParseExpertTensorParallel(const std::string& flag, const std::string& text,
                                            bool all, std::int64_t width = 0);
// UsageError naming `flag` when `splits` splits the experts of a model without any.
void CheckExpertTensorParallel(const std::string& flag, const std::vector<bool>& splits,
                               const ModelSpec& model);
// Whether `strategy` is tensor parallelism context parallelism composes over: megatron or
// sequence_parallel, not itself composed.
bool IsTensorParallelism(const StrategyChoice& strategy);
// Context parallelism over `strategy` at tensor-parallel width k (Megatron-LM's
// --context-parallel-size over --tensor-model-parallel-size k): {context_parallel with the run
// config's params (`configured`), over: {strategy, k}}, a width t of it being k·(t/k) devices
// (k = 1: context_parallel alone).
// UsageError naming `flag` unless IsTensorParallelism(strategy).
StrategyChoice WithContextParallel(const Registry& registry, const StrategyChoice& strategy,
                                   std::int64_t k, const std::vector<StrategyChoice>& configured,
                                   const std::string& flag);
// The expert-parallel widths of `text`: comma-separated "width" (0: the strategy's width) and
// counts from 1, each once, else UsageError naming `flag`.
std::vector<std::int64_t> ParseExpertParallel(const std::string& flag, const std::string& text);
// UsageError naming `flag` unless every size of `sizes` (ParseExpertParallel's; 0, the width,
// always passes) can place `model`'s experts: a model without experts has none to place, and a
// size must divide its experts (each device keeps E/e whole ones).
void CheckExpertParallel(const std::string& flag, const std::vector<std::int64_t>& sizes,
                         const ModelSpec& model);
// A plan whose peak memory is above this share of the HBM is named as tight (predict, plan):
// phaze counts the live tensors, and the caching allocator reserves more (kAllocatorNote).
constexpr double kTightHbmShare = 0.9;
constexpr const char* kAllocatorNote =
    "PyTorch's caching allocator reserves more than the live tensors phaze counts (phaze's peaks "
    "are 3–8% below TorchTitan's measured ones, 30% for a 70B run with full checkpointing, "
    "share/validation/h100.md)";
// --system: the run's network from share/systems/ or a file.
void NetworkFromFlags(const boost::program_options::variables_map& vm, RunConfig& run);
// UsageError naming `flag` when `precision` is fp8 and `arch` has no FP8 tensor rate
// (ArchConfig::fp8_tensor_ratio 0: an A100, a TPU v4), before any plan is costed.
void CheckPrecisionOnDevice(const std::string& flag, Precision precision, const ArchConfig& arch);
// What a plan on `devices` > 1 of a flat network (the paper's one link, the default without
// --system) leaves out, as a note for predict and plan; empty with --system or a levelled one.
std::string FlatNetworkNote(const boost::program_options::variables_map& vm, const Network& network,
                            std::int64_t devices);
// --recipe: a training recipe (share/recipes/, a name or file) applied over the run config's
// training; the other flags then override it.
void RecipeFromFlags(const boost::program_options::variables_map& vm, RunConfig& run);
// none | optimizer | gradients | parameters, else UsageError naming `flag`.
Sharding ParseSharding(const std::string& flag, const std::string& word);
// The shard groups of a comma-separated `text` (all, node, device counts; RunConfig's
// shard_groups), each once, else a UsageError naming `flag`.
std::vector<std::int64_t> ParseShardGroups(const std::string& flag, const std::string& text);
// "optimizer", or "optimizer (8 of 64)" when the sharding divides over h of the d replicas.
std::string ShardingText(Sharding sharding, std::int64_t h, std::int64_t d);
// bf16 | fp16 | fp8, else UsageError naming `flag`.
Precision ParsePrecision(const std::string& flag, const std::string& word);
// unfused | flash | fused, else UsageError naming `flag`.
AttentionKernel ParseAttention(const std::string& flag, const std::string& word);
// adam-mixed | adam-bf16-moments | sgd, else UsageError naming `flag`.
OptimizerKind ParseOptimizer(const std::string& flag, const std::string& word);
// --attention and --loss (predict, plan, schedule): how the attention and the loss run, over the
// run config's training (and its recipe).
void AddKernelOptions(boost::program_options::options_description& d);
// --fp8-param-gather, --fp8-param-storage and --optimizer (predict, plan): how the weights and
// the optimizer state are kept, read by KernelsFromFlags.
void AddWeightFormatOptions(boost::program_options::options_description& d);
// --attention, --loss, --fp8-recipe and, where the command defines it, --fp8-param-gather.
void KernelsFromFlags(const boost::program_options::variables_map& vm, RunConfig& run);
// --fp8-recipe, --fp8-param-gather or --fp8-param-storage given where nothing runs in FP8 (`fp8`
// false; `precision` says what runs): a UsageError, as ignoring them would mislead.
void RefuseFp8FlagsWithoutFp8(const boost::program_options::variables_map& vm, bool fp8,
                              const std::string& precision);

void AddSearchOptions(boost::program_options::options_description& d);
int RunSearch(CommandContext& ctx);

void AddPredictOptions(boost::program_options::options_description& d);
int RunPredict(CommandContext& ctx);

void AddPlanOptions(boost::program_options::options_description& d);
int RunPlan(CommandContext& ctx);

void AddPlaceOptions(boost::program_options::options_description& d);
int RunPlace(CommandContext& ctx);

void AddGraphOptions(boost::program_options::options_description& d);
// --micro-batch, --sequence-length and, where the command has them, --no-fusion and --optimizer,
// checked (UsageError on bad values).
GraphOptions ReadGraphOptions(const boost::program_options::variables_map& vm);
int RunGraph(CommandContext& ctx);

void AddArchOptions(boost::program_options::options_description& d);
int RunArch(CommandContext& ctx);

void AddEstimateOptions(boost::program_options::options_description& d);
int RunEstimate(CommandContext& ctx);

void AddScheduleOptions(boost::program_options::options_description& d);
int RunSchedule(CommandContext& ctx);

void AddPluginsOptions(boost::program_options::options_description& d);
int RunPlugins(CommandContext& ctx);

}  // namespace phaze::cli
