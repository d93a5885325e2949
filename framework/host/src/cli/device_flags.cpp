// The flags `phaze predict` and `phaze plan` share: the device, its HBM, the network, the recipe,
// sharding.
#include <algorithm>

#include "commands.hpp"
#include "phaze/core/limits.hpp"
#include "phaze/core/text_format.hpp"
#include "phaze/estimate/device_model.hpp"
#include "phaze/search/training_recipe.hpp"

namespace phaze::cli {

ArchConfig DeviceFromFlags(const boost::program_options::variables_map& vm, RunConfig& run) {
  ArchConfig arch =
      ReadFlag("--arch", [&] { return LoadArchConfig(vm["arch"].as<std::string>()); });
  // A fixed device's preset names the estimator it is calibrated for (the device model for the
  // A100 and H100 presets); a run config that names an estimator keeps its own.
  if (!run.estimator.name_node && !arch.estimator.empty()) {
    run.estimator.name = arch.estimator;
  }
  // The plan's HBM is the device's: --hbm-gib makes a device with that much of it.
  if (vm.count("hbm-gib")) {
    const double gib = vm["hbm-gib"].as<double>();
    if (!(gib * 1073741824.0 >= 1) ||
        !(gib <= static_cast<double>(limits::kMemoryBytes) / 1073741824.0)) {
      throw UsageError("--hbm-gib: expected a size of at least 1 byte and at most " +
                       std::to_string(limits::kMemoryBytes >> 30) + " GiB (2^50 bytes)");
    }
    arch = arch.WithHbmGiB(gib);
  }
  return arch;
}

ArchConfig WithPowerLimit(ArchConfig arch, double watts) {
  // Another board power limit (DeviceModel::PowerLimitClockScale). Its rules are the architecture
  // file's (ArchConfig::Validate: the preset must say the TDP its calibration was measured at,
  // and the limit may not exceed it) and the device model's (the limit must leave something above
  // the static power).
  if (!(watts > 0) || !(watts <= 1e6)) {
    throw UsageError("--power-limit-w: expected watts in (0, 1e6], found " +
                     FormatNumber("%g", watts));
  }
  arch.power_limit_w = watts;
  try {
    if (const std::string why = arch.Validate(); !why.empty()) throw Error(why);
    DeviceModel::PowerLimitClockScale(arch);
  } catch (const Error& e) {
    std::string why = e.what();  // the device model's own reason names the architecture too
    const std::string named = "architecture '" + arch.name + "': ";
    if (why.rfind(named, 0) == 0) why.erase(0, named.size());
    throw UsageError(
        "--power-limit-w " + FormatNumber("%g", watts) + " on architecture '" + arch.name + "'" +
        (arch.tdp_w > 0 ? " (TDP " + FormatNumber("%g", arch.tdp_w) + " W)" : "") + ": " + why);
  }
  return arch;
}

Json DevicePowerJson(const ArchConfig& arch) {
  Json j = Json::MakeObject();
  j["name"] = arch.name;
  if (arch.tdp_w > 0) {
    j["tdp_w"] = arch.tdp_w;
    j["power_limit_w"] = arch.power_limit_w > 0 ? arch.power_limit_w : arch.tdp_w;
    j["tensor_clock_scale"] = DeviceModel::PowerLimitClockScale(arch);
  }
  return j;
}

std::string PowerLimitText(const ArchConfig& arch) {
  if (!(arch.power_limit_w > 0) || !(arch.power_limit_w < arch.tdp_w)) return "";
  return ", " + FormatNumber("%g", arch.power_limit_w) + " W of its " +
         FormatNumber("%g", arch.tdp_w) + " W TDP";
}

ModelEntry ModelFromFlags(const boost::program_options::variables_map& vm) {
  ModelEntry entry;
  entry.file = entry.resolved = vm["model"].as<std::string>();
  if (vm.count("sequence-length")) {
    entry.sequence_length = IntOption(vm, "sequence-length", 1, limits::kSequence);
  }
  return entry;
}

StrategyChoice NamedStrategy(const Registry& registry, const std::string& flag,
                             const std::string& name,
                             const std::vector<StrategyChoice>& configured) {
  if (!registry.Has(ComponentKind::kParallelismStrategy, name)) {
    throw UsageError(flag + ": " +
                     registry.UnknownNameMessage(ComponentKind::kParallelismStrategy, name));
  }
  for (const StrategyChoice& c : configured) {
    if (c.component.name == name && !c.over) return c;  // with the run config's params
  }
  return StrategyChoice::Named(name);
}

namespace {

// The moe strategy `strategy` with its param `key` set to `value` (null: removed) over its other
// params; UsageError naming `flag` for another strategy.
StrategyChoice WithMoeParam(StrategyChoice strategy, const std::string& key, const Json* value,
                            const std::string& flag) {
  if (strategy.component.name != "moe" || strategy.over) {
    throw UsageError(flag + ": expert parallelism is the moe strategy's, not '" + strategy.Name() +
                     "' (give --strategy moe)");
  }
  Json kept = Json::MakeObject();
  if (strategy.component.params && strategy.component.params->IsMap()) {
    const Json params = strategy.component.params->ToJson();  // outlives the loop over it
    for (const auto& [k, v] : params.AsObject()) {
      if (k != key) kept[k] = v;
    }
  }
  if (value) kept[key] = *value;
  strategy.component.params = ConfigNode::ParseString(kept.Dump(0), "phaze " + flag);
  return strategy;
}

}  // namespace

StrategyChoice WithExpertParallel(StrategyChoice strategy, std::int64_t e,
                                  const std::string& flag) {
  const Json value = Json(e);
  return WithMoeParam(std::move(strategy), "expert_parallel", e > 0 ? &value : nullptr, flag);
}

StrategyChoice WithExpertTensorParallel(StrategyChoice strategy, bool split,
                                        const std::string& flag) {
  const Json value = Json(std::string("width"));
  return WithMoeParam(std::move(strategy), "expert_tensor_parallel", split ? &value : nullptr,
                      flag);
}

std::vector<bool> ParseExpertTensorParallel(const std::string& flag, const std::string& text,
                                            bool all, std::int64_t width) {
  if (all && text == "all") return {false, true};
  if (text == "1") return {false};
  if (text == "width") return {true};
  const std::string t = width > 1 ? " or " + std::to_string(width) : "";
  if (width > 1 && text == std::to_string(width)) return {true};
  const bool integer = !text.empty() && text.find_first_not_of("0123456789") == std::string::npos;
  throw UsageError(
      flag + ": expected 1 (each expert whole on its device), width" + t +
      " (each expert split over the tensor-parallel width)" + (all ? " or all" : "") +
      ", found '" + text + "'" +
      (integer ? "; expert tensor-parallel sizes other than 1 and the width are not modelled" : ""));
}

bool IsTensorParallelism(const StrategyChoice& strategy) {
  const std::string& name = strategy.component.name;
  return !strategy.over && (name == "megatron" || name == "sequence_parallel");
}

StrategyChoice WithContextParallel(const Registry& registry, const StrategyChoice& strategy,
                                   std::int64_t k, const std::vector<StrategyChoice>& configured,
                                   const std::string& flag) {
  if (!IsTensorParallelism(strategy)) {
    throw UsageError(flag +
                     ": context parallelism composes over tensor parallelism (megatron or "
                     "sequence_parallel), not over '" +
                     strategy.Name() + "'");
  }
  StrategyChoice cp = NamedStrategy(registry, flag, "context_parallel", configured);
  if (k > 1) cp.over = StrategyChoice::Over{strategy.component, k};  // k = 1: context alone
  return cp;
}

std::vector<std::int64_t> ParseExpertParallel(const std::string& flag, const std::string& text) {
  std::vector<std::int64_t> out;
  for (const std::string& w : SplitCommas(text)) {
    std::int64_t e = 0;
    if (w != "width") {
      try {
        std::size_t used = 0;
        e = std::stoll(w, &used);
        if (used != w.size() || e < 1 || e > limits::kAccelerators) e = -1;
      } catch (const std::exception&) {
        e = -1;
      }
      if (e < 0) {
        throw UsageError(flag + ": expected width or an expert-parallel size from 1 to " +
                         std::to_string(limits::kAccelerators) + ", found '" + w + "'");
      }
    }
    if (std::find(out.begin(), out.end(), e) == out.end()) out.push_back(e);
  }
  return out;
}

void CheckExpertParallel(const std::string& flag, const std::vector<std::int64_t>& sizes,
                         const ModelSpec& model) {
  for (std::int64_t e : sizes) {
    if (e == 0) continue;
    if (model.experts == 0) {
      throw UsageError(flag + " " + std::to_string(e) + ": " + model.name +
                       " has no experts to place (expert parallelism is for a mixture of experts)");
    }
    if (model.experts % e != 0) {
      throw UsageError(flag + " " + std::to_string(e) + ": the " + std::to_string(model.experts) +
                       " experts of " + model.name + " are not divisible by " + std::to_string(e) +
                       " (each expert-parallel rank keeps E/e of them)");
    }
  }
}

void CheckExpertTensorParallel(const std::string& flag, const std::vector<bool>& splits,
                               const ModelSpec& model) {
  if (model.experts == 0 && std::find(splits.begin(), splits.end(), true) != splits.end()) {
    throw UsageError(flag + " width: " + model.name +
                     " has no experts to split (expert tensor parallelism is for a mixture of "
                     "experts)");
  }
}

void NetworkFromFlags(const boost::program_options::variables_map& vm, RunConfig& run) {
  if (vm.count("system")) {
    run.cluster.network =
        ReadFlag("--system", [&] { return Network::LoadSystem(vm["system"].as<std::string>()); });
  }
}

void CheckPrecisionOnDevice(const std::string& flag, Precision precision, const ArchConfig& arch) {
  if (precision == Precision::kFp8 && !(arch.fp8_tensor_ratio > 0)) {
    throw UsageError(flag + " fp8: architecture '" + arch.name +
                     "' has no FP8 tensor rate (its fp8_tensor_ratio is unset): train it in "
                     "bf16, or on a device with FP8 (h100-sxm-80gb, h200-sxm-141gb)");
  }
}

std::string FlatNetworkNote(const boost::program_options::variables_map& vm, const Network& network,
                            std::int64_t devices) {
  if (vm.count("system") || !network.IsFlat() || devices < 2) return "";
  return "the network is one flat link of " +
         FormatNumber("%.3g", network.Levels().front().bandwidth_bytes_per_s / 1e9) +
         " GB/s per device (no --system): NVLink within a node and InfiniBand across nodes are "
         "not told apart; --system dgx-h100, dgx-a100 or a system file (share/systems/) "
         "describes a cluster";
}

void RecipeFromFlags(const boost::program_options::variables_map& vm, RunConfig& run) {
  if (vm.count("recipe")) {
    ReadFlag("--recipe", [&] {
      ApplyTrainingRecipe(vm["recipe"].as<std::string>(), run.training);
      return 0;
    });
  }
}

namespace {

// One of `choices` by its word (the enum's ToString), else "FLAG: expected a, b or c, found 'w'".
template <class Enum>
Enum ParseWord(const std::string& flag, const std::string& word,
               std::initializer_list<Enum> choices) {
  std::string expected;
  std::size_t k = 0;
  for (Enum e : choices) {
    if (ToString(e) == word) return e;
    if (k > 0) expected += k + 1 == choices.size() ? " or " : ", ";
    expected += ToString(e);
    ++k;
  }
  throw UsageError(flag + ": expected " + expected + ", found '" + word + "'");
}

}  // namespace

Sharding ParseSharding(const std::string& flag, const std::string& word) {
  return ParseWord(flag, word, {Sharding::kNone, Sharding::kOptimizer, Sharding::kGradients,
                                Sharding::kParameters});
}

std::vector<std::int64_t> ParseShardGroups(const std::string& flag, const std::string& text) {
  std::vector<std::int64_t> groups;
  for (const std::string& w : SplitCommas(text)) {
    const std::optional<std::int64_t> group = ParseShardGroup(w);
    if (!group)
      throw UsageError(flag + ": expected " + ShardGroupChoices() + ", found '" + w + "'");
    if (std::find(groups.begin(), groups.end(), *group) == groups.end()) groups.push_back(*group);
  }
  return groups;
}

std::string ShardingText(Sharding sharding, std::int64_t h, std::int64_t d) {
  std::string text(ToString(sharding));
  if (sharding != Sharding::kNone && h > 0 && h < d) {
    text += " (" + std::to_string(h) + " of " + std::to_string(d) + ")";
  }
  return text;
}

Precision ParsePrecision(const std::string& flag, const std::string& word) {
  return ParseWord(flag, word, {Precision::kBf16, Precision::kFp16, Precision::kFp8});
}

std::string RegisteredName(const Registry& registry, ComponentKind kind, const std::string& flag,
                           const std::string& name) {
  if (!registry.Has(kind, name))
    throw UsageError(flag + ": " + registry.UnknownNameMessage(kind, name));
  return name;
}

void RefuseModelOptionsOnGraphFile(const boost::program_options::variables_map& vm,
                                   std::initializer_list<const char*> options) {
  for (const char* option : options) {
    if (vm.count(option) && !vm[option].defaulted()) {
      throw UsageError(std::string("--") + option +
                       " applies to model descriptions; a graph file is already built");
    }
  }
}

OptimizerKind ParseOptimizer(const std::string& flag, const std::string& word) {
  return ParseWord(
      flag, word,
      {OptimizerKind::kAdamMixed, OptimizerKind::kAdamBf16Moments, OptimizerKind::kSgd});
}

AttentionKernel ParseAttention(const std::string& flag, const std::string& word) {
  return ParseWord(flag, word,
                   {AttentionKernel::kUnfused, AttentionKernel::kMegatron, AttentionKernel::kFlash,
                    AttentionKernel::kFused});
}

void AddWeightFormatOptions(boost::program_options::options_description& d) {
  namespace po = boost::program_options;
  d.add_options()(
      "fp8-param-gather",
      "with fp8 and a sharding: all-gather the FP8 GEMMs' weights in FP8, one byte a parameter "
      "(Megatron-LM --fp8-param-gather, TorchTitan enable_fsdp_float8_all_gather); default: the "
      "run config's training.fp8_param_gather")(
      "fp8-param-storage", po::value<std::string>(),
      "with --fp8-param-gather: fp8 (the FP8 GEMMs' weights kept in FP8 only, as Megatron-LM's "
      "--fp8-param-gather keeps them) | 16bit (kept in 16 bits, as TorchTitan keeps them); "
      "default: the run config's training.fp8_param_storage, else its recipe's")(
      "optimizer", po::value<std::string>(),
      "adam-mixed (fp32 master weights and moments: 12 bytes a parameter beside the weight and "
      "its fp32 gradient) | adam-bf16-moments (the moments in bf16: 8 bytes; Megatron-LM's "
      "--use-precision-aware-optimizer, with a sharding) | sgd; default: the run config's "
      "training.optimizer");
}

void AddKernelOptions(boost::program_options::options_description& d) {
  namespace po = boost::program_options;
  d.add_options()(
      "attention", po::value<std::string>(),
      "unfused | megatron (unfused, PyTorch's FP32 softmax where Megatron-LM's fused kernel "
      "does not run) | flash (FlashAttention) | fused (FlashAttention as its kernels "
      "run); "
      "default: the run config's training.attention, else its recipe's")(
      "loss", po::value<std::string>(),
      "megatron (Megatron-LM's vocab-parallel FP32 cross-entropy) | torch (F.cross_entropy on "
      "FP32 logits: Hugging Face, TorchTitan before 2025) | compiled (the same under "
      "torch.compile: TorchTitan with compile on); default: the run config's training.loss")(
      "fp8-recipe", po::value<std::string>(),
      "with --precision fp8: delayed (Transformer Engine's scales from an amax history) | "
      "tensorwise (per-tensor current scaling: torchao's float8, TE's Float8CurrentScaling); "
      "default: the run config's training.fp8_recipe");
}

void RefuseFp8FlagsWithoutFp8(const boost::program_options::variables_map& vm, bool fp8,
                              const std::string& precision) {
  if (fp8) return;
  for (const std::string flag : {"fp8-recipe", "fp8-param-gather", "fp8-param-storage"}) {
    if (vm.count(flag)) {
      throw UsageError("--" + flag + ": nothing runs in FP8 here (precision " + precision +
                       "); give --precision fp8");
    }
  }
}

void KernelsFromFlags(const boost::program_options::variables_map& vm, RunConfig& run) {
  if (vm.count("attention")) {
    run.training.attention = ParseAttention("--attention", vm["attention"].as<std::string>());
  }
  if (vm.count("loss")) {
    run.training.loss =
        ParseWord("--loss", vm["loss"].as<std::string>(),
                  {LossKernel::kMegatron, LossKernel::kTorch, LossKernel::kCompiled});
  }
  if (vm.count("fp8-recipe")) {
    run.training.fp8_recipe = ParseWord("--fp8-recipe", vm["fp8-recipe"].as<std::string>(),
                                        {Fp8Recipe::kDelayed, Fp8Recipe::kTensorwise});
  }
  if (vm.count("fp8-param-gather")) run.training.fp8_param_gather = true;  // predict, plan
  if (vm.count("optimizer")) {                                             // predict, plan
    run.training.optimizer = ParseOptimizer("--optimizer", vm["optimizer"].as<std::string>());
  }
  if (vm.count("fp8-param-storage")) {  // predict, plan
    run.training.fp8_param_storage =
        ParseWord("--fp8-param-storage", vm["fp8-param-storage"].as<std::string>(),
                  {Fp8ParamStorage::kFp8, Fp8ParamStorage::k16Bit});
  }
}

}  // namespace phaze::cli
