// The run configuration (`phaze search --config RUN.yaml`): which models, which architecture
// space, which cluster and training parameters, which plugins (solver backend, estimator,
// parallelism strategy — by registered name), search options and outputs. Parse → validate →
// use: Parse() checks structure, types and ranges with located errors; CheckComponents() checks the
// plugin names against a Registry; ToJson() echoes every effective value, defaults included, into
// results. The schema with every key, unit and default is documented in share/config/README.md and
// grows with the engines that consume it. All defaults live in this header.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "phaze/core/config_node.hpp"
#include "phaze/core/json.hpp"
#include "phaze/graph/attention_kernel.hpp"
#include "phaze/graph/layer_graph.hpp"
#include "phaze/graph/loss_kernel.hpp"
#include "phaze/graph/precision.hpp"
#include "phaze/ilp/solver_backend.hpp"
#include "phaze/network/network.hpp"
#include "phaze/plugin/registry.hpp"
#include "phaze/strategy/composed_strategy.hpp"
#include "phaze/system/step_model.hpp"

namespace phaze {

// search.mode, search.mean, search.prune (their YAML/JSON words: ToString).
enum class SearchMode { kHysteresis, kExhaustive };
enum class ScoreMean { kArithmetic, kWeighted, kGeometric };
enum class PruneMode { kNone, kWinners, kPareto };
std::string_view ToString(SearchMode mode);  // hysteresis | exhaustive
std::string_view ToString(ScoreMean mean);   // arithmetic | weighted | geometric
std::string_view ToString(PruneMode prune);  // none | winners | pareto
// training.gradient_reduction_precision: the number format gradients are reduced in.
enum class ReductionPrecision { kFp32, kFp16, kBf16 };
std::string_view ToString(ReductionPrecision precision);  // fp32 | fp16 | bf16
// search.objective: what a config's score per model is (DESIGN §11).
enum class SearchObjective { kThroughput, kThroughputPerWatt, kThroughputPerCost };
// throughput | throughput_per_watt | throughput_per_cost
std::string_view ToString(SearchObjective objective);

// training.shard_group's words beside device counts (RunConfig::Training::shard_groups).
inline constexpr std::int64_t kShardOverAll = 0;
inline constexpr std::int64_t kShardWithinNode = -1;
std::string ShardGroupText(std::int64_t group);  // "all", "node", or the device count
// The group a word names (all | node | a device count from 1 to limits::kAccelerators); nullopt
// when it names none.
std::optional<std::int64_t> ParseShardGroup(const std::string& word);
// What ParseShardGroup reads, for errors: "all, node or a device count from 1 to …".
std::string ShardGroupChoices();
// StepSettings::shard_span of `group` on `network`: `node` is its innermost level's size (0, all,
// on a flat network, whose one level joins every device).
std::int64_t ShardSpan(std::int64_t group, const Network& network);

// An expert (hand-chosen) placement {p, d, t}: pipeline stages, data- and tensor-parallel widths.
struct ExpertPlacement {
  std::int64_t pipeline_stages = 1;
  std::int64_t data_parallel = 1;
  std::int64_t tensor_parallel = 1;
};

struct ModelEntry {
  std::string file;       // as written
  std::string resolved;   // relative to the run config's directory
  bool hf = false;        // `hf: FILE`: a Hugging Face config.json (`file:` takes either kind)
  std::int64_t sequence_length = 0;  // overrides the model's own (0: keep it)
  double weight = 1.0;    // for the weighted mean of the common config
  std::optional<ExpertPlacement> expert;  // `expert: [p, d, t]`: evaluated on every baseline
  std::vector<std::string> presets;       // baseline architectures for this model only (Spotlight)
  // Where `file` and each of `presets` were written, for errors inside those files (LoadNamed).
  std::optional<ConfigNode> file_node;
  std::vector<ConfigNode> preset_nodes;
};

struct RunConfig {
  std::string source;  // the config file
  // Settings the file gives that change nothing as it is set ("FILE:L:C: key: … has no
  // effect …"): a model's weight under a mean that ignores weights, search.prune in hysteresis
  // mode. The search prints them as warnings.
  std::vector<std::string> warnings;
  std::vector<ModelEntry> models;

