// Runs the real `phaze` binary: help, version, plugin listing, fixture plugin failures, config
// errors and exit codes (0 success, 1 no feasible result, 2 usage/config/plugin, 3 internal).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "phaze/build_fingerprint.hpp"
#include "phaze/core/config_node.hpp"
#include "phaze/core/error.hpp"
#include "phaze/core/files.hpp"
#include "phaze/core/output_directory.hpp"
#include "test_util.hpp"
#include "tiny_search.hpp"
#include "test_paths.hpp"

namespace phaze {
namespace {

const std::string kPhaze = PHAZE_BINARY;
const std::string kFixtures = PHAZE_FIXTURE_DIR;
const std::string kPlugins = PHAZE_PLUGIN_DIR;

testing::CommandResult Phaze(const std::string& args, const std::string& env = "") {
  return testing::Run("env -u PHAZE_PLUGIN_PATH " + env + " " + kPhaze + " " + args);
}

// A predict JSON's first stage's memory part (weight_bytes, gradient_bytes, …).
double FirstStageMemory(const ConfigNode& predicted, const char* part) {
  return predicted.Child("result")
      .Child("plan")
      .Child("stages")
      .Elements()
      .at(0)
      .Child("memory")
      .Child(part)
      .AsDouble();
}

// A usage error (exit 2) whose stderr says `message` (a macro, so failures name the caller's line).
#define EXPECT_USAGE_ERROR(result, message)                                   \
  do {                                                                        \
    EXPECT_EQ((result).exit_code, 2) << (result).err;                         \
    EXPECT_NE((result).err.find(message), std::string::npos) << (result).err; \
  } while (false)

// `command` (ending in "-o ") run once per value of `flag`, each writing its own JSON in `dir`:
// their `result` objects (predict.json's), in the order of `values`; a failed run fails the test
// and is left out.
std::vector<ConfigNode> ResultsOver(const std::string& command, const std::string& flag,
                                    const std::vector<std::string>& values,
                                    const std::filesystem::path& dir) {
  std::vector<ConfigNode> results;
  for (const std::string& value : values) {
    const std::string out = (dir / (value + ".json")).string();
    auto run = Phaze(command + out + " " + flag + " " + value);
    EXPECT_EQ(run.exit_code, 0) << flag << " " << value << ": " << run.err;
    if (run.exit_code == 0) results.push_back(ConfigNode::ParseFile(out).Child("result"));
  }
  return results;
}

TEST(Cli, HelpListsCommandsAndExitCodes) {
  auto r = Phaze("--help");
  EXPECT_EQ(r.exit_code, 0);
  for (const char* s : {"Usage: phaze", "search", "place", "schedule", "graph", "arch", "plugins",
                        "--plugin-dir", "Exit codes"}) {
    EXPECT_NE(r.out.find(s), std::string::npos) << s;
  }
  auto c = Phaze("plugins --help");
  EXPECT_EQ(c.exit_code, 0);
  EXPECT_NE(c.out.find("Usage: phaze plugins"), std::string::npos);
}

TEST(Cli, Version) {
  auto r = Phaze("--version");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out.rfind("phaze 0.", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("plugin ABI 9, build " + std::string(kBuildFingerprint) + ")"),
            std::string::npos);
}

TEST(Cli, PluginsFindsTheDefaultDirectoryWithoutFlags) {
  auto r = Phaze("plugins");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("KIND"), std::string::npos);
  for (const char* name : {"cbc", "lpsolve"}) {
    std::string row = std::string("solver     ") + name;
    EXPECT_NE(r.out.find(row), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(kPlugins + "/phaze-solver-" + name + ".so"), std::string::npos) << r.out;
  }
  for (const char* name : {"analytic", "sunstone", "table"}) {
    EXPECT_NE(r.out.find(std::string("estimator  ") + name), std::string::npos) << r.out;
  }
  EXPECT_NE(r.out.find("1.0.0"), std::string::npos);
}

TEST(Cli, PluginsFromFlagsAndEnvironmentAsJson) {
  testing::TempDir dir;
  auto json = dir / "plugins.json";
  auto r =
      Phaze("plugins --no-default-plugins --plugin " + kFixtures + "/good.so -o " + json.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("fixture-solver"), std::string::npos);
  std::string text = testing::Slurp(json);
  EXPECT_NE(text.find("\"name\": \"fixture-good\""), std::string::npos) << text;
  EXPECT_NE(text.find("\"version\": \"2.3.4\""), std::string::npos) << text;
  EXPECT_NE(text.find("\"kind\": \"solver\""), std::string::npos) << text;

  auto e = Phaze("plugins --no-default-plugins", "PHAZE_PLUGIN_PATH=" + kFixtures + "/good.so");
  ASSERT_EQ(e.exit_code, 0) << e.err;
  EXPECT_NE(e.out.find("fixture-solver"), std::string::npos);

  auto none = Phaze("plugins --no-default-plugins");
  EXPECT_EQ(none.exit_code, 0);
  EXPECT_NE(none.out.find("no plugins found"), std::string::npos);
}

struct FixtureCase {
  const char* file;
  const char* expected;  // substring of stderr
};

TEST(Cli, BrokenPluginsExitWithCode2AndTheReason) {
  const FixtureCase cases[] = {
      {"no_entry",
       "': not a Phaze plugin: it does not export the entry symbol 'phaze_plugin_handshake'"},
      {"wrong_abi", "': wrong plugin ABI version: got 999, this phaze supports 9"},
      {"undefined_symbol", "': cannot load: "},
      {"undefined_symbol", "undefined symbol: phaze_fixture_missing_function"},
  };
  for (const auto& c : cases) {
    auto r = Phaze(std::string("plugins --plugin ") + kFixtures + "/" + c.file + ".so");
    EXPECT_EQ(r.exit_code, 2) << c.file;
    EXPECT_EQ(r.err.rfind("error: plugin '" + kFixtures + "/" + c.file + ".so", 0), 0u) << r.err;
    EXPECT_NE(r.err.find(c.expected), std::string::npos) << r.err;
  }
  auto dup = Phaze("plugins --plugin-dir " + kFixtures);  // dup_a and dup_b are both in there
  EXPECT_EQ(dup.exit_code, 2);
  EXPECT_EQ(dup.err, "error: duplicate solver backend 'fixture-dup': registered by " + kFixtures +
                         "/dup_a.so and by " + kFixtures + "/dup_b.so\n");
  auto missing = Phaze("plugins --plugin-dir /nonexistent/dir");
  EXPECT_USAGE_ERROR(missing, "--plugin-dir: plugin directory '/nonexistent/dir' does not exist");
}

TEST(Cli, UsageErrorsExitWithCode2) {
  auto bad_flag = Phaze("plugins --frobnicate");
  EXPECT_USAGE_ERROR(bad_flag, "unrecognised option '--frobnicate'");
  auto typo = Phaze("serch");
  EXPECT_USAGE_ERROR(typo, "unknown command 'serch'; did you mean 'search'?");
  auto none = Phaze("");
  EXPECT_USAGE_ERROR(none, "no command given");
  auto missing_value = Phaze("plugins --plugin");
  EXPECT_EQ(missing_value.exit_code, 2);
  auto both = Phaze("plugins -q -v");
  EXPECT_EQ(both.exit_code, 2);
}

TEST(Cli, ScheduleAGraphFileWithEitherSolver) {
  testing::TempDir dir;
  // On two cores of each class: a (fused) takes 1 µs on all cores, where it runs alone on the
  // chip, against 4 µs on one pair; b and c (vector) take 4 µs, d (vector) 1 µs, on one core
  // each. Two vector cores hold 9 µs of work that does not split better than 5 + 4, so 1 + 5 =
  // 6 µs. The bounds stop at 1 + 9 / 2 = 5.5 µs; the schedule search proves 6, and so does the
  // ILP without it, re-solving once with core-assignment rows (without them b, c and d would
  // share the two cores as if divisible).
  testing::WriteFile(dir / "g.json", R"({"name": "four", "num_tc": 2, "num_vc": 2, "ops": [
    {"name": "a", "class": "fused", "single_core_s": 4e-6, "all_cores_s": 1e-6},
    {"name": "b", "class": "vector", "single_core_s": 4e-6, "all_cores_s": 4e-6},
    {"name": "c", "class": "vector", "single_core_s": 4e-6, "all_cores_s": 4e-6},
    {"name": "d", "class": "vector", "single_core_s": 1e-6, "all_cores_s": 3e-6}]})");
  auto searched = Phaze("schedule --graph " + (dir / "g.json").string());
  ASSERT_EQ(searched.exit_code, 0) << searched.err;
  EXPECT_NE(searched.out.find("four: makespan 6.000 µs (sequential 12.000 µs, 2.000x) — search, "
                              "optimal, gap 0;"),
            std::string::npos)
      << searched.out;
  for (const char* solver : {"cbc", "lpsolve"}) {
    const auto json = dir / (std::string(solver) + ".json");
    auto r = Phaze("schedule --search-nodes 0 --graph " + (dir / "g.json").string() + " --solver " + solver +
                   " -o " + json.string() + " --gantt " + (dir / "g.svg").string() +
                   " --dump-ilp " + (dir / "ilp").string());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("four: makespan 6.000 µs (sequential 12.000 µs"), std::string::npos)
        << r.out;
    const std::string doc = testing::Slurp(json);
    const auto at = doc.find("\"makespan_s\": ");
    ASSERT_NE(at, std::string::npos) << doc;
    EXPECT_NEAR(std::stod(doc.substr(at + 14)), 6e-6, 1e-15) << doc;
    EXPECT_NE(doc.find("\"path\": \"ilp\""), std::string::npos) << doc;
    EXPECT_NE(doc.find(std::string("\"solver\": \"") + solver + "\""), std::string::npos);
    EXPECT_NE(testing::Slurp(dir / "g.svg").find("<svg"), std::string::npos);
    EXPECT_TRUE(std::filesystem::exists(dir / "ilp" / "four-solve0.lp"));
    EXPECT_TRUE(std::filesystem::exists(dir / "ilp" / "four-solve1.lp"));
  }
  testing::WriteFile(dir / "bad.json", R"({"num_tc": 1, "num_vc": 1, "ops": [
    {"name": "a", "class": "matrix", "single_core_s": 1, "all_cores_s": 1}]})");
  auto bad = Phaze("schedule --graph " + (dir / "bad.json").string());
  EXPECT_USAGE_ERROR(bad, "bad.json:2:28: ops[0].class: expected tensor, vector, fused or link");
  testing::WriteFile(dir / "edge.json", R"({"num_tc": 1, "num_vc": 1, "ops": [
    {"name": "a", "class": "tensor", "single_core_s": 1, "all_cores_s": 1}],
    "edges": [{"from": "a", "to": "z"}]})");
  auto edge = Phaze("schedule --graph " + (dir / "edge.json").string());
  EXPECT_USAGE_ERROR(edge, "edges[0].to: no op named 'z'");
}

TEST(Cli, ScheduleALayerOfAWorkload) {
  const std::string model = std::string(PHAZE_SOURCE_DIR) + "/workloads/tiny-gpt.yaml";
  auto r = Phaze("schedule --model " + model + " --arch tpuv4 --pass backward --width 2");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("block backward, b=1, t=2, on tpuv4: makespan"), std::string::npos) << r.out;
  // Megatron's f: identity forward, all-reduce of the gradient backward — a link op.
  EXPECT_NE(r.out.find("ln2.tp_copy.backward                     link   single"), std::string::npos)
      << r.out;
  auto layer = Phaze("schedule --model " + model + " --arch tpuv4 --layer bogus");
  EXPECT_USAGE_ERROR(layer, "no unique layer 'bogus'; the model has: 0 embedding, 1 block, 2 head");
  auto both = Phaze("schedule --model " + model);
  EXPECT_USAGE_ERROR(both, "--model needs --arch");
}

// --strategy takes the run config's params for the strategy it names, as predict and graph do:
// the moe strategy with split experts gathers the dispatched tokens over the width.
TEST(Cli, ScheduleTakesTheRunConfigsStrategyParams) {
  testing::TempDir dir;
  testing::WriteFile(dir / "run.yaml",
                     "strategy: {name: moe, params: {expert_parallel: 2, "
                     "expert_tensor_parallel: width}}\n");
  const std::string schedule = " schedule --model " + std::string(PHAZE_SOURCE_DIR) +
                               "/workloads/mixtral-8x7b.yaml --arch h100-sxm-80gb --width 2 "
                               "--strategy moe";
  auto split = Phaze("--config " + (dir / "run.yaml").string() + schedule);
  ASSERT_EQ(split.exit_code, 0) << split.err;
  EXPECT_NE(split.out.find("mlp.dispatch.all_to_all.all_gather "), std::string::npos) << split.out;
  auto whole = Phaze(schedule);
  ASSERT_EQ(whole.exit_code, 0) << whole.err;
  EXPECT_EQ(whole.out.find("mlp.dispatch.all_to_all.all_gather"), std::string::npos) << whole.out;
}

TEST(Cli, ScheduleAppliesTheRunsAttentionKernelAndNumberFormat) {
  // As the search and predict do: FlashAttention re-runs the scores in backward, on chip; FP8
  // needs an FP8 rate. The flag and the run config's training section give the same schedule.
  testing::TempDir dir;
  const std::string model = std::string(PHAZE_SOURCE_DIR) + "/workloads/tiny-gpt.yaml";
  const std::string base = "schedule --model " + model + " --arch h100-sxm-80gb --pass backward";
  auto unfused = Phaze(base);
  ASSERT_EQ(unfused.exit_code, 0) << unfused.err;
  EXPECT_EQ(unfused.out.find("flash:attn.scores"), std::string::npos) << unfused.out;
  auto flag = Phaze(base + " --attention flash");
  ASSERT_EQ(flag.exit_code, 0) << flag.err;
  EXPECT_NE(flag.out.find("flash:attn.scores"), std::string::npos) << flag.out;
  testing::WriteFile(dir / "run.yaml", "models: [m.yaml]\ntraining: {attention: flash}\n");
  auto config = Phaze("--config " + (dir / "run.yaml").string() + " " + base);
  ASSERT_EQ(config.exit_code, 0) << config.err;
  EXPECT_EQ(config.out, flag.out);
  auto fp8 = Phaze("schedule --model " + model + " --arch a100-sxm-80gb --precision fp8");
  EXPECT_USAGE_ERROR(fp8, "has no FP8 tensor rate");
  auto graph = Phaze("schedule --graph g.json --attention flash");
  EXPECT_USAGE_ERROR(graph, "--attention applies to --model, not to --graph");
}

TEST(Cli, PlaceRunsTheDpOnALayerTable) {
  testing::TempDir dir;
  const std::string example = std::string(PHAZE_SOURCE_DIR) + "/share/placement/example-chain.yaml";
  auto json = dir / "plan.json";
  // Hand-computed in the example file: 2 stages of 2 layers, d = 1, (8 + 1)·6 s = 54 s.
  auto r = Phaze("place --layers " + example + " -o " + json.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("time per batch  54 s"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("t=1 d=1 s=2"), std::string::npos) << r.out;
  // The plan as every output writes it (PlacementPlanToJson).
  const ConfigNode j = ConfigNode::ParseFile(json.string());
  EXPECT_TRUE(j.Child("feasible").AsBool());
  EXPECT_EQ(j.Child("time_per_batch_s").AsDouble(), 54);
  EXPECT_DOUBLE_EQ(j.Child("throughput_samples_per_s").AsDouble(), 8.0 / 54);
  const auto stages = j.Child("plan").Child("stages").Elements();
  ASSERT_EQ(stages.size(), 2u);
  EXPECT_EQ(stages[0].Child("first_layer").AsString(), "l0");
  EXPECT_EQ(stages[0].Child("last_layer").AsString(), "l1");
  EXPECT_EQ(stages[0].Child("layers").AsInt(), 2);
  EXPECT_EQ(stages[1].Child("first_layer").AsString(), "l2");

  // Fixed strategy {1, 2, 1}: 4·12 + 4·(1/2)·4e9/1e9 = 56 s; {3, 2, 1} needs 6 > 2 devices: exit 1.
  auto fixed = Phaze("place --layers " + example + " --fixed 1,2,1");
  EXPECT_EQ(fixed.exit_code, 0);
  EXPECT_NE(fixed.out.find("time per batch  56 s"), std::string::npos) << fixed.out;
  auto infeasible = Phaze("place --layers " + example + " --fixed 3,2,1");
  EXPECT_EQ(infeasible.exit_code, 1);
  EXPECT_NE(infeasible.err.find("needs 6 accelerators, only 2 available"), std::string::npos);
  EXPECT_EQ(Phaze("place --layers " + example + " --fixed 3,2").exit_code, 2);

  auto bad = dir / "bad.json";
  testing::WriteFile(bad,
                     "{\"num_accelerators\": 4, \"global_batch\": 8, \"micro_batch\": 2,\n"
                     " \"link_bandwidth_bytes_per_s\": 1e9, \"hbm_bytes\": 1e9,\n"
                     " \"widths\": {\"1\": {\"layers\": [{\"name\": \"a\", \"forward_s\": 1,\n"
                     " \"backward_s\": -2, \"weight_bytes\": 0, \"activation_bytes\": 0}]}}}\n");
  auto located = Phaze("place --layers " + bad.string());
  EXPECT_EQ(located.exit_code, 2);
  EXPECT_EQ(located.err, "error: " + bad.string() +
                             ":4:16: widths.1.layers[0].backward_s: expected a non-negative number "
                             "(>= 0), found -2\n");
}

TEST(Cli, SearchReportsConfigErrorsWithLocation) {
  testing::TempDir dir;
  auto run = dir / "run.yaml";
  testing::WriteFile(run, "models: [m.yaml]\nsolver:\n  backend: gurobi\n");
  auto r = Phaze("search --config " + run.string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "error: " + run.string() +
                       ":3:12: solver.backend: no solver backend named 'gurobi'; registered: cbc, "
                       "lpsolve\n");

  testing::WriteFile(run, "models: [m.yaml]\nsearch:\n  hysteresis_levle: 3\n");
  auto typo = Phaze("search --config " + run.string());
  EXPECT_USAGE_ERROR(typo, run.string() +
                               ":3:3: search.hysteresis_levle: unknown key "
                               "'hysteresis_levle'; did you mean 'hysteresis_level'?");

  auto no_config = Phaze("search");
  EXPECT_USAGE_ERROR(no_config, "--config RUN.yaml is required");

  testing::WriteFile(run, "models: [missing.yaml]\n");
  auto missing = Phaze("search --config " + run.string());
  EXPECT_USAGE_ERROR(missing, "missing.yaml");
}

// Four configs that tie exactly (tiny-gpt is host-bound on all of them): the pruned search
// bounded the tied ones an ulp or two under the incumbent and pruned them, keeping another winner
// than evaluating everything (kBoundSlack, search/arch_search.hpp). Both now keep the same.
TEST(Cli, PruningKeepsTheExhaustiveWinnerAmongExactTies) {
  testing::TempDir dir;
  testing::WriteFile(dir / "space.yaml",
                     "name: ties\nnum_tc: [8, 4]\nnum_vc: [2]\npe_x: [128]\npe_y: [128]\n"
                     "glb_mib: [128, 32]\narea_budget: {preset: tpuv4}\nmin_area_fraction: 0.1\n");
  std::vector<std::string> winners;
  for (const char* prune : {"winners", "none"}) {
    const std::string run = (dir / (std::string(prune) + ".yaml")).string();
    testing::WriteFile(
        run, "models: [" + std::string(PHAZE_SOURCE_DIR) +
                 "/workloads/tiny-gpt.yaml]\narch: {space: space.yaml, presets: [tpuv4]}\n"
                 "cluster: {num_accelerators: 8}\ntraining: {global_batch: 16, "
                 "micro_batches: [1, 2], tensor_parallel_widths: [1, 2], hbm_gib: "
                 "[32], recompute: [none]}\nsearch: {prune: " +
                 prune + "}\noutput: {plots: " + (std::string(prune) == "none" ? "false" : "true") +
                 "}\n");
    const std::string out = (dir / prune).string();
    const auto r = Phaze("-q search --config " + run + " --threads 1 --output-dir " + out);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    winners.push_back(ConfigNode::ParseFile(out + "/results.json")
                          .Child("winners")
                          .Child("per_model")
                          .Elements()
                          .at(0)
                          .Child("arch")
                          .Child("name")
                          .AsString());
  }
  EXPECT_EQ(winners[0], winners[1]);
  // No model gives an expert placement: the speed-ups are over tpuv4 with phaze's, and say so;
  // without plots, the report lists none.
  const ConfigNode results = ConfigNode::ParseFile((dir / "none" / "results.json").string());
  EXPECT_EQ(results.Child("speedups").Child("reference").AsString(), "tpuv4 + Phaze DP");
  const std::string report = testing::Slurp(dir / "none" / "report.md");
  EXPECT_NE(report.find("## Speed-up over tpuv4 with phaze's placement"), std::string::npos);
  EXPECT_EQ(report.find(".svg"), std::string::npos) << report;
  EXPECT_NE(testing::Slurp(dir / "winners" / "report.md").find("Plots: `throughput-vs-area.svg`"),
            std::string::npos);
}

// Words no command takes, and outputs a command could not write, refused before anything runs
// (a helper's probe: they were ignored, or failed late or as internal errors).
TEST(Cli, StrayWordsAndUnwritableOutputsAreRefusedUpFront) {
  testing::TempDir dir;
  const std::string model = std::string(PHAZE_SOURCE_DIR) + "/workloads/tiny-gpt.yaml";
  EXPECT_USAGE_ERROR(Phaze("schedule --model " + model + " --arch tpuv4 backward"),
                     "error: unexpected argument 'backward' to phaze schedule");
  EXPECT_USAGE_ERROR(Phaze("arch --preset tpuv4 tpuv5"), "unexpected argument 'tpuv5'");
  EXPECT_USAGE_ERROR(Phaze("arch --preset tpuv4 --limit 3"), "--limit applies to --space");
  // A space whose area window holds nothing lists nothing, and says so with exit 1 (a search of
  // it is refused).
  testing::WriteFile(dir / "none.yaml",
                     "name: none\nnum_tc: [8]\nnum_vc: [2]\npe_x: [128]\npe_y: [128]\n"
                     "glb_mib: [128]\narea_budget: {area_mm2: 1}\n");
  const auto empty = Phaze("arch --space " + (dir / "none.yaml").string());
  EXPECT_EQ(empty.exit_code, 1) << empty.err;
  EXPECT_NE(empty.err.find("no config of the space lies in its area window"), std::string::npos);
  // --dump-ilp naming a file (was "internal error: filesystem error", exit 3), or nothing.
  testing::WriteFile(dir / "afile", "x");
  const std::string schedule = "schedule --model " + model + " --arch tpuv4 --dump-ilp ";
  EXPECT_USAGE_ERROR(Phaze(schedule + (dir / "afile").string()),
                     "afile: exists and is not a directory");
  EXPECT_USAGE_ERROR(Phaze(schedule + "''"), "--dump-ilp: expected a directory");
  EXPECT_USAGE_ERROR(Phaze("schedule --model " + model + " --arch tpuv4 --time-limit -3"),
                     "--time-limit: expected seconds > 0, found -3");
  // The JSON gives what the text's host-bound line says: tiny-gpt's backward on an H100 is
  // issued by the host in longer than its makespan, and lasts that.
  const std::string backward = (dir / "backward.json").string();
  const auto host_bound =
      Phaze("schedule --model " + model + " --arch h100-sxm-80gb --pass backward -o " + backward);
  ASSERT_EQ(host_bound.exit_code, 0) << host_bound.err;
  ASSERT_NE(host_bound.out.find("host-bound"), std::string::npos) << host_bound.out;
  const ConfigNode pass = ConfigNode::ParseFile(backward);
  EXPECT_GT(pass.Child("host_s").AsDouble(), pass.Child("makespan_s").AsDouble());
  EXPECT_EQ(pass.Child("pass_s").AsDouble(), pass.Child("host_s").AsDouble());
  // A graph file is built: schedule refuses the options that would build it (it ignored them).
  const std::string graph = (dir / "g.json").string();
  ASSERT_EQ(Phaze("-q -o " + graph + " graph --model " + model + " --format json").exit_code, 0);
  EXPECT_USAGE_ERROR(Phaze("schedule --model " + graph + " --arch tpuv4 --micro-batch 4"),
                     "--micro-batch applies to model descriptions; a graph file is already built");
  // A search's -o naming its output directory or a file it writes there (report.md came out
  // JSON), before the search runs.
  testing::WriteFile(dir / "space.yaml", testing::kTinySpace);
  testing::WriteFile(dir / "run.yaml", testing::TinySearchConfig());
  const std::string out = (dir / "out").string();
  const std::string search =
      " search --config " + (dir / "run.yaml").string() + " --output-dir " + out;
  EXPECT_USAGE_ERROR(Phaze("-o " + out + "/report.md" + search),
                     "the search writes its own report.md into " + out);
  EXPECT_USAGE_ERROR(Phaze("-o " + out + search), "that is the output directory");
  EXPECT_FALSE(std::filesystem::exists(dir / "out" / "results.json"));
}

// An absurd thread count is clamped with a warning (it used to end in std::terminate when the
// system ran out of threads), and the search still answers.
TEST(Cli, HugeThreadCountsAreClampedWithAWarning) {
  testing::TempDir dir;
  testing::WriteFile(dir / "space.yaml", testing::kTinySpace);
  testing::WriteFile(dir / "run.yaml", testing::TinySearchConfig());
  auto r = Phaze("search --config " + (dir / "run.yaml").string() + " --threads 100000 " +
                 "--output-dir " + (dir / "out").string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("warning: --threads 100000: more than this machine can use; evaluating with"),
            std::string::npos)
      << r.err;
  EXPECT_TRUE(std::filesystem::exists(dir / "out" / "results.json"));
}

// SIGTERM (a batch scheduler's stop) ends a search like Ctrl-C: after the configs in flight, with
// the partial results written and marked. The default search takes about a minute on this
// machine; the signal comes 2 s after the search has created its checkpoint journal, so the
// first config is in flight whatever the machine's speed (a fixed 3 s from the start came before
// any config under the sanitizers, and a search stopped with nothing explored rightly ends "no
// explored architecture is feasible"); one that had already finished would say "complete": true.
TEST(Cli, SigtermWritesPartialResults) {
  testing::TempDir dir;
  const std::string out = (dir / "out").string();
  const std::string cmd = "env -u PHAZE_PLUGIN_PATH " + kPhaze + " search --config " +
                          std::string(PHAZE_SOURCE_DIR) +
                          "/share/runs/default.yaml --threads 1 --output-dir " + out;
  auto r = testing::Run(cmd + " & pid=$!; while [ ! -s " + out +
                        "/search.checkpoint ] && kill -0 $pid 2>/dev/null; do sleep 0.05; done; "
                        "sleep 2; kill -TERM $pid; wait $pid");
  // Exit 4: a batch script tells an interrupted search from a finished one.
  EXPECT_EQ(r.exit_code, 4) << r.err;
  EXPECT_NE(r.err.find("interrupted: partial results written"), std::string::npos) << r.err;
  const ConfigNode j =
      ConfigNode::ParseString(testing::Slurp(dir / "out" / "results.json"), "results.json");
  EXPECT_FALSE(j.Child("complete").AsBool());
  EXPECT_EQ(j.Child("stop_reason").AsString(), "interrupted");
  // A fresh run into it would replace the unfinished search: refused, pointing at --resume.
  EXPECT_USAGE_ERROR(Phaze("search --config " + std::string(PHAZE_SOURCE_DIR) +
                           "/share/runs/default.yaml --output-dir " + out),
                     out +
                         "/ holds an unfinished search (search.checkpoint, results.json with "
                         "\"complete\": false): `phaze search --resume " +
                         out + "` continues it");
}

// Wrong things said plainly: a cycle in a DAG file is bad input at its edges (was "internal
// error", exit 3), and -o naming a directory says so (was "rename failed: Success").
TEST(Cli, CyclesAndDirectoryOutputsAreInputErrors) {
  testing::TempDir dir;
  const auto dag = dir / "cycle.json";
  testing::WriteFile(dag,
                     "{\"name\": \"c\", \"num_tc\": 1, \"num_vc\": 1, \"ops\": [\n"
                     " {\"name\": \"x\", \"class\": \"tensor\", \"single_core_s\": 1, \"all_cores_s\": 1},\n"
                     " {\"name\": \"a\", \"class\": \"tensor\", \"single_core_s\": 1, \"all_cores_s\": 1},\n"
                     " {\"name\": \"b\", \"class\": \"tensor\", \"single_core_s\": 1, \"all_cores_s\": 1},\n"
                     " {\"name\": \"y\", \"class\": \"tensor\", \"single_core_s\": 1, \"all_cores_s\": 1}],\n"
                     " \"edges\": [{\"from\": \"x\", \"to\": \"a\"}, {\"from\": \"a\", \"to\": \"b\"},\n"
                     "  {\"from\": \"b\", \"to\": \"a\"}, {\"from\": \"b\", \"to\": \"y\"}]}\n");
  auto r = Phaze("schedule --graph " + dag.string());
  EXPECT_EQ(r.exit_code, 2);
  // y is behind the cycle and x before it; the op named is on it.
  EXPECT_TRUE(r.err == "error: " + dag.string() + ":6:11: edges: the edges form a cycle through op 'a'\n" ||
              r.err == "error: " + dag.string() + ":6:11: edges: the edges form a cycle through op 'b'\n")
      << r.err;
  auto o = Phaze("-o " + dir.path().string() + " graph --model " + std::string(PHAZE_SOURCE_DIR) +
                 "/workloads/bert-large.yaml");
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_EQ(o.err, "error: cannot write '" + dir.path().string() + "': it is a directory\n");
  // A bare file name is written in the working directory (it failed with "cannot create
  // directory ''" when the file did not exist yet).
  auto bare = testing::Run("cd " + dir.path().string() + " && env -u PHAZE_PLUGIN_PATH " + kPhaze +
                           " -o out.json graph --model " + std::string(PHAZE_SOURCE_DIR) +
                           "/workloads/tiny-gpt.yaml");
  EXPECT_EQ(bare.exit_code, 0) << bare.err;
  EXPECT_TRUE(std::filesystem::exists(dir / "out.json"));
  // -v repeats, as the help says (-vv was "cannot be specified more than once").
  for (const char* flags : {"-vv", "-v -v"}) {
    auto v = Phaze(std::string(flags) + " plugins");
    EXPECT_EQ(v.exit_code, 0) << flags << ": " << v.err;
    EXPECT_NE(v.err.find("loaded plugin"), std::string::npos) << flags << ": " << v.err;
  }
}

// Every command that writes a file accepts a bare, relative name (the README's own commands:
// `-o predict.json`, `-o schedule.json`, `--gantt s.svg`), written in the working directory.
TEST(Cli, EveryCommandWritesABareRelativeFile) {
  testing::TempDir dir;
  const std::string src = PHAZE_SOURCE_DIR;
  const std::string tiny = src + "/workloads/tiny-gpt.yaml";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"graph.json", "-o graph.json graph --model " + tiny},
      {"predict.json", "-o predict.json predict --model " + tiny +
                           " --arch a100-sxm-80gb --plan 1,1,1 --micro-batch 1 --global-batch 8"},
      {"schedule.json", "-o schedule.json schedule --graph " + src + "/share/schedule/example.json"},
      {"s.svg", "schedule --graph " + src + "/share/schedule/example.json --gantt s.svg"},
      {"place.json", "-o place.json place --layers " + src + "/share/placement/example-chain.yaml"},
      {"estimate.json", "-o estimate.json estimate --arch tpuv4 --gemm 1,512,512,512"},
      {"arch.json", "-o arch.json arch --preset tpuv4"},
  };
  for (const auto& [file, args] : cases) {
    auto r = testing::Run("cd " + dir.path().string() + " && env -u PHAZE_PLUGIN_PATH " + kPhaze +
                          " " + args);
    EXPECT_EQ(r.exit_code, 0) << args << ": " << r.err;
    EXPECT_GT(std::filesystem::file_size(dir / file), 10u) << args;
  }
}

