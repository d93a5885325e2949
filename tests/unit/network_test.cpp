// The network model (DESIGN §10) by hand: every collective on 1, 2, 3 and 9 levels with the
// arithmetic written out, group layouts (stride), sends, the level holding a span, the flat case
// equal bit for bit to the paper's formulas, and located errors in `levels:`.
#include "phaze/network/network.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "phaze/core/config_node.hpp"
#include "phaze/core/error.hpp"

namespace phaze {
namespace {

constexpr auto kAR = CollectiveKind::kAllReduce;
constexpr auto kAG = CollectiveKind::kAllGather;
constexpr auto kRS = CollectiveKind::kReduceScatter;
constexpr auto kA2A = CollectiveKind::kAllToAll;

// Node of 8 at 100 GB/s and 1 µs; fabric at 10 GB/s and 10 µs.
Network TwoLevels() {
  return Network({{"node", 8, 1e11, 1e-6}, {"fabric", 0, 1e10, 1e-5}});
}
// Node of 8 (100 GB/s, 1 µs), pod of 32 (50 GB/s, 2 µs), fabric (10 GB/s, 10 µs).
Network ThreeLevels() {
  return Network({{"node", 8, 1e11, 1e-6}, {"pod", 32, 5e10, 2e-6}, {"fabric", 0, 1e10, 1e-5}});
}

TEST(Network, OneLevelRingFormulas) {
  const Network flat = Network::Flat(1e9, 1e-6);
  // All-reduce of 8 MB over 4: 2·3/4·8e6/1e9 = 0.012 s, 2·3 latency steps.
  EXPECT_NEAR(flat.CollectiveS(kAR, 8e6, {4, 1}), 0.012 + 6e-6, 1e-15);
  // All-gather / reduce-scatter / all-to-all: 3/4·8e6/1e9 = 0.006 s, 3 steps.
  for (auto k : {kAG, kRS, kA2A}) EXPECT_NEAR(flat.CollectiveS(k, 8e6, {4, 1}), 0.006003, 1e-15);
  // A group of one, or nothing to send: free. The stride does not matter on one level.
  EXPECT_EQ(flat.CollectiveS(kAR, 8e6, {1, 1}), 0);
  EXPECT_EQ(flat.CollectiveS(kAR, 0, {4, 1}), 0);
  EXPECT_EQ(flat.CollectiveS(kAR, 8e6, {4, 64}), flat.CollectiveS(kAR, 8e6, {4, 1}));
}

TEST(Network, FlatDataParallelSyncIsThePapersFormulaBitForBit) {
  // The paper's DP sync 4·(d − 1)/d·W/bandwidth = the ring all-reduce of 2·W (fp32 gradients).
  const double bw = 4294967296.0;
  const Network flat = Network::Flat(bw);
  for (std::int64_t d : {2, 3, 7, 64, 1000}) {
    for (double w : {1.0, 3.3e8, 1.234567e9, 7e10}) {
      EXPECT_EQ(flat.CollectiveS(kAR, 2 * w, {d, 8}), 4.0 * (d - 1) / d * w / bw) << d << " " << w;
    }
  }
}

TEST(Network, TwoLevelsHierarchical) {
  const Network n = TwoLevels();
  // 16 consecutive ranks: 8 per node, 2 nodes. All-reduce of 1.6 GB:
  //   reduce-scatter in the node 7/8·1.6e9/1e11 = 0.014 s + 7 µs,
  //   all-reduce across 2 nodes on 1.6e9/8 = 2e8: 2·1/2·2e8/1e10 = 0.02 s + 2·10 µs,
  //   all-gather in the node 0.014 s + 7 µs.                      = 0.048034 s
  EXPECT_NEAR(n.CollectiveS(kAR, 1.6e9, {16, 1}), 0.048034, 1e-12);
  // Stride 4 (data parallel beside t = 4): 2 members per node, 8 nodes.
  //   0.5·1.6e9/1e11 = 0.008 + 1 µs; across 8 on 8e8: 2·7/8·8e8/1e10 = 0.14 + 14·10 µs; 0.008 + 1 µs
  EXPECT_NEAR(n.CollectiveS(kAR, 1.6e9, {16, 4}), 0.156142, 1e-12);
  // Reduce-scatter: in the node 0.014 s + 7 µs, across on 2e8: 1/2·2e8/1e10 = 0.01 s + 10 µs.
  EXPECT_NEAR(n.CollectiveS(kRS, 1.6e9, {16, 1}), 0.024017, 1e-12);
  // All-gather: across on 2e8 first, then in the node: the same sum.
  EXPECT_NEAR(n.CollectiveS(kAG, 1.6e9, {16, 1}), 0.024017, 1e-12);
  // All-to-all: each device sends 1.6e9/16 = 1e8 to each of 15 peers: 7 in the node
  // (7e8/1e11 = 0.007 s + 7 µs), 8 on other nodes (8e8/1e10 = 0.08 s + 1·10 µs).
  EXPECT_NEAR(n.CollectiveS(kA2A, 1.6e9, {16, 1}), 0.087017, 1e-12);
  // A group inside one node never touches the fabric: the node's ring.
  EXPECT_NEAR(n.CollectiveS(kAR, 8e8, {8, 1}), 2.0 * 7 / 8 * 8e8 / 1e11 + 14e-6, 1e-15);
  // One member per node (stride 8 = t): the fabric's ring.
  EXPECT_NEAR(n.CollectiveS(kAR, 8e8, {4, 8}), 2.0 * 3 / 4 * 8e8 / 1e10 + 6e-5, 1e-15);
  // A stride that does not divide the node: the tied embedding's first and last stage of a 4-stage
  // pipeline with t·d = 2 are ranks 0 and 6, both in the node of 8 (NVLink, not the fabric):
  //   2·1/2·8e8/1e11 + 2·1 µs. With 3 members (ranks 0, 6 | 12) two are in the node.
  EXPECT_EQ(n.FanOut({2, 6}), (std::vector<double>{2, 1}));
  EXPECT_NEAR(n.CollectiveS(kAR, 8e8, {2, 6}), 8e8 / 1e11 + 2e-6, 1e-15);
  EXPECT_EQ(n.FanOut({3, 6}), (std::vector<double>{2, 1.5}));
  EXPECT_EQ(n.FanOut({2, 7}), (std::vector<double>{2, 1}));
  EXPECT_EQ(n.FanOut({2, 8}), (std::vector<double>{1, 2}));
}

TEST(Network, CallLatencyIsPaidOncePerCollectiveAtTheLargestCrossedLevel) {
  // TwoLevels with a call cost of 40 µs in the node and 100 µs across nodes.
  std::vector<NetworkLevel> levels = TwoLevels().Levels();
  levels[0].call_latency_s = 4e-5;
  levels[1].call_latency_s = 1e-4;
  const Network n(levels);
  const Network base = TwoLevels();
  // 8 ranks in one node: all-reduce of 8 MB = 2·7/8·8e6/1e11 + 14·1 µs + 40 µs = 0.000194 s.
  EXPECT_NEAR(n.CollectiveS(kAR, 8e6, {8, 1}), 0.00014 + 14e-6 + 4e-5, 1e-15);
  // Across two nodes (16 consecutive ranks) the call pays the fabric's 100 µs, once, not 140.
  EXPECT_NEAR(n.CollectiveS(kAR, 1.6e9, {16, 1}), 0.048034 + 1e-4, 1e-12);
  // A data-parallel group one rank per node crosses only the fabric: 100 µs.
  for (auto k : {kAG, kRS, kA2A}) {
    EXPECT_NEAR(n.CollectiveS(k, 8e6, {4, 8}) - base.CollectiveS(k, 8e6, {4, 8}), 1e-4, 1e-15);
  }
  // Nothing for a group of one or no bytes; sends and energy are unchanged.
  EXPECT_EQ(n.CollectiveS(kAR, 8e6, {1, 1}), 0);
  EXPECT_EQ(n.CollectiveS(kAR, 0, {8, 1}), 0);
  EXPECT_EQ(n.SendS(1e9, 1), base.SendS(1e9, 1));
  EXPECT_EQ(n.CollectiveJ(kAR, 8e6, {16, 1}), base.CollectiveJ(kAR, 8e6, {16, 1}));
  // Read from YAML, written to JSON, and checked.
  const Network parsed = Network::ParseLevels(ConfigNode::ParseString(
      "[{name: node, size: 8, bandwidth_bytes_per_s: 1e11, latency_s: 1e-6, call_latency_s: 4e-5},"
      " {name: fabric, bandwidth_bytes_per_s: 1e10}]",
      "run.yaml"));
  EXPECT_EQ(parsed.Levels()[0].call_latency_s, 4e-5);
  EXPECT_EQ(parsed.Levels()[1].call_latency_s, 0);
  EXPECT_NE(parsed.ToJson().Dump().find("call_latency_s"), std::string::npos);
  levels[0].call_latency_s = -1;
  EXPECT_NE(Network(levels).Validate().find("call_latency_s must be >= 0"), std::string::npos);
}

TEST(Network, ThreeLevelsHierarchical) {
  const Network n = ThreeLevels();
  // 128 consecutive ranks: fan-out 8 (node) × 4 (pod) × 4 (fabric). All-reduce of 3.2 GB:
  //   RS node 7/8·3.2e9/1e11 = 0.028 + 7 µs; RS pod on 4e8: 3/4·4e8/5e10 = 0.006 + 3·2 µs;
  //   AR fabric on 1e8: 2·3/4·1e8/1e10 = 0.015 + 6·10 µs; AG pod 0.006 + 6 µs; AG node 0.028 + 7 µs
  EXPECT_NEAR(n.CollectiveS(kAR, 3.2e9, {128, 1}), 0.083086, 1e-12);
  // 8 members 16 apart (pipeline with t·d = 16): 1 per node, 2 per pod, 4 pods.
  //   RS pod 1/2·8e8/5e10 = 0.008 + 2 µs; AR fabric on 4e8 over 4: 0.06 + 60 µs; AG pod 0.008 + 2 µs
  EXPECT_NEAR(n.CollectiveS(kAR, 8e8, {8, 16}), 0.076064, 1e-12);
  EXPECT_EQ(n.FanOut({8, 16}), (std::vector<double>{1, 2, 4}));
  EXPECT_EQ(n.FanOut({128, 1}), (std::vector<double>{8, 4, 4}));
  // All-to-all over 32 in one pod: 7 peers in the node, 24 in the pod; 3.2e9/32 = 1e8 each.
  EXPECT_NEAR(n.CollectiveS(kA2A, 3.2e9, {32, 1}), 7e8 / 1e11 + 7e-6 + 24e8 / 5e10 + 3 * 2e-6,
              1e-12);
}

// More levels than CollectiveS keeps on the stack (8): the same formulas through its fallback.
TEST(Network, NineLevelsPriceAsFew) {
  std::vector<NetworkLevel> levels;
  for (int l = 0; l < 8; ++l) {
    levels.push_back({"l" + std::to_string(l), std::int64_t{2} << l, 1e11 / (l + 1), 1e-6});
  }
  levels.push_back({"fabric", 0, 1e9, 1e-5});
  const Network n(levels);
  // 4 consecutive ranks: fan-out 2 at l0 (100 GB/s) and 2 at l1 (50 GB/s). All-reduce of 1 GB:
  //   RS l0 1/2·1e9/1e11 = 0.005 + 1 µs; AR l1 on 5e8: 2·1/2·5e8/5e10 = 0.01 + 2 µs; AG l0 as RS.
  EXPECT_NEAR(n.CollectiveS(kAR, 1e9, {4, 1}), 0.02 + 4e-6, 1e-12);
  // Across everything: 1024 ranks, fan-out 2 at each of the eight inner levels and 4 at the fabric.
  EXPECT_EQ(n.FanOut({1024, 1}), (std::vector<double>{2, 2, 2, 2, 2, 2, 2, 2, 4}));
  // All-gather of 2^30 bytes: the fabric gathers 2^22 over 4 (3/4 of it at 1 GB/s, 3 steps), then
  // each inner level l gathers 2^(30−l) over 2 (half of it at 1e11/(l+1), one step).
  double expected = 0.75 * std::ldexp(1.0, 22) / 1e9 + 3e-5;
  for (int l = 0; l < 8; ++l) expected += 0.5 * std::ldexp(1.0, 30 - l) / (1e11 / (l + 1)) + 1e-6;
  EXPECT_NEAR(n.CollectiveS(kAG, std::ldexp(1.0, 30), {1024, 1}), expected, 1e-12);
}

TEST(Network, SendsAndTheLevelHoldingASpan) {
  const Network n = ThreeLevels();
  EXPECT_DOUBLE_EQ(n.SendS(1e9, 2), 0.1 + 1e-5);
  EXPECT_DOUBLE_EQ(n.SendS(1e9, 0), 0.01 + 1e-6);
  EXPECT_EQ(n.LevelHolding(1), 0);
  EXPECT_EQ(n.LevelHolding(8), 0);
  EXPECT_EQ(n.LevelHolding(9), 1);
  EXPECT_EQ(n.LevelHolding(32), 1);
  EXPECT_EQ(n.LevelHolding(33), 2);
  EXPECT_EQ(Network::Flat(1e9).LevelHolding(1 << 20), 0);
}

TEST(Network, LevelsParseWithLocatedErrors) {
  auto parse = [](const std::string& text) {
    return Network::ParseLevels(ConfigNode::ParseString(text, "run.yaml"));
  };
  const Network n = parse(
      "[{name: node, size: 8, bandwidth_bytes_per_s: 1.5e11, latency_s: 1e-6},"
      " {name: fabric, bandwidth_bytes_per_s: 2.5e10}]");
  ASSERT_EQ(n.Levels().size(), 2u);
  EXPECT_EQ(n.Levels()[0].size, 8);
  EXPECT_EQ(n.Levels()[1].latency_s, 0);
  EXPECT_EQ(n.Validate(), "");
  auto fails = [&](const std::string& text, const std::string& expected) {
    try {
      parse(text);
      ADD_FAILURE() << "no error for " << text;
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
    }
  };
  fails("[{name: node, bandwidth_bytes_per_s: 1e9}, {name: fabric, bandwidth_bytes_per_s: 1e9}]",
        "missing required key 'size'");
  fails("[{name: node, size: 8, bandwidth_bytes_per_s: 1e9}, {name: pod, size: 12, "
        "bandwidth_bytes_per_s: 1e9}, {name: f, bandwidth_bytes_per_s: 1e9}]",
        "run.yaml:1:71: [1].size: expected a multiple of the inner level's size 8");
  fails("[{name: all, size: 8, bandwidth_bytes_per_s: 1e9}]",
        "the outermost level joins every device and takes no size");
  fails("[{name: node, size: 8, bandwidth_bytes_per_s: 0}, {name: f, bandwidth_bytes_per_s: 1e9}]",
        "bandwidth_bytes_per_s");
  fails("[]", "non-empty list of network levels");
}

// Link energy (CollectiveJ, SendJ): the time formulas with 1/β replaced by joules per byte and no
// latency term. Node at 2 pJ/bit, fabric at 20 pJ/bit.
TEST(Network, LinkEnergyByHand) {
  const Network n({{"node", 8, 1e11, 1e-6, 2.0}, {"fabric", 0, 1e10, 1e-5, 20.0}});
  const double node_j_per_byte = 2.0 * 8 * 1e-12, fabric_j_per_byte = 20.0 * 8 * 1e-12;
  // All-reduce of 8 MB inside the node (8 members): 2·7/8·8e6 bytes sent per device.
  EXPECT_NEAR(n.CollectiveJ(kAR, 8e6, {8, 1}), 2.0 * 7 / 8 * 8e6 * node_j_per_byte, 1e-18);
  // Over 16 devices (2 nodes): reduce-scatter and all-gather of 8 MB in the node (7/8 each) and
  // the all-reduce of the 1/8 part across the 2 nodes (2·1/2·1e6 over the fabric).
  EXPECT_NEAR(n.CollectiveJ(kAR, 8e6, {16, 1}),
              2 * (7.0 / 8 * 8e6) * node_j_per_byte + 2.0 * 1 / 2 * 1e6 * fabric_j_per_byte,
              1e-15);
  // An all-gather across nodes only (stride 8): (n−1)/n·B over the fabric.
  EXPECT_NEAR(n.CollectiveJ(kAG, 4e6, {4, 8}), 3.0 / 4 * 4e6 * fabric_j_per_byte, 1e-15);
  // A send over the fabric; a group of one and zero bytes cost nothing.
  EXPECT_NEAR(n.SendJ(1e6, 1), 1e6 * fabric_j_per_byte, 1e-18);
  EXPECT_EQ(n.CollectiveJ(kAR, 8e6, {1, 1}), 0.0);
  EXPECT_EQ(n.CollectiveJ(kRS, 0, {8, 1}), 0.0);
  // A level without energy costs none; the default is the documented board-level figure.
  const Network free_links({{"link", 0, 1e9, 0, 0.0}});
  EXPECT_EQ(free_links.CollectiveJ(kAR, 8e6, {4, 1}), 0.0);
  EXPECT_EQ(Network::Flat(1e9).Levels()[0].energy_pj_per_bit, NetworkLevel::kDefaultLinkPjPerBit);
}

TEST(Network, EnergyPerBitIsReadAndChecked) {
  const auto levels = ConfigNode::ParseString(
      "[{name: nvlink, size: 8, bandwidth_bytes_per_s: 1e11, energy_pj_per_bit: 1.3},\n"
      " {name: ib, bandwidth_bytes_per_s: 1e10}]", "levels.yaml");
  const Network n = Network::ParseLevels(levels);
  EXPECT_EQ(n.Levels()[0].energy_pj_per_bit, 1.3);
  EXPECT_EQ(n.Levels()[1].energy_pj_per_bit, NetworkLevel::kDefaultLinkPjPerBit);
  try {
    Network::ParseLevels(ConfigNode::ParseString(
        "[{name: ib, bandwidth_bytes_per_s: 1e10, energy_pj_per_bit: -1}]", "bad.yaml"));
    FAIL() << "a negative energy was accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("bad.yaml:1:"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace phaze