  struct Arch {
    std::string space;                 // search-space file ("" = built-in paper space)
    std::vector<std::string> presets = {"tpuv4"};  // baselines for every model; the first is the
                                                   // reference of the speed-ups
    std::optional<ConfigNode> space_node;       // where `space` and `presets` were written
    std::vector<ConfigNode> preset_nodes;
    // Average power per device the winning plan may draw (W); 0 = no budget. A config above it
    // is infeasible; one whose static power alone exceeds it is not evaluated (a bound).
    double power_budget_w = 0;
  } arch;

  struct Cluster {
    std::int64_t num_accelerators = 1024;
    // `levels:` (innermost first), a `system:` file, or the paper's flat link
    // (`link_bandwidth_bytes_per_s`, `link_latency_s`; default 4 GiB/s, the paper's PCIe-3 link).
    Network network = Network::Flat(4294967296.0, 0.0);
  } cluster;

  struct Training {
    // The recipe applied before the section's own keys (share/recipes/, training_recipe.hpp);
    // "" when none.
    std::string recipe;
    std::int64_t global_batch = 4096;
    std::vector<std::int64_t> micro_batches = {1, 2, 4, 8};
    std::vector<std::int64_t> tensor_parallel_widths = {1, 2, 4, 8};
    std::vector<double> hbm_gib = {32, 64, 80};
    std::vector<RecomputeMode> recompute = {RecomputeMode::kNone, RecomputeMode::kFull};
    OptimizerKind optimizer = OptimizerKind::kAdamMixed;
    PipelineSchedule pipeline_schedule = PipelineSchedule::k1F1B;
    std::vector<std::int64_t> virtual_stages = {2};  // v explored when interleaved
    // What data-parallel replicas divide among themselves (system/step_model.hpp): none |
    // optimizer (ZeRO-1, Megatron's distributed optimizer) | gradients (ZeRO-2) | parameters
    // (ZeRO-3, FSDP); a list is swept. `distributed_optimizer: true` is `sharding: optimizer`.
    std::vector<Sharding> sharding = {Sharding::kNone};
    // Over how many devices the sharding divides (hybrid sharding, HSDP): each entry all
    // (kShardOverAll: every data-parallel replica, plain ZeRO/FSDP), node (kShardWithinNode: the
    // replicas within one node of the network's innermost level, replicated across nodes), or a
    // device count N (the replicas within N consecutive devices; ShardReplicas). A list is swept
    // with each sharding but none.
    std::vector<std::int64_t> shard_groups = {0};
    // When hybrid sharding of the gradients or parameters all-reduces the shards across the
    // groups (system/step_model.hpp): every_micro_batch (FSDP2, TorchTitan) | once_a_step
    // (Megatron-FSDP; the megatron-core-2024 recipe).
    HybridAllReduce hybrid_all_reduce = HybridAllReduce::kEveryMicroBatch;
    // The number format (graph/precision.hpp): bf16 | fp16 (the same costs) | fp8 (Transformer
    // Engine's FP8 GEMMs in the blocks, on a device with fp8_tensor_ratio > 0).
    Precision precision = Precision::kBf16;
    // How FP8's scales are found (graph/precision.hpp): delayed (Transformer Engine's default,
    // Megatron-LM's --fp8-recipe delayed: from an amax history) | tensorwise (per-tensor current
    // scaling: torchao's float8 training as TorchTitan runs it, TE's Float8CurrentScaling).
    Fp8Recipe fp8_recipe = Fp8Recipe::kDelayed;
    // How attention runs (graph/attention_kernel.hpp): unfused (the paper's and Megatron-LM's 2021
    // graphs) | flash (FlashAttention: the core's s² tensors stay on chip, recomputed in backward).
    AttentionKernel attention = AttentionKernel::kUnfused;
    // How the FP32 cross-entropy runs (graph/loss_kernel.hpp): megatron (Megatron-LM's
    // vocab-parallel loss, six kernels forward) | torch (F.cross_entropy on FP32 logits:
    // TorchTitan, Hugging Face).
    LossKernel loss = LossKernel::kMegatron;
    // The pipeline's fill and drain (system/pipeline.hpp): stages (each other stage's own load
    // once) | bottleneck (the paper's (m + p − 1) slots of the slowest stage's load).
    PipelineBubble bubble = PipelineBubble::kStages;
    // How the pipeline's sends wait (system/step_model.hpp PipelineSends): batched (Megatron-LM's
    // paired send and receive) | blocking (DeepSpeed's pipeline engine: every send holds its
    // sender too).
    PipelineSends pipeline_sends = PipelineSends::kBatched;
    // The share of the first stage's last backward (and next forward) the data-parallel reduction
    // hides behind (system/gradient_sync.hpp); 0 = after backward.
    double gradient_reduction_overlap = 0;
    // The share of each tensor-parallel all-gather and reduce-scatter in the blocks that runs in
    // chunks beside the weight GEMM it feeds or is fed by (graph/tensor_parallel_overlap.hpp:
    // Megatron-LM --tp-comm-overlap, TorchTitan's async TP); 0 = none (the architecture's
    // collective_overlap, as for every other collective).
    double tensor_parallel_overlap = 0;
    // FP8 weights gathered in FP8 (Megatron-LM's --fp8-param-gather, TorchTitan's
    // enable_fsdp_float8_all_gather): with training.precision fp8, every all-gather of weights the
    // sharding runs moves the FP8 GEMMs' weights at one byte a parameter, and FSDP holds them
    // gathered at that size (PlacementLayer::gathered_weight_bytes); off = 16-bit gathers.
    bool fp8_param_gather = false;
    // Where those weights live when gathered in FP8 (graph/precision.hpp Fp8ParamStorage): fp8
    // (Megatron-LM: its --fp8-param-gather keeps them in FP8 only) | 16bit (TorchTitan).
    Fp8ParamStorage fp8_param_storage = Fp8ParamStorage::kFp8;
    // The number format gradients are reduced in across data-parallel replicas (and between the
    // tied embedding's stages): fp32 (Megatron with bf16, or with --accumulate-allreduce-grads-
    // in-fp32) | fp16 | bf16 (Megatron with --fp16 reduces its fp16 gradient buffer).
    ReductionPrecision gradient_reduction_precision = ReductionPrecision::kFp32;
    // Tokens to train on (e.g. 300e9): outputs give the time to train them and its cost; 0 = none.
    double tokens = 0;
    // Whether a plan under `sharding` keeps the FP8 GEMMs' weights in FP8 only (fp8 precision,
    // fp8_param_gather, fp8_param_storage fp8, a sharding: Megatron-LM takes --fp8-param-gather
    // with the distributed optimizer or FSDP only).
    bool Fp8WeightsOnly(Sharding under) const {
      return precision == Precision::kFp8 && fp8_param_gather &&
             fp8_param_storage == Fp8ParamStorage::kFp8 && under != Sharding::kNone;
    }
    // Bytes reduced per parameter: 4 for fp32, 2 otherwise.
    int GradientReductionBytes() const {
      return gradient_reduction_precision == ReductionPrecision::kFp32 ? 4 : 2;
    }
  } training;