// Results are never lost or mixed: an unusable output directory fails before the search (in well
// under the search's time), a directory another run holds is refused, and a second run into the
// same directory replaces the whole set (its plots: false removes the first run's plots).
TEST(Cli, OutputDirectoryIsClaimedBeforeTheSearchAndWrittenAsASet) {
  testing::TempDir dir;
  testing::WriteFile(dir / "space.yaml", testing::kTinySpace);
  testing::WriteFile(dir / "run.yaml", testing::TinySearchConfig());
  testing::WriteFile(dir / "file", "not a directory\n");
  const std::string search = "search --config " + (dir / "run.yaml").string() + " --threads 1";
  auto bad = Phaze(search + " --output-dir " + (dir / "file" / "out").string());
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(bad.err, "error: output directory '" + (dir / "file" / "out").string() +
                         "': cannot create it: Not a directory (set output.directory in the run "
                         "config, or --output-dir)\n");
  EXPECT_EQ(bad.out, "");  // nothing was searched

  const std::string out = (dir / "out").string();
  {
    const OutputDirectory held(out);  // another run holds it
    auto busy = Phaze(search + " --output-dir " + out);
    EXPECT_USAGE_ERROR(busy, "error: output directory '" + out +
                                 "': in use by another phaze run (pid " +
                                 std::to_string(::getpid()) + ")");
  }
  auto first = Phaze(search + " --output-dir " + out);
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_TRUE(std::filesystem::exists(dir / "out" / "pipeline.svg"));
  testing::WriteFile(dir / "run.yaml", testing::TinySearchConfig("output: {plots: false}\n"));
  auto second = Phaze(search + " --output-dir " + out);
  ASSERT_EQ(second.exit_code, 0) << second.err;
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir / "out")) {
    names.push_back(e.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{".phaze.lock", "explored.csv", "report.md",
                                             "results.json", "search.checkpoint"}));
}

// WriteSet writes each file from its writer, one at a time; a writer that throws (as a full disk
// fails a write) leaves the previous set as it was and no staging directory behind.
TEST(Cli, AFailedWriteLeavesThePreviousSetUntouched) {
  testing::TempDir dir;
  const OutputDirectory out((dir / "out").string());
  const std::vector<std::string> set = {"a.txt", "b.txt"};
  out.WriteSet({{"a.txt", [](std::ostream& o) { o << "first a"; }},
                {"b.txt", [](std::ostream& o) { o << "first b"; }}},
               set);
  EXPECT_EQ(ReadInputFile((dir / "out" / "a.txt").string()), "first a");
  EXPECT_THROW(out.WriteSet({{"a.txt", [](std::ostream& o) { o << "second a"; }},
                             {"b.txt",
                              [](std::ostream& o) {
                                o << "half of b";
                                throw Error("no space left");
                              }}},
                            set),
               Error);
  EXPECT_EQ(ReadInputFile((dir / "out" / "a.txt").string()), "first a");
  EXPECT_EQ(ReadInputFile((dir / "out" / "b.txt").string()), "first b");
  for (const auto& e : std::filesystem::directory_iterator(dir / "out")) {
    EXPECT_EQ(e.path().filename().string().rfind(".phaze-staging", 0), std::string::npos);
  }
  out.WriteSet({{"b.txt", [](std::ostream& o) { o << "third b"; }}}, set);
  EXPECT_FALSE(std::filesystem::exists(dir / "out" / "a.txt"));  // not in this set
  EXPECT_EQ(ReadInputFile((dir / "out" / "b.txt").string()), "third b");
}

// A killed search continues from its checkpoint (search_checkpoint.hpp) and ends with the results
// of an uninterrupted run: after SIGKILL once part of the journal is on disk, and after a journal
// cut in the middle of a record (a kill during a write). One thread, so that the configs pruned
// are the same too (arch_search.hpp); the checkpoint is written after every config.
TEST(Cli, ResumeAfterAKillGivesTheUninterruptedResults) {
  testing::TempDir dir;
  testing::WriteFile(dir / "space.yaml", testing::kTinySpace);
  std::string config = testing::TinySearchConfig();
  const std::string hysteresis = "search: {mode: hysteresis, hysteresis_level: 2, bucket_width_mm2: 10}";
  config.replace(config.find(hysteresis), hysteresis.size(),
                 "search: {mode: exhaustive, prune: winners, checkpoint_seconds: 0}");
  testing::WriteFile(dir / "run.yaml", config);
  const std::string search = "search --config " + (dir / "run.yaml").string() + " --threads 1";
  auto whole = Phaze(search + " --output-dir " + (dir / "whole").string());
  ASSERT_EQ(whole.exit_code, 0) << whole.err;
  // results.json without the timings, and with the output directory named alike.
  auto results = [&](const std::string& out) {
    std::string text = testing::WithoutTimings(testing::Slurp(dir / out / "results.json"));
    const std::string path = (dir / out).string();
    text.replace(text.find(path), path.size(), "OUT");
    return text;
  };
  const std::string expected = results("whole");
  const auto journal = dir / "whole" / "search.checkpoint";
  const auto full_size = std::filesystem::file_size(journal);

  // SIGKILL as soon as the journal holds more than its header.
  const std::string killed = (dir / "killed").string();
  auto k = testing::Run("env -u PHAZE_PLUGIN_PATH " + kPhaze + " -q " + search + " --output-dir " +
                        killed + " & pid=$!; while [ \"$(stat -c %s " + killed +
                        "/search.checkpoint 2>/dev/null || echo 0)\" -lt 400 ]; do sleep 0.01; "
                        "done; kill -KILL $pid; wait $pid");
  EXPECT_FALSE(std::filesystem::exists(dir / "killed" / "results.json"));  // killed mid-way
  auto resumed = Phaze("search --resume " + killed + " --threads 1");  // the config from the journal
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_TRUE(results("killed") == expected);

  // A journal cut inside a record: the torn record is dropped, its config evaluated again.
  std::filesystem::create_directories(dir / "torn");
  std::filesystem::copy_file(journal, dir / "torn" / "search.checkpoint");
  std::filesystem::resize_file(dir / "torn" / "search.checkpoint", full_size * 2 / 3);
  auto torn = Phaze("search --config " + (dir / "run.yaml").string() + " --threads 1 --resume " +
                    (dir / "torn").string());
  ASSERT_EQ(torn.exit_code, 0) << torn.err;
  EXPECT_TRUE(results("torn") == expected);
  EXPECT_EQ(std::filesystem::file_size(dir / "torn" / "search.checkpoint"), full_size);
  // A smaller budget than the journal's reports its first configs, says so, and keeps the rest.
  auto fewer = Phaze("search --resume " + (dir / "torn").string() + " --threads 1 --max-configs 2");
  ASSERT_EQ(fewer.exit_code, 0) << fewer.err;
  EXPECT_NE(
      fewer.err.find("configs and search.max_configs 2 reports the first 2; the journal keeps "
                     "the rest"),
      std::string::npos)
      << fewer.err;
  EXPECT_EQ(ConfigNode::ParseFile((dir / "torn" / "results.json").string())
                .Child("explored")
                .Elements()
                .size(),
            2u);
  EXPECT_EQ(std::filesystem::file_size(dir / "torn" / "search.checkpoint"), full_size);
  ASSERT_EQ(Phaze("search --resume " + (dir / "torn").string() + " --threads 1").exit_code, 0);
  EXPECT_TRUE(results("torn") == expected);
  // A search stopped by its budget (no seed: it visits by decreasing area) continues in that order
  // to the same winners.
  ASSERT_EQ(Phaze(search + " --max-configs 3 --output-dir " + (dir / "capped").string()).exit_code,
            0);
  const auto continued = Phaze("search --resume " + (dir / "capped").string() + " --threads 1");
  ASSERT_EQ(continued.exit_code, 0) << continued.err;
  auto winners = [&](const std::string& out) {
    return ConfigNode::ParseFile((dir / out / "results.json").string())
        .Child("winners")
        .Child("common")
        .Child("arch")
        .Child("name")
        .AsString();
  };
  EXPECT_EQ(winners("capped"), winners("whole"));

  // A journal of another search, and no journal, are refused plainly.
  std::string other_config = config;
  other_config.replace(other_config.find("num_accelerators: 16"), 20, "num_accelerators: 32");
  testing::WriteFile(dir / "other.yaml", other_config);
  auto other = Phaze("search --config " + (dir / "other.yaml").string() + " --resume " +
                     (dir / "whole").string());
  EXPECT_USAGE_ERROR(other, "search.checkpoint: written for another search");
  auto none = Phaze("search --resume " + (dir / "nowhere").string());
  EXPECT_USAGE_ERROR(none, "no search checkpoint here");
}

TEST(Cli, SearchEndToEndOnATinySpace) {
  testing::TempDir dir;
  testing::WriteFile(dir / "space.yaml", testing::kTinySpace);
  testing::WriteFile(dir / "run.yaml", testing::TinySearchConfig());
  auto r = Phaze("search --config " + (dir / "run.yaml").string() + " --threads 1 --output-dir " +
                 (dir / "out").string());
  std::filesystem::rename(dir / "out", dir / "out1");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("tiny-gpt"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("common:"), std::string::npos) << r.out;
  for (const char* f : {"results.json", "report.md", "explored.csv", "throughput-vs-area.svg",
                        "throughput-vs-power.svg", "pipeline.svg", "memory.svg", "schedule.svg"}) {
    EXPECT_TRUE(std::filesystem::exists(dir / "out1" / f)) << f;
  }
  const std::string text = testing::Slurp(dir / "out1" / "results.json");
  const ConfigNode j = ConfigNode::ParseString(text, "results.json");
  // explored.csv: a header, then one row per explored config and model, each with the header's
  // 39 columns and the figures of results.json.
  {
    std::istringstream csv(testing::Slurp(dir / "out1" / "explored.csv"));
    std::vector<std::vector<std::string>> rows;
    for (std::string line; std::getline(csv, line);) {
      std::vector<std::string> cells;
      std::stringstream cols(line);
      for (std::string cell; std::getline(cols, cell, ',');) cells.push_back(cell);
      if (!line.empty() && line.back() == ',') cells.emplace_back();
      rows.push_back(cells);
    }
    const auto configs = j.Child("explored").Elements();
    ASSERT_EQ(rows.size(), 1 + configs.size());  // one model
    EXPECT_EQ(rows[0].size(), 39u);
    EXPECT_EQ(rows[0][33], "power_w");
    EXPECT_EQ(rows[0][34], "energy_per_sample_j");
    EXPECT_EQ(rows[0][16], "throughput_samples_per_s");
    EXPECT_EQ(rows[0][28], "expert_parallel");
    EXPECT_EQ(rows[0][29], "expert_tensor_parallel");
    for (std::size_t i = 0; i < configs.size(); ++i) {
      const auto& row = rows[i + 1];
      ASSERT_EQ(row.size(), 39u) << i;
      EXPECT_EQ(row[1], configs[i].Child("arch").Child("name").AsString());
      EXPECT_EQ(row[13], "tiny-gpt");
      const ConfigNode best = configs[i].Child("models").Elements()[0].Child("best");
      EXPECT_EQ(row[15], best.Child("feasible").AsBool() ? "true" : "false");
      if (best.Child("feasible").AsBool()) {
        EXPECT_DOUBLE_EQ(std::stod(row[16]), best.Child("throughput_samples_per_s").AsDouble());
        EXPECT_EQ(row[20], std::to_string(best.Child("plan").Child("pipeline_stages").AsInt()));
        EXPECT_EQ(row[25], best.Child("recompute").AsString());
        EXPECT_EQ(row[26], best.Child("sharding").AsString());
        EXPECT_EQ(row[27], best.Child("plan").Child("strategy").AsString());
        EXPECT_EQ(row[28], "");  // not the moe strategy: no expert-parallel size
        EXPECT_EQ(row[29], "");  // nor an expert-tensor-parallel one
        EXPECT_DOUBLE_EQ(std::stod(row[33]), best.Child("power_w").AsDouble());
        EXPECT_DOUBLE_EQ(std::stod(row[34]), best.Child("energy_per_sample_j").AsDouble());
        EXPECT_GT(std::stod(row[33]), 0);
      }
    }
  }
  for (const char* key : {"complete", "stop_reason", "run_config", "plugins", "space", "models",
                          "winners", "baselines", "speedups", "explored", "timings"}) {
    EXPECT_TRUE(j.Has(key)) << key;
  }
  EXPECT_TRUE(j.Child("complete").AsBool());
  // tiny-gpt's model FLOPs per token, by hand: per block QKV 2·64·192 + out 2·64·64 + FFN
  // 2·(2·64·256) + attention scores and context 2·(2·32·64) = 106,496; two blocks and the LM head
  // 2·64·256 give 245,760 forward; ×3 with the backward pass.
  EXPECT_DOUBLE_EQ(j.Child("models").Elements()[0].Child("flops_per_token").AsDouble(), 737280.0);
  // The winner is at least as good as every explored config, and is one of them.
  const double best = j.Child("winners").Child("common").Child("score").AsDouble();
  const auto explored = j.Child("explored").Elements();
  ASSERT_GE(explored.size(), 2u);
  bool found = false;
  for (const auto& e : explored) {
    EXPECT_LE(e.Child("score").AsDouble(), best);
    found = found || e.Child("score").AsDouble() == best;
    // Area order: decreasing.
  }
  EXPECT_TRUE(found);
  // The common front rises with area and ends at the best score; every front config is feasible.
  const auto front = j.Child("pareto_front").Child("common").Elements();
  ASSERT_FALSE(front.empty());
  for (std::size_t k = 1; k < front.size(); ++k) {
    const auto& a = explored[front[k - 1].AsInt()];
    const auto& b = explored[front[k].AsInt()];
    EXPECT_LT(a.Child("area_mm2").AsDouble(), b.Child("area_mm2").AsDouble());
    EXPECT_LT(a.Child("score").AsDouble(), b.Child("score").AsDouble());
  }
  EXPECT_EQ(explored[front.back().AsInt()].Child("score").AsDouble(), best);
  EXPECT_EQ(j.Child("pareto_front").Child("per_model").Elements().at(0).Child("model").AsString(),
            "tiny-gpt");
  for (std::size_t i = 1; i < explored.size(); ++i) {
    EXPECT_GE(explored[i - 1].Child("area_mm2").AsDouble(),
              explored[i].Child("area_mm2").AsDouble());
  }
  // MFU = tokens/s × FLOPs per token / (16 accelerators × peak).
  const ConfigNode winner = j.Child("winners").Child("per_model").Elements()[0].Child("result");
  const double peak = j.Child("winners").Child("per_model").Elements()[0].Child("peak_flops").AsDouble();
  EXPECT_NEAR(winner.Child("mfu").AsDouble(),
              winner.Child("throughput_samples_per_s").AsDouble() * 32 * 737280.0 / (16 * peak),
              1e-12);
  // Baselines: tpuv4 with the expert placement and with our DP; our DP is never worse.
  double expert = 0, dp = 0;
  for (const auto& b : j.Child("baselines").Elements()) {
    const double thr = b.Child("result").Child("throughput_samples_per_s").AsDouble();
    (b.Child("kind").AsString() == "expert" ? expert : dp) = thr;
  }
  EXPECT_GT(expert, 0);
  EXPECT_GE(dp, expert);
  const std::string report = testing::Slurp(dir / "out1" / "report.md");
  for (const char* s : {"Table 1", "Figure 4", "Table 3", "geomean", "tpuv4 expert"}) {
    EXPECT_NE(report.find(s), std::string::npos) << s;
  }

  // Same results with two threads (timings aside), and with -o.
  auto r2 = Phaze("search --config " + (dir / "run.yaml").string() + " --threads 2 -q -o " +
                  (dir / "two.json").string() + " --output-dir " + (dir / "out").string());
  ASSERT_EQ(r2.exit_code, 0) << r2.err;
  EXPECT_EQ(testing::WithoutTimings(testing::Slurp(dir / "out" / "results.json")), testing::WithoutTimings(text));
  EXPECT_EQ(testing::WithoutTimings(testing::Slurp(dir / "two.json")), testing::WithoutTimings(text));
}

