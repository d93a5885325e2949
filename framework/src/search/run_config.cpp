#include "phaze/search/run_config.hpp"

#include <fmt/printf.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <limits>

#include "phaze/core/error.hpp"
#include "phaze/core/limits.hpp"
#include "phaze/core/paths.hpp"
#include "phaze/plugin/registry.hpp"
#include "phaze/search/training_recipe.hpp"

namespace phaze {

namespace {

// Integers in [1, hi] (hi: the key's limit, phaze/core/limits.hpp), each located when refused.
std::vector<std::int64_t> PositiveIntsUpTo(const ConfigNode& list, std::int64_t hi) {
  std::vector<std::int64_t> out;
  for (const auto& e : list.Elements()) out.push_back(e.AsIntInRange(1, hi));
  return out;
}

ComponentChoice ParseComponent(const ConfigNode& node, const char* name_key,
                               ComponentChoice dflt) {
  if (node.IsScalar()) {  // shorthand: `estimator: analytic`
    return {node.AsString(), node, std::nullopt};
  }
  ComponentChoice c = std::move(dflt);
  if (auto n = node.Optional(name_key)) {
    c.name = n->AsString();
    c.name_node = *n;
  }
  if (auto p = node.Optional("params")) {
    if (!p->IsMap()) p->Fail("expected a map of plugin parameters, found " + p->Describe());
    c.params = *p;
  }
  return c;
}

// `S` or `{name: S, params: {…}, over: {name: I, params: {…}, width: k}}`.
StrategyChoice ParseStrategy(const ConfigNode& node) {
  StrategyChoice c;
  if (!node.IsScalar()) node.ExpectKeys({"name", "params", "over"});
  c.component = ParseComponent(node, "name", c.component);
  if (auto o = node.IsScalar() ? std::nullopt : node.Optional("over")) {
    o->ExpectKeys({"name", "params", "width"});
    StrategyChoice::Over over;
    o->Child("name");  // required: a located error when missing
    over.component = ParseComponent(*o, "name", {});
    if (over.component.name == c.component.name) {
      o->Child("name").Fail("a strategy cannot be composed over itself ('" + c.component.name +
                            "'); name another strategy, or drop `over`");
    }
    over.width = o->Child("width").AsIntInRange(1, limits::kWidth);
    c.over = over;
  }
  return c;
}

// none | selective | per-op | full, or true (full) / false (none) as the paper's on/off.
RecomputeMode ParseRecomputeNode(const ConfigNode& node) {
  const std::string text = node.AsString();
  if (text == "true") return RecomputeMode::kFull;
  if (text == "false") return RecomputeMode::kNone;
  return ParseRecomputeMode(node.AsChoice({"none", "selective", "per-op", "full", "true", "false"}))
      .value();
}

template <class T>
void CheckDistinct(const ConfigNode& node, const std::vector<T>& values) {
  for (size_t i = 0; i < values.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (values[i] == values[j]) node.Elements()[i].Fail("duplicate value in the list");
    }
  }
  if (values.empty()) node.Fail("expected a non-empty list");
}

// The run config's cross-field rules, in one place, after every field was read on its own (types,
// ranges, closed key sets): each refusal is located at the value that breaks the rule, or at the
// key the rule is about when that value is a default. Defaults that a given value makes unusable
// are narrowed instead of refused (the default micro-batches to those dividing the batch).
void Validate(RunConfig& rc, const ConfigNode& root) {
  auto& t = rc.training;
  const auto training = root.Optional("training");
  auto key = [&](std::string_view k) {
    return training ? training->Optional(k) : std::optional<ConfigNode>{};
  };
  // Every step runs whole micro-batches: each listed micro-batch divides the global batch.
  if (const auto list = key("micro_batches")) {
    const auto elems = list->Elements();
    for (std::size_t i = 0; i < elems.size(); ++i) {
      const std::int64_t b = t.micro_batches[i];
      if (b > t.global_batch) {
        elems[i].Fail("micro-batch " + std::to_string(b) + " is larger than training.global_batch " +
                      std::to_string(t.global_batch));
      }
      if (t.global_batch % b != 0) {
        elems[i].Fail("micro-batch " + std::to_string(b) + " does not divide training.global_batch " +
                      std::to_string(t.global_batch) + ": a step runs whole micro-batches");
      }
    }
  } else {
    std::erase_if(t.micro_batches, [&](std::int64_t b) { return t.global_batch % b != 0; });
  }
  // The hysteresis is compared with the optimum only an exhaustive search proves.
  if (const auto s = root.Optional("search"); s && rc.search.compare_hysteresis &&
                                              rc.search.mode != SearchMode::kExhaustive) {
    s->Child("compare_hysteresis")
        .Fail("compares the hysteresis with the optimum of an exhaustive search: needs "
              "search.mode: exhaustive (the mode is hysteresis)");
  }
  // Virtual stages are the interleaved schedule's.
  if (const auto v = key("virtual_stages");
      v && t.pipeline_schedule != PipelineSchedule::kInterleaved) {
    v->Fail("virtual_stages applies to pipeline_schedule: interleaved only (the schedule is " +
            std::string(ToString(t.pipeline_schedule)) + ")");
  }
  // An expert plan [p, d, t] must fit the cluster and use an evaluated tensor-parallel width (the
  // search's DP, like the paper's, lets d replicas share the micro-batches unevenly: OPT's expert
  // plan has d = 85 for a batch of 4096).
  const auto models = root.Optional("models");
  for (std::size_t m = 0; m < rc.models.size(); ++m) {
    const auto& e = rc.models[m].expert;
    if (!e) continue;
    const ConfigNode node = models->Elements()[m].Child("expert");
    // Each ≤ 2^24, so the product of three is below 2^72: computed in long double.
    const long double devices =
        static_cast<long double>(e->pipeline_stages) * e->data_parallel * e->tensor_parallel;
    if (devices > static_cast<long double>(rc.cluster.num_accelerators)) {
      node.Fail(fmt::sprintf("the plan needs p·d·t = %.0Lf accelerators, the cluster has %lld",
                             devices, static_cast<long long>(rc.cluster.num_accelerators)));
    }
    const auto& widths = t.tensor_parallel_widths;
    if (std::find(widths.begin(), widths.end(), e->tensor_parallel) == widths.end()) {
      node.Elements()[2].Fail("tensor-parallel width " + std::to_string(e->tensor_parallel) +
                              " is not among training.tensor_parallel_widths");
    }
  }
}

}  // namespace

