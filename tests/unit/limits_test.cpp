// Issue 25's "ranges at the edge": every integer phaze reads is refused outside its documented
// range (phaze/core/limits.hpp) with a located message, and a workload too large to count in 64
// bits is refused before its graph is built. Expected figures are worked by hand below.
#include "phaze/core/limits.hpp"

#include <gtest/gtest.h>

#include "phaze/arch/arch_config.hpp"
#include "phaze/search/run_config.hpp"
#include "phaze/core/error.hpp"
#include "phaze/graph/graph_builder.hpp"
#include "phaze/graph/model_spec.hpp"
#include "test_util.hpp"

namespace phaze {
namespace {

using phaze::testing::ErrorOf;

ModelSpec Model(const std::string& hidden, const std::string& vocab = "256",
                const std::string& sequence = "32") {
  return ParseModelSpec(ConfigNode::ParseString(
      "name: m\nfamily: megatron-gpt\nlayers: 2\nhidden: " + hidden + "\nheads: 4\nvocab: " + vocab +
          "\nmax_positions: 16777216\nsequence_length: " + sequence + "\n",
      "model.yaml"));
}

TEST(Limits, ModelDimensionsAreReadInRange) {
  // hidden 2^62 (a multiple of 4 heads) used to wrap the GEMM sizes to 0 and exit 0.
  EXPECT_EQ(ErrorOf([] { Model("4611686018427387904"); }),
            "model.yaml:4:9: hidden: expected an integer in [1, 1048576], found "
            "4611686018427387904 (phaze's limit: see share/config/README.md, Limits)");
  EXPECT_EQ(ErrorOf([] { Model("64", "16777217"); }),
            "model.yaml:6:8: vocab: expected an integer in [1, 16777216], found 16777217 (phaze's "
            "limit: see share/config/README.md, Limits)");
  EXPECT_EQ(Model("1048576", "16777216").vocab, 16777216);  // the limits themselves are accepted
}

TEST(Limits, AWorkloadTooLargeToCountIsRefusedBeforeBuilding) {
  // b = 2^20, s = 2^24, h = 64: attention alone is 4·layers·b·s²·h = 4·2·2^20·2^48·2^6 = 2^77
  // FLOPs per forward pass, far above 2^62.
  GraphOptions big;
  big.micro_batch = limits::kMicroBatch;
  big.sequence_length = limits::kSequence;
  const std::string error = ErrorOf([&] { BuildLayerGraph(Model("64"), big); });
  EXPECT_NE(error.find("model.yaml: a training step of one micro-batch in FLOPs is about"),
            std::string::npos)
      << error;
  EXPECT_NE(error.find("above the 2^62"), std::string::npos) << error;
  // b = 1, s = 32, h = 64: 4·(2·32·(2·(4·64² + 2·256·64) + 256·64) + 4·2·32²·64) ≈ 1.7e7 FLOPs.
  GraphOptions small;
  EXPECT_NO_THROW(BuildLayerGraph(Model("64"), small));
  // Beyond the micro-batch limit (the CLI and run config refuse it earlier, with a location).
  GraphOptions huge;
  huge.micro_batch = limits::kMicroBatch + 1;
  EXPECT_EQ(ErrorOf([&] { BuildLayerGraph(Model("64"), huge); }),
            "micro-batch size must be in [1, 1048576], got 1048577");
}

TEST(Limits, RunConfigAndArchitectureIntegersAreReadInRange) {
  auto run = [](const std::string& text) {
    return RunConfig::Parse(ConfigNode::ParseString(text, "run.yaml"));
  };
  // 2^32 accelerators and global batch: the DP's int casts used to wrap to 0 (SIGFPE).
  EXPECT_EQ(ErrorOf([&] { run("models: [a]\ncluster: {num_accelerators: 4294967296}\n"); }),
            "run.yaml:2:29: cluster.num_accelerators: expected an integer in [1, 16777216], found "
            "4294967296 (phaze's limit: see share/config/README.md, Limits)");
  EXPECT_EQ(ErrorOf([&] { run("models: [a]\ntraining: {global_batch: 9223372036854775807}\n"); }),
            "run.yaml:2:26: training.global_batch: expected an integer in [1, 1099511627776], "
            "found 9223372036854775807 (phaze's limit: see share/config/README.md, Limits)");
  // PE 2^31: the peak's int64 product num_tc·pe_x·pe_y used to overflow to 0 TFLOP/s.
  auto arch = [](const std::string& text) {
    return ParseArchConfig(ConfigNode::ParseString(text, "arch.yaml"));
  };
  EXPECT_EQ(ErrorOf([&] { arch("num_tc: 1\nnum_vc: 1\npe_x: 2147483648\npe_y: 2\nglb_mib: 1\n"); }),
            "arch.yaml:3:7: pe_x: expected an integer in [1, 16384], found 2147483648 (phaze's "
            "limit: see share/config/README.md, Limits)");
  EXPECT_EQ(ErrorOf([&] { arch("num_tc: 1\nnum_vc: 1\npe_x: 2\npe_y: 2\nglb_mib: 1.0e12\n"); }),
            "arch.yaml:5:10: glb_mib: expected at most 1073741824 (1 PiB, phaze's limit: see "
            "share/config/README.md, Limits)");
  // At the limits the peak is exact: 2 · 2^16 · 2^14 · 2^14 · 1 Hz = 2^45 FLOP/s.
  ArchConfig a = arch("num_tc: 65536\nnum_vc: 1\npe_x: 16384\npe_y: 16384\nglb_mib: 1\n"
                      "frequency_hz: 1\n");
  EXPECT_DOUBLE_EQ(a.PeakTensorFlopsPerS(), 35184372088832.0);
}

}  // namespace
}  // namespace phaze