// A run config naming only a Hugging Face config: the model is read from it, named after its
// file, at the sequence the entry gives; a YAML workload under `hf:` is refused before the search.
TEST(Cli, SearchAHuggingFaceConfig) {
  testing::TempDir dir;
  testing::WriteFile(dir / "space.yaml", testing::kTinySpace);
  testing::WriteFile(dir / "tiny-llama.json",
                     R"({"model_type": "llama", "hidden_size": 64, "intermediate_size": 128,
                        "num_hidden_layers": 2, "num_attention_heads": 4,
                        "num_key_value_heads": 2, "vocab_size": 256,
                        "max_position_embeddings": 4096, "tie_word_embeddings": false})");
  std::string run = testing::TinySearchConfig();
  run.replace(run.find("models:"), run.find("arch:") - run.find("models:"),
              "models:\n  - {hf: tiny-llama.json, sequence_length: 32}\n");
  testing::WriteFile(dir / "run.yaml", run);
  auto r = Phaze("search --config " + (dir / "run.yaml").string() + " --threads 2 --output-dir " +
                 (dir / "out").string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const ConfigNode j =
      ConfigNode::ParseString(testing::Slurp(dir / "out" / "results.json"), "results.json");
  const ConfigNode model = j.Child("models").Elements().at(0);
  EXPECT_EQ(model.Child("name").AsString(), "tiny-llama");
  EXPECT_EQ(model.Child("sequence_length").AsInt(), 32);
  // Embeddings 2·256·64, two blocks of q, o 64·64 + k, v 64·32 + 3·64·128 + two norms, final norm.
  EXPECT_EQ(model.Child("parameters").AsInt(),
            2 * 256 * 64 + 2 * (2 * 64 * 64 + 2 * 64 * 32 + 3 * 64 * 128 + 2 * 64) + 64);
  EXPECT_EQ(j.Child("run_config").Child("models").Elements().at(0).Child("hf").AsString(),
            "tiny-llama.json");

  run.replace(run.find("tiny-llama.json"), 15, std::string(PHAZE_SOURCE_DIR) + "/workloads/tiny-gpt.yaml");
  testing::WriteFile(dir / "run.yaml", run);
  auto wrong = Phaze("search --config " + (dir / "run.yaml").string() + " --output-dir " +
                     (dir / "out2").string());
  EXPECT_USAGE_ERROR(wrong, "expected a Hugging Face config.json");
  EXPECT_NE(wrong.err.find("(named at " + (dir / "run.yaml").string() + ":2:"), std::string::npos)
      << wrong.err;
}