SolveOptions RunConfig::Solver::Options() const {
  SolveOptions o;
  o.time_limit_s = time_limit_s > 0 ? time_limit_s : kInfinity;
  o.node_limit = node_limit;
  o.relative_gap = relative_gap;
  o.absolute_gap = absolute_gap;
  o.threads = static_cast<int>(threads);
  o.verbose = verbose;
  return o;
}

void ReadTrainingKeys(const ConfigNode& t, RunConfig::Training& training) {
  if (auto v = t.Optional("tokens")) {
    training.tokens = v->AsNonNegativeDouble();
    if (training.tokens > 1e18) v->Fail("expected at most 1e18 tokens");
  }
  if (auto v = t.Optional("global_batch")) training.global_batch = v->AsIntInRange(1, limits::kGlobalBatch);
  if (auto v = t.Optional("micro_batches")) {
    training.micro_batches = PositiveIntsUpTo(*v, limits::kMicroBatch);
    CheckDistinct(*v, training.micro_batches);
  }
  if (auto v = t.Optional("tensor_parallel_widths")) {
    training.tensor_parallel_widths = PositiveIntsUpTo(*v, limits::kWidth);
    CheckDistinct(*v, training.tensor_parallel_widths);
  }
  if (auto v = t.Optional("hbm_gib")) {
    training.hbm_gib = v->AsList(&ConfigNode::AsPositiveDouble);
    CheckDistinct(*v, training.hbm_gib);
    const double most = static_cast<double>(limits::kMemoryBytes >> 30);
    for (std::size_t i = 0; i < training.hbm_gib.size(); ++i) {
      if (training.hbm_gib[i] > most) {
        v->Elements()[i].Fail(fmt::sprintf("expected at most %.0f GiB (2^50 bytes)", most));
      }
    }
  }
  if (auto v = t.Optional("recompute")) {
    training.recompute.clear();
    for (const auto& e : v->IsScalar() ? std::vector<ConfigNode>{*v} : v->Elements()) {
      training.recompute.push_back(ParseRecomputeNode(e));
    }
    if (!v->IsScalar()) CheckDistinct(*v, training.recompute);
  }
  if (auto v = t.Optional("optimizer")) {
    training.optimizer = v->AsEnum(
        {OptimizerKind::kAdamMixed, OptimizerKind::kAdamBf16Moments, OptimizerKind::kSgd});
  }
  if (auto v = t.Optional("pipeline_schedule")) {
    training.pipeline_schedule = v->AsEnum(
        {PipelineSchedule::k1F1B, PipelineSchedule::kInterleaved, PipelineSchedule::kGPipe});
  }
  if (auto v = t.Optional("virtual_stages")) {
    training.virtual_stages = PositiveIntsUpTo(*v, limits::kWidth);
    CheckDistinct(*v, training.virtual_stages);
    auto elems = v->Elements();
    for (size_t i = 0; i < elems.size(); ++i) {
      if (training.virtual_stages[i] < 2) {
        elems[i].Fail("expected v >= 2 virtual stages per device (v = 1 is plain 1f1b)");
      }
    }
  }
  if (auto v = t.Optional("sharding")) {
    training.sharding.clear();
    for (const auto& e : v->IsScalar() ? std::vector<ConfigNode>{*v} : v->Elements()) {
      training.sharding.push_back(e.AsEnum({Sharding::kNone, Sharding::kOptimizer,
                                               Sharding::kGradients, Sharding::kParameters}));
    }
    if (!v->IsScalar()) CheckDistinct(*v, training.sharding);
  }
  if (auto v = t.Optional("shard_group")) {
    training.shard_groups.clear();
    for (const auto& e : v->IsScalar() ? std::vector<ConfigNode>{*v} : v->Elements()) {
      const std::optional<std::int64_t> group = ParseShardGroup(e.AsString());
      if (!group) e.Fail("expected " + ShardGroupChoices());
      training.shard_groups.push_back(*group);
    }
    if (!v->IsScalar()) CheckDistinct(*v, training.shard_groups);
  }
  if (auto v = t.Optional("hybrid_all_reduce")) {
    training.hybrid_all_reduce =
        v->AsEnum({HybridAllReduce::kEveryMicroBatch, HybridAllReduce::kOnceAStep});
  }
  if (auto v = t.Optional("attention")) {
    training.attention = v->AsEnum({AttentionKernel::kUnfused, AttentionKernel::kMegatron,
                                    AttentionKernel::kFlash, AttentionKernel::kFused});
  }
  if (auto v = t.Optional("bubble")) {
    training.bubble = v->AsEnum({PipelineBubble::kStages, PipelineBubble::kBottleneck});
  }
  if (auto v = t.Optional("pipeline_sends")) {
    training.pipeline_sends = v->AsEnum({PipelineSends::kBatched, PipelineSends::kBlocking});
  }
  if (auto v = t.Optional("loss")) {
    training.loss = v->AsEnum({LossKernel::kMegatron, LossKernel::kTorch, LossKernel::kCompiled});
  }
  if (auto v = t.Optional("precision")) {
    training.precision = v->AsEnum({Precision::kBf16, Precision::kFp16, Precision::kFp8});
  }
  if (auto v = t.Optional("fp8_recipe")) {
    training.fp8_recipe = v->AsEnum({Fp8Recipe::kDelayed, Fp8Recipe::kTensorwise});
  }
  // The older spelling of `sharding: optimizer` (Megatron-LM's --use-distributed-optimizer).
  if (auto v = t.Optional("distributed_optimizer")) {
    if (t.Optional("sharding")) {
      v->Fail("give either distributed_optimizer or sharding (distributed_optimizer: true is "
              "sharding: optimizer)");
    }
    training.sharding = {v->AsBool() ? Sharding::kOptimizer : Sharding::kNone};
  }
  if (auto v = t.Optional("gradient_reduction_overlap")) {
    training.gradient_reduction_overlap = v->AsNonNegativeDouble();
    if (training.gradient_reduction_overlap > 1) v->Fail("expected a fraction in [0, 1]");
  }
  if (auto v = t.Optional("tensor_parallel_overlap")) {
    training.tensor_parallel_overlap = v->AsNonNegativeDouble();
    if (training.tensor_parallel_overlap > 1) v->Fail("expected a fraction in [0, 1]");
  }
  if (auto v = t.Optional("fp8_param_gather")) training.fp8_param_gather = v->AsBool();
  if (auto v = t.Optional("fp8_param_storage")) {
    training.fp8_param_storage = v->AsEnum({Fp8ParamStorage::kFp8, Fp8ParamStorage::k16Bit});
  }
  if (auto v = t.Optional("gradient_reduction_precision")) {
    training.gradient_reduction_precision = v->AsEnum(
        {ReductionPrecision::kFp32, ReductionPrecision::kFp16, ReductionPrecision::kBf16});
  }
}

