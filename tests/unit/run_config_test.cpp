// The run-config schema: defaults, echo of effective values, and located errors.
#include "phaze/search/run_config.hpp"

#include <gtest/gtest.h>

#include <filesystem>

#include "phaze/core/error.hpp"
#include "phaze/plugin/registry.hpp"
#include "test_util.hpp"
#include "test_paths.hpp"

namespace phaze {
namespace {

using phaze::testing::ErrorOf;

RunConfig Parse(const std::string& text) {
  return RunConfig::Parse(ConfigNode::ParseString(text, "run.yaml"));
}

TEST(RunConfig, DefaultsAreEchoedWithUnits) {
  RunConfig rc = Parse("models: [a.yaml]\n");
  EXPECT_EQ(rc.solver.backend.name, "cbc");
  EXPECT_DOUBLE_EQ(rc.solver.relative_gap, 1e-4);
  EXPECT_EQ(rc.training.micro_batches, (std::vector<std::int64_t>{1, 2, 4, 8}));
  Json j = rc.ToJson();
  EXPECT_EQ(j.Find("solver")->Find("backend")->AsString(), "cbc");
  const auto& levels = j.Find("cluster")->Find("levels")->AsArray();
  ASSERT_EQ(levels.size(), 1u);  // the paper's flat network
  EXPECT_DOUBLE_EQ(levels[0].Find("bandwidth_bytes_per_s")->AsDouble(), 4294967296.0);
  const auto& modes = j.Find("training")->Find("recompute")->AsArray();
  ASSERT_EQ(modes.size(), 2u);
  EXPECT_EQ(modes[0].AsString(), "none");
  EXPECT_EQ(modes[1].AsString(), "full");
  EXPECT_EQ(j.Find("search")->Find("hysteresis_level")->Dump(), "6");
  EXPECT_EQ(j.Find("models")->AsArray().size(), 1u);
}

TEST(RunConfig, ValuesOverrideDefaultsAndPathsResolveAgainstTheConfig) {
  RunConfig rc = RunConfig::Parse(ConfigNode::ParseString(
      "models:\n  - file: ../w/bert.yaml\n    weight: 2\n"
      "solver: {backend: lpsolve, time_limit_s: 3, threads: 2}\n"
      "training: {micro_batches: [2, 4], recompute: true}\n",
      "share/runs/x.yaml"));
  EXPECT_EQ(rc.models[0].resolved, "share/runs/../w/bert.yaml");
  EXPECT_DOUBLE_EQ(rc.models[0].weight, 2.0);
  EXPECT_EQ(rc.solver.backend.name, "lpsolve");
  EXPECT_EQ(rc.solver.threads, 2);
  EXPECT_EQ(rc.training.recompute, std::vector<RecomputeMode>{RecomputeMode::kFull});  // true = full
}

TEST(RunConfig, HuggingFaceModelsAndSequenceLengths) {
  RunConfig rc = Parse(
      "models:\n  - {hf: hf/llama.json, sequence_length: 4096}\n"
      "  - {file: gpt.yaml, sequence_length: 512}\n  - plain.yaml\n");
  ASSERT_EQ(rc.models.size(), 3u);
  EXPECT_TRUE(rc.models[0].hf);
  EXPECT_EQ(rc.models[0].file, "hf/llama.json");
  EXPECT_EQ(rc.models[0].sequence_length, 4096);
  EXPECT_FALSE(rc.models[1].hf);
  EXPECT_EQ(rc.models[1].sequence_length, 512);
  EXPECT_EQ(rc.models[2].sequence_length, 0);
  const Json j = rc.ToJson();
  EXPECT_EQ(j.Find("models")->AsArray()[0].Find("hf")->AsString(), "hf/llama.json");
  EXPECT_EQ(j.Find("models")->AsArray()[0].Find("sequence_length")->AsDouble(), 4096);
  EXPECT_NE(ErrorOf([] { Parse("models: [{file: a.yaml, hf: b.json}]\n"); })
                .find("run.yaml:1:29: models[0].hf: give either 'file' or 'hf', not both"),
            std::string::npos)
      << ErrorOf([] { Parse("models: [{file: a.yaml, hf: b.json}]\n"); });
  EXPECT_NE(ErrorOf([] { Parse("models: [{hf: b.json, sequence_length: 0}]\n"); })
                .find("models[0].sequence_length"),
            std::string::npos);
}

TEST(RunConfig, ExpertPlacementsBaselinePresetsAndSolverLimits) {
  RunConfig rc = Parse(
      "models:\n  - {file: a.yaml, expert: [8, 128, 1], presets: [spotlight-bert]}\n"
      "solver: {node_limit: 7, time_limit_s: 0, search_nodes: 0}\n");
  ASSERT_TRUE(rc.models[0].expert.has_value());
  EXPECT_EQ(rc.models[0].expert->pipeline_stages, 8);
  EXPECT_EQ(rc.models[0].expert->data_parallel, 128);
  EXPECT_EQ(rc.models[0].expert->tensor_parallel, 1);
  EXPECT_EQ(rc.models[0].presets, std::vector<std::string>{"spotlight-bert"});
  EXPECT_EQ(rc.arch.presets, std::vector<std::string>{"tpuv4"});  // the default reference
  const SolveOptions o = rc.solver.Options();
  EXPECT_EQ(o.node_limit, 7);
  EXPECT_EQ(o.time_limit_s, kInfinity);  // 0 = none
  EXPECT_EQ(rc.solver.search_nodes, 0);
  EXPECT_EQ(RunConfig().solver.search_nodes, 500000);
  EXPECT_EQ(rc.ToJson().Find("models")->AsArray()[0].Find("expert")->Dump(-1), "[8,128,1]");
  EXPECT_EQ(ErrorOf([] { Parse("models:\n  - {file: a, expert: [8, 128]}\n"); }),
            "run.yaml:2:23: models[0].expert: expected [p, d, t]: pipeline stages, data- and "
            "tensor-parallel widths");
  EXPECT_EQ(ErrorOf([] { Parse("models: [a]\nsolver: {node_limit: -1}\n"); }),
            "run.yaml:2:22: solver.node_limit: expected 0 (no limit) or a positive integer");
  EXPECT_EQ(ErrorOf([] { Parse("models: [a]\nsolver: {search_nodes: -5}\n"); }),
            "run.yaml:2:24: solver.search_nodes: expected 0 (no search) or a positive integer");
}

// Settings that change nothing as set are warned of, located (the search prints them).
TEST(RunConfig, SettingsWithoutEffectAreWarnedOf) {
  const RunConfig weighted = Parse(
      "models:\n  - {file: a, weight: 3}\n  - b\nsearch:\n  mode: exhaustive\n  mean: weighted\n"
      "  prune: pareto\n");
  EXPECT_TRUE(weighted.warnings.empty());
  const RunConfig ignored = Parse(
      "models:\n  - {file: a, weight: 3}\n  - b\nsearch:\n  mode: hysteresis\n  prune: pareto\n");
  ASSERT_EQ(ignored.warnings.size(), 2u);
  EXPECT_EQ(ignored.warnings[0],
            "run.yaml:6:10: search.prune: has no effect in hysteresis mode (only an exhaustive "
            "search prunes)");
  EXPECT_EQ(ignored.warnings[1],
            "run.yaml:2:23: models[0].weight: has no effect unless search.mean is weighted (it "
            "is arithmetic)");
}

TEST(RunConfig, TypoKeyWrongTypeMissingKeyBadValue) {
  EXPECT_EQ(ErrorOf([] { Parse("models: [a]\nsolver:\n  backend: cbc\n  time_limt_s: 5\n"); }),
            "run.yaml:4:3: solver.time_limt_s: unknown key 'time_limt_s'; did you mean "
            "'time_limit_s'? (allowed keys: backend, time_limit_s, node_limit, search_nodes, "
            "max_exact_ops, max_ilp_variables, relative_gap, absolute_gap, threads, verbose, "
            "params)");
  EXPECT_EQ(ErrorOf([] { Parse("models: [a]\ncluster:\n  num_accelerators: many\n"); }),
            "run.yaml:3:21: cluster.num_accelerators: expected an integer, found 'many'");
  EXPECT_EQ(ErrorOf([] { Parse("solver: cbc\n"); }).rfind("run.yaml:1:1: missing required key 'models'", 0), 0u);
  EXPECT_EQ(ErrorOf([] { Parse("models:\n  - weight: 2\n"); }),
            "run.yaml:2:5: models[0]: missing required key 'file'");
  EXPECT_EQ(ErrorOf([] { Parse("models: [a]\ntraining:\n  micro_batches: [1, 0]\n"); }),
            "run.yaml:3:22: training.micro_batches[1]: expected an integer in [1, 1048576], found 0");
  EXPECT_EQ(ErrorOf([] { Parse("models: [a]\ntraining:\n  global_batch: 4\n  micro_batches: [8]\n"); }),
            "run.yaml:4:19: training.micro_batches[0]: micro-batch 8 is larger than "
            "training.global_batch 4");
  // issue 44: [1, 3] with a batch of 16 used to drop the 3 without a word.
  EXPECT_EQ(ErrorOf([] { Parse("models: [a]\ntraining:\n  global_batch: 16\n  micro_batches: [1, 3]\n"); }),
            "run.yaml:4:22: training.micro_batches[1]: micro-batch 3 does not divide "
            "training.global_batch 16: a step runs whole micro-batches");
  // The same workload twice counted twice in the common score; weight says that. The same file
  // at two sequence lengths is two workloads.
  EXPECT_EQ(ErrorOf([] { Parse("models: [a.yaml, b.yaml, ./a.yaml]\n"); }),
            "run.yaml:1:26: models[2]: './a.yaml' is listed twice: give it once (weight: 2 counts "
            "it twice in the common score)");
  EXPECT_NO_THROW(
      Parse("models:\n  - {file: a.yaml, sequence_length: 1024}\n"
            "  - {file: a.yaml, sequence_length: 2048}\n"));
  EXPECT_EQ(ErrorOf([] { Parse("models: []\n"); }),
            "run.yaml:1:9: models: expected at least one workload file, found an empty list");
  // Whole nodes: 12 accelerators are not a number of 8-GPU nodes; 4 are part of one.
  EXPECT_NE(
      ErrorOf([] { Parse("models: [a]\ncluster:\n  num_accelerators: 12\n  system: dgx-a100\n"); })
          .find("cluster.system: cluster.num_accelerators 12 is not a whole number of nvlink "
                "groups of 8"),
      std::string::npos)
      << ErrorOf(
             [] { Parse("models: [a]\ncluster:\n  num_accelerators: 12\n  system: dgx-a100\n"); });
  EXPECT_NO_THROW(Parse("models: [a]\ncluster:\n  num_accelerators: 4\n  system: dgx-a100\n"));
  // A strategy over itself was an internal error (a duplicate tensor name) at run time.
  EXPECT_NE(ErrorOf([] { Parse("models: [a]\nstrategy: {name: megatron, over: {name: megatron, width: 2}}\n"); })
                .find("run.yaml:2:41: strategy.over.name: a strategy cannot be composed over itself "
                      "('megatron')"),
            std::string::npos)
      << ErrorOf([] { Parse("models: [a]\nstrategy: {name: megatron, over: {name: megatron, width: 2}}\n"); });
  // A strategy may be listed again with other params (moe at several expert-parallel sizes),
  // not as it was.
  EXPECT_EQ(ErrorOf([] { Parse("models: [a]\nstrategy: [megatron, moe, megatron]\n"); }),
            "run.yaml:2:27: strategy[2]: strategy 'megatron' is listed twice");
  EXPECT_EQ(ErrorOf([] {
              Parse(
                  "models: [a]\nstrategy: [moe, {name: moe, params: {expert_parallel: 8}},\n"
                  "  {name: moe, params: {expert_parallel: 8}}]\n");
            }),
            "run.yaml:3:3: strategy[2]: strategy 'moe' is listed twice with the same params");
  const RunConfig swept = Parse(
      "models: [a]\nstrategy: [moe, {name: moe, params: {expert_parallel: 2}},\n"
      "  {name: moe, params: {expert_parallel: 8}}]\n");
  ASSERT_EQ(swept.strategies.size(), 3u);
  EXPECT_EQ(swept.strategies[2].component.Params().Child("expert_parallel").AsInt(), 8);
  EXPECT_EQ(ErrorOf([] { Parse("models: [a]\nsearch: {mode: fastest}\n"); }),
            "run.yaml:2:16: search.mode: expected one of hysteresis, exhaustive; found 'fastest'");
  EXPECT_EQ(ErrorOf([] { Parse("models: [a]\nsolvr: {}\n"); }).substr(0, 63),
            "run.yaml:2:1: solvr: unknown key 'solvr'; did you mean 'solver'");
}

// The cross-field rules (Validate): checked after every field was read, located at the value that
// breaks the rule; a default that a given value makes unusable is narrowed, not refused.
TEST(RunConfig, CrossFieldRulesAreLocatedAtTheValueThatBreaksThem) {
  // The order of keys does not matter: the batch written after the micro-batches still checks them.
  EXPECT_EQ(ErrorOf([] { Parse("models: [a]\ntraining: {micro_batches: [2, 6], global_batch: 8}\n"); }),
            "run.yaml:2:31: training.micro_batches[1]: micro-batch 6 does not divide "
            "training.global_batch 8: a step runs whole micro-batches");
  EXPECT_EQ(ErrorOf([] { Parse("models: [a]\ntraining: {virtual_stages: [2], pipeline_schedule: gpipe}\n"); }),
            "run.yaml:2:28: training.virtual_stages: virtual_stages applies to pipeline_schedule: "
            "interleaved only (the schedule is gpipe)");
  // The default micro-batches {1, 2, 4, 8} narrowed to the divisors of a batch of 6.
  EXPECT_EQ(Parse("models: [a]\ntraining: {global_batch: 6}\n").training.micro_batches,
            (std::vector<std::int64_t>{1, 2}));
  // An expert plan: more devices than the cluster, a width the search does not evaluate.
  EXPECT_EQ(ErrorOf([] { Parse("models:\n  - {file: a, expert: [8, 16, 1]}\ncluster: {num_accelerators: 64}\n"); }),
            "run.yaml:2:23: models[0].expert: the plan needs p·d·t = 128 accelerators, the cluster "
            "has 64");
  EXPECT_EQ(ErrorOf([] { Parse("models:\n  - {file: a, expert: [2, 2, 4]}\ntraining: {tensor_parallel_widths: [1, 2]}\n"); }),
            "run.yaml:2:30: models[0].expert[2]: tensor-parallel width 4 is not among "
            "training.tensor_parallel_widths");
  EXPECT_EQ(ErrorOf([] { Parse("models: [a]\ntraining: {hbm_gib: [80, 2e6]}\n"); }),
            "run.yaml:2:26: training.hbm_gib[1]: expected at most 1048576 GiB (2^50 bytes)");
}

// Every run config the repository ships passes the schema and its cross-field rules.
TEST(RunConfig, EveryShippedRunConfigIsValid) {
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator(std::string(PHAZE_SOURCE_DIR) + "/share/runs")) {
    if (e.path().extension() != ".yaml") continue;
    EXPECT_NO_THROW(RunConfig::ParseFile(e.path().string())) << e.path();
    ++n;
  }
  EXPECT_GE(n, 5);
}

TEST(RunConfig, SystemModelKeys) {
  RunConfig rc = Parse(
      "models: [a]\n"
      "cluster:\n"
      "  levels:\n"
      "    - {name: node, size: 8, bandwidth_bytes_per_s: 3.0e11, latency_s: 2.0e-6}\n"
      "    - {name: ib, bandwidth_bytes_per_s: 2.5e10}\n"
      "training: {recompute: [full, none, selective], pipeline_schedule: interleaved,\n"
      "           virtual_stages: [2, 4], distributed_optimizer: true,\n"
      "           gradient_reduction_overlap: 0.5, gradient_reduction_precision: bf16}\n");
  ASSERT_EQ(rc.cluster.network.Levels().size(), 2u);
  EXPECT_EQ(rc.cluster.network.Levels()[0].size, 8);
  EXPECT_EQ(rc.cluster.network.Levels()[1].bandwidth_bytes_per_s, 2.5e10);
  EXPECT_EQ(rc.training.recompute,
            (std::vector<RecomputeMode>{RecomputeMode::kFull, RecomputeMode::kNone,
                                        RecomputeMode::kSelective}));
  EXPECT_EQ(rc.training.virtual_stages, (std::vector<std::int64_t>{2, 4}));
  EXPECT_EQ(rc.training.sharding, std::vector<Sharding>{Sharding::kOptimizer});
  EXPECT_EQ(rc.training.gradient_reduction_overlap, 0.5);
  EXPECT_EQ(rc.training.GradientReductionBytes(), 2);
  EXPECT_EQ(rc.ToJson().Find("training")->Find("gradient_reduction_precision")->AsString(), "bf16");
  EXPECT_EQ(Parse("models: [a]\n").training.GradientReductionBytes(), 4);  // fp32 by default
  EXPECT_EQ(ErrorOf([] { Parse("models: [a]\ntraining: {gradient_reduction_precision: fp8}\n"); }),
            "run.yaml:2:42: training.gradient_reduction_precision: expected one of fp32, fp16, "
            "bf16; found 'fp8' (did you mean 'fp32'?)");
  EXPECT_EQ(rc.ToJson().Find("training")->Find("virtual_stages")->Dump(-1), "[2,4]");
  // Sharding: one word or a list to sweep, located errors; distributed_optimizer is its alias.
  EXPECT_EQ(Parse("models: [a]\n").training.sharding, std::vector<Sharding>{Sharding::kNone});
  EXPECT_EQ(Parse("models: [a]\ntraining: {sharding: [none, parameters]}\n").training.sharding,
            (std::vector<Sharding>{Sharding::kNone, Sharding::kParameters}));
  EXPECT_EQ(Parse("models: [a]\ntraining: {sharding: gradients}\n")
                .ToJson().Find("training")->Find("sharding")->Dump(-1),
            "[\"gradients\"]");
  EXPECT_EQ(ErrorOf([] { Parse("models: [a]\ntraining: {sharding: [none, zero3]}\n"); }),
            "run.yaml:2:29: training.sharding[1]: expected one of none, optimizer, gradients, "
            "parameters; found 'zero3'");
  EXPECT_EQ(ErrorOf([] { Parse("models: [a]\ntraining: {sharding: [none, none]}\n"); }),
            "run.yaml:2:29: training.sharding[1]: duplicate value in the list");
  EXPECT_NE(ErrorOf([] {
              Parse("models: [a]\ntraining: {sharding: none, distributed_optimizer: true}\n");
            }).find("give either distributed_optimizer or sharding"),
            std::string::npos);
  // Shard groups (hybrid sharding): all by default; all, node or device counts; a list sweeps.
  EXPECT_EQ(Parse("models: [a]\n").training.shard_groups, std::vector<std::int64_t>{kShardOverAll});
  EXPECT_EQ(Parse("models: [a]\ntraining: {shard_group: [all, node, 16]}\n").training.shard_groups,
            (std::vector<std::int64_t>{kShardOverAll, kShardWithinNode, 16}));
  EXPECT_EQ(Parse("models: [a]\ntraining: {shard_group: node}\n")
                .ToJson()
                .Find("training")
                ->Find("shard_group")
                ->Dump(-1),
            "[\"node\"]");
  EXPECT_NE(ErrorOf([] {
              Parse("models: [a]\ntraining: {shard_group: [all, 0]}\n");
            }).find("training.shard_group[1]: expected all, node or a device count"),
            std::string::npos);
  EXPECT_EQ(ErrorOf([] { Parse("models: [a]\ntraining: {shard_group: [node, node]}\n"); }),
            "run.yaml:2:32: training.shard_group[1]: duplicate value in the list");
  EXPECT_EQ(ShardSpan(kShardWithinNode, Network::LoadSystem("dgx-a100")), 8);
  EXPECT_EQ(ShardSpan(kShardWithinNode, Network::Flat(1e9)), 0);  // one level: everything
  EXPECT_EQ(ShardSpan(16, Network::LoadSystem("dgx-a100")), 16);
  // How attention runs.
  EXPECT_EQ(Parse("models: [a]\n").training.attention, AttentionKernel::kUnfused);
  EXPECT_EQ(Parse("models: [a]\ntraining: {attention: flash}\n").training.attention,
            AttentionKernel::kFlash);
  EXPECT_EQ(ErrorOf([] { Parse("models: [a]\ntraining: {attention: paged}\n"); }),
            "run.yaml:2:23: training.attention: expected one of unfused, megatron, flash, fused; "
            "found 'paged'");
  // How the loss runs, and the pipeline's bubble.
  EXPECT_EQ(Parse("models: [a]\n").training.loss, LossKernel::kMegatron);
  EXPECT_EQ(Parse("models: [a]\ntraining: {loss: torch}\n").training.loss, LossKernel::kTorch);
  EXPECT_EQ(Parse("models: [a]\ntraining: {loss: compiled}\n").training.loss,
            LossKernel::kCompiled);
  EXPECT_EQ(
      ErrorOf([] { Parse("models: [a]\ntraining: {loss: liger}\n"); }),
      "run.yaml:2:18: training.loss: expected one of megatron, torch, compiled; found 'liger'");
  // How FP8's scales are found: Transformer Engine's delayed scaling unless told.
  EXPECT_EQ(Parse("models: [a]\n").training.fp8_recipe, Fp8Recipe::kDelayed);
  EXPECT_EQ(Parse("models: [a]\ntraining: {fp8_recipe: tensorwise}\n").training.fp8_recipe,
            Fp8Recipe::kTensorwise);
  EXPECT_EQ(ErrorOf([] { Parse("models: [a]\ntraining: {fp8_recipe: mxfp8}\n"); }),
            "run.yaml:2:24: training.fp8_recipe: expected one of delayed, tensorwise; found "
            "'mxfp8'");
  EXPECT_EQ(Parse("models: [a]\n").training.bubble, PipelineBubble::kStages);
  EXPECT_EQ(Parse("models: [a]\ntraining: {bubble: bottleneck}\n")
                .ToJson().Find("training")->Find("bubble")->AsString(),
            "bottleneck");
  // The number format.
  EXPECT_EQ(Parse("models: [a]\n").training.precision, Precision::kBf16);
  EXPECT_EQ(Parse("models: [a]\ntraining: {precision: fp8}\n").training.precision, Precision::kFp8);
  EXPECT_EQ(Parse("models: [a]\ntraining: {precision: fp8}\n")
                .ToJson().Find("training")->Find("precision")->AsString(),
            "fp8");
  EXPECT_EQ(ErrorOf([] { Parse("models: [a]\ntraining: {precision: int4}\n"); }),
            "run.yaml:2:23: training.precision: expected one of bf16, fp16, fp8; found 'int4'");
  // A system preset by name (share/systems/).
  RunConfig dgx = Parse("models: [a]\ncluster: {system: dgx-a100}\n");
  EXPECT_EQ(dgx.cluster.network.Name(), "dgx-a100");
  EXPECT_EQ(dgx.cluster.network.Levels().size(), 2u);
  EXPECT_EQ(dgx.ToJson().Find("cluster")->Find("system")->AsString(), "dgx-a100");
  // Located errors.
  EXPECT_EQ(
      ErrorOf([] { Parse("models: [a]\ntraining: {recompute: [none, partial]}\n"); }),
      "run.yaml:2:30: training.recompute[1]: expected one of none, selective, per-op, full, true, "
      "false; found 'partial'");
  EXPECT_EQ(ErrorOf([] { Parse("models: [a]\ntraining: {virtual_stages: [2]}\n"); }),
            "run.yaml:2:28: training.virtual_stages: virtual_stages applies to pipeline_schedule: "
            "interleaved only (the schedule is 1f1b)");
  EXPECT_EQ(ErrorOf([] {
              Parse("models: [a]\ntraining: {pipeline_schedule: interleaved, virtual_stages: [1]}\n");
            }),
            "run.yaml:2:61: training.virtual_stages[0]: expected v >= 2 virtual stages per device "
            "(v = 1 is plain 1f1b)");
  EXPECT_NE(ErrorOf([] {
              Parse("models: [a]\ncluster: {system: dgx-a100, link_bandwidth_bytes_per_s: 1e9}\n");
            }).find("give one of levels, system, or link_bandwidth_bytes_per_s"),
            std::string::npos);
  EXPECT_NE(ErrorOf([] { Parse("models: [a]\ncluster: {system: dgx-a10}\n"); })
                .find("run.yaml:2:19: cluster.system: no system file or preset named 'dgx-a10'; "
                      "did you mean 'dgx-a100'?"),
            std::string::npos);
}

// Training recipes (share/recipes/, search/training_recipe.hpp): applied before the section's own
// keys, their name echoed; a recipe's file checked as a run config's section is.
TEST(RunConfig, TrainingRecipesApplyBeforeTheSectionsOwnKeys) {
  // The shipped recipes, as their files say.
  const RunConfig core = Parse("models: [a]\ntraining: {recipe: megatron-core-2024}\n");
  EXPECT_EQ(core.training.recipe, "megatron-core-2024");
  EXPECT_EQ(core.training.attention, AttentionKernel::kFlash);
  EXPECT_DOUBLE_EQ(core.training.gradient_reduction_overlap, 0.8);
  EXPECT_DOUBLE_EQ(core.training.tensor_parallel_overlap, 0.5);
  EXPECT_DOUBLE_EQ(
      core.ToJson().Find("training")->Find("tensor_parallel_overlap")->AsDouble(), 0.5);
  EXPECT_EQ(core.training.gradient_reduction_precision, ReductionPrecision::kFp32);
  EXPECT_EQ(core.ToJson().Find("training")->Find("recipe")->AsString(), "megatron-core-2024");
  // megatron-lm-2021 is phaze's defaults but for its softmax rule (`megatron` attention: the
  // defaults price Megatron's fused softmax at every shape, as a search on a hypothetical chip
  // should): the same effective values but for that and the name.
  const RunConfig old = Parse("models: [a]\ntraining: {recipe: megatron-lm-2021}\n");
  const RunConfig plain = Parse("models: [a]\n");
  EXPECT_EQ(plain.training.recipe, "");
  EXPECT_EQ(plain.ToJson().Find("training")->Find("recipe"), nullptr);
  EXPECT_EQ(old.training.attention, AttentionKernel::kMegatron);
  EXPECT_EQ(old.training.pipeline_sends, PipelineSends::kBatched);
  // megatron-deepspeed-2023: the same with DeepSpeed's blocking pipeline sends.
  const RunConfig ds = Parse("models: [a]\ntraining: {recipe: megatron-deepspeed-2023}\n");
  EXPECT_EQ(ds.training.attention, AttentionKernel::kMegatron);
  EXPECT_EQ(ds.training.pipeline_sends, PipelineSends::kBlocking);
  EXPECT_EQ(ds.training.gradient_reduction_overlap, 0.0);
  // torchtitan-2025: SDPA's FlashAttention, PyTorch's cross-entropy compiled (a recipe's `loss`),
  // fp32; the section's own `loss` overrides it (TorchTitan's 2024 runs: eager).
  const RunConfig tt = Parse("models: [a]\ntraining: {recipe: torchtitan-2025}\n");
  EXPECT_EQ(tt.training.attention, AttentionKernel::kFlash);
  EXPECT_EQ(tt.training.loss, LossKernel::kCompiled);
  EXPECT_EQ(Parse("models: [a]\ntraining: {recipe: torchtitan-2025, loss: torch}\n").training.loss,
            LossKernel::kTorch);
  EXPECT_EQ(tt.training.recipe, "torchtitan-2025");
  EXPECT_EQ(plain.training.loss, LossKernel::kMegatron);
  EXPECT_EQ(tt.training.gradient_reduction_precision, ReductionPrecision::kFp32);
  EXPECT_EQ(tt.training.gradient_reduction_overlap, 0.0);
  // When hybrid sharding all-reduces across its groups: FSDP2's every micro-batch (the default
  // and TorchTitan's), Megatron-FSDP's once a step (Megatron-Core's recipe).
  EXPECT_EQ(plain.training.hybrid_all_reduce, HybridAllReduce::kEveryMicroBatch);
  EXPECT_EQ(tt.training.hybrid_all_reduce, HybridAllReduce::kEveryMicroBatch);
  EXPECT_EQ(core.training.hybrid_all_reduce, HybridAllReduce::kOnceAStep);
  EXPECT_EQ(core.ToJson().Find("training")->Find("hybrid_all_reduce")->AsString(), "once_a_step");
  EXPECT_EQ(Parse("models: [a]\ntraining: {recipe: torchtitan-2025, hybrid_all_reduce: "
                  "once_a_step}\n")
                .training.hybrid_all_reduce,
            HybridAllReduce::kOnceAStep);
  EXPECT_NE(ErrorOf([] {
              Parse("models: [a]\ntraining: {hybrid_all_reduce: never}\n");
            }).find("training.hybrid_all_reduce: expected one of every_micro_batch, once_a_step"),
            std::string::npos);
  EXPECT_EQ(plain.training.pipeline_sends, PipelineSends::kBatched);
  EXPECT_EQ(plain.training.attention, AttentionKernel::kUnfused);
  EXPECT_EQ(old.training.gradient_reduction_overlap, plain.training.gradient_reduction_overlap);
  EXPECT_EQ(old.training.tensor_parallel_overlap, 0.0);  // Megatron-LM 2021: none
  EXPECT_EQ(ds.training.tensor_parallel_overlap, 0.0);
  EXPECT_EQ(plain.training.tensor_parallel_overlap, 0.0);
  EXPECT_EQ(old.training.gradient_reduction_precision, plain.training.gradient_reduction_precision);
  EXPECT_EQ(old.training.precision, plain.training.precision);
  EXPECT_EQ(old.training.sharding, plain.training.sharding);
  // The section's own keys win, wherever they are written.
  const RunConfig own = Parse(
      "models: [a]\ntraining: {gradient_reduction_overlap: 0.25, recipe: megatron-core-2024}\n");
  EXPECT_DOUBLE_EQ(own.training.gradient_reduction_overlap, 0.25);
  EXPECT_DOUBLE_EQ(Parse("models: [a]\ntraining: {recipe: megatron-core-2024, "
                         "tensor_parallel_overlap: 0}\n")
                       .training.tensor_parallel_overlap,
                   0.0);
  EXPECT_EQ(ErrorOf([] { Parse("models: [a]\ntraining: {tensor_parallel_overlap: 1.5}\n"); }),
            "run.yaml:2:37: training.tensor_parallel_overlap: expected a fraction in [0, 1]");
  EXPECT_EQ(own.training.attention, AttentionKernel::kFlash);
  // A default recipe (phaze plan's) stands in only where the document names none.
  const auto parse_with = [](const std::string& text, const std::string& recipe) {
    return RunConfig::Parse(ConfigNode::ParseString(text, "run.yaml"), true, recipe);
  };
  EXPECT_EQ(parse_with("models: [a]\n", "megatron-core-2024").training.attention,
            AttentionKernel::kFlash);
  EXPECT_DOUBLE_EQ(parse_with("models: [a]\ntraining: {gradient_reduction_overlap: 0}\n",
                              "megatron-core-2024")
                       .training.gradient_reduction_overlap,
                   0.0);
  EXPECT_EQ(parse_with("models: [a]\ntraining: {recipe: megatron-lm-2021}\n", "megatron-core-2024")
                .training.attention,
            AttentionKernel::kMegatron);
  // A file beside the run config, and its errors located in it.
  const phaze::testing::TempDir dir;
  using phaze::testing::WriteFile;
  WriteFile(dir / "mine.yaml", "name: mine\ntraining:\n  precision: fp8\n  global_batch: 8\n");
  const auto in_dir = [&](const std::string& text) {
    WriteFile(dir / "run.yaml", text);
    return RunConfig::ParseFile((dir / "run.yaml").string());
  };
  EXPECT_NE(ErrorOf([&] { in_dir("models: [a]\ntraining: {recipe: ./mine.yaml}\n"); })
                .find("mine.yaml:4:3: training.global_batch: unknown key 'global_batch'"),
            std::string::npos);
  WriteFile(dir / "mine.yaml", "name: mine\ntraining:\n  precision: fp8\n  sharding: optimizer\n");
  const RunConfig mine = in_dir("models: [a]\ntraining: {recipe: ./mine.yaml}\n");
  EXPECT_EQ(mine.training.recipe, "mine");
  EXPECT_EQ(mine.training.precision, Precision::kFp8);
  EXPECT_EQ(mine.training.sharding, std::vector<Sharding>{Sharding::kOptimizer});
  EXPECT_NE(ErrorOf([] { Parse("models: [a]\ntraining: {recipe: megatron-core-2023}\n"); })
                .find("run.yaml:2:20: training.recipe: no recipe file or preset named "
                      "'megatron-core-2023'; did you mean 'megatron-core-2024'?"),
            std::string::npos);
}

TEST(RunConfig, UnknownComponentNamesListTheRegisteredOnes) {
  Registry registry;
  RegisterBuiltin(registry, "test-solvers", "0", "two fake backends", [](Registry& r) {
    r.AddSolverBackend("lpsolve", "", [](const ConfigNode&) { return nullptr; });
    r.AddSolverBackend("cbc", "", [](const ConfigNode&) { return nullptr; });
  });
  RunConfig rc = Parse("models: [a]\nsolver:\n  backend: gurobi\n");
  EXPECT_EQ(ErrorOf([&] { rc.CheckComponents(registry, true, false, false); }),
            "run.yaml:3:12: solver.backend: no solver backend named 'gurobi'; registered: cbc, "
            "lpsolve");
  RunConfig ok = Parse("models: [a]\nsolver: lpsolve\n");
  EXPECT_NO_THROW(ok.CheckComponents(registry, true, false, false));
  // An estimator is needed but none is registered: the message says how to get one.
  EXPECT_NE(ErrorOf([&] { ok.CheckComponents(registry, false, true, false); })
                .find("estimator.name (default 'device'): no estimator named 'device'; none "
                      "registered"),
            std::string::npos);
}

}  // namespace
}  // namespace phaze