TEST(Cli, SearchBudgetAndInfeasibility) {
  testing::TempDir dir;
  testing::WriteFile(dir / "space.yaml", testing::kTinySpace);
  testing::WriteFile(dir / "run.yaml", testing::TinySearchConfig());
  auto r = Phaze("search --config " + (dir / "run.yaml").string() + " --max-configs 2 -q " +
                 "--output-dir " + (dir / "out").string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const ConfigNode j = ConfigNode::ParseFile((dir / "out" / "results.json").string());
  EXPECT_EQ(j.Child("stop_reason").AsString(), "max_configs");
  EXPECT_FALSE(j.Child("complete").AsBool());
  EXPECT_EQ(j.Child("explored").Elements().size(), 2u);

  // 1 KiB of HBM holds no stage: every config is infeasible → exit 1 with the reason.
  testing::WriteFile(dir / "run.yaml",
                     testing::TinySearchConfig() + "output: {directory: " + (dir / "none").string() + "}\n");
  std::string text = testing::Slurp(dir / "run.yaml");
  text.replace(text.find("hbm_gib: [16, 32]"), 17, "hbm_gib: [0.000001]");
  testing::WriteFile(dir / "run.yaml", text);
  auto none = Phaze("search --config " + (dir / "run.yaml").string() + " -q --max-configs 3");
  EXPECT_EQ(none.exit_code, 1) << none.err;
  EXPECT_NE(none.err.find("no explored architecture is feasible"), std::string::npos) << none.err;
  EXPECT_NE(none.err.find("exceeds the HBM"), std::string::npos) << none.err;
  EXPECT_TRUE(std::filesystem::exists(dir / "none" / "results.json"));
}

TEST(Cli, GraphSummaryJsonDotAndImport) {
  const std::string workloads = std::string(PHAZE_SOURCE_DIR) + "/workloads/";
  auto summary = Phaze("graph --model " + workloads + "gpt2-xl.yaml");
  EXPECT_EQ(summary.exit_code, 0) << summary.err;
  EXPECT_NE(summary.out.find("parameters   1,557,611,200  (published 1,557,611,200: exact)"),
            std::string::npos)
      << summary.out;
  EXPECT_NE(summary.out.find("50 (1 x embedding + 48 x block + 1 x head), 3 unique"),
            std::string::npos)
      << summary.out;

  testing::TempDir dir;
  auto file = dir / "tiny.json";
  auto json = Phaze("graph --model " + workloads +
                    "tiny-gpt.yaml --micro-batch 2 --format json -o " + file.string());
  EXPECT_EQ(json.exit_code, 0) << json.err;
  EXPECT_NE(json.out.find("\"format\": \"phaze-layer-graph\""), std::string::npos);
  EXPECT_EQ(testing::Slurp(file), json.out);
  auto imported = Phaze("graph --model " + file.string());
  EXPECT_EQ(imported.exit_code, 0) << imported.err;
  EXPECT_NE(imported.out.find("micro-batch 2 x sequence 32"), std::string::npos) << imported.out;
  auto rebuilt = Phaze("graph --model " + file.string() + " --micro-batch 4");
  EXPECT_USAGE_ERROR(rebuilt, "--micro-batch applies to model descriptions");

  auto dot = Phaze("graph --model " + workloads + "tiny-gpt.yaml --format dot --no-fusion");
  EXPECT_EQ(dot.exit_code, 0);
  EXPECT_EQ(dot.out.rfind("digraph \"tiny-gpt\" {", 0), 0u) << dot.out.substr(0, 200);
  EXPECT_NE(dot.out.find("\"block/backward/mlp.fc1.grad_weight\""), std::string::npos);

  auto bad = dir / "bad.yaml";
  testing::WriteFile(bad,
                     "name: x\nfamily: megatron-gpt\nlayers: 2\nhidden: 64\nheads: 6\n"
                     "vocab: 10\nmax_positions: 8\nsequence_length: 8\n");
  auto error = Phaze("graph --model " + bad.string());
  EXPECT_USAGE_ERROR(error, bad.string() + ":5:8: heads: heads 6 does not divide hidden 64");
}

TEST(Cli, ArchEnumeratesThePaperSpaceAndShowsPresets) {
  auto json = Phaze("arch --space paper --format json --limit 2");
  EXPECT_EQ(json.exit_code, 0) << json.err;
  EXPECT_NE(json.out.find("\"feasible\": 29360"), std::string::npos);
  EXPECT_NE(json.out.find("\"area_mm2\": 278.82667631216"), std::string::npos)
      << json.out.substr(0, 800);
  for (const char* field :
       {"\"num_tc\": 8", "\"num_vc\": 2", "\"pe_x\": 128", "\"pe_vc\": 128",
        "\"glb_bytes\": 134217728", "\"l2_tc_bytes\"", "\"hbm_bandwidth_bytes_per_s\""}) {
    EXPECT_NE(json.out.find(field), std::string::npos) << field;
  }
  auto table = Phaze("arch --space paper --limit 1");
  EXPECT_NE(table.out.find("29360 feasible of 75712 candidates"), std::string::npos) << table.out;
  EXPECT_NE(
      table.out.find("       1       8       2   128   128    128      128    4096 278.826676"),
      std::string::npos)
      << table.out;
  auto tpu = Phaze("arch --preset tpuv4");
  EXPECT_NE(tpu.out.find("peak tensor      275.25 TFLOP/s"), std::string::npos) << tpu.out;
  auto both = Phaze("arch --preset tpuv4 --space paper");
  EXPECT_EQ(both.exit_code, 2);
}

// The global --config: arch lists the space that run config's search visits (its arch.space,
// resolved beside the config, with the 32-config tiny space's listing), place and plugins read no
// run config and refuse one rather than ignore it.
TEST(Cli, ArchListsARunConfigsSpaceAndCommandsWithoutOneRefuseIt) {
  testing::TempDir dir;
  testing::WriteFile(dir / "space.yaml", testing::kTinySpace);
  testing::WriteFile(dir / "run.yaml", testing::TinySearchConfig());
  const std::string run = (dir / "run.yaml").string();
  auto direct = Phaze("arch --space " + (dir / "space.yaml").string());
  ASSERT_EQ(direct.exit_code, 0) << direct.err;
  EXPECT_NE(direct.out.find("space tiny: "), std::string::npos) << direct.out;
  auto configured = Phaze("--config " + run + " arch");
  EXPECT_EQ(configured.exit_code, 0) << configured.err;
  EXPECT_EQ(configured.out, direct.out);
  EXPECT_USAGE_ERROR(Phaze("--config " + run + " arch --space paper"),
                     "phaze arch: give exactly one of --space FILE, --preset NAME or the global "
                     "--config RUN.yaml (its arch.space)");
  // A node the cost tables do not list is priced at the nearest that they do, and says so.
  testing::WriteFile(dir / "chip16.yaml",
                     "name: chip16\nnum_tc: 4\nnum_vc: 16\npe_x: 128\npe_y: 128\npe_vc: 128\n"
                     "glb_mib: 32\nhbm_gib: 32\nnode_nm: 16\n");
  auto chip16 = Phaze("arch --preset " + (dir / "chip16.yaml").string());
  EXPECT_EQ(chip16.exit_code, 0) << chip16.err;
  EXPECT_NE(chip16.out.find(" at 16 nm (area model); priced at 22 nm, the nearest node of the "
                            "cost tables\n"),
            std::string::npos)
      << chip16.out;
  EXPECT_USAGE_ERROR(Phaze("--config " + run + " plugins"),
                     "--config: phaze plugins reads no run configuration; drop --config");
  EXPECT_USAGE_ERROR(Phaze("--config " + run + " place --layers " + std::string(PHAZE_SOURCE_DIR) +
                           "/share/placement/example-chain.yaml"),
                     "--config: phaze place reads no run configuration; drop --config");
}

TEST(Cli, EstimateOpsAndAnOpsFile) {
  testing::TempDir dir;
  testing::WriteFile(dir / "ops.csv",
                     "# a mix\ngemm,1,512,1024,1024\nvector,softmax,262144,512\n"
                     "collective,all_reduce,1048576,8\n");
  auto r = Phaze("estimate --estimator analytic --arch tpuv4 --ops-file " + (dir / "ops.csv").string() +
                 " --op gelu,1048576 -o " + (dir / "e.json").string());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(
      r.out.find("vector,gelu,1048576                  single core 0.00012483 s (131072 cycles)"),
      std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("collective,all_reduce,1048576,8      0.000427246 s"), std::string::npos)
      << r.out;
  const std::string json = testing::Slurp(dir / "e.json");
  EXPECT_NE(json.find("\"single_core_cycles\""), std::string::npos);
  EXPECT_NE(json.find("\"signature\": \"gemm|1x512x1024x1024|"), std::string::npos);
  // The network the collective was timed on: the paper's flat 4 GiB/s link, 2·(7/8)·1 MiB over
  // it being the 0.000427246 s above.
  EXPECT_NE(json.find("\"network\": [\n  {\n   \"name\": \"link\",\n   "
                      "\"bandwidth_bytes_per_s\": 4294967296,"),
            std::string::npos)
      << json;
  auto bad = Phaze("estimate --arch tpuv4 --op frobnicate,10");
  EXPECT_USAGE_ERROR(bad, "no cycle cost for vector function 'frobnicate'");
  auto unknown = Phaze("estimate --arch tpuv4 --estimator analytc --gemm 1,2,3,4");
  EXPECT_USAGE_ERROR(unknown, "no estimator named 'analytc'");
}

TEST(Cli, EstimateCostsAKernelsOwnTrafficAndFp8Operands) {
  // What share/validation/kernels/compare.py asks of the device model: a memory-bound kernel with
  // its own byte count, and a GEMM whose operands are FP8 already.
  testing::TempDir dir;
  auto r = Phaze("-o " + (dir / "e.json").string() +
                 " estimate --arch a100-sxm-80gb --op add,1048576 --op add,1048576,1,4194304,2097152");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto a100 = ConfigNode::ParseFile((dir / "e.json").string()).Child("results").Elements();
  ASSERT_EQ(a100.size(), 2u);
  // The A100 preset's calibration: HBM at 0.762 of 2.039e12 B/s, 1.461e-5 s per kernel; an add
  // of 2^20 elements is memory-bound (152 lane cycles at 1.41 GHz: 0.1 µs).
  const double hbm = 0.762 * 2.039e12;
  EXPECT_NEAR(a100[0].Child("all_cores_s").AsDouble(), 2.0 * 2 * 1048576 / hbm + 1.461e-5, 1e-12);
  EXPECT_NEAR(a100[1].Child("all_cores_s").AsDouble(), 6291456.0 / hbm + 1.461e-5, 1e-12);
  auto no_fp8 = Phaze("estimate --arch a100-sxm-80gb --fp8-gemm 1,4096,4096,4096");
  EXPECT_USAGE_ERROR(no_fp8, "architecture 'a100-sxm-80gb' has no FP8 tensor rate");
  auto half = Phaze("estimate --arch a100-sxm-80gb --op add,1048576,1,4194304");
  EXPECT_USAGE_ERROR(half, "(both byte counts, or neither)");
  // On the H100 a compute-bound GEMM's FP8 twin does the same tiles at fp8_tensor_ratio times
  // the rate with operands of half the bytes: without a per-kernel overhead (the estimator's
  // params override the preset's calibration) its time is the 16-bit time over the ratio.
  testing::WriteFile(dir / "run.yaml", "models: [m.yaml]\nestimator:\n  name: device\n"
                                       "  params: {kernel_overhead_s: 0}\n");
  auto h = Phaze("-o " + (dir / "h.json").string() + " --config " + (dir / "run.yaml").string() +
                 " estimate --arch h100-sxm-80gb --gemm 1,8192,8192,8192 --fp8-gemm 1,8192,8192,8192");
  ASSERT_EQ(h.exit_code, 0) << h.err;
  const ConfigNode doc = ConfigNode::ParseFile((dir / "h.json").string());
  const auto h100 = doc.Child("results").Elements();
  ASSERT_EQ(h100.size(), 2u);
  const double ratio = doc.Child("arch").Child("fp8_tensor_ratio").AsDouble();
  EXPECT_GT(ratio, 1);
  EXPECT_NEAR(h100[1].Child("all_cores_s").AsDouble(),
              h100[0].Child("all_cores_s").AsDouble() / ratio, 1e-12);
  EXPECT_NE(h100[1].Child("signature").AsString().find("|fp8c0"), std::string::npos)
      << h100[1].Child("signature").AsString();
}

TEST(Cli, DropInEstimatorPluginSelectedByNameInYaml) {
  // The README's walk-through: the example plugin, loaded with --plugin, chosen in the run config.
  testing::TempDir dir;
  const std::string plugin = std::string(PHAZE_EXAMPLES_DIR) + "/roofline-example.so";
  testing::WriteFile(dir / "run.yaml",
                     "models: [m.yaml]\nestimator:\n  name: roofline\n"
                     "  params: {efficiency: 0.5}\n");
  auto listed = Phaze("--plugin " + plugin + " plugins");
  EXPECT_NE(listed.out.find("estimator  roofline"), std::string::npos) << listed.out;
  auto r = Phaze("--plugin " + plugin + " --config " + (dir / "run.yaml").string() +
                 " estimate --arch tpuv4 --gemm 1,8192,8192,8192");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  // FLOPs / (peak · efficiency 0.5) = 2·8192³ / (275.2512e12 · 0.5) s.
  EXPECT_NE(r.out.find("estimator roofline on tpuv4"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("all cores 0.00798915 s"), std::string::npos) << r.out;
  // The names pass validation; the search then stops at the (absent) model file.
  auto search = Phaze("--plugin " + plugin + " search --config " + (dir / "run.yaml").string());
  EXPECT_NE(search.err.find("m.yaml: cannot read the file: no such file\n  (named at " +
                            (dir / "run.yaml").string() + ":1:10: models[0])"),
            std::string::npos)
      << search.err;
  auto without = Phaze("search --config " + (dir / "run.yaml").string(), "");
  EXPECT_EQ(without.exit_code, 2);
  EXPECT_NE(
      without.err.find("no estimator named 'roofline'; registered: analytic, device, gpu, sunstone, table"),
      std::string::npos)
      << without.err;
}

TEST(Cli, GraphSlicedByTheMegatronStrategy) {
  const std::string model = std::string(PHAZE_SOURCE_DIR) + "/workloads/megatron-8.3b.yaml";
  auto r = Phaze("graph --model " + model + " --strategy megatron --width 4 --format summary");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  // V·h/4 + s·h + 72·(12h²/4 + 7h/4 + 6h) + 2h with s 1024, h 3072 and V the vocabulary padded
  // to a multiple of 128·4 as Megatron-LM pads it: 50,688 rows.
  EXPECT_NE(r.out.find("parameters   2,082,226,176 per device (strategy megatron, width 4)"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("vocabulary   50,304 rows padded to 50,688 (+384, by megatron)"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("block forward: 2 x all_reduce, 12,582,912 bytes in all, group 4"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("-byte values, sliced by megatron at width 4, fusion"), std::string::npos)
      << r.out;
  // Context parallelism's width is not a tensor-parallel one: the summary names the strategy.
  auto cp = Phaze("graph --model " + model + " --strategy context_parallel --width 2");
  ASSERT_EQ(cp.exit_code, 0) << cp.err;
  EXPECT_NE(cp.out.find("-byte values, sliced by context_parallel at width 2, fusion"),
            std::string::npos)
      << cp.out;
  EXPECT_NE(Phaze("graph --model " + model).out.find("-byte values, unsliced, fusion"),
            std::string::npos);
  auto typo = Phaze("graph --model " + model + " --strategy megatronn --width 4");
  EXPECT_USAGE_ERROR(typo, "no parallelism strategy named 'megatronn'");
  EXPECT_NE(typo.err.find("registered: context_parallel, megatron, moe, sequence_parallel"), std::string::npos)
      << typo.err;
  auto refused = Phaze("graph --model " + model + " --strategy megatron --width 3");
  EXPECT_USAGE_ERROR(refused,
                     "cannot split megatron-8.3b 3 ways: the 32 attention heads are not "
                     "divisible by 3");
  // Mixtral's experts over eight devices: one whole expert each, beside the rest whole — by hand,
  // the published 46,702,792,704 less 7 of the 8 experts (32 layers × 3·4096·14336 each) — and
  // the dispatch and combine all-to-alls over the eight.
  const std::string mixtral = std::string(PHAZE_SOURCE_DIR) + "/workloads/mixtral-8x7b.yaml";
  auto folded = Phaze("graph --model " + mixtral + " --strategy moe --expert-parallel 8");
  ASSERT_EQ(folded.exit_code, 0) << folded.err;
  EXPECT_NE(folded.out.find("parameters   7,242,780,672 per device (strategy moe, width 1)\n"),
            std::string::npos)
      << folded.out;  // a slice, not compared with the whole model's published count
  EXPECT_NE(folded.out.find("-byte values, sliced by moe at width 1, fusion"), std::string::npos)
      << folded.out;
  EXPECT_NE(folded.out.find("block forward: 2 x all_to_all, 134,217,728 bytes in all, group 8"),
            std::string::npos)
      << folded.out;
  // At width 2 with e 4 a device keeps 8/4 experts: whole (their e/2 = 2 replicas joining the
  // two devices) or split over the two (expert tensor parallelism, e counting replicas) — half
  // of 2 experts' 32 × 3·4096·14336 parameters fewer, the rest the same.
  auto per_device = [&](const std::string& flags) {
    const auto r = Phaze("graph --model " + mixtral + " --strategy moe --width 2 " + flags);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    const std::size_t at = r.out.find("parameters   ");
    if (at == std::string::npos) return std::int64_t{-1};
    std::string digits;
    for (std::size_t i = at + 13; i < r.out.size() && r.out[i] != ' '; ++i) {
      if (r.out[i] != ',') digits += r.out[i];
    }
    return std::int64_t{std::stoll(digits)};
  };
  EXPECT_EQ(per_device("--expert-parallel 4") -
                per_device("--expert-parallel 4 --expert-tensor-parallel width"),
            std::int64_t{2} * 32 * 3 * 4096 * 14336 / 2);
  EXPECT_USAGE_ERROR(Phaze("graph --model " + mixtral + " --expert-tensor-parallel width"),
                     "phaze graph: --expert-tensor-parallel needs --strategy moe");
  EXPECT_USAGE_ERROR(Phaze("graph --model " + model + " --strategy moe --width 2 "
                           "--expert-tensor-parallel width"),
                     "--expert-tensor-parallel width: megatron-8.3b has no experts to split");
  EXPECT_USAGE_ERROR(Phaze("graph --model " + mixtral + " --expert-parallel 8"),
                     "phaze graph: --expert-parallel needs --strategy moe");
  EXPECT_USAGE_ERROR(Phaze("graph --model " + mixtral + " --strategy moe --expert-parallel 3"),
                     "--expert-parallel 3: the 8 experts of mixtral-8x7b are not divisible by 3");
  auto plugins = Phaze("plugins");
  EXPECT_NE(plugins.out.find("strategy   megatron"), std::string::npos) << plugins.out;
  EXPECT_NE(plugins.out.find("strategy   sequence_parallel"), std::string::npos) << plugins.out;
  EXPECT_NE(plugins.out.find("strategy   moe"), std::string::npos) << plugins.out;
  testing::TempDir dir;
  // Chosen by name in the run config; a misspelt one lists the registered strategies.
  testing::WriteFile(dir / "run.yaml", "models: [m.yaml]\nstrategy: moee\n");
  auto search = Phaze("search --config " + (dir / "run.yaml").string());
  EXPECT_EQ(search.exit_code, 2);
  EXPECT_NE(
      search.err.find("run.yaml:2:11: strategy: no parallelism strategy named 'moee'; registered: "
                      "context_parallel, megatron, moe, sequence_parallel"),
      std::string::npos)
      << search.err;
  testing::WriteFile(dir / "run.yaml", "models: [m.yaml]\nstrategy: moe\n");
  EXPECT_NE(Phaze("search --config " + (dir / "run.yaml").string()).err.find("m.yaml: cannot read the file"),
            std::string::npos);  // the name is accepted; the absent model file stops the search
  // A sliced graph (collectives included) survives the graph file byte for byte.
  const std::string tiny = std::string(PHAZE_SOURCE_DIR) + "/workloads/tiny-gpt.yaml";
  auto sliced = Phaze("graph --model " + tiny + " --strategy megatron --width 2 --format json -o " +
                      (dir / "s.json").string());
  ASSERT_EQ(sliced.exit_code, 0) << sliced.err;
  auto again = Phaze("graph --model " + (dir / "s.json").string() + " --format json");
  EXPECT_EQ(again.out, sliced.out);
}

// Adam with bf16 moments (--optimizer adam-bf16-moments): the optimizer state is 8 bytes a
// parameter where adam-mixed's is 12 (fp32 master + two fp32 moments), so predict.json's stage
// memory holds 2/3 of it, weights and gradients unchanged; the step touches 2 + 4 + 8 of 2 + 4 +
// 12 bytes a parameter. Launched as Megatron-LM's precision-aware optimizer, which needs the
// distributed optimizer: without a sharding there are no Megatron-LM arguments, and TorchTitan
// (FP32 moments) has none either way.
TEST(Cli, Bf16MomentsKeepTwoThirdsOfTheOptimizerState) {
  testing::TempDir dir;
  const std::string predict = "-q predict --model " + std::string(PHAZE_SOURCE_DIR) +
                              "/workloads/tiny-gpt.yaml --arch h100-sxm-80gb --plan 1,1,4 "
                              "--micro-batch 1 --global-batch 4 ";
  auto run = [&](const std::string& name, const std::string& flags) {
    const std::string out = (dir / (name + ".json")).string();
    const auto r = Phaze(predict + flags + " -o " + out);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return ConfigNode::ParseFile(out);
  };
  const ConfigNode mixed = run("mixed", "--sharding optimizer");
  const ConfigNode bf16 = run("bf16", "--sharding optimizer --optimizer adam-bf16-moments");
  EXPECT_DOUBLE_EQ(FirstStageMemory(bf16, "optimizer_state_bytes"),
                   FirstStageMemory(mixed, "optimizer_state_bytes") * 8 / 12);
  EXPECT_DOUBLE_EQ(FirstStageMemory(bf16, "weight_bytes"), FirstStageMemory(mixed, "weight_bytes"));
  EXPECT_DOUBLE_EQ(FirstStageMemory(bf16, "gradient_bytes"),
                   FirstStageMemory(mixed, "gradient_bytes"));
  std::string args;
  for (const auto& x : bf16.Child("megatron_args").Elements()) args += " " + x.AsString();
  EXPECT_NE(args.find(" --use-distributed-optimizer --use-precision-aware-optimizer "
                      "--exp-avg-dtype bf16 --exp-avg-sq-dtype bf16"),
            std::string::npos)
      << args;
  const ConfigNode fsdp = run("fsdp", "--sharding parameters --optimizer adam-bf16-moments");
  EXPECT_FALSE(fsdp.Optional("torchtitan_args"));  // null
  EXPECT_NE(fsdp.Child("torchtitan_args_note").AsString().find("moments in FP32"),
            std::string::npos)
      << fsdp.Child("torchtitan_args_note").AsString();
  const ConfigNode unsharded = run("none", "--optimizer adam-bf16-moments");
  EXPECT_FALSE(unsharded.Optional("megatron_args"));  // null
  EXPECT_NE(unsharded.Child("megatron_args_note").AsString().find("distributed optimizer"),
            std::string::npos);
  EXPECT_USAGE_ERROR(Phaze(predict + "--optimizer adamw"),
                     "--optimizer: expected adam-mixed, adam-bf16-moments or sgd, found 'adamw'");
}

// predict's launch arguments reproduce the split it priced: Megatron-LM's default only when every
// chunk holds the same blocks (it refuses 32 blocks over 3 stages), else its layout, which
// pipeline_split_test.cpp reads back as Megatron-LM parses it; Megatron-FSDP under a pipeline is
// not offered (plan never ranks one).
TEST(Cli, PredictsLaunchArgumentsReproduceItsPipelineSplit) {
  testing::TempDir dir;
  const std::string predict = "-q predict --model " + std::string(PHAZE_SOURCE_DIR) +
                              "/workloads/llama2-7b.yaml --arch h100-sxm-80gb --system dgx-h100 "
                              "--micro-batch 1 --global-batch 8 ";
  auto launch = [&](const std::string& flags) {
    const std::string out = (dir / "p.json").string();
    const auto r = Phaze(predict + flags + " -o " + out);
    EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.err;
    const ConfigNode j = ConfigNode::ParseFile(out);
    if (!j.Optional("megatron_args")) return "null: " + j.Child("megatron_args_note").AsString();
    std::string all;
    for (const auto& x : j.Child("megatron_args").Elements()) all += " " + x.AsString();
    return all;
  };
  auto has = [](const std::string& args, const std::string& part) {
    return args.find(part) != std::string::npos;
  };
  const std::string even = launch("--plan 1,4,2");  // 8 blocks a stage
  EXPECT_TRUE(has(even, " --pipeline-model-parallel-size 4 --micro-batch-size")) << even;
  EXPECT_FALSE(has(even, "layout")) << even;
  const std::string interleaved = launch("--plan 1,4,2,2");  // 4 blocks a chunk
  EXPECT_TRUE(has(interleaved, " --num-layers-per-virtual-pipeline-stage 4 ")) << interleaved;
  // 32 blocks over 3: 11, 11, 10 with the embedding and the head.
  EXPECT_TRUE(has(launch("--plan 1,3,1"),
                  " --pipeline-model-parallel-size 3 "
                  "--pipeline-model-parallel-layout Et*11|t*11|t*10L "));
  // Layers 0–9 and 10–33: 9 and 23 blocks.
  EXPECT_TRUE(has(launch("--plan 1,2,4 --stage-starts 10"),
                  " --pipeline-model-parallel-layout Et*9|t*23L "));
  // The devices' 7, 9, 9, 7 blocks over two chunks each (pipeline_split.hpp's order).
  const std::string chunks = launch("--plan 1,4,2,2 --stage-starts 8,17,26");
  EXPECT_TRUE(has(chunks, " --pipeline-model-parallel-layout Et*3|(t*5|)*2,(t*4|)*4,t*3L "))
      << chunks;
  EXPECT_FALSE(has(chunks, "virtual")) << chunks;  // the layout gives the chunks
  EXPECT_TRUE(has(launch("--plan 1,2,4 --sharding parameters"),
                  "null: sharding parameters under "
                  "a pipeline: Megatron-LM shards"));
}

// A file of one kind given where another is read is named for what it is (error_hints.cpp), from
// its own top-level keys; a file of the right kind with a mistyped key gets no such hint. A
// malformed number names its flag and what it expects, not Boost's generic "is invalid".
TEST(Cli, NamesTheKindOfAMisplacedFileAndWhatANumberFlagExpects) {
  const std::string src = std::string(PHAZE_SOURCE_DIR);
  const std::string model = src + "/workloads/tiny-gpt.yaml";
  const std::string rest = " --micro-batch 1 --global-batch 4 --plan 1,1,1";
  auto predict = [&](const std::string& m, const std::string& arch, const std::string& more) {
    return Phaze("predict --model " + m + " --arch " + arch + rest + more);
  };
  EXPECT_USAGE_ERROR(predict(src + "/share/recipes/torchtitan-2025.yaml", "h100-sxm-80gb", ""),
                     "torchtitan-2025.yaml looks like a training recipe (share/recipes/): give "
                     "it with --recipe");
  EXPECT_USAGE_ERROR(predict(model, model, ""),
                     "tiny-gpt.yaml looks like a model (workloads/): give it with --model");
  EXPECT_USAGE_ERROR(
      predict(model, "h100-sxm-80gb", " --system " + src + "/share/arch/h100-sxm-80gb.yaml"),
      "h100-sxm-80gb.yaml looks like a device (share/arch/): give it with --arch");
  EXPECT_USAGE_ERROR(predict(src + "/share/systems/dgx-h100.yaml", "h100-sxm-80gb", ""),
                     "dgx-h100.yaml looks like a system description (share/systems/): give it "
                     "with --system");
  EXPECT_USAGE_ERROR(predict(model, src + "/share/arch/a100-space.yaml", ""),
                     "a100-space.yaml looks like an architecture space");
  EXPECT_USAGE_ERROR(predict(src + "/share/runs/default.yaml", "h100-sxm-80gb", ""),
                     "default.yaml looks like a run config (share/runs/): give it with --config");
  EXPECT_USAGE_ERROR(Phaze("search --config " + model),
                     "tiny-gpt.yaml looks like a model (workloads/): give it with --model");
  // The right kind of file with a key mistyped: the unknown key, and no hint.
  testing::TempDir dir;
  const std::string typo = (dir / "typo.yaml").string();
  {
    std::ifstream in(model);
    std::ofstream out(typo);
    out << in.rdbuf() << "\nhiden: 3\n";
  }
  const auto r = predict(typo, "h100-sxm-80gb", "");
  EXPECT_USAGE_ERROR(r, "unknown key 'hiden'; did you mean 'hidden'?");
  EXPECT_EQ(r.err.find("looks like"), std::string::npos) << r.err;
  EXPECT_USAGE_ERROR(predict(model, "h100-sxm-80gb", " --accelerators 1k8"),
                     "error: --accelerators: expected an integer, found '1k8'");
  EXPECT_USAGE_ERROR(predict(model, "h100-sxm-80gb", " --hbm-gib 8o"),
                     "error: --hbm-gib: expected a number, found '8o'");
  // A string option's own check stays: --plan parses its words itself.
  EXPECT_USAGE_ERROR(Phaze("predict --model " + model +
                           " --arch h100-sxm-80gb --micro-batch 1 --global-batch 4 --plan 1,x,1"),
                     "--plan: expected comma-separated non-negative integers");
}

}  // namespace
}  // namespace phaze

namespace phaze {
namespace {

// GPT-3 175B (Megatron-LM: h 12288, a 96, 96 blocks, s 2048, vocabulary 50,304, tied head, learned
// positions, dropout) on t 8, p 8, d 1, micro-batch 1, batch 64. Per-stage memory computed here
// from the hyperparameters: 18 bytes per per-device parameter (bf16 weight, fp32 gradient, fp32
// master, m, v) + (p − stage) in-flight micro-batches × the bytes each layer keeps (Korthikanti
// et al., Table 2, for the blocks; the embedding's ids and dropout mask; the head's norm and
// LM-head inputs and fp32 probabilities) + the working set (one block's re-materialised
// activations). The stages of a predict -o file's plan.
std::vector<ConfigNode> PlanStages(const std::filesystem::path& predict_json) {
  return ConfigNode::ParseFile(predict_json.string())
      .Child("result")
      .Child("plan")
      .Child("stages")
      .Elements();
}

TEST(Cli, PredictGpt3MemoryPerStageByHand) {
  // V: the vocabulary padded to a multiple of 128·t (Megatron-LM's 51,200 rows for GPT-3 at t = 8).
  const double s = 2048, h = 12288, a = 96, V = 51200, t = 8, sbh = s * h;
  const double block_params = 12 * h * h / t + 7 * h / t + 6 * h;
  const double first_params = 12 * block_params + V * h / t + s * h;  // + word and position tables
  const double last_params = 12 * block_params + 2 * h + V * h / t;    // + final norm, tied head
  const double core = 5 * a * s * s / t;                               // 5as²b/t
  struct Case {
    std::string flags;
    double block_kept, working, embedding_kept, head_kept;
  };
  const Case cases[] = {
      // Full recompute: a block keeps its input 2sbh and re-materialises all of
      // sbh(10 + 24/t) + 5as²b/t minus that input during its backward.
      {"--recompute full", 2 * sbh, 10 * sbh + 24 * sbh / t + core - 2 * sbh,
       8 * s + 8 * s + sbh, 2 * sbh + 2 * sbh + 4 * s * V / t},
      // Selective with sequence parallelism: sbh·34/t kept; the attention core re-materialised.
      {"--recompute selective --sequence-parallel", 34 * sbh / t, core, 8 * s + 8 * s + sbh / t,
       2 * sbh / t + 2 * sbh / t + 4 * s * V / t},
  };
  for (const Case& c : cases) {
    testing::TempDir dir;
    const auto out = dir / "p.json";
    auto r = Phaze("predict --model " + std::string(PHAZE_SOURCE_DIR) +
                   "/workloads/megatron-gpt3-175b.yaml --arch tpuv4 --hbm-gib 80 --plan 8,8,1 "
                   "--micro-batch 1 --global-batch 64 " + c.flags + " -o " + out.string());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    for (const char* part : {"iteration", "forward", "backward", "recompute", "pipeline sends",
                             "pipeline bubble", "data parallel", "optimizer step", "MFU"}) {
      EXPECT_NE(r.out.find(part), std::string::npos) << part << "\n" << r.out;
    }
    const ConfigNode j = ConfigNode::ParseFile(out.string()).Child("result");
    std::vector<double> memory;
    for (const auto& s : j.Child("plan").Child("stages").Elements()) {
      memory.push_back(s.Child("peak_memory_bytes").AsDouble());
    }
    ASSERT_EQ(memory.size(), 8u);
    for (int k = 0; k < 8; ++k) {
      const double params = k == 0 ? first_params : k == 7 ? last_params : 12 * block_params;
      const double kept = 12 * c.block_kept + (k == 0 ? c.embedding_kept : 0) +
                          (k == 7 ? c.head_kept : 0);
      EXPECT_DOUBLE_EQ(memory[k], 18 * params + (8 - k) * kept + c.working)
          << c.flags << " stage " << k;
    }
    // The parts add up to the iteration; 64 micro-batches, p − 1 = 7 stage slots of bubble.
    const ConfigNode b = j.Child("plan").Child("breakdown");
    double sum = 0;
    for (const char* k : {"forward_s", "backward_s", "recompute_s", "pipeline_send_s", "bubble_s",
                          "data_parallel_s", "optimizer_s", "tied_embedding_s"}) {
      sum += b.Child(k).AsDouble();
    }
    const double iteration = j.Child("time_per_batch_s").AsDouble();
    EXPECT_NEAR(sum, iteration, 1e-9 * iteration);
    EXPECT_GT(b.Child("recompute_s").AsDouble(), 0);
    EXPECT_GT(b.Child("tied_embedding_s").AsDouble(), 0);  // first and last stage share the table
    EXPECT_EQ(b.Child("data_parallel_s").AsDouble(), 0);   // d = 1
    EXPECT_DOUBLE_EQ(j.Child("throughput_tokens_per_s").AsDouble(), 64 * 2048 / iteration);
  }
  // Megatron with --fp16 keeps a 16-bit gradient buffer (2 bytes per parameter, the 4 of the
  // fp32 buffer above less 2) and its optimizer step copies it to fp32 (4 more) with the
  // activations freed: each stage's peak is the larger of the forward and backward's
  // 16·params + kept + working and the step's 20·params.
  {
    testing::TempDir dir;
    const auto config = dir / "run.yaml";
    std::ofstream(config) << "training: {gradient_reduction_precision: fp16}\n";
    const auto out = dir / "p.json";
    const Case& c = cases[0];
    auto r =
        Phaze("--config " + config.string() + " predict --model " + std::string(PHAZE_SOURCE_DIR) +
              "/workloads/megatron-gpt3-175b.yaml --arch tpuv4 --hbm-gib 80 --plan 8,8,1 "
              "--micro-batch 1 --global-batch 64 " +
              c.flags + " -o " + out.string());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("fp32 gradient copies"), std::string::npos) << r.out;
    const auto stages = PlanStages(out);
    ASSERT_EQ(stages.size(), 8u);
    for (int k = 0; k < 8; ++k) {
      const double params = k == 0 ? first_params : k == 7 ? last_params : 12 * block_params;
      const double kept =
          12 * c.block_kept + (k == 0 ? c.embedding_kept : 0) + (k == 7 ? c.head_kept : 0);
      const double backward = 16 * params + (8 - k) * kept + c.working;
      const ConfigNode m = stages[k].Child("memory");
      EXPECT_DOUBLE_EQ(m.Child("gradient_bytes").AsDouble(), 2 * params) << "stage " << k;
      EXPECT_DOUBLE_EQ(m.Child("step_working_bytes").AsDouble(), 4 * params) << "stage " << k;
      EXPECT_DOUBLE_EQ(stages[k].Child("peak_memory_bytes").AsDouble(),
                       std::max(backward, 20 * params))
          << "stage " << k;
      EXPECT_EQ(m.Child("peak_at_step").AsBool(), 20 * params > backward) << "stage " << k;
    }
  }
  // The loss's backward holds, beside the FP32 probabilities it keeps, its 16-bit gradient
  // (Megatron-LM: 2 bytes per logit) or two FP32 temporaries (F.cross_entropy: 8 bytes), s·V/t
  // logits per device at micro-batch 1; without recompute nothing else re-materialises, so that
  // is the last stage's working set, and the other stages have none.
  for (const auto& [loss, bytes_per_logit] : {std::pair{"megatron", 2.0}, {"torch", 8.0}}) {
    testing::TempDir dir;
    const auto out = dir / "p.json";
    auto r = Phaze("-q predict --model " + std::string(PHAZE_SOURCE_DIR) +
                   "/workloads/megatron-gpt3-175b.yaml --arch tpuv4 --hbm-gib 1000 --plan 8,8,1 "
                   "--micro-batch 1 --global-batch 64 --recompute none --loss " +
                   loss + " -o " + out.string());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto stages = PlanStages(out);
    ASSERT_EQ(stages.size(), 8u);
    for (int k = 0; k < 8; ++k) {
      EXPECT_DOUBLE_EQ(stages[k].Child("memory").Child("working_bytes").AsDouble(),
                       k == 7 ? bytes_per_logit * s * V / t : 0.0)
          << loss << " stage " << k;
    }
  }
  // Without recompute the first stage keeps 8 micro-batches of full activations: 40 GiB is short.
  // The plan is still timed and its memory shown, stage by stage, with the overflow (exit 1).
  testing::TempDir over_dir;
  auto over = Phaze("predict --model " + std::string(PHAZE_SOURCE_DIR) +
                    "/workloads/megatron-gpt3-175b.yaml --arch tpuv4 --hbm-gib 40 --plan 8,8,1 "
                    "--micro-batch 1 --global-batch 64 --recompute none -o " +
                    (over_dir / "over.json").string());
  EXPECT_EQ(over.exit_code, 1);
  EXPECT_NE(over.err.find("stage 0 (layers 0-12) needs"), std::string::npos) << over.err;
  EXPECT_NE(over.err.find("> HBM 42949672960 bytes (40.00 GiB): over by"), std::string::npos)
      << over.err;
  EXPECT_NE(over.out.find("  iteration"), std::string::npos) << over.out;
  const ConfigNode over_json = ConfigNode::ParseFile((over_dir / "over.json").string()).Child("result");
  EXPECT_FALSE(over_json.Child("feasible").AsBool());
  EXPECT_GT(over_json.Child("time_per_batch_s").AsDouble(), 0);
  const auto over_stages = over_json.Child("plan").Child("stages").Elements();
  ASSERT_EQ(over_stages.size(), 8u);  // every stage, not only up to the first that overflows
  int shown = 0;  // one "over the HBM by" line per stage above 40 GiB
  for (const auto& s : over_stages) shown += s.Child("peak_memory_bytes").AsDouble() > 42949672960.0;
  int printed = 0;
  for (std::size_t at = over.out.find("over the HBM by"); at != std::string::npos;
       at = over.out.find("over the HBM by", at + 1)) {
    ++printed;
  }
  EXPECT_GT(shown, 0);
  EXPECT_EQ(printed, shown);
  // Issue 40: Llama-2 7B on one 8-GPU A100 node, d 8, micro-batch 1 — 16 bytes of weights,
  // fp32 gradients and Adam state per parameter (~100 GiB) do not fit in 80 GB unsharded; ZeRO-3
  // divides them by 8 and fits; the sharding is echoed, and a bad word is refused by name.
  const std::string llama = "-q predict --model " + std::string(PHAZE_SOURCE_DIR) +
                            "/workloads/llama2-7b.yaml --arch a100-sxm-80gb --system dgx-a100 "
                            "--plan 1,1,8 --micro-batch 1 --global-batch 64";
  EXPECT_EQ(Phaze(llama).exit_code, 1);
  EXPECT_EQ(Phaze(llama + " --sharding optimizer").exit_code, 1);
  testing::TempDir zero_dir;
  auto zero3 = Phaze(llama + " --sharding parameters -o " + (zero_dir / "z3.json").string());
  EXPECT_EQ(zero3.exit_code, 0) << zero3.err;
  const ConfigNode z3 = ConfigNode::ParseFile((zero_dir / "z3.json").string()).Child("result");
  EXPECT_TRUE(z3.Child("feasible").AsBool());
  EXPECT_EQ(z3.Child("sharding").AsString(), "parameters");
  const ConfigNode z3_memory = z3.Child("plan").Child("stages").Elements()[0].Child("memory");
  EXPECT_GT(z3_memory.Child("gathered_bytes").AsDouble(), 0);
  EXPECT_EQ(z3.Child("plan").Child("breakdown").Child("data_parallel_s").AsDouble(), 0);
  auto bad_sharding = Phaze(llama + " --sharding zero3");
  EXPECT_USAGE_ERROR(bad_sharding,
                     "--sharding: expected none, optimizer, gradients or parameters, "
                     "found 'zero3'");
  // Issue 40: GPT-3 175B on 1,024 H100s (t 8, p 8, d 16, selective recompute + SP) in FP8 against
  // BF16: published FP8 speed-ups on H100 at the same plan are 1.16× (Llama 3 8B, 64 GPUs) to
  // 1.62× (Llama 3.1 405B, 128 GPUs) in TorchTitan's benchmarks (share/validation/h100.md); the
  // issue asks for 1.1–1.8×. FP8 on an A100 is refused, naming the op and the device.
  const std::string gpt3_h100 = "-q predict --model " + std::string(PHAZE_SOURCE_DIR) +
                                "/workloads/megatron-gpt3-175b.yaml --arch h100-sxm-80gb --system "
                                "dgx-h100 --plan 8,8,16 --micro-batch 1 --global-batch 1536 "
                                "--recompute selective --sequence-parallel -o ";
  testing::TempDir fp8_dir;
  const auto by_precision = ResultsOver(gpt3_h100, "--precision", {"bf16", "fp8"}, fp8_dir.path());
  ASSERT_EQ(by_precision.size(), 2u);
  EXPECT_EQ(by_precision[0].Child("precision").AsString(), "bf16");
  EXPECT_EQ(by_precision[1].Child("precision").AsString(), "fp8");
  const double fp8_speedup = by_precision[0].Child("time_per_batch_s").AsDouble() /
                             by_precision[1].Child("time_per_batch_s").AsDouble();
  EXPECT_GT(fp8_speedup, 1.1);
  EXPECT_LT(fp8_speedup, 1.8);
  // Current scaling (torchao's float8, TE's Float8CurrentScaling) adds the amax and cast passes
  // TE's delayed scaling fuses away: the same plan is slower, and the JSON names the recipe.
  const auto by_recipe = ResultsOver(gpt3_h100, "--precision fp8 --fp8-recipe",
                                     {"delayed", "tensorwise"}, fp8_dir.path());
  ASSERT_EQ(by_recipe.size(), 2u);
  EXPECT_EQ(by_recipe[0].Child("time_per_batch_s").AsDouble(),
            by_precision[1].Child("time_per_batch_s").AsDouble());  // delayed: the default
  EXPECT_GT(by_recipe[1].Child("time_per_batch_s").AsDouble(),
            by_recipe[0].Child("time_per_batch_s").AsDouble());
  auto a100_fp8 = Phaze("-q predict --model " + std::string(PHAZE_SOURCE_DIR) +
                        "/workloads/tiny-gpt.yaml --arch a100-sxm-80gb --plan 1,1,1 --micro-batch 1 "
                        "--global-batch 8 --precision fp8");
  EXPECT_USAGE_ERROR(a100_fp8, "has no FP8 tensor rate");
  // --power-limit-w: the same plan at 500 W of the H100's 700 W TDP is slower, at most by the
  // tensor cores' clock ratio ∛((500 − 60.7) / (700 − 60.7)) = 0.8825 (every second in GEMMs)
  // and by something (a Llama 2 7B step is mostly GEMMs); a device without a TDP refuses it.
  {
    const std::string llama = "-q predict --model " + std::string(PHAZE_SOURCE_DIR) +
                              "/workloads/llama2-7b.yaml --arch h100-sxm-80gb --system dgx-h100 "
                              "--plan 1,1,8 --micro-batch 2 --global-batch 64 --recompute full "
                              "--sharding parameters -o ";
    testing::TempDir dir;
    const auto by_limit = ResultsOver(llama, "--power-limit-w", {"700", "500"}, dir.path());
    ASSERT_EQ(by_limit.size(), 2u);
    const double slowdown = by_limit[1].Child("time_per_batch_s").AsDouble() /
                            by_limit[0].Child("time_per_batch_s").AsDouble();
    EXPECT_GT(slowdown, 1.02);
    EXPECT_LT(slowdown, 1 / std::cbrt(439.3 / 639.3));
    // The JSON says at what power the device ran: the limit, the TDP and the tensor clock.
    for (int i : {0, 1}) {
      const ConfigNode device =
          ConfigNode::ParseFile((dir / (i == 0 ? "700.json" : "500.json")).string())
              .Child("device");
      EXPECT_EQ(device.Child("tdp_w").AsDouble(), 700);
      EXPECT_EQ(device.Child("power_limit_w").AsDouble(), i == 0 ? 700 : 500);
      EXPECT_NEAR(device.Child("tensor_clock_scale").AsDouble(),
                  i == 0 ? 1.0 : std::cbrt(439.3 / 639.3), 1e-3);
    }
    auto header = Phaze(llama.substr(3) + (dir / "h.json").string() + " --power-limit-w 500");
    EXPECT_NE(header.out.find("(dgx-h100, estimator device, 500 W of its 700 W TDP)"),
              std::string::npos)
        << header.out;
    auto no_tdp = Phaze("-q predict --model " + std::string(PHAZE_SOURCE_DIR) +
                        "/workloads/tiny-gpt.yaml --arch tpuv4 --plan 1,1,1 --micro-batch 1 "
                        "--global-batch 8 --power-limit-w 300");
    EXPECT_USAGE_ERROR(no_tdp,
                       "--power-limit-w 300 on architecture 'tpuv4': power_limit_w "
                       "needs tdp_w");
    // Above the TDP, and at or below the static power, the architecture's and the device model's
    // own rules refuse it.
    EXPECT_USAGE_ERROR(Phaze(llama + (dir / "x.json").string() + " --power-limit-w 800"),
                       "--power-limit-w 800 on architecture 'h100-sxm-80gb' (TDP 700 W): "
                       "power_limit_w above tdp_w");
    // The device model's reason, without naming the architecture twice.
    auto low = Phaze(llama + (dir / "x.json").string() + " --power-limit-w 50");
    EXPECT_USAGE_ERROR(low, "leaves nothing above its static power (60.7 W");
    EXPECT_EQ(low.err.find("architecture 'h100-sxm-80gb'", low.err.find("(TDP 700 W)")),
              std::string::npos)
        << low.err;
  }
  // A fixed device's preset names the estimator it is calibrated for: the A100 preset predicts with
  // the device model unless the run config names another.
  {
    testing::TempDir dir;
    const std::string gpt3 = std::string(PHAZE_SOURCE_DIR) + "/workloads/megatron-gpt3-175b.yaml";
    const std::string plan = " --arch a100-sxm-80gb --system dgx-a100 --plan 8,16,8 "
                             "--micro-batch 1 --global-batch 1536 --recompute full -o ";
    auto gpu = Phaze("predict --model " + gpt3 + plan + (dir / "gpu.json").string());
    ASSERT_EQ(gpu.exit_code, 0) << gpu.err;
    EXPECT_NE(gpu.out.find("(dgx-a100, estimator device)"), std::string::npos) << gpu.out;
    const auto config = dir / "run.yaml";
    std::ofstream(config) << "estimator: analytic\n";
    auto analytic = Phaze("--config " + config.string() + " predict --model " + gpt3 + plan +
                          (dir / "analytic.json").string());
    ASSERT_EQ(analytic.exit_code, 0) << analytic.err;
    const ConfigNode g = ConfigNode::ParseFile((dir / "gpu.json").string());
    const ConfigNode a = ConfigNode::ParseFile((dir / "analytic.json").string());
    EXPECT_EQ(g.Child("estimator").AsString(), "device");
    EXPECT_EQ(a.Child("estimator").AsString(), "analytic");
    EXPECT_NE(g.Child("result").Child("time_per_batch_s").AsDouble(),
              a.Child("result").Child("time_per_batch_s").AsDouble());
  }
  // Bad input is a usage error with the reason.
  auto bad = Phaze("predict --model x.yaml --arch tpuv4 --plan 8,8 --micro-batch 1");
  EXPECT_USAGE_ERROR(bad, "--plan: expected t,p,d or t,p,d,v");
}

}  // namespace
}  // namespace phaze

namespace phaze {
namespace {

// Issue 39: Megatron's GPT-3 175B plan (t 8, p 16, d 8) on 1,024 A100s draws a power inside the
// A100's 400 W TDP and above 40% of it; the energy parts add up to the step's energy, whose
// static part is the preset's 20 W + 0.05 W/mm² × 826 mm² on every device for the whole step;
// power is that energy over the step and the devices; the cost and time to train follow from the
// AWS price ($5.12 per GPU-hour) and the token budget.
TEST(Cli, PredictReportsPowerEnergyAndCost) {
  testing::TempDir dir;
  const auto out = dir / "p.json";
  auto r = Phaze("predict --model " + std::string(PHAZE_SOURCE_DIR) +
                 "/workloads/megatron-gpt3-175b.yaml --arch a100-sxm-80gb --system dgx-a100 "
                 "--plan 8,16,8 --micro-batch 1 --global-batch 1536 --recompute full "
                 "--tokens 300e9 -o " + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* part : {"power", "W per device", "J per token", "per million tokens", "days"}) {
    EXPECT_NE(r.out.find(part), std::string::npos) << part << "\n" << r.out;
  }
  const ConfigNode j = ConfigNode::ParseFile(out.string()).Child("result");
  const double power = j.Child("power_w").AsDouble();
  EXPECT_GT(power, 0.4 * 400);
  EXPECT_LE(power, 400);
  const double step = j.Child("time_per_batch_s").AsDouble();
  const double energy = j.Child("energy_per_iteration_j").AsDouble();
  const ConfigNode parts = j.Child("energy_per_iteration_by_part");
  double sum = 0;
  for (const char* k : {"compute_j", "on_chip_j", "memory_j", "network_j", "static_j"}) {
    EXPECT_GT(parts.Child(k).AsDouble(), 0) << k;
    sum += parts.Child(k).AsDouble();
  }
  EXPECT_NEAR(sum, energy, 1e-9 * energy);
  EXPECT_EQ(j.Child("devices_used").AsInt(), 1024);
  EXPECT_NEAR(parts.Child("static_j").AsDouble(), (20 + 0.05 * 826) * 1024 * step, 1e-6 * energy);
  EXPECT_NEAR(power, energy / (step * 1024), 1e-9 * power);
  const double tokens_per_s = j.Child("throughput_tokens_per_s").AsDouble();
  EXPECT_NEAR(j.Child("energy_per_token_j").AsDouble(), energy / (tokens_per_s * step),
              1e-9 * energy);
  EXPECT_DOUBLE_EQ(j.Child("hourly_usd_per_device").AsDouble(), 5.12);
  EXPECT_NEAR(j.Child("usd_per_million_tokens").AsDouble(), 1e6 * 5.12 * 1024 / 3600 / tokens_per_s,
              1e-9);
  EXPECT_NEAR(j.Child("time_to_train_s").AsDouble(), 300e9 / tokens_per_s, 1e-6);
  // A price on the command line wins over the preset's.
  auto priced = Phaze("-q predict --model " + std::string(PHAZE_SOURCE_DIR) +
                      "/workloads/megatron-gpt3-175b.yaml --arch a100-sxm-80gb --system dgx-a100 "
                      "--plan 8,16,8 --micro-batch 1 --global-batch 1536 --recompute full "
                      "--hourly-usd 2 -o " + out.string());
  ASSERT_EQ(priced.exit_code, 0) << priced.err;
  EXPECT_DOUBLE_EQ(
      ConfigNode::ParseFile(out.string()).Child("result").Child("hourly_usd_per_device").AsDouble(),
      2.0);
  EXPECT_EQ(Phaze("predict --model x.yaml --arch tpuv4 --plan 1,1,1 --micro-batch 1 "
                  "--hourly-usd -3").exit_code,
            2);
}

// issue 44: predict's plan is checked against the model where it enters — interleaving, stage
// starts, batch divisibility and the HBM size — with exit 2 naming the flag and the value.
// --recipe is the recipe file's keys written out: the same step time as the run config and flags
// it stands for, the other flags over it, and the data-parallel reduction it overlaps shortens the
// step by that share of the first stage's backward per micro-batch (gradient_sync.hpp).
TEST(Cli, PredictRecipeIsItsKeysOverTheRunConfig) {
  testing::TempDir dir;
  const std::string base = "predict --model " + std::string(PHAZE_SOURCE_DIR) +
                           "/workloads/megatron-gpt3-175b.yaml --arch a100-sxm-80gb --system "
                           "dgx-a100 --plan 8,16,8 --micro-batch 1 --global-batch 1536 "
                           "--recompute full";
  const auto step = [&](const std::string& flags, const std::string& name) {
    const auto out = dir / (name + ".json");
    auto r = Phaze(flags + " -o " + out.string());
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return ConfigNode::ParseFile(out.string()).Child("result");
  };
  testing::WriteFile(dir / "spelled-out.yaml",
                     "training: {attention: flash, gradient_reduction_overlap: 0.8, "
                     "gradient_reduction_precision: fp32}\n");
  const double recipe = step(base + " --recipe megatron-core-2024", "recipe")
                            .Child("time_per_batch_s").AsDouble();
  const ConfigNode named = ConfigNode::ParseFile((dir / "recipe.json").string());
  EXPECT_EQ(named.Child("recipe").AsString(), "megatron-core-2024");
  EXPECT_EQ(named.Child("attention").AsString(), "flash");
  EXPECT_EQ(named.Child("gradient_reduction_overlap").AsDouble(), 0.8);
  const double spelled = step("--config " + (dir / "spelled-out.yaml").string() + " " + base,
                              "spelled").Child("time_per_batch_s").AsDouble();
  EXPECT_EQ(recipe, spelled);
  // --attention over the recipe: unfused with the recipe's overlap.
  const ConfigNode unfused = step(base + " --recipe megatron-core-2024 --attention unfused", "u");
  const ConfigNode plain = step(base, "plain");  // megatron-lm-2021: no overlap
  const ConfigNode plain_breakdown = plain.Child("plan").Child("breakdown");
  const double sync = plain_breakdown.Child("data_parallel_s").AsDouble();
  ASSERT_GT(sync, 0);
  // 1F1B: the first stage's reduction hides behind 0.8 of its last micro-batch's backward (with
  // the full recompute inside it), and here runs past it (the first layer's share is smaller).
  const ConfigNode first = plain.Child("plan").Child("stages").Elements().at(0);
  const double window =
      first.Child("backward_s").AsDouble() + first.Child("recompute_s").AsDouble();
  ASSERT_GT(sync - 0.8 * window, 0.5 * sync);
  const ConfigNode overlapped = unfused.Child("plan").Child("breakdown");
  EXPECT_NEAR(overlapped.Child("data_parallel_s").AsDouble(), sync - 0.8 * window, 1e-9 * sync);
  EXPECT_DOUBLE_EQ(overlapped.Child("data_parallel_total_s").AsDouble(), sync);
  EXPECT_DOUBLE_EQ(plain_breakdown.Child("data_parallel_total_s").AsDouble(), sync);
  EXPECT_NEAR(unfused.Child("time_per_batch_s").AsDouble(),
              plain.Child("time_per_batch_s").AsDouble() - 0.8 * window, 1e-9 * sync);
  // megatron-deepspeed-2023 is its keys too, and its blocking sends only add to the sends.
  testing::WriteFile(dir / "deepspeed.yaml",
                     "training: {attention: megatron, pipeline_sends: blocking}\n");
  const ConfigNode ds = step(base + " --recipe megatron-deepspeed-2023", "ds");
  const ConfigNode ds_named = ConfigNode::ParseFile((dir / "ds.json").string());
  EXPECT_EQ(ds_named.Child("pipeline_sends").AsString(), "blocking");
  EXPECT_EQ(ConfigNode::ParseFile((dir / "plain.json").string()).Child("pipeline_sends").AsString(),
            "batched");
  EXPECT_EQ(ds.Child("time_per_batch_s").AsDouble(),
            step("--config " + (dir / "deepspeed.yaml").string() + " " + base, "ds-spelled")
                .Child("time_per_batch_s")
                .AsDouble());
  const ConfigNode ds_breakdown = ds.Child("plan").Child("breakdown");
  EXPECT_GT(ds_breakdown.Child("pipeline_send_s").AsDouble(),
            plain_breakdown.Child("pipeline_send_s").AsDouble());
  EXPECT_DOUBLE_EQ(ds_breakdown.Child("forward_s").AsDouble(),
                   plain_breakdown.Child("forward_s").AsDouble());
  // A recipe that does not exist says which flag and what there is.
  auto bad = Phaze(base + " --recipe megatron-core-2023");
  EXPECT_USAGE_ERROR(bad,
                     "--recipe: no recipe file or preset named 'megatron-core-2023'; did you "
                     "mean 'megatron-core-2024'?");
}

// TorchTitan's per-op selective checkpointing (`--recompute per-op`) lies between no recompute
// and full recompute in both directions: it re-runs part of each block's forward (more time than
// none, less than full) and keeps part of its activations (less memory than none, more than
// full). Megatron-LM has no such granularity, so a plan with it gets no Megatron-LM arguments.
// GPT-2's vocabulary unpadded (make_vocab_size_divisible_by: 1: 50,257 rows, odd) has fewer
// FLOPs than Megatron's padded 50,304 and is slower all the same: cuBLAS runs a GEMM with an odd
// row length near the chip's rate without tensor cores (unaligned_gemm_efficiency, measured on an
// H200: the nanoGPT lesson of padding to a multiple of 64).
TEST(Cli, PredictPricesAnUnpaddedVocabularysHeadAsTheKernelsRunIt) {
  testing::TempDir dir;
  std::map<std::string, double> step;
  for (const std::string multiple : {"128", "1"}) {
    testing::WriteFile(
        dir / (multiple + ".yaml"),
        "strategy: {name: megatron, params: {make_vocab_size_divisible_by: " + multiple + "}}\n");
    const std::string out = (dir / (multiple + ".json")).string();
    auto r = Phaze("-q --config " + (dir / (multiple + ".yaml")).string() + " predict --model " +
                   std::string(PHAZE_SOURCE_DIR) +
                   "/workloads/gpt2-xl.yaml --arch h100-sxm-80gb --system dgx-h100 --plan 1,1,8 "
                   "--micro-batch 4 --global-batch 256 -o " +
                   out);
    ASSERT_EQ(r.exit_code, 0) << multiple << "\n" << r.err;
    step[multiple] =
        ConfigNode::ParseFile(out).Child("result").Child("time_per_batch_s").AsDouble();
  }
  EXPECT_GT(step["1"], 1.03 * step["128"]);
}

TEST(Cli, PredictPerOpCheckpointingLiesBetweenNoneAndFull) {
  testing::TempDir dir;
  std::map<std::string, std::pair<double, double>> figures;  // mode → (recompute s, peak bytes)
  double previous_time = 0;
  for (const std::string mode : {"none", "per-op", "full"}) {
    const std::string out = (dir / (mode + ".json")).string();
    auto r = Phaze("-q predict --model " + std::string(PHAZE_SOURCE_DIR) +
                   "/workloads/llama2-7b.yaml --arch h100-sxm-80gb --system dgx-h100 --plan 1,1,8 "
                   "--micro-batch 2 --global-batch 16 --sharding parameters --attention flash "
                   "--hbm-gib 1024 --recompute " +
                   mode + " -o " + out);
    ASSERT_EQ(r.exit_code, 0) << mode << "\n" << r.err;
    const ConfigNode result = ConfigNode::ParseFile(out).Child("result");
    const double time = result.Child("time_per_batch_s").AsDouble();
    EXPECT_GT(time, previous_time) << mode;
    previous_time = time;
    double peak = 0;
    for (const auto& stage : result.Child("plan").Child("stages").Elements()) {
      peak = std::max(peak, stage.Child("peak_memory_bytes").AsDouble());
    }
    figures[mode] = {result.Child("plan").Child("breakdown").Child("recompute_s").AsDouble(), peak};
  }
  EXPECT_EQ(figures["none"].first, 0);
  EXPECT_GT(figures["per-op"].first, 0);
  EXPECT_LT(figures["per-op"].first, figures["full"].first);
  EXPECT_LT(figures["per-op"].second, figures["none"].second);
  EXPECT_GT(figures["per-op"].second, figures["full"].second);
  const std::string plan = (dir / "plan.json").string();
  auto r = Phaze("-q plan --model " + std::string(PHAZE_SOURCE_DIR) +
                 "/workloads/tiny-gpt.yaml --arch a100-sxm-80gb --accelerators 8 --global-batch 16 "
                 "--recompute per-op --top 1 -o " +
                 plan);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const ConfigNode first = ConfigNode::ParseFile(plan).Child("plans").Elements().at(0);
  EXPECT_EQ(first.Child("recompute").AsString(), "per-op");
  EXPECT_NE(
      first.Child("megatron_args_note").AsString().find("Megatron-LM has no such granularity"),
      std::string::npos);
  EXPECT_USAGE_ERROR(Phaze("predict --model x.yaml --arch tpuv4 --plan 1,1,1 --micro-batch 1 "
                           "--global-batch 8 --recompute op"),
                     "--recompute: expected none, selective, per-op or full, found 'op'");
}

// The run config's sequence_parallel with gathered_input: keep (PyTorch DTensor) stays so when
// --sequence-parallel or --strategies picks it: predict and plan record the params, the kept
// gathered inputs add, by hand, s·b·h × 2 bytes × (1 − 1/t) each to the activations — two per
// block (QKV's and FC1's) and the LM head's (Llama 2 7B, 32 blocks, h 4,096, s 4,096, b 1, t 2:
// 65 × 16 MiB) —, the backward re-gathers go, and plan gives no Megatron-LM arguments for it.
TEST(Cli, DTensorGatheredInputReachesPredictAndPlan) {
  testing::TempDir dir;
  const std::string config = (dir / "keep.yaml").string();
  std::ofstream(config) << "strategy: {name: sequence_parallel, params: {gathered_input: keep}}\n";
  const std::string model = std::string(PHAZE_SOURCE_DIR) + "/workloads/llama2-7b.yaml";
  const std::string predict =
      " predict --model " + model +
      " --arch h100-sxm-80gb --system dgx-h100 --plan 2,1,4 --micro-batch 1 "
      "--global-batch 16 --hbm-gib 1024 --sequence-parallel -o ";
  ConfigNode results[2] = {ConfigNode::EmptyMap("test", "a"), ConfigNode::EmptyMap("test", "b")};
  for (int keep : {0, 1}) {
    const std::string out = (dir / (keep ? "keep.json" : "regather.json")).string();
    auto r = Phaze("-q" + (keep ? " --config " + config : std::string()) + predict + out);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const ConfigNode doc = ConfigNode::ParseFile(out);
    EXPECT_EQ(doc.Child("strategy").Child("params").Optional("gathered_input").has_value(),
              keep == 1);
    results[keep] = doc.Child("result");
  }
  const auto activations = [](const ConfigNode& result) {
    return result.Child("plan")
        .Child("stages")
        .Elements()
        .at(0)
        .Child("memory")
        .Child("activation_bytes")
        .AsDouble();
  };
  EXPECT_EQ(activations(results[1]) - activations(results[0]),
            (32.0 * 2 + 1) * 4096 * 4096 * 2 / 2);
  EXPECT_LT(results[1].Child("time_per_batch_s").AsDouble(),
            results[0].Child("time_per_batch_s").AsDouble());
  const std::string plan = (dir / "plan.json").string();
  auto r = Phaze("-q --config " + config + " plan --model " + model +
                 " --arch h100-sxm-80gb --system dgx-h100 --accelerators 8 --global-batch 16 "
                 "--widths 2 --strategies sequence_parallel --top 1 -o " +
                 plan);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const ConfigNode doc = ConfigNode::ParseFile(plan);
  const ConfigNode searched = doc.Child("strategies").Elements().at(0);
  EXPECT_EQ(searched.Child("name").AsString(), "sequence_parallel");
  EXPECT_EQ(searched.Child("params").Child("gathered_input").AsString(), "keep");
  const ConfigNode first = doc.Child("plans").Elements().at(0);
  EXPECT_NE(first.Child("megatron_args_note").AsString().find("Megatron-LM gathers it again"),
            std::string::npos);
  // Another param the config gives (Megatron-LM's vocabulary padding) reaches the plan and its
  // arguments say it: Llama 2's 32,000 rows padded to a multiple of 64·2 stay 32,000.
  std::ofstream(config) << "strategy: {name: sequence_parallel, params: "
                           "{make_vocab_size_divisible_by: 64}}\n";
  r = Phaze("-q --config " + config + " plan --model " + model +
            " --arch h100-sxm-80gb --system dgx-h100 --accelerators 8 --global-batch 16 "
            "--widths 2 --strategies sequence_parallel --top 1 -o " +
            plan);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("--make-vocab-size-divisible-by 64"), std::string::npos) << r.out;
}

// plan --power-limit-w W,W,… ranks the plans of every limit together; --objective
// throughput_per_watt ranks by samples per joule of a device (samples/s over its average power),
// so the list is ordered by that ratio, computed here from each plan's own result, and its first
// is at least as good as the best at the TDP alone; by throughput the fastest is at the TDP (the
// clock is highest there). Each plan records its device's limit; a bad list or word is refused.
TEST(Cli, PlanSweepsPowerLimitsAndRanksBySamplesPerJoule) {
  testing::TempDir dir;
  const std::string plan = "-q plan --model " + std::string(PHAZE_SOURCE_DIR) +
                           "/workloads/llama2-7b.yaml --arch h100-sxm-80gb --system dgx-h100 "
                           "--accelerators 8 --global-batch 64 --widths 1,2 --micro-batches 1,2 "
                           "--recompute none --top 6 -o ";
  const auto per_joule = [](const ConfigNode& p) {
    const ConfigNode r = p.Child("result");
    return r.Child("throughput_samples_per_s").AsDouble() / r.Child("power_w").AsDouble();
  };
  const std::string swept = (dir / "swept.json").string();
  auto r = Phaze(plan + swept + " --power-limit-w 300,500,700 --objective throughput_per_watt");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("(ranked by samples/s per W)"), std::string::npos) << r.out;
  const ConfigNode doc = ConfigNode::ParseFile(swept);
  EXPECT_EQ(doc.Child("objective").AsString(), "throughput_per_watt");
  std::vector<double> limits;
  for (const auto& w : doc.Child("power_limits_w").Elements()) limits.push_back(w.AsDouble());
  EXPECT_EQ(limits, (std::vector<double>{300, 500, 700}));
  EXPECT_FALSE(doc.Child("device").Optional("power_limit_w").has_value());
  const auto plans = doc.Child("plans").Elements();
  ASSERT_EQ(plans.size(), 6u);
  for (std::size_t i = 1; i < plans.size(); ++i) {
    EXPECT_GE(per_joule(plans[i - 1]), per_joule(plans[i])) << i;
  }
  // A capped plan is the most efficient (the step's GEMM power falls faster than its time grows
  // above the voltage floor), and beats the best at the TDP alone.
  EXPECT_LT(plans[0].Child("device").Child("power_limit_w").AsDouble(), 700);
  const std::string tdp = (dir / "tdp.json").string();
  r = Phaze(plan + tdp + " --power-limit-w 700 --objective throughput_per_watt");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_GT(per_joule(plans[0]),
            per_joule(ConfigNode::ParseFile(tdp).Child("plans").Elements().at(0)));
  // One limit: the top-level device is the capped one, as predict.json's; a limit listed twice is
  // tried once (the same number of plans evaluated as listed once).
  const std::string once = (dir / "once.json").string(), twice = (dir / "twice.json").string();
  ASSERT_EQ(Phaze(plan + once + " --power-limit-w 500").exit_code, 0);
  ASSERT_EQ(Phaze(plan + twice + " --power-limit-w 500,500").exit_code, 0);
  const ConfigNode one = ConfigNode::ParseFile(once), two = ConfigNode::ParseFile(twice);
  EXPECT_EQ(one.Child("device").Child("power_limit_w").AsDouble(), 500);
  EXPECT_EQ(two.Child("evaluated").AsInt(), one.Child("evaluated").AsInt());
  EXPECT_NE(two.Child("plans").Elements().at(0).Child("time_per_batch_s").AsDouble(),
            two.Child("plans").Elements().at(1).Child("time_per_batch_s").AsDouble());
  const std::string fastest = (dir / "fastest.json").string();
  r = Phaze(plan + fastest + " --power-limit-w 300,500,700");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const ConfigNode first = ConfigNode::ParseFile(fastest).Child("plans").Elements().at(0);
  EXPECT_EQ(first.Child("device").Child("power_limit_w").AsDouble(), 700);
  EXPECT_USAGE_ERROR(Phaze(plan + fastest + " --power-limit-w 500,x"),
                     "--power-limit-w: expected comma-separated watts, found '500,x'");
  EXPECT_USAGE_ERROR(Phaze(plan + fastest + " --objective joules"),
                     "--objective: expected throughput, throughput_per_watt or "
                     "throughput_per_cost, found 'joules'");
}

// Sharding gradients or parameters under a pipeline prices every micro-batch's collectives, which
// is not what TorchTitan's FSDP2 under a pipeline does (it keeps the weights and gradients whole
// through the step: sharding optimizer); predict says so, and only then.
TEST(Cli, PredictSaysWhatShardingUnderAPipelinePrices) {
  const std::string tiny = "-q predict --model " + std::string(PHAZE_SOURCE_DIR) +
                           "/workloads/tiny-gpt.yaml --arch a100-sxm-80gb --micro-batch 1 "
                           "--global-batch 8";
  const std::string note =
      "note: sharding parameters under a pipeline is priced as gathering the "
      "weights and reduce-scattering the gradients every micro-batch";
  auto piped = Phaze(tiny + " --plan 1,2,2 --sharding parameters");
  ASSERT_EQ(piped.exit_code, 0) << piped.err;
  EXPECT_NE(piped.out.find(note), std::string::npos) << piped.out;
  auto grads = Phaze(tiny + " --plan 1,2,2 --sharding gradients");
  EXPECT_NE(grads.out.find("note: sharding gradients under a pipeline is priced as "
                           "reduce-scattering the gradients every micro-batch"),
            std::string::npos)
      << grads.out;
  for (const char* quiet :
       {" --plan 1,2,2 --sharding optimizer", " --plan 1,1,4 --sharding parameters"}) {
    auto r = Phaze(tiny + quiet);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out.find("note: sharding"), std::string::npos) << quiet << "\n" << r.out;
  }
}

TEST(Cli, PredictPlanIsCheckedAgainstTheModel) {
  const std::string tiny = " --model " + std::string(PHAZE_SOURCE_DIR) +
                           "/workloads/tiny-gpt.yaml --arch tpuv4 --micro-batch 1 --global-batch 8";
  const std::string gpt3 = " --model " + std::string(PHAZE_SOURCE_DIR) +
                           "/workloads/megatron-gpt3-175b.yaml --arch a100-sxm-80gb --micro-batch 1"
                           " --global-batch 64";
  const std::pair<std::string, std::string> cases[] = {
      {tiny + " --plan 1,2,1,7", "the 2 transformer blocks of tiny-gpt into p·v = 14 equal chunks"},
      {tiny + " --plan 1,2,1,2",
       "is not a multiple of 4 (--stage-starts gives each device's layers for an uneven split)"},
      {gpt3 + " --plan 8,16,1,5", "96 is not a multiple of 80"},
      {tiny + " --plan 1,1,1,2", "--plan v: interleaving (v = 2) needs at least 2 pipeline stages"},
      {tiny + " --plan 1,2,1 --stage-starts 9", "--stage-starts: 9 is not a first layer"},
      {tiny + " --plan 1,3,1 --stage-starts 2,1", "--stage-starts: 1 is not a first layer"},
      {tiny + " --plan 1,3,1 --stage-starts 0,2", "--stage-starts: 0 is not a first layer"},
      {tiny + " --plan 1,2,1 --stage-starts 1,2", "expected p − 1 = 1 first-layer indices"},
      {tiny + " --plan 1,1,3", "not a multiple of --micro-batch × d = 1 × 3"},
      {tiny + " --plan 1,1,1 --hbm-gib 1e30",
       "--hbm-gib: expected a size of at least 1 byte and at most"},
      {tiny + " --plan 1,1,1 --hbm-gib inf",
       "--hbm-gib: expected a size of at least 1 byte and at most"},
  };
  for (const auto& [args, message] : cases) {
    auto r = Phaze("predict" + args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.err;
    EXPECT_NE(r.err.find(message), std::string::npos) << args << "\n" << r.err;
  }
  // Valid ones still predict: explicit starts, and interleaving that divides the blocks.
  EXPECT_EQ(Phaze("-q predict" + tiny + " --plan 1,2,1 --stage-starts 2").exit_code, 0);
  EXPECT_EQ(Phaze("-q predict" + gpt3 + " --plan 8,8,1,2 --hbm-gib 1024").exit_code, 0);
  // With --stage-starts, interleaving takes each device's layers, its v chunks together, however
  // the blocks fall into chunks (TorchTitan's uneven split): tiny-gpt's 2 blocks over p·v = 4
  // chunks, stage 0 the embedding and the first block, keeping (2·1 + 1·2 + 1)/2 = 2.5
  // micro-batches (Megatron-LM's warm-up), the last (0 + 2 + 1)/2 = 1.5.
  testing::TempDir dir;
  const std::string out = (dir / "interleaved.json").string();
  auto r = Phaze("-q predict" + tiny + " --plan 1,2,1,2 --stage-starts 2 -o " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto stages =
      ConfigNode::ParseFile(out).Child("result").Child("plan").Child("stages").Elements();
  ASSERT_EQ(stages.size(), 2u);
  EXPECT_EQ(stages[0].Child("first_layer").AsString(), "embedding");
  EXPECT_EQ(stages[0].Child("layers").AsInt(), 2);
  EXPECT_DOUBLE_EQ(stages[0].Child("memory").Child("in_flight").AsDouble(), 2.5);
  EXPECT_DOUBLE_EQ(stages[1].Child("memory").Child("in_flight").AsDouble(), 1.5);
}

}  // namespace
}  // namespace phaze

namespace phaze {
namespace {

// --sequence-length (predict and plan): the model at another sequence is the same as a copy of its
// description with that sequence_length; outputs say which sequence they are for, and plan's
// Megatron-LM arguments carry it.
TEST(Cli, PredictAndPlanAtAnotherSequenceLength) {
  testing::TempDir dir;
  const std::string tiny = std::string(PHAZE_SOURCE_DIR) + "/workloads/tiny-gpt.yaml";
  std::string copy = testing::Slurp(tiny);
  const std::size_t at = copy.find("sequence_length: 32");
  ASSERT_NE(at, std::string::npos);
  copy.replace(at, std::string("sequence_length: 32").size(), "sequence_length: 16");
  testing::WriteFile(dir / "tiny16.yaml", copy);
  const std::string plan = " --arch a100-sxm-80gb --plan 1,1,2 --micro-batch 2 --global-batch 8";
  const std::string flagged = (dir / "flagged.json").string(),
                    edited = (dir / "edited.json").string();
  auto a = Phaze("predict --model " + tiny + plan + " --sequence-length 16 -o " + flagged);
  ASSERT_EQ(a.exit_code, 0) << a.err;
  EXPECT_NE(a.out.find("batch 8 × 16 tokens"), std::string::npos) << a.out;
  auto b = Phaze("-q predict --model " + (dir / "tiny16.yaml").string() + plan + " -o " + edited);
  ASSERT_EQ(b.exit_code, 0) << b.err;
  const ConfigNode ja = ConfigNode::ParseFile(flagged), jb = ConfigNode::ParseFile(edited);
  EXPECT_EQ(ja.Child("sequence_length").AsInt(), 16);
  EXPECT_EQ(jb.Child("sequence_length").AsInt(), 16);
  EXPECT_EQ(ja.Child("result").Child("time_per_batch_s").AsDouble(),
            jb.Child("result").Child("time_per_batch_s").AsDouble());
  auto peak = [](const ConfigNode& j) {
    return j.Child("result")
        .Child("plan")
        .Child("stages")
        .Elements()
        .front()
        .Child("peak_memory_bytes")
        .AsDouble();
  };
  EXPECT_EQ(peak(ja), peak(jb));
  // Without the flag, the model's own 32 tokens: more activations.
  const std::string own = (dir / "own.json").string();
  ASSERT_EQ(Phaze("-q predict --model " + tiny + plan + " -o " + own).exit_code, 0);
  const ConfigNode jo = ConfigNode::ParseFile(own);
  EXPECT_EQ(jo.Child("sequence_length").AsInt(), 32);
  EXPECT_GT(peak(jo), peak(ja));
  // plan: the header, the JSON and every plan's --seq-length.
  const std::string planned = (dir / "plan.json").string();
  auto p = Phaze("plan --model " + tiny +
                 " --arch a100-sxm-80gb --accelerators 2 --global-batch 8"
                 " --top 3 --sequence-length 16 -o " +
                 planned);
  ASSERT_EQ(p.exit_code, 0) << p.err;
  EXPECT_NE(p.out.find("global batch 8 × 16 tokens\n"), std::string::npos) << p.out;
  const ConfigNode jp = ConfigNode::ParseFile(planned);
  EXPECT_EQ(jp.Child("sequence_length").AsInt(), 16);
  for (const auto& ranked : jp.Child("plans").Elements()) {
    const auto args = ranked.Child("megatron_args").Elements();
    std::string seq;
    for (std::size_t k = 0; k + 1 < args.size(); ++k) {
      if (args[k].AsString() == "--seq-length") seq = args[k + 1].AsString();
    }
    EXPECT_EQ(seq, "16");
  }
  auto q =
      Phaze("plan --model " + tiny + " --arch a100-sxm-80gb --accelerators 2 --global-batch 8");
  EXPECT_NE(q.out.find("× 32 tokens (the model's sequence; --sequence-length to change)"),
            std::string::npos)
      << q.out;
  // Bad values name the flag, or the model's limit.
  EXPECT_USAGE_ERROR(Phaze("predict --model " + tiny + plan + " --sequence-length 0"),
                     "--sequence-length: expected an integer in [1, 16777216], found 0");
  EXPECT_USAGE_ERROR(Phaze("plan --model " + tiny +
                           " --arch a100-sxm-80gb --accelerators 2 "
                           "--sequence-length 128"),
                     "sequence length 128 exceeds tiny-gpt's max_positions 64");
}

// `phaze plan` tries every strategy loaded by default: a mixture-of-experts model gets expert
// parallelism without asking — its best plan is the moe strategy's, faster than the best of
// megatron and sequence_parallel alone, with --expert-model-parallel-size in its arguments — and
// the default ranks as the four strategies listed explicitly; `predict --strategy` reproduces each.
TEST(Cli, PlanTriesEveryStrategyByDefault) {
  testing::TempDir dir;
  testing::WriteFile(dir / "tiny-moe.yaml", R"(name: tiny-moe
family: llama
layers: 2
hidden: 256
heads: 8
kv_heads: 2
ffn_hidden: 512
vocab: 1024
max_positions: 4096
sequence_length: 4096
moe: {experts: 8, top_k: 2, expert_ffn_hidden: 512}
)");
  const std::string common = "plan --model " + (dir / "tiny-moe.yaml").string() +
                             " --arch a100-sxm-80gb --system dgx-a100 --accelerators 16 "
                             "--global-batch 32 --top 3 -o ";
  auto ranked = [&](const std::string& name, const std::string& flags) {
    const std::string out = (dir / name).string();
    auto r = Phaze(common + out + flags);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return ConfigNode::ParseFile(out);
  };
  const ConfigNode all = ranked("all.json", "");
  const ConfigNode listed = ranked("listed.json",
                                   " --strategies megatron,sequence_parallel,"
                                   "context_parallel,moe");
  const ConfigNode dense = ranked("dense.json", " --strategies megatron,sequence_parallel");
  const auto best = all.Child("plans").Elements().front();
  EXPECT_EQ(best.Child("strategy").AsString(), "moe");
  EXPECT_GT(best.Child("megatron").Child("expert").AsInt(), 1);
  const auto args = best.Child("megatron_args").Elements();
  bool expert_flag = false;
  for (std::size_t k = 0; k + 1 < args.size(); ++k) {
    if (args[k].AsString() == "--expert-model-parallel-size") {
      expert_flag = args[k + 1].AsInt() == best.Child("megatron").Child("expert").AsInt();
    }
  }
  EXPECT_TRUE(expert_flag);
  EXPECT_LT(best.Child("time_per_batch_s").AsDouble(),
            dense.Child("plans").Elements().front().Child("time_per_batch_s").AsDouble());
  // `predict --strategy` gives each plan's own step time (plan's t is the strategy's whole width).
  for (const auto& ranked : all.Child("plans").Elements()) {
    const std::string out = (dir / "predict.json").string();
    auto r = Phaze("-q predict --model " + (dir / "tiny-moe.yaml").string() +
                   " --arch a100-sxm-80gb --system dgx-a100 --global-batch 32 --recipe "
                   "megatron-core-2024 --plan " +
                   std::to_string(ranked.Child("t").AsInt()) + "," +
                   std::to_string(ranked.Child("p").AsInt()) + "," +
                   std::to_string(ranked.Child("d").AsInt()) + " --micro-batch " +
                   std::to_string(ranked.Child("micro_batch").AsInt()) + " --recompute " +
                   ranked.Child("recompute").AsString() + " --sharding " +
                   ranked.Child("sharding").AsString() + " --strategy " +
                   ranked.Child("strategy").AsString() +
                   (ranked.Child("strategy").AsString() == "moe"
                        ? " --expert-parallel " +
                              std::to_string(ranked.Child("megatron").Child("expert").AsInt())
                        : std::string()) +
                   " -o " + out);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(ConfigNode::ParseFile(out).Child("result").Child("time_per_batch_s").AsDouble(),
              ranked.Child("time_per_batch_s").AsDouble());
  }
  EXPECT_USAGE_ERROR(Phaze("predict --model " + (dir / "tiny-moe.yaml").string() +
                           " --arch a100-sxm-80gb --plan 2,1,1 --micro-batch 1 --strategy ep"),
                     "--strategy: no parallelism strategy named 'ep'; registered: "
                     "context_parallel, megatron, moe, sequence_parallel");
  EXPECT_USAGE_ERROR(Phaze("predict --model " + (dir / "tiny-moe.yaml").string() +
                           " --arch a100-sxm-80gb --plan 2,1,1 --micro-batch 1 --strategy moe "
                           "--sequence-parallel"),
                     "--sequence-parallel is --strategy sequence_parallel: give one of them");
  EXPECT_EQ(all.Child("evaluated").AsInt(), listed.Child("evaluated").AsInt());
  const auto a = all.Child("plans").Elements(), l = listed.Child("plans").Elements();
  ASSERT_EQ(a.size(), l.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].Child("strategy").AsString(), l[i].Child("strategy").AsString()) << i;
    EXPECT_EQ(a[i].Child("time_per_batch_s").AsDouble(), l[i].Child("time_per_batch_s").AsDouble())
        << i;
  }
}

// Context parallelism over tensor parallelism, as Megatron-LM and TorchTitan run long sequences
// (TP k × CP c; TorchTitan's 405B at 32K–262K tokens is TP 8 × CP 1–8). predict: --plan t is
// the whole width and --context-parallel c splits it, the same plan as the run config's
// composition written out; c = t is context parallelism alone. plan: --context-parallel c
// composes c over every tensor-parallel width k > 1 of --widths, planned at t = k·c only — no
// composition at cp 1 (that is the tensor-parallel strategy's own plan), no other strategy at the
// widths it adds — each with --tensor-model-parallel-size k --context-parallel-size c.
TEST(Cli, ContextParallelOverTensorParallelInPredictAndPlan) {
  testing::TempDir dir;
  const std::string model = (dir / "long.yaml").string();
  testing::WriteFile(model, R"(name: long
family: llama
layers: 2
hidden: 256
heads: 8
kv_heads: 4
ffn_hidden: 512
vocab: 1024
max_positions: 4096
sequence_length: 4096
)");
  const std::string plan = "-q predict --model " + model +
                           " --arch h100-sxm-80gb --system dgx-h100 --plan 8,1,2 "
                           "--micro-batch 1 --global-batch 8 --recipe megatron-core-2024 -o ";
  const std::string flag = (dir / "flag.json").string(), config = (dir / "config.json").string();
  auto a = Phaze(plan + flag + " --strategy sequence_parallel --context-parallel 2");
  ASSERT_EQ(a.exit_code, 0) << a.err;
  testing::WriteFile(dir / "cp.yaml",
                     "strategy: {name: context_parallel, over: {name: sequence_parallel, "
                     "width: 4}}\n");
  auto b = Phaze("--config " + (dir / "cp.yaml").string() + " " + plan + config);
  ASSERT_EQ(b.exit_code, 0) << b.err;
  const ConfigNode ja = ConfigNode::ParseFile(flag), jb = ConfigNode::ParseFile(config);
  EXPECT_EQ(ja.Child("result").Child("time_per_batch_s").AsDouble(),
            jb.Child("result").Child("time_per_batch_s").AsDouble());
  EXPECT_EQ(ja.Child("megatron").Child("tensor").AsInt(), 4);
  EXPECT_EQ(ja.Child("megatron").Child("context").AsInt(), 2);
  const auto argument = [](const ConfigNode& j, const std::string& name) {
    const auto args = j.Child("megatron_args").Elements();
    for (std::size_t k = 0; k + 1 < args.size(); ++k) {
      if (args[k].AsString() == name) return args[k + 1].AsString();
    }
    return std::string();
  };
  EXPECT_EQ(argument(ja, "--tensor-model-parallel-size"), "4");
  EXPECT_EQ(argument(ja, "--context-parallel-size"), "2");
  auto shown = Phaze(plan.substr(3) + (dir / "shown.json").string() +
                     " --sequence-parallel --context-parallel 2");
  EXPECT_NE(shown.out.find(", strategy context_parallel over sequence_parallel×4 (t 8 = 4 × 2)"),
            std::string::npos)
      << shown.out;
  // c = t: context parallelism alone.
  const std::string alone = (dir / "alone.json").string(), named = (dir / "named.json").string();
  ASSERT_EQ(Phaze(plan + alone + " --context-parallel 8").exit_code, 0);
  ASSERT_EQ(Phaze(plan + named + " --strategy context_parallel").exit_code, 0);
  EXPECT_EQ(ConfigNode::ParseFile(alone).Child("result").Child("time_per_batch_s").AsDouble(),
            ConfigNode::ParseFile(named).Child("result").Child("time_per_batch_s").AsDouble());
  EXPECT_USAGE_ERROR(Phaze(plan + alone + " --context-parallel 3"),
                     "--context-parallel 3: --plan t = 8 is the whole width, tensor × context "
                     "parallel, and 3 does not divide it");
  EXPECT_USAGE_ERROR(Phaze(plan + alone + " --strategy context_parallel --context-parallel 2"),
                     "--context-parallel: context parallelism composes over tensor parallelism "
                     "(megatron or sequence_parallel), not over 'context_parallel'");

  // plan: TP 2 and 4 of --widths 1,2,4, each under CP 2 (t 4 and 8) and CP 4 (t 8 and 16).
  const std::string ranked = (dir / "plan.json").string();
  const std::string sweep = "plan --model " + model +
                            " --arch h100-sxm-80gb --system dgx-h100 --accelerators 16 "
                            "--global-batch 8 --micro-batches 1 --recompute none "
                            "--sharding none,optimizer --strategies sequence_parallel,"
                            "context_parallel --top 1000";
  auto p = Phaze(sweep + " --widths 1,2,4 --context-parallel 2,4 -o " + ranked);
  ASSERT_EQ(p.exit_code, 0) << p.err;
  std::set<std::string> composed;
  for (const auto& r : ConfigNode::ParseFile(ranked).Child("plans").Elements()) {
    const std::string strategy = r.Child("strategy").AsString();
    const std::int64_t t = r.Child("t").AsInt(), tp = r.Child("megatron").Child("tensor").AsInt(),
                       cp = r.Child("megatron").Child("context").AsInt();
    EXPECT_EQ(tp * cp, t) << strategy;
    EXPECT_EQ(argument(r, "--tensor-model-parallel-size"), std::to_string(tp)) << strategy;
    if (strategy.find(" over ") == std::string::npos) {
      EXPECT_LE(t, 4) << strategy << ": not a width of --widths";
      continue;
    }
    EXPECT_GT(tp, 1) << strategy;
    EXPECT_GT(cp, 1) << strategy << ": a composition at cp 1 is the tensor-parallel plan";
    EXPECT_EQ(argument(r, "--context-parallel-size"), std::to_string(cp)) << strategy;
    composed.insert(std::to_string(tp) + "x" + std::to_string(cp));
  }
  EXPECT_EQ(composed, (std::set<std::string>{"2x2", "2x4", "4x2", "4x4"}));
  // Without the flag no composition; with no tensor parallelism to compose over, a usage error.
  const std::string plain = (dir / "plain.json").string();
  ASSERT_EQ(Phaze(sweep + " --widths 1,2,4 -o " + plain).exit_code, 0);
  for (const auto& r : ConfigNode::ParseFile(plain).Child("plans").Elements()) {
    EXPECT_EQ(r.Child("strategy").AsString().find(" over "), std::string::npos);
  }
  EXPECT_USAGE_ERROR(Phaze(sweep + " --context-parallel 2 --widths 1"),
                     "--context-parallel 2: no tensor-parallel width k > 1 of --widths (1) gives "
                     "a width k·2 that divides the 16 accelerators");
  // A c no width composes into a divisor of the accelerators is named, not dropped silently.
  EXPECT_USAGE_ERROR(Phaze(sweep + " --context-parallel 2,3 --widths 1,2,4"),
                     "--context-parallel 3: no tensor-parallel width k > 1 of --widths (1, 2, 4) "
                     "gives a width k·3 that divides the 16 accelerators");
  EXPECT_USAGE_ERROR(Phaze("plan --model " + model +
                           " --arch h100-sxm-80gb --system dgx-h100 --accelerators 16 "
                           "--global-batch 8 --context-parallel 2 --widths 2 --strategies "
                           "context_parallel"),
                     "--context-parallel: context parallelism composes over tensor parallelism, "
                     "megatron or sequence_parallel, and --strategies has neither");
  // From 16,384 tokens a sample, a plan without the flag says it exists; not below, not with it.
  const std::string hint = "--context-parallel 2,4,8 also ranks context parallelism over tensor";
  EXPECT_EQ(p.out.find(hint), std::string::npos);
  std::string longer = testing::Slurp(model);
  longer.replace(longer.find("max_positions: 4096"), 19, "max_positions: 16384");
  testing::WriteFile(dir / "longer.yaml", longer);
  const std::string at16k = "plan --model " + (dir / "longer.yaml").string() +
                            " --arch h100-sxm-80gb --system dgx-h100 --accelerators 16 "
                            "--global-batch 8 --micro-batches 1 --recompute full --sharding "
                            "optimizer --widths 1,2 --top 1 --sequence-length 16384";
  auto h = Phaze(at16k);
  ASSERT_EQ(h.exit_code, 0) << h.err;
  EXPECT_NE(h.out.find("A long sequence (16384 tokens): " + hint), std::string::npos) << h.out;
  auto k = Phaze(at16k + " --context-parallel 2");
  ASSERT_EQ(k.exit_code, 0) << k.err;
  EXPECT_EQ(k.out.find(hint), std::string::npos) << k.out;
}

// What predict and plan would otherwise take silently and misprice: more accelerators than the
// plan runs on (its MFU and cost over all of them, its power over t·p·d), FP8 on a device with
// no FP8 rate (an error from inside the estimator, which aborted plan's bf16 plans too), a shard
// group that is not t·h devices (rounded down), a shard group with nothing sharded, a width no
// strategy slices (said why), repeated sweep values (each evaluated again), plans listed once
// but counted as fitting (said), no plan in the HBM (by how much), and the paper's flat link
// taken for a cluster without a word.
// --fp8-param-gather: the step's all-gather of the weights under the distributed optimizer moves
// the FP8 GEMMs' weights at one byte a parameter. On the flat default link (no latency) the
// reduction is a reduce-scatter of the fp32 gradients, 2W, and an all-gather of the weights, W,
// both ring over the same (n − 1)/n·bytes/β; gathering the C bytes of FP8 GEMM weights (TE's
// cached FP8 copies count C: predict's weight_bytes is W + C, its gradient bytes 2W) at half
// takes C/2 off the 3W: the reduction shrinks by C/(6W). Launched as Megatron-LM's
// --fp8-param-gather, and TorchTitan's FP8 FSDP all-gathers with their scales precomputed.
TEST(Cli, Fp8ParamGatherMovesFp8WeightsAtOneByte) {
  testing::TempDir dir;
  const std::string predict = "-q predict --model " + std::string(PHAZE_SOURCE_DIR) +
                              "/workloads/tiny-gpt.yaml --arch h100-sxm-80gb --plan 1,1,4 "
                              "--micro-batch 1 --global-batch 4 --sharding optimizer "
                              "--precision fp8 -o ";
  const std::string plain = (dir / "plain.json").string(), fp8 = (dir / "fp8.json").string();
  ASSERT_EQ(Phaze(predict + plain).exit_code, 0);
  ASSERT_EQ(Phaze(predict + fp8 + " --fp8-param-gather").exit_code, 0);
  const ConfigNode a = ConfigNode::ParseFile(plain), b = ConfigNode::ParseFile(fp8);
  auto reduction = [](const ConfigNode& j) {
    return j.Child("result")
        .Child("plan")
        .Child("breakdown")
        .Child("data_parallel_total_s")
        .AsDouble();
  };
  const ConfigNode memory =
      a.Child("result").Child("plan").Child("stages").Elements().at(0).Child("memory");
  const double W = memory.Child("gradient_bytes").AsDouble() / 2;
  const double C = memory.Child("weight_bytes").AsDouble() - W;
  ASSERT_GT(C, 0);
  EXPECT_NEAR((reduction(a) - reduction(b)) / reduction(a), C / (6 * W), 1e-9);
  auto args = [](const ConfigNode& j) {
    std::string all;
    for (const auto& x : j.Child("megatron_args").Elements()) all += " " + x.AsString();
    return all;
  };
  EXPECT_EQ(args(a).find("--fp8-param-gather"), std::string::npos) << args(a);
  EXPECT_NE(args(b).find(" --fp8-param-gather"), std::string::npos) << args(b);
  EXPECT_TRUE(b.Child("fp8_param_gather").AsBool());
  // Megatron-LM's flag keeps those weights in FP8 only (fp8_param_storage fp8, the default): a
  // byte each and TE's transpose a byte, where the 16-bit weight (2) and TE's FP8 copy and
  // transpose (2) were: the C bytes of copies are gone and W stays. Kept in 16 bits (TorchTitan's
  // way), the memory is as without the gathers and the reduction as with them.
  EXPECT_EQ(b.Child("fp8_param_storage").AsString(), "fp8");
  EXPECT_DOUBLE_EQ(FirstStageMemory(b, "weight_bytes"), W);
  const std::string kept = (dir / "kept.json").string();
  ASSERT_EQ(Phaze(predict + kept + " --fp8-param-gather --fp8-param-storage 16bit").exit_code, 0);
  const ConfigNode k = ConfigNode::ParseFile(kept);
  EXPECT_DOUBLE_EQ(FirstStageMemory(k, "weight_bytes"), W + C);
  EXPECT_EQ(reduction(k), reduction(b));
  EXPECT_EQ(Phaze(predict + kept + " --fp8-param-storage 8bit").exit_code, 2);
  // Without FP8 GEMMs, or without a sharding, there is nothing to gather in FP8: the FP8 flags
  // are refused rather than ignored (plan's too, where no --precision is fp8).
  const std::string bf16 = "-q predict --model " + std::string(PHAZE_SOURCE_DIR) +
                           "/workloads/tiny-gpt.yaml --arch h100-sxm-80gb --plan 1,1,4 "
                           "--micro-batch 1 --global-batch 4 --sharding optimizer ";
  EXPECT_USAGE_ERROR(Phaze(bf16 + "--fp8-param-gather"),
                     "--fp8-param-gather: nothing runs in FP8 here (precision bf16); give "
                     "--precision fp8");
  EXPECT_USAGE_ERROR(Phaze(bf16 + "--fp8-recipe tensorwise"),
                     "--fp8-recipe: nothing runs in FP8 here (precision bf16)");
  EXPECT_USAGE_ERROR(Phaze("predict --model " + std::string(PHAZE_SOURCE_DIR) +
                           "/workloads/tiny-gpt.yaml --arch h100-sxm-80gb --plan 1,1,4 "
                           "--micro-batch 1 --global-batch 4 --precision fp8 --fp8-param-gather"),
                     "--fp8-param-gather: the sharding is none, so no weights are gathered");
  EXPECT_USAGE_ERROR(Phaze("plan --model " + std::string(PHAZE_SOURCE_DIR) +
                           "/workloads/tiny-gpt.yaml --arch h100-sxm-80gb --accelerators 4 "
                           "--global-batch 4 --fp8-param-storage 16bit"),
                     "--fp8-param-storage: nothing runs in FP8 here (precision bf16)");
  // TorchTitan: float8 all-gathers in FSDP, their scales found in one pass after the step.
  const std::string plan = (dir / "plan.json").string();
  auto r = Phaze("plan --model " + std::string(PHAZE_SOURCE_DIR) +
                 "/workloads/llama2-7b.yaml --arch h100-sxm-80gb --system dgx-h100 "
                 "--accelerators 8 --global-batch 16 --widths 1 --micro-batches 1 --recompute "
                 "full --sharding parameters --framework torchtitan --precision fp8 "
                 "--fp8-param-gather --top 1 -o " +
                 plan);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string tt;
  for (const auto& x : ConfigNode::ParseFile(plan)
                           .Child("plans")
                           .Elements()
                           .at(0)
                           .Child("torchtitan_args")
                           .Elements()) {
    tt += " " + x.AsString();
  }
  EXPECT_NE(tt.find(" --quantize.linear.float8.enable_fsdp_float8_all_gather "), std::string::npos)
      << tt;
  EXPECT_NE(tt.find(" --quantize.linear.float8.precompute_float8_dynamic_scale_for_fsdp"),
            std::string::npos)
      << tt;
}

TEST(Cli, RefusesWhatItWouldSilentlyMisprice) {
  const std::string model = std::string(PHAZE_SOURCE_DIR) + "/workloads/llama2-7b.yaml";
  const std::string predict = "predict --model " + model +
                              " --arch h100-sxm-80gb --system dgx-h100 --micro-batch 1 "
                              "--global-batch 64 ";
  EXPECT_USAGE_ERROR(Phaze(predict + "--plan 8,1,1 --accelerators 16"),
                     "--accelerators 16: --plan 8,1,1 runs on t·p·d = 8 devices");
  ASSERT_EQ(Phaze(predict + "--plan 8,1,1 --accelerators 8").exit_code, 0);
  const std::string a100 = "--model " + model + " --arch a100-sxm-80gb --system dgx-a100 ";
  EXPECT_USAGE_ERROR(
      Phaze("predict " + a100 + "--micro-batch 1 --global-batch 64 --plan 8,1,1 --precision fp8"),
      "--precision fp8: architecture 'a100-sxm-80gb' has no FP8 tensor rate");
  EXPECT_USAGE_ERROR(
      Phaze("plan " + a100 + "--accelerators 8 --global-batch 64 --top 1 --precision bf16,fp8"),
      "--precision fp8: architecture 'a100-sxm-80gb' has no FP8 tensor rate");
  const std::string plan = "plan --model " + model +
                           " --arch h100-sxm-80gb --system dgx-h100 --accelerators 8 "
                           "--global-batch 64 --micro-batches 1 --recompute none --top 50 ";
  EXPECT_USAGE_ERROR(Phaze(predict + "--plan 2,1,4 --sharding optimizer --shard-group 3"),
                     "--shard-group 3: a shard group spans t·h devices, h > 1 of the d = 4 "
                     "replicas with h dividing d (t = 2: 4, or all)");
  EXPECT_USAGE_ERROR(Phaze(predict + "--plan 2,1,4 --shard-group 4"),
                     "--shard-group 4: the sharding is none (the run config's training.sharding), "
                     "which shards nothing");
  ASSERT_EQ(Phaze(predict + "--plan 2,1,4 --sharding optimizer --shard-group 4").exit_code, 0);
  // t = 3 divides none of the 32 heads: the reason, not "no strategy could slice".
  auto three = Phaze(plan + "--widths 3");
  EXPECT_EQ(three.exit_code, 1);
  EXPECT_NE(three.err.find("megatron t=3: the 32 attention heads are not divisible by 3"),
            std::string::npos)
      << three.err;
  // A value listed twice is one value; "all" does not rank moe on a dense model, where it is
  // sequence parallelism, twice.
  auto once = Phaze(plan + "--widths 2,8 --strategies megatron,sequence_parallel");
  auto twice = Phaze(plan + "--widths 2,8,2,8 --strategies megatron,sequence_parallel,megatron");
  ASSERT_EQ(once.exit_code, 0) << once.err;
  ASSERT_EQ(twice.exit_code, 0) << twice.err;
  auto evaluated = [](const std::string& out) {  // "N plans evaluated, M fit"
    const std::size_t at = out.find(" plans evaluated");
    const std::size_t line = out.rfind('\n', at) + 1;
    return at == std::string::npos ? -1 : std::stoll(out.substr(line, at - line));
  };
  EXPECT_GT(evaluated(once.out), 0) << once.out;
  EXPECT_EQ(evaluated(twice.out), evaluated(once.out)) << twice.out;
  auto all = Phaze(plan + "--widths 2,8 --strategies all");
  ASSERT_EQ(all.exit_code, 0) << all.err;
  EXPECT_EQ(all.out.find("| moe |"), std::string::npos) << all.out;
  EXPECT_NE(all.out.find("| sequence_parallel |"), std::string::npos) << all.out;
  // Plans the same in effect are counted as fitting and listed once, and the summary says so
  // (sequence parallelism at t = 1 is Megatron's plan); when none fits the HBM, the smallest
  // need is given.
  auto alike = Phaze(plan + "--widths 1 --strategies megatron,sequence_parallel --sharding none");
  ASSERT_EQ(alike.exit_code, 0) << alike.err;
  EXPECT_NE(alike.out.find("of them the same in effect as another that fits: each listed once"),
            std::string::npos)
      << alike.out;
  testing::TempDir dir;
  const std::string small_json = (dir / "small.json").string();
  auto small = Phaze(plan + "--widths 8 --strategies megatron --hbm-gib 1 -o " + small_json);
  EXPECT_EQ(small.exit_code, 1);
  EXPECT_NE(small.err.find("; the smallest needs "), std::string::npos) << small.err;
  EXPECT_NE(small.err.find(" GiB per device, of 1.00 GiB HBM"), std::string::npos) << small.err;
  EXPECT_GT(ConfigNode::ParseFile(small_json).Child("smallest_over_hbm_bytes").AsDouble(),
            1024.0 * 1024 * 1024);
  // Without --system the paper's flat link is used, and predict and plan say so.
  const std::string flat = "the network is one flat link of 4.29 GB/s per device (no --system)";
  auto bare = Phaze("predict --model " + model +
                    " --arch h100-sxm-80gb --micro-batch 1 --global-batch 64 --plan 8,1,1");
  ASSERT_EQ(bare.exit_code, 0) << bare.err;
  EXPECT_NE(bare.out.find(flat), std::string::npos) << bare.out;
  EXPECT_EQ(Phaze(predict + "--plan 8,1,1").out.find(flat), std::string::npos);
  auto bare_plan = Phaze("plan --model " + model +
                         " --arch h100-sxm-80gb --accelerators 8 --global-batch 64 --top 1 "
                         "--widths 8 --micro-batches 1 --recompute none --sharding none "
                         "--strategies megatron");
  ASSERT_EQ(bare_plan.exit_code, 0) << bare_plan.err;
  EXPECT_NE(bare_plan.out.find(flat), std::string::npos) << bare_plan.out;
}

// Issue 40's `phaze plan`: GPT-3 175B on 1,024 A100s (micro-batches 1 and 2, selective and full
// recompute, to stay fast): 5 plans, fastest first, feasible, and each plan's Megatron-LM
// arguments read back give its own t, p, v, d (from the world size), micro-batch, batch,
// recompute and sharding.
TEST(Cli, PlanRanksLaunchablePlansWithTheirMegatronArguments) {
  testing::TempDir dir;
  const std::string out = (dir / "plan.json").string();
  auto r = Phaze("plan --model " + std::string(PHAZE_SOURCE_DIR) +
                 "/workloads/megatron-gpt3-175b.yaml --arch a100-sxm-80gb --system dgx-a100 "
                 "--accelerators 1024 --global-batch 1536 --top 5 --micro-batches 1,2 "
                 "--recompute selective,full -o " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("| # | t | p | d | v |"), std::string::npos) << r.out;
  const ConfigNode j = ConfigNode::ParseFile(out);
  EXPECT_GT(j.Child("evaluated").AsInt(), j.Child("feasible").AsInt());
  // Today's recipe unless asked otherwise (share/recipes/megatron-core-2024.yaml).
  EXPECT_EQ(j.Child("recipe").AsString(), "megatron-core-2024");
  EXPECT_EQ(j.Child("attention").AsString(), "flash");
  EXPECT_EQ(j.Child("gradient_reduction_overlap").AsDouble(), 0.8);
  const auto plans = j.Child("plans").Elements();
  ASSERT_EQ(plans.size(), 5u);
  double previous = 0;
  for (const auto& p : plans) {
    const ConfigNode result = p.Child("result");
    EXPECT_TRUE(result.Child("feasible").AsBool());
    const double time = p.Child("time_per_batch_s").AsDouble();
    EXPECT_GE(time, previous);
    previous = time;
    EXPECT_EQ(result.Child("time_per_batch_s").AsDouble(), time);
    EXPECT_GT(p.Child("error_band").Child("runs").AsInt(), 0);
    // The arguments, read back.
    std::map<std::string, std::string> args;
    const auto list = p.Child("megatron_args").Elements();
    for (std::size_t k = 0; k < list.size(); ++k) {
      const std::string flag = list[k].AsString();
      const bool valued = k + 1 < list.size() && list[k + 1].AsString().rfind("--", 0) != 0;
      args[flag] = valued ? list[++k].AsString() : "";
    }
    auto num = [&](const std::string& flag, std::int64_t otherwise) {
      return args.count(flag) ? std::stoll(args[flag]) : otherwise;
    };
    const std::int64_t tp = num("--tensor-model-parallel-size", 0);
    const std::int64_t pp = num("--pipeline-model-parallel-size", 0);
    const std::int64_t cp = num("--context-parallel-size", 1);
    EXPECT_EQ(tp * cp, p.Child("t").AsInt());
    EXPECT_EQ(pp, p.Child("p").AsInt());
    EXPECT_EQ(1024 / (tp * pp * cp), p.Child("d").AsInt());  // Megatron's d from the world size
    const std::int64_t v = p.Child("v").AsInt();
    EXPECT_EQ(num("--num-layers-per-virtual-pipeline-stage", 96 / pp), 96 / (pp * v));
    EXPECT_EQ(num("--micro-batch-size", 0), p.Child("micro_batch").AsInt());
    EXPECT_EQ(num("--global-batch-size", 0), 1536);
    EXPECT_EQ(args["--recompute-granularity"], p.Child("recompute").AsString());
    EXPECT_EQ(args.count("--use-distributed-optimizer") == 1,
              p.Child("sharding").AsString() != "none");
    EXPECT_EQ(args.count("--sequence-parallel") == 1,
              p.Child("strategy").AsString() == "sequence_parallel");
    EXPECT_EQ(args.count("--overlap-grad-reduce"), 1u);
    EXPECT_EQ(args.count("--overlap-param-gather") == 1, p.Child("sharding").AsString() == "optimizer");
    EXPECT_EQ(args["--attention-backend"], "flash");
  }
  // Plans within 10% of the HBM (79.15 GiB) are named below the table, from their peaks.
  std::string tight;
  for (std::size_t i = 0; i < plans.size(); ++i) {
    const double share = plans[i].Child("hbm_share").AsDouble();
    const auto stages = plans[i].Child("result").Child("plan").Child("stages").Elements();
    double peak = 0;
    for (const auto& stage : stages)
      peak = std::max(peak, stage.Child("peak_memory_bytes").AsDouble());
    EXPECT_NEAR(share, peak / (79.151 * 1073741824.0), 1e-4) << i;
    if (share > 0.9) tight += (tight.empty() ? "" : ", ") + std::to_string(i + 1);
  }
  ASSERT_FALSE(tight.empty());
  const bool one = tight.find(',') == std::string::npos;
  EXPECT_NE(r.out.find((one ? "Plan " : "Plans ") + tight + (one ? " uses" : " use") +
                       " more than 90% of the 79.15 GiB HBM"),
            std::string::npos)
      << r.out;
  // predict says the same of the first plan's stages, by name.
  {
    const ConfigNode& first = plans.front();
    const std::string out1 = (dir / "first.json").string();
    auto r1 = Phaze(
        "predict --model " + std::string(PHAZE_SOURCE_DIR) +
        "/workloads/megatron-gpt3-175b.yaml --arch a100-sxm-80gb --system dgx-a100 "
        "--global-batch 1536 --recipe megatron-core-2024 --plan " +
        std::to_string(first.Child("t").AsInt()) + "," + std::to_string(first.Child("p").AsInt()) +
        "," + std::to_string(first.Child("d").AsInt()) + "," +
        std::to_string(first.Child("v").AsInt()) + " --micro-batch " +
        std::to_string(first.Child("micro_batch").AsInt()) + " --recompute " +
        first.Child("recompute").AsString() + " --sharding " + first.Child("sharding").AsString() +
        " --strategy " + first.Child("strategy").AsString() + " -o " + out1);
    ASSERT_EQ(r1.exit_code, 0) << r1.err;
    std::string stages;
    int count = 0;
    const auto listed_stages =
        ConfigNode::ParseFile(out1).Child("result").Child("plan").Child("stages").Elements();
    for (std::size_t k = 0; k < listed_stages.size(); ++k) {
      if (listed_stages[k].Child("peak_memory_bytes").AsDouble() > 0.9 * 79.151 * 1073741824.0) {
        stages += (stages.empty() ? "" : ", ") + std::to_string(k);
        ++count;
      }
    }
    ASSERT_GT(count, 0);
    EXPECT_NE(r1.out.find((count > 1 ? "stages " : "stage ") + stages + " within 10% of the HBM"),
              std::string::npos)
        << r1.out;
  }
  // By default every interleaving Megatron-LM allows is tried: the same ranking as listing each
  // v > 1 that divides the 96 blocks.
  const std::string listed = (dir / "listed.json").string();
  auto explicit_v = Phaze("plan --model " + std::string(PHAZE_SOURCE_DIR) +
                          "/workloads/megatron-gpt3-175b.yaml --arch a100-sxm-80gb --system "
                          "dgx-a100 --accelerators 1024 --global-batch 1536 --top 5 "
                          "--micro-batches 1,2 --recompute selective,full "
                          "--virtual-stages 2,3,4,6,8,12,16,24,32,48,96 -o " +
                          listed);
  ASSERT_EQ(explicit_v.exit_code, 0) << explicit_v.err;
  const ConfigNode k = ConfigNode::ParseFile(listed);
  EXPECT_EQ(k.Child("evaluated").AsInt(), j.Child("evaluated").AsInt());
  const auto listed_plans = k.Child("plans").Elements();
  ASSERT_EQ(listed_plans.size(), plans.size());
  for (std::size_t i = 0; i < plans.size(); ++i) {
    EXPECT_EQ(listed_plans[i].Child("v").AsInt(), plans[i].Child("v").AsInt()) << i;
    EXPECT_EQ(listed_plans[i].Child("time_per_batch_s").AsDouble(),
              plans[i].Child("time_per_batch_s").AsDouble())
        << i;
  }
  // No launchable shape: each t·p·d of the accelerators with what it fails (by hand: tiny-gpt has
  // 2 blocks and 4 heads; 3 accelerators are t 1 with p 1, d 3 — no b·3 divides 8 — or p 3,
  // d 1 — 3 blocks too many; 4 accelerators at Megatron t 4 leave d 1, so nothing to shard).
  const std::string tiny = "plan --model " + std::string(PHAZE_SOURCE_DIR) +
                           "/workloads/tiny-gpt.yaml --arch a100-sxm-80gb --global-batch 8";
  auto none = Phaze(tiny + " --accelerators 3");
  EXPECT_EQ(none.exit_code, 1) << none.err;
  EXPECT_NE(none.err.find("no launchable plan for 3 accelerators and global batch 8: every "
                          "t·p·d = 3 fails — t 1, p 1, d 3: no micro-batch of 1,2,4,8 times d "
                          "divides the batch; t 1, p 3, d 1: p does not divide the 2 blocks ("),
            std::string::npos)
      << none.err;
  auto unsharded =
      Phaze(tiny + " --accelerators 4 --widths 4 --sharding optimizer --strategies megatron");
  EXPECT_EQ(unsharded.exit_code, 1) << unsharded.err;
  EXPECT_NE(unsharded.err.find("t 4, p 1, d 1: no listed sharding applies"), std::string::npos)
      << unsharded.err;
  {  // Split experts over e = 8 replicas need d a multiple of 8: on 8 devices at t 2, d is 4 or 2.
    testing::TempDir dir;
    testing::WriteFile(dir / "moe.yaml",
                       "name: moe\nfamily: llama\nlayers: 2\nhidden: 64\nheads: 4\nffn_hidden: 128\n"
                       "vocab: 256\nmax_positions: 64\nsequence_length: 64\n"
                       "moe: {experts: 8, top_k: 2, expert_ffn_hidden: 128}\n");
    auto folded = Phaze("plan --model " + (dir / "moe.yaml").string() +
                        " --arch a100-sxm-80gb --global-batch 8 --accelerators 8 --widths 2 "
                        "--strategies moe --expert-parallel 8 --expert-tensor-parallel width");
    EXPECT_EQ(folded.exit_code, 1) << folded.err;
    EXPECT_NE(folded.err.find("t 2, p 1, d 4: each expert group spans 8 data-parallel replicas, "
                              "which d does not divide (a smaller --expert-parallel); t 2, p 2, "
                              "d 2: each expert group spans 8"),
              std::string::npos)
        << folded.err;
  }
  // Bad input says which flag.
  EXPECT_USAGE_ERROR(Phaze(tiny + " --accelerators 2 --strategies megatron,tensor"),
                     "--strategies: no parallelism strategy named 'tensor'; registered: "
                     "context_parallel, megatron, moe, sequence_parallel");
  auto bad = Phaze("plan --model x.yaml --arch a100-sxm-80gb --accelerators 8 --widths 1,two");
  EXPECT_USAGE_ERROR(bad, "--widths: expected comma-separated integers, found '1,two'");
  EXPECT_EQ(Phaze("plan --model x.yaml --arch a100-sxm-80gb").exit_code, 2);  // no --accelerators
}

// predict.json records what launches the plan it costs: Megatron-LM's arguments and environment
// (by hand for t 2, p 2, d 2 under today's recipe: no sequence parallelism, so no
// --tp-comm-overlap; the reduction overlapped; FlashAttention), TorchTitan's keys for an FSDP plan
// with per-op checkpointing under TorchTitan's recipe, and each framework's reason where it cannot.
// Hybrid sharding from the command line: FSDP within each node of 8 on 16 H100s, so each device
// holds 1/8 of the weights, gradients and optimizer state, twice FSDP over all 16's 1/16; the
// plan says so, records its group and replicas, and launches with two Megatron-LM distributed-
// optimizer instances (one micro-batch a step). A group that is no group is refused.

TEST(Cli, PredictShardsWithinANode) {
  testing::TempDir dir;
  const std::string predict = "predict --model " + std::string(PHAZE_SOURCE_DIR) +
                              "/workloads/llama2-7b.yaml --arch h100-sxm-80gb --system dgx-h100 "
                              "--accelerators 16 --global-batch 16 --plan 1,1,16 --micro-batch 1 "
                              "--sharding parameters --hbm-gib 1024 -o ";
  const std::string node = (dir / "node.json").string(), all = (dir / "all.json").string();
  auto r = Phaze(predict + node + " --shard-group node");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("sharding parameters (8 of 16)"), std::string::npos) << r.out;
  r = Phaze(predict + all + " --shard-group all");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("sharding parameters\n"), std::string::npos) << r.out;
  const ConfigNode hsdp = ConfigNode::ParseFile(node), fsdp = ConfigNode::ParseFile(all);
  EXPECT_EQ(hsdp.Child("result").Child("shard_group").AsString(), "node");
  EXPECT_EQ(hsdp.Child("result").Child("shard_replicas").AsInt(), 8);
  EXPECT_EQ(fsdp.Child("result").Child("shard_replicas").AsInt(), 16);
  for (const char* part : {"weight_bytes", "gradient_bytes", "optimizer_state_bytes"}) {
    EXPECT_DOUBLE_EQ(FirstStageMemory(hsdp, part), 2 * FirstStageMemory(fsdp, part)) << part;
  }
  std::string args;
  for (const auto& a : hsdp.Child("megatron_args").Elements()) args += " " + a.AsString();
  EXPECT_NE(args.find(" --use-distributed-optimizer --num-distributed-optimizer-instances 2 "),
            std::string::npos)
      << args;
  r = Phaze(predict + node + " --shard-group 0");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--shard-group: expected all, node or a device count"), std::string::npos)
      << r.err;
}