RunConfig RunConfig::Defaults() {
  return Parse(ConfigNode::ParseString("{}", "<defaults>"), false);
}

RunConfig RunConfig::ParseFile(const std::string& path, bool require_models,
                               const std::string& default_recipe) {
  return Parse(ConfigNode::ParseFile(path), require_models, default_recipe);
}

RunConfig RunConfig::Parse(const ConfigNode& root, bool require_models,
                           const std::string& default_recipe) {
  RunConfig rc;
  rc.source = root.Source();
  root.ExpectKeys({"models", "arch", "cluster", "training", "solver", "estimator", "strategy",
                   "search", "output", "cost"});
  std::filesystem::path base = std::filesystem::path(rc.source).parent_path();

  std::vector<ConfigNode> weights;  // the models' weight keys (warnings below)
  if (auto models = root.Optional("models")) {
    if (require_models && models->IsSequence() && models->Elements().empty()) {
      models->Fail("expected at least one workload file, found an empty list");
    }
    for (const auto& m : models->Elements()) {
      ModelEntry e;
      if (m.IsScalar()) {
        e.file = m.AsString();
        e.file_node = m;
      } else {
        m.ExpectKeys({"file", "hf", "sequence_length", "weight", "expert", "presets"});
        if (m.Has("file") && m.Has("hf"))
          m.Child("hf").Fail("give either 'file' or 'hf', not both");
        e.hf = m.Has("hf") && !m.Has("file");
        e.file_node = m.Has("file") || !e.hf ? m.Child("file") : m.Child("hf");
        e.file = e.file_node->AsString();
        if (auto s = m.Optional("sequence_length")) {
          e.sequence_length = s->AsIntInRange(1, limits::kSequence);
        }
        if (auto w = m.Optional("weight")) {
          e.weight = w->AsPositiveDouble();
          weights.push_back(*w);
        }
        if (auto x = m.Optional("expert")) {
          const auto v = PositiveIntsUpTo(*x, limits::kAccelerators);
          if (v.size() != 3) x->Fail("expected [p, d, t]: pipeline stages, data- and tensor-parallel widths");
          e.expert = ExpertPlacement{v[0], v[1], v[2]};
        }
        if (auto p = m.Optional("presets")) {
          e.presets = p->AsList(&ConfigNode::AsString);
          e.preset_nodes = p->Elements();
        }
      }
      e.resolved = std::filesystem::path(e.file).is_absolute() ? e.file : (base / e.file).string();
      // The same workload twice counts twice in the common score: that is what weight says.
      for (const ModelEntry& other : rc.models) {
        if (other.hf == e.hf && other.sequence_length == e.sequence_length &&
            std::filesystem::path(other.resolved).lexically_normal() ==
                std::filesystem::path(e.resolved).lexically_normal()) {
          e.file_node->Fail("'" + e.file + "' is listed twice" +
                            (e.sequence_length ? " at this sequence length" : "") +
                            ": give it once (weight: 2 counts it twice in the common score)");
        }
      }
      rc.models.push_back(e);
    }
  }
  if (require_models && rc.models.empty()) {
    root.Fail("missing required key 'models' (a list of workload files, e.g. "
              "models: [../../workloads/bert-large.yaml])");
  }

  if (auto arch = root.Optional("arch")) {
    arch->ExpectKeys({"space", "presets", "power_budget_w"});
    if (auto v = arch->Optional("power_budget_w")) {
      rc.arch.power_budget_w = v->AsNonNegativeDouble();
      if (rc.arch.power_budget_w > 1e7) v->Fail("expected at most 1e7 W per device");
    }
    if (auto s = arch->Optional("space")) {
      rc.arch.space = s->AsString();
      rc.arch.space_node = s;
    }
    if (auto p = arch->Optional("presets")) {
      rc.arch.presets = p->AsList(&ConfigNode::AsString);
      rc.arch.preset_nodes = p->Elements();
    }
  }

  if (auto c = root.Optional("cluster")) {
    c->ExpectKeys(
        {"num_accelerators", "link_bandwidth_bytes_per_s", "link_latency_s", "levels", "system"});
    if (auto v = c->Optional("num_accelerators")) rc.cluster.num_accelerators = v->AsIntInRange(1, limits::kAccelerators);
    auto levels = c->Optional("levels");
    auto system = c->Optional("system");
    auto bandwidth = c->Optional("link_bandwidth_bytes_per_s");
    auto latency = c->Optional("link_latency_s");
    const int ways = (levels ? 1 : 0) + (system ? 1 : 0) + (bandwidth || latency ? 1 : 0);
    if (ways > 1) {
      (levels ? *levels : *system)
          .Fail("give one of levels, system, or link_bandwidth_bytes_per_s/link_latency_s (the "
                "flat network)");
    }
    if (levels) rc.cluster.network = Network::ParseLevels(*levels);
    if (system) {
      std::string name = system->AsString();
      if (name.find('/') != std::string::npos && !std::filesystem::path(name).is_absolute()) {
        name = (base / name).string();
      }
      try {
        rc.cluster.network = Network::LoadSystem(name);
      } catch (const ConfigError& e) {
        system->Fail(e.what());
      }
    }
    if (bandwidth || latency) {
      rc.cluster.network = Network::Flat(bandwidth ? bandwidth->AsRate(limits::kMinLinkRate, "byte per second") : 4294967296.0,
                                         latency ? latency->AsDuration() : 0.0);
    }
    // A cluster of whole groups (nodes, pods): more accelerators than a group holds fill whole
    // ones. Fewer, in one group, is a part of a node (4 GPUs of a DGX).
    const std::int64_t n = rc.cluster.num_accelerators;
    for (const NetworkLevel& level : rc.cluster.network.Levels()) {
      if (level.size > 0 && n > level.size && n % level.size != 0) {
        (levels   ? *levels
         : system ? *system
                  : *c)
            .Fail("cluster.num_accelerators " + std::to_string(n) + " is not a whole number of " +
                  level.name + " groups of " + std::to_string(level.size) +
                  " (give a multiple of " + std::to_string(level.size) + ", or at most one group)");
      }
    }
  }

  const auto training = root.Optional("training");
  if (!default_recipe.empty() && !(training && training->Optional("recipe"))) {
    ApplyTrainingRecipe(default_recipe, rc.training);
  }
  if (auto t = training) {
    t->ExpectKeys({"recipe",
                   "global_batch",
                   "micro_batches",
                   "tensor_parallel_widths",
                   "hbm_gib",
                   "recompute",
                   "optimizer",
                   "pipeline_schedule",
                   "virtual_stages",
                   "distributed_optimizer",
                   "sharding",
                   "shard_group",
                   "hybrid_all_reduce",
                   "precision",
                   "fp8_recipe",
                   "attention",
                   "loss",
                   "bubble",
                   "pipeline_sends",
                   "gradient_reduction_overlap",
                   "tensor_parallel_overlap",
                   "fp8_param_gather",
                   "fp8_param_storage",
                   "gradient_reduction_precision",
                   "tokens"});
    // The recipe first: the section's own keys override it.
    if (auto r = t->Optional("recipe")) {
      std::string name = r->AsString();
      if (name.find('/') != std::string::npos && !std::filesystem::path(name).is_absolute()) {
        name = (base / name).string();
      }
      try {
        ApplyTrainingRecipe(name, rc.training);
      } catch (const ConfigError& e) {
        r->Fail(e.what());
      }
    }
    ReadTrainingKeys(*t, rc.training);
  }

  if (auto s = root.Optional("solver")) {
    if (s->IsScalar()) {
      rc.solver.backend = {s->AsString(), *s, std::nullopt};
    } else {
      s->ExpectKeys({"backend", "time_limit_s", "node_limit", "search_nodes", "max_exact_ops",
                     "max_ilp_variables", "relative_gap", "absolute_gap", "threads", "verbose",
                     "params"});
      rc.solver.backend = ParseComponent(*s, "backend", rc.solver.backend);
      if (auto v = s->Optional("time_limit_s")) rc.solver.time_limit_s = v->AsNonNegativeDouble();
      if (auto v = s->Optional("node_limit")) {
        rc.solver.node_limit = v->AsInt();
        if (rc.solver.node_limit < 0) v->Fail("expected 0 (no limit) or a positive integer");
      }
      if (auto v = s->Optional("search_nodes")) {
        rc.solver.search_nodes = v->AsInt();
        if (rc.solver.search_nodes < 0) v->Fail("expected 0 (no search) or a positive integer");
      }
      if (auto v = s->Optional("max_exact_ops")) {
        rc.solver.max_exact_ops = v->AsIntInRange(0, std::numeric_limits<int>::max());
      }
      if (auto v = s->Optional("max_ilp_variables")) {
        rc.solver.max_ilp_variables = v->AsIntInRange(0, std::numeric_limits<int>::max());
      }
      if (auto v = s->Optional("relative_gap")) rc.solver.relative_gap = v->AsNonNegativeDouble();
      if (auto v = s->Optional("absolute_gap")) rc.solver.absolute_gap = v->AsNonNegativeDouble();
      if (auto v = s->Optional("threads")) rc.solver.threads = v->AsPositiveInt();
      if (auto v = s->Optional("verbose")) rc.solver.verbose = v->AsBool();
    }
  }
  if (auto e = root.Optional("estimator")) {
    if (!e->IsScalar()) e->ExpectKeys({"name", "params"});
    rc.estimator = ParseComponent(*e, "name", rc.estimator);
  }
  if (auto e = root.Optional("strategy")) {
    rc.strategies.clear();
    const std::vector<ConfigNode> items = e->IsSequence() ? e->Elements() : std::vector{*e};
    if (items.empty()) e->Fail("expected at least one parallelism strategy");
    for (const auto& item : items) {
      rc.strategies.push_back(ParseStrategy(item));
      // The same strategy may be listed again with other params (the moe strategy at several
      // expert_parallel sizes); results tell them apart by index and plan.expert_parallel.
      const std::string stated = rc.strategies.back().ToJson().Dump(-1);
      for (size_t i = 0; i + 1 < rc.strategies.size(); ++i) {
        if (rc.strategies[i].ToJson().Dump(-1) == stated) {
          item.Fail("strategy '" + rc.strategies.back().Name() + "' is listed twice" +
                    (item.IsScalar() ? "" : " with the same params"));
        }
      }
    }
  }

  if (auto s = root.Optional("search")) {
    s->ExpectKeys({"mode", "hysteresis_level", "bucket_width_mm2", "max_configs", "max_seconds",
                   "mean", "threads", "prune", "objective", "checkpoint_seconds",
                   "compare_hysteresis"});
    if (auto v = s->Optional("objective")) {
      rc.search.objective =
          v->AsEnum({SearchObjective::kThroughput, SearchObjective::kThroughputPerWatt,
                     SearchObjective::kThroughputPerCost});
    }
    if (auto v = s->Optional("mode")) {
      rc.search.mode = v->AsEnum({SearchMode::kHysteresis, SearchMode::kExhaustive});
    }
    if (auto v = s->Optional("prune")) {
      rc.search.prune = v->AsEnum({PruneMode::kWinners, PruneMode::kPareto, PruneMode::kNone});
    }
    if (auto v = s->Optional("hysteresis_level")) rc.search.hysteresis_level = v->AsPositiveInt();
    if (auto v = s->Optional("bucket_width_mm2")) rc.search.bucket_width_mm2 = v->AsPositiveDouble();
    if (auto v = s->Optional("max_configs")) {
      rc.search.max_configs = v->AsInt();
      if (rc.search.max_configs < 0) v->Fail("expected 0 (no limit) or a positive integer");
    }
    if (auto v = s->Optional("max_seconds")) rc.search.max_seconds = v->AsNonNegativeDouble();
    if (auto v = s->Optional("compare_hysteresis")) rc.search.compare_hysteresis = v->AsBool();
    if (auto v = s->Optional("checkpoint_seconds")) {
      rc.search.checkpoint_seconds = v->AsNonNegativeDouble();
    }
    if (auto v = s->Optional("mean")) {
      rc.search.mean =
          v->AsEnum({ScoreMean::kArithmetic, ScoreMean::kWeighted, ScoreMean::kGeometric});
    }
    if (auto v = s->Optional("threads")) {
      rc.search.threads = v->AsInt();
      if (rc.search.threads < 0) v->Fail("expected 0 (all cores) or a positive integer");
    }
    if (auto v = s->Optional("prune"); v && rc.search.mode == SearchMode::kHysteresis) {
      rc.warnings.push_back(v->Where() +
                            ": has no effect in hysteresis mode (only an exhaustive search "
                            "prunes)");
    }
  }
  if (rc.search.mean != ScoreMean::kWeighted) {
    for (const ConfigNode& w : weights) {
      rc.warnings.push_back(w.Where() + ": has no effect unless search.mean is weighted (it is " +
                            std::string(ToString(rc.search.mean)) + ")");
    }
  }

  if (auto c = root.Optional("cost")) {
    c->ExpectKeys({"file", "hourly_usd"});
    if (auto v = c->Optional("file")) {
      rc.cost.file = (base / v->AsString()).lexically_normal().string();
      std::error_code ec;
      if (!std::filesystem::is_regular_file(rc.cost.file, ec)) {
        v->Fail("no cost-model file '" + rc.cost.file + "' (share/cost/cost.yaml is the default)");
      }
    }
    if (auto v = c->Optional("hourly_usd")) {
      rc.cost.hourly_usd = v->AsNonNegativeDouble();
      if (rc.cost.hourly_usd > 1e7) v->Fail("expected at most 1e7 USD per device-hour");
    }
  }

  if (auto o = root.Optional("output")) {
    o->ExpectKeys({"directory", "plots"});
    if (auto v = o->Optional("directory")) rc.output.directory = v->AsString();
    if (auto v = o->Optional("plots")) rc.output.plots = v->AsBool();
  }
  Validate(rc, root);
  return rc;
}