  struct Solver {
    ComponentChoice backend{"cbc", std::nullopt, std::nullopt};
    double time_limit_s = 0.0;      // per ILP segment; 0 = none (time limits are not reproducible)
    std::int64_t node_limit = 100;  // branch-and-bound nodes per ILP solve; 0 = none
    std::int64_t search_nodes = 500000;  // schedule search before the ILP (SchedulerOptions)
    std::int64_t max_exact_ops = 256;    // larger segments: list schedule + bound (ditto)
    std::int64_t max_ilp_variables = 1000;  // larger ILPs are not solved (ditto)
    double relative_gap = 1e-4;
    double absolute_gap = 0.0;
    std::int64_t threads = 1;
    bool verbose = false;
    // These settings as the backend's options (a zero time limit becomes "none").
    SolveOptions Options() const;
  } solver;

  ComponentChoice estimator{"device", std::nullopt, std::nullopt};
  // The parallelism strategies searched (`strategy: S`, `strategy: {name, params, over}` or a list
  // of them): every one slices every model, the DP runs on each, the best plan records which won.
  // `over: {name: I, width: k}`: I splits k ways over consecutive ranks and S splits the rest of
  // each width t (t/k ways) across those groups (ComposedStrategy).
  std::vector<StrategyChoice> strategies{StrategyChoice{}};