// The moe strategy's experts folded over data-parallel replicas (--expert-parallel e at t 1):
// each device holds E/e experts, their optimizer state divided over the d/e replicas holding the
// same ones. Mixtral 8x7B's experts: 32 layers × 8 × 3·4096·14336 parameters, 2 bytes each.
TEST(Cli, PredictFoldsExpertsOverDataParallelReplicas) {
  testing::TempDir dir;
  const std::string predict = "-q predict --model " + std::string(PHAZE_SOURCE_DIR) +
                              "/workloads/mixtral-8x7b.yaml --arch h100-sxm-80gb --system "
                              "dgx-h100 --micro-batch 1 --recompute full --hbm-gib 1024 "
                              "--strategy moe --recipe megatron-core-2024 ";
  const std::string on16 = predict + "--accelerators 16 --global-batch 16 --plan 1,1,16 ";
  const std::string e8 = (dir / "e8.json").string(), e2 = (dir / "e2.json").string();
  auto r = Phaze(on16 + "--sharding optimizer --expert-parallel 8 -o " + e8);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("strategy moe, expert parallel 8\n"), std::string::npos) << r.out;
  r = Phaze(on16 + "--sharding optimizer --expert-parallel 2 -o " + e2);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const ConfigNode a = ConfigNode::ParseFile(e8), b = ConfigNode::ParseFile(e2);
  const double experts = 32.0 * 8 * 3 * 4096 * 14336 * 2;
  EXPECT_DOUBLE_EQ(FirstStageMemory(b, "weight_bytes") - FirstStageMemory(a, "weight_bytes"),
                   experts * (0.5 - 0.125));
  // Each device's optimizer state is 1/d of the experts' either way: E/e experts over d/e.
  EXPECT_NEAR(FirstStageMemory(a, "optimizer_state_bytes"),
              FirstStageMemory(b, "optimizer_state_bytes"), 1.0);
  EXPECT_EQ(a.Child("strategy").Child("params").Child("expert_parallel").AsInt(), 8);
  EXPECT_EQ(a.Child("megatron").Child("expert").AsInt(), 8);
  EXPECT_EQ(a.Child("result").Child("plan").Child("expert_parallel").AsInt(), 8);
  std::string args;
  for (const auto& x : a.Child("megatron_args").Elements()) args += " " + x.AsString();
  EXPECT_NE(args.find(" --tensor-model-parallel-size 1 --pipeline-model-parallel-size 1 "
                      "--expert-model-parallel-size 8 --expert-tensor-parallel-size 1 "),
            std::string::npos)
      << args;
  EXPECT_USAGE_ERROR(Phaze(on16 + "--expert-parallel 3"),
                     "--expert-parallel 3: the 8 experts of mixtral-8x7b are not divisible by 3");
  // Sharding the parameters too (FSDP): each device's weights are 1/d of the whole either way,
  // the experts' E/e over the d/e replicas holding them.
  const std::string p8 = (dir / "p8.json").string(), p2 = (dir / "p2.json").string();
  ASSERT_EQ(Phaze(on16 + "--sharding parameters --expert-parallel 8 -o " + p8).exit_code, 0);
  ASSERT_EQ(Phaze(on16 + "--sharding parameters --expert-parallel 2 -o " + p2).exit_code, 0);
  const ConfigNode z8 = ConfigNode::ParseFile(p8), z2 = ConfigNode::ParseFile(p2);
  const double whole = FirstStageMemory(a, "weight_bytes") - experts / 8;  // the rest, unsharded
  EXPECT_NEAR(FirstStageMemory(z8, "weight_bytes"), (whole + experts) / 16, 1.0);
  EXPECT_NEAR(FirstStageMemory(z2, "weight_bytes"), (whole + experts) / 16, 1.0);
  EXPECT_USAGE_ERROR(
      Phaze(predict + "--accelerators 12 --global-batch 12 --plan 1,1,12 --expert-parallel 8"),
      "--plan d = 12: the expert groups span 8 data-parallel replicas, which must divide d");
  r = Phaze("-q predict --model " + std::string(PHAZE_SOURCE_DIR) +
            "/workloads/mixtral-8x7b.yaml --arch h100-sxm-80gb --plan 1,1,8 --global-batch 8 "
            "--micro-batch 1 --expert-parallel 8");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--expert-parallel: expert parallelism is the moe strategy's, not "
                       "'megatron' (give --strategy moe)"),
            std::string::npos)
      << r.err;
}