void RunConfig::CheckComponents(const Registry& registry, bool check_solver, bool check_estimator,
                                bool check_strategy) const {
  auto check = [&](const ComponentChoice& c, ComponentKind kind, const char* default_path) {
    if (registry.Has(kind, c.name)) return;
    std::string msg = registry.UnknownNameMessage(kind, c.name);
    if (c.name_node) c.name_node->Fail(msg);
    throw ConfigError(source + ": " + default_path + " (default '" + c.name + "'): " + msg);
  };
  if (check_solver) check(solver.backend, ComponentKind::kSolverBackend, "solver.backend");
  if (check_estimator) check(estimator, ComponentKind::kEstimator, "estimator.name");
  if (!check_strategy) return;
  for (const auto& s : strategies) {
    check(s.component, ComponentKind::kParallelismStrategy, "strategy.name");
    if (s.over) check(s.over->component, ComponentKind::kParallelismStrategy, "strategy.over.name");
  }
}

std::string_view ToString(ReductionPrecision precision) {
  switch (precision) {
    case ReductionPrecision::kFp32:
      return "fp32";
    case ReductionPrecision::kFp16:
      return "fp16";
    case ReductionPrecision::kBf16:
      return "bf16";
  }
  return "?";
}

std::string_view ToString(SearchMode mode) {
  return mode == SearchMode::kExhaustive ? "exhaustive" : "hysteresis";
}
std::string_view ToString(ScoreMean mean) {
  switch (mean) {
    case ScoreMean::kArithmetic:
      return "arithmetic";
    case ScoreMean::kWeighted:
      return "weighted";
    case ScoreMean::kGeometric:
      return "geometric";
  }
  return "?";
}
std::string_view ToString(PruneMode prune) {
  switch (prune) {
    case PruneMode::kNone:
      return "none";
    case PruneMode::kWinners:
      return "winners";
    case PruneMode::kPareto:
      return "pareto";
  }
  return "?";
}