  struct Search {
    SearchMode mode = SearchMode::kExhaustive;  // hysteresis: the paper's heuristic
    std::int64_t hysteresis_level = 6;
    double bucket_width_mm2 = 0.01;
    std::int64_t max_configs = 0;  // 0 = no limit
    double max_seconds = 0;        // 0 = no limit
    // The checkpoint journal (search_checkpoint.hpp) is written at most this often; 0: after
    // every config.
    double checkpoint_seconds = 30;
    // Exhaustive mode: also replay what the paper's hysteresis would have found
    // (hysteresis_comparison.hpp), reported beside the optimum.
    bool compare_hysteresis = false;
    ScoreMean mean = ScoreMean::kArithmetic;
    std::int64_t threads = 0;      // 0 = hardware concurrency
    // Exhaustive mode only (search/arch_search.hpp): skip the exact evaluation of a config whose
    // upper bounds cannot beat what is known.
    PruneMode prune = PruneMode::kWinners;
    // What a model's score on a config is: samples/s, samples/s per watt of a device, or
    // samples/s per dollar-hour of the cluster (search/model_evaluator.hpp, ObjectiveValue).
    SearchObjective objective = SearchObjective::kThroughput;
  } search;

  // The cost model (arch/cost_model.hpp): its constants, and a rental price per device-hour that
  // overrides every architecture's (0: the preset's hourly_usd, else ownership).
  struct Cost {
    std::string file;  // "" = share/cost/cost.yaml; else relative to the run config
    double hourly_usd = 0;
  } cost;

  struct Output {
    std::string directory = "phaze-results";
    bool plots = true;
  } output;

  // Parses and validates a run-config document. `require_models`: models must be non-empty.
  // `default_recipe`: the training recipe applied when the document names none (before its own
  // training keys, as `training.recipe` would be); "" for none.
  static RunConfig Parse(const ConfigNode& root, bool require_models = true,
                         const std::string& default_recipe = "");
  static RunConfig ParseFile(const std::string& path, bool require_models = true,
                             const std::string& default_recipe = "");
  // The defaults, as if from an empty document.
  static RunConfig Defaults();

  // Throws ConfigError "FILE:L:C: solver.backend: no solver backend named 'x'; registered: …" for
  // each named component missing from the registry. `check_*` select which kinds are needed.
  void CheckComponents(const Registry& registry, bool check_solver, bool check_estimator,
                       bool check_strategy) const;

  // The architecture space's file: arch.space resolved against the config's directory, or the
  // paper's space (share/arch/paper-space.yaml) when none or `paper` is given.
  std::string SpaceFile() const;

  Json ToJson() const;
};

// The (sharding, shard group) pairs `training` sweeps: each sharding with each shard group, none
// once (with kShardOverAll: it divides nothing).
std::vector<std::pair<Sharding, std::int64_t>> ShardingsOf(const RunConfig::Training& training);

// Reads the training keys `t` holds into `training`: a run config's training section or a recipe's
// (search/training_recipe.hpp). Each key present overrides; bad values fail with their location.
// The caller checks which keys are allowed.
void ReadTrainingKeys(const ConfigNode& t, RunConfig::Training& training);

}  // namespace phaze