// --expert-tensor-parallel width splits each expert over the t ranks (Megatron-LM's
// --expert-tensor-parallel-size t): at t 2, e 4 a device holds 8/4 experts halved, where whole
// experts fold e = 4 over t·d and hold 8/4 whole — by hand, 32 blocks × 8 experts × 3 GEMMs of
// 4096 × 14336 bf16, × (1/4 − 1/8) more under whole experts. The optimizer state is 1/(t·d) of the
// experts either way. Split expert groups span e data-parallel replicas, which must divide d.
TEST(Cli, PredictSplitsExpertsOverTheWidth) {
  testing::TempDir dir;
  const std::string predict = "-q predict --model " + std::string(PHAZE_SOURCE_DIR) +
                              "/workloads/mixtral-8x7b.yaml --arch h100-sxm-80gb --system "
                              "dgx-h100 --micro-batch 1 --recompute full --hbm-gib 1024 "
                              "--strategy moe --recipe megatron-core-2024 --sharding optimizer ";
  const std::string on16 =
      predict + "--accelerators 16 --global-batch 16 --plan 2,1,8 --expert-parallel 4 ";
  const std::string split = (dir / "split.json").string(), whole = (dir / "whole.json").string();
  auto r = Phaze(on16 + "--expert-tensor-parallel width -o " + split);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("strategy moe, expert parallel 4, experts split over t (expert tensor "
                       "parallel 2)"),
            std::string::npos)
      << r.out;
  r = Phaze(on16 + "--expert-tensor-parallel 1 -o " + whole);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.find("expert tensor parallel"), std::string::npos) << r.out;
  const ConfigNode a = ConfigNode::ParseFile(split), b = ConfigNode::ParseFile(whole);
  const double experts = 32.0 * 8 * 3 * 4096 * 14336 * 2;
  EXPECT_DOUBLE_EQ(FirstStageMemory(b, "weight_bytes") - FirstStageMemory(a, "weight_bytes"),
                   experts * (1.0 / 4 - 1.0 / 8));
  EXPECT_NEAR(FirstStageMemory(a, "optimizer_state_bytes"),
              FirstStageMemory(b, "optimizer_state_bytes"), 1.0);
  EXPECT_EQ(a.Child("megatron").Child("expert_tensor").AsInt(), 2);
  EXPECT_EQ(b.Child("megatron").Child("expert_tensor").AsInt(), 1);
  EXPECT_EQ(a.Child("result").Child("plan").Child("expert_tensor_parallel").AsInt(), 2);
  EXPECT_EQ(b.Child("result").Child("plan").Child("expert_tensor_parallel").AsInt(), 1);
  EXPECT_EQ(a.Child("strategy").Child("params").Child("expert_tensor_parallel").AsString(),
            "width");
  std::string args;
  for (const auto& x : a.Child("megatron_args").Elements()) args += " " + x.AsString();
  EXPECT_NE(args.find(" --expert-model-parallel-size 4 --expert-tensor-parallel-size 2 "),
            std::string::npos)
      << args;
  EXPECT_USAGE_ERROR(
      Phaze(predict + "--accelerators 8 --global-batch 8 --plan 2,1,4 --expert-parallel 8 "
                      "--expert-tensor-parallel width"),
      "--plan d = 4: the expert groups span 8 data-parallel replicas, which must divide d");
  // Megatron-LM's own spelling, the integer t, is width; another size is refused.
  const std::string by_size = (dir / "by-size.json").string();
  r = Phaze(on16 + "--expert-tensor-parallel 2 -o " + by_size);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(ConfigNode::ParseFile(by_size).Child("result").Child("time_per_batch_s").AsDouble(),
            a.Child("result").Child("time_per_batch_s").AsDouble());
  EXPECT_USAGE_ERROR(Phaze(on16 + "--expert-tensor-parallel 4"),
                     "--expert-tensor-parallel: expected 1 (each expert whole on its device), "
                     "width or 2 (each expert split over the tensor-parallel width), found '4'; "
                     "expert tensor-parallel sizes other than 1 and the width are not modelled");
  EXPECT_USAGE_ERROR(
      Phaze(predict + "--accelerators 16 --global-batch 16 --plan 1,1,16 --expert-parallel 8 "
                      "--expert-tensor-parallel width"),
      "keeps each expert whole: the same as expert_tensor_parallel 1");
  EXPECT_USAGE_ERROR(Phaze("-q predict --model " + std::string(PHAZE_SOURCE_DIR) +
                           "/workloads/llama2-7b.yaml --arch h100-sxm-80gb --plan 2,1,4 "
                           "--global-batch 8 --micro-batch 1 --strategy moe "
                           "--expert-tensor-parallel width"),
                     "--expert-tensor-parallel width: llama2-7b has no experts to split");
}