std::string_view ToString(SearchObjective objective) {
  switch (objective) {
    case SearchObjective::kThroughput:
      return "throughput";
    case SearchObjective::kThroughputPerWatt:
      return "throughput_per_watt";
    case SearchObjective::kThroughputPerCost:
      return "throughput_per_cost";
  }
  return "?";
}

std::string ShardGroupText(std::int64_t group) {
  return group == kShardOverAll      ? "all"
         : group == kShardWithinNode ? "node"
                                     : std::to_string(group);
}

std::optional<std::int64_t> ParseShardGroup(const std::string& word) {
  if (word == "all") return kShardOverAll;
  if (word == "node") return kShardWithinNode;
  if (word.empty() || word.size() > 18 ||
      word.find_first_not_of("0123456789") != std::string::npos || word[0] == '0') {
    return std::nullopt;
  }
  const std::int64_t devices = std::stoll(word);
  if (devices > limits::kAccelerators) return std::nullopt;
  return devices;
}

std::string ShardGroupChoices() {
  return "all, node or a device count from 1 to " + std::to_string(limits::kAccelerators);
}

std::vector<std::pair<Sharding, std::int64_t>> ShardingsOf(const RunConfig::Training& training) {
  std::vector<std::pair<Sharding, std::int64_t>> out;
  for (Sharding sharding : training.sharding) {
    if (sharding == Sharding::kNone) {
      out.emplace_back(sharding, kShardOverAll);
      continue;
    }
    for (std::int64_t group : training.shard_groups) out.emplace_back(sharding, group);
  }
  return out;
}