// Megatron-LM's MoE guide (megatron/core/transformer/moe/README.md at d98e8a64, "Best Practices",
// Guideline 4: "For Mixtral 8x7B, EP8×TP1 outperforms EP4×TP2"): phaze's fastest EP8×TP1 plan on
// 64 H100s beats its fastest EP4×TP2 one, both as the guide ran it (each expert split over the
// tensor-parallel ranks, Megatron's default --expert-tensor-parallel-size = TP) and with the
// experts kept whole. Every plan's arguments carry its expert-parallel and expert-tensor-parallel
// sizes, and the sizes place the experts: whole experts fold over tp·d ranks, split ones over d.
TEST(Cli, PlanFoldsExpertsAsMegatronAdvises) {
  testing::TempDir dir;
  const std::string out = (dir / "plan.json").string();
  auto r = Phaze("-q plan --model " + std::string(PHAZE_SOURCE_DIR) +
                 "/workloads/mixtral-8x7b.yaml --arch h100-sxm-80gb --system dgx-h100 "
                 "--accelerators 64 --global-batch 256 --strategies moe --expert-parallel "
                 "width,4,8 --expert-tensor-parallel all --top 800 -o " +
                 out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::map<std::tuple<std::int64_t, std::int64_t, std::int64_t>, double> fastest;  // (tp, ep, etp)
  for (const auto& plan : ConfigNode::ParseFile(out).Child("plans").Elements()) {
    const std::int64_t tp = plan.Child("megatron").Child("tensor").AsInt();
    const std::int64_t ep = plan.Child("megatron").Child("expert").AsInt();
    const std::int64_t etp = plan.Child("megatron").Child("expert_tensor").AsInt();
    fastest.emplace(std::tuple{tp, ep, etp}, plan.Child("time_per_batch_s").AsDouble());
    EXPECT_EQ(plan.Child("result").Child("plan").Child("expert_tensor_parallel").AsInt(), etp);
    std::string args;
    for (const auto& a : plan.Child("megatron_args").Elements()) args += " " + a.AsString();
    if (ep > 1) {
      EXPECT_NE(args.find(" --expert-model-parallel-size " + std::to_string(ep) +
                          " --expert-tensor-parallel-size " + std::to_string(etp) +
                          " --moe-token-dispatcher-type alltoall "),
                std::string::npos)
          << args;
    } else if (etp > 1) {
      EXPECT_NE(args.find(" --expert-tensor-parallel-size " + std::to_string(etp) +
                          " --moe-token-dispatcher-type alltoall "),
                std::string::npos)
          << args;
    }
    const std::int64_t d = plan.Child("d").AsInt();
    if (etp == 1) {
      EXPECT_EQ(ep % tp, 0) << args;
      EXPECT_EQ(d * tp % ep, 0) << args;  // EP divides tp·d
    } else {
      EXPECT_EQ(etp, tp) << args;
      EXPECT_EQ(d % ep, 0) << args;  // EP divides d
    }
  }
  ASSERT_TRUE(fastest.count({1, 8, 1}) && fastest.count({2, 4, 2}) && fastest.count({2, 4, 1}))
      << fastest.size();
  EXPECT_LT(fastest.at({1, 8, 1}), fastest.at({2, 4, 2}));
  EXPECT_LT(fastest.at({1, 8, 1}), fastest.at({2, 4, 1}));
  // Sizes that cannot place the experts are refused, not skipped.
  const std::string plan = "-q plan --model " + std::string(PHAZE_SOURCE_DIR) +
                           "/workloads/mixtral-8x7b.yaml --arch h100-sxm-80gb --accelerators 64 "
                           "--global-batch 256 -o " +
                           out;
  EXPECT_USAGE_ERROR(Phaze(plan + " --expert-parallel 3"),
                     "--expert-parallel 3: the 8 experts of mixtral-8x7b are not divisible by 3");
  EXPECT_USAGE_ERROR(Phaze(plan + " --expert-parallel 8 --strategies megatron"),
                     "--expert-parallel: expert parallelism is the moe strategy's, and "
                     "--strategies lists none (add moe)");
  EXPECT_USAGE_ERROR(Phaze("-q plan --model " + std::string(PHAZE_SOURCE_DIR) +
                           "/workloads/llama2-7b.yaml --arch h100-sxm-80gb --accelerators 8 "
                           "--global-batch 64 --strategies moe --expert-tensor-parallel width -o " +
                           out),
                     "--expert-tensor-parallel width: llama2-7b has no experts to split");
  // Whole experts unless asked (TorchTitan's arguments are for whole experts only).
  r = Phaze(plan + " --system dgx-h100 --framework torchtitan --strategies moe --top 50");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const auto& p : ConfigNode::ParseFile(out).Child("plans").Elements()) {
    EXPECT_EQ(p.Child("result").Child("plan").Child("expert_tensor_parallel").AsInt(), 1);
  }
}