std::int64_t ShardSpan(std::int64_t group, const Network& network) {
  if (group != kShardWithinNode) return group;
  return network.IsFlat() ? 0 : network.Levels().front().size;
}

std::string RunConfig::SpaceFile() const {
  if (arch.space.empty() || arch.space == "paper") {
    return (ShareDirectory() / "arch" / "paper-space.yaml").string();
  }
  std::filesystem::path p(arch.space);
  if (p.is_relative()) p = std::filesystem::path(source).parent_path() / p;
  return p.string();
}

Json RunConfig::ToJson() const {
  Json j = Json::MakeObject();
  j["source"] = source;
  Json models_json = Json::MakeArray();
  for (const auto& m : models) {
    Json e = Json::MakeObject();
    e[m.hf ? "hf" : "file"] = m.file;
    if (m.sequence_length > 0) e["sequence_length"] = m.sequence_length;
    e["weight"] = m.weight;
    if (m.expert) {
      Json x = Json::MakeArray();
      for (auto v : {m.expert->pipeline_stages, m.expert->data_parallel, m.expert->tensor_parallel}) {
        x.Push(v);
      }
      e["expert"] = x;
    }
    Json mp = Json::MakeArray();
    for (const auto& p : m.presets) mp.Push(p);
    e["presets"] = mp;
    models_json.Push(e);
  }
  j["models"] = models_json;
  Json presets = Json::MakeArray();
  for (const auto& p : arch.presets) presets.Push(p);
  j["arch"]["space"] = arch.space;
  j["arch"]["presets"] = presets;
  j["arch"]["power_budget_w"] = arch.power_budget_w;
  j["cluster"]["num_accelerators"] = cluster.num_accelerators;
  if (!cluster.network.Name().empty()) j["cluster"]["system"] = cluster.network.Name();
  j["cluster"]["levels"] = cluster.network.ToJson();
  auto& t = j["training"];
  if (!training.recipe.empty()) t["recipe"] = training.recipe;
  t["global_batch"] = training.global_batch;
  Json mb = Json::MakeArray(), tw = Json::MakeArray(), hbm = Json::MakeArray(),
       rec = Json::MakeArray();
  for (auto v : training.micro_batches) mb.Push(v);
  for (auto v : training.tensor_parallel_widths) tw.Push(v);
  for (auto v : training.hbm_gib) hbm.Push(v);
  for (RecomputeMode v : training.recompute) rec.Push(std::string(ToString(v)));
  t["micro_batches"] = mb;
  t["tensor_parallel_widths"] = tw;
  t["hbm_gib"] = hbm;
  t["recompute"] = rec;
  t["optimizer"] = std::string(ToString(training.optimizer));
  t["pipeline_schedule"] = std::string(ToString(training.pipeline_schedule));
  if (training.pipeline_schedule == PipelineSchedule::kInterleaved) {
    Json vs = Json::MakeArray();
    for (auto v : training.virtual_stages) vs.Push(v);
    t["virtual_stages"] = vs;
  }
  Json sharding = Json::MakeArray();
  for (Sharding v : training.sharding) sharding.Push(std::string(ToString(v)));
  t["sharding"] = sharding;
  Json groups = Json::MakeArray();
  for (std::int64_t g : training.shard_groups) groups.Push(ShardGroupText(g));
  t["shard_group"] = groups;
  t["hybrid_all_reduce"] = std::string(ToString(training.hybrid_all_reduce));
  t["precision"] = std::string(ToString(training.precision));
  t["fp8_recipe"] = std::string(ToString(training.fp8_recipe));
  t["attention"] = std::string(ToString(training.attention));
  t["loss"] = std::string(ToString(training.loss));
  t["bubble"] = std::string(ToString(training.bubble));
  t["pipeline_sends"] = std::string(ToString(training.pipeline_sends));
  t["gradient_reduction_overlap"] = training.gradient_reduction_overlap;
  t["tensor_parallel_overlap"] = training.tensor_parallel_overlap;
  t["fp8_param_gather"] = training.fp8_param_gather;
  t["fp8_param_storage"] = std::string(ToString(training.fp8_param_storage));
  t["gradient_reduction_precision"] = std::string(ToString(training.gradient_reduction_precision));
  t["tokens"] = training.tokens;
  auto params_json = [](const ComponentChoice& c) { return c.Params().ToJson(); };
  auto& s = j["solver"];
  s["backend"] = solver.backend.name;
  s["time_limit_s"] = solver.time_limit_s;
  s["node_limit"] = solver.node_limit;
  s["search_nodes"] = solver.search_nodes;
  s["max_exact_ops"] = solver.max_exact_ops;
  s["max_ilp_variables"] = solver.max_ilp_variables;
  s["relative_gap"] = solver.relative_gap;
  s["absolute_gap"] = solver.absolute_gap;
  s["threads"] = solver.threads;
  s["verbose"] = solver.verbose;
  s["params"] = params_json(solver.backend);
  j["estimator"]["name"] = estimator.name;
  j["estimator"]["params"] = params_json(estimator);
  if (strategies.size() == 1) {
    j["strategy"] = strategies[0].ToJson();
  } else {
    Json list = Json::MakeArray();
    for (const auto& s : strategies) list.Push(s.ToJson());
    j["strategy"] = list;
  }
  auto& se = j["search"];
  se["mode"] = ToString(search.mode);
  se["hysteresis_level"] = search.hysteresis_level;
  se["bucket_width_mm2"] = search.bucket_width_mm2;
  se["max_configs"] = search.max_configs;
  se["max_seconds"] = search.max_seconds;
  se["checkpoint_seconds"] = search.checkpoint_seconds;
  se["compare_hysteresis"] = search.compare_hysteresis;
  se["mean"] = ToString(search.mean);
  se["threads"] = search.threads;
  se["prune"] = ToString(search.prune);
  se["objective"] = ToString(search.objective);
  j["cost"]["file"] = cost.file;
  j["cost"]["hourly_usd"] = cost.hourly_usd;
  j["output"]["directory"] = output.directory;
  j["output"]["plots"] = output.plots;
  return j;
}

}  // namespace phaze