// A one-config search of a two-block mixture of 4 experts on 16 devices at the tensor-parallel
// `widths` under `strategy` (run-config YAML), its outputs in dir/out.
testing::CommandResult SearchTinyMoe(const testing::TempDir& dir, const std::string& widths,
                                 const std::string& strategy) {
  testing::WriteFile(dir / "space.yaml", testing::kTinySpace);
  testing::WriteFile(dir / "moe.yaml",
                     "name: tiny-moe\nfamily: llama\nlayers: 2\nhidden: 64\nheads: 4\n"
                     "kv_heads: 2\nffn_hidden: 128\nvocab: 256\nmax_positions: 64\n"
                     "sequence_length: 32\nmoe: {experts: 4, top_k: 2}\n");
  testing::WriteFile(dir / "run.yaml",
                     "models: [moe.yaml]\narch: {space: space.yaml}\n"
                     "cluster: {num_accelerators: 16}\n"
                     "training: {global_batch: 16, micro_batches: [1], tensor_parallel_widths: " +
                         widths + ", hbm_gib: [32], recompute: [none]}\n"
                     "solver: {backend: cbc, node_limit: 5, max_exact_ops: 24}\n"
                     "strategy: " + strategy + "\n");
  return Phaze("search --config " + (dir / "run.yaml").string() +
               " --max-configs 1 --output-dir " + (dir / "out").string());
}

// A search lists the moe strategy at two expert-parallel sizes, one of which no width allows (3
// does not divide the 4 experts): the search runs on the other and says so on stderr.
TEST(Cli, SearchSaysWhichListedStrategySlicesNothing) {
  testing::TempDir dir;
  const auto r = SearchTinyMoe(dir, "[1, 2]", "[moe, {name: moe, params: {expert_parallel: 3}}]");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(
      r.err.find("tiny-moe: strategy[1] {\"name\":\"moe\",\"params\":{\"expert_parallel\":3}} "
                 "slices it at none of the tensor-parallel widths (t=1: the 4 experts are "
                 "not divisible by expert_parallel 3); its search goes on without it"),
      std::string::npos)
      << r.err;
}

// A search under the moe strategy with split experts (expert_tensor_parallel: width) records them
// where it records the expert-parallel size: results.json's plan, explored.csv's column after
// expert_parallel, report.md's plan ("EP 2 ETP 2").
TEST(Cli, SearchRecordsSplitExperts) {
  testing::TempDir dir;
  const auto r = SearchTinyMoe(
      dir, "[2]", "{name: moe, params: {expert_parallel: 2, expert_tensor_parallel: width}}");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const ConfigNode j = ConfigNode::ParseFile(dir / "out" / "results.json");
  const ConfigNode best =
      j.Child("explored").Elements()[0].Child("models").Elements()[0].Child("best");
  ASSERT_TRUE(best.Child("feasible").AsBool());
  EXPECT_EQ(best.Child("plan").Child("tensor_parallel").AsInt(), 2);
  EXPECT_EQ(best.Child("plan").Child("expert_parallel").AsInt(), 2);
  EXPECT_EQ(best.Child("plan").Child("expert_tensor_parallel").AsInt(), 2);
  const std::string csv = testing::Slurp(dir / "out" / "explored.csv");
  const std::string second = csv.substr(csv.find('\n') + 1);
  std::vector<std::string> cells;
  std::stringstream cols(second.substr(0, second.find('\n')));
  for (std::string cell; std::getline(cols, cell, ',');) cells.push_back(cell);
  ASSERT_GT(cells.size(), 29u);
  EXPECT_EQ(cells[28], "2");
  EXPECT_EQ(cells[29], "2");
  EXPECT_NE(testing::Slurp(dir / "out" / "report.md").find(", t 2 moe EP 2 ETP 2}"),
            std::string::npos);
}

// A model without experts has none to place: --expert-parallel is refused, and under the moe
// strategy (which then slices as megatron with sequence parallelism) its launch has no expert
// parallelism.
TEST(Cli, DenseModelsLaunchNoExpertParallelism) {
  testing::TempDir dir;
  const std::string out = (dir / "p.json").string();
  const std::string predict = "-q predict --model " + std::string(PHAZE_SOURCE_DIR) +
                              "/workloads/tiny-gpt.yaml --arch a100-sxm-80gb --micro-batch 1 "
                              "--global-batch 4 --strategy moe --plan 2,1,2 -o " +
                              out;
  EXPECT_USAGE_ERROR(Phaze(predict + " --expert-parallel 2"),
                     "--expert-parallel 2: tiny-gpt has no experts to place");
  const auto r = Phaze(predict);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.find("expert parallel"), std::string::npos) << r.out;
  const ConfigNode j = ConfigNode::ParseFile(out);
  std::string args;
  for (const auto& a : j.Child("megatron_args").Elements()) args += " " + a.AsString();
  EXPECT_NE(args.find(" --tensor-model-parallel-size 2 "), std::string::npos) << args;
  EXPECT_EQ(args.find("expert"), std::string::npos) << args;
  EXPECT_FALSE(j.Child("result").Child("plan").Has("expert_parallel"));
}

TEST(Cli, PredictRecordsWhatLaunchesThePlan) {
  testing::TempDir dir;
  const std::string out = (dir / "predict.json").string();
  const std::string predict = "-q predict --model " + std::string(PHAZE_SOURCE_DIR) +
                              "/workloads/llama2-7b.yaml --arch h100-sxm-80gb --system dgx-h100 "
                              "--global-batch 16 --hbm-gib 1024 -o " +
                              out;
  auto r = Phaze(predict + " --plan 2,2,2 --micro-batch 1 --recipe megatron-core-2024");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ConfigNode j = ConfigNode::ParseFile(out);
  std::string args;
  for (const auto& a : j.Child("megatron_args").Elements()) args += " " + a.AsString();
  EXPECT_EQ(args,
            " --tensor-model-parallel-size 2 --pipeline-model-parallel-size 2 --micro-batch-size 1 "
            "--global-batch-size 16 --seq-length 4096 --overlap-grad-reduce --attention-backend "
            "flash --bf16");
  EXPECT_EQ(j.Child("megatron_env").Elements().at(0).AsString(), "CUDA_DEVICE_MAX_CONNECTIONS=1");
  EXPECT_EQ(j.Child("megatron").Child("tensor").AsInt(), 2);
  EXPECT_NE(j.Child("torchtitan_args_note").AsString().find("without sequence parallelism"),
            std::string::npos);
  r = Phaze(predict +
            " --plan 1,1,8 --micro-batch 2 --recipe torchtitan-2025 --sharding "
            "parameters --recompute per-op");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  j = ConfigNode::ParseFile(out);
  std::vector<std::string> keys;
  for (const auto& a : j.Child("torchtitan_args").Elements()) keys.push_back(a.AsString());
  for (const char* want :
       {"--parallelism.data_parallel_shard_degree=8", "--training.local_batch_size=2",
        "--training.global_batch_size=16", "--activation_checkpoint.selective_ac_option=op"}) {
    EXPECT_NE(std::find(keys.begin(), keys.end(), want), keys.end()) << want;
  }
  EXPECT_NE(j.Child("torchtitan_toml")
                .AsString()
                .find("[parallelism]\ndata_parallel_replicate_degree = 1\n"),
            std::string::npos);
  EXPECT_NE(j.Child("megatron_args_note").AsString().find("per-op"), std::string::npos);
}

// plan --framework torchtitan plans with TorchTitan's recipe and strategies (DTensor's tensor
// parallelism, which keeps the gathered input) and ranks only what TorchTitan can run as phaze
// prices it; each plan's job-config keys, read back, say its own t, p, d, micro-batch, recompute
// and sharding, and its TOML has them too. A pipeline runs under FSDP2 only (sharding optimizer);
// an unknown framework is refused.
TEST(Cli, PlanForTorchTitanRanksWhatItRunsWithItsJobConfig) {
  testing::TempDir dir;
  const std::string out = (dir / "plan.json").string();
  const std::string plan = "plan --model " + std::string(PHAZE_SOURCE_DIR) +
                           "/workloads/llama2-7b.yaml --arch h100-sxm-80gb --system dgx-h100 "
                           "--accelerators 16 --global-batch 64 --widths 1,2,4 "
                           "--micro-batches 1,2,4 --top 12";
  auto r = Phaze(plan + " --framework torchtitan -o " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("TorchTitan v0.2.2 arguments"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("Megatron-LM arguments"), std::string::npos) << r.out;
  const ConfigNode j = ConfigNode::ParseFile(out);
  EXPECT_EQ(j.Child("framework").AsString(), "torchtitan");
  EXPECT_EQ(j.Child("recipe").AsString(), "torchtitan-2025");
  EXPECT_EQ(j.Child("loss").AsString(), "compiled");  // with the model, as TorchTitan compiles
  EXPECT_EQ(j.Child("fp8_recipe").AsString(), "tensorwise");  // torchao's float8
  {  // The recipe line says how FP8 is scaled when FP8 is planned.
    auto fp8 =
        Phaze(plan + " --framework torchtitan --precision fp8 -o " + (dir / "fp8.json").string());
    ASSERT_EQ(fp8.exit_code, 0) << fp8.err;
    EXPECT_NE(fp8.out.find("FP8 with tensorwise scaling"), std::string::npos) << fp8.out;
  }
  EXPECT_EQ(
      j.Child("strategies").Elements().at(0).Child("params").Child("gathered_input").AsString(),
      "keep");
  EXPECT_GT(j.Child("refused")
                .Child("not for TorchTitan (a pipeline without sharding optimizer)")
                .AsInt(),
            0);
  // Refusals counted by their own reason (one naming micro-batches is not the evaluator's "d above
  // the micro-batches").
  EXPECT_GT(j.Child("refused")
                .Child("not for TorchTitan (sharding gradients over several micro-batches a step)")
                .AsInt(),
            0);
  const auto plans = j.Child("plans").Elements();
  ASSERT_EQ(plans.size(), 12u);
  bool tensor_parallel = false;
  bool hybrid = false;  // --framework torchtitan sweeps shard groups all and node (HSDP)
  for (const auto& p : plans) {
    std::map<std::string, std::string> keys;
    for (const auto& a : p.Child("torchtitan_args").Elements()) {
      const std::string arg = a.AsString();
      const std::size_t eq = arg.find('=');
      keys[arg.substr(2, eq == std::string::npos ? std::string::npos : eq - 2)] =
          eq == std::string::npos ? "true" : arg.substr(eq + 1);
    }
    auto num = [&](const std::string& key) { return std::stoll(keys.at("parallelism." + key)); };
    const std::int64_t t = p.Child("t").AsInt();
    const std::int64_t stages = p.Child("p").AsInt();
    const std::int64_t d = p.Child("d").AsInt();
    EXPECT_EQ(num("tensor_parallel_degree") * num("context_parallel_degree"), t);
    EXPECT_EQ(num("data_parallel_replicate_degree") * num("data_parallel_shard_degree"), d);
    EXPECT_EQ(num("pipeline_parallel_degree"), stages);
    EXPECT_EQ(t * stages * d, 16);
    const std::string micro_batch = std::to_string(p.Child("micro_batch").AsInt());
    if (stages > 1) {
      EXPECT_EQ(p.Child("sharding").AsString(), "optimizer");
      EXPECT_EQ(keys.at("parallelism.pipeline_parallel_microbatch_size"), micro_batch);
      EXPECT_EQ(keys.at("training.local_batch_size"), std::to_string(64 / d));
    } else {
      EXPECT_EQ(keys.at("training.local_batch_size"), micro_batch);
    }
    EXPECT_EQ(keys.at("training.global_batch_size"), "64");
    const std::string recompute = p.Child("recompute").AsString();
    EXPECT_EQ(keys.at("activation_checkpoint.mode"),
              recompute == "per-op" ? "selective" : recompute);
    const std::string sharding = p.Child("sharding").AsString();
    EXPECT_EQ(keys.count("parallelism.fsdp_reshard_after_forward") == 1, sharding != "none");
    if (sharding == "gradients") {
      EXPECT_EQ(keys.at("parallelism.fsdp_reshard_after_forward"), "never");
    }
    if (sharding != "none") {  // FSDP2 over the plan's h replicas; HSDP in nodes of 8 GPUs
      const std::int64_t h = p.Child("shard_replicas").AsInt();
      EXPECT_EQ(num("data_parallel_shard_degree"), h);
      EXPECT_TRUE(h == d || (p.Child("shard_group").AsString() == "node" && h * t == 8)) << h;
      hybrid = hybrid || h < d;
    }
    EXPECT_EQ(keys.at("compile.enable"), "true");
    EXPECT_EQ(keys.at("compile.components"), "model,loss");  // the loss priced compiled
    const std::string toml = p.Child("torchtitan_toml").AsString();
    EXPECT_NE(toml.find("\ntensor_parallel_degree = " +
                        std::to_string(num("tensor_parallel_degree")) + "\n"),
              std::string::npos)
        << toml;
    EXPECT_NE(toml.find("\nlocal_batch_size = " + keys.at("training.local_batch_size") + "\n"),
              std::string::npos);
    if (num("tensor_parallel_degree") > 1) {
      tensor_parallel = true;  // DTensor's: no Megatron-LM form
      EXPECT_NE(p.Child("megatron_args_note").AsString().find("gathered_input: keep"),
                std::string::npos);
    }
  }
  EXPECT_TRUE(tensor_parallel) << "no plan with tensor parallelism among the 12";
  EXPECT_TRUE(hybrid) << "no HSDP plan among the 12";
  r = Phaze(plan + " --framework nemo");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--framework: expected megatron-lm or torchtitan, found 'nemo'"),
            std::string::npos)
      << r.err;
}

}  // namespace
}  // namespace phaze
